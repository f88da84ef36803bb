"""`dgym-tui run REPO --model M`: the agent with no UI, one line per step (dgym_tui/headless.py
prints them). Exit 0 when the tests pass at the end, 1 when they do not, 2 for a usage error: the
tests of the entrypoint as it is then (the agent may have narrowed it to one file), named in the
outcome line.

Calls the policy marks `ask` are refused (the model is told so) unless `--yes` approves them;
`deny` is refused either way.
"""

from __future__ import annotations

import argparse
import sys

from dgym_tui.commands.options import agent_arguments, agent_settings, configured_model, sandbox_arguments


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="dgym-tui run", description="Run the agent on a repository with no UI: one line per step. "
        "Exit 0 when the tests pass at the end, 1 when they do not, 2 for a usage error: the tests "
        "of the entrypoint then (the agent may narrow it to a file), named on the outcome line. Calls the "
        "policy marks `ask` are refused (and the model told so) unless --yes approves them.")
    p.add_argument("repo", nargs="?", help="the repository to debug (default: the bundled example, shopcart)")
    sandbox_arguments(p)
    agent_arguments(p, ["step", "auto"])
    p.add_argument("--yes", action="store_true", help="approve every call the policy marks `ask` (never `deny`)")
    p.add_argument("--session", metavar="FILE", help="write the session (JSON lines) to FILE")
    return p


def main(argv: list[str]) -> int:
    args = parser().parse_args(argv)
    if not args.model and not configured_model():
        parser().error("give --model (or set model in config.toml [agent])")
    from dgym_tui import lifecycle
    from dgym_tui.agent.approval import headless_answers
    from dgym_tui.agent.setup import make_agent
    from dgym_tui.core.safe_text import one_line, visible
    from dgym_tui.headless import Progress
    from dgym_tui.tools.eval import summary

    repo = lifecycle.repo_from(args.repo)
    try:
        settings = agent_settings(args)
        if settings.mode == "manual":
            raise ValueError("`run` needs an agent: --mode step or auto")
    except ValueError as e:
        print(f"dgym-tui run: {e}", file=sys.stderr)
        return 2
    session = lifecycle.session_from(args, repo)
    writer = None
    if args.session:
        from dgym_tui.core.session_file import SessionWriter

        writer = SessionWriter.open(args.session, session, mode=settings.mode, model=settings.model)
    session.events.subscribe(Progress(), replay=False)
    with lifecycle.running(lambda: session, lambda: writer):
        print(f"dgym-tui run: starting the sandbox for {repo.name}…", flush=True)
        session.start()
        if session.state.program == "error":
            print(f"dgym-tui run: {session.state.error}", file=sys.stderr)
            return 2
        ready = session.state.sandbox
        seeker = f"; seeker: {one_line(settings.seeker)} ({settings.seeker_form})" if settings.seeker else ""
        print(f"sandbox: {ready.description}; model: {one_line(settings.model or '')}{seeker}; mode: {settings.mode}"
              + ("; --yes" if args.yes else ""), flush=True)

        try:
            agent = make_agent(session, settings, auto_answer=headless_answers(args.yes, "this headless run"),
                               on_model_error="stop")
        except ValueError as e:
            print(f"dgym-tui run: {e}", file=sys.stderr)
            return 2
        outcome = agent.run()
        ran = one_line(session.tests_command())  # what the counts are of: the entrypoint's files, or all
        tests = session.run_tests()
        print(visible(f"outcome: {outcome}; tests ({ran}): {summary(tests)}"), flush=True)
        if agent.submitted:
            print(visible(f"agent's summary: {agent.submitted}"), flush=True)
        if agent.seeker is not None:
            from dgym_tui.core.roles import role_figures, said

            print(said(role_figures(session.events.history)), flush=True)
        changed = session.changed_files()
        if changed:
            print(f"changed in the sandbox: {', '.join(one_line(c) for c in changed)} (not applied to your repo)")
        return 0 if tests.ok else 1
