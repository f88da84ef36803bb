"""The forms' ctrl+s reads what was typed before it, however fast the keys come.

A terminal delivers typed-ahead keys as one burst. A priority binding runs when the app
takes the key off its queue, before the focused field has handled the letters queued to it,
so ctrl+s used to read an empty field (a fresh-clone CI run's tmux test: "grep needs the
argument 'pattern'" with the pattern on screen)."""

from __future__ import annotations

from textual import events
from textual.app import App
from textual.binding import Binding
from textual.widgets import Input, TextArea

from dgym_tui.ui.screens.code_editor import CodeEditorScreen
from dgym_tui.ui.screens.tool_form import ToolFormScreen
from dgym_tui.tools import registry
from dgym_tui.ui.keys import EscapeThenKey


async def typed_then_ctrl_s(screen, field: type, text: str) -> list:
    """Push `screen` on a bare app, post `text` and ctrl+s at once (as a terminal's input
    reader does with a burst of bytes) to its focused `field`; what the screen was dismissed with."""
    got: list = []
    app = App()
    async with app.run_test() as pilot:
        app.push_screen(screen, got.append)
        await pilot.pause()
        assert isinstance(app.focused, field)
        for ch in text:
            app.post_message(events.Key(ch, ch))
        app.post_message(events.Key("ctrl+s", None))
        for _ in range(50):
            await pilot.pause(0.02)
            if got:
                break
    return got


async def test_the_tool_form_runs_with_the_text_typed_just_before_ctrl_s():
    got = await typed_then_ctrl_s(ToolFormScreen(registry(["grep"])["grep"]), Input, "class OutOfStockError")
    assert got == [{"pattern": "class OutOfStockError"}]


async def test_the_code_editor_keeps_the_text_typed_just_before_ctrl_s():
    got = await typed_then_ctrl_s(CodeEditorScreen("edit", "", path="a.py"), TextArea, "x = 1")
    assert got == ["x = 1"]


class NotesX(EscapeThenKey):
    """The main app's way with keys (held behind a bound key such as Enter), and an x binding
    on the screen below the form."""

    BINDINGS = [Binding("x", "note_x")]

    def __init__(self) -> None:
        super().__init__()
        self.xs = 0

    def action_note_x(self) -> None:
        self.xs += 1


async def test_a_key_typed_right_after_the_forms_enter_reaches_the_screen_below():
    """Enter in a field runs the form as the key is taken: the x typed just after it goes to the
    screen below, not into the field of a form on its way out (where it was lost)."""
    got: list = []
    app = NotesX()
    async with app.run_test() as pilot:
        app.push_screen(ToolFormScreen(registry(["grep"])["grep"]), got.append)
        await pilot.pause()
        assert isinstance(app.focused, Input)
        for ch in "Stock\rx":
            app.post_message(events.Key("enter", "\r") if ch == "\r" else events.Key(ch, ch))
        for _ in range(100):
            await pilot.pause(0.02)
            if got and app.xs:
                break
    assert got == [{"pattern": "Stock"}] and app.xs == 1
