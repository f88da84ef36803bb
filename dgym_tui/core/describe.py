"""What each event says, in words: the one describer the views share (the app's transcript,
`replay --headless`, the HTML replay, the agent's notes of what the person did).

`Describer().describe(event)` gives a list of `Words` (none for bookkeeping, more than one where
an event says several things): a `kind` the views style, the headline as parts with an emphasis
each ("" plain, or space-separated styles of "b" bold, "dim", "warning", "error", "success"), and
a `body`, the long form's
detail (pdb's output, an observation, a patch, the failing tests). A describer remembers the
breakpoints it has seen, so that a change says only what changed. Nothing here knows how a view
draws: the words are plain text, made visible by the view that shows them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from dgym_tui.core import events as ev

QUIET = {ev.CallStarted.kind, ev.CallFinished.kind, ev.FileContent.kind, ev.Changes.kind, ev.SessionStarted.kind,
         ev.AgentMessage.kind, ev.ModelRequest.kind, ev.ModelDelta.kind, ev.ApprovalRequested.kind,
         ev.SandboxChosen.kind}  # bookkeeping, or shown elsewhere (the agent pane)
AGENT_STATES = {"limit", "error", "submitted", "stopped", "paused"}  # status changes worth a line
DECISIONS = {"approve": "approved", "edit": "edited, then ran", "reject": "rejected",
             "try": "tried (applied, tests run; decision still open)", "skip": "not run (agent stopped)"}
VERDICT_NOTES = {"ask": ("· waits for you", "warning"), "deny": ("· denied", "error"),
                 "invalid": ("· invalid", "error")}


@dataclass(frozen=True)
class Words:
    kind: str
    parts: tuple[tuple[str, str], ...]
    body: str = ""

    @property
    def text(self) -> str:
        """The headline as plain text."""
        return "".join(text for text, _ in self.parts)


def words(kind: str, *parts, body: str = "") -> Words:
    """Words from parts given as text (plain) or (text, emphasis)."""
    return Words(kind, tuple(p if isinstance(p, tuple) else (p, "") for p in parts if p), body)


def call_args(args: dict, limit: int | None = None) -> str:
    """A tool call's arguments in one line; an edit's code as its number of lines."""
    text = ", ".join(f"{k}={v!r}" for k, v in args.items() if k != "new_code")
    if "new_code" in args:
        text += (", " if text else "") + f"new_code=<{len(str(args['new_code']).splitlines())} lines>"
    if limit is not None and len(text) > limit:
        text = text[:limit - 1] + "…"
    return text


def first_line(text: str, limit: int = 100) -> str:
    stripped = text.strip()
    line = stripped.split("\n", 1)[0] if stripped else ""
    return line[:limit] + ("…" if len(line) > limit else "")


class Describer:
    def __init__(self):
        self._breakpoints: dict[tuple, ev.Breakpoint] = {}
        self._say: dict[str, Callable[[object], list[Words] | Words | None]] = {
            "progress": lambda d: words("progress", (d.message, "dim")),
            "sandbox_ready": self._sandbox_ready,
            "program_start": lambda d: words("start", f"▶ {'restarted' if d.restart else 'started'} {d.entrypoint}",
                                             f" ({d.reason})" if d.reason else ""),
            "pdb_input": lambda d: words("input", (f"(Pdb) {d.command}", "b")),
            "pdb_output": lambda d: words("output", d.text.strip().split("\n", 1)[0][:60], body=d.text)
            if d.text.strip() else None,
            "stop": lambda d: words("stop", "→ stopped at ", (d.where, "b"), f" in {d.function or '?'} ",
                                    (f"({d.reason})", "dim"),
                                    f" — {d.exception.type}: {d.exception.message}" if d.exception else ""),
            "breakpoints": lambda d: self._breakpoints_changed(d.breakpoints),
            "program_exit": lambda d: words("exit", f"■ {d.message or f'exited with code {d.code}'}"),
            "interrupted": lambda d: words("interrupted", (f"⚡ {d.message}", "warning")),
            "notice": lambda d: words("notice", (f"! {d.message}", "warning")),
            "error": lambda d: words("error", f"✖ {d.message}"),
            "checkpoint": lambda d: words("checkpoint", f"✓ checkpoint {d.id[:8]} {d.message}", body=d.patch),
            "restored": lambda d: words("checkpoint", f"↶ {d.message or f'back to {d.to[:8]}'}"),
            "tests": lambda d: words("tests" if d.ok else "tests-fail", (f"tests: {d.summary()}",
                                                                         "success" if d.ok else "error"),
                                     body="\n".join(d.failing)),
            "agent_started": lambda d: words("agent", f"🤖 agent started: {d.model}, {d.mode} mode",
                                             *((" ", ("(scripted, not an LLM)", "b warning")) if d.scripted else ()),
                                             body=d.task),
            "model_reply": self._reply,
            "tool_call": self._tool_call,
            "decision": self._decision,
            "tool_result": lambda d: words("observation" if d.ok else "error", f"{d.tool}: {d.headline}",
                                           body=d.observation),
            "agent_status": lambda d: words("agent", (f"agent {d.state}", "warning"),
                                            f": {d.reason}" if d.reason else "") if d.state in AGENT_STATES else None,
            "hint": lambda d: words("hint", f"💬 hint for the agent: {d.text}"),
            "tool_format": lambda d: words("agent", (f"⇄ tool calls as {d.format} from now on", "warning"),
                                           f": {d.reason}"),
            "tools_unlocked": lambda d: words("agent", ("⊕ tools given to the agent", "warning"),
                                              f": {', '.join(d.tools)} (after {d.edits} edits)"),
            "model_retry": lambda d: words("retry", (f"model: retrying in {d.wait_s:.0f} s ({d.reason})", "dim")),
            "seeker_answer": lambda d: words(
                "answer", ("🔎 " + ("the person answered" if d.by == "person" else f"seeker answered ({d.steps} steps)"), "b"),
                " — ", ({"grounded": ("grounded", "success"), "ungrounded": ("NOT grounded", "error"),
                         "unanswered": ("no answer", "warning")}.get(d.grounding, (d.grounding, "dim"))),
                f": never saw {', '.join(d.unseen)}" if d.unseen else "", body=d.answer),
            "resumed": lambda d: words("resumed", (f"↻ {'taken over' if d.take_over else 'resumed'}", "b"),
                                       f" from event {d.upto} of {d.source.rsplit('/', 1)[-1]}: a new sandbox",
                                       f" — changed in the repo since: {', '.join(d.changed[:5])}" if d.changed
                                       else ""),
        }

    def describe(self, event: ev.Event) -> list[Words]:
        if event.kind in QUIET:
            return []
        if event.actor == ev.SEEKER and event.kind in ("agent_started", "agent_status"):
            if event.kind == "agent_status":  # its turn ends with its answer, which says it all
                return []
            question = event.data.task.split("\n", 2)[1] if "\n" in event.data.task else event.data.task
            return [words("agent", ("🔎 seeker ", "b"), f"({event.data.model}) investigates: ", (question[:200], "b"),
                          body=event.data.task)]
        say = self._say.get(event.kind)
        if say is None:  # a kind added later still shows, generically
            summary = ", ".join(f"{k}={v}" for k, v in event.data.to_dict().items())[:200]
            return [words("other", f"{event.kind} {summary}")]
        said = say(event.data)
        return [] if said is None else said if isinstance(said, list) else [said]

    def reset(self) -> None:
        self._breakpoints = {}

    # --- the kinds that say more than one line ------------------------------------------------

    def _sandbox_ready(self, d: ev.SandboxReady) -> list[Words]:
        out = [words("ready", f"sandbox ready: {d.description if d.backend == 'docker' else d.backend}",
                     *(() if d.isolated else (" ", ("NOT ISOLATED", "b error"))))]
        if d.warning:
            out.append(words("warning", (d.warning, "warning")))
        if d.skipped:
            out.append(words("warning", f"left out of the copy: {len(d.skipped)}",
                             body="left out of the copy: " + "\n".join(d.skipped)))
        return out

    def _breakpoints_changed(self, items: list[ev.Breakpoint]) -> Words | None:
        new = {bp.key: bp for bp in items}
        added = [new[k] for k in new if k not in self._breakpoints or new[k].cond != self._breakpoints[k].cond]
        removed = [self._breakpoints[k] for k in self._breakpoints if k not in new]
        self._breakpoints = new
        parts = [f"+ {bp.label()}" for bp in added] + [f"− {bp.label()}" for bp in removed]
        if not parts:
            return None  # hit counts changed: nothing a person needs to read
        return words("breakpoints", f"● breakpoints: {', '.join(parts)}")

    @staticmethod
    def _reply(d: ev.ModelReplied) -> Words:
        cost = "?" if d.cost is None else f"${d.cost:.4f}"
        text = d.text.strip()
        return words("reply", text or ("(no text)", "dim"), "  ",
                     (f"(step {d.step}: {d.prompt_tokens:,}+{d.completion_tokens:,} tokens, {cost})", "dim"),
                     body=text if "\n" in text else "")

    @staticmethod
    def _tool_call(d: ev.ToolRequested) -> Words:
        note, emphasis = VERDICT_NOTES.get(d.verdict, ("", ""))
        return words("tool", "→ ", (d.tool, "b"), f"({call_args(d.args)}) ", (d.rule, "dim"),
                     *((" ", (note, emphasis)) if note else ()), body=str(d.args.get("new_code") or ""))

    @staticmethod
    def _decision(d: ev.Decision) -> Words:
        said = f"approved, and always allowed: {d.rule}" if d.verdict == "always" else DECISIONS.get(d.verdict, d.verdict)
        return words("decision", said, f": “{d.comment}”" if d.comment and d.verdict == "reject" else "")
