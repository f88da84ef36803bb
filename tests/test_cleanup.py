"""What a killed app leaves, and who removes it: the next start, for local and bwrap copies as
for containers (tests/test_docker_sandbox.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import textwrap
import time

import pytest

from conftest import make_sandbox

OWNER = textwrap.dedent("""
    import sys, time
    from dgym_tui.sandbox import BwrapSandbox, LocalSandbox
    sb = {"local": LocalSandbox, "bwrap": BwrapSandbox}[sys.argv[1]](sys.argv[2])
    sb.start()
    # A process of the program that outlives its command (local: nothing jails it).
    sb.exec("nohup sleep 600 >/dev/null 2>&1 &", timeout=30)
    print(sb.tmp, flush=True)
    time.sleep(120)
""")


def _working_in(folder: str) -> list[int]:
    pids = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            cwd = os.readlink(f"/proc/{pid}/cwd")
        except OSError:
            continue
        if cwd == folder or cwd.startswith(folder + "/"):
            pids.append(int(pid))
    return pids


@pytest.mark.parametrize("kind", ["local", "bwrap"])
def test_killed_apps_copy_is_reaped_at_the_next_start(kind, example_repo):
    make_sandbox(kind, example_repo)  # skips where bwrap cannot run
    owner = subprocess.Popen([sys.executable, "-c", OWNER, kind, str(example_repo)], stdout=subprocess.PIPE,
                             text=True)
    tmp = owner.stdout.readline().strip()
    assert tmp and os.path.isdir(tmp), "the owner did not start a sandbox"
    with open(os.path.join(tmp, "owner.json")) as fh:
        assert json.load(fh)["pid"] == owner.pid
    owner.kill()  # SIGKILL: nothing of the app's runs, the copy stays
    owner.wait(timeout=30)
    assert os.path.isdir(tmp), "SIGKILL cannot be caught: the copy should remain"
    with make_sandbox(kind, example_repo) as sb:
        assert sb.exec("true", timeout=30).ok
        assert not os.path.exists(tmp), "the next start did not reap the dead app's copy"
        assert sb.tmp and os.path.isdir(sb.tmp)  # its own copy is not touched
    deadline = time.monotonic() + 5
    while _working_in(tmp) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _working_in(tmp), "a process of the dead app's run was left running"


def test_live_and_foreign_copies_are_left_alone(example_repo, tmp_path):
    from dgym_tui.sandbox.local_sandbox import reap_leftovers

    with make_sandbox("local", example_repo) as live:
        foreign = tempfile.mkdtemp(prefix="dgym-tui-foreign-")
        try:
            with open(os.path.join(foreign, "owner.json"), "w") as fh:
                json.dump({"pid": 1, "host": "some-other-host", "started": "1", "session": "x"}, fh)
            no_owner = tempfile.mkdtemp(prefix="dgym-tui-noowner-")
            reap_leftovers()
            assert os.path.isdir(live.tmp) and os.path.isdir(foreign) and os.path.isdir(no_owner)
        finally:
            for d in (foreign, no_owner):
                subprocess.run(["rm", "-rf", d])


def test_a_killed_run_its_parent_has_not_reaped_yet_counts_as_gone(monkeypatch):
    """kill_run SIGKILLs until nothing of the run is left. A killed process stays in /proc as a
    zombie until its parent reaps it (pdb's, at every restart: pexpect reaps it after the kill);
    counted as alive it was killed again for 200 rounds (1.4 s of every restart)."""
    from dgym_tui.sandbox import processes

    proc = subprocess.Popen(["sleep", "600"], start_new_session=True)
    rounds: list[float] = []
    monkeypatch.setattr(processes.time, "sleep", rounds.append)
    try:
        processes.kill_run(proc.pid)
        with open(f"/proc/{proc.pid}/stat") as fh:
            state = fh.read().rsplit(")", 1)[1].split()[0]
        assert state == "Z"  # dead, not reaped: what kill_run saw on its next look
        assert len(rounds) <= 20 and processes.run_processes(proc.pid) == []  # was 200 (1.4 s); a loaded machine takes a few
    finally:
        proc.kill()
        proc.wait()


@pytest.mark.parametrize("kind", ["local", "bwrap"])
def test_killing_strays_spares_a_command_that_is_starting_or_forking(kind, example_repo):
    """After a run is killed, the sandbox's cgroup is swept for its strays; processes of a live
    exec (the UI's git, the background compile) are kept. One being forked while the sweep looked
    (a Popen not yet registered, a jail still building its process tree) was taken for a stray
    and killed: the bytecode compile beside a restart died of it in bwrap."""
    import threading

    sandbox = make_sandbox(kind, example_repo)
    with sandbox:
        if sandbox.cap is None or sandbox.cap.cgroup is None:
            from dgym_tui.sandbox.processes import _pids_hierarchy

            # Only where no pids cgroup can be made (not root, no writable cgroup tree) is there
            # nothing to sweep; where one can, the sandbox must have made it.
            assert _pids_hierarchy() is None, "pids cgroups can be made here, but the sandbox has none"
            pytest.skip("no pids cgroup can be made here: there are no strays to sweep")
        results = []

        def forks():  # a child forked every few milliseconds; one killed ends the loop with an error
            results.append(sandbox.exec("set -e; for i in $(seq 150); do /bin/true; done; echo done", timeout=60))

        workers = [threading.Thread(target=forks) for _ in range(3)]
        for worker in workers:
            worker.start()
        while any(worker.is_alive() for worker in workers):
            sandbox._kill_strays()
        for worker in workers:
            worker.join()
        assert [(r.exit_code, r.output.strip()) for r in results] == [(0, "done")] * 3


def test_a_removal_cut_short_leaves_a_folder_the_next_start_reaps(example_repo, monkeypatch):
    """The app killed while it removes its sandbox folder: whenever that happens, the folder is
    gone or still has its owner file (what the next start's reaper goes by). The owner file used
    to go in directory order, sometimes first: the rest stayed in /tmp for good."""
    from dgym_tui.sandbox import local_sandbox

    class Killed(BaseException):
        pass

    real_unlink = os.unlink
    for allowed in range(0, 400, 9):
        sandbox = make_sandbox("local", example_repo)
        sandbox.start()
        tmp = sandbox.tmp
        calls = [0]

        def unlink(*args, **kwargs):
            calls[0] += 1
            if calls[0] > allowed:
                raise Killed()
            return real_unlink(*args, **kwargs)

        monkeypatch.setattr(os, "unlink", unlink)
        try:
            local_sandbox.remove_folder(tmp)
        except Killed:
            pass
        finally:
            monkeypatch.setattr(os, "unlink", real_unlink)
        assert not os.path.exists(tmp) or os.path.exists(os.path.join(tmp, local_sandbox.OWNER_FILE)), allowed
        sandbox.close()
        assert not os.path.exists(tmp)
        if calls[0] <= allowed:
            break  # the whole removal fitted: every cut before it was tried
    else:
        pytest.fail("the removal never completed within the cuts tried")
