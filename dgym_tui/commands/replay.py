"""`dgym-tui replay SESSION` and `dgym-tui demo`: a saved session, read-only, step by step; a
take-over from any moment makes it a live session (closed here like any other)."""

from __future__ import annotations

import argparse
import sys

from dgym_tui.commands.options import agent_arguments, agent_settings

REPLAY = ("Open a saved session read-only: play/pause (space), one event at a time (←/→), start/end, "
          "faster/slower (+/-); enter on the timeline takes over from that moment (a live session; "
          "with --model, the agent goes on with its conversation cut there).")
DEMO = ("Replay a session bundled with dgym-tui: a scripted agent (not an LLM) finds the bundled "
        "example's bugs with pdb and fixes them. No API key needed.")


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="dgym-tui replay", description=REPLAY)
    p.add_argument("session", help="a session file (`dgym-tui sessions` lists them), or a debug-gym log "
                                   "(debug_gym.jsonl, trajectory.json)")
    p.add_argument("--headless", action="store_true", help="print the transcript as text instead")
    agent_arguments(p, ["manual", "step", "auto"])
    p.add_argument("--theme", help="colour theme")
    return p


def main(argv: list[str]) -> int:
    return replay(parser().parse_args(argv))


def main_demo(argv: list[str]) -> int:
    argparse.ArgumentParser(prog="dgym-tui demo", description=DEMO).parse_args(argv)
    from dgym_tui.core.session_file import read_session
    from dgym_tui.demo import demo_session
    from dgym_tui.examples import example_path

    recording = read_session(demo_session())
    # recorded on a copy of the bundled example: taking over uses the installed one
    recording.header.update(repo=str(example_path()), repo_name="shopcart")
    args = parser().parse_args([str(demo_session())])
    return replay(args, recording)


def replay(args, recording=None) -> int:
    from dgym_tui.core.session_file import SessionFileError
    from dgym_tui.sessions.debug_gym_log import load_any

    try:
        # the app opens at the first stop: the rest of a big file is read while it shows
        # (a debug-gym log is read whole, as the session it amounts to)
        recording = recording or load_any(args.session, until=None if args.headless else "stop")
    except SessionFileError as e:
        print(f"dgym-tui replay: {e}", file=sys.stderr)
        return 2
    if args.headless:
        from dgym_tui.headless import print_transcript

        print_transcript(recording)
        return 0
    try:
        settings = agent_settings(args) if args.model else None
    except ValueError as e:
        print(f"dgym-tui replay: {e}", file=sys.stderr)
        return 2
    from dgym_tui import lifecycle
    from dgym_tui.ui.app import DgymApp

    app = DgymApp(recording=recording, theme=args.theme, agent_settings=settings)
    with lifecycle.running(lambda: app.session, lambda: app.writer):  # a take-over makes both
        app.run()
    return app.return_code or 0  # an error of ours that ended it is not a success
