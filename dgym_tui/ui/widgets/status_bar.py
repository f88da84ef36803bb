"""The one-line status bar: where the code runs, what runs, what the debugger is doing, the agent."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.content import Content
from textual.widgets import Label

from dgym_tui.core.safe_text import one_line

SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"


def cost_text(cost: float | None, replies: int) -> str:
    """The agent's cost so far: "–" before the model's first reply (nothing priced yet: never a
    false $0), "?" once a reply had no known price, else dollars. A cost above zero is shown
    whatever the count says (a state folded before replies were counted)."""
    if not replies and not cost:
        return "–"
    return "?" if cost is None else f"${cost:.4f}"


class StatusBar(Horizontal):
    DEFAULT_CSS = """
    StatusBar { height: 1; background: $panel; color: $text; }
    StatusBar Label { padding: 0 1; height: 1; text-wrap: nowrap; text-overflow: ellipsis; }
    StatusBar #sb-isolation { background: $error; color: $text; text-style: bold; display: none; }
    StatusBar #sb-isolation.-shown { display: block; }
    StatusBar #sb-state { width: 1fr; min-width: 36; }
    StatusBar #sb-model { max-width: 30; }
    StatusBar #sb-state.-error { color: $error; text-style: bold; }
    StatusBar #sb-state.-stopped { color: $accent; }
    StatusBar .agent { color: $text-muted; display: none; }
    StatusBar.-agent .agent { display: block; }
    """

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self._progress: str | None = None
        self._state: tuple[str, str] = ("starting…", "")
        self._frame = 0
        self._timer = None

    def compose(self) -> ComposeResult:
        yield Label("sandbox: …", id="sb-sandbox")
        yield Label("NOT ISOLATED", id="sb-isolation")
        yield Label("", id="sb-entry")
        yield Label("starting…", id="sb-state")
        yield Label("agent: off", id="sb-agent", classes="agent")
        yield Label("model: –", id="sb-model", classes="agent")
        yield Label("tokens: 0", id="sb-tokens", classes="agent")
        yield Label("cost: –", id="sb-cost", classes="agent")

    def set_sandbox(self, kind: str, description: str, isolated: bool, python: str = "") -> None:
        # docker shows its image; local and bwrap their kind and the interpreter that runs the
        # code (the project's own): their temp paths mean nothing to the person
        label = description if kind == "docker" else kind
        if python and kind != "docker":
            label += f" · {python.rsplit('/', 3)[-3] + '/…/' + python.rsplit('/', 1)[-1] if '.venv' in python or '/venv/' in python else python.rsplit('/', 1)[-1]}"
        self.query_one("#sb-sandbox", Label).update(Content(one_line(label)))
        self.query_one("#sb-isolation", Label).set_class(not isolated, "-shown")

    def set_entrypoint(self, label: str) -> None:
        text = f"▶ {one_line(label)}" if label else ""
        entry = self.query_one("#sb-entry", Label)
        if str(entry.content) != text:  # an update costs a layout pass: none for the same text
            entry.update(Content(text))

    def set_state(self, text: str, kind: str = "") -> None:
        """The debugger's state; ends any progress spinner."""
        self._stop_spinner()
        self._state = (text, kind)
        state = self.query_one("#sb-state", Label)
        state.update(Content(one_line(text)), layout=False)  # its width is 1fr: no layout pass (the costly part)
        for name in ("error", "stopped", "running", "exited"):
            state.set_class(name == kind, f"-{name}")

    def set_progress(self, message: str) -> None:
        """Long work under way (sandbox start, tests): an animated spinner and the message."""
        self._progress = message
        if self._timer is None:
            self._timer = self.set_interval(0.1, self._spin)
        self._spin()

    def set_agent(self, mode: str = "off", model: str = "–", tokens: int = 0, cost: float | None = 0.0,
                  step: int = 0, retry: str = "", replies: int = 0) -> None:
        """The agent's slots (shown once there is an agent): mode and state (or a retry under
        way), model, step, tokens, cost ("–" before the model's first reply, "?" when the price
        is unknown: never a false $0)."""
        self.add_class("-agent")
        self.query_one("#sb-agent", Label).update(Content(one_line(f"agent: {retry or mode}")))
        self.query_one("#sb-model", Label).update(Content(f"model: {one_line(model)}"))
        self.query_one("#sb-tokens", Label).update(f"step {step} · {tokens:,} tokens")
        self.query_one("#sb-cost", Label).update(f"cost: {cost_text(cost, replies)}")

    def end_progress(self) -> None:
        """Progress over (e.g. tests ran): show the debugger's state again."""
        if self._progress is not None:
            self.set_state(*self._state)

    @property
    def state_text(self) -> str:
        return str(self.query_one("#sb-state", Label).content)

    def _spin(self) -> None:
        self._frame = (self._frame + 1) % len(SPINNER)
        self.query_one("#sb-state", Label).update(Content(f"{SPINNER[self._frame]} {one_line(self._progress)}"),
                                                  layout=False)

    def _stop_spinner(self) -> None:
        if self._timer is not None:
            self._timer.stop()
            self._timer = None
        self._progress = None
