"""The command line: the first word chooses a subcommand, whose module parses the rest.

Every subcommand lives in dgym_tui/commands/, a module with `main(argv) -> exit status` (a
module may serve two: sessions.py has sessions, export and apply); anything else is the app on a
repository (`dgym-tui [REPO] ...`, commands/app.py). What a live session needs (its sandbox,
signals, closing) lives in dgym_tui/lifecycle.py.
"""

from __future__ import annotations

import importlib
import sys

SUBCOMMANDS = {
    "run": "dgym_tui.commands.run:main",
    "replay": "dgym_tui.commands.replay:main",
    "demo": "dgym_tui.commands.replay:main_demo",
    "resume": "dgym_tui.commands.resume:main",
    "serve": "dgym_tui.commands.serve:main",
    "mcp": "dgym_tui.commands.mcp:main",
    "batch": "dgym_tui.commands.batch:main",
    "review": "dgym_tui.commands.review:main",
    "doctor": "dgym_tui.commands.doctor:main",
    "image": "dgym_tui.commands.image:main",
    "sessions": "dgym_tui.commands.sessions:main_sessions",
    "export": "dgym_tui.commands.sessions:main_export",
    "apply": "dgym_tui.commands.sessions:main_apply",
}
APP = "dgym_tui.commands.app:main"


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    from dgym_tui.sandbox import SandboxError

    if argv and argv[0] in SUBCOMMANDS:
        target, argv = SUBCOMMANDS[argv[0]], argv[1:]
    else:
        target = APP
    module, _, function = target.partition(":")
    try:
        return getattr(importlib.import_module(module), function)(argv)
    except SandboxError as e:
        print(f"dgym-tui: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
