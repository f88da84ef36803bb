"""A debugging session: one sandbox, one live pdb, one breakpoint registry, one event log.

The person (through the UI) and the agent both act through this object; it knows nothing of
Textual. Every method may block (sandbox start, pdb commands), so the UI calls them from worker
threads; listeners of `events` are called on the thread that acted.
"""

from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass, field
from pathlib import Path

from typing import TYPE_CHECKING

from dgym_tui.core.breakpoints import BreakpointRegistry
from dgym_tui.core.entrypoint import Entrypoint, detect_entrypoint, parse_entrypoint
from dgym_tui.core.events import (ERROR, HUMAN, PROGRESS, SANDBOX_READY, SYSTEM, TESTS, EventBus)
from dgym_tui.sandbox.errors import SandboxError, SandboxGone

if TYPE_CHECKING:  # the debugger and the backends load in start(), off the UI's first frame
    from dgym_tui.core.debugger import Debugger, PdbResult
    from dgym_tui.sandbox.base import Sandbox


@dataclass
class TestResult:
    passed: int = 0
    failed: int = 0
    errors: int = 0
    failing: list[str] = field(default_factory=list)
    output: str = ""
    exit_code: int | None = None


class Session:
    def __init__(self, repo: str, sandbox: str = "auto", image: str | None = None,
                 network: str | None = None, entrypoint: str | None = None, pdb_timeout: float = 30.0,
                 sandbox_obj: Sandbox | None = None, python: str | None = None, memory: str | None = None):
        self.repo = str(repo)
        self.repo_name = Path(repo).name
        self.sandbox_kind, self.image, self.network = sandbox, image, network
        self.python = python  # the interpreter asked for (--python); the sandbox's choice otherwise
        self.memory = memory  # the container's memory limit (--memory); Docker's default otherwise
        self.entrypoint_spec = entrypoint
        self.pdb_timeout = pdb_timeout
        self.events = EventBus()
        self.breakpoints = BreakpointRegistry()
        self.sandbox: Sandbox | None = sandbox_obj
        self.debugger: Debugger | None = None
        self.entrypoint: Entrypoint | None = None
        self.state = "starting"
        self.error: str | None = None
        self._lock = threading.RLock()

    # --- lifecycle ----------------------------------------------------------------------------

    def start(self) -> None:
        """Start the sandbox and run the program to its first stop. Expected failures become an
        ERROR event and state "error", never an exception."""
        try:
            with self._lock:
                self._start()
        except SandboxError as e:
            self._fail(str(e))

    def _start(self) -> None:
        from dgym_tui.core.debugger import Debugger
        from dgym_tui.sandbox import choose_sandbox

        if self.sandbox is None:
            self.events.emit(PROGRESS, message="choosing a sandbox…", step="sandbox")
            self.sandbox, warning = choose_sandbox(self.repo, self.sandbox_kind, image=self.image,
                                                   network=self.network, python=self.python,
                                                   memory=self.memory)
        else:
            warning = None
        self.events.emit(PROGRESS, message=f"starting the {self.sandbox.kind} sandbox, copying the repo…",
                         step="sandbox")
        self.sandbox.start()
        self.events.emit(SANDBOX_READY, kind=self.sandbox.kind, description=self.sandbox.description,
                         isolated=self.sandbox.isolated, root=self.sandbox.root, python=self.sandbox.python,
                         skipped=self.sandbox.skipped, warning=warning)
        self.entrypoint = (parse_entrypoint(self.entrypoint_spec) if self.entrypoint_spec
                           else detect_entrypoint(self.sandbox))
        self.debugger = Debugger(self.sandbox, self.entrypoint, self.breakpoints, self.events,
                                 timeout=self.pdb_timeout)
        self.events.emit(PROGRESS, message=f"starting pdb: {self.entrypoint.label}", step="pdb")
        self._track(self.debugger.start())

    def _fail(self, message: str) -> None:
        self.state, self.error = "error", message
        self.events.emit(ERROR, message=message)

    def close(self) -> None:
        if self.debugger is not None:
            self.debugger.close()
        if self.sandbox is not None:
            self.sandbox.close()

    @property
    def started(self) -> bool:
        """start() has run (whether it succeeded or not)."""
        return self.debugger is not None or self.state == "error"

    def changed_files(self) -> list[str]:
        """Files the sandbox holds changed from the baseline (none before it started)."""
        return self.sandbox.changed_files() if self.sandbox is not None and self.sandbox.baseline else []

    def list_files(self) -> list[str]:
        return self.sandbox.list_files() if self.sandbox is not None and self.sandbox.baseline else []

    @property
    def entrypoint_label(self) -> str:
        return self.entrypoint.label if self.entrypoint else (self.entrypoint_spec or "")

    @property
    def status(self) -> dict | None:
        return self.debugger.status if self.debugger else None

    def _track(self, result: PdbResult) -> PdbResult:
        self.state = {"stopped": "stopped", "exited": "exited"}.get(self.debugger.state, "running")
        return result

    def _ready(self) -> Debugger:
        if self.debugger is None:
            raise SandboxError(self.error or "the session has not started yet")
        return self.debugger

    # --- what the person and the agent do -----------------------------------------------------

    def send(self, command: str, actor: str = HUMAN) -> PdbResult:
        debugger = self._ready()
        self.state = "running"
        try:
            return self._track(debugger.send(command, actor))
        except SandboxGone as e:
            from dgym_tui.core.debugger import PdbResult

            self._fail(str(e))
            return PdbResult(output=f"*** {e}\n", exited=True)

    def children(self, expr: str, actor: str = HUMAN) -> list[dict]:
        """One level of a value's contents (items or attributes), for a variables viewer that
        expands on demand: [{"name", "expr", "repr", "expandable"}]. Quiet: no console noise."""
        result = self._ready().send(f"dgym_children {expr}", actor, quiet=True)
        if result.error or not result.output.strip():
            raise SandboxError((result.error or "no answer").removeprefix("*** "))
        return json.loads(result.output.strip().splitlines()[-1])["children"]

    def interrupt(self) -> None:
        if self.debugger is not None:
            self.debugger.interrupt()

    def restart(self, actor: str = HUMAN) -> PdbResult:
        return self._track(self._ready().restart(actor, reason="restart asked"))

    def restart_sandbox(self, actor: str = HUMAN) -> PdbResult:
        """A fresh sandbox from the user's repo (after it died), then the program again."""
        debugger = self._ready()
        debugger.close()
        self.events.emit(PROGRESS, actor, message="restarting the sandbox…", step="sandbox")
        self.sandbox.restart()
        self.error = None
        return self._track(debugger.start(actor, restart=True, reason="sandbox restarted"))

    def set_entrypoint(self, spec: str, actor: str = HUMAN) -> PdbResult:
        entrypoint = parse_entrypoint(spec)
        debugger = self._ready()
        self.entrypoint = debugger.entrypoint = entrypoint
        return self._track(debugger.restart(actor, reason=f"entrypoint changed to {entrypoint.label}"))

    def set_breakpoint(self, file: str, line: int, cond: str | None = None, temporary: bool = False,
                       actor: str = HUMAN) -> str:
        return self._ready().set_breakpoint(file, line, cond=cond, temporary=temporary, actor=actor)

    def clear_breakpoint(self, file: str, line: int, actor: str = HUMAN) -> str:
        return self._ready().clear_breakpoint(file, line, actor)

    def toggle_breakpoint(self, file: str, line: int, actor: str = HUMAN, cond: str | None = None) -> str:
        return self._ready().toggle_breakpoint(file, line, actor, cond=cond)

    def run_to(self, file: str, line: int, actor: str = HUMAN) -> PdbResult:
        message = self.set_breakpoint(file, line, temporary=True, actor=actor)
        if message.startswith("***"):
            from dgym_tui.core.debugger import PdbResult

            return PdbResult(output=message + "\n", status=self.status)
        return self.send("continue", actor)

    def run_tests(self, args: str = "", timeout: float = 600) -> TestResult:
        """Run pytest in the sandbox (outside pdb) and count the results."""
        if self.sandbox is None:
            raise SandboxError("the sandbox is not started")
        self.events.emit(PROGRESS, message=f"running tests {args}".strip() + "…", step="tests")
        result = self.sandbox.exec(f"{self.sandbox.python} -m pytest -q -rfE -p no:cacheprovider {args}",
                                   timeout=timeout)
        tests = parse_pytest_summary(result.output)
        tests.exit_code = result.exit_code
        self.events.emit(TESTS, SYSTEM, passed=tests.passed, failed=tests.failed, errors=tests.errors,
                         failing=tests.failing, output=result.output[-20000:])
        return tests


_COUNT = re.compile(r"(\d+) (passed|failed|errors?)")


def parse_pytest_summary(output: str) -> TestResult:
    result = TestResult(output=output)
    lines = output.strip().splitlines()
    summary = next((ln for ln in reversed(lines) if " in " in ln and _COUNT.search(ln)), "")
    for number, word in _COUNT.findall(summary):
        if word == "passed":
            result.passed = int(number)
        elif word == "failed":
            result.failed = int(number)
        else:
            result.errors = int(number)
    result.failing = [ln.split(" ", 1)[1].split(" - ")[0] for ln in lines
                      if ln.startswith(("FAILED ", "ERROR "))]
    return result
