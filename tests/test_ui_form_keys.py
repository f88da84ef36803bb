"""The forms' ctrl+s reads what was typed before it, however fast the keys come.

A terminal delivers typed-ahead keys as one burst. A priority binding runs when the app
takes the key off its queue, before the focused field has handled the letters queued to it,
so ctrl+s used to read an empty field (a fresh-clone CI run's tmux test: "grep needs the
argument 'pattern'" with the pattern on screen)."""

from __future__ import annotations

from textual import events
from textual.app import App
from textual.widgets import Input, TextArea

from dgym_tui.ui.screens.code_editor import CodeEditorScreen
from dgym_tui.ui.screens.tool_form import ToolFormScreen
from dgym_tui.tools import registry


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
