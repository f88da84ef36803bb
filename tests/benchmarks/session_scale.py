"""Benchmark: how session files scale, and how fast a big one opens and resumes.

Two real sessions on the bundled example (local sandbox, real pdb), of 100 and 1,000 agent
steps, each step a scripted model's tool call (pdb prints, views, greps, a step, by turns),
written by the real SessionWriter. Measured: file bytes per step for each (linear growth keeps
the ratio near 1: each message and each file text is stored once, never again in later
prompts); the time from launching `dgym-tui replay` on the 1,000-step file in a pty to its first
frame (the timeline and the first stop drawn, read by a pyte screen); the time to resume it
(a new sandbox with its checkpoints, its breakpoints, the program at its first stop). Last line:

    session_scale bytes_per_step_100=A bytes_per_step_1000=B replay_open_s=C

(the resume time is on the line before it).

Goals: B/A <= 1.2, replay_open_s <= 1. Run: python tests/benchmarks/session_scale.py
"""

from __future__ import annotations

import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import pexpect
import pyte
from startup import BYTECODE, floor_once  # the same harness: a bare Textual app's first frame

from dgym_tui.agent.approval import Answer
from dgym_tui.agent.loop import Agent
from dgym_tui.agent.policy import Policy
from dgym_tui.agent.scripted import ScriptedModel
from dgym_tui.core.session import Session
from dgym_tui.core.session_file import SessionWriter, read_session
from dgym_tui.examples import example_path

CYCLE = [
    {"name": "pdb", "arguments": {"command": "p len(sys.argv), __name__"}},
    {"name": "view", "arguments": {"path": "shopcart/cart.py", "start": 40, "end": 70}},
    {"name": "grep", "arguments": {"pattern": "def (reserve|quote)"}},
    {"name": "pdb", "arguments": {"command": "n"}},
    {"name": "pdb", "arguments": {"command": "where"}},
]


def record(repo: Path, steps: int, path: Path) -> None:
    session = Session(str(repo), sandbox="local", entrypoint="python main.py")
    writer = SessionWriter.open(path, session, mode="auto", model="scripted:bench")
    try:
        session.start()
        session.set_breakpoint("shopcart/cart.py", 70)
        script = [{"text": f"step {i}", "tool_calls": [CYCLE[i % len(CYCLE)]]} for i in range(steps)]
        agent = Agent(session, ScriptedModel(script, name="bench"), mode="auto", max_steps=steps, task="measure",
                      policy=Policy.from_config({"allow": ["pdb", "view", "grep", "submit"], "ask": []}),
                      auto_answer=lambda r: Answer("approve"))
        agent.run()
    finally:
        session.close()
        writer.close()


def replay_open(path: Path) -> float:
    """Launch to the first frame: the timeline's line and the source's current-line mark."""
    screen = pyte.Screen(120, 40)
    stream = pyte.ByteStream(screen)
    env = {**os.environ, "TERM": "xterm-256color", "COLUMNS": "120", "LINES": "40", **BYTECODE}
    start = time.perf_counter()
    child = pexpect.spawn(sys.executable, ["-m", "dgym_tui", "replay", str(path)], env=env, dimensions=(40, 120))
    try:
        deadline = start + 60
        while time.perf_counter() < deadline:
            try:
                stream.feed(child.read_nonblocking(65536, timeout=0.05))
            except pexpect.TIMEOUT:
                pass
            text = "\n".join(screen.display)
            if "paused" in text and "event " in text and "▶" in text:
                return time.perf_counter() - start
        raise TimeoutError("the replay never showed its first frame:\n" + "\n".join(screen.display))
    finally:
        child.terminate(force=True)


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        os.environ["DGYM_TUI_DATA_DIR"] = str(tmp / "data")
        os.environ["DGYM_TUI_CONFIG_DIR"] = str(tmp / "config")
        repo = tmp / "shopcart"
        shutil.copytree(example_path(), repo, ignore=shutil.ignore_patterns("__pycache__", ".pytest_cache"))
        sizes = {}
        for steps in (100, 1000):
            path = tmp / f"s{steps}.jsonl"
            started = time.perf_counter()
            record(repo, steps, path)
            sizes[steps] = path.stat().st_size / steps
            print(f"{steps:>5} steps: {path.stat().st_size:,} bytes, {sizes[steps]:,.0f} per step "
                  f"(recorded in {time.perf_counter() - started:.1f} s)")
        big = tmp / "s1000.jsonl"
        started = time.perf_counter()
        saved = read_session(big)
        print(f"reading the 1,000-step file: {time.perf_counter() - started:.3f} s, {len(saved.events):,} events")
        # every program keeps its bytecode in a cache of the run, warmed first, as an installed
        # app has it (here PYTHONDONTWRITEBYTECODE is set: an editable install compiles each start)
        BYTECODE.update(PYTHONDONTWRITEBYTECODE="", PYTHONPYCACHEPREFIX=str(tmp / "pycache"))
        floor_once(str(tmp))
        floor = statistics.median(floor_once(str(tmp)) for _ in range(3))
        replay_open(big)
        opens = sorted(replay_open(big) for _ in range(3))
        started = time.perf_counter()
        session = Session.resume(saved)
        session.start()
        resume_s = time.perf_counter() - started
        assert session.state.program == "stopped", session.state.error
        session.close()
    ratio = sizes[1000] / sizes[100]
    print(f"bytes per step ratio 1000/100: {ratio:.2f} (goal <= 1.2); replay open median {opens[1]:.3f} s "
          f"(goal <= 1; a bare Textual app's first frame in the same run: {floor:.3f} s, ratio "
          f"{opens[1] / floor:.2f}); resume {resume_s:.3f} s")
    print(f"session_scale bytes_per_step_100={sizes[100]:.0f} bytes_per_step_1000={sizes[1000]:.0f} "
          f"replay_open_s={opens[1]:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
