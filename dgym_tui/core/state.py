"""DebugState: what the views show, folded from the event stream.

`apply(event)` is the only way the state changes, so the live app, the agent's observations and
a replayed session file all see the same thing after the same events. apply() returns the names
of the aspects that changed (ASPECTS), so a view repaints only what it must.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from dgym_tui.core import events as ev
from dgym_tui.core.breakpoints import Breakpoint
from dgym_tui.core.pdb_commands import runs_program

PDB_OFF = "pdb is off for this task: "  # how Session._pdb_off's notice begins

ASPECTS = ("session", "sandbox", "program", "stop", "breakpoints", "busy", "files", "source",
           "tests", "progress", "checkpoints", "agent", "approval")


@dataclass
class AgentView:
    """The agent as the views show it."""

    model: str = ""
    mode: str = "manual"
    state: str = "off"             # off | running | waiting | paused | limit | error | submitted | stopped | done
    step: int = 0
    tokens: int = 0
    cost: float | None = 0.0       # None once a reply had no known price
    replies: int = 0               # the model's replies so far: before the first, no cost to show (not $0)
    reason: str = ""
    max_steps: int | None = None
    max_cost: float | None = None
    scripted: bool = False
    waiting: ev.ApprovalRequested | None = None  # the call waiting for the person
    streaming: str = ""            # the current step's reply text so far
    retry: str = ""                # "retrying in 2 s (rate limited)" while one waits
    conversation: list[dict] = field(default_factory=list)  # the messages, in order
    origins: list[str] = field(default_factory=list)        # who each message is from
    tool_format: str = "native"    # how the agent calls tools now: native | json | text
    tools: list[str] = field(default_factory=list)      # the tools it has now
    schedule: dict = field(default_factory=dict)        # tool -> edits after which it comes (not yet there)


@dataclass
class Acting:
    """An act call under way: who, what."""

    id: int
    actor: str
    name: str
    args: dict


@dataclass
class DebugState:
    repo: str = ""
    repo_name: str = ""
    sandbox: ev.SandboxReady | None = None
    entrypoint: str = ""            # what runs under pdb, as typed
    program: str = "starting"       # starting | running | stopped | exited | error
    stop: ev.Stop | None = None
    exit_code: int | None = None
    exit_message: str = ""
    error: str | None = None        # the last fatal error, until the program runs again
    pdb_off: str = ""               # why no pdb runs in this session (Session._pdb_off's notice), else ""
    breakpoints: list[Breakpoint] = field(default_factory=list)
    watches: list[str] = field(default_factory=list)        # the watch expressions, from the last stop
    run_stops: list[ev.Stop] = field(default_factory=list)  # each place this run stopped at, in order
    _ran: bool = False              # the program ran since the last recorded stop
    busy: Acting | None = None
    changed: dict[str, str] = field(default_factory=dict)   # path -> A | M | D, from the baseline
    contents: dict[str, str] = field(default_factory=dict)  # sha -> text
    sources: dict[str, str] = field(default_factory=dict)   # path -> sha of its last read
    tests: ev.Tests | None = None
    checkpoints: list[ev.Checkpoint] = field(default_factory=list)
    progress: str | None = None     # long work under way (sandbox start, tests)
    resumed: ev.Resumed | None = None
    agent: AgentView = field(default_factory=AgentView)
    # The other agents' conversations, by actor: the seeker's ("agent:seeker"), whose calls wait
    # for the person in the agent's own place (`agent.waiting`).
    roles: dict[str, AgentView] = field(default_factory=dict)
    answers: list[ev.SeekerAnswer] = field(default_factory=list)  # the seeker's, in order
    seq: int = 0                    # the last event applied

    # --- derived -------------------------------------------------------------------------------

    @property
    def files(self) -> list[str]:
        """Every file of the copy now: the baseline's, plus added, minus deleted."""
        base = set(self.sandbox.files) if self.sandbox else set()
        for path, status in self.changed.items():
            if status == "D":
                base.discard(path)
            else:
                base.add(path)
        return sorted(base)

    def source(self, path: str) -> str | None:
        """The last text recorded for a file, or None if no event carried it."""
        sha = self.sources.get(path)
        return self.contents.get(sha) if sha else None

    @property
    def pdb_off_label(self) -> str:
        """"pdb off (Python 2.7)" for the status bar; "pdb off" when the reason names no version."""
        old = re.search(r"Python (?:\S+ )?is (\d+\.\d+)", self.pdb_off)
        return f"pdb off (Python {old.group(1)})" if old else "pdb off"

    @property
    def acting(self) -> str | None:
        return self.busy.actor if self.busy else None

    # --- the fold -------------------------------------------------------------------------------

    def apply(self, event: ev.Event) -> set[str]:
        self.seq = event.seq
        handler = getattr(self, f"_{event.kind}", None)
        return handler(event.data, event.actor) if handler else set()

    def _session_started(self, d: ev.SessionStarted, actor: str) -> set[str]:
        self.repo, self.repo_name = d.repo, d.repo_name
        self.entrypoint = d.entrypoint or ""
        return {"session"}

    def _resumed(self, d: ev.Resumed, actor: str) -> set[str]:
        self.resumed = d
        self.program, self.stop, self.busy, self.progress, self.pdb_off = "starting", None, None, None, ""
        self.agent.waiting = None
        if self.agent.state not in ("off",):
            self.agent.state = "stopped"
        return {"program", "stop", "busy", "agent", "approval", "progress"}

    def _notice(self, d: ev.Notice, actor: str) -> set[str]:
        if d.message.startswith(PDB_OFF):  # the session will run no pdb: not "starting" forever
            self.pdb_off = d.message[len(PDB_OFF):]
            return {"program"}
        return set()

    def _progress(self, d: ev.Progress, actor: str) -> set[str]:
        self.progress = d.message
        return {"progress"}

    def _sandbox_ready(self, d: ev.SandboxReady, actor: str) -> set[str]:
        self.sandbox = d
        self.changed = {}
        self.checkpoints = []  # a new sandbox: checkpoints carried over are announced again
        self.progress = None
        return {"sandbox", "files", "progress", "checkpoints"}

    def _changes(self, d: ev.Changes, actor: str) -> set[str]:
        self.changed = dict(d.changed)
        return {"files"}

    def _file(self, d: ev.FileContent, actor: str) -> set[str]:
        if d.text is not None:
            self.contents[d.sha] = d.text
        self.sources[d.path] = d.sha
        return {"source"}

    def _checkpoint(self, d: ev.Checkpoint, actor: str) -> set[str]:
        self.checkpoints.append(d)
        return {"checkpoints"}

    def _restored(self, d: ev.Restored, actor: str) -> set[str]:
        self.checkpoints = [c for c in self.checkpoints if c.id not in d.undone]
        return {"checkpoints"}

    def _program_start(self, d: ev.ProgramStart, actor: str) -> set[str]:
        self.entrypoint = d.entrypoint
        self.program, self.stop, self.exit_code, self.exit_message = "running", None, None, ""
        self.run_stops, self._ran = [], True
        self.error = None
        self.progress = None
        return {"program", "stop", "progress"}

    def _pdb_input(self, d: ev.PdbInput, actor: str) -> set[str]:
        if runs_program(d.command) or d.command.split(" ", 1)[0] in ("j", "jump"):
            self._ran = True  # the next stop is a new place in the run (`p x`, `up` are not)
        if runs_program(d.command) and self.program == "stopped":
            self.program = "running"
            return {"program"}
        return set()

    def _stop(self, d: ev.Stop, actor: str) -> set[str]:
        self.stop, self.program = d, "stopped"
        self.watches = [w.expr for w in d.watches]
        if self._ran or not self.run_stops:
            self.run_stops.append(d)
            self._ran = False
        return {"stop", "program"}

    def _program_exit(self, d: ev.ProgramExit, actor: str) -> set[str]:
        self.program, self.stop = "exited", None
        self.exit_code, self.exit_message = d.code, d.message
        return {"program", "stop"}

    def _breakpoints(self, d: ev.Breakpoints, actor: str) -> set[str]:
        self.breakpoints = list(d.breakpoints)
        return {"breakpoints"}

    def _error(self, d: ev.Error, actor: str) -> set[str]:
        if not d.fatal:
            return set()
        self.program, self.error, self.progress = "error", d.message, None
        return {"program", "progress"}

    def _tests(self, d: ev.Tests, actor: str) -> set[str]:
        self.tests, self.progress = d, None
        return {"tests", "progress"}

    # --- the agent ----------------------------------------------------------------------------

    def _view(self, actor: str) -> AgentView:
        """The conversation an agent event belongs to: the seeker's, or the agent's (an outside
        agent over MCP included: the agent pane follows it when there is no agent of our own)."""
        return self.roles.setdefault(actor, AgentView()) if actor == ev.SEEKER else self.agent

    def _seeker_answer(self, d: ev.SeekerAnswer, actor: str) -> set[str]:
        self.answers.append(d)
        return {"agent"}

    def _agent_started(self, d: ev.AgentStarted, actor: str) -> set[str]:
        view = AgentView(model=d.model, mode=d.mode, state="running", max_steps=d.max_steps,
                         max_cost=d.max_cost, scripted=d.scripted, tool_format=d.tool_format,
                         tools=list(d.tools), schedule=dict(d.schedule))
        if actor == ev.SEEKER:  # each of its turns is a fresh conversation of its own
            self.roles[actor] = view
            return {"agent"}
        before, self.agent = self.agent, view
        if d.resumed:  # the same conversation goes on (resume, take-over)
            self.agent.conversation = before.conversation[:d.resumed]
            self.agent.origins = before.origins[:d.resumed]
            self.agent.step, self.agent.tokens, self.agent.cost = before.step, before.tokens, before.cost
            self.agent.replies = before.replies
        return {"agent"}

    def _tools_unlocked(self, d: ev.ToolsUnlocked, actor: str) -> set[str]:
        self._view(actor).tools = sorted({*self.agent.tools, *d.tools})
        view = self._view(actor)
        view.schedule = {k: v for k, v in view.schedule.items() if k not in d.tools}
        return {"agent"}

    def _tool_format(self, d: ev.ToolFormat, actor: str) -> set[str]:
        self._view(actor).tool_format = d.format
        return {"agent"}

    def _agent_message(self, d: ev.AgentMessage, actor: str) -> set[str]:
        agent = self._view(actor)
        del agent.conversation[d.index:], agent.origins[d.index:]  # the index says where it goes
        agent.conversation.append(d.message)
        agent.origins.append(d.origin)
        return set()

    def _model_request(self, d: ev.ModelRequest, actor: str) -> set[str]:
        view = self._view(actor)
        view.step, view.streaming, view.retry = d.step, "", ""
        return {"agent"}

    def _model_delta(self, d: ev.ModelDelta, actor: str) -> set[str]:
        self._view(actor).streaming += d.text
        return {"agent"}

    def _model_reply(self, d: ev.ModelReplied, actor: str) -> set[str]:
        agent = self._view(actor)
        agent.streaming, agent.retry = d.text, ""
        agent.tokens += d.prompt_tokens + d.completion_tokens
        agent.replies += 1
        agent.cost = None if agent.cost is None or d.cost is None else agent.cost + d.cost
        return {"agent"}

    def _model_retry(self, d: ev.ModelRetry, actor: str) -> set[str]:
        self._view(actor).retry = f"retrying in {d.wait_s:.0f} s ({d.reason})"
        return {"agent"}

    def _approval_requested(self, d: ev.ApprovalRequested, actor: str) -> set[str]:
        self.agent.waiting = d
        return {"approval", "agent"}

    def _decision(self, d: ev.Decision, actor: str) -> set[str]:
        if self.agent.waiting is not None and self.agent.waiting.call_id == d.call_id:
            self.agent.waiting = None
            return {"approval", "agent"}
        return set()

    def _agent_status(self, d: ev.AgentStatus, actor: str) -> set[str]:
        agent = self._view(actor)
        agent.state, agent.mode, agent.step, agent.reason = d.state, d.mode, d.step, d.reason
        agent.tokens, agent.cost = d.tokens, d.cost
        agent.max_steps, agent.max_cost = d.max_steps, d.max_cost
        if d.state not in ("waiting",):
            agent.waiting = None if d.state in ("stopped", "done", "submitted", "error") else agent.waiting
        return {"agent", "approval"}

    def _call_started(self, d: ev.CallStarted, actor: str) -> set[str]:
        if d.lane != "act":
            return set()
        self.busy = Acting(d.id, actor, d.name, dict(d.args))
        return {"busy"}

    def _call_finished(self, d: ev.CallFinished, actor: str) -> set[str]:
        if d.lane != "act" or self.busy is None or self.busy.id != d.id:
            return set()
        self.busy = None
        return {"busy"}


def fold(events) -> DebugState:
    """The state after these events, from scratch (replay, tests)."""
    state = DebugState()
    for event in events:
        state.apply(event)
    return state
