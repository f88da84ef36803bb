"""The call stack at the current stop, innermost frame first; selecting a frame moves pdb to it."""

from __future__ import annotations

import posixpath

from rich.text import Text
from textual.message import Message
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from dgym_tui.core.events import Frame, Stop
from dgym_tui.core.safe_text import one_line


class StackPane(OptionList):
    class FrameSelected(Message):
        """The person picked a frame: `index` counts in the status's stack (outermost = 0)."""

        def __init__(self, index: int) -> None:
            super().__init__()
            self.index = index

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.frames: list[Frame] = []
        self.frame_index = 0
        self._stop: Stop | None = None

    def on_mount(self) -> None:
        self.app.theme_changed_signal.subscribe(self, lambda _theme: self.show_stop(self._stop))

    def show_stop(self, stop: Stop | None) -> None:
        self._stop = stop
        self.frames = list(stop.stack) if stop else []
        self.frame_index = stop.frame_index if stop else 0
        accent = self.app.theme_variables.get("accent", "yellow")
        labels = []
        # pdb lists the outermost frame first; people read stacks innermost first
        for index in reversed(range(len(self.frames))):
            frame = self.frames[index]
            current = index == self.frame_index
            label = Text()  # (a style given to Text() would spread to everything appended)
            label.append("▶ " if current else "  ", style=f"bold {accent}")
            label.append(one_line(frame.function or "?"), style="bold" if current else "")
            where = f"{one_line(posixpath.basename(frame.file or '?'))}:{frame.line or '?'}"
            label.append(f"  {where}", style="dim")
            labels.append(label)
        if self.option_count == len(labels):
            # A step in the same function: same frames, new line numbers. Replacing the labels
            # that changed repaints them; clearing and refilling would re-lay-out the screen.
            for row, label in enumerate(labels):
                if self.get_option_at_index(row).prompt != label:
                    self.replace_option_prompt_at_index(row, label)
        else:
            self.clear_options()
            self.add_options(Option(label, id=str(len(labels) - 1 - row)) for row, label in enumerate(labels))
        highlighted = len(self.frames) - 1 - self.frame_index if self.frames else None
        if self.highlighted != highlighted:
            self.highlighted = highlighted

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        index = int(event.option.id)
        if index != self.frame_index:
            self.post_message(self.FrameSelected(index))
