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
from dgym_tui.core.describe import Describer, Words
from dgym_tui.core.safe_text import visible
from dgym_tui.ui.messages import actor_style

BADGES = {"human": "human", "agent": "agent", "system": "sys  ", ev.SEEKER: "seekr"}
FOLD_LINES = 4      # outputs longer than this fold
MAX_ENTRIES = 2000  # oldest entries drop off (the session file keeps everything)
OUTPUTS = ("output", "observation", "error", "warning")  # words whose body is shown folded when long
STYLES = {"b": "b", "dim": "dim", "warning": "$warning", "error": "$error", "success": "$success"}


class Transcript(VerticalScroll, can_focus=True):
    ALLOW_MAXIMIZE = True  # `z` like every pane (Textual's scrolling containers say no by default)
    DEFAULT_CSS = """
    Transcript > .entry { height: auto; padding: 0 0; }
    Transcript > .-error { color: $error; }
    Transcript > .-stop { color: $accent; }
    Transcript > .-reply { color: $text; }
    Transcript > .-tool, Transcript > .-decision { color: $secondary; }
    Transcript > .-output, Transcript Collapsible .-output { color: $text-muted; }
    Transcript Collapsible { border: none; padding: 0; margin: 0; background: transparent; }
    Transcript > .-seeker { padding-left: 3; }  /* the seeker's turn, under the agent's question */
    Transcript Collapsible > Contents { padding: 0 0 0 2; }
    """

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self._describer = Describer()
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
        self._describer.reset()
        self._streaming, self._streamed, self._following = None, "", True

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
        """The entry for one event, from the describer's words (core/describe.py); an event that
        says several things mounts the first ones itself. The agent's reply streams into one
        entry, which its final words then replace."""
        d, actor = event.data, event.actor
        if isinstance(d, ev.ModelDelta):
            self._streamed += d.text
            if self._streaming is None:
                self._streaming = self._line(actor, "$t", "reply", t=self._streamed)
                if actor == ev.SEEKER:
                    self._streaming.add_class("-seeker")
                return self._streaming
            self._streaming.update(self._content(actor, "$t", t=self._streamed))
            return None
        said = self._describer.describe(event)
        if isinstance(d, ev.ModelReplied):
            streaming, self._streaming, self._streamed = self._streaming, None, ""
            if streaming is not None and said:
                streaming.update(self._words_content(actor, said[0]))
                return None
        entries = [self._entry(actor, w) for w in said]
        if actor == ev.SEEKER:
            for entry in entries:
                entry.add_class("-seeker")
        if len(entries) > 1:
            self.mount(*entries[:-1])
        return entries[-1] if entries else None

    def _entry(self, actor: str, w: Words):
        if w.kind == "tests" or w.kind == "tests-fail":
            if not w.body:
                return Static(self._words_content(actor, w), classes="entry -tests")
            body = Static(Content(visible(w.body)), classes="-output")
            return Collapsible(body, title=Content(f"{BADGES.get(actor, actor[:5])} {visible(w.text)}"),
                               collapsed=len(w.body.splitlines()) > FOLD_LINES, classes="entry -tests")
        if w.body and w.kind in OUTPUTS:
            return self._output(actor, w.text[:70], w.body, w.kind)
        return Static(self._words_content(actor, w), classes=f"entry -{w.kind}")

    @staticmethod
    def _words_content(actor: str, w: Words) -> Content:
        """The badge, then the words with their emphasis as the theme's styles."""
        template = "".join(f"[{' '.join(STYLES[e] for e in emphasis.split())}]${{p{i}}}[/]" if emphasis else f"${{p{i}}}"
                           for i, (_text, emphasis) in enumerate(w.parts))
        return Transcript._content(actor, template, **{f"p{i}": text for i, (text, _e) in enumerate(w.parts)})

