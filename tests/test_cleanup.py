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

from conftest import docker_engine, is_running, make_sandbox

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


def _left_of(sandbox) -> list[str]:
    """What a closed sandbox may not leave: its copy in the temp folder, its container."""
    left = [e.name for e in os.scandir(tempfile.gettempdir()) if e.name.startswith(f"dgym-tui-{sandbox.session_id}-")]
    if sandbox.kind == "docker":
        left += [c.name for c in docker_engine().containers.list(all=True, filters={"name": f"dgym-tui-{sandbox.session_id}"})]
    return left


def test_a_session_closed_while_its_sandbox_starts_leaves_nothing(backend, example_repo):
    """The app quit (or a test's teardown) while the session was still starting: close() found
    no sandbox yet, or one not started, and the start went on to make the copy and run pdb in it,
    which nothing closed after (a busy CI run found a pdb left running at the suite's end). Here
    close() runs, whole, just before the sandbox starts: the race made certain."""
    import threading

    from dgym_tui.core.session import Session

    sandbox = make_sandbox(backend, example_repo)
    session = Session(str(example_repo), sandbox_obj=sandbox)
    start = sandbox.start

    def start_after_a_close():
        closer = threading.Thread(target=session.close)
        closer.start()
        closer.join(60)
        assert not closer.is_alive(), "close() hung"
        start()

    sandbox.start = start_after_a_close
    try:
        session.start()
        assert _left_of(sandbox) == [], "the closed session's sandbox was left"
        assert session.debugger is None or session.debugger.channel is None, "pdb runs in a closed session"
        assert session.state.program == "error" and "closed while its sandbox started" in (session.error or "")
    finally:
        session.close()
    assert _left_of(sandbox) == []


@pytest.mark.parametrize("kind", ["local", "bwrap"])
def test_a_sandbox_closed_while_pdb_is_being_spawned_kills_it(kind, example_repo, monkeypatch):
    """close() in another thread while spawn() forks pdb's process: close looked for processes
    working in the copy, then removed it, and one forked in between lived on (its pdb waiting for
    a handshake that never came). Here the fork waits until close is past its look (or waits for
    the fork): the race made certain. Now close waits for the fork and kills what it started."""
    import threading

    from dgym_tui.sandbox import local_sandbox
    from dgym_tui.sandbox.errors import SandboxError

    sandbox = make_sandbox(kind, example_repo)
    sandbox.start()
    may_fork = threading.Event()  # close() waits for the fork's lock, or is about to remove the copy

    class WatchedLock:  # the sandbox's start lock, saying when another thread waits for it
        def __init__(self, lock):
            self.lock = lock

        def __enter__(self):
            if not self.lock.acquire(blocking=False):
                may_fork.set()
                self.lock.acquire()
            return self

        def __exit__(self, *exc):
            self.lock.release()

    sandbox._starting = WatchedLock(sandbox._starting)
    real_spawn, real_remove = local_sandbox.pexpect.spawn, local_sandbox.remove_folder
    outcome: dict = {}

    def spawn_once_close_has_looked(*args, **kwargs):
        closer.start()
        assert may_fork.wait(60), "close() neither waited for the fork nor reached the removal"
        return real_spawn(*args, **kwargs)

    def spawn():
        try:
            outcome["child"] = sandbox.spawn(["sleep", "600"]).child
        except SandboxError as e:
            outcome["refused"] = e

    def remove_after_the_fork(path):
        may_fork.set()
        spawner.join(60)
        real_remove(path)

    monkeypatch.setattr(local_sandbox.pexpect, "spawn", spawn_once_close_has_looked)
    monkeypatch.setattr(local_sandbox, "remove_folder", remove_after_the_fork)
    closer = threading.Thread(target=sandbox.close)
    spawner = threading.Thread(target=spawn)
    child = None
    try:
        spawner.start()
        spawner.join(60)
        closer.join(60)
        assert not spawner.is_alive() and not closer.is_alive(), "spawn() or close() hung"
        child = outcome.get("child")
        assert child is None or not is_running(child.pid), "a process spawned while the sandbox closed lives on"
        monkeypatch.undo()
        with pytest.raises(SandboxError):
            sandbox.spawn(["sleep", "600"])  # after close: refused
    finally:
        if child is not None and is_running(child.pid):
            child.kill(9)
        sandbox.close()
    assert _left_of(sandbox) == []


@pytest.mark.parametrize("kind", ["local", "bwrap"])
def test_a_folder_removed_just_before_pdb_starts_is_an_error_not_a_second_app(kind, example_repo, monkeypatch):
    """The copy's folder removed between spawn's check and its fork (by the program itself, or a
    close in another thread): ptyprocess changed into it outside its error handling, so the
    forked child raised and carried on running this process's code, a second copy of the app
    (here: of the test run), while the first waited for it. Now: one SandboxGone, in this process."""
    from dgym_tui.sandbox import local_sandbox
    from dgym_tui.sandbox.errors import SandboxGone

    me = os.getpid()
    sandbox = make_sandbox(kind, example_repo)
    sandbox.start()
    real_spawn = local_sandbox.pexpect.spawn

    def remove_then_spawn(*args, **kwargs):  # every check passed; the folder goes before the fork
        subprocess.run(["rm", "-rf", sandbox.root], check=True)
        return real_spawn(*args, **kwargs)

    monkeypatch.setattr(local_sandbox.pexpect, "spawn", remove_then_spawn)
    try:
        try:
            sandbox.spawn(["sleep", "600"])
        except SandboxGone as e:
            assert "has disappeared" in str(e)
        except BaseException:
            if os.getpid() != me:
                os._exit(0)  # the second copy (the bug): end it here, the first one fails below
            raise
        else:
            pytest.fail("spawn in a folder that was removed reported no error")
        assert os.getpid() == me
    finally:
        monkeypatch.undo()
        sandbox.close()
    assert _left_of(sandbox) == []
