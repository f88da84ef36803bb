"""The help screen: every key binding, grouped, generated from the bindings themselves."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Label, Static


class HelpScreen(ModalScreen[None]):
    AUTO_FOCUS = "VerticalScroll"

    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > Vertical { width: 84; max-width: 95%; height: 90%; border: thick $primary;
                            background: $surface; padding: 0 1; }
    HelpScreen .title { text-style: bold; width: 1fr; content-align: center middle; }
    HelpScreen .section { margin-top: 1; }
    HelpScreen .hint { color: $text-muted; width: 1fr; content-align: center middle; }
    """
    BINDINGS = [Binding("escape,q,question_mark,f1", "close", "Close")]

    def __init__(self, sections: list[tuple[str, list[Binding]]]) -> None:
        super().__init__()
        self.sections = sections
        self.rows: dict[str, list[tuple[str, str]]] = {}  # section -> (keys, text): what is shown

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label("dgym-tui — keys", classes="title")
            with VerticalScroll(can_focus=True):
                for title, bindings in self.sections:
                    yield Static(self.render_section(title, bindings), classes="section")
            yield Label("Escape closes · ctrl+p: every command · keys n s c r b t u d work like pudb's",
                        classes="hint")

    def render_section(self, title: str, bindings: list[Binding]) -> Table:
        keys_by_action: dict[str, list[str]] = {}  # one row per action, its keys joined
        texts: dict[str, str] = {}
        for binding in bindings:
            keys = keys_by_action.setdefault(binding.action, [])
            display = binding.key_display or self.app.get_key_display(binding)
            if display not in keys:
                keys.append(display)
            texts.setdefault(binding.action, binding.tooltip or binding.description)
        self.rows[title] = [(" ".join(keys), texts[action]) for action, keys in keys_by_action.items()]
        colors = self.app.theme_variables
        table = Table(box=None, show_header=False, padding=(0, 1), expand=True,
                      title=Text(title, style=f"bold {colors.get('accent', 'yellow')}"), title_justify="left")
        table.add_column(width=12, no_wrap=True, style=f"bold {colors.get('primary', 'cyan')}")
        table.add_column(ratio=1)
        for keys, text in self.rows[title]:
            table.add_row(keys, text)
        return table

    def action_close(self) -> None:
        self.dismiss(None)
