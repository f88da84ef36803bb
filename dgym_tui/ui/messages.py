"""Messages that cross widget boundaries."""

from __future__ import annotations

from textual.message import Message

from dgym_tui.core.events import Event


class SessionEvent(Message):
    """One event from the session's log, delivered on the UI thread (posted from the core's)."""

    def __init__(self, event: Event) -> None:
        super().__init__()
        self.event = event


def actor_style(actor: str) -> str:
    """The content-markup style for an actor; theme variables, so it follows theme switches."""
    return {"human": "bold $primary", "agent": "bold $secondary"}.get(actor, "$text-muted")
