"""Breakpoints (sandbox/box/breakpoints.py): restored from the host's list, set and cleared at the
prompt, conditions, ignore counts, logpoints, hit counts, watch expressions, running to a
recorded stop.

Driven for real over a pty, on CPython 3.11-3.13 (the driver is in tests/test_shim.py).
"""

from __future__ import annotations


from test_shim import CART, PROG, bp, python, run, write  # noqa: F401  (fixtures)


def test_conditional_breakpoint(python, run, tmp_path):
    write(tmp_path, "prog.py", PROG)
    shim = run(python, ["prog.py"], [bp(3, cond="a > 1")])
    assert shim.read()[1]["breakpoints"][0]["cond"] == "a > 1"
    _, st = shim.cmd("c")
    assert (st["reason"], st["line"], st["locals"]) == ("breakpoint", 3, {"a": "2"})
    assert shim.cmd("c")[1]["event"] == "exit"


def test_disabled_breakpoint_does_not_stop(python, run, tmp_path):
    write(tmp_path, "prog.py", PROG)
    shim = run(python, ["prog.py"], [bp(3, enabled=False)])
    assert shim.read()[1]["breakpoints"][0]["enabled"] is False
    out, st = shim.cmd("c")
    assert st["event"] == "exit" and st["code"] == 0 and "y is 2" in out


def test_temporary_breakpoint_disappears(python, run, tmp_path):
    write(tmp_path, "prog.py", PROG)
    shim = run(python, ["prog.py"], [bp(3, temporary=True)])
    assert shim.read()[1]["breakpoints"][0]["temporary"] is True
    out, st = shim.cmd("c")
    assert (st["reason"], st["line"], st["breakpoints"]) == ("breakpoint", 3, [])
    assert "Deleted breakpoint 1" in out
    assert shim.cmd("c")[1]["event"] == "exit"


def test_ignore_count(python, run, tmp_path):
    write(tmp_path, "prog.py", PROG)
    shim = run(python, ["prog.py"], [bp(3, ignore=1)])
    assert shim.read()[1]["breakpoints"][0]["ignore"] == 1
    _, st = shim.cmd("c")
    assert st["locals"] == {"a": "2"}
    assert st["breakpoints"][0]["hits"] == 2 and st["breakpoints"][0]["ignore"] == 0


def test_break_and_clear_commands(python, run, tmp_path):
    write(tmp_path, "prog.py", PROG)
    shim = run(python, ["prog.py"])
    shim.read()
    out, st = shim.cmd("b 7")
    assert "Breakpoint 1 at" in out and st["reason"] == "command" and st["line"] == 1
    assert st["breakpoints"] == [{**bp(7), "number": 1, "hits": 0}]
    out, st = shim.cmd("b 5")  # a blank line: pdb refuses, the marker says why
    assert "***" in out and st["errors"] and len(st["breakpoints"]) == 1
    out, st = shim.cmd("cl 1")
    assert "Deleted breakpoint 1" in out and st["breakpoints"] == [] and not st["errors"]


def test_bad_breakpoints_are_reported_not_fatal(python, run, tmp_path):
    write(tmp_path, "prog.py", PROG)
    shim = run(python, ["prog.py"], [bp(5), bp(1, file="missing.py"), bp(3), bp(99)])
    _, st = shim.read()
    assert st["reason"] == "start" and len(st["errors"]) == 3
    assert "prog.py:5" in st["errors"][0] and "missing.py" in st["errors"][1]
    # list position i always gets number i+1
    assert [(b["number"], b["line"]) for b in st["breakpoints"]] == [(3, 3)]
    _, st = shim.cmd("c")
    assert st["reason"] == "breakpoint" and not st["errors"]


def test_watch_expressions_are_evaluated_at_every_stop(python, run, tmp_path):
    write(tmp_path, "prog.py", CART)
    # watches come with the handshake (kept across restarts by the host), others are typed
    shim = run(python, ["prog.py"], {"breakpoints": [bp(14)], "watches": ["RATE", "1 +"]})
    _, st = shim.read()
    assert st["watches"] == [{"expr": "RATE", "error": "NameError: name 'RATE' is not defined"}]
    out, st = shim.cmd("watch acc * 10")
    assert "Watching acc * 10" in out
    out, st = shim.cmd("watch 1 +")
    assert out.startswith("*** bad watch expression") and st["errors"]
    _, st = shim.cmd("c")
    assert st["watches"] == [{"expr": "RATE", "value": "1"}, {"expr": "acc * 10", "value": "10"}]
    _, st = shim.cmd("up")  # the selected frame: main() has no acc
    assert st["watches"][1] == {"expr": "acc * 10", "error": "NameError: name 'acc' is not defined"}
    out, _ = shim.cmd("watch")
    assert "1: RATE" in out and "2: acc * 10" in out
    _, st = shim.cmd("unwatch 1")
    assert [w["expr"] for w in st["watches"]] == ["acc * 10"]
    _, st = shim.cmd("unwatch")
    assert st["watches"] == []


def test_logpoints_print_and_never_stop(python, run, tmp_path):
    write(tmp_path, "prog.py", CART)
    # one restored from the host's registry, one typed; a logpoint with a hit condition
    shim = run(python, ["prog.py"], [bp(14, log="p={p} acc={acc!r} {{literal}} {nope}")])
    _, st = shim.read()
    assert st["breakpoints"][0]["log"] == "p={p} acc={acc!r} {{literal}} {nope}"
    out, st = shim.cmd("log prog.py:25 total is {cart.total}")
    assert "Logpoint 2 at prog.py:25" in out and st["breakpoints"][1]["log"] == "total is {cart.total}"
    shim.cmd("hit 1 >= 3")
    out, st = shim.cmd("c")
    assert st["event"] == "exit" and st["code"] == 0
    lines = [ln.strip() for ln in out.replace("\r", "").splitlines() if ln.startswith("[log")]
    assert lines == ["[log prog.py:14] p=3 acc=6 {literal} <NameError: name 'nope' is not defined>",
                     "[log prog.py:14] p=4 acc=4 {literal} <NameError: name 'nope' is not defined>",
                     "[log prog.py:25] total is 14"]
    assert "total 14" in out


def test_hit_count_conditions(python, run, tmp_path):
    write(tmp_path, "prog.py", CART)
    shim = run(python, ["prog.py"], [bp(13, hit="% 2 == 0"), bp(14, cond="p > 1", hit="2")])
    _, st = shim.read()
    assert [b.get("hit") for b in st["breakpoints"]] == ["hit % 2 == 0", "hit == 2"]
    _, st = shim.cmd("c")  # line 13 the 2nd time: p == 2
    assert (st["line"], st["locals"]["p"], st["reason"]) == (13, "2", "breakpoint")
    _, st = shim.cmd("c")  # line 14 when p > 1 for the 2nd time: p == 3
    assert (st["line"], st["locals"]["p"]) == (14, "3")
    _, st = shim.cmd("c")  # line 13 the 4th time: p == 4
    assert (st["line"], st["locals"]["p"]) == (13, "4")
    out, st = shim.cmd("hit 1 ==")
    assert out.startswith("*** bad hit condition") and st["errors"]
    _, st = shim.cmd("hit 1")
    assert "hit" not in st["breakpoints"][0]
    assert shim.cmd("c")[1]["event"] == "exit"


def test_run_to_the_nth_arrival_with_other_breakpoints_paused(python, run, tmp_path):
    write(tmp_path, "prog.py", CART)
    # the 3rd time line 14 runs, though a breakpoint at line 13 would stop every time before
    shim = run(python, ["prog.py"], {"breakpoints": [bp(13), bp(25, log="then {RATE}")],
                                     "run_to": {"file": "prog.py", "line": 14, "count": 3}})
    _, st = shim.read()
    assert st["reason"] == "start"
    assert [(b["number"], b["line"], b["enabled"]) for b in st["breakpoints"]] == [(1, 13, True), (2, 25, True)]
    _, st = shim.cmd("c")
    assert (st["reason"], st["line"], st["locals"]["p"], st["locals"]["acc"]) == ("breakpoint", 14, "3", "6")
    assert [(b["number"], b["enabled"]) for b in st["breakpoints"]] == [(1, True), (2, True)]  # as they were
    _, st = shim.cmd("c")  # from here on, the breakpoints work again
    assert (st["line"], st["locals"]["p"]) == (13, "4")
    out, st = shim.cmd("c")
    assert "[log prog.py:25] then 2" in out and st["event"] == "exit"


def test_run_to_a_place_never_reached_ends_the_program(python, run, tmp_path):
    write(tmp_path, "prog.py", CART)
    shim = run(python, ["prog.py"], {"breakpoints": [], "run_to": {"file": "prog.py", "line": 14, "count": 9}})
    shim.read()
    out, st = shim.cmd("c")
    assert st["event"] == "exit" and "total 14" in out
