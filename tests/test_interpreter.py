"""The local and bwrap sandboxes run the project's own interpreter, not dgym-tui's."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import git, make_sandbox
from dgym_tui.sandbox import SandboxError
from dgym_tui.sandbox.interpreter import debugger_problem, find_python

BASE_PYTHON = os.path.realpath(sys._base_executable if hasattr(sys, "_base_executable") else sys.executable)


@pytest.fixture
def venv_repo(tmp_path):
    """A project with its own .venv (gitignored, as usual) holding a module only the venv has."""
    repo = tmp_path / "proj"
    repo.mkdir()
    subprocess.run([BASE_PYTHON, "-m", "venv", "--without-pip", str(repo / ".venv")], check=True)
    purelib = subprocess.run([str(repo / ".venv" / "bin" / "python"), "-c",
                              "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             capture_output=True, text=True, check=True).stdout.strip()
    Path(purelib, "only_in_the_venv.py").write_text("WHERE = 'venv'\n")
    (repo / ".gitignore").write_text(".venv/\n")
    (repo / "main.py").write_text(
        "import sys, only_in_the_venv\nprint(only_in_the_venv.WHERE, sys.prefix)\n"
        "try:\n    open(only_in_the_venv.__file__, 'a').write('# changed')\n    print('venv writable')\n"
        "except OSError as e:\n    print('venv read-only', e.errno)\n")
    git(repo, "init", "-q")
    return repo


def test_choice_order(venv_repo, tmp_path, monkeypatch):
    monkeypatch.delenv("VIRTUAL_ENV", raising=False)
    assert find_python(venv_repo) == str(venv_repo / ".venv" / "bin" / "python")
    assert find_python(venv_repo, sys.executable) == sys.executable  # --python wins
    other = tmp_path / "other"
    other.mkdir()
    monkeypatch.setenv("VIRTUAL_ENV", str(venv_repo / ".venv"))
    assert find_python(other) == str(venv_repo / ".venv" / "bin" / "python")
    monkeypatch.delenv("VIRTUAL_ENV")
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "python3").symlink_to(BASE_PYTHON)
    monkeypatch.setenv("PATH", str(bindir))
    assert find_python(other) == str(bindir / "python3")
    with pytest.raises(SandboxError, match="--python nope: no such interpreter"):
        find_python(other, "nope")


@pytest.mark.parametrize("kind", ["local", "bwrap"])
def test_the_repo_venv_runs_the_program(kind, venv_repo, monkeypatch):
    monkeypatch.delenv("VIRTUAL_ENV", raising=False)
    sandbox = make_sandbox(kind, venv_repo)
    assert sandbox.python == str(venv_repo / ".venv" / "bin" / "python")  # before start: the status bar's
    with sandbox:
        assert sandbox.python == str(venv_repo / ".venv" / "bin" / "python")
        assert not sandbox.exec("test -e .venv", timeout=30).ok  # gitignored: not in the copy
        out = sandbox.exec([sandbox.python, "main.py"], timeout=60).output
        assert out.startswith(f"venv {venv_repo / '.venv'}\n"), out
        # Not dgym-tui's interpreter: its own packages (textual...) are not importable.
        assert not sandbox.exec([sandbox.python, "-c", "import textual"], timeout=60).ok
        if kind == "bwrap":  # the venv is the person's: read-only in the jail
            assert "venv read-only 30" in out, out
        else:
            assert "venv writable" in out  # local does not protect it (README says so)


def test_an_interpreter_too_old_for_the_debugger_still_runs_the_repo(tmp_path, example_repo):
    """Python 2.7 runs the repo's code in the sandbox; the session says in one line that pdb is
    off (test_an_old_interpreter_turns_pdb_off_with_one_line), never a traceback."""
    old = "/root/.pyenv/versions/2.7.18/bin/python"
    if not os.access(old, os.X_OK):
        pytest.skip("no Python 2.7 here")
    sandbox = make_sandbox("local", example_repo, python=old)
    with sandbox:
        assert sandbox.python_version()[:2] == (2, 7)
        assert debugger_problem(sandbox.python_version(), old) == (
            f"the project's Python {old} is 2.7.18; dgym-tui's debugger runs on 3.6 or newer: choose one with --python PATH")
        assert sandbox.exec([sandbox.python, "-c", "print 'old' + 'style'"], timeout=60).output.strip() == "oldstyle"
    for minor in ("3.6", "3.10"):
        assert debugger_problem((int(minor[0]), int(minor[2:]), 0), "x") is None


def test_docker_keeps_the_image_interpreter(example_repo):
    from dgym_tui.sandbox import DockerSandbox

    assert DockerSandbox(example_repo).python == "python3"
    assert DockerSandbox(example_repo, python="python3.11").python == "python3.11"

