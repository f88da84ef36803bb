"""A live session's lifecycle, in one place for every command that runs one (the app, `run`,
`resume`, `replay`'s take-over, `mcp`): the session built from the command line's sandbox
options, its sandbox removed however the process ends (a normal return, Ctrl-C, SIGTERM, SIGHUP),
and its session file closed.

SIGKILL cannot be caught: the next start reaps what a killed process leaves behind.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

EXIT_GRACE = 5.0  # seconds a signalled exit may take before the process ends regardless


def _exit_after(seconds: float, code: int) -> None:
    time.sleep(seconds)
    os._exit(code)


def install_signal_handlers(cleanup: Callable[[], None] | None = None) -> None:
    """SIGTERM, and SIGHUP (the terminal closed), run `cleanup` (remove the sandbox), then exit
    normally (atexit runs)."""
    def leave(signum, _frame):
        # Once: a second signal (a closing terminal sends more than one) must not cut the
        # clean-up short.
        for sig in (signal.SIGTERM, signal.SIGHUP):
            signal.signal(sig, signal.SIG_IGN)
        # A closing terminal also sends SIGCONT, which the UI would answer by redrawing a screen
        # that is going away.
        signal.signal(signal.SIGCONT, signal.SIG_DFL)
        if cleanup is not None:
            # First, before any of the UI's shutdown can hang on a terminal that is gone.
            cleanup()
        # The UI's worker threads may be waiting on its event loop, which this exit stops: the
        # interpreter would wait for them forever. Give the normal exit (terminal restored,
        # atexit) a few seconds, then end.
        threading.Thread(target=_exit_after, args=(EXIT_GRACE, 128 + signum), daemon=True).start()
        sys.exit(128 + signum)

    signal.signal(signal.SIGTERM, leave)
    signal.signal(signal.SIGHUP, leave)


def repo_from(path: str | None) -> Path:
    """The repository a command was given, checked (a one-line SandboxError if it is no folder);
    the bundled example when none was."""
    if path is None:
        from dgym_tui.examples import example_path

        return example_path()
    from dgym_tui.sandbox.repo_copy import check_repo_path

    return check_repo_path(path)


def session_from(args, repo: Path, **extra):
    """A Session (not started) for the sandbox options of `commands.options.sandbox_arguments`.
    A bad --python fails here, before anything starts."""
    if args.python:
        from dgym_tui.sandbox.interpreter import find_python

        find_python(repo, args.python)
    if getattr(args, "test_timeout", None) is not None and args.test_timeout < 0:
        from dgym_tui.sandbox import SandboxError

        raise SandboxError("--test-timeout must be 0 (no limit) or a number of seconds")
    from dgym_tui.core.session import Session

    return Session(str(repo), sandbox=args.sandbox, image=args.image, network=args.network,
                   entrypoint=args.entrypoint, python=args.python, memory=args.memory,
                   deps=deps_options(args, repo), test_timeout=getattr(args, "test_timeout", None), **extra)


def deps_options(args, repo):
    """How the repo's dependencies get into a Docker sandbox: config.toml's [sandbox] table, its
    [sandbox.repos."PATH"] table for this repo, then the flags. SandboxError: a bad setting."""
    from pathlib import Path

    from dgym_tui.config import load_config
    from dgym_tui.sandbox import SandboxError
    from dgym_tui.sandbox.deps_image import DepsOptions

    known = {"install", "wheels", "index_url", "setup", "network"}
    table = load_config().get("sandbox") or {}
    settings = {k: v for k, v in table.items() if k != "repos"}
    for path, override in (table.get("repos") or {}).items():
        if isinstance(override, dict) and Path(path).expanduser().resolve() == Path(repo).resolve():
            settings.update(override)
    unknown = sorted(set(settings) - known)
    if unknown:
        raise SandboxError(f"config.toml [sandbox]: unknown key {', '.join(unknown)} (known: {', '.join(sorted(known))})")
    if getattr(args, "no_deps", False):
        settings["install"] = False
    for key in ("wheels", "index_url", "setup"):
        if getattr(args, key, None):
            settings[key] = getattr(args, key)
    if settings.get("wheels"):
        settings["wheels"] = str(Path(settings["wheels"]).expanduser().resolve())
    return DepsOptions(**settings)


def close_sandbox(session) -> None:
    """Remove the session's sandbox, if it has one (safe from a signal handler, and twice)."""
    sandbox = getattr(session, "sandbox", None)
    if sandbox is not None:
        sandbox.close()


@contextmanager
def running(session_of: Callable[[], object], writer_of: Callable[[], object] = lambda: None) -> Iterator[None]:
    """While the block runs, a signal removes the sandbox of `session_of()`; after it, the
    session and its file (`writer_of()`) close. Functions, since a replay's take-over makes its
    session and file later."""
    install_signal_handlers(lambda: close_sandbox(session_of()))
    try:
        yield
    finally:
        session = session_of()
        if session is not None:
            session.close()
        writer = writer_of()
        if writer is not None:
            writer.close()
