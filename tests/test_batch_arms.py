"""Arms are their tools and their words: an arm without pdb sends the model nothing of pdb (its
prompt, tool listing, example and schemas are built from its own tools), in every tool format;
an arm may get a tool only after N successful edits (debug-gym's debug(5)), recorded in the
session. Every request is read as the stub OpenAI-compatible server received it from litellm."""

from __future__ import annotations

import json
import re

import pytest

from batch_fixtures import FIX, folder_of_repos, stub_responder
from dgym_tui.batch.spec import Arm, TrialSpec
from dgym_tui.batch.tasks import load_tasks
from dgym_tui.batch.trial import run_trial

NO_PDB = Arm("no-pdb", ["view", "listdir", "grep", "eval", "edit", "bash"])
WITH_PDB = Arm("pdb", ["pdb", "view", "listdir", "grep", "eval", "edit", "bash"])
# Looks around with every tool the no-pdb arm has, then fixes add() and submits.
LOOK_THEN_FIX = [
    {"tool_calls": [{"name": "listdir", "arguments": {"path": "."}}]},
    {"tool_calls": [{"name": "view", "arguments": {"path": "calc.py"}}]},
    {"tool_calls": [{"name": "grep", "arguments": {"pattern": "def add"}}]},
    {"tool_calls": [{"name": "eval", "arguments": {}}]},
    {"tool_calls": [{"name": "bash", "arguments": {"command": "ls"}}]},
    *FIX,
]
# What would tell the model about the debugger: its name, its commands' words, breakpoints.
PDB_WORDS = re.compile(r"pdb|breakpoint|post-mortem|debugger|`b [\w/]+\.py|`c`|`p expr|`where`", re.I)


def as_json_actions(script: list[dict]) -> list[dict]:
    """The same steps as JSON actions in the reply's text (--tool-format json)."""
    return [{"text": json.dumps({"thought": "next", "name": call["name"], "arguments": call["arguments"]})}
            for step in script for call in step["tool_calls"]]


def as_text_actions(script: list[dict]) -> list[dict]:
    return [{"text": "Next.\n```json\n" + json.dumps({"name": call["name"], "arguments": call["arguments"]}) +
             "\n```"} for step in script for call in step["tool_calls"]]


def everything_sent(stub) -> str:
    """Every word the model was sent: each request's messages, tools and response format."""
    return "\n".join(json.dumps({k: body.get(k) for k in ("messages", "tools", "response_format")})
                     for body in (r["body"] for r in stub.requests))


def run_arm(tmp_path, stub, arm: Arm, tool_format: str, script: list[dict]) -> dict:
    task = load_tasks(folder_of_repos(tmp_path / f"set-{arm.name}-{tool_format}", names=("calc",)))[0]
    steps = {"native": script, "json": as_json_actions(script), "text": as_text_actions(script)}[tool_format]
    stub.push(*[stub_responder({"calc": steps})] * (len(steps) + 1))
    spec = TrialSpec(task=task, arm=arm, attempt=1, model="openai/stub", api_base=stub.url, sandbox="local",
                     yes=True, tool_format=tool_format, env={"OPENAI_API_KEY": "sk-test-not-real"})
    return run_trial(spec).result


@pytest.mark.parametrize("tool_format", ["native", "json", "text"])
def test_a_no_pdb_arm_tells_the_model_nothing_of_pdb(tmp_path, stub_llm, tool_format):
    result = run_arm(tmp_path, stub_llm, NO_PDB, tool_format, LOOK_THEN_FIX)
    assert result["status"] == "resolved", json.dumps(result, default=str)
    assert result["tool_calls"] == {"listdir": 1, "view": 1, "grep": 1, "eval": 1, "bash": 1, "edit": 1, "submit": 1}
    sent = everything_sent(stub_llm)
    assert len(stub_llm.requests) == len(LOOK_THEN_FIX)
    found = sorted({m.group(0) for m in PDB_WORDS.finditer(sent)})
    assert not found, f"the no-pdb arm was told {found}"
    # the same script with pdb among the tools is told of it: the check can fail
    stub_llm.requests.clear()
    run_arm(tmp_path, stub_llm, WITH_PDB, tool_format, LOOK_THEN_FIX)
    assert PDB_WORDS.search(everything_sent(stub_llm))


def test_the_shared_prompt_comes_first_and_the_task_last(tmp_path, stub_llm):
    """Two trials of one arm on two tasks send the same system prompt up to its last line (the
    repository's own), so a server's cached prefix serves both."""
    tasks = load_tasks(folder_of_repos(tmp_path / "set"))
    respond = stub_responder({"calc_a": FIX, "calc_b": FIX})
    stub_llm.push(*[respond] * 4)
    for task in tasks:
        run_trial(TrialSpec(task=task, arm=NO_PDB, attempt=1, model="openai/stub", api_base=stub_llm.url,
                            sandbox="local", yes=True, env={"OPENAI_API_KEY": "sk-test-not-real"}))
    firsts = [r["body"]["messages"] for r in stub_llm.requests if len(r["body"]["messages"]) == 2]
    a, b = (m[0]["content"] for m in firsts)
    assert a != b and a.splitlines()[:-1] == b.splitlines()[:-1], (a, b)
    assert '"calc_a"' in a.splitlines()[-1] and '"calc_b"' in b.splitlines()[-1]


def test_a_tool_is_given_after_n_edits_and_the_session_says_so(tmp_path, stub_llm):
    """pdb@2: asked for before the second edit it is no tool of the agent's; after it, it runs
    (the debugger started then), and the model was told."""
    from dgym_tui.core.session_file import read_session
    import tempfile

    script = [
        {"tool_calls": [{"name": "pdb", "arguments": {"command": "p 1 + 1"}}]},
        {"tool_calls": [{"name": "edit", "arguments": {"path": "calc.py", "start": 5, "end": 5,
                                                       "new_code": "def sub(a, b):  # unchanged"}}]},
        FIX[0],
        {"tool_calls": [{"name": "pdb", "arguments": {"command": "p 40 + 2"}}]},
        FIX[1],
    ]
    arm = Arm("pdb-after-2", ["view", "edit", "eval", "pdb"], unlock={"pdb": 2})
    task = load_tasks(folder_of_repos(tmp_path / "set", names=("calc",)))[0]
    stub_llm.push(*[stub_responder({"calc": script})] * 6)
    spec = TrialSpec(task=task, arm=arm, attempt=1, model="openai/stub", api_base=stub_llm.url, sandbox="local",
                     yes=True, tool_format="native", env={"OPENAI_API_KEY": "sk-test-not-real"})
    out = run_trial(spec)
    assert out.result["status"] == "resolved", json.dumps(out.result, default=str)
    with tempfile.NamedTemporaryFile(suffix=".jsonl") as f:
        f.write(out.session)
        f.flush()
        events = read_session(f.name).events
    started = next(e.data for e in events if e.kind == "agent_started")
    assert "pdb" not in started.tools and started.schedule == {"pdb": 2}
    unlocked = [e.data for e in events if e.kind == "tools_unlocked"]
    assert [(u.tools, u.edits) for u in unlocked] == [(["pdb"], 2)]
    results = [e.data for e in events if e.kind == "tool_result" and e.data.tool == "pdb"]
    assert not results[0].ok and "no tool named 'pdb'" in results[0].observation.replace('"', "'"), results[0]
    # pdb ran (the suite passed, so its end answers: no frame for `p`, nothing run again)
    assert results[1].executed and results[1].observation.startswith("Pdb command output:\n*** There is no frame: "
                                                                     "the program ended (exit code 0)"), results[1]
    # no pdb ran before the schedule gave it; then one did (the program under pytest, as at a start)
    kinds = [e.kind for e in events]
    assert "program_start" not in kinds[:kinds.index("tools_unlocked")]
    assert "program_start" in kinds[kinds.index("tools_unlocked"):]
    tools_sent = [[t["function"]["name"] for t in r["body"].get("tools") or []] for r in stub_llm.requests]
    assert "pdb" not in tools_sent[0] and "pdb" in tools_sent[3], tools_sent
    told = [m for r in stub_llm.requests for m in r["body"]["messages"] if m["role"] == "user"]
    assert any("From now on you also have pdb" in str(m["content"]) for m in told)
