"""The per-test time limit (sandbox/box/plugins/dgym_test_timeout.py, core/test_runs.py): a hung
test fails in seconds with the place it was, every process it started ends, the run goes on with
the next test, and a test the soft stop cannot end is killed with its run and the rest run again.
Real pytest in real sandboxes; the shim's own limit under pdb is tested at the end."""

from __future__ import annotations

import glob
import os
import subprocess
import time
import uuid
from pathlib import Path

import pytest

from conftest import git, make_sandbox
from dgym_tui.core.test_runs import ERROR, FAILED, MISSING, PASSED, SKIPPED, run_pytest

PLUGINS = Path(__file__).resolve().parents[1] / "sandbox" / "box" / "plugins"

BITCOUNT = """\
def bitcount(n):
    count = 0
    while n:
        n ^= n - 1
        count += 1
    return count
"""

TESTS = """\
import os, subprocess, sys, time
import pytest
from bitcount import bitcount

@pytest.mark.parametrize("n,expected", [(127, 7), (0, 0)])
def test_bitcount(n, expected):
    assert bitcount(n) == expected

def test_child_that_spins():
    subprocess.run(["sh", "-c", "while :; do :; done # " + os.environ["DGYM_TEST_MARKER"]])

def test_ok():
    assert True
"""

SAMPLE = '''\
import pytest

@pytest.mark.parametrize("x", [1, 2, "a b::c"])
def test_p(x):
    assert x != 2

class TestK:
    def test_k(self):
        pass

    class TestInner:
        def test_i(self):
            pass

@pytest.mark.xfail
def test_xf():
    assert 0

@pytest.mark.skip
def test_sk():
    pass
'''


def repo_with(tmp_path, files: dict[str, str]) -> Path:
    repo = tmp_path / "repo"
    for name, text in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    git(repo if repo.exists() else repo.mkdir() or repo, "init", "-q")
    return repo


def spinning(box, marker: str) -> int:
    """How many processes the sandbox still runs with the marker in their command line (the
    counting program builds the marker, so its own command line does not hold it)."""
    head, tail = "# " + marker[:5], marker[5:]  # as the spinning shell has it (bwrap's own argv has it bare)
    code = (f"import glob; m = ({head!r} + {tail!r}).encode(); print(sum(1 for p in glob.glob('/proc/[0-9]*/cmdline') "
            f"if m in open(p, 'rb').read()))")
    return int(box.exec([box.python, "-c", code], timeout=30).output.strip() or 0)


def test_outcomes_are_read_by_repo_relative_node_id(tmp_path):
    """Each test's outcome from the plugin's report, named as tasks name tests: parametrized ids
    kept, classes nested, xfail passed, a module that fails to import an error for its tests, a
    test that never ran missing."""
    repo = repo_with(tmp_path, {"tests/test_a.py": SAMPLE, "tests/test_b.py": "import nope\n\ndef test_b():\n    pass\n",
                                "test.py": "def test_c():\n    pass\n"})
    with make_sandbox("local", repo) as box:
        run = run_pytest(box, ["tests", "test.py"], options="-q -rA --continue-on-collection-errors")
    assert run.outcomes == {"tests/test_a.py::test_p[1]": PASSED, "tests/test_a.py::test_p[2]": FAILED,
                            "tests/test_a.py::test_p[a b::c]": PASSED,
                            "tests/test_a.py::TestK::test_k": PASSED,
                            "tests/test_a.py::TestK::TestInner::test_i": PASSED,
                            "tests/test_a.py::test_xf": PASSED, "tests/test_a.py::test_sk": SKIPPED,
                            "test.py::test_c": PASSED}, run.outcomes
    assert run.broken_files == ["tests/test_b.py"]
    assert run.status_of("tests/test_b.py::test_b") == ERROR
    assert run.status_of("tests/test_a.py::test_gone") == MISSING
    assert run.counts() == {"passed": 6, "failed": 1, "errors": 1}
    assert not run.timed_out and run.problem is None and run.rounds == 1


def test_ids_stay_repo_relative_when_pytest_roots_elsewhere(tmp_path):
    """A pytest.ini in a subfolder moves pytest's rootdir there; the ids stay the repo's."""
    repo = repo_with(tmp_path, {"pkg/pytest.ini": "[pytest]\n", "pkg/tests/test_x.py": "def test_x():\n    pass\n"})
    with make_sandbox("local", repo) as box:
        run = run_pytest(box, ["pkg/tests"])
    assert run.outcomes == {"pkg/tests/test_x.py::test_x": PASSED}, (run.outcomes, run.output)


def test_a_hung_test_fails_with_its_place_and_leaves_nothing_running(tmp_path, backend):
    """The loop that never ends fails after the limit with the line and values where it was; the
    other cases and tests run on; a spinning child process is killed with its test."""
    marker = f"dgym-spin-{uuid.uuid4().hex[:8]}"
    repo = repo_with(tmp_path, {"bitcount.py": BITCOUNT, "test_bitcount.py": TESTS})
    with make_sandbox(backend, repo) as box:
        box.program_env = {"DGYM_TEST_MARKER": marker}
        started = time.monotonic()
        run = run_pytest(box, [], test_timeout=2)
        took = time.monotonic() - started
        left = spinning(box, marker)
    assert run.outcomes == {"test_bitcount.py::test_bitcount[127-7]": FAILED,
                            "test_bitcount.py::test_bitcount[0-0]": PASSED,
                            "test_bitcount.py::test_child_that_spins": FAILED,
                            "test_bitcount.py::test_ok": PASSED}, run.output
    hung = {t.test: t for t in run.timed_out}
    assert set(hung) == {"test_bitcount.py::test_bitcount[127-7]", "test_bitcount.py::test_child_that_spins"}
    first = hung["test_bitcount.py::test_bitcount[127-7]"]
    assert first.seconds == 2 and first.where.startswith(("bitcount.py:3 in bitcount (n = 1, count = ",
                                                          "bitcount.py:4 in bitcount (n = 1, count = ")), first
    assert "test_bitcount.py:7 in test_bitcount" in first.stack
    # the second hang of the run gets a quarter of the limit, at least 2 s
    assert hung["test_bitcount.py::test_child_that_spins"].seconds == 2
    assert "timed out after 2 s at bitcount.py:" in run.output  # pytest's own report says it too
    assert left == 0, f"{left} spinning child(ren) left"
    assert took < 30, took


SWALLOWS = """\
import time

def test_swallows_every_stop():
    while True:
        try:
            time.sleep(0.05)
        except BaseException:
            pass

def test_after_it():
    assert True

def test_fails_after_it():
    assert False
"""


def test_a_test_that_swallows_the_stop_is_killed_and_the_rest_run_again(tmp_path):
    repo = repo_with(tmp_path, {"test_s.py": SWALLOWS})
    with make_sandbox("local", repo) as box:
        run = run_pytest(box, [], test_timeout=1)
    assert run.outcomes == {"test_s.py::test_swallows_every_stop": FAILED, "test_s.py::test_after_it": PASSED,
                            "test_s.py::test_fails_after_it": FAILED}, run.output
    assert run.rounds == 2
    [hung] = run.timed_out
    assert hung.killed and hung.where == "test_s.py:6 in test_swallows_every_stop", hung
    assert "stopped by ending the test run; running the tests that had not run yet" in run.output
    assert run.counts() == {"passed": 1, "failed": 2, "errors": 0}


def test_a_loop_at_import_is_a_collection_error_with_its_place(tmp_path):
    repo = repo_with(tmp_path, {"test_imp.py": "n = 1\nwhile n:\n    n = n * 1\n\ndef test_x():\n    pass\n",
                                "test_fine.py": "def test_y():\n    pass\n"})
    with make_sandbox("local", repo) as box:
        run = run_pytest(box, [], test_timeout=1, options="-q -rA --continue-on-collection-errors")
    assert run.broken_files == ["test_imp.py"] and run.outcomes == {"test_fine.py::test_y": PASSED}, run.output
    assert run.timed_out[0].where.startswith(("test_imp.py:2 in <module> (n = 1", "test_imp.py:3 in <module> (n = 1")), \
        run.timed_out


def test_the_suite_limit_still_says_which_test_it_was_in(tmp_path):
    """With no per-test limit, the whole run's limit ends it: the test it was in failed, the ones
    after it missing, what ran before kept (not an error of ours)."""
    repo = repo_with(tmp_path, {"test_s.py": "import time\n\ndef test_a():\n    pass\n\ndef test_b():\n"
                                             "    time.sleep(60)\n\ndef test_c():\n    pass\n"})
    with make_sandbox("local", repo) as box:
        run = run_pytest(box, [], test_timeout=0, timeout=4)
    assert run.suite_timed_out and run.problem is None
    assert run.outcomes == {"test_s.py::test_a": PASSED, "test_s.py::test_b": FAILED}
    assert run.status_of("test_s.py::test_c") == MISSING
    assert run.timed_out[0].test == "test_s.py::test_b" and "whole run's limit (4 s)" in run.timed_out[0].where


def _old_python() -> str | None:
    """A Python 3.6 with pytest (SWE-bench's oldest environments), if this machine has one."""
    for path in sorted(glob.glob("/root/.pyenv/versions/3.6.*/bin/python")) + [os.environ.get("DGYM_PY36", "")]:
        if path and os.path.exists(path) and subprocess.run([path, "-c", "import pytest"],
                                                            capture_output=True).returncode == 0:
            return path
    return None


def test_the_plugin_runs_on_python_3_6_and_an_old_pytest(tmp_path):
    """SWE-bench's environments run Python 3.6-3.11 with pytests of their time: the plugin is
    written for them (no newer syntax), and works there. .ci/run installs pytest 6.2 into 3.6."""
    import ast

    source = (PLUGINS / "dgym_test_timeout.py").read_text()
    ast.parse(source, feature_version=(3, 6))  # a SyntaxError here names the newer construct
    python = _old_python()
    if python is None:
        if os.environ.get("CI"):
            pytest.fail("CI must have Python 3.6 with pytest (.ci/run installs it)")
        pytest.skip("no Python 3.6 with pytest on this machine")
    repo = repo_with(tmp_path, {"bitcount.py": BITCOUNT, "test_b.py": "from bitcount import bitcount\n\n"
                                "def test_hang():\n    assert bitcount(127) == 7\n\ndef test_ok():\n    pass\n"})
    report = tmp_path / "report.jsonl"
    env = {**os.environ, "PYTHONPATH": str(PLUGINS), "DGYM_TEST_TIMEOUT": "1", "DGYM_TEST_REPORT": str(report)}
    done = subprocess.run([python, "-m", "pytest", "-q", "-p", "dgym_test_timeout", "-p", "no:cacheprovider"],
                          cwd=repo, env=env, capture_output=True, text=True, timeout=60)
    assert "1 failed, 1 passed" in done.stdout, done.stdout + done.stderr
    assert "timed out after 1 s at bitcount.py:" in done.stdout
    lines = report.read_text()
    assert '"id": "test_b.py::test_hang", "outcome": "failed"' in lines and '"where": "bitcount.py:' in lines


def test_under_pdb_a_hung_test_stops_where_it_hangs(tmp_path, backend):
    """The shim's own limit: the session opens at the loop (reason "timeout", with its values),
    in seconds rather than at the start's two minutes; the stops at the prompt do not count."""
    from dgym_tui.core.session import Session

    repo = repo_with(tmp_path, {"bitcount.py": BITCOUNT,
                                "test_bitcount.py": "from bitcount import bitcount\n\ndef test_hang():\n"
                                                    "    assert bitcount(127) == 7\n"})
    session = Session(str(repo), sandbox=backend, test_timeout=2)
    try:
        started = time.monotonic()
        session.start()
        took = time.monotonic() - started
        stop = session.state.stop
        assert stop.reason == "timeout" and stop.file == "bitcount.py" and stop.line in (3, 4), stop
        assert stop.locals["n"] == "1" and stop.test == "test_bitcount.py::test_hang"
        assert took < 30, took
        text = "".join(e.data.text for e in session.events.history if e.kind == "pdb_output")
        assert "ran past its time limit (2 s, not counting stops): stopped where it was" in text
        time.sleep(3)  # a person looking at the stop: not the test's time
        again = session.send("n")
        assert again.stop is not None and again.stop.reason == "step", again.output
        second = session.send("c")  # runs on: stopped again after another 2 s of running
        assert second.stop.reason == "timeout" and "ran past its time limit" in second.output
    finally:
        session.close()
