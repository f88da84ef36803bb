"""After the program: the process stays and answers, without running any code, the commands that
need none. Breakpoints (b, tbreak, cl, condition, ignore, enable, disable, log, hit) and watch
expressions are set on pdb's own objects, checked against the file, and reported in the marker,
so the host keeps them for the next run; `p`, `where` and the like say there is no frame. Only a
command that runs the program (c, n, s, restart, run...) ends this process, with "restart" in its
exit marker: the host starts a fresh one, breakpoints restored (as `python -m pdb` restarts the
program after its end, but in a clean process).

The host also starts this shell alone (`dgym_pdb.py --ended CODE`) when no process is left to
ask: the program was killed, or none was ever run.
"""

import os
import sys

from . import breakpoints, protocol, state
from .origins import rel, take_notices
from .terminal import flush_program_output

# Commands answered here: they change or list breakpoints and watches, or explain themselves.
KEPT = frozenset({"b", "break", "tbreak", "cl", "clear", "condition", "ignore", "enable", "disable",
                  "log", "hit", "watch", "unwatch", "h", "help", "alias", "unalias", "dclear"})
# Commands that run the program: the host starts it again; if one reaches this shell, it ends so
# that the host does.
RUNS = frozenset({"c", "cont", "continue", "n", "next", "s", "step", "r", "return", "unt", "until",
                  "j", "jump", "restart", "run"})
QUITS = frozenset({"q", "quit", "exit"})


def ended_how(code):
    if code is None:
        return "the program was stopped (q)"
    return f"the program ended (exit code {code})"


def no_frame(code):
    return (f"There is no frame: {ended_how(code)}. `c` runs it again to the kept breakpoints; "
            "b, tbreak, cl, condition, ignore, enable, disable, log, hit and watch are kept for that run.")


def marker(code, first=False):
    payload = {"v": 1, "event": "exit" if first else "ended", "code": code, "pid": os.getpid(),
               "stays": True, "breakpoints": breakpoints.status(), "watches": list(state.WATCHES),
               "errors": state.take_errors(), "notices": take_notices()}
    if first:
        if state.MODE == "pytest" or state.FAILED:
            payload["failed_tests"] = list(state.FAILED)
    return protocol.marker(payload)


def serve(dbg, code, status=0):
    """Answer commands until one runs the program, or the host hangs up (or sends pdb's `EOF`):
    then the process exits with `status`, the program's. Never returns."""
    sys.settrace(None)
    flush_program_output()
    dbg.curframe = None  # pdb's commands look at it: there is none
    _prompt(dbg, marker(code, first=True))
    tty = state.TTY_IN or sys.__stdin__
    while True:
        try:
            raw = tty.readline()
        except (OSError, ValueError):  # the terminal hung up
            raw = ""
        line = raw.rstrip("\r\n")
        word = line.strip().split(" ", 1)[0] if line.strip() else ""
        if not raw or word == "EOF":  # the host closed the terminal, or said so
            flush_program_output()
            os._exit(status)
        if word in RUNS:
            args = line.strip()[len(word):].strip()
            if word in ("restart", "run") and args:
                import shlex
                try:
                    state.RESTART_ARGS = shlex.split(args)
                except ValueError:
                    pass  # the host reads its own copy of what was typed
            state.RESTART = True
            protocol.emit_exit(None)
            os._exit(0)
        if word in QUITS:
            dbg.message(f"{ended_how(code).capitalize()}: there is nothing to quit. "
                        "`c` runs it again to the kept breakpoints.")
        elif word == "dbreak":
            dbg.error("a data breakpoint watches a value in a running frame, and " + ended_how(code) +
                      ": `c` runs it again; set `dbreak EXPR` at a stop of that run")
        elif word in KEPT or not word:
            if word:
                _run_kept(dbg, line, code)
        else:
            dbg.error(no_frame(code))
        _prompt(dbg, marker(code))


def _prompt(dbg, line):
    """The marker and pdb's prompt, through pdb's own output (the line is then not left open)."""
    dbg.stdout.write(line + "\n" + dbg._dgym_base_prompt)
    dbg.stdout.flush()


def _run_kept(dbg, line, code):
    try:
        dbg.onecmd(line)
    except Exception as e:  # a pdb of some version looked for a frame after all
        dbg.error(f"'{line.strip()}' needs a frame here ({type(e).__name__}: {e}); {ended_how(code)}: "
                  "give FILE:LINE, or `c` to run it again")


def check_line(dbg, filename, lineno):
    """pdb's checkline with no frame: the file must exist, and the line hold code (as the next
    run's restore will require), else a clear error. Returns the line, or 0."""
    path = os.path.abspath(filename)
    if not os.path.isfile(path):
        dbg.error(f"{rel(filename)}: no such file")
        return 0
    lines = breakpoints._code_lines(path)
    if lines is None:
        dbg.error(f"{rel(filename)} does not compile: no breakpoint can be set in it")
        return 0
    if lineno not in lines:
        later = sorted(n for n in lines if n > lineno)
        hint = f"; the next line with code is {later[0]}" if later else ""
        dbg.error(f"{rel(filename)}:{lineno}: no code on that line{hint}")
        return 0
    return lineno
