"""A debugging session: one sandbox, one live pdb, one breakpoint registry, one event stream.

The session is the only door to the sandbox and the debugger. Every public method below marked
`@operation` is a named call that its `runner` runs on the core's own threads (see
core/runner.py): called directly it waits for its turn and its result; the UI submits the same
calls without waiting (`runner.submit`). Whoever acts — the person, the agent, a replay taking
over — the calls are ordered, interruptible, and recorded as events, and `state` (a DebugState)
is folded from those events. Nothing here knows of Textual.
"""

from __future__ import annotations

import posixpath
import shlex
import threading
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from dgym_tui import __version__
from dgym_tui.core.breakpoints import BreakpointRegistry
from dgym_tui.core.environment import Environment
from dgym_tui.core.bytecode import CompileAhead
from dgym_tui.core.entrypoint import (Entrypoint, detect_entrypoint, parse_entrypoint,
                                      run_environment)
from dgym_tui.core.events import (HUMAN, SYSTEM, Breakpoints, Checkpoint, Error, EventBus, SandboxChosen,
                                  Notice, Progress, Resumed, SandboxReady, SessionStarted, Tests)
from dgym_tui.core.runner import OPERATIONS, Runner, operation
from dgym_tui.core.session_pdb import PdbDoor
from dgym_tui.core.session_views import ViewsDoor
from dgym_tui.core.session_workspace import WorkspaceDoor
from dgym_tui.core.state import fold
from dgym_tui.core.test_runs import DEFAULT_TEST_TIMEOUT
from dgym_tui.core.workspace import Record, Workspace
from dgym_tui.sandbox.errors import SandboxError

if TYPE_CHECKING:  # the debugger and the backends load in start(), off the UI's first frame
    from dgym_tui.core.debugger import Debugger
    from dgym_tui.sandbox.base import Sandbox

class Session(PdbDoor, WorkspaceDoor, ViewsDoor):
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
        self._closed = False  # close() ran: a sandbox started after it is closed at once
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
                                                   memory=self.memory, deps=self.deps, **extra)
        else:
            warning = None
            if self.deps is not None and hasattr(self.sandbox, "deps"):  # one made by the caller
                self.sandbox.deps = self.sandbox.deps or self.deps
        # the sandbox's own preparation, with progress: an image with the repo's declared
        # dependencies installed, or an environment image made ready for the sandbox's user
        for level, message in self.sandbox.prepare(
                lambda line: self.events.emit(Progress(message=line, step="image"), actor)):
            self.events.emit(Notice(message=message, level=level), actor)
        self.events.emit(Progress(message=f"starting the {self.sandbox.kind} sandbox, copying the repo…",
                                  step="sandbox"), actor)
        self.events.emit(SandboxChosen(backend=self.sandbox.kind, image=getattr(self.sandbox, "image", None),
                                       python=self.sandbox.python), actor)
        self._start_sandbox(self.sandbox.start)
        self._sandbox_ready(actor, warning)
        if self._carried is not None:
            self._carry_over(actor)
        if self.environment is not None:
            self._ready_environment(actor)
        self.entrypoint = (parse_entrypoint(self.entrypoint_spec) if self.entrypoint_spec
                           else detect_entrypoint(self.sandbox, self.project))
        self.compile_ahead.request(self.sandbox)
        self._check_interpreter(actor)
        if self.with_debugger:
            self._launch(actor)

    def _start_sandbox(self, start) -> None:
        """start() (or restart()) the sandbox, unless the session closed meanwhile. close() in
        another thread (the app quit, a test's teardown while it starts) closes the sandbox it
        finds; one that is still starting is closed here once started, so nothing outlives the
        session: before, a sandbox chosen after close() looked lived on with its pdb."""
        if not self._closed:
            start()
        if self._closed:
            self.sandbox.close()
            raise SandboxError("the session was closed while its sandbox started")

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
            self._pdb_off(problem, actor)

    def _check_interpreter(self, actor: str) -> None:
        """pdb off, said in one line, where the repo's Python is older than the debugger runs on
        (2.7, 3.5): the tree, the source and the agent's other tools still work."""
        if self.pdb_unavailable or not (self.with_debugger or "pdb" in self.tools):
            return
        from dgym_tui.sandbox.interpreter import debugger_problem

        problem = debugger_problem(self.sandbox.python_version(), self.sandbox.python)
        if problem is not None:
            self._pdb_off(problem, actor)

    def _pdb_off(self, problem: str, actor: str) -> None:
        self.with_debugger = False
        self.pdb_unavailable = problem
        self.tools.pop("pdb", None)
        self.events.emit(Notice(message=f"pdb is off for this task: {problem}"), actor)

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
        self._closed = True  # first: a start under way closes what it makes (_start_sandbox)
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

    # --- the tests ----------------------------------------------------------------------------

    def _tests_plan(self, args: str = "", hidden=None) -> tuple[str | None, Entrypoint, str]:
        """What run_tests(args) runs: an environment's own test command (None when pytest runs),
        the entrypoint whose environment pytest runs in, and pytest's arguments."""
        found = self.environment
        command = found and ((hidden and found.harness_command) or found.test_command)
        entrypoint = self.wide_entrypoint or self.entrypoint or Entrypoint("pytest", "")
        if command and not args:
            return command, entrypoint, args
        if not args and entrypoint.kind == "pytest":
            args = shlex.join(entrypoint.args)
        return None, entrypoint, args

    def tests_command(self, args: str = "", hidden=None) -> str:
        """The command line run_tests(args) runs, to say what its counts are of: `pytest
        tests/test_x.py` when the entrypoint names a file, `pytest` for pytest's own discovery,
        an environment's test command as it is."""
        command, entrypoint, args = self._tests_plan(args, hidden)
        if command:
            return command.strip()
        env = [f"{name}={value}" for name, value in entrypoint.env]
        return shlex.join([*env, "pytest", *shlex.split(args)])

    @operation()
    def run_tests(self, args: str = "", timeout: float = 600, actor: str = HUMAN, stop_after_hang: bool = False,
                  hidden=None) -> Tests:
        """Run pytest in the sandbox (outside pdb) and count the results: `args`, else what the
        entrypoint's pytest command names (`pytest test.py -k cart`: its files, -k, options;
        never a post-mortem's narrowing), else pytest's own discovery; an environment's own test
        command (a harness's) when it has one. Each test is limited to `test_timeout` seconds
        (core/test_runs.py): a hang is a failure that says where it was; with stop_after_hang the
        run ends at the first (Tests.not_run: how many were left out). hidden: a task's hidden tests
        (core/hidden_tests.py) applied for this run only and taken away before the copy is compared
        with its baseline (an environment's test command then runs whole, with the test files they
        add); SandboxError when they do not apply."""
        import contextlib

        from dgym_tui.core.test_runs import run_pytest, tests_event

        sandbox = self._sandbox()
        with hidden.applied(sandbox) if hidden else contextlib.nullcontext():
            command, entrypoint, args = self._tests_plan(args, hidden)
            found = self.environment
            if command:
                self.events.emit(Progress(message=f"running tests: {command}…", step="tests"), actor)
                run = run_pytest(sandbox, [], timeout=timeout, test_timeout=self.test_timeout,
                                 command=f"cd {shlex.quote(sandbox.root)}\n{command}",
                                 stop_after_hang=stop_after_hang)
                tests = tests_event(run, found.read_statuses(run.output) if found.read_statuses else None)
            else:
                self.events.emit(Progress(message=f"running tests {args}".strip() + "…", step="tests"), actor)
                env = run_environment(entrypoint, sandbox.root,
                                      sandbox.program_env)  # `PYTHONPATH=src pytest` given as the entrypoint
                tests = tests_event(run_pytest(sandbox, args, env=env, timeout=timeout,
                                               test_timeout=self.test_timeout, stop_after_hang=stop_after_hang))
        self.events.emit(tests, actor)
        self._refresh_changes(actor)
        return tests
