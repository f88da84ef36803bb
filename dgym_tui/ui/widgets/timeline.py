"""The replay's timeline: the whole session in one row of marks (stops, breakpoints, the person's
and the agent's actions, patches, decisions), where the replay is, and how to move."""

from __future__ import annotations

from rich.text import Text
from textual.events import Click
from textual.message import Message
from textual.widget import Widget

from dgym_tui.core.replayer import Replayer
from dgym_tui.core.safe_text import one_line

LEGEND = "▸ stop ● breakpoints ▪ pdb ▴ agent's call ◆ decision ✚ change ✓✗ tests"


def _rich_color(colors: dict, name: str) -> str:
    """A theme colour usable in a Rich style (Textual's own values like "auto 60%" are not)."""
    value = colors.get(name, "")
    return value if value.startswith("#") else "dim"


class Timeline(Widget, can_focus=True):
    DEFAULT_CSS = """
    Timeline { height: 3; background: $panel; padding: 0 1; }
    """

    class Seek(Message):
        def __init__(self, position: int) -> None:
            super().__init__()
            self.position = position

    def __init__(self, replayer: Replayer, **kwargs) -> None:
        super().__init__(**kwargs)
        self.replayer = replayer
        self.note = ""

    def render(self) -> Text:
        replayer = self.replayer
        width = max(10, self.size.width)
        colors = self.app.theme_variables
        text = Text(no_wrap=True, overflow="crop")
        here = replayer.column_of(replayer.position, width) if replayer.position else -1
        for column, mark in enumerate(replayer.marks(width)):
            glyph = mark.glyph if mark else "·"
            style = _rich_color(colors, mark.color) if mark else "dim"
            if column == here:
                style = f"bold reverse {colors.get('accent', 'yellow')}"
            text.append(glyph, style=style)
        text.append("\n")
        event = replayer.current()
        state = "▶ playing" if replayer.playing else "❚❚ paused"
        where = f"event {replayer.position}/{len(replayer.events)}"
        what = f" · {event.actor}: {event.kind}" if event is not None else ""
        text.append(f"{state} {replayer.speed:g}/s · {where}{one_line(what)}{(' · ' + self.note) if self.note else ''}\n",
                    style="bold")
        text.append("space play/pause · ←/→ h/l one event · home/end · +/- speed · enter take over here · "
                    + LEGEND, style="dim")
        return text

    def on_click(self, event: Click) -> None:
        if event.y == 0:
            self.post_message(self.Seek(self.replayer.position_at(event.x, max(10, self.size.width))))
