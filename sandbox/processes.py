"""The processes of a local or bwrap sandbox: a cap on how many there may be, and a kill that
leaves none behind.

Where this process may create cgroups (root, with the pids controller mounted), each sandbox gets
one: `pids.max` caps a fork bomb, and killing is "every process in the cgroup", whatever they did
(new sessions, process groups, double forks). Elsewhere the cap is RLIMIT_NPROC (which the kernel
does not enforce for root, hence the cgroup), and the kill is best effort: the process group and
session of the run, their descendants, and anything whose working folder is in the sandbox.
bwrap adds its own guarantee: each run has a PID namespace, which dies with its first process.
"""

from __future__ import annotations

import os
import resource
import signal
import time
from pathlib import Path

CGROUP_PREFIX = "dgym-tui-"


def _pids_hierarchy() -> Path | None:
    """Where pids cgroups can be made: cgroup v2 with the pids controller, or v1's pids tree."""
    v2 = Path("/sys/fs/cgroup")
    if (v2 / "cgroup.controllers").is_file():
        if "pids" in (v2 / "cgroup.controllers").read_text().split() and os.access(v2, os.W_OK):
            return v2
        return None
    v1 = v2 / "pids"
    if (v1 / "cgroup.procs").is_file() and os.access(v1, os.W_OK):
        return v1
    return None


class ProcessCap:
    """One sandbox's process cap. `preexec()` runs in each child before it execs."""

    def __init__(self, name: str, limit: int):
        self.limit = limit
        self.cgroup: Path | None = None
        base = _pids_hierarchy()
        if base is not None:
            try:
                if base.name != "pids":  # v2: children of the root get pids only when enabled
                    (base / "cgroup.subtree_control").write_text("+pids")
                path = base / f"{CGROUP_PREFIX}{name}"
                path.mkdir(exist_ok=True)
                (path / "pids.max").write_text(str(limit))
                self.cgroup = path
            except OSError:
                self.cgroup = None
        self.nproc = None
        if self.cgroup is None and os.getuid() != 0:
            # RLIMIT_NPROC counts every process of this user: leave room for the ones already running.
            self.nproc = _count_user_processes(os.getuid()) + limit

    @property
    def kind(self) -> str:
        return "cgroup" if self.cgroup else ("rlimit" if self.nproc else "none")

    def preexec(self, rlimit: bool = True) -> None:
        """In the forked child: join the cgroup, or lower RLIMIT_NPROC (soft and hard, for good).
        rlimit=False: the caller applies the limit itself (bwrap, inside its user namespace,
        where the count starts afresh; set before, it makes bwrap's own clone fail)."""
        if self.cgroup is not None:
            with open(self.cgroup / "cgroup.procs", "w") as fh:
                fh.write(str(os.getpid()))
        elif self.nproc is not None and rlimit:
            resource.setrlimit(resource.RLIMIT_NPROC, (self.nproc, self.nproc))

    def members(self) -> list[int]:
        cgroup = self.cgroup
        if cgroup is None:
            return []
        try:
            return [int(p) for p in (cgroup / "cgroup.procs").read_text().split()]
        except OSError:
            return []

    def close(self) -> None:
        """Kill every process left in the cgroup and remove it. Safe to call twice, from two
        threads (the app's quit and its exit handler may both close the sandbox)."""
        cgroup, self.cgroup = self.cgroup, None
        if cgroup is None:
            return
        kill_file = cgroup / "cgroup.kill"
        if kill_file.exists():  # cgroup v2 on Linux 5.14+: the kernel kills them all at once
            try:
                kill_file.write_text("1")
            except OSError:
                pass
        remove_cgroup(cgroup)


def remove_cgroup(path: Path) -> None:
    """Kill what runs in the cgroup, then remove it."""
    try:
        _kill_until_gone(lambda: [int(p) for p in (path / "cgroup.procs").read_text().split()])
    except OSError:
        pass
    for _ in range(50):  # the kernel takes a moment to let go of processes just killed
        try:
            path.rmdir()
            return
        except FileNotFoundError:
            return
        except OSError:
            try:
                for pid in (path / "cgroup.procs").read_text().split():
                    _kill(int(pid))
            except OSError:
                pass
            time.sleep(0.02)


def leftover_cgroups(session_ids: set[str]) -> list[Path]:
    base = _pids_hierarchy()
    if base is None:
        return []
    return [base / f"{CGROUP_PREFIX}{sid}" for sid in session_ids if (base / f"{CGROUP_PREFIX}{sid}").is_dir()]


def _kill(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _kill_until_gone(find, rounds: int = 200) -> None:
    """SIGKILL whatever find() returns until it returns nothing. A process forking while we kill
    shows up in the next round; killed processes fork no more, so this ends."""
    for _ in range(rounds):
        pids = [p for p in find() if p != os.getpid()]
        if not pids:
            return
        for pid in pids:
            _kill(pid)
        time.sleep(0.005)


def _stat(pid: str) -> tuple[int, int, int] | None:
    """(ppid, pgid, sid) of a process, or None if it is gone or a zombie. A zombie is dead (it
    runs and forks no more) but stays in /proc until its parent reaps it: counted as alive, a
    killed run that its parent had not reaped yet (pdb's process, at every restart) was killed
    again for 200 rounds, 1.4 s."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            data = fh.read()
    except OSError:
        return None
    fields = data[data.rindex(b")") + 2:].split()
    if fields[0] in (b"Z", b"X"):
        return None
    return int(fields[1]), int(fields[2]), int(fields[3])


def _count_user_processes(uid: int) -> int:
    count = 0
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                if entry.stat().st_uid == uid:
                    count += 1
            except OSError:
                pass
    return count


def run_processes(leader: int, folder: str | None = None) -> list[int]:
    """Processes of a run started as session leader `leader`: its session and process group,
    their descendants, and (when `folder` is given) anything working inside that folder."""
    parents: dict[int, int] = {}
    found: set[int] = set()
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        info = _stat(entry.name)
        if info is None:
            continue
        pid = int(entry.name)
        ppid, pgid, sid = info
        parents[pid] = ppid
        if pid == leader or pgid == leader or sid == leader:
            found.add(pid)
        elif folder:
            try:
                cwd = os.readlink(f"/proc/{pid}/cwd")
            except OSError:
                continue
            if cwd == folder or cwd.startswith(folder.rstrip("/") + "/"):
                found.add(pid)
    changed = True
    while changed:  # descendants of anything found
        changed = False
        for pid, ppid in parents.items():
            if ppid in found and pid not in found:
                found.add(pid)
                changed = True
    found.discard(os.getpid())
    return sorted(found)


def kill_run(leader: int, folder: str | None = None) -> None:
    """Kill a run and everything it started that can still be found (see run_processes)."""
    _kill_until_gone(lambda: run_processes(leader, folder))
