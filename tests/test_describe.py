"""One describer of events (core/describe.py): every kind a real session records is said in
words or is bookkeeping, and the views say it in those same words (the HTML replay, replay
--headless, the agent's notes of what the person did)."""

from __future__ import annotations

from dgym_tui.core import events as ev
from dgym_tui.core.describe import QUIET, Describer, words
from dgym_tui.core.session_file import read_session
from dgym_tui.demo import demo_session


def test_every_kind_of_a_real_session_is_said_or_is_bookkeeping():
    events = read_session(demo_session()).events
    describer = Describer()
    kinds = {e.kind for e in events}
    said = {e.kind for e in events for w in describer.describe(e)}
    assert {"stop", "pdb_input", "tool_call", "tool_result", "model_reply", "checkpoint", "tests"} <= said
    generic = {e.kind for e in events if any(w.kind == "other" for w in Describer().describe(e))}
    assert generic == set(), f"kinds with no words of their own: {generic}"
    assert kinds - said <= QUIET | {"breakpoints", "agent_status", "pdb_output"}
    assert set(ev.PAYLOADS) - QUIET <= set(Describer()._say), "a payload kind the describer does not know"


def test_a_breakpoint_change_says_only_what_changed():
    describer = Describer()
    a = ev.Breakpoint("x.py", 3, number=1)
    b = ev.Breakpoint("x.py", 9, "i > 2", actor="agent", number=2)
    first = describer.describe(ev.Event(1, 0, "human", ev.Breakpoints(breakpoints=[a])))
    second = describer.describe(ev.Event(2, 0, "agent", ev.Breakpoints(breakpoints=[a, b])))
    third = describer.describe(ev.Event(3, 0, "human", ev.Breakpoints(breakpoints=[b])))
    assert [w.text for w in first + second + third] == [
        "● breakpoints: + x.py:3", "● breakpoints: + x.py:9 if i > 2", "● breakpoints: − x.py:3"]
    hits = describer.describe(ev.Event(4, 0, "agent", ev.Breakpoints(breakpoints=[b])))
    assert hits == []  # nothing changed that a person reads


def test_the_views_use_the_describers_words():
    from dgym_tui.headless import describe
    from dgym_tui.sessions.html import replay_data

    recording = read_session(demo_session())
    data = replay_data(recording)
    html_titles = [row[2] for row in data["transcript"]]
    describer = Describer()
    expected = [w.text for e in recording.events for w in describer.describe(e) if w.kind != "progress"]
    assert html_titles == expected
    stop = next(e for e in recording.events if e.kind == "stop" and e.actor == "agent")
    assert describe(stop) == f"agent {Describer().describe(stop)[0].text}"


def test_words_keep_their_emphasis():
    w = words("stop", "→ stopped at ", ("a.py:3", "b"), " in f ", ("(step)", "dim"))
    assert w.text == "→ stopped at a.py:3 in f (step)" and w.parts[1] == ("a.py:3", "b")


def test_a_take_over_says_from_which_event_of_which_recording():
    resumed = ev.Resumed(source="/tmp/x/tally.jsonl", upto=55, take_over=True)
    (said,) = Describer().describe(ev.Event(56, 0, "system", resumed))
    assert said.text == "↻ taken over from event 55 of tally.jsonl: a new sandbox"
    resumed = ev.Resumed(source="/tmp/x/tally.jsonl", upto=9, changed=["a.py"])
    (said,) = Describer().describe(ev.Event(10, 0, "system", resumed))
    assert said.text == "↻ resumed from event 9 of tally.jsonl: a new sandbox — changed in the repo since: a.py"
