"""The live pdb session: one real pdb process in the sandbox, shared by the person and the agent.

The process runs sandbox/box/dgym_pdb.py, which prints one marker line (carrying this session's
random nonce and a JSON status) before every `(Pdb) ` prompt. A command is finished when the
marker and the prompt after it have arrived, so there is no polling and no extra pdb command
per step; program output that imitates a prompt or a marker cannot end a read early, since it
does not know the nonce. Markers are stripped from what people and the agent read.
"""

from __future__ import annotations

import json
import posixpath
import re
import secrets
import threading
import time
from dataclasses import dataclass, replace

import pexpect

from dgym_tui.core.breakpoints import Breakpoint, BreakpointRegistry
from dgym_tui.core.entrypoint import Entrypoint, run_environment
from dgym_tui.core.events import (HUMAN, Breakpoints, EventBus, Interrupted, Notice, PdbInput,
                                  PdbOutput, ProgramExit, ProgramStart, Stop)
from dgym_tui.sandbox import Sandbox, SandboxError, SandboxGone
from dgym_tui.sandbox.base import OutputCap

PROMPT = "(Pdb) "
READY = "\x1b_dgym:ready\x1b\\"  # the shim's first line: its terminal is ready
AGENT_OUTPUT_CAP = 64 * 1024
UI_OUTPUT_CAP = 1024 * 1024
SHIM_ENV = {"PYTHONUNBUFFERED": "1", "PYTHONDONTWRITEBYTECODE": "1", "NO_COLOR": "1",
            "PYTHON_COLORS": "0", "TERM": "dumb", "PYTHONIOENCODING": "utf-8"}


@dataclass
class PdbResult:
    output: str
    stop: Stop | None = None
    exited: bool = False
    exit_code: int | None = None
    truncated: bool = False
    interrupted: bool = False
    restarted: bool = False
    after_end: bool = False  # answered by the shell after the program's end: nothing ran

    @property
    def error(self) -> str | None:
        """pdb's own error line ('*** ...'), if the command failed."""
        return next((ln for ln in self.output.splitlines() if ln.startswith("*** ")), None)


class _Timeout(Exception):
    pass


class _Ended(Exception):
    """The pdb process's output ended without an exit marker (killed, or the sandbox died)."""


# pdb's commands that name a file: b/break/tbreak/cl/clear PATH.py:LINE
_BREAK_AT = re.compile(r"^\s*(?:b|break|tbreak|cl|clear)\s+(?P<path>[^\s:,]+\.py)(?=:\d)")
_MISSING_MODULE = re.compile(r"No module named '([A-Za-z_][\w.]*)'")


class Debugger:
    """One pdb process at a time. Not thread-safe on its own: the session's runner calls it from
    one thread; only interrupt() may come from another."""

    def __init__(self, sandbox: Sandbox, entrypoint: Entrypoint, breakpoints: BreakpointRegistry,
                 events: EventBus, timeout: float = 30.0, grace: float = 3.0,
                 start_timeout: float = 120.0, rows: int = 50, cols: int = 200, test_timeout: float = 0.0):
        """timeout: a command's limit (then Ctrl-C); test_timeout: under pytest, the running time
        a test may take before the shim stops it where it is (0: none)."""
        self.sandbox, self.entrypoint = sandbox, entrypoint
        self.test_timeout = test_timeout
        self.breakpoints, self.events = breakpoints, events
        self.timeout, self.grace, self.start_timeout = timeout, grace, start_timeout
        self.rows, self.cols = rows, cols
        self.channel = None
        self.nonce = ""
        self.stop: Stop | None = None
        self.state = "idle"  # idle | running | stopped | exited
        self.exit_code: int | None = None
        self.failed_tests: list[str] = []  # pytest: what failed in the run that ended
        self._lock = threading.RLock()
        self._pending = ""
        self._repo_files: set[str] = set()  # repo-relative files `b FILE:LINE` found (_repo_paths)

    # --- process lifecycle --------------------------------------------------------------------

    def start(self, actor: str = HUMAN, restart: bool = False, reason: str = "",
              run_to: dict | None = None) -> PdbResult:
        """Spawn a fresh pdb process with every breakpoint restored; return its first stop.
        run_to {file, line, count}: after its start, the program runs to the count-th arrival
        at file:line, the breakpoints paused until it stops (see the shim)."""
        with self._lock:
            self._close_channel()
            self.stop = None
            argv = [self.sandbox.python, f"{self.sandbox.box_dir}/dgym_pdb.py", *self.entrypoint.shim_args()]
            self.events.emit(ProgramStart(argv=argv, entrypoint=self.entrypoint.label, restart=restart,
                                          reason=reason), actor)
            self.exit_code = None
            self._open(argv, "running", {"run_to": run_to, "test_timeout": self.test_timeout or 0})
            result = self._finish(actor, UI_OUTPUT_CAP, self.start_timeout, command=None, first=True)
            result.restarted = restart
            return result

    def _open(self, argv: list[str], state: str, handshake: dict) -> None:
        """A new shim process on a fresh nonce, past its handshake (breakpoints and watches)."""
        self._close_channel()
        self.nonce = secrets.token_hex(16)
        self._marker = re.compile(re.escape(f"\x1b_dgym:{self.nonce}:") + r"(\{.*?\})\x1b\\\r?\n")
        self._pending = ""
        env = {**SHIM_ENV, **run_environment(self.entrypoint, self.sandbox.root, self.sandbox.program_env)}
        self.channel = self.sandbox.spawn(argv, env=env, rows=self.rows, cols=self.cols)
        self.state = state
        restore = json.dumps({"breakpoints": self.breakpoints.to_restore(),
                              "watches": self.breakpoints.watches, **handshake}, separators=(",", ":"))
        # The shim says when its terminal is set up; only then is the handshake sent.
        try:
            self.channel.child.expect_exact([READY + "\r\n", READY + "\n"], timeout=self.start_timeout)
        except (pexpect.EOF, pexpect.TIMEOUT):
            output = _clean(self.channel.child.before or "", None)
            self._close_channel()
            self.state = "exited"
            raise SandboxError(f"pdb did not start in the sandbox: {output.strip()[-300:] or 'no output'}")
        self._pending = self.channel.child.buffer  # anything read past the ready line's end
        self.channel.child.buffer = ""
        self.channel.child.send(f"{self.nonce}\n{restore}\n")

    def restart(self, actor: str = HUMAN, reason: str = "restarted") -> PdbResult:
        return self.start(actor, restart=True, reason=reason)

    def close(self) -> None:
        with self._lock:
            self._close_channel()
            self.state = "idle"

    def _close_channel(self) -> None:
        if self.channel is not None:
            try:
                self.channel.close()
            except SandboxError:
                pass  # the sandbox is gone, and the process with it
            self.channel = None

    # --- commands -----------------------------------------------------------------------------

    def send(self, command: str, actor: str = HUMAN, timeout: float | None = None,
             output_cap: int | None = None, quiet: bool = False) -> PdbResult:
        """Run one pdb command; return what pdb printed (markers stripped) and the new stop.
        quiet: no input/output events (the views' own look-ups, which are not anyone's acts)."""
        command = self._repo_paths(command.replace("\r", " ").replace("\n", " "))
        cap = output_cap or (UI_OUTPUT_CAP if actor == HUMAN else AGENT_OUTPUT_CAP)
        with self._lock:
            if self.channel is None or self.state == "idle":
                raise SandboxError("the program is not running: restart it")
            if not quiet:
                self.events.emit(PdbInput(command=self._relative(command)), actor)
            self.channel.child.send(command + "\n")
            return self._finish(actor, cap, timeout or self.timeout, command, quiet)

    def interrupt(self) -> None:
        """Ctrl-C into the program (from any thread): pdb stops at the line it is running."""
        channel = self.channel
        if channel is not None:
            try:
                channel.interrupt()
            except OSError:
                pass  # the process is already gone: nothing to interrupt

    def _finish(self, actor: str, cap_limit: int, timeout: float, command: str | None,
                quiet: bool = False, first: bool = False) -> PdbResult:
        """Read up to the next prompt, interrupting (then killing) a command that overruns."""
        cap = OutputCap(cap_limit)
        interrupted = False
        try:
            try:
                status = self._read_to_marker(cap, time.monotonic() + timeout)
            except _Timeout:
                interrupted = True
                self.interrupt()
                try:
                    status = self._read_to_marker(cap, time.monotonic() + self.grace)
                    note = f"[interrupted: still running after {timeout:g} s; stopped where it was]"
                except _Timeout:
                    return self._kill_and_restart(actor, cap, timeout)
                self.events.emit(Interrupted(message=note), actor)
                cap.feed("\n" + note + "\n")
        except _Ended:
            if not self.sandbox.alive():
                self._close_channel()
                self.state = "exited"
                raise SandboxGone("the sandbox stopped (container killed, or its folder removed): "
                                  "restart the sandbox") from None
            status = {"event": "exit", "code": None, "ended": True}
            why = self._explain(self.sandbox.explain_end)
            if why:
                status["why"] = why
                cap.feed(f"\n[{why}]\n")
        output = self._relative(_clean(cap.text(), command))
        result = PdbResult(output=output, truncated=cap.dropped > 0, interrupted=interrupted)
        if output and not quiet:
            self.events.emit(PdbOutput(text=output, truncated=result.truncated), actor)
        if first and status.get("errors"):  # breakpoints that could not be restored
            for error in status["errors"]:
                self.events.emit(Notice(message=f"breakpoint not restored: {self._relative(error)}"), actor)
        for notice in status.get("notices") or ():  # foreign imports, collection errors
            self.events.emit(Notice(message=self._relative(str(notice))), actor)
        self._say_missing_modules(output, status, actor)
        self._apply_status(status, actor, result)
        if result.exited and status.get("restart"):
            # pdb's own `restart` / `run`: the shim ended so that a fresh process runs the program
            again = self.start(actor, restart=True, reason="restart typed in pdb")
            again.output = output + again.output
            return again
        return result

    def _kill_and_restart(self, actor: str, cap: OutputCap, timeout: float) -> PdbResult:
        why = self._explain(self.sandbox.explain_stuck)
        output = self._relative(_clean(cap.text(), None))
        if output:
            self.events.emit(PdbOutput(text=output, truncated=cap.dropped > 0), actor)
        message = (f"the program ran over {timeout:g} s and ignored Ctrl-C for {self.grace:g} s: "
                   "it was killed and restarted")
        if why:
            message = f"the program ran over {timeout:g} s: {why}; it was killed and restarted"
        self.events.emit(Interrupted(message=message), actor)
        result = self.start(actor, restart=True, reason="killed after ignoring Ctrl-C")
        result.output = output + f"\n[{message}]\n" + result.output
        result.interrupted = True
        return result

    def _explain(self, ask) -> str | None:
        """The sandbox's account of how the run ended or why it is stuck (None: it cannot tell)."""
        try:
            return ask(self.channel)
        except SandboxError:
            return None

    def _say_missing_modules(self, output: str, status: dict, actor: str) -> None:
        """A module the program cannot import (a dependency the sandbox lacks): name it and the
        fix for this sandbox, once per module."""
        exc = status.get("exception") or {}
        texts = [output, *(str(n) for n in status.get("notices") or ()), str(exc.get("message") or "")]
        said = self.sandbox.missing_modules_said
        for module in sorted({m for text in texts for m in _MISSING_MODULE.findall(text)}):
            top = module.split(".")[0]
            if top in said or self._repo_has(top):
                continue  # the repo's own module: an import path problem, said by the shim
            said.add(top)
            self.events.emit(Notice(message=f"the sandbox lacks {top}: {self.sandbox.missing_module_fix(top)}"), actor)

    def _repo_has(self, module: str) -> bool:
        try:
            files = self.sandbox.list_files()
        except SandboxError:
            return False
        return any(f == f"{module}.py" or f.startswith(f"{module}/") or f"/{module}/" in f"/{f}"
                   or f.endswith(f"/{module}.py") for f in files)

    def _apply_status(self, status: dict, actor: str, result: PdbResult) -> None:
        if status.get("event") == "ended":  # a command answered after the end (breakpoints kept)
            result.exited, result.exit_code, result.after_end = True, self.exit_code, True
            self._sync_kept(status, actor)
            return
        if status.get("event") == "exit":
            self.state = "exited"
            self.exit_code = status.get("code")
            self.failed_tests = list(status.get("failed_tests") or [])
            if status.get("restart_args") is not None:  # `restart ARGS`: the program's new arguments
                self.entrypoint = replace(self.entrypoint, args=tuple(status["restart_args"]))
            self.stop = None
            result.exited, result.exit_code = True, self.exit_code
            if status.get("stays"):  # the process stays to answer what runs no code (box/ended.py)
                self._sync_kept(status, actor)
            else:
                self._close_channel()
            if status.get("restart"):
                message = "pdb restarts the program"
            elif status.get("ended"):
                message = status.get("why") or "the pdb process ended unexpectedly (killed, or the sandbox stopped)"
            elif self.exit_code == 5 and self.entrypoint.kind == "pytest":
                message = ("pytest found no test to run (exit code 5): give what to run with -e or the "
                           "palette's 'Change entrypoint…'")
            else:
                message = f"the program exited with code {self.exit_code}"
            self.events.emit(ProgramExit(code=self.exit_code, message=message), actor)
            return
        self.state = "stopped"
        stop = Stop.from_status(status)
        previous = self.stop
        moved = stop.reason != "command" or not stop.same_view(previous)
        if stop.reason == "command" and previous is not None:
            # `p x`, `up`, `b ...` do not change why the program is stopped (a post-mortem stays
            # one, and a data breakpoint's change stays shown)
            stop = replace(stop, reason=previous.reason, data_change=previous.data_change)
            moved = not stop.same_view(previous)
        self.stop = result.stop = stop
        if self.breakpoints.sync(status.get("breakpoints", []), actor):
            self.events.emit(Breakpoints(breakpoints=self.breakpoints.snapshot()), actor)
        self.breakpoints.sync_watches([w.expr for w in stop.watches])
        if moved:  # a command that changed nothing a view shows (`p x`) emits no stop
            self.events.emit(stop, actor)

    @property
    def ended(self) -> bool:
        """The program is over (or never ran): commands that run it start a fresh process."""
        return self.state in ("idle", "exited") or self.channel is None

    @property
    def answers(self) -> bool:
        """A pdb process is there to answer (at a stop, or the shell after the program's end)."""
        return self.channel is not None and self.state in ("stopped", "exited")

    def end_run(self, actor: str, message: str) -> None:
        """End the run in progress (or the shell after one): the breakpoints stay in the registry,
        and the next command that runs no code opens a fresh shell with them as they are now."""
        with self._lock:
            ended = self.ended
            self._close_channel()
            self.state, self.stop = "exited", None
            if not ended:
                self.exit_code = None
                self.events.emit(ProgramExit(code=None, message=message), actor)

    def open_shell(self, actor: str = HUMAN) -> None:
        """No process is left (killed, never run): start the shell alone, which runs no program
        and answers breakpoint commands as after an end (`dgym_pdb.py --ended CODE`)."""
        with self._lock:
            if self.answers:
                return
            code = "" if self.exit_code is None else str(self.exit_code)
            self._open([self.sandbox.python, f"{self.sandbox.box_dir}/dgym_pdb.py", "--ended", code], "exited", {})
            status = self._read_to_marker(OutputCap(AGENT_OUTPUT_CAP), time.monotonic() + self.start_timeout)
            self._sync_kept(status, actor)

    def _sync_kept(self, status: dict, actor: str) -> None:
        """The breakpoints and watches the shell after the end reports: the registry's truth."""
        if self.breakpoints.sync(status.get("breakpoints", []), actor):
            self.events.emit(Breakpoints(breakpoints=self.breakpoints.snapshot()), actor)
        self.breakpoints.sync_watches(list(status.get("watches") or []))

    def _read_to_marker(self, cap: OutputCap, deadline: float) -> dict:
        """Feed program/pdb output to `cap` until our marker and the prompt after it arrive."""
        child = self.channel.child
        while True:
            match = self._marker.search(self._pending)
            if match:
                status = json.loads(match.group(1))
                if status.get("event") == "exit" and not status.get("stays"):
                    cap.feed(self._pending[:match.start()])
                    self._pending = ""
                    return status
                rest = self._pending[match.end():]
                if rest.startswith(PROMPT):
                    cap.feed(self._pending[:match.start()])
                    self._pending = rest[len(PROMPT):]
                    return status
                if len(rest) >= len(PROMPT) or not PROMPT.startswith(rest):
                    # Not followed by a prompt (should not happen): treat it as output.
                    cap.feed(self._pending[:match.end()])
                    self._pending = rest
                    continue
            else:
                self._flush_safe(cap)
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise _Timeout()
            try:
                self._pending += child.read_nonblocking(65536, timeout=remaining)
            except pexpect.TIMEOUT:
                raise _Timeout() from None
            except (pexpect.EOF, OSError):
                cap.feed(self._pending)
                self._pending = ""
                raise _Ended() from None

    def _flush_safe(self, cap: OutputCap) -> None:
        """Move output that cannot be the start of our marker into cap; keep a possible start."""
        start = self._pending.rfind("\x1b_dgym:")
        if start == -1:
            tail = self._pending.rfind("\x1b")
            start = tail if tail != -1 and len(self._pending) - tail < 8 else len(self._pending)
        cap.feed(self._pending[:start])
        self._pending = self._pending[start:]
        if len(self._pending) > 1024 * 1024:  # an unterminated fake marker: it is just output
            cap.feed(self._pending)
            self._pending = ""

    # --- breakpoints --------------------------------------------------------------------------

    def _relative(self, text: str) -> str:
        """pdb names files by their path inside the sandbox; people and the agent read paths
        relative to the repo, as everywhere else. Only a path that starts with the root: the same
        name inside another path (/opt/conda/envs/testbed/lib under /testbed) is left alone."""
        root = self.sandbox.root.rstrip("/")
        if not root:
            return text
        return re.sub(r"(?<![\w./~-])" + re.escape(root) + r"(/|\b)", lambda m: "" if m.group(1) else ".", text)

    def _repo_paths(self, command: str) -> str:
        """`b pkg/mod.py:12` means the repo's pkg/mod.py, as every path shown here does. pdb would
        look for it along sys.path first, and find an installed copy (site-packages) when the
        program runs from elsewhere; a relative path that names a file of the repo is made its
        absolute path in the sandbox."""
        m = _BREAK_AT.match(command)
        if not m or m.group("path").startswith(("/", "~")):
            return command
        path = m.group("path")
        folder, name = posixpath.split(posixpath.normpath(path))
        # A file once found is remembered: in Docker each look is an exec (~100 ms), and `b` after
        # the program's end must answer in milliseconds. One that went away makes pdb say so.
        found = posixpath.normpath(path) in self._repo_files
        if not found:
            try:
                found = any(e.name == name and not e.is_dir for e in self.sandbox.list_dir(folder or "."))
            except (OSError, SandboxError, ValueError):
                found = False
            if found:
                self._repo_files.add(posixpath.normpath(path))
        return command[:m.start("path")] + self._abs(path) + command[m.end("path"):] if found else command

    def _abs(self, file: str) -> str:
        return f"{self.sandbox.root.rstrip('/')}/{self.sandbox.rel_path(file)}"

    def set_breakpoint(self, file: str, line: int, cond: str | None = None, temporary: bool = False,
                       actor: str = HUMAN, log: str | None = None, hit: str | None = None) -> str:
        """A breakpoint, or a logpoint (`log`: a message with {expr}, printed without stopping);
        `hit`: a hit condition (`3`, `>= 5`, `% 10 == 0`). Set on a line that has one, the
        condition, message and hit condition given are changed on it."""
        rel = self.sandbox.rel_path(file)
        if not self.answers:
            self.breakpoints.add(Breakpoint(rel, line, cond=cond, temporary=temporary, actor=actor, log=log,
                                            hit=_hit_expression(hit) if hit else None))
            self.events.emit(Breakpoints(breakpoints=self.breakpoints.snapshot()), actor)
            kind = "Logpoint" if log else "Breakpoint"
            return f"{kind} at {file}:{line} will be set when the program starts"
        existing = self.breakpoints.find(rel, line)
        outputs = []
        if existing is None or existing.number is None:
            if log:
                outputs.append(self.send(f"log {self._abs(file)}:{line} {log}", actor).output.strip())
            else:
                verb = "tbreak" if temporary else "break"
                suffix = f", {cond}" if cond else ""
                return_now = not hit
                outputs.append(self.send(f"{verb} {self._abs(file)}:{line}{suffix}", actor).output.strip())
                if return_now:
                    return outputs[0]
            existing = self.breakpoints.find(rel, line)
            if existing is None or existing.number is None:
                return "\n".join(outputs)  # pdb refused it: its error says why
            if log and cond:
                outputs.append(self.send(f"condition {existing.number} {cond}", actor).output.strip())
        else:
            # One breakpoint per line: a second `break` would stack another on top.
            if cond is not None and cond != existing.cond:
                outputs.append(self.send(f"condition {existing.number} {cond}", actor).output.strip())
            if log is not None and log != existing.log:
                outputs.append(self.send(f"log {self._abs(file)}:{line} {log}", actor).output.strip())
        if hit is not None and _hit_expression(hit) != existing.hit:
            outputs.append(self.send(f"hit {existing.number} {hit}", actor).output.strip())
        return "\n".join(outputs) or f"Breakpoint {existing.number} is already at {existing.file}:{line}"

    def clear_breakpoint(self, file: str, line: int, actor: str = HUMAN) -> str:
        if not self.answers:
            self.breakpoints.remove(self.sandbox.rel_path(file), line)
            self.events.emit(Breakpoints(breakpoints=self.breakpoints.snapshot()), actor)
            return f"Deleted breakpoint at {file}:{line}"
        return self.send(f"clear {self._abs(file)}:{line}", actor).output.strip()

    def toggle_breakpoint(self, file: str, line: int, actor: str = HUMAN, cond: str | None = None) -> str:
        if self.breakpoints.find(self.sandbox.rel_path(file), line) and cond is None:
            return self.clear_breakpoint(file, line, actor)
        return self.set_breakpoint(file, line, cond=cond, actor=actor)


def _hit_expression(text: str) -> str:
    """As the shim reads a hit condition: `3` is `hit == 3`, `>= 5` is `hit >= 5`."""
    text = text.strip()
    if text.isdigit():
        return f"hit == {text}"
    return f"hit {text}" if text[:1] in "<>=!%" else text


def _clean(text: str, command: str | None) -> str:
    """Terminal line endings to \\n, and the tty's echo of what we sent dropped."""
    text = text.replace("\r\n", "\n").replace("\r", "")
    if command is not None and text.startswith(command + "\n"):
        text = text[len(command) + 1:]
    return text
