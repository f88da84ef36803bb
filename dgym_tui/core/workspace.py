"""The repo copy as a line of checkpoints, mirrored on the host.

Every change that reaches the sandbox (an approved edit, a shell command that changed files) is
committed in the sandbox's own git repository as a checkpoint. The host keeps each checkpoint's
patch (it is also in the Checkpoint event), so the line outlives the sandbox: a dead sandbox is
rebuilt from the user's repo plus the patches in order, and a saved session resumes the same way.
Undo goes back one checkpoint with git, and the breakpoints move with their code both ways.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from dgym_tui.sandbox.errors import SandboxError

PATCH_FILE = ".git/dgym-apply.patch"  # inside the sandbox's own .git: never part of a diff


@dataclass
class Record:
    id: str          # the commit in the current sandbox
    message: str
    patch: str       # from the previous checkpoint (or the baseline)
    actor: str


class Workspace:
    def __init__(self):
        self.records: list[Record] = []
        self.pending: str = ""  # uncommitted changes last seen (diff from the head), for a rebuild

    def head(self, sandbox) -> str:
        return self.records[-1].id if self.records else sandbox.baseline

    def checkpoint(self, sandbox, message: str, actor: str) -> Record | None:
        """Commit what changed since the head; None when nothing did."""
        head = self.head(sandbox)
        patch = sandbox.diff(head)
        if not patch.strip():
            return None
        commit = sandbox.checkpoint(message)
        record = Record(commit, message, patch, actor)
        self.records.append(record)
        self.pending = ""
        return record

    def undo(self, sandbox) -> tuple[Record, str, str]:
        """Drop the last checkpoint (and anything uncommitted on top of it). Returns it, the
        commit now current, and the diff from the undone state back to it (to move breakpoints)."""
        if not self.records:
            raise SandboxError("nothing to undo: the sandbox is at its baseline")
        undone = self.records.pop()
        target = self.head(sandbox)
        reverse = sandbox.diff(undone.id, target)
        sandbox.restore(target)
        self.pending = ""
        return undone, target, reverse

    def rebuild(self, sandbox) -> list[Record]:
        """Onto a fresh sandbox (at its baseline): every checkpoint again, in order, then what
        was uncommitted. Returns the new records (new commit ids, same patches)."""
        old, self.records = self.records, []
        for record in old:
            apply_patch(sandbox, record.patch)
            self.records.append(Record(sandbox.checkpoint(record.message), record.message, record.patch,
                                       record.actor))
        if self.pending.strip():
            apply_patch(sandbox, self.pending)
        return list(self.records)


def apply_patch(sandbox, patch: str) -> None:
    """git apply, all or nothing, in the sandbox's copy."""
    sandbox.write_text(PATCH_FILE, patch)
    try:
        sandbox.git("apply", "--whitespace=nowarn", PATCH_FILE)
    finally:
        sandbox.exec(["rm", "-f", PATCH_FILE], timeout=10)


def edited_text(old: str | None, new_code: str, start: int | None, end: int | None) -> str:
    """A file's text after replacing lines start..end (1-based, inclusive) with new_code.

    No start and no end: the whole file (or a new one). start only: that one line. A start one
    past the last line appends. end < start inserts before start without removing anything.
    """
    if old is None or (start is None and end is None):
        text = new_code
    else:
        lines = old.splitlines(keepends=True)
        first = start if start is not None else 1
        last = end if end is not None else first
        if first < 1 or first > len(lines) + 1:
            raise ValueError(f"start {first} is outside the file (it has {len(lines)} lines)")
        if last > len(lines):
            raise ValueError(f"end {last} is past the end of the file (it has {len(lines)} lines)")
        replacement = new_code.splitlines(keepends=True)
        if replacement and not replacement[-1].endswith("\n") and last < len(lines):
            replacement[-1] += "\n"
        if lines and first > 1 and not lines[first - 2].endswith("\n"):
            lines[first - 2] += "\n"
        keep_to = max(last, first - 1)
        text = "".join(lines[:first - 1] + replacement + lines[keep_to:])
    if old is not None and old.endswith("\n") and text and not text.endswith("\n"):
        text += "\n"
    return text


_DIFF_FILE = re.compile(r"^diff --git a/(.+?) b/(.+)$", re.M)


def split_patch(patch: str) -> list[tuple[str, str]]:
    """A git diff cut at each file's `diff --git` line: (the file's path, its part of the diff)."""
    parts: list[tuple[str, str]] = []
    starts = [m.start() for m in _DIFF_FILE.finditer(patch)]
    for i, start in enumerate(starts):
        text = patch[start:starts[i + 1] if i + 1 < len(starts) else len(patch)]
        parts.append((patched_files(text)[-1] if patched_files(text) else "?", text))
    return parts


def patched_files(patch: str) -> list[str]:
    """The files a unified diff (git's format) touches, in order."""
    found: list[str] = []
    for old, new in _DIFF_FILE.findall(patch):
        for name in (old, new):
            if name not in found and name != "/dev/null":
                found.append(name)
    if not found:
        for line in patch.splitlines():
            if line.startswith("+++ ") and not line.startswith("+++ /dev/null"):
                name = line[4:].split("\t")[0].removeprefix("b/")
                if name not in found:
                    found.append(name)
    return found
