"""Reprs of the program's values in the markers (sandbox/box/reprs.py): capped, failing, slow.

Driven for real over a pty, on CPython 3.11-3.13 (the driver is in tests/test_shim.py).
"""

from __future__ import annotations

import time

from test_shim import bp, python, run, write  # noqa: F401  (fixtures)


def test_hostile_reprs_are_capped(python, run, tmp_path):
    write(tmp_path, "prog.py", '''
        import time
        class Bad:
            def __repr__(self):
                raise ValueError("no")
        class Rec:
            def __repr__(self):
                return repr(self)
        class Slow:
            def __repr__(self):
                time.sleep(10)
                return "slow"
        def f():
            bad, rec, slow, big, text = Bad(), Rec(), Slow(), {i: i for i in range(1000)}, "x" * 5000
            after = [1, Bad()]
            return 0
        f()
    ''')
    shim = run(python, ["prog.py"], [bp(15)])
    shim.read()
    shim.child.sendline("c")
    t0 = time.monotonic()
    _, st = shim.read()
    assert time.monotonic() - t0 < 2.0
    loc = st["locals"]
    assert loc["bad"] == "<repr failed: ValueError>"
    assert loc["rec"] == "<repr failed: RecursionError>"
    assert loc["slow"] == "<repr timed out>"
    assert loc["after"] == "[1, <repr failed: ValueError>]"  # values after the slow one still come
    assert len(loc["big"]) <= 200 and len(loc["text"]) <= 200
    shim.child.sendline("p 1")
    t0 = time.monotonic()
    _, st = shim.read()
    assert time.monotonic() - t0 < 1.0  # the slow value is not retried within the same stop
    assert st["locals"]["slow"] == "<repr timed out>"


def test_plain_values_are_shown_without_the_helper_thread(python, run, tmp_path):
    """Numbers, strings, paths, dates and built-in containers of them cannot run the program's
    code: their reprs come at once, no helper thread (its start was most of a step's marker).
    A value of the program's own (even deep in a list) still goes through the thread."""
    write(tmp_path, "prog.py", '''
        import datetime, pathlib, threading
        starts = []
        _start = threading.Thread.start
        def start(self):
            starts.append(self.name)
            _start(self)
        threading.Thread.start = start
        class Mine:
            def __repr__(self):
                return "mine"
        def plain():
            n, s, p, day, nested, mod = 1.5, "x", pathlib.Path("/a"), datetime.date(2026, 1, 2), {"k": [1, (2, None)]}, datetime
            return 0
        def mixed():
            deep = [1, [Mine()]]
            return 0
        plain()
        mixed()
    ''')
    shim = run(python, ["prog.py"], [bp(13), bp(16)])
    shim.read()
    _, st = shim.cmd("c")
    assert st["line"] == 13
    loc = st["locals"]
    assert (loc["n"], loc["s"], loc["p"], loc["day"], loc["nested"]) == (
        "1.5", "'x'", "PosixPath('/a')", "datetime.date(2026, 1, 2)", "{'k': [1, (2, None)]}")
    assert loc["mod"].startswith("<module 'datetime'")
    out, _ = shim.cmd("p starts")
    assert "[]" in out  # no thread for either marker
    _, st = shim.cmd("c")
    assert st["line"] == 16 and st["locals"]["deep"] == "[1, [mine]]"
    out, _ = shim.cmd("p starts")
    assert "dgym-repr" in out
