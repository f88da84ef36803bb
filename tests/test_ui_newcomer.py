"""Pilot tests for the friction a newcomer met (issue 11): the palette's order with an empty
query, Escape then q, the footer after a resize. A real local Session on a copy of the example."""

from __future__ import annotations

import shutil

import pytest
from test_ui_support import EXAMPLE, wait_for
from textual.command import CommandList, CommandPalette

from dgym_tui.core.session import Session
from dgym_tui.ui.app import DgymApp

SIZE = (120, 40)


@pytest.fixture(autouse=True)
def config_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("DGYM_TUI_CONFIG_DIR", str(tmp_path / "config"))


@pytest.fixture
def session(tmp_path):
    repo = tmp_path / "shopcart"
    shutil.copytree(EXAMPLE, repo, ignore=shutil.ignore_patterns("__pycache__", ".pytest_cache", ".benchmarks"))
    s = Session(str(repo), sandbox="local", entrypoint="python main.py")
    yield s
    s.close()


async def started(pilot) -> None:
    app = pilot.app
    await wait_for(pilot, lambda: app.session.state == "stopped", timeout=60, what="the first stop")
    await wait_for(pilot, lambda: app.main.source.current_line is not None, what="the first stop on screen")
    await wait_for(pilot, lambda: app.main.repo_files, what="the file list")
    await app.workers.wait_for_complete()
    await pilot.pause()


async def test_palette_lists_the_apps_commands_then_files_then_textuals(session):
    app = DgymApp(session)
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot)
        ours = [title for title, _, _ in app.palette_commands(app.main)]
        files = list(app.main.repo_files)
        await pilot.press("ctrl+p")
        await wait_for(pilot, lambda: isinstance(app.screen, CommandPalette), what="the palette")
        palette = app.screen
        await wait_for(pilot, lambda: palette.has_class("-ready"), what="every provider's list")
        results = palette.query_one(CommandList)
        listed = [results.get_option_at_index(i).hit.text for i in range(results.option_count)]
        assert listed[:len(ours)] == ours
        assert listed[len(ours):len(ours) + len(files)] == files
        textuals = listed[len(ours) + len(files):]
        assert {"Keys", "Screenshot", "Theme"} <= set(textuals)
        # the first one is highlighted, and Enter runs it: our first command
        assert results.highlighted == 0 and listed[0] == "Go to line…"

        # a file from the list opens on Enter
        target = "shopcart/inventory.py"
        results.highlighted = listed.index(target)
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.main.source.path == target, what=f"{target} opened")
