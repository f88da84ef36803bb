"""Benchmark: pdb round trips through Debugger.send against raw pexpect driving `python -m pdb`.

On the bundled example, for each backend: median and p95 of 200 `p 1+1` round trips through
Debugger.send, and the floor measured in the same run (raw pexpect on `python -m pdb main.py`,
delaybeforesend=None; for Docker over the same SDK exec socket). Also the time to the first stop
and the time to restart after a patch. The last line is

    pdb_latency local_p50_ms=A floor_p50_ms=B ratio=C docker_p50_ms=D docker_floor_p50_ms=E docker_ratio=F first_stop_s=G session_p50_ms=H

where H is the same round trip through the session's door (Session.send: a runner call from
another thread, with its call events), locally. Goal: both ratios <= 1.5.

Per Python (each CPython 3.6 to 3.13 found by tests/pythons.py; a missing one is skipped, said so):
the local sandbox with python=that interpreter, on the bundled example. Its main.py needs 3.7+
(`from __future__ import annotations`, dataclasses), so a small loop script, valid on every
version, is written into the sandbox's copy of the repo (LOOP below). Both sides run it alike:
`b 5`, `c` (into spin(); that breakpoint stays, as a session has some), then N `p 1+1` and N `n`
(each `n` steps one line of the endless loop, so any number of them is a genuine step, never the
program's end). The floor is raw pexpect on
`python -m pdb` with that same Python in that same sandbox (delaybeforesend=None, expect on the
prompt), and delayafterread=None too: pexpect's expect() otherwise sleeps 0.1 ms after every read
(~0.15-0.2 ms a round trip here, more than pdb itself takes), which Debugger, reading with
read_nonblocking, never does. (The local/docker floors above keep pexpect's default, as they
always had.) Also the time from Debugger.start() to the first stop at the loop script's line 1
(median of FIRST_STOP_RUNS fresh starts). Printed before the lines above, one per Python and one for 3.6 against 3.11:

    pdb_latency_py python=3.6 p_p50_ms=.. p_floor_p50_ms=.. p_ratio=.. n_p50_ms=.. n_floor_p50_ms=.. n_ratio=.. first_stop_s=..
    pdb_first_stop py36_s=.. py311_s=.. ratio=..

Goals: p_ratio and n_ratio <= 1.2 on every Python; the first stop on 3.6 within 1.3x of 3.11's.
These are ratios to a floor measured in the same run, not timed assertions.

Run: python tests/benchmarks/pdb_latency.py                  (everything)
     python tests/benchmarks/pdb_latency.py --only-pythons   (the per-Python part only)
     python tests/benchmarks/pdb_latency.py --pythons 3.6,3.11
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

from dgym_tui.core.breakpoints import BreakpointRegistry
from dgym_tui.core.debugger import Debugger
from dgym_tui.core.entrypoint import parse_entrypoint
from dgym_tui.core.events import EventBus
from dgym_tui.core.session import Session
from dgym_tui.examples import example_path
from dgym_tui.sandbox import DockerSandbox, LocalSandbox

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: pythons.py
import pythons  # noqa: E402

N = 200
FIRST_STOP_RUNS = 7
LOOP = "dgym_bench_loop.py"
LOOP_SOURCE = '''"""pdb_latency: a loop `n` steps through for ever (Python 3.6 to 3.13)."""


def spin():
    i = 0
    while True:
        i += 1


spin()
'''
INTO_LOOP = ("b 5", "c")  # to the first line of spin(): then every `n` steps one line of the loop


def stats(samples: list[float]) -> tuple[float, float]:
    ms = sorted(s * 1000 for s in samples)
    return statistics.median(ms), ms[int(len(ms) * 0.95) - 1]


def floor(sandbox, script: str = "main.py", setup=(), commands=("p 1+1",),
          no_read_delay: bool = False) -> list[list[float]]:
    """Raw pexpect on the stdlib pdb, in the same sandbox (so with its Python), over the same kind
    of channel: the setup commands, then N round trips of each command in turn. no_read_delay:
    without pexpect's sleep after each read (delayafterread)."""
    channel = sandbox.spawn([sandbox.python, "-m", "pdb", script], env={"TERM": "dumb"})
    child = channel.child
    child.delaybeforesend = None
    if no_read_delay:
        child.delayafterread = None
    child.expect_exact("(Pdb) ", timeout=30)
    for command in setup:
        child.send(command + "\n")
        child.expect_exact("(Pdb) ", timeout=30)
    runs = []
    for command in commands:
        samples = []
        for _ in range(N):
            t = time.perf_counter()
            child.send(command + "\n")
            child.expect_exact("(Pdb) ", timeout=10)
            samples.append(time.perf_counter() - t)
        runs.append(samples)
    channel.close()
    return runs


def ours(sandbox) -> tuple[list[float], float, float]:
    t = time.perf_counter()
    debugger = Debugger(sandbox, parse_entrypoint("python main.py"), BreakpointRegistry(), EventBus())
    first = debugger.start()
    first_stop = time.perf_counter() - t
    assert first.stop and first.stop.line == 1, first
    samples = []
    for _ in range(N):
        t = time.perf_counter()
        result = debugger.send("p 1+1")
        samples.append(time.perf_counter() - t)
        assert result.output == "2\n", result
    # Restart after a patch: the file changes, breakpoints move, a fresh pdb reaches its stop.
    debugger.send("b shopcart/inventory.py:56")
    base = sandbox.checkpoint("before")
    text = sandbox.read_text("shopcart/inventory.py")
    sandbox.write_text("shopcart/inventory.py", "# patched\n" + text)
    t = time.perf_counter()
    debugger.breakpoints.remap(sandbox.diff(base))
    restarted = debugger.restart()
    restart_s = time.perf_counter() - t
    assert debugger.breakpoints.items()[0].line == 57, debugger.breakpoints.listing()
    debugger.close()
    return samples, first_stop, restart_s


def through_session(repo) -> list[float]:
    """Session.send from this (non-runner) thread: the thread hop and the events included."""
    session = Session(str(repo), sandbox="local", entrypoint="python main.py")
    session.start()
    samples = []
    for _ in range(N):
        t = time.perf_counter()
        result = session.send("p 1+1")
        samples.append(time.perf_counter() - t)
        assert result.output == "2\n", result
    session.close()
    return samples


def measure(name: str, sandbox) -> tuple[float, float, float]:
    with sandbox:
        floor(sandbox)  # warm-up
        [base] = floor(sandbox)
        samples, first_stop, restart_s = ours(sandbox)
    p50, p95 = stats(samples)
    f50, f95 = stats(base)
    print(f"{name:>6}: send p50 {p50:.3f} ms  p95 {p95:.3f} ms | floor p50 {f50:.3f} ms  p95 {f95:.3f} ms | "
          f"ratio {p50 / f50:.2f} | first stop {first_stop:.3f} s | restart after patch {restart_s:.3f} s")
    return p50, f50, first_stop


def new_debugger(sandbox, entrypoint: str) -> Debugger:
    return Debugger(sandbox, parse_entrypoint(entrypoint), BreakpointRegistry(), EventBus())


def per_python(path: str) -> dict[str, float]:
    """`p 1+1` and `n` through Debugger.send against raw pdb, and the first stop, on one Python."""
    with LocalSandbox(example_path(), python=path) as sandbox:
        sandbox.write_text(LOOP, LOOP_SOURCE)
        floor(sandbox, LOOP, INTO_LOOP, ("p 1+1", "n"), no_read_delay=True)  # warm-up
        p_floor, n_floor = floor(sandbox, LOOP, INTO_LOOP, ("p 1+1", "n"), no_read_delay=True)

        debugger = new_debugger(sandbox, f"python {LOOP}")
        debugger.start()
        for command in INTO_LOOP:
            debugger.send(command)
        assert debugger.stop and debugger.stop.line == 5, debugger.stop
        p_samples, n_samples = [], []
        for _ in range(N):
            t = time.perf_counter()
            result = debugger.send("p 1+1")
            p_samples.append(time.perf_counter() - t)
            assert result.output == "2\n", result
        for _ in range(N):
            t = time.perf_counter()
            result = debugger.send("n")
            n_samples.append(time.perf_counter() - t)
            assert result.stop and result.stop.function == "spin", result
        debugger.close()

        first_stops = []
        for _ in range(FIRST_STOP_RUNS):
            debugger = new_debugger(sandbox, f"python {LOOP}")
            t = time.perf_counter()
            first = debugger.start()
            first_stops.append(time.perf_counter() - t)
            assert first.stop and first.stop.line == 1, first
            debugger.close()

    row = {"first_stop_s": statistics.median(first_stops)}
    for name, samples, base in (("p", p_samples, p_floor), ("n", n_samples, n_floor)):
        p50, p95 = stats(samples)
        f50, f95 = stats(base)
        row.update({f"{name}_p50_ms": p50, f"{name}_p95_ms": p95, f"{name}_floor_p50_ms": f50,
                    f"{name}_floor_p95_ms": f95, f"{name}_ratio": p50 / f50})
    return row


def measure_pythons(minors: list[str]) -> None:
    first_stop = {}
    for minor in minors:
        if minor not in pythons.PATHS or not pythons.exists(minor):
            print(f"pdb_latency_py python={minor} skipped: no interpreter "
                  f"({pythons.PATHS.get(minor, 'not one of ' + ', '.join(pythons.MINORS))})")
            continue
        r = per_python(pythons.PATHS[minor])
        first_stop[minor] = r["first_stop_s"]
        print(f"py{minor:<5}: p 1+1 p50 {r['p_p50_ms']:.3f} ms  p95 {r['p_p95_ms']:.3f} ms | floor p50 "
              f"{r['p_floor_p50_ms']:.3f} ms  p95 {r['p_floor_p95_ms']:.3f} ms | n p50 {r['n_p50_ms']:.3f} ms  "
              f"p95 {r['n_p95_ms']:.3f} ms | floor p50 {r['n_floor_p50_ms']:.3f} ms  p95 "
              f"{r['n_floor_p95_ms']:.3f} ms | first stop {r['first_stop_s']:.3f} s")
        print(f"pdb_latency_py python={minor} p_p50_ms={r['p_p50_ms']:.3f} p_floor_p50_ms={r['p_floor_p50_ms']:.3f} "
              f"p_ratio={r['p_ratio']:.2f} n_p50_ms={r['n_p50_ms']:.3f} n_floor_p50_ms={r['n_floor_p50_ms']:.3f} "
              f"n_ratio={r['n_ratio']:.2f} first_stop_s={r['first_stop_s']:.3f}", flush=True)
    if "3.6" in first_stop and "3.11" in first_stop:
        print(f"pdb_first_stop py36_s={first_stop['3.6']:.3f} py311_s={first_stop['3.11']:.3f} "
              f"ratio={first_stop['3.6'] / first_stop['3.11']:.2f}")
    else:
        print("pdb_first_stop skipped: needs both 3.6 and 3.11 measured")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pythons", default=",".join(pythons.MINORS),
                        help="the Pythons to measure one by one (default: %(default)s)")
    parser.add_argument("--only-pythons", action="store_true",
                        help="only the per-Python part (no Docker, no session)")
    args = parser.parse_args()
    measure_pythons([v.strip() for v in args.pythons.split(",") if v.strip()])
    if args.only_pythons:
        return 0
    repo = example_path()
    local_p50, local_floor, first_stop = measure("local", LocalSandbox(repo))
    docker_p50, docker_floor, _ = measure("docker", DockerSandbox(repo))
    through_session(repo)  # warm-up
    session_p50, session_p95 = stats(through_session(repo))
    print(f"session: send p50 {session_p50:.3f} ms  p95 {session_p95:.3f} ms (local, through the runner)")
    print(f"pdb_latency local_p50_ms={local_p50:.3f} floor_p50_ms={local_floor:.3f} "
          f"ratio={local_p50 / local_floor:.2f} docker_p50_ms={docker_p50:.3f} "
          f"docker_floor_p50_ms={docker_floor:.3f} docker_ratio={docker_p50 / docker_floor:.2f} "
          f"first_stop_s={first_stop:.3f} session_p50_ms={session_p50:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
