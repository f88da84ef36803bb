"""Pilot tests of the app's keys, panes and flows against a scripted session (fast, no pdb).

The same flows run against a real Session in test_ui_session.py.
"""

from __future__ import annotations

import shutil

import pytest
from test_ui_support import EXAMPLE, FakeSession, wait_for
from textual.widgets import Tabs

from dgym_tui.core import events as ev
from dgym_tui.ui.app import DgymApp
from dgym_tui.ui.config import config_path, load_config
from dgym_tui.ui.screens.help import HelpScreen
from dgym_tui.ui.screens.main import BINDING_SECTIONS, MainScreen
from dgym_tui.ui.screens.modals import ConfirmScreen, PromptScreen, ValueScreen
from dgym_tui.ui.widgets.pdb_console import PdbConsole, PdbInput, complete
from dgym_tui.ui.widgets.repo_tree import RepoTree
from dgym_tui.ui.widgets.source_view import SourceView
from dgym_tui.ui.widgets.stack import StackPane
from dgym_tui.ui.widgets.status_bar import StatusBar
from dgym_tui.ui.widgets.transcript import Transcript
from dgym_tui.ui.widgets.variables import VariablesPane

SIZE = (120, 40)


@pytest.fixture(autouse=True)
def config_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("DGYM_TUI_CONFIG_DIR", str(tmp_path / "config"))
    return tmp_path / "config"


@pytest.fixture
def session():
    return FakeSession()


def log_text(app) -> str:
    return "\n".join(strip.text for strip in app.screen.query_one("#pdb-log").lines)


async def started(pilot, session):
    await wait_for(pilot, lambda: session.state == "stopped", what="the first stop")
    await wait_for(pilot, lambda: pilot.app.screen.query_one(SourceView).path == "main.py", what="main.py shown")
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()


async def test_first_frame_comes_before_the_sandbox_is_ready():
    session = FakeSession(start_delay=1.0)
    app = DgymApp(session)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause(0.3)
        assert session.state == "starting"
        assert "starting the local sandbox" in app.screen.query_one(StatusBar).state_text
        await started(pilot, session)
        bar = app.screen.query_one(StatusBar)
        assert bar.state_text == "stopped at main.py:1 in <module>"
        assert str(bar.query_one("#sb-sandbox").content) == "local"
        assert bar.query_one("#sb-isolation").display


async def test_stepping_keys_send_pdb_commands(session):
    app = DgymApp(session)
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot, session)
        for key in "nscr":
            await pilot.press(key)
        await pilot.press("u", "d")
        await app.workers.wait_for_complete()
        assert [c for c, _ in session.sent] == ["next", "step", "continue", "return", "up", "down"]
        assert all(actor == "human" for _, actor in session.sent)


async def test_b_toggles_a_breakpoint_at_the_cursor_and_c_follows_the_stop(session):
    app = DgymApp(session)
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot, session)
        app.screen.open_file("shopcart/cart.py")
        await wait_for(pilot, lambda: app.screen.source.path == "shopcart/cart.py")
        app.screen.source.goto_line(70)
        app.screen.source.focus()
        await pilot.press("b")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert session.bps and session.bps[0]["line"] == 70
        assert app.screen.breakpoints[0]["file"] == "shopcart/cart.py"
        await pilot.press("c")
        await wait_for(pilot, lambda: app.screen.source.current_line == 40, what="the stop in cart.py")
        assert app.screen.source.path == "shopcart/cart.py"
        assert app.screen.query_one(VariablesPane).values["qty"] == "2"
        assert app.screen.query_one(StackPane).option_count == 2
        # b again on the same line clears it
        app.screen.source.goto_line(70)
        await pilot.press("b")
        await app.workers.wait_for_complete()
        assert session.bps == []


async def test_shift_b_asks_for_a_condition(session):
    app = DgymApp(session)
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot, session)
        app.screen.source.goto_line(28)
        await pilot.press("B")
        await pilot.pause()
        assert isinstance(app.screen, PromptScreen)
        await pilot.press(*"qty > 1", "enter")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert session.bps[0]["cond"] == "qty > 1" and session.bps[0]["line"] == 28
        await pilot.press("B", "escape")  # cancelled: nothing changes
        assert len(session.bps) == 1


async def test_t_runs_to_the_cursor_line(session):
    app = DgymApp(session)
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot, session)
        app.screen.source.goto_line(77)
        await pilot.press("t")
        await app.workers.wait_for_complete()
        assert session.sent[-1] == ("run_to main.py:77", "human")


async def test_console_history_completion_and_escape(session):
    app = DgymApp(session)
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot, session)
        await pilot.press("c")
        await app.workers.wait_for_complete()
        await pilot.press("exclamation_mark")
        console_input = app.screen.query_one(PdbInput)
        assert app.screen.focused is console_input
        await pilot.press(*"p qty", "enter")  # typed keys do not trigger the pudb bindings
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert session.sent[-1] == ("p qty", "human")
        text = log_text(app)
        assert "human> p qty" in text and "\n2" in text
        await pilot.press("up")
        assert console_input.value == "p qty"
        console_input.value = ""
        await pilot.press(*"whe", "tab")
        assert console_input.value == "where "
        console_input.value = "p pro"
        console_input.cursor_position = 5
        await pilot.press("tab")
        assert console_input.value == "p product"
        console_input.value = ""
        await pilot.press("enter")  # empty line repeats the last command, as in pdb
        await app.workers.wait_for_complete()
        assert session.sent[-1] == ("p qty", "human")
        await pilot.press("escape")
        assert app.screen.focused is app.screen.source


def test_complete_pdb_commands_and_names():
    assert complete("con", []) == ("con", ["condition", "cont", "continue"])
    assert complete("conti", []) == ("continue ", ["continue"])
    assert complete("wher", [])[0] == "where "
    assert complete("p se", ["self", "sku"]) == ("p self", ["self"])
    assert complete("zzz", []) == ("zzz", [])


async def test_agent_commands_show_with_their_actor(session):
    app = DgymApp(session)
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot, session)
        session.send("p 1", actor="agent")  # as the agent would, from its own thread
        await pilot.pause(0.1)
        assert "agent> p 1" in log_text(app)
        transcript = app.screen.query_one(Transcript)
        assert any("agent" in str(w.render()) and "(Pdb) p 1" in str(w.render())
                   for w in transcript.query(".entry") if hasattr(w, "render"))


async def test_help_lists_every_binding(session):
    app = DgymApp(session)
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot, session)
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        shown = "\n".join(text for rows in app.screen.rows.values() for _, text in rows)
        for _, bindings in BINDING_SECTIONS:
            for binding in bindings:
                assert (binding.tooltip or binding.description) in shown
        for description in ("Search", "Go to line", "Previous command", "command palette"):
            assert description in shown
        await pilot.press("escape")
        assert isinstance(app.screen, MainScreen)


async def test_q_quits_at_once_without_changes(session):
    app = DgymApp(session)
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot, session)
        await pilot.press("q")
        await wait_for(pilot, lambda: session.closed, what="the session to close")
        await pilot.pause(0.2)
    assert app.return_code == 0 and session.closed


async def test_q_asks_first_when_the_sandbox_holds_changes(session):
    app = DgymApp(session)
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot, session)
        session.sandbox.changed = ["shopcart/cart.py"]
        await pilot.press("q")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen), what="the confirmation")
        assert "unapplied changes" in str(app.screen.query_one(".title").render())
        await pilot.press("n")
        assert isinstance(app.screen, MainScreen) and not session.closed
        await pilot.press("ctrl+q")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen), what="the confirmation")
        await pilot.press("y")
        await wait_for(pilot, lambda: session.closed, what="the session to close")


async def test_variables_enter_shows_the_full_value_via_pp(session):
    app = DgymApp(session)
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot, session)
        await pilot.press("c")
        await app.workers.wait_for_complete()
        await pilot.press("f5")
        table = app.screen.query_one(VariablesPane)
        assert app.screen.focused is table
        table.move_cursor(row=list(table.values).index("product"))
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, ValueScreen)
        await app.screen.workers.wait_for_complete()
        await pilot.pause()
        assert "Product(sku='HOO-01')" in str(app.screen.query_one("#value-text").render())
        assert session.sent[-1] == ("pp product", "human")
        await pilot.press("escape")
        assert isinstance(app.screen, MainScreen)


async def test_selecting_a_frame_moves_pdb_there(session):
    app = DgymApp(session)
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot, session)
        await pilot.press("c")
        await app.workers.wait_for_complete()
        await pilot.press("f6")
        stack = app.screen.query_one(StackPane)
        assert stack.highlighted == 0  # innermost first, and current
        await pilot.press("down", "enter")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert session.sent[-1] == ("up 1", "human")
        assert app.screen.source.path == "main.py"
        await wait_for(pilot, lambda: app.screen.source.current_line == 72, what="the outer frame's line")


async def test_ctrl_c_interrupts_only_while_a_command_runs(session):
    app = DgymApp(session)
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot, session)
        await pilot.press("ctrl+c")
        assert session.interrupted == 0
        import threading

        gate = threading.Event()
        app.submit(gate.wait)  # a command that runs until released, like a `c` into a loop
        await pilot.pause()
        assert app.busy
        await pilot.press("ctrl+c")
        await pilot.pause(0.2)
        assert session.interrupted == 1
        gate.set()
        await wait_for(pilot, lambda: not app.busy, what="the queue to drain")


async def test_tree_is_lazy_hides_litter_marks_changes_and_opens_files(tmp_path):
    repo = tmp_path / "shopcart"
    shutil.copytree(EXAMPLE, repo, ignore=shutil.ignore_patterns(".benchmarks"))
    (repo / "__pycache__").mkdir(exist_ok=True)
    (repo / ".git").mkdir(exist_ok=True)
    session = FakeSession(repo)
    app = DgymApp(session)
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot, session)
        tree = app.screen.query_one(RepoTree)
        assert session.sandbox.listed == ["."]  # nothing below the top level yet
        names = [str(n.label) for n in tree.root.children]
        assert "__pycache__" not in names and ".git" not in names
        assert names.index("shopcart") < names.index("main.py")  # directories first
        shop = next(n for n in tree.root.children if str(n.label) == "shopcart")
        shop.expand()
        await wait_for(pilot, lambda: len(shop.children) > 0, what="shopcart/ listed")
        assert session.sandbox.listed == [".", "shopcart"]
        session.sandbox.changed = ["shopcart/cart.py"]
        app.screen.refresh_repo_state()
        await app.workers.wait_for_complete()
        await pilot.pause()
        cart = next(n for n in shop.children if str(n.label) == "cart.py")
        assert "●" in tree.render_label(cart, tree.rich_style, tree.rich_style).plain
        assert "●" in tree.render_label(shop, tree.rich_style, tree.rich_style).plain
        tree.focus()
        tree.move_cursor(cart)
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.screen.source.path == "shopcart/cart.py", what="cart.py opened")
        assert app.screen.focused is app.screen.source
        assert "shopcart/cart.py" in app.screen.repo_files


async def test_compact_layout_folds_side_panes_into_tabs(session):
    app = DgymApp(session)
    async with app.run_test(size=(80, 24)) as pilot:
        await started(pilot, session)
        screen = app.screen
        assert screen.compact and screen.has_class("-compact")
        tabs = screen.query_one(Tabs)
        assert tabs.display and tabs.active == "tab-transcript"
        assert screen.query_one(Transcript).display and not screen.query_one(VariablesPane).display
        await pilot.press("f5")  # focusing a folded pane brings its tab forward
        assert tabs.active == "tab-variables" and screen.query_one(VariablesPane).display
        assert screen.source.size.height >= 10  # enough code stays in view at 80x24
        await pilot.resize_terminal(160, 50)
        await pilot.pause()
        assert not screen.compact and not tabs.display
        assert all(screen.query_one(w).display for w in ("#tree", "#transcript", "#variables", "#stack"))


async def test_panes_toggle_resize_and_maximize(session):
    app = DgymApp(session)
    async with app.run_test(size=(160, 50)) as pilot:
        await started(pilot, session)
        screen = app.screen
        await pilot.press("f1")
        width = screen.query_one("#tree").outer_size.width
        await pilot.press("ctrl+right")
        await pilot.pause()
        assert screen.query_one("#tree").outer_size.width == width + 4
        await pilot.press("f2", "ctrl+right")  # a wider source narrows the side column
        await pilot.pause()
        assert screen.sizes["side"] == 46
        await pilot.press("ctrl+up")
        assert screen.sizes["console"] == 12
        await pilot.press("z")
        assert screen.maximized is screen.source
        await pilot.press("z")
        assert screen.maximized is None
        screen.toggle_pane("transcript")
        await pilot.pause()
        assert not screen.query_one(Transcript).display
        await pilot.press("f4")  # focusing a hidden pane shows it again
        assert screen.query_one(Transcript).display


async def test_palette_runs_commands(session):
    app = DgymApp(session)
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot, session)
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"Run the tests")
        await pilot.pause(0.5)
        await pilot.press("enter")
        await app.workers.wait_for_complete()
        await pilot.pause()
        entries = [str(w.render()) for w in app.screen.query_one(Transcript).children if hasattr(w, "render")]
        titles = [c.title for c in app.screen.query_one(Transcript).query("Collapsible")]
        assert any("10 passed, 2 failed" in t for t in entries + titles)
        # open a file by fuzzy name
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"catalog.py")
        await pilot.pause(0.5)
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.screen.source.path == "shopcart/catalog.py", what="catalog.py opened")
        # change the entrypoint through its modal
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"Change entrypoint")
        await pilot.pause(0.5)
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, PromptScreen)
        app.screen.query_one("#prompt-input").value = "pytest tests/test_cart.py"
        await pilot.press("enter")
        await app.workers.wait_for_complete()
        assert session.sent[-1] == ("entrypoint pytest tests/test_cart.py", "human")


async def test_theme_switch_persists_in_the_config(session, config_dir):
    app = DgymApp(session)
    async with app.run_test(size=SIZE) as pilot:
        assert app.theme == "dgym-dark"
        app.theme = "dgym-light"
        await pilot.pause()
    assert load_config()["theme"] == "dgym-light"
    assert config_path().parent == config_dir
    again = DgymApp(FakeSession())
    assert again.theme == "dgym-light"
    assert DgymApp(FakeSession(), theme="nord").theme == "nord"
    assert DgymApp(FakeSession(), theme="no-such-theme").theme == "dgym-dark"


async def test_errors_show_in_the_source_area_without_a_traceback():
    class Failing(FakeSession):
        def start(self):
            self.state = "error"
            self.events.emit(ev.ERROR, message="no Docker engine answers: start Docker, or use --sandbox local")

    session = Failing()
    app = DgymApp(session)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.screen.query_one("#source-message").display, what="the message")
        text = str(app.screen.query_one("#source-message").render())
        assert "use --sandbox local" in text and "Traceback" not in text
        assert "error" in app.screen.query_one(StatusBar).state_text
        assert any("use --sandbox local" in str(n.message) for n in app._notifications)
        await pilot.press("n")  # keys with no session give a notice, not a crash
        await app.workers.wait_for_complete()


async def test_transcript_folds_long_output_and_follows_the_end(session):
    app = DgymApp(session)
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot, session)
        transcript = app.screen.query_one(Transcript)
        session.events.emit(ev.PDB_OUTPUT, "human", text="\n".join(f"line {i}" for i in range(30)), truncated=False)
        await pilot.pause(0.2)
        assert transcript.query("Collapsible")
        for i in range(40):
            session.events.emit(ev.PDB_INPUT, "agent", command=f"p {i}")
        await pilot.pause(0.3)
        assert transcript.scroll_y == transcript.max_scroll_y > 0
        transcript.scroll_home(animate=False)
        await pilot.pause()
        session.events.emit(ev.PDB_INPUT, "agent", command="p 99")
        await pilot.pause(0.2)
        assert transcript.scroll_y == 0  # the person scrolled up: it stays put


async def test_variables_highlight_changes_within_a_frame_and_repaint_on_theme_switch(session):
    app = DgymApp(session)
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot, session)
        await pilot.press("c")
        await app.workers.wait_for_complete()
        variables = app.screen.query_one(VariablesPane)
        assert variables.changed == set()  # a new frame: nothing to compare with
        session.status["locals"] = {**session.status["locals"], "qty": "3"}
        await pilot.press("n")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert variables.changed == {"qty"}
        def human_style():  # the console repaints its lines in the new theme's colours
            return next(seg.style for strip in app.screen.query_one("#pdb-log").lines
                        for seg in strip if seg.text == "human> ")

        dark = human_style()
        app.theme = "dgym-light"
        await pilot.pause(0.2)
        assert human_style() != dark
