"""The session's event log: everything that happens, in order, attributed to an actor.

The UI panes, the session file and the headless printer are all views of this one stream, so
replay is feeding recorded events to the same views. Events are plain data (JSON-ready dicts),
never objects of the UI.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field

HUMAN = "human"
AGENT = "agent"
SYSTEM = "system"

# Event kinds. data fields are listed beside each.
PROGRESS = "progress"            # message, step ("sandbox" | "image" | "pdb")
SANDBOX_READY = "sandbox_ready"  # kind, description, isolated, root, skipped, warning
PDB_INPUT = "pdb_input"          # command
PDB_OUTPUT = "pdb_output"        # text, truncated
STOP = "stop"                    # the shim's status: reason, file, line, function, stack, locals...
PROGRAM_EXIT = "program_exit"    # code, message
PROGRAM_START = "program_start"  # argv, restart (bool), reason
BREAKPOINTS = "breakpoints"      # breakpoints: list of Breakpoint dicts
INTERRUPTED = "interrupted"      # message (auto-interrupt after a timeout, or a kill + restart)
ERROR = "error"                  # message (one line, with the fix)
CHECKPOINT = "checkpoint"        # id, message
TESTS = "tests"                  # passed, failed, errors, failing (list of node ids), output


@dataclass
class Event:
    kind: str
    data: dict = field(default_factory=dict)
    actor: str = SYSTEM
    seq: int = 0
    ts: float = 0.0

    def to_dict(self) -> dict:
        return asdict(self)


Listener = Callable[[Event], None]


class EventBus:
    """Numbers events, keeps them, and calls listeners (on whichever thread emitted)."""

    def __init__(self):
        self._lock = threading.Lock()
        self._listeners: list[Listener] = []
        self.history: list[Event] = []

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        with self._lock:
            self._listeners.append(listener)
        return lambda: self._listeners.remove(listener)

    def emit(self, kind: str, actor: str = SYSTEM, /, **data) -> Event:
        with self._lock:
            event = Event(kind, data, actor, seq=len(self.history) + 1, ts=time.time())
            self.history.append(event)
            listeners = list(self._listeners)
        for listener in listeners:
            listener(event)
        return event
