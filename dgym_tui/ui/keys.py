"""Escape then a key, typed quickly, stays two keys.

Without the kitty keyboard protocol a terminal sends Alt+Q as the bytes ESC q. So Textual's
input parser (textual/_xterm_parser.py) reads an ESC followed within ESCDELAY (0.1 s) by q as
one key, alt+q. Nothing binds alt+q: both keys the person typed were lost (Escape then q to
quit, and the app stayed open). An alt+<key> that nothing on the screen binds is split back into
escape, then the key; the key waits until escape has taken effect, because escape may move the
focus (out of the console, where q would be typed in, to where q quits). Keys that arrive
meanwhile wait behind it, in order.
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
    """Use as the App's base: an unbound alt+<key> is escape, then the key."""

    ESCAPE_SETTLE = 0.25  # s: the key goes on anyway if a widget keeps the escape to itself

    _held_keys: list[events.Key] | None = None  # keys waiting for a split escape to take effect
    _split_escape: events.Key | None = None

    async def on_event(self, event: events.Event) -> None:
        if not isinstance(event, events.Key):
            await super().on_event(event)
        elif event is self._split_escape:
            # Back from the focused widget and its parents: the App runs its binding now, and
            # whatever that asks for later (a focus change) is queued before the held keys.
            await super().on_event(event)
            self._release_held_keys(event)
        elif event.is_forwarded:
            await super().on_event(event)
        elif self._held_keys is not None:
            self._held_keys.append(event)
        elif (key := self._split(event)) is not None:
            self._held_keys, self._split_escape = [key], events.Key("escape", ESCAPE)
            escape = self._split_escape
            await super().on_event(escape)
            if not escape.is_forwarded:  # the App kept it (a priority binding, a maximized pane)
                self._release_held_keys(escape)
            else:
                self.set_timer(self.ESCAPE_SETTLE, lambda: self._release_held_keys(escape))
        else:
            await super().on_event(event)

    def _split(self, event: events.Key) -> events.Key | None:
        """The key that followed escape, if `event` is an alt+<key> that nothing binds."""
        key, character = plain_key(event.key), event.character
        if key is None or character is None or len(character) != 1:
            return None
        return None if event.key in self.screen.active_bindings else events.Key(key, character)

    def _release_held_keys(self, escape: events.Key) -> None:
        if escape is not self._split_escape:
            return  # already released
        held, self._held_keys, self._split_escape = self._held_keys or [], None, None
        for key in held:
            self.post_message(key)
