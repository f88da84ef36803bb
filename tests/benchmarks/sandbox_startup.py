"""Benchmark: time until a sandbox is ready (started, repo copied, baseline committed).

For the bundled example and a generated repo of 5,000 files / 20 MB, for every backend, next to
the floor measured in the same run: `docker run` of the same image plus a tar copy of the same
files into it. Prints medians; the last line is

    sandbox_startup docker_s=X floor_s=Y ratio=Z local_s=W bwrap_s=V

(for the generated repo). Goal: ratio <= 1.5. Run: python tests/benchmarks/sandbox_startup.py
"""

from __future__ import annotations

import io
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

from dgym_tui.sandbox import BwrapSandbox, DockerSandbox, LocalSandbox
from dgym_tui.sandbox.bwrap_sandbox import bwrap_problem
from dgym_tui.sandbox.docker_sandbox import DEFAULT_IMAGE, connect
from dgym_tui.examples import example_path

RUNS = int(os.environ.get("RUNS", "5"))


def generate_repo(root: Path, files: int = 5000, total_bytes: int = 20 * 1024 * 1024) -> Path:
    size = total_bytes // files
    line = "value = 'abcdefghijklmnopqrstuvwxyz0123456789'  # filler\n"
    body = (line * (size // len(line) + 1))[:size]
    for i in range(files):
        d = root / f"pkg{i // 100:02d}" / f"sub{i // 20 % 5}"
        d.mkdir(parents=True, exist_ok=True)
        (d / f"mod_{i}.py").write_text(body)
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    return root


def floor_once(client, repo: Path) -> float:
    """docker run of the image + tar of the same files put into it: nothing of ours."""
    start = time.perf_counter()
    container = client.containers.create(DEFAULT_IMAGE, ["sleep", "infinity"], network_mode="none",
                                         labels={"dgym-tui.app": "benchmark"})
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        tar.add(repo, arcname=".", filter=lambda i: None if "/.git" in i.name else i)
    container.put_archive("/workspace", buf.getvalue())
    container.start()
    elapsed = time.perf_counter() - start
    container.remove(force=True)
    return elapsed


def ready_once(cls, repo: Path, **kwargs) -> float:
    start = time.perf_counter()
    sandbox = cls(repo, **kwargs)
    sandbox.start()
    elapsed = time.perf_counter() - start
    sandbox.close()
    return elapsed


def median(fn, *args, **kwargs) -> float:
    fn(*args, **kwargs)  # warm-up: page cache, image layers
    return statistics.median(fn(*args, **kwargs) for _ in range(RUNS))


def main() -> int:
    client = connect()
    with tempfile.TemporaryDirectory() as tmp:
        big = generate_repo(Path(tmp) / "big")
        results = {}
        for name, repo in (("example", example_path()), ("5000 files/20 MB", big)):
            floor = median(floor_once, client, repo)
            docker_s = median(ready_once, DockerSandbox, repo, client=client)
            local_s = median(ready_once, LocalSandbox, repo)
            bwrap_s = median(ready_once, BwrapSandbox, repo) if bwrap_problem() is None else float("nan")
            results[name] = (docker_s, floor, local_s, bwrap_s)
            print(f"{name:>18}: docker {docker_s:.3f} s  floor {floor:.3f} s  ratio {docker_s / floor:.2f}  "
                  f"local {local_s:.3f} s  bwrap {bwrap_s:.3f} s  (median of {RUNS})")
    docker_s, floor, local_s, bwrap_s = results["5000 files/20 MB"]
    print(f"sandbox_startup docker_s={docker_s:.3f} floor_s={floor:.3f} ratio={docker_s / floor:.2f} "
          f"local_s={local_s:.3f} bwrap_s={bwrap_s:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
