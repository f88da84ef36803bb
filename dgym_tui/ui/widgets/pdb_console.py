"""The pdb console: every command from either actor with its output, and an input line.

The log is written from session events (not from local echo), so the agent's commands appear
exactly like the person's, with an actor prefix in the actor's colour.
"""

from __future__ import annotations

from collections import deque

from rich.text import Text
from textual.actions import SkipAction
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.widgets import Input, Label, Static

from dgym_tui.core.safe_text import visible
from dgym_tui.ui.messages import actor_color
from dgym_tui.ui.slots import fill_slot

PDB_COMMANDS = sorted({
    "args", "break", "bt", "clear", "commands", "condition", "continue", "cont", "debug", "disable",
    "display", "down", "enable", "exit", "help", "ignore", "interact", "jump", "list", "ll",
    "longlist", "next", "pp", "quit", "restart", "return", "retval", "run", "source", "step",
    "tbreak", "undisplay", "until", "up", "whatis", "where",
})
HISTORY_LIMIT = 500


def complete(text: str, names: list[str]) -> tuple[str, list[str]]:
    """Complete the last word: pdb commands for the first word, else the given names.
    Returns the new text (longest common prefix) and the candidates."""
    head, sep, word = text.rpartition(" ")
    vocabulary = names if sep else PDB_COMMANDS
    candidates = sorted({c for c in vocabulary if c.startswith(word)})
    if not candidates:
        return text, []
    prefix = candidates[0]
    for c in candidates[1:]:
        while not c.startswith(prefix):
            prefix = prefix[:-1]
    if len(candidates) == 1:
        prefix += "" if sep else " "
    return f"{head}{sep}{prefix}", candidates


class PdbInput(Input):
    """An Input with pdb-style history (up/down) and tab completion."""

    BINDINGS = [
        Binding("up", "history(-1)", "Previous command", show=False),
        Binding("down", "history(1)", "Next command", show=False),
        Binding("tab", "complete", "Complete", show=False),
    ]

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.history: list[str] = []
        self._index = 0
        self.names: list[str] = []  # completion vocabulary after the first word (the locals)

    def remember(self, command: str) -> None:
        if command and (not self.history or self.history[-1] != command):
            self.history.append(command)
            del self.history[:-HISTORY_LIMIT]
        self._index = len(self.history)

    async def action_submit(self) -> None:
        """Enter: the line is the command, and is emptied as the key is taken, before the keys
        typed after it arrive (emptied when the console later heard of it, it wiped them)."""
        command = self.value.strip()
        if not command:  # pdb repeats the last command on an empty line; so do we
            command = self.history[-1] if self.history else ""
        self.remember(command)
        self.value = ""
        if command:
            self.post_message(PdbConsole.CommandSubmitted(command))

    def action_history(self, step: int) -> None:
        if not self.history:
            return
        self._index = max(0, min(len(self.history), self._index + step))
        self.value = self.history[self._index] if self._index < len(self.history) else ""
        self.cursor_position = len(self.value)

    def action_complete(self) -> None:
        if not self.value or self.cursor_position != len(self.value):
            raise SkipAction()  # nothing to complete: let tab move the focus
        value, candidates = complete(self.value, self.names)
        if not candidates:
            return
        if value != self.value:
            self.value = value
            self.cursor_position = len(value)
        elif len(candidates) > 1:
            self.post_message(PdbConsole.Candidates(candidates))


class PdbConsole(Vertical):
    class CommandSubmitted(Message):
        def __init__(self, command: str) -> None:
            super().__init__()
            self.command = command

    class Candidates(Message):
        def __init__(self, candidates: list[str]) -> None:
            super().__init__()
            self.candidates = candidates

    BINDINGS = [Binding("escape", "leave", "Back to source", show=False)]
    MAX_LINES = 5000

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        # what was written, so a theme switch can repaint it in the new colours
        self._entries: deque[tuple[str, str, str]] = deque(maxlen=self.MAX_LINES)

    def on_mount(self) -> None:
        self.app.theme_changed_signal.subscribe(self, lambda _theme: self._repaint())
        self.call_after_refresh(self._mount_log)

    async def _mount_log(self) -> None:
        """The log, empty at start, comes just after the first frame: RichLog imports
        rich.pretty, which imports attrs (~20 ms of the first frame). Until then the slot holds
        its place, and what was written (kept in _entries) is painted when it comes."""
        from textual.widgets import RichLog

        await fill_slot(self.query_one("#pdb-log-slot"),
                        RichLog(id="pdb-log", wrap=True, markup=False, highlight=False, max_lines=self.MAX_LINES))
        self._repaint()

    DEFAULT_CSS = """
    PdbConsole #pdb-line { height: 1; }
    PdbConsole #pdb-prompt { width: auto; height: 1; padding: 0 0 0 1; text-style: bold; }
    PdbConsole #pdb-prompt.-busy { color: $text-muted; text-style: italic; }
    """
    PROMPT, BUSY = "(Pdb) ", "running…"
    HINT = "a pdb command (Enter sends, ↑↓ history, Tab completes, Esc back)"

    def compose(self) -> ComposeResult:
        yield Static(id="pdb-log-slot")  # the log's place until it is mounted (_mount_log)
        with Horizontal(id="pdb-line"):
            # pdb's own prompt, where pdb users look for it: ready for a command
            yield Label(self.PROMPT, id="pdb-prompt")
            yield PdbInput(id="pdb-input", placeholder=self.HINT)

    @property
    def log_widget(self):
        """The RichLog, or None in the moment before it is mounted."""
        found = self.query("#pdb-log")
        return found.first() if found else None

    @property
    def input(self) -> PdbInput:
        return self.query_one(PdbInput)

    def _color(self, name: str, fallback: str) -> str:
        return self.app.theme_variables.get(name, fallback)

    def show_input(self, actor: str, command: str) -> None:
        self._add("input", actor, command)

    def show_output(self, text: str) -> None:
        for raw in text.rstrip("\n").split("\n"):
            self._add("output", "", raw)

    def show_note(self, text: str, kind: str = "muted") -> None:
        self._add("note", kind, text)

    def _add(self, kind: str, extra: str, text: str) -> None:
        text = visible(text)  # program output is untrusted: no escape reaches the terminal
        self._entries.append((kind, extra, text))
        if (log := self.log_widget) is not None:
            log.write(self._line_for(kind, extra, text))

    def _line_for(self, kind: str, extra: str, text: str) -> Text:
        if kind == "input":  # extra: the actor; the command as pdb showed it, after its prompt
            line = Text(self.PROMPT, style=f"bold {self._color(actor_color(extra), 'cyan')}")
            line.append(text, style="bold")
            if extra != "human":
                line.append(f"  · {extra}", style=self._color(actor_color(extra), "magenta"))
            return line
        if kind == "note":  # extra: muted | error | success | warning
            color = {"muted": "text-muted"}.get(extra, extra)
            return Text(text, style=f"italic {self._color(color, 'grey50')}")
        return Text(text, style=self._color("error", "red") if text.startswith("***") else "")

    def _repaint(self) -> None:
        log = self.log_widget
        if log is None:
            return
        log.clear()
        for entry in self._entries:
            log.write(self._line_for(*entry))

    def clear(self) -> None:
        self._entries.clear()
        if (log := self.log_widget) is not None:
            log.clear()

    def set_busy(self, busy: bool) -> None:
        """While a command runs there is no prompt (as in pdb); ctrl+c interrupts it."""
        prompt = self.query_one("#pdb-prompt", Label)
        if prompt.has_class("-busy") == busy:
            return  # as it is: an update would cost a layout pass
        prompt.update(self.BUSY if busy else self.PROMPT)
        prompt.set_class(busy, "-busy")
        self.input.placeholder = "ctrl+c interrupts" if busy else self.HINT

    def on_pdb_console_candidates(self, event: Candidates) -> None:
        self.show_note("  ".join(event.candidates[:40]))

    def action_leave(self) -> None:
        self.screen.action_focus_pane("source")
