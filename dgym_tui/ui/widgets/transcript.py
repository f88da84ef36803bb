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
from dgym_tui.ui.messages import actor_style

BADGES = {"human": "human", "agent": "agent", "system": "sys  "}
FOLD_LINES = 4      # outputs longer than this fold
MAX_ENTRIES = 2000  # oldest entries drop off (the session file keeps everything)


def _where(data: dict) -> str:
    return f"{data.get('file', '?')}:{data.get('line', '?')}"


def _bp_key(bp: dict) -> tuple:
    return (bp.get("file"), bp.get("line"))


def _bp_label(bp: dict) -> str:
    cond = f" if {bp['cond']}" if bp.get("cond") else ""
    temp = " (temporary)" if bp.get("temporary") else ""
    return f"{bp.get('file')}:{bp.get('line')}{cond}{temp}"


class Transcript(VerticalScroll, can_focus=True):
    DEFAULT_CSS = """
    Transcript > .entry { height: auto; padding: 0 0; }
    Transcript > .-error { color: $error; }
    Transcript > .-stop { color: $accent; }
    Transcript > .-output, Transcript Collapsible .-output { color: $text-muted; }
    Transcript Collapsible { border: none; padding: 0; margin: 0; background: transparent; }
    Transcript Collapsible > Contents { padding: 0 0 0 2; }
    """

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self._breakpoints: dict[tuple, dict] = {}
        self._following = True

    def watch_virtual_size(self) -> None:
        # The new entry's height is known only once it is laid out, when this fires: that is
        # when to scroll, or the view would stop one entry short of the end.
        if self._following:
            self.scroll_end(animate=False, immediate=True)

    def add_event(self, event: ev.Event) -> None:
        self.add_events([event])

    def add_events(self, events: list[ev.Event]) -> None:
        """Append entries for these events in one mount: one layout pass for a whole command."""
        entries = [entry for entry in map(self.render_event, events) if entry is not None]
        if not entries:
            return
        self._following = self.scroll_y >= self.max_scroll_y - 1
        self.mount(*entries)
        extra = len(self.children) - MAX_ENTRIES
        if extra > 0:
            self.remove_children(list(self.children)[:extra])

    def _line(self, actor: str, template: str, kind: str, **values) -> Static:
        badge = Content.from_markup(f"[{actor_style(actor)}]$badge[/]", badge=BADGES.get(actor, actor[:5]))
        body = Content.from_markup(template, **values)
        return Static(Content.assemble(badge, " ", body), classes=f"entry -{kind}")

    def _output(self, actor: str, title: str, text: str, kind: str = "output") -> Static | Collapsible:
        lines = text.rstrip("\n").split("\n")
        if len(lines) <= FOLD_LINES:
            return self._line(actor, "$text", kind, text="\n      ".join(lines))
        body = Static(Content("\n".join(lines)), classes=f"-{kind}")
        label = f"{BADGES.get(actor, actor[:5])} {title} ({len(lines)} lines)"
        return Collapsible(body, title=label, collapsed=True, classes=f"entry -{kind}")

    def render_event(self, event: ev.Event):
        d, actor, kind = event.data, event.actor, event.kind
        if kind == ev.PROGRESS:
            return self._line(actor, "[dim]$m[/]", "progress", m=d.get("message", ""))
        if kind == ev.SANDBOX_READY:
            note = " [b $error]NOT ISOLATED[/]" if not d.get("isolated") else ""
            where = d.get("description", "") if d.get("kind") == "docker" else d.get("kind", "")
            entry = self._line(actor, "sandbox ready: $w" + note, "ready", w=where)
            if d.get("warning"):
                self.mount(entry)
                return self._line(actor, "[$warning]$m[/]", "warning", m=d["warning"])
            return entry
        if kind == ev.PROGRAM_START:
            verb = "restarted" if d.get("restart") else "started"
            reason = f" ({d['reason']})" if d.get("reason") else ""
            return self._line(actor, "▶ $v $e$r", "start", v=verb, e=d.get("entrypoint", ""), r=reason)
        if kind == ev.PDB_INPUT:
            return self._line(actor, "[b](Pdb) $c[/]", "input", c=d.get("command", ""))
        if kind == ev.PDB_OUTPUT:
            text = d.get("text", "")
            if not text.strip():
                return None
            first = text.strip().split("\n", 1)[0]
            return self._output(actor, first[:60], text)
        if kind == ev.STOP:
            exc = d.get("exception")
            extra = f" — {exc.get('type')}: {exc.get('message')}" if exc else ""
            return self._line(actor, "→ stopped at [b]$w[/] in $f [dim]($r)[/]$x", "stop",
                              w=_where(d), f=d.get("function", "?"), r=d.get("reason", ""), x=extra)
        if kind == ev.BREAKPOINTS:
            return self._breakpoints_entry(actor, d.get("breakpoints", []))
        if kind == ev.PROGRAM_EXIT:
            return self._line(actor, "■ $m", "exit", m=d.get("message") or f"exited with code {d.get('code')}")
        if kind == ev.INTERRUPTED:
            return self._line(actor, "[$warning]⚡ $m[/]", "interrupted", m=d.get("message", ""))
        if kind == ev.ERROR:
            return self._line(actor, "✖ $m", "error", m=d.get("message", ""))
        if kind == ev.CHECKPOINT:
            return self._line(actor, "✓ checkpoint $i $m", "checkpoint", i=str(d.get("id", ""))[:8],
                              m=d.get("message", ""))
        if kind == ev.TESTS:
            return self._tests_entry(actor, d)
        # kinds added later (agent thoughts, tool calls, patches) still show, generically
        summary = ", ".join(f"{k}={v}" for k, v in d.items())[:200]
        return self._line(actor, "$k $s", "other", k=kind, s=summary)

    def _breakpoints_entry(self, actor: str, items: list[dict]):
        new = {_bp_key(bp): bp for bp in items}
        added = [new[k] for k in new if k not in self._breakpoints or new[k].get("cond") != self._breakpoints[k].get("cond")]
        removed = [self._breakpoints[k] for k in self._breakpoints if k not in new]
        self._breakpoints = new
        parts = [f"+ {_bp_label(bp)}" for bp in added] + [f"− {_bp_label(bp)}" for bp in removed]
        if not parts:
            return None  # hit counts changed, nothing a person needs to read
        return self._line(actor, "● breakpoints: $p", "breakpoints", p=", ".join(parts))

    def _tests_entry(self, actor: str, d: dict):
        ok = not d.get("failed") and not d.get("errors")
        color = "$success" if ok else "$error"
        summary = f"{d.get('passed', 0)} passed, {d.get('failed', 0)} failed, {d.get('errors', 0)} errors"
        failing = d.get("failing") or []
        if not failing:
            return self._line(actor, f"[{color}]tests: $s[/]", "tests", s=summary)
        body = Static(Content("\n".join(failing)), classes="-output")
        return Collapsible(body, title=f"{BADGES.get(actor, actor[:5])} tests: {summary}", collapsed=len(failing) > FOLD_LINES,
                           classes="entry -tests")
