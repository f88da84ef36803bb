"""pytest mode (sandbox/box/pytest_plugin.py): breakpoints and post-mortems across tests, the test
running and the tests failed in the markers, pytest's debugger banners dropped.

Driven for real over a pty, on CPython 3.11-3.13 (the driver is in tests/test_shim.py).
"""

from __future__ import annotations

import re

import pythons
from test_shim import CALC, TESTS, bp, python, pytest_python, run, write  # noqa: F401  (fixtures)


def test_pytest_breakpoint_then_post_mortem(pytest_python, run, tmp_path):
    write(tmp_path, "test_x.py", TESTS)
    write(tmp_path, "calc.py", CALC)
    breakpoints = [bp(4, file="test_x.py"), bp(2, file="calc.py", cond="a == 2")]
    shim = run(pytest_python, ["--pytest", "test_x.py"], breakpoints, timeout=20)
    _, st = shim.read()
    assert (st["reason"], st["file"], st["line"], st["function"]) == (
        "breakpoint", "test_x.py", 4, "test_ok")
    assert st["stack"] == [{"file": "test_x.py", "line": 4, "function": "test_ok"}]
    _, st = shim.cmd("n")
    assert (st["reason"], st["line"], st["locals"]) == ("step", 5, {"total": "3"})
    _, st = shim.cmd("c")  # the library breakpoint, only when a == 2: in test_fail
    assert (st["reason"], st["file"], st["function"], st["locals"]) == (
        "breakpoint", "calc.py", "add", {"a": "2", "b": "2"})
    assert [s["function"] for s in st["stack"]] == ["test_fail", "add"]
    out, st = shim.cmd("c")
    assert (st["reason"], st["file"], st["line"], st["function"]) == (
        "post_mortem", "test_x.py", 9, "test_fail")
    assert st["exception"]["type"] == "AssertionError" and st["locals"]["got"] == "4"
    assert st["exception"]["message"].startswith("assert 4 == 5")
    assert "FAILED test_x.py::test_fail\r\n" in out and "E       assert 4 == 5" in out
    out, st = shim.cmd("c")
    assert "1 failed, 1 passed" in out
    assert st["event"] == "exit" and st["code"] == 1
    assert shim.finish() == 1


def test_pytest_stepping_out_of_a_test_skips_pytest_internals(pytest_python, run, tmp_path):
    write(tmp_path, "test_x.py", TESTS)
    write(tmp_path, "calc.py", CALC)
    shim = run(pytest_python, ["--pytest", "test_x.py"], [bp(5, file="test_x.py")], timeout=20)
    assert shim.read()[1]["line"] == 5
    assert shim.cmd("n")[1]["reason"] == "return"
    _, st = shim.cmd("n")  # not into typing/contextlib code run by pytest: the next test
    assert (st["file"], st["function"]) == ("test_x.py", "test_fail")


def test_pytest_breakpoint_set_in_post_mortem_hits_a_later_test(pytest_python, run, tmp_path):
    write(tmp_path, "test_x.py", TESTS)
    write(tmp_path, "calc.py", CALC)
    shim = run(pytest_python, ["--pytest", "test_x.py::test_fail", "test_x.py::test_ok"],
               timeout=20)
    assert shim.read()[1]["reason"] == "post_mortem"
    _, st = shim.cmd("b calc.py:2")
    assert [(b["file"], b["line"]) for b in st["breakpoints"]] == [("calc.py", 2)]
    _, st = shim.cmd("c")
    assert (st["reason"], st["function"], st["locals"]) == ("breakpoint", "add", {"a": "1", "b": "2"})
    assert [s["function"] for s in st["stack"]] == ["test_ok", "add"]
    assert shim.cmd("c")[1]["code"] == 1


def test_pytest_without_breakpoints_quit(pytest_python, run, tmp_path):
    write(tmp_path, "test_x.py", TESTS)
    write(tmp_path, "calc.py", CALC)
    shim = run(pytest_python, ["--pytest", "-q", "test_x.py"], timeout=20)
    _, st = shim.read()
    assert st["reason"] == "post_mortem" and st["function"] == "test_fail"
    _, st = shim.cmd("q")
    assert st["event"] == "exit" and st["code"] is None


def test_pytest_all_pass(pytest_python, run, tmp_path):
    write(tmp_path, "test_y.py", "def test_a():\n    assert True\n")
    shim = run(pytest_python, ["--pytest", "test_y.py"], timeout=20)
    out, st = shim.read()
    assert "1 passed" in out and st["event"] == "exit" and st["code"] == 0
    assert shim.finish() == 0


PYTEST_BANNERS = re.compile(r">>>>|PDB (continue|post_mortem|set_trace)|entering PDB")


def test_pytest_markers_name_the_test_and_the_failures(pytest_python, run, tmp_path):
    write(tmp_path, "test_x.py", TESTS + "\ndef test_fail_too():\n    assert add(1, 1) == 3\n")
    write(tmp_path, "calc.py", CALC)
    shim = run(pytest_python, ["--pytest", "test_x.py"], [bp(4, file="test_x.py")], timeout=20)
    _, st = shim.read()
    assert (st["test"], st["function"]) == ("test_x.py::test_ok", "test_ok")
    assert "failed_tests" not in st  # only in a post-mortem
    assert shim.cmd("p total")[1]["test"] == "test_x.py::test_ok"
    _, st = shim.cmd("c")
    assert (st["reason"], st["test"], st["failed_tests"]) == (
        "post_mortem", "test_x.py::test_fail", ["test_x.py::test_fail"])
    _, st = shim.cmd("p got")  # the same stop: the host may read it from any marker
    assert st["failed_tests"] == ["test_x.py::test_fail"]
    _, st = shim.cmd("c")
    assert (st["test"], st["failed_tests"]) == (
        "test_x.py::test_fail_too", ["test_x.py::test_fail", "test_x.py::test_fail_too"])
    _, st = shim.cmd("c")
    assert st["event"] == "exit" and st["code"] == 1
    assert st["failed_tests"] == ["test_x.py::test_fail", "test_x.py::test_fail_too"]


def test_pytest_errors_outside_a_test_call_are_named(pytest_python, run, tmp_path):
    write(tmp_path, "tests/test_bad.py", "import no_such_module\n")
    write(tmp_path, "tests/test_setup.py", '''
        import pytest

        @pytest.fixture
        def broken():
            raise RuntimeError("setup broke")

        def test_b(broken):
            pass
    ''')
    shim = run(pytest_python, ["--pytest", "tests"], timeout=20)
    out, st = shim.read()
    assert "ERROR collecting tests/test_bad.py\r\n" in out
    assert (st["test"], st["failed_tests"]) == (None, ["tests/test_bad.py"])
    out, st = shim.cmd("c")
    if st["event"] == "prompt":  # pytest >= 8 runs the other files after a collection error
        assert "ERROR at setup of tests/test_setup.py::test_b\r\n" in out
        assert st["test"] == "tests/test_setup.py::test_b"
        out, st = shim.cmd("c")
    assert st["event"] == "exit" and "tests/test_bad.py" in st["failed_tests"]


def test_pytest_debugger_banners_are_dropped(pytest_python, run, tmp_path):
    write(tmp_path, "test_x.py", TESTS + f'''
def test_trace():
    here = 1
    {pythons.set_trace_call(pytest_python)}
    assert here
''')
    write(tmp_path, "calc.py", CALC)
    shim = run(pytest_python, ["--pytest", "test_x.py"], [bp(2, file="calc.py", cond="a == 2")],
               timeout=20)
    out, st = shim.read()
    assert st["function"] == "add" and not PYTEST_BANNERS.search(out)
    out, st = shim.cmd("c")
    assert st["reason"] == "post_mortem" and not PYTEST_BANNERS.search(out), out
    # what helps stays: the failed test's name, then pytest's traceback of the failure
    heading = out.index("FAILED test_x.py::test_fail\r\n")
    assert heading < out.index(">       assert got == 5\r\nE       assert 4 == 5\r\n")
    assert "\r\n\r\n> " not in out  # no blank line left where a banner was
    out, st = shim.cmd("c")
    assert (st["reason"], st["function"]) == ("breakpoint", "test_trace")
    assert not PYTEST_BANNERS.search(out), out
    assert not out.startswith("\r\n\r\n")
    out, st = shim.cmd("c")
    assert st["event"] == "exit" and "1 failed, 2 passed" in out and not PYTEST_BANNERS.search(out)


def test_a_test_whose_fixture_nothing_provides_is_said_once_and_not_stopped_at(pytest_python, run, tmp_path):
    """SWE-bench's requests image lacks pytest-mock: eight tests error in setup on `mocker`. Their
    code never runs, so they are no post-mortem and no failed test for `c` to run again; the run
    goes on to the breakpoint in a test that does run."""
    write(tmp_path, "calc.py", CALC)
    write(tmp_path, "test_x.py", """
        import pytest
        from calc import add

        @pytest.mark.parametrize("n", [1, 2])
        def test_mocked(mocker, n):
            assert n

        def test_add():
            assert add(2, 3) == 5
        """)
    shim = run(pytest_python, ["--pytest", "test_x.py"], [bp(2, file="calc.py")], timeout=30)
    out, st = shim.read()
    assert (st["reason"], st["file"], st["test"]) == ("breakpoint", "calc.py", "test_x.py::test_add"), out
    assert st["notices"] == ["test_x.py::test_mocked[1] could not start: fixture 'mocker' not found (the "
                             "environment lacks the pytest plugin that provides it?); the tests that need it are "
                             "not stopped at, and the run goes on"]
    out, st = shim.cmd("c")
    assert st["event"] == "exit" and st["code"] == 1 and st["failed_tests"] == [], out
    assert "2 errors" in out and st.get("notices", []) == []
