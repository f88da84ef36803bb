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
            raise AssertionError(f"timed out waiting for {what}{what_the_session_did(pilot.app)}")
        await pilot.pause(0.05)


def what_the_session_did(app, count: int = 12) -> str:
    """The app's session's state and its last events, one line each: why a wait ran out."""
    import json

    session = getattr(app, "session", None)
    if session is None:
        return ""
    lines = [f"; the session is {session.state.program}" + (f" ({session.state.error})" if session.state.error else "")
             + ", its last events:"]
    for event in session.events.history[-count:]:
        lines.append(f"  {event.seq} {event.actor} {event.kind} {json.dumps(event.data.to_dict(), default=str)[:160]}")
    return "\n".join(lines)


def type_at_once(app, text: str) -> None:
    """Keys as a terminal delivers a burst (a paste, typing ahead of a busy app): every one in
    the app's queue before it handles the first; pilot.press waits for each key's effects.
    "\r" is Enter."""
    from textual import events
    from textual.keys import _character_to_key

    for char in text:
        app.post_message(events.Key("enter" if char == "\r" else _character_to_key(char), char))
