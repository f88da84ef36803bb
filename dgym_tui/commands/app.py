"""`dgym-tui [REPO]`: the app on a repository (the bundled example when none is given)."""

from __future__ import annotations

import argparse
import gc
import sys
from pathlib import Path

from dgym_tui import __version__
from dgym_tui.commands.options import agent_arguments, agent_settings, sandbox_arguments

DESCRIPTION = """\
Debug a Python repository in a terminal UI, side by side with an AI agent. The repo's code runs
in a sandbox (a Docker container when an engine answers and the sandbox image exists, else a
bubblewrap jail where bwrap can run, else a temporary local copy, NOT isolated); your checkout
is never modified.

With --model, an LLM agent debugs beside you: every action it proposes waits for your approval
(--mode step) or only those the policy marks `ask` (--mode auto).

--task FILE ID opens a SWE-bench instance instead of a repository: row ID of FILE (the dataset's
JSON lines, or a batch's tasks.jsonl), in the instance's own image at /testbed, with its test
command under pdb, as a batch's trial has it (--tests hidden|eval|visible, as `dgym-tui batch`).
--task TEXT (one word after it that is no .jsonl/.json file) is still the agent's task.

other commands:
  dgym-tui run REPO --model M ...   the agent with no UI (see `dgym-tui run --help`)
  dgym-tui replay SESSION           a saved session (or a debug-gym log), read-only, step by step; take
                                    over from any moment
  dgym-tui resume SESSION           go on with a saved session (new sandbox, its changes, breakpoints, agent)
  dgym-tui demo                     replay a bundled session: a scripted agent fixes the example's bugs
  dgym-tui doctor                   check Docker, the sandbox image, git, the terminal and LLM keys
  dgym-tui image build              build the sandbox image (see `dgym-tui image build --help`)
  dgym-tui image swebench FILE --repos DIR
                                    build SWE-bench instances' environment images here, offline
  dgym-tui sessions [REPO]          list the saved sessions, newest first
  dgym-tui export SESSION ...       a session's final patch, or the session as markdown, a self-contained
                                    HTML replay, debug-gym, mini-swe-agent, ATIF or chat (fine-tuning) data
  dgym-tui serve [REPO | replay SESSION | demo]
                                    the app in a web browser (textual-serve), on 127.0.0.1 unless --host
  dgym-tui apply SESSION [--yes]    apply a session's final change to its repo, all or nothing
  dgym-tui batch TASKS --model M --out RUN_DIR
                                    the agent over a task set, scored (with --repo REPO: open issues,
                                    each fixed with a reproduction test the harness checks)
  dgym-tui review RUN_DIR           the review inbox: approve, reject, edit, send back; --branches,
                                    --export-prs, --apply
  dgym-tui export RUN_DIR --format sft|sharegpt|atif|dpo
                                    a batch as training data, each trial with its score and verdict
  dgym-tui mcp [REPO]               serve a session to an outside agent over MCP
"""


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="dgym-tui", description=DESCRIPTION,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("repo", nargs="?", help="the repository to debug (default: the bundled example, shopcart)")
    p.add_argument("--version", action="version", version=f"dgym-tui {__version__}")
    sandbox_arguments(p)
    agent_arguments(p, ["manual", "step", "auto"])
    p.add_argument("--theme", help="colour theme (default: the last one chosen, else dgym-dark)")
    p.add_argument("--mcp-port", type=int, metavar="PORT",
                   help="let outside agents (Claude Code, Codex, any MCP client) in over MCP at "
                        "http://127.0.0.1:PORT/mcp with a random token, shown at start (0: any free port)")
    p.add_argument("--tests", choices=["hidden", "eval", "visible"], default="hidden",
                   help="with --task FILE ID: what you and the agent see of the instance's hidden tests, as "
                        "`dgym-tui batch --tests` (default: hidden)")
    p.add_argument("--pdb-timeout", type=float, default=30.0, metavar="S",
                   help="interrupt a pdb command that runs longer than this (default: 30)")
    return p


def split_instance(argv: list[str]) -> tuple[list[str], tuple[str, str] | None]:
    """`--task FILE ID` taken out of the arguments (FILE an existing .jsonl or .json file);
    any other `--task TEXT` stays, the agent's task. SystemExit(2): FILE with no ID after it."""
    for i, word in enumerate(argv):
        if word == "--task" and i + 1 < len(argv) and argv[i + 1].endswith((".jsonl", ".json")) \
                and Path(argv[i + 1]).is_file():
            if i + 2 >= len(argv) or argv[i + 2].startswith("-"):
                parser().error(f"--task {argv[i + 1]} ID: give the id of the instance to open")
            return argv[:i] + argv[i + 3:], (argv[i + 1], argv[i + 2])
    return argv, None


def main(argv: list[str]) -> int:
    argv, task = split_instance(argv)
    args = parser().parse_args(argv)
    # Start-up makes many objects that live as long as the app and little garbage: collecting
    # them over and over cost the first frame ~45 ms. The main screen turns the collector back
    # on once the first frame is drawn (see MainScreen._mount_later).
    gc.disable()
    from dgym_tui import lifecycle

    try:
        settings = agent_settings(args)
        if task is not None:  # a bad file, id or image fails here, before any UI
            session, header = instance_session(args, *task)
            settings.task = settings.task or header["task"].get("problem")  # the agent's task: the issue
        else:
            if args.tests != "hidden":
                raise ValueError(f"--tests {args.tests} is for an instance: --task FILE ID")
            session, header = lifecycle.session_from(args, lifecycle.repo_from(args.repo),
                                                     pdb_timeout=args.pdb_timeout), {}
    except ValueError as e:  # InstanceError is one
        print(f"dgym-tui: {e}", file=sys.stderr)
        return 2
    from dgym_tui.core.session_file import SessionWriter

    writer = SessionWriter.open(None, session, mode=settings.mode if settings.model else "manual",
                                model=settings.model, **header)
    with lifecycle.running(lambda: session, lambda: writer):
        from dgym_tui.ui.app import DgymApp

        app = DgymApp(session, theme=args.theme, agent_settings=settings, writer=writer, mcp_port=args.mcp_port)
        app.run()
    return app.return_code or 0


def instance_session(args, file: str, task_id: str):
    """A Session (not started) on the instance, in its image (batch/instance.py), and what its
    session file's header says of it. ValueError, one line: a bad file, id, option or image;
    SandboxError: no Docker engine."""
    from dgym_tui.batch import instance
    from dgym_tui.batch.test_modes import mode_problem
    from dgym_tui.core.session import Session
    from dgym_tui.sandbox.docker_sandbox import connect
    from dgym_tui.sandbox.instance_image import available

    for flag, value in (("--image", args.image), ("--python", args.python), ("REPO", args.repo)):
        if value:
            raise instance.InstanceError(f"--task FILE ID runs the instance in its own image: no {flag} with it")
    if args.sandbox not in ("auto", "docker"):
        raise instance.InstanceError(f"--task FILE ID runs the instance in its own image: --sandbox docker, "
                                     f"not {args.sandbox}")
    client = connect(timeout=5)  # no engine: one line, before any UI
    found = instance.find(file, task_id, check_image=lambda image: available(client, image))
    problem = mode_problem(found, args.tests)
    if problem:
        raise instance.InstanceError(problem)
    options = instance.session_options(found, args.tests)
    if args.entrypoint:
        options["entrypoint"] = args.entrypoint
    if args.test_timeout is not None:
        options["test_timeout"] = args.test_timeout
    session = Session(str(instance.home(found)), sandbox="docker", network=args.network, memory=args.memory,
                      pdb_timeout=args.pdb_timeout, **options)
    return session, instance.header(found, args.tests)
