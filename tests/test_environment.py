"""A repository's own environment (core/environment.py), as a SWE-bench instance brings it: the
harness's test command made runnable at the base, pdb's entrypoint from it, and why pdb cannot run
where the environment's Python is too old. A real sandbox (local), real interpreters."""

from __future__ import annotations

import glob

import pytest

from conftest import git, make_sandbox
from dgym_tui.core.environment import Environment


@pytest.fixture
def box(tmp_path):
    repo = tmp_path / "repo"
    (repo / "tests").mkdir(parents=True)
    (repo / "tests" / "test_a.py").write_text("def test_a():\n    pass\n")
    git(repo, "init", "-q")
    with make_sandbox("local", repo) as sandbox:
        yield sandbox


def test_the_test_command_leaves_out_files_the_hidden_tests_bring(box):
    env = Environment("img", test_command="pytest -rA tests/test_a.py tests/test_new.py::test_x tests/test_a.py::test_a")
    env.ready(box)
    assert env.test_command == "pytest -rA tests/test_a.py tests/test_a.py::test_a"
    django = Environment("img", test_command="./tests/runtests.py --verbosity 2 template_tests.test_new")
    django.ready(box)  # module names are the runner's business, not files
    assert django.test_command == "./tests/runtests.py --verbosity 2 template_tests.test_new"


def test_pdb_runs_the_command_when_it_is_pytest():
    assert Environment("i", test_command="pytest -rA tests/test_a.py").pdb_entrypoint() == "pytest -rA tests/test_a.py"
    assert Environment("i", test_command="python -m pytest -x a.py").pdb_entrypoint() == "pytest -x a.py"
    assert Environment("i", test_command="bin/test -C --verbose sympy/core/tests/test_x.py").pdb_entrypoint() is None
    assert Environment("i").pdb_entrypoint() is None


def test_why_pdb_cannot_run_in_an_old_python(box):
    env = Environment("i", test_command="pytest tests/test_a.py")
    assert env.pdb_problem(box) is None  # the suite's own Python: 3.11+
    old = sorted(glob.glob("/root/.pyenv/versions/3.6.*/bin/python"))
    if not old:
        pytest.skip("no Python 3.6 here (.ci/run's machine has one)")
    box.python = old[0]
    assert env.pdb_problem(box) == ("the environment's Python is 3.6, and dgym-tui's debugger needs 3.11 or newer")
    assert Environment("i", test_command="./tests/runtests.py x").pdb_problem(box).startswith(
        "its tests do not run under pytest")
