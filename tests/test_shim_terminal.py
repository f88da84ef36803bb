"""The pty (sandbox/box/terminal.py): pdb's output starts on a line of its own.

Driven for real over a pty, on CPython 3.11-3.13 (the driver is in tests/test_shim.py).
"""

from __future__ import annotations

import re

from test_shim import CALC, TESTS, bp, python, pytest_python, run, write  # noqa: F401  (fixtures)


def test_pdb_output_starts_on_its_own_line(pytest_python, run, tmp_path):
    write(tmp_path, "test_x.py", TESTS)
    write(tmp_path, "calc.py", CALC)
    shim = run(pytest_python, ["--pytest", "test_x.py"], [bp(2, file="calc.py", cond="a == 2")],
               timeout=20)
    out, _ = shim.read()
    # pytest's progress (`test_x.py .`) is left open while the test runs: pdb starts a new line
    assert re.search(r"\r\ntest_x\.py \.\r\n> \S*calc\.py\(2\)add\(\)\r\n", out), out
    out, _ = shim.cmd("c")  # after `continue`, pytest's next result is on a line of its own too
    assert re.search(r"(^|\n)F\r\nFAILED test_x.py::test_fail\r\n", out), out
    assert re.search(r"\r\n> \S*test_x\.py\(9\)test_fail\(\)\r\n", out), out


def test_pdb_output_starts_on_its_own_line_after_a_partial_print(python, run, tmp_path):
    write(tmp_path, "prog.py", '''
        import sys
        print("no newline", end="")
        sys.stderr.write("err too")
        x = 1
        raise SystemExit("bye")
    ''')
    shim = run(python, ["prog.py"])
    shim.read()
    shim.cmd("n")
    out, st = shim.cmd("n")
    assert out.startswith("no newline\r\n> "), out
    out, st = shim.cmd("n")
    assert out.startswith("err too\r\n> "), out
    out, _ = shim.cmd("p 1 + 1")  # pdb's own output does not leave the line open
    assert out == "2\r\n"
