"""The session file: the event stream as JSON lines, written as it happens.

Line 1 is a header (what was debugged, where, with what); every later line is one event
(`Event.to_dict()`). A writer thread appends, flushing and fsyncing at least every 100 ms and at
once after every decision on an agent's call, so a session killed with SIGKILL leaves a file
readable up to its last event; a torn last line is skipped with a warning when read. The file
grows linearly: file contents and agent messages are in the stream once each (by hash / by
index), and streamed reply pieces (`model_delta`) are not kept — the reply is.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import queue
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from dgym_tui import __version__
from dgym_tui.core.events import SCHEMA, Event

FORMAT = "dgym-tui-session"
FLUSH_EVERY = 0.1                # seconds
SKIPPED_KINDS = {"model_delta"}  # not needed to rebuild anything
URGENT_KINDS = {"decision", "checkpoint", "restored", "agent_status"}  # fsynced at once


class SessionFileError(Exception):
    """The file cannot be read as a session; str() says why in one line."""


@dataclass
class SessionFile:
    header: dict
    events: list[Event]
    warnings: list[str] = field(default_factory=list)
    path: str = ""
    complete: bool = True  # False: only its beginning was read (see read_session's until)


def sessions_dir(repo: str | None = None) -> Path:
    """Where sessions are kept: the user data folder, one folder per repository."""
    override = os.environ.get("DGYM_TUI_DATA_DIR")
    if override:
        base = Path(override)
    else:
        from platformdirs import user_data_dir

        base = Path(user_data_dir("dgym-tui"))
    base = base / "sessions"
    if repo is None:
        return base
    resolved = str(Path(repo).resolve())
    return base / f"{Path(resolved).name}-{hashlib.sha256(resolved.encode()).hexdigest()[:8]}"


def repo_hashes(repo: str) -> dict[str, str]:
    """sha256 of every file that goes into a sandbox, by repo-relative path (what `apply` checks
    the user's repo against)."""
    from dgym_tui.sandbox.repo_copy import collect_files

    files = collect_files(repo)
    hashes = {}
    for rel in files.files:
        h = hashlib.sha256()
        with open(files.root / rel, "rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                h.update(block)
        hashes[rel] = h.hexdigest()
    return hashes


class SessionWriter:
    """Appends a session's events to its file from a thread of its own."""

    def __init__(self, path: Path, header: dict | None, session=None, replay: bool = True):
        """header None: append to an existing session file (a resume), after its last whole line."""
        self.path = Path(path)
        self.header = header
        self.error: str | None = None     # a write failed (disk full...): the app says so, goes on
        self._on_error = None
        self._lock = threading.Lock()
        self._queue: queue.Queue = queue.Queue()
        self._closed = threading.Event()
        self._thread = threading.Thread(target=self._write_loop, name="dgym-session-file", daemon=True)
        self.after = 0  # events up to this seq are in the file already
        self._unsubscribe = (session.events.subscribe(self._queue.put, replay=replay)
                             if session is not None else None)
        self._thread.start()

    @classmethod
    def open(cls, path: str | Path | None, session, **extra) -> SessionWriter:
        """A writer for this session (a new file in the data folder unless a path is given);
        it writes the events so far, then every new one."""
        if path is None:
            folder = sessions_dir(session.repo)
            path = folder / (time.strftime("%Y%m%d-%H%M%S") + f"-{os.getpid()}.jsonl")
        header = {"format": FORMAT, "schema": SCHEMA, "version": __version__, "created": time.time(),
                  "repo": str(Path(session.repo).resolve()), "repo_name": session.repo_name,
                  "sandbox": session.sandbox_kind, "image": session.image,
                  "entrypoint": session.entrypoint_spec, **extra}
        return cls(Path(path), header, session)

    @property
    def on_error(self):
        return self._on_error

    @on_error.setter
    def on_error(self, callback) -> None:
        """Called once with the message of the first failed write (any thread); at once if it
        has already failed."""
        with self._lock:
            self._on_error = callback
            error = self.error
        if error is not None and callback is not None:
            callback(error)

    @classmethod
    def append(cls, path: str | Path, session) -> SessionWriter:
        """Go on writing a session file (a resumed session): a line cut short by a kill is
        dropped first, so what follows starts on a line of its own."""
        path = Path(path)
        with open(path, "rb+") as fh:
            data = fh.read()
            if data and not data.endswith(b"\n"):
                fh.truncate(data.rfind(b"\n") + 1)
                data = data[:data.rfind(b"\n") + 1]
        last = 0
        for line in reversed(data.splitlines()[1:]):
            try:
                last = int(json.loads(line)["seq"])
                break
            except (ValueError, KeyError, TypeError):
                continue
        writer = cls(path, None, None)
        writer.after = last  # the session's past is in the file already: only what follows
        writer._unsubscribe = session.events.subscribe(writer._queue.put)
        return writer

    def add(self, event: Event) -> None:
        self._queue.put(event)

    def close(self, timeout: float = 10.0) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()
        self._closed.set()
        self._queue.put(None)
        self._thread.join(timeout)

    def _write_loop(self) -> None:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            handle = open(self.path, "a", encoding="utf-8")
        except OSError as e:
            self._fail(f"cannot write the session file {self.path}: {e.strerror or e}")
            return
        with _closed_quietly(handle):
            try:
                if self.header is not None and "repo_hashes" not in self.header and self.header.get("repo"):
                    try:
                        self.header["repo_hashes"] = repo_hashes(self.header["repo"])
                    except Exception as e:  # a repo that cannot be read: apply will say so later
                        self.header["repo_hashes"] = {}
                        self.header["repo_hashes_error"] = str(e)
                if handle.tell() == 0 and self.header is not None:
                    self._write(handle, self.header)
                    self._sync(handle)
            except OSError as e:
                self._fail(f"cannot write the session file {self.path}: {e.strerror or e}")
                return
            last_sync = time.monotonic()
            dirty = False
            while True:
                timeout = max(0.0, FLUSH_EVERY - (time.monotonic() - last_sync)) if dirty else None
                try:
                    event = self._queue.get(timeout=timeout)
                except queue.Empty:
                    event = False  # time to sync
                if event is None:
                    break
                try:
                    urgent = False
                    if (event is not False and event.kind not in SKIPPED_KINDS and event.seq > self.after
                            and self.error is None):
                        self._write(handle, event.to_dict())
                        dirty = True
                        urgent = event.kind in URGENT_KINDS
                    if dirty and (urgent or time.monotonic() - last_sync >= FLUSH_EVERY):
                        self._sync(handle)
                        last_sync, dirty = time.monotonic(), False
                except OSError as e:
                    self._fail(f"the session file {self.path} could not be written ({e.strerror or e}): "
                               "the session goes on, but is no longer saved")
            if dirty and self.error is None:
                try:
                    self._sync(handle)
                except OSError as e:
                    self._fail(f"the session file {self.path} could not be written: {e.strerror or e}")

    @staticmethod
    def _write(handle, obj: dict) -> None:
        handle.write(json.dumps(obj, ensure_ascii=False, separators=(",", ":")) + "\n")

    @staticmethod
    def _sync(handle) -> None:
        handle.flush()
        os.fsync(handle.fileno())

    def _fail(self, message: str) -> None:
        with self._lock:
            if self.error is not None:
                return
            self.error = message
            callback = self._on_error
        if callback is not None:
            callback(message)


@contextlib.contextmanager
def _closed_quietly(handle):
    """Close the file at the end; on a full disk closing fails too (the buffer cannot be
    flushed), and that failure has been said already."""
    try:
        yield handle
    finally:
        try:
            handle.close()
        except OSError:
            pass


def changed_since(header: dict) -> list[str]:
    """Files of the recorded repo that differ now from the session's start (changed, new or
    gone); raises SessionFileError when the repo is not there any more."""
    repo = header.get("repo") or ""
    if not Path(repo).is_dir():
        raise SessionFileError(f"the repository {repo} is not there any more")
    then, now = header.get("repo_hashes") or {}, repo_hashes(repo)
    return sorted(p for p in set(then) | set(now) if then.get(p) != now.get(p))


def _past(events: list[Event], kind: str) -> bool:
    """Whether the events hold one of `kind` and the end of the call it came in (whose files'
    texts come after it), so a view of that moment has what it shows."""
    for i, event in enumerate(events):
        if event.kind == kind:
            return any(e.kind == "call_finished" for e in events[i + 1:])
    return False


def read_session(path: str | Path, until: str | None = None) -> SessionFile:
    """Header and events; a torn last line is skipped with a warning, anything else that is not
    a session is a SessionFileError with one line saying why. until: stop reading after the
    first event of that kind (`complete` is then False), for a first look at a big file."""
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as e:
        raise SessionFileError(f"cannot read {path}: {e.strerror or e}") from None
    if not raw.strip():
        raise SessionFileError(f"{path} is empty: not a dgym-tui session")
    lines = raw.split(b"\n")
    torn = not raw.endswith(b"\n")
    warnings: list[str] = []
    try:
        header = json.loads(lines[0])
    except ValueError:
        raise SessionFileError(f"{path} is not a dgym-tui session (its first line is not JSON)") from None
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise SessionFileError(f"{path} is not a dgym-tui session (no session header)")
    if header.get("schema") != SCHEMA:
        raise SessionFileError(f"{path} uses session schema {header.get('schema')!r}; this dgym-tui "
                               f"({__version__}) reads schema {SCHEMA}")
    events: list[Event] = []
    body = lines[1:]
    for number, line in enumerate(body, start=2):
        if not line.strip():
            continue
        last = number == len(lines)
        try:
            events.append(Event.from_dict(json.loads(line)))
        except (ValueError, KeyError, TypeError) as e:
            if last and torn:
                warnings.append(f"line {number} was cut short (the session ended mid-write): skipped")
                continue
            raise SessionFileError(f"{path}: line {number} is not a valid event ({e})") from None
        if until is not None and number < len(lines) - 1 and _past(events, until):
            return SessionFile(header=header, events=events, warnings=warnings, path=str(path), complete=False)
    return SessionFile(header=header, events=events, warnings=warnings, path=str(path))
