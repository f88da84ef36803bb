"""The source pane's text model, apart from the widget that draws it (as Textual's TextArea keeps
its Document): one file's display lines, where the selected frame's line is, the breakpoints that
fall in the file and their gutter marks, and a search's matches. No Textual, no drawing: plain
data the widget reads row by row."""

from __future__ import annotations

import os
import re
from bisect import bisect_left, bisect_right
from collections.abc import Iterable
from itertools import accumulate

from rich.cells import cell_len

TAB_SIZE = 4
MAX_MATCHES = 50_000  # enough for any real search; bounds memory for a one-letter query

# Characters a terminal must not receive raw: C0/C1 controls except tab and newline, DEL, bidi
# controls (they reorder what is shown: "Trojan Source") and lone surrogates (unencodable).
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def _visible(match: re.Match[str]) -> str:
    """One visible, one-cell stand-in per unsafe character (so columns stay put)."""
    code = ord(match.group())
    if code < 0x20:
        return chr(0x2400 + code)  # control pictures: ␀ … ␟
    return "\u2421" if code == 0x7F else "\ufffd"


def cells(text: str) -> int:
    """Terminal cells `text` takes (ASCII: one per character, without rich's per-character scan)."""
    return len(text) if text.isascii() else cell_len(text)


def split_lines(text: str) -> list[str]:
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


def breakpoint_glyph(bp: dict, enabled: bool = True) -> str:
    """The gutter's mark: » a logpoint, ◈ a hit count, ◆ a condition, ● plain (hollow: disabled)."""
    if bp.get("log") is not None:
        return "»" if enabled else "›"
    if bp.get("hit"):
        return "◈" if enabled else "◇"
    if bp.get("cond"):
        return "◆" if enabled else "◇"
    return "●" if enabled else "○"


def describe_breakpoint(bp: dict) -> str:
    """A gutter mark's tooltip: what kind of breakpoint, who set it, its condition."""
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


class SourceText:
    """One file's lines, marks, current line and search matches (rows are 0-based)."""

    def __init__(self):
        self.path: str | None = None
        self.lines: list[str] = [""]
        self.max_width = 0
        self.digits = 3
        self.breakpoints: list[dict] = []
        self.marks: dict[int, tuple[str, str, list[dict]]] = {}  # row -> (glyph, actor, bps)
        self.current: tuple[str, int] | None = None
        self.current_row: int | None = None
        self.query = ""
        self.matches: list[tuple[int, int, int]] = []  # (row, start, end), in order
        self.match_rows: list[int] = []
        self.match_by_row: dict[int, list[tuple[int, int, int]]] = {}  # row -> (start, end, index)
        self.match_index: int | None = None
        self._text: str | None = None
        self._line_starts: list[int] | None = None

    def load(self, path: str, text: str) -> None:
        """Take `text` as `path`'s: its lines, its marks and current line, the search again."""
        self.path = path
        self.lines = split_lines(text)
        self._text = self._line_starts = None
        self.max_width = max(cells(line) for line in self.lines)
        self.digits = max(3, len(str(len(self.lines))))
        self.index_breakpoints()
        self.locate_current()
        if self.query:
            self.find_all()

    def clamp(self, row: int) -> int:
        return max(0, min(row, len(self.lines) - 1))

    # --- the breakpoints and the current line ---------------------------------------------------

    def set_breakpoints(self, items: Iterable[dict]) -> None:
        self.breakpoints = list(items)
        self.index_breakpoints()

    def index_breakpoints(self) -> None:
        by_row: dict[int, list[dict]] = {}
        if self.path is not None:
            for bp in self.breakpoints:
                line = bp.get("line")
                in_file = isinstance(line, int) and 1 <= line <= len(self.lines)
                if in_file and self.same_file(bp.get("file")):
                    by_row.setdefault(line - 1, []).append(bp)
        self.marks = {}
        for row, bps in by_row.items():
            # Several on one line: show an enabled one first, the person's before the agent's.
            shown = max(bps, key=lambda bp: (bool(bp.get("enabled", True)), bp.get("actor") != "agent"))
            glyph = breakpoint_glyph(shown, bool(shown.get("enabled", True)))
            self.marks[row] = (glyph, "agent" if str(shown.get("actor", "")).startswith("agent") else "human", bps)

    def same_file(self, path: object) -> bool:
        return isinstance(path, str) and self.path is not None and (
            path == self.path or os.path.normpath(path) == os.path.normpath(self.path))

    def set_current(self, current: tuple[str, int] | None) -> bool:
        """The selected frame's location; True when it changed."""
        changed = current != self.current
        self.current = current
        self.locate_current()
        return changed

    def locate_current(self) -> None:
        current = self.current
        if current is not None and self.same_file(current[0]) and 1 <= current[1] <= len(self.lines):
            self.current_row = current[1] - 1
        else:
            self.current_row = None

    # --- search -----------------------------------------------------------------------------------

    def find_all(self) -> None:
        """Find every occurrence of the query (literal; case-insensitive unless it has capitals)."""
        self.matches, self.match_rows, self.match_by_row = [], [], {}
        self.match_index = None
        if not self.query:
            return
        if self._text is None:
            self._text = "\n".join(self.lines)
            self._line_starts = [0, *accumulate(len(line) + 1 for line in self.lines)]
        starts = self._line_starts
        assert starts is not None
        flags = re.IGNORECASE if self.query == self.query.lower() else 0
        for found in re.finditer(re.escape(self.query), self._text, flags):
            row = bisect_right(starts, found.start()) - 1
            self.matches.append((row, found.start() - starts[row], found.end() - starts[row]))
            if len(self.matches) >= MAX_MATCHES:
                break
        self.match_rows = [row for row, _, _ in self.matches]
        for index, (row, start, end) in enumerate(self.matches):
            self.match_by_row.setdefault(row, []).append((start, end, index))

    def next_match(self, cursor: int, backwards: bool) -> int:
        """The match to go to from the cursor's row (the one after the current match, if the
        cursor is on it), made the current one."""
        count, index = len(self.matches), self.match_index
        if index is not None and index < count and self.matches[index][0] == cursor:
            index = (index + (-1 if backwards else 1)) % count
        elif backwards:
            index = (bisect_left(self.match_rows, cursor) - 1) % count
        else:
            index = bisect_right(self.match_rows, cursor) % count
        self.match_index = index
        return index
