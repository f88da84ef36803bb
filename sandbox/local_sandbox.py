"""LocalSandbox: a temporary copy of the repo on this machine. NOT isolated.

Used where neither Docker nor bwrap can run. The code under debug cannot touch the user's
checkout by accident (it runs in a copy, with a scrubbed environment: no API keys, no host
variables beyond PATH, LANG and TERM, HOME inside the copy), but nothing stops it from reaching
the rest of the machine, the network, or dgym-tui's own environment through /proc. Every UI and
log says so. bwrap_sandbox.BwrapSandbox runs the same copy inside a bubblewrap jail.

The copy is a folder dgym-tui-<session>-* in the temp folder holding repo/, home/, box/ and
owner.json (which app made it); a start removes the folders of apps that died without cleaning up.
"""

from __future__ import annotations

import json
import os
import select
import shutil
import signal
import socket
import subprocess
import tarfile
import tempfile
import threading
import time

import pexpect

from dgym_tui.sandbox.base import (BOX_SOURCE, DEFAULT_OUTPUT_CAP, DEFAULT_TIMEOUT,
                                   READING_TERMINAL, Channel, DirEntry, ExecResult, OutputCap,
                                   Sandbox, describe_status, passed_env)
from dgym_tui.sandbox.box.dgym_procs import reading_terminal
from dgym_tui.sandbox.errors import SandboxError, SandboxGone
from dgym_tui.sandbox.interpreter import find_python, probe_python
from dgym_tui.sandbox.processes import (ProcessCap, kill_run, leftover_cgroups, remove_cgroup,
                                        run_processes)
from dgym_tui.sandbox.repo_copy import collect_files, write_tar

TEMP_PREFIX = "dgym-tui-"
OWNER_FILE = "owner.json"
DEFAULT_PIDS = 512
# One fork at a time in this process, across all sandboxes. A fork that runs Python's at-fork
# handlers (a preexec_fn, pexpect's forkpty) can give up the GIL inside them, and filelock's
# handlers (litellm, Ray and huggingface_hub import it) then make any other thread's forkpty fail:
# "RuntimeError: os.forkpty is unsafe while filelock is changing descriptor ownership". Batch
# trials in CI ended `error` that way, pdb never started.
FORKING = threading.Lock()


def _start_time(pid: int) -> str | None:
    """A process's start time (clock ticks since boot): with the pid, it names one process."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            data = fh.read()
        return data[data.rindex(b")") + 2:].split()[19].decode()
    except (OSError, IndexError, ValueError):
        return None


def remove_folder(path: str) -> None:
    """Remove a sandbox folder, its owner file last: a removal cut short (the app killed while
    closing) leaves a folder the next start still knows as a dead app's, and reaps. (Removed in
    directory order, the owner file could go first, and the rest was never reaped.)"""
    try:
        names = os.listdir(path)
    except OSError:
        return
    for name in names:
        if name == OWNER_FILE:
            continue
        full = os.path.join(path, name)
        if os.path.isdir(full) and not os.path.islink(full):
            shutil.rmtree(full, ignore_errors=True)
        else:
            try:
                os.unlink(full)
            except OSError:
                pass
    try:
        if os.listdir(path) == [OWNER_FILE]:  # else the next start tries again
            os.unlink(os.path.join(path, OWNER_FILE))
            os.rmdir(path)
    except OSError:
        pass


def reap_leftovers(temp_root: str | None = None) -> list[str]:
    """Remove the sandbox folders (and their processes and cgroups) of apps on this host that are
    gone. A folder whose owner still runs, or without an owner file, is left alone."""
    temp_root = temp_root or tempfile.gettempdir()
    host, removed = socket.gethostname(), []
    try:
        entries = [e for e in os.scandir(temp_root) if e.name.startswith(TEMP_PREFIX) and e.is_dir()]
    except OSError:
        return removed
    for entry in entries:
        try:
            with open(os.path.join(entry.path, OWNER_FILE)) as fh:
                owner = json.load(fh)
        except (OSError, ValueError):
            continue
        if owner.get("host") != host or _start_time(int(owner.get("pid", 0))) == owner.get("started"):
            continue  # another machine's, or its app is alive
        kill_run(-1, entry.path)  # processes still working in the folder
        for cgroup in leftover_cgroups({str(owner.get("session", ""))}):
            remove_cgroup(cgroup)
        remove_folder(entry.path)
        removed.append(entry.path)
    return removed


class LocalChannel(Channel):
    def __init__(self, child: pexpect.spawn, sandbox: "LocalSandbox"):
        self.child, self.sandbox = child, sandbox

    def kill(self) -> None:
        """The run and everything it started: its session, group and descendants (in bwrap, its
        PID namespace dies with it); where the sandbox has a cgroup, strays of it too."""
        kill_run(self.child.pid)
        self.sandbox._leaders.discard(self.child.pid)
        self.sandbox._kill_strays()

    def close(self) -> None:
        self.kill()
        # Killed and gone (a zombie at most): ptyprocess need not wait its 0.1 s for an exit.
        self.child.ptyproc.delayafterclose = 0
        try:
            self.child.close(force=True)
        except Exception:  # already reaped or pty gone: nothing left to release
            pass


class LocalSandbox(Sandbox):
    kind = "local"
    isolated = False

    def __init__(self, repo, python: str | None = None, pids: int = DEFAULT_PIDS, **kwargs):
        super().__init__(repo, **kwargs)
        self.python = find_python(self.repo, python)  # made absolute and real at start
        self.python_info = None
        self.pids = pids
        self.cap: ProcessCap | None = None
        self.tmp: str | None = None
        self.root = ""
        self.box_dir = ""
        self.home = ""
        self._leaders: set[int] = set()
        # Held while a process starts until it is in _leaders, and while strays are killed: a
        # process just forked (in the cgroup, not yet a leader) is no stray.
        self._starting = threading.Lock()

    @property
    def description(self) -> str:
        return f"local (NOT isolated), {self.python}"

    def start(self) -> None:
        reaper = threading.Thread(target=reap_leftovers, daemon=True, name="dgym-reap")
        reaper.start()
        probed: dict = {}

        def probe():
            try:
                probed["info"] = probe_python(self.python)
            except SandboxError as e:
                probed["error"] = e

        prober = threading.Thread(target=probe, daemon=True, name="dgym-probe")
        prober.start()
        files = collect_files(self.repo, self.size_limit)
        self.skipped = files.skipped
        self.tmp = tempfile.mkdtemp(prefix=f"{TEMP_PREFIX}{self.session_id}-")
        try:
            with open(os.path.join(self.tmp, OWNER_FILE), "w") as fh:
                json.dump({"pid": os.getpid(), "started": _start_time(os.getpid()),
                           "host": socket.gethostname(), "session": self.session_id}, fh)
            self.root = os.path.join(self.tmp, "repo")
            self.home = os.path.join(self.tmp, "home")
            self.box_dir = os.path.join(self.tmp, "box")
            os.makedirs(self.root)
            os.makedirs(self.home)
            shutil.copytree(BOX_SOURCE, self.box_dir, ignore=shutil.ignore_patterns("__pycache__"))
            self._copy_in(files)
            self.cap = ProcessCap(self.session_id, self.pids)
            self.init_repo()  # git needs no word from the interpreter: the probe runs meanwhile
            prober.join()
            if "error" in probed:
                raise probed["error"]
            self.python_info = probed["info"]
            self.python = self.python_info.executable
            reaper.join()
        except BaseException:
            self.close()
            raise

    def _copy_in(self, files) -> None:
        # Through a tar stream, like the Docker backend, so both copies are made by the same code.
        read_end, write_end = os.pipe()
        with os.fdopen(read_end, "rb") as reader:
            def produce():
                with os.fdopen(write_end, "wb") as writer:
                    write_tar(files, writer, uid=os.getuid())

            producer = threading.Thread(target=produce, daemon=True)
            producer.start()
            with tarfile.open(fileobj=reader, mode="r|") as tar:
                tar.extractall(self.root, filter="tar")
            producer.join()

    def _env(self, extra: dict[str, str] | None = None) -> dict[str, str]:
        # The project's interpreter's folder first, as an activated venv would have it.
        path = os.environ.get("PATH", "/usr/bin:/bin")
        env = {
            "PATH": f"{os.path.dirname(self.python)}:{path}",
            "HOME": self.home,
            "LANG": os.environ.get("LANG", "C.UTF-8"),
            "TERM": os.environ.get("TERM", "xterm-256color"),
            "GIT_CONFIG_NOSYSTEM": "1",
            "PYTHONDONTWRITEBYTECODE": "1",
            **passed_env(),
        }
        env.update(self.program_env)
        env.update(extra or {})
        return env

    def _command(self, argv: list[str], cwd: str, env: dict[str, str], tty: bool) -> tuple[list[str], dict | None]:
        """The command line that runs argv in the sandbox, and the environment to give it
        (None: the command line carries it). bwrap wraps argv in its jail here."""
        return argv, env

    def _preexec(self, tty: bool):
        cap = self.cap

        def preexec():
            if cap is not None:
                cap.preexec()
        return preexec

    def alive(self) -> bool:
        return bool(self.tmp) and os.path.isdir(self.root)

    def _check_alive(self) -> None:
        if not self.tmp:
            raise SandboxError("the sandbox is not started")
        if not self.alive():
            raise SandboxGone(f"the sandbox folder {self.root} has disappeared: restart the sandbox")

    def _cwd(self, cwd: str | None) -> str:
        return os.path.join(self.root, self.rel_path(cwd)) if cwd else self.root

    def exec(self, command, timeout: float = DEFAULT_TIMEOUT, cwd: str | None = None,
             output_cap: int = DEFAULT_OUTPUT_CAP) -> ExecResult:
        self._check_alive()
        argv = ["sh", "-c", command] if isinstance(command, str) else list(command)
        workdir = self._cwd(cwd)
        argv, env = self._command(argv, workdir, self._env(), tty=False)
        # Its own session, so a timeout can kill the command and everything it started.
        try:
            with self._starting, FORKING:
                self._check_alive()  # again, under the lock (see close)
                proc = subprocess.Popen(argv, cwd=workdir, env=env, stdin=subprocess.DEVNULL,
                                        stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                        start_new_session=True, preexec_fn=self._preexec(tty=False))
                self._leaders.add(proc.pid)
        except OSError as e:
            raise SandboxError(f"cannot run {argv[0]} in the sandbox: {e.strerror}") from None
        try:
            cap = OutputCap(output_cap)
            deadline = time.monotonic() + timeout
            timed_out = False
            fd = proc.stdout.fileno()
            while True:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    timed_out = True
                    break
                ready, _, _ = select.select([fd], [], [], remaining)
                if ready:
                    chunk = os.read(fd, 65536)
                    if not chunk:
                        break
                    cap.feed(chunk)
            if timed_out:
                kill_run(proc.pid)
            proc.stdout.close()
            code = proc.wait()
        finally:
            self._leaders.discard(proc.pid)
        return ExecResult(exit_code=None if timed_out else code, output=cap.text(),
                          timed_out=timed_out, truncated=cap.dropped > 0)

    def spawn(self, argv, cwd=None, env=None, rows: int = 40, cols: int = 200) -> LocalChannel:
        self._check_alive()
        workdir = self._cwd(cwd)
        argv, full_env = self._command(list(argv), workdir, self._env(env), tty=True)
        preexec = self._preexec(tty=True)

        def in_workdir():
            # The folder is changed here, not by pexpect's cwd=: ptyprocess changes it outside its
            # error handling, so a folder removed meanwhile (by the program itself, say) made the
            # forked child carry on as a second copy of this app. Here a failure is reported.
            os.chdir(workdir)
            preexec()

        try:
            with self._starting, FORKING:
                self._check_alive()  # again, under the lock: closed meanwhile, nothing is started
                child = pexpect.spawn(argv[0], list(argv[1:]), env=full_env,
                                      dimensions=(rows, cols), encoding="utf-8", codec_errors="replace",
                                      echo=False, preexec_fn=in_workdir)
                self._leaders.add(child.pid)
        except OSError as e:
            self._check_alive()  # the folder gone: say so
            raise SandboxError(f"cannot start {argv[0]} in the sandbox: {e}") from None
        child.delaybeforesend = None
        return LocalChannel(child, self)

    def explain_end(self, channel: LocalChannel) -> str | None:
        child = channel.child
        # Its output has ended; its exit status follows within moments (bounded: a process that
        # closed its terminal and lives on is not waited for).
        waiter = threading.Thread(target=child.wait, daemon=True)
        waiter.start()
        waiter.join(2.0)
        if child.isalive():
            return None
        signum, code = child.signalstatus, child.exitstatus
        if signum is None and code is not None and code > 128 and self.kind == "bwrap":
            signum, code = code - 128, None  # bwrap reports a signal as 128 + its number
        return describe_status(code, signum)

    def explain_stuck(self, channel: LocalChannel) -> str | None:
        if reading_terminal(run_processes(channel.child.pid)):
            return READING_TERMINAL
        return None

    def _kill_strays(self) -> None:
        """After a run is killed: processes of the sandbox's cgroup that belong to no other live
        run or exec (a run's children that left its session and were orphaned)."""
        if self.cap is None or self.cap.cgroup is None:
            return
        with self._starting:
            # The members first: one a live run forks after this is not in the list, and one
            # forked before is found among the run's descendants below.
            members = self.cap.members()
            keep: set[int] = set()
            for leader in list(self._leaders):
                keep.update(run_processes(leader))
            for pid in members:
                if pid not in keep:
                    try:
                        os.kill(pid, signal.SIGKILL)
                    except (ProcessLookupError, PermissionError):
                        pass

    # --- files, read and written by this process in the copy ----------------------------------

    def _host_path(self, path: str) -> str:
        """The copy's file for a repo path. Symlinks are followed only while they stay in the
        copy: the program may plant one pointing at the person's files."""
        self._check_alive()
        full = os.path.join(self.root, self.rel_path(path))
        real, root = os.path.realpath(full), os.path.realpath(self.root)
        if real != root and not real.startswith(root + os.sep):
            raise SandboxError(f"{path}: a symlink pointing outside the repository")
        return real

    def read_bytes(self, path: str) -> bytes:
        try:
            with open(self._host_path(path), "rb") as fh:
                return fh.read()
        except OSError as e:  # no such file, a folder, a loop of links...
            raise SandboxError(f"{path}: {(e.strerror or str(e)).lower()}") from None

    def write_bytes(self, path: str, data: bytes) -> None:
        full = self._host_path(path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        # O_NOFOLLOW: a link swapped in after the check above is refused, not written through.
        fd = os.open(full, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o644)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)

    def list_dir(self, path: str = ".") -> list[DirEntry]:
        try:
            with os.scandir(self._host_path(path)) as it:
                entries = [DirEntry(e.name, e.is_dir(follow_symlinks=False)) for e in it]
        except (FileNotFoundError, NotADirectoryError) as e:
            raise SandboxError(f"{path}: {e.strerror.lower()}") from None
        return sorted((e for e in entries if e.name != ".git"), key=lambda e: (not e.is_dir, e.name))

    def close(self) -> None:
        # Under the start lock: a spawn or exec under way (another thread: a session closed while
        # its pdb starts) finishes its fork first and its process is killed below; one after it
        # finds the sandbox closed. (Before, a process forked between the scan of the copy and its
        # removal lived on, its pdb waiting for a handshake that never came.)
        with self._starting:
            tmp, self.tmp = self.tmp, None
            leaders = list(self._leaders)
        for leader in leaders:
            kill_run(leader)
        cap, self.cap = self.cap, None
        if cap is not None:
            cap.close()
        if tmp:
            kill_run(-1, tmp)  # anything still working in the copy
            remove_folder(tmp)
