"""Small modal screens: confirm, prompt for a value, show a full value."""

from __future__ import annotations

from collections.abc import Callable

from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, Static, TextArea, Tree
from textual.widgets.tree import TreeNode

from dgym_tui.core.safe_text import one_line, visible

MODAL_CSS = """
.dialog { width: 70; max-width: 90%; height: auto; max-height: 90%; padding: 1 2;
          border: thick $primary; background: $surface; }
.dialog .title { text-style: bold; margin-bottom: 1; width: 1fr; }
.dialog .buttons { height: auto; margin-top: 1; align-horizontal: right; }
.dialog .buttons Button { margin-left: 2; }
.dialog .hint { color: $text-muted; margin-top: 1; }
"""


class TypeAhead:
    """For a modal screen with fields: a key typed ahead — right after the one that opened it,
    before its first field had the focus (set once the screen is mounted) — goes to that field
    rather than to nothing: a quick `:76⏎` or a pasted value is not lost."""

    def on_key(self, event: events.Key) -> None:
        if self.focused is not None:
            return
        target = self.focus_next()  # at once: the keys after this one find it focused
        if target is not None:
            event.stop()
            event.prevent_default()
            target._forward_event(events.Key(event.key, event.character))


class EnterAnswers(Input):
    """A modal's field whose Enter answers as the key is taken (the screen's `answer()`), not in
    a Submitted message handled later: the keys typed right after Enter (`B x > 3⏎!p x⏎`) then
    reach the screen below, rather than this one on its way out."""

    async def action_submit(self) -> None:
        self.screen.answer()


class ConfirmScreen(ModalScreen[bool]):
    """Yes or no; y/n/escape work from the keyboard."""

    AUTO_FOCUS = "#no"  # focused when shown (a focus() in on_mount could meet a screen already dismissed)

    DEFAULT_CSS = MODAL_CSS + "ConfirmScreen { align: center middle; }"
    BINDINGS = [
        Binding("y", "answer(True)", "Yes"),
        Binding("n,escape", "answer(False)", "No"),
    ]

    def __init__(self, message: str, yes: str = "Yes", no: str = "No") -> None:
        super().__init__()
        self.message, self.yes, self.no = message, yes, no

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label(Content(self.message), classes="title")
            with Horizontal(classes="buttons"):
                yield Button(self.no, id="no")
                yield Button(self.yes, id="yes", variant="error")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "yes")

    def action_answer(self, answer: bool) -> None:
        self.dismiss(answer)


class PromptScreen(TypeAhead, ModalScreen[str | None]):
    """Ask for one line of text (a condition, a line number, an entrypoint). None if cancelled."""

    DEFAULT_CSS = MODAL_CSS + "PromptScreen { align: center middle; }"
    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, title: str, value: str = "", placeholder: str = "", hint: str = "",
                 validate: Callable[[str], str | None] | None = None) -> None:
        super().__init__()
        self.title_text, self.value, self.placeholder, self.hint = title, value, placeholder, hint
        self.check = validate  # returns an error message, or None when the value is fine

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label(Content(self.title_text), classes="title")
            yield EnterAnswers(self.value, placeholder=self.placeholder, id="prompt-input")
            yield Label(Content(self.hint or "Enter to accept, Escape to cancel"), classes="hint", id="prompt-hint")

    def answer(self) -> None:
        value = self.query_one("#prompt-input", Input).value.strip()
        error = self.check(value) if self.check else None
        if error:
            self.query_one("#prompt-hint", Label).update(Content.from_markup("[$error]$e[/]", e=error))
            return
        self.dismiss(value)

    def action_cancel(self) -> None:
        self.dismiss(None)


class TextScreen(ModalScreen[None]):
    """Text for the person to read and copy (select it; ctrl+c copies): a client's set-up."""

    DEFAULT_CSS = MODAL_CSS + """
    TextScreen { align: center middle; }
    TextScreen .dialog { width: 95%; }
    TextScreen TextArea { height: auto; max-height: 12; }
    """
    BINDINGS = [Binding("escape", "close", "Close")]

    def __init__(self, title: str, text: str) -> None:
        super().__init__()
        self.title_text, self.text = title, text

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label(Content(self.title_text), classes="title")
            yield TextArea(self.text, read_only=True, soft_wrap=True, id="text-body")
            yield Label(Content("Escape closes"), classes="hint")

    def action_close(self) -> None:
        self.dismiss(None)


class ValueScreen(ModalScreen[None]):
    """A variable's full value: its short repr at once, then `pp` of it from the session; and,
    when it has contents, a tree that expands one level at a time, each level fetched from the
    session only when opened."""

    DEFAULT_CSS = MODAL_CSS + """
    ValueScreen { align: center middle; }
    ValueScreen .dialog { width: 90%; height: 80%; }
    ValueScreen VerticalScroll { height: 1fr; background: $panel; padding: 0 1; }
    ValueScreen Tree { height: 1fr; margin-top: 1; background: $panel; }
    """
    BINDINGS = [Binding("escape,q", "close", "Close")]

    def __init__(self, name: str, value: str, loader: Callable | None = None,
                 expand: Callable | None = None) -> None:
        """loader(done, failed) asks for the full text; expand(expr, done, failed) for one level
        of a value's contents. Both answer later, on the UI thread (runner calls)."""
        super().__init__()
        self.var_name, self.value, self.loader, self.expand = visible(name), visible(value), loader, expand

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label(Content(self.var_name), classes="title")
            with VerticalScroll(can_focus=True):
                yield Static(Content(self.value), id="value-text")
            if self.expand is not None:
                tree: Tree[dict] = Tree(Text(f"{self.var_name} = {self.value}"), id="value-tree",
                                        data={"expr": self.var_name, "loaded": False})
                tree.root.allow_expand = True
                yield tree
            yield Label("evaluating with pp…" if self.loader else "Escape to close", classes="hint", id="value-hint")

    def on_mount(self) -> None:
        trees = self.query(Tree)
        (trees.first() if trees else self.query_one(VerticalScroll)).focus()
        if self.loader:
            self.loader(self._loaded, lambda e: self._show(None, f"could not evaluate: {e}"))

    def _loaded(self, text: str) -> None:
        self._show(text, "full value (pp); Enter in the tree opens a level — Escape to close")

    def _show(self, text: str | None, hint: str) -> None:
        if not self.is_mounted:
            return  # closed before the answer came
        if text is not None:
            self.query_one("#value-text", Static).update(Content(visible(text.rstrip("\n"))))
        self.query_one("#value-hint", Label).update(Content(hint))

    def on_tree_node_expanded(self, event: Tree.NodeExpanded) -> None:
        node = event.node
        if node.data and not node.data["loaded"]:
            node.data["loaded"] = True
            self.expand(node.data["expr"], lambda children: self._add_children(node, children),
                        lambda e: self._add_children(node, [{"name": "⚠", "expr": None, "repr": str(e),
                                                             "expandable": False}]))

    def _add_children(self, node: TreeNode, children: list[dict]) -> None:
        if not self.is_mounted:
            return
        for child in children:
            label = Text.assemble((one_line(child["name"]), "bold"), " = ", one_line(child["repr"]))
            if child["expandable"] and child["expr"]:
                node.add(label, data={"expr": child["expr"], "loaded": False})
            else:
                node.add_leaf(label)
        if not children:
            node.add_leaf(Text("(empty)"))

    def action_close(self) -> None:
        self.dismiss(None)
