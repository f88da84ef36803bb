"""`dgym-tui [REPO]`: the app on a repository (the bundled example when none is given)."""

from __future__ import annotations

import argparse
import gc
import sys

from dgym_tui import __version__
from dgym_tui.commands.options import agent_arguments, agent_settings, sandbox_arguments

DESCRIPTION = """\
Debug a Python repository in a terminal UI, side by side with an AI agent. The repo's code runs
in a sandbox (a Docker container when an engine answers and the sandbox image exists, else a
bubblewrap jail where bwrap can run, else a temporary local copy, NOT isolated); your checkout
is never modified.

With --model, an LLM agent debugs beside you: every action it proposes waits for your approval
(--mode step) or only those the policy marks `ask` (--mode auto).

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
    p.add_argument("--pdb-timeout", type=float, default=30.0, metavar="S",
                   help="interrupt a pdb command that runs longer than this (default: 30)")
    return p


def main(argv: list[str]) -> int:
    args = parser().parse_args(argv)
    # Start-up makes many objects that live as long as the app and little garbage: collecting
    # them over and over cost the first frame ~45 ms. The main screen turns the collector back
    # on once the first frame is drawn (see MainScreen._mount_later).
    gc.disable()
    from dgym_tui import lifecycle

    repo = lifecycle.repo_from(args.repo)  # a bad path fails here, before any UI
    try:
        settings = agent_settings(args)
    except ValueError as e:
        print(f"dgym-tui: {e}", file=sys.stderr)
        return 2
    session = lifecycle.session_from(args, repo, pdb_timeout=args.pdb_timeout)
    from dgym_tui.core.session_file import SessionWriter

    writer = SessionWriter.open(None, session, mode=settings.mode if settings.model else "manual",
                                model=settings.model)
    with lifecycle.running(lambda: session, lambda: writer):
        from dgym_tui.ui.app import DgymApp

        DgymApp(session, theme=args.theme, agent_settings=settings, writer=writer, mcp_port=args.mcp_port).run()
    return 0
