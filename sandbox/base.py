"""The sandbox protocol: what every backend offers, and what is built once on top of it.

A backend implements starting, exec, spawn, file access and closing; checkpoints, diffs and
restores are git commands run through exec in the sandbox's own repository, so they behave the
same everywhere.
"""

from __future__ import annotations

import os
import posixpath
import re
import shlex
import threading
import uuid
from abc import ABC, abstractmethod
from collections import deque
from dataclasses import dataclass
from pathlib import Path

from dgym_tui.sandbox.errors import SandboxError
from dgym_tui.sandbox.repo_copy import DEFAULT_SIZE_LIMIT

DEFAULT_OUTPUT_CAP = 1024 * 1024
DEFAULT_TIMEOUT = 60.0
BOX_SOURCE = Path(__file__).resolve().parent / "box"

# Written into the sandbox repo's .git/info/exclude: run-time litter never becomes part of a diff.
SANDBOX_EXCLUDES = "__pycache__/\n*.pyc\n.pytest_cache/\n"
GIT_IDENTITY = ["-c", "user.name=dgym-tui", "-c", "user.email=dgym-tui@localhost",
                "-c", "commit.gpgsign=false", "-c", "core.autocrlf=false"]


def _commit_id(output: str) -> str:
    """The last line of git's output that is a commit id ("" when there is none)."""
    ids = [line.strip() for line in output.splitlines() if re.fullmatch(r"[0-9a-f]{40,64}", line.strip())]
    return ids[-1] if ids else ""


# pytest's switch for third-party plugins, as the person set it: the run in the sandbox loads the
# plugins their own `pytest` would. Nothing else of the host's environment passes (API keys).
PASSED_ENV = ("PYTEST_DISABLE_PLUGIN_AUTOLOAD",)


def passed_env() -> dict[str, str]:
    return {name: os.environ[name] for name in PASSED_ENV if name in os.environ}


@dataclass
class ExecResult:
    exit_code: int | None
    output: str
    timed_out: bool = False
    truncated: bool = False

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not self.timed_out


class OutputCap:
    """Keeps the first and the last `limit // 2` units (bytes, or characters of text) of a
    stream and counts what is cut between them: a flood of output costs no memory, and what
    matters most often comes last (a traceback after megabytes of logs). text() marks the cut."""

    def __init__(self, limit: int):
        self.limit = limit
        self.head_limit = limit // 2
        self.tail_limit = limit - self.head_limit
        self.head: list = []
        self.head_len = 0
        self.tail: deque = deque()
        self.tail_len = 0
        self.dropped = 0
        self.unit = "characters"

    def feed(self, chunk: bytes | str) -> None:
        if not chunk:
            return
        if isinstance(chunk, (bytes, bytearray)):
            self.unit = "bytes"
        room = self.head_limit - self.head_len
        if room > 0:
            self.head.append(chunk[:room])
            self.head_len += min(room, len(chunk))
            chunk = chunk[room:]
            if not chunk:
                return
        self.tail.append(chunk)
        self.tail_len += len(chunk)
        while self.tail_len - len(self.tail[0]) >= self.tail_limit:
            gone = self.tail.popleft()
            self.tail_len -= len(gone)
            self.dropped += len(gone)
        excess = self.tail_len - self.tail_limit
        if excess > 0:
            self.tail[0] = self.tail[0][excess:]
            self.tail_len -= excess
            self.dropped += excess

    @staticmethod
    def _join(parts) -> str:
        if parts and isinstance(parts[0], (bytes, bytearray)):
            return b"".join(parts).decode("utf-8", errors="replace")
        return "".join(parts)

    def text(self) -> str:
        head, tail = self._join(self.head), self._join(list(self.tail))
        if not self.dropped:
            return head + tail
        cut = f"\n[... output truncated: {self.dropped} {self.unit} cut here; the start and the end are kept ...]\n"
        return head + cut + tail


def describe_status(code: int | None = None, signum: int | None = None) -> str:
    """How a run ended that did not say so itself: by a signal, or an exit code pdb never saw."""
    import signal

    if signum is not None:
        try:
            name = signal.Signals(signum).name
        except ValueError:
            name = f"signal {signum}"
        if signum == signal.SIGKILL:
            return ("the program was killed (SIGKILL): from outside the sandbox, or by the kernel "
                    "when the machine ran out of memory (see dmesg)")
        if signum == signal.SIGSEGV:
            return "the program crashed (SIGSEGV, in native code)"
        return f"the program was killed by {name}"
    if code is not None:
        return (f"the program ended with exit code {code} before pdb could report it "
                "(os._exit, or the interpreter crashed)")
    return "the pdb process ended unexpectedly (killed, or the sandbox stopped)"


READING_TERMINAL = ("the program is waiting to read the terminal (/dev/tty, as getpass does), which "
                    "dgym-tui keeps for pdb: give it its input another way (arguments, a file)")


@dataclass
class DirEntry:
    name: str
    is_dir: bool


class Channel(ABC):
    """An interactive process on a pty inside the sandbox. `child` is driven with pexpect."""

    child: object  # pexpect.spawn or pexpect.fdpexpect.fdspawn

    def interrupt(self) -> None:
        """Ctrl-C through the terminal: SIGINT to the foreground process group, as a person would."""
        self.child.send("\x03")

    @abstractmethod
    def kill(self) -> None:
        """Kill the process and its whole process group at once."""

    @abstractmethod
    def close(self) -> None:
        """Kill if still running and release the pty."""


class Sandbox(ABC):
    """A copy of a repository and a place to run its code. Use as a context manager."""

    kind: str  # "docker" or "local"
    isolated: bool
    root: str  # the repo copy's path inside the sandbox
    box_dir: str  # where the in-box helpers (sandbox/box) were copied
    python: str = "python3"

    def __init__(self, repo, size_limit: int = DEFAULT_SIZE_LIMIT):
        self.repo = Path(repo)
        self.size_limit = size_limit
        self.session_id = uuid.uuid4().hex[:12]
        self.baseline: str | None = None
        self.skipped: list[str] = []  # what the copy left out, for the person to see
        # Environment of every command run in the sandbox (the program, the tests, the agent's
        # shell): the session sets PYTHONPATH so the repo's own code is imported first.
        self.program_env: dict[str, str] = {}
        self.missing_modules_said: set[str] = set()  # "the sandbox lacks X" is said once per module
        # git commands share one index: the UI's "what changed" and a checkpoint must not overlap.
        self._git_lock = threading.RLock()

    # --- what a backend provides -------------------------------------------------------------

    @abstractmethod
    def start(self) -> None:
        """Create the sandbox, copy the repo and the box helpers in, commit the baseline."""

    @abstractmethod
    def exec(self, command: str | list[str], timeout: float = DEFAULT_TIMEOUT,
             cwd: str | None = None, output_cap: int = DEFAULT_OUTPUT_CAP) -> ExecResult:
        """Run a command (a string goes through sh -c) and wait; a timeout kills its process group."""

    @abstractmethod
    def spawn(self, argv: list[str], cwd: str | None = None, env: dict[str, str] | None = None,
              rows: int = 40, cols: int = 200) -> Channel:
        """Start argv on a pty and return a channel pexpect can drive."""

    @abstractmethod
    def read_bytes(self, path: str) -> bytes: ...

    @abstractmethod
    def write_bytes(self, path: str, data: bytes) -> None: ...

    @abstractmethod
    def list_dir(self, path: str = ".") -> list[DirEntry]: ...

    @abstractmethod
    def alive(self) -> bool:
        """Whether the sandbox still exists (a container killed from outside is not)."""

    @abstractmethod
    def close(self) -> None:
        """Remove everything the sandbox made. Safe to call twice."""

    @property
    @abstractmethod
    def description(self) -> str:
        """One line for status bars and logs, e.g. 'docker dgym-tui-sandbox:latest'."""

    def missing_module_fix(self, module: str) -> str:
        """How to give the program a module it cannot import (one line). Here the project's
        interpreter runs the code: install the package into it, or choose another."""
        return (f"install the package that provides it into {self.python} ({self.python} -m pip install ...), "
                "or give an interpreter that has it with --python")

    def explain_end(self, channel: Channel) -> str | None:
        """Why a run ended without saying so (no exit marker from the shim): one line naming the
        cause and, where there is one, the fix. None when this sandbox cannot tell."""
        return None

    def explain_stuck(self, channel: Channel) -> str | None:
        """Why a run that ignores Ctrl-C is stuck, when this sandbox can tell (else None)."""
        return None

    def prepare(self, progress=None) -> list[tuple[str, str]]:
        """What a backend does before start() that can take long and has something to say (an
        image to build), with progress lines; returns notices for the person: (level, message).
        Nothing by default."""
        return []

    # --- built on top ------------------------------------------------------------------------

    def restart(self) -> None:
        """Start afresh from the user's repo, after the sandbox died or to reset it."""
        self.close()
        self.start()

    def python_version(self) -> tuple[int, ...]:
        """The version of the Python the repo's code runs on here (() when it cannot say)."""
        info = getattr(self, "python_info", None)
        if info is not None and info.executable == self.python:  # asked at start
            return tuple(info.version)
        known = getattr(self, "_python_version", None)
        if known is not None and known[0] == self.python:  # an environment's check asked already
            return known[1]
        probe = self.exec([self.python, "-c", "import sys; print('%d.%d.%d' % sys.version_info[:3])"], timeout=60)
        last = probe.output.strip().splitlines()[-1] if probe.ok and probe.output.strip() else ""
        try:
            version = tuple(int(x) for x in last.split("."))
        except ValueError:
            return ()
        self._python_version = (self.python, version)
        return version

    def read_text(self, path: str) -> str:
        return self.read_bytes(path).decode("utf-8", errors="replace")

    def write_text(self, path: str, text: str) -> None:
        self.write_bytes(path, text.encode("utf-8"))

    def rel_path(self, path: str) -> str:
        """A repo-relative path, refusing anything that would leave the repo copy."""
        norm = posixpath.normpath(str(path).replace("\\", "/"))
        if norm.startswith(self.root.rstrip("/") + "/"):
            norm = norm[len(self.root.rstrip("/")) + 1:]
        if norm.startswith("/") or norm == ".." or norm.startswith("../"):
            raise SandboxError(f"{path}: outside the repository")
        return norm

    def git(self, *args: str, timeout: float = DEFAULT_TIMEOUT) -> str:
        with self._git_lock:
            result = self.exec(["git", *GIT_IDENTITY, *args], timeout=timeout)
        if not result.ok:
            raise SandboxError(f"git {args[0]} failed in the sandbox: {result.output.strip()[-300:]}")
        return result.output

    def init_repo(self) -> None:
        """Make the copy its own git repository with a baseline commit (the undo floor)."""
        script = (
            "git init -q -b main . && "
            f"printf %s {shlex.quote(SANDBOX_EXCLUDES)} >> .git/info/exclude && "
            f"git {' '.join(GIT_IDENTITY)} add -A && "
            f"git {' '.join(GIT_IDENTITY)} commit -q --allow-empty --no-verify -m baseline && "
            "git rev-parse HEAD"
        )
        result = self.exec(script, timeout=300)
        if not result.ok:
            raise SandboxError(f"could not commit the baseline in the sandbox: {result.output.strip()[-300:]}")
        self.baseline = _commit_id(result.output)
        if not self.baseline:
            raise SandboxError("could not read the baseline commit in the sandbox: git rev-parse printed no id")

    def checkpoint(self, message: str) -> str:
        """Commit the current state of the copy; returns the commit id."""
        with self._git_lock:
            self.git("add", "-A")
            self.git("commit", "-q", "--allow-empty", "--no-verify", "-m", message)
            return self.git("rev-parse", "HEAD").strip()

    def diff(self, from_id: str | None = None, to_id: str | None = None) -> str:
        """Unified diff (new and deleted files included) from a commit (default: the baseline) to
        another commit or, when to_id is None, to the working tree as it is now."""
        base = from_id or self.baseline or "HEAD"
        if to_id is None:
            with self._git_lock:
                self.git("add", "-A")  # so new files show; the index is the sandbox's own
                return self.git("diff", "--cached", "--binary", "--no-color", "--no-ext-diff", base)
        return self.git("diff", "--binary", "--no-color", "--no-ext-diff", base, to_id)

    def restore(self, commit_id: str) -> None:
        """Put the working tree back exactly as it was at commit_id."""
        with self._git_lock:
            self.git("reset", "-q", "--hard", commit_id)
            self.git("clean", "-q", "-fd")

    def changed_files(self, from_id: str | None = None) -> list[str]:
        """Files that differ from a commit (default: the baseline), new and deleted included."""
        with self._git_lock:
            self.git("add", "-A")
            out = self.git("diff", "--cached", "--name-only", "-z", from_id or self.baseline or "HEAD")
        return [p for p in out.split("\0") if p]

    def changed_status(self, from_id: str | None = None) -> dict[str, str]:
        """Like changed_files, with git's status letter for each: A (added), M, D (deleted)."""
        with self._git_lock:
            self.git("add", "-A")
            out = self.git("diff", "--cached", "--name-status", "--no-renames", "-z",
                           from_id or self.baseline or "HEAD")
        parts = [p for p in out.split("\0") if p]
        return {path: status[0] for status, path in zip(parts[::2], parts[1::2])}

    def list_files(self) -> list[str]:
        """Every file of the copy (what .gitignore does not exclude), repo-relative."""
        out = self.git("ls-files", "-z", "-co", "--exclude-standard")
        return sorted(p for p in out.split("\0") if p)

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.close()
