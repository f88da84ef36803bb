"""Replay: a recorded session, moved through one meaningful event at a time.

The views are fed the recorded events exactly as they were fed live, so the same fold
(DebugState) shows the same screen. Bookkeeping events (calls opening and closing, file
contents, streamed pieces of a reply) are applied on the way but are not stops of their own.
Nothing here knows of Textual: the app's replay screen and the tests drive it alike.
"""

from __future__ import annotations

from dataclasses import dataclass

from dgym_tui.core.events import Event, is_agent

# Applied on the way, never a position of their own.
STEP_OVER = frozenset({"call_started", "call_finished", "file", "model_delta", "agent_message",
                       "model_request", "session_started", "progress", "changes", "approval_requested"})
SPEEDS = (0.5, 1, 2, 4, 8, 16, 32)  # meaningful events per second when playing

# What the timeline marks, most telling first: (kind, glyph, theme colour).
MARKS = (
    ("error", "!", "error"),
    ("decision", "◆", "warning"),
    ("checkpoint", "✚", "success"),
    ("restored", "↶", "success"),
    ("breakpoints", "●", "error"),
    ("tests", "✓", "success"),
    ("tool_call", "▴", "secondary"),
    ("stop", "▸", "accent"),
    ("pdb_input", "▪", None),   # coloured by who typed it
    ("hint", "✎", "primary"),
)
_RANK = {kind: rank for rank, (kind, _, _) in enumerate(MARKS)}


@dataclass(frozen=True)
class Mark:
    glyph: str
    color: str       # a theme variable
    rank: int


def mark_for(event: Event) -> Mark | None:
    rank = _RANK.get(event.kind)
    if rank is None:
        return None
    _, glyph, color = MARKS[rank]
    if event.kind == "tests" and not event.data.ok:
        glyph = "✗"
        color = "error"
    if color is None:
        color = "secondary" if is_agent(event.actor) else {"human": "primary"}.get(event.actor, "text-muted")
    return Mark(glyph, color, rank)


class Replayer:
    """Positions over a recorded stream. `position` is how many events are applied (0: none);
    frames are the positions just after each meaningful event."""

    def __init__(self, events: list[Event]):
        self.position = 0
        self.speed_index = SPEEDS.index(2)
        self.playing = False
        self.load(events)

    def load(self, events: list[Event]) -> None:
        """The events (all of them, once a big file has been read to its end: the ones so far
        are its beginning, so the position stays valid)."""
        self.events = events
        self.frames = [i + 1 for i, e in enumerate(events) if e.kind not in STEP_OVER]
        self._texts = {e.data.sha: e.data.text for e in events if e.kind == "file" and e.data.text is not None}

    @property
    def frame(self) -> int:
        """Which frame the position is at (-1: before the first)."""
        import bisect

        return bisect.bisect_right(self.frames, self.position) - 1

    @property
    def speed(self) -> float:
        return SPEEDS[self.speed_index]

    def first_stop(self) -> int:
        """The position of the program's first stop (where a replay opens), else the first frame."""
        for i, event in enumerate(self.events):
            if event.kind == "stop":
                return i + 1
        return self.frames[0] if self.frames else len(self.events)

    def next_position(self) -> int | None:
        frame = self.frame
        return self.frames[frame + 1] if frame + 1 < len(self.frames) else None

    def previous_position(self) -> int | None:
        frame = self.frame
        if frame <= 0:
            return None if self.position == 0 else 0
        at_frame = self.frames[frame] == self.position
        return self.frames[frame - 1] if at_frame else self.frames[frame]

    def move_to(self, position: int) -> tuple[list[Event], bool]:
        """Go to a position: (the events to apply, whether the views must start over first —
        going back folds from the start)."""
        position = max(0, min(position, len(self.events)))
        if position >= self.position:
            events, rebuild = self.events[self.position:position], False
        else:
            events, rebuild = self.events[:position], True
        self.position = position
        return events, rebuild

    def faster(self) -> None:
        self.speed_index = min(len(SPEEDS) - 1, self.speed_index + 1)

    def slower(self) -> None:
        self.speed_index = max(0, self.speed_index - 1)

    def current(self) -> Event | None:
        return self.events[self.position - 1] if self.position else None

    def upcoming_source(self, path: str) -> str | None:
        """A file's text as the recording has it next (a stop comes just before the text of its
        file is recorded): for the source view at a position where it is not read yet."""
        texts = self._texts
        for event in self.events[self.position:]:
            if event.kind == "file" and event.data.path == path:
                return texts.get(event.data.sha)
        for event in reversed(self.events[:self.position]):
            if event.kind == "file" and event.data.path == path:
                return texts.get(event.data.sha)
        return None

    def marks(self, width: int) -> list[Mark | None]:
        """The timeline squeezed into `width` columns: each the most telling mark of its events."""
        if not self.frames or width <= 0:
            return []
        columns: list[Mark | None] = [None] * width
        total = len(self.events)
        for i, event in enumerate(self.events):
            mark = mark_for(event)
            if mark is None:
                continue
            column = min(width - 1, i * width // max(total, 1))
            if columns[column] is None or mark.rank < columns[column].rank:
                columns[column] = mark
        return columns

    def column_of(self, position: int, width: int) -> int:
        return min(width - 1, max(0, (position - 1) * width // max(len(self.events), 1)))

    def position_at(self, column: int, width: int) -> int:
        """The frame nearest a timeline column (a click)."""
        import bisect

        target = column * len(self.events) // max(width, 1) + 1
        i = bisect.bisect_left(self.frames, target)
        return self.frames[min(i, len(self.frames) - 1)] if self.frames else 0
