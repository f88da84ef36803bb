"""The session's event stream: everything that happens, in order, attributed to an actor.

The UI panes, the session file, the agent's observations and replay are all views of this one
stream. Each event kind has one payload class below (its fields are the documented shape, see
README "Events"); `Event.to_dict()` / `Event.from_dict()` turn events into JSON-ready dicts and
back, so a recorded stream folds into the same `DebugState` as a live one. Payloads are plain
data, never objects of the UI. `SCHEMA` is bumped whenever a payload changes incompatibly.

Delivery (`EventBus`) is ordered and lossless: every listener sees every event exactly once, in
seq order, whichever thread emitted it; a listener subscribed late is first given the history.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
import time
import types
import typing
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar

from dgym_tui.core.breakpoints import Breakpoint

SCHEMA = 1

HUMAN = "human"
AGENT = "agent"
SYSTEM = "system"


SEEKER = "agent:seeker"  # the info-seeking model that investigates for the agent (agent/seeker.py)


def is_agent(actor: str) -> bool:
    """The built-in agent ("agent"), its seeker ("agent:seeker") or an outside one over MCP
    ("agent:NAME")."""
    return actor == AGENT or actor.startswith(AGENT + ":")


ACTORS = (HUMAN, AGENT, SYSTEM)


class Payload:
    """Base of every payload: a dataclass with a class-level `kind`."""

    kind: ClassVar[str] = ""
    _names: ClassVar[tuple[str, ...]] = ()  # the fields, set by @payload

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    # Equality, hashing and repr are written once here rather than generated per class: each
    # method dataclass generates is compiled at import, and for ~35 payload classes that cost
    # the app's first frame ~20 ms.
    def _values(self) -> tuple:
        return tuple(getattr(self, name) for name in self._names)

    def __eq__(self, other):
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._values() == other._values()

    def __hash__(self):
        return hash((self.__class__, self._values()))

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in self._names)
        return f"{self.__class__.__qualname__}({fields})"


PAYLOADS: dict[str, type[Payload]] = {}


def payload(cls):
    """Class decorator: a frozen dataclass registered under its kind."""
    cls.__doc__ = cls.__doc__ or cls.kind  # else dataclass computes one from the signature
    cls = dataclass(frozen=True, eq=False, repr=False)(cls)
    cls._names = tuple(f.name for f in dataclasses.fields(cls))
    PAYLOADS[cls.kind] = cls
    return cls


# --- the session and its sandbox -------------------------------------------------------------

@payload
class SessionStarted(Payload):
    """First event of every session: what was asked for."""

    kind: ClassVar[str] = "session_started"
    schema: int
    version: str
    repo: str
    repo_name: str
    sandbox: str                 # asked for: auto | docker | bwrap | local
    entrypoint: str | None       # as given (None: detected from the repo)


@payload
class Progress(Payload):
    kind: ClassVar[str] = "progress"
    message: str
    step: str = ""               # sandbox | pdb | tests | ...


@payload
class SandboxChosen(Payload):
    """The sandbox is chosen and its image ready (dependencies installed); it starts now."""

    kind: ClassVar[str] = "sandbox_chosen"
    backend: str                 # docker | bwrap | local
    image: str | None = None     # the image it runs (docker)
    python: str = "python3"      # the interpreter that runs the program


@payload
class SandboxReady(Payload):
    """The sandbox is up with the repo copy committed as its baseline."""

    kind: ClassVar[str] = "sandbox_ready"
    backend: str                 # docker | bwrap | local
    description: str
    isolated: bool
    root: str                    # the copy's path inside the sandbox
    baseline: str                # the baseline commit in the sandbox's own git repository
    files: list[str]             # every file of the copy at the baseline, repo-relative
    skipped: list[str] = field(default_factory=list)   # left out of the copy (outside symlinks)
    warning: str | None = None   # e.g. why it fell back to a local copy
    python: str = "python3"      # the interpreter that runs the program
    image: str | None = None     # the image it runs (docker)


@payload
class Changes(Payload):
    """Files of the copy that differ from the baseline: path -> A (added), M, D (deleted)."""

    kind: ClassVar[str] = "changes"
    changed: dict[str, str]


@payload
class FileContent(Payload):
    """A file as the session read it for a view. Content is recorded once per hash: `text` is
    None when an earlier event of the stream already carried the same `sha`."""

    kind: ClassVar[str] = "file"
    path: str                    # repo-relative, or absolute for files outside the repo
    sha: str                     # sha256 of the text
    text: str | None


@payload
class Checkpoint(Payload):
    """A git commit in the sandbox; `patch` is the diff from the previous checkpoint."""

    kind: ClassVar[str] = "checkpoint"
    id: str
    message: str
    patch: str = ""


@payload
class Restored(Payload):
    """The copy went back to an earlier commit (undo): `undone` lists the checkpoints dropped."""

    kind: ClassVar[str] = "restored"
    to: str
    undone: list[str]
    message: str = ""


@payload
class Resumed(Payload):
    """A session goes on from a recording: the events before this one are its past (`upto`:
    the last of them), replayed into the views; a new sandbox is built from the repo and the
    recorded checkpoints. `changed`: files of the repo that differ from the recording's start."""

    kind: ClassVar[str] = "resumed"
    source: str                  # the session file it came from
    upto: int                    # the seq of the last recorded event kept
    changed: list[str] = field(default_factory=list)
    take_over: bool = False      # from a replay, at an earlier moment


# --- the program under pdb ---------------------------------------------------------------------

@payload
class ProgramStart(Payload):
    kind: ClassVar[str] = "program_start"
    argv: list[str]
    entrypoint: str              # as a person would type it
    restart: bool = False
    reason: str = ""


@payload
class PdbInput(Payload):
    kind: ClassVar[str] = "pdb_input"
    command: str


@payload
class PdbOutput(Payload):
    """What pdb and the program printed (markers stripped, repo paths made relative)."""

    kind: ClassVar[str] = "pdb_output"
    text: str
    truncated: bool = False


@dataclass(frozen=True)
class Frame:
    file: str | None
    line: int | None
    function: str | None


@dataclass(frozen=True)
class ExceptionInfo:
    type: str
    message: str


@dataclass(frozen=True)
class WatchValue:
    """A watch expression at a stop: its value's short repr, or why it could not be evaluated."""

    expr: str
    value: str | None = None
    error: str | None = None


@dataclass(frozen=True)
class DataBreakpoint:
    """Stop when `expr` changes; scope: frame (a local, until its frame returns) | object (an
    attribute or item of one object) | global (a module-level name)."""

    number: int
    expr: str
    scope: str
    where: str                   # where it was set: file:line in function
    value: str                   # its value now


@dataclass(frozen=True)
class DataChange:
    """What made a "data" stop: `by` is the line that ran last (file:line)."""

    number: int
    expr: str
    old: str
    new: str
    by: str | None = None


@payload
class Stop(Payload):
    """pdb is at its prompt. `reason`: why the program is stopped — start | step | breakpoint |
    return | exception | post_mortem | data (a data breakpoint's value changed); a command that only inspects or moves between frames
    (`p x`, `up`) keeps the reason of the stop it was typed at."""

    kind: ClassVar[str] = "stop"
    reason: str
    file: str | None
    line: int | None
    function: str | None
    stack: list[Frame] = field(default_factory=list)   # outermost first
    frame_index: int = 0         # the selected frame in `stack`
    locals: dict[str, str] = field(default_factory=dict)  # name -> short repr
    locals_truncated: int = 0    # names left out
    exception: ExceptionInfo | None = None
    test: str | None = None      # pytest: the node id of the test being run
    pid: int | None = None
    phase: str | None = None     # pytest post-mortem: collect | setup | call | teardown
    watches: list[WatchValue] = field(default_factory=list)
    data_breakpoints: list[DataBreakpoint] = field(default_factory=list)
    data_change: DataChange | None = None

    @classmethod
    def from_status(cls, status: dict) -> Stop:
        """From the shim's marker status (sandbox/box/dgym_pdb.py)."""
        exc = status.get("exception")
        return cls(reason=status.get("reason") or "command", file=status.get("file"),
                   line=status.get("line"), function=status.get("function"),
                   stack=[Frame(f.get("file"), f.get("line"), f.get("function"))
                          for f in status.get("stack") or ()],
                   frame_index=status.get("frame_index") or 0,
                   locals=dict(status.get("locals") or {}),
                   locals_truncated=status.get("locals_truncated") or 0,
                   exception=ExceptionInfo(exc.get("type", ""), exc.get("message", "")) if exc else None,
                   test=status.get("test"), pid=status.get("pid"), phase=status.get("phase"),
                   watches=[WatchValue(w.get("expr", ""), w.get("value"), w.get("error"))
                            for w in status.get("watches") or ()],
                   data_breakpoints=[DataBreakpoint(d.get("number", 0), d.get("expr", ""), d.get("scope", ""),
                                                    d.get("where", ""), d.get("value", ""))
                                     for d in status.get("data_breakpoints") or ()],
                   data_change=DataChange(**{k: change.get(k) for k in ("number", "expr", "old", "new", "by")})
                   if isinstance(change := status.get("data_change"), dict) else None)

    @property
    def where(self) -> str:
        return f"{self.file}:{self.line}"

    def same_view(self, other: Stop | None) -> bool:
        """Whether a view would show nothing new (the reason aside)."""
        return other is not None and dataclasses.replace(other, reason=self.reason) == self


@payload
class ProgramExit(Payload):
    kind: ClassVar[str] = "program_exit"
    code: int | None             # None: pdb ended without an exit status (quit, killed)
    message: str


@payload
class Breakpoints(Payload):
    """Every breakpoint of the session, after any change (pdb's numbers, hits, who set it)."""

    kind: ClassVar[str] = "breakpoints"
    breakpoints: list[Breakpoint]


@payload
class Interrupted(Payload):
    kind: ClassVar[str] = "interrupted"
    message: str


@payload
class Error(Payload):
    """Something failed; `message` is one line with the fix. `fatal`: the session cannot go on
    until the person acts (the sandbox did not start, or died)."""

    kind: ClassVar[str] = "error"
    message: str
    fatal: bool = False
    sandbox_gone: bool = False   # the sandbox died: restarting it (with its changes) is the fix


@payload
class Notice(Payload):
    """Worth a person's attention, nothing failed (e.g. a breakpoint not restored)."""

    kind: ClassVar[str] = "notice"
    message: str
    level: str = "warning"       # info | warning


@payload
class Tests(Payload):
    kind: ClassVar[str] = "tests"
    passed: int
    failed: int
    errors: int
    failing: list[str]           # node ids
    output: str                  # the tail of pytest's output
    exit_code: int | None = None
    timed_out: list[dict] = field(default_factory=list)  # {test, seconds, where}: stopped at the per-test limit
    not_run: int = 0             # tests left out: the run stopped after its first hang (stop_after_hang)

    @property
    def ok(self) -> bool:
        return not self.failed and not self.errors and self.exit_code in (0, None)

    @property
    def ran(self) -> bool:
        return bool(self.passed or self.failed or self.errors)

    def summary(self) -> str:
        """The counts, or that no test ran (and why, as far as pytest's exit code tells): never
        "0 passed, 0 failed, 0 errors", which reads as if the tests had been run."""
        if self.ran:
            return f"{self.passed} passed, {self.failed} failed, {self.errors} errors"
        why = {5: "pytest found none to run", 4: "pytest refused its arguments", 2: "pytest was interrupted",
               None: "pytest did not finish"}.get(self.exit_code, f"pytest exited with code {self.exit_code}")
        return f"no test ran ({why})"


# --- the agent -----------------------------------------------------------------------------------

@payload
class AgentStarted(Payload):
    kind: ClassVar[str] = "agent_started"
    model: str
    mode: str                    # step | auto
    tools: list[str]
    max_steps: int | None = None
    max_cost: float | None = None
    scripted: bool = False       # a scripted model (tests, the demo), not a real one
    schemas: list[dict] = field(default_factory=list)  # the tools as the model sees them
    task: str = ""
    resumed: int = 0             # the conversation carried over from before (messages kept)
    tool_format: str = "native"  # native tool calls, or one action per reply: json (held to its form) | text
    schedule: dict = field(default_factory=dict)  # tool -> edits after which it is unlocked (not in tools yet)


@payload
class AgentMessage(Payload):
    """One message of the agent's conversation, recorded once, when it joins the history
    (OpenAI chat format). Prompts are these messages in order, never stored again."""

    kind: ClassVar[str] = "agent_message"
    index: int
    message: dict
    origin: str = ""             # system | task | reply | tool | person | hint | nudge


@payload
class ModelRequest(Payload):
    """A query to the model: the first `upto` messages. `trimmed`: the messages this request
    newly cut short (to fit the context window); a message once cut stays cut in every later
    request, so a prompt is the messages with every `trimmed` of this and earlier requests cut."""

    kind: ClassVar[str] = "model_request"
    step: int
    upto: int
    trimmed: list[int] = field(default_factory=list)


@payload
class ModelDelta(Payload):
    """A piece of the reply's text as it streams (not needed to rebuild anything)."""

    kind: ClassVar[str] = "model_delta"
    step: int
    text: str


@payload
class ModelReplied(Payload):
    kind: ClassVar[str] = "model_reply"
    step: int
    text: str
    tool_calls: list[dict]       # {id, name, arguments (dict or null), error}
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float | None = None    # USD; None: the model's price is unknown
    message_index: int = -1      # its AgentMessage


@payload
class ModelRetry(Payload):
    kind: ClassVar[str] = "model_retry"
    attempt: int
    wait_s: float
    reason: str


@payload
class ToolRequested(Payload):
    """The model asked for a tool; `verdict` is the policy's: run | ask | deny (| invalid)."""

    kind: ClassVar[str] = "tool_call"
    call_id: str
    tool: str
    args: dict[str, Any]
    verdict: str
    rule: str = ""


@payload
class ApprovalRequested(Payload):
    """A call waits for the person. `preview`: for an edit, the file before and after."""

    kind: ClassVar[str] = "approval_requested"
    call_id: str
    tool: str
    args: dict[str, Any]
    rule: str
    path: str | None = None
    before: str | None = None
    after: str | None = None
    tried: bool = False          # asked again after a try: the change is in the sandbox
    outcome: str | None = None   # after a try: what it did (the tests' result included)


@payload
class Decision(Payload):
    """The person's (or a headless run's) answer: approve | always | edit | reject | try |
    skip (stopped while waiting)."""

    kind: ClassVar[str] = "decision"
    call_id: str
    verdict: str
    comment: str = ""
    args: dict[str, Any] | None = None   # edited arguments
    rule: str | None = None              # what "always" granted


@payload
class ToolResult(Payload):
    """Exactly one per tool call the model made (and per tool the person ran)."""

    kind: ClassVar[str] = "tool_result"
    call_id: str
    tool: str
    observation: str
    executed: bool
    ok: bool = True

    # framing the pdb tool puts before what pdb printed (tools/pdb.py)
    _FRAMING = ("Pdb command output:",)

    @property
    def headline(self) -> str:
        """The observation's first line that says something: what pdb printed, not the
        heading in front of it."""
        lines = [line for line in self.observation.strip().splitlines() if line.strip()]
        for line in lines:
            if line.strip() not in self._FRAMING:
                return line.strip()
        return lines[0].strip() if lines else ""


@payload
class AgentStatus(Payload):
    """running | waiting (for the person) | paused | limit | error | submitted | stopped | done."""

    kind: ClassVar[str] = "agent_status"
    state: str
    mode: str
    step: int
    tokens: int = 0
    cost: float | None = 0.0
    reason: str = ""
    max_steps: int | None = None
    max_cost: float | None = None


@payload
class ToolsUnlocked(Payload):
    """Tools a schedule kept back were given to the agent (debug-gym's "pdb after N rewrites")."""

    kind: ClassVar[str] = "tools_unlocked"
    tools: list[str]
    edits: int                   # the agent's successful edits so far
    schemas: list[dict] = field(default_factory=list)  # the new tools as the model sees them


@payload
class ToolFormat(Payload):
    """The agent changed how it calls tools, for the rest of the session (auto: native to json or
    text; json to text when the server takes no schema)."""

    kind: ClassVar[str] = "tool_format"
    format: str                  # native | json | text
    reason: str = ""


@payload
class Hint(Payload):
    """Words from the person to the agent (read at its next step)."""

    kind: ClassVar[str] = "hint"
    text: str


@payload
class SeekerAnswer(Payload):
    """What the seeker (or the person in its place) answered the agent's `debug` question, and
    how it stands against what it saw: grounded (every value it quotes is in its observations),
    ungrounded (`unseen` lists those that are not), or no values (it quotes none)."""

    kind: ClassVar[str] = "seeker_answer"
    call_id: str                 # the agent's debug call ("" in the report form: no call)
    question: str
    answer: str
    grounding: str               # grounded | ungrounded | no values | unanswered
    unseen: list[str] = field(default_factory=list)    # quoted values never in its observations
    places: list[str] = field(default_factory=list)    # file:line it names
    commands: list[str] = field(default_factory=list)  # the pdb commands it ran
    values: list[str] = field(default_factory=list)    # the values it quotes
    model: str = ""              # "" when the person answered
    steps: int = 0
    tokens: int = 0
    cost: float | None = 0.0
    seconds: float = 0.0
    by: str = "seeker"           # seeker | person


# --- calls: who asked for what -----------------------------------------------------------------

@payload
class CallStarted(Payload):
    """The runner started a named call (see core/runner.py). `lane`: act (the debugger and the
    workspace, one at a time) or look (read-only look-ups for the views)."""

    kind: ClassVar[str] = "call_started"
    id: int
    name: str
    args: dict[str, Any]
    lane: str = "act"


@payload
class CallFinished(Payload):
    kind: ClassVar[str] = "call_finished"
    id: int
    name: str
    ok: bool
    error: str | None = None
    duration_ms: float = 0.0
    lane: str = "act"


# --- events --------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Event:
    seq: int
    ts: float
    actor: str
    data: Payload

    @property
    def kind(self) -> str:
        return self.data.kind

    def to_dict(self) -> dict:
        return {"seq": self.seq, "ts": self.ts, "actor": self.actor, "kind": self.kind,
                "data": self.data.to_dict()}

    @classmethod
    def from_dict(cls, d: dict) -> Event:
        """The inverse of to_dict; a kind this version does not know is an error."""
        kind = d.get("kind")
        payload_cls = PAYLOADS.get(kind)
        if payload_cls is None:
            raise ValueError(f"unknown event kind {kind!r}")
        return cls(seq=int(d["seq"]), ts=float(d.get("ts", 0.0)), actor=str(d.get("actor", SYSTEM)),
                   data=_decode(payload_cls, d.get("data") or {}))


def _decode(tp, value):
    """A JSON value as the (dataclass, list, dict, optional) type `tp` describes."""
    return _decoder(tp)(value)


_decoders: dict = {}


def _identity(value):
    return value


def _decoder(tp) -> Callable:
    """A function turning a JSON value into `tp`, built once per type (reading a 10,000-event
    session file is mostly this)."""
    found = _decoders.get(tp)
    if found is not None:
        return found
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        options = [t for t in typing.get_args(tp) if t is not type(None)]
        inner = _decoder(options[0]) if len(options) == 1 else _identity
        decode = _identity if inner is _identity else (lambda v: None if v is None else inner(v))
    elif origin is list:
        inner = _decoder(typing.get_args(tp)[0])
        decode = _identity if inner is _identity else (lambda v: None if v is None else [inner(x) for x in v])
    elif origin is dict:
        inner = _decoder(typing.get_args(tp)[1])
        decode = _identity if inner is _identity else (
            lambda v: None if v is None else {k: inner(x) for k, x in v.items()})
    elif dataclasses.is_dataclass(tp):
        hints = typing.get_type_hints(tp)
        fields = {f.name: _decoder(hints[f.name]) for f in dataclasses.fields(tp)}

        def decode(value, tp=tp, fields=fields):
            if value is None:
                return None
            return tp(**{k: fields[k](v) for k, v in value.items() if k in fields})
    else:
        decode = _identity
    _decoders[tp] = decode
    return decode


Listener = Callable[[Event], None]


class EventBus:
    """Numbers events, keeps them, and delivers each to every listener exactly once, in order.

    An emitter appends under a lock, then delivers everything not yet delivered while holding
    the delivery lock, so two threads emitting at once cannot reorder events for a listener.
    When emit returns, every listener has seen the event, except when a listener emits from
    inside a delivery: that event is delivered right after the one being delivered. Listeners
    must be quick and must not wait on another thread that may be emitting.
    """

    def __init__(self, history: list[Event] | None = None):
        """history: events of an earlier run (a resumed session): listeners subscribing with
        replay get them first, and new events number on from them."""
        self._lock = threading.Lock()           # seq numbers and history
        self._delivery = threading.RLock()      # one deliverer at a time
        self._listeners: list[Listener] = []
        self.history: list[Event] = list(history or [])
        self._delivered = len(self.history)     # how many of history were delivered
        self._delivering = threading.local()
        self.listener_errors = 0

    def subscribe(self, listener: Listener, replay: bool = True) -> Callable[[], None]:
        """Listen from now on; with replay, first receive every event so far (in order)."""
        with self._delivery:
            with self._lock:
                past = self.history[:self._delivered] if replay else []
                self._listeners = self._listeners + [listener]
            for event in past:
                listener(event)

        def unsubscribe() -> None:
            with self._lock:
                self._listeners = [item for item in self._listeners if item is not listener]

        return unsubscribe

    def emit(self, data: Payload, actor: str = SYSTEM) -> Event:
        with self._lock:
            seq = self.history[-1].seq + 1 if self.history else 1
            event = Event(seq=seq, ts=time.time(), actor=actor, data=data)
            self.history.append(event)
        if getattr(self._delivering, "active", False):
            return event  # emitted by a listener: the loop below delivers it next
        with self._delivery:
            self._delivering.active = True
            try:
                while True:
                    with self._lock:
                        if self._delivered >= len(self.history):
                            break
                        pending = self.history[self._delivered]
                        self._delivered += 1
                        listeners = self._listeners
                    for listener in listeners:
                        try:
                            listener(pending)
                        except Exception:  # one broken view must not stop the others
                            self.listener_errors += 1
                            logging.getLogger(__name__).exception("event listener failed")
            finally:
                self._delivering.active = False
        return event
