"""Benchmark: dgym-tui start-up and step latency, as a terminal sees them.

The installed `dgym-tui` runs on the bundled example (local sandbox, `python main.py`) in a pty
driven by pexpect, its output fed to a pyte screen (120x40). Measured:
  - first_frame_s: launch to the first frame (the panes drawn), before the sandbox is ready;
  - first_stop_s: launch to the status bar saying "stopped at main.py:1";
  - step_ms: median time from pressing `n` (on a still screen, as a person reads between steps)
    to the screen showing the current-line mark on the new line;
  - held: `n` held down, sent at a key-repeat rate (REPEAT_HZ): for each press, the time until
    its line is on screen (a screen that falls behind shows it later and later);
next to the floor measured in the same run: a minimal Textual app's first frame, the same way
(one before each of our runs),
and pudb (when installed: the test extras) on the same program in the same harness, its `n`
measured the same way (its current line is the `>` before a line number).
Each time is taken when the output that shows it arrives, before pyte parses it: parsing is the
harness's work, and it costs ~40 ms for our full frame against ~1 ms for the floor's one line.
Every program measured keeps its bytecode in a cache of the run (PYTHONPYCACHEPREFIX), warmed
first: as an installed app has it (pip compiles on install), even where PYTHONDONTWRITEBYTECODE
is set (here it is: dgym-tui, an editable install, was compiled from source on every start).
Last line:  startup first_frame_s=A floor_s=B ratio=C first_stop_s=D step_ms=E pudb_step_ms=F step_ratio=E/F
(F and E/F are "n/a" without pudb; the goal is step_ratio <= 1.0). Run: python tests/benchmarks/startup.py
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import statistics
import sys
import tempfile
import threading
import time

import importlib.util

import pexpect
import pyte

from dgym_tui.examples import example_path

COLS, ROWS = 120, 40
RUNS = int(os.environ.get("RUNS", "8"))
STEPS = int(os.environ.get("STEPS", "40"))
LAST_MODULE_LINE = 94  # main.py's `main()` call
REPEAT_HZ = 30  # a terminal's key repeat: `n` held down
DRAIN_GAP = 0.002  # s: output this close behind other output is one arrival (one frame's pieces)
BYTECODE: dict[str, str] = {}  # set in main(): the environment giving every program its .pyc cache
CURRENT = re.compile(r"▶\s*(\d+) ")  # the source gutter's current-line mark and line number
PUDB_CURRENT = re.compile(r"^>\s*(\d+) ", re.MULTILINE)  # pudb: `> 10 from ...` (line numbers on)
PUDB_CONFIG = "[pudb]\nseen_welcome = e999\nline_numbers = True\nprompt_on_quit = False\n"
MINIMAL_APP = """
from textual.app import App
from textual.widgets import Label

class Minimal(App):
    def compose(self):
        yield Label("minimal ready")

Minimal().run()
"""


class Terminal:
    def __init__(self, argv: list[str], cwd: str, env: dict[str, str] | None = None):
        self.screen = pyte.Screen(COLS, ROWS)
        self.stream = pyte.ByteStream(self.screen)
        env = {**os.environ, "TERM": "xterm-256color", "COLORTERM": "truecolor", **BYTECODE, **(env or {})}
        self.start = time.perf_counter()
        self.child = pexpect.spawn(argv[0], argv[1:], cwd=cwd, env=env, dimensions=(ROWS, COLS))
        self.child.delaybeforesend = None

    def text(self) -> str:
        return "\n".join(self.screen.display)

    def read(self, timeout: float) -> float | None:
        """Feed what the program wrote within `timeout` to the screen: when it arrived (None if
        nothing came). A frame larger than the pty's buffer comes in pieces a few microseconds
        apart: they are all read before any is parsed, or the rest would wait behind pyte's
        parsing of the first piece (~15 ms for 4 KB) and be timed that much late."""
        try:
            data = self.child.read_nonblocking(65536, timeout=max(timeout, 0))
        except pexpect.TIMEOUT:
            return None
        arrived = time.perf_counter()
        while len(data) < 1 << 20:
            try:
                more = self.child.read_nonblocking(65536, timeout=DRAIN_GAP)
            except pexpect.TIMEOUT:
                break
            data, arrived = data + more, time.perf_counter()
        self.stream.feed(data)
        return arrived

    def wait_for(self, predicate, timeout: float = 60, unchanged: bool = False) -> float:
        """Read until predicate(screen text) holds; seconds from launch to the arrival of the
        output that made it hold. pyte's parsing of that output is the harness's time, not the
        program's: ~40 ms for a full 120x40 frame of ours (37 KB of escape sequences, which a
        terminal draws in well under a millisecond), ~1 ms for the floor's one line.
        `unchanged`: the screen is known not to match yet (a key was just sent), so the first look
        waits for output. Reading the screen's text costs the harness ~1.2 ms of CPU, and done
        right after a key it delays the key itself: `perf sched` showed the kernel worker that
        moves the key through the pty queued that long behind the harness on its core."""
        deadline = time.perf_counter() + timeout
        arrived = time.perf_counter()
        if unchanged:
            arrived = self.read(timeout) or arrived
        while not predicate(self.text()):
            remaining = deadline - time.perf_counter()
            if remaining <= 0:
                raise TimeoutError(f"screen never matched; it shows:\n{self.text()}")
            arrived = self.read(remaining) or arrived
        return arrived - self.start

    def settle(self, quiet: float = 0.15, timeout: float = 10) -> None:
        """Read until the program has written nothing for `quiet` seconds (the screen is still)."""
        deadline = time.perf_counter() + timeout
        while time.perf_counter() < deadline:
            try:
                self.stream.feed(self.child.read_nonblocking(65536, timeout=quiet))
            except pexpect.TIMEOUT:
                return

    def close(self) -> None:
        try:
            self.child.close(force=True)
        except pexpect.ExceptionPexpect:
            # a loaded machine: the child outlived pexpect's short grace; kill and reap it
            try:
                os.kill(self.child.pid, signal.SIGKILL)
                os.waitpid(self.child.pid, 0)
            except (ProcessLookupError, ChildProcessError):
                pass


def current_line(text: str, pattern: re.Pattern[str] = CURRENT) -> int | None:
    m = pattern.search(text)
    return int(m.group(1)) if m else None


def step_through(term: Terminal, steps: int, pattern: re.Pattern[str] = CURRENT,
                 settle: bool = True) -> tuple[list[float], list[int]]:
    """`n` through the module level of main.py (1 -> 10 -> 12 -> ... -> 94), each press on a
    still screen (as a person stepping and reading would): the time from each press to its new
    line on screen, and the lines visited."""
    samples, lines = [], [current_line(term.text(), pattern)]
    while len(samples) < steps and lines[-1] < LAST_MODULE_LINE:
        if settle:
            term.settle()
        t = time.perf_counter()
        term.child.send("n")
        arrived = term.start + term.wait_for(lambda text: (current_line(text, pattern) or 0) > lines[-1],
                                             unchanged=True)
        samples.append(arrived - t)
        lines.append(current_line(term.text(), pattern))
    return samples, lines


def hold_n(term: Terminal, lines: list[int], pattern: re.Pattern[str] = CURRENT) -> list[float | None]:
    """`n` held down: a press every 1/REPEAT_HZ s along the known `lines`; for each press, the time
    until its line (or a later one) is on screen, None if it never was (the key was lost: the
    screen stood still for a second after the last press).
    A thread sends the presses on time while this one only reads and timestamps the output; it
    is parsed afterwards. (Parsing as it came, the harness fell behind on large frames: pyte takes
    ~40 ms for a full frame, so presses went out late and output was read late, and a program
    that redraws more was charged for the harness's parsing.)"""
    interval, presses = 1 / REPEAT_HZ, len(lines) - 1
    term.settle()
    fd = term.child.child_fd
    start = time.perf_counter() + 0.01
    sent: list[float] = []

    def press() -> None:
        for k in range(presses):
            time.sleep(max(0.0, start + k * interval - time.perf_counter()))
            os.write(fd, b"n")
            sent.append(time.perf_counter())

    sender = threading.Thread(target=press)
    sender.start()
    chunks: list[tuple[float, bytes]] = []
    last = start
    while sender.is_alive() or time.perf_counter() - max(last, sent[-1]) < 1.0:
        try:
            data = term.child.read_nonblocking(65536, timeout=0.05)
        except pexpect.TIMEOUT:
            continue
        last = time.perf_counter()
        chunks.append((last, data))
    sender.join()
    shown: list[float | None] = [None] * presses
    for arrived, data in chunks:
        term.stream.feed(data)
        line = current_line(term.text(), pattern) or 0
        for k in range(presses):
            if shown[k] is None and line >= lines[k + 1]:
                shown[k] = arrived
    return [None if shown[k] is None else shown[k] - sent[k] for k in range(presses)]


def floor_once(tmp: str) -> float:
    script = os.path.join(tmp, "minimal.py")
    with open(script, "w") as fh:
        fh.write(MINIMAL_APP)
    term = Terminal([sys.executable, script], tmp)
    try:
        return term.wait_for(lambda t: "minimal ready" in t)
    finally:
        term.close()


def ours_once(repo: str, steps: int, held: list[int] | None = None):
    """first frame, first stop, step samples and lines; with `held` lines, held-n latencies instead."""
    exe = shutil.which("dgym-tui") or sys.exit("dgym-tui is not installed")
    term = Terminal([exe, "--sandbox", "local", "-e", "python main.py", repo], repo)
    try:
        first_frame = term.wait_for(lambda t: "Transcript" in t and "pdb" in t)
        first_stop = term.wait_for(lambda t: "stopped at main.py:1" in t and current_line(t) == 1)
        if held is not None:
            return first_frame, first_stop, hold_n(term, held), held
        return (first_frame, first_stop, *step_through(term, steps))
    finally:
        term.close()


def pudb_once(tmp: str, repo: str, steps: int, held: list[int] | None = None):
    """pudb on a copy of the same program; step samples and lines (or held-n latencies)."""
    config = os.path.join(tmp, "pudb-config")
    os.makedirs(os.path.join(config, "pudb"), exist_ok=True)
    with open(os.path.join(config, "pudb", "pudb.cfg"), "w") as fh:
        fh.write(PUDB_CONFIG)  # no welcome screen; line numbers on (they locate the mark)
    copy = os.path.join(tmp, "pudb-repo")
    if not os.path.isdir(copy):
        shutil.copytree(repo, copy, ignore=shutil.ignore_patterns("__pycache__"))
    term = Terminal([sys.executable, "-m", "pudb", "main.py"], copy, env={"XDG_CONFIG_HOME": config})
    try:
        term.wait_for(lambda t: current_line(t, PUDB_CURRENT) == 1)
        if held is not None:
            return hold_n(term, held, PUDB_CURRENT), held
        return step_through(term, steps, PUDB_CURRENT)
    finally:
        term.close()


def summary(samples: list[float | None]) -> str:
    ms = sorted(x * 1000 for x in samples if x is not None)
    lost = len(samples) - len(ms)
    return (f"p50 {statistics.median(ms):.1f} ms p95 {ms[int(len(ms) * 0.95) - 1]:.1f} ms "
            f"max {ms[-1]:.1f} ms" + (f", {lost} of {len(samples)} presses lost" if lost else ""))


def main() -> int:
    repo = str(example_path())
    has_pudb = importlib.util.find_spec("pudb") is not None
    with tempfile.TemporaryDirectory() as tmp:
        BYTECODE.update(PYTHONDONTWRITEBYTECODE="", PYTHONPYCACHEPREFIX=os.path.join(tmp, "pycache"))
        os.environ["DGYM_TUI_DATA_DIR"] = os.path.join(tmp, "data")  # its sessions, not the user's
        floor_once(tmp)  # warm-up: imports into the page cache, bytecode into its cache
        lines = ours_once(repo, 2)[3]  # warm-up
        if has_pudb:
            pudb_once(tmp, repo, 2)
        floors, frames, stops, steps, held, pudb_steps, pudb_held = [], [], [], [], [], [], []
        for _ in range(RUNS):
            # the floor is measured next to each of our runs: a machine whose speed drifts
            # (a shared host) then moves both alike
            floors.append(floor_once(tmp))
            frame, stop, samples, lines = ours_once(repo, STEPS)
            frames.append(frame)
            stops.append(stop)
            steps.extend(samples)
            held.extend(ours_once(repo, STEPS, held=lines)[2])
            if has_pudb:
                samples, pudb_lines = pudb_once(tmp, repo, STEPS)
                pudb_steps.extend(samples)
                pudb_held.extend(pudb_once(tmp, repo, STEPS, held=pudb_lines)[0])
    floor = statistics.median(floors)
    first_frame = statistics.median(frames)
    first_stop = statistics.median(stops)
    step_ms = statistics.median(steps) * 1000
    print(f"first frame {first_frame:.3f} s (floor {floor:.3f} s), first stop {first_stop:.3f} s; "
          f"n -> new line {summary(steps)} ({len(steps)} steps, {RUNS} runs); "
          f"n held ({REPEAT_HZ}/s) {summary(held)}")
    pudb_ms = step_ratio = "n/a"
    if has_pudb:
        pudb_median = statistics.median(pudb_steps) * 1000
        pudb_ms, step_ratio = f"{pudb_median:.1f}", f"{step_ms / pudb_median:.2f}"
        print(f"pudb: n -> new line {summary(pudb_steps)}; n held ({REPEAT_HZ}/s) {summary(pudb_held)}")
    print(f"startup first_frame_s={first_frame:.3f} floor_s={floor:.3f} ratio={first_frame / floor:.2f} "
          f"first_stop_s={first_stop:.3f} step_ms={step_ms:.1f} pudb_step_ms={pudb_ms} step_ratio={step_ratio}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
