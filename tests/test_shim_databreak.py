"""Data breakpoints (sandbox/box/databreak.py): stops where a value changes, with sys.monitoring
(3.12+) and the settrace fallback.

Driven for real over a pty, on CPython 3.11-3.13 (the driver is in tests/test_shim.py).
"""

from __future__ import annotations

import pytest

from test_shim import CART, bp, python, pytest_python, run, stopped_at, write  # noqa: F401  (fixtures)


@pytest.mark.parametrize("backend", ["auto", "settrace"])
def test_data_breakpoints_stop_where_a_value_changes(python, run, tmp_path, backend):
    write(tmp_path, "prog.py", CART)
    env = {"DGYM_DATA_SETTRACE": "1"} if backend == "settrace" else {}
    shim = run(python, ["prog.py"], [bp(11)], env_extra=env)
    shim.read()
    _, st = shim.cmd("c")
    assert st["line"] == 11
    out, st = shim.cmd("dbreak cart.total")
    assert "Data breakpoint 1: stop when cart.total changes (now 0" in out
    assert st["data_breakpoints"] == [{"number": 1, "expr": "cart.total", "scope": "object",
                                       "where": "prog.py:11 in add", "value": "0"}]
    shim.cmd("dbreak acc")  # a local not yet set: its first value is a change
    shim.cmd("cl 1")
    _, st = shim.cmd("c")
    assert (st["reason"], st["line"]) == ("data", 12)
    change = st["data_change"]
    assert change["old"].startswith("<") and "acc" in change["old"]  # it had no value yet
    assert change == {"number": 2, "expr": "acc", "old": change["old"], "new": "0", "by": "prog.py:11"}
    out, st = shim.cmd("c")  # the line that changed it ran; pdb is at the next one, not yet run
    assert (st["reason"], st["line"], st["locals"]["acc"]) == ("data", 14, "1")
    assert out.startswith("Data breakpoint 2: acc changed from 0 to 1 (by prog.py:13)\r\n> ")
    assert st["data_change"]["expr"] == "acc" and st["data_change"]["by"] == "prog.py:13"
    _, st = shim.cmd("c")
    assert (st["line"], st["data_change"]) == (15, {"number": 1, "expr": "cart.total", "old": "0", "new": "1",
                                                    "by": "prog.py:14"})
    _, st = shim.cmd("n")  # stepping from a data stop goes on normally
    assert (st["reason"], st["line"]) == ("step", 12)
    assert "data_change" not in st
    shim.cmd("dclear 2")
    shim.cmd("dbreak cart.items")  # a list changed in place
    _, st = shim.cmd("c")
    assert (st["line"], st["data_change"]["expr"]) == (15, "cart.total")
    _, st = shim.cmd("c")
    assert st["data_change"] == {"number": 3, "expr": "cart.items", "old": "[1]", "new": "[1, 2]", "by": "prog.py:15"}
    shim.cmd("dclear")
    _, st = shim.cmd("dbreak RATE")
    assert st["data_breakpoints"][0]["scope"] == "global"
    _, st = shim.cmd("c")  # RATE = 2 in main(), after add() returned
    assert (st["function"], st["line"], st["data_change"]["new"]) == ("main", 24, "2")
    assert shim.cmd("c")[1]["code"] == 0


def test_data_breakpoint_on_a_local_ends_with_its_frame(python, run, tmp_path):
    shim = stopped_at(run, python, tmp_path, CART, 16)
    _, st = shim.cmd("dbreak acc")
    assert st["data_breakpoints"][0]["scope"] == "frame"
    _, st = shim.cmd("cl 1")
    out, st = shim.cmd("c")  # acc never changes again: add() returns, the watch ends
    assert "total 14" in out and st["event"] == "exit"


def test_bad_data_breakpoints_are_one_line_errors(python, run, tmp_path):
    shim = stopped_at(run, python, tmp_path, CART, 11)
    out, st = shim.cmd("dbreak cart.nothing")
    assert out.startswith("*** cannot watch 'cart.nothing'") and "AttributeError" in out
    out, st = shim.cmd("dbreak (")
    assert out.startswith("*** cannot watch '('") and st["data_breakpoints"] == []
    out, _ = shim.cmd("dclear 7")
    assert out.startswith("*** no data breakpoint 7")


@pytest.mark.parametrize("backend", ["auto", "settrace"])
def test_data_breakpoint_in_a_test_run_stops_only_on_changes(pytest_python, run, tmp_path, backend):
    write(tmp_path, "test_box.py", """
        class Box:
            shared = []


        def test_fills():
            box = Box()
            box.shared.append(1)
            assert box.shared == [1]


        def test_fails():
            assert 1 == 2


        def test_touches_it_again():
            Box.shared.append(2)
        """)
    env = {"DGYM_DATA_SETTRACE": "1"} if backend == "settrace" else {}
    shim = run(pytest_python, ["--pytest", "test_box.py"], [bp(7, file="test_box.py")], env_extra=env)
    _, st = shim.read()
    assert (st["line"], st["test"]) == (7, "test_box.py::test_fills")
    shim.cmd("dbreak box.shared")
    shim.cmd("cl 1")
    _, st = shim.cmd("c")
    assert (st["reason"], st["line"], st["data_change"]["new"]) == ("data", 8, "[1]")
    _, st = shim.cmd("c")  # the failing test's post-mortem, then c goes on: no stray stops
    assert st["reason"] == "post_mortem" and st["test"] == "test_box.py::test_fails"
    _, st = shim.cmd("c")
    assert (st["reason"], st["test"], st["data_change"]) == (
        "data", "test_box.py::test_touches_it_again",
        {"number": 1, "expr": "box.shared", "old": "[1]", "new": "[1, 2]", "by": "test_box.py:16"})
    _, st = shim.cmd("c")
    assert st["event"] == "exit" and st["failed_tests"] == ["test_box.py::test_fails"]


def test_what_the_person_does_at_the_prompt_is_no_data_change(python, run, tmp_path):
    shim = stopped_at(run, python, tmp_path, CART, 12)
    shim.cmd("dbreak cart.items")
    out, st = shim.cmd("p cart.items.append(99) or cart.items")  # code run from the prompt
    assert out.strip() == "[99]" and "data_change" not in st
    _, st = shim.cmd("c")  # the program's own append is the change, from what the person left
    assert st["data_change"]["old"] == "[99]" and st["data_change"]["new"] == "[99, 1]"
