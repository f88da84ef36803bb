"""End to end (issue 47): the installed app on a repo whose tests all pass. The run ends at once;
the person types `b calc.py:3` in the pdb console (kept, nothing rerun), then `c`, and the value
shows in the variables pane."""

from __future__ import annotations

import os
import re

import pytest

from test_e2e_tmux import Tmux, installed  # noqa: F401  (fixture)

pytestmark = [pytest.mark.e2e]

CALC = "def add(a, b):\n    total = a + b\n    return total\n"
TEST = "from calc import add\n\n\ndef test_add():\n    assert add(1200, 34) == 1234\n"


def test_a_passing_suite_b_then_c_shows_the_value(installed, tmp_path):  # noqa: F811
    repo = tmp_path / "calc"
    (repo / "tests").mkdir(parents=True)
    (repo / "calc.py").write_text(CALC)
    (repo / "tests" / "test_calc.py").write_text(TEST)
    env = {"TERM": "xterm-256color", "DGYM_TUI_CONFIG_DIR": str(tmp_path / "config"), "HOME": str(tmp_path),
           "DGYM_TUI_DATA_DIR": str(tmp_path / "data")}
    tmux = Tmux(f"dgym-e2e-ended-{os.getpid()}", f"{installed} --sandbox local {repo}", str(tmp_path), env)
    try:
        # the suite passed: the status bar says so, and how to run it again
        tmux.wait_for("ended (exit code 0) · c runs it again to the breakpoints", timeout=120)
        tmux.type("!")  # the pdb console
        tmux.type("b calc.py:3")
        tmux.keys("Enter")
        tmux.wait_for("Breakpoint 1 at calc.py:3")
        events = tmux.wait_events(lambda events: any(e.get("kind") == "breakpoints" for e in events),
                                  "a breakpoints event")
        starts = [e for e in events if e.get("kind") == "program_start"]
        assert len(starts) == 1, "typing a breakpoint after the end ran the program again"
        marks = [e["data"]["breakpoints"] for e in events if e.get("kind") == "breakpoints"]
        assert [(b["file"], b["line"]) for b in marks[-1]] == [("calc.py", 3)]
        tmux.type("c")
        tmux.keys("Enter")
        tmux.wait_for("stopped at calc.py:3", timeout=120)
        # the variables pane (not the console: nothing typed says 1234)
        screen = tmux.wait_until(lambda s: re.search(r"total\W+1234", s), "total = 1234 in the variables pane")
        assert re.search(r"a\W+1200", screen), screen
        tmux.keys("Escape")
        tmux.type("q")
        tmux.wait_for("DGYM-EXITED-0", timeout=30)
    finally:
        tmux.close()
