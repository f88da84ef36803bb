"""A trial's later revisions: what the person made of it in the review (an edited patch, a
take-over from its replay, a send-back to the agent), each scored again in a fresh sandbox.

    RUN_DIR/revisions/<trial>/<n>/   n = 1, 2, ...
      origin.json    {"origin": edit | take-over | send-back, "note", "from_revision", "who", "when"}
      patch.diff     the change against the task's base
      session.jsonl  the session that made it (take-over, send-back), when there is one
      result.json    the score (result.json's fields, the new patch's sha256), written last and
                     atomically: until it is there the revision waits to be scored
      scoring.lock   held (flock) by the process scoring it; a revision waiting for its score
                     whose lock is free was left by a process that ended first, and is scored
                     when the inbox next opens (review/rework.py: score_left)

The batch's own files under trials/ are never written: a resumed batch rebuilding results.jsonl
from them still finds what it wrote. A revision's score replaces the trial's in the inbox; the
decisions in reviews.jsonl say which revision they were made on.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from dgym_tui.batch.result import TrialResult
from dgym_tui.review import reviews

FOLDER = "revisions"
LOCK = "scoring.lock"
ORIGINS = ("edit", "take-over", "send-back")


@dataclass
class Revision:
    number: int
    origin: str
    path: Path
    result: TrialResult | None        # None: not scored yet


def folder(run_dir: str | Path, trial: str, number: int) -> Path:
    return Path(run_dir) / FOLDER / trial / str(number)


def _numbers(run_dir: str | Path, trial: str) -> list[int]:
    root = Path(run_dir) / FOLDER / trial
    try:
        return sorted(int(p.name) for p in root.iterdir() if p.name.isdigit())
    except FileNotFoundError:
        return []


def read(run_dir: str | Path, trial: str, number: int) -> Revision:
    path = folder(run_dir, trial, number)
    origin = _json(path / "origin.json") or {}
    scored = _json(path / "result.json")
    return Revision(number=number, origin=str(origin.get("origin") or "edit"), path=path,
                    result=TrialResult.from_dict(scored) if scored else None)


def current_all(run_dir: str | Path) -> dict[str, tuple[Revision | None, int | None]]:
    """Each trial with revisions: (its newest scored revision, the number of a newer one still
    waiting for its score)."""
    root = Path(run_dir) / FOLDER
    out: dict[str, tuple[Revision | None, int | None]] = {}
    try:
        trials = [p.name for p in root.iterdir() if p.is_dir()]
    except FileNotFoundError:
        return out
    for trial in trials:
        out[trial] = current(run_dir, trial)
    return out


def current(run_dir: str | Path, trial: str) -> tuple[Revision | None, int | None]:
    """The trial's newest scored revision, and the number of a newer one still waiting for its
    score. A folder without origin.json (written last by create) is not a revision yet."""
    numbers = [n for n in _numbers(run_dir, trial) if (folder(run_dir, trial, n) / "origin.json").is_file()]
    scored = [n for n in numbers if (folder(run_dir, trial, n) / "result.json").is_file()]
    newest = read(run_dir, trial, scored[-1]) if scored else None
    waiting = numbers[-1] if numbers and (not scored or numbers[-1] > scored[-1]) else None
    return newest, waiting


def create(run_dir: str | Path, trial: str, origin: str, patch: str, note: str = "", from_revision: int = 0,
           session: bytes | None = None) -> Revision:
    """A new revision, not yet scored; its number is the next free one."""
    if origin not in ORIGINS:
        raise ValueError(f"unknown origin {origin!r}")
    numbers = _numbers(run_dir, trial)
    number = (numbers[-1] if numbers else 0) + 1
    path = folder(run_dir, trial, number)
    while True:
        try:
            path.mkdir(parents=True)
            break
        except FileExistsError:  # another reviewer took this number
            number += 1
            path = folder(run_dir, trial, number)
    (path / "patch.diff").write_bytes(patch.encode("utf-8", "surrogateescape"))
    if session is not None:
        (path / "session.jsonl").write_bytes(session)
    _write_atomic(path / "origin.json", {"origin": origin, "note": note, "from_revision": from_revision,
                                         "who": reviews.who(), "when": reviews.now()})
    _touch(run_dir)
    return Revision(number=number, origin=origin, path=path, result=None)


@contextmanager
def scoring(revision: Revision, wait: bool = True) -> Iterator[bool]:
    """Hold the right to score `revision`, against every process on this machine: True when held
    (with wait=False, False at once when another process holds it). The kernel lets go when the
    holder ends, however it ends, so a free lock on a revision still waiting means nobody scores it."""
    fd = os.open(revision.path / LOCK, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
        except BlockingIOError:
            yield False
            return
        yield True
    finally:
        os.close(fd)  # lets go of the lock


def save_score(revision: Revision, result: TrialResult) -> TrialResult:
    """Write the revision's result.json (last, atomically); its patch_sha256 is the revision's
    patch's, whatever the scorer said."""
    patch = (revision.path / "patch.diff").read_bytes()
    result.patch_sha256, result.revision, result.origin = sha256(patch), revision.number, revision.origin
    _write_atomic(revision.path / "result.json", result.to_dict())
    revision.result = result
    _touch(revision.path.parents[2])
    return result


def _touch(run_dir: str | Path) -> None:
    """The revisions folder's time says something changed under it (the inbox's cheap check)."""
    os.utime(Path(run_dir) / FOLDER)


def sha256(data: bytes | str) -> str:
    if isinstance(data, str):
        data = data.encode("utf-8", "surrogateescape")
    return hashlib.sha256(data).hexdigest()


def _json(path: Path) -> dict | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _write_atomic(path: Path, data: dict) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, ensure_ascii=False, indent=1), encoding="utf-8")
    os.replace(tmp, path)
