"""Textual themes and the app's stylesheet (installed as dgym_tui.themes)."""

from pathlib import Path

THEMES_DIR = Path(__file__).resolve().parent
APP_CSS = THEMES_DIR / "app.tcss"
