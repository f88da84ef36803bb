"""Benchmark: pdb round trips through Debugger.send against raw pexpect driving `python -m pdb`.

On the bundled example, for each backend: median and p95 of 200 `p 1+1` round trips through
Debugger.send, and the floor measured in the same run (raw pexpect on `python -m pdb main.py`,
delaybeforesend=None; for Docker over the same SDK exec socket). Also the time to the first stop
and the time to restart after a patch. The last line is

    pdb_latency local_p50_ms=A floor_p50_ms=B ratio=C docker_p50_ms=D docker_floor_p50_ms=E docker_ratio=F first_stop_s=G session_p50_ms=H

where H is the same round trip through the session's door (Session.send: a runner call from
another thread, with its call events), locally. Goal: both ratios <= 1.5.
Run: python tests/benchmarks/pdb_latency.py
"""

from __future__ import annotations

import statistics
import sys
import time

from dgym_tui.core.breakpoints import BreakpointRegistry
from dgym_tui.core.debugger import Debugger
from dgym_tui.core.entrypoint import parse_entrypoint
from dgym_tui.core.events import EventBus
from dgym_tui.core.session import Session
from dgym_tui.examples import example_path
from dgym_tui.sandbox import DockerSandbox, LocalSandbox

N = 200


def stats(samples: list[float]) -> tuple[float, float]:
    ms = sorted(s * 1000 for s in samples)
    return statistics.median(ms), ms[int(len(ms) * 0.95) - 1]


def floor(sandbox) -> list[float]:
    """Raw pexpect on the stdlib pdb, in the same sandbox, over the same kind of channel."""
    channel = sandbox.spawn([sandbox.python, "-m", "pdb", "main.py"], env={"TERM": "dumb"})
    child = channel.child
    child.delaybeforesend = None
    child.expect_exact("(Pdb) ", timeout=30)
    samples = []
    for _ in range(N):
        t = time.perf_counter()
        child.send("p 1+1\n")
        child.expect_exact("(Pdb) ", timeout=10)
        samples.append(time.perf_counter() - t)
    channel.close()
    return samples


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
        base = floor(sandbox)
        samples, first_stop, restart_s = ours(sandbox)
    p50, p95 = stats(samples)
    f50, f95 = stats(base)
    print(f"{name:>6}: send p50 {p50:.3f} ms  p95 {p95:.3f} ms | floor p50 {f50:.3f} ms  p95 {f95:.3f} ms | "
          f"ratio {p50 / f50:.2f} | first stop {first_stop:.3f} s | restart after patch {restart_s:.3f} s")
    return p50, f50, first_stop


def main() -> int:
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
