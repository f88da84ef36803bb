"""The session's pdb: commands, stops, breakpoints and watches, restarts, the step back.

A part of Session (core/session.py), in a module of its own: its methods are the Session's,
marked `@operation` where the runner runs them.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from dgym_tui.core import pdb_commands
from dgym_tui.core.entrypoint import NO_ENTRYPOINT, narrowed, parse_entrypoint
from dgym_tui.core.events import HUMAN, SYSTEM, Checkpoint, Notice, PdbInput, PdbOutput, Progress
from dgym_tui.core.runner import operation
from dgym_tui.sandbox.errors import SandboxError, SandboxGone

if TYPE_CHECKING:  # the debugger and the backends load in start(), off the UI's first frame
    from dgym_tui.core.debugger import Debugger, PdbResult


class PdbDoor:
    """The live pdb: each method a session operation or a helper of one."""

    def _launch(self, actor: str, restart: bool = False, reason: str = "") -> PdbResult:
        """The debugger on the chosen entrypoint, the program to its first stop."""
        from dgym_tui.core.debugger import Debugger

        self.wide_entrypoint = self.entrypoint
        self.debugger = Debugger(self.sandbox, self.entrypoint, self.breakpoints, self.events,
                                 timeout=self.pdb_timeout, test_timeout=self.test_timeout)
        self.events.emit(Progress(message=f"starting pdb: {self.entrypoint.label}", step="pdb"), actor)
        return self._track(self.debugger.start(actor, restart=restart, reason=reason))


    def _track(self, result: PdbResult) -> PdbResult:
        if result.after_end:
            return result  # the shell after the end answered: nothing ran, nothing changed
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
            self._say_unreached(result)
        if stop is not None and stop.file and stop.file not in self._fresh:
            try:  # the views will show this file: record its text once, now
                self._read_source(stop.file, SYSTEM)
            except SandboxError:
                pass  # e.g. "<string>": nothing to show
        return result


    def _say_unreached(self, result: PdbResult) -> None:
        """A run that ended at no breakpoint, with some set: said once, with what would reach them."""
        from dgym_tui.core.unreached import note

        text = note(self, result)
        if text:
            self.events.emit(Notice(message=text, level="warning"), SYSTEM)
            result.output += "\n" + text + "\n"


    def _ready(self) -> Debugger:
        if self.debugger is None:
            if not self.with_debugger and self.sandbox is not None and not self.error:
                raise SandboxError("this session runs no debugger")
            raise SandboxError(self.error or "the session has not started yet")
        return self.debugger


    @operation(writes=True)
    def start_debugger(self, actor: str = SYSTEM) -> PdbResult | None:
        """Start the pdb a session without one (debugger=False) left out: the program to its first
        stop, as at a start. None when it runs already, or cannot run here (pdb_unavailable)."""
        if self.debugger is not None or self.pdb_unavailable:
            return None
        self.with_debugger = True
        return self._launch(actor)


    @operation()
    def send(self, command: str, actor: str = HUMAN) -> PdbResult:
        """One pdb command. After a post-mortem or the program's end, a command that runs the
        program (c, n, s...) starts it again, as `python -m pdb` does, and runs on to the first
        breakpoint; pdb's `restart` / `run` start it again too. After the end, every other
        command is answered without running anything: breakpoints are kept for the next run,
        and `p` or `where` say there is no frame."""
        debugger = self._ready()
        verb = pdb_commands.verb(command)
        ended = debugger.ended
        # After a failing test's post-mortem, c/n/s start the run again on the failing tests;
        # after a file pytest could not collect, `c` goes on with the other files.
        post_mortem = (debugger.stop is not None and debugger.stop.reason == "post_mortem"
                       and debugger.stop.phase != "collect" and not self.whole_run)
        try:
            if verb in pdb_commands.RESTART_COMMANDS:
                self.events.emit(PdbInput(command=command), actor)
                return self._again(actor, command, run_on=False)
            if ended and pdb_commands.runs_program(command) and self._found_nothing():
                self.events.emit(PdbInput(command=command), actor)
                note = f"pytest found no test to run here (exit code 5), so '{command}' would only run it again: {NO_ENTRYPOINT}.\n"
                self.events.emit(PdbOutput(text=note), actor)
                from dgym_tui.core.debugger import PdbResult

                return PdbResult(output=note, exited=True, exit_code=5)
            if (ended or post_mortem) and pdb_commands.runs_program(command):
                self.events.emit(PdbInput(command=command), actor)
                return self._again(actor, command, run_on=True, after="the program ended" if ended else
                                   "a post-mortem")
            if ended and not debugger.answers:
                debugger.open_shell(actor)  # no process left to ask (killed, never run): one that runs nothing
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
        self._start_sandbox(self.sandbox.restart)
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
