"""Escape then a key, typed quickly, stays two keys, in that order.

Without the kitty keyboard protocol a terminal sends Alt+Q as the bytes ESC q. So Textual's
input parser (textual/_xterm_parser.py) reads an ESC followed within ESCDELAY (0.1 s) by q as
one key, alt+q. Nothing binds alt+q: both keys the person typed were lost (Escape then q to
quit, and the app stayed open). An alt+<key> that nothing on the screen binds is split back into
escape, then the key.

Keys typed ahead wait for the key before them to take effect. A bound key's action runs when
the key comes back to the App from the focused widget and its parents, and what it asks for (a
prompt opened, the focus moved: Textual moves it later, call_later) comes after that; meanwhile
the keys the terminal sent with it in one burst (`:76⏎`, `!p x⏎`, Escape then q) were already
forwarded to the widget that had the focus, and lost there. So after an escape (split from
alt+<key> or typed alone) or any key bound where the focus is, the keys that follow are held until
it has come back (its action ran, its focus change queued before them), a widget kept it, or it
was dropped with a widget that went away. However long that takes: on a busy machine a key can
wait seconds in the focused pane's queue, and keys let go on a clock went to the old pane (a CI
run's `!b pricer.py:6⏎` reached pdb as `py:6`). Priority bindings (n s c u d) run at once in the
App: nothing waits after them. The held keys are let go one per turn of the App's queue, behind
what the action asked for, and keys that come meanwhile wait after them. (Posted to the queue
on release, they went behind a key the terminal sent a moment later, already queued: a CI run's
Enter after `!b intervals.py:6` went first, and the command was lost.)
"""

from __future__ import annotations

from textual import events
from textual.app import App

ESCAPE = "\x1b"


def plain_key(key: str) -> str | None:
    """'alt+q' -> 'q', 'alt+shift+q' -> 'Q', 'alt+question_mark' -> 'question_mark'; None for
    keys without alt or with another modifier."""
    if not key.startswith("alt+"):
        return None
    rest = key[len("alt+"):]
    if rest.startswith("shift+") and len(rest) == len("shift+") + 1:
        rest = rest[-1].upper()
    return None if "+" in rest else rest


class EscapeThenKey(App):
    """Use as the App's base: an unbound alt+<key> is escape, then the key; keys typed after an
    escape or a bound key wait for it to take effect."""

    ESCAPE_CHECK = 0.1  # s between looks at an escape that has not come back to the App yet
    ESCAPE_GIVE_UP = 60.0  # s: the held keys go on anyway, should a widget on its way hang

    _held_keys: list[events.Key] | None = None  # keys waiting for an escape to take effect
    _escape: events.Key | None = None  # that escape, on its way through the widgets
    _escape_path: tuple = ()  # the widget it was sent to, and that widget's parents up to the screen

    async def on_event(self, event: events.Event) -> None:
        if not isinstance(event, events.Key):
            await super().on_event(event)
        elif event is self._escape:
            # Back from the focused widget and its parents: the App runs its binding now, and
            # whatever that asks for later (a focus change) is queued before the held keys.
            await super().on_event(event)
            self._release_held_keys(event)
        elif event.is_forwarded:
            await super().on_event(event)
        elif self._held_keys is not None:
            self._held_keys.append(event)
        else:
            await self._take_key(event)

    async def _take_key(self, event: events.Key) -> None:
        """A key from the terminal, its turn come: an escape (or a key bound where the focus is)
        is sent on and the keys after it held; any other key goes on at once."""
        if event.key == "escape":
            await self._send_escape(event, [])
        elif (key := self._split(event)) is not None:
            await self._send_escape(events.Key("escape", ESCAPE), [key])
        elif event.key in self.screen.active_bindings:
            await self._send_escape(event, [])  # held like an escape's: its action may move the focus
        else:
            await super().on_event(event)

    async def _send_escape(self, escape: events.Key, held: list[events.Key]) -> None:
        self._held_keys, self._escape = held, escape
        target = self.focused or self.screen
        self._escape_path = tuple(node for node in target.ancestors_with_self if node is not self)
        # No sender: a key the App sent is stopped on its way into the App (Textual's rule for a
        # message reaching its sender), which would read here as a widget having kept it.
        escape.set_sender(None)
        await super().on_event(escape)
        if not escape.is_forwarded:  # the App kept it (a priority binding, a maximized pane)
            self._release_held_keys(escape)
        else:
            self._check_escape(escape, self.ESCAPE_GIVE_UP)

    def _split(self, event: events.Key) -> events.Key | None:
        """The key that followed escape, if `event` is an alt+<key> that nothing binds."""
        key, character = plain_key(event.key), event.character
        if key is None or character is None or len(character) != 1:
            return None
        return None if event.key in self.screen.active_bindings else events.Key(key, character)

    def _check_escape(self, escape: events.Key, time_left: float) -> None:
        """Release the held keys once the escape will not come back to the App: a widget kept it
        (stopped it), or a widget on its way is gone (and the escape with it). While it is still
        on its way, look again, however long a busy app takes."""
        if escape is not self._escape:
            return  # it came back: released already
        kept = getattr(escape, "_stop_propagation", False)
        dropped = any(not (node.is_attached and node.is_running) for node in self._escape_path)
        if kept or dropped or time_left <= 0:
            self._release_held_keys(escape)
        else:
            self.set_timer(self.ESCAPE_CHECK,
                           lambda: self._check_escape(escape, time_left - self.ESCAPE_CHECK))

    def _release_held_keys(self, escape: events.Key) -> None:
        if escape is not self._escape:
            return  # already released
        self._escape = None
        self.call_later(self._let_go)  # till it runs, keys that come join the held ones

    async def _let_go(self) -> None:
        """The first held key goes on, as if typed now; the others wait for their turn behind
        what it caused (a screen it opened mounts in between), with the keys that come meanwhile
        after them. If it is an escape in turn, they wait for that."""
        held, self._held_keys = self._held_keys or [], None
        if not held:
            return
        await self._take_key(held.pop(0))
        if self._held_keys is not None:
            self._held_keys.extend(held)
        elif held:
            self._held_keys = held
            self.call_later(self._let_go)
