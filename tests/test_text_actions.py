"""Text actions (issue 25): a model that makes no native tool call still drives the agent.

The parser on its own; then the real agent on a real session (local sandbox, real pdb, real git)
with a scripted model in text mode, in auto mode (the switch after silent replies, at once when a
reply already holds a text action, when the provider refuses tools — that one through litellm's
real HTTP path to the stub server), a stuck model, resume, and the exports of such a session.
"""

from __future__ import annotations

import json
import threading
import time

import pytest

from dgym_tui.agent.approval import Answer
from dgym_tui.agent.loop import LOOPED, Agent
from dgym_tui.agent.repeats import SAME_RESULT
from dgym_tui.agent.policy import Policy
from dgym_tui.agent.scripted import ScriptedModel
from dgym_tui.agent.text_actions import compact_listing, instructions, parse_action
from dgym_tui.core.events import AGENT
from dgym_tui.core.session import Session
from dgym_tui.core.session_file import SessionWriter, read_session
from dgym_tui.sessions.chat import check_pairs
from dgym_tui.sessions.export import export
from dgym_tui.tools import registry
from test_agent import TALLY, make_repo, one_result_per_call, results

TOOLS = registry()
ALLOW = Policy.from_config({"allow": ["view", "listdir", "grep", "pdb", "eval", "edit", "submit"], "ask": []})


def act(name: str, **arguments) -> str:
    return f"Let me look.\n```json\n{json.dumps({'name': name, 'arguments': arguments})}\n```"


# --- the parser -------------------------------------------------------------------------------

@pytest.mark.parametrize("text, name, args", [
    (act("pdb", command="b tally/__init__.py:5"), "pdb", {"command": "b tally/__init__.py:5"}),
    ('I will view it: {"name": "view", "arguments": {"path": "a.py"}}', "view", {"path": "a.py"}),
    ('<tool_call>\n{"name": "eval", "arguments": {}}\n</tool_call>', "eval", {}),
    ('```\n{"tool": "grep", "args": {"pattern": "total"}}\n```', "grep", {"pattern": "total"}),
    ('```json\n{"name": "view", "arguments": "{\\"path\\": \\"b.py\\"}"}\n```', "view", {"path": "b.py"}),
    ('```json\n{"name": "VIEW", "arguments": {"path": "c.py"}}', "view", {"path": "c.py"}),  # fence never closed
    ('```json\n{"function": {"name": "listdir", "arguments": {}}}\n```', "listdir", {}),
    ('```json {"name": "eval", "arguments": null}}\n```', "eval", {}),  # a real 1.5B's, stray brace and all
])
def test_one_action_is_read_from_the_forms_models_write(text, name, args):
    parsed = parse_action(text, TOOLS)
    assert parsed.error is None and parsed.call is not None
    assert (parsed.call.name, parsed.call.arguments) == (name, args)
    assert parsed.call.id.startswith("text_")


@pytest.mark.parametrize("text, name, args", [
    ('```json\n{"name": "p", "arguments": {"expr": "total"}}\n```', "pdb", {"command": "p total"}),
    ('```json\n{"name": "history", "arguments": {}}\n```', "pdb", {"command": "history"}),
    ('```json\n{"name": "b", "arguments": {"file": "tally/__init__.py", "line": 5}}\n```', "pdb",
     {"command": "b tally/__init__.py:5"}),
    ('```json\n{"name": "pdb", "arguments": {"cmd": "c"}}\n```', "pdb", {"command": "c"}),
    ('```json\n{"name": "view", "arguments": "tally/__init__.py"}\n```', "view", {"path": "tally/__init__.py"}),
    ('```json\n{"name": "eval", "arguments": {"timeout": 30}}\n```', "eval", {}),  # a real 1.5B's call
])
def test_near_misses_are_repaired_and_the_model_is_told_how(text, name, args):
    parsed = parse_action(text, TOOLS)
    assert parsed.call is not None and (parsed.call.name, parsed.call.arguments) == (name, args)
    assert parsed.note.startswith(("(read", "(ignored timeout"))


@pytest.mark.parametrize("text, name, args", [
    # unescaped quotes in a string (a real 0.5B model's submit, word for word)
    ('```json {"name": "submit", "arguments": {"message": "The assertion should be assert '
     'reverse_words("three two one") == \'three two\'. "}}\n```', "submit",
     {"message": "The assertion should be assert reverse_words(\"three two one\") == 'three two'. "}),
    # code with quotes and raw newlines in new_code
    ('```json\n{"name": "edit", "arguments": {"path": "a.py", "start": 3, "end": 3, '
     '"new_code": "    print("hi")\n    return "x""}}\n```', "edit",
     {"path": "a.py", "start": 3, "end": 3, "new_code": '    print("hi")\n    return "x"'}),
])
def test_strings_with_unescaped_quotes_are_read_by_the_tools_argument_names(text, name, args):
    parsed = parse_action(text, TOOLS)
    assert parsed.call is not None and (parsed.call.name, parsed.call.arguments) == (name, args)
    assert json.loads(parsed.call.raw_arguments) == args  # what is recorded is valid JSON
    assert "escape quotes" in parsed.note


@pytest.mark.parametrize("text, says", [
    ("I think the bug is in mean().", "no action in your reply"),
    ("```python\nprint({1: 2})\n```", "no action found"),
    ('```json\n{"name": "view", "arguments": {"path": "a.py"}\n```', "not valid JSON"),
    (act("view", path="a.py") + "\nthen\n" + act("eval"), "2 actions (view, eval)"),
])
def test_none_two_or_a_malformed_action_is_one_line_that_shows_the_form(text, says):
    parsed = parse_action(text, TOOLS)
    assert parsed.call is None and says in parsed.error
    assert "\n" not in parsed.error and '{"name": TOOL, "arguments": {...}}' in parsed.error or "exactly one" in parsed.error


def test_the_same_action_twice_is_one_action():
    parsed = parse_action(act("eval") + "\n" + act("eval"), TOOLS)
    assert parsed.call is not None and parsed.call.name == "eval"


def test_the_compact_listing_is_a_fraction_of_the_schemas():
    schemas = [t.schema() for _, t in sorted(TOOLS.items())]
    listing = compact_listing(schemas)
    assert len(listing.splitlines()) == len(TOOLS)
    assert "- pdb(command: string, entrypoint?: string):" in listing and "- view(path: string, start?: integer" in listing
    assert len(instructions(listing)) < len(json.dumps(schemas)) / 2


# --- the agent --------------------------------------------------------------------------------

@pytest.fixture
def session(tmp_path):
    s = Session(str(make_repo(tmp_path / "tally", TALLY)), sandbox="local")
    s.start()
    assert s.state.program == "stopped", s.state.error
    yield s
    s.close()


class Recording(ScriptedModel):
    """The scripted model, remembering which tools each query offered."""

    def __init__(self, steps, **kw):
        super().__init__(steps, **kw)
        self.offered: list[list[str]] = []

    def query(self, messages, tools, on_delta=None, **kw):
        self.offered.append([t["function"]["name"] for t in tools])
        return super().query(messages, tools, on_delta, **kw)


FIX = ("Fix it.\n```json\n" + json.dumps({"name": "edit", "arguments": {
    "path": "tally/__init__.py", "start": 5, "end": 5, "new_code": "    return total / len(values)"}}) + "\n```")


def test_text_mode_runs_actions_through_the_same_calls_and_fixes_the_bug(session):
    model = Recording([{"text": act("pdb", command="b tally/__init__.py:5")}, {"text": act("pdb", command="c")},
                       {"text": act("pdb", command="p total, len(values)")}, {"text": FIX}, {"text": act("eval")},
                       {"text": act("submit", message="divide by len(values)")}], name="text")
    agent = Agent(session, model, mode="auto", max_steps=10, task="fix it", policy=ALLOW, tool_format="text",
                  auto_answer=lambda r: Answer("approve"))
    assert agent.run() == "submitted" and agent.submitted == "divide by len(values)"
    assert model.offered and all(offered == [] for offered in model.offered)  # no native tools sent
    system = model.requests[0]["messages"][0]["content"]
    assert '{"name": "pdb", "arguments": {"command": "c"}}' in system and "- edit(path: string" in system
    told = [m for m in model.requests[-1]["messages"] if m["role"] == "user"]
    assert any(m["content"].startswith("Result of pdb:") and "(12, 3)" in m["content"] for m in told)
    assert not any(m["role"] == "tool" or m.get("tool_calls") for m in model.requests[-1]["messages"])
    assert session.run_tests().ok
    requested = [(e.data.tool, e.data.verdict) for e in session.events.history if e.kind == "tool_call"]
    assert requested[:2] == [("pdb", "run"), ("pdb", "run")] and ("edit", "run") in requested
    replies = [e.data for e in session.events.history if e.kind == "model_reply"]
    assert all(len(r.tool_calls) == 1 for r in replies)  # each parsed call is in the record
    assert session.state.agent.tool_format == "text"
    one_result_per_call(session)


def test_a_malformed_or_missing_action_is_told_in_one_line_and_the_agent_goes_on(session):
    model = Recording([{"text": "The bug is the divisor."},
                       {"text": '```json\n{"name": "view", "arguments": {"path": "tally/__init__.py"}\n```'},
                       {"text": act("teleport")}, {"text": act("view", path="tally/__init__.py")}], name="bad")
    agent = Agent(session, model, mode="auto", max_steps=10, task="look", policy=ALLOW, tool_format="text",
                  auto_answer=lambda r: Answer("approve"))
    agent.run()
    told = [m["content"] for m in model.requests[4]["messages"] if m["role"] == "user"]
    assert any(t.startswith("error: no action in your reply; write one action as fenced JSON") for t in told)
    assert any(t.startswith("error: the action is not valid JSON") for t in told)
    assert any("there is no tool named 'teleport'" in t for t in told)
    assert any(t.startswith("Result of view:") and "Viewing `tally/__init__.py`" in t for t in told)


def test_auto_switches_to_text_after_two_silent_replies_and_the_switch_is_recorded(session, tmp_path):
    path = tmp_path / "s.jsonl"
    writer = SessionWriter.open(str(path), session, mode="auto", model="scripted:silent")
    model = Recording([{"text": "`eval"}, {"text": "`eval"}, {"text": act("eval")},
                       {"text": act("submit", message="looked")}], name="silent")
    agent = Agent(session, model, mode="auto", max_steps=10, task="look", policy=ALLOW, tool_format="auto",
                  auto_answer=lambda r: Answer("approve"))
    assert agent.run() == "submitted"
    writer.close()
    assert [bool(o) for o in model.offered] == [True, True, False, False]  # native twice, then text
    nudge = [m["content"] for m in model.requests[1]["messages"] if m["role"] == "user"][-1]
    assert "write the call as one action as fenced JSON" in nudge
    switch = [m["content"] for m in model.requests[2]["messages"] if m["role"] == "user"][-1]
    assert switch.startswith("Your tool calls are not coming through") and "- eval(" in switch
    formats = [(e.data.format, e.data.reason) for e in session.events.history if e.kind == "tool_format"]
    assert formats == [("text", "2 replies in a row without a tool call")]
    recording = read_session(path)
    assert [e.kind for e in recording.events].count("tool_format") == 1
    # the exports stay valid: every native call has its result; the text calls are in each step
    chat = json.loads(export(recording, "chat"))
    assert check_pairs(chat["messages"]) == []
    assert any("Result of eval:" in (m.get("content") or "") for m in chat["messages"])
    trajectory = json.loads(export(recording, "mini-swe-agent"))
    assert trajectory["info"]["exit_status"] == "Submitted"
    debug_gym = json.loads(export(recording, "debug-gym"))
    assert [s["action"]["name"] for s in debug_gym["log"] if s.get("action")][-2:] == ["eval", "submit"]
    assert "tool calls as text from now on" in export(recording, "markdown") + export(recording, "html")


def test_auto_switches_at_once_when_a_reply_already_holds_a_text_action(session):
    model = Recording([{"text": act("view", path="tally/__init__.py")}, {"text": act("submit", message="x")}],
                      name="fenced")
    import io

    from dgym_tui.headless import Progress

    printed = io.StringIO()
    session.events.subscribe(Progress(printed), replay=False)
    agent = Agent(session, model, mode="auto", max_steps=5, task="look", policy=ALLOW,
                  auto_answer=lambda r: Answer("approve"))
    assert agent.run() == "submitted"
    lines = printed.getvalue().splitlines()  # `dgym-tui run`'s lines: the step whole, then the switch
    assert lines[0].startswith("step   1  view(path='tally/__init__.py')  → Viewing") and "Result" not in lines[1]
    assert lines[1] == "⇄ tool calls as text from now on: the model writes its tool calls as text"
    assert [bool(o) for o in model.offered] == [True, False]
    assert [r.tool for r in results(session)] == ["view", "submit"]  # the first reply's action ran
    assert [e.data.reason for e in session.events.history if e.kind == "tool_format"] == [
        "the model writes its tool calls as text"]


def test_a_model_that_repeats_itself_stops_early_with_the_reason(session):
    import io

    from dgym_tui.headless import Progress

    printed = io.StringIO()
    session.events.subscribe(Progress(printed), replay=False)
    model = Recording([{"text": "`eval"}] * 20, name="stuck")
    agent = Agent(session, model, mode="auto", max_steps=20, task="look", policy=ALLOW, tool_format="native",
                  auto_answer=lambda r: Answer("approve"))
    assert agent.run() == "limit"
    said = [line for line in printed.getvalue().splitlines() if line.startswith("agent ")]
    assert said == [f"agent limit: {agent.stuck}"]  # once, though two statuses say it
    assert agent.step == 3
    assert agent.stuck == ("the model repeats itself (the same reply): '`eval' ×3 — it may not support tool "
                           "calls: try --tool-format text")
    assert session.state.agent.state == "limit" and session.state.agent.reason == agent.stuck


def test_the_same_failing_call_three_times_is_stuck_but_stepping_is_not(session):
    steps = [{"text": act("pdb", command="b tally/__init__.py:3")}, {"text": act("pdb", command="c")}] + \
        [{"text": act("pdb", command="n")}] * 4 + [
        {"text": f"Attempt {i}: " + act("view", path="nope.py")} for i in range(5)]  # other words, same call
    model = Recording(steps, name="loop")
    agent = Agent(session, model, mode="auto", max_steps=20, task="look", policy=ALLOW, tool_format="text",
                  auto_answer=lambda r: Answer("approve"))
    assert agent.run() == "limit"
    assert agent.step == 9  # six good steps (`n` round the loop), then three failing views
    assert "the same failing call" in agent.stuck and "may be too small" in agent.stuck


def test_a_reply_is_cut_at_its_first_whole_action(session):
    """Nothing after a text action is read: the model's imagined result and its next action
    are never generated (a small local model writes them at a few tokens a second)."""
    rambling = act("pdb", command="b tally/__init__.py:5") + "\nResult: Breakpoint 1 at tally/__init__.py:5\n" + \
        act("pdb", command="c") + "\nResult: > tally/__init__.py(5)mean()\n"
    model = Recording([{"text": rambling}, {"text": act("submit", message="ok")}], name="cut", chunk_size=6)
    agent = Agent(session, model, mode="auto", max_steps=5, task="look", policy=ALLOW, tool_format="text",
                  auto_answer=lambda r: Answer("approve"))
    assert agent.run() == "submitted"
    calls = [(e.data.tool, e.data.args) for e in session.events.history if e.kind == "tool_call"]
    assert calls[0] == ("pdb", {"command": "b tally/__init__.py:5"}) and calls[1][0] == "submit"
    first = next(e.data for e in session.events.history if e.kind == "model_reply")
    assert first.text.rstrip().endswith("```") and "Result:" not in first.text
    kept = model.requests[1]["messages"][2]
    assert kept["role"] == "assistant" and "Result:" not in kept["content"]


LOOPING = "I should look at the code.\n" + "One thought is that the bug is in the code, so one action is to debug the code.\n" * 60


@pytest.mark.parametrize("tool_format", ["text", "native"])
def test_a_reply_that_goes_round_in_circles_is_cut_and_the_model_told(session, tool_format):
    submit = ({"text": act("submit", message="ok")} if tool_format == "text"
              else {"tool_calls": [{"name": "submit", "arguments": {"message": "ok"}}]})
    model = Recording([{"text": LOOPING}, submit], name="loop", chunk_size=16)
    agent = Agent(session, model, mode="auto", max_steps=5, task="look", policy=ALLOW, tool_format=tool_format,
                  auto_answer=lambda r: Answer("approve"))
    assert agent.run() == "submitted"
    reply = next(e.data for e in session.events.history if e.kind == "model_reply")
    assert len(reply.text) < len(LOOPING) / 4 and reply.text.endswith(LOOPED)
    assert reply.text.count("One thought is") <= 2
    sent = model.requests[1]["messages"]
    assert sent[2]["content"] == reply.text  # the loop is not handed back to the model
    assert "went on repeating itself and was cut off" in sent[3]["content"]


def test_a_looping_reply_is_cut_over_real_http_and_the_server_stops_streaming(session):
    from dgym_tui.agent.litellm_model import LiteLLMModel
    from stub_llm_server import StubLLMServer

    with StubLLMServer() as server:
        server.push({"text": LOOPING, "chunk_size": 8, "chunk_delay": 0.002},
                    {"text": act("submit", message="over http")})
        model = LiteLLMModel("openai/tiny", api_base=server.url, max_retries=0)
        agent = Agent(session, model, mode="auto", max_steps=5, task="look", policy=ALLOW, tool_format="text",
                      auto_answer=lambda r: Answer("approve"), on_model_error="stop")
        assert agent.run() == "submitted"
        deadline = time.monotonic() + 5
        while not server.hung_up and time.monotonic() < deadline:
            time.sleep(0.05)
        assert server.hung_up and server.hung_up[0] < len(LOOPING) // 8 / 2  # it stopped well before the end
    reply = next(e.data for e in session.events.history if e.kind == "model_reply")
    assert reply.text.endswith(LOOPED)


def test_the_same_call_with_the_same_result_is_said_then_stuck(session):
    model = Recording([{"text": act("view", path="tally/__init__.py")}] * 5, name="again")
    agent = Agent(session, model, mode="auto", max_steps=10, task="look", policy=ALLOW, tool_format="text",
                  auto_answer=lambda r: Answer("approve"))
    assert agent.run() == "limit" and agent.step == 3
    assert agent.stuck.startswith("the model repeats itself (the same call and result): 'view ")
    told = [m["content"] for m in session.state.agent.conversation if (m["content"] or "").startswith("Result of view")]
    assert "as at step" not in told[0] and SAME_RESULT.format(step=1) in told[1] and SAME_RESULT.format(step=2) in told[2]


def test_going_round_a_cycle_of_two_calls_is_stuck_at_the_third_round(session):
    """A real 1.5B model alternated two failing pdb commands for eight steps: each repeat is
    said with the step it repeats, and the third of either stops it."""
    model = Recording([{"text": act("pdb", command="b __init__.py:5")}, {"text": act("pdb", command="p on_hand")}] * 4,
                      name="cycle")
    agent = Agent(session, model, mode="auto", max_steps=20, task="look", policy=ALLOW, tool_format="text",
                  auto_answer=lambda r: Answer("approve"))
    assert agent.run() == "limit" and agent.step == 5
    assert agent.stuck.startswith("the model repeats itself (the same failing call): 'pdb ")
    told = [m["content"] for m in model.requests[-1]["messages"] if m["content"].startswith("Result of pdb")]
    assert "as at step 1:" in told[2] and "as at step 2:" in told[3]
    assert "did you mean `b tally/__init__.py:5`?" in told[0]  # the path pdb needs


def test_a_breakpoint_on_a_file_the_repo_lacks_is_answered_with_the_repos_python_files(session):
    """A real 1.5B model copied `b cart.py:10` from a prompt's example into a repo without it,
    three times: the answer names the files there are."""
    model = Recording([{"text": act("pdb", command="b cart.py:10")}, {"text": act("submit", message="x")}], name="lost")
    agent = Agent(session, model, mode="auto", max_steps=5, task="look", policy=ALLOW, tool_format="text",
                  auto_answer=lambda r: Answer("approve"))
    agent.run()
    told = next(m["content"] for m in model.requests[-1]["messages"] if m["content"].startswith("Result of pdb"))
    files = sorted(f for f in session.list_files() if f.endswith(".py"))
    assert files and "No file named cart.py in the repository; its Python files: " in told
    assert all(f in told for f in files), (files, told)


def test_a_breakpoint_the_failing_test_never_reaches_is_said_and_cing_to_the_same_failure_is_stuck(tmp_path):
    """A real 1.5B model set a breakpoint in code only another test runs, then `c`d eight times:
    each `c` started the failing test again and stopped at the same failure (objects at new
    addresses). The observation says why no breakpoint stopped it; the third round is stuck."""
    repo = make_repo(tmp_path / "two", {
        "calc.py": "def half(x):\n    return x / 3\n", "other.py": "def twice(x):\n    return x * 2\n",
        "tests/test_calc.py": "from calc import half\n\n\ndef test_half():\n    assert half(object) == 2\n",
        "tests/test_other.py": "from other import twice\n\n\ndef test_twice():\n    assert twice(2) == 4\n"})
    s = Session(str(repo), sandbox="local")
    s.start()
    try:
        assert s.state.stop is not None and s.state.stop.reason == "post_mortem", s.state.error
        model = Recording([{"text": act("pdb", command="b other.py:2")}] + [{"text": act("pdb", command="c")}] * 5,
                          name="c")
        agent = Agent(s, model, mode="auto", max_steps=10, task="look", policy=ALLOW, tool_format="text",
                      auto_answer=lambda r: Answer("approve"))
        assert agent.run() == "limit" and agent.step == 5, agent.stuck  # the first `c` also narrowed the run
        assert "(the same call and result): 'pdb" in agent.stuck
        told = [m["content"] for m in s.state.agent.conversation if (m["content"] or "").startswith("Result of pdb")]
        assert "No breakpoint (other.py:2) stopped this run of `pytest" in told[1]
        assert "give `entrypoint`" in told[1] and "as at step" not in told[2] and "as at step 3" in told[3]
    finally:
        s.close()


def test_continuing_to_the_same_breakpoint_is_no_repeat(session):
    model = Recording([{"text": act("pdb", command="b tally/__init__.py:4")}]
                      + [{"text": act("pdb", command="c")}] * 3 + [{"text": act("submit", message="ok")}], name="loop")
    agent = Agent(session, model, mode="auto", max_steps=10, task="look", policy=ALLOW, tool_format="text",
                  auto_answer=lambda r: Answer("approve"))
    assert agent.run() == "submitted", agent.stuck
    told = [m["content"] for m in model.requests[-1]["messages"] if m["content"].startswith("Result of pdb")]
    assert len(told) == 4 and not any("as at step" in t for t in told)


def test_in_the_app_a_stuck_model_pauses_and_goes_on_after_a_hint(session):
    model = Recording([{"text": "`eval"}] * 3 + [{"text": act("submit", message="ok")}], name="hinted")
    agent = Agent(session, model, mode="auto", max_steps=20, task="look", policy=ALLOW, tool_format="text")
    agent.start()
    deadline = time.monotonic() + 30
    while session.state.agent.state != "limit":
        assert time.monotonic() < deadline, session.state.agent
        time.sleep(0.02)
    assert "repeats itself" in session.state.agent.reason and "give a hint" in session.state.agent.reason
    agent.hint("write one JSON action")
    agent.resume()
    agent._thread.join(30)
    assert agent.outcome == "submitted"
    assert any("A hint from the person: write one JSON action" in (m.get("content") or "")
               for m in model.requests[-1]["messages"])


def test_a_resumed_session_goes_on_in_text_mode(session, tmp_path):
    path = tmp_path / "s.jsonl"
    writer = SessionWriter.open(str(path), session, mode="auto", model="scripted:r")
    model = Recording([{"text": "hm"}, {"text": "hm."}, {"text": act("view", path="tally/__init__.py")}], name="r")
    agent = Agent(session, model, mode="auto", max_steps=3, task="look", policy=ALLOW,
                  auto_answer=lambda r: Answer("approve"))
    assert agent.run() == "limit"
    writer.close()
    resumed = Session.resume(read_session(path), sandbox="local")
    resumed.start()
    try:
        assert resumed.state.agent.tool_format == "text"
        later = Recording([{"text": act("submit", message="done")}], name="r2")
        again = Agent(resumed, later, mode="auto", max_steps=5, policy=ALLOW, resume=resumed.state.agent,
                      auto_answer=lambda r: Answer("approve"))
        assert again.run() == "submitted" and later.offered == [[]]
    finally:
        resumed.close()


def test_a_provider_that_refuses_tools_is_found_by_the_probe_over_real_http(session):
    from dgym_tui.agent.litellm_model import LiteLLMModel
    from stub_llm_server import StubLLMServer

    def answer(body):
        if body.get("tools"):
            return {"status": 400, "message": "this model does not support tools"}
        return {"text": act("submit", message="over http")}

    with StubLLMServer(answer_probes=False) as server:
        server.push(answer, answer)
        model = LiteLLMModel("openai/tiny", api_base=server.url, max_retries=0)
        agent = Agent(session, model, mode="auto", max_steps=5, task="look", policy=ALLOW,
                      auto_answer=lambda r: Answer("approve"), on_model_error="stop")
        assert agent.run() == "submitted" and agent.submitted == "over http"
        assert [bool(b.get("tools")) for b in server.bodies] == [True, False]
        assert all(b.get("max_tokens") == 4096 for b in server.bodies)  # a local server: replies have a ceiling
    reasons = [e.data.reason for e in session.events.history if e.kind == "tool_format"]
    assert len(reasons) == 1 and reasons[0].startswith("the provider refused tools")
    assert agent.step == 1  # the refused request was no step


def held(name: str, thought: str = "Next.", **arguments) -> str:
    """A JSON action, as a server holding the reply to the schema makes the model write it."""
    return json.dumps({"thought": thought, "name": name, "arguments": arguments})


def test_json_actions_are_held_to_one_tools_schema_over_real_http(session):
    from dgym_tui.agent.litellm_model import LiteLLMModel
    from stub_llm_server import StubLLMServer

    with StubLLMServer() as server:
        server.push({"text": held("pdb", "Stop in mean.", command="b tally/__init__.py:5")},
                    {"text": held("pdb", command="c")},
                    {"text": held("submit", message="json over http")})
        model = LiteLLMModel("openai/tiny", api_base=server.url, max_retries=0)
        agent = Agent(session, model, mode="auto", max_steps=5, task="look", policy=ALLOW, tool_format="json",
                      auto_answer=lambda r: Answer("approve"), on_model_error="stop")
        assert agent.run() == "submitted" and agent.submitted == "json over http"
        bodies = server.bodies
    assert all(not b.get("tools") for b in bodies)
    schema = bodies[0]["response_format"]["json_schema"]["schema"]
    branches = {b["properties"]["name"]["const"]: b for b in schema["anyOf"]}
    assert set(branches) == set(TOOLS)
    pdb = branches["pdb"]
    assert pdb["required"] == ["thought", "name", "arguments"] and pdb["additionalProperties"] is False
    assert pdb["properties"]["arguments"]["required"] == ["command"]
    assert "one JSON object" in bodies[0]["messages"][0]["content"]  # the prompt says the held form
    assert session.state.stop is not None and session.state.stop.line == 5  # the actions ran
    assert [m["content"].splitlines()[-1] for m in bodies[1]["messages"] if m["role"] == "user"][-1] == \
        "(Reply with your next action.)"


def test_auto_probes_ones_own_server_then_goes_to_json_and_to_text_when_it_takes_no_schema(session):
    """On a server of one's own, one small request with a tool decides before the first step; a
    server that refuses the schema then gets plain text actions."""
    from dgym_tui.agent.litellm_model import LiteLLMModel
    from stub_llm_server import StubLLMServer

    def no_schema(body):
        if body.get("response_format"):
            return {"status": 400, "message": "response_format: json_schema is not supported by this server"}
        return {"text": act("submit", message="as text")}

    with StubLLMServer(answer_probes=False) as server:
        server.push({"text": "I would look at main.py first, then call the tool."}, no_schema, no_schema)
        model = LiteLLMModel("openai/tiny", api_base=server.url, max_retries=0)
        agent = Agent(session, model, mode="auto", max_steps=6, task="look", policy=ALLOW,
                      auto_answer=lambda r: Answer("approve"), on_model_error="stop")
        assert agent.run() == "submitted" and agent.submitted == "as text"
        sent = [(bool(b.get("tools")), bool(b.get("response_format"))) for b in server.bodies]
        probe = server.bodies[0]["messages"]
    assert sent == [(True, False), (False, True), (False, False)]
    assert len(probe) == 1 and "Use the tool `view`" in probe[0]["content"]  # a one-line probe, not the task
    switches = [(e.data.format, e.data.reason) for e in session.events.history if e.kind == "tool_format"]
    assert switches[0] == ("json", "no native tool call came back to a one-line probe "
                                   "(it wrote 'I would look at main.py first, then call the tool.')")
    assert switches[1][0] == "text" and switches[1][1].startswith("the server takes no schema for replies")
    assert agent.step == 1 and session.state.agent.tool_format == "text"
    system = [m for m in session.state.agent.conversation if m["role"] == "system"][0]["content"]
    assert "one JSON object" in system  # the first prompt was made for JSON actions


def test_auto_on_ones_own_server_stays_native_when_the_probe_gets_a_call(session):
    from dgym_tui.agent.litellm_model import LiteLLMModel
    from stub_llm_server import StubLLMServer

    with StubLLMServer(answer_probes=False) as server:
        server.push({"tool_calls": [{"name": "view", "arguments": {"path": "main.py"}}]},
                    {"tool_calls": [{"name": "submit", "arguments": {"message": "native"}}]})
        model = LiteLLMModel("openai/tiny", api_base=server.url, max_retries=0)
        agent = Agent(session, model, mode="auto", max_steps=3, task="look", policy=ALLOW,
                      auto_answer=lambda r: Answer("approve"), on_model_error="stop")
        assert agent.run() == "submitted" and agent.submitted == "native"
        assert [bool(b.get("tools")) for b in server.bodies] == [True, True]
    assert not [e for e in session.events.history if e.kind == "tool_format"]
    assert session.state.agent.tool_format == "native" and agent.step == 1


def test_a_looping_probe_is_cut_short(session):
    from dgym_tui.agent.litellm_model import LiteLLMModel
    from stub_llm_server import StubLLMServer

    with StubLLMServer(answer_probes=False) as server:
        server.push({"text": LOOPING, "chunk_size": 8, "chunk_delay": 0.002},
                    {"text": held("submit", message="held")})
        model = LiteLLMModel("openai/tiny", api_base=server.url, max_retries=0)
        agent = Agent(session, model, mode="auto", max_steps=3, task="look", policy=ALLOW,
                      auto_answer=lambda r: Answer("approve"), on_model_error="stop")
        assert agent.run() == "submitted" and session.state.agent.tool_format == "json"
        deadline = time.monotonic() + 5
        while not server.hung_up and time.monotonic() < deadline:
            time.sleep(0.05)
        assert server.hung_up and server.hung_up[0] < len(LOOPING) // 8 / 2


def test_the_window_a_local_server_reports_is_used_when_litellm_does_not_know_the_model():
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    from dgym_tui.agent.litellm_model import LiteLLMModel, server_context_window

    class Ollama(BaseHTTPRequestHandler):
        def log_message(self, *a):
            pass

        def do_GET(self):
            self.send_response(404)
            self.end_headers()

        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            shown = {"model_info": {"qwen2.context_length": 32768}}
            if body["model"] == "tuned":
                shown["parameters"] = "stop <|im_end|>\nnum_ctx 12288"
            data = json.dumps(shown).encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Ollama)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{httpd.server_port}"
    try:
        assert server_context_window(base + "/v1", "openai/tuned") == 12288
        assert server_context_window(base, "ollama/plain") == 4096  # Ollama's default, not the trained 32k
        assert LiteLLMModel("openai/tuned", api_base=base + "/v1").context_window() == 12288
    finally:
        httpd.shutdown()
    assert server_context_window("http://127.0.0.1:9/v1", "openai/x", timeout=0.5) is None


NO_SCHEMA = {"status": 400, "message": "response_format: json_schema is not supported"}


@pytest.mark.parametrize("replies, level, says, fix", [
    ([{"tool_calls": [{"name": "view", "arguments": {"path": "main.py"}}]}], "ok", "native tool calls come back",
     "--tool-format auto"),
    ([{"text": "```json\n{\"name\": \"view\"}\n```"}, {"text": held("view", path="main.py")}], "warn",
     "the server holds it to JSON actions", "--tool-format json"),
    ([{"text": "I would view it."}, NO_SCHEMA, {"text": act("view", path="main.py")}], "warn",
     "no native tool call", "--tool-format text"),
    ([{"status": 400, "message": "tools are not supported"}, NO_SCHEMA, {"text": act("view", path="main.py")}],
     "warn", "the provider refused tools", "--tool-format text"),
    ([{"text": "I cannot."}, {"text": "Nor this way."}, {"text": "Still cannot."}], "fail", "no text action either",
     "larger"),
])
def test_doctor_model_says_whether_native_calls_come_back_and_which_format_suits(replies, level, says, fix):
    from dgym_tui.commands.doctor import check_model
    from stub_llm_server import StubLLMServer

    with StubLLMServer(answer_probes=False) as server:
        server.push(*replies)
        [check] = check_model("openai/tiny", server.url)
        sent = [("tools" if b.get("tools") else "schema" if b.get("response_format") else "text") for b in server.bodies]
    assert sent == ["tools", "schema", "text"][:len(replies)]
    assert check.level == level and says in check.detail and fix in check.fix, check.line()
