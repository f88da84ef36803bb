"""Pilot tests for the friction a newcomer met (issue 11): the palette's order with an empty
query, Escape then q, the footer after a resize. A real local Session on a copy of the example."""

from __future__ import annotations

import html
import re
import shutil
import time

import pytest
from test_ui_support import EXAMPLE, type_at_once, wait_for
from textual import events
from textual._xterm_parser import XTermParser
from textual.command import CommandList, CommandPalette
from textual.binding import Binding
from textual.constants import ESCAPE_DELAY
from textual.widgets import Input

from dgym_tui.core.session import Session
from dgym_tui.ui.app import DgymApp
from dgym_tui.ui.keys import EscapeThenKey, plain_key
from dgym_tui.ui.widgets.pdb_console import PdbInput


def log_text(app) -> str:
    return "\n".join(strip.text for strip in app.main.query_one("#pdb-log").lines)

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
    await wait_for(pilot, lambda: app.main.source.current_line is not None, timeout=60,
                   what="the first stop on screen")
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


# --- Escape then a key, typed quickly -------------------------------------------------------


def terminal_keys(data: str) -> list:
    """What Textual's input parser makes of these bytes, typed at once (the real parser)."""
    parser = XTermParser()
    keys = list(parser.feed(data))
    time.sleep(ESCAPE_DELAY * 1.5)  # nothing more comes: the parser decides
    return keys + list(parser.tick())


def test_the_terminal_sends_escape_then_q_as_alt_q():
    assert [key.key for key in terminal_keys("\x1bq")] == ["alt+q"]  # why keys were lost
    assert plain_key("alt+q") == "q" and plain_key("alt+shift+b") == "B"
    assert plain_key("alt+question_mark") == "question_mark"
    assert plain_key("q") is None and plain_key("alt+ctrl+x") is None


@pytest.mark.parametrize("focus", ["source", "console"])
async def test_escape_then_q_typed_at_once_quits(session, focus):
    app = DgymApp(session)
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot)
        console = app.main.query_one(PdbInput)
        if focus == "console":
            await pilot.press("exclamation_mark")
            await wait_for(pilot, lambda: app.focused is console, what="the console focused")
            await pilot.press(*"p 1")  # typed, not sent
        for key in terminal_keys("\x1bq"):
            app.post_message(key)
        await wait_for(pilot, lambda: app.closing, what="the app quitting")
        assert console.value == ("p 1" if focus == "console" else "")  # no q typed into it


class EscapeLog(EscapeThenKey):
    """An Input, and an app-level escape binding that records each escape."""

    BINDINGS = [Binding("escape", "note_escape")]

    def __init__(self) -> None:
        super().__init__()
        self.escapes = 0

    def compose(self):
        yield Input()

    def action_note_escape(self) -> None:
        self.escapes += 1


async def test_escape_then_q_as_two_keys_back_to_back_quits(session):
    # ESC alone reaches the app 0.1 s after it was typed; a q typed just after follows at once.
    # Escape moves the focus later (call_later): q used to go to the console, typed in.
    app = DgymApp(session)
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot)
        console = app.main.query_one(PdbInput)
        await pilot.press("exclamation_mark")
        await wait_for(pilot, lambda: app.focused is console, what="the console focused")
        app.post_message(events.Key("escape", "\x1b"))
        app.post_message(events.Key("q", "q"))
        await wait_for(pilot, lambda: app.closing, what="the app quitting")
        assert console.value == ""


async def test_keys_typed_behind_a_split_escape_keep_their_order():
    app = EscapeLog()
    async with app.run_test() as pilot:
        field = app.query_one(Input)
        keys = terminal_keys("\x1bxyz")  # Escape, then x y z, typed at once
        assert [key.key for key in keys] == ["alt+x", "y", "z"]
        for key in keys:
            app.post_message(key)
        await wait_for(pilot, lambda: field.value == "xyz", what="xyz typed")
        assert app.escapes == 1


# --- the footer after a resize -------------------------------------------------------------------


def screen_rows(app) -> list[str]:
    """The screen's text, row by row, from an SVG screenshot (each run of cells at its column)."""
    rows: dict[int, list[str]] = {}
    svg = app.export_screenshot()
    for found in re.finditer(r'<text class="[^"]*" x="([\d.]+)" y="[\d.]+" textLength="[\d.]+" '
                             r'clip-path="url\(#[^"]*-line-(\d+)\)">(.*?)</text>', svg):
        column, text = round(float(found.group(1)) / 12.2), html.unescape(found.group(3))
        cells = rows.setdefault(int(found.group(2)), [])
        cells.extend(" " * (column + len(text) - len(cells)))
        cells[column:column + len(text)] = text.replace("\xa0", " ")
    return ["".join(rows.get(y, [])) for y in range(app.size.height)]


async def test_footer_after_a_resize_to_80x24_and_back(session):
    app = DgymApp(session)
    async with app.run_test(size=(160, 50)) as pilot:
        await started(pilot)
        keys = "/ Search ^g Go to line n Next s Step c Cont r Return b Break t To cursor R Restart ! Console ? Help q Quit"
        footers = []
        for size in ((160, 50), (80, 24), (160, 50), (100, 30), (160, 50)):
            await pilot.resize_terminal(*size)
            await pilot.pause(0.3)
            footers.append(screen_rows(app)[-1].ljust(size[0]))
        wide, narrow = footers[0], footers[1]
        assert wide.startswith(keys + " ") and wide.endswith(" ▏^p palette ")
        # 80 columns: the keys that fit, then the palette key flush with the right edge; nothing
        # of the keys hidden behind it shows past its end (it was `^p paletteo`)
        assert narrow == keys[:68] + "▏^p palette "
        assert footers[2] == wide and footers[4] == wide
        assert footers[3] == keys[:88] + "▏^p palette "


class KeepsEscape(Input):
    def on_key(self, event) -> None:
        if event.key == "escape":
            event.stop()  # this widget keeps it: it never comes back to the App


class EscapeKept(EscapeThenKey):
    BINDINGS = [Binding("q", "note_q")]

    def __init__(self) -> None:
        super().__init__()
        self.qs = 0

    def compose(self):
        yield KeepsEscape()

    def action_note_q(self) -> None:
        self.qs += 1


async def test_the_key_after_an_escape_a_widget_keeps_still_arrives():
    app = EscapeKept()
    async with app.run_test() as pilot:
        for key in terminal_keys("\x1bq"):
            app.post_message(key)
        # the Input takes the q as text (it does for a q typed alone too), in due course
        await wait_for(pilot, lambda: app.query_one(KeepsEscape).value == "q", timeout=5, what="q typed")


# --- keys typed ahead: every one reaches what it was typed for ------------------------------------


async def test_keys_typed_ahead_reach_the_prompt_and_the_console(session):
    """`:76⏎` and `!p 6*7⏎` typed at once — each key already queued when the one before it opens
    a prompt or moves the focus, as a fast typist's or a script's keys are: none is lost, none
    lands in the pane that had the focus before."""
    from dgym_tui.ui.screens.modals import PromptScreen

    app = DgymApp(session)
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot)
        type_at_once(app, ":76\r")
        await wait_for(pilot, lambda: app.main.source.cursor_line == 76 and not isinstance(app.screen, PromptScreen),
                       what="the cursor on line 76, the prompt closed")
        type_at_once(app, "!p 6*7\r")
        await wait_for(pilot, lambda: "(Pdb) p 6*7\n42" in log_text(app), what="pdb's answer to p 6*7 in the console")
        assert app.main.focused is app.main.query_one(PdbInput)


async def test_keys_typed_ahead_wait_however_long_the_key_before_them_takes(session):
    """On a busy machine a key can take seconds to pass through the pane that has the focus. The
    keys typed after `!` wait for it, however long: in a busy CI run `!b pricer.py:6⏎` reached pdb
    as `py:6`, the keys before it given up on after 2 s and lost in the source view."""
    import asyncio

    app = DgymApp(session)
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot)
        source = app.main.source
        for _ in range(40):  # 4 s of work queued in the source view, ahead of the keys
            source.call_next(asyncio.sleep, 0.1)
        type_at_once(app, "!p 6*7+1000\r")
        await wait_for(pilot, lambda: "(Pdb) p 6*7+1000\n1042" in log_text(app), timeout=30,
                       what="pdb's answer to p 6*7+1000 in the console")
        assert app.main.query_one(PdbInput).value == ""


class KeyAfterTheReturn(DgymApp):
    """The terminal's next key lands in the App's queue just behind `!` coming back from the
    focused pane, before the App has run `!`'s binding: as a CI run had it, Enter sent a moment
    after `!b intervals.py:6`."""

    late: list[events.Key] = []

    def post_message(self, message) -> bool:
        posted = super().post_message(message)
        if isinstance(message, events.Key) and message.is_forwarded and message.key == "exclamation_mark":
            late, self.late = self.late, []
            for key in late:
                super().post_message(key)
        return posted


async def test_a_key_typed_while_the_held_keys_are_let_go_comes_after_them(session):
    """The keys held behind `!` go to the console before a key the terminal sent after them:
    Enter went first (an empty command) and the command was left typed, unsent."""
    app = KeyAfterTheReturn(session)
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot)
        app.late = [events.Key("enter", "\r")]
        type_at_once(app, "!p 6*7+1000")
        await wait_for(pilot, lambda: "(Pdb) p 6*7+1000\n1042" in log_text(app), timeout=30,
                       what="pdb's answer to p 6*7+1000 in the console")
        assert app.late == [] and app.main.query_one(PdbInput).value == ""


async def test_two_commands_typed_at_once_in_the_console_both_run(session):
    """`p 1+1⏎p 2+2⏎` typed at once: the console empties its line as Enter is taken, before the
    keys after it arrive. (Emptied later, when the console heard of the command, it could wipe the
    second command's first keys: a CI run's `b int` of `b intervals.py:6` went that way.)"""
    app = DgymApp(session)
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot)
        await pilot.press("exclamation_mark")
        console = app.main.query_one(PdbInput)
        await wait_for(pilot, lambda: app.focused is console, what="the console focused")
        type_at_once(app, "p 1+1000\rp 2+2000\r")
        await wait_for(pilot, lambda: "(Pdb) p 2+2000\n2002" in log_text(app), timeout=30,
                       what="pdb's answer to the second command")
        assert "(Pdb) p 1+1000\n1001" in log_text(app) and console.value == ""


async def test_keys_typed_right_after_a_prompts_enter_reach_the_screen_below(session):
    """`:28⏎B1 == 1⏎!p 5*5000⏎` typed at once: the condition prompt answers as its Enter is taken,
    so the keys after it reach the main screen (they went into the prompt on its way out, lost)."""
    app = DgymApp(session)
    async with app.run_test(size=SIZE) as pilot:
        await started(pilot)
        type_at_once(app, ":28\rB1 == 1\r!p 5*5000\r")
        await wait_for(pilot, lambda: "(Pdb) p 5*5000\n25000" in log_text(app), timeout=30,
                       what="pdb's answer to p 5*5000 in the console")
        await wait_for(pilot, lambda: [(bp.file, bp.line, bp.cond) for bp in session.breakpoints.items()]
                       == [("main.py", 28, "1 == 1")], what="the conditional breakpoint at main.py:28")
        assert app.main.query_one(PdbInput).value == ""
