"""The agent's pane: what it is doing, and the call that waits for the person.

A waiting call shows the rule that made it wait and what it would do (an edit as a diff). Its
keys work while this pane has the focus (F7 brings it), so they never shadow the debugger's
keys in the source view: a approve, A always allow, e edit first, r reject with a comment,
t try it, v unified / side by side; and at any time p pause/resume, m mode, x stop, h hint,
l raise the limits. The pane only asks: the screen's callbacks turn its answers into the
agent's calls. Callbacks rather than messages: a message is handled later, and the comment
prompt that `r` opens must be up before the keys typed right after `r` are handled.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.widgets import Static

from dgym_tui.core import events as ev
from dgym_tui.core.safe_text import one_line, visible
from dgym_tui.core.state import AgentView
from dgym_tui.ui.widgets.diff_view import DiffView
from dgym_tui.ui.widgets.status_bar import cost_text

STATES = {"off": "off", "running": "working…", "waiting": "waiting", "paused": "paused",
          "limit": "stopped at a limit", "error": "stopped on an error", "submitted": "submitted",
          "stopped": "stopped", "done": "done"}


class AgentPanel(Vertical, can_focus=True):
    DEFAULT_CSS = """
    AgentPanel { height: 1fr; padding: 0 1; }
    AgentPanel #agent-state { height: auto; }
    AgentPanel #agent-call { height: auto; }
    AgentPanel #agent-call.-waiting { color: $warning; text-style: bold; }
    AgentPanel #agent-args { height: auto; max-height: 8; background: $panel; padding: 0 1; }
    AgentPanel DiffView { height: 1fr; }
    AgentPanel #agent-keys { height: auto; color: $text-muted; }
    """
    BINDINGS = [
        Binding("a", "answer('approve')", "Approve", tooltip="run the waiting call"),
        Binding("A", "always", "Always", tooltip="run it, and allow calls like it for the rest of the session"),
        Binding("e", "edit", "Edit", tooltip="change the call (an edit's code, a command) before it runs"),
        Binding("r", "reject", "Reject", tooltip="do not run it; your comment goes to the agent"),
        Binding("t", "answer('try')", "Try", tooltip="apply it now as a checkpoint and run the tests; decide after"),
        Binding("v", "diff_layout", "Diff layout", show=False, tooltip="show an edit unified or side by side"),
        Binding("p", "control('pause')", "Pause/resume", tooltip="pause or resume the agent"),
        Binding("m", "control('mode')", "Mode", tooltip="cycle the mode: step (every call waits) / auto"),
        Binding("x", "control('stop')", "Stop", tooltip="stop the agent (a waiting call is not run)"),
        Binding("h", "control('hint')", "Hint", tooltip="send the agent a hint, read at its next step"),
        Binding("l", "control('limits')", "Limits", show=False, tooltip="raise the step or cost limit and go on"),
        Binding("escape", "leave", "Back", show=False, tooltip="back to the source view"),
    ]

    def __init__(self, *, on_answer: Callable[[str, str], None] | None = None,
                 on_control: Callable[[str], None] | None = None, **kwargs) -> None:
        """on_answer(call_id, verdict) and on_control(action) run at once, in the key's action."""
        super().__init__(**kwargs)
        self.agent = AgentView()
        self.on_answer, self.on_control = on_answer, on_control

    def compose(self):
        yield Static(id="agent-state")
        yield Static(id="agent-call")
        yield Static(id="agent-args")
        yield DiffView(id="agent-diff")
        yield Static(id="agent-keys")

    def on_mount(self) -> None:
        self.show(self.agent)

    @property
    def waiting(self) -> ev.ApprovalRequested | None:
        return self.agent.waiting

    def show(self, agent: AgentView) -> None:
        self.agent = agent
        if not self.children:  # in the DOM, not composed yet (its mount is under way): on_mount shows it
            return
        cost = cost_text(agent.cost, agent.replies)
        limit = f"/{agent.max_steps}" if agent.max_steps else ""
        state = STATES.get(agent.state, agent.state)
        lines = [f"{state} · {agent.mode} mode · {agent.step}{limit} steps · {agent.tokens:,} tok · {cost}"]
        if agent.waiting is None:
            lines.append(f"model: {agent.model or '–'}" + (" (scripted)" if agent.scripted else ""))
        if agent.reason and agent.state in ("paused", "limit", "error", "submitted", "stopped"):
            lines.append(agent.reason)
        if agent.retry:
            lines.append(agent.retry)
        self.query_one("#agent-state", Static).update(Content(visible("\n".join(lines))))
        waiting = agent.waiting
        call = self.query_one("#agent-call", Static)
        args = self.query_one("#agent-args", Static)
        diff = self.query_one(DiffView)
        call.set_class(waiting is not None, "-waiting")
        if waiting is None:
            call.update(Content(""))
            args.display = diff.display = False
            self.query_one("#agent-keys", Static).update(Content(
                "p pause/resume · m mode · x stop · h hint · l limits" if agent.state != "off" else ""))
            return
        tried = " — tried: the change is in the sandbox" if waiting.tried else ""
        if waiting.tool == "answer":  # the person as the seeker: the agent's question waits for them
            call.update(Content(one_line(f"the agent asks you (as its seeker): {waiting.args.get('question', '')} "
                                         "— a or e: answer, r: decline")))
        else:
            call.update(Content(one_line(f"{waiting.tool} waits for you ({waiting.rule}){tried}")))
        shown = {k: v for k, v in waiting.args.items() if not (waiting.tool == "edit" and k == "new_code")}
        if waiting.tool == "answer":  # the question is in the line above; the answer is still to come
            shown = {}
        args.display = bool(shown) or waiting.outcome is not None
        text = _args_text(waiting.tool, shown) if shown else ""
        if waiting.outcome is not None:  # a try: what it did, the tests' verdict last
            outcome = [ln for ln in waiting.outcome.strip().splitlines() if ln.strip()]
            text += ("\n" if text else "") + "tried: " + "\n".join(outcome[-3:])
        args.update(Content(visible(text)))
        diff.display = waiting.after is not None
        if waiting.after is not None:
            diff.show(waiting.path, waiting.before or "", waiting.after)
        keys = "a approve · A always · e edit · r reject" + ("" if waiting.tried else " · t try") + " · v layout"
        self.query_one("#agent-keys", Static).update(Content(keys if self.has_focus_within else "F7: answer it here"))

    def on_descendant_focus(self) -> None:
        self.show(self.agent)  # the keys line says which keys work here

    def on_focus(self) -> None:
        self.show(self.agent)

    def on_blur(self) -> None:
        self.show(self.agent)

    def on_descendant_blur(self) -> None:
        self.show(self.agent)

    def action_answer(self, verdict: str) -> None:
        if self.waiting is not None and self.on_answer is not None:
            self.on_answer(self.waiting.call_id, verdict)

    def action_always(self) -> None:
        self.action_answer("always")

    def action_edit(self) -> None:
        self.action_answer("edit")

    def action_reject(self) -> None:
        self.action_answer("reject")

    def action_diff_layout(self) -> None:
        self.query_one(DiffView).action_toggle_layout()

    def action_control(self, action: str) -> None:
        if self.on_control is not None:
            self.on_control(action)

    def action_leave(self) -> None:
        self.screen.action_focus_pane("source")


def _args_text(tool: str, args: dict) -> str:
    if tool == "edit" and set(args) <= {"path", "start", "end"}:
        start, end = args.get("start"), args.get("end")
        where = "the whole file" if start is None else f"lines {start}-{end if end is not None else start}"
        return f"{args.get('path')}, {where}"
    if tool in ("pdb", "bash") and set(args) <= {"command", "entrypoint", "timeout"}:
        extra = {k: v for k, v in args.items() if k != "command"}
        return str(args.get("command", "")) + (f"   {json.dumps(extra)}" if extra else "")
    return json.dumps(args, indent=1, ensure_ascii=False)
