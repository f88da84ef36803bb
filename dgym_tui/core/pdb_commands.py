"""Facts about pdb's commands that the core and every view share."""

from __future__ import annotations

# Commands that let the program run rather than inspect it: the views say "running…" until the
# next stop, and after a post-mortem or the program's end they start it again.
RUNNING_COMMANDS = frozenset({"c", "cont", "continue", "n", "next", "s", "step", "r", "return",
                              "unt", "until"})
# pdb's own way to start over; the shim ends and the host spawns a fresh process.
RESTART_COMMANDS = frozenset({"restart", "run"})


def verb(command: str) -> str:
    return command.strip().split(" ", 1)[0]


def runs_program(command: str) -> bool:
    """Whether a pdb command lets the program run (rather than inspect it)."""
    return verb(command) in RUNNING_COMMANDS
