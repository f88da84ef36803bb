"""dgym_procs: the processes of a run inside a container (stdlib only).

    python3 dgym_procs.py kill PID       end the run, leaving none of its processes behind
    python3 dgym_procs.py reading PID    print the pids of the run blocked reading a terminal

kill: kills, until none is left: the run started as session leader PID, everything in its session or
process group, their descendants, and orphans (processes adopted by PID 1, the container's init)
other than the container's own main process. A run that forked, left its session and was
orphaned is caught by the last rule. Reads /proc and signals directly: it starts no process, so
it works when the run has used up the container's process limit.
"""

import os
import signal
import sys
import time


def _stat(pid):
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            data = fh.read()
    except OSError:
        return None
    fields = data[data.rindex(b")") + 2:].split()
    return int(fields[1]), int(fields[2]), int(fields[3]), int(fields[19])  # ppid pgid sid start


def targets(leader):
    me = os.getpid()
    procs = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            info = _stat(name)
            if info is not None:
                procs[int(name)] = info
    adopted = [pid for pid, (ppid, _, _, _) in procs.items() if ppid == 1]
    main = min(adopted, key=lambda pid: procs[pid][3], default=None)  # the container's command
    found = {pid for pid, (ppid, pgid, sid, _) in procs.items()
             if pid == leader or pgid == leader or sid == leader or (ppid == 1 and pid != main)}
    grew = True
    while grew:
        grew = False
        for pid, (ppid, _, _, _) in procs.items():
            if ppid in found and pid not in found:
                found.add(pid)
                grew = True
    # Never ourselves, our parents (the exec that runs us), the init or the main command.
    spare = {me, 1, main}
    pid = me
    while pid in procs and pid not in (0, 1):
        spare.add(pid)
        pid = procs[pid][0]
    return found - spare


# The read(2) system call's number, as /proc/PID/syscall shows it first.
READ_SYSCALL = {"x86_64": "0", "aarch64": "63"}


def reading_terminal(pids):
    """Those of pids blocked in read() on a terminal (a pty, /dev/tty, the console)."""
    number = READ_SYSCALL.get(os.uname().machine)
    found = []
    for pid in pids:
        try:
            with open(f"/proc/{pid}/syscall") as fh:
                fields = fh.read().split()
            if len(fields) < 2 or fields[0] != number:
                continue
            target = os.readlink(f"/proc/{pid}/fd/{int(fields[1], 16)}")
        except (OSError, ValueError):
            continue
        if target.startswith(("/dev/pts/", "/dev/tty")) or target == "/dev/console":
            found.append(pid)
    return found


def run_pids(leader):
    """The run's processes: its session, group and descendants (no orphans)."""
    procs = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            info = _stat(name)
            if info is not None:
                procs[int(name)] = info
    found = {pid for pid, (_, pgid, sid, _) in procs.items() if leader in (pid, pgid, sid)}
    grew = True
    while grew:
        grew = False
        for pid, (ppid, _, _, _) in procs.items():
            if ppid in found and pid not in found:
                found.add(pid)
                grew = True
    return sorted(found)


def main():
    action, leader = sys.argv[1], int(sys.argv[2])
    if action == "reading":
        print(" ".join(map(str, reading_terminal(run_pids(leader)))))
        return 0
    for _ in range(200):
        pids = targets(leader)
        if not pids:
            return 0
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        time.sleep(0.005)
    return 1


if __name__ == "__main__":
    sys.exit(main())
