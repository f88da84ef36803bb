"""Benchmark: what each step of a SWE-bench instance costs here, instance by instance.

    python tests/benchmarks/swebench_instance.py INSTANCES.jsonl --repos DIR [--rounds 200]

- the environment image: built again from scratch (`--rebuild`; the wheel cache as it is), its
  seconds and size;
- a trial (a scripted model: `eval`, then submit): the seconds from the trial's start to the
  agent's first model request (the tests run at the base for its task, the sandbox started, pdb at
  its first stop), and the harness's scoring (a fresh container, the eval script, get_eval_report);
- a pdb round trip inside the instance (`p 1+1` through the session's Debugger), against its
  floor: raw `python -m pdb` on the environment's Python in a container of the same image, driven
  through `docker exec` by pexpect. Printed as the ratio to that floor.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def build(record: dict, repos: str) -> tuple[float, int]:
    from dgym_tui.batch.swebench_image import build as build_image

    out = build_image(record, repos, rebuild=True, progress=lambda line: None)
    return out["seconds"], out["size"]


def trial(task, tmp: Path) -> dict:
    from batch_fixtures import spec_for
    from dgym_tui.batch.trial import run_trial

    steps = [{"tool_calls": [{"name": "eval", "arguments": {}}]},
             {"tool_calls": [{"name": "submit", "arguments": {"message": "nothing"}}]}]
    started = time.time()
    out = run_trial(spec_for(task, tmp, steps, sandbox="docker"))
    events = [json.loads(line) for line in out.session.splitlines()[1:]]
    first = next(e["ts"] for e in events if e["kind"] == "model_request")
    r = out.result
    return {"first_request": first - started, "score": r["score_seconds"], "trial": r["seconds"],
            "status": r["status"]}


def round_trips(task, rounds: int) -> list[float]:
    from dgym_tui.batch.env import TaskEnv

    with TaskEnv(task, sandbox="docker") as env:
        env.reset()
        debugger = env.session.debugger
        times = []
        for _ in range(rounds):
            started = time.perf_counter()
            debugger.send("p 1+1", quiet=True)
            times.append(time.perf_counter() - started)
    return times


def raw_round_trips(task, rounds: int) -> list[float]:
    """`python -m pdb` in the environment, in a container of the instance's image."""
    import docker
    import pexpect

    env = task.environment
    client = docker.from_env()
    box = client.containers.run(env["image"], ["sleep", "infinity"], detach=True, network_mode="none", remove=True)
    try:
        script = f"{env['activate']}\ncd {env['workdir']}\nprintf 'x = 1\\n' > /tmp/x.py\nexec python -m pdb /tmp/x.py"
        child = pexpect.spawn("docker", ["exec", "-it", box.id, "bash", "-c", script], encoding="utf-8", timeout=60)
        child.delaybeforesend = None  # pexpect's 50 ms pause before each send is no part of pdb
        child.expect_exact("(Pdb) ")
        times = []
        for _ in range(rounds):
            started = time.perf_counter()
            child.send("p 1+1\n")
            child.expect_exact("(Pdb) ")
            times.append(time.perf_counter() - started)
        child.sendline("q")
        child.close()
        return times
    finally:
        box.kill()


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("instances")
    p.add_argument("--repos", required=True)
    p.add_argument("--rounds", type=int, default=200)
    p.add_argument("--no-build", action="store_true", help="measure with the images as they are")
    args = p.parse_args()
    from dgym_tui.batch.swebench_image import read_records
    from dgym_tui.batch.tasks import load_tasks

    print("| instance | image build s | image MB | first agent request s | scoring s | pdb `p 1+1` p50 ms | "
          "raw pdb p50 ms | ratio |")
    print("|---|---|---|---|---|---|---|---|")
    for record in read_records(args.instances):
        seconds, size = (0.0, 0) if args.no_build else build(record, args.repos)
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "one.jsonl"
            path.write_text(json.dumps(record) + "\n")
            [task] = load_tasks(path, repos=args.repos)
            t = trial(task, Path(tmp))
            ours = statistics.median(round_trips(task, args.rounds)) * 1000
            raw = statistics.median(raw_round_trips(task, args.rounds)) * 1000
        print(f"| {record['instance_id']} | {seconds:.0f} | {size / 1e6:.0f} | {t['first_request']:.1f} | "
              f"{t['score']:.1f} | {ours:.2f} | {raw:.2f} | {ours / raw:.2f} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
