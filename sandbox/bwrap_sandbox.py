"""BwrapSandbox: the local copy, run inside a bubblewrap jail. Isolated, without a Docker engine.

Every command (each exec, each pdb run) gets a fresh `bwrap`: its own PID namespace (no other
process is visible in /proc, and the run dies whole with its first process), no network (its own
empty network namespace), no host environment (--clearenv, then the scrubbed one), every
capability dropped, the parent's death killing it. The file system it sees:

  /usr, /bin, /lib*, /sbin        read-only (as on the host)
  /etc                            read-only, only what programs need (no shadow, no keys)
  the project's interpreter       read-only: its prefixes and the folders on its sys.path
  /tmp                            private, in the sandbox folder, the same for every command:
                                  a reproduction written by one (`/tmp/repro.py`) runs in the next
  the repo copy                   read-write: the only writable place on disk
  the private home                read-write, inside the sandbox folder
  the in-box helpers (box/)       read-only, so the program cannot rewrite the debugger

The person's checkout is never visible (a repo .venv is, read-only: it is the interpreter).
"""

from __future__ import annotations

import functools
import os
import shutil
import signal
import subprocess

from dgym_tui.sandbox.errors import SandboxError
from dgym_tui.sandbox.local_sandbox import LocalSandbox

SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
ETC_ENTRIES = ("passwd", "group", "nsswitch.conf", "hosts", "host.conf", "localtime", "timezone",
               "ld.so.cache", "ld.so.conf", "ld.so.conf.d", "alternatives", "mime.types", "ssl",
               "ca-certificates", "os-release", "debian_version", "fonts", "matplotlibrc")
NO_BWRAP_FIX = "install bubblewrap (apt-get install bubblewrap) or use --sandbox docker/local"


@functools.lru_cache(maxsize=1)
def bwrap_problem() -> str | None:
    """Why bwrap cannot run a jail here (None: it can). Checked once, by running one."""
    if shutil.which("bwrap") is None:
        return f"bwrap is not installed: {NO_BWRAP_FIX}"
    try:
        probe = subprocess.run(
            ["bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--unshare-all",
             "--die-with-parent", "--cap-drop", "ALL", "--", "env", "--default-signal=INT", "true"],
            capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"bwrap does not run here ({e}): {NO_BWRAP_FIX}"
    if probe.returncode != 0:
        why = (probe.stderr.strip().splitlines() or ["no message"])[-1]
        if "user namespace" in why or "Operation not permitted" in why:
            why += " (user namespaces are disabled for unprivileged users?)"
        return f"bwrap cannot make a sandbox here: {why}"
    return None


def _inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


class BwrapSandbox(LocalSandbox):
    kind = "bwrap"
    isolated = True

    @property
    def description(self) -> str:
        return f"bwrap, {self.python}"

    def start(self) -> None:
        problem = bwrap_problem()
        if problem:
            raise SandboxError(problem)
        super().start()

    def _interpreter_binds(self) -> list[str]:
        """Read-only binds for the project's Python: its prefixes and sys.path folders, minus
        anything inside the person's checkout (except its venv) and what is bound anyway."""
        info = self.python_info
        if info is None:  # during start: the probe has not answered yet
            return []
        repo = os.path.realpath(self.repo)
        prefixes = [os.path.realpath(p) for p in info.prefixes]
        wanted: list[str] = []
        for folder in [*info.prefixes, *prefixes, *info.path, os.path.dirname(self.python)]:
            real = os.path.realpath(folder)
            for p in {folder, real}:
                if not os.path.exists(p) or any(_inside(p, d) for d in (*SYSTEM_DIRS, "/etc", self.tmp)):
                    continue
                if _inside(p, repo) and not any(_inside(p, pre) for pre in prefixes):
                    continue  # never the person's checkout
                wanted.append(p)
        binds: list[str] = []
        for p in sorted(set(wanted)):
            if not any(_inside(p, q) for q in wanted if q != p):
                binds += ["--ro-bind", p, p]
        return binds

    def _command(self, argv, cwd, env, tty):
        args = ["bwrap", "--unshare-all", "--die-with-parent", "--cap-drop", "ALL", "--clearenv"]
        for key, value in env.items():
            args += ["--setenv", key, value]
        for d in SYSTEM_DIRS:
            if os.path.islink(d):
                args += ["--symlink", os.readlink(d), d]
            elif os.path.isdir(d):
                args += ["--ro-bind", d, d]
        for name in ETC_ENTRIES:
            args += ["--ro-bind-try", f"/etc/{name}", f"/etc/{name}"]
        for entry in _etc_python():
            args += ["--ro-bind", entry, entry]
        jail_tmp = os.path.join(self.tmp, "tmp")
        os.makedirs(jail_tmp, mode=0o700, exist_ok=True)
        args += ["--proc", "/proc", "--dev", "/dev", "--bind", jail_tmp, "/tmp"]
        args += self._interpreter_binds()
        args += ["--bind", self.root, self.root, "--bind", self.home, self.home,
                 "--ro-bind", self.box_dir, self.box_dir, "--chdir", cwd]
        if not tty:
            # Off the caller's terminal. A run on a pty keeps its pty: that is the app's own
            # fresh one (pexpect), never the person's terminal, and Ctrl-C must reach it.
            args.append("--new-session")
        if self.cap is not None and self.cap.kind == "rlimit" and shutil.which("prlimit"):
            # Not root, so no cgroup: cap the processes inside the jail's user namespace.
            argv = ["prlimit", f"--nproc={self.pids}:{self.pids}", "--", *argv]
        # bwrap itself ignores SIGINT (see _preexec); the program gets the default back.
        # bwrap starts with the scrubbed environment too: its first process stays in the jail as
        # PID 1, and its /proc/1/environ must not show the app's (API keys).
        # bwrap by absolute path: the scrubbed PATH need not hold it.
        return [shutil.which("bwrap") or "bwrap", *args[1:], "--", "env", "--default-signal=INT", *argv], env

    def _preexec(self, tty: bool):
        cap = self.cap

        def preexec():
            if cap is not None:
                cap.preexec(rlimit=False)
            if tty:
                # Ctrl-C on the pty signals its whole foreground group, bwrap included; bwrap
                # would die of it and take the program along.
                signal.signal(signal.SIGINT, signal.SIG_IGN)
        return preexec


@functools.lru_cache(maxsize=1)
def _etc_python() -> list[str]:
    """Debian's /etc/python3.X folders (sitecustomize), bound read-only where they exist."""
    try:
        return sorted(e.path for e in os.scandir("/etc") if e.name.startswith("python"))
    except OSError:
        return []
