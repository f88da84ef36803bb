"""Starting the program (sandbox/box/launch.py): a script, a module or pytest run under the
debugger from its first line, how it ends (exit status, quit, post-mortem, restart), what
cannot be run, and the program's modules never shadowed by the debugger's.

Driven for real over a pty, on CPython 3.11-3.13 (the driver is in tests/test_shim.py).
"""

from __future__ import annotations

import pytest

import pythons
from test_shim import CALC, PROG, SHIM, TESTS, exit_of, bp, python, run, write  # noqa: F401  (fixtures)


def test_first_stop_is_line_one(python, run, tmp_path):
    write(tmp_path, "prog.py", PROG)
    shim = run(python, ["prog.py"])
    out, st = shim.read()
    assert st["v"] == 1 and st["event"] == "prompt" and st["reason"] == "start"
    assert st["pid"] == shim.child.pid
    assert (st["file"], st["line"], st["function"]) == ("prog.py", 1, "<module>")
    assert st["stack"] == [{"file": "prog.py", "line": 1, "function": "<module>"}]
    assert st["frame_index"] == 0 and st["locals"] == {} and st["exception"] is None
    assert st["breakpoints"] == [] and not st.get("errors")
    assert "-> import sys" in out


def test_sys_exit_code(python, run, tmp_path):
    write(tmp_path, "prog.py", "import sys\nprint('bye')\nsys.exit(3)\n")
    shim = run(python, ["prog.py"])
    shim.read()
    out, st = shim.cmd("c")
    assert "bye" in out and exit_of(st) == {"v": 1, "event": "exit", "code": 3, "pid": shim.child.pid}
    assert shim.finish() == 3


def test_quit(python, run, tmp_path):
    write(tmp_path, "prog.py", PROG)
    shim = run(python, ["prog.py"])
    shim.read()
    _, st = shim.cmd("q")
    assert st["event"] == "exit" and st["code"] is None
    assert shim.finish() == 0


def test_uncaught_exception_post_mortem(python, run, tmp_path):
    write(tmp_path, "prog.py", '''
        def g(v):
            raise ValueError(f"boom {v}")

        g(7)
    ''')
    shim = run(python, ["prog.py"])
    shim.read()
    out, st = shim.cmd("c")
    assert "Traceback (most recent call last):" in out and "ValueError: boom 7" in out
    assert "bdb.py" not in out and "dgym_pdb" not in out and "dgym_box" not in out
    assert str(SHIM.parent) not in out  # none of the debugger's modules is in the traceback
    assert (st["reason"], st["function"], st["line"]) == ("post_mortem", "g", 2)
    assert st["exception"] == {"type": "ValueError", "message": "boom 7"}
    assert [s["function"] for s in st["stack"]] == ["<module>", "g"]
    _, st = shim.cmd("up")
    assert st["reason"] == "command" and st["line"] == 4 and st["exception"]["type"] == "ValueError"
    _, st = shim.cmd("c")
    assert st["event"] == "exit" and st["code"] == 1
    assert shim.finish() == 1


def test_quit_in_post_mortem_exits_1(python, run, tmp_path):
    write(tmp_path, "prog.py", "x = 1\n1 / 0\n")
    shim = run(python, ["prog.py"])
    shim.read()
    _, st = shim.cmd("c")
    assert st["exception"]["type"] == "ZeroDivisionError" and st["line"] == 2
    assert shim.cmd("q")[1]["code"] == 1
    assert shim.finish() == 1


@pytest.mark.parametrize("args,why", [(["nope.py"], "No such file"),
                                      (["bad.py"], "SyntaxError"),
                                      (["-m", "nomod"], "No module named")])
def test_cannot_run(python, run, tmp_path, args, why):
    write(tmp_path, "bad.py", "x = (\n")
    shim = run(python, args)
    out, st = shim.read()
    assert "dgym: cannot run" in out and why in out
    assert st["event"] == "exit" and st["code"] == 2
    assert shim.finish() == 2


def test_module_mode(python, run, tmp_path):
    write(tmp_path, "pkg/__init__.py", "")
    write(tmp_path, "pkg/helper.py", "def double(v):\n    return v * 2\n")
    write(tmp_path, "pkg/mod.py", '''
        import sys
        from pkg.helper import double
        print(__name__, sys.argv[1:], double(21))
    ''')
    shim = run(python, ["-m", "pkg.mod", "one", "two"], [bp(2, file="pkg/helper.py")])
    _, st = shim.read()
    assert (st["reason"], st["file"], st["line"]) == ("start", "pkg/mod.py", 1)
    _, st = shim.cmd("c")
    assert (st["reason"], st["file"], st["function"]) == ("breakpoint", "pkg/helper.py", "double")
    assert [s["file"] for s in st["stack"]] == ["pkg/mod.py", "pkg/helper.py"]
    out, st = shim.cmd("c")
    assert "__main__ ['one', 'two'] 42" in out and st["code"] == 0


def test_script_markers_have_no_test(python, run, tmp_path):
    write(tmp_path, "prog.py", PROG)
    shim = run(python, ["prog.py"])
    _, st = shim.read()
    assert st["test"] is None and "failed_tests" not in st
    assert "failed_tests" not in shim.cmd("c")[1]


@pytest.mark.parametrize("command", ["restart", "run"])
@pytest.mark.parametrize("mode", ["script", "script post-mortem", "module", "pytest breakpoint",
                                  "pytest post-mortem"])
def test_restart_ends_with_a_restart_marker(python, run, tmp_path, mode, command):
    if mode.startswith("pytest"):
        pythons.require_pytest(python)
    write(tmp_path, "prog.py", "x = 1\n1 / 0\n")
    write(tmp_path, "pkg/__init__.py", "")
    write(tmp_path, "pkg/mod.py", "a = 1\nb = 2\n")
    write(tmp_path, "test_x.py", TESTS)
    write(tmp_path, "calc.py", CALC)
    args, breakpoints = {
        "script": (["prog.py"], []), "script post-mortem": (["prog.py"], []),
        "module": (["-m", "pkg.mod"], []),
        "pytest breakpoint": (["--pytest", "test_x.py"], [bp(2, file="calc.py")]),
        "pytest post-mortem": (["--pytest", "test_x.py"], []),
    }[mode]
    shim = run(python, args, breakpoints, timeout=20)
    _, st = shim.read()
    if mode == "script post-mortem":
        _, st = shim.cmd("c")
    assert st["reason"] == {"script": "start", "module": "start", "pytest breakpoint": "breakpoint"
                            }.get(mode, "post_mortem")
    out, st = shim.cmd(command)
    assert st["event"] == "exit" and st["code"] is None and st["restart"] is True, out
    assert "restart_args" not in st
    assert st.get("failed_tests") == ({"pytest breakpoint": [],
                                       "pytest post-mortem": ["test_x.py::test_fail"]}.get(mode))
    assert shim.finish() is not None


def test_restart_with_arguments(python, run, tmp_path):
    write(tmp_path, "prog.py", PROG)
    shim = run(python, ["prog.py", "old"])
    shim.read()
    _, st = shim.cmd("restart new 'two words'")
    assert st["restart"] is True and st["restart_args"] == ["new", "two words"]
    shim = run(python, ["prog.py"])
    shim.read()
    out, st = shim.cmd("restart 'unclosed")
    assert st["event"] == "prompt" and out.startswith("*** cannot restart")


def test_the_programs_modules_are_its_own_not_the_debuggers(python, run, tmp_path):
    """The box is a package of modules with plain names (state, protocol, launch...): loaded as
    `dgym_box`, never from sys.path, so a repo's own modules of those names are the ones imported,
    and the debugger's frames stay out of the program's traceback."""
    for name in ("state", "protocol", "launch", "debugger", "origins", "terminal"):
        write(tmp_path, f"{name}.py", f"WHO = 'repo {name}'\n")
    write(tmp_path, "prog.py", '''
        import debugger, launch, origins, protocol, state, terminal
        print("WHO", [m.WHO for m in (debugger, launch, origins, protocol, state, terminal)])
        raise SystemExit("bye")
    ''')
    shim = run(python, ["prog.py"])
    shim.read()
    out, st = shim.cmd("c")
    assert "WHO ['repo debugger', 'repo launch', 'repo origins', 'repo protocol', 'repo state', 'repo terminal']" in out
    assert st["event"] == "exit" and st["code"] == 1 and "bye" in out
    assert shim.finish() == 1
