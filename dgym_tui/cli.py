"""Command line: `dgym-tui [REPO]`, `dgym-tui doctor`, `dgym-tui image build`."""

from __future__ import annotations

import argparse
import gc
import os
import signal
import sys
import threading
import time
from collections.abc import Callable

from dgym_tui import __version__

SUBCOMMANDS = ("doctor", "image", "run", "replay", "resume", "demo")

# Saved sessions (dgym_tui/sessions/commands.py): name -> the function that takes its arguments.
SESSION_SUBCOMMANDS = {"sessions": "main_sessions", "export": "main_export", "apply": "main_apply"}

DESCRIPTION = """\
Debug a Python repository in a terminal UI, side by side with an AI agent. The repo's code runs
in a sandbox (a Docker container when an engine answers and the sandbox image exists, else a
bubblewrap jail where bwrap can run, else a temporary local copy, NOT isolated); your checkout
is never modified.

With --model, an LLM agent debugs beside you: every action it proposes waits for your approval
(--mode step) or only those the policy marks `ask` (--mode auto).

other commands:
  dgym-tui run REPO --model M ...   the agent with no UI (see `dgym-tui run --help`)
  dgym-tui replay SESSION           a saved session, read-only, step by step; take over from any moment
  dgym-tui resume SESSION           go on with a saved session (new sandbox, its changes, breakpoints, agent)
  dgym-tui demo                     replay a bundled session: a scripted agent fixes the example's bugs
  dgym-tui doctor                   check Docker, the sandbox image, git, the terminal and LLM keys
  dgym-tui image build              build the sandbox image (see `dgym-tui image build --help`)
  dgym-tui sessions [REPO]          list the saved sessions, newest first
  dgym-tui export SESSION ...       a session's final patch, or the session as markdown, debug-gym,
                                    mini-swe-agent or chat (fine-tuning) data
  dgym-tui apply SESSION [--yes]    apply a session's final change to its repo, all or nothing
"""


def _sandbox_arguments(p: argparse.ArgumentParser) -> None:
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


def _agent_arguments(p: argparse.ArgumentParser, modes: list[str]) -> None:
    p.add_argument("--model", metavar="M",
                   help="an LLM for the agent: any litellm model string (openai/gpt-4o, anthropic/..., "
                        "openai/NAME with --api-base for Ollama/vLLM), or scripted:FILE (default: config.toml)")
    p.add_argument("--api-base", metavar="URL", help="an OpenAI-compatible server, e.g. http://localhost:11434/v1")
    p.add_argument("--mode", choices=modes,
                   help="step: every agent action waits for you; auto: only what the policy marks `ask` waits"
                        + ("; manual: no agent" if "manual" in modes else "") + " (default: config.toml, else step)")
    p.add_argument("--max-steps", type=int, metavar="N", help="stop the agent after N model calls (default 50)")
    p.add_argument("--max-cost", type=float, metavar="USD", help="stop the agent once it has cost this much")
    p.add_argument("--task", metavar="TEXT", help="what the agent should do (default: fix the failing tests)")
    p.add_argument("--system-prompt", metavar="FILE",
                   help="the agent's system prompt template ({repo} {entrypoint} {tools} {sandbox})")


def _main_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="dgym-tui", description=DESCRIPTION,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("repo", nargs="?", help="the repository to debug (default: the bundled example, shopcart)")
    p.add_argument("--version", action="version", version=f"dgym-tui {__version__}")
    _sandbox_arguments(p)
    _agent_arguments(p, ["manual", "step", "auto"])
    p.add_argument("--theme", help="colour theme (default: the last one chosen, else dgym-dark)")
    p.add_argument("--pdb-timeout", type=float, default=30.0, metavar="S",
                   help="interrupt a pdb command that runs longer than this (default: 30)")
    return p


def _run_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="dgym-tui run", description="Run the agent on a repository with no UI: one line per step. "
        "Exit 0 when the tests pass at the end, 1 when they do not, 2 for a usage error. Calls the "
        "policy marks `ask` are refused (and the model told so) unless --yes approves them.")
    p.add_argument("repo", help="the repository to debug")
    _sandbox_arguments(p)
    _agent_arguments(p, ["step", "auto"])
    p.add_argument("--yes", action="store_true", help="approve every call the policy marks `ask` (never `deny`)")
    p.add_argument("--session", metavar="FILE", help="write the session (JSON lines) to FILE")
    return p


def _replay_parser(name: str) -> argparse.ArgumentParser:
    described = {
        "replay": "Open a saved session read-only: play/pause (space), one event at a time (←/→), start/end, "
                  "faster/slower (+/-); enter on the timeline takes over from that moment (a live session; "
                  "with --model, the agent goes on with its conversation cut there).",
        "resume": "Go on with a saved session: a new sandbox from the repo with its recorded changes applied in "
                  "order, its breakpoints, its transcript and (with a model) the agent's conversation. If the repo "
                  "changed since, it says which files and asks first.",
    }
    p = argparse.ArgumentParser(prog=f"dgym-tui {name}", description=described[name])
    p.add_argument("session", help="a session file (`dgym-tui sessions` lists them)")
    if name == "replay":
        p.add_argument("--headless", action="store_true", help="print the transcript as text instead")
    else:
        p.add_argument("--yes", action="store_true", help="go on even if the repo changed since the session")
    _agent_arguments(p, ["manual", "step", "auto"])
    p.add_argument("--theme", help="colour theme")
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


def _close_sandbox(session) -> None:
    sandbox = getattr(session, "sandbox", None)
    if sandbox is not None:
        sandbox.close()


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    from dgym_tui.sandbox import SandboxError

    try:
        if argv and argv[0] in SESSION_SUBCOMMANDS:
            from dgym_tui.sessions import commands

            return getattr(commands, SESSION_SUBCOMMANDS[argv[0]])(argv[1:])
        if argv and argv[0] == "doctor":
            argparse.ArgumentParser(prog="dgym-tui doctor",
                                    description="Check what dgym-tui needs, one line each with the fix.").parse_args(argv[1:])
            from dgym_tui import doctor

            return doctor.run()
        if argv and argv[0] == "run":
            args = _run_parser().parse_args(argv[1:])
            if not args.model and not _configured_model():
                _run_parser().error("give --model (or set model in config.toml [agent])")
            from dgym_tui import headless

            return headless.run(args)
        if argv and argv[0] in ("replay", "resume"):
            args = _replay_parser(argv[0]).parse_args(argv[1:])
            return _replay(args) if argv[0] == "replay" else _resume(args)
        if argv and argv[0] == "demo":
            argparse.ArgumentParser(prog="dgym-tui demo", description=(
                "Replay a session bundled with dgym-tui: a scripted agent (not an LLM) finds the bundled "
                "example's bugs with pdb and fixes them. No API key needed.")).parse_args(argv[1:])
            from dgym_tui.core.session_file import read_session
            from dgym_tui.demo import demo_session
            from dgym_tui.examples import example_path

            recording = read_session(demo_session())
            # recorded on a copy of the bundled example: taking over uses the installed one
            recording.header.update(repo=str(example_path()), repo_name="shopcart")
            return _replay(argparse.Namespace(session=str(demo_session()), headless=False, model=None,
                                              api_base=None, mode=None, max_steps=None, max_cost=None, task=None,
                                              system_prompt=None, theme=None), recording)
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


def _configured_model() -> str | None:
    from dgym_tui.config import load_config

    return (load_config().get("agent") or {}).get("model")


def _settings(args):
    from dgym_tui.config import AgentSettings

    return AgentSettings.load(model=args.model, api_base=args.api_base, mode=args.mode,
                              max_steps=args.max_steps, max_cost=args.max_cost, task=args.task,
                              system_prompt_file=args.system_prompt)


def _replay(args, recording=None) -> int:
    from dgym_tui.core.session_file import SessionFileError, read_session

    try:
        # the app opens at the first stop: the rest of a big file is read while it shows
        recording = recording or read_session(args.session, until=None if args.headless else "stop")
    except SessionFileError as e:
        print(f"dgym-tui replay: {e}", file=sys.stderr)
        return 2
    if args.headless:
        from dgym_tui.headless import print_transcript

        print_transcript(recording)
        return 0
    try:
        settings = _settings(args) if args.model else None
    except ValueError as e:
        print(f"dgym-tui replay: {e}", file=sys.stderr)
        return 2
    from dgym_tui.ui.app import DgymApp

    app = DgymApp(recording=recording, theme=args.theme, agent_settings=settings)
    _install_signal_handlers(lambda: _close_sandbox(app.session))  # a take-over makes one
    try:
        app.run()
    finally:  # a take-over made a live session: close it
        app.session.close()
        if app.writer is not None:
            app.writer.close()
    return 0


def _resume(args) -> int:
    from dgym_tui.core.session import Session
    from dgym_tui.core.session_file import SessionFileError, SessionWriter, changed_since, read_session

    try:
        recording = read_session(args.session)
        changed = changed_since(recording.header)
        settings = _settings(args)
    except (SessionFileError, ValueError) as e:
        print(f"dgym-tui resume: {e}", file=sys.stderr)
        return 2
    for warning in recording.warnings:
        print(f"dgym-tui resume: warning: {warning}", file=sys.stderr)
    if changed:
        from dgym_tui.core.safe_text import one_line

        print("dgym-tui resume: the repository changed since this session: "
              + ", ".join(one_line(c) for c in changed[:20]) + (" …" if len(changed) > 20 else ""))
        if not args.yes:
            try:
                answer = input("its recorded changes may not apply to it any more; go on? [y/N] ")
            except EOFError:
                answer = ""
            if answer.strip().lower() not in ("y", "yes"):
                return 1
    if not settings.model and recording.header.get("model", "") and \
            str(recording.header.get("model")).startswith("scripted:"):
        settings.model = recording.header["model"]  # a scripted agent goes on with its script
    session = Session.resume(recording, changed=changed)
    _install_signal_handlers(lambda: _close_sandbox(session))
    writer = SessionWriter.append(args.session, session)
    from dgym_tui.ui.app import DgymApp

    app = DgymApp(session, theme=args.theme, agent_settings=settings, writer=writer)
    try:
        app.run()
    finally:
        session.close()
        writer.close()
    return 0


def _run_app(args) -> int:
    # Start-up makes many objects that live as long as the app and little garbage: collecting
    # them over and over cost the first frame ~45 ms. The main screen turns the collector back
    # on once the first frame is drawn (see MainScreen._mount_later).
    gc.disable()
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

    from dgym_tui.config import AgentSettings

    try:
        settings = AgentSettings.load(model=args.model, api_base=args.api_base, mode=args.mode,
                                      max_steps=args.max_steps, max_cost=args.max_cost, task=args.task,
                                      system_prompt_file=args.system_prompt)
    except ValueError as e:
        print(f"dgym-tui: {e}", file=sys.stderr)
        return 2
    session = Session(str(repo), sandbox=args.sandbox, image=args.image, network=args.network,
                      entrypoint=args.entrypoint, pdb_timeout=args.pdb_timeout, python=args.python,
                      memory=args.memory)
    _install_signal_handlers(lambda: _close_sandbox(session))
    from dgym_tui.core.session_file import SessionWriter
    from dgym_tui.ui.app import DgymApp

    writer = SessionWriter.open(None, session, mode=settings.mode if settings.model else "manual",
                                model=settings.model)
    app = DgymApp(session, theme=args.theme, agent_settings=settings, writer=writer)
    try:
        app.run()
    finally:
        session.close()
        writer.close()
    return 0
