"""The session's change, shown before it reaches the person's repo: the whole diff, then yes or no."""

from __future__ import annotations

from rich.syntax import Syntax
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Button, Label, Static

from dgym_tui.core.safe_text import one_line, visible
from dgym_tui.ui.screens.modals import MODAL_CSS


class ApplyScreen(ModalScreen[bool]):
    """The final diff and where it goes; y applies it, n or Escape leaves the repo alone."""

    AUTO_FOCUS = "#apply-diff"

    DEFAULT_CSS = MODAL_CSS + """
    ApplyScreen { align: center middle; }
    ApplyScreen .dialog { width: 90%; height: 85%; }
    ApplyScreen VerticalScroll { height: 1fr; background: $panel; padding: 0 1; }
    """
    BINDINGS = [
        Binding("y", "answer(True)", "Apply"),
        Binding("n,escape", "answer(False)", "Cancel"),
    ]

    def __init__(self, summary: str, diff: str) -> None:
        super().__init__()
        self.summary, self.diff = one_line(summary), visible(diff)  # the diff came from the sandbox

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label(Content(f"Apply to your repo? {self.summary}"), classes="title")
            with VerticalScroll(can_focus=True, id="apply-diff"):
                yield Static(Syntax(self.diff, "diff", theme="ansi_dark", word_wrap=False,
                                    background_color="default"))
            yield Label("All or nothing: files you edited since the session started are never overwritten. "
                        "y applies, n or Escape cancels.", classes="hint")
            with Horizontal(classes="buttons"):
                yield Button("Cancel", id="no")
                yield Button("Apply", id="yes", variant="success")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "yes")

    def action_answer(self, answer: bool) -> None:
        self.dismiss(answer)
