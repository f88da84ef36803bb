"""Benchmark: the review inbox on a batch of 1,000 trials, as a terminal sees it.

A synthetic RUN_DIR of TRIALS trials (tests/review_fixtures.py: results.jsonl, patch.diff and
result.json per trial, as the driver writes them) is opened with `python -m dgym_tui review` in a
pty (pexpect, 80x24). Measured:
  - first_frame_s: launch to the first frame showing the trials' header ("1000 trials");
  - scroll_ms: for each `down` key (sent on a still screen), the time until its frame arrives:
    median and p95, then the same for `pagedown`;
next to the floor measured the same way in the same run: a bare Textual app holding a DataTable
of as many plain rows (first frame, then the same keys).
Last line: review_inbox trials=N first_frame_s=A floor_s=B ratio=C scroll_p50_ms=D
scroll_p95_ms=E floor_scroll_p50_ms=F page_p50_ms=G floor_page_p50_ms=H
Run: python tests/benchmarks/review_inbox.py   (TRIALS=1000 RUNS=3 KEYS=60 by default)
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import pexpect

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from review_fixtures import synthetic_run_dir  # noqa: E402

COLS, ROWS = 80, 24
TRIALS = int(os.environ.get("TRIALS", "1000"))
RUNS = int(os.environ.get("RUNS", "3"))
KEYS = int(os.environ.get("KEYS", "60"))
QUIET = 0.03  # s: no output for this long after a frame's first bytes: the frame is whole
BARE_APP = """
import sys
from textual.app import App
from textual.widgets import DataTable, Footer, Static

class Bare(App):
    def compose(self):
        yield Static(f"{sys.argv[1]} trials")
        yield DataTable(cursor_type="row")
        yield Footer()

    def on_mount(self):
        table = self.query_one(DataTable)
        for name in ("task", "arm", "#", "status", "diff", "steps", "cost", "verdict"):
            table.add_column(name)
        n = int(sys.argv[1])
        table.add_rows([[f"task-{i:04d}", "all", "1", "resolved", "+1/-1", "3", "0.001", ""] for i in range(n)])

Bare().run()
"""
KEY = {"down": "\x1b[B", "pagedown": "\x1b[6~"}


def spawn(argv: list[str]) -> tuple[pexpect.spawn, float]:
    env = {**os.environ, "TERM": "xterm-256color", "COLUMNS": str(COLS), "LINES": str(ROWS),
           "DGYM_TUI_CONFIG_DIR": tempfile.mkdtemp(prefix="dgym-bench-config-")}
    start = time.perf_counter()
    child = pexpect.spawn(argv[0], argv[1:], env=env, dimensions=(ROWS, COLS))
    child.delaybeforesend = None
    return child, start


def first_frame(child: pexpect.spawn, start: float, marker: str) -> float:
    child.expect(marker, timeout=60)
    return time.perf_counter() - start


def drain(child: pexpect.spawn, timeout: float) -> bool:
    """Read until the output has been quiet for QUIET; False if nothing came within timeout."""
    got = False
    wait = timeout
    while True:
        try:
            child.read_nonblocking(1 << 16, timeout=wait)
            got, wait = True, QUIET
        except pexpect.TIMEOUT:
            return got


def key_times(child: pexpect.spawn, key: str, count: int) -> list[float]:
    drain(child, 0.5)
    times = []
    for _ in range(count):
        sent = time.perf_counter()
        child.send(KEY[key])
        try:
            child.read_nonblocking(1 << 16, timeout=5)
        except pexpect.TIMEOUT:
            continue
        times.append((time.perf_counter() - sent) * 1000)
        drain(child, QUIET)
        time.sleep(0.05)  # a still screen between presses, as a person reads
    return times


def measure(argv: list[str], marker: str) -> tuple[float, list[float], list[float]]:
    child, start = spawn(argv)
    try:
        frame = first_frame(child, start, marker)
        down = key_times(child, "down", KEYS)
        page = key_times(child, "pagedown", KEYS // 4)
    finally:
        child.terminate(force=True)
    return frame, down, page


def p(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="dgym-bench-review-") as tmp:
        run_dir = synthetic_run_dir(Path(tmp) / "run", TRIALS)
        bare = Path(tmp) / "bare.py"
        bare.write_text(BARE_APP)
        ours, floor = [], []
        for _ in range(RUNS):
            floor.append(measure([sys.executable, str(bare), str(TRIALS)], f"{TRIALS} trials"))
            ours.append(measure([sys.executable, "-m", "dgym_tui", "review", str(run_dir)], f"{TRIALS} trials"))
        frame = statistics.median(r[0] for r in ours)
        floor_frame = statistics.median(r[0] for r in floor)
        down = [t for r in ours for t in r[1]]
        floor_down = [t for r in floor for t in r[1]]
        page = [t for r in ours for t in r[2]]
        floor_page = [t for r in floor for t in r[2]]
        print(f"first frame: {frame:.3f} s (bare Textual DataTable app: {floor_frame:.3f} s, x{frame / floor_frame:.2f})")
        print(f"down: p50 {p(down, .5):.1f} ms p95 {p(down, .95):.1f} ms max {max(down):.1f} ms "
              f"(bare: p50 {p(floor_down, .5):.1f} p95 {p(floor_down, .95):.1f})")
        print(f"pagedown: p50 {p(page, .5):.1f} ms p95 {p(page, .95):.1f} ms "
              f"(bare: p50 {p(floor_page, .5):.1f} p95 {p(floor_page, .95):.1f})")
        print(f"review_inbox trials={TRIALS} first_frame_s={frame:.3f} floor_s={floor_frame:.3f} "
              f"ratio={frame / floor_frame:.2f} scroll_p50_ms={p(down, .5):.1f} scroll_p95_ms={p(down, .95):.1f} "
              f"floor_scroll_p50_ms={p(floor_down, .5):.1f} page_p50_ms={p(page, .5):.1f} "
              f"floor_page_p50_ms={p(floor_page, .5):.1f}")


if __name__ == "__main__":
    main()
