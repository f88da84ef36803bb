"""A form for running one tool by hand (the palette's "Tool: …"): one field per argument of the
tool's JSON schema — a line of text, a whole number, a yes/no, or code in an editor — filled
from where the person is (the open file, the cursor's line). The tool's own `check` judges the
arguments before the form closes, so what runs is what the agent could have sent.

Dismissed with the arguments (a dict, ready for `Session.run_tool`), or None when cancelled.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Button, Checkbox, Label, TextArea

from dgym_tui.core.safe_text import one_line
from dgym_tui.ui.screens.modals import MODAL_CSS, EnterAnswers, TypeAhead

CODE_ARGUMENTS = ("new_code",)  # edited in a code editor, several lines


def kinds(schema: dict) -> list[str]:
    """The JSON types an argument takes, null aside."""
    kind = schema.get("type", "string")
    return [k for k in ([kind] if isinstance(kind, str) else kind) if k != "null"] or ["string"]


class ToolFormScreen(TypeAhead, ModalScreen[dict | None]):
    AUTO_FOCUS = "#tool-fields Input, #tool-fields TextArea, #tool-fields Checkbox"

    DEFAULT_CSS = MODAL_CSS + """
    ToolFormScreen { align: center middle; }
    ToolFormScreen .dialog { width: 90; max-width: 95%; }
    ToolFormScreen.-code .dialog { width: 95%; height: 90%; }
    ToolFormScreen #tool-fields { height: auto; max-height: 30; }
    ToolFormScreen.-code #tool-fields { height: 1fr; max-height: 100%; }
    ToolFormScreen .field-label { margin-top: 1; }
    ToolFormScreen .field-label.-first { margin-top: 0; }
    ToolFormScreen TextArea { height: 12; min-height: 6; }
    ToolFormScreen.-code TextArea { height: 1fr; }
    """
    # Not a priority binding: that one runs as the app takes the key, before the field has the
    # letters typed just ahead of it (a burst of keys), and the form read an empty field.
    BINDINGS = [Binding("ctrl+s", "run", "Run"), Binding("escape", "cancel", "Cancel")]

    def __init__(self, tool, values: dict | None = None) -> None:
        """values: starting values by argument name (from where the person is)."""
        super().__init__()
        self.tool = tool
        self.values = {k: v for k, v in (values or {}).items() if k in tool.parameters}
        if any(name in CODE_ARGUMENTS for name in tool.parameters):
            self.add_class("-code")

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label(Content(f"Run {self.tool.name}: {one_line(self.tool.summary)}"), classes="title")
            with VerticalScroll(id="tool-fields"):
                for i, (name, schema) in enumerate(self.tool.parameters.items()):
                    yield from self._field(name, schema, first=i == 0)
            with Horizontal(classes="buttons"):
                yield Button("Cancel", id="cancel")
                yield Button("Run", id="run", variant="primary")
            yield Label(Content("ctrl+s or Enter runs it, Escape cancels; an empty field takes the default"),
                        classes="hint", id="tool-hint")

    def _field(self, name: str, schema: dict, first: bool) -> ComposeResult:
        required = name in self.tool.required
        description = one_line(schema.get("description", ""))
        label = f"{name}{' (required)' if required else ''}: {description}"
        yield Label(Content(label), classes="field-label" + (" -first" if first else ""))
        value = self.values.get(name, schema.get("default"))
        types = kinds(schema)
        field_id = f"arg-{name}"
        if name in CODE_ARGUMENTS:
            path = str(self.values.get("path") or "")
            yield TextArea.code_editor("" if value is None else str(value),
                                       language="python" if path.endswith(".py") else None, id=field_id)
        elif types == ["boolean"]:
            yield Checkbox(name, bool(value), id=field_id)
        else:
            yield EnterAnswers("" if value is None else str(value), id=field_id,
                               type="integer" if types == ["integer"] else "text",
                               placeholder="default" if not required else "")

    def arguments(self) -> dict:
        """The form's values as the tool's arguments: empty fields left out (the default)."""
        args: dict = {}
        for name, schema in self.tool.parameters.items():
            widget = self.query_one(f"#arg-{name}")
            if isinstance(widget, Checkbox):
                args[name] = widget.value
                continue
            text = widget.text if isinstance(widget, TextArea) else widget.value
            if name not in CODE_ARGUMENTS:
                text = text.strip()
            if not text:
                continue
            if kinds(schema) == ["integer"]:
                try:
                    args[name] = int(text)
                except ValueError:
                    args[name] = text  # the check below names the argument
            else:
                args[name] = text
        return args

    def action_run(self) -> None:
        args = self.arguments()
        problem = self.tool.check(args)
        if problem:
            self.query_one("#tool-hint", Label).update(Content.from_markup("[$error]$e[/]", e=problem))
            return
        self.dismiss(args)

    def action_cancel(self) -> None:
        self.dismiss(None)

    def answer(self) -> None:  # Enter in a field
        self.action_run()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.action_run() if event.button.id == "run" else self.action_cancel()
