"""The agent talking to a model over real HTTP: litellm, through LiteLLMModel, to the stub
OpenAI-compatible server on 127.0.0.1 (the only part not real). The session, the sandbox, pdb and
git are real; `dgym-tui run` is the installed command in a subprocess."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from test_agent import TALLY, make_repo

from dgym_tui.agent.approval import Answer
from dgym_tui.agent.loop import Agent
from dgym_tui.core.session import Session
from dgym_tui.core.session_file import read_session

FIX = {"name": "edit", "arguments": {"path": "tally/__init__.py", "start": 5, "end": 5,
                                     "new_code": "    return total / len(values)"}}


@pytest.fixture(scope="module")
def litellm_loaded():
    from dgym_tui.agent.litellm_model import load_litellm, warm_up

    warm_up()
    return load_litellm()


@pytest.fixture
def tally(tmp_path):
    return make_repo(tmp_path / "tally", TALLY)


def tool_messages(body: dict) -> list[str]:
    return [m.get("content") or "" for m in body["messages"] if m["role"] in ("tool", "user")]


def test_an_agent_run_over_http_survives_everything_a_provider_does(tally, stub_llm, litellm_loaded):
    from dgym_tui.agent.litellm_model import LiteLLMModel

    stub_llm.push(
        {"text": "Let me look at the code and the tests at once.",   # streamed, two parallel calls
         "tool_calls": [{"name": "view", "arguments": {"path": "tally/__init__.py"}},
                        {"name": "grep", "arguments": {"pattern": "mean"}}], "chunk_size": 3},
        {"status": 429, "retry_after": 0.2, "message": "slow down"},  # rate limited, then fine
        {"tool_calls": [{"name": "pdb", "arguments": "{\"command\": \"b tally/__init__.py:5\""}]},  # cut JSON
        {"status": 500, "message": "upstream hiccup"},                # a server error, then fine
        {"text": "I should run the tests."},                           # no tool call
        {"tool_calls": [{"name": "run_everything", "arguments": {}}]},  # no such tool
        {"tool_calls": [{"name": "pdb", "arguments": {"command": "b tally/__init__.py:5"}}]},
        {"tool_calls": [{"name": "pdb", "arguments": {"command": "c"}}]},
        {"tool_calls": [FIX]},
        {"tool_calls": [{"name": "submit", "arguments": {"message": "divide by n"}}]},
    )
    session = Session(str(tally), sandbox="local")
    try:
        session.start()
        model = LiteLLMModel("openai/stub-model", api_base=stub_llm.url, api_key="dummy", backoff_base=0.01,
                             timeout=20)
        agent = Agent(session, model, mode="auto", max_steps=20, auto_answer=lambda r: Answer("approve"))
        assert agent.run() == "submitted"
        assert session.run_tests().ok
        kinds = [e.kind for e in session.events.history]
        assert kinds.count("model_retry") == 2
        deltas = "".join(e.data.text for e in session.events.history if e.kind == "model_delta")
        assert deltas.startswith("Let me look at the code and the tests at once.")
        bodies = stub_llm.bodies
        assert len(bodies) == 10
        assert bodies[0]["stream"] is True and {t["function"]["name"] for t in bodies[0]["tools"]} >= {"pdb", "edit"}
        told = tool_messages(bodies[-1])
        assert any(t.startswith("Viewing `tally/__init__.py`") for t in told)           # parallel call 1
        assert any(t.startswith("Found 1 matches") or "matches" in t for t in told)      # parallel call 2
        assert any("error:" in t and "JSON" in t for t in told)                        # the cut JSON
        assert any("You replied without calling a tool" in t for t in told)
        assert any("no tool named 'run_everything'" in t for t in told)
        assert any("tally/__init__.py:5 in mean" in t for t in told)                    # pdb, over HTTP
        # exactly one result per call, and the unknown price shown as unknown, never $0
        calls = [c["id"] for e in session.events.history if e.kind == "model_reply" for c in e.data.tool_calls]
        results = [e.data.call_id for e in session.events.history if e.kind == "tool_result"]
        assert sorted(calls) == sorted(results) and len(calls) == 8
        assert session.state.agent.cost is None and session.state.agent.tokens > 0
    finally:
        session.close()


def test_a_provider_that_stays_down_pauses_the_agent_and_the_person_can_retry(tally, stub_llm, litellm_loaded):
    from dgym_tui.agent.litellm_model import LiteLLMModel

    stub_llm.push(*[{"status": 500, "message": "down"}] * 3,
                  {"tool_calls": [{"name": "submit", "arguments": {}}]})
    session = Session(str(tally), sandbox="local")
    try:
        session.start()
        model = LiteLLMModel("openai/stub-model", api_base=stub_llm.url, api_key="dummy", backoff_base=0.01,
                             max_retries=2, timeout=20)
        agent = Agent(session, model, mode="auto", max_steps=5, task="x")
        agent.policy.always_allow("submit")
        agent.start()
        import time

        deadline = time.monotonic() + 30
        while session.state.agent.state != "error":
            assert time.monotonic() < deadline, session.state.agent
            time.sleep(0.05)
        errors = [e.data.message for e in session.events.history if e.kind == "error"]
        assert errors and "the model failed" in errors[-1] and "500" in errors[-1]
        assert session.state.program == "stopped"  # the debugger is untouched
        agent.resume()  # the person retries
        agent._thread.join(30)
        assert agent.outcome == "submitted" and session.state.agent.step == 1
    finally:
        session.close()


def dgym_run(*args, env=None, timeout=240):
    env = {**os.environ, "DGYM_TUI_CONFIG_DIR": env["cfg"], "DGYM_TUI_DATA_DIR": env["data"]}
    return subprocess.run([sys.executable, "-m", "dgym_tui", "run", *args], capture_output=True, text=True,
                          timeout=timeout, env=env)


@pytest.fixture
def dirs(tmp_path):
    return {"cfg": str(tmp_path / "cfg"), "data": str(tmp_path / "data")}


def test_headless_run_with_yes_fixes_the_bug_and_exits_0(tally, stub_llm, dirs, tmp_path):
    stub_llm.push({"text": "Stop where the mean is computed.",
                   "tool_calls": [{"name": "pdb", "arguments": {"command": "b tally/__init__.py:5"}}]},
                  {"tool_calls": [{"name": "pdb", "arguments": {"command": "c"}}]},
                  {"tool_calls": [{"name": "pdb", "arguments": {"command": "p total, len(values)"}}]},
                  {"tool_calls": [FIX]},
                  {"tool_calls": [{"name": "submit", "arguments": {"message": "divide by n"}}]})
    record = tmp_path / "run.jsonl"
    out = dgym_run(str(tally), "--sandbox", "local", "--model", "openai/stub", "--api-base", stub_llm.url,
                   "--mode", "auto", "--yes", "--session", str(record), env=dirs)
    assert out.returncode == 0, out.stdout + out.stderr
    steps = [ln for ln in out.stdout.splitlines() if ln.startswith("step ")]
    assert len(steps) == 5 and "pdb(command='c')" in steps[1] and "edit(" in steps[3]
    assert "→ (12, 3)" in steps[2] and "Pdb command output" not in out.stdout  # what pdb printed
    assert "outcome: submitted; tests (pytest): 2 passed, 0 failed, 0 errors" in out.stdout
    assert "(12, 3)" in stub_llm.bodies[3]["messages"][-1]["content"]
    assert len(stub_llm.probes) == 1  # auto asked first, and native calls came back
    saved = read_session(record)
    assert saved.header["model"] == "openai/stub" and saved.header["mode"] == "auto"
    assert "tally/__init__.py" in saved.header["repo_hashes"]
    assert [e.kind for e in saved.events].count("tool_result") == 5
    assert (tally / "tally" / "__init__.py").read_text() == TALLY["tally/__init__.py"]  # the repo untouched


def test_headless_run_without_yes_refuses_what_asks_and_exits_1(tally, stub_llm, dirs):
    stub_llm.push({"tool_calls": [FIX]}, {"tool_calls": [{"name": "submit", "arguments": {}}]},
                  {"text": "giving up"})
    out = dgym_run(str(tally), "--sandbox", "local", "--model", "openai/stub", "--api-base", stub_llm.url,
                   "--mode", "auto", "--max-steps", "3", env=dirs)
    assert out.returncode == 1, out.stdout + out.stderr
    told = tool_messages(stub_llm.bodies[1])
    assert any("refused: this headless run was started without --yes" in t for t in told)
    assert "tests (pytest): 0 passed, 2 failed" in out.stdout


def test_headless_run_names_the_narrowed_tests_its_outcome_counts(tally, dirs, tmp_path):
    """The agent narrowed the entrypoint to one file that passes: the outcome line's counts (and
    the exit code resting on them) are of that file, and the line says so, not of the suite."""
    import json

    (tally / "tests" / "test_other.py").write_text("def test_other():\n    assert True\n")
    script = tmp_path / "narrow.json"
    script.write_text(json.dumps([
        {"tool_calls": [{"name": "pdb", "arguments": {"command": "c", "entrypoint": "pytest tests/test_other.py"}}]},
        {"tool_calls": [{"name": "submit", "arguments": {"message": "the other file passes"}}]}]))
    out = dgym_run(str(tally), "--sandbox", "local", "--model", f"scripted:{script}", "--mode", "auto",
                   "--yes", "--max-steps", "3", env=dirs)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "outcome: submitted; tests (pytest tests/test_other.py): 1 passed, 0 failed, 0 errors" in out.stdout, \
        out.stdout


def test_headless_run_usage_errors_exit_2(tally, dirs, tmp_path):
    out = dgym_run(str(tally), "--sandbox", "local", env=dirs)
    assert out.returncode == 2 and "give --model" in out.stderr
    out = dgym_run(str(tmp_path / "nowhere"), "--model", "openai/x", env=dirs)
    assert out.returncode == 2 and "no such directory" in out.stderr and "Traceback" not in out.stderr
    out = dgym_run(str(tally), "--sandbox", "local", "--model", "scripted:/no/such/script.json", env=dirs)
    assert out.returncode == 2 and "no script" in out.stderr and "Traceback" not in out.stderr
