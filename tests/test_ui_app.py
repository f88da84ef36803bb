"""Pilot tests of the app's keys, panes and flows, on a real Session: a real local sandbox over a
copy of the bundled example, a real pdb, real git. Every assertion is about what the real program
did (where pdb stopped, what it printed, the breakpoints pdb holds, the files in the sandbox).

test_ui_session.py runs the person's whole loop on both backends; here each behaviour has its own
test. The docker case of the breakpoint test runs where an engine answers (marked `docker`).
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
import shutil
import threading

import pytest
from test_ui_support import EXAMPLE, wait_for
from textual.command import CommandList, CommandPalette
from textual.widgets import Collapsible, Tabs

from dgym_tui.core import events as ev
from dgym_tui.core.session import Session
from dgym_tui.ui.app import DgymApp
from dgym_tui.ui.messages import RunOnUI
from dgym_tui.config import config_path, load_config
from dgym_tui.ui.screens.help import HelpScreen
from dgym_tui.ui import keymap
from dgym_tui.ui.screens.main import MainScreen
from dgym_tui.ui.screens.modals import ConfirmScreen, PromptScreen, ValueScreen
from dgym_tui.ui.widgets.pdb_console import PdbInput, complete
from dgym_tui.ui.widgets.repo_tree import RepoTree
from dgym_tui.ui.widgets.stack import StackPane
from dgym_tui.ui.widgets.status_bar import StatusBar
from dgym_tui.ui.widgets.transcript import Transcript
from dgym_tui.ui.widgets.variables import VariablesPane

SIZE = (120, 40)
START_TIMEOUT = 90.0  # a docker sandbox's first start can take a while; a local one takes a fraction of a second

# A program that never ends, for ctrl+c to stop.
LOOP = """\
def spin():
    n = 0
    while True:
        n += 1


spin()
"""


@pytest.fixture(autouse=True)
def config_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("DGYM_TUI_CONFIG_DIR", str(tmp_path / "config"))
    return tmp_path / "config"


@pytest.fixture
def repo(tmp_path):
    """A private copy of the example, named like it (the transcript and tree show the name)."""
    repo = tmp_path / "shopcart"
    shutil.copytree(EXAMPLE, repo, ignore=shutil.ignore_patterns("__pycache__", ".pytest_cache", ".benchmarks"))
    return repo


@pytest.fixture
def sessions(repo):
    """Makes real Sessions (local sandbox, `python main.py` unless told); closes them all after."""
    made = []

    def make(entrypoint="python main.py", path=None, sandbox="local"):
        session = Session(str(path or repo), sandbox=sandbox, entrypoint=entrypoint)
        made.append(session)
        return session

    yield make
    for session in made:
        session.close()


@pytest.fixture
def session(sessions):
    return sessions()


# --- reading what the app and the program did ---------------------------------------------------


def log_text(app) -> str:
    return "\n".join(strip.text for strip in app.main.query_one("#pdb-log").lines)


def transcript_texts(app) -> list[str]:
    """Each transcript entry as plain text (a folded entry by its title)."""
    return [str(entry.title) if isinstance(entry, Collapsible) else str(entry.render())
            for entry in app.main.query_one(Transcript).children]


def pdb_inputs(session, since: int = 0) -> list[tuple[str, str]]:
    """The commands pdb received (as the core reports them), with who sent each."""
    return [(e.data.command, e.actor) for e in session.events.history[since:] if e.kind == ev.PdbInput.kind]


def breakpoints(session) -> list[tuple]:
    """The session's breakpoints as pdb reports them."""
    return [(bp.file, bp.line, bp.cond) for bp in session.breakpoints.items()]


def drawn_line(source, line: int) -> str:
    """A source line as the view draws it (gutter included); the line must be in view."""
    return source.render_line(line - 1 - source.scroll_offset.y).text


def gutter_mark(source, line: int) -> str:
    """The breakpoint column of a line: ● breakpoint, ◆ conditional, blank for none."""
    return drawn_line(source, line)[0]


def state_text(app) -> str:
    return app.main.query_one(StatusBar).state_text


# --- waiting for the real program ---------------------------------------------------------------


async def started(pilot) -> None:
    """The session's first stop is on screen and every worker has finished."""
    app = pilot.app
    await wait_for(pilot, lambda: app.session.state.program == "stopped", timeout=START_TIMEOUT, what="the first stop")
    await wait_for(pilot, lambda: app.main.state.stop is not None and app.main.source.current_line is not None,
                   what="the first stop on screen")
    await app.workers.wait_for_complete()
    await pilot.pause()


async def stop_at(pilot, file: str, line: int) -> None:
    """pdb stopped at file:line, and the screen shows it (source, current-line mark, status, and
    the other panes, which follow the current line a frame later)."""
    screen = pilot.app.main

    def shown() -> bool:
        stop = screen.state.stop
        return (stop is not None and (stop.file, stop.line) == (file, line)
                and screen.source.path == file and screen.source.current_line == line
                and screen.pump.idle)

    await wait_for(pilot, shown, what=f"the stop at {file}:{line}")


async def open_in_source(pilot, path: str, line: int) -> None:
    screen = pilot.app.main
    screen.open_file(path)
    await wait_for(pilot, lambda: screen.source.path == path, what=f"{path} open")
    screen.source.goto_line(line)
    screen.source.focus()
    await pilot.pause()


async def from_palette(pilot, query: str, pick: str) -> None:
    """ctrl+p, type the query, Enter once `pick` is the best hit."""
    await pilot.press("ctrl+p")
    await wait_for(pilot, lambda: isinstance(pilot.app.screen, CommandPalette), what="the palette")
    await pilot.press(*query)
    results = pilot.app.screen.query_one(CommandList)

    def best() -> bool:
        first = results.get_option_at_index(0) if results.option_count else None
        return results.highlighted == 0 and getattr(getattr(first, "hit", None), "text", None) == pick

    await wait_for(pilot, best, what=f"{pick!r} first in the palette")
    await pilot.press("enter")


# --- start-up -----------------------------------------------------------------------------------


async def test_first_frame_comes_before_the_sandbox_is_ready(session):
    app = DgymApp(session)
    seen: dict = {}

    def look() -> None:  # on the UI thread
        bar = app.main.query_one(StatusBar)
        seen.update(mounted=app.main.is_mounted, laid_out=bar.region.width > 0, state=bar.state_text,
                    sandbox=str(bar.query_one("#sb-sandbox").content), session_state=session.state.program)

    def on_event(event) -> None:
        # Subscribed before the app: this runs first, on the thread that runs start(), before
        # the app hears of the event. What is on screen then came before any of start()'s work.
        if not seen:
            seen["first"] = event.kind
            app.call_from_thread(look)

    session.events.subscribe(on_event, replay=False)
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot)
        assert seen == {"first": ev.CallStarted.kind, "mounted": True, "laid_out": True, "state": "starting…",
                        "sandbox": "sandbox: …", "session_state": "starting"}
        kinds = [e.kind for e in session.events.history]
        assert kinds.index(ev.Progress.kind) < kinds.index(ev.SandboxReady.kind) < kinds.index(ev.Stop.kind)
        bar = app.main.query_one(StatusBar)
        assert bar.state_text == "stopped at main.py:1 in <module>"
        assert str(bar.query_one("#sb-sandbox").content).startswith("local · python")  # and its interpreter
        assert bar.query_one("#sb-isolation").display  # NOT ISOLATED, in red


async def test_a_go_to_line_typed_before_the_stops_file_is_shown_lands_there_once_it_is(session, monkeypatch):
    """`:76⏎` typed as soon as the first stop is announced, while its file is still being read
    from the sandbox (slow on a busy machine), goes to line 76 when the file comes: a tmux test
    saw the file's arrival put the cursor back on the current line, 1."""
    import threading

    gate = threading.Event()
    read = Session._read_source

    def read_late(self, path, actor):
        gate.wait(30)
        return read(self, path, actor)

    monkeypatch.setattr(Session, "_read_source", read_late)
    app = DgymApp(session)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.main
        await wait_for(pilot, lambda: screen.state.stop is not None, timeout=START_TIMEOUT, what="the stop announced")
        assert screen.source.path is None  # its file is still on its way
        await pilot.press(":", "7", "6", "enter")
        gate.set()
        await wait_for(pilot, lambda: screen.source.path == "main.py", what="main.py shown")
        await pilot.pause()
        assert (screen.source.cursor_line, screen.source.current_line) == (76, 1)
        assert "print(format_quote" in drawn_line(screen.source, 76)


def stop_at_main(name: str) -> ev.Event:
    """A stop at main.py:1 with one local, `name`, fed to the screen as the session would."""
    return ev.Event(seq=10_000, ts=0.0, actor=ev.SYSTEM, data=ev.Stop(
        reason="step", file="main.py", line=1, function="<module>",
        stack=[ev.Frame("main.py", 1, "<module>")], locals={name: "'value'"}))


async def test_the_heavy_panes_fill_their_slots_after_the_first_frame(session, monkeypatch):
    """The tree, variables and stack widgets mount just after the first frame, into slots that
    hold their place and titles; what the session said before they came is painted in them."""
    seen: dict = {}
    later = MainScreen._mount_later

    async def mount_later(screen) -> None:
        seen["slots"] = {name: (type(screen.pane(name)).__name__, screen.pane(name).border_title,
                                screen.pane(name).border_subtitle) for name in ("tree", "variables", "stack")}
        seen["regions"] = {name: screen.pane(name).region for name in ("tree", "variables", "stack")}
        # a stop that arrives while the widgets mount: painted once they are there
        screen.feed([stop_at_main("early")])
        await later(screen)
        seen["rows"] = screen.query_one(VariablesPane).values.copy()
        seen["frames"] = screen.query_one(StackPane).option_count

    monkeypatch.setattr(MainScreen, "_mount_later", mount_later)
    app = DgymApp(session)
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot)
        assert seen["slots"] == {"tree": ("Static", "Files", None), "variables": ("Static", "Variables", "⏎ full value"),
                                 "stack": ("Static", "Stack", None)}
        assert all(region.width > 0 and region.height > 0 for region in seen["regions"].values())
        assert seen["rows"] == {"early": "'value'"} and seen["frames"] == 1
        for name, cls, title in (("tree", RepoTree, "Files"), ("variables", VariablesPane, "Variables"),
                                 ("stack", StackPane, "Stack")):
            pane = app.main.pane(name)
            assert isinstance(pane, cls) and pane.border_title == title
            slot = seen["regions"][name]  # the widget took its slot's column (rows shrink: the key hints came)
            assert (pane.region.x, pane.region.width) == (slot.x, slot.width)
        assert app.main.pane("variables").border_subtitle == "⏎ full value"


async def test_a_reset_before_the_heavy_panes_came_is_painted_once_they_do(session, monkeypatch):
    """A replay taken over at once (main.reset) while the panes still mount: the reset painted
    into the slots (AttributeError: 'Static' object has no attribute 'show_stop', in CI); it is
    painted, with what came after it, once the widgets are there."""
    later = MainScreen._mount_later

    async def mount_later(screen) -> None:
        screen.feed([stop_at_main("before")])
        screen.reset()
        screen.feed([stop_at_main("after")])
        await later(screen)

    monkeypatch.setattr(MainScreen, "_mount_later", mount_later)
    # The live session's own first stop is held back until this is checked: on a busy machine it
    # came after the fed one and took its place (the test's race, not the app's).
    import threading

    gate = threading.Event()
    launch = Session._launch
    monkeypatch.setattr(Session, "_launch", lambda self, *a, **k: gate.wait(60) and launch(self, *a, **k))
    app = DgymApp(session)
    try:
        async with app.run_test(size=SIZE) as pilot:
            await wait_for(pilot, lambda: app.main.panes_ready and "after" in app.main.query_one(VariablesPane).values,
                           timeout=30, what="the stop after the reset")
            assert "before" not in app.main.query_one(VariablesPane).values
    finally:
        gate.set()


# --- debugger keys ------------------------------------------------------------------------------


async def test_stepping_keys_send_pdb_commands(session):
    app = DgymApp(session)
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot)
        await asyncio.to_thread(session.set_breakpoint, "shopcart/cart.py", 70)  # for c to stop at
        mark = len(session.events.history)
        for key in "nscr":
            await pilot.press(key)
        await pilot.press("u", "d")
        await wait_for(pilot, lambda: len(pdb_inputs(session, mark)) == 6 and not app.busy, what="six commands")
        assert pdb_inputs(session, mark) == [(c, "human") for c in ("next", "step", "continue", "return", "up", "down")]
        # c reached the breakpoint in add, r ran to its return line, u went to fill_carts and d came back
        await stop_at(pilot, "shopcart/cart.py", 77)
        assert [(e.data.function, e.data.line) for e in session.events.history[mark:]
                if e.kind == ev.Stop.kind][-4:] == [("add", 70), ("add", 77), ("fill_carts", 44), ("add", 77)]
        assert state_text(app) == "stopped at shopcart/cart.py:77 in add"


async def test_b_toggles_a_breakpoint_at_the_cursor_and_c_follows_the_stop(sessions, backend):
    session = sessions(sandbox=backend)
    app = DgymApp(session)
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot)
        screen = app.main
        await open_in_source(pilot, "shopcart/cart.py", 70)
        await pilot.press("b")
        await wait_for(pilot, lambda: screen.state.breakpoints, what="the breakpoint on screen")
        assert breakpoints(session) == [("shopcart/cart.py", 70, None)]
        assert [(b.file, b.line) for b in screen.state.breakpoints] == [("shopcart/cart.py", 70)]
        assert gutter_mark(screen.source, 70) == "●" and gutter_mark(screen.source, 71) == " "

        await pilot.press("c")
        await stop_at(pilot, "shopcart/cart.py", 70)
        assert state_text(app) == "stopped at shopcart/cart.py:70 in add"
        variables = screen.query_one(VariablesPane)
        assert variables.values["quantity"] == "2" and "HOO-01" in variables.values["product"]
        stack = screen.query_one(StackPane)
        assert [f.function for f in stack.frames] == ["<module>", "main", "fill_carts", "add"]
        assert stack.option_count == 4 and stack.highlighted == 0  # innermost first

        # b again on the same line clears it, in pdb too: c now runs on, past the other adds,
        # to the example's bug (a KeyError in reserve, where pdb stops post mortem)
        screen.source.goto_line(70)
        await pilot.press("b")
        await wait_for(pilot, lambda: not screen.state.breakpoints, what="the breakpoint cleared")
        assert breakpoints(session) == []
        assert gutter_mark(screen.source, 70) == " "
        await pilot.press("c")
        await stop_at(pilot, "shopcart/inventory.py", 56)
        assert session.state.stop.reason == "post_mortem"
        assert state_text(app) == "stopped at shopcart/inventory.py:56 in reserve — KeyError"


async def test_shift_b_asks_for_a_condition(session):
    app = DgymApp(session)
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot)
        screen = app.main
        await open_in_source(pilot, "shopcart/cart.py", 70)
        await pilot.press("B")
        await wait_for(pilot, lambda: isinstance(app.screen, PromptScreen), what="the condition prompt")
        await pilot.press(*"quantity > 2", "enter")
        await wait_for(pilot, lambda: breakpoints(session) == [("shopcart/cart.py", 70, "quantity > 2")],
                       what="the conditional breakpoint in pdb")
        await wait_for(pilot, lambda: gutter_mark(screen.source, 70) == "◆", what="the conditional mark")

        await pilot.press("B")  # shows the condition; cancelled, nothing changes
        await wait_for(pilot, lambda: isinstance(app.screen, PromptScreen), what="the condition prompt")
        assert app.screen.query_one("#prompt-input").value == "quantity > 2"
        await pilot.press("escape")
        assert isinstance(app.screen, MainScreen)
        await app.workers.wait_for_complete()
        assert breakpoints(session) == [("shopcart/cart.py", 70, "quantity > 2")]

        # pdb applies it: the adds of 2 units and 1 unit pass, Bob's 60 notebooks stop
        await pilot.press("c")
        await stop_at(pilot, "shopcart/cart.py", 70)
        assert screen.query_one(VariablesPane).values["quantity"] == "60"


async def test_t_runs_to_the_cursor_line(session):
    app = DgymApp(session)
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot)
        mark = len(session.events.history)
        app.main.source.goto_line(77)  # main.py, in main(): after the checkout previews
        await pilot.press("t")
        await stop_at(pilot, "main.py", 77)
        assert pdb_inputs(session, mark) == [("tbreak main.py:77", "human"), ("continue", "human")]
        assert state_text(app) == "stopped at main.py:77 in main"
        # the program ran up to there (its output reaches the console just after the stop's frame)
        await wait_for(pilot, lambda: "Checkout previews" in log_text(app), what="the program's output")
        assert breakpoints(session) == []  # the temporary breakpoint went with the stop


# --- the console and the agent ------------------------------------------------------------------


async def test_console_history_completion_and_escape(session):
    app = DgymApp(session)
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot)
        await asyncio.to_thread(session.set_breakpoint, "shopcart/cart.py", 70)
        await pilot.press("c")
        await stop_at(pilot, "shopcart/cart.py", 70)
        await pilot.press("exclamation_mark")
        console_input = app.main.query_one(PdbInput)
        assert app.main.focused is console_input
        await pilot.press(*"p quantity", "enter")  # typed keys do not trigger the pudb bindings
        await wait_for(pilot, lambda: "(Pdb) p quantity\n2" in log_text(app), what="pdb's answer in the console")
        assert session.state.stop.line == 70  # the p, q, n... typed did not step
        # n s c u d are priority bindings: with the console focused they are its text, not steps
        mark = len(session.events.history)
        await pilot.press(*"nscud")
        assert console_input.value == "nscud" and not pdb_inputs(session, mark)
        console_input.value = ""
        await pilot.press("up")
        assert console_input.value == "p quantity"
        console_input.value = ""
        await pilot.press(*"whe", "tab")
        assert console_input.value == "where "
        console_input.value = "p pro"
        console_input.cursor_position = 5
        await pilot.press("tab")  # names complete from the real frame's locals
        assert console_input.value == "p product"
        console_input.value = ""
        await pilot.press("enter")  # an empty line repeats the last command, as in pdb
        await wait_for(pilot, lambda: pdb_inputs(session).count(("p quantity", "human")) == 2,
                       what="the repeated command")
        await wait_for(pilot, lambda: log_text(app).count("(Pdb) p quantity\n2") == 2, what="its answer")
        await pilot.press("escape")
        assert app.main.focused is app.main.source


def test_complete_pdb_commands_and_names():
    assert complete("con", []) == ("con", ["condition", "cont", "continue"])
    assert complete("conti", []) == ("continue ", ["continue"])
    assert complete("wher", [])[0] == "where "
    assert complete("p se", ["self", "sku"]) == ("p self", ["self"])
    assert complete("zzz", []) == ("zzz", [])


async def test_agent_commands_show_with_their_actor(session):
    app = DgymApp(session)
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot)
        result = await asyncio.to_thread(session.send, "p 6 * 7", "agent")  # from its own thread
        assert result.output == "42\n"
        await wait_for(pilot, lambda: "(Pdb) p 6 * 7  · agent\n42" in log_text(app), what="the agent's command")
        await wait_for(pilot, lambda: "agent (Pdb) p 6 * 7" in transcript_texts(app), what="the transcript entry")
        assert "human (Pdb) p 6 * 7" not in transcript_texts(app)


# --- help and quitting --------------------------------------------------------------------------


async def test_help_lists_every_binding(session):
    app = DgymApp(session)
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot)
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        shown = "\n".join(text for rows in app.screen.rows.values() for _, text in rows)
        for _, bindings in keymap.binding_sections():
            for binding in bindings:
                assert (binding.tooltip or binding.description) in shown
        for description in ("Search", "Go to line", "Previous command", "command palette"):
            assert description in shown
        await pilot.press("escape")
        assert isinstance(app.screen, MainScreen)


async def test_q_quits_at_once_without_changes(session):
    app = DgymApp(session)
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot)
        folder = session.sandbox.root
        assert os.path.isdir(folder)
        await pilot.press("q")  # no question: the sandbox holds nothing new
        await wait_for(pilot, lambda: app.closed, what="the sandbox to close")
    assert app.return_code == 0
    assert not os.path.exists(folder)


async def test_q_asks_first_when_the_sandbox_holds_changes(session):
    app = DgymApp(session)
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot)
        folder = session.sandbox.root
        cart = session.sandbox.read_text("shopcart/cart.py")
        session.sandbox.write_text("shopcart/cart.py", cart + "# changed in the sandbox\n")
        await pilot.press("q")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen) and app.screen.query(".title"),
                       what="the confirmation")
        assert "unapplied changes (shopcart/cart.py)" in str(app.screen.query_one(".title").render())
        await pilot.press("n")
        assert isinstance(app.screen, MainScreen) and not app.closing
        assert os.path.isdir(folder) and session.state.program == "stopped"
        await pilot.press("ctrl+q")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen), what="the confirmation")
        await pilot.press("y")
        await wait_for(pilot, lambda: app.closed, what="the sandbox to close")
    assert not os.path.exists(folder)


async def test_a_call_that_ends_while_the_app_shuts_down_is_dropped(session, monkeypatch):
    """A CI run failed as a test's app closed: a file read ended while the screens were being taken
    down, and its answer went to the source pane, already removed (NoMatches); a person quitting
    would have seen that traceback. Here the read (of a file the program removed, so the answer is
    an error for the source pane) is held until the main screen unmounts, so its answer always
    comes during the shut-down: it is dropped, and the app ends without an error."""
    ended, delivered = threading.Event(), threading.Event()
    op = session.runner.operations["read_source"]

    def held_read(target, actor, path):
        ended.wait(30)
        return op.fn(target, actor=actor, path=path)

    monkeypatch.setattr(session.runner, "operations",
                        {**session.runner.operations, "read_source": dataclasses.replace(op, fn=held_read)})
    app = DgymApp(session)
    post = app.post_message

    def post_noting(message):
        posted = post(message)
        if isinstance(message, RunOnUI) and ended.is_set():
            delivered.set()  # the held read's answer is in the app's queue
        return posted

    monkeypatch.setattr(app, "post_message", post_noting)

    def on_unmount(screen) -> None:  # the panes are gone: the read ends, its answer comes now
        ended.set()
        assert delivered.wait(30), "the read's answer never reached the app"

    monkeypatch.setattr(MainScreen, "on_unmount", on_unmount, raising=False)
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot)
        app.main.open_file("shopcart/gone.py")
        await wait_for(pilot, lambda: any(e.kind == ev.CallStarted.kind and e.data.name == "read_source"
                                          for e in session.events.history), what="the read to start")
    assert delivered.is_set()


# --- variables and stack ------------------------------------------------------------------------


async def test_variables_enter_shows_the_full_value_via_pp(session):
    app = DgymApp(session)
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot)
        await asyncio.to_thread(session.set_breakpoint, "shopcart/cart.py", 70)
        await pilot.press("c")
        await stop_at(pilot, "shopcart/cart.py", 70)
        await pilot.press("f5")
        table = app.main.query_one(VariablesPane)
        assert app.main.focused is table
        table.move_cursor(row=list(table.values).index("product"))
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, ValueScreen), what="the value")
        modal = app.screen
        await wait_for(pilot, lambda: "pp" in str(modal.query_one("#value-hint").render()), what="pp's answer")
        assert pdb_inputs(session)[-1] == ("pp product", "human")
        printed = [e.data.text for e in session.events.history if e.kind == ev.PdbOutput.kind][-1]
        assert printed.startswith("Product(sku='HOO-01'")
        assert str(modal.query_one("#value-text").render()) == printed.rstrip("\n")
        # The tree opens one level at a time, fetched quietly from pdb when opened.
        quiet_before = len(pdb_inputs(session))
        tree = modal.query_one("#value-tree")
        assert app.focused is tree and not tree.root.children
        await pilot.press("enter")
        await wait_for(pilot, lambda: tree.root.children, what="the value's attributes")
        names = [str(child.label).split(" = ")[0] for child in tree.root.children]
        assert "sku" in names and "price" in names
        assert len(pdb_inputs(session)) == quiet_before
        await pilot.press("escape")
        assert isinstance(app.screen, MainScreen)


async def test_selecting_a_frame_moves_pdb_there(session):
    app = DgymApp(session)
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot)
        await asyncio.to_thread(session.set_breakpoint, "shopcart/inventory.py", 56)
        await pilot.press("c")
        await stop_at(pilot, "shopcart/inventory.py", 56)  # in reserve, five frames deep
        await pilot.press("f6")
        stack = app.main.query_one(StackPane)
        assert [f.function for f in reversed(stack.frames)] == [
            "reserve", "process_order", "process_batch", "main", "<module>"]
        assert stack.highlighted == 0  # innermost first, and current
        mark = len(session.events.history)

        await pilot.press("down", "enter")  # the caller: up 1
        await stop_at(pilot, "shopcart/orders.py", 61)
        assert session.state.stop.function == "process_order" and stack.highlighted == 1
        await pilot.press("down", "down", "enter")  # two more out: up 2
        await stop_at(pilot, "main.py", 80)
        assert session.state.stop.function == "main" and stack.highlighted == 3
        await pilot.press("home", "enter")  # back to the innermost: down 3
        await stop_at(pilot, "shopcart/inventory.py", 56)
        assert stack.highlighted == 0
        assert pdb_inputs(session, mark) == [("up 1", "human"), ("up 2", "human"), ("down 3", "human")]


async def test_variables_highlight_changes_within_a_frame_and_repaint_on_theme_switch(session):
    app = DgymApp(session)
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot)
        await asyncio.to_thread(session.set_breakpoint, "main.py", 76)  # in main's loop over the orders
        await pilot.press("c")
        await stop_at(pilot, "main.py", 76)
        variables = app.main.query_one(VariablesPane)
        first_order = variables.values["order"]
        assert variables.changed == set()  # a new frame: nothing to compare with
        await pilot.press("c")  # the same line, the next order
        await wait_for(pilot, lambda: variables.values["order"] != first_order, what="the next order")
        assert variables.changed == {"order"}
        assert "bold" in str(variables.get_cell("order", "value").style)
        assert "bold" not in str(variables.get_cell("catalog", "value").style)
        await pilot.press("u")  # another frame: nothing is news
        await wait_for(pilot, lambda: getattr(app.main.state.stop, "function", None) == "<module>", what="the module frame")
        # the panes follow the stop a frame later
        await wait_for(pilot, lambda: (variables._where or ("", ""))[1] == "<module>", what="the pane on the module frame")
        assert variables.changed == set()

        def human_style():  # the console repaints its lines in the new theme's colours
            return next(seg.style for strip in app.main.query_one("#pdb-log").lines
                        for seg in strip if seg.text == "(Pdb) ")

        dark = human_style()
        app.theme = "dgym-light"
        await pilot.pause(0.2)
        assert human_style() != dark


async def test_ctrl_c_interrupts_only_while_a_command_runs(repo, sessions):
    (repo / "loop.py").write_text(LOOP)
    session = sessions("python loop.py")
    app = DgymApp(session)
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot)
        mark = len(session.events.history)
        await pilot.press("ctrl+c")  # idle: nothing to interrupt, and pdb is not touched
        await app.workers.wait_for_complete()
        assert session.events.history[mark:] == [] and not app.busy
        result = await asyncio.to_thread(session.send, "p 1 + 1")
        assert result.output == "2\n"  # no stray KeyboardInterrupt waiting in pdb

        await pilot.press("c")  # into the endless loop
        await wait_for(pilot, lambda: ("continue", "human") in pdb_inputs(session, mark) and app.busy
                       and str(app.main.console.query_one("#pdb-prompt").render()) == "running…",
                       what="the program running (no prompt while it runs)")
        await pilot.press("ctrl+c")
        await wait_for(pilot, lambda: getattr(app.main.state.stop, "function", None) == "spin", what="the stop in the loop")
        assert session.state.program == "stopped" and session.state.stop.file == "loop.py"
        assert session.state.stop.line in (3, 4)
        assert "Program interrupted" in log_text(app)
        assert not [e for e in session.events.history if e.kind == ev.Interrupted.kind]  # ctrl+c, not the timeout
        await wait_for(pilot, lambda: not app.busy, what="the queue to drain")


async def test_a_long_command_shows_at_once_that_it_runs(repo, sessions):
    (repo / "loop.py").write_text(LOOP)
    session = sessions("python loop.py")
    app = DgymApp(session)
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot)
        await pilot.press("c")
        try:
            await wait_for(pilot, lambda: "(Pdb) continue" in log_text(app) and state_text(app) == "running…",
                           timeout=3, what="the command and 'running…' on screen while it runs")
        finally:
            await pilot.press("ctrl+c")
            await wait_for(pilot, lambda: session.state.program == "stopped" and not app.busy, what="the stop in the loop")


# --- the repo tree ------------------------------------------------------------------------------


async def test_tree_is_lazy_hides_litter_marks_changes_and_opens_files(repo, sessions):
    # Tool caches the example's .gitignore does not name travel into the sandbox with the copy.
    for cache in (".mypy_cache", ".ruff_cache"):
        (repo / cache).mkdir()
        (repo / cache / "CACHEDIR.TAG").write_text("Signature: 8a477f597d28d172789f06886806bc55\n")
    (repo / "stray.pyc").write_bytes(b"\0")
    session = sessions()
    app = DgymApp(session)
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot)
        screen = app.main
        tree = screen.query_one(RepoTree)
        await wait_for(pilot, lambda: len(tree.root.children) > 0, what="the top level listed")
        in_sandbox = {e.name for e in session.sandbox.list_dir(".")}
        assert {".mypy_cache", ".ruff_cache", "stray.pyc", "shopcart"} <= in_sandbox
        assert os.path.isdir(os.path.join(session.sandbox.root, ".git"))  # the sandbox's own repo
        names = [str(n.label) for n in tree.root.children]
        assert not {".mypy_cache", ".ruff_cache", "stray.pyc", ".git"} & set(names)
        assert names.index("shopcart") < names.index("main.py")  # directories first
        folders = [n for n in tree.root.children if n.data.is_dir]
        assert all(not n.data.loaded and not n.children for n in folders)  # nothing below the top level yet

        # what running code leaves behind, in the sandbox: not in the tree
        litter = await asyncio.to_thread(
            session.sandbox.exec, "mkdir -p shopcart/__pycache__ shopcart/.pytest_cache && "
                                  "touch shopcart/__pycache__/cart.cpython-311.pyc shopcart/stale.pyc")
        assert litter.ok
        shop = next(n for n in folders if str(n.label) == "shopcart")
        shop.expand()
        await wait_for(pilot, lambda: len(shop.children) > 0, what="shopcart/ listed")
        shop_names = {str(n.label) for n in shop.children}
        assert "cart.py" in shop_names and not {"__pycache__", ".pytest_cache", "stale.pyc"} & shop_names
        assert all(not n.data.loaded for n in folders if n is not shop)

        # a change in the sandbox marks the file and its folders
        cart = session.sandbox.read_text("shopcart/cart.py")
        session.sandbox.write_text("shopcart/cart.py", cart + "# changed in the sandbox\n")
        await asyncio.to_thread(session.changed_files)  # the look-up emits the change to the views
        await wait_for(pilot, lambda: set(tree.changed) == {"shopcart/cart.py"}, what="the changed files")
        cart_node = next(n for n in shop.children if str(n.label) == "cart.py")

        def label(node) -> str:
            return tree.render_label(node, tree.rich_style, tree.rich_style).plain

        assert label(cart_node).endswith("●") and label(shop).endswith("●")
        assert "●" not in label(next(n for n in shop.children if str(n.label) == "orders.py"))

        # Enter opens it, as the sandbox holds it now
        tree.focus()
        tree.move_cursor(cart_node)
        await pilot.press("enter")
        await wait_for(pilot, lambda: screen.source.path == "shopcart/cart.py", what="cart.py opened")
        assert screen.focused is screen.source
        last = screen.source.line_count
        screen.source.goto_line(last)
        await pilot.pause()
        assert drawn_line(screen.source, last).rstrip().endswith("# changed in the sandbox")
        assert "shopcart/cart.py" in screen.repo_files


# --- layout -------------------------------------------------------------------------------------


async def test_compact_layout_folds_side_panes_into_tabs(session):
    app = DgymApp(session)
    async with app.run_test(size=(80, 24)) as pilot:
        await started(pilot)
        screen = app.main
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
        await started(pilot)
        screen = app.main
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
        for key, pane in (("f4", "#transcript"), ("f5", "#variables"), ("f6", "#stack"), ("f7", "#agent"),
                          ("f1", "#tree")):  # every pane grows to the screen, and back
            await pilot.press(key, "z")
            assert screen.maximized is screen.query_one(pane), key
            await pilot.press("z")
            assert screen.maximized is None
        screen.toggle_pane("transcript")
        await pilot.pause()
        assert not screen.query_one(Transcript).display
        await pilot.press("f4")  # focusing a hidden pane shows it again
        assert screen.query_one(Transcript).display


# --- palette, theme, errors, transcript ---------------------------------------------------------


async def test_palette_runs_commands(session):
    app = DgymApp(session)
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot)
        screen = app.main
        # the example's own suite, run by pytest in the sandbox: 18 pass, 5 fail
        await from_palette(pilot, "Run the tests", "Run the tests")
        summary = "18 passed, 5 failed, 0 errors"
        await wait_for(pilot, lambda: any(summary in t for t in transcript_texts(app)), what="the test results",
                       timeout=60)
        assert f"human tests: {summary}" in transcript_texts(app)  # the person ran them
        await wait_for(pilot, lambda: any(n.title == "Tests" for n in app._notifications), what="the notification")
        notice = next(n for n in app._notifications if n.title == "Tests")
        assert notice.message.startswith(summary) and notice.severity == "warning"
        assert "tests/test_orders.py::test_batch_backorders_when_stock_runs_out" in notice.message

        # open a file by fuzzy name
        await wait_for(pilot, lambda: "shopcart/catalog.py" in screen.repo_files, what="the file list")
        await from_palette(pilot, "catalog.py", "shopcart/catalog.py")
        await wait_for(pilot, lambda: screen.source.path == "shopcart/catalog.py", what="catalog.py opened")

        # change the entrypoint through its modal: the program restarts under pytest
        await from_palette(pilot, "Change entrypoint", "Change entrypoint…")
        await wait_for(pilot, lambda: isinstance(app.screen, PromptScreen), what="the entrypoint prompt")
        prompt = app.screen.query_one("#prompt-input")
        assert prompt.value == "python main.py"
        prompt.value = "pytest tests/test_orders.py"
        await pilot.press("enter")
        # a failing test stops post mortem where the stock runs out
        await stop_at(pilot, "shopcart/inventory.py", 56)
        assert session.entrypoint_label == "pytest tests/test_orders.py"
        assert session.state.stop.reason == "post_mortem"
        restart = [e for e in session.events.history if e.kind == ev.ProgramStart.kind][-1]
        assert restart.data.restart and restart.data.entrypoint == "pytest tests/test_orders.py"
        assert str(screen.query_one("#sb-entry").content) == "▶ pytest tests/test_orders.py"


async def test_theme_switch_persists_in_the_config(session, repo, config_dir):
    app = DgymApp(session)
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot)
        assert app.theme == "dgym-dark"
        app.theme = "dgym-light"
        await pilot.pause()
    assert load_config()["theme"] == "dgym-light"
    assert config_path().parent == config_dir
    # new apps (their sessions not started) read it back
    assert DgymApp(Session(str(repo), sandbox="local")).theme == "dgym-light"
    assert DgymApp(Session(str(repo), sandbox="local"), theme="nord").theme == "nord"
    assert DgymApp(Session(str(repo), sandbox="local"), theme="no-such-theme").theme == "dgym-dark"


@pytest.mark.parametrize("case", ["empty folder", "no docker engine"])
async def test_errors_show_in_the_source_area_without_a_traceback(case, tmp_path, sessions, monkeypatch):
    if case == "empty folder":
        (tmp_path / "empty").mkdir()
        session, expected = sessions(path=tmp_path / "empty"), "has no files to copy: nothing to debug there"
    else:
        monkeypatch.setenv("DOCKER_HOST", "unix:///nonexistent.sock")
        session, expected = sessions(sandbox="docker"), "start Docker or use --sandbox local"
    app = DgymApp(session)
    async with app.run_test(size=SIZE) as pilot:
        message = app.main.query_one("#source-message")
        await wait_for(pilot, lambda: message.display, what="the message")
        text = str(message.render())
        assert expected in text and "Traceback" not in text
        assert session.state.program == "error" and state_text(app).startswith("error: ")
        assert any(expected in str(n.message) for n in app._notifications)
        before = len(app._notifications)
        await pilot.press("n")  # keys with no pdb give a notice, not a crash
        await wait_for(pilot, lambda: len(app._notifications) > before, what="the notice")
        assert isinstance(app.screen, MainScreen) and message.display


async def test_transcript_folds_long_output_and_follows_the_end(session):
    app = DgymApp(session)
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot)
        transcript = app.main.query_one(Transcript)
        # the program prints its catalog and previews on the way to the breakpoint: that folds
        await asyncio.to_thread(session.set_breakpoint, "shopcart/cart.py", 70)
        await pilot.press("c")
        await stop_at(pilot, "shopcart/cart.py", 70)
        folded = [c for c in transcript.query(Collapsible) if "Catalog: 10 products" in str(c.title)]
        assert len(folded) == 1 and folded[0].collapsed and str(folded[0].title).endswith(" lines)")

        for i in range(40):  # the agent works through a list; the view follows
            await asyncio.to_thread(session.send, f"p {i}", "agent")
        await wait_for(pilot, lambda: "agent (Pdb) p 39" in transcript_texts(app), what="the last command")
        await wait_for(pilot, lambda: transcript.max_scroll_y > 0 and transcript.scroll_y == transcript.max_scroll_y,
                       what="the transcript at its end")
        transcript.scroll_home(animate=False)
        await pilot.pause()
        await asyncio.to_thread(session.send, "p 99", "agent")
        await wait_for(pilot, lambda: "agent (Pdb) p 99" in transcript_texts(app), what="the new entry")
        await pilot.pause(0.1)
        assert transcript.scroll_y == 0  # the person scrolled up: it stays put


# --- watch expressions, logpoints, hit counts, data breakpoints ---------------------------------


def variable_row(variables, key: str) -> str:
    return " ".join(str(cell) for cell in variables.get_row(key))


async def test_watch_expressions_and_a_data_breakpoint_in_the_variables_pane(session):
    app = DgymApp(session)
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot)
        variables = app.main.query_one(VariablesPane)
        await asyncio.to_thread(session.set_breakpoint, "shopcart/cart.py", 70)
        await pilot.press("c")
        await stop_at(pilot, "shopcart/cart.py", 70)
        await pilot.press("w")
        await wait_for(pilot, lambda: isinstance(app.screen, PromptScreen), what="the watch prompt")
        await pilot.press(*"quantity * 10", "enter")
        await wait_for(pilot, lambda: [w.expr for w in variables.watches] == ["quantity * 10"], what="the watch row")
        first = variables.watches[0].value
        assert variable_row(variables, "\0w:quantity * 10") == f"◉ quantity * 10 {first}"
        await pilot.press("c")  # the next add: the watch is evaluated again, a change is highlighted
        await wait_for(pilot, lambda: app.main.state.stop.data_change is None and len(session.events.history) and
                       variables.watches and variables.watches[0].value != first, what="the watch re-evaluated")
        assert variables.watch_changed == {"quantity * 10"}
        assert "bold" in str(variables.get_cell("\0w:quantity * 10", "value").style)

        await pilot.press("D")
        await wait_for(pilot, lambda: isinstance(app.screen, PromptScreen), what="the data breakpoint prompt")
        await pilot.press(*"self._lines", "enter")
        await wait_for(pilot, lambda: [d.expr for d in variables.data_breakpoints] == ["self._lines"],
                       what="the data breakpoint row")
        await asyncio.to_thread(session.clear_breakpoint, "shopcart/cart.py", 70)
        await pilot.press("c")  # the line that adds to the cart's lines runs: pdb stops after it
        await wait_for(pilot, lambda: getattr(app.main.state.stop, "reason", None) == "data", what="the data stop")
        await wait_for(pilot, lambda: variables.data_change is not None, what="the change on show")
        change = variables.data_change
        assert change.expr == "self._lines" and change.by == "shopcart/cart.py:74" and change.old != change.new
        assert variable_row(variables, "\0chg").startswith("⚑ changed self._lines: ")
        assert "→" in variable_row(variables, "\0chg")

        variables.focus()
        variables.move_cursor(row=variables.get_row_index("\0w:quantity * 10"))
        await pilot.press("delete")  # unwatch
        await wait_for(pilot, lambda: variables.watches == [] and session.breakpoints.watches == [],
                       what="the watch gone")


async def test_logpoint_and_hit_count_keys_mark_the_gutter(session):
    app = DgymApp(session)
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot)
        screen = app.main
        await open_in_source(pilot, "shopcart/cart.py", 70)
        await pilot.press("L")
        await wait_for(pilot, lambda: isinstance(app.screen, PromptScreen), what="the logpoint prompt")
        await pilot.press(*"adding {quantity} of {product.sku}", "enter")
        await wait_for(pilot, lambda: gutter_mark(screen.source, 70) == "»", what="the logpoint mark")
        screen.source.goto_line(74)
        await pilot.press("H")
        await wait_for(pilot, lambda: isinstance(app.screen, PromptScreen), what="the hit count prompt")
        await pilot.press(*"3", "enter")
        await wait_for(pilot, lambda: gutter_mark(screen.source, 74) == "◈", what="the hit count mark")
        assert [(b.line, b.log, b.hit) for b in session.breakpoints.items()] == [
            (70, "adding {quantity} of {product.sku}", None), (74, None, "hit == 3")]
        await pilot.press("c")  # the logpoint prints each add and never stops; line 74 stops the 3rd time
        await stop_at(pilot, "shopcart/cart.py", 74)
        await wait_for(pilot, lambda: log_text(app).count("[log shopcart/cart.py:70] adding ") >= 3,
                       what="the logpoint's lines in the console")
        assert session.breakpoints.items()[1].hits >= 3
        # kept across a restart, marks and all
        await pilot.press("R")
        await wait_for(pilot, lambda: session.state.program == "stopped" and session.state.stop.line == 1 and
                       [b.number for b in session.breakpoints.items()] == [1, 2], what="the restart")
        assert [(b.line, b.log, b.hit) for b in session.breakpoints.items()] == [
            (70, "adding {quantity} of {product.sku}", None), (74, None, "hit == 3")]


async def test_step_back_shows_the_run_s_stops_and_runs_back_to_one(session):
    from dgym_tui.ui.screens.history import StopHistoryScreen

    app = DgymApp(session)
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot)
        await asyncio.to_thread(session.set_breakpoint, "shopcart/cart.py", 70)
        quantities = []
        for _ in range(3):
            await pilot.press("c")
            await wait_for(pilot, lambda: app.main.state.stop is not None and app.main.state.stop.line == 70 and
                           len(app.main.state.run_stops) == len(quantities) + 2, what="the next stop at cart.py:70")
            quantities.append(app.main.state.stop.locals["quantity"])
        await pilot.press("left_square_bracket")
        await wait_for(pilot, lambda: isinstance(app.screen, StopHistoryScreen), what="the stops of this run")
        history = app.screen
        assert len(history.stops) == 4  # the start, then the three stops at line 70
        await pilot.press("up")  # read-only: the 2nd stop at cart.py:70 as it was recorded
        detail = str(history.query_one("#history-detail").render())
        assert detail.startswith("Stop #3: breakpoint at shopcart/cart.py:70 in add")
        assert f"quantity = {quantities[1]}" in detail and "▶ add  shopcart/cart.py:70" in detail
        assert session.state.stop.locals["quantity"] == quantities[2]  # looking changed nothing
        await pilot.press("enter")  # run to here
        await wait_for(pilot, lambda: any(e.kind == "notice" and e.data.message.startswith(("Back at", "Reached",
                                                                                             "Could not"))
                                          for e in session.events.history), timeout=60, what="the step back")
        notice = [e.data.message for e in session.events.history if e.kind == "notice"][-1]
        assert notice == "Back at stop #3: shopcart/cart.py:70, the 2nd time, with the stack and values recorded"
        await stop_at(pilot, "shopcart/cart.py", 70)
        assert app.main.state.stop.locals["quantity"] == quantities[1]


async def test_the_palette_offers_the_watch_and_data_breakpoint_prompts(session):
    app = DgymApp(session)
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot)
        await from_palette(pilot, "Watch an exp", "Watch an expression…")
        await wait_for(pilot, lambda: isinstance(app.screen, PromptScreen), what="the watch prompt")
        await pilot.press(*"DATA_FILE.name", "enter")
        await wait_for(pilot, lambda: session.breakpoints.watches == ["DATA_FILE.name"], what="the watch")
        await pilot.press("n")  # the next stop evaluates it (not yet defined on line 1's next line)
        await wait_for(pilot, lambda: app.main.query_one(VariablesPane).watches, what="the watch row")
        assert app.main.query_one(VariablesPane).watches[0].error.startswith("NameError")
