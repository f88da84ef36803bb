"""One breakpoint registry per session, shared by the person and the agent.

While a pdb process runs, pdb itself is the truth: the shim reports every breakpoint after every
command, and `sync` folds that report in, remembering who set each one. When a new pdb process
starts, `to_restore` hands the whole list (conditions, disabled and temporary state, ignore
counts) to the shim. When a patch changes a file, `remap` moves breakpoints with their code.
"""

from __future__ import annotations

import re
import threading
from dataclasses import asdict, dataclass, replace


@dataclass
class Breakpoint:
    file: str  # relative to the repo root
    line: int
    cond: str | None = None
    enabled: bool = True
    temporary: bool = False
    ignore: int = 0
    hits: int = 0
    actor: str = "human"
    number: int | None = None  # pdb's number in the current process
    log: str | None = None     # a logpoint's message ({expr} for values): it prints, never stops
    hit: str | None = None     # a hit condition on `hit` (the times reached with cond true): "hit == 3"

    @property
    def key(self) -> tuple[str, int]:
        return (self.file, self.line)

    def to_dict(self) -> dict:
        return asdict(self)

    def label(self) -> str:
        """Where it is and what qualifies it, as people read it: `cart.py:70 if qty > 10`."""
        flags = [] if self.enabled else ["disabled"]
        if self.temporary:
            flags.append("temporary")
        if self.ignore:
            flags.append(f"ignore next {self.ignore}")
        cond = f" if {self.cond}" if self.cond else ""
        if self.hit:
            cond += f" when {self.hit}"
        if self.log is not None:
            cond += f" log {self.log!r}"
        return f"{self.file}:{self.line}{cond}" + (f" ({', '.join(flags)})" if flags else "")

    def describe(self) -> str:
        """One line of a listing: pdb's number, the label, who set it."""
        num = f"{self.number}" if self.number is not None else "-"
        return f"{num:>3} {self.label()} [{self.actor}]"


class BreakpointRegistry:
    def __init__(self):
        self._lock = threading.Lock()
        self._items: list[Breakpoint] = []
        # pdb's list as last synced (None once the registry changed otherwise): every command's
        # marker carries it, and it rarely changes; rebuilding and comparing the items each time
        # cost ~20 µs a command per breakpoint
        self._reported: list[dict] | None = None
        # watch expressions: shown at every stop, kept across restarts like the breakpoints
        self.watches: list[str] = []

    def items(self) -> list[Breakpoint]:
        with self._lock:
            return list(self._items)

    def snapshot(self) -> list[Breakpoint]:
        """Copies, for an event: later changes to the registry must not change what was emitted."""
        return [replace(bp) for bp in self.items()]

    def find(self, file: str, line: int) -> Breakpoint | None:
        return next((bp for bp in self.items() if bp.key == (file, line)), None)

    def add(self, bp: Breakpoint) -> None:
        """Record a breakpoint while no pdb process runs (it is set when the next one starts)."""
        with self._lock:
            self._items = [b for b in self._items if b.key != bp.key] + [bp]
            self._reported = None

    def remove(self, file: str, line: int) -> bool:
        with self._lock:
            before = len(self._items)
            self._items = [b for b in self._items if b.key != (file, line)]
            self._reported = None
            return len(self._items) != before

    def sync(self, reported: list[dict], actor: str) -> bool:
        """Take pdb's list as the truth; new breakpoints are credited to `actor`. True if changed."""
        with self._lock:
            if reported == self._reported:
                return False
            known = {b.key: b.actor for b in self._items}
            new_items = [
                Breakpoint(file=r["file"], line=r["line"], cond=r.get("cond"), enabled=r.get("enabled", True),
                           temporary=r.get("temporary", False), ignore=r.get("ignore", 0),
                           hits=r.get("hits", 0), number=r.get("number"), log=r.get("log"), hit=r.get("hit"),
                           actor=known.get((r["file"], r["line"]), actor))
                for r in reported
            ]
            changed = [b.to_dict() for b in new_items] != [b.to_dict() for b in self._items]
            self._items, self._reported = new_items, reported
            return changed

    def to_restore(self) -> list[dict]:
        return [{"file": b.file, "line": b.line, "cond": b.cond, "enabled": b.enabled,
                 "temporary": b.temporary, "ignore": b.ignore, "log": b.log, "hit": b.hit} for b in self.items()]

    def sync_watches(self, reported: list[str]) -> bool:
        """pdb's watch expressions as the truth (`watch`/`unwatch` typed). True if changed."""
        if reported == self.watches:
            return False
        self.watches = list(reported)
        return True

    def listing(self) -> str:
        """A stable, human- and model-readable listing."""
        items = self.items()
        if not items:
            return "No breakpoints."
        return "\n".join(bp.describe() for bp in items)

    def remap(self, diff: str) -> list[Breakpoint]:
        """Move breakpoints with their code after a patch; return the ones dropped because their
        line was rewritten or their file deleted."""
        moves = line_moves(diff)
        dropped: list[Breakpoint] = []
        with self._lock:
            self._reported = None
            kept = []
            for bp in self._items:
                if bp.file not in moves:
                    kept.append(bp)
                    continue
                new_line = moves[bp.file](bp.line)
                if new_line is None:
                    dropped.append(bp)
                else:
                    bp.line = new_line
                    kept.append(bp)
            self._items = kept
        return dropped


_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


@dataclass
class _Hunk:
    old_start: int
    old_len: int
    end_delta: int  # how far lines after this hunk move
    context: dict[int, int]  # unchanged lines inside the hunk: old number -> new number

    def covers(self, line: int) -> bool:
        # A pure insertion (old_len 0) goes after old_start and rewrites no old line.
        return self.old_start <= line < self.old_start + self.old_len


def line_moves(diff: str) -> dict:
    """For each file a unified diff changes, a function old line -> new line (None if the line was
    removed or rewritten, or the file deleted)."""
    hunks: dict[str, list[_Hunk]] = {}
    deleted: set[str] = set()
    current: str | None = None
    old_no = new_no = 0
    for line in diff.splitlines():
        if line.startswith("diff --git"):
            current = None
        elif line.startswith("--- "):
            path = line[4:].strip()
            current = path[2:] if path.startswith("a/") else None
        elif line.startswith("+++ "):
            if line[4:].strip() == "/dev/null" and current:
                deleted.add(current)
        elif m := _HUNK.match(line):
            if current:
                old_no, old_len = int(m.group(1)), int(m.group(2) or 1)
                new_no, new_len = int(m.group(3)), int(m.group(4) or 1)
                # With a length of 0 the start number names the line before the hunk.
                end_delta = (new_no + new_len + (new_len == 0)) - (old_no + old_len + (old_len == 0))
                hunks.setdefault(current, []).append(_Hunk(old_no, old_len, end_delta, {}))
        elif current in hunks and line[:1] in (" ", "-", "+"):
            if line[0] == " ":
                hunks[current][-1].context[old_no] = new_no
            old_no += line[0] != "+"
            new_no += line[0] != "-"

    def mover(file_hunks: list[_Hunk]):
        def move(line: int) -> int | None:
            delta = 0
            for h in file_hunks:
                if h.covers(line):
                    return h.context.get(line)
                if line < h.old_start or (h.old_len == 0 and line <= h.old_start):
                    break
                delta = h.end_delta
            return line + delta

        return move

    result = {path: mover(file_hunks) for path, file_hunks in hunks.items()}
    for path in deleted:
        result[path] = lambda _line: None
    return result
