"""Sessions as text, with no UI: `Progress` prints one line per agent step (`dgym-tui run`),
`print_transcript` a recorded session (`dgym-tui replay --headless`). Everything printed comes
from the sandbox or the model, so it goes through safe_text first.
"""

from __future__ import annotations

import sys

from dgym_tui.core import events as ev
from dgym_tui.core.describe import Describer, call_args
from dgym_tui.core.safe_text import one_line, visible


class Progress:
    """Prints one line per agent step, and what ends the run."""

    def __init__(self, out=None):
        self.out = out or sys.stdout
        self.calls: list[str] = []
        self.results: list[str] = []
        self.notes: list[str] = []  # lines that follow the current step's
        self.last_status = ""
        self.step = 0
        self.tokens = 0
        self.cost: float | None = 0.0
        self.describer = Describer()

    def __call__(self, event: ev.Event) -> None:
        d, kind = event.data, event.kind
        if kind == "model_request":
            self._flush()
            self.step = d.step
        elif kind == "model_reply":
            self.tokens += d.prompt_tokens + d.completion_tokens
            self.cost = None if self.cost is None or d.cost is None else self.cost + d.cost
            self.calls = [f"{c['name']}({_short_args(c.get('arguments'))})" for c in d.tool_calls] or ["(no tool call)"]
        elif kind == "tool_result" and event.actor == ev.AGENT:
            self.results.append(d.headline[:70])
        elif kind == "decision":
            self.results.append(f"[{d.verdict}{': ' + d.comment if d.comment else ''}]")
        elif kind == "agent_status" and d.state in ("limit", "error", "submitted", "stopped"):
            self._flush()
            line = self._said(event)
            if line != self.last_status:  # the final status repeats the one that stopped it
                self._print(line)
            self.last_status = line
        elif kind == "error":
            self._print(f"error: {d.message}")
        elif kind in ("tool_format", "tools_unlocked"):  # said after this step's line, not complete yet
            self.notes.append(self._said(event))

    def _said(self, event: ev.Event) -> str:
        return " ".join(w.text for w in self.describer.describe(event))

    def _flush(self) -> None:
        notes, self.notes = self.notes, []
        if not self.calls:
            for note in notes:
                self._print(note)
            return
        cost = "?" if self.cost is None else f"${self.cost:.4f}"
        self._print(f"step {self.step:>3}  {' '.join(self.calls)}  → {' | '.join(self.results)}  "
                    f"[{self.tokens:,} tokens, {cost}]")
        self.calls, self.results = [], []
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
