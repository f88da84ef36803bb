"""Everything that happened, in order, one compact entry per event with an actor badge.

Long outputs fold into a Collapsible. The view follows the newest entry while it is scrolled to
the end; once the person scrolls up it stays put, and scrolling back to the end follows again.
(Textual's anchor() would bottom-align a short transcript, so this is done by hand.)
"""

from __future__ import annotations

from textual.containers import VerticalScroll
from textual.content import Content
from textual.widgets import Collapsible, Static

from dgym_tui.core import events as ev
from dgym_tui.core.safe_text import visible
from dgym_tui.ui.messages import actor_style

BADGES = {"human": "human", "agent": "agent", "system": "sys  "}
FOLD_LINES = 4      # outputs longer than this fold
MAX_ENTRIES = 2000  # oldest entries drop off (the session file keeps everything)
QUIET_KINDS = {ev.CallStarted.kind, ev.CallFinished.kind, ev.FileContent.kind, ev.Changes.kind,
               ev.SessionStarted.kind, ev.AgentMessage.kind, ev.ModelRequest.kind}  # bookkeeping
AGENT_STATES = {"limit", "error", "submitted", "stopped", "paused"}  # status changes worth a line


class Transcript(VerticalScroll, can_focus=True):
    DEFAULT_CSS = """
    Transcript > .entry { height: auto; padding: 0 0; }
    Transcript > .-error { color: $error; }
    Transcript > .-stop { color: $accent; }
    Transcript > .-reply { color: $text; }
    Transcript > .-tool, Transcript > .-decision { color: $secondary; }
    Transcript > .-output, Transcript Collapsible .-output { color: $text-muted; }
    Transcript Collapsible { border: none; padding: 0; margin: 0; background: transparent; }
    Transcript Collapsible > Contents { padding: 0 0 0 2; }
    """

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self._breakpoints: dict[tuple, ev.Breakpoint] = {}
        self._streaming: Static | None = None  # the agent's reply as it streams in
        self._streamed = ""
        self._following = True

    def watch_virtual_size(self) -> None:
        # The new entry's height is known only once it is laid out, when this fires: that is
        # when to scroll, or the view would stop one entry short of the end.
        if self._following:
            self.scroll_end(animate=False, immediate=True)

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        # Only the person's scrolling changes whether the view follows: up stops it, back at
        # the end starts it again. (A pane made shorter by the layout keeps following.)
        if new_value >= self.max_scroll_y - 1:
            self._following = True
        elif new_value < old_value - 0.5:
            self._following = False

    def on_resize(self) -> None:
        if self._following:
            self.scroll_end(animate=False, immediate=True)

    def reset(self) -> None:
        self.remove_children()
        self._breakpoints, self._streaming, self._streamed, self._following = {}, None, "", True

    def add_events(self, events: list[ev.Event]) -> None:
        """Append entries for these events in one mount: one layout pass for a whole command."""
        entries = [entry for entry in map(self.render_event, events) if entry is not None]
        if not entries:
            return
        self.mount(*entries)
        extra = len(self.children) - MAX_ENTRIES
        if extra > 0:
            self.remove_children(list(self.children)[:extra])

    def _line(self, actor: str, template: str, kind: str, **values) -> Static:
        """One entry: the actor's badge, then the template filled with values (made visible)."""
        return Static(self._content(actor, template, **values), classes=f"entry -{kind}")

    @staticmethod
    def _content(actor: str, template: str, **values) -> Content:
        badge = Content.from_markup(f"[{actor_style(actor)}]$badge[/]", badge=BADGES.get(actor, actor[:5]))
        body = Content.from_markup(template, **{k: visible(str(v)) for k, v in values.items()})
        return Content.assemble(badge, " ", body)

    def _output(self, actor: str, title: str, text: str, kind: str = "output") -> Static | Collapsible:
        lines = visible(text).rstrip("\n").split("\n")
        if len(lines) <= FOLD_LINES:
            return self._line(actor, "$text", kind, text="\n      ".join(lines))
        body = Static(Content("\n".join(lines)), classes=f"-{kind}")
        label = f"{BADGES.get(actor, actor[:5])} {visible(title)} ({len(lines)} lines)"
        return Collapsible(body, title=Content(label), collapsed=True, classes=f"entry -{kind}")

    def render_event(self, event: ev.Event):
        d, actor, kind = event.data, event.actor, event.kind
        if kind in QUIET_KINDS:
            return None
        if isinstance(d, ev.Progress):
            return self._line(actor, "[dim]$m[/]", "progress", m=d.message)
        if isinstance(d, ev.SandboxReady):
            note = " [b $error]NOT ISOLATED[/]" if not d.isolated else ""
            where = d.description if d.backend == "docker" else d.backend
            entry = self._line(actor, "sandbox ready: $w" + note, "ready", w=where)
            extra = []
            if d.warning:
                extra.append(self._line(actor, "[$warning]$m[/]", "warning", m=d.warning))
            if d.skipped:
                extra.append(self._output(actor, f"left out of the copy: {len(d.skipped)}",
                                          "left out of the copy: " + "\n".join(d.skipped), "warning"))
            if extra:
                self.mount(entry, *extra[:-1])
                return extra[-1]
            return entry
        if isinstance(d, ev.ProgramStart):
            verb = "restarted" if d.restart else "started"
            reason = f" ({d.reason})" if d.reason else ""
            return self._line(actor, "▶ $v $e$r", "start", v=verb, e=d.entrypoint, r=reason)
        if isinstance(d, ev.PdbInput):
            return self._line(actor, "[b](Pdb) $c[/]", "input", c=d.command)
        if isinstance(d, ev.PdbOutput):
            if not d.text.strip():
                return None
            first = d.text.strip().split("\n", 1)[0]
            return self._output(actor, first[:60], d.text)
        if isinstance(d, ev.Stop):
            extra = f" — {d.exception.type}: {d.exception.message}" if d.exception else ""
            return self._line(actor, "→ stopped at [b]$w[/] in $f [dim]($r)[/]$x", "stop",
                              w=d.where, f=d.function or "?", r=d.reason, x=extra)
        if isinstance(d, ev.Breakpoints):
            return self._breakpoints_entry(actor, d.breakpoints)
        if isinstance(d, ev.ProgramExit):
            return self._line(actor, "■ $m", "exit", m=d.message or f"exited with code {d.code}")
        if isinstance(d, ev.Interrupted):
            return self._line(actor, "[$warning]⚡ $m[/]", "interrupted", m=d.message)
        if isinstance(d, ev.Notice):
            return self._line(actor, "[$warning]! $m[/]", "notice", m=d.message)
        if isinstance(d, ev.Error):
            return self._line(actor, "✖ $m", "error", m=d.message)
        if isinstance(d, ev.Checkpoint):
            return self._line(actor, "✓ checkpoint $i $m", "checkpoint", i=d.id[:8], m=d.message)
        if isinstance(d, ev.Tests):
            return self._tests_entry(actor, d)
        entry = self._agent_entry(d, actor)
        if entry is not False:
            return entry
        # kinds added later still show, generically
        summary = ", ".join(f"{k}={v}" for k, v in d.to_dict().items())[:200]
        return self._line(actor, "$k $s", "other", k=kind, s=summary)

    def _agent_entry(self, d, actor: str):
        """The agent's events; False for a kind that is not the agent's."""
        if isinstance(d, ev.AgentStarted):
            scripted = " [b $warning](scripted, not an LLM)[/]" if d.scripted else ""
            return self._line(actor, "🤖 agent started: $m, $o mode" + scripted, "agent", m=d.model, o=d.mode)
        if isinstance(d, ev.ModelDelta):
            self._streamed += d.text
            if self._streaming is None:
                self._streaming = self._line(actor, "$t", "reply", t=self._streamed)
                return self._streaming
            self._streaming.update(self._content(actor, "$t", t=self._streamed))
            return None
        if isinstance(d, ev.ModelReplied):
            streaming, self._streaming, self._streamed = self._streaming, None, ""
            cost = "?" if d.cost is None else f"${d.cost:.4f}"
            usage = f"  [dim](step {d.step}: {d.prompt_tokens:,}+{d.completion_tokens:,} tokens, {cost})[/]"
            text = d.text.strip()
            if streaming is not None:
                streaming.update(self._content(actor, "$t" + usage, t=text))
                return None
            return self._line(actor, ("$t" if text else "[dim](no text)[/]") + usage, "reply", t=text)
        if isinstance(d, ev.ToolRequested):
            args = ", ".join(f"{k}={v!r}" for k, v in d.args.items() if k != "new_code")
            if "new_code" in d.args:
                args += f", new_code=<{len(str(d.args['new_code']).splitlines())} lines>"
            note = {"run": "", "ask": " [$warning]· waits for you[/]", "deny": " [$error]· denied[/]",
                    "invalid": " [$error]· invalid[/]"}.get(d.verdict, "")
            return self._line(actor, "→ [b]$n[/]($a) [dim]$r[/]" + note, "tool", n=d.tool, a=args, r=d.rule)
        if isinstance(d, ev.ApprovalRequested):
            return None  # the agent pane shows it; the decision gets a line
        if isinstance(d, ev.Decision):
            words = {"approve": "approved", "always": f"approved, and always allowed: {d.rule}", "edit": "edited, then ran",
                     "reject": "rejected", "try": "tried (applied, tests run; decision still open)",
                     "skip": "not run (agent stopped)"}.get(d.verdict, d.verdict)
            comment = f": “{d.comment}”" if d.comment and d.verdict == "reject" else ""
            return self._line(actor, "$w$c", "decision", w=words, c=comment)
        if isinstance(d, ev.ToolResult):
            title = f"{d.tool}: {d.headline}"
            return self._output(actor, title[:70], d.observation, "observation" if d.ok else "error")
        if isinstance(d, ev.AgentStatus):
            if d.state not in AGENT_STATES:
                return None
            return self._line(actor, "[$warning]agent $s[/]$r", "agent", s=d.state, r=f": {d.reason}" if d.reason else "")
        if isinstance(d, ev.Hint):
            return self._line(actor, "💬 hint for the agent: $t", "hint", t=d.text)
        if isinstance(d, ev.ToolFormat):
            return self._line(actor, "[$warning]⇄ tool calls as $f from now on[/]: $r", "agent", f=d.format, r=d.reason)
        if isinstance(d, ev.ToolsUnlocked):
            return self._line(actor, "[$warning]⊕ tools given to the agent[/]: $t (after $n edits)", "agent",
                              t=", ".join(d.tools), n=str(d.edits))
        if isinstance(d, ev.ModelRetry):
            return self._line(actor, "[dim]model: retrying in $w s ($r)[/]", "retry", w=f"{d.wait_s:.0f}", r=d.reason)
        if isinstance(d, ev.Restored):
            return self._line(actor, "↶ $m", "checkpoint", m=d.message or f"back to {d.to[:8]}")
        if isinstance(d, ev.Resumed):
            how = "taken over" if d.take_over else "resumed"
            changed = f" — changed in the repo since: {', '.join(d.changed[:5])}" if d.changed else ""
            return self._line(actor, "[b]↻ $h[/] from event $u of $s: a new sandbox$c", "resumed", h=how,
                              u=str(d.upto), s=d.source.rsplit("/", 1)[-1], c=changed)
        return False

    def _breakpoints_entry(self, actor: str, items: list[ev.Breakpoint]):
        new = {bp.key: bp for bp in items}
        added = [new[k] for k in new if k not in self._breakpoints or new[k].cond != self._breakpoints[k].cond]
        removed = [self._breakpoints[k] for k in self._breakpoints if k not in new]
        self._breakpoints = new
        parts = [f"+ {bp.label()}" for bp in added] + [f"− {bp.label()}" for bp in removed]
        if not parts:
            return None  # hit counts changed, nothing a person needs to read
        return self._line(actor, "● breakpoints: $p", "breakpoints", p=", ".join(parts))

    def _tests_entry(self, actor: str, d: ev.Tests):
        color = "$success" if d.ok else "$error"
        if not d.failing:
            return self._line(actor, f"[{color}]tests: $s[/]", "tests", s=d.summary())
        body = Static(Content(visible("\n".join(d.failing))), classes="-output")
        return Collapsible(body, title=Content(f"{BADGES.get(actor, actor[:5])} tests: {d.summary()}"),
                           collapsed=len(d.failing) > FOLD_LINES, classes="entry -tests")
