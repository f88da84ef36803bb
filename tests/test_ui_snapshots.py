"""Snapshots of the main screen (both our themes, 80x24 and 160x50) and of the help screen.

Deterministic state: a real local Session on a copy of the example named `shopcart` (so no temp
path shows), entrypoint `python main.py`, stopped at its first line, the tree's top level listed,
every worker finished. Update with `pytest --snapshot-update tests/test_ui_snapshots.py`.
"""

from __future__ import annotations

import shutil

import pytest
from test_ui_support import EXAMPLE, wait_for

from dgym_tui.core.session import Session
from dgym_tui.ui.app import DgymApp
from dgym_tui.ui.widgets.repo_tree import RepoTree
from dgym_tui.ui.widgets.transcript import Transcript


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


async def settled(pilot) -> None:
    app = pilot.app
    screen = app.main
    await wait_for(pilot, lambda: app.session.state.program == "stopped", what="the first stop")
    await wait_for(pilot, lambda: screen.source.path == "main.py" and screen.source.current_line == 1,
                   what="main.py shown")
    await wait_for(pilot, lambda: screen.state.stop is not None and screen.pump.idle,
                   what="every pane updated for the stop")
    tree = screen.query_one(RepoTree)
    await wait_for(pilot, lambda: len(tree.root.children) > 0, what="the tree")
    await wait_for(pilot, lambda: screen.repo_files, what="the file list")
    await app.workers.wait_for_complete()
    await pilot.pause(0.3)  # the source view's highlighting worker reports through a message
    await app.workers.wait_for_complete()
    transcript = screen.query_one(Transcript)
    await wait_for(pilot, lambda: transcript.scroll_y >= transcript.max_scroll_y, what="the transcript at its end")
    await pilot.pause()


@pytest.mark.parametrize("theme", ["dgym-dark", "dgym-light"])
@pytest.mark.parametrize("size", [(80, 24), (160, 50)], ids=["80x24", "160x50"])
def test_main_screen(snap_compare, session, theme, size):
    assert snap_compare(DgymApp(session, theme=theme), terminal_size=size, run_before=settled)


def test_help_screen(snap_compare, session):
    async def open_help(pilot):
        await settled(pilot)
        await pilot.press("question_mark")
        await pilot.pause(0.2)

    assert snap_compare(DgymApp(session, theme="dgym-dark"), terminal_size=(100, 40), run_before=open_help)


def test_agent_pane_with_an_edit_waiting(snap_compare):
    """The agent pane's look with a waiting edit: the rule, the change as a coloured diff, the
    keys. Fed a fixed state (a live run's token counts vary with the sandbox's paths)."""
    from textual.app import App

    from dgym_tui.core.events import ApprovalRequested
    from dgym_tui.core.state import AgentView
    from dgym_tui.themes.dgym import THEMES
    from dgym_tui.ui.widgets.agent_panel import AgentPanel

    before = "def mean(values):\n    total = 0\n    for value in values:\n        total += value\n" \
             "    return total / (len(values) - 1)\n"
    after = before.replace("(len(values) - 1)", "len(values)")
    waiting = ApprovalRequested(call_id="c1", tool="edit", rule="ask edit",
                                args={"path": "tally/__init__.py", "start": 5, "end": 5,
                                      "new_code": "    return total / len(values)"},
                                path="tally/__init__.py", before=before, after=after)
    agent = AgentView(model="openai/gpt-4o", mode="step", state="waiting", step=4, tokens=9105, cost=0.0123,
                      max_steps=50, waiting=waiting)

    class PanelApp(App):
        CSS = "AgentPanel { border: round $primary; }"

        def on_mount(self) -> None:
            for theme in THEMES:
                self.register_theme(theme)
            self.theme = "dgym-dark"

        def compose(self):
            yield AgentPanel(id="agent")

        def on_ready(self) -> None:
            self.query_one(AgentPanel).show(agent)
            self.query_one(AgentPanel).focus()

    async def shown(pilot):
        await pilot.pause(0.2)

    assert snap_compare(PanelApp(), terminal_size=(70, 20), run_before=shown)
