"""Edit a block of code before it runs (the agent's proposed change): ctrl+s keeps, escape drops."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Label, TextArea

from dgym_tui.core.safe_text import one_line
from dgym_tui.ui.screens.modals import MODAL_CSS


class CodeEditorScreen(ModalScreen[str | None]):
    AUTO_FOCUS = "TextArea"

    DEFAULT_CSS = MODAL_CSS + """
    CodeEditorScreen { align: center middle; }
    CodeEditorScreen .dialog { width: 90%; height: 80%; }
    CodeEditorScreen TextArea { height: 1fr; }
    """
    # Not a priority binding, so the keys typed just before ctrl+s are in the text it keeps.
    BINDINGS = [Binding("ctrl+s", "keep", "Keep"), Binding("escape", "drop", "Cancel")]

    def __init__(self, title: str, code: str, path: str | None = None) -> None:
        super().__init__()
        self.title_text, self.code, self.path = title, code, path

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label(Content(one_line(self.title_text)), classes="title")
            language = "python" if (self.path or "").endswith(".py") else None
            yield TextArea.code_editor(self.code, language=language, id="code")
            yield Label("ctrl+s runs the call with this code · escape goes back", classes="hint")

    def action_keep(self) -> None:
        self.dismiss(self.query_one(TextArea).text)

    def action_drop(self) -> None:
        self.dismiss(None)
