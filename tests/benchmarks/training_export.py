"""Benchmark: `dgym-tui export RUN_DIR` (training data) on a batch of 1,000 trials.

A synthetic RUN_DIR (tests/review_fixtures.py: results.jsonl, result.json and patch.diff per trial,
as the driver writes them) whose every trial holds the session of one real trial (the scripted
model fixing calc.py in a local sandbox: system prompt, task, three tool calls and their results,
~60 events), half of the tasks reviewed (one arm's trial approved, the other's rejected: the
preference pairs). Each format is written by the
installed command, best of RUNS, next to the floor measured the same way: a Python process that
only reads every session file and parses each of its JSON lines (what any export must do at least).
Last line: training_export trials=N floor_s=F sft_s=A sharegpt_s=B atif_s=C dpo_s=D ratio=A/F
ms_per_trial=A/N*1000
Run: python tests/benchmarks/training_export.py   (TRIALS=1000 RUNS=3 by default)
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from batch_fixtures import FIX, calc_repo, spec_for  # noqa: E402
from review_fixtures import synthetic_run_dir  # noqa: E402

TRIALS = int(os.environ.get("TRIALS", "1000"))
RUNS = int(os.environ.get("RUNS", "3"))
FLOOR = ("import glob, json, sys\n"
         "n = 0\n"
         "for f in glob.glob(sys.argv[1] + '/trials/*/session.jsonl'):\n"
         "    with open(f) as fh:\n"
         "        n += sum(1 for line in fh if json.loads(line))\n"
         "print(n)\n")


def real_session(tmp: Path) -> bytes:
    from dgym_tui.batch.trial import run_trial
    from dgym_tui.batch.spec import Task

    repo = calc_repo(tmp / "calc")
    out = run_trial(spec_for(Task(id="calc", repo=str(repo)), tmp, FIX))
    assert out.result["status"] == "resolved", out.result
    return out.session


def best(argv: list[str]) -> float:
    times = []
    for _ in range(RUNS):
        started = time.perf_counter()
        subprocess.run(argv, check=True, capture_output=True)
        times.append(time.perf_counter() - started)
    return min(times)


def main() -> None:
    from dgym_tui.review import reviews

    tmp = Path(tempfile.mkdtemp(prefix="dgym-bench-export-"))
    try:
        session = real_session(tmp)
        run = synthetic_run_dir(tmp / "run", TRIALS, arms=("plain", "debugger"), session=session)
        for i, folder in enumerate(sorted((run / "trials").iterdir())):  # each task's two arms, in turn
            if i % 4 < 2:  # half the tasks reviewed: one arm approved, the other rejected
                sha = json.loads((folder / "result.json").read_text())["patch_sha256"]
                reviews.record(run, folder.name, "approve" if i % 2 else "reject", sha, "bench", by="bench")
        events = sum(1 for _ in session.splitlines())
        print(f"{TRIALS} trials, each a session of {events} events ({len(session) / 1024:.0f} KiB)")
        floor = best([sys.executable, "-c", FLOOR, str(run)])
        exe = shutil.which("dgym-tui") or sys.exit("dgym-tui is not installed")
        figures = {}
        for fmt in ("sft", "sharegpt", "atif", "dpo"):
            out = tmp / f"{fmt}.jsonl"
            figures[fmt] = best([exe, "export", str(run), "--format", fmt, "-o", str(out)])
            print(f"{fmt}: {figures[fmt]:.2f} s, {sum(1 for _ in out.open())} records, "
                  f"{out.stat().st_size / 1e6:.1f} MB")
        print(f"training_export trials={TRIALS} floor_s={floor:.2f} "
              + " ".join(f"{f}_s={s:.2f}" for f, s in figures.items())
              + f" ratio={figures['sft'] / floor:.1f} ms_per_trial={figures['sft'] / TRIALS * 1000:.1f}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
