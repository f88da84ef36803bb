"""Benchmark: dgym-tui start-up and step latency, as a terminal sees them.

The installed `dgym-tui` runs on the bundled example (local sandbox, `python main.py`) in a pty
driven by pexpect, its output fed to a pyte screen (120x40). Measured:
  - first_frame_s: launch to the first frame (the panes drawn), before the sandbox is ready;
  - first_stop_s: launch to the status bar saying "stopped at main.py:1";
  - step_ms: median time from pressing `n` (on a still screen, as a person reads between steps)
    to the screen showing the current-line mark on the new line, the way pudb 2026.1 was
    measured on this machine (0.31 s first screen, 8.7 ms per `n`); also printed: the same with
    `n` held down (each press as soon as the mark moved, so it queues behind the other panes);
next to the floor measured in the same run: a minimal Textual app's first frame, the same way.
Last line:  startup first_frame_s=A floor_s=B ratio=C first_stop_s=D step_ms=E
Run: python tests/benchmarks/startup.py
"""

from __future__ import annotations

import os
import re
import shutil
import statistics
import sys
import tempfile
import time

import pexpect
import pyte

from dgym_tui.examples import example_path

COLS, ROWS = 120, 40
RUNS = int(os.environ.get("RUNS", "8"))
STEPS = int(os.environ.get("STEPS", "40"))
LAST_MODULE_LINE = 94  # main.py's `main()` call
CURRENT = re.compile(r"▶\s*(\d+) ")  # the source gutter's current-line mark and line number
MINIMAL_APP = """
from textual.app import App
from textual.widgets import Label

class Minimal(App):
    def compose(self):
        yield Label("minimal ready")

Minimal().run()
"""


class Terminal:
    def __init__(self, argv: list[str], cwd: str):
        self.screen = pyte.Screen(COLS, ROWS)
        self.stream = pyte.ByteStream(self.screen)
        env = {**os.environ, "TERM": "xterm-256color", "COLORTERM": "truecolor"}
        self.start = time.perf_counter()
        self.child = pexpect.spawn(argv[0], argv[1:], cwd=cwd, env=env, dimensions=(ROWS, COLS))
        self.child.delaybeforesend = None

    def text(self) -> str:
        return "\n".join(self.screen.display)

    def wait_for(self, predicate, timeout: float = 60) -> float:
        """Read until predicate(screen text) holds; seconds since launch."""
        deadline = time.perf_counter() + timeout
        while not predicate(self.text()):
            remaining = deadline - time.perf_counter()
            if remaining <= 0:
                raise TimeoutError(f"screen never matched; it shows:\n{self.text()}")
            try:
                self.stream.feed(self.child.read_nonblocking(65536, timeout=remaining))
            except pexpect.TIMEOUT:
                continue
        return time.perf_counter() - self.start

    def settle(self, quiet: float = 0.15, timeout: float = 10) -> None:
        """Read until the program has written nothing for `quiet` seconds (the screen is still)."""
        deadline = time.perf_counter() + timeout
        while time.perf_counter() < deadline:
            try:
                self.stream.feed(self.child.read_nonblocking(65536, timeout=quiet))
            except pexpect.TIMEOUT:
                return

    def close(self) -> None:
        self.child.close(force=True)


def current_line(text: str) -> int | None:
    m = CURRENT.search(text)
    return int(m.group(1)) if m else None


def floor_once(tmp: str) -> float:
    script = os.path.join(tmp, "minimal.py")
    with open(script, "w") as fh:
        fh.write(MINIMAL_APP)
    term = Terminal([sys.executable, script], tmp)
    try:
        return term.wait_for(lambda t: "minimal ready" in t)
    finally:
        term.close()


def ours_once(repo: str, steps: int, settle: bool = True) -> tuple[float, float, list[float]]:
    exe = shutil.which("dgym-tui") or sys.exit("dgym-tui is not installed")
    term = Terminal([exe, "--sandbox", "local", "-e", "python main.py", repo], repo)
    try:
        first_frame = term.wait_for(lambda t: "Transcript" in t and "pdb" in t)
        first_stop = term.wait_for(lambda t: "stopped at main.py:1" in t and current_line(t) == 1)
        samples = []
        line = 1
        # `n` through the module level of main.py (1 -> 10 -> 12 -> ... -> 94): every press
        # moves the mark to a later line, which is what the screen is watched for.
        while len(samples) < steps and line < LAST_MODULE_LINE:
            if settle:  # a press on a still screen, as a person stepping and reading would
                term.settle()
            t = time.perf_counter()
            term.child.send("n")
            term.wait_for(lambda text: (current_line(text) or 0) > line)
            samples.append(time.perf_counter() - t)
            line = current_line(term.text())
        return first_frame, first_stop, samples
    finally:
        term.close()


def main() -> int:
    repo = str(example_path())
    with tempfile.TemporaryDirectory() as tmp:
        floor_once(tmp)  # warm-up: imports into the page cache
        floors = [floor_once(tmp) for _ in range(RUNS)]
        ours_once(repo, 2)
        frames, stops, steps, held = [], [], [], []
        for _ in range(RUNS):
            frame, stop, samples = ours_once(repo, STEPS)
            frames.append(frame)
            stops.append(stop)
            steps.extend(samples)
            held.extend(ours_once(repo, STEPS, settle=False)[2])
    floor = statistics.median(floors)
    first_frame = statistics.median(frames)
    first_stop = statistics.median(stops)
    step_ms = statistics.median(steps) * 1000
    p95 = sorted(steps)[int(len(steps) * 0.95) - 1] * 1000
    held_ms = statistics.median(held) * 1000
    print(f"first frame {first_frame:.3f} s (floor {floor:.3f} s), first stop {first_stop:.3f} s, "
          f"n -> new line p50 {step_ms:.1f} ms p95 {p95:.1f} ms ({len(steps)} steps, {RUNS} runs); "
          f"n held down (each press right after the last mark) p50 {held_ms:.1f} ms")
    print(f"startup first_frame_s={first_frame:.3f} floor_s={floor:.3f} ratio={first_frame / floor:.2f} "
          f"first_stop_s={first_stop:.3f} step_ms={step_ms:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
