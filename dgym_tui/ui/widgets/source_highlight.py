"""The source pane's highlighter, apart from the widget: pygments' tokens for one file's lines,
lexed once in a worker thread (streamed in line by line), a row not reached yet lexed alone, and
each row as (text, style) pieces ready to draw. No Textual: the widget runs the worker and gives
the styles (its theme's pygments style)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from itertools import accumulate
from typing import Any

from rich.style import Style
from textual.cache import LRUCache

from dgym_tui.ui import lexers
from dgym_tui.ui.widgets.source_text import cells

FALLBACK_LEX_LIMIT = 2_000  # lines longer than this are shown plain until the worker is done
LONG_LINE = 512  # longer lines are cut into pieces of this size and drawn by the piece in view
MAX_HIGHLIGHT_LINE = 20_000  # longer lines (minified code, data) are shown plain, as editors do
MAX_HIGHLIGHT_CHARS = 4_000_000  # bigger files are shown plain (pygments: ~2 s per MB)

Pieces = list[tuple[str, Style]]  # a row as (text, token style) pieces
Starts = tuple[list[int], list[int]] | None  # long rows: each piece's first char and cell

# Spaces that start a token are drawn with this style: nothing shows, but it never equals a
# token's style. An SVG screenshot joins equal-styled cells into one <text>, and renderers such
# as librsvg drop a text's leading spaces: `    Cart,` or a docstring's second line was drawn at
# column 0, `import annotations` as `importannotations`. The meta is dropped after the join,
# and terminals never see it.
SPACES = Style.from_meta({"source-view": "spaces"})


def lexer_for(path: str) -> Any:
    return lexers.lexer_for(path, stripnl=False, ensurenl=True)


def tokens_by_line(tokens: Iterable[tuple[Any, str]]) -> Iterable[tuple[tuple[Any, str], ...]]:
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


def spaces_apart(pieces: Pieces) -> Pieces:
    """The pieces, with the spaces that start one made a piece of their own (see SPACES), and
    neighbours of one style joined: a terminal is sent each piece with its own colour codes, so
    fewer pieces are fewer bytes to draw (a joined piece never starts with spaces)."""
    out: Pieces = []
    for text, style in pieces:
        body = text.lstrip(" ")
        for part, part_style in ((text[:len(text) - len(body)], SPACES), (body, style)):
            if not part:
                continue
            if out and out[-1][1] == part_style:
                out[-1] = (out[-1][0] + part, part_style)
            else:
                out.append((part, part_style))
    return out


def overlay_matches(pieces: Pieces, spans: list[tuple[int, int, Style]]) -> Pieces:
    """Split pieces at match boundaries and add the match styles on top."""
    out: Pieces = []
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


class Highlighter:
    """One file's tokens (`tokens`: one tuple per line, filled by `lex` in a worker) and its rows
    as pieces (cached). `generation` changes with each file: a worker of an older one stops."""

    def __init__(self, token_style: Callable[[Any], Style]):
        self.token_style = token_style
        self.generation = 0
        self.tokens: list[tuple[tuple[Any, str], ...] | None] = []
        self.lexer: Any = None
        # row -> (from the whole-file lex?, pieces, for long lines: char and cell start of each piece)
        self.cache: LRUCache[int, tuple[bool, Pieces, Starts]] = LRUCache(4096)

    def load(self, path: str) -> None:
        self.generation += 1
        self.tokens = []
        self.lexer = lexer_for(path) if lexers.known(path) else None  # known: the per-row fallback works
        self.cache.clear()

    def lex(self, generation: int, path: str, lines: list[str], out: list, cancelled: Callable[[], bool],
            said: Callable[[], None]) -> None:
        """Worker thread: lex the whole file once, appending one token tuple per line to `out`,
        `said()` every 0.1 s and at the end."""
        lexer = lexer_for(path)
        if lexer is None or generation != self.generation or sum(map(len, lines)) > MAX_HIGHLIGHT_CHARS:
            return
        self.lexer = lexer
        next_post = time.monotonic() + 0.02
        text = "\n".join(line if len(line) <= MAX_HIGHLIGHT_LINE else "" for line in lines) + "\n"
        for line_tokens in tokens_by_line(lexer.get_tokens(text)):
            row = len(out)
            if generation != self.generation or cancelled():
                return
            if row >= len(lines):
                break
            text = "".join(value for _, value in line_tokens)
            out.append(line_tokens if text == lines[row] else None)  # None: lexer changed text
            if time.monotonic() >= next_post:
                said()
                next_post = time.monotonic() + 0.1
        said()

    def pieces(self, row: int, line: str) -> tuple[Pieces, Starts]:
        """The row's text as (text, token style) pieces, cached; for long lines, where each starts."""
        cached = self.cache.get(row)
        exact = row < len(self.tokens)
        if cached is not None and (cached[0] or not exact):
            return cached[1], cached[2]
        tokens = self.tokens[row] if exact else None
        if tokens is None and not exact and self.lexer is not None and len(line) <= FALLBACK_LEX_LIMIT:
            # Not reached by the worker yet: lex this row alone (right except inside multi-line
            # strings), and replace it when the worker's tokens arrive.
            tokens = next(iter(tokens_by_line(self.lexer.get_tokens(line + "\n"))), ())
            if "".join(text for _, text in tokens) != line:
                tokens = None
        if tokens is None or len(line) > MAX_HIGHLIGHT_LINE:
            pieces = [(line, Style.null())]
        else:
            pieces = [(text, self.token_style(ttype)) for ttype, text in tokens]
        pieces = spaces_apart(pieces)
        starts = None
        if len(line) > LONG_LINE:
            pieces = [(text[i:i + LONG_LINE], style) for text, style in pieces
                      for i in range(0, len(text), LONG_LINE)]
            chars = [0, *accumulate(len(text) for text, _ in pieces)][:-1]
            widths = (cells(text) for text, _ in pieces)
            starts = (chars, [0, *accumulate(widths)][:-1])
        self.cache[row] = (exact, pieces, starts)
        return pieces, starts
