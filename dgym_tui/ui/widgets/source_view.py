"""The source pane: one file with line numbers, breakpoint marks, the current line and a cursor.

Why the Line API: `SourceView` is a `ScrollView` that draws each visible row on demand in
`render_line(y)`. Nothing is mounted per line and nothing is rendered off screen, so loading a
20,000-line file costs a `str.split` plus a width scan (7-13 ms for `load()` here, first frame
drawn 16-57 ms after it) and a frame renders only the rows in view (~2 ms for 30). Syntax
highlighting (pygments needs ~1.4 s for 20,000 lines of Python, its first lexer lookup ~0.4 s)
runs once per load in a thread worker that streams per-line tokens back; a row whose tokens have
not arrived yet is lexed on its own (right except inside multi-line strings), or shown plain.

The widget holds no debugging logic. The app tells it what to show (`load`, `set_breakpoints`,
`set_current`) and hears what the person asked for through messages (`BreakpointToggled`,
`CursorMoved`). The app binds the debugger keys (b n s c r t u d ! ? q ...) and reads
`cursor_line`; the widget binds only movement, search (`/` `.` `,`) and go-to-line (`ctrl+g` `:`).
"""

from __future__ import annotations

import os
import re
import time
from bisect import bisect_left, bisect_right
from itertools import accumulate
from typing import Any, ClassVar, Iterable, Literal

from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style

from textual import events, on
from textual.binding import Binding, BindingType
from textual.cache import LRUCache
from textual.containers import Horizontal
from textual.geometry import Region, Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.widgets import Input, Label
from textual.worker import get_current_worker

from dgym_tui.ui import lexers

__all__ = ["SourceView"]

TAB_SIZE = 4
MAX_MATCHES = 50_000  # enough for any real search; bounds memory for a one-letter query
FALLBACK_LEX_LIMIT = 2_000  # lines longer than this are shown plain until the worker is done
LONG_LINE = 512  # longer lines are cut into pieces of this size and rendered by the piece in view
MAX_HIGHLIGHT_LINE = 20_000  # longer lines (minified code, data) are shown plain, as editors do
MAX_HIGHLIGHT_CHARS = 4_000_000  # bigger files are shown plain (pygments: ~2 s per MB)

# Characters a terminal must not receive raw: C0/C1 controls except tab and newline, DEL, bidi
# controls (they reorder what is shown: "Trojan Source") and lone surrogates (unencodable).
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def _visible(match: re.Match[str]) -> str:
    """One visible, one-cell stand-in per unsafe character (so columns stay put)."""
    code = ord(match.group())
    if code < 0x20:
        return chr(0x2400 + code)  # control pictures: ␀ … ␟
    return "\u2421" if code == 0x7F else "\ufffd"


def _cells(text: str) -> int:
    """Terminal cells `text` takes (ASCII: one per character, without rich's per-character scan)."""
    return len(text) if text.isascii() else cell_len(text)


def _split_lines(text: str) -> list[str]:
    """Display lines, numbered as Python/pdb number them (\\n, \\r\\n and \\r end a line)."""
    if text.startswith("\ufeff"):
        text = text[1:]
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    if _UNSAFE.search(text):
        text = _UNSAFE.sub(_visible, text)
    lines = text.split("\n")
    if len(lines) > 1 and lines[-1] == "":
        lines.pop()  # a trailing newline ends the last line, it doesn't start a new one
    if "\t" in text:
        lines = [line.expandtabs(TAB_SIZE) if "\t" in line else line for line in lines]
    return lines


_Pieces = list[tuple[str, Style]]  # a row as (text, token style) pieces
_Starts = tuple[list[int], list[int]] | None  # long rows: each piece's first char and cell

# Spaces that start a token are drawn with this style: nothing shows, but it never equals a
# token's style. An SVG screenshot joins equal-styled cells into one <text>, and renderers such
# as librsvg drop a text's leading spaces: `    Cart,` or a docstring's second line was drawn at
# column 0, `import annotations` as `importannotations`. The meta is dropped after the join,
# and terminals never see it.
_SPACES = Style.from_meta({"source-view": "spaces"})


def _spaces_apart(pieces: _Pieces) -> _Pieces:
    """The pieces, with the spaces that start one made a piece of their own (see _SPACES), and
    neighbours of one style joined: a terminal is sent each piece with its own colour codes, so
    fewer pieces are fewer bytes to draw (a joined piece never starts with spaces)."""
    out: _Pieces = []
    for text, style in pieces:
        body = text.lstrip(" ")
        for part, part_style in ((text[:len(text) - len(body)], _SPACES), (body, style)):
            if not part:
                continue
            if out and out[-1][1] == part_style:
                out[-1] = (out[-1][0] + part, part_style)
            else:
                out.append((part, part_style))
    return out


def _lexer_for(path: str) -> Any:
    return lexers.lexer_for(path, stripnl=False, ensurenl=True)


def _tokens_by_line(tokens: Iterable[tuple[Any, str]]) -> Iterable[tuple[tuple[Any, str], ...]]:
    """Regroup a pygments token stream into one tuple of (type, text) per line."""
    line: list[tuple[Any, str]] = []
    for ttype, value in tokens:
        if "\n" not in value:
            if value:
                line.append((ttype, value))
            continue
        *ends, rest = value.split("\n")
        for part in ends:
            if part:
                line.append((ttype, part))
            yield tuple(line)
            line = []
        if rest:
            line.append((ttype, rest))
    if line:
        yield tuple(line)


class SourceViewPrompt(Input):
    """The one-line input of the search / go-to-line prompt."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "Cancel", show=False)]

    def action_cancel(self) -> None:
        source_view = next(a for a in self.ancestors if isinstance(a, SourceView))
        source_view.close_prompt(cancel=True)


class SourceView(ScrollView, can_focus=True):
    """A read-only, syntax-highlighted view of one file, drawn with the Line API."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up,k", "cursor_up", "Up", show=False),
        Binding("down,j", "cursor_down", "Down", show=False),
        Binding("pageup", "cursor_page_up", "Page up", show=False),
        Binding("pagedown", "cursor_page_down", "Page down", show=False),
        Binding("home,ctrl+home", "cursor_first", "First line", show=False),
        Binding("end,ctrl+end", "cursor_last", "Last line", show=False),
        Binding("slash", "search", "Search"),
        Binding("full_stop", "search_next", "Next match", show=False),
        Binding("comma", "search_previous", "Previous match", show=False),
        Binding("ctrl+g,colon", "goto_prompt", "Go to line"),
    ]

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "source-view--gutter",  # line numbers
        "source-view--gutter-cursor",  # the cursor line's number
        "source-view--cursor-line",  # the person's cursor (subtle)
        "source-view--current-line",  # the selected frame's line (whole row)
        "source-view--current-marker",  # the ▶ in the gutter
        "source-view--bp-human",  # breakpoint marks set by the person
        "source-view--bp-agent",  # ... and by the agent
        "source-view--match",  # search matches
        "source-view--match-current",  # the match the cursor went to
    }

    DEFAULT_CSS = """
    SourceView {
        background: $surface;
        color: $foreground;
        & > .source-view--gutter { color: $text-muted; }
        & > .source-view--gutter-cursor { color: $text; text-style: bold; }
        & > .source-view--cursor-line { background: $boost; }
        &:focus > .source-view--cursor-line { background: $foreground 9%; }
        & > .source-view--current-line { background: $success 22%; }
        & > .source-view--current-marker { color: $success; text-style: bold; }
        & > .source-view--bp-human { color: $error; text-style: bold; }
        & > .source-view--bp-agent { color: $accent; text-style: bold; }
        & > .source-view--match { background: $warning 35%; }
        & > .source-view--match-current { background: $warning 80%; color: $text; }
        & > .-prompt-bar {
            dock: bottom;
            height: 1;
            display: none;
            background: $panel;
            &.-open { display: block; }
            &.-no-match > SourceViewPrompt { color: $text-error; }
            & > Label { width: auto; padding: 0 0 0 1; color: $text-accent; text-style: bold; }
            & > SourceViewPrompt, & > SourceViewPrompt:focus {
                border: none; height: 1; padding: 0 1; width: 1fr; background: $panel;
            }
        }
    }
    """

    # Pygments styles by Textual theme name; other themes get DARK_STYLE or LIGHT_STYLE.
    PYGMENTS_STYLES: ClassVar[dict[str, str]] = {
        "nord": "nord",
        "gruvbox": "gruvbox-dark",
        "dracula": "dracula",
        "monokai": "monokai",
        "solarized-dark": "solarized-dark",
        "solarized-light": "solarized-light",
        "atom-one-dark": "one-dark",
    }
    DARK_STYLE: ClassVar[str] = "github-dark"
    LIGHT_STYLE: ClassVar[str] = "default"

    class _LineMessage(Message):
        """A message about `line` (1-based) of `path`; `control` is the source view."""

        def __init__(self, path: str, line: int) -> None:
            super().__init__()
            self.path = path
            self.line = line
            self.source_view: SourceView | None = None

        @property
        def control(self) -> SourceView | None:
            return self.source_view

    class BreakpointToggled(_LineMessage):
        """The person clicked the gutter of `line`: toggle a breakpoint there."""

    class CursorMoved(_LineMessage):
        """The cursor is now on `line` of `path`."""

    class _Highlighted(Message):
        """From the highlight worker: more lines have tokens."""

        def __init__(self, generation: int) -> None:
            super().__init__()
            self.generation = generation

    def __init__(self, *, name: str | None = None, id: str | None = None, classes: str | None = None) -> None:
        # Set before Widget.__init__: style updates may arrive early and clear these caches.
        self._styles: dict[str, Style] = {}
        self._token_styles: dict[Any, Style] = {}
        # row -> (from the whole-file lex?, pieces, for long lines: char and cell start of each piece)
        self._pieces_cache: LRUCache[int, tuple[bool, _Pieces, _Starts]] = LRUCache(4096)
        super().__init__(name=name, id=id, classes=classes)
        self._path: str | None = None
        self._lines: list[str] = [""]
        self._generation = 0
        self._tokens: list[tuple[tuple[Any, str], ...] | None] = []  # filled by the worker
        self._lexer: Any = None
        self._highlight_pending = False
        self._syntax_theme = None  # rich's PygmentsSyntaxTheme, made on first use
        self._line_starts: list[int] | None = None
        self._text: str | None = None
        self._max_width = 0
        self._digits = 3
        self._cursor = 0  # 0-based internally
        self._breakpoints: list[dict] = []
        self._marks: dict[int, tuple[str, str, list[dict]]] = {}  # row -> (glyph, actor, bps)
        self._current: tuple[str, int] | None = None
        self._current_row: int | None = None
        self._query = ""
        self._matches: list[tuple[int, int, int]] = []  # (row, start, end), in order
        self._match_rows: list[int] = []
        self._match_by_row: dict[int, list[tuple[int, int, int]]] = {}  # row -> (start, end, index)
        self._match_index: int | None = None
        self._prompt: Literal["search", "goto"] | None = None
        self._saved_search: tuple[str, int | None, int, int] | None = None
        self._pending_scroll: tuple[int, bool] | None = None
        self._frame: tuple[Style, int] | None = None  # the widget's style and width while a frame renders
        # The bottom prompt (`/` search, `:` go to line), mounted just after the first frame:
        # an Input and its parts cost that frame ~10 ms of styling, for a prompt not yet shown.
        self._prompt_label = Label("/")
        self._prompt_input = SourceViewPrompt(compact=True)
        self._prompt_bar = Horizontal(self._prompt_label, self._prompt_input, classes="-prompt-bar")

    # ------------------------------------------------------------------ public API

    @property
    def path(self) -> str | None:
        """The loaded file, or None."""
        return self._path

    @property
    def line_count(self) -> int:
        return len(self._lines)

    @property
    def cursor_line(self) -> int:
        """The cursor's line, 1-based."""
        return self._cursor + 1

    @cursor_line.setter
    def cursor_line(self, line: int) -> None:
        self._move_cursor(line - 1)

    @property
    def current_line(self) -> int | None:
        """The selected frame's line in the loaded file (1-based), or None."""
        return None if self._current_row is None else self._current_row + 1

    @property
    def search_query(self) -> str:
        return self._query

    @property
    def match_count(self) -> int:
        return len(self._matches)

    def load(self, path: str, text: str) -> None:
        """Show `text` as the content of `path`. Reloading the same path keeps cursor and scroll."""
        same_file = path == self._path
        self._generation += 1
        self._path = path
        self._lines = _split_lines(text)
        self._tokens = []
        self._lexer = _lexer_for(path) if lexers.known(path) else None  # known: per-row fallback works
        self._pieces_cache.clear()
        self._text = self._line_starts = None
        self._max_width = max(_cells(line) for line in self._lines)
        self._digits = max(3, len(str(len(self._lines))))
        self._update_virtual_size()
        self._index_breakpoints()
        self._locate_current()
        if self._query:
            self._find_all()
        if self._current_row is not None and not same_file:
            self._set_cursor(self._current_row)
            self._scroll_to_row(self._current_row, center=True)
        elif same_file:  # a reload (e.g. after a patch): stay where the person was
            self._set_cursor(self._cursor)
            if self.is_mounted:
                self.scroll_to(y=self.scroll_offset.y, animate=False, force=True)  # re-clamp
        else:
            self._set_cursor(0)
            if self.is_mounted:
                self.scroll_to(0, 0, animate=False, force=True)
        self._start_highlighting()
        self.refresh()

    def set_breakpoints(self, items: Iterable[dict]) -> None:
        """All breakpoints of the session; those in the loaded file are shown.

        Each item: {"file", "line", "cond", "enabled", "temporary", "actor": "human"|"agent"}.
        """
        self._breakpoints = list(items)
        self._index_breakpoints()
        self.refresh()

    def set_current(self, path: str | None, line: int | None) -> None:
        """Mark the selected frame's location (None, None: no frame).

        When the location changes and is in the loaded file, the cursor moves to it and it is
        scrolled into view (centered if it was off screen). Loading another file is the app's job.
        """
        new = (path, line) if path is not None and line is not None else None
        changed = new != self._current
        old_row = self._current_row
        self._current = new
        self._locate_current()
        if changed and self._current_row is not None:
            self._set_cursor(self._current_row)
            self._scroll_to_row(self._current_row, center=True)
        # Only the rows that changed look: a step repaints two lines, not the whole view (what a
        # terminal has to redraw is most of what a step costs).
        self._refresh_rows(old_row, self._current_row)

    def goto_line(self, line: int) -> None:
        """Move the cursor to `line` (1-based, clamped), centering it if it was off screen."""
        row = self._clamp(line - 1)
        self._set_cursor(row)
        self._scroll_to_row(row, center=True)

    def search(self, query: str, *, backwards: bool = False) -> bool:
        """Highlight `query` (smart case) and move the cursor to the next match after it."""
        self._query = query
        self._find_all()
        return self.search_next(backwards=backwards)

    def search_next(self, *, backwards: bool = False) -> bool:
        """Move the cursor to the next (previous) match, wrapping around. False if none."""
        if not self._matches:
            if self._query:
                self.notify(f"Not found: {self._query}", severity="warning", timeout=2)
            return False
        self._match_index = self._next_match(backwards)
        row, start, _end = self._matches[self._match_index]
        self._set_cursor(row)
        self._scroll_to_row(row, center=True)
        self._reveal_column(row, start)
        self.refresh()
        return True

    def open_prompt(self, mode: Literal["search", "goto"]) -> None:
        """Show the bottom prompt: `/` search or `:` go to line."""
        self._mount_prompt_bar()
        bar, prompt = self._prompt_bar, self._prompt_input
        if mode == "search" and self._prompt != "search":
            self._saved_search = (self._query, self._match_index, *self.scroll_offset)
        self._prompt = mode
        self._prompt_label.update("/" if mode == "search" else ":")
        prompt.restrict = None if mode == "search" else r"[0-9]*"
        prompt.placeholder = (
            "search (Enter: find, then . next , previous; Esc: cancel)" if mode == "search" else "go to line"
        )
        prompt.value = ""
        bar.add_class("-open")
        self._update_virtual_size()
        prompt.focus()

    def close_prompt(self, *, cancel: bool = False, refocus: bool = True) -> None:
        """Hide the prompt; when cancelling a search, restore the previous one and the scroll."""
        if self._prompt is None:
            return
        mode, self._prompt = self._prompt, None
        if cancel and mode == "search" and self._saved_search is not None:
            query, index, scroll_x, scroll_y = self._saved_search
            self._query = query
            self._find_all()
            self._match_index = index if index is not None and index < len(self._matches) else None
            self.scroll_to(scroll_x, scroll_y, animate=False, force=True)
        self._saved_search = None
        self._prompt_bar.remove_class("-open", "-no-match")
        self._update_virtual_size()
        if refocus:
            self.focus()
        self.refresh()

    # ------------------------------------------------------------------ actions

    def action_cursor_up(self) -> None:
        self._move_cursor(self._cursor - 1)

    def action_cursor_down(self) -> None:
        self._move_cursor(self._cursor + 1)

    def action_cursor_page_up(self) -> None:
        page = max(1, self._view_height() - 1)
        self.scroll_to(y=self.scroll_offset.y - page, animate=False, force=True)
        self._move_cursor(self._cursor - page)

    def action_cursor_page_down(self) -> None:
        page = max(1, self._view_height() - 1)
        self.scroll_to(y=self.scroll_offset.y + page, animate=False, force=True)
        self._move_cursor(self._cursor + page)

    def action_cursor_first(self) -> None:
        self._move_cursor(0)

    def action_cursor_last(self) -> None:
        self._move_cursor(len(self._lines) - 1)

    def action_search(self) -> None:
        self.open_prompt("search")

    def action_goto_prompt(self) -> None:
        self.open_prompt("goto")

    def action_search_next(self) -> None:
        self.search_next()

    def action_search_previous(self) -> None:
        self.search_next(backwards=True)

    # ------------------------------------------------------------------ prompt events

    def _mount_prompt_bar(self) -> None:
        if not self._prompt_bar.is_attached and self.is_attached:
            self.mount(self._prompt_bar)

    @property
    def is_container(self) -> bool:
        # The only child is the docked prompt; the text itself is drawn by render_line.
        return True

    @on(Input.Changed)
    def _prompt_changed(self, event: Input.Changed) -> None:
        event.stop()
        if self._prompt != "search":
            return
        # Incremental search: highlight as you type and preview the next match (cursor stays).
        saved = self._saved_search
        self._query = event.value or (saved[0] if saved else "")
        self._find_all()
        if not event.value and saved is not None:
            self._match_index = saved[1] if saved[1] is not None and saved[1] < len(self._matches) else None
            self.scroll_to(*saved[2:], animate=False, force=True)
        elif self._matches:
            self._match_index = self._next_match(False)
            row, start, _ = self._matches[self._match_index]
            self._scroll_to_row(row, center=True)
            self._reveal_column(row, start)
        elif saved is not None:
            self.scroll_to(*saved[2:], animate=False, force=True)
        self._prompt_bar.set_class(bool(event.value) and not self._matches, "-no-match")
        self.refresh()

    @on(Input.Submitted)
    def _prompt_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        mode, value = self._prompt, event.value.strip()
        if mode == "goto":
            self.close_prompt()
            if value.isdigit():
                self.goto_line(int(value))
        elif mode == "search":
            previous = self._saved_search[0] if self._saved_search else ""
            self._saved_search = None
            self.close_prompt()
            query = event.value or previous  # an empty search repeats the last one
            if query:
                self._query = query
                self._find_all()
                self.search_next()

    @on(events.DescendantBlur)
    def _prompt_blurred(self, event: events.DescendantBlur) -> None:
        if self._prompt is not None and isinstance(event.widget, SourceViewPrompt):
            self.close_prompt(cancel=True, refocus=False)  # focus went elsewhere: leave it there

    # ------------------------------------------------------------------ mouse

    def on_click(self, event: events.Click) -> None:
        offset = event.get_content_offset(self)
        if offset is None or self._path is None or event.widget is not self:
            return  # (clicks on the prompt bubble up here too)
        row = self.scroll_offset.y + offset.y
        if row >= len(self._lines):
            return
        if offset.x < self._gutter_width:
            self._post(self.BreakpointToggled(self._path, row + 1))
        else:
            self._move_cursor(row)

    def on_mouse_move(self, event: events.MouseMove) -> None:
        offset = event.get_content_offset(self)
        tooltip = None
        if offset is not None and event.widget is self and offset.x < self._gutter_width:
            mark = self._marks.get(self.scroll_offset.y + offset.y)
            if mark is not None:
                tooltip = "\n".join(self._describe(bp) for bp in mark[2])
        if tooltip != self.tooltip:
            self.tooltip = tooltip

    # ------------------------------------------------------------------ rendering

    def render_lines(self, crop):
        # rich_style walks the ancestors and the content region is worked out from the styles:
        # once per frame, not once per row
        self._frame = (self.rich_style, self.scrollable_content_region.width)
        try:
            return super().render_lines(crop)
        finally:
            self._frame = None

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        row = scroll_y + y
        base_style, width = self._frame or (self.rich_style, self.scrollable_content_region.width)
        if row >= len(self._lines) or self._path is None:
            return Strip.blank(width, base_style)

        is_current = row == self._current_row
        is_cursor = row == self._cursor
        line_style = base_style
        if is_current:
            line_style += self._style("current-line")
        elif is_cursor:
            line_style += self._style("cursor-line")

        # Gutter: [breakpoint][▶][number]<space>; it doesn't scroll horizontally. The number's
        # padding is a segment of its own, like a row's indentation (see _SPACES).
        mark = self._marks.get(row)
        blank = Segment(" ", line_style)
        number = str(row + 1)
        gutter = list(Segment.simplify([
            Segment(mark[0], line_style + self._style(f"bp-{mark[1]}")) if mark else blank,
            Segment("▶", line_style + self._style("current-marker")) if is_current else blank,
            Segment(" " * (self._digits - len(number)), line_style),
            Segment(number + " ", line_style + self._style("gutter-cursor" if is_cursor else "gutter")),
        ]))

        text_width = max(0, width - self._gutter_width)
        left, right = scroll_x, scroll_x + text_width
        pieces, starts = self._pieces(row)
        first_char = 0
        if starts is not None:
            # A long line: keep only the pieces in view, so a 1 MB minified line stays cheap.
            chars, cells = starts
            first, last = max(0, bisect_right(cells, left) - 1), bisect_left(cells, right)
            pieces, first_char = pieces[first:last], chars[first]
            left, right = left - cells[first], right - cells[first]
        if row in self._match_by_row:
            spans = [(start - first_char, end - first_char,
                      self._style("match-current" if index == self._match_index else "match"))
                     for start, end, index in self._match_by_row[row]]
            pieces = self._overlay_matches(pieces, spans)
        segments = [Segment(piece, line_style + style) for piece, style in pieces]
        cells = _cells(self._lines[row])
        if not left and starts is None and 0 < text_width and cells <= text_width:
            # Most rows: not scrolled sideways and no wider than the view. One Strip instead of
            # five (each sets up caches of its own: they were most of a row's cost), same cells.
            if cells < text_width:
                segments.append(Segment(" " * (text_width - cells), line_style))
            return Strip(gutter + segments, width)
        text = Strip(segments).crop(left, right).extend_cell_length(text_width, line_style)
        return Strip.join([Strip(gutter, self._gutter_width), text]).crop(0, width)

    def _pieces(self, row: int) -> tuple[_Pieces, _Starts]:
        """The row's text as (text, token style) pieces, cached; for long lines, where each starts."""
        cached = self._pieces_cache.get(row)
        exact = row < len(self._tokens)
        if cached is not None and (cached[0] or not exact):
            return cached[1], cached[2]
        line = self._lines[row]
        tokens = self._tokens[row] if exact else None
        if tokens is None and not exact and self._lexer is not None and len(line) <= FALLBACK_LEX_LIMIT:
            # Not reached by the worker yet: lex this row alone (right except inside multi-line
            # strings), and replace it when the worker's tokens arrive.
            tokens = next(iter(_tokens_by_line(self._lexer.get_tokens(line + "\n"))), ())
            if "".join(text for _, text in tokens) != line:
                tokens = None
        if tokens is None or len(line) > MAX_HIGHLIGHT_LINE:
            pieces = [(line, Style.null())]
        else:
            pieces = [(text, self._token_style(ttype)) for ttype, text in tokens]
        pieces = _spaces_apart(pieces)
        starts = None
        if len(line) > LONG_LINE:
            pieces = [(text[i:i + LONG_LINE], style) for text, style in pieces
                      for i in range(0, len(text), LONG_LINE)]
            chars = [0, *accumulate(len(text) for text, _ in pieces)][:-1]
            widths = (_cells(text) for text, _ in pieces)
            cells = [0, *accumulate(widths)][:-1]
            starts = (chars, cells)
        self._pieces_cache[row] = (exact, pieces, starts)
        return pieces, starts

    @staticmethod
    def _overlay_matches(pieces: _Pieces, spans: list[tuple[int, int, Style]]) -> _Pieces:
        """Split pieces at match boundaries and add the match styles on top."""
        out: list[tuple[str, Style]] = []
        position = 0
        for text, style in pieces:
            end = position + len(text)
            cursor = position
            for start, stop, style_add in spans:
                if stop <= cursor or start >= end:
                    continue
                if start > cursor:
                    out.append((text[cursor - position:start - position], style))
                    cursor = start
                stop = min(stop, end)
                out.append((text[cursor - position:stop - position], style + style_add))
                cursor = stop
            if cursor < end:
                out.append((text[cursor - position:], style))
            position = end
        return out

    def _style(self, name: str) -> Style:
        """A component class as a Rich style holding only what the CSS sets (colors blended)."""
        style = self._styles.get(name)
        if style is None:
            component = f"source-view--{name}"
            full = self.get_component_rich_style(component)
            partial = self.get_component_rich_style(component, partial=True)
            style = Style.from_color(
                full.color if partial.color is not None else None,
                full.bgcolor if partial.bgcolor is not None else None,
            ) + partial.without_color
            self._styles[name] = style
        return style

    def _token_style(self, ttype: Any) -> Style:
        style = self._token_styles.get(ttype)
        if style is None:
            # Imported here, not at start-up: pygments costs tens of ms before the first frame.
            from pygments.token import Token
            from rich.syntax import PygmentsSyntaxTheme

            if self._syntax_theme is None:
                self._syntax_theme = PygmentsSyntaxTheme(self._pygments_style_name())
            theme = self._syntax_theme
            pygments_style = theme.get_style_for_token(ttype)
            color = pygments_style.color
            if color == theme.get_style_for_token(Token).color or ttype in Token.Text:
                color = None  # plain text takes the theme's foreground
            style = Style(color=color, bold=pygments_style.bold, italic=pygments_style.italic,
                          underline=pygments_style.underline)
            self._token_styles[ttype] = style
        return style

    def _pygments_style_name(self) -> str:
        try:
            theme = self.app.current_theme
        except Exception:
            return self.DARK_STYLE
        return self.PYGMENTS_STYLES.get(theme.name) or (self.DARK_STYLE if theme.dark else self.LIGHT_STYLE)

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._styles.clear()

    def _on_theme_changed(self, _theme: object) -> None:
        self._syntax_theme = None
        self._token_styles.clear()
        self._pieces_cache.clear()
        self._styles.clear()
        self.refresh()

    # ------------------------------------------------------------------ highlighting

    def on_mount(self) -> None:
        self.app.theme_changed_signal.subscribe(self, self._on_theme_changed)
        self.call_after_refresh(self._mount_prompt_bar)
        if self._highlight_pending:
            self._start_highlighting()
        if self._pending_scroll is not None:
            row, center = self._pending_scroll
            self._pending_scroll = None
            self.call_after_refresh(self._scroll_to_row, row, center=center)

    def on_unmount(self) -> None:
        self._generation += 1  # stops a highlight worker still running

    def _start_highlighting(self) -> None:
        if not self.is_attached or not self.is_mounted:
            self._highlight_pending = True
            return
        self._highlight_pending = False
        generation, path, lines, tokens = self._generation, self._path or "", self._lines, self._tokens
        self.run_worker(
            lambda: self._highlight(generation, path, lines, tokens),
            name="source-view-highlight", group="source-view-highlight",
            thread=True, exclusive=True, exit_on_error=False,
        )

    def _highlight(self, generation: int, path: str, lines: list[str], out: list) -> None:
        """Thread worker: lex the whole file once, appending one token tuple per line to `out`."""
        lexer = _lexer_for(path)
        if lexer is None or generation != self._generation or sum(map(len, lines)) > MAX_HIGHLIGHT_CHARS:
            return
        self._lexer = lexer
        worker = get_current_worker()
        next_post = time.monotonic() + 0.02
        text = "\n".join(line if len(line) <= MAX_HIGHLIGHT_LINE else "" for line in lines) + "\n"
        for line_tokens in _tokens_by_line(lexer.get_tokens(text)):
            row = len(out)
            if generation != self._generation or worker.is_cancelled:
                return
            if row >= len(lines):
                break
            text = "".join(value for _, value in line_tokens)
            out.append(line_tokens if text == lines[row] else None)  # None: lexer changed text
            if time.monotonic() >= next_post:
                self.post_message(self._Highlighted(generation))
                next_post = time.monotonic() + 0.1
        self.post_message(self._Highlighted(generation))

    @on(_Highlighted)
    def _highlighted(self, message: _Highlighted) -> None:
        if message.generation == self._generation:
            self.refresh()

    # ------------------------------------------------------------------ internals

    @property
    def _gutter_width(self) -> int:
        return self._digits + 3

    def _update_virtual_size(self) -> None:
        extra = 1 if self._prompt is not None else 0  # let the last line scroll above the prompt
        self.virtual_size = Size(self._gutter_width + self._max_width + 1, len(self._lines) + extra)

    def _view_height(self) -> int:
        return self.scrollable_content_region.height - (1 if self._prompt is not None else 0)

    def _clamp(self, row: int) -> int:
        return max(0, min(row, len(self._lines) - 1))

    def _set_cursor(self, row: int) -> None:
        row = self._clamp(row)
        moved = row != self._cursor
        old, self._cursor = self._cursor, row
        if moved and self._path is not None:
            self._post(self.CursorMoved(self._path, row + 1))
        self._refresh_rows(old, row)

    def _refresh_rows(self, *rows: int | None) -> None:
        # Not ScrollView.refresh_line: its region is as wide as the longest line, and Textual
        # clips it to the pane's container, not to this view, so a step repainted the rows of
        # the panes to the right too (their cells re-rendered and re-sent to the terminal).
        # Nor the scrollbar's gutter (a step does not move the bar): the rows alone are then
        # the view's own cells, and nothing behind the view is rendered for them (compositor.py).
        top, width = self.scroll_offset.y, max(0, self.size.width - self.scrollbar_gutter.right)
        for row in {r for r in rows if r is not None}:
            self.refresh(Region(0, row - top, width, 1))

    def _move_cursor(self, row: int) -> None:
        """Move the cursor and scroll just enough to keep it visible."""
        self._set_cursor(row)
        self._scroll_to_row(self._cursor, center=False)

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        # The rows now, the scrollbar's thumb in the frame after: the frame that brings a new
        # current line into view then draws the source rows alone (the bar's rows cost about
        # as much again in that frame: 1-4 ms measured in the app).
        if round(old_value) != round(new_value):
            self.refresh(self.size.region)
        if self.show_vertical_scrollbar:
            self.call_after_refresh(self._move_thumb)

    def _move_thumb(self) -> None:
        if self.show_vertical_scrollbar:
            self.vertical_scrollbar.position = self.scroll_y

    def _scroll_to_row(self, row: int, *, center: bool) -> None:
        if not self.is_mounted:
            self._pending_scroll = (row, center)
            return
        height = self._view_height()
        if height <= 0:  # not laid out yet
            self.call_after_refresh(self._scroll_to_row, row, center=center)
            return
        top = self.scroll_offset.y
        if top <= row < top + height:
            return
        if center:
            y = row - height // 2
        else:
            y = row if row < top else row - height + 1
        self.scroll_to(y=max(0, y), animate=False, force=True)

    def _reveal_column(self, row: int, column: int) -> None:
        """Scroll horizontally so that character `column` of `row` is on screen."""
        cell = cell_len(self._lines[row][:column])
        left, text_width = self.scroll_offset.x, self.scrollable_content_region.width - self._gutter_width
        if text_width > 0 and not left <= cell < left + text_width - 1:
            self.scroll_to(x=max(0, cell - text_width // 3), animate=False, force=True)

    def _post(self, message: BreakpointToggled | CursorMoved) -> None:
        message.source_view = self
        self.post_message(message)

    def _index_breakpoints(self) -> None:
        by_row: dict[int, list[dict]] = {}
        if self._path is not None:
            for bp in self._breakpoints:
                line = bp.get("line")
                in_file = isinstance(line, int) and 1 <= line <= len(self._lines)
                if in_file and self._same_file(bp.get("file")):
                    by_row.setdefault(line - 1, []).append(bp)
        self._marks = {}
        for row, bps in by_row.items():
            # Several on one line: show an enabled one first, the person's before the agent's.
            shown = max(bps, key=lambda bp: (bool(bp.get("enabled", True)), bp.get("actor") != "agent"))
            enabled = bool(shown.get("enabled", True))
            glyph = breakpoint_glyph(shown, enabled)
            self._marks[row] = (glyph, "agent" if str(shown.get("actor", "")).startswith("agent") else "human", bps)

    def _same_file(self, path: object) -> bool:
        return isinstance(path, str) and self._path is not None and (
            path == self._path or os.path.normpath(path) == os.path.normpath(self._path))

    def _locate_current(self) -> None:
        current = self._current
        if current is not None and self._same_file(current[0]) and 1 <= current[1] <= len(self._lines):
            self._current_row = current[1] - 1
        else:
            self._current_row = None

    @staticmethod
    def _describe(bp: dict) -> str:
        parts = ["temporary breakpoint" if bp.get("temporary") else "breakpoint",
                 f"set by {'the agent' if bp.get('actor') == 'agent' else 'you'}"]
        if not bp.get("enabled", True):
            parts.append("disabled")
        if bp.get("log") is not None:
            parts[0] = "logpoint (prints, never stops)"
            parts.append(f"logs {bp['log']!r}")
        if bp.get("cond"):
            parts.append(f"if {bp['cond']}")
        if bp.get("hit"):
            parts.append(f"when {bp['hit']}")
        return ", ".join(parts)

    # search

    def _find_all(self) -> None:
        """Find every occurrence of the query (literal; case-insensitive unless it has capitals)."""
        self._matches, self._match_rows, self._match_by_row = [], [], {}
        self._match_index = None
        if not self._query:
            return
        if self._text is None:
            self._text = "\n".join(self._lines)
            self._line_starts = [0, *accumulate(len(line) + 1 for line in self._lines)]
        starts = self._line_starts
        assert starts is not None
        flags = re.IGNORECASE if self._query == self._query.lower() else 0
        for found in re.finditer(re.escape(self._query), self._text, flags):
            row = bisect_right(starts, found.start()) - 1
            self._matches.append((row, found.start() - starts[row], found.end() - starts[row]))
            if len(self._matches) >= MAX_MATCHES:
                break
        self._match_rows = [row for row, _, _ in self._matches]
        for index, (row, start, end) in enumerate(self._matches):
            self._match_by_row.setdefault(row, []).append((start, end, index))

    def _next_match(self, backwards: bool) -> int:
        count, index = len(self._matches), self._match_index
        if index is not None and index < count and self._matches[index][0] == self._cursor:
            index = (index + (-1 if backwards else 1)) % count
        elif backwards:
            index = (bisect_left(self._match_rows, self._cursor) - 1) % count
        else:
            index = bisect_right(self._match_rows, self._cursor) % count
        self._match_index = index
        return index


def breakpoint_glyph(bp: dict, enabled: bool = True) -> str:
    """The gutter's mark: » a logpoint, ◈ a hit count, ◆ a condition, ● plain (hollow: disabled)."""
    if bp.get("log") is not None:
        return "»" if enabled else "›"
    if bp.get("hit"):
        return "◈" if enabled else "◇"
    if bp.get("cond"):
        return "◆" if enabled else "◇"
    return "●" if enabled else "○"
