"""The protocol between the host and the debugger in the sandbox: its one place of record.

The debugger is the stdlib pdb, plus one machine-readable status line before every prompt.

Runs INSIDE the sandbox as the entrypoint, with cwd = the repo root (standard library only,
CPython 3.6 to 3.13):

    python3 dgym_pdb.py script.py [args...]     like `python -m pdb script.py`
    python3 dgym_pdb.py -m module [args...]     like `python -m pdb -m module`
    python3 dgym_pdb.py --pytest [args...]      pytest in-process, post-mortem on failures

Ready: once its terminal is set up (no echo, no line limit) the shim prints READY,
ESC _ "dgym:ready" ESC \\, and only then reads the handshake.

Handshake: the first two stdin lines are the session nonce (hex) and the JSON of what to restore:
a list of breakpoints, or {"breakpoints": [...], "watches": [expression, ...], "run_to": {"file",
"line", "count"}}: with run_to, the program runs (after its start) to the count-th arrival at
file:line, every breakpoint paused until it stops there or anywhere else (a recorded stop, again). The nonce lives only in `state.NONCE`: never in argv or os.environ.

Before every `(Pdb) ` prompt one line is printed: ESC _ "dgym:<nonce>:<json>" ESC \\ (an APC
string, ignored by terminals). When the program ends, an {"event": "exit"} marker is printed;
nothing is ever restarted here (the host spawns a new process instead). The process exits after
it only when it is to be restarted (or is a forked child); otherwise the marker says "stays", a
prompt follows it, and the process answers the commands that run no code (ended.py): each answer
ends with an {"event": "ended"} marker and a prompt. A command that runs the program ends it with
an exit marker saying "restart"; pdb's `EOF`, or the terminal closing, ends it quietly.

The JSON of a marker (version "v": 1):

  prompt  {"event": "prompt", "reason", "pid", "file", "line", "function", "stack", "frame_index",
           "locals", "exception", "breakpoints", "errors", "test"[, "failed_tests"]
           [, "locals_truncated"]}
    reason        why pdb stopped: "start" | "breakpoint" | "step" | "return" | "exception" |
                  "post_mortem" | "data" (a data breakpoint's value changed) | "command" (a
                  command that did not move the program)
    file, line, function   the selected frame; file relative to the repo root when inside it
    stack         [{"file", "line", "function"}], outermost first, debugger frames left out;
                  frame_index is the selected one
    locals        {name: short repr} of the selected frame (capped; "locals_truncated": N left out)
    exception     {"type", "message"} of the exception being looked at, or null
    breakpoints   [{"number", "file", "line", "cond", "enabled", "temporary", "ignore", "hits",
                    "log", "hit"}]; "log": a logpoint's message template (it prints, never stops),
                  "hit": a hit condition on `hit`, the times reached with its condition true
    watches       [{"expr", "value" | "error"}]: the watch expressions, in the selected frame
    data_breakpoints  [{"number", "expr", "scope" (frame | object | global), "where", "value"}]
    data_change   at a "data" stop: {"number", "expr", "old", "new", "by" (file:line that ran last)}
    errors        breakpoint problems since the last marker (one line each)
    notices       what the person should know since the last marker, one line each: a module of
                  the repo imported from elsewhere (an installed copy: breakpoints in the repo's
                  never fire), a test file pytest could not collect
    phase         pytest mode, in a post-mortem: the phase that failed, "collect" | "setup" |
                  "call" | "teardown" (a collection error's `continue` goes on to the next file)
    test          pytest mode: the node id of the test being run or post-mortem'd
                  ("tests/test_x.py::test_y"); under another test runner (runners.py), the
                  failing test's id in its post-mortem ("tests.test_x.T.test_y" for unittest,
                  "sympy/x/tests/test_y.py::test_z" for sympy's); else null
A post-mortem opens at the deepest frame of the repo's own code (not unittest's or a library's:
`down` goes on into them); pytest's "could not collect" error opens at the import that failed.
    failed_tests  in a failing test's post-mortem (pytest, or another runner): the ids that failed
                  so far in this run, in order (collection errors by the file's node id), as pytest's --lf
                  would re-run them
  exit    {"event": "exit", "code", "pid"[, "errors"][, "restart", "restart_args"]
           [, "failed_tests"]}
    code          the program's exit status; null when the person quit (q, EOF, restart)
    restart       true when the person typed pdb's `restart` / `run`: the host should spawn a
                  fresh process (breakpoints restored); "restart_args" is the argument list
                  typed after it (`restart -k slow`), when any, to replace the program's
    failed_tests  pytest mode, or a runner's tests failed: every test id that failed in this run
    stays         true: the process stays after the program's end, a prompt follows (ended.py),
                  and the marker carries "breakpoints", "watches", "errors" and "notices" as below
  ended   {"event": "ended", "code", "pid", "stays", "breakpoints", "watches", "errors", "notices"}: after a
          command answered once the program had ended (`b`, `p`...): code is the program's exit
          status, breakpoints as in a prompt marker, watches the expressions (strings) kept
"""

import json
import os
import re
import sys

from . import state
from .breakpoints import syntax_error
from .terminal import flush_program_output

READY = "\x1b_dgym:ready\x1b\\"  # the terminal is set up: the host may send the handshake


def marker(payload):
    text = json.dumps(payload, ensure_ascii=True, separators=(",", ":"))
    return f"\x1b_dgym:{state.NONCE}:{text}\x1b\\"


def write_raw(text):
    try:
        out = sys.__stdout__
        out.write(text)
        out.flush()
    except Exception:  # the program closed or replaced stdout: fall back to the fd
        os.write(1, text.encode("utf-8", "replace"))


def announce_ready():
    write_raw(READY + "\n")


def handshake():
    """Line 1: the nonce. Line 2: what to restore (JSON: breakpoints, watches, run_to and the
    per-test time limit). Returns (breakpoints, run_to)."""
    nonce = sys.stdin.readline().strip()
    if not re.fullmatch(r"[0-9a-fA-F]{16,64}", nonce):
        sys.stderr.write("dgym: bad handshake (no nonce on the first line)\n")
        sys.exit(2)
    state.NONCE = nonce
    raw = sys.stdin.readline().strip()
    try:
        specs = json.loads(raw) if raw else []
    except ValueError as e:
        state.PENDING_ERRORS.append(f"breakpoints: bad JSON: {e}")
        return [], None
    run_to = None
    if isinstance(specs, dict):  # {"breakpoints": [...], "watches": [...], "run_to": {...}}
        for expr in specs.get("watches") or ():
            if isinstance(expr, str) and not syntax_error(expr) and expr not in state.WATCHES:
                state.WATCHES.append(expr)
        run_to = specs.get("run_to")
        limit = specs.get("test_timeout")
        if isinstance(limit, (int, float)) and not isinstance(limit, bool) and limit > 0:
            state.TEST_TIMEOUT = float(limit)
        specs = specs.get("breakpoints") or []
    return specs, run_to


def emit_exit(code):
    """The last marker: the program is over (code None: the person quit)."""
    if not state.is_main():
        return  # a forked child that ran to the end of the program: the host waits for the parent
    sys.settrace(None)
    flush_program_output()
    payload = {"v": 1, "event": "exit", "code": code, "pid": os.getpid()}
    errors = state.take_errors()
    if errors:
        payload["errors"] = errors
    if state.RESTART:
        payload["restart"] = True
        if state.RESTART_ARGS:
            payload["restart_args"] = state.RESTART_ARGS
    if state.MODE == "pytest" or state.FAILED:
        payload["failed_tests"] = list(state.FAILED)
    write_raw(marker(payload) + "\n")
