"""Example repositories bundled with dgym-tui (installed as ``dgym_tui.examples``)."""

from pathlib import Path

DEFAULT_EXAMPLE = "shopcart"


def example_path(name: str = DEFAULT_EXAMPLE) -> Path:
    """Where a bundled example repo lives (inside the installed package or the checkout)."""
    path = Path(__file__).resolve().parent / name
    if not path.is_dir():
        raise FileNotFoundError(f"no bundled example named {name!r}")
    return path
