"""`dgym-tui sessions`: the saved sessions, newest first, read cheaply.

A session file can hold thousands of events, and a person may have hundreds of files, so the
listing never parses a whole file: it reads the header (line 1) and searches the mapped file
backwards for the few events it needs — the agent's last status (state and step count), the
last test run, the last checkpoint and call — parsing only those lines. An event line starts
`{"seq":N,"ts":T,"actor":"A","kind":"K",` (SessionWriter writes them so), which tells a real
event from the same words inside a payload.
"""

from __future__ import annotations

import json
import mmap
import re
import time
from dataclasses import dataclass
from pathlib import Path

from dgym_tui.core.events import Tests
from dgym_tui.core.safe_text import one_line
from dgym_tui.core.session_file import FORMAT, sessions_dir
from dgym_tui.sessions.story import FINAL_STATES, describe_outcome

EVENT_START = re.compile(rb'\{"seq":\d+,"ts":[-+0-9.eE]+,"actor":"[a-z]+","kind":"([a-z_]+)",')


@dataclass
class SessionSummary:
    path: Path
    created: float
    repo: str
    repo_name: str
    mode: str
    model: str
    steps: int
    outcome: str
    problem: str = ""           # why the file could not be read as a session

    @property
    def date(self) -> str:
        return time.strftime("%Y-%m-%d %H:%M", time.localtime(self.created)) if self.created else "?"


def list_sessions(repo: str | None = None) -> list[SessionSummary]:
    """Every saved session (of one repo, or of all), newest first."""
    folder = sessions_dir(repo)
    paths = folder.glob("*.jsonl") if repo is not None else folder.glob("*/*.jsonl")
    summaries = [summarize(path) for path in paths if path.is_file()]
    return sorted(summaries, key=lambda s: (s.created, str(s.path)), reverse=True)


def summarize(path: Path) -> SessionSummary:
    """What the listing shows of one file, without reading it whole."""
    path = Path(path)
    summary = SessionSummary(path=path, created=0.0, repo="", repo_name="", mode="", model="", steps=0,
                             outcome="unreadable")
    try:
        with open(path, "rb") as fh:
            if not fh.seek(0, 2):
                summary.problem = "empty file"
                return summary
            with mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as data:
                _read(data, summary)
    except (OSError, ValueError) as e:
        summary.problem = f"cannot read it: {e}"
    summary.created = summary.created or _mtime(path)
    return summary


def _read(data: mmap.mmap, summary: SessionSummary) -> None:
    end = data.find(b"\n")
    try:
        header = _header(data[:end if end >= 0 else len(data)])
    except ValueError:
        summary.problem = "not a dgym-tui session (its first line is not JSON)"
        return
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        summary.problem = "not a dgym-tui session (no session header)"
        return
    summary.created = float(header.get("created") or 0.0)
    summary.repo = str(header.get("repo") or "")
    summary.repo_name = str(header.get("repo_name") or Path(summary.repo).name)
    summary.mode = str(header.get("mode") or "manual")
    summary.model = str(header.get("model") or "")
    status = _last(data, b"agent_status")
    tests = _last(data, b"tests")
    torn = data[len(data) - 1:] != b"\n"
    started, finished = _last(data, b"call_started", parse=False), _last(data, b"call_finished", parse=False)
    resumed = _last(data, b"resumed", started[0], parse=False)[0]  # calls cut by a kill never finish
    # a change after the last test run makes its result stale (searched only after it: cheap)
    changed = tests[0] >= 0 and max(_last(data, b"checkpoint", tests[0], parse=False)[0],
                                    _last(data, b"restored", tests[0], parse=False)[0]) > tests[0]
    state = None
    interrupted = torn or started[0] > max(finished[0], resumed)
    if status[1] is not None:
        d = status[1].get("data") or {}
        state, summary.steps = d.get("state"), int(d.get("step") or 0)
        if state not in FINAL_STATES and _last(data, b"resumed", status[0], parse=False)[0] > status[0]:
            state = "stopped"  # taken up again later: the agent at work then was stopped (DebugState)
        interrupted = interrupted or state not in FINAL_STATES
        summary.mode = str(d.get("mode") or summary.mode)
    last_tests = None
    if tests[1] is not None:
        d = tests[1].get("data") or {}
        last_tests = Tests(passed=d.get("passed", 0), failed=d.get("failed", 0), errors=d.get("errors", 0),
                           failing=[], output="", exit_code=d.get("exit_code"))
    summary.outcome = describe_outcome(state, last_tests, changed, interrupted)


def _header(line: bytes) -> dict:
    """The header without its file hashes when they come last, as the writer puts them: for a
    big repo they are most of the line, and the listing needs none of them."""
    cut = line.rfind(b',"repo_hashes":{')
    if cut > 0:
        try:
            return json.loads(line[:cut] + b"}")
        except ValueError:
            pass
    return json.loads(line)


def _last(data: mmap.mmap, kind: bytes, after: int = 0, parse: bool = True) -> tuple[int, dict | None]:
    """The position of the last event of this kind (-1: none, or none after `after`) and, if
    asked, the event."""
    needle = b'"kind":"' + kind + b'",'
    end = len(data)
    while True:
        at = data.rfind(needle, max(after, 0), end)
        if at < 0:
            return -1, None
        start = data.rfind(b"\n", 0, at) + 1
        match = EVENT_START.match(data, start)
        if match is not None and match.end() == at + len(needle):
            if not parse:
                return start, None
            stop = data.find(b"\n", at)
            try:
                return start, json.loads(data[start:stop if stop >= 0 else len(data)])
            except ValueError:  # the torn last line: look further back
                pass
        end = at


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0


def table(summaries: list[SessionSummary]) -> str:
    """The listing as aligned columns (every field made safe for the terminal)."""
    head = ("DATE", "REPO", "MODE", "MODEL", "STEPS", "OUTCOME", "FILE")
    rows = [head]
    for s in summaries:
        model = "scripted:" + Path(s.model[9:]).name if s.model.startswith("scripted:") else s.model
        if s.problem:
            rows.append((s.date, "?", "", "", "", s.problem, str(s.path)))
        else:
            rows.append((s.date, s.repo_name, s.mode, model or "-", str(s.steps), s.outcome, str(s.path)))
    rows = [tuple(one_line(cell) for cell in row) for row in rows]
    widths = [max(len(row[i]) for row in rows) for i in range(len(head) - 1)]
    lines = []
    for row in rows:
        cells = [cell.rjust(widths[i]) if i == 4 else cell.ljust(widths[i]) for i, cell in enumerate(row[:-1])]
        lines.append("  ".join(cells + [row[-1]]))
    return "\n".join(lines)
