"""A real multi-node Ray cluster on 127.0.0.1 for the tests: a head with no CPUs and worker nodes
that each offer `dgym_sandbox` slots, every node its own raylet so that one can be killed alone.

Each node gets its own --temp-dir under one short root (Unix socket paths are limited to 107
bytes) and its own ports (node manager, object manager, worker range, agents), all above 20000:
Ray's own worker range (10002-19999) would refuse a head port inside it. Stopping kills only the
processes whose command line names that root, and their children: nothing else on the machine.

    cluster = LocalRayCluster(workers=2, sandboxes=2).start()
    cluster.address           "127.0.0.1:PORT"
    cluster.node_ids()        {"w1": "<ray node id>", ...}
    cluster.kill_node("w1")   SIGKILL that node's raylet (its workers die with it)
    cluster.stop()
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from conftest import is_running

# A busy machine (2 cores shared) can take longer than the default 30 s to start a node's agents.
# Auth said outright, the same for every node and driver: unset, Ray turns token auth on for a
# head that finds ~/.ray/auth_token (any earlier local ray.init() writes one) but not for a node
# joining it, whose `ray start` then fails with InvalidAuthToken.
RAY_ENV = {"RAY_USAGE_STATS_ENABLED": "0", "RAY_raylet_start_wait_time_s": "120", "RAY_AUTH_MODE": "disabled"}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def free_port_range(size: int) -> int:
    """The first of `size` consecutive ports that are free now (above Ray's worker range)."""
    for _ in range(200):
        base = free_port()
        if base + size >= 65535 or base < 20000:
            continue
        ok = True
        for port in range(base, base + size):
            with socket.socket() as s:
                try:
                    s.bind(("127.0.0.1", port))
                except OSError:
                    ok = False
                    break
        if ok:
            return base
    raise RuntimeError("no free port range for a Ray node")


def _processes() -> dict[int, tuple[int, list[str]]]:
    """pid -> (ppid, argv) of every process, from /proc (no psutil needed without Ray)."""
    procs = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            argv = Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0")
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        procs[int(entry)] = (ppid, [a.decode(errors="replace") for a in argv if a])
    return procs


def _with_descendants(roots: set[int], procs: dict) -> set[int]:
    found = set(roots)
    grew = True
    while grew:
        grew = False
        for pid, (ppid, _) in procs.items():
            if ppid in found and pid not in found:
                found.add(pid)
                grew = True
    return found


def _kill(pids: set[int], sig=signal.SIGKILL) -> None:
    for pid in pids:
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            pass


class LocalRayCluster:
    def __init__(self, workers: int = 2, sandboxes: int = 2, cpus: int = 1, object_store_mb: int = 100):
        self.workers = workers
        self.sandboxes = sandboxes
        self.cpus = cpus
        self.object_store = object_store_mb * 1024 * 1024
        self.root = Path(tempfile.mkdtemp(prefix="dgray", dir="/tmp"))
        self.port = 0
        self.names: list[str] = []
        self._temps: dict[str, str] = {}
        self._manager_ports: dict[str, int] = {}  # node name -> its node manager port (how GCS names it)

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def env(self) -> dict:
        """The nodes' environment: no provider key (a trial's key must come with its spec)."""
        from dgym_tui.config import PROVIDER_KEYS

        return {**{k: v for k, v in os.environ.items() if k not in PROVIDER_KEYS}, **RAY_ENV}

    def _ray(self, *args: str, timeout: float = 180) -> None:
        ray_cli = shutil.which("ray") or os.path.join(os.path.dirname(sys.executable), "ray")
        try:
            r = subprocess.run([ray_cli, "start", *args, "--disable-usage-stats", "--node-ip-address", "127.0.0.1",
                                "--object-store-memory", str(self.object_store)],
                               env=self.env(), capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            raise RuntimeError(f"ray start {' '.join(args[:2])} took more than {timeout:.0f} s") from None
        if r.returncode != 0:
            raise RuntimeError(f"ray start {' '.join(args[:2])} failed: {(r.stderr or r.stdout)[-800:]}")

    def _crash_notes(self, temp: Path) -> str:
        """Why a node did not start, from its raylet's log (the fatal lines)."""
        notes = []
        for log_file in temp.glob("session_2*/logs/raylet.out"):
            notes += [line[-300:] for line in log_file.read_text(errors="replace").splitlines() if " C " in line]
        return "; ".join(notes[-2:])

    def _node_ports(self, name: str = "head") -> list[str]:
        base = free_port_range(64)
        self._manager_ports[name] = base
        return ["--node-manager-port", str(base), "--object-manager-port", str(base + 1),
                "--dashboard-agent-listen-port", str(base + 2), "--dashboard-agent-grpc-port", str(base + 3),
                "--runtime-env-agent-port", str(base + 4), "--metrics-export-port", str(base + 5),
                "--min-worker-port", str(base + 10), "--max-worker-port", str(base + 63)]

    def start(self) -> LocalRayCluster:
        for attempt in range(1, 4):  # a busy machine can make a node miss Ray's start-up deadline
            self.port = free_port()
            temp = self.root / f"head-{attempt}"
            self._temps["head"] = str(temp)
            try:
                self._ray("--head", "--port", str(self.port), "--num-cpus", "0", "--include-dashboard=false",
                          "--temp-dir", str(temp), *self._node_ports())
                break
            except RuntimeError as e:
                roots, procs = self._pids(str(temp) + "/")
                _kill(_with_descendants(roots, procs))
                if attempt == 3:
                    raise RuntimeError(f"{e} ({self._crash_notes(temp)})") from None
        # One after the other: side by side on a busy 2-core machine, the nodes' agents were too
        # slow to start and their raylets gave up on them.
        for i in range(self.workers):
            self.add_node(f"w{i + 1}")
        self.wait_nodes(1 + self.workers)
        return self

    def add_node(self, name: str | None = None, attempts: int = 3) -> str:
        """Start a worker node. On a busy machine a node's agents can start too slowly for its
        raylet, which then gives up: that node's processes are killed and it starts again."""
        name = name or f"w{len(self.names) + 1}"
        for attempt in range(1, attempts + 1):
            temp = self.root / (name if attempt == 1 and not (self.root / name).exists()
                                else f"{name}-{int(time.time() * 1000)}")
            ports = self._node_ports(name)
            self._temps[name] = str(temp)
            try:
                self._ray("--address", self.address, "--num-cpus", str(self.cpus),
                          "--resources", json.dumps({"dgym_sandbox": self.sandboxes}),
                          "--temp-dir", str(temp), *ports)
                break
            except RuntimeError as e:
                roots, procs = self._pids(str(temp) + "/")
                _kill(_with_descendants(roots, procs))
                if attempt == attempts:
                    raise RuntimeError(f"{e} ({self._crash_notes(temp)})") from None
        if name not in self.names:
            self.names.append(name)
        return name

    def _gcs_nodes(self) -> list[dict]:
        """The cluster's nodes as the GCS sees them, asked from a short-lived driver process (so
        the test process itself holds no Ray connection of its own)."""
        code = ("import json, ray; ray.init(address=%r, log_to_driver=False, logging_level='ERROR');"
                "print(json.dumps([{'id': n['NodeID'], 'alive': n['Alive'], 'port': n['NodeManagerPort'],"
                "'resources': n['Resources']} for n in ray.nodes()]))" % self.address)
        r = subprocess.run([sys.executable, "-c", code], env=self.env(), capture_output=True, text=True, timeout=60)
        if r.returncode != 0:
            raise RuntimeError(r.stderr[-800:])
        return json.loads(r.stdout.strip().splitlines()[-1])

    def wait_nodes(self, count: int, timeout: float = 60) -> list[dict]:
        deadline = time.monotonic() + timeout
        while True:
            nodes = [n for n in self._gcs_nodes() if n["alive"]]
            if len(nodes) >= count or time.monotonic() > deadline:
                return nodes
            time.sleep(0.5)

    def node_ids(self) -> dict[str, str]:
        """Worker name -> Ray node id, for the live worker nodes."""
        ids = {}
        by_port = {port: name for name, port in self._manager_ports.items() if name != "head"}
        for n in self._gcs_nodes():
            name = by_port.get(n["port"])
            if n["alive"] and name:
                ids[name] = n["id"]
        return ids

    def _pids(self, marker: str) -> tuple[set[int], dict]:
        procs = _processes()
        return {pid for pid, (_, argv) in procs.items() if any(marker in a for a in argv)}, procs

    def raylet_pid(self, name: str) -> int:
        marker = self._temps[name] + "/"
        pids, procs = self._pids(marker)
        for pid in pids:
            if procs[pid][1] and procs[pid][1][0].endswith("/raylet"):
                return pid
        raise LookupError(f"no raylet for node {name}")

    def node_pids(self, name: str) -> set[int]:
        """The node's raylet and every process under it (its Ray workers: the trials' owners)."""
        raylet = self.raylet_pid(name)
        return _with_descendants({raylet}, _processes())

    def all_pids(self) -> set[int]:
        """Every process of this cluster (any node's), workers included."""
        roots, procs = self._pids(str(self.root) + "/")
        return _with_descendants(roots, procs)

    def kill_node(self, name: str) -> None:
        """SIGKILL the node's raylet only: what a crashed machine's raylet looks like to the rest
        (its worker processes notice and exit; its containers stay behind on the engine)."""
        os.kill(self.raylet_pid(name), signal.SIGKILL)

    def stop(self) -> None:
        pids = self.all_pids()
        _kill(pids, signal.SIGTERM)
        deadline = time.monotonic() + 3
        while time.monotonic() < deadline and any(is_running(p) for p in pids):
            time.sleep(0.1)
        _kill(pids)
        shutil.rmtree(self.root, ignore_errors=True)


def ray_available() -> bool:
    try:
        import ray  # noqa: F401
    except ImportError:
        return False
    return True


@pytest.fixture(scope="session")
def ray_cluster():
    """A head and two worker nodes with 2 `dgym_sandbox` slots each, for the whole session."""
    if not ray_available():
        pytest.skip("ray is not installed (pip install 'dgym-tui[ray]'; CI installs it)")
    cluster = LocalRayCluster(workers=2, sandboxes=2)
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.stop()
