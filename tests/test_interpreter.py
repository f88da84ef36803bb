"""The local and bwrap sandboxes run the project's own interpreter, not dgym-tui's."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import git, make_sandbox
from dgym_tui.sandbox import SandboxError
from dgym_tui.sandbox.interpreter import find_python

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


def test_an_interpreter_too_old_for_the_debugger_is_one_line(tmp_path, example_repo):
    fake = tmp_path / "python3.9"
    fake.write_text('#!/bin/sh\necho \'{"version": [3, 9, 18], "prefixes": [], "path": [], "executable": "\'$0\'"}\'\n')
    fake.chmod(0o755)
    sandbox = make_sandbox("local", example_repo, python=str(fake))
    with pytest.raises(SandboxError) as err:
        sandbox.start()
    assert str(err.value) == (f"the project's Python {fake} is 3.9.18; dgym-tui's debugger needs 3.11 or newer: "
                              "choose one with --python PATH")
    assert sandbox.tmp is None  # nothing left behind


def test_docker_keeps_the_image_interpreter(example_repo):
    from dgym_tui.sandbox import DockerSandbox

    assert DockerSandbox(example_repo).python == "python3"
    assert DockerSandbox(example_repo, python="python3.11").python == "python3.11"

