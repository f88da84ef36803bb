"""`dgym-tui mcp [REPO]`: the live session as an MCP server on stdin/stdout, for an outside agent
(Claude Code, Codex, any MCP client) to debug with, headless. The policy decides each call;
what it asks about is refused (the agent is told so) unless --yes approves it; what it denies is
refused either way. The session is saved like any other (`dgym-tui sessions`, replay, export).

stdout is the protocol's: everything else goes to stderr.
"""

from __future__ import annotations

import argparse
import sys

from dgym_tui.commands.options import sandbox_arguments


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="dgym-tui mcp",
        description="Serve the repo's live pdb session and debugging tools (pdb, view, listdir, grep, eval, edit, "
                    "bash, submit) to an outside agent over MCP on stdin/stdout. Calls the policy marks `ask` "
                    "are refused (and the agent told so) unless --yes approves them. Set up: "
                    "`claude mcp add dgym -- dgym-tui mcp /path/to/repo`.")
    p.add_argument("repo", nargs="?", help="the repository to debug (default: the bundled example)")
    sandbox_arguments(p)
    p.add_argument("--mode", choices=["step", "auto"], default="auto",
                   help="auto: the policy's allow list runs at once; step: every call asks (refused without --yes)")
    p.add_argument("--yes", action="store_true", help="approve every call the policy marks `ask` (never `deny`)")
    p.add_argument("--session", metavar="FILE", help="write the session to FILE (default: the sessions folder)")
    p.add_argument("--seeker", metavar="M",
                   help="also offer debug(question): a seeker model (a litellm model string or scripted:FILE, e.g. a "
                        "small local one) investigates with pdb in the sandbox and answers with the places, commands "
                        "and values it saw; the outside agent is the fixer")
    p.add_argument("--seeker-api-base", metavar="URL", help="the seeker's OpenAI-compatible server (llama.cpp, Ollama)")
    p.add_argument("--seeker-steps", type=int, default=10, metavar="N", help="its step budget per question (default 10)")
    p.add_argument("--resume", metavar="SESSION",
                   help="go on with a saved session (its changes and breakpoints, in a new sandbox), appending to it; "
                        "the client reconnects")
    return p


def main(argv: list[str]) -> int:
    args = parser().parse_args(argv)
    import anyio

    from dgym_tui import lifecycle
    from dgym_tui.agent.approval import headless_answers
    from dgym_tui.agent.policy import Policy
    from dgym_tui.config import load_config
    from dgym_tui.core.session_file import SessionWriter
    from dgym_tui.mcp_server import OutsideAgents, build_server, serve_stdio

    if args.resume:
        from dgym_tui.core.session import Session
        from dgym_tui.core.session_file import SessionFileError, changed_since, read_session

        try:
            recording = read_session(args.resume)
        except SessionFileError as e:
            print(f"dgym-tui mcp: {e}", file=sys.stderr)
            return 2
        session = Session.resume(recording, changed=changed_since(recording.header))
        writer = SessionWriter.append(args.resume, session)
        repo = lifecycle.repo_from(session.repo)
    else:
        repo = lifecycle.repo_from(args.repo)
        session = lifecycle.session_from(args, repo)
        writer = SessionWriter.open(args.session, session, mode=args.mode, model="mcp")

    policy = Policy.from_config((load_config().get("agent") or {}).get("policy"))
    agents = OutsideAgents(session, policy, mode=args.mode,
                           auto_answer=headless_answers(args.yes, "this MCP server"))
    if args.seeker:
        from dgym_tui.agent.setup import make_seeker
        from dgym_tui.config import AgentSettings

        try:
            settings = AgentSettings.load(seeker=args.seeker, seeker_api_base=args.seeker_api_base,
                                          seeker_steps=args.seeker_steps)
            agents.add_seeker(make_seeker(session, settings))
        except ValueError as e:
            print(f"dgym-tui mcp: {e}", file=sys.stderr)
            return 2
    with lifecycle.running(lambda: session, lambda: writer):
        print(f"dgym-tui mcp: starting the sandbox for {repo.name}…", file=sys.stderr, flush=True)
        session.start()
        if session.state.program == "error":
            print(f"dgym-tui mcp: {session.state.error}", file=sys.stderr)
            return 2
        print(f"dgym-tui mcp: serving {repo.name} ({session.state.sandbox.description}) on stdin/stdout; "
              f"session file {writer.path}", file=sys.stderr, flush=True)
        try:
            anyio.run(serve_stdio, build_server(agents))
        except KeyboardInterrupt:
            pass
        finally:
            agents.close()
    return 0
