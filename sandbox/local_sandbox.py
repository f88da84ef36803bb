"""LocalSandbox: a temporary copy of the repo on this machine. NOT isolated.

Used where no Docker engine answers. The code under debug cannot touch the user's checkout by
accident (it runs in a copy, with a scrubbed environment: no API keys, no host variables beyond
PATH, LANG and TERM, HOME inside the copy), but nothing stops it from reaching the rest of the
machine. Every UI and log says so.
"""

from __future__ import annotations

import os
import select
import shutil
import signal
import subprocess
import sys
import tarfile
import tempfile
import threading
import time

import pexpect

from dgym_tui.sandbox.base import (BOX_SOURCE, DEFAULT_OUTPUT_CAP, DEFAULT_TIMEOUT, Channel,
                                   DirEntry, ExecResult, OutputCap, Sandbox)
from dgym_tui.sandbox.errors import SandboxError, SandboxGone
from dgym_tui.sandbox.repo_copy import collect_files, write_tar


class LocalChannel(Channel):
    def __init__(self, child: pexpect.spawn):
        self.child = child

    def kill(self) -> None:
        try:
            os.killpg(self.child.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass

    def close(self) -> None:
        self.kill()
        try:
            self.child.close(force=True)
        except Exception:  # already reaped or pty gone: nothing left to release
            pass


class LocalSandbox(Sandbox):
    kind = "local"
    isolated = False

    def __init__(self, repo, python: str | None = None, **kwargs):
        super().__init__(repo, **kwargs)
        self.python = python or sys.executable
        self.tmp: str | None = None
        self.root = ""
        self.box_dir = ""
        self.home = ""

    @property
    def description(self) -> str:
        return "local (NOT isolated)"

    def start(self) -> None:
        files = collect_files(self.repo, self.size_limit)
        self.skipped = files.skipped
        self.tmp = tempfile.mkdtemp(prefix=f"dgym-tui-{self.session_id}-")
        self.root = os.path.join(self.tmp, "repo")
        self.home = os.path.join(self.tmp, "home")
        self.box_dir = os.path.join(self.tmp, "box")
        os.makedirs(self.root)
        os.makedirs(self.home)
        shutil.copytree(BOX_SOURCE, self.box_dir, ignore=shutil.ignore_patterns("__pycache__"))
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
        self.init_repo()

    def _env(self, extra: dict[str, str] | None = None) -> dict[str, str]:
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": self.home,
            "LANG": os.environ.get("LANG", "C.UTF-8"),
            "TERM": os.environ.get("TERM", "xterm-256color"),
            "GIT_CONFIG_NOSYSTEM": "1",
            "PYTHONDONTWRITEBYTECODE": "1",
        }
        env.update(extra or {})
        return env

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
        # Its own session, so a timeout can kill the command and everything it started.
        proc = subprocess.Popen(argv, cwd=self._cwd(cwd), env=self._env(), stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
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
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        proc.stdout.close()
        code = proc.wait()
        return ExecResult(exit_code=None if timed_out else code, output=cap.text(),
                          timed_out=timed_out, truncated=cap.dropped > 0)

    def spawn(self, argv, cwd=None, env=None, rows: int = 40, cols: int = 200) -> LocalChannel:
        self._check_alive()
        child = pexpect.spawn(argv[0], list(argv[1:]), cwd=self._cwd(cwd), env=self._env(env),
                              dimensions=(rows, cols), encoding="utf-8", codec_errors="replace",
                              echo=False)
        child.delaybeforesend = None
        return LocalChannel(child)

    def _host_path(self, path: str) -> str:
        self._check_alive()
        return os.path.join(self.root, self.rel_path(path))

    def read_bytes(self, path: str) -> bytes:
        try:
            with open(self._host_path(path), "rb") as fh:
                return fh.read()
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError) as e:
            raise SandboxError(f"{path}: {e.strerror.lower()}") from None

    def write_bytes(self, path: str, data: bytes) -> None:
        full = self._host_path(path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "wb") as fh:
            fh.write(data)

    def list_dir(self, path: str = ".") -> list[DirEntry]:
        try:
            with os.scandir(self._host_path(path)) as it:
                entries = [DirEntry(e.name, e.is_dir(follow_symlinks=False)) for e in it]
        except (FileNotFoundError, NotADirectoryError) as e:
            raise SandboxError(f"{path}: {e.strerror.lower()}") from None
        return sorted((e for e in entries if e.name != ".git"), key=lambda e: (not e.is_dir, e.name))

    def close(self) -> None:
        if self.tmp:
            shutil.rmtree(self.tmp, ignore_errors=True)
            self.tmp = None
