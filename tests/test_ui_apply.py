"""Applying the session's change to the person's repo from the app (W, the palette): the whole
diff first, nothing written before yes, all or nothing, a repo edited since the start refused
by name, a second apply a no-op, and quitting after an apply does not ask again. Real sessions
(local sandbox, pdb, git), a real session file."""

from __future__ import annotations

import asyncio
import contextlib
import subprocess
import sys

import pytest
from test_agent import TALLY, make_repo
from test_ui_support import wait_for

from dgym_tui.core.session import Session
from dgym_tui.core.session_file import SessionWriter
from dgym_tui.ui.app import DgymApp
from dgym_tui.ui.screens.apply import ApplyScreen
from dgym_tui.ui.screens.modals import ConfirmScreen

FIX = "    return total / len(values)\n"


@pytest.fixture(autouse=True)
def config(tmp_path, monkeypatch):
    monkeypatch.setenv("DGYM_TUI_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("DGYM_TUI_DATA_DIR", str(tmp_path / "data"))


def _notes(app) -> list[str]:
    return [str(n.message) for n in app._notifications]


@contextlib.asynccontextmanager
async def fixed_in_the_sandbox(tmp_path):
    """The app on a saved live session whose sandbox holds the fix (one checkpoint)."""
    repo = make_repo(tmp_path / "tally", TALLY)
    session = Session(str(repo), sandbox="local")
    writer = SessionWriter.open(None, session)
    app = DgymApp(session, writer=writer)
    try:
        async with app.run_test(size=(140, 40)) as pilot:
            await wait_for(pilot, lambda: app.main.state.stop is not None, timeout=90, what="the first stop")
            await asyncio.to_thread(session.edit, "tally/__init__.py", FIX, 5, 5)
            await wait_for(pilot, lambda: app.main.state.program in ("stopped", "exited"), what="the restart")
            yield repo, app, pilot
    finally:
        session.close()
        writer.close()


async def test_w_shows_the_diff_then_applies_it_once_and_quit_does_not_ask(tmp_path):
    before = TALLY["tally/__init__.py"]
    async with fixed_in_the_sandbox(tmp_path) as (repo, app, pilot):
        await pilot.press("W")
        await wait_for(pilot, lambda: isinstance(app.screen, ApplyScreen), timeout=30, what="the diff")
        assert "+" + FIX.rstrip("\n") in app.screen.diff and "tally/__init__.py" in app.screen.summary
        assert (repo / "tally/__init__.py").read_text() == before, "written before the person said yes"
        await pilot.press("y")
        await wait_for(pilot, lambda: (repo / "tally/__init__.py").read_text() != before, timeout=30,
                       what="the change in the repo")
        assert (repo / "tally/__init__.py").read_text().endswith(FIX)
        tests = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"], cwd=repo,
                               capture_output=True, text=True)
        assert tests.returncode == 0, tests.stdout
        await wait_for(pilot, lambda: any(m.startswith("applied: changed 1 file") for m in _notes(app)),
                       what="the applied note")
        # a second time: nothing to do, and it says so
        await pilot.press("W")
        await wait_for(pilot, lambda: any(m.startswith("already applied") for m in _notes(app)),
                       timeout=30, what="the already-applied note")
        assert not isinstance(app.screen, ApplyScreen)
        await pilot.press("q")  # the change is in the repo: nothing to lose, no question
        await wait_for(pilot, lambda: app.closing, timeout=30, what="quitting")
        assert not isinstance(app.screen, ConfirmScreen)


async def test_a_file_edited_in_the_repo_since_the_start_is_refused_by_name(tmp_path):
    async with fixed_in_the_sandbox(tmp_path) as (repo, app, pilot):
        mine = "def mean(values):\n    return sum(values) / len(values)  # my own fix\n"
        (repo / "tally/__init__.py").write_text(mine)
        app.action_apply_changes()  # the palette's command
        await wait_for(pilot, lambda: any("tally/__init__.py" in m and "differ" in m for m in _notes(app)),
                       timeout=30, what="the refusal")
        assert not isinstance(app.screen, ApplyScreen)
        assert (repo / "tally/__init__.py").read_text() == mine


async def test_cancelled_leaves_the_repo_alone_and_quit_still_asks(tmp_path):
    async with fixed_in_the_sandbox(tmp_path) as (repo, app, pilot):
        await pilot.press("W")
        await wait_for(pilot, lambda: isinstance(app.screen, ApplyScreen), timeout=30, what="the diff")
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, ApplyScreen), what="the diff closed")
        assert {p: (repo / p).read_text() for p in TALLY} == TALLY
        await pilot.press("q")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen), timeout=30, what="the question")
        assert "W applies them to your repo" in str(app.screen.message)
        await pilot.press("n")
