"""A debugging session: one sandbox, one live pdb, one breakpoint registry, one event stream.

The session is the only door to the sandbox and the debugger. Every public method below marked
`@operation` is a named call that its `runner` runs on the core's own threads (see
core/runner.py): called directly it waits for its turn and its result; the UI submits the same
calls without waiting (`runner.submit`). Whoever acts — the person, the agent, a replay taking
over — the calls are ordered, interruptible, and recorded as events, and `state` (a DebugState)
is folded from those events. Nothing here knows of Textual.
"""

from __future__ import annotations

import functools
import hashlib
import inspect
import posixpath
import re
import shlex
import threading
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from dgym_tui import __version__
from dgym_tui.core import commands
from dgym_tui.core.breakpoints import BreakpointRegistry
from dgym_tui.core.environment import Environment
from dgym_tui.core.bytecode import CompileAhead
from dgym_tui.core.entrypoint import (NO_ENTRYPOINT, Entrypoint, detect_entrypoint, narrowed, parse_entrypoint,
                                      run_environment)
from dgym_tui.core.events import (HUMAN, SYSTEM, Breakpoints, Changes, Checkpoint, Error, EventBus, SandboxChosen,
                                  FileContent, Notice, PdbInput, PdbOutput, Progress, Restored,
                                  Resumed, SandboxReady, SessionStarted, Tests, ToolResult)
from dgym_tui.core.runner import Operation, Runner
from dgym_tui.core.state import fold
from dgym_tui.core.test_runs import DEFAULT_TEST_TIMEOUT
from dgym_tui.core.workspace import Record, Workspace, edited_text
from dgym_tui.sandbox.errors import SandboxError, SandboxGone

if TYPE_CHECKING:  # the debugger and the backends load in start(), off the UI's first frame
    from dgym_tui.core.debugger import Debugger, PdbResult
    from dgym_tui.sandbox.base import DirEntry, ExecResult, Sandbox
    from dgym_tui.tools.base import ToolOutput

OPERATIONS: dict[str, Operation] = {}
SOURCE_LIMIT = 5 * 1024 * 1024  # bytes of a file a view may read
AGENT_SHELL_CAP = 64 * 1024  # bytes of a shell command's output kept


def operation(lane: str = "act", writes: bool = False):
    """Make a Session method a runner call named after it (see the module docstring)."""

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


class Session:
    def __init__(self, repo: str, sandbox: str = "auto", image: str | None = None,
                 network: str | None = None, entrypoint: str | None = None, pdb_timeout: float = 30.0,
                 sandbox_obj: Sandbox | None = None, history: list | None = None, python: str | None = None,
                 memory: str | None = None, deps=None, test_timeout: float | None = None,
                 tools: dict | None = None, debugger: bool = True, environment=None):
        """history: the events of a recorded session this one goes on from (see `resume`).
        deps: sandbox/deps_image.DepsOptions, how the repo's declared dependencies get into a
        Docker sandbox (default: installed from the index into a derived image).
        tools: the tools this session offers (name -> Tool; default: every tool of the registry).
        debugger: False starts no pdb (an agent without the pdb tool: nothing runs under pdb, no
        restart after each edit); start_debugger() starts it later.
        environment: an Environment (below): the repository lives in an image with its own
        environment (a SWE-bench instance), whose tests run by its own command."""
        self.repo = str(repo)
        self.repo_name = Path(repo).name
        self.sandbox_kind, self.image, self.network = sandbox, image, network
        self.python = python  # the interpreter asked for (--python); the sandbox's choice otherwise
        self.memory = memory  # the container's memory limit (--memory); Docker's default otherwise
        self.deps = deps
        self.pdb_timeout = pdb_timeout
        # seconds a test may run, in test runs and under pdb (None: the default; 0: no limit)
        self.test_timeout = DEFAULT_TEST_TIMEOUT if test_timeout is None else test_timeout
        self.events = EventBus(history)
        self.state = fold(history or [])
        # first listener: the state is folded before views see an event
        self.events.subscribe(self.state.apply, replay=False)
        self._carried = (list(self.state.checkpoints), list(self.state.breakpoints),
                         list(self.state.watches)) if history else None
        self.entrypoint_spec = entrypoint or (self.state.entrypoint if history else None)
        self.runner = Runner(self, OPERATIONS, self.events)
        self.breakpoints = BreakpointRegistry()
        self.sandbox: Sandbox | None = sandbox_obj
        self.debugger: Debugger | None = None
        self.entrypoint: Entrypoint | None = None
        self.wide_entrypoint: Entrypoint | None = None  # before a post-mortem narrowed the run
        self._started = False
        self._recorded: set[str] = set()  # content hashes some event already carried
        self._fresh: set[str] = set()     # paths read since the workspace last changed
        self._failed_tests: list[str] = []  # pytest: tests post-mortem'd in this run
        # "Run all tests" chosen: a post-mortem's `c` goes on to the next tests (pytest --pdb's
        # way) instead of starting again with only the failing ones
        self.whole_run = False
        self._changes: dict[str, str] | None = None
        self.workspace = Workspace()
        self.compile_ahead = CompileAhead()  # the copy's modules as bytecode, beside the program
        self._tools: dict | None = tools
        self.with_debugger = debugger
        self.pdb_unavailable: str | None = None  # why this session's environment cannot run pdb
        self.environment: Environment | None = environment
        self.project = None  # core/project.Project: read when the sandbox is ready
        self._lock = threading.Lock()
        if history:
            self._recorded = {e.data.sha for e in history if e.kind == "file" and e.data.text is not None}
        else:
            self.events.emit(SessionStarted(schema=1, version=__version__, repo=self.repo,
                                            repo_name=self.repo_name, sandbox=sandbox, entrypoint=entrypoint))

    @classmethod
    def resume(cls, recording, upto: int | None = None, take_over: bool = False, changed: list[str] = (),
               **kwargs) -> Session:
        """A live session going on from a recorded one (a SessionFile): its events up to `upto`
        (all by default) are its past; start() builds a new sandbox from the repo with the
        recorded checkpoints applied in order, and the breakpoints set again."""
        header = recording.header
        history = [e for e in recording.events if upto is None or e.seq <= upto]
        kwargs.setdefault("sandbox", header.get("sandbox") or "auto")
        kwargs.setdefault("image", header.get("image"))
        session = cls(kwargs.pop("repo", header["repo"]), history=history, **kwargs)
        session.events.emit(Resumed(source=recording.path, upto=history[-1].seq if history else 0,
                                    changed=list(changed), take_over=take_over), SYSTEM)
        return session

    # --- lifecycle ----------------------------------------------------------------------------

    @operation(writes=True)
    def start(self, actor: str = SYSTEM) -> None:
        """Start the sandbox and run the program to its first stop. Expected failures become a
        fatal Error event (state.program "error"), never an exception."""
        self._started = True
        try:
            self._start(actor)
        except SandboxError as e:
            self._fail(str(e), actor)

    def _start(self, actor: str) -> None:
        from dgym_tui.sandbox import choose_sandbox

        if self.sandbox is None:
            self.events.emit(Progress(message="choosing a sandbox…", step="sandbox"), actor)
            found = self.environment
            extra = {"workdir": found.workdir, "activate": found.activate} if found else {}
            self.sandbox, warning = choose_sandbox(self.repo, self.sandbox_kind, image=found.image if found else self.image,
                                                   network=self.network, python=self.python,
                                                   memory=self.memory, **extra)
        else:
            warning = None
        if self.environment is not None:  # its own environment: nothing to install, the image to ready
            self.sandbox.on_progress = lambda line: self.events.emit(Progress(message=line, step="image"), actor)
        elif self.sandbox.kind == "docker":
            self._install_dependencies(actor)
        self.events.emit(Progress(message=f"starting the {self.sandbox.kind} sandbox, copying the repo…",
                                  step="sandbox"), actor)
        self.events.emit(SandboxChosen(backend=self.sandbox.kind, image=getattr(self.sandbox, "image", None),
                                       python=self.sandbox.python), actor)
        self.sandbox.start()
        self._sandbox_ready(actor, warning)
        if self._carried is not None:
            self._carry_over(actor)
        if self.environment is not None:
            self._ready_environment(actor)
        self.entrypoint = (parse_entrypoint(self.entrypoint_spec) if self.entrypoint_spec
                           else detect_entrypoint(self.sandbox, self.project))
        self.compile_ahead.request(self.sandbox)
        if self.with_debugger:
            self._launch(actor)

    def _ready_environment(self, actor: str) -> None:
        """An image's own environment: its test command made runnable at the base, pdb on that
        command when pytest runs it and the Python is new enough for the debugger, else no pdb
        (the pdb tool is taken away, and the person and the agent are told why)."""
        found = self.environment
        found.ready(self.sandbox)
        problem = found.pdb_problem(self.sandbox) if self.with_debugger or "pdb" in self.tools else None
        if problem is None and found.pdb_entrypoint():
            self.entrypoint_spec = self.entrypoint_spec or found.pdb_entrypoint()
        elif problem is not None:
            self.with_debugger = False
            self.pdb_unavailable = problem
            self.tools.pop("pdb", None)
            self.events.emit(Notice(message=f"pdb is off for this task: {problem}"), actor)

    def _install_dependencies(self, actor: str) -> None:
        """A Docker sandbox runs in an image with the repo's declared dependencies installed
        (sandbox/deps_image.py): built once, with progress, then found by its hash."""
        from dgym_tui.core.dependencies import read_dependencies
        from dgym_tui.sandbox.deps_image import DepsOptions, prepare_image

        options = self.deps or DepsOptions()
        if not options.wanted:
            return
        repo = Path(self.repo)
        files = [p.relative_to(repo).as_posix() for folder in (repo, repo / "requirements", repo / "requirements.d", repo / "tests", repo / "test")
                 if folder.is_dir() for p in folder.iterdir() if p.is_file()]

        def read(path: str) -> str | None:
            try:
                return (repo / path).read_text(encoding="utf-8", errors="replace")
            except OSError:
                return None

        deps = read_dependencies(files, read) if options.install else None
        sandbox = self.sandbox
        if sandbox.client is None:
            from dgym_tui.sandbox.docker_sandbox import connect

            sandbox.client = connect()

        def progress(line: str) -> None:
            self.events.emit(Progress(message=f"the repo's dependencies: {line}", step="image"), actor)

        self.events.emit(Progress(message="checking the repo's dependencies…", step="image"), actor)
        try:
            sandbox.image = prepare_image(sandbox.client, sandbox.image, deps.requirements if deps else (), options,
                                          sandbox.python, self.repo, progress)
        except SandboxError as e:  # offline, a bad pin: the code still runs, without them
            self.events.emit(Notice(message=f"{e}; the sandbox runs without them"), actor)
            return
        if deps:
            self.events.emit(Notice(message=f"{len(deps.requirements)} declared dependenc"
                                            f"{'y' if len(deps.requirements) == 1 else 'ies'} (from "
                                            f"{', '.join(deps.sources)}) installed in the sandbox's image "
                                            f"{sandbox.image}", level="info"), actor)

    def _launch(self, actor: str, restart: bool = False, reason: str = "") -> PdbResult:
        """The debugger on the chosen entrypoint, the program to its first stop."""
        from dgym_tui.core.debugger import Debugger

        self.wide_entrypoint = self.entrypoint
        self.debugger = Debugger(self.sandbox, self.entrypoint, self.breakpoints, self.events,
                                 timeout=self.pdb_timeout, test_timeout=self.test_timeout)
        self.events.emit(Progress(message=f"starting pdb: {self.entrypoint.label}", step="pdb"), actor)
        return self._track(self.debugger.start(actor, restart=restart, reason=reason))

    def _sandbox_ready(self, actor: str, warning: str | None = None) -> None:
        sandbox = self.sandbox
        self._changes = {}
        self._fresh.clear()
        files = sandbox.list_files()
        self._read_project(files)
        self.events.emit(SandboxReady(backend=sandbox.kind, description=sandbox.description,
                                      isolated=sandbox.isolated, root=sandbox.root,
                                      baseline=sandbox.baseline or "", files=files,
                                      skipped=list(sandbox.skipped), warning=warning,
                                      python=sandbox.python, image=getattr(sandbox, "image", None)), actor)
        if self.project.import_roots:
            folders = ", ".join(f"{root}/" for root in self.project.import_roots)
            self.events.emit(Notice(message=f"{folders} first on the import path: the repo's own code runs, "
                                            "never an installed copy of it", level="info"), actor)

    def _read_project(self, files: list[str]) -> None:
        """Where the repo's tests and code are (core/project.py); its source folders go first on
        the import path of everything that runs in the sandbox."""
        from dgym_tui.core.project import read_project

        sandbox = self.sandbox

        def read(path: str) -> str | None:
            try:
                return sandbox.read_text(path)
            except SandboxError:
                return None

        self.project = read_project(files, read)
        if self.environment is not None:  # the environment's own install of the repo is what runs, as its harness has it
            return
        roots = [posixpath.join(sandbox.root, root) for root in self.project.import_roots]
        sandbox.program_env = {"PYTHONPATH": ":".join(roots)} if roots else {}

    def _carry_over(self, actor: str) -> None:
        """A resumed session: the recorded checkpoints again, in order, and the breakpoints."""
        checkpoints, breakpoints, watches = self._carried
        self.breakpoints.watches = list(watches)
        self._carried = None
        self.workspace.records = [Record("", c.message, c.patch, actor) for c in checkpoints]
        if checkpoints:
            self.events.emit(Progress(message=f"applying the {len(checkpoints)} recorded change(s)…",
                                      step="sandbox"), actor)
        for record in self.workspace.rebuild(self.sandbox):
            self.events.emit(Checkpoint(id=record.id, message=record.message, patch=record.patch), actor)
        if checkpoints:
            self._refresh_changes(actor)
        for bp in breakpoints:
            self.breakpoints.add(replace(bp, number=None, hits=0))
        if breakpoints:
            self.events.emit(Breakpoints(breakpoints=self.breakpoints.snapshot()), actor)

    def _fail(self, message: str, actor: str = SYSTEM, gone: bool = False) -> None:
        self.events.emit(Error(message=message, fatal=True, sandbox_gone=gone), actor)

    def close(self) -> None:
        """Stop taking calls and remove the sandbox. Safe from any thread, and twice."""
        self.runner.close()
        if self.runner.running is not None:
            self.interrupt()  # let a running command end before its process goes
        if self.debugger is not None:
            self.debugger.close()
        if self.sandbox is not None:
            self.sandbox.close()

    @property
    def started(self) -> bool:
        """start() has run or is running."""
        return self._started

    @property
    def entrypoint_label(self) -> str:
        return self.entrypoint.label if self.entrypoint else (self.entrypoint_spec or "")

    @property
    def error(self) -> str | None:
        return self.state.error

    def _track(self, result: PdbResult) -> PdbResult:
        stop = result.stop
        if stop is not None and stop.reason == "post_mortem" and stop.test and stop.test not in self._failed_tests:
            self._failed_tests.append(stop.test)
        if self.debugger is not None:
            self.entrypoint = self.debugger.entrypoint  # pdb's `restart ARGS` may have changed it
        if result.exited:
            for test in self.debugger.failed_tests if self.debugger is not None else ():
                if test not in self._failed_tests:
                    self._failed_tests.append(test)
            self._refresh_changes(SYSTEM)
        if stop is not None and stop.file and stop.file not in self._fresh:
            try:  # the views will show this file: record its text once, now
                self._read_source(stop.file, SYSTEM)
            except SandboxError:
                pass  # e.g. "<string>": nothing to show
        return result

    def _ready(self) -> Debugger:
        if self.debugger is None:
            if not self.with_debugger and self.sandbox is not None and not self.error:
                raise SandboxError("this session runs no debugger")
            raise SandboxError(self.error or "the session has not started yet")
        return self.debugger

    @operation(writes=True)
    def set_up(self, command: str, timeout: float = 900, actor: str = SYSTEM) -> bool:
        """A task's set-up command run in the sandbox before anyone works there; what it changed
        becomes the baseline (no part of anyone's patch). True when it changed files. SandboxError:
        it failed (its last line said)."""
        sandbox = self._sandbox()
        self.events.emit(Progress(message=f"setting up: {command}", step="sandbox"), actor)
        result = sandbox.exec(command, timeout=timeout)
        if not result.ok:
            raise SandboxError(f"the set-up command failed ({command}): "
                               f"{(result.output.strip().splitlines() or ['no output'])[-1]}")
        if not sandbox.changed_files():
            return False
        sandbox.baseline = sandbox.checkpoint("the task's setup")
        self._refresh_changes(actor)
        return True

    @operation(writes=True)
    def start_debugger(self, actor: str = SYSTEM) -> PdbResult | None:
        """Start the pdb a session without one (debugger=False) left out: the program to its first
        stop, as at a start. None when it runs already, or cannot run here (pdb_unavailable)."""
        if self.debugger is not None or self.pdb_unavailable:
            return None
        self.with_debugger = True
        return self._launch(actor)

    # --- the debugger -------------------------------------------------------------------------

    @operation()
    def send(self, command: str, actor: str = HUMAN) -> PdbResult:
        """One pdb command. After a post-mortem or the program's end, a command that runs the
        program (c, n, s...) starts it again, as `python -m pdb` does, and runs on to the first
        breakpoint; pdb's `restart` / `run` start it again too."""
        debugger = self._ready()
        verb = commands.verb(command)
        ended = debugger.state in ("idle", "exited") or debugger.channel is None
        # After a failing test's post-mortem, c/n/s start the run again on the failing tests;
        # after a file pytest could not collect, `c` goes on with the other files.
        post_mortem = (debugger.stop is not None and debugger.stop.reason == "post_mortem"
                       and debugger.stop.phase != "collect" and not self.whole_run)
        try:
            if verb in commands.RESTART_COMMANDS:
                self.events.emit(PdbInput(command=command), actor)
                return self._again(actor, command, run_on=False)
            if ended and self._found_nothing():
                self.events.emit(PdbInput(command=command), actor)
                note = f"pytest found no test to run here (exit code 5), so '{command}' would only run it again: {NO_ENTRYPOINT}.\n"
                self.events.emit(PdbOutput(text=note), actor)
                from dgym_tui.core.debugger import PdbResult

                return PdbResult(output=note, exited=True, exit_code=5)
            if (ended or post_mortem) and commands.runs_program(command):
                self.events.emit(PdbInput(command=command), actor)
                return self._again(actor, command, run_on=True, after="the program ended" if ended else
                                   "a post-mortem")
            if ended:
                self.events.emit(PdbInput(command=command), actor)
                previous = debugger.exit_code
                note = (f"The program had ended (exit code {previous}); it was started again and "
                        f"'{command}' was not run.\n")
                self.events.emit(PdbOutput(text=note), actor)
                result = debugger.restart(actor, reason="the next command after the program ended")
                result.output = note + result.output
                return self._track(result)
            return self._track(debugger.send(command, actor))
        except SandboxGone as e:
            return self._gone(e, actor)

    def _again(self, actor: str, command: str, run_on: bool, after: str = "") -> PdbResult:
        """Start the program again; with run_on, go on to the first breakpoint (`c` always; `n`
        and `s` when there is one, else they stay at the start)."""
        debugger = self._ready()
        entrypoint = self.entrypoint
        if entrypoint.kind == "pytest" and self._failed_tests and not self.whole_run:
            entrypoint = narrowed(self.wide_entrypoint, self._failed_tests)
        self._failed_tests = []
        note = "Starting the program again"
        reason = f"'{command}' after {after}" if run_on else f"'{command}' typed in pdb"
        if entrypoint != self.entrypoint:
            only = f"only the failing test{'s' if len(entrypoint.args) > 1 else ''}"
            note += f", with {only} ({entrypoint.label}; the palette's 'Run all tests' widens it again)"
            reason += f", {only} (the palette's 'Run all tests' widens it)"
            self.entrypoint = debugger.entrypoint = entrypoint
        note += ".\n"
        self.events.emit(PdbOutput(text=note), actor)
        result = self._track(debugger.restart(actor, reason=reason))
        result.output = note + result.output
        go_on = command.strip() in ("c", "cont", "continue") or any(bp.enabled for bp in self.breakpoints.items())
        if run_on and go_on and result.stop is not None and result.stop.reason == "start":
            more = self._track(debugger.send("continue", actor))
            more.output = result.output + more.output
            more.restarted = True
            return more
        return result

    def _found_nothing(self) -> bool:
        """The program under pytest ended with "no tests ran" (pytest's exit code 5)."""
        return self.entrypoint is not None and self.entrypoint.kind == "pytest" and self.debugger.exit_code == 5

    def _gone(self, error: SandboxGone, actor: str) -> PdbResult:
        from dgym_tui.core.debugger import PdbResult

        self._fail(str(error), actor, gone=True)
        return PdbResult(output=f"*** {error}\n", exited=True)

    @operation()
    def children(self, expr: str, actor: str = HUMAN) -> list[dict]:
        """One level of a value's contents (items or attributes), for a variables viewer that
        expands on demand: [{"name", "expr", "repr", "expandable"}]. Quiet: no console noise."""
        import json

        result = self._ready().send(f"dgym_children {expr}", actor, quiet=True)
        if result.error or not result.output.strip():
            raise SandboxError((result.error or "no answer").removeprefix("*** "))
        return json.loads(result.output.strip().splitlines()[-1])["children"]

    @operation()
    def evaluate(self, expr: str, actor: str = HUMAN) -> str:
        """A value's full text (`pp`), shown in the console like any command."""
        return self.send(f"pp {expr}", actor=actor).output

    def interrupt(self) -> None:
        """Ctrl-C into the program (any thread; the runner's interrupt() calls this)."""
        if self.debugger is not None:
            self.debugger.interrupt()

    @operation()
    def restart(self, actor: str = HUMAN) -> PdbResult:
        """The program again, in a fresh pdb; a sandbox that died is restarted first."""
        self._failed_tests = []
        if not self._sandbox().alive():
            return self.restart_sandbox(actor=actor)
        return self._track(self._ready().restart(actor, reason="restart asked"))

    @operation(writes=True)
    def restart_sandbox(self, actor: str = HUMAN) -> PdbResult:
        """A fresh sandbox from the user's repo (after the old one died), with every checkpoint
        made so far applied again in order, and what was uncommitted; then the program again."""
        debugger = self._ready()
        debugger.close()
        self.events.emit(Progress(message="restarting the sandbox…", step="sandbox"), actor)
        self.sandbox.restart()
        self._sandbox_ready(actor)
        for record in self.workspace.rebuild(self.sandbox):
            self.events.emit(Checkpoint(id=record.id, message=record.message, patch=record.patch), record.actor)
        if self.workspace.records or self.workspace.pending:
            self._refresh_changes(actor)
        self.compile_ahead.request(self.sandbox)
        return self._track(debugger.start(actor, restart=True, reason="sandbox restarted"))

    @operation()
    def set_entrypoint(self, spec: str, actor: str = HUMAN) -> PdbResult:
        entrypoint = parse_entrypoint(spec)
        self.whole_run = False
        if self.debugger is None:  # nothing could be run yet (no entrypoint found): now it can
            self._sandbox()
            self.entrypoint = entrypoint
            return self._launch(actor, restart=True, reason=f"entrypoint set to {entrypoint.label}")
        debugger = self._ready()
        self.entrypoint = self.wide_entrypoint = debugger.entrypoint = entrypoint
        self._failed_tests = []
        return self._track(debugger.restart(actor, reason=f"entrypoint changed to {entrypoint.label}"))

    @operation()
    def widen(self, actor: str = HUMAN) -> PdbResult:
        """Back to the entrypoint as it was before a post-mortem narrowed it to failing tests."""
        result = self.set_entrypoint(self.wide_entrypoint.label if self.wide_entrypoint else "pytest", actor=actor)
        self.whole_run = True
        return result

    @operation()
    def set_breakpoint(self, file: str, line: int, cond: str | None = None, temporary: bool = False,
                       log: str | None = None, hit: str | None = None, actor: str = HUMAN) -> str:
        """A breakpoint (cond: a condition; hit: a hit condition, `3`, `% 10 == 0`), or with
        `log` a logpoint that prints its message ({expr} for values) and does not stop."""
        return self._ready().set_breakpoint(file, line, cond=cond, temporary=temporary, actor=actor,
                                            log=log, hit=hit)

    @operation()
    def watch(self, expr: str, actor: str = HUMAN) -> str:
        """A watch expression, shown (evaluated in the selected frame) at every stop."""
        debugger = self._ready()
        if debugger.state == "stopped":
            return self.send(f"watch {expr}", actor=actor).output.strip()
        if expr.strip() and expr.strip() not in self.breakpoints.watches:
            self.breakpoints.watches.append(expr.strip())
        return f"Watching {expr.strip()} from the next stop"

    @operation()
    def unwatch(self, expr: str = "", actor: str = HUMAN) -> str:
        """Stop watching an expression (all of them without one)."""
        debugger = self._ready()
        if debugger.state == "stopped":
            return self.send(f"unwatch {expr}".strip(), actor=actor).output.strip()
        self.breakpoints.watches = [w for w in self.breakpoints.watches if expr and w != expr.strip()]
        return f"Not watching {expr.strip() or 'anything'}"

    @operation()
    def data_breakpoint(self, expr: str, actor: str = HUMAN) -> PdbResult:
        """Stop when the expression's value changes (a data breakpoint, in this run)."""
        return self.send(f"dbreak {expr}", actor=actor)

    @operation()
    def clear_breakpoint(self, file: str, line: int, actor: str = HUMAN) -> str:
        return self._ready().clear_breakpoint(file, line, actor)

    @operation()
    def toggle_breakpoint(self, file: str, line: int, cond: str | None = None, actor: str = HUMAN) -> str:
        return self._ready().toggle_breakpoint(file, line, actor, cond=cond)

    @operation()
    def clear_breakpoints(self, actor: str = HUMAN) -> list[str]:
        return [self.clear_breakpoint(bp.file, bp.line, actor=actor) for bp in self.breakpoints.items()]

    @operation()
    def run_to(self, file: str, line: int, actor: str = HUMAN) -> PdbResult:
        message = self.set_breakpoint(file, line, temporary=True, actor=actor)
        if message.startswith("***"):
            from dgym_tui.core.debugger import PdbResult

            return PdbResult(output=message + "\n", stop=self._ready().stop)
        return self.send("continue", actor=actor)

    @operation()
    def back_to(self, index: int, actor: str = HUMAN) -> str:
        """Step back: run the program again, deterministically, to stop `index` of this run
        (state.run_stops): the same program from its start to the same arrival at the same line
        (the n-th time that line runs, n counted from the stops recorded there), every breakpoint
        paused on the way. Says whether it got there with the recorded stack and values, and
        when it could not (the program ended first, stopped elsewhere, or differs)."""
        stops = list(self.state.run_stops)
        if not 0 <= index < len(stops):
            raise SandboxError(f"there is no stop #{index + 1} in this run ({len(stops)} recorded)")
        target = stops[index]
        if not target.stack or not target.stack[-1].file or target.stack[-1].line is None:
            raise SandboxError(f"stop #{index + 1} has no line to go back to")
        place = target.stack[-1]
        count = sum(1 for s in stops[:index + 1] if s.stack and (s.stack[-1].file, s.stack[-1].line) == (place.file, place.line))
        debugger = self._ready()
        where = f"{place.file}:{place.line}"
        self._failed_tests = []
        result = self._track(debugger.start(actor, restart=True, run_to={"file": place.file, "line": place.line,
                                                                         "count": count},
                                            reason=f"back to stop #{index + 1}: {where}, arrival {count}"))
        if result.stop is not None and result.stop.reason == "start":
            result = self._track(debugger.send("continue", actor))
        verdict, level = compare_stops(index, target, count, result)
        self.events.emit(Notice(message=verdict, level=level), actor)
        return verdict

    @operation()
    def run_tests(self, args: str = "", timeout: float = 600, actor: str = HUMAN) -> Tests:
        """Run pytest in the sandbox (outside pdb) and count the results: `args`, else what the
        entrypoint's pytest command names (`pytest test.py -k cart`: its files, -k, options;
        never a post-mortem's narrowing), else pytest's own discovery. Each test is limited to
        `test_timeout` seconds (core/test_runs.py): a hang is a failure that says where it was."""
        from dgym_tui.core.test_runs import run_pytest, timeouts_text

        sandbox = self._sandbox()
        if self.environment is not None and self.environment.test_command and not args:
            return self._run_own_tests(timeout, actor)
        entrypoint = self.wide_entrypoint or self.entrypoint or Entrypoint("pytest", "")
        if not args and entrypoint.kind == "pytest":
            args = shlex.join(entrypoint.args)
        self.events.emit(Progress(message=f"running tests {args}".strip() + "…", step="tests"), actor)
        env = run_environment(entrypoint, sandbox.root,
                              sandbox.program_env)  # `PYTHONPATH=src pytest` given as the entrypoint
        run = run_pytest(sandbox, args, env=env, timeout=timeout, test_timeout=self.test_timeout)
        output = run.output
        if run.timed_out:
            output = output.rstrip("\n") + "\n\n" + timeouts_text(run) + "\n"
        if run.rounds > 1 or run.suite_timed_out:  # pytest's own summary covers one round only
            counts = run.counts()
            tests = Tests(**counts, failing=run.failing(), output=output[-20000:], exit_code=run.exit_code)
        else:
            tests = parse_pytest_summary(output, run.exit_code)
        tests = replace(tests, timed_out=[{"test": t.test, "seconds": t.seconds, "where": t.where}
                                          for t in run.timed_out])
        self.events.emit(tests, actor)
        self._refresh_changes(actor)
        return tests

    def _run_own_tests(self, timeout: float, actor: str) -> Tests:
        """The environment's own test command (a harness's), its output read by the environment's
        own reader (a harness's log parser) where there is one, else by pytest's summary."""
        from dgym_tui.core.test_runs import run_pytest, timeouts_text

        found = self.environment
        self.events.emit(Progress(message=f"running tests: {found.test_command}…", step="tests"), actor)
        run = run_pytest(self.sandbox, [], timeout=timeout, test_timeout=self.test_timeout,
                         command=f"cd {shlex.quote(self.sandbox.root)}\n{found.test_command}")
        output = run.output
        if run.timed_out:
            output = output.rstrip("\n") + "\n\n" + timeouts_text(run) + "\n"
        statuses = found.read_statuses(run.output) if found.read_statuses else {}
        if statuses:
            failing = [t for t, s in statuses.items() if s in ("FAILED", "ERROR")]
            counts = {"passed": sum(s in ("PASSED", "XFAIL") for s in statuses.values()),
                      "failed": sum(s == "FAILED" for s in statuses.values()),
                      "errors": sum(s == "ERROR" for s in statuses.values())}
            tests = Tests(**counts, failing=failing, output=output[-20000:], exit_code=run.exit_code)
        else:
            tests = parse_pytest_summary(output, run.exit_code)
        tests = replace(tests, timed_out=[{"test": t.test, "seconds": t.seconds, "where": t.where}
                                          for t in run.timed_out])
        self.events.emit(tests, actor)
        self._refresh_changes(actor)
        return tests

    # --- the workspace: changes, checkpoints, undo ----------------------------------------------

    @operation(writes=True)
    def edit(self, path: str, new_code: str, start: int | None = None, end: int | None = None,
             actor: str = HUMAN) -> Record:
        """Replace lines start..end (1-based, inclusive) of a repo file with new_code — or the
        whole file, or write a new one — as a checkpoint; breakpoints move with their code and
        the program starts again on the new code."""
        sandbox = self._sandbox()
        path = sandbox.rel_path(path)
        text = self._edited(path, new_code, start, end)
        sandbox.write_text(path, text)
        label = f"{path}:{start}-{end if end is not None else start}" if start is not None else path
        record = self.checkpoint(f"edit {label}", actor=actor)
        if record is None:
            raise SandboxError(f"the edit leaves {path} as it was: nothing changed")
        return record

    @operation(lane="look")
    def preview_edit(self, path: str, new_code: str, start: int | None = None, end: int | None = None,
                     actor: str = SYSTEM) -> tuple[str, str]:
        """What an edit would do, without doing it: the file's text before and after."""
        path = self._sandbox().rel_path(path)
        old = self._text_or_none(path)
        return old or "", self._edited(path, new_code, start, end, old)

    def _text_or_none(self, path: str) -> str | None:
        try:
            return self._sandbox().read_text(path)
        except SandboxGone:
            raise
        except SandboxError:
            return None  # a new file

    def _edited(self, path: str, new_code: str, start, end, old: str | None = "") -> str:
        if old == "":
            old = self._text_or_none(path)
        if old is None and start is not None and start > 1:
            raise SandboxError(f"{path} does not exist: give no start/end to create it")
        try:
            return edited_text(old, new_code, start, end)
        except ValueError as e:
            raise SandboxError(f"{path}: {e}") from None

    @operation(writes=True)
    def shell(self, command: str, timeout: float = 60, actor: str = HUMAN) -> ExecResult:
        """A shell command in the sandbox (never on the host). If it changed files, that is a
        checkpoint like an edit."""
        sandbox = self._sandbox()
        result = sandbox.exec(command, timeout=timeout, output_cap=AGENT_SHELL_CAP)
        if self.checkpoint(f"shell: {command[:60]}", actor=actor) is None:
            self._refresh_changes(actor)
        return result

    @operation(writes=True)
    def checkpoint(self, message: str, actor: str = HUMAN) -> Record | None:
        """Commit what changed in the sandbox since the last checkpoint (None if nothing did)."""
        sandbox = self._sandbox()
        record = self.workspace.checkpoint(sandbox, message, actor)
        if record is None:
            return None
        self.events.emit(Checkpoint(id=record.id, message=record.message, patch=record.patch), actor)
        self._moved(record.patch, actor)
        self._refresh_changes(actor)
        self._code_changed(actor, f"the code changed ({message})")
        return record

    @operation(writes=True)
    def undo(self, actor: str = HUMAN) -> Record:
        """Revert the last checkpoint; the files, breakpoints and program follow."""
        undone, target, reverse = self.workspace.undo(self._sandbox())
        self.events.emit(Restored(to=target, undone=[undone.id], message=f"undid: {undone.message}"), actor)
        self._moved(reverse, actor)
        self._refresh_changes(actor)
        self._code_changed(actor, f"undid {undone.message}")
        return undone

    def _moved(self, patch: str, actor: str) -> None:
        """Breakpoints follow their code through a patch; those whose line went are reported."""
        if not self.breakpoints.items():
            return
        dropped = self.breakpoints.remap(patch)
        self.events.emit(Breakpoints(breakpoints=self.breakpoints.snapshot()), actor)
        for bp in dropped:
            self.events.emit(Notice(message=f"breakpoint {bp.label()} removed: its line was changed"), actor)

    def _code_changed(self, actor: str, reason: str) -> None:
        """A running program runs the old code: start it again (breakpoints restored)."""
        self.compile_ahead.request(self.sandbox)  # the changed modules: the old bytecode no longer matches
        if self.debugger is not None and self.debugger.state != "idle":
            self._track(self.debugger.restart(actor, reason=reason))

    # --- tools: what the agent (and the person, from the palette) use -------------------------

    @property
    def tools(self) -> dict:
        if self._tools is None:
            from dgym_tui.tools import registry

            self._tools = registry()
        return self._tools

    @operation(writes=True)
    def run_tool(self, name: str, args: dict, call_id: str = "", record: bool = True,
                 actor: str = HUMAN) -> ToolOutput:
        """Run a tool (tools/); whatever happens, an observation comes back, never an exception.
        record: emit its ToolResult (a tried call's result comes with its final decision)."""
        from dgym_tui.tools.base import ToolError, ToolOutput, cap

        tool = self.tools.get(name)
        if tool is None:
            output = ToolOutput(f"error: there is no tool named {name!r} (tools: {', '.join(sorted(self.tools))})",
                                ok=False)
        elif problem := tool.check(args):
            output = ToolOutput(f"error: {problem}", ok=False)
        else:
            try:
                given = {k: v for k, v in args.items() if v is not None}  # null: the default
                output = tool.run(self, actor, **given)
                if isinstance(output, str):
                    output = ToolOutput(output)
            except SandboxGone as e:
                self._fail(str(e), actor, gone=True)
                output = ToolOutput(f"error: {e}", ok=False)
            except (SandboxError, ToolError, ValueError) as e:
                output = ToolOutput(str(e) if isinstance(e, ToolError) else f"error: {e}", ok=False)
            except Exception as e:  # a tool's bug: the model is told, the session goes on
                output = ToolOutput(f"error: the {name} tool failed: {type(e).__name__}: {e}", ok=False)
        output.observation = cap(output.observation)
        if record:
            self.events.emit(ToolResult(call_id=call_id, tool=name, observation=output.observation,
                                        executed=True, ok=output.ok), actor)
        return output

    @operation(lane="look")
    def walk(self, path: str = ".", depth: int = 1, actor: str = SYSTEM) -> list[tuple[str, bool]]:
        """Entries under a folder down to `depth` levels, as (path relative to it, is a folder),
        sorted, the sandbox's own .git and the bytecode caches left out."""
        sandbox = self._sandbox()
        rel = sandbox.rel_path(path)
        result = sandbox.exec(["find", rel, "-mindepth", "1", "-maxdepth", str(depth), "-not", "-path", "./.git",
                               "-not", "-path", "./.git/*", "-not", "-name", ".git", "-not", "-name", "__pycache__",
                               "-not", "-path", "*/__pycache__/*", "-printf", r"%y %P\0"],
                              timeout=30)
        if result.exit_code != 0 or not result.output.strip("\0 \n") and not sandbox_is_dir(sandbox, rel):
            raise SandboxError(f"{path}: no such folder in the repository")
        entries = []
        for item in result.output.split("\0"):
            if len(item) > 2:
                entries.append((item[2:], item[0] == "d"))
        return sorted(entries, key=lambda e: e[0].split("/"))

    @operation(lane="look")
    def search(self, pattern: str, path: str = ".", max_results: int = 100,
               actor: str = SYSTEM) -> list[tuple[str, int, str]]:
        """Lines matching an extended regular expression: (file, line number, text)."""
        sandbox = self._sandbox()
        rel = sandbox.rel_path(path)
        result = sandbox.exec(["grep", "-rnIHE", "--exclude-dir=.git", "--exclude-dir=__pycache__",
                               "--exclude-dir=node_modules", "-m", str(max_results), "--", pattern, rel],
                              timeout=30, output_cap=4 * 1024 * 1024)
        if result.exit_code not in (0, 1):
            raise SandboxError(result.output.strip().splitlines()[-1] if result.output.strip() else "grep failed")
        matches = []
        for line in result.output.splitlines():
            file, _, rest = line.partition(":")
            number, _, text = rest.partition(":")
            if number.isdigit():
                matches.append((file.removeprefix("./"), int(number), text))
                if len(matches) >= max_results:
                    break
        return matches

    # --- the workspace: what the views read ----------------------------------------------------

    def _sandbox(self) -> Sandbox:
        if self.sandbox is None or not self.sandbox.baseline:
            raise SandboxError(self.error or "the sandbox is not started")
        return self.sandbox

    @operation(lane="look")
    def read_source(self, path: str, actor: str = SYSTEM) -> str:
        """A file's text for the views: a repo file (relative path) or one outside the repo that
        the stack shows (absolute: the standard library, site-packages). Recorded as an event,
        its content once per hash."""
        return self._read_source(path, actor)

    def _read_source(self, path: str, actor: str) -> str:
        sandbox = self._sandbox()
        root = sandbox.root.rstrip("/") + "/"
        if posixpath.isabs(path) and not path.startswith(root):
            result = sandbox.exec(["cat", "--", path], timeout=10, output_cap=SOURCE_LIMIT)
            if not result.ok:
                raise SandboxError(f"{path}: {result.output.strip() or 'cannot read it'}")
            text = result.output
        else:
            path = sandbox.rel_path(path)
            data = sandbox.read_bytes(path)
            if len(data) > SOURCE_LIMIT:
                raise SandboxError(f"{path}: {len(data) / 2**20:.1f} MB, too big to show")
            text = data.decode("utf-8", errors="replace")
        sha = hashlib.sha256(text.encode("utf-8", errors="surrogatepass")).hexdigest()
        with self._lock:
            known = sha in self._recorded
            self._recorded.add(sha)
            self._fresh.add(path)
        self.events.emit(FileContent(path=path, sha=sha, text=None if known else text), actor)
        return text

    @operation(lane="look")
    def list_dir(self, path: str = ".", actor: str = SYSTEM) -> list[DirEntry]:
        return self._sandbox().list_dir(path)

    @operation(lane="look")
    def list_files(self, actor: str = SYSTEM) -> list[str]:
        return self._sandbox().list_files()

    @operation(lane="look")
    def changed_files(self, actor: str = SYSTEM) -> list[str]:
        """Files the sandbox holds changed from the baseline. Raises when it cannot tell."""
        return sorted(self._refresh_changes(actor))

    def diff_now(self) -> str:
        """The change against the baseline, asked of the sandbox at once, outside the runner (for
        a caller whose runner may be stuck in a command it is about to kill); "" when it cannot."""
        try:
            return self.sandbox.diff() if self.sandbox is not None else ""
        except SandboxError:
            return ""

    @operation(lane="look")
    def diff(self, from_id: str | None = None, actor: str = SYSTEM) -> str:
        """The change in the sandbox from a commit (default: the baseline), new files included."""
        return self._sandbox().diff(from_id)

    def _refresh_changes(self, actor: str) -> dict[str, str]:
        """Compare the copy with its baseline; emit Changes when the answer is new."""
        sandbox = self._sandbox()
        changed = sandbox.changed_status()
        if changed:  # what is not yet in a checkpoint, kept to rebuild a sandbox that dies
            self.workspace.pending = sandbox.diff(self.workspace.head(sandbox))
        with self._lock:
            if changed == self._changes:
                return changed
            self._changes = changed
            self._fresh.clear()  # files may have changed under the views: read them again
        self.events.emit(Changes(changed=changed), actor)
        return changed


def compare_stops(index: int, target, count: int, result) -> tuple[str, str]:
    """What a run back to a recorded stop found: (one line, notice level)."""
    place = target.stack[-1]
    where = f"{place.file}:{place.line}"
    nth = {1: "1st", 2: "2nd", 3: "3rd"}.get(count, f"{count}th")
    stop = result.stop
    if stop is None:
        return (f"Could not go back to stop #{index + 1}: the program ended (exit code {result.exit_code}) "
                f"before reaching {where} the {nth} time; this program does not run the same way twice", "warning")
    got = stop.stack[-1] if stop.stack else None
    if got is None or (got.file, got.line) != (place.file, place.line):
        return (f"Could not go back to stop #{index + 1}: the program stopped at {stop.where} ({stop.reason}) "
                f"before reaching {where} the {nth} time", "warning")
    differences = [f"stack {' > '.join(f.function or '?' for f in target.stack)} → "
                   f"{' > '.join(f.function or '?' for f in stop.stack)}"] if (
        [(f.file, f.function) for f in target.stack] != [(f.file, f.function) for f in stop.stack]) else []
    if target.frame_index == len(target.stack) - 1:  # the recorded values are the same frame's
        for name in sorted(set(target.locals) | set(stop.locals)):
            before, now = target.locals.get(name, "(unset)"), stop.locals.get(name, "(unset)")
            if before != now and not _object_address(before, now):
                differences.append(f"{name}: {before} → {now}")
    if differences:
        shown = "; ".join(differences[:3]) + (f"; {len(differences) - 3} more" if len(differences) > 3 else "")
        return (f"Reached {where} the {nth} time, but not as stop #{index + 1} was: {shown} (the program does "
                "not run the same way twice, or ran this line before without stopping there)", "warning")
    return f"Back at stop #{index + 1}: {where}, the {nth} time, with the stack and values recorded", "info"


_ADDRESS = re.compile(r" at 0x[0-9a-f]+")


def _object_address(before: str, now: str) -> bool:
    """Two reprs that differ only by an object's address (a new process, the same object)."""
    return _ADDRESS.sub("", before) == _ADDRESS.sub("", now)


def sandbox_is_dir(sandbox, rel: str) -> bool:
    return sandbox.exec(["test", "-d", rel], timeout=10).exit_code == 0


_COUNT = re.compile(r"(\d+) (passed|failed|errors?)")


def parse_pytest_summary(output: str, exit_code: int | None = None) -> Tests:
    """pytest's counts and failing node ids, from its `-q -rfE` output (the tail kept)."""
    lines = output.strip().splitlines()
    summary = next((ln for ln in reversed(lines) if " in " in ln and _COUNT.search(ln)), "")
    counts = {"passed": 0, "failed": 0, "errors": 0}
    for number, word in _COUNT.findall(summary):
        counts["errors" if word.startswith("error") else word] = int(number)
    failing = [ln.split(" ", 1)[1].split(" - ")[0] for ln in lines if ln.startswith(("FAILED ", "ERROR "))]
    return Tests(**counts, failing=failing, output=output[-20000:], exit_code=exit_code)
