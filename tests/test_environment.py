"""A repository's own environment (core/environment.py), as a SWE-bench instance brings it: the
harness's test command made runnable at the base, pdb's entrypoint from it, and why pdb cannot run
where the environment's Python is too old. A real sandbox (local), real interpreters."""

from __future__ import annotations

import pytest

import pythons

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


def test_pdb_runs_the_harness_command_whatever_its_runner():
    def entry(command):
        return Environment("i", test_command=command).pdb_entrypoint()

    assert entry("pytest -rA tests/test_a.py") == "pytest -rA tests/test_a.py"
    assert entry("python -m pytest -x a.py") == "pytest -x a.py"
    assert entry("./tests/runtests.py --verbosity 2 --settings=test_sqlite --parallel 1 x.tests\nsecond line") == \
        "python ./tests/runtests.py --verbosity 2 --settings=test_sqlite --parallel 1 x.tests"
    assert entry("PYTHONWARNINGS='ignore::UserWarning' bin/test -C --verbose sympy/core/tests/test_x.py") == \
        "PYTHONWARNINGS=ignore::UserWarning python bin/test -C --verbose sympy/core/tests/test_x.py"
    assert entry("tox --current-env -epy39 -v -- tests/test_ext_napoleon.py") == "pytest tests/test_ext_napoleon.py"
    assert entry("python -m unittest tests.test_x") == "python -m unittest tests.test_x"
    assert entry("make test") is None and entry("python") is None and entry(None) is None


def test_why_pdb_cannot_run_in_an_old_python(box):
    env = Environment("i", test_command="pytest tests/test_a.py")
    assert env.pdb_problem(box) is None  # the suite's own Python
    assert Environment("i", test_command="./tests/runtests.py x").pdb_problem(box) is None
    assert Environment("i").pdb_problem(box) == "the environment names no test command to run under pdb"
    for minor in ("3.6", "3.9"):  # every machine here has them (pyenv): missing, they fail under CI
        box.python = pythons.require(minor)
        assert env.pdb_problem(box) is None, minor
    box.python = pythons.require(pythons.OLD)
    assert env.pdb_problem(box) == "the environment's Python is 2.7, and dgym-tui's debugger runs on 3.6 or newer"
