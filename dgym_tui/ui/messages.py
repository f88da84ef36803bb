"""Messages that cross widget boundaries."""

from __future__ import annotations

from textual.message import Message

from dgym_tui.core.events import Event


class SessionEvents(Message):
    """Events from the session's log, delivered together on the UI thread.

    One pdb command emits several events within a millisecond (input, output, stop,
    breakpoints); handling them in one message means one repaint instead of one per event.
    """

    def __init__(self, events: list[Event]) -> None:
        super().__init__()
        self.events = events


def actor_style(actor: str) -> str:
    """The content-markup style for an actor; theme variables, so it follows theme switches."""
    return {"human": "bold $primary", "agent": "bold $secondary"}.get(actor, "$text-muted")
