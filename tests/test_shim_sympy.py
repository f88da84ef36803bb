"""sympy's own test runner under the debugger (sandbox/box/runners.py), with the real sympy: its
release's sdist (and mpmath's) downloaded at test time. The sdist does not ship bin/test, so a
three-line script does what bin/test does, `sympy.test(*paths)`, hash-randomizing subprocess
included: the first `c` from the start stops in the failing test, in this process."""

from __future__ import annotations

import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

import pythons
from test_shim import run, write  # noqa: F401  (fixtures)

CACHE = Path("/var/cache/dgym-tui/sdists")
SDISTS = {"sympy": "1.9", "mpmath": "1.3.0"}


@pytest.fixture(scope="module")
def sympy_source(tmp_path_factory) -> Path:
    CACHE.mkdir(parents=True, exist_ok=True)
    root = tmp_path_factory.mktemp("sympy")
    for name, version in SDISTS.items():
        archive = CACHE / f"{name}-{version}.tar.gz"
        if not archive.exists():
            got = subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--no-binary", ":all:",
                                  "-d", str(CACHE), f"{name}=={version}"], capture_output=True, text=True)
            if got.returncode != 0:
                pytest.fail(f"cannot download {name} {version}'s sdist: {got.stderr.strip().splitlines()[-1:]}")
        with tarfile.open(archive) as tar:
            tar.extractall(root)
    return root


def test_sympys_runner_stops_in_the_failing_test(run, tmp_path, sympy_source):
    python = pythons.require("3.9")  # SWE-bench's sympy instances run 3.9
    repo = sympy_source / "sympy-1.9"
    write(repo, "sympy/core/tests/test_dgym_halves.py", '''
        from sympy import Rational, S

        def test_half_of_one():
            assert S(1) / 2 == Rational(1, 2)

        def test_half_of_three():
            half = S(3) / 2
            assert half == 1
        ''')
    write(repo, "run_tests.py", "import sys, sympy\nsys.exit(not sympy.test(*sys.argv[1:]))\n")
    mpmath = sympy_source / "mpmath-1.3.0"
    shim = run(python, ["run_tests.py", "-C", "sympy/core/tests/test_dgym_halves.py"], timeout=120,
               cwd=repo, env_extra={"PYTHONPATH": str(mpmath)})
    assert shim.read()[1]["reason"] == "start"
    out, st = shim.cmd("c")
    assert (st["reason"], st["file"], st["function"]) == ("post_mortem", "sympy/core/tests/test_dgym_halves.py",
                                                         "test_half_of_three"), out
    assert st["locals"]["half"] == "3/2" and st["exception"]["type"] == "AssertionError"
    assert st["test"] == "sympy/core/tests/test_dgym_halves.py::test_half_of_three"
    out, st = shim.cmd("c")
    assert st["event"] == "exit" and st["code"] == 1 and "DO *NOT* COMMIT!" in out


def test_sympys_runner_whose_tests_pass_stops_at_a_breakpoint_kept_after_the_end(run, tmp_path, sympy_source):
    """Issue 47: every test passes, so the run ends; `b` typed then is kept (the process stays,
    answering without running anything), `c` asks for a fresh run, and that run stops there."""
    python = pythons.require("3.9")
    repo = sympy_source / "sympy-1.9"
    write(repo, "sympy/core/tests/test_dgym_passes.py", '''
        from sympy import Rational, S

        def test_half_of_one():
            half = S(1) / 2
            assert half == Rational(1, 2)
        ''')
    write(repo, "run_tests.py", "import sys, sympy\nsys.exit(not sympy.test(*sys.argv[1:]))\n")
    args = ["run_tests.py", "-C", "sympy/core/tests/test_dgym_passes.py"]
    env = {"PYTHONPATH": str(sympy_source / "mpmath-1.3.0")}
    shim = run(python, args, timeout=120, cwd=repo, env_extra=env)
    assert shim.read()[1]["reason"] == "start"
    out, st = shim.cmd("c")
    assert st["event"] == "exit" and st["code"] == 0 and st["stays"] is True, out
    out, st = shim.cmd("b sympy/core/tests/test_dgym_passes.py:5")
    assert out.strip() == ("Breakpoint 1 at " + str(repo / "sympy/core/tests/test_dgym_passes.py") + ":5")
    assert st["event"] == "ended"
    kept = st["breakpoints"]
    assert [(b["file"], b["line"]) for b in kept] == [("sympy/core/tests/test_dgym_passes.py", 5)]
    out, st = shim.cmd("p half")
    assert out.startswith("*** There is no frame: the program ended (exit code 0)")
    out, st = shim.cmd("c")  # the host starts a fresh process with what the shell kept
    assert st["event"] == "exit" and st.get("restart") is True
    again = run(python, args, breakpoints=kept, timeout=120, cwd=repo, env_extra=env)
    assert again.read()[1]["reason"] == "start"
    out, st = again.cmd("c")
    assert (st["reason"], st["function"], st["line"], st["locals"]["half"]) == ("breakpoint", "test_half_of_one", 5, "1/2"), out
