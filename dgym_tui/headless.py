"""Sessions as text, with no UI: `Progress` prints one line per agent step (`dgym-tui run`),
`print_transcript` a recorded session (`dgym-tui replay --headless`). Everything printed comes
from the sandbox or the model, so it goes through safe_text first.
"""

from __future__ import annotations

import sys

from dgym_tui.core import events as ev
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

    def __call__(self, event: ev.Event) -> None:
        d = event.data
        if isinstance(d, ev.ModelRequest):
            self._flush()
            self.step = d.step
        elif isinstance(d, ev.ModelReplied):
            self.tokens += d.prompt_tokens + d.completion_tokens
            self.cost = None if self.cost is None or d.cost is None else self.cost + d.cost
            self.calls = [f"{c['name']}({_short_args(c.get('arguments'))})" for c in d.tool_calls] or ["(no tool call)"]
        elif isinstance(d, ev.ToolResult) and event.actor == ev.AGENT:
            self.results.append(d.headline[:70])
        elif isinstance(d, ev.Decision):
            self.results.append(f"[{d.verdict}{': ' + d.comment if d.comment else ''}]")
        elif isinstance(d, ev.AgentStatus) and d.state in ("limit", "error", "submitted", "stopped"):
            self._flush()
            line = f"agent {d.state}: {d.reason}" if d.reason else f"agent {d.state}"
            if line != self.last_status:  # the final status repeats the one that stopped it
                self._print(line)
            self.last_status = line
        elif isinstance(d, ev.Error):
            self._print(f"error: {d.message}")
        elif isinstance(d, ev.ToolFormat):  # said after this step's line, which is not complete yet
            self.notes.append(f"tool calls as {d.format} from now on: {d.reason}")
        elif isinstance(d, ev.ToolsUnlocked):
            self.notes.append(f"tools given to the agent: {', '.join(d.tools)} (after {d.edits} edits)")

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
    if not isinstance(args, dict):
        return "…"
    text = ", ".join(f"{k}={v!r}" for k, v in args.items() if k != "new_code")
    if "new_code" in args:
        text += (", " if text else "") + f"new_code=<{len(str(args['new_code']).splitlines())} lines>"
    return text if len(text) <= 80 else text[:79] + "…"


def describe(event: ev.Event) -> str | None:
    """One line for a meaningful event (replay --headless), or None for bookkeeping."""
    d, who = event.data, event.actor
    if isinstance(d, ev.PdbInput):
        return f"{who}> {d.command}"
    if isinstance(d, ev.PdbOutput):
        return "\n".join("    " + line for line in d.text.rstrip("\n").splitlines()[:20])
    if isinstance(d, ev.Stop):
        exc = f" — {d.exception.type}: {d.exception.message}" if d.exception else ""
        return f"  → stopped at {d.where} in {d.function} ({d.reason}){exc}"
    if isinstance(d, ev.Breakpoints):
        return f"  ● breakpoints: {', '.join(bp.label() for bp in d.breakpoints) or 'none'}"
    if isinstance(d, ev.ProgramStart):
        return f"  ▶ {'restarted' if d.restart else 'started'} {d.entrypoint}" + (f" ({d.reason})" if d.reason else "")
    if isinstance(d, ev.ProgramExit):
        return f"  ■ {d.message}"
    if isinstance(d, ev.SandboxReady):
        return f"sandbox: {d.description}" + ("" if d.isolated or "NOT" in d.description else " (NOT isolated)")
    if isinstance(d, ev.AgentStarted):
        return f"agent: {d.model}, {d.mode} mode" + (" (scripted, not an LLM)" if d.scripted else "")
    if isinstance(d, ev.ModelReplied):
        cost = "?" if d.cost is None else f"${d.cost:.4f}"
        text = f"agent [step {d.step}, {d.prompt_tokens + d.completion_tokens:,} tokens, {cost}]"
        return text + (f": {d.text.strip()}" if d.text.strip() else "")
    if isinstance(d, ev.ToolRequested):
        return f"{who} → {d.tool}({_short_args(d.args)})" + ("" if d.verdict == "run" else f"  [{d.verdict}: {d.rule}]")
    if isinstance(d, ev.Decision):
        return f"{who} {d.verdict}" + (f": {d.comment}" if d.comment else "")
    if isinstance(d, ev.ToolResult):
        lines = d.observation.rstrip().splitlines()
        shown = "\n".join("    " + line for line in lines[:12])
        return shown + (f"\n    [... {len(lines) - 12} more lines]" if len(lines) > 12 else "")
    if isinstance(d, ev.Checkpoint):
        return f"  ✚ change: {d.message}"
    if isinstance(d, ev.Restored):
        return f"  ↶ {d.message}"
    if isinstance(d, ev.Tests):
        return f"  tests: {d.summary()}"
    if isinstance(d, ev.Resumed):
        return f"↻ {'taken over' if d.take_over else 'resumed'} from event {d.upto}: a new sandbox"
    if isinstance(d, ev.Hint):
        return f"{who} hint: {d.text}"
    if isinstance(d, ev.ToolFormat):
        return f"  ⇄ tool calls as {d.format} from now on: {d.reason}"
    if isinstance(d, ev.ToolsUnlocked):
        return f"  ⊕ tools given to the agent: {', '.join(d.tools)} (after {d.edits} edits)"
    if isinstance(d, ev.AgentStatus) and d.state in ("submitted", "limit", "error", "stopped"):
        return f"agent {d.state}" + (f": {d.reason}" if d.reason else "")
    if isinstance(d, (ev.Error, ev.Notice, ev.Interrupted)):
        return f"  ! {d.message}"
    return None


def print_transcript(recording, out=None) -> None:
    out = out or sys.stdout
    header = recording.header
    print(one_line(f"session of {header.get('repo')} — {header.get('model') or 'no agent'}, "
                   f"{header.get('mode') or 'manual'}"), file=out)
    for warning in recording.warnings:
        print(f"warning: {warning}", file=out)
    for event in recording.events:
        line = describe(event)
        if line:
            print(visible(line), file=out)
