"""Runs of the program that nobody asked for, counted from a session's events.

Only c, n, s (and until, return...), restart and run run the program; so do the session's own
acts that say so (an entrypoint changed, a step back, a sandbox restarted, the palette's restart,
a hung program killed and started again). Any other start is a rerun nobody asked for: before
pdb kept commands after the end, a `b` or `p` typed then reran the whole suite and was dropped,
and every edit reran it too. A trial's result reports the count; it should be 0.
"""

from __future__ import annotations

from dgym_tui.core.pdb_commands import RESTART_COMMANDS, RUNNING_COMMANDS, verb

# ProgramStart reasons of the session's own acts, each asked for by someone (session_pdb.py)
ASKED_REASONS = ("entrypoint ", "back to stop", "sandbox restarted", "restart asked", "killed after",
                 "restart typed in pdb")


def unasked_runs(events) -> int:
    """events: the session's events (objects with .kind and .data, or dicts as in a session file)."""
    count, asked, first = 0, False, True
    for event in events:
        kind, data = (event.get("kind"), event.get("data") or {}) if isinstance(event, dict) else (event.kind, event.data)
        field = data.get if isinstance(data, dict) else (lambda name: getattr(data, name, None))
        if kind == "pdb_input":
            asked = asked or verb(field("command") or "") in RUNNING_COMMANDS | RESTART_COMMANDS
        elif kind == "program_start":
            reason = field("reason") or ""
            if not first and field("restart") and not asked and not reason.startswith(ASKED_REASONS):
                count += 1
            first, asked = False, False
    return count
