"""The local and bwrap sandboxes run the project's own interpreter, not dgym-tui's."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import pythons
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
    off (test_an_old_interpreter_turns_pdb_off_with_one_line, below), never a traceback."""
    old = pythons.require(pythons.OLD)
    sandbox = make_sandbox("local", example_repo, python=old)
    with sandbox:
        assert sandbox.python_version()[:2] == (2, 7)
        assert debugger_problem(sandbox.python_version(), old) == (
            f"the project's Python {old} is 2.7.18; dgym-tui's debugger runs on 3.6 or newer: choose one with --python PATH")
        assert sandbox.exec([sandbox.python, "-c", "print 'old' + 'style'"], timeout=60).output.strip() == "oldstyle"
    for minor in ("3.6", "3.10"):
        assert debugger_problem((int(minor[0]), int(minor[2:]), 0), "x") is None


# A project of Python 2's: a bug (add subtracts) and a print statement 3 cannot even compile.
PY2_PROJECT = {
    "calc.py": 'def add(a, b):\n    return a - b\n\n\nif __name__ == "__main__":\n    print "2 + 3 =", add(2, 3)\n',
    "tests/test_calc.py": "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n",
}


@pytest.fixture
def py2_repo(tmp_path):
    repo = tmp_path / "oldcalc"
    for rel, text in PY2_PROJECT.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "init")
    return repo


def pdb_off_message(python: str) -> str:
    return (f"pdb is off for this task: the project's Python {python} is 2.7.18; dgym-tui's debugger "
            "runs on 3.6 or newer: choose one with --python PATH")


def test_an_old_interpreter_turns_pdb_off_with_one_line(py2_repo):
    """A real Session whose project runs on 2.7 (--python PATH): one line says pdb is off; the
    tree, the source and the other tools work as on any project; nothing fails."""
    from dgym_tui.core.events import AGENT
    from dgym_tui.core.session import Session

    old = pythons.require(pythons.OLD)
    session = Session(str(py2_repo), sandbox="local", python=old)
    try:
        session.start()
        said = [e for e in session.events.history if "pdb is off" in str(e.data.to_dict())]
        assert [(e.kind, e.data.message) for e in said] == [("notice", pdb_off_message(old))]
        assert not [e for e in session.events.history if e.kind == "error"], session.events.history
        assert session.state.program == "starting" and session.state.error is None  # no pdb ran, none failed
        assert session.state.pdb_off_label == "pdb off (Python 2.7)"
        assert "pdb" not in session.tools and session.debugger is None
        assert {"bash", "edit", "eval", "grep", "listdir", "view"} <= set(session.tools)
        # the tree and the source
        assert session.state.files == ["calc.py", "tests/test_calc.py"]
        assert [(e.name, e.is_dir) for e in session.list_dir(".")] == [("tests", True), ("calc.py", False)]
        assert session.read_source("calc.py") == PY2_PROJECT["calc.py"]
        # the agent's tools other than pdb
        out = session.run_tool("listdir", {"depth": 2}, actor=AGENT)
        assert out.ok and out.observation.splitlines() == ["./", "|-- calc.py", "|-- tests/", "  |-- test_calc.py"]
        out = session.run_tool("grep", {"pattern": r"a - b"}, actor=AGENT)
        assert out.ok and "=== calc.py ===" in out.observation and "   2:     return a - b" in out.observation
        out = session.run_tool("view", {"path": "calc.py"}, actor=AGENT)
        assert out.ok and '     6     print "2 + 3 =", add(2, 3)' in out.observation
        out = session.run_tool("bash", {"command": "python calc.py && python --version 2>&1"}, actor=AGENT)
        assert (out.ok, out.observation) == (True, "2 + 3 = -1\nPython 2.7.18")  # the project's 2.7 runs it
        out = session.run_tool("pdb", {"command": "n"}, actor=AGENT)
        assert not out.ok and "no tool named 'pdb'" in out.observation
        # and still one line about pdb, with no error since
        assert sum("pdb is off" in str(e.data.to_dict()) for e in session.events.history) == 1
        assert not [e for e in session.events.history if e.kind == "error"]
    finally:
        session.close()


def test_the_status_bar_says_why_pdb_is_off():
    """The fold of the notice (core/state.py) for each reason Session._pdb_off gives."""
    from dgym_tui.core import events as ev
    from dgym_tui.core.state import DebugState

    def label(message: str) -> str:
        state = DebugState()
        assert state.apply(ev.Event(seq=1, ts=0.0, actor=ev.SYSTEM, data=ev.Notice(message=message))) == {"program"}
        return state.pdb_off_label

    assert label(pdb_off_message("/x/bin/python")) == "pdb off (Python 2.7)"
    assert label("pdb is off for this task: the environment's Python is 3.5, and dgym-tui's debugger runs on "
                 "3.6 or newer") == "pdb off (Python 3.5)"
    assert label("pdb is off for this task: the environment names no test command to run under pdb") == "pdb off"
    other = DebugState()
    assert other.apply(ev.Event(seq=1, ts=0.0, actor=ev.SYSTEM, data=ev.Notice(message="pdb is great"))) == set()
    assert other.pdb_off == ""


async def test_the_app_shows_pdb_off_in_its_status_bar(py2_repo, tmp_path, monkeypatch):
    """In the app, a 2.7 project: the status bar says "pdb off (Python 2.7)" (it stayed at
    "starting…"), the pdb console says so in one line, and the tree and source view work."""
    from test_ui_support import wait_for

    from dgym_tui.core.session import Session
    from dgym_tui.ui.app import DgymApp
    from dgym_tui.ui.widgets.status_bar import StatusBar

    monkeypatch.setenv("DGYM_TUI_CONFIG_DIR", str(tmp_path / "config"))
    old = pythons.require(pythons.OLD)
    session = Session(str(py2_repo), sandbox="local", python=old)
    app = DgymApp(session)
    try:
        async with app.run_test(size=(120, 40)) as pilot:
            bar = app.main.query_one(StatusBar)
            started = lambda: any(e.kind == "call_finished" and e.data.name == "start"  # noqa: E731
                                  for e in session.events.history)
            await wait_for(pilot, started, timeout=60, what="the session's start")
            await wait_for(pilot, lambda: app.main.state.seq == session.state.seq, what="the screen to catch up")
            await app.workers.wait_for_complete()
            await pilot.pause()
            assert bar.state_text == "pdb off (Python 2.7)"
            log = [strip.text for strip in app.main.query_one("#pdb-log").lines]
            assert sum("pdb is off" in line for line in log) == 1, log
            assert app.main.repo_files == ["calc.py", "tests/test_calc.py"]
            app.main.open_file("calc.py")
            await wait_for(pilot, lambda: app.main.source.path == "calc.py", what="calc.py in the source view")
            assert session.state.error is None
    finally:
        session.close()


def test_docker_keeps_the_image_interpreter(example_repo):
    from dgym_tui.sandbox import DockerSandbox

    assert DockerSandbox(example_repo).python == "python3"
    assert DockerSandbox(example_repo, python="python3.11").python == "python3.11"

