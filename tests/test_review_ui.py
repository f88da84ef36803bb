"""The review inbox in the app (pilot tests at 80x24) and in a terminal (the installed app in
tmux): decisions, an edit scored again, a send-back whose first model request holds the note, a
take-over from the replay becoming a new revision; and the screen's look (snapshot).

The RUN_DIR is a real batch's (review_fixtures.real_run_dir: tasks fixed / half / gone end
resolved / unresolved / error), copied per test; scoring again is the batch's own, for real.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import sys
from pathlib import Path

import pytest
from review_fixtures import copy_run, shared_real_run_dir, synthetic_run_dir, task_repo
from test_e2e_tmux import installed  # noqa: F401  (fixture: dgym-tui installed from its wheel)
from test_ui_support import wait_for

from dgym_tui.review import rework
from dgym_tui.review.inbox import RunDir
from dgym_tui.ui.screens.review import ReviewApp, TrialScreen

SCORE_TIMEOUT = 240  # seconds: a fresh sandbox scores it (slow on a shared 2-core machine)


@pytest.fixture(autouse=True)
def config_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("DGYM_TUI_CONFIG_DIR", str(tmp_path / "config"))


@pytest.fixture
def real(tmp_path_factory, tmp_path):
    return copy_run(shared_real_run_dir(tmp_path_factory), tmp_path / "copy")


def decisions(run_dir: Path) -> list[dict]:
    path = run_dir / "reviews.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def cell(app, row: int, column: str) -> str:
    table = app.inbox.table
    return str(table.get_cell_at((row, [str(c.key.value) for c in table.columns.values()].index(column))))


async def test_approve_and_reject_with_a_note(real):
    run_dir, _repos = real
    app = ReviewApp(RunDir.open(run_dir))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert [cell(app, i, "task") for i in range(3)] == ["fixed", "half", "gone"]  # resolved first
        assert [cell(app, i, "status") for i in range(3)] == ["resolved", "unresolved", "error"]
        await pilot.press("a")  # fixed: approved, the cursor goes on to half
        await pilot.press("r")
        await pilot.pause()
        await pilot.press(*"sub is still broken", "enter")
        await pilot.pause()
        assert cell(app, 0, "verdict") == "approved" and cell(app, 1, "verdict") == "rejected"
        header = str(app.inbox.query_one("#review-header").render())
        assert "approved 1 rejected 1 undecided 1" in header
    fixed = json.loads((run_dir / "trials" / "fixed__all__1" / "result.json").read_text())
    lines = decisions(run_dir)
    assert [(d["trial"], d["verdict"], d["note"]) for d in lines] == [
        ("fixed__all__1", "approve", ""), ("half__all__1", "reject", "sub is still broken")]
    assert lines[0]["patch_sha256"] == fixed["patch_sha256"] and lines[0]["revision"] == 0
    assert lines[0]["who"] and lines[0]["when"].endswith("+00:00")


async def test_enter_shows_the_change_the_scored_tests_and_the_summary(real):
    run_dir, _repos = real
    app = ReviewApp(RunDir.open(run_dir))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, TrialScreen), what="the trial's screen")
        await pilot.pause()
        screen = app.screen
        heading = str(screen.query_one("#detail-heading").render())
        assert "fixed__all__1" in heading and "resolved" in heading
        assert "add subtracted" in str(screen.query_one("#detail-summary").render())
        from dgym_tui.ui.widgets.diff_view import DiffView

        view = screen.query_one(DiffView)
        assert view.path == "calc.py" and "return a + b" in view.render_text().plain
        await pilot.press("v")
        assert view.side_by_side
        await pilot.press("a")  # decide from here too: back to the list
        await wait_for(pilot, lambda: app.screen is app.inbox, what="back to the list")
    assert decisions(run_dir)[0]["verdict"] == "approve"


async def test_edit_then_approve_scores_the_edit_first(real):
    from textual.widgets import TextArea

    run_dir, _repos = real
    run = RunDir.open(run_dir)
    app = ReviewApp(run)
    half = run.trials["half__all__1"]
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await pilot.press("down", "e")
        await wait_for(pilot, lambda: app.screen.query(TextArea), what="the editor")
        editor = app.screen.query_one(TextArea)
        assert editor.text == run.patch(half)
        # fix sub() too, by hand: the hunk's counts left as they were (they are recounted)
        editor.text = editor.text.rstrip("\n") + "\n-    return a + b\n+    return a - b\n"
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert half.pending == "scoring…"
        await pilot.press("a")  # not yet: its score is not in
        await wait_for(pilot, lambda: half.revision == 1 and half.pending is None, timeout=SCORE_TIMEOUT,
                       what="the edit scored again")
        assert half.status == "resolved" and half.origin == "edit"
        assert cell(app, 0, "task") == "fixed" and cell(app, 1, "task") == "half"  # resolved now: sorted first
        app.inbox.table.move_cursor(row=1)
        await pilot.press("a")
        await pilot.pause()
        assert half.approved
    patch = (run_dir / "revisions" / "half__all__1" / "1" / "patch.diff").read_bytes()
    assert b"@@ -1,6 +1,6 @@" in patch  # recounted against the task's base
    lines = decisions(run_dir)
    assert [d["verdict"] for d in lines] == ["edit", "approve"]  # the early approve was refused
    assert lines[1]["revision"] == 1 and lines[1]["patch_sha256"] == hashlib.sha256(patch).hexdigest()
    result = json.loads((run_dir / "revisions" / "half__all__1" / "1" / "result.json").read_text())
    assert result["tests_after"] == {"passed": 2, "failed": 0, "errors": 0}
    assert json.loads((run_dir / "trials" / "half__all__1" / "result.json").read_text())["status"] == "unresolved"


async def test_send_back_resumes_the_trials_session_with_the_note(real, stub_llm):
    run_dir, _repos = real
    note = "sub() adds as well: make it subtract"
    stub_llm.push(
        {"text": "Fixing sub.", "tool_calls": [{"name": "edit", "arguments": {
            "path": "calc.py", "start": 6, "end": 6, "new_code": "    return a - b"}}]},
        {"tool_calls": [{"name": "submit", "arguments": {"message": "sub subtracts now"}}]},
    )
    run = RunDir.open(run_dir)
    half = run.trials["half__all__1"]
    app = ReviewApp(run, model="openai/stub-model", api_base=stub_llm.url)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await pilot.press("down", "R")
        await pilot.pause()
        await pilot.press(*note, "enter")
        await wait_for(pilot, lambda: half.revision == 1 and half.pending is None, timeout=SCORE_TIMEOUT,
                       what="the send-back run and scored")
        assert half.origin == "send-back" and half.status == "resolved", half.result.reason
    first = json.dumps(stub_llm.bodies[0]["messages"])
    assert note in first  # the person's hint, in the first request of the new attempt
    assert "add() subtracts." in first  # which goes on from the trial's own conversation
    folder = run_dir / "revisions" / "half__all__1" / "1"
    header = json.loads((folder / "session.jsonl").read_text().splitlines()[0])
    assert header["sent_back_from"] == "half__all__1" and header["note"] == note
    assert "return a - b" in (folder / "patch.diff").read_text().split("def sub")[1]
    assert [(d["verdict"], d["note"]) for d in decisions(run_dir)] == [("send-back", note)]


async def test_take_over_from_the_replay_becomes_a_new_revision(real, monkeypatch):
    from dgym_tui.core.session_file import read_session
    from dgym_tui.ui.app import DgymApp

    run_dir, _repos = real
    run = RunDir.open(run_dir)
    half = run.trials["half__all__1"]
    # `o` hands the terminal to `dgym-tui replay` on this copy; here the replay runs as a pilot
    replayed, data_dir = rework.prepare_replay(run, half)
    monkeypatch.setenv("DGYM_TUI_DATA_DIR", str(data_dir))
    replay = DgymApp(recording=read_session(str(replayed)))
    async with replay.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: replay.replay is not None and replay.main.state.stop is not None,
                       timeout=30, what="the replay")
        replay.replay.seek(len(replay.replay.replayer.events))  # its end: the agent's fix of add() made
        replay.replay.take_over(with_agent=False)
        await wait_for(pilot, lambda: replay.replay is None and replay.session.state.program == "stopped",
                       timeout=120, what="the live session")
        assert "return a + b" in replay.session.read_source("calc.py")  # the trial's change carried over
        replay.session.edit("calc.py", "    return a - b", 6, 6)  # the person fixes sub()
    replay.writer.close()
    monkeypatch.setattr(rework, "replay", lambda run_, trial: rework.taken_over(data_dir))
    app = ReviewApp(run)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await pilot.press("down", "o")
        await wait_for(pilot, lambda: half.revision == 1 and half.pending is None, timeout=SCORE_TIMEOUT,
                       what="the take-over scored")
        assert half.origin == "take-over" and half.status == "resolved", half.result.reason
    patch = (run_dir / "revisions" / "half__all__1" / "1" / "patch.diff").read_text()
    assert "+    return a + b" in patch and "+    return a - b" in patch
    assert (run_dir / "revisions" / "half__all__1" / "1" / "session.jsonl").is_file()


SUB_FIX = "\n-    return a + b\n+    return a - b\n"  # sub() fixed too, by hand (hunk counts recounted)

HOLD_AND_WAIT = """
import sys, time
from pathlib import Path
from dgym_tui.review import revisions
rev = revisions.create(sys.argv[1], sys.argv[2], "edit", Path(sys.argv[3]).read_text())
with revisions.scoring(rev):  # as an inbox scoring it holds it
    print("scoring", flush=True)
    time.sleep(600)
"""


async def test_a_revision_left_unscored_is_scored_when_the_inbox_next_opens(real, tmp_path):
    """An inbox killed while it scored an edit left the revision waiting for its score, and the
    trial "scoring…" for good: approving it was refused. Now the next opening scores it; while
    another process still scores it, it is left to that process."""
    import signal
    import subprocess
    import sys

    run_dir, _repos = real
    run = RunDir.open(run_dir)
    half = run.trials["half__all__1"]
    patch = tmp_path / "edit.diff"
    patch.write_text(rework.normalise_patch(rework.task_of(run, half), run.patch(half).rstrip("\n") + SUB_FIX))
    scorer = subprocess.Popen([sys.executable, "-c", HOLD_AND_WAIT, str(run_dir), half.id, str(patch)],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert scorer.stdout.readline() == "scoring\n"
        app = ReviewApp(RunDir.open(run_dir))
        async with app.run_test(size=(80, 24)) as pilot:
            mine = app.rundir.trials[half.id]
            await wait_for(pilot, lambda: not app.reworking, what="the look at the waiting revision")
            assert mine.pending == "scoring…" and mine.revision == 0  # the other process scores it
            await pilot.press("down", "a")
            assert not mine.approved  # refused: its score is not in
    finally:
        scorer.send_signal(signal.SIGKILL)  # killed mid-scoring, as the inbox was
        scorer.wait()
    assert not (run_dir / "revisions" / half.id / "1" / "result.json").exists()
    app = ReviewApp(RunDir.open(run_dir))
    async with app.run_test(size=(80, 24)) as pilot:
        mine = app.rundir.trials[half.id]
        await wait_for(pilot, lambda: mine.revision == 1 and mine.pending is None, timeout=SCORE_TIMEOUT,
                       what="the waiting revision scored")
        assert mine.origin == "edit" and mine.status == "resolved", mine.result.reason
        assert "revision 1 (edit), left unscored when the review ended, scored resolved" in str(
            app.inbox.query_one("#review-note").render())
        row = [t.id for t in app.inbox.shown].index(half.id)
        await wait_for(pilot, lambda: cell(app, row, "diff") == "+2/-2", what="the new revision's diff size")
        app.inbox.table.move_cursor(row=row)
        await pilot.press("a")
        await pilot.pause()
        assert mine.approved
    assert [(d["verdict"], d["revision"]) for d in decisions(run_dir)] == [("approve", 1)]


async def test_quitting_while_a_revision_is_scored_asks_and_finishes_it(real):
    """q while an edit is being scored asks first; quitting then finishes the scoring before the
    review ends (the terminal says so), rather than leaving it half done without a word."""
    import threading

    from textual.widgets import TextArea

    from dgym_tui.batch.scoring import score_patch
    from dgym_tui.ui.screens.modals import ConfirmScreen

    run_dir, _repos = real
    run = RunDir.open(run_dir)
    half = run.trials["half__all__1"]
    gate = threading.Event()

    def held_scorer(*args, **kwargs):  # the real scoring, once the test lets it go
        gate.wait(SCORE_TIMEOUT)
        return score_patch(*args, **kwargs)

    app = ReviewApp(run, scorer=held_scorer)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await pilot.press("down", "e")
        await wait_for(pilot, lambda: app.screen.query(TextArea), what="the editor")
        app.screen.query_one(TextArea).text = run.patch(half).rstrip("\n") + SUB_FIX
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: half.id in app.reworking, what="the scoring to start")
        await pilot.press("q")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen), what="the question")
        assert "A new revision of half__all__1 is on its way" in str(app.screen.query_one(".title").render())
        await pilot.press("n")
        await pilot.pause()
        assert app.screen is app.inbox and app.is_running
        await pilot.press("ctrl+q")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen), what="the question again")
        await pilot.press("y")
        await wait_for(pilot, lambda: app._exit, what="the exit")
        assert any("finishing the new revision of half__all__1" in str(m) for m in app._exit_renderables)
        gate.set()
    for _ in range(SCORE_TIMEOUT * 10):  # the scoring goes on, and its score lands
        if (run_dir / "revisions" / half.id / "1" / "result.json").is_file():
            break
        await asyncio.sleep(0.1)
    result = json.loads((run_dir / "revisions" / half.id / "1" / "result.json").read_text())
    assert result["status"] == "resolved"


async def test_filters_and_a_running_batch(tmp_path):
    run_dir = synthetic_run_dir(tmp_path / "run", 8, arms=("all", "pdb-only"))
    lines = (run_dir / "results.jsonl").read_text().splitlines(keepends=True)
    (run_dir / "results.jsonl").write_text("".join(lines[:4]))
    app = ReviewApp(RunDir.open(run_dir))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert app.inbox.table.row_count == 4
        assert "4/8 trials" in str(app.inbox.query_one("#review-header").render())
        with open(run_dir / "results.jsonl", "a") as fh:
            fh.write("".join(lines[4:]))
        await wait_for(pilot, lambda: app.inbox.table.row_count == 8, timeout=10, what="the new trials")
        await pilot.press("f")  # resolved only
        assert {cell(app, i, "status") for i in range(app.inbox.table.row_count)} == {"resolved"}
        await pilot.press("f", "f", "f", "f", "m")  # back to every status; one arm
        arms = {cell(app, i, "arm") for i in range(app.inbox.table.row_count)}
        assert len(arms) == 1 and app.inbox.table.row_count == 4
        await pilot.press("m", "m", "a", "u")  # the other arm, then every arm; approve the first; undecided only
        assert app.inbox.table.row_count == 7
        await pilot.press("question_mark")
        await pilot.pause()
        assert "keys" in str(app.screen.query_one(".title").render())


async def test_a_decision_redraws_its_cells_not_the_table(tmp_path):
    """The poll sees reviews.jsonl change after each decision: only verdict cells are redrawn (a
    rebuild of a thousand rows would stall the screen after every key)."""
    run_dir = synthetic_run_dir(tmp_path / "run", 40)
    app = ReviewApp(RunDir.open(run_dir))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        rebuilds = []
        original = app.inbox.redraw
        app.inbox.redraw = lambda: (rebuilds.append(1), original())
        from dgym_tui.review import reviews

        other = app.inbox.shown[5]
        reviews.record(run_dir, other.id, "reject", other.patch_sha256, "by someone else")
        await pilot.press("a", "a")
        await wait_for(pilot, lambda: cell(app, 5, "verdict") == "rejected", timeout=10, what="the other's verdict")
        await pilot.pause(1.5)
        assert rebuilds == []
        assert [cell(app, i, "verdict") for i in range(3)] == ["approved", "approved", ""]


async def test_the_palette_exports_predictions_and_makes_branches(tmp_path):
    repos = [task_repo(tmp_path / "repos", f"calc{i}") for i in range(2)]
    run_dir = synthetic_run_dir(tmp_path / "run", 4, repos)
    app = ReviewApp(RunDir.open(run_dir))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await pilot.press("a")
        for command in ("SWE-bench predictions", "branch per approved"):
            await pilot.press("ctrl+p")
            await pilot.pause()
            await pilot.press(*command)
            await pilot.pause(0.3)
            await pilot.press("enter")
            await wait_for(pilot, lambda: not any(w.group == "review-export" and w.is_running for w in app.workers),
                           what="the export")
            await pilot.pause(0.3)
    preds = [json.loads(line) for line in (run_dir / "approved" / "predictions.jsonl").read_text().splitlines()]
    assert [p["instance_id"] for p in preds] == ["task-0000"]
    from review_fixtures import git

    assert git(repos[0][0], "branch", "--list", "dgym/*").split() == ["dgym/task-0000"]


def test_review_screen_snapshot(snap_compare, tmp_path):
    run_dir = synthetic_run_dir(tmp_path / "run", 12, arms=("all", "no-pdb"))
    from dgym_tui.review import reviews

    run = RunDir.open(run_dir)
    first, second = run.sorted_trials()[:2]
    reviews.record(run_dir, first.id, "approve", first.patch_sha256, by="t")
    reviews.record(run_dir, second.id, "reject", second.patch_sha256, "wrong fix", by="t")

    app = ReviewApp(RunDir.open(run_dir), theme="dgym-dark")

    async def settle(pilot):
        await wait_for(pilot, lambda: app.inbox.table.row_count == 12 and all(
            "…" not in cell(app, i, "diff") for i in range(12)), what="diff sizes")
        await pilot.pause(0.2)

    assert snap_compare(app, terminal_size=(80, 24), run_before=settle)


# --- the installed app in a terminal --------------------------------------------------------------

def test_installed_review_in_tmux_approve_two_reject_one_export(installed, tmp_path):
    import shutil as sh

    if sh.which("tmux") is None:
        pytest.fail("tmux is needed for the end-to-end tests (CI installs it)")
    from test_e2e_tmux import Tmux

    repos = [task_repo(tmp_path / "repos", f"calc{i}") for i in range(3)]
    run_dir = synthetic_run_dir(tmp_path / "run", 12, repos)
    env = {"DGYM_TUI_CONFIG_DIR": str(tmp_path / "config"), "TERM": "xterm-256color"}
    tmux = Tmux(f"dgym-review-{os.getpid()}", f"{installed} review {run_dir}", str(tmp_path), env)
    try:
        tmux.wait_for("undecided 12", timeout=60)
        tmux.keys("a")
        tmux.wait_for("approved 1 ")
        tmux.keys("a")
        tmux.wait_for("approved 2 ")
        tmux.keys("r")
        tmux.wait_for("why?")
        tmux.type("not this one")
        tmux.keys("Enter")
        tmux.wait_for("rejected 1 ")
        tmux.keys("x")
        screen = tmux.wait_for("2 approved patch(es) written")
        tmux.keys("q")
        tmux.wait_for("DGYM-EXITED-0")
    finally:
        tmux.close()
    lines = decisions(run_dir)
    assert [d["verdict"] for d in lines] == ["approve", "approve", "reject"] and lines[2]["note"] == "not this one"
    assert sorted(p.name for p in (run_dir / "approved").iterdir()) == ["task-0000.patch", "task-0004.patch"]
    assert "Traceback" not in screen


def test_installed_review_hands_the_terminal_to_the_replay_and_back(installed, real, tmp_path):
    """`o` in a terminal: the replay (the debugger app) takes the terminal, a take-over there runs
    live, and quitting it comes back to the inbox, which reads what the take-over did."""
    import shutil as sh

    if sh.which("tmux") is None:
        pytest.fail("tmux is needed for the end-to-end tests (CI installs it)")
    from test_e2e_tmux import Tmux

    run_dir, _repos = real
    env = {"DGYM_TUI_CONFIG_DIR": str(tmp_path / "config"), "TERM": "xterm-256color",
           "PATH": f"{Path(installed).parent}:{os.environ['PATH']}"}
    tmux = Tmux(f"dgym-review-o-{os.getpid()}", f"{installed} review {run_dir}", str(tmp_path), env)
    try:
        tmux.wait_for("undecided 3", timeout=60)
        tmux.keys("o")
        tmux.wait_for("take over here", timeout=60)  # the replay's timeline
        tmux.keys("End")
        tmux.keys("Enter")
        tmux.wait_for("exited with code 0", timeout=120)  # live: the tests ran to their end
        tmux.keys("Escape")
        tmux.keys("q")
        tmux.wait_for("Quit and discard", timeout=30)
        tmux.keys("y")
        screen = tmux.wait_for("no new revision", timeout=120)  # back in the inbox: nothing changed
        assert "approved 0 rejected 0 undecided 3" in screen
        tmux.keys("q")
        tmux.wait_for("DGYM-EXITED-0")
    finally:
        tmux.close()
    sessions = list((run_dir / "revisions" / "fixed__all__1" / "takeover" / "1" / "sessions").rglob("*.jsonl"))
    assert len(sessions) == 1 and '"taken_over_from"' in sessions[0].read_text().splitlines()[0]


def test_a_replay_that_fails_is_said_not_taken_for_no_take_over(real):
    run_dir, _repos = real
    run = RunDir.open(run_dir)
    half = run.trials["half__all__1"]
    with pytest.raises(rework.ReworkError, match="the replay ended with exit status 3"):
        rework.replay(run, half, command=[sys.executable, "-c", "raise SystemExit(3)"])
    assert rework.replay(run, half, command=[sys.executable, "-c", "raise SystemExit(130)"]) is None  # Ctrl-C
    assert rework.replay(run, half, command=[sys.executable, "-c", "pass"]) is None
