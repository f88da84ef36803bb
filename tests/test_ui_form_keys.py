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


def burst(app: App, text: str) -> None:
    """Post every key at once, as a terminal's input reader does with a burst of bytes."""
    for ch in text:
        app.post_message(events.Key(ch, ch))
    app.post_message(events.Key("ctrl+s", None))


async def test_the_tool_form_runs_with_the_text_typed_just_before_ctrl_s():
    got: list = []
    app = App()
    async with app.run_test() as pilot:
        app.push_screen(ToolFormScreen(registry(["grep"])["grep"]), got.append)
        await pilot.pause()
        assert isinstance(app.focused, Input)
        burst(app, "class OutOfStockError")
        for _ in range(50):
            await pilot.pause(0.02)
            if got:
                break
        assert got == [{"pattern": "class OutOfStockError"}]


async def test_the_code_editor_keeps_the_text_typed_just_before_ctrl_s():
    got: list = []
    app = App()
    async with app.run_test() as pilot:
        app.push_screen(CodeEditorScreen("edit", "", path="a.py"), got.append)
        await pilot.pause()
        assert isinstance(app.focused, TextArea)
        burst(app, "x = 1")
        for _ in range(50):
            await pilot.pause(0.02)
            if got:
                break
        assert got == ["x = 1"]
