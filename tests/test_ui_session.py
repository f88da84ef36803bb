"""The app on a real Session (real pdb, real sandbox) over a copy of the bundled example:
the person's whole loop — breakpoint, continue, read the variables and the stack, move frames,
step, type into the console, help, quit. Runs on both backends (docker is marked)."""

from __future__ import annotations

import pytest
from test_ui_support import wait_for

from dgym_tui.core.session import Session
from dgym_tui.ui.app import DgymApp
from dgym_tui.ui.screens.help import HelpScreen
from dgym_tui.ui.screens.main import MainScreen
from dgym_tui.ui.screens.modals import ConfirmScreen
from dgym_tui.ui.widgets.pdb_console import PdbInput
from dgym_tui.ui.widgets.repo_tree import RepoTree
from dgym_tui.ui.widgets.stack import StackPane
from dgym_tui.ui.widgets.status_bar import StatusBar
from dgym_tui.ui.widgets.variables import VariablesPane

SIZE = (120, 40)


@pytest.fixture(autouse=True)
def config_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("DGYM_TUI_CONFIG_DIR", str(tmp_path / "config"))


@pytest.fixture
def session(example_repo, backend):
    s = Session(str(example_repo), sandbox=backend, entrypoint="python main.py")
    yield s
    s.close()


def log_text(app) -> str:
    return "\n".join(strip.text for strip in app.screen.query_one("#pdb-log").lines)


async def test_breakpoint_continue_inspect_step_and_quit(session):
    app = DgymApp(session)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        await wait_for(pilot, lambda: session.state.program == "stopped", what="the first stop")
        await wait_for(pilot, lambda: screen.source.path == "main.py" and screen.source.current_line == 1,
                       what="main.py at line 1")
        # the status bar follows in the frame after the current line
        await wait_for(pilot, lambda: screen.query_one(StatusBar).state_text == "stopped at main.py:1 in <module>",
                       what="the status bar")
        # the console follows the current line's frame
        await wait_for(pilot, lambda: "> main.py(1)<module>()" in log_text(app), what="pdb's first lines")
        assert "/tmp/" not in log_text(app)

        # open shopcart/cart.py from the tree, as a person would
        tree = screen.query_one(RepoTree)
        await wait_for(pilot, lambda: any(str(n.label) == "shopcart" for n in tree.root.children), what="tree")
        shop = next(n for n in tree.root.children if str(n.label) == "shopcart")
        tree.focus()
        tree.move_cursor(shop)
        await pilot.press("enter")  # expands (loaded in a worker)
        await wait_for(pilot, lambda: any(str(n.label) == "cart.py" for n in shop.children), what="shopcart/")
        tree.move_cursor(next(n for n in shop.children if str(n.label) == "cart.py"))
        await pilot.press("enter")
        await wait_for(pilot, lambda: screen.source.path == "shopcart/cart.py", what="cart.py open")

        # b at line 70 (inside Cart.add), then c to it
        screen.source.goto_line(70)
        await pilot.press("b")
        await wait_for(pilot, lambda: [(b.file, b.line) for b in screen.state.breakpoints]
                       == [("shopcart/cart.py", 70)], what="the breakpoint")
        await pilot.press("c")
        await wait_for(pilot, lambda: getattr(screen.state.stop, "line", None) == 70, what="the stop at cart.py:70")
        await wait_for(pilot, lambda: screen.source.current_line == 70, what="the current-line mark")
        assert screen.source.path == "shopcart/cart.py"
        variables = screen.query_one(VariablesPane)
        # the other panes follow the current-line mark in the next frame
        await wait_for(pilot, lambda: "quantity" in variables.values, what="the stop's locals")
        assert variables.values["quantity"] == "2"
        assert "HOO-01" in variables.values["product"]
        stack = screen.query_one(StackPane)
        functions = [f.function for f in stack.frames]
        assert functions[-2:] == ["fill_carts", "add"] and stack.highlighted == 0
        assert "stopped at shopcart/cart.py:70 in add" == screen.query_one(StatusBar).state_text

        # u: up to fill_carts in main.py; the source view follows into the other file
        await pilot.press("u")
        await wait_for(pilot, lambda: screen.source.path == "main.py" and screen.source.current_line == 44,
                       what="fill_carts's frame")
        await wait_for(pilot, lambda: stack.highlighted == 1, what="the stack following up")  # next frame
        await pilot.press("d")
        await wait_for(pilot, lambda: screen.source.path == "shopcart/cart.py", what="back in add")

        # n: one line on
        await pilot.press("n")
        await wait_for(pilot, lambda: screen.source.current_line == 72, what="line 72")

        # !, type a pdb command, Enter: the value shows in the console
        await pilot.press("exclamation_mark")
        assert isinstance(screen.focused, PdbInput)
        await pilot.press(*"p quantity * 21", "enter")
        await wait_for(pilot, lambda: "(Pdb) p quantity * 21" in log_text(app) and "\n42" in log_text(app),
                       what="the value in the console")
        await pilot.press("escape")
        assert screen.focused is screen.source

        # ? opens the help, escape closes it
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("escape")
        assert isinstance(app.screen, MainScreen)

        # a change in the sandbox: q asks first
        session.sandbox.write_text("NOTES.md", "a change\n")
        await pilot.press("q")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen), what="the quit confirmation")
        await pilot.press("n")
        assert isinstance(app.screen, MainScreen)
        await pilot.press("q")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen), what="the quit confirmation")
        await pilot.press("y")
        await wait_for(pilot, lambda: app.closed, what="the sandbox to close")


async def test_conditional_breakpoint_and_run_to_cursor(session):
    app = DgymApp(session)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        await wait_for(pilot, lambda: session.state.program == "stopped", what="the first stop")
        await wait_for(pilot, lambda: screen.source.current_line == 1, what="the first stop on screen")
        screen.open_file("shopcart/cart.py")
        await wait_for(pilot, lambda: screen.source.path == "shopcart/cart.py", what="cart.py open")
        screen.source.goto_line(70)
        screen.source.focus()
        await pilot.press("B")
        await pilot.pause()
        await pilot.press(*"quantity == 60", "enter")
        await wait_for(pilot, lambda: any(b.cond == "quantity == 60" for b in screen.state.breakpoints),
                       what="the conditional breakpoint")
        await pilot.press("c")
        await wait_for(pilot, lambda: getattr(screen.state.stop, "line", None) == 70, what="the conditional stop")
        # the variables follow the current line a frame later
        await wait_for(pilot, lambda: "quantity" in screen.query_one(VariablesPane).values, what="the stop's locals")
        assert screen.query_one(VariablesPane).values["quantity"] == "60"
        # B on that breakpoint again changes its condition (no second breakpoint)
        screen.source.goto_line(70)
        await pilot.press("B")
        await pilot.pause()
        prompt = app.screen.query_one("#prompt-input")
        assert prompt.value == "quantity == 60"
        prompt.value = "quantity == 12"
        await pilot.press("enter")
        await wait_for(pilot, lambda: [b.cond for b in screen.state.breakpoints] == ["quantity == 12"],
                       what="the changed condition")
        # t: run to line 77 (return line) of the same call
        screen.source.goto_line(77)
        await pilot.press("t")
        await wait_for(pilot, lambda: getattr(screen.state.stop, "line", None) == 77, what="the run-to-cursor stop")
        assert screen.source.current_line == 77
