"""The one door in: every action by anyone is a named call run by the core's own threads.

The person's keys, the agent's tool calls and the views' look-ups all become `Call`s (actor,
name, args) of one of the session's operations (`operation`, below). Two lanes:

- **act**: everything that drives the debugger or changes the workspace, one call at a time on
  the runner's act thread. The person's queue goes first, so an agent that queued many calls
  never starves the keys. `interrupt()` stops the running call, whoever started it.
- **look**: read-only look-ups for the views (a file's text, a directory), on a second thread,
  so opening a file is not stuck behind a `continue` into a long loop. A look waits for the
  workspace-changing act calls submitted before it (`writes=True`), so it never reads a file
  an earlier edit has yet to write.

Each call is bracketed by `call_started` / `call_finished` events carrying its id; its result
goes to whoever waits on the `Call` and to its `done` callback (on the runner's thread).
"""

from __future__ import annotations

import functools
import inspect
import itertools
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from dgym_tui.core.events import HUMAN, CallFinished, CallStarted, EventBus


@dataclass(frozen=True)
class Operation:
    """A session method the runner may call: `fn(session, actor=..., **args)`."""

    name: str
    fn: Callable
    lane: str = "act"      # act | look
    writes: bool = False   # changes the workspace: later looks wait for it


OPERATIONS: dict[str, Operation] = {}


def operation(lane: str = "act", writes: bool = False):
    """Make a Session method a runner call named after it: called directly it waits for its turn
    (runner.call), and the runner finds it by name in OPERATIONS (core/session.py says more)."""

    def wrap(fn):
        name = fn.__name__
        OPERATIONS[name] = Operation(name, fn, lane, writes)
        signature = inspect.signature(fn)

        @functools.wraps(fn)
        def public(self, *args, **kwargs):
            named = signature.bind(self, *args, **kwargs).arguments
            named.pop("self")
            actor = named.pop("actor", signature.parameters["actor"].default)
            return self.runner.call(actor, name, **named)

        return public

    return wrap


class CallCancelled(Exception):
    """The call never ran: the session closed first."""


@dataclass(eq=False)
class Call:
    id: int
    actor: str
    name: str
    args: dict[str, Any]
    lane: str
    writes: bool = False
    done: Callable[[Call], None] | None = None
    result: Any = None
    error: BaseException | None = None
    after_writes: frozenset = frozenset()  # (look lane) the write calls it must wait for
    _finished: threading.Event = field(default_factory=threading.Event, repr=False)

    @property
    def finished(self) -> bool:
        return self._finished.is_set()

    def wait(self, timeout: float | None = None) -> Any:
        """The call's result (re-raising its exception); blocks until it has run."""
        if not self._finished.wait(timeout):
            raise TimeoutError(f"{self.name} still running after {timeout} s")
        if self.error is not None:
            raise self.error
        return self.result


class Runner:
    def __init__(self, target, operations: dict[str, Operation], events: EventBus):
        self.target = target            # what operations are called on (the session)
        self.operations = operations
        self.events = events
        self._cond = threading.Condition()
        self._human: deque[Call] = deque()
        self._others: deque[Call] = deque()
        self._looks: deque[Call] = deque()
        self._pending_writes: set[int] = set()
        self._ids = itertools.count(1)
        self._threads: list[threading.Thread] = []
        self._local = threading.local()  # marks the runner's own threads
        self.running: Call | None = None  # the act call under way
        self.closed = False

    # --- asking -------------------------------------------------------------------------------

    def submit(self, actor: str, name: str, args: dict | None = None,
               done: Callable[[Call], None] | None = None) -> Call:
        """Queue a call and return at once; `done(call)` runs on the runner thread after it."""
        op = self.operations.get(name)
        if op is None:
            raise ValueError(f"no such operation: {name}")
        with self._cond:
            if self.closed:
                raise CallCancelled("the session is closed")
            call = Call(next(self._ids), actor, name, dict(args or {}), op.lane, op.writes, done)
            if op.lane == "look":
                call.after_writes = frozenset(self._pending_writes)
                self._looks.append(call)
            else:
                if op.writes:
                    self._pending_writes.add(call.id)
                (self._human if actor == HUMAN else self._others).append(call)
            self._ensure_threads()
            self._cond.notify_all()
        return call

    def call(self, actor: str, name: str, /, **args) -> Any:
        """Run a call and wait for its result. From inside a running call (an operation that uses
        another), it runs inline: no queue, no events of its own, no deadlock."""
        if getattr(self._local, "inside", False):
            return self.operations[name].fn(self.target, actor=actor, **args)
        return self.submit(actor, name, args).wait()

    def interrupt(self) -> Call | None:
        """Stop the act call under way, whoever started it (pdb gets Ctrl-C; a running command
        in the sandbox is killed). Returns the call interrupted, or None."""
        call = self.running
        if call is not None:
            self.target.interrupt()
        return call

    @property
    def busy(self) -> bool:
        with self._cond:
            return self.running is not None or bool(self._human or self._others)

    def close(self) -> None:
        """Refuse new calls, cancel queued ones, stop the threads (a running call is left to
        finish or fail on its own: closing the sandbox ends it)."""
        with self._cond:
            self.closed = True
            dropped = list(self._human) + list(self._others) + list(self._looks)
            self._human.clear()
            self._others.clear()
            self._looks.clear()
            self._pending_writes.clear()
            self._cond.notify_all()
        for call in dropped:
            call.error = CallCancelled("the session closed before this ran")
            call._finished.set()

    # --- running ------------------------------------------------------------------------------

    def _ensure_threads(self) -> None:
        if not self._threads:
            for lane in ("act", "look"):
                thread = threading.Thread(target=self._loop, args=(lane,), name=f"dgym-{lane}", daemon=True)
                self._threads.append(thread)
                thread.start()

    def _next(self, lane: str) -> Call | None:
        """The next call of this lane (None when closed); waits under the condition."""
        with self._cond:
            while True:
                if self.closed:
                    return None
                if lane == "act":
                    queue = self._human or self._others
                    if queue:
                        call = queue.popleft()
                        self.running = call
                        return call
                elif self._looks and not (self._looks[0].after_writes & self._pending_writes):
                    return self._looks.popleft()
                self._cond.wait()

    def _loop(self, lane: str) -> None:
        self._local.inside = True
        while (call := self._next(lane)) is not None:
            self._run(call)

    def _run(self, call: Call) -> None:
        op = self.operations[call.name]
        self.events.emit(CallStarted(id=call.id, name=call.name, args=_loggable(call.args),
                                     lane=call.lane), call.actor)
        started = time.perf_counter()
        try:
            call.result = op.fn(self.target, actor=call.actor, **call.args)
        except Exception as e:  # the caller decides what an error means; the runner goes on
            call.error = e
        with self._cond:
            if call.lane == "act":
                self.running = None
            self._pending_writes.discard(call.id)
            self._cond.notify_all()
        self.events.emit(CallFinished(id=call.id, name=call.name, ok=call.error is None,
                                      error=_one_line(call.error), lane=call.lane,
                                      duration_ms=round((time.perf_counter() - started) * 1000, 3)),
                         call.actor)
        call._finished.set()
        if call.done is not None:
            try:
                call.done(call)
            except Exception:  # a view's callback failing must not stop the runner
                import logging

                logging.getLogger(__name__).exception("done callback of %s failed", call.name)


def _one_line(error: BaseException | None) -> str | None:
    if error is None:
        return None
    text = str(error).strip().splitlines()
    return text[0] if text else type(error).__name__


def _loggable(args: dict) -> dict:
    """Arguments as the call event records them: JSON values only."""
    out = {}
    for key, value in args.items():
        if value is None or isinstance(value, (str, int, float, bool, list, dict)):
            out[key] = value
        else:
            out[key] = repr(value)
    return out
