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
