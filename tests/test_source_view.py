"""Pilot tests for the source view (dgym_tui/ui/widgets/source_view.py)."""

from __future__ import annotations

import html
import re
import time
from pathlib import Path

import pytest
from textual.app import App, ComposeResult

from dgym_tui.themes.dgym import THEMES
from dgym_tui.ui.widgets.source_view import SourceView

SIZE = (100, 30)

SAMPLE = '''\
import os


def greet(name):
    """Say hello."""
    message = "hello " + name
    return message


class Cart:
    def total(self):
        return sum(item.price for item in self.items)


def main():
    print(greet("world"))
'''


class SourceApp(App):
    """The source view alone, recording what it tells the app."""

    def __init__(self) -> None:
        super().__init__()
        self.toggled: list[tuple[str, int]] = []
        self.moved: list[tuple[str, int]] = []

    def compose(self) -> ComposeResult:
        yield SourceView()

    def on_source_view_breakpoint_toggled(self, message: SourceView.BreakpointToggled) -> None:
        assert message.control is self.query_one(SourceView)
        self.toggled.append((message.path, message.line))

    def on_source_view_cursor_moved(self, message: SourceView.CursorMoved) -> None:
        self.moved.append((message.path, message.line))


def row_text(view: SourceView, y: int) -> str:
    return view.render_line(y).text


def visible_text(view: SourceView) -> list[str]:
    return [row_text(view, y) for y in range(view.scrollable_content_region.height)]


def row_of(view: SourceView, line: int) -> int:
    """The screen row (within the widget) where 1-based `line` is drawn."""
    return line - 1 - view.scroll_offset.y


def is_visible(view: SourceView, line: int) -> bool:
    return 0 <= row_of(view, line) < view.scrollable_content_region.height


async def loaded(pilot, text: str = SAMPLE, path: str = "shop/cart.py") -> SourceView:
    view = pilot.app.query_one(SourceView)
    view.focus()
    view.load(path, text)
    await pilot.pause()
    return view


def big_file(lines: int = 20_000) -> str:
    return "".join(f"def function_{n}(x):  # line {n + 1}\n" if n % 10 == 0 else f"    x = x + {n}\n"
                   for n in range(lines))


def bp(line: int, *, cond: str | None = None, enabled: bool = True, actor: str = "human",
       file: str = "shop/cart.py", temporary: bool = False) -> dict:
    return {"file": file, "line": line, "cond": cond, "enabled": enabled, "temporary": temporary,
            "actor": actor}


async def test_load_shows_text_and_line_numbers():
    async with SourceApp().run_test(size=SIZE) as pilot:
        view = await loaded(pilot)
        rows = visible_text(view)
        assert view.path == "shop/cart.py" and view.line_count == 16
        assert rows[0].split() == ["1", "import", "os"]
        assert rows[3].lstrip().startswith("4 def greet(name):")
        assert rows[15].lstrip().startswith("16     print(greet(\"world\"))")
        assert rows[16].strip() == ""  # past the end: blank
        assert all(view.render_line(y).cell_length == view.scrollable_content_region.width
                   for y in range(len(rows)))
        # Highlighting arrives from the worker: `def` gets a colour of its own.
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
        segments = list(view.render_line(3))
        keyword = next(s for s in segments if s.text == "def")
        name = next(s for s in segments if s.text == "greet")
        assert keyword.style.color is not None and keyword.style.color != name.style.color


async def test_big_file_loads_fast_and_goto_line_scrolls():
    text = big_file()
    async with SourceApp().run_test(size=SIZE) as pilot:
        view = pilot.app.query_one(SourceView)
        start = time.perf_counter()
        view.load("big.py", text)
        elapsed = time.perf_counter() - start
        print(f"20,000-line load: {elapsed * 1000:.1f} ms")
        assert elapsed < 0.5  # ~10 ms here; highlighting the whole file synchronously takes > 1 s
        assert view.line_count == 20_000
        view.goto_line(15000)
        assert view.cursor_line == 15000
        assert is_visible(view, 15000)
        assert 14_900 < view.scroll_offset.y < 15_000
        await pilot.pause()
        assert "15000" in row_text(view, row_of(view, 15000))
        assert "x = x + 14999" in row_text(view, row_of(view, 15000))
        # Clamped at both ends.
        view.goto_line(10**9)
        assert view.cursor_line == 20_000 and is_visible(view, 20_000)
        view.goto_line(-5)
        assert view.cursor_line == 1 and view.scroll_offset.y == 0


async def test_breakpoint_marks_kinds_and_actors():
    async with SourceApp().run_test(size=SIZE) as pilot:
        view = await loaded(pilot)
        view.set_breakpoints([
            bp(1),
            bp(2, enabled=False),
            bp(3, cond="x > 1"),
            bp(4, cond="x > 1", enabled=False),
            bp(5, actor="agent"),
            bp(6, actor="agent", temporary=True),
            bp(7, file="elsewhere.py"),  # another file: not shown
        ])
        await pilot.pause()
        marks = [row_text(view, y)[0] for y in range(7)]
        assert marks == ["●", "○", "◆", "◇", "●", "●", " "]
        human = view.render_line(0).crop(0, 1)
        agent = view.render_line(4).crop(0, 1)
        human_style, agent_style = list(human)[0].style, list(agent)[0].style
        assert human_style.color != agent_style.color
        assert human_style.color != list(view.render_line(0))[-1].style.color  # not plain text
        # Component classes are the styling hook.
        assert human_style.color == view.get_component_rich_style("source-view--bp-human").color
        assert agent_style.color == view.get_component_rich_style("source-view--bp-agent").color
        # Marks follow the loaded file.
        view.load("elsewhere.py", SAMPLE)
        assert [row_text(view, y)[0] for y in range(7)] == [" "] * 6 + ["●"]
        view.set_breakpoints([])
        assert row_text(view, 6)[0] == " "


async def test_set_current_marks_line_and_scrolls_into_view():
    async with SourceApp().run_test(size=SIZE) as pilot:
        view = await loaded(pilot, big_file(500), "big.py")
        view.set_current("big.py", 300)
        assert view.current_line == 300 and view.cursor_line == 300
        assert is_visible(view, 300)
        height = view.scrollable_content_region.height
        assert abs(row_of(view, 300) - height // 2) <= 1  # centered: it was off screen
        await pilot.pause()
        row = row_of(view, 300)
        assert row_text(view, row)[1] == "▶"
        # The whole row, gutter included, gets the current-line background.
        current_bg = {s.style.bgcolor for s in view.render_line(row) if s.text}
        plain_bg = {s.style.bgcolor for s in view.render_line(row + 2) if s.text}
        assert len(current_bg) == 1 and current_bg != plain_bg
        # A visible location doesn't scroll; another file's location isn't shown.
        top = view.scroll_offset.y
        view.set_current("big.py", 305)
        assert view.scroll_offset.y == top and row_text(view, row_of(view, 305))[1] == "▶"
        view.set_current("other.py", 305)
        assert view.current_line is None and row_text(view, row_of(view, 305))[1] == " "
        view.set_current(None, None)
        assert view.current_line is None


async def test_the_scrollbar_thumb_follows_every_kind_of_scroll():
    # The thumb moves in the frame after the rows (see SourceView.watch_scroll_y): it must
    # still end up where the view is, however the view moved.
    async with SourceApp().run_test(size=SIZE) as pilot:
        view = await loaded(pilot, big_file(500), "big.py")
        bar = view.vertical_scrollbar

        def thumb_rows() -> list[int]:
            lines = bar.render_lines(bar.size.region)
            thumb = {s.style.bgcolor for s in lines[-1] if s.text}  # the track's colour at the end
            return [y for y, line in enumerate(lines) if {s.style.bgcolor for s in line if s.text} != thumb]

        assert thumb_rows()[0] == 0
        moves = [lambda: view.set_current("big.py", 300), lambda: view.goto_line(480),
                 lambda: view.action_cursor_page_up(), lambda: view.scroll_to(y=0, animate=False),
                 lambda: view.scroll_relative(y=7, animate=False)]  # as the mouse wheel does
        for move in moves:
            move()
            await pilot.pause()
            await pilot.pause()
            assert bar.position == view.scroll_offset.y
            rows = thumb_rows()
            expected = view.scroll_offset.y * bar.size.height / view.virtual_size.height
            assert rows and abs(rows[0] - expected) <= 1.5, (view.scroll_offset.y, rows)
        assert view.scroll_offset.y == 7


async def test_current_location_before_load_is_shown_after_load():
    async with SourceApp().run_test(size=SIZE) as pilot:
        view = pilot.app.query_one(SourceView)
        view.set_current("big.py", 400)
        view.load("big.py", big_file(500))
        await pilot.pause()
        assert view.current_line == 400 and view.cursor_line == 400 and is_visible(view, 400)


async def test_reloading_the_same_file_keeps_the_place():
    async with SourceApp().run_test(size=SIZE) as pilot:
        view = await loaded(pilot, big_file(1000), "big.py")
        view.goto_line(600)
        top = view.scroll_offset.y
        view.load("big.py", big_file(1000).replace("x = x + 599", "x = x - 599"))  # e.g. a patch
        assert view.cursor_line == 600 and view.scroll_offset.y == top
        assert "x = x - 599" in row_text(view, row_of(view, 600))
        view.load("big.py", big_file(100))  # shorter now: clamped
        assert view.cursor_line == 100 and view.scroll_offset.y <= view.max_scroll_y
        view.load("other.py", SAMPLE)  # another file starts at the top
        assert view.cursor_line == 1 and view.scroll_offset.y == 0


async def test_cursor_keys_move_cursor_line():
    async with SourceApp().run_test(size=SIZE) as pilot:
        view = await loaded(pilot, big_file(1000), "big.py")
        assert view.cursor_line == 1
        await pilot.press("down", "down", "j")
        assert view.cursor_line == 4
        await pilot.press("up", "k")
        assert view.cursor_line == 2
        await pilot.press("k", "k")
        assert view.cursor_line == 1
        await pilot.press("pagedown")
        page = view.scrollable_content_region.height - 1
        assert view.cursor_line == 1 + page and is_visible(view, view.cursor_line)
        await pilot.press("pageup")
        assert view.cursor_line == 1
        await pilot.press("end")
        assert view.cursor_line == 1000 and is_visible(view, 1000)
        await pilot.press("home")
        assert view.cursor_line == 1 and view.scroll_offset.y == 0
        # Moving down past the bottom scrolls one line at a time.
        height = view.scrollable_content_region.height
        view.cursor_line = height  # the bottom row
        assert view.scroll_offset.y == 0
        await pilot.press("j")
        assert view.cursor_line == height + 1 and view.scroll_offset.y == 1
        assert pilot.app.moved[-1] == ("big.py", height + 1)
        view.cursor_line = 500
        assert view.cursor_line == 500 and is_visible(view, 500)


async def test_debugger_keys_are_left_to_the_app():
    async with SourceApp().run_test(size=SIZE) as pilot:
        view = await loaded(pilot)
        bound = set(view._bindings.key_to_bindings)
        for key in ["n", "s", "c", "r", "b", "B", "t", "u", "d", "exclamation_mark", "question_mark", "q"]:
            assert key not in bound
        await pilot.press("n", "s", "b")
        assert view.cursor_line == 1 and view.search_query == ""


async def test_gutter_click_posts_breakpoint_toggled_and_text_click_moves_cursor():
    async with SourceApp().run_test(size=SIZE) as pilot:
        view = await loaded(pilot, big_file(200), "big.py")
        await pilot.click(SourceView, offset=(1, 4))
        await pilot.pause()
        assert pilot.app.toggled == [("big.py", 5)]
        assert view.cursor_line == 1  # the gutter doesn't move the cursor
        view.goto_line(150)
        await pilot.pause()
        row = row_of(view, 145)
        await pilot.click(SourceView, offset=(0, row))
        await pilot.pause()
        assert pilot.app.toggled[-1] == ("big.py", 145)
        await pilot.click(SourceView, offset=(20, row + 1))
        await pilot.pause()
        assert view.cursor_line == 146 and len(pilot.app.toggled) == 2
        assert pilot.app.moved[-1] == ("big.py", 146)


async def test_search_enter_next_previous_and_escape():
    text = "".join(f"value_{n} = {n}\n" if n % 25 else f"target = {n}  # Target\n" for n in range(200))
    async with SourceApp().run_test(size=SIZE) as pilot:
        view = await loaded(pilot, text, "m.py")  # "target" on lines 1, 26, 51, ..., 176
        view.cursor_line = 10
        await pilot.press("slash")
        prompt = view.query_one("SourceViewPrompt")
        assert prompt.has_focus
        await pilot.press(*"target")
        await pilot.pause()
        assert view.match_count == 16  # smart case: "target" also finds "Target"
        assert view.cursor_line == 10  # typing only previews
        await pilot.press("enter")
        await pilot.pause()
        assert view.has_focus and not prompt.parent.has_class("-open")
        assert view.cursor_line == 26 and is_visible(view, 26)
        await pilot.press("full_stop")
        assert view.cursor_line == 26  # second match on the same line
        await pilot.press("full_stop")
        assert view.cursor_line == 51
        await pilot.press("comma", "comma")
        assert view.cursor_line == 26
        await pilot.press("comma", "comma")
        assert view.cursor_line == 1
        await pilot.press("comma")
        assert view.cursor_line == 176  # wraps around
        await pilot.press("full_stop")
        assert view.cursor_line == 1
        # Matches are highlighted with the match styles.
        view.goto_line(51)
        await pilot.pause()
        match_bg = view.get_component_rich_style("source-view--match").bgcolor
        segments = list(view.render_line(row_of(view, 76)))
        assert any(s.text.lower() == "target" and s.style.bgcolor == match_bg for s in segments)
        # Capitals make the search case-sensitive; Escape restores the previous search.
        await pilot.press("slash", *"Target")
        await pilot.pause()
        assert view.match_count == 8
        await pilot.press("escape")
        await pilot.pause()
        assert view.search_query == "target" and view.match_count == 16 and view.has_focus
        assert view.cursor_line == 51
        # Not found: the cursor stays.
        await pilot.press("slash", *"nowhere", "enter")
        await pilot.pause()
        assert view.cursor_line == 51 and view.match_count == 0


async def test_goto_line_prompt():
    async with SourceApp().run_test(size=SIZE) as pilot:
        view = await loaded(pilot, big_file(2000), "big.py")
        await pilot.press("ctrl+g", "1", "2", "3", "4", "enter")
        await pilot.pause()
        assert view.cursor_line == 1234 and is_visible(view, 1234) and view.has_focus
        await pilot.press("colon", "x", "7", "enter")  # letters are refused
        await pilot.pause()
        assert view.cursor_line == 7
        await pilot.press("colon", "9", "escape")
        await pilot.pause()
        assert view.cursor_line == 7


async def test_theme_switch_rerenders():
    async with SourceApp().run_test(size=SIZE) as pilot:
        view = await loaded(pilot)
        view.set_breakpoints([bp(4), bp(5, actor="agent")])
        view.set_current("shop/cart.py", 6)
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()

        def colours() -> tuple:
            segments = list(view.render_line(3))
            keyword = next(s for s in segments if s.text == "def")
            return segments[-1].style.bgcolor, keyword.style.color

        dark = colours()
        pilot.app.theme = "textual-light"
        await pilot.pause()
        light = colours()
        assert light[0] != dark[0] and light[1] != dark[1]
        assert visible_text(view)[3].startswith("●   4 def greet")
        pilot.app.theme = "textual-dark"
        await pilot.pause()
        assert colours() == dark


@pytest.mark.parametrize(
    "text, expected",
    [
        ("", [""]),
        ("no newline at end", ["no newline at end"]),
        ("a\r\nb\rc\n", ["a", "b", "c"]),
        ("\tx = 1\n\t\ty\n", ["    x = 1", "        y"]),
        ("page\x0cbreak\nnext\n", ["page␌break", "next"]),  # form feed doesn't end a line
        ("\x00\x01\x1b[31mred\x7f\n\udcff\u202eevil\n", ["␀␁␛[31mred␡", "\ufffd\ufffdevil"]),
        ("\ufeffbom\n", ["bom"]),
    ],
)
def test_lines_are_split_like_python_and_made_safe(text, expected):
    from dgym_tui.ui.widgets.source_text import split_lines as _split_lines

    assert _split_lines(text) == expected


async def test_awkward_files_render():
    wide = "名前 = '日本語テキスト'  # ünïcödé ✓\n"
    long_line = "x = [" + ", ".join(str(n) for n in range(3000)) + "]\n"
    binary = bytes(range(256)).decode("latin-1") * 4
    async with SourceApp().run_test(size=SIZE) as pilot:
        view = pilot.app.query_one(SourceView)
        view.focus()
        for path, text in [("empty.py", ""), ("wide.py", wide), ("long.py", long_line),
                           ("blob.bin", binary), ("tabs.py", "if x:\n\treturn 1"),
                           ("notes.unknown-ext", "plain\n")]:
            view.load(path, text)
            await pilot.app.workers.wait_for_complete()
            await pilot.pause()
            width = view.scrollable_content_region.width
            assert all(view.render_line(y).cell_length == width for y in range(5)), path
        view.load("tabs.py", "if x:\n\treturn 1")  # tabs expand to 4, no trailing newline
        assert row_text(view, 1).lstrip().startswith("2     return 1")
        view.load("wide.py", wide)
        await pilot.pause()
        assert "日本語テキスト" in row_text(view, 0)
        # Very long lines don't wrap: they scroll horizontally, the gutter stays.
        view.load("long.py", long_line)
        await pilot.pause()
        assert view.line_count == 1 and row_text(view, 1).strip() == ""
        assert view.max_scroll_x > 10_000
        view.scroll_to(x=5000, animate=False)
        await pilot.pause()
        row = row_text(view, 0)
        assert row.lstrip().startswith("1 ") and "x = [" not in row
        await pilot.press("slash", *"2999", "enter")
        await pilot.pause()
        assert "2999" in row_text(view, 0)


def svg_rows(svg: str) -> dict[int, str]:
    """The rows of a Rich SVG screenshot as an SVG renderer draws them.

    Rich writes each run of same-styled cells as one <text> at its cell's x (spaces as &#160;),
    and renderers such as librsvg (image viewers, thumbnails) drop the leading spaces of a text:
    a run that starts with spaces is drawn that many cells to the left of where it belongs.
    """
    char_width = float(re.search(r"\.(\S+)-matrix \{[^}]*font-size: ([\d.]+)px", svg).group(2)) * 0.61
    rows: dict[int, list[str]] = {}
    texts = re.finditer(r'<text class="[^"]*" x="([\d.]+)" y="[\d.]+" textLength="[\d.]+" '
                        r'clip-path="url\(#[^"]*-line-(\d+)\)">(.*?)</text>', svg)
    for found in texts:
        column, row = round(float(found.group(1)) / char_width), int(found.group(2))
        drawn = html.unescape(found.group(3)).replace("\xa0", " ").lstrip(" ")
        cells = rows.setdefault(row, [])
        cells.extend(" " * (column + len(drawn) - len(cells)))
        cells[column:column + len(drawn)] = drawn
    return {row: "".join(cells).rstrip() for row, cells in rows.items()}


@pytest.mark.parametrize("theme", ["dgym-dark", "dgym-light", "textual-dark"])
@pytest.mark.parametrize("path,line", [("shopcart/inventory.py", 52), ("main.py", 15)])
async def test_screenshot_keeps_the_indentation(theme, path, line):
    # The README's screenshot drew inventory.py's docstring lines 52-53 at column 0 (and every
    # line number one cell to the left): each started a run of cells with spaces. So did every
    # indented line whose first token has the plain colour (SVG export joins equal styles).
    source = Path(__file__).resolve().parents[1] / "examples/shopcart" / path
    app = SourceApp()
    for registered in THEMES:
        app.register_theme(registered)
    app.theme = theme
    async with app.run_test(size=SIZE) as pilot:
        view = await loaded(pilot, source.read_text(), path)
        view.goto_line(line)
        view.set_current(path, line + 4)
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
        width, height = view.scrollable_content_region.size  # the scrollbars left out
        shown = {y: row_text(view, y).rstrip() for y in range(height)}
        if path.endswith("inventory.py"):
            assert shown[row_of(view, 52)] == "   52         Raises OutOfStockError if there are not enough units on hand."
            assert shown[row_of(view, 53)] == '   53         """'
        # README screenshots (save_screenshot) and snapshot tests (equal styles joined)
        for simplify in (False, True):
            drawn = svg_rows(pilot.app.export_screenshot(simplify=simplify))
            assert {y: text[:width].rstrip() for y, text in drawn.items() if y < height and text.strip()} == {
                y: text for y, text in shown.items() if text}
