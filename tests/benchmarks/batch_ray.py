"""Benchmark: the same 16 trials on the local executor (8 workers) and on Ray (2 nodes x 4 slots):
what Ray adds per trial.

The installed `dgym-tui batch`, for real, on 16 small repos (tests/benchmarks/batch.py's), the
model the stub server answering each request in 1 s (2 calls per trial). The Ray cluster is real
and on this machine (tests/ray_cluster.py: a head, two worker nodes with 4 dgym_sandbox slots
each), so both executors share the same cores: the difference is Ray's own cost (its worker
processes, each importing dgym-tui and litellm once; shipping the repos; scheduling), not more
hardware. Ray's worker processes belong to one job (one `dgym-tui batch`), so every batch starts
cold, as here. No asserts.

    batch_ray trials=16 sandbox=S local8_s=X ray2x4_s=Y | ratio=Y/X | ray overhead per trial=(Y-X)/16 s

Run: python tests/benchmarks/batch_ray.py [--sandbox docker|local|bwrap] [--trials 16]
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

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))
from batch import make_tasks, model  # noqa: E402  (the local batch benchmark's tasks and model)
from ray_cluster import LocalRayCluster  # noqa: E402
from stub_llm_server import StubLLMServer  # noqa: E402


def run(tasks: Path, names: list[str], out: Path, sandbox: str, executor: list[str], env: dict) -> tuple[float, dict]:
    server = StubLLMServer().start()
    server.push(*[model(names)] * (10 * len(names)))
    started = time.perf_counter()
    done = subprocess.run(["dgym-tui", "batch", str(tasks), "--model", "openai/stub", "--api-base", server.url,
                           "--out", str(out), "--sandbox", sandbox, "--yes", "--max-steps", "5", *executor],
                          capture_output=True, text=True, env=env)
    wall = time.perf_counter() - started
    server.stop()
    statuses: dict[str, int] = {}
    nodes: set[str] = set()
    for line in (out / "results.jsonl").read_text().splitlines() if (out / "results.jsonl").exists() else []:
        result = json.loads(line)
        statuses[result["status"]] = statuses.get(result["status"], 0) + 1
        nodes.add(result.get("node") or "?")
        if result["status"] == "error":  # said, so a figure with errors is not taken for a clean one
            print(f"  error in {result['trial']} on {result.get('node')}: {result.get('error')}", file=sys.stderr)
    if done.returncode not in (0, 1):
        print(done.stdout[-2000:], done.stderr[-2000:], file=sys.stderr)
    return wall, {**statuses, "nodes": len(nodes)}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sandbox", default="docker", choices=["local", "docker", "bwrap"])
    p.add_argument("--trials", type=int, default=16)
    args = p.parse_args()
    env = {**os.environ, "OPENAI_API_KEY": "sk-bench", "RAY_USAGE_STATS_ENABLED": "0"}
    with tempfile.TemporaryDirectory(prefix="dgym-bench-ray-") as tmp:
        tmp = Path(tmp)
        names = make_tasks(tmp / "tasks", args.trials)
        print(f"cores: {os.cpu_count()}; load average: {os.getloadavg()[0]:.1f}", flush=True)
        local, s_local = run(tmp / "tasks", names, tmp / "local", args.sandbox, ["--workers", "8"], env)
        print(f"local, 8 workers: {local:.1f} s ({s_local})", flush=True)
        cluster = LocalRayCluster(workers=2, sandboxes=4)
        t0 = time.perf_counter()
        try:
            cluster.start()
            print(f"ray cluster up in {time.perf_counter() - t0:.1f} s", flush=True)
            ray_env = {**env, "RAY_ADDRESS": cluster.address}
            on_ray, s_ray = run(tmp / "tasks", names, tmp / "ray", args.sandbox, ["--executor", "ray"], ray_env)
            print(f"ray, 2 nodes x 4: {on_ray:.1f} s ({s_ray})", flush=True)
        finally:
            cluster.stop()
    n = args.trials
    print(f"batch_ray trials={n} sandbox={args.sandbox} local8_s={local:.1f} ray2x4_s={on_ray:.1f} "
          f"| ratio={on_ray / local:.2f} | ray overhead per trial={(on_ray - local) / n:+.2f} s")


if __name__ == "__main__":
    main()
