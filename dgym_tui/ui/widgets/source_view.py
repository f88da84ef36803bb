"""The source pane: one file with line numbers, breakpoint marks, the current line and a cursor.

Why the Line API: `SourceView` is a `ScrollView` that draws each visible row on demand in
`render_line(y)`. Nothing is mounted per line and nothing is rendered off screen, so loading a
20,000-line file costs a `str.split` plus a width scan (7-13 ms for `load()` here, first frame
drawn 16-57 ms after it) and a frame renders only the rows in view (~2 ms for 30). Syntax
highlighting (pygments needs ~1.4 s for 20,000 lines of Python, its first lexer lookup ~0.4 s)
runs once per load in a thread worker that streams per-line tokens back; a row whose tokens have
not arrived yet is lexed on its own (right except inside multi-line strings), or shown plain.

Three parts, as Textual's TextArea keeps its document apart: the text model (source_text.py: the
lines, the marks, the current line, the search), the highlighter (source_highlight.py: pygments'
tokens, each row as pieces) and this widget, which draws them, scrolls and takes the keys.

The widget holds no debugging logic. The app tells it what to show (`load`, `set_breakpoints`,
`set_current`) and hears what the person asked for through messages (`BreakpointToggled`,
`CursorMoved`). The app binds the debugger keys (b n s c r t u d ! ? q ...) and reads
`cursor_line`; the widget binds only movement, search (`/` `.` `,`) and go-to-line (`ctrl+g` `:`).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from typing import Any, ClassVar, Iterable, Literal

from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style

from textual import events, on
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.geometry import Region, Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.widgets import Input, Label
from textual.worker import get_current_worker

from dgym_tui.ui.widgets.source_highlight import Highlighter, overlay_matches
from dgym_tui.ui.widgets.source_text import SourceText, breakpoint_glyph, cells, describe_breakpoint

__all__ = ["SourceView", "breakpoint_glyph"]

class SourceViewPrompt(Input):
    """The one-line input of the search / go-to-line prompt."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "Cancel", show=False)]

    def action_cancel(self) -> None:
        self._source_view.close_prompt(cancel=True)

    async def action_submit(self) -> None:
        # Done here, as the Enter key is handled, not in a Submitted message handled later: a key
        # typed right after Enter (`:4⏎b`) then finds the cursor moved and the source focused.
        self._source_view.submit_prompt(self.value)

    @property
    def _source_view(self) -> SourceView:
        return next(a for a in self.ancestors if isinstance(a, SourceView))


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
        self.model = SourceText()                         # the lines, marks, current line, matches
        self.highlighter = Highlighter(self._token_style)  # the tokens, and each row as pieces
        super().__init__(name=name, id=id, classes=classes)
        self._highlight_pending = False
        self._syntax_theme = None  # rich's PygmentsSyntaxTheme, made on first use
        self._cursor = 0  # 0-based internally
        self._prompt: Literal["search", "goto"] | None = None
        self._saved_search: tuple[str, int | None, int, int] | None = None
        self._pending_scroll: tuple[int, bool] | None = None
        self._waiting_line: int | None = None  # a go-to typed before any file was shown
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
        return self.model.path

    @property
    def line_count(self) -> int:
        return len(self.model.lines)

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
        return None if self.model.current_row is None else self.model.current_row + 1

    @property
    def search_query(self) -> str:
        return self.model.query

    @property
    def match_count(self) -> int:
        return len(self.model.matches)

    def load(self, path: str, text: str) -> None:
        """Show `text` as the content of `path`. Reloading the same path keeps cursor and scroll."""
        same_file = path == self.model.path
        self._waiting_line = None
        self.highlighter.load(path)
        self.model.load(path, text)
        self._update_virtual_size()
        if self.model.current_row is not None and not same_file:
            self._set_cursor(self.model.current_row)
            self._scroll_to_row(self.model.current_row, center=True)
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
        self.model.set_breakpoints(items)
        self.refresh()

    def set_current(self, path: str | None, line: int | None) -> None:
        """Mark the selected frame's location (None, None: no frame).

        When the location changes and is in the loaded file, the cursor moves to it and it is
        scrolled into view (centered if it was off screen). Loading another file is the app's job.
        """
        old_row = self.model.current_row
        changed = self.model.set_current((path, line) if path is not None and line is not None else None)
        if changed and self.model.current_row is not None:
            self._set_cursor(self.model.current_row)
            self._scroll_to_row(self.model.current_row, center=True)
        # Only the rows that changed look: a step repaints two lines, not the whole view (what a
        # terminal has to redraw is most of what a step costs).
        self._refresh_rows(old_row, self.model.current_row)

    def goto_line(self, line: int) -> None:
        """Move the cursor to `line` (1-based, clamped), centering it if it was off screen.
        Before any file is shown (the first stop's file still on its way) the line waits for
        it: `take_waiting_line`."""
        if self.model.path is None:
            self._waiting_line = line
            return
        row = self._clamp(line - 1)
        self._set_cursor(row)
        self._scroll_to_row(row, center=True)

    def take_waiting_line(self) -> int | None:
        """The line of a go-to made before any file was shown (once), else None."""
        line, self._waiting_line = self._waiting_line, None
        return line

    def search(self, query: str, *, backwards: bool = False) -> bool:
        """Highlight `query` (smart case) and move the cursor to the next match after it."""
        self.model.query = query
        self.model.find_all()
        return self.search_next(backwards=backwards)

    def search_next(self, *, backwards: bool = False) -> bool:
        """Move the cursor to the next (previous) match, wrapping around. False if none."""
        if not self.model.matches:
            if self.model.query:
                self.notify(f"Not found: {self.model.query}", severity="warning", timeout=2)
            return False
        self.model.match_index = self.model.next_match(self._cursor, backwards)
        row, start, _end = self.model.matches[self.model.match_index]
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
            self._saved_search = (self.model.query, self.model.match_index, *self.scroll_offset)
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
            self.model.query = query
            self.model.find_all()
            self.model.match_index = index if index is not None and index < len(self.model.matches) else None
            self.scroll_to(scroll_x, scroll_y, animate=False, force=True)
        self._saved_search = None
        self._prompt_bar.remove_class("-open", "-no-match")
        self._update_virtual_size()
        if refocus:
            self.screen.set_focus(self)  # at once: the keys typed next are the source view's
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
        self._move_cursor(len(self.model.lines) - 1)

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
        self.model.query = event.value or (saved[0] if saved else "")
        self.model.find_all()
        if not event.value and saved is not None:
            self.model.match_index = saved[1] if saved[1] is not None and saved[1] < len(self.model.matches) else None
            self.scroll_to(*saved[2:], animate=False, force=True)
        elif self.model.matches:
            self.model.match_index = self.model.next_match(self._cursor, False)
            row, start, _ = self.model.matches[self.model.match_index]
            self._scroll_to_row(row, center=True)
            self._reveal_column(row, start)
        elif saved is not None:
            self.scroll_to(*saved[2:], animate=False, force=True)
        self._prompt_bar.set_class(bool(event.value) and not self.model.matches, "-no-match")
        self.refresh()

    def submit_prompt(self, value: str) -> None:
        """Enter in the prompt: go to the line, or search."""
        mode = self._prompt
        if mode == "goto":
            self.close_prompt()
            line = value.strip()
            if line.isdigit():
                self.goto_line(int(line))
        elif mode == "search":
            previous = self._saved_search[0] if self._saved_search else ""
            self._saved_search = None
            self.close_prompt()
            query = value or previous  # an empty search repeats the last one (spaces kept: they are searched)
            if query:
                self.model.query = query
                self.model.find_all()
                self.search_next()

    @on(events.DescendantBlur)
    def _prompt_blurred(self, event: events.DescendantBlur) -> None:
        if self._prompt is not None and isinstance(event.widget, SourceViewPrompt):
            self.close_prompt(cancel=True, refocus=False)  # focus went elsewhere: leave it there

    # ------------------------------------------------------------------ mouse

    def on_click(self, event: events.Click) -> None:
        offset = event.get_content_offset(self)
        if offset is None or self.model.path is None or event.widget is not self:
            return  # (clicks on the prompt bubble up here too)
        row = self.scroll_offset.y + offset.y
        if row >= len(self.model.lines):
            return
        if offset.x < self._gutter_width:
            self._post(self.BreakpointToggled(self.model.path, row + 1))
        else:
            self._move_cursor(row)

    def on_mouse_move(self, event: events.MouseMove) -> None:
        offset = event.get_content_offset(self)
        tooltip = None
        if offset is not None and event.widget is self and offset.x < self._gutter_width:
            mark = self.model.marks.get(self.scroll_offset.y + offset.y)
            if mark is not None:
                tooltip = "\n".join(describe_breakpoint(bp) for bp in mark[2])
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
        if row >= len(self.model.lines) or self.model.path is None:
            return Strip.blank(width, base_style)

        is_current = row == self.model.current_row
        is_cursor = row == self._cursor
        line_style = base_style
        if is_current:
            line_style += self._style("current-line")
        elif is_cursor:
            line_style += self._style("cursor-line")

        # Gutter: [breakpoint][▶][number]<space>; it doesn't scroll horizontally. The number's
        # padding is a segment of its own, like a row's indentation (see source_highlight.SPACES).
        mark = self.model.marks.get(row)
        blank = Segment(" ", line_style)
        number = str(row + 1)
        gutter = list(Segment.simplify([
            Segment(mark[0], line_style + self._style(f"bp-{mark[1]}")) if mark else blank,
            Segment("▶", line_style + self._style("current-marker")) if is_current else blank,
            Segment(" " * (self.model.digits - len(number)), line_style),
            Segment(number + " ", line_style + self._style("gutter-cursor" if is_cursor else "gutter")),
        ]))

        text_width = max(0, width - self._gutter_width)
        left, right = scroll_x, scroll_x + text_width
        pieces, starts = self.highlighter.pieces(row, self.model.lines[row])
        first_char = 0
        if starts is not None:
            # A long line: keep only the pieces in view, so a 1 MB minified line stays cheap.
            chars, piece_cells = starts
            first, last = max(0, bisect_right(piece_cells, left) - 1), bisect_left(piece_cells, right)
            pieces, first_char = pieces[first:last], chars[first]
            left, right = left - piece_cells[first], right - piece_cells[first]
        if row in self.model.match_by_row:
            spans = [(start - first_char, end - first_char,
                      self._style("match-current" if index == self.model.match_index else "match"))
                     for start, end, index in self.model.match_by_row[row]]
            pieces = overlay_matches(pieces, spans)
        segments = [Segment(piece, line_style + style) for piece, style in pieces]
        used = cells(self.model.lines[row])
        if not left and starts is None and 0 < text_width and used <= text_width:
            # Most rows: not scrolled sideways and no wider than the view. One Strip instead of
            # five (each sets up caches of its own: they were most of a row's cost), same cells.
            if used < text_width:
                segments.append(Segment(" " * (text_width - used), line_style))
            return Strip(gutter + segments, width)
        text = Strip(segments).crop(left, right).extend_cell_length(text_width, line_style)
        return Strip.join([Strip(gutter, self._gutter_width), text]).crop(0, width)

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
        self.highlighter.cache.clear()
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
        self.highlighter.generation += 1  # stops a highlight worker still running

    def _start_highlighting(self) -> None:
        if not self.is_attached or not self.is_mounted:
            self._highlight_pending = True
            return
        self._highlight_pending = False
        highlighter = self.highlighter
        generation, path, lines, tokens = highlighter.generation, self.model.path or "", self.model.lines, highlighter.tokens

        def lex() -> None:
            worker = get_current_worker()
            highlighter.lex(generation, path, lines, tokens, lambda: worker.is_cancelled,
                            lambda: self.post_message(self._Highlighted(generation)))

        self.run_worker(lex, name="source-view-highlight", group="source-view-highlight",
                        thread=True, exclusive=True, exit_on_error=False)

    @on(_Highlighted)
    def _highlighted(self, message: _Highlighted) -> None:
        if message.generation == self.highlighter.generation:
            self.refresh()

    # ------------------------------------------------------------------ internals

    @property
    def _gutter_width(self) -> int:
        return self.model.digits + 3

    def _update_virtual_size(self) -> None:
        extra = 1 if self._prompt is not None else 0  # let the last line scroll above the prompt
        self.virtual_size = Size(self._gutter_width + self.model.max_width + 1, len(self.model.lines) + extra)

    def _view_height(self) -> int:
        return self.scrollable_content_region.height - (1 if self._prompt is not None else 0)

    def _clamp(self, row: int) -> int:
        return max(0, min(row, len(self.model.lines) - 1))

    def _set_cursor(self, row: int) -> None:
        row = self._clamp(row)
        moved = row != self._cursor
        old, self._cursor = self._cursor, row
        if moved and self.model.path is not None:
            self._post(self.CursorMoved(self.model.path, row + 1))
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
        cell = cell_len(self.model.lines[row][:column])
        left, text_width = self.scroll_offset.x, self.scrollable_content_region.width - self._gutter_width
        if text_width > 0 and not left <= cell < left + text_width - 1:
            self.scroll_to(x=max(0, cell - text_width // 3), animate=False, force=True)

    def _post(self, message: BreakpointToggled | CursorMoved) -> None:
        message.source_view = self
        self.post_message(message)
