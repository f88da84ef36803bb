"""The bundled demo: a session of the scripted agent on the bundled example (made by
tests/make_demo_session.py; `dgym-tui demo` replays it)."""

from __future__ import annotations

from pathlib import Path

DEMO = Path(__file__).resolve().parent / "shopcart.jsonl"


def demo_session() -> Path:
    return DEMO
