"""Hostile and unlucky programs, as the person sees them in the app (issue 12's UI side): escape
sequences from the program never reach the terminal; a sandbox that dies is offered a restart
that keeps its changes; quitting asks when the sandbox's changes cannot be read; files left out
of the copy are said once. Real sessions, real pdb, real git; the escape test drives the
installed app in tmux and reads the terminal's title."""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest
from test_agent import TALLY, make_repo
from test_e2e_tmux import Tmux, installed  # noqa: F401  (fixture)
from test_ui_support import wait_for

from dgym_tui.core.session import Session
from dgym_tui.ui.app import DgymApp
from dgym_tui.ui.screens.modals import ConfirmScreen
from dgym_tui.ui.widgets.variables import VariablesPane

HOSTILE = '''\
import sys

sys.stdout.write("\\x1b]0;HACKED-TITLE\\x07\\x1b[2J\\x1b[31mred\\x1b[0m\\n")
sys.stdout.flush()
class Evil:
    def __repr__(self):
        return "\\x1b]0;HACKED-REPR\\x07"


payload = Evil()
print("done")
'''


@pytest.fixture(autouse=True)
def config(tmp_path, monkeypatch):
    monkeypatch.setenv("DGYM_TUI_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("DGYM_TUI_DATA_DIR", str(tmp_path / "data"))


@pytest.mark.e2e
@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
def test_escape_sequences_from_the_program_never_reach_the_terminal(installed, tmp_path):  # noqa: F811
    repo = tmp_path / "hostile"
    repo.mkdir()
    (repo / "main.py").write_text(HOSTILE)
    (repo / "\x1b]0;HACKED-NAME\x07.py").write_text("x = 1\n")  # a file name is untrusted too
    env = {"TERM": "xterm-256color", "DGYM_TUI_CONFIG_DIR": str(tmp_path / "config"), "HOME": str(tmp_path),
           "DGYM_TUI_DATA_DIR": str(tmp_path / "data")}
    name = f"dgym-e2e-escapes-{os.getpid()}"
    tmux = Tmux(name, f"{installed} --sandbox local -e 'python main.py' {repo}", str(tmp_path), env)
    try:
        subprocess.run(["tmux", "select-pane", "-t", name, "-T", "the-person's-title"], check=True)
        tmux.wait_for("stopped at main.py:1")
        tmux.type("c")
        screen = tmux.wait_for("the program exited with code 0")
        tmux.keys("F1")  # the tree, where the hostile name shows
        time.sleep(0.5)
        screen = tmux.screen()
        title = subprocess.run(["tmux", "display-message", "-p", "-t", name, "#{pane_title}"],
                               capture_output=True, text=True).stdout.strip()
        assert title == "the-person's-title"  # nothing retitled the terminal
        assert "␛]0;HACKED-TITLE␇␛[2J␛[31mred␛[0m" in screen  # shown, harmlessly
        assert "␛]0;HACKED-NAME␇.py" in screen
        tmux.keys("Escape")
        time.sleep(0.3)
        tmux.type("q")
        tmux.wait_for("DGYM-EXITED-0", timeout=30)
    finally:
        tmux.close()


async def test_a_value_whose_repr_is_an_escape_sequence_is_shown_visible(tmp_path):
    repo = tmp_path / "hostile"
    repo.mkdir()
    (repo / "main.py").write_text(HOSTILE)
    session = Session(str(repo), sandbox="local", entrypoint="python main.py")
    app = DgymApp(session)
    try:
        async with app.run_test(size=(140, 40)) as pilot:
            await wait_for(pilot, lambda: app.main.state.stop is not None, what="the first stop")
            await asyncio.to_thread(session.set_breakpoint, "main.py", 11)
            app.send_pdb("continue")
            await wait_for(pilot, lambda: "payload" in app.main.query_one(VariablesPane).values, what="payload")
            table = app.main.query_one(VariablesPane)
            shown = str(table.get_cell("payload", "value"))
            assert "\x1b" not in shown and "␛]0;HACKED-REPR␇" in shown
    finally:
        session.close()


@pytest.mark.parametrize("backend", ["local", pytest.param("docker", marks=pytest.mark.docker)])
async def test_a_dead_sandbox_is_offered_a_restart_that_keeps_its_changes(tmp_path, backend):
    from conftest import require_docker

    if backend == "docker":
        require_docker()
    session = Session(str(make_repo(tmp_path / "tally", TALLY)), sandbox=backend)
    app = DgymApp(session)
    try:
        async with app.run_test(size=(140, 40)) as pilot:
            await wait_for(pilot, lambda: app.main.state.stop is not None, timeout=90, what="the first stop")
            await asyncio.to_thread(session.edit, "tally/__init__.py", "    return total / len(values)\n", 5, 5)
            await wait_for(pilot, lambda: app.main.state.program in ("stopped", "exited"), what="the restart")
            # the sandbox dies under the session
            if backend == "docker":
                session.sandbox.container.kill()
            else:
                if session.debugger.channel is not None:
                    os.killpg(session.debugger.channel.child.pid, signal.SIGKILL)
                shutil.rmtree(session.sandbox.root)
            app.send_pdb("where")
            await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen), timeout=60,
                           what="the offer to restart the sandbox")
            assert "Its 1 change will be applied again" in str(app.screen.message)
            assert app.main.state.program == "error"
            await pilot.press("y")
            await wait_for(pilot, lambda: app.main.state.program in ("stopped", "exited") and session.sandbox.alive(),
                           timeout=120, what="the new sandbox")
            assert session.sandbox.read_text("tally/__init__.py").endswith("return total / len(values)\n")
            assert session.run_tests().ok
    finally:
        session.close()


async def test_quitting_asks_when_the_changes_cannot_be_read(tmp_path):
    session = Session(str(make_repo(tmp_path / "tally", TALLY)), sandbox="local")
    app = DgymApp(session)
    try:
        async with app.run_test(size=(140, 40)) as pilot:
            await wait_for(pilot, lambda: app.main.state.stop is not None, what="the first stop")
            # a program that leaves git's lock behind: "what changed?" cannot be answered
            Path(session.sandbox.root, ".git", "index.lock").write_text("")
            await pilot.press("q")
            await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen), what="the question")
            assert "Could not tell whether the sandbox holds changes" in str(app.screen.message)
            await pilot.press("n")  # stay
            assert not app.closing
    finally:
        session.close()


async def test_files_left_out_of_the_copy_are_said_once(tmp_path):
    repo = make_repo(tmp_path / "tally", TALLY)
    (tmp_path / "secret.txt").write_text("outside")
    (repo / "link-out").symlink_to(tmp_path / "secret.txt")
    session = Session(str(repo), sandbox="local")
    app = DgymApp(session)
    try:
        async with app.run_test(size=(140, 40)) as pilot:
            await wait_for(pilot, lambda: app.main.state.stop is not None, what="the first stop")
            told = [n for n in app._notifications if "left out of the sandbox's copy" in n.message]
            assert len(told) == 1 and "link-out" in told[0].message
            assert session.state.sandbox.skipped and "link-out" in session.state.sandbox.skipped[0]
    finally:
        session.close()
