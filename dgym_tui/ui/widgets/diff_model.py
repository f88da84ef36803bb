"""A file's change as rows to draw: unified or side by side, each line's code tokens attached.

Pure data (difflib for the alignment, pygments for the tokens), kept apart from the widget that
draws it, so both layouts come from one computation and can be tested without a screen.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass

from dgym_tui.core.safe_text import one_line
from dgym_tui.ui.lexers import lexer_for

CONTEXT = 2

Tokens = list[tuple[object, str]]  # (pygments token type, text)


@dataclass(frozen=True)
class Row:
    """One drawn row. kind: same | del | add | hunk (a "@@" separator)."""

    kind: str
    old_no: int | None = None
    new_no: int | None = None
    old: Tokens | None = None
    new: Tokens | None = None
    text: str = ""


def tokens_by_line(text: str, path: str | None) -> list[Tokens]:
    """Each line's pygments tokens (plain text when no lexer fits); control characters visible."""
    lines = text.splitlines()
    lexer = lexer_for(path, stripnl=False, ensurenl=False) if path else None
    if lexer is None or len(text) > 500_000:
        return [[(None, one_line(line))] for line in lines]
    out: list[Tokens] = [[]]
    for ttype, value in lexer.get_tokens("\n".join(lines)):
        parts = value.split("\n")
        for i, part in enumerate(parts):
            if i:
                out.append([])
            if part:
                out[-1].append((ttype, one_line(part)))
    while len(out) < len(lines):
        out.append([])
    return out[:len(lines)] or [[]]


def unified(before: str, after: str, path: str | None = None) -> list[Row]:
    old, new = before.splitlines(), after.splitlines()
    old_tok, new_tok = tokens_by_line(before, path), tokens_by_line(after, path)
    rows: list[Row] = []
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    for group in matcher.get_grouped_opcodes(CONTEXT):
        first, last = group[0], group[-1]
        rows.append(Row("hunk", text=f"@@ -{first[1] + 1},{last[2] - first[1]} +{first[3] + 1},{last[4] - first[3]} @@"))
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                rows.extend(Row("same", i + 1, j + 1, old_tok[i], new_tok[j]) for i, j in zip(range(i1, i2), range(j1, j2)))
                continue
            rows.extend(Row("del", i + 1, None, old_tok[i], None) for i in range(i1, i2))
            rows.extend(Row("add", None, j + 1, None, new_tok[j]) for j in range(j1, j2))
    return rows


def side_by_side(before: str, after: str, path: str | None = None) -> list[Row]:
    """Rows with the old line on the left and the new one on the right; a changed block pairs
    its lines in order, the longer side's extra lines facing blanks."""
    old, new = before.splitlines(), after.splitlines()
    old_tok, new_tok = tokens_by_line(before, path), tokens_by_line(after, path)
    rows: list[Row] = []
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    for group in matcher.get_grouped_opcodes(CONTEXT):
        first, last = group[0], group[-1]
        rows.append(Row("hunk", text=f"@@ -{first[1] + 1},{last[2] - first[1]} +{first[3] + 1},{last[4] - first[3]} @@"))
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                rows.extend(Row("same", i + 1, j + 1, old_tok[i], new_tok[j]) for i, j in zip(range(i1, i2), range(j1, j2)))
                continue
            for k in range(max(i2 - i1, j2 - j1)):
                i, j = i1 + k, j1 + k
                left = i < i2
                right = j < j2
                kind = "change" if left and right else ("del" if left else "add")
                rows.append(Row(kind, i + 1 if left else None, j + 1 if right else None,
                                old_tok[i] if left else None, new_tok[j] if right else None))
    return rows


def stats(before: str, after: str) -> tuple[int, int]:
    """(lines added, lines removed)."""
    added = removed = 0
    for line in difflib.unified_diff(before.splitlines(), after.splitlines(), lineterm="", n=0):
        if line.startswith("+") and not line.startswith("+++"):
            added += 1
        elif line.startswith("-") and not line.startswith("---"):
            removed += 1
    return added, removed
