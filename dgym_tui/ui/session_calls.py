"""The UI's calls into the session, typed: one method per session operation the screens use.

Each queues the operation on the session's runner and returns at once (the UI thread never
waits on pdb or the sandbox); `done(result)` runs on the UI thread when it has run; an error
becomes a notification, or goes to `failed(error)` when one is given. The operations' names
appear here only, and tests/test_session_calls.py checks each method against the operation it
queues (name and arguments), so a renamed operation fails a test rather than a key press.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dgym_tui.core.events import HUMAN, SYSTEM
from dgym_tui.core.runner import CallCancelled

Done = Callable[[Any], None] | None
Failed = Callable[[BaseException], None] | None


class SessionCalls:
    def __init__(self, app) -> None:
        self.app = app  # its session (which changes on a take-over), notify and RunOnUI

    def _queue(self, operation: str, done: Done = None, failed: Failed = None, actor: str = HUMAN,
               **args) -> None:
        app = self.app

        def finished(call) -> None:  # on the runner's thread
            app.run_on_ui(self._finished, call, done, failed)

        try:
            app.session.runner.submit(actor, operation, args, finished)
        except CallCancelled as e:
            if app.replay is not None:  # read-only: say how to act
                app.notify(str(e), title="Replay", timeout=6)

    def _finished(self, call, done: Done, failed: Failed) -> None:
        error = call.error
        if isinstance(error, CallCancelled):
            return
        if error is None:
            if done is not None:
                done(call.result)
        elif failed is not None:
            failed(error)
        else:
            self.app.notify(str(error) or type(error).__name__, severity="error", title="dgym-tui")

    # --- the session ---------------------------------------------------------------------------

    def start(self) -> None:
        self._queue("start", actor=SYSTEM)  # takes seconds: the runner's thread does it

    def restart(self) -> None:
        self._queue("restart")

    def restart_sandbox(self) -> None:
        self._queue("restart_sandbox")

    def set_entrypoint(self, spec: str) -> None:
        self._queue("set_entrypoint", spec=spec)

    def widen(self) -> None:
        self._queue("widen")

    # --- pdb -----------------------------------------------------------------------------------

    def send(self, command: str, done: Done = None) -> None:
        self._queue("send", done, command=command)

    def toggle_breakpoint(self, file: str, line: int, done: Done = None) -> None:
        self._queue("toggle_breakpoint", done, file=file, line=line)

    def set_breakpoint(self, file: str, line: int, cond: str | None = None, log: str | None = None,
                       hit: str | None = None, done: Done = None) -> None:
        """A breakpoint, its condition, its log message (a logpoint) or its hit condition."""
        self._queue("set_breakpoint", done, file=file, line=line, cond=cond, log=log, hit=hit)

    def clear_breakpoints(self) -> None:
        self._queue("clear_breakpoints")

    def watch(self, expr: str, done: Done = None) -> None:
        self._queue("watch", done, expr=expr)

    def unwatch(self, expr: str, done: Done = None) -> None:
        self._queue("unwatch", done, expr=expr)

    def data_breakpoint(self, expr: str, done: Done = None) -> None:
        self._queue("data_breakpoint", done, expr=expr)

    def run_to(self, file: str, line: int, done: Done = None) -> None:
        self._queue("run_to", done, file=file, line=line)

    def back_to(self, index: int, done: Done = None) -> None:
        self._queue("back_to", done, index=index)

    def evaluate(self, expr: str, done: Done, failed: Failed) -> None:
        self._queue("evaluate", done, failed, expr=expr)

    def children(self, expr: str, done: Done, failed: Failed) -> None:
        self._queue("children", done, failed, expr=expr)

    # --- the workspace -------------------------------------------------------------------------

    def read_source(self, path: str, done: Done, failed: Failed) -> None:
        self._queue("read_source", done, failed, path=path)

    def changed_files(self, done: Done, failed: Failed) -> None:
        self._queue("changed_files", done, failed)

    def run_tests(self, args: str = "") -> None:
        # the Tests event shows the result (transcript, notification); here only failures to run
        self._queue("run_tests", args=args)

    def run_tool(self, name: str, args: dict) -> None:
        self._queue("run_tool", name=name, args=args)

    def undo(self) -> None:
        self._queue("undo")
