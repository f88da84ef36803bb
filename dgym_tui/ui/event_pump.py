"""When the main screen paints what the session's events changed.

Events arrive in batches (SessionEvents). Each is folded into the screen's state at once; what
it changed ("aspects") and the events themselves wait here until the screen paints them. A new
stop's current line goes out in a frame of its own first (little for a terminal to draw), the
rest in the next frame, or, while a key is held down, once the steps pause (BURST_GAP). A batch
that only opens a command (its input) waits up to INPUT_GRACE for the command's output and stop,
to paint them at once. The pump decides when; the screen (`show_stop_now`, `paint`) decides how.
"""

from __future__ import annotations

import time

from textual.screen import UPDATE_PERIOD

from dgym_tui.core import events as ev

INPUT_GRACE = 0.05  # seconds a command's input waits to be shown with its output
# After a stop, the other panes wait PANES_WAIT: longer than a screen update (UPDATE_PERIOD), so
# the frame with the new current line goes out first, and than a key's repeat (~33 ms), so a
# key held down is seen (its next step is under way) before they are painted.
PANES_WAIT = max(UPDATE_PERIOD + 0.006, 0.045)
# While a key is held down (stops closer together than BURST_GAP, or the next step already
# under way), only the current line follows each step: painting the other panes costs more than
# the time between two steps, so they wait for a pause of PANES_WAIT_IN_BURST, PANES_MAX_WAIT at most.
BURST_GAP = 0.15
PANES_WAIT_IN_BURST = 0.1
PANES_MAX_WAIT = 0.5
OPENING_KINDS = {ev.CallStarted.kind, ev.PdbInput.kind}  # what a command emits before its output


class EventPump:
    def __init__(self, screen) -> None:
        self.screen = screen  # its state, show_stop_now(), paint(events, aspects), panes_ready, set_timer
        self.log: list[ev.Event] = []  # events folded but not yet painted
        self.aspects: set[str] = set()  # what they changed
        self.timer = None  # the flush to come
        self._grace = False  # the flush timer waits for a command's output
        self._held = False  # the running command's input was held once already
        self._last_stop_at = 0.0  # (time.monotonic) when the last stop's line was shown
        self._panes_due = 0.0  # the other panes are painted by then at the latest

    @property
    def idle(self) -> bool:
        """Nothing waits to be painted."""
        return self.timer is None and not self.log

    def deliver(self, events: list[ev.Event]) -> None:
        """A batch from the live session."""
        if not events:
            return
        screen = self.screen
        state = screen.state
        for event in events:
            self.aspects |= state.apply(event)
        self.log.extend(events)
        if state.busy is None:
            self._held = False
        if "stop" in self.aspects and state.stop is not None and screen.show_stop_now():
            now = time.monotonic()
            burst = now - self._last_stop_at < BURST_GAP
            self._last_stop_at = now
            if self.timer is None or self._grace:
                self._panes_due = now + PANES_MAX_WAIT
            self._panes_later(PANES_WAIT_IN_BURST if burst else PANES_WAIT)
        elif self.timer is not None and (not self._grace or state.busy is not None):
            return  # these go with the flush to come (within the grace, a command's output waits for its stop)
        elif all(e.kind in OPENING_KINDS for e in events) and state.busy is not None and not self._held:
            self._held = True  # once per command: a long one shows as running when the grace ends
            self._flush_later(INPUT_GRACE, grace=True)
        else:
            self.flush()

    def feed(self, events: list[ev.Event], log_tail: int | None = None) -> None:
        """Recorded events at once (replay): fold them all; the logs get the last `log_tail` of
        them (all by default), which is what going back re-draws."""
        self._stop_timer()
        state = self.screen.state
        for event in events:
            self.aspects |= state.apply(event)
        self.log.extend(events if log_tail is None else events[-log_tail:])
        self.flush()

    def reset(self) -> None:
        """Forget what waits (the screen starts over)."""
        self._stop_timer()
        self.log, self.aspects, self._held = [], set(), False

    def flush(self) -> None:
        """Paint what waits, now (once the panes are there: until then it keeps gathering)."""
        self._stop_timer()
        if not self.screen.panes_ready:
            return
        events, self.log = self.log, []
        aspects, self.aspects = self.aspects, set()
        self.screen.paint(events, aspects)

    def _stop_timer(self) -> None:
        if self.timer is not None:
            self.timer.stop()
        self.timer, self._grace = None, False

    def _panes_later(self, wait: float) -> None:
        self._flush_later(max(0.0, min(wait, self._panes_due - time.monotonic())), panes=True)

    def _flush_panes(self) -> None:
        if self.screen.app.busy and time.monotonic() < self._panes_due:
            self._panes_later(PANES_WAIT_IN_BURST)  # the next step is under way already: a key held down
        else:
            self.flush()

    def _flush_later(self, delay: float, grace: bool = False, panes: bool = False) -> None:
        if self.timer is not None:
            self.timer.stop()
        self.timer = self.screen.set_timer(delay, self._flush_panes if panes else self.flush)
        self._grace = grace
