"""Saved sessions: the file as it is written (durable, linear, a torn line skipped), resume,
replay (the same fold, one event at a time, back and forth) and take-over — with real sessions
(local sandbox, real pdb and git) and the scripted model."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from test_agent import TALLY, make_repo
from test_ui_support import wait_for

from dgym_tui.agent.approval import Answer
from dgym_tui.agent.loop import Agent
from dgym_tui.agent.scripted import ScriptedModel
from dgym_tui.core.replayer import Replayer
from dgym_tui.core.session import Session
from dgym_tui.core.session_file import SessionFileError, SessionWriter, changed_since, read_session
from dgym_tui.core.state import fold

SCRIPT = Path(__file__).resolve().parent / "agent_scripts" / "tally.json"


@pytest.fixture
def tally(tmp_path):
    return make_repo(tmp_path / "tally", TALLY)


@pytest.fixture(autouse=True)
def dirs(tmp_path, monkeypatch):
    monkeypatch.setenv("DGYM_TUI_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("DGYM_TUI_DATA_DIR", str(tmp_path / "data"))


def record(repo, path, answers=None) -> Session:
    """A whole agent session on the repo, written to path; the session is returned closed."""
    session = Session(str(repo), sandbox="local")
    writer = SessionWriter.open(path, session, mode="auto", model="scripted:tally")
    try:
        session.start()
        answers = list(answers or [Answer("approve")] * 4)
        agent = Agent(session, ScriptedModel.from_file(SCRIPT), mode="auto", max_steps=20,
                      auto_answer=lambda r: answers.pop(0))
        agent.run()
    finally:
        session.close()
        writer.close()
    return session


# --- the file -----------------------------------------------------------------------------------------


def test_the_file_holds_the_whole_stream_once_and_folds_to_the_live_state(tally, tmp_path):
    path = tmp_path / "s.jsonl"
    session = record(tally, path)
    saved = read_session(path)
    assert saved.header["format"] == "dgym-tui-session" and saved.header["mode"] == "auto"
    assert saved.header["repo_hashes"]["tally/__init__.py"]
    assert not saved.warnings
    live = [e for e in session.events.history if e.kind != "model_delta"]
    assert [e.seq for e in saved.events] == [e.seq for e in live]
    assert fold(saved.events) == fold(live)
    # each file's text and each model message are in the file once
    texts = [e.data.sha for e in saved.events if e.kind == "file" and e.data.text is not None]
    assert len(texts) == len(set(texts))
    raw = path.read_text()
    assert raw.count('"Let me stop where the mean is computed') == 0  # (that wording is not in the script)
    system = next(e.data.message["content"] for e in saved.events if e.kind == "agent_message")
    assert raw.count(json.dumps(system)[1:60]) == 1  # the system prompt is stored once, not per request


def test_a_torn_last_line_is_skipped_with_a_warning_and_bad_files_are_refused(tally, tmp_path):
    path = tmp_path / "s.jsonl"
    record(tally, path)
    whole = path.read_bytes()
    torn = tmp_path / "torn.jsonl"
    torn.write_bytes(whole[:-40])  # cut in the middle of the last event
    saved = read_session(torn)
    assert saved.warnings and "cut short" in saved.warnings[0]
    assert len(saved.events) == len(read_session(path).events) - 1
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    with pytest.raises(SessionFileError, match="empty"):
        read_session(empty)
    text = tmp_path / "notes.txt"
    text.write_text("hello\nworld\n")
    with pytest.raises(SessionFileError, match="not a dgym-tui session"):
        read_session(text)
    future = tmp_path / "future.jsonl"
    header, *rest = whole.decode().splitlines()
    future.write_text(json.dumps({**json.loads(header), "schema": 99}) + "\n" + "\n".join(rest) + "\n")
    with pytest.raises(SessionFileError, match="schema 99"):
        read_session(future)
    middle = tmp_path / "middle.jsonl"
    lines = whole.decode().splitlines()
    middle.write_text("\n".join(lines[:5] + ["{oops"] + lines[5:]) + "\n")
    with pytest.raises(SessionFileError, match="line 6 is not a valid event"):
        read_session(middle)


def test_a_full_disk_is_said_once_and_the_session_goes_on(tally, tmp_path, monkeypatch):
    full = "/dev/full"  # every write fails with ENOSPC
    if not os.path.exists(full):
        pytest.skip("no /dev/full here")
    crashed = []
    monkeypatch.setattr(threading, "excepthook", crashed.append)
    session = Session(str(tally), sandbox="local")
    writer = SessionWriter(Path(full), {"format": "dgym-tui-session"}, session)
    said = []
    writer.on_error = said.append
    try:
        session.start()
        assert session.send("p 1 + 1").output == "2\n"
        deadline = time.monotonic() + 5
        while not said and time.monotonic() < deadline:
            time.sleep(0.02)
        assert len(said) == 1 and "could not be written" in said[0] or "cannot write" in said[0]
        assert session.send("p 2 + 2").output == "4\n"  # the session went on
        assert len(said) == 1
    finally:
        session.close()
        writer.close()
    assert not crashed, "the writer's thread died of the full disk instead of ending"


def test_killed_mid_run_the_file_is_readable_and_resume_goes_on(tally, tmp_path):
    """SIGKILL while the agent works (a real process), then resume: a new sandbox with the
    recorded change applied, the breakpoints set again, the agent's conversation continued."""
    path = tmp_path / "killed.jsonl"
    code = f"""
import sys, threading
sys.path.insert(0, {str(Path(__file__).parent)!r})
from dgym_tui.agent.approval import Answer
from dgym_tui.agent.loop import Agent
from dgym_tui.agent.scripted import ScriptedModel
from dgym_tui.core.session import Session
from dgym_tui.core.session_file import SessionWriter
s = Session({str(tally)!r}, sandbox="local")
w = SessionWriter.open({str(path)!r}, s, mode="auto", model="scripted:tally")
s.start()
answers = [Answer("reject", "plainer"), Answer("approve"), Answer("approve"), Answer("approve")]
def answer(request):
    if request.tool == "submit":
        print("SUBMITTING", flush=True)
        threading.Event().wait()  # hang here, asked to submit: killed while it waits
    return answers.pop(0)
Agent(s, ScriptedModel.from_file({str(SCRIPT)!r}), mode="auto", max_steps=20, auto_answer=answer).run()
"""
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "SUBMITTING"
        # killed once the request for approval is on disk (the writer thread puts it there)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not any(
                '"approval_requested"' in line and '"tool":"submit"' in line.replace(" ", "")
                for line in path.read_text().splitlines()):
            time.sleep(0.05)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
    saved = read_session(path)
    kinds = [e.kind for e in saved.events]
    assert kinds.count("checkpoint") == 1 and kinds[-1] in ("approval_requested", "agent_status")
    state = fold(saved.events)
    assert state.agent.waiting is not None and state.agent.waiting.tool == "submit"
    assert state.agent.step == 7 and not changed_since(saved.header)
    # resume: a live session from the file, appending to it
    session = Session.resume(saved)
    writer = SessionWriter.append(path, session)
    try:
        session.start()
        assert session.state.program in ("stopped", "exited"), session.state.error  # fixed: the tests pass
        # the recorded change is in the new sandbox (the breakpoint on its rewritten line went with it)
        assert session.sandbox.read_text("tally/__init__.py").endswith("return total / len(values)\n")
        assert [c.message for c in session.state.checkpoints] == ["edit tally/__init__.py:5-5"]
        from dgym_tui.agent.setup import make_agent
        from dgym_tui.config import AgentSettings

        agent = make_agent(session, AgentSettings(model=f"scripted:{SCRIPT}", mode="auto"),
                           auto_answer=lambda r: Answer("approve"))
        assert agent.resume_from is not None and len(agent.resume_from.conversation) > 10
        assert agent.run() == "submitted"
        assert session.run_tests().ok
        # the cut call got its result, the conversation went on where it stopped
        results = [m for m in agent.messages if m.get("content") == "not executed: the session was interrupted here"]
        assert len(results) == 1
    finally:
        session.close()
        writer.close()
    again = read_session(path)
    seqs = [e.seq for e in again.events]
    assert not again.warnings and seqs == sorted(set(seqs))  # one stream, in order (streamed pieces left out)
    assert any(e.kind == "resumed" for e in again.events)
    assert fold(again.events).agent.state == "submitted"


def test_resume_says_which_files_changed_and_when_the_repo_is_gone(tally, tmp_path):
    path = tmp_path / "s.jsonl"
    record(tally, path)
    saved = read_session(path)
    assert changed_since(saved.header) == []
    (tally / "tally" / "__init__.py").write_text("# edited by the person\n")
    (tally / "notes.md").write_text("new\n")
    assert changed_since(saved.header) == ["notes.md", "tally/__init__.py"]
    out = subprocess.run([sys.executable, "-m", "dgym_tui", "resume", str(path)], input="n\n", capture_output=True,
                         text=True, timeout=60)
    assert out.returncode == 1 and "changed since this session: notes.md, tally/__init__.py" in out.stdout
    moved = tmp_path / "elsewhere"
    tally.rename(moved)
    out = subprocess.run([sys.executable, "-m", "dgym_tui", "resume", str(path)], capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 2 and "is not there any more" in out.stderr and "Traceback" not in out.stderr
    # replay needs no repo
    out = subprocess.run([sys.executable, "-m", "dgym_tui", "replay", "--headless", str(path)], capture_output=True,
                         text=True, timeout=60)
    assert out.returncode == 0 and "agent submitted: mean divided by n - 1 instead of n" in out.stdout


# --- replay -----------------------------------------------------------------------------------------


def test_the_replayer_moves_one_meaningful_event_at_a_time_and_back(tally, tmp_path):
    path = tmp_path / "s.jsonl"
    record(tally, path)
    events = read_session(path).events
    replayer = Replayer(events)
    assert all(events[p - 1].kind not in ("call_started", "file", "agent_message") for p in replayer.frames)
    start = replayer.first_stop()
    assert events[start - 1].kind == "stop"
    state = fold(replayer.move_to(start)[0])
    forward, rebuild = replayer.move_to(replayer.next_position())
    assert not rebuild and forward
    for e in forward:
        state.apply(e)
    back, rebuild = replayer.move_to(replayer.previous_position())
    assert rebuild and fold(back) == fold(events[:start])
    # every position folds to what the live session had at that seq
    for position in replayer.frames[::7]:
        replayer.move_to(position)
        assert fold(events[:position]).seq == events[position - 1].seq
    assert replayer.marks(60) and len(replayer.marks(60)) == 60


async def test_replay_in_the_app_then_take_over_here(tally, tmp_path):
    from dgym_tui.ui.app import DgymApp
    from dgym_tui.ui.widgets.timeline import Timeline

    path = tmp_path / "s.jsonl"
    record(tally, path, [Answer("reject", "plainer"), Answer("approve"), Answer("approve"), Answer("approve")])
    saved = read_session(path)
    app = DgymApp(recording=saved)
    async with app.run_test(size=(150, 45)) as pilot:
        await wait_for(pilot, lambda: app.main.state.stop is not None, what="the replay at its first stop")
        timeline = app.main.query_one(Timeline)
        await wait_for(pilot, lambda: app.main.focused is timeline, what="the timeline focused")  # on the next tick
        assert app.main.state.stop.reason == "post_mortem"
        # forward to the agent's `c`: the stop in mean, with its locals
        while not (app.main.state.stop and app.main.state.stop.function == "mean"):
            await pilot.press("l")
        await pilot.pause()
        assert app.main.state.stop.locals["values"] == "[2, 4, 6]"
        assert app.main.source.path == "tally/__init__.py" and app.main.source.current_line == 5
        here = app.replay.replayer.position
        await pilot.press("l", "l", "h", "h")
        assert app.replay.replayer.position == here
        assert fold(saved.events[:here]) == app.main.state
        # keys that would act are refused, and say how to take over
        await pilot.press("n")
        await pilot.pause()
        assert any("this is a replay" in n.message for n in app._notifications)
        # take over here: a live session, its breakpoint set again, stopped where the replay was
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.replay is None and app.session.state.program == "stopped",
                       timeout=60, what="the live session")
        live = app.session
        await wait_for(pilot, lambda: live.state.stop is not None and live.state.stop.function == "mean",
                       timeout=60, what="the breakpoint hit again")
        assert [(bp.file, bp.line) for bp in live.breakpoints.items()] == [("tally/__init__.py", 5)]
        assert live.send("p total").output == "12\n"  # it is live: pdb answers
        assert any(e.kind == "resumed" and e.data.take_over for e in live.events.history)
        written = app.writer.path
    app.writer.close()
    branch = read_session(written)
    assert branch.header["taken_over_from"] == str(path)
    seqs = [e.seq for e in branch.events]
    assert seqs == sorted(set(seqs)) and seqs[0] == 1


async def test_end_and_take_over_pressed_while_a_big_file_is_still_read_wait_for_it(tally, tmp_path, monkeypatch):
    """A replay first reads its file to the first stop; End and Enter pressed before the rest is
    read are done once it is: at the file's last event, not the part read so far, nor dropped (a
    tmux test under load pressed them that early)."""
    from dgym_tui.ui import replay_control as replay_ui
    from dgym_tui.ui.app import DgymApp

    path = tmp_path / "s.jsonl"
    record(tally, path)
    whole = read_session(path)
    first = read_session(path, until="stop")
    assert not first.complete and len(first.events) < len(whole.events)
    monkeypatch.setattr(replay_ui, "READ_REST_AFTER", 1.5)  # the keys surely come first
    app = DgymApp(recording=first)
    async with app.run_test(size=(150, 45)) as pilot:
        await wait_for(pilot, lambda: app.main.state.stop is not None, what="the replay at its first stop")
        assert not app.replay.recording.complete
        await pilot.press("end", "enter")
        assert app.replay is not None and "taking over once it is read" in app.replay.timeline.note
        await wait_for(pilot, lambda: app.replay is None and app.session.state.program in ("stopped", "exited"),
                       timeout=60, what="the live session")
        written = app.writer.path
    app.writer.close()
    assert read_session(written).header["upto"] == whole.events[-1].seq


async def test_forward_pressed_while_a_big_file_is_still_read_steps_once_it_is(tally, tmp_path, monkeypatch):
    """→ pressed at the first stop before the rest of the file is read (the next event is not in
    the part read yet) is taken once it is: one event on, not dropped (a tmux test pressed it as
    soon as the stop showed, and the replay stayed where it was)."""
    from dgym_tui.ui import replay_control as replay_ui
    from dgym_tui.ui.app import DgymApp

    path = tmp_path / "s.jsonl"
    record(tally, path)
    first = read_session(path, until="stop")
    assert not first.complete
    monkeypatch.setattr(replay_ui, "READ_REST_AFTER", 1.5)  # the key surely comes first
    app = DgymApp(recording=first)
    async with app.run_test(size=(150, 45)) as pilot:
        await wait_for(pilot, lambda: app.main.state.stop is not None, what="the replay at its first stop")
        replayer = app.replay.replayer
        at_stop = replayer.position
        assert replayer.next_position() is None  # what follows the stop is not read yet
        await pilot.press("right")
        assert replayer.position == at_stop
        await wait_for(pilot, lambda: app.replay.recording.complete, what="the rest of the file read")
        assert replayer.position == replayer.frames[replayer.frames.index(at_stop) + 1]


async def test_replay_plays_and_the_demo_session_replays(tmp_path):
    from dgym_tui.core.replayer import Replayer
    from dgym_tui.demo import demo_session

    saved = read_session(demo_session())
    assert not saved.warnings
    final = fold(saved.events)
    assert final.agent.scripted and final.agent.state == "submitted"
    tests = [e.data for e in saved.events if e.kind == "tests"]
    assert not tests[0].ok and tests[-1].ok and tests[-1].passed == 23
    decisions = [(e.actor, e.data.verdict) for e in saved.events if e.kind == "decision"]
    assert ("human", "reject") in decisions and ("human", "try") in decisions
    assert len(final.checkpoints) == 4
    replayer = Replayer(saved.events)
    assert len(replayer.frames) > 100


def test_watches_logpoints_and_hit_conditions_come_back_on_resume(tally, tmp_path):
    make_repo(tally, {"run.py": "from tally import mean\nprint(mean([2, 4, 6]))\n"})
    path = tmp_path / "watched.jsonl"
    session = Session(str(tally), sandbox="local", entrypoint="python run.py")
    writer = SessionWriter.open(path, session, mode="manual", model="")
    try:
        session.start()
        session.watch("total * 10")
        session.set_breakpoint("tally/__init__.py", 4, log="value={value}")
        session.set_breakpoint("tally/__init__.py", 3, hit="2")
        assert session.send("c").stop.watches[0].value == "20"
    finally:
        session.close()
        writer.close()
    saved = read_session(path)
    stops = [e.data for e in saved.events if e.kind == "stop"]
    assert stops[-1].watches[0].expr == "total * 10" and stops[-1].watches[0].value == "20"  # in the file
    resumed = Session.resume(saved)
    try:
        resumed.start()
        assert resumed.breakpoints.watches == ["total * 10"]
        assert [(b.line, b.log, b.hit) for b in resumed.breakpoints.items()] == [(4, "value={value}", None),
                                                                                (3, None, "hit == 2")]
        r = resumed.send("c")
        assert "[log tally/__init__.py:4] value=2" in r.output
        assert (r.stop.line, r.stop.watches[0].value) == (3, "20")
    finally:
        resumed.close()
