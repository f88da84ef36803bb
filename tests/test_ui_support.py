"""Shared helpers for the UI tests: the example repo's path and a bounded wait for pilots."""

from __future__ import annotations

import time
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "shopcart"


async def wait_for(pilot, condition, timeout: float = 20.0, what: str = "condition"):
    """Poll a condition while the app runs (bounded); fail with `what` on timeout."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await pilot.pause(0.05)
