"""The pdb subclass (sandbox/box/debugger.py): why it stopped, stepping, frames, breakpoint() and
Ctrl-C, pdb's own commands (commands, jump, debug, restart), the locals in the marker.

Driven for real over a pty, on CPython 3.11-3.13 (the driver is in tests/test_shim.py).
"""

from __future__ import annotations

import json
import time

import pythons
from test_shim import PROG, bp, exit_of, python, run, stopped_at, write  # noqa: F401  (fixtures)


def test_next_step_continue_to_breakpoint(python, run, tmp_path):
    write(tmp_path, "prog.py", PROG)
    shim = run(python, ["prog.py"], [bp(4)])
    assert shim.read()[1]["breakpoints"][0] == {**bp(4), "number": 1, "hits": 0}
    _, st = shim.cmd("n")
    assert (st["reason"], st["line"]) == ("step", 2)
    shim.cmd("n")
    _, st = shim.cmd("n")
    assert (st["line"], st["locals"]) == (7, {"sys": "<module 'sys' (built-in)>",
                                              "f": st["locals"]["f"], "x": "1"})
    out, st = shim.cmd("s")
    assert "--Call--" in out
    assert (st["reason"], st["function"], st["line"]) == ("step", "f", 2)
    _, st = shim.cmd("c")
    assert (st["reason"], st["function"], st["line"]) == ("breakpoint", "f", 4)
    assert st["locals"] == {"a": "1", "b": "2"}
    assert st["breakpoints"][0]["hits"] == 1
    assert [s["line"] for s in st["stack"]] == [7, 4] and st["frame_index"] == 1
    _, st = shim.cmd("c")
    assert (st["reason"], st["locals"]["a"], st["breakpoints"][0]["hits"]) == ("breakpoint", "2", 2)
    out, st = shim.cmd("c")
    assert "y is 2 z is 4" in out
    assert exit_of(st) == {"v": 1, "event": "exit", "code": 0, "pid": shim.child.pid}
    assert shim.finish() == 0


def test_return_event(python, run, tmp_path):
    shim = stopped_at(run, python, tmp_path, PROG, 4)
    out, st = shim.cmd("r")
    assert "--Return--" in out
    assert (st["reason"], st["function"], st["locals"]["__return__"]) == ("return", "f", "2")


def test_up_and_down(python, run, tmp_path):
    write(tmp_path, "prog.py", PROG)
    shim = run(python, ["prog.py"], [bp(3)])
    shim.read()
    _, st = shim.cmd("c")
    assert (st["frame_index"], st["function"]) == (1, "f")
    _, st = shim.cmd("up")
    assert (st["reason"], st["frame_index"], st["file"], st["line"], st["function"]) == (
        "command", 0, "prog.py", 7, "<module>")
    assert st["locals"]["x"] == "1" and "a" not in st["locals"]
    out, st = shim.cmd("up")
    assert "Oldest frame" in out and st["frame_index"] == 0  # the shim's frames are not there
    _, st = shim.cmd("down")
    assert (st["frame_index"], st["line"], st["locals"]) == (1, 3, {"a": "1"})


def test_print_is_a_command(python, run, tmp_path):
    shim = stopped_at(run, python, tmp_path, PROG, 4)
    out, st = shim.cmd("p a + 40")
    assert "41" in out and st["reason"] == "command" and st["line"] == 4


def test_breakpoint_builtin_and_ctrl_c(python, run, tmp_path):
    write(tmp_path, "prog.py", f'''
        import time
        x = 1
        {pythons.set_trace_call(python)}
        n = 0
        while True:
            n += 1
            time.sleep(0.01)
    ''')
    shim = run(python, ["prog.py"])
    shim.read()
    _, st = shim.cmd("c")
    assert st["reason"] == "breakpoint" and st["line"] in (3, 4)  # 3.13 stops on the call line
    assert [s["function"] for s in st["stack"]] == ["<module>"]
    shim.child.sendline("c")
    time.sleep(0.3)
    shim.child.sendintr()
    out, st = shim.read()
    assert "Program interrupted" in out and st["reason"] == "step" and int(st["locals"]["n"]) > 0


def test_commands_jump_and_restart(python, run, tmp_path):
    write(tmp_path, "prog.py", PROG)
    shim = run(python, ["prog.py"], [bp(3)])
    shim.read()
    shim.child.sendline("commands 1")
    shim.child.expect_exact("(com) ")
    shim.child.sendline("p a * 100")
    shim.child.expect_exact("(com) ")
    _, st = shim.cmd("end")
    assert st["reason"] == "command"
    out, st = shim.cmd("c")
    assert "100" in out and st["reason"] == "breakpoint"
    shim.cmd("n")
    _, st = shim.cmd("j 3")
    assert (st["reason"], st["line"]) == ("step", 3)
    out, st = shim.cmd("help next")
    assert "Continue execution until the next line" in out and st["reason"] == "command"
    _, st = shim.cmd("restart")
    assert st["event"] == "exit" and st["code"] is None and st["restart"] is True


def test_exception_while_stepping(python, run, tmp_path):
    write(tmp_path, "prog.py", "try:\n    int('x')\nexcept ValueError:\n    pass\n")
    shim = run(python, ["prog.py"])
    shim.read()
    assert shim.cmd("n")[1]["line"] == 2
    out, st = shim.cmd("n")
    assert "ValueError: invalid literal" in out
    assert st["reason"] == "exception" and st["exception"]["type"] == "ValueError"
    assert "invalid literal" in st["exception"]["message"]


def test_restart_in_a_recursive_debugger_only_leaves_it(python, run, tmp_path):
    write(tmp_path, "prog.py", PROG)
    shim = run(python, ["prog.py"])
    shim.read()
    shim.child.sendline("debug f(1)")
    shim.child.expect(shim.marker)
    shim.child.expect_exact("((Pdb)) ")
    out, st = shim.cmd("restart")
    assert "LEAVING RECURSIVE DEBUGGER" in out and st["event"] == "prompt"
    assert exit_of(shim.cmd("c")[1]) == {"v": 1, "event": "exit", "code": 0, "pid": shim.child.pid}


def test_many_locals_are_capped(python, run, tmp_path):
    write(tmp_path, "prog.py", '''
        for i in range(1000):
            globals()["v%d" % i] = "y" * 150
        done = True
    ''')
    shim = run(python, ["prog.py"], [bp(3)])
    shim.read()
    _, st = shim.cmd("c")
    assert st["reason"] == "breakpoint"
    assert 0 < len(st["locals"]) <= 50 and st["locals_truncated"] > 900
    assert len(json.dumps(st["locals"])) <= 8200
