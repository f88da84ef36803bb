"""A recorded session told as a story: the agent's steps and the person's own actions, in order.

Every export format is a view of this one reading of the event stream (the markdown write-up,
the debug-gym and mini-swe-agent trajectories, the chat conversation), so they agree on what
happened. Nothing here imports the UI or touches a sandbox: it only reads events.

The conversation follows the agent's own rule: an `agent_message` with index i replaces
everything from i on (a take-over cuts the history there). The prompt of each model query is
rebuilt from the messages known at that moment, up to `model_request.upto`, with the messages
a request lists as `trimmed` — and those of the requests before it, since a message once cut
stays cut — cut short exactly as the agent cut them. A `resumed` event (a session taken up
again, appended to the same file) ends what was under way when the first run stopped.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from dgym_tui.core import events as ev
from dgym_tui.core.events import HUMAN

FINAL_STATES = ("submitted", "limit", "stopped", "error", "done")


@dataclass
class Decided:
    verdict: str                 # approve | always | edit | reject | try | skip
    comment: str
    actor: str                   # human, or system for a headless run's rule
    args: dict | None = None     # the person's edited arguments


@dataclass
class Call:
    """One tool call the model made, and what became of it."""

    id: str
    name: str
    arguments: dict | None       # None when the model's arguments did not parse
    error: str | None = None
    verdict: str = ""            # the policy's: run | ask | deny | invalid
    rule: str = ""
    decisions: list[Decided] = field(default_factory=list)
    result: ev.ToolResult | None = None


@dataclass
class Step:
    """One model query and its reply."""

    seq: int
    number: int
    text: str
    calls: list[Call]
    prompt_tokens: int
    completion_tokens: int
    cost: float | None
    prompt: list[dict]           # the messages sent, as sent
    message: dict | None         # the reply as it joined the conversation
    ts: float = 0.0


@dataclass
class PersonAction:
    """Something the person did themselves: kind pdb | tool | tests | hint | change | undo."""

    seq: int
    kind: str
    tool: str = ""               # the tool it amounts to: pdb, eval, or the tool the person ran
    arguments: dict = field(default_factory=dict)
    output: str = ""             # what it printed (pdb), the observation (tool), the text (hint)
    stop: ev.Stop | None = None  # where pdb stopped after it
    patch: str = ""              # a change's diff
    tests: ev.Tests | None = None
    ts: float = 0.0

    def observation(self) -> str:
        """What the action returned, shaped like the tool's own observation."""
        if self.kind == "pdb":
            text = "Pdb command output:\n" + (self.output.strip() or "(no output)") + "\n"
            if self.stop is not None and self.stop.file:
                text += f"\nCurrent frame:\n{self.stop.where} in {self.stop.function}\n"
            return text
        if self.kind == "tests" and self.tests is not None:
            return f"Tests: {self.tests.summary()}\n\npytest's output:\n{self.tests.output}"
        return self.output


@dataclass
class Story:
    header: dict
    path: str
    warnings: list[str]
    entries: list[Step | PersonAction] = field(default_factory=list)
    messages: list[dict] = field(default_factory=list)   # the conversation as it ended
    origins: list[str] = field(default_factory=list)     # system | task | reply | tool | person | hint | nudge
    message_seqs: list[int] = field(default_factory=list)
    message_ts: list[float] = field(default_factory=list)
    agent: ev.AgentStarted | None = None
    status: ev.AgentStatus | None = None                 # the agent's last status
    tests: ev.Tests | None = None                        # the last test run
    first_tests: ev.Tests | None = None                  # a run before any change (what failed)
    first_exception: ev.Stop | None = None               # the first stop on an exception, before any change
    tests_stale: bool = False                            # the code changed after it
    open_call: bool = False                              # a call was under way when the file ended
    started: float = 0.0
    ended: float = 0.0

    @property
    def steps(self) -> list[Step]:
        return [e for e in self.entries if isinstance(e, Step)]

    @property
    def person(self) -> list[PersonAction]:
        return [e for e in self.entries if isinstance(e, PersonAction)]

    @property
    def repo(self) -> str:
        return str(self.header.get("repo") or "")

    @property
    def repo_name(self) -> str:
        return str(self.header.get("repo_name") or self.repo.rstrip("/").rsplit("/", 1)[-1])

    @property
    def model(self) -> str:
        return self.agent.model if self.agent else str(self.header.get("model") or "")

    @property
    def mode(self) -> str:
        return self.agent.mode if self.agent else str(self.header.get("mode") or "manual")

    @property
    def task(self) -> str:
        return self.agent.task if self.agent else ""

    @property
    def system_prompt(self) -> str:
        if self.messages and self.messages[0].get("role") == "system":
            return str(self.messages[0].get("content") or "")
        return ""

    @property
    def instructions(self) -> str:
        """The task: the agent's, or for a session without one, what the first test run asked
        for (the agent's default task), or a plain sentence."""
        if self.task:
            return self.task
        if self.first_tests is not None:
            from dgym_tui.agent.prompts import task_from_tests

            return task_from_tests(self.first_tests)
        stop = self.first_exception
        if stop is not None and stop.exception is not None:
            where = f"the test {stop.test}" if stop.test else f"{stop.where} in {stop.function}"
            return (f"The program fails in {where}: {stop.exception.type}: {stop.exception.message}\n\n"
                    "Find why, and fix the code (not the tests, unless a test is clearly wrong).")
        return f"Debug the repository {self.repo_name}."

    @property
    def tokens(self) -> tuple[int, int]:
        return (sum(s.prompt_tokens for s in self.steps), sum(s.completion_tokens for s in self.steps))

    @property
    def cost(self) -> float | None:
        """USD; None when any reply's price was unknown (never a false 0)."""
        total = 0.0
        for step in self.steps:
            if step.cost is None:
                return None
            total += step.cost
        return total

    @property
    def interrupted(self) -> bool:
        """The file ended mid-session: torn, a call under way, or the agent still at work."""
        if self.open_call or any("cut short" in w for w in self.warnings):
            return True
        return self.status is not None and self.status.state not in FINAL_STATES

    @property
    def outcome(self) -> str:
        return describe_outcome(self.status.state if self.status else None, self.tests,
                                self.tests_stale, self.interrupted)

    @property
    def submission(self) -> str:
        for step in reversed(self.steps):
            for call in step.calls:
                if call.name == "submit" and call.result is not None and call.result.executed:
                    return str((call.arguments or {}).get("message") or "")
        if self.status is not None and self.status.state == "submitted":
            return self.status.reason
        return ""

    @property
    def success(self) -> bool:
        """The tests passed at the end (a run before the last change does not count)."""
        return self.tests is not None and self.tests.ok and not self.tests_stale


def describe_outcome(state: str | None, tests: ev.Tests | None, stale: bool, interrupted: bool) -> str:
    """One short phrase: `submitted, tests pass`, `limit`, `tests fail`, `interrupted`…"""
    if interrupted:
        return "interrupted"
    words = [state] if state and state in FINAL_STATES else []
    if tests is not None and not stale:
        words.append("tests pass" if tests.ok else "tests fail")
    return ", ".join(words) or "-"


def tell(recording, actor: str = ev.AGENT, turn: int | None = None) -> Story:
    """The story of a SessionFile (dgym_tui.core.session_file.read_session), as one agent lived
    it: the agent's (default), or the seeker's (actor "agent:seeker"), whose every question is a
    conversation of its own: `turn` picks one (0-based; None: the last). The other role's turns
    are left out; what the person and the program did is in both."""
    story = Story(header=recording.header, path=getattr(recording, "path", ""),
                  warnings=list(recording.warnings))
    _Reader(story).read(_as_lived_by(recording.events, actor, turn))
    return story


def turns(recording, actor: str = ev.SEEKER) -> int:
    """How many conversations `actor` began in the session (the seeker: one per question)."""
    return sum(1 for e in recording.events if e.kind == "agent_started" and e.actor == actor)


def _as_lived_by(events, actor: str, turn: int | None):
    other = ev.SEEKER if actor == ev.AGENT else ev.AGENT
    starts = -1
    chosen = turn if turn is not None else None
    if actor != ev.AGENT and chosen is None:
        chosen = max(0, sum(1 for e in events if e.kind == "agent_started" and e.actor == actor) - 1)
    for event in events:
        if event.actor == other:
            continue
        if event.actor == actor and actor != ev.AGENT:
            if event.kind == "agent_started":
                starts += 1
            if starts != chosen:
                continue
        yield event


class _Reader:
    """One pass over the events, in order."""

    def __init__(self, story: Story):
        self.story = story
        self.calls: dict[str, Call] = {}
        self.request: tuple[int, list[dict]] | None = None   # (step, prompt) of the query under way
        self.pdb: PersonAction | None = None                 # the person's pdb command being answered
        self.human_tools: dict[int, PersonAction] = {}       # the person's tool runs under way, by call id
        self.open_calls: set[int] = set()
        self.line: list[tuple[str, str]] = []                # (id, patch) of the checkpoints in force
        self.carried: list[str] = []                         # patches a new sandbox announces again
        self.changed = False                                 # the code changed once at least
        self.trimmed: set[int] = set()                       # messages the agent sends cut short

    def read(self, events) -> None:
        story = self.story
        for event in events:
            if not story.started:
                story.started = event.ts
            story.ended = event.ts
            handler = getattr(self, "_" + event.kind, None)
            if handler is not None:
                handler(event, event.data)
        story.open_call = bool(self.open_calls)

    # --- calls: who was doing what ------------------------------------------------------------

    def _call_started(self, event, d: ev.CallStarted) -> None:
        self.open_calls.add(d.id)
        if d.lane == "act":
            self.pdb = None  # what a later call prints is not that command's output
        if event.actor == HUMAN and d.name == "run_tool":
            args = d.args.get("args") if isinstance(d.args.get("args"), dict) else {}
            action = PersonAction(seq=event.seq, kind="tool", tool=str(d.args.get("name") or ""),
                                  arguments=dict(args), ts=event.ts)
            self.human_tools[d.id] = action
            self._add(action)

    def _call_finished(self, event, d: ev.CallFinished) -> None:
        self.open_calls.discard(d.id)
        if d.lane == "act":
            self.pdb = None
        self.human_tools.pop(d.id, None)

    # --- the person's own actions -------------------------------------------------------------

    def _pdb_input(self, event, d: ev.PdbInput) -> None:
        self.pdb = None
        if event.actor == HUMAN and not self.human_tools:
            self.pdb = PersonAction(seq=event.seq, kind="pdb", tool="pdb", arguments={"command": d.command},
                                    ts=event.ts)
            self._add(self.pdb)

    def _pdb_output(self, event, d: ev.PdbOutput) -> None:
        if self.pdb is not None and event.actor == HUMAN:
            self.pdb.output += d.text

    def _stop(self, event, d: ev.Stop) -> None:
        if not self.changed and self.story.first_exception is None and d.exception is not None:
            self.story.first_exception = d
        if self.pdb is not None and event.actor == HUMAN:
            self.pdb.stop = d

    def _program_exit(self, event, d: ev.ProgramExit) -> None:
        if self.pdb is not None and event.actor == HUMAN:
            self.pdb.output += f"\n{d.message}\n"

    def _tool_result(self, event, d: ev.ToolResult) -> None:
        if event.actor == HUMAN and self.human_tools:
            action = list(self.human_tools.values())[-1]
            if action.tool == d.tool and not action.output:
                action.output = d.observation
                return
        call = self.calls.get(d.call_id)
        if call is not None and call.result is None:
            call.result = d

    def _tests(self, event, d: ev.Tests) -> None:
        self.story.tests, self.story.tests_stale = d, False
        if not self.changed and self.story.first_tests is None:
            self.story.first_tests = d
        if event.actor == HUMAN and not self.human_tools:
            self._add(PersonAction(seq=event.seq, kind="tests", tool="eval", tests=d, ts=event.ts))

    def _hint(self, event, d: ev.Hint) -> None:
        self._add(PersonAction(seq=event.seq, kind="hint", output=d.text, ts=event.ts))

    # --- the code: checkpoints and undos ---------------------------------------------------------

    def _sandbox_ready(self, event, d: ev.SandboxReady) -> None:
        self.carried, self.line = [patch for _, patch in self.line], []  # announced again next

    def _checkpoint(self, event, d: ev.Checkpoint) -> None:
        self.line.append((d.id, d.patch))
        if self.carried and self.carried[0] == d.patch:
            self.carried.pop(0)
            return  # the same change carried into a new sandbox, not a new one
        self.carried = []
        self.story.tests_stale = self.changed = True
        if event.actor == HUMAN and not self.human_tools:
            self._add(PersonAction(seq=event.seq, kind="change", output=d.message, patch=d.patch, ts=event.ts))

    def _restored(self, event, d: ev.Restored) -> None:
        self.line = [(i, patch) for i, patch in self.line if i not in d.undone]
        self.story.tests_stale = True
        if event.actor == HUMAN:
            self._add(PersonAction(seq=event.seq, kind="undo", output=d.message, ts=event.ts))

    # --- the agent ----------------------------------------------------------------------------

    def _agent_started(self, event, d: ev.AgentStarted) -> None:
        self.story.agent = d
        self.trimmed = set()  # a new agent (or one taking up a conversation) trims afresh

    def _resumed(self, event, d) -> None:
        """The session was taken up again: the calls under way when it stopped never finish,
        and an agent that was at work is stopped (as DebugState has it)."""
        self.open_calls.clear()
        self.human_tools.clear()
        self.pdb = self.request = None
        status = self.story.status
        if status is not None and status.state not in FINAL_STATES:
            self.story.status = dataclasses.replace(status, state="stopped", reason="the session was resumed")

    def _agent_status(self, event, d: ev.AgentStatus) -> None:
        self.story.status = d

    def _agent_message(self, event, d: ev.AgentMessage) -> None:
        story = self.story
        del story.messages[d.index:], story.origins[d.index:], story.message_seqs[d.index:], story.message_ts[d.index:]
        self.trimmed = {i for i in self.trimmed if i < d.index}
        story.messages.append(d.message)
        story.origins.append(d.origin)
        story.message_seqs.append(event.seq)
        story.message_ts.append(event.ts)

    def _model_request(self, event, d: ev.ModelRequest) -> None:
        from dgym_tui.agent.history import TRIMMED

        self.trimmed.update(d.trimmed)
        prompt = list(self.story.messages[:d.upto])
        for i in self.trimmed:
            if i < len(prompt):
                prompt[i] = {**prompt[i], "content": TRIMMED}
        self.request = (d.step, prompt)

    def _model_reply(self, event, d: ev.ModelReplied) -> None:
        calls = [Call(id=str(c.get("id") or ""), name=str(c.get("name") or ""),
                      arguments=c.get("arguments") if isinstance(c.get("arguments"), dict) else None,
                      error=c.get("error")) for c in d.tool_calls]
        for call in calls:
            self.calls[call.id] = call
        prompt = self.request[1] if self.request is not None and self.request[0] == d.step else []
        messages = self.story.messages
        message = messages[d.message_index] if 0 <= d.message_index < len(messages) else None
        self._add(Step(seq=event.seq, number=d.step, text=d.text, calls=calls, prompt_tokens=d.prompt_tokens,
                       completion_tokens=d.completion_tokens, cost=d.cost, prompt=prompt, message=message,
                       ts=event.ts))
        self.request = None

    def _tool_call(self, event, d: ev.ToolRequested) -> None:
        call = self.calls.get(d.call_id)
        if call is None and event.actor.startswith(ev.AGENT + ":"):
            # an outside agent over MCP: no model reply of ours, each call is a step of its own
            call = self.calls[d.call_id] = Call(id=d.call_id, name=d.tool, arguments=dict(d.args or {}))
            steps = sum(1 for e in self.story.entries if isinstance(e, Step))
            self._add(Step(seq=event.seq, number=steps + 1, text=f"({event.actor})", calls=[call], prompt_tokens=0,
                           completion_tokens=0, cost=None, prompt=[], message=None, ts=event.ts))
        if call is not None:
            call.verdict, call.rule = d.verdict, d.rule

    def _decision(self, event, d: ev.Decision) -> None:
        call = self.calls.get(d.call_id)
        if call is not None:
            call.decisions.append(Decided(d.verdict, d.comment, event.actor, d.args))

    def _add(self, entry) -> None:
        self.story.entries.append(entry)

