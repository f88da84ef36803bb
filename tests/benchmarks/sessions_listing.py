"""Benchmark: `dgym-tui sessions` on many saved sessions, next to its floor and a full read.

One real session is recorded (the bundled example in a local sandbox, a scripted agent making
STEPS steps of `view` and `pdb`, written by the real SessionWriter), then copied FILES times into
a data folder (DGYM_TUI_DATA_DIR). Then, in one run:
  - floor_s: open every file and parse its header line: the least any listing must do;
  - list_s: `list_sessions()`, what `dgym-tui sessions` shows (header, steps, outcome);
  - full_s: `read_session()` and the story of every file, what a listing that parses whole
    files would cost.
Goal: list_s within a small factor of the floor, far below full_s. Last line:

    sessions_listing files=N mb_per_file=M floor_s=A list_s=B full_s=C list_over_floor=B/A full_over_list=C/B

Run: python tests/benchmarks/sessions_listing.py [FILES]
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

STEPS = 100
FILES = 300


def record(folder: Path) -> Path:
    from dgym_tui.agent.approval import Answer
    from dgym_tui.agent.loop import Agent
    from dgym_tui.agent.policy import Policy
    from dgym_tui.agent.scripted import ScriptedModel
    from dgym_tui.core.session import Session
    from dgym_tui.core.session_file import SessionWriter
    from dgym_tui.examples import example_path

    repo = folder / "shopcart"
    shutil.copytree(example_path(), repo, ignore=shutil.ignore_patterns("__pycache__"))
    session = Session(str(repo), sandbox="local", entrypoint="python main.py")
    path = folder / "one.jsonl"
    writer = SessionWriter.open(path, session, mode="auto", model="scripted:bench")
    steps = []
    for i in range(STEPS):
        call = {"name": "view", "arguments": {"path": "main.py"}} if i % 2 else \
            {"name": "pdb", "arguments": {"command": f"p {i} * 2"}}
        steps.append({"text": f"Step {i}: looking around.", "tool_calls": [call]})
    try:
        session.start()
        agent = Agent(session, ScriptedModel(steps, name="bench"), mode="auto", max_steps=STEPS + 1,
                      task="look around", policy=Policy.from_config({"allow": ["view", "pdb", "submit"], "ask": []}),
                      auto_answer=lambda r: Answer("approve"))
        agent.run()
    finally:
        session.close()
        writer.close()
    return path


def main() -> int:
    files = int(sys.argv[1]) if len(sys.argv) > 1 else FILES
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        os.environ["DGYM_TUI_DATA_DIR"] = str(tmp / "data")
        from dgym_tui.core.session_file import read_session, sessions_dir
        from dgym_tui.sessions.listing import list_sessions
        from dgym_tui.sessions.story import tell

        one = record(tmp)
        lines = one.read_text().splitlines(keepends=True)
        header = json.loads(lines[0])
        folder = sessions_dir(header["repo"])
        folder.mkdir(parents=True)
        for i in range(files):
            header["created"] = 1.7e9 + i
            (folder / f"s{i:05d}.jsonl").write_text(json.dumps(header) + "\n" + "".join(lines[1:]))
        paths = sorted(folder.glob("*.jsonl"))
        mb = one.stat().st_size / 1e6

        def timed(fn) -> float:
            start = time.perf_counter()
            fn()
            return time.perf_counter() - start

        def floor() -> None:
            for path in paths:
                with open(path, "rb") as fh:
                    json.loads(fh.readline())

        def full() -> None:
            for path in paths:
                tell(read_session(path))

        listed = list_sessions()
        assert len(listed) == files and listed[0].steps == STEPS + 1, (len(listed), listed[0])
        floor_s = min(timed(floor) for _ in range(3))
        list_s = min(timed(list_sessions) for _ in range(3))
        full_s = timed(full)
        print(f"{files} files of {mb:.2f} MB ({STEPS + 1} agent steps each): floor {floor_s:.3f} s, "
              f"listing {list_s:.3f} s, full read {full_s:.2f} s")
        print(f"sessions_listing files={files} mb_per_file={mb:.2f} floor_s={floor_s:.3f} list_s={list_s:.3f} "
              f"full_s={full_s:.2f} list_over_floor={list_s / floor_s:.1f} full_over_list={full_s / list_s:.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
