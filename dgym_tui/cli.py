"""Command line: `dgym-tui [REPO]`, `dgym-tui doctor`, `dgym-tui image build`."""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
import time
from collections.abc import Callable

from dgym_tui import __version__

SUBCOMMANDS = ("doctor", "image")

DESCRIPTION = """\
Debug a Python repository in a terminal UI, side by side with an AI agent. The repo's code runs
in a sandbox (a Docker container when an engine answers and the sandbox image exists, else a
bubblewrap jail where bwrap can run, else a temporary local copy, NOT isolated); your checkout
is never modified.

other commands:
  dgym-tui doctor             check Docker, the sandbox image, git, the terminal and LLM keys
  dgym-tui image build        build the sandbox image (see `dgym-tui image build --help`)
"""


def _main_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="dgym-tui", description=DESCRIPTION,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("repo", nargs="?", help="the repository to debug (default: the bundled example, shopcart)")
    p.add_argument("--version", action="version", version=f"dgym-tui {__version__}")
    p.add_argument("--sandbox", choices=["auto", "docker", "bwrap", "local"], default="auto",
                   help="where the code runs (default: auto = docker if available, else bwrap, "
                        "else local with a warning); docker and bwrap never fall back")
    p.add_argument("--python", metavar="PATH",
                   help="the interpreter that runs the repo's code (local and bwrap; default: the repo's "
                        ".venv or venv, else $VIRTUAL_ENV, else python3 on PATH; docker: a command in the image)")
    p.add_argument("--image", help="sandbox image for --sandbox docker (default: dgym-tui-sandbox:latest)")
    p.add_argument("--memory", metavar="SIZE",
                   help="the container's memory limit, e.g. 4g (docker only; default: 2g)")
    p.add_argument("--network", metavar="NAME",
                   help="give the container this Docker network (default: none, no network at all)")
    p.add_argument("-e", "--entrypoint", metavar="CMD",
                   help='what runs under pdb, e.g. "pytest tests/test_x.py::test_y", "python app.py --x 1", '
                        '"python -m pkg" (default: pytest when the repo has tests, else its __main__ script)')
    p.add_argument("--theme", help="colour theme (default: the last one chosen, else dgym-dark)")
    p.add_argument("--pdb-timeout", type=float, default=30.0, metavar="S",
                   help="interrupt a pdb command that runs longer than this (default: 30)")
    return p


def _image_parser() -> argparse.ArgumentParser:
    from dgym_tui.image import DEFAULT_BASE
    from dgym_tui.sandbox.docker_sandbox import DEFAULT_IMAGE

    p = argparse.ArgumentParser(prog="dgym-tui image", description="Manage the sandbox image.")
    sub = p.add_subparsers(dest="action", required=True)
    b = sub.add_parser("build", help="build the sandbox image from sandbox/Dockerfile",
                       description="Build the sandbox image through the Docker engine, streaming progress.")
    b.add_argument("--base", default=DEFAULT_BASE,
                   help=f"base image with python3 (default: {DEFAULT_BASE}; offline: dgym-tui-base:offline "
                        "from sandbox/build-offline-base.sh)")
    b.add_argument("--tag", default=DEFAULT_IMAGE, help=f"tag of the result (default: {DEFAULT_IMAGE})")
    b.add_argument("--network", help="network for the build's RUN steps (default: the engine's)")
    return p


EXIT_GRACE = 5.0  # seconds a signalled exit may take before the process ends regardless


def _exit_after(seconds: float, code: int) -> None:
    time.sleep(seconds)
    os._exit(code)


def _install_signal_handlers(cleanup: Callable[[], None] | None = None) -> None:
    """SIGTERM, and SIGHUP (the terminal closed), remove the sandbox (`cleanup`, then atexit),
    then exit normally. SIGKILL cannot be caught: the next start reaps what it leaves."""
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


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    from dgym_tui.sandbox import SandboxError

    try:
        if argv and argv[0] == "doctor":
            argparse.ArgumentParser(prog="dgym-tui doctor",
                                    description="Check what dgym-tui needs, one line each with the fix.").parse_args(argv[1:])
            from dgym_tui import doctor

            return doctor.run()
        if argv and argv[0] == "image":
            args = _image_parser().parse_args(argv[1:])
            from dgym_tui.image import build_image

            build_image(base=args.base, tag=args.tag, network=args.network)
            return 0
        args = _main_parser().parse_args(argv)
        return _run_app(args)
    except SandboxError as e:
        print(f"dgym-tui: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


def _run_app(args) -> int:
    from dgym_tui.sandbox.repo_copy import check_repo_path

    if args.repo is None:
        from dgym_tui.examples import example_path

        repo = example_path()
    else:
        repo = check_repo_path(args.repo)  # a bad path fails here, before any UI
    if args.python:
        from dgym_tui.sandbox.interpreter import find_python

        find_python(repo, args.python)  # so does a bad --python
    from dgym_tui.core.session import Session

    session = Session(str(repo), sandbox=args.sandbox, image=args.image, network=args.network,
                      entrypoint=args.entrypoint, pdb_timeout=args.pdb_timeout, python=args.python,
                      memory=args.memory)
    _install_signal_handlers(lambda: session.sandbox is not None and session.sandbox.close())
    from dgym_tui.ui.app import DgymApp

    try:
        DgymApp(session, theme=args.theme).run()
    finally:
        session.close()
    return 0
