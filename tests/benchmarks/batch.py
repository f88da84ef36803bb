"""Benchmark: a batch of 16 trials with 1 worker against 8 workers (goal: ≥ 5x faster).

The installed `dgym-tui batch`, for real (the local executor's worker processes, the sandboxes,
scoring in a fresh sandbox), on a folder of 16 small repos; the model is the stub
OpenAI-compatible server answering every request in 1 s (edit the fix in, then submit: 2 model
calls, 2 s of model time per trial). Printed next to the floor, the ideal speed-up
min(workers, trials), and the model time alone per trial; no asserts. The speed-up a machine
reaches is bounded by its cores: sandboxes and test runs need CPU while the model waits do not.

    batch trials=16 sandbox=S workers=1 wall_s=X | workers=8 wall_s=Y | speedup=Y/X ideal=8

Run: python tests/benchmarks/batch.py [--sandbox local|docker|bwrap] [--trials 16] [--workers 8]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from stub_llm_server import StubLLMServer  # noqa: E402

DELAY = 1.0
FIXED = "def add(a, b):\n    return a + b\n"


def make_tasks(root: Path, n: int) -> list[str]:
    names = [f"t{i:02d}" for i in range(n)]
    for name in names:
        repo = root / name
        repo.mkdir(parents=True)
        (repo / "calc.py").write_text("def add(a, b):\n    return a - b\n")
        (repo / f"test_calc_{name}.py").write_text(f"from calc import add\n\n\ndef test_add_{name}():\n"
                                                   "    assert add(2, 3) == 5\n")
    return names


def model(names: list[str]):
    seen: dict[str, int] = {}

    def answer(body: dict) -> dict:
        text = json.dumps(body.get("messages"))
        name = next((n for n in names if f"test_add_{n}" in text), "?")
        seen[name] = seen.get(name, 0) + 1
        if seen[name] == 1:
            return {"delay": DELAY, "tool_calls": [{"name": "edit", "arguments": {"path": "calc.py", "new_code": FIXED}}]}
        return {"delay": DELAY, "tool_calls": [{"name": "submit", "arguments": {"message": "fixed"}}]}
    return answer


def run(tasks: Path, names: list[str], workers: int, sandbox: str, tmp: Path) -> tuple[float, dict]:
    server = StubLLMServer().start()
    server.push(*[model(names)] * (10 * len(names)))
    out = tmp / f"run-{workers}"
    started = time.perf_counter()
    done = subprocess.run(["dgym-tui", "batch", str(tasks), "--model", "openai/stub", "--api-base", server.url,
                           "--out", str(out), "--workers", str(workers), "--sandbox", sandbox, "--yes",
                           "--max-steps", "5"], capture_output=True, text=True)
    wall = time.perf_counter() - started
    server.stop()
    statuses: dict[str, int] = {}
    for line in (out / "results.jsonl").read_text().splitlines() if (out / "results.jsonl").exists() else []:
        status = json.loads(line)["status"]
        statuses[status] = statuses.get(status, 0) + 1
    if done.returncode not in (0, 1):
        print(done.stdout[-2000:], done.stderr[-2000:], file=sys.stderr)
    return wall, statuses


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sandbox", default="local", choices=["local", "docker", "bwrap"])
    p.add_argument("--trials", type=int, default=16)
    p.add_argument("--workers", type=int, default=8)
    args = p.parse_args()
    with tempfile.TemporaryDirectory(prefix="dgym-bench-batch-") as tmp:
        tmp = Path(tmp)
        names = make_tasks(tmp / "tasks", args.trials)
        print(f"cores: {os.cpu_count()}; load average: {os.getloadavg()[0]:.1f}", flush=True)
        one, s1 = run(tmp / "tasks", names, 1, args.sandbox, tmp)
        print(f"1 worker: {one:.1f} s ({one / args.trials:.1f} s per trial; {s1})", flush=True)
        many, s8 = run(tmp / "tasks", names, args.workers, args.sandbox, tmp)
        print(f"{args.workers} workers: {many:.1f} s ({s8})", flush=True)
    ideal = min(args.workers, args.trials)
    print(f"model time per trial (floor of a trial): {2 * DELAY:.1f} s")
    print(f"batch trials={args.trials} sandbox={args.sandbox} workers=1 wall_s={one:.1f} | workers={args.workers} "
          f"wall_s={many:.1f} | speedup={one / many:.2f} ideal={ideal}")


if __name__ == "__main__":
    main()
