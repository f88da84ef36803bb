"""Two roles: a seeker that investigates with pdb and a fixer that writes the patch (issue 49).
Real sessions (local sandbox, real pdb, real git); only the two models are scripted."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from dgym_tui.agent.approval import headless_answers
from dgym_tui.agent.grounding import check, quoted_values, touched
from dgym_tui.agent.scripted import ScriptedModel
from dgym_tui.agent.setup import make_agent
from dgym_tui.config import AgentSettings
from dgym_tui.core.events import AGENT, SEEKER
from dgym_tui.core.session import Session
from dgym_tui.core.state import fold

from test_agent import TALLY, make_repo

SCRIPTS = Path(__file__).resolve().parent / "agent_scripts"


@pytest.fixture
def session(tmp_path):
    s = Session(str(make_repo(tmp_path / "tally", TALLY)), sandbox="local")
    s.start()
    assert s.state.program == "stopped", s.state.error
    yield s
    s.close()


def scripted(name: str, price=(1e-6, 2e-6)) -> ScriptedModel:
    return ScriptedModel.from_file(SCRIPTS / f"{name}.json", fake_price=price)


def seeker_script(tmp_path, answer: str) -> ScriptedModel:
    data = json.loads((SCRIPTS / "tally_seeker.json").read_text())
    data["steps"][-1]["tool_calls"][0]["arguments"]["text"] = answer
    path = tmp_path / "seeker.json"
    path.write_text(json.dumps(data))
    return ScriptedModel.from_file(path, fake_price=(1e-6, 2e-6))


def run_pair(session, fixer, seeker, form="ask"):
    settings = AgentSettings(model="scripted", mode="auto", max_steps=10, seeker="scripted", seeker_form=form)
    agent = make_agent(session, settings, model=fixer, seeker_model=seeker,
                       auto_answer=headless_answers(True, "this test"), on_model_error="stop")
    return agent, agent.run()


def test_the_fixer_reads_the_seekers_answer_with_the_value_pdb_read(session):
    fixer, seeker = scripted("tally_fixer"), scripted("tally_seeker")
    agent, outcome = run_pair(session, fixer, seeker)
    assert outcome == "submitted", session.state.error
    started = {e.actor: e.data for e in session.events.history if e.kind == "agent_started"}
    # the roles' tools: the fixer changes code and asks; the seeker investigates and never edits
    assert sorted(started[AGENT].tools) == ["debug", "edit", "eval", "submit", "view"]
    assert "pdb" not in started[AGENT].tools
    assert sorted(started[SEEKER].tools) == ["answer", "eval", "grep", "listdir", "pdb", "view"]
    assert "edit" not in started[SEEKER].tools
    # pdb really read the value, and the fixer's next request carries the answer with it
    pdb_said = [e.data.observation for e in session.events.history
                if e.kind == "tool_result" and e.actor == SEEKER and e.data.tool == "pdb"]
    assert any("(12, 3)" in said for said in pdb_said), pdb_said
    after_debug = fixer.requests[1]["messages"][-1]
    assert after_debug["role"] == "tool" and "(12, 3)" in after_debug["content"]
    assert "Grounded" in after_debug["content"]
    answer = next(e.data for e in session.events.history if e.kind == "seeker_answer")
    assert answer.grounding == "grounded" and sorted(answer.values) == ["(12, 3)", "12"]
    assert answer.places == ["tally/__init__.py:5"]
    assert answer.commands == ["b tally/__init__.py:5", "c", "p total, len(values)"]
    # the seeker's conversation is its own: the agent's view holds the fixer's alone
    state = fold(session.events.history)
    assert state.agent.model == fixer.name and state.roles[SEEKER].model == seeker.name
    assert not any("(12, 3)" in str(m.get("content")) for m in state.roles[SEEKER].conversation[:1])
    assert [a.grounding for a in state.answers] == ["grounded"]
    assert not any("touches none" in e.data.message for e in session.events.history if e.kind == "notice")
    # every call of both roles has its own id in the session (scripts of two roles once shared them)
    ids = [e.data.call_id for e in session.events.history if e.kind == "tool_result" and e.actor.startswith("agent")]
    assert len(ids) >= 7 and len(set(ids)) == len(ids), ids
    assert session.run_tests().failed == 0


def test_an_answer_quoting_a_value_it_never_read_is_flagged(session, tmp_path):
    seeker = seeker_script(tmp_path, "Looked: tally/__init__.py:5\nSaw: total = 10, len(values) = 3\n"
                                     "Answer: the total is wrong.")
    agent, outcome = run_pair(session, scripted("tally_fixer"), seeker)
    answer = next(e.data for e in session.events.history if e.kind == "seeker_answer")
    assert answer.grounding == "ungrounded" and answer.unseen == ["10"]
    told = next(e.data.observation for e in session.events.history
                if e.kind == "tool_result" and e.actor == AGENT and e.data.tool == "debug")
    assert "NOT grounded" in told and "10" in told


def test_the_report_form_runs_the_seeker_first_and_puts_its_findings_in_the_task(session):
    fixer, seeker = scripted("tally_fixer"), scripted("tally_seeker")
    fixer.steps = fixer.steps[1:]  # no question to ask: the findings are in its task
    agent, outcome = run_pair(session, fixer, seeker, form="report")
    assert outcome == "submitted"
    started = next(e.data for e in session.events.history if e.kind == "agent_started" and e.actor == AGENT)
    assert "debug" not in started.tools
    assert "(12, 3)" in started.task and "Findings of an investigation" in started.task
    kinds = [e.kind for e in session.events.history if e.kind in ("seeker_answer", "agent_started")]
    assert kinds[:2] == ["agent_started", "seeker_answer"]  # the seeker's turn came first


def test_grounding_reads_values_and_places_not_prose():
    assert quoted_values("x = 5 and `'a b'` then y is None; z == [1, 2] at f.py:12") == ["5", "None", "[1, 2]", "'a b'"]
    g = check("Saw: n = 15, items = [1,2]", ["(Pdb) p n\n15\n[1, 2]"])
    assert g.status == "grounded"
    assert check("Saw: n = 5", ["(Pdb) p n\n15"]).unseen == ["5"]  # 5 is not in 15
    assert check("It looks wrong.", ["anything"]).status == "no values"
    patch = "--- a/calc.py\n+++ b/calc.py\n@@ -10,3 +10,3 @@\n-a\n+b\n"
    assert touched(patch, ["calc.py:12"]) is True and touched(patch, ["other.py:12"]) is False


def test_costs_per_role_add_up_to_the_sessions_total(session):
    from dgym_tui.core.roles import role_figures

    agent, outcome = run_pair(session, scripted("tally_fixer"), scripted("tally_seeker"))
    figures = role_figures(session.events.history)
    replies = [e.data for e in session.events.history if e.kind == "model_reply"]
    total_cost = sum(r.cost for r in replies)
    total_tokens = sum(r.prompt_tokens + r.completion_tokens for r in replies)
    assert figures["fixer"]["steps"] == 4 and figures["seeker"]["steps"] == 4
    assert figures["seeker"]["questions"] == 1 and figures["seeker"]["grounded"] == 1
    assert figures["fixer"]["tokens"] + figures["seeker"]["tokens"] == total_tokens
    assert figures["fixer"]["cost"] + figures["seeker"]["cost"] == pytest.approx(total_cost)
    assert figures["fixer"]["cost"] > 0 and figures["seeker"]["cost"] > 0
    assert figures["fixer"]["tokens"] == agent.tokens  # the agent's own count is the fixer's alone


CALC_SEEKER = [
    {"tool_calls": [{"name": "pdb", "arguments": {"command": "b calc.py:2"}}]},
    {"tool_calls": [{"name": "pdb", "arguments": {"command": "c"}}]},
    {"tool_calls": [{"name": "pdb", "arguments": {"command": "p a, b, a - b"}}]},
    {"tool_calls": [{"name": "answer", "arguments": {"text": (
        "Looked: calc.py:2\nRan: b calc.py:2; c; p a, b, a - b\nSaw: `(2, 3, -1)`\n"
        "Answer: add(2, 3) returns a - b = -1: it subtracts.")}}]},
]
CALC_FIXER = [
    {"tool_calls": [{"name": "debug", "arguments": {"question": "What does add(2, 3) compute in test_add?"}}]},
    {"tool_calls": [{"name": "edit", "arguments": {"path": "calc.py", "start": 2, "end": 2,
                                                   "new_code": "    return a + b"}}]},
    {"tool_calls": [{"name": "submit", "arguments": {"message": "add subtracted"}}]},
]


def test_a_batch_compares_one_model_seeker_and_fixer_and_fixer_alone(tmp_path):
    import subprocess
    import sys

    from batch_fixtures import folder_of_repos, write_script

    from dgym_tui.batch import run_dir as rd
    from dgym_tui.batch.stats import stats

    tasks = folder_of_repos(tmp_path / "tasks", ("calc_a", "calc_b"))
    fixer, seeker = write_script(tmp_path / "fixer.json", CALC_FIXER), write_script(tmp_path / "seeker.json", CALC_SEEKER)
    out = tmp_path / "run"
    arms = ["both=pdb,view,edit,eval", "pair=view,edit,eval+seeker", "rag=view,edit,eval+report", "alone=view,edit,eval"]
    base = [sys.executable, "-m", "dgym_tui", "batch", str(tasks), "--model", fixer, "--out", str(out),
            "--sandbox", "local", "--workers", "2", "--yes", *[a for arm in arms for a in ("--arm", arm)]]
    refused = subprocess.run(base, capture_output=True, text=True, timeout=120)
    assert refused.returncode == 2 and "its seeker needs a model" in refused.stderr
    done = subprocess.run([*base, "--seeker", seeker], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    results = {r.trial: r for r in rd.load_results(out)}
    assert {r.status for r in results.values()} == {"resolved"}, {t: r.reason for t, r in results.items()}
    for task in ("calc_a", "calc_b"):
        assert results[f"{task}__both__1"].roles is None and results[f"{task}__alone__1"].roles is None
        for arm, form in (("pair", "ask"), ("rag", "report")):
            r = results[f"{task}__{arm}__1"]
            seeker_f, fixer_f = r.roles["seeker"], r.roles["fixer"]
            assert (seeker_f["form"], seeker_f["questions"], seeker_f["grounded"]) == (form, 1, 1)
            assert seeker_f["steps"] == 4 and seeker_f["touched_named_place"] is True
            assert fixer_f["tokens"] + seeker_f["tokens"] == r.tokens  # the trial's total is both roles'
    figures = stats(list(results.values()), rd.load_batch(out)["arms"])
    assert figures["arms"]["pair"]["roles"]["seeker"]["questions"] == 2
    assert figures["arms"]["pair"]["roles"]["seeker"]["touched"] == 2
    assert "roles" not in figures["arms"]["both"]
    assert any(p["first"] == "both" and p["second"] == "pair" and p["tasks"] == 2 for p in figures["pairs"])
    summary = (out / "summary.md").read_text()
    assert "## Per role (arms with a seeker)" in summary and "| pair | seeker | 8 |" in summary
    assert "debug(question) answered by a seeker" in summary
    # the seeker's trajectories as training data, read back as trainers read them
    import datasets

    seekers = tmp_path / "seeker.jsonl"
    exported = subprocess.run([sys.executable, "-m", "dgym_tui", "export", str(out), "--format", "sft", "--role",
                               "seeker", "-o", str(seekers)], capture_output=True, text=True, timeout=120)
    assert exported.returncode == 0, exported.stderr
    rows = datasets.load_dataset("json", data_files=str(seekers), split="train")
    assert len(rows) == 4  # pair and rag, two tasks, one question each
    for row in rows:
        labels = row["labels"]
        assert labels["role"] == "seeker" and labels["arm"] in ("pair", "rag")
        assert labels["fed_resolved"] is True and labels["grounding"] == "grounded"
        names = {t["function"]["name"] for t in row["tools"]}
        assert "pdb" in names and "edit" not in names
        called = [c["function"]["name"] for m in row["messages"] if m["role"] == "assistant"
                  for c in (m.get("tool_calls") or [])]
        assert called == ["pdb", "pdb", "pdb", "answer"]
        assert any("(2, 3, -1)" in (m["content"] or "") for m in row["messages"] if m["role"] == "tool")
    fixers = tmp_path / "fixer.jsonl"
    subprocess.run([sys.executable, "-m", "dgym_tui", "export", str(out), "--format", "sft", "--role", "fixer",
                    "--arm", "pair", "-o", str(fixers)], check=True, capture_output=True, timeout=120)
    rows = datasets.load_dataset("json", data_files=str(fixers), split="train")
    assert len(rows) == 2
    for row in rows:
        assert row["labels"]["role"] == "fixer"
        assert not any(c["function"]["name"] == "pdb" for m in row["messages"] if m["role"] == "assistant"
                       for c in (m.get("tool_calls") or []))
        assert any("(2, 3, -1)" in (m["content"] or "") and "Grounded" in m["content"]
                   for m in row["messages"] if m["role"] == "tool")


def test_task_env_gives_a_python_agent_a_seeker(tmp_path):
    from batch_fixtures import calc_repo

    from dgym_tui.batch.env import TaskEnv
    from dgym_tui.batch.spec import Task

    repo = calc_repo(tmp_path / "calc")
    task = Task(id="calc", repo=str(repo), fail_to_pass=["tests/test_calc.py::test_add"])
    seeker = ScriptedModel(CALC_SEEKER, name="calc_seeker")
    with TaskEnv(task, sandbox="local", tools=["view", "edit", "eval"], seeker_model=seeker) as env:
        env.reset()
        assert sorted(t["function"]["name"] for t in env.tools) == ["debug", "edit", "eval", "submit", "view"]
        assert not env.step("pdb", command="where").ok  # the caller's agent has no pdb: the seeker has
        out = env.step("debug", question="What does add(2, 3) compute?")
        assert out.ok and "(2, 3, -1)" in out.observation and "Grounded" in out.observation
        env.step("edit", path="calc.py", start=2, end=2, new_code="    return a + b")
        assert env.score().resolved


def test_a_number_is_read_whole():
    assert quoted_values("mean([2, 4, 6]) == 6.0: it divides") == ["6.0"]
    assert quoted_values("x = 5. Then y = 7, z is None; w = [1, 2].") == ["5", "7", "None", "[1, 2]"]


def test_the_html_replay_and_the_headless_transcript_show_both_roles(session, tmp_path):
    import io

    from dgym_tui.core.session_file import SessionWriter, read_session
    from dgym_tui.headless import Progress
    from dgym_tui.sessions.html import replay_data

    path = tmp_path / "pair.jsonl"
    writer = SessionWriter.open(str(path), session, mode="auto", model="scripted")
    out = io.StringIO()
    session.events.subscribe(Progress(out), replay=False)
    run_pair(session, scripted("tally_fixer"), scripted("tally_seeker"))
    writer.close()
    lines = out.getvalue().splitlines()
    asked = next(i for i, line in enumerate(lines) if "debug(" in line)
    assert "asks the seeker" in lines[asked]
    assert lines[asked + 1].startswith("  seeker step   1  pdb(")  # the seeker's steps, indented, under it
    assert any(line.startswith("  seeker answered (grounded; 4 steps)") for line in lines)
    data = replay_data(read_session(str(path)))
    shown = json_text = json.dumps(data)
    assert "agent:seeker" in shown and "seeker answered (4 steps)" in json_text and "(12, 3)" in shown


def test_a_fix_away_from_what_the_seeker_named_is_said_in_the_session(session, tmp_path):
    fixer = scripted("tally_fixer")
    # it edits the test file instead of tally/__init__.py:5, where the grounded answer pointed
    fixer.steps[1]["tool_calls"][0]["arguments"] = {"path": "tests/test_tally.py", "start": 5, "end": 5,
                                                    "new_code": "    assert mean([2, 4, 6]) == 6.0"}
    agent, outcome = run_pair(session, fixer, scripted("tally_seeker"))
    assert outcome == "submitted"
    notices = [e.data.message for e in session.events.history if e.kind == "notice"]
    assert any("touches none of the places the seeker's grounded answers named (tally/__init__.py:5)" in n
               for n in notices), notices


def test_the_person_takes_over_a_seekers_turn_and_answers_in_its_place(session):
    """As the app does (nobody answers by rule): mid-way through the seeker's turn the person takes
    it over; the question then waits for them, and their answer is what the fixer reads."""
    import threading
    import time

    from dgym_tui.agent.approval import Answer

    slow = [dict(step, text="Looking at the code before anything else. " * 4) for step in CALC_SEEKER[:1]] * 10
    seeker = ScriptedModel(slow, name="slow_seeker", chunk_delay=0.05)
    fixer = scripted("tally_fixer")
    settings = AgentSettings(model="scripted", mode="auto", max_steps=10, seeker="scripted")
    agent = make_agent(session, settings, model=fixer, seeker_model=seeker, on_model_error="stop")
    done = threading.Thread(target=agent.run, daemon=True)
    done.start()
    deadline = time.monotonic() + 30
    while not agent.seeker.at_work and time.monotonic() < deadline:
        time.sleep(0.05)
    assert agent.seeker.take_over()
    while session.state.agent.waiting is None or session.state.agent.waiting.tool != "answer":
        assert time.monotonic() < deadline, "the question never waited for the person"
        time.sleep(0.05)
    waiting = session.state.agent.waiting
    answer = "tally/__init__.py:5 divides by len(values) - 1"
    assert agent.answer(waiting.call_id, Answer("edit", args={**waiting.args, "text": answer}))
    while not fixer.requests[1:] and time.monotonic() < deadline:
        time.sleep(0.05)
    agent.stop()
    done.join(10)
    found = next(e.data for e in session.events.history if e.kind == "seeker_answer")
    assert (found.by, found.answer, found.grounding) == ("person", answer, "no values")
    assert answer in fixer.requests[1]["messages"][-1]["content"]
    assert len(seeker.requests) < 10  # its turn stopped where it was


def test_each_arms_seeker_can_have_its_own_server(tmp_path):
    """+seeker=MODEL@URL: two seekers behind two servers (a 0.5B and a 1.5B llama-server, say) in
    one batch; litellm's real HTTP path to each (stub servers on 127.0.0.1)."""
    import subprocess
    import sys

    from batch_fixtures import folder_of_repos, write_script
    from stub_llm_server import StubLLMServer

    from dgym_tui.batch import run_dir as rd

    tasks = folder_of_repos(tmp_path / "tasks", ("calc_a",))
    fixer = write_script(tmp_path / "fixer.json", CALC_FIXER)
    small, large = StubLLMServer().start(), StubLLMServer().start()
    try:
        small.push(*CALC_SEEKER)
        large.push(*CALC_SEEKER)
        out = tmp_path / "run"
        done = subprocess.run([sys.executable, "-m", "dgym_tui", "batch", str(tasks), "--model", fixer, "--out",
                               str(out), "--sandbox", "local", "--workers", "1", "--yes", "--tool-format", "native",
                               "--arm", f"small=view,edit,eval+seeker=openai/small@{small.url}",
                               "--arm", f"large=view,edit,eval+seeker=openai/large@{large.url}"],
                              capture_output=True, text=True, timeout=600, env={**os.environ, "OPENAI_API_KEY": "x"})
        assert done.returncode == 0, done.stdout + done.stderr
        assert [b["model"] for b in small.bodies] == ["small"] * 4 and [b["model"] for b in large.bodies] == ["large"] * 4
        results = {r.trial: r for r in rd.load_results(out)}
        assert {r.status for r in results.values()} == {"resolved"}, {t: r.reason for t, r in results.items()}
        assert results["calc_a__small__1"].roles["seeker"]["grounded"] == 1
        arms = {a["name"]: a for a in rd.load_batch(out)["arms"]}
        assert arms["large"]["seeker"] == {"form": "ask", "model": "openai/large", "api_base": large.url}
        refused = subprocess.run([sys.executable, "-m", "dgym_tui", "batch", str(tasks), "--model", fixer, "--out",
                                  str(tmp_path / "x"), "--arm", "p=view,edit+seeker=@http://127.0.0.1:1/v1"],
                                 capture_output=True, text=True, timeout=120)
        assert refused.returncode == 2 and "needs the MODEL before the URL" in refused.stderr
    finally:
        small.stop()
        large.stop()


def test_the_seekers_view_and_the_fixers_view_both_run_in_one_session(tmp_path):
    """A seeker arm's session holds one `view` for two roles: the fixer's, said without breakpoints
    (`include_line_numbers`), checks the seeker's calls too. On mini_nightmare, 16 of the real
    seekers' view calls were refused for `include_line_numbers_and_breakpoints`, the name their own
    schema gave, before view took both."""
    from dgym_tui.agent.seeker import SEEKER_TOOLS
    from dgym_tui.batch.trial import arm_tools

    fixer_tools = arm_tools(["view", "edit", "eval"])
    seeker_tools = {n: t for n, t in arm_tools(list(SEEKER_TOOLS)).items() if n in SEEKER_TOOLS}
    assert "include_line_numbers_and_breakpoints" in seeker_tools["view"].parameters
    assert "include_line_numbers_and_breakpoints" not in fixer_tools["view"].parameters
    s = Session(str(make_repo(tmp_path / "tally", TALLY)), sandbox="local", tools={**seeker_tools, **fixer_tools})
    s.start()
    try:
        for numbered in ("include_line_numbers_and_breakpoints", "include_line_numbers"):
            out = s.run_tool("view", {"path": "tally/__init__.py", "start": 1, "end": 2, numbered: True}, actor=SEEKER)
            assert out.ok and "Viewing `tally/__init__.py`, lines 1-2" in out.observation, (numbered, out.observation)
        out = s.run_tool("view", {"path": "tally/__init__.py", "numbers": True}, actor=SEEKER)
        assert not out.ok and "view has no argument numbers" in out.observation
    finally:
        s.close()
