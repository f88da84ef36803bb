"""The debugger: pdb.Pdb with a status marker before every prompt (protocol.py), and the commands
it adds: log, hit, watch, unwatch, dbreak, dclear, dgym_children; restart ends the process for
the host to start a fresh one."""

import bdb
import itertools
import json
import linecache
import os
import sys
import threading

from . import breakpoints, compat, databreak, ended, protocol, pytest_plugin, reprs, state
from .databreak import DBREAKS  # one list, changed in place: read at every trace event
from .origins import collection_cause, in_root, is_hidden, is_own, rel, take_notices, SKIP_MODULES
from .terminal import NoReadline, flush_program_output

with NoReadline():
    import pdb

LOCALS_MAX_NAMES = 50
LOCALS_MAX_JSON = 8000   # bytes of JSON for the whole "locals" object

_BP_COMMANDS = {"b", "break", "tbreak", "cl", "clear", "condition", "ignore", "enable",
                "disable", "commands", "watch", "unwatch", "log", "hit", "dbreak", "dclear"}


class DgymPdb(pdb.Pdb):
    """pdb.Pdb whose prompt is preceded by a status marker; also used by pytest (--pdbcls)."""

    _dgym_started = True     # launch.main() clears it so the very first stop says "start"
    _dgym_nested = False     # the recursive debugger of the `debug` command

    def __init__(self, completekey="tab", stdin=None, stdout=None, skip=None, **kwargs):
        kwargs.setdefault("readrc", False)  # a repo's .pdbrc could run `continue` behind our back
        if "colorize" in pdb.Pdb.__init__.__code__.co_varnames:  # 3.14+
            kwargs.setdefault("colorize", False)
        with NoReadline():
            # An explicit stdout makes cmd use stdout.write(prompt) + stdin.readline() instead of
            # input(): no readline, and the prompt (marker included) is written verbatim.
            super().__init__(completekey, stdin or state.TTY_IN or sys.__stdin__,
                             stdout or state.PDB_STDOUT or sys.__stdout__,
                             skip=SKIP_MODULES if skip is None else skip, **kwargs)
        if state.ACTIVE is not None:
            # pytest's post-mortem instances and `debug`'s: one set of breakpoints for all, so
            # `b` typed in a post-mortem reaches the tracer that runs the following tests.
            self.breaks = state.ACTIVE.breaks
        self._dgym_base_prompt = self.prompt
        self._dgym_prompt = None    # the last prompt we built (marker + base prompt)
        self._dgym_reason = None    # why the next marker appears; then "command"
        self._dgym_exc = None       # the exception of the current stop, if any
        self._dgym_from_trace = False
        self._dgym_cmd = ""
        self._dgym_slow = set()     # ids of values whose repr timed out during this stop
        self._dgym_post_mortem = False
        self._dgym_skipped = {}     # module name -> matches a skip pattern (is_skipped_module)
        self._dgym_data_change = None  # the data breakpoint change that made this stop
        self._dgym_skip_line = None    # (frame, line) not to stop at again after a data stop
        self._dgym_timed_out = False   # the next stop is the per-test time limit's

    def checkline(self, filename, lineno, *args):
        if not os.path.isfile(filename):
            self.error(f"{rel(filename)}: no such file")
            return 0
        count = len(linecache.getlines(filename))
        if lineno > count:
            self.error(f"line {lineno} is past the end of {rel(filename)} ({count} lines)")
            return 0
        if getattr(self, "curframe", None) is None:  # the program has ended (ended.py)
            return ended.check_line(self, filename, lineno)
        return super().checkline(filename, lineno, *args)

    # -- why we stopped ------------------------------------------------------------------------

    def user_line(self, frame):
        fired = getattr(self, "currentbp", 0)  # set by bdb.break_here() when a breakpoint fires
        self._dgym_reason = "breakpoint" if (fired or self._dgym_from_trace) else "step"
        if self._dgym_data_change is not None:
            self._dgym_reason = "data"
        self._dgym_from_trace = False
        self._dgym_exc = None
        try:
            super().user_line(frame)
        finally:
            self.currentbp = 0  # bdb leaves it stale after a stop that was not a breakpoint

    user_opcode = user_line  # 3.13: set_trace() stops on an opcode event

    def user_call(self, frame, argument_list):
        self._dgym_reason, self._dgym_exc = "step", None
        super().user_call(frame, argument_list)

    def user_return(self, frame, return_value):
        self._dgym_reason, self._dgym_exc = "data" if self._dgym_data_change else "return", None
        super().user_return(frame, return_value)

    def user_exception(self, frame, exc_info):
        self._dgym_reason, self._dgym_exc = "exception", exc_info[1]
        super().user_exception(frame, exc_info)

    def set_trace(self, frame=None, *args, **kwargs):
        # breakpoint() / pdb.set_trace(): the stop that follows is reported as a breakpoint
        self._dgym_from_trace = True
        super().set_trace(frame or sys._getframe().f_back, *args, **kwargs)

    def sigint_handler(self, signum, frame):
        super().sigint_handler(signum, frame)  # Ctrl-C during `continue`: pdb calls set_trace()
        self._dgym_from_trace = False          # ... but that stop is no breakpoint: a "step"

    def stop_for_time_limit(self, frame):
        """The running test passed its time limit (pytest_plugin's clock): stop at the next line,
        as Ctrl-C would, with the reason "timeout"."""
        self._dgym_timed_out = True
        self.set_trace(frame)
        self._dgym_from_trace = False

    def interaction(self, frame, tb_or_exc):
        if not state.is_main():
            return  # a forked child never prompts (post-mortem, set_trace, a stray trace event)
        if frame is None and pytest_plugin.PASS_OVER:
            pytest_plugin.PASS_OVER = False
            return  # a test that could not start (a missing fixture): said in a notice, no stop
        self._dgym_post_mortem = frame is None and tb_or_exc is not None
        if self._dgym_started:  # a run to a recorded stop ends at its first stop after the start
            breakpoints.end_run_to(state.ACTIVE or self)
        if state.MODE == "pytest":
            pytest_plugin.line_break()
        if frame is None and tb_or_exc is not None:
            self._dgym_reason = "post_mortem"
            self._dgym_exc = self._dgym_exception_of(tb_or_exc)
            cause = collection_cause(self._dgym_exc)
            if cause is not None:  # pytest's "could not collect": look at the import that failed
                self._dgym_exc = cause
                tb_or_exc = cause if sys.version_info >= (3, 13) else cause.__traceback__
        elif not self._dgym_started:
            self._dgym_reason = "start"
        if self._dgym_timed_out and frame is not None:
            self._dgym_timed_out = False
            self._dgym_reason = "timeout"
            self.message(f"[the test {state.TIMED_OUT} ran past its time limit ({state.TEST_TIMEOUT:g} s, not "
                         "counting stops): stopped where it was; `c` runs on]")
            state.TIMED_OUT = None
        self._dgym_started = True
        self._dgym_slow = set()
        if DBREAKS and frame is not None and self._dgym_data_change is None and not databreak.PAUSED:
            # a breakpoint (or a step) that stops where a watched value just changed: say so too,
            # before what the person does at the prompt becomes the value to compare with
            self._dgym_data_change = databreak.check_data(frame, frame.f_lineno)
        change = self._dgym_data_change
        if change is not None:  # the console and the transcript say it too
            by = f" (by {change['by']})" if change.get("by") else ""
            self.message(f"Data breakpoint {change['number']}: {change['expr']} changed from {change['old']} "
                         f"to {change['new']}{by}")
        paused, databreak.PAUSED = databreak.PAUSED, True  # `p cart.add(x)` at the prompt is not the program
        pytest_plugin.clock_pause()
        try:
            super().interaction(frame, tb_or_exc)
        finally:
            pytest_plugin.clock_resume()
            databreak.PAUSED = paused
            databreak.rebase()

    def setup(self, f, tb):
        result = super().setup(f, tb)
        if self._dgym_post_mortem:
            # pdb opens at the frame that raised; a failed assertEqual raises four frames into
            # unittest, a library call into the library. Open at the deepest frame of the
            # repo's own code instead (`down` still goes on into the others).
            for k in range(self.curindex, -1, -1):
                frame = self.stack[k][0]
                if is_own(frame):
                    if k != self.curindex:
                        self.curindex, self.curframe = k, frame
                        self.curframe_locals = frame.f_locals
                        if hasattr(self, "set_convenience_variable"):  # 3.12+: $_frame
                            self.set_convenience_variable(frame, "_frame", frame)
                    break
        return result

    def _dgym_exception_of(self, tb_or_exc):
        """The exception being post-mortem'd. Before 3.13 pdb passes only a traceback: find its owner."""
        if isinstance(tb_or_exc, BaseException):
            return tb_or_exc

        def last_frame(tb):
            while tb is not None and tb.tb_next is not None:
                tb = tb.tb_next
            return tb.tb_frame if tb is not None else None

        target = last_frame(tb_or_exc)
        for exc in (self._dgym_exc, pytest_plugin.INTERACT_EXC, getattr(sys, "last_value", None), sys.exc_info()[1]):
            if isinstance(exc, BaseException) and last_frame(exc.__traceback__) is target:
                return exc
        return None

    def set_continue(self):
        super().set_continue()
        traced = DBREAKS and databreak.MONITOR_ID is None  # the settrace fallback of data breakpoints
        if state.MODE == "pytest" and self is not state.ACTIVE:
            if (self.breaks or traced) and sys.gettrace() is None:
                pytest_plugin.arm_tracer()  # `c` in a post-mortem after new breakpoints: trace from now on
        elif traced and sys.gettrace() is None:
            # bdb stops tracing when there is no breakpoint; data breakpoints need it
            self._dgym_trace_from(sys._getframe().f_back)

    def _dgym_trace_from(self, frame):
        """Trace FRAME and its callers up to the bottom frame from now on, as set_trace() does."""
        while frame is not None:
            frame.f_trace = self.trace_dispatch
            if frame is self.botframe:
                break
            frame = frame.f_back
        sys.settrace(self.trace_dispatch)

    # -- keep the debugger's own frames out of sight -----------------------------------------

    def is_skipped_module(self, module_name):
        # bdb asks this at every function call while `next` steps over code (an import runs
        # thousands), matching the name against each skip pattern with fnmatch: stepping over
        # an import took twice as long as in plain pdb. The answer per name does not change.
        hit = self._dgym_skipped.get(module_name)
        if hit is None:
            hit = self._dgym_skipped[module_name] = super().is_skipped_module(module_name)
        return hit

    def stop_here(self, frame):
        if self.stopframe and frame is not self.stopframe:
            # bdb stops only in the stop frame, or anywhere when there is none: it answers False
            # here too, but after the skip patterns, and it is asked at every call while `next`
            # steps over code (~4,900 calls for the example's imports: 2.1 ms -> 0.5 ms).
            return False
        if not super().stop_here(frame):
            return False
        if state.MODE != "pytest":
            return True
        # Stepping out of a test must not land in stdlib helpers that pytest's machinery calls
        # (typing.cast, contextlib...): stop only where repo code is on the way to the runner.
        f = frame
        while f is not None:
            if is_hidden(f):
                return False
            if in_root(f):
                return True
            f = f.f_back
        return True

    def get_stack(self, f, t):
        stack, i = super().get_stack(f, t)
        keep = [k for k in range(len(stack)) if k == i or not is_hidden(stack[k][0])]
        return [stack[k] for k in keep], keep.index(i) if keep else 0

    # -- the marker before each prompt -----------------------------------------------------------

    def preloop(self):
        super().preloop()
        self._dgym_refresh_prompt()

    def precmd(self, line):
        # The marker was printed with the prompt; pdb measures self.prompt (help indentation,
        # `debug`, `commands`), so give it back the plain one while a command runs.
        if self.prompt is self._dgym_prompt:  # not "(com) " while `commands` is defining
            self.prompt = self._dgym_base_prompt
        return super().precmd(line)

    def postcmd(self, stop, line):
        stop = super().postcmd(stop, line)
        if not stop:
            self._dgym_refresh_prompt()
        return stop

    def _dgym_refresh_prompt(self):
        # cmdloop prints self.prompt only when cmdqueue is empty (3.13 queues a frame-status
        # command first), and `commands` runs a nested loop with its own "(com) " prompt.
        if self.cmdqueue or self.commands_defining or self.curframe is None:
            return
        flush_program_output()
        try:
            status = self._dgym_status()
        except Exception as e:  # never lose the prompt (or the host's sync) over the report
            status = {"v": 1, "event": "prompt", "reason": self._dgym_reason or "command",
                      "pid": os.getpid(), "errors": [f"status failed: {type(e).__name__}: {e}"]}
        self.prompt = self._dgym_prompt = protocol.marker(status) + "\n" + self._dgym_base_prompt

    def _dgym_status(self):
        reason = self._dgym_reason or "command"
        self._dgym_reason = "command"
        stack, frame_index = [], 0
        for k, (frame, lineno) in enumerate(self.stack):
            if k == self.curindex:
                frame_index = len(stack)
            elif is_hidden(frame):
                continue
            stack.append({"file": rel(frame.f_code.co_filename), "line": lineno,
                          "function": frame.f_code.co_name})
        current = stack[frame_index] if stack else {"file": None, "line": None, "function": None}

        # Exception chain selection (3.13's `exceptions N`) changes which exception is shown.
        chained = getattr(self, "_chained_exceptions", ())
        exc = chained[self._chained_exception_index] if chained else self._dgym_exc

        names = []
        for name, value in list(self.curframe_locals.items()):
            if name.startswith(("__pdb_", "@py_")) or (
                    name.startswith("__") and name.endswith("__")
                    and name not in ("__return__", "__exception__")):
                continue  # module dunders, pdb's and pytest's (assert rewriting) helpers
            names.append((name, value))
        omitted = max(0, len(names) - LOCALS_MAX_NAMES)
        names = names[:LOCALS_MAX_NAMES]
        jobs = [(reprs.safe_repr, value) for _, value in names]
        frame, frame_locals = self.curframe, self.curframe_locals
        watches = reprs.guarded([(lambda e: breakpoints.evaluate(e, frame, frame_locals), expr) for expr in state.WATCHES],
                           self._dgym_slow)
        watches = [w if isinstance(w, dict) else {"expr": e, "error": "timed out"}
                   for e, w in zip(state.WATCHES, watches)]
        if exc is not None:
            jobs.append((reprs.safe_str, exc))
        values = reprs.guarded(jobs, self._dgym_slow)

        local_reprs, size = {}, 2
        for (name, _), text in zip(names, values):
            size += len(json.dumps(name)) + len(json.dumps(text)) + 2
            if size > LOCALS_MAX_JSON:
                omitted += len(names) - len(local_reprs)
                break
            local_reprs[name] = text

        status = {"v": 1, "event": "prompt", "reason": reason, "pid": os.getpid(),
                  "file": current["file"], "line": current["line"],
                  "function": current["function"], "stack": stack, "frame_index": frame_index,
                  "locals": local_reprs,
                  "exception": None if exc is None else {"type": type(exc).__name__,
                                                         "message": values[-1]},
                  "breakpoints": breakpoints.status(), "errors": state.take_errors(), "notices": take_notices(),
                  "test": state.TEST, "watches": watches,
                  "data_breakpoints": [d.status() for d in DBREAKS]}
        if self._dgym_data_change is not None:
            status["data_change"], self._dgym_data_change = self._dgym_data_change, None
        if (state.MODE == "pytest" or state.TEST) and self._dgym_post_mortem:  # pytest's or another runner's
            status["failed_tests"] = list(state.FAILED)
            if pytest_plugin.LAST_FAILURE is not None:
                status["phase"] = pytest_plugin.LAST_FAILURE[1]
        if omitted:
            status["locals_truncated"] = omitted
        return status

    def do_jump(self, arg):
        # jump moves the current line without resuming: report the next marker as a "step"
        before = self.stack[self.curindex][1] if self.stack else None
        ret = super().do_jump(arg)
        if self.stack and self.stack[self.curindex][1] != before:
            self._dgym_reason = "step"
        return ret

    do_j = do_jump

    # -- logpoints and hit counts ---------------------------------------------------------------

    def break_here(self, frame):
        if not super().break_here(frame):
            return False
        bp = bdb.Breakpoint.bpbynumber[self.currentbp] if self.currentbp else None
        hit, log = getattr(bp, "dgym_hit", None), getattr(bp, "dgym_log", None)
        if hit is None and log is None:
            return True
        bp.dgym_count = getattr(bp, "dgym_count", 0) + 1  # times reached with its condition true
        if hit is not None:
            try:
                ok = eval(hit, {"__builtins__": {}}, {"hit": bp.dgym_count})
            except Exception as e:  # stop, as bdb does for a condition that fails
                state.PENDING_ERRORS.append(f"breakpoint {bp.number}: hit condition {hit!r} failed: "
                                       f"{type(e).__name__}: {e}")
                return True
            if not ok:
                self.currentbp = 0
                return False
        if log is None:
            return True
        self.message(f"[log {rel(frame.f_code.co_filename)}:{frame.f_lineno}] {breakpoints.format_log(log, frame)}")
        self.currentbp = 0
        return False  # a logpoint never stops

    def _dgym_bp_at(self, location):
        """The breakpoint at LOCATION (`file:line` or a line of the current file), made if needed."""
        file, sep, line = location.rpartition(":")
        if not sep:
            file = self.curframe.f_code.co_filename if self.curframe else ""
        elif not os.path.isabs(file):
            file = self.lookupmodule(file) or os.path.join(state.ROOT, file)
        try:
            line = int(line)
        except ValueError:
            self.error(f"bad location {location!r}: give file:line")
            return None
        path = self.canonic(file)
        found = self.get_breaks(path, line)
        if found:
            return found[0]
        if not self.checkline(path, line):
            return None
        err = self.set_break(path, line)
        if err:
            self.error(err)
            return None
        return bdb.Breakpoint.bpbynumber[-1]

    def do_log(self, arg):
        """log [FILE:]LINE MESSAGE
        A logpoint: each time LINE is reached, print MESSAGE with every {expression} in it
        replaced by its value (`log cart.py:42 qty={qty} total={self.total()}`), and go on
        without stopping. A breakpoint already there becomes a logpoint (its condition and hit
        condition still apply); `clear` removes it."""
        location, _, message = arg.strip().partition(" ")
        if not message.strip():
            self.error("usage: log [FILE:]LINE MESSAGE (with {expr} for values)")
            return
        bp = self._dgym_bp_at(location)
        if bp is not None:
            bp.dgym_log = message.strip()
            self.message(f"Logpoint {bp.number} at {rel(bp.file)}:{bp.line}: {bp.dgym_log}")

    def do_hit(self, arg):
        """hit BPNUMBER [CONDITION]
        Stop at breakpoint BPNUMBER only when its hit count (the times it was reached with its
        condition true) meets CONDITION: `3` (the 3rd time), `>= 5`, `% 10 == 0`, or any
        expression on `hit`. Without CONDITION, the hit condition is removed."""
        number, _, cond = arg.strip().partition(" ")
        try:
            bp = self.get_bpbynumber(number)
        except ValueError as e:
            self.error(str(e))
            return
        if not cond.strip():
            bp.dgym_hit = None
            self.message(f"Breakpoint {bp.number} stops at every hit")
            return
        expr = breakpoints.hit_expression(cond)
        msg = breakpoints.syntax_error(expr)
        if msg:
            self.error(f"bad hit condition {cond.strip()!r}: {msg}")
            return
        bp.dgym_hit, bp.dgym_count = expr, 0
        self.message(f"Breakpoint {bp.number} stops when {expr}")

    # -- watch expressions ----------------------------------------------------------------------

    def do_watch(self, arg):
        """watch [EXPRESSION]
        Show EXPRESSION's value (in the selected frame) at every stop; without one, list them."""
        expr = arg.strip()
        if not expr:
            self.message("\n".join(f"{i}: {e}" for i, e in enumerate(state.WATCHES, 1)) or "No watch expressions.")
            return
        msg = breakpoints.syntax_error(expr)
        if msg:
            self.error(f"bad watch expression {expr!r}: {msg}")
            return
        if expr not in state.WATCHES:
            state.WATCHES.append(expr)
        self.message(f"Watching {expr}")

    def do_unwatch(self, arg):
        """unwatch [EXPRESSION | NUMBER]
        Stop watching one expression (by its text or its number in `watch`'s list), or all."""
        expr = arg.strip()
        if not expr:
            del state.WATCHES[:]
            self.message("No watch expressions.")
        elif expr in state.WATCHES or (expr.isdigit() and 1 <= int(expr) <= len(state.WATCHES)):
            gone = expr if expr in state.WATCHES else state.WATCHES[int(expr) - 1]
            state.WATCHES.remove(gone)
            self.message(f"Not watching {gone}")
        else:
            self.error(f"not watched: {expr}")

    # -- data breakpoints -----------------------------------------------------------------------

    def do_dbreak(self, arg):
        """dbreak [EXPRESSION]
        A data breakpoint: stop as soon as EXPRESSION's value changes, showing the old and new
        values and the line that changed it. A variable of this frame is watched until the
        frame returns; an attribute or item (`cart.total`, `prices["tea"]`) on that object
        wherever it changes; a module-level name likewise. Without EXPRESSION, list them."""
        expr = arg.strip()
        if not expr:
            self.message("\n".join(f"{d.number}: {d.expr} = {d.shown(d.value)} ({d.scope}, set at {d.where})"
                                   for d in DBREAKS) or "No data breakpoints.")
            return
        if self.curframe is None:
            self.error("no frame to watch in")
            return
        try:
            db = databreak.DataBreakpoint(expr, self.curframe)
        except Exception as e:
            self.error(f"cannot watch {expr!r}: {type(e).__name__}: {e}")
            return
        DBREAKS.append(db)
        innermost = self.stack[-1][0] if self.stack else self.curframe
        databreak.PREV[0] = (innermost.f_code.co_filename, innermost.f_lineno)  # what runs next
        databreak.update_events()
        how = "its frame returns" if db.scope == "frame" else "it is cleared"
        self.message(f"Data breakpoint {db.number}: stop when {expr} changes (now {db.shown(db.value)}; "
                     f"until {how})")

    def do_dclear(self, arg):
        """dclear [NUMBER]
        Remove a data breakpoint, or all of them."""
        arg = arg.strip()
        gone = [d for d in DBREAKS if not arg or str(d.number) == arg]
        if arg and not gone:
            self.error(f"no data breakpoint {arg}")
            return
        for d in gone:
            DBREAKS.remove(d)
        databreak.update_events()
        self.message("Deleted data breakpoint" + ("s " if len(gone) != 1 else " ")
                     + ", ".join(str(d.number) for d in gone) if gone else "No data breakpoints.")

    def _dgym_data_stop(self, frame, change):
        """A watched value changed (sys.monitoring's callback): stop at the line about to run."""
        databreak.PAUSED = True
        try:
            self._dgym_data_change = change
            self._dgym_reason, self._dgym_exc = "data", None
            self.interaction(frame, None)
        finally:
            databreak.PAUSED = False
        if self.quitting:
            raise bdb.BdbQuit
        if not (self.stopframe is self.botframe and self.stoplineno == -1):
            # `n`, `s`, `r`... from here: bdb's tracing takes over, as after set_trace()
            self._dgym_skip_line = (frame, frame.f_lineno)
            self._dgym_trace_from(frame)

    def trace_dispatch(self, frame, event, arg):
        skip = self._dgym_skip_line
        if skip is not None:
            self._dgym_skip_line = None
            if event == "line" and skip == (frame, frame.f_lineno):
                return self.trace_dispatch  # the line the data breakpoint stopped at, seen again
        if DBREAKS and databreak.MONITOR_ID is None and not databreak.PAUSED:
            return self._dgym_trace_data(frame, event, arg)
        result = super().trace_dispatch(frame, event, arg)
        if result is not None and compat.PY < (3, 10) and sys.gettrace() is None:
            # `c` with no breakpoint turned tracing off during this event, and set_continue took
            # f_trace off the frames; returning a function would put it back on this one, and
            # 3.6-3.9 then report its line as the last one traced (a post-mortem at line 1).
            return None
        return result

    def _dgym_trace_data(self, frame, event, arg):
        """The settrace fallback (before 3.12): the repo's lines are traced while data breakpoints exist."""
        if event == "call" and self.stoplineno == -1 and self.botframe is not None and frame is not self.stopframe:
            # running on after `c`: bdb would only look for breakpoints in this file
            if databreak.code_is_checked(frame.f_code):
                return self.trace_dispatch
            if not self.breaks.get(self.canonic(frame.f_code.co_filename)):
                return None
        if event == "line" and (databreak.code_is_checked(frame.f_code) or any(d.frame is frame for d in DBREAKS)) \
                and threading.get_ident() == databreak.MAIN_THREAD:
            change = databreak.check_data(frame, frame.f_lineno)
            if change is not None:
                self._dgym_data_change = change
                self.set_step()  # bdb stops at this line: user_line says "data"
        elif event == "return" and (databreak.code_is_checked(frame.f_code) or any(d.frame is frame for d in DBREAKS)):
            change = databreak.check_data(frame, frame.f_lineno)  # its last line's change: the next may be elsewhere
            if change is not None:
                self._dgym_data_change = change
                self.set_step()  # bdb stops at this return: user_return says "data"
            if any(d.frame is frame for d in DBREAKS):
                databreak.frame_returned(frame)
        if event == "line" and self.stoplineno == -1 and self._dgym_data_change is None and \
                not self.breaks.get(self.canonic(frame.f_code.co_filename)):
            return self.trace_dispatch  # running on after `c`, no breakpoint in this file: nothing for bdb
        result = super().trace_dispatch(frame, event, arg)
        if result is None and event == "call" and DBREAKS and (
                databreak.code_is_checked(frame.f_code) or any(d.frame is frame for d in DBREAKS)):
            return self.trace_dispatch
        return result

    # -- breakpoint command errors go into the marker too --------------------------------------

    def onecmd(self, line):
        self._dgym_cmd = line.split()[0] if line.strip() else ""
        try:
            return super().onecmd(line)
        finally:
            self._dgym_cmd = ""

    def error(self, msg):
        if self._dgym_cmd in _BP_COMMANDS:
            state.PENDING_ERRORS.append(str(msg))
        super().error(msg)

    # -- leaving ---------------------------------------------------------------------------------

    def do_quit(self, arg):
        state.QUIT = state.QUIT or not self._dgym_nested  # q in `debug` only leaves the inner debugger
        ret = super().do_quit(arg)
        if state.MODE == "pytest" and self is state.ACTIVE:
            # Stop the whole session (as pytest's own wrapper does for its debugger instances);
            # a bare BdbQuit would only fail the current test and let pytest go on.
            from _pytest import outcomes
            outcomes.exit("Quitting debugger")
        return ret

    do_q = do_exit = do_quit

    def do_run(self, arg):
        # pdb would re-run the program in this process; here it ends, and the host (told by
        # "restart": true in the exit marker) spawns a fresh one.
        if not self._dgym_nested:
            if arg.strip():
                import shlex
                try:
                    state.RESTART_ARGS = shlex.split(arg)
                except ValueError as e:
                    self.error(f"cannot restart with {arg!r}: {e}")
                    return None
            state.RESTART = True
        return self.do_quit(arg)

    do_restart = do_run

    def do_EOF(self, arg):
        state.QUIT = state.QUIT or not self._dgym_nested
        return super().do_EOF(arg)

    def do_dgym_children(self, arg):
        """dgym_children EXPR
        The items of a container, or the attributes of an object, as one JSON line: each with
        its name, an expression for it, a short repr, and whether it has children of its own.
        (What the UI's variable viewer expands, one level at a time.)"""
        try:
            value = eval(arg, self.curframe.f_globals, self.curframe_locals)
        except BaseException as e:  # a bad expression is the person's to fix, never fatal
            self.error(f"{type(e).__name__}: {e}")
            return
        if isinstance(value, dict):
            items = [(repr(k), f"({arg})[{k!r}]", v) for k, v in itertools.islice(value.items(), reprs.CHILDREN_MAX)]
        elif isinstance(value, (list, tuple)):
            items = [(str(i), f"({arg})[{i}]", v) for i, v in enumerate(value[:reprs.CHILDREN_MAX])]
        elif isinstance(value, (set, frozenset)):
            items = [(str(i), None, v) for i, v in enumerate(itertools.islice(value, reprs.CHILDREN_MAX))]
        else:
            attrs = getattr(value, "__dict__", None)
            attrs = attrs if isinstance(attrs, dict) else {}
            items = [(k, f"({arg}).{k}", v) for k, v in itertools.islice(attrs.items(), reprs.CHILDREN_MAX)]
        children = [{"name": name, "expr": expr, "repr": reprs.safe_repr(v), "expandable": reprs.has_children(v)}
                    for name, expr, v in items]
        total = len(value) if isinstance(value, (dict, list, tuple, set, frozenset)) else len(items)
        self.message(json.dumps({"children": children, "total": total}, ensure_ascii=True))

    def do_debug(self, arg):
        # pdb's own do_debug builds a plain pdb.Pdb, whose prompt would carry no marker.
        sys.settrace(None)
        p = DgymPdb(self.completekey, self.stdin, self.stdout)
        p._dgym_base_prompt = "(%s) " % self._dgym_base_prompt.strip()
        p._dgym_nested = True
        self.message("ENTERING RECURSIVE DEBUGGER")
        try:
            sys.call_tracing(p.run, (arg, self.curframe.f_globals, self.curframe_locals))
        except Exception:
            self._error_exc()
        self.message("LEAVING RECURSIVE DEBUGGER")
        sys.settrace(self.trace_dispatch)
        self.lastcmd = p.lastcmd

    # `help <command>` reads these docstrings
    for _name in ("do_jump", "do_quit", "do_EOF", "do_debug", "do_run"):
        locals()[_name].__doc__ = getattr(pdb.Pdb, _name).__doc__
    del _name


def stop_here_from_program(*, header=None):
    """pdb.set_trace()/breakpoint() in the program: stop in the running debugger."""
    if not state.is_main():
        return  # breakpoint() in a forked child: only the main process is debugged
    dbg = state.ACTIVE if (state.ACTIVE is not None and not state.ACTIVE.quitting) else DgymPdb()
    if header is not None:
        dbg.message(header)
    dbg.set_trace(sys._getframe().f_back)


