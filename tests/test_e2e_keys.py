"""End to end: Escape then q, typed quickly, quits the installed dgym-tui in tmux (issue 11).

tmux's send-keys writes the bytes straight to the app's terminal: ESC, then q after the delay.
Under 0.1 s Textual's parser reads them as one alt+q (see dgym_tui/ui/keys.py).
"""

from __future__ import annotations

import shutil
import time

import pytest
from test_e2e_tmux import Tmux, installed  # noqa: F401  (a fixture: the app built and installed)

pytestmark = [pytest.mark.e2e,
              pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")]

DELAYS = (0.0, 0.02, 0.05, 0.1, 0.15)


@pytest.mark.parametrize("focus", ["source", "console"])
def test_escape_then_q_quits_however_fast(installed, example_repo, tmp_path, focus):  # noqa: F811
    env = {"TERM": "xterm-256color", "DGYM_TUI_CONFIG_DIR": str(tmp_path / "config"), "HOME": str(tmp_path)}
    for delay in DELAYS:
        tmux = Tmux(f"dgym-e2e-escq-{focus}", f"{installed} --sandbox local -e 'python main.py' {example_repo}",
                    str(tmp_path), env)
        try:
            tmux.wait_for("stopped at main.py:1")
            if focus == "console":
                tmux.type("!")
                # the console has the focus once the footer's debugger keys are gone (they are
                # not for typing): a key typed before that goes to the source view
                deadline = time.monotonic() + 15
                while "n Next" in tmux.screen().splitlines()[-1] and time.monotonic() < deadline:
                    time.sleep(0.05)
                tmux.type("p 1")
                tmux.wait_for("p 1")
            tmux.keys("Escape")
            time.sleep(delay)
            tmux.type("q")
            try:
                tmux.wait_for("DGYM-EXITED-0", timeout=15)
            except AssertionError:
                raise AssertionError(f"Escape then q {delay} s later did not quit") from None
        finally:
            tmux.close()
