"""The review's decisions: RUN_DIR/reviews.jsonl, one line per decision, appended.

`{"trial", "verdict", "note", "patch_sha256", "who", "when", "revision"}` (docs/run-dir.md).
The latest line for a trial is its verdict; an approval counts only while its patch_sha256 is
the trial's current patch's (inbox.Trial.approved). A decision never changes a score: nothing
here touches results.jsonl or a result.json.
"""

from __future__ import annotations

import getpass
import json
import os
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from pathlib import Path

FILE = "reviews.jsonl"
VERDICTS = ("approve", "reject", "skip", "edit", "send-back")


class ReviewError(Exception):
    """A decision that cannot be recorded; str() says why in one line."""


@dataclass
class Verdict:
    trial: str
    verdict: str
    note: str
    patch_sha256: str
    who: str
    when: str
    revision: int = 0


def who() -> str:
    try:
        return getpass.getuser()
    except Exception:  # no user name in this environment (a container without one)
        return "unknown"


def now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def record(run_dir: str | Path, trial: str, verdict: str, patch_sha256: str, note: str = "",
           revision: int = 0, by: str | None = None) -> Verdict:
    """Append one decision, whole (one write of one line, flushed and synced)."""
    if verdict not in VERDICTS:
        raise ReviewError(f"unknown verdict {verdict!r} (one of {', '.join(VERDICTS)})")
    decision = Verdict(trial=trial, verdict=verdict, note=note or "", patch_sha256=patch_sha256 or "",
                       who=by or who(), when=now(), revision=revision)
    line = (json.dumps(asdict(decision), ensure_ascii=False) + "\n").encode("utf-8")
    path = Path(run_dir) / FILE
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, line)
        os.fsync(fd)
    finally:
        os.close(fd)
    return decision


def read(run_dir: str | Path) -> list[Verdict]:
    """Every decision, in order; a torn or foreign line is passed over."""
    out: list[Verdict] = []
    try:
        with open(Path(run_dir) / FILE, encoding="utf-8", errors="replace") as fh:
            for line in fh:
                try:
                    d = json.loads(line)
                    out.append(Verdict(trial=str(d["trial"]), verdict=str(d["verdict"]), note=str(d.get("note") or ""),
                                       patch_sha256=str(d.get("patch_sha256") or ""), who=str(d.get("who") or ""),
                                       when=str(d.get("when") or ""), revision=int(d.get("revision") or 0)))
                except (ValueError, KeyError, TypeError):
                    continue
    except FileNotFoundError:
        pass
    return out


def latest(run_dir: str | Path) -> dict[str, Verdict]:
    """Each trial's verdict: its latest decision."""
    out: dict[str, Verdict] = {}
    for decision in read(run_dir):
        out[decision.trial] = decision
    return out
