"""Sessions as text, with no UI: `Progress` prints one line per agent step (`dgym-tui run`),
`print_transcript` a recorded session (`dgym-tui replay --headless`). Everything printed comes
from the sandbox or the model, so it goes through safe_text first.
"""

from __future__ import annotations

import sys

from dgym_tui.core import events as ev
from dgym_tui.core.describe import Describer, call_args
from dgym_tui.core.safe_text import one_line, visible


class _StepLine:
    """One agent's step under way: its calls and what they gave."""

    def __init__(self, prefix: str):
        self.prefix, self.step = prefix, 0
        self.calls: list[str] = []
        self.results: list[str] = []


class Progress:
    """Prints one line per agent step (a seeker's steps indented under the question they answer),
    and what ends the run."""

    def __init__(self, out=None):
        self.out = out or sys.stdout
        self.lines: dict[str, _StepLine] = {}  # by actor: the agent's, the seeker's
        self.notes: list[str] = []  # lines that follow the current step's
        self.last_status = ""
        self.tokens = 0
        self.cost: float | None = 0.0
        self.describer = Describer()

    def _line(self, actor: str) -> _StepLine:
        return self.lines.setdefault(actor, _StepLine("  seeker " if actor == ev.SEEKER else ""))

    def __call__(self, event: ev.Event) -> None:
        d, kind = event.data, event.kind
        if kind == "model_request":
            self._flush(event.actor)
            self._line(event.actor).step = d.step
        elif kind == "model_reply":
            self.tokens += d.prompt_tokens + d.completion_tokens
            self.cost = None if self.cost is None or d.cost is None else self.cost + d.cost
            self._line(event.actor).calls = ([f"{c['name']}({_short_args(c.get('arguments'))})" for c in d.tool_calls]
                                             or ["(no tool call)"])
        elif kind == "agent_started" and event.actor == ev.SEEKER:  # its turn, under the agent's question
            if self._line(ev.AGENT).calls:
                self._line(ev.AGENT).results.append("asks the seeker")
            self._flush(ev.AGENT)
        elif kind == "tool_result" and event.actor == ev.AGENT and d.tool == "debug" and d.executed:
            return  # the seeker's answer line said it
        elif kind == "tool_result" and event.actor in (ev.AGENT, ev.SEEKER):
            self._line(event.actor).results.append(d.headline[:70])
        elif kind == "seeker_answer":
            self._flush(ev.SEEKER)
            unseen = f": never saw {', '.join(d.unseen)}" if d.unseen else ""
            self._print(f"  seeker answered ({d.grounding}{unseen}; {d.steps} steps): {d.answer[:160]}")
        elif kind == "decision":
            self._line(self._acting()).results.append(f"[{d.verdict}{': ' + d.comment if d.comment else ''}]")
        elif kind == "agent_status" and d.state in ("limit", "error", "submitted", "stopped"):
            if event.actor != ev.AGENT:  # a seeker's turn ends: its answer says the rest
                return
            self._flush(event.actor)
            line = self._said(event)
            if line != self.last_status:  # the final status repeats the one that stopped it
                self._print(line)
            self.last_status = line
        elif kind == "error":
            self._print(f"error: {d.message}")
        elif kind in ("tool_format", "tools_unlocked"):  # said after this step's line, not complete yet
            self.notes.append(self._said(event))

    def _acting(self) -> str:
        seeker = self.lines.get(ev.SEEKER)
        return ev.SEEKER if seeker is not None and seeker.calls else ev.AGENT

    def _said(self, event: ev.Event) -> str:
        return " ".join(w.text for w in self.describer.describe(event))

    def _flush(self, actor: str = ev.AGENT) -> None:
        line = self._line(actor)
        notes, self.notes = self.notes, []
        if not line.calls:
            for note in notes:
                self._print(note)
            return
        cost = "?" if self.cost is None else f"${self.cost:.4f}"
        self._print(f"{line.prefix}step {line.step:>3}  {' '.join(line.calls)}  → {' | '.join(line.results)}  "
                    f"[{self.tokens:,} tokens, {cost}]")
        line.calls, line.results = [], []
        for note in notes:
            self._print(note)

    def _print(self, text: str) -> None:
        print(one_line(text), file=self.out, flush=True)


def _short_args(args) -> str:
    return call_args(args, limit=80) if isinstance(args, dict) else "…"


BODY_LINES = {"output": 20, "observation": 12, "error": 12}  # what a printed transcript shows of a body


def describe(event: ev.Event, describer: Describer | None = None) -> str | None:
    """The lines for a meaningful event (replay --headless): who, then the describer's words
    (core/describe.py); pdb's output and observations as their first lines, indented."""
    lines = []
    for w in (describer or Describer()).describe(event):
        if w.kind == "progress":
            continue
        if w.body and w.kind in BODY_LINES:
            body = w.body.rstrip("\n").splitlines()
            most = BODY_LINES[w.kind]
            lines += ["    " + line for line in body[:most]]
            if len(body) > most:
                lines.append(f"    [... {len(body) - most} more lines]")
        else:
            lines.append(f"{event.actor} {w.text}")
    return "\n".join(lines) or None


def print_transcript(recording, out=None) -> None:
    out = out or sys.stdout
    header = recording.header
    print(one_line(f"session of {header.get('repo')} — {header.get('model') or 'no agent'}, "
                   f"{header.get('mode') or 'manual'}"), file=out)
    for warning in recording.warnings:
        print(f"warning: {warning}", file=out)
    describer = Describer()
    for event in recording.events:
        line = describe(event, describer)
        if line:
            print(visible(line), file=out)
