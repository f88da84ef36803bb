"""Benchmark: a command that runs no code, typed after the program ended, against what it cost before.

On a repo whose tests pass (a three-line calc module and its passing test, or --repo PATH with
--entrypoint), after the first run has ended: N rounds of `b calc.py:3`, `p total`, `cl 1`
through Session.send. Before the shell after the end (box/ended.py) each of these reran the whole
suite and was dropped: that cost is measured too, as the time of one full run of the same
entrypoint (`c`, which is what such a command paid). The floor is a raw pdb round trip (`p 1+1`)
at a live stop, raw pexpect on the host's `python -m pdb`.

The last line is

    kept_commands backend=B kept_p50_ms=A kept_p95_ms=.. floor_p50_ms=F ratio=A/F rerun_s=R speedup=R/A

Goal: kept_p50_ms under 10 ms (the issue's figure); ratio against the floor printed, not asserted.

Run: python tests/benchmarks/kept_commands.py [--backend local|bwrap|docker] [--rounds 100]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import pexpect

from dgym_tui.core.session import Session
from dgym_tui.sandbox import BwrapSandbox, DockerSandbox, LocalSandbox

CALC = "def add(a, b):\n    total = a + b\n    return total\n"
TEST = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"


def make_repo() -> Path:
    root = Path(tempfile.mkdtemp(prefix="dgym-kept-")) / "calc"
    (root / "tests").mkdir(parents=True)
    (root / "calc.py").write_text(CALC)
    (root / "tests" / "test_calc.py").write_text(TEST)
    return root


def sandbox(kind: str, repo: Path):
    if kind == "docker":
        return DockerSandbox(repo, image="dgym-tui-sandbox:latest")
    return {"local": LocalSandbox, "bwrap": BwrapSandbox}[kind](repo)


def floor_ms(repo: Path, rounds: int) -> float:
    """Raw pexpect on `python -m pdb calc.py` on the host, at its first stop: `p 1+1` round trips
    (the floor of any pdb round trip here)."""
    child = pexpect.spawn(sys.executable, ["-m", "pdb", str(repo / "calc.py")], encoding="utf-8", timeout=30)
    child.delaybeforesend = None
    child.expect_exact("(Pdb) ")
    times = []
    for _ in range(rounds):
        t = time.perf_counter()
        child.sendline("p 1+1")
        child.expect_exact("(Pdb) ")
        times.append((time.perf_counter() - t) * 1000)
    child.close(force=True)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", default="local", choices=("local", "bwrap", "docker"))
    parser.add_argument("--rounds", type=int, default=100)
    args = parser.parse_args()
    repo = make_repo()
    s = Session(str(repo), entrypoint="pytest tests/test_calc.py", sandbox_obj=sandbox(args.backend, repo))
    s.start()
    assert s.state.program == "exited", s.state.program
    kept = []
    for _ in range(args.rounds):
        for command in ("b calc.py:3", "p total", "cl 1"):
            t = time.perf_counter()
            s.send(command)
            kept.append((time.perf_counter() - t) * 1000)
    starts = sum(1 for e in s.events.history if e.kind == "program_start")
    assert starts == 1, f"a kept command ran the program ({starts} starts)"
    t = time.perf_counter()
    s.send("c")  # what every one of those commands cost before: a whole run
    rerun_s = time.perf_counter() - t
    floor = floor_ms(repo, args.rounds)
    s.close()
    kept.sort()
    p50, p95 = statistics.median(kept), kept[int(len(kept) * 0.95)]
    print(f"kept_commands backend={args.backend} kept_p50_ms={p50:.2f} kept_p95_ms={p95:.2f} "
          f"floor_p50_ms={floor:.2f} ratio={p50 / floor:.2f} rerun_s={rerun_s:.2f} speedup={rerun_s * 1000 / p50:.0f}")


if __name__ == "__main__":
    main()
