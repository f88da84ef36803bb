"""The newcomer's debugger (issue 11), in the app with real pdb processes: after a post-mortem
`c` runs only the failing tests and *Run all tests* widens it again; `R`, and pdb's own `restart`
and `run` typed in the console, restart the program and the console starts clean; pdb's prompt
where pdb users look for it (running… while a command runs); a long value read whole without
typing `p`; a repo with nothing to run says how to give an entrypoint, and is not run again."""

from __future__ import annotations

import asyncio

import pytest
from test_agent import make_repo
from test_e2e_tmux import NEWCOMER_REPO as TESTS  # the failing test first, a passing one after
from test_ui_app import log_text, started, stop_at
from test_ui_support import wait_for

from dgym_tui.core import events as ev
from dgym_tui.core.session import Session
from dgym_tui.ui.app import DgymApp
from dgym_tui.ui.widgets.status_bar import StatusBar
from dgym_tui.ui.widgets.variables import VariablesPane

SIZE = (140, 40)
SCRIPT = {"script.py": 'print("first")\nx = 1\ny = "ab" * 60\nprint("second", x)\nwhile x:\n    x += 1\n'}


@pytest.fixture(autouse=True)
def config(tmp_path, monkeypatch):
    monkeypatch.setenv("DGYM_TUI_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("DGYM_TUI_DATA_DIR", str(tmp_path / "data"))


@pytest.fixture
def open_app(tmp_path):
    made = []

    def make(files: dict[str, str], entrypoint: str | None = None) -> tuple[Session, DgymApp]:
        session = Session(str(make_repo(tmp_path / f"repo{len(made)}", files)), sandbox="local",
                          entrypoint=entrypoint)
        made.append(session)
        return session, DgymApp(session)

    yield make
    for session in made:
        session.close()


def restarts(session, since: int) -> int:
    return sum(1 for e in session.events.history[since:] if e.kind == ev.ProgramStart.kind and e.data.restart)


def entry_label(app) -> str:
    return str(app.main.query_one(StatusBar).query_one("#sb-entry").content)


async def test_c_after_a_post_mortem_runs_only_the_failing_test_and_run_all_tests_widens(open_app):
    session, app = open_app(TESTS)
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot)
        assert app.main.state.stop.reason == "post_mortem" and "test_ten_percent_off" in app.main.state.stop.test
        await asyncio.to_thread(session.set_breakpoint, "discount.py", 4)
        await pilot.press("c")
        await stop_at(pilot, "discount.py", 4)
        # the failing test's values, and the status bar says what runs
        # (the variables pane follows the frame with the new current line)
        await wait_for(pilot, lambda: app.main.query_one(VariablesPane).values.get("subtotal") == "150",
                       what="the failing test's subtotal")
        assert "test_ten_percent_off" in app.main.state.stop.test
        assert "pytest tests/test_discount.py::test_ten_percent_off" in entry_label(app)
        titles = [title for title, _, _ in app.palette_commands(app.main)]
        assert "Run all tests" in titles
        app.calls.widen()
        await wait_for(pilot, lambda: session.entrypoint.label == "pytest", what="all tests again")
        await wait_for(pilot, lambda: entry_label(app).endswith("pytest"), what="the status bar widened")
        assert "Run all tests" not in [title for title, _, _ in app.palette_commands(app.main)]
        # the whole run, as pytest --pdb has it: the failing test, its post-mortem, then `c` goes on
        # to the passing test (not back to the failing one alone)
        for expected in ("150", None, "10"):  # the restart runs on to the breakpoint by itself
            if expected != "150":
                await pilot.press("c")
            await wait_for(pilot, lambda e=expected: app.main.state.stop is not None and (
                app.main.state.stop.reason == "post_mortem" if e is None else
                app.main.state.stop.file == "discount.py"
                and app.main.query_one(VariablesPane).values.get("subtotal") == e),
                timeout=60, what=f"the stop with subtotal {expected}")
        assert "test_no_discount" in app.main.state.stop.test


@pytest.mark.parametrize("how", ["R", "restart", "run"])
async def test_r_and_pdbs_restart_or_run_typed_restart_the_program_with_a_clean_console(open_app, how):
    session, app = open_app(SCRIPT, "python script.py")
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot)
        for line in (2, 3):
            await pilot.press("n")
            await stop_at(pilot, "script.py", line)
        await wait_for(pilot, lambda: "first" in log_text(app).splitlines(), what="the program's output")
        mark = len(session.events.history)
        if how == "R":
            await pilot.press("R")
        else:
            await pilot.press("!")
            await pilot.pause(0.2)
            await pilot.press(*how, "enter")
        await wait_for(pilot, lambda: restarts(session, mark) == 1, timeout=30, what="the restart")
        await stop_at(pilot, "script.py", 1)
        await wait_for(pilot, lambda: log_text(app).startswith("▶ restarted python script.py"), what="the clean console")
        assert "first" not in log_text(app).splitlines() and "exited" not in log_text(app)
        assert session.state.program == "stopped"


async def test_the_console_shows_pdbs_prompt_and_running_while_a_command_runs(open_app):
    session, app = open_app(SCRIPT, "python script.py")
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot)
        prompt = app.main.query_one("#pdb-prompt")
        assert str(prompt.content) == "(Pdb) "
        await pilot.press("c")  # into the endless loop
        await wait_for(pilot, lambda: str(prompt.content) == "running…", what="running…")
        await pilot.press("ctrl+c")
        await wait_for(pilot, lambda: session.state.program == "stopped", timeout=30, what="the interrupt")
        await wait_for(pilot, lambda: str(prompt.content) == "(Pdb) ", what="the prompt back")


async def test_a_long_value_is_read_whole_without_typing_p(open_app):
    session, app = open_app(SCRIPT, "python script.py")
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot)
        for line in (2, 3, 4):
            await pilot.press("n")
            await stop_at(pilot, "script.py", line)
        pane = app.main.query_one(VariablesPane)
        await wait_for(pilot, lambda: "y" in pane.values, what="y in the variables")
        assert app.main.pane("variables").border_subtitle == "⏎ full value"
        await pilot.press("f5")
        for _ in range(len(pane.values)):
            if pane.tooltip and "y =" in str(pane.tooltip):
                break
            await pilot.press("down")
            await pilot.pause(0.1)
        assert "'" + "ab" * 60 + "'" in str(pane.tooltip)  # the whole value, 122 characters wide


def test_a_repo_with_no_python_says_how_to_give_an_entrypoint(tmp_path):
    session = Session(str(make_repo(tmp_path / "docs", {"README.md": "just words\n"})), sandbox="local")
    try:
        session.start()
        assert session.state.program == "error"
        assert "no Python file" in session.state.error and "-e" in session.state.error
        assert "Change entrypoint" in session.state.error
    finally:
        session.close()


def test_pytest_finding_no_test_is_said_and_not_run_again(tmp_path):
    session = Session(str(make_repo(tmp_path / "lib", {"lib.py": "VALUE = 1\n"})), sandbox="local",
                      entrypoint="pytest")
    try:
        session.start()
        if session.state.program == "stopped":
            session.send("c")
        assert session.state.program == "exited"
        mark = len(session.events.history)
        result = session.send("c")
        assert "pytest found no test to run here (exit code 5)" in result.output and "-e" in result.output
        assert restarts(session, mark) == 0 and not any(
            e.kind == ev.ProgramStart.kind for e in session.events.history[mark:])
    finally:
        session.close()
