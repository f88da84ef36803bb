"""The model layer: the scripted model, and LiteLLMModel over real HTTP against the stub server.

litellm takes seconds to import, so it is loaded once per session (fixture `litellm_module`);
every LiteLLMModel test then talks to a fresh stub server on 127.0.0.1 through litellm, the
openai client and httpx, as it would to a provider.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
import time

import pytest

from dgym_tui.agent.model import (Model, ModelCancelled, ModelError, ToolCallAssembler, assistant_message,
                                  estimate_tokens, make_tool_call, parse_arguments)
from dgym_tui.agent.scripted import END_TEXT, ScriptedModel, ScriptError

VIEW = {"type": "function", "function": {
    "name": "view", "description": "Show a file.",
    "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}}}
SUBMIT = {"type": "function", "function": {"name": "submit", "description": "Finish.",
                                           "parameters": {"type": "object", "properties": {}}}}
TOOLS = [VIEW, SUBMIT]
MESSAGES = [{"role": "system", "content": "You debug Python."},
            {"role": "user", "content": "The test test_total fails."}]


# --- parsing helpers -------------------------------------------------------------------------

def test_parse_arguments_reports_bad_json_as_data():
    assert parse_arguments('{"path": "a.py"}') == ({"path": "a.py"}, None)
    assert parse_arguments("") == ({}, None)
    args, error = parse_arguments('{"path": "a.py"')
    assert args is None and "not valid JSON" in error and '{"path": "a.py"' in error
    args, error = parse_arguments('["a.py"]')
    assert args is None and "JSON object" in error and "list" in error


def test_tool_call_without_name_is_an_error():
    call = make_tool_call("c1", "", "{}")
    assert call.arguments is None and "no tool name" in call.error


def test_assembler_joins_pieces_by_index_and_fills_missing_ids():
    asm = ToolCallAssembler()
    asm.add(0, "a", "view", "")
    asm.add(1, None, "grep", '{"pat')
    asm.add(0, None, None, '{"path":')
    asm.add(1, None, None, 'tern": "x"}')
    asm.add(0, None, None, ' "m.py"}')
    first, second = asm.calls()
    assert (first.id, first.name, first.arguments) == ("a", "view", {"path": "m.py"})
    assert second.name == "grep" and second.arguments == {"pattern": "x"} and second.id.startswith("call_")
    # Servers that omit the index: a new id opens a new call, pieces without one extend the last.
    asm = ToolCallAssembler()
    for piece in [(None, "x", "view", '{"path"'), (None, None, None, ': "a"}'), (None, "y", "submit", "")]:
        asm.add(*piece)
    assert [(c.id, c.name, c.arguments) for c in asm.calls()] == [("x", "view", {"path": "a"}), ("y", "submit", {})]


def test_assistant_message_is_openai_format():
    call = make_tool_call("c1", "view", '{"path": ')
    assert assistant_message("", [call]) == {"role": "assistant", "content": None, "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "view", "arguments": '{"path": '}}]}
    assert assistant_message("done", []) == {"role": "assistant", "content": "done"}


# --- ScriptedModel ---------------------------------------------------------------------------

def test_scripted_streams_text_and_calls_tools():
    model = ScriptedModel([{"text": "Let me look at the cart module first.",
                            "tool_calls": [{"name": "view", "arguments": {"path": "cart.py"}}]}],
                          name="demo", chunk_size=5)
    assert isinstance(model, Model) and model.name == "scripted:demo"
    pieces: list[str] = []
    reply = model.query(MESSAGES, TOOLS, pieces.append)
    assert "".join(pieces) == reply.text == "Let me look at the cart module first."
    assert len(pieces) == 8 and all(len(p) <= 5 for p in pieces)
    (call,) = reply.tool_calls
    assert (call.name, call.arguments, call.error) == ("view", {"path": "cart.py"}, None)
    assert reply.model == "scripted:demo" and reply.finish_reason == "tool_calls"
    assert reply.message["tool_calls"][0]["id"] == call.id
    assert reply.usage.estimated and reply.usage.prompt_tokens == estimate_tokens(MESSAGES, TOOLS)
    assert reply.usage.completion_tokens > 0 and reply.usage.total_tokens == (
        reply.usage.prompt_tokens + reply.usage.completion_tokens)
    assert reply.cost is None  # unknown, never 0
    assert model.requests == [{"messages": MESSAGES, "tools": TOOLS}]


def test_scripted_malformed_arguments_and_unknown_tools_pass_through():
    model = ScriptedModel([{"tool_calls": [{"name": "edit", "arguments": '{"path": "a.py", '},
                                           {"name": "teleport", "arguments": {}}]}])
    bad, unknown = model.query(MESSAGES, TOOLS).tool_calls
    assert bad.arguments is None and "not valid JSON" in bad.error and bad.raw_arguments == '{"path": "a.py", '
    assert unknown.name == "teleport" and unknown.error is None
    assert bad.id != unknown.id


def test_scripted_reacts_to_a_rejection():
    edit1 = {"tool_calls": [{"name": "edit", "arguments": {"path": "cart.py", "new_code": "v1"}}]}
    edit2 = {"text": "Another way, then.", "tool_calls": [{"name": "edit", "arguments": {"new_code": "v2"}}]}
    run_tests = {"tool_calls": [{"name": "eval", "arguments": {}}]}
    script = [edit1, {"when": "not executed", "then": edit2}, run_tests]

    rejected = ScriptedModel(script)
    history = list(MESSAGES)
    reply = rejected.query(history, TOOLS)
    history += [reply.message, {"role": "tool", "tool_call_id": reply.tool_calls[0].id,
                                "content": "Not executed: the person rejected it: Keep the discount rule."}]
    assert rejected.query(history, TOOLS).tool_calls[0].arguments == {"new_code": "v2"}

    approved = ScriptedModel(script)
    history = list(MESSAGES)
    reply = approved.query(history, TOOLS)
    history += [reply.message, {"role": "tool", "tool_call_id": reply.tool_calls[0].id, "content": "Edited cart.py"}]
    assert approved.query(history, TOOLS).tool_calls[0].name == "eval"  # the conditional step was skipped


def test_one_script_serves_both_arms_of_an_ablation_by_the_tools_offered():
    script = [{"with_tool": "pdb", "then": {"tool_calls": [{"name": "pdb", "arguments": {"command": "c"}}]}},
              {"with_tool": "pdb", "then": {"text": "with pdb"}, "else": {"text": "without pdb"}},
              {"text": "both"}]
    pdb = {"type": "function", "function": {"name": "pdb", "parameters": {"type": "object"}}}
    with_pdb = ScriptedModel(script)
    assert with_pdb.query(MESSAGES, [*TOOLS, pdb]).tool_calls[0].name == "pdb"
    assert with_pdb.query(MESSAGES, [*TOOLS, pdb]).text == "with pdb"
    without = ScriptedModel(script)
    assert without.query(MESSAGES, TOOLS).text == "without pdb"  # the pdb step skipped: not offered
    assert without.query(MESSAGES, TOOLS).text == "both"
    with pytest.raises(ScriptError, match="'when' or 'with_tool', not both"):
        ScriptedModel([{"when": "x", "with_tool": "pdb", "then": {"text": "?"}}])


def test_scripted_step_may_be_a_function_of_the_messages():
    def answer(messages):
        return {"text": f"I was sent {len(messages)} messages."}

    model = ScriptedModel([answer, lambda messages: None, {"text": "after the skipped one"}])
    assert model.query(MESSAGES, []).text == "I was sent 2 messages."
    assert model.query(MESSAGES, []).text == "after the skipped one"


def test_scripted_submits_when_the_script_runs_out_then_refuses():
    model = ScriptedModel([{"text": "one"}])
    model.query(MESSAGES, TOOLS)
    end = model.query(MESSAGES, TOOLS)
    assert end.text == END_TEXT and [(c.name, c.arguments) for c in end.tool_calls] == [("submit", {})]
    with pytest.raises(ModelError) as err:
        model.query(MESSAGES, TOOLS)
    assert err.value.kind == "script_over" and "scripted:script" in str(err.value)
    # Without a submit tool it stops with a plain text reply.
    plain = ScriptedModel([])
    reply = plain.query(MESSAGES, [VIEW])
    assert reply.text == END_TEXT and reply.tool_calls == [] and reply.finish_reason == "stop"


def test_scripted_fake_price_and_cancel():
    model = ScriptedModel([{"text": "x" * 40}, {"text": "y" * 40}], fake_price=(1e-6, 2e-6), chunk_size=4)
    reply = model.query(MESSAGES, TOOLS)
    assert reply.cost == pytest.approx(reply.usage.prompt_tokens * 1e-6 + reply.usage.completion_tokens * 2e-6)
    cancel = threading.Event()
    seen: list[str] = []

    def on_delta(text):
        seen.append(text)
        if len(seen) == 3:
            cancel.set()

    with pytest.raises(ModelCancelled):
        model.query(MESSAGES, TOOLS, on_delta, cancel=cancel)
    assert len(seen) == 3


def test_scripted_loads_a_json_file(tmp_path):
    path = tmp_path / "fix-cart.json"
    path.write_text(json.dumps([{"comment": "look first", "text": "Looking.",
                                 "tool_calls": [{"name": "view", "arguments": {"path": "cart.py"}}]},
                                {"when": "rejected", "then": {"text": "Sorry."}, "else": {"text": "Done."}}]))
    model = ScriptedModel.from_file(path)
    assert model.name == "scripted:fix-cart" and model.remaining == 2
    assert model.query(MESSAGES, TOOLS).tool_calls[0].arguments == {"path": "cart.py"}
    assert model.query(MESSAGES, TOOLS).text == "Done."
    named = tmp_path / "other.json"
    named.write_text(json.dumps({"name": "demo", "steps": [{"text": "hi"}]}))
    assert ScriptedModel.from_file(named).name == "scripted:demo"


@pytest.mark.parametrize("content, expected", [
    ("[{\"text\": 1}]", "step 1: text must be a string"),
    ("[{\"txt\": \"hi\"}]", "step 1: unknown key(s) txt"),
    ("[{\"text\": \"a\"}, {\"tool_calls\": [{\"arguments\": {}}]}]", "step 2: tool_calls[0] needs a name"),
    ("[{\"when\": \"x\"}]", "step 1: 'when' takes a string and needs a 'then' step"),
    ("[{\"when\": \"x\", \"then\": {}}]", "step 1 (then): a step needs text, tool_calls or both"),
    ("{\"steps\": 3}", "expected a list of steps"),
    ("[{\"text\": \"a\"", "is not valid JSON"),
])
def test_scripted_bad_file_is_one_clear_line(tmp_path, content, expected):
    path = tmp_path / "bad.json"
    path.write_text(content)
    with pytest.raises(ScriptError) as err:
        ScriptedModel.from_file(path)
    assert expected in str(err.value) and str(path) in str(err.value) and "\n" not in str(err.value)


def test_scripted_missing_file(tmp_path):
    with pytest.raises(ScriptError, match="cannot read the script"):
        ScriptedModel.from_file(tmp_path / "nope.json")


# --- LiteLLMModel against the stub server ------------------------------------------------------

def test_litellm_loads_only_when_asked_and_quietly():
    # In a fresh interpreter: importing the agent's model layer and configuring a model load
    # nothing heavy; warm_up() then loads litellm and what its first request needs, printing nothing.
    code = ("import sys; import dgym_tui.agent, dgym_tui.agent.model, dgym_tui.agent.scripted, "
            "dgym_tui.agent.litellm_model as m; m.LiteLLMModel('openai/x', api_base='http://127.0.0.1:9/v1'); "
            "heavy = ('litellm', 'openai', 'httpx', 'mcp'); "
            "before = [n for n in heavy if n in sys.modules]; m.warm_up(); "
            "after = [n for n in heavy if n in sys.modules]; sys.stdout.flush(); "
            "sys.__stderr__.write(repr((before, after)))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout == "" and out.stderr == repr(([], ["litellm", "openai", "httpx", "mcp"]))


def test_a_broken_litellm_install_is_a_model_error():
    code = ("import sys; sys.modules['litellm'] = None\n"  # makes `import litellm` fail
            "from dgym_tui.agent.litellm_model import LiteLLMModel\n"
            "from dgym_tui.agent.model import ModelError\n"
            "try:\n    LiteLLMModel('openai/x').query([], [])\n"
            "except ModelError as e:\n    print(e.kind, e)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.startswith("other cannot load litellm (ModuleNotFoundError") and "reinstall" in out.stdout


@pytest.fixture(scope="session")
def litellm_module():
    from dgym_tui.agent.litellm_model import load_litellm, warm_up

    warm_up()
    return load_litellm()


@pytest.fixture
def make_model(stub_llm, litellm_module):
    from dgym_tui.agent.litellm_model import LiteLLMModel

    def make(name="openai/stub-model", **kwargs):
        kwargs = {"api_key": "dummy", "backoff_base": 0.01, "timeout": 10, **kwargs}
        return LiteLLMModel(name, api_base=stub_llm.url, **kwargs)

    return make


def test_streamed_text_arrives_in_order_and_whole(stub_llm, make_model):
    text = "The total skips the discount because the rule compares with > instead of >=."
    stub_llm.push({"text": text, "chunk_size": 3, "usage": {"prompt_tokens": 120, "completion_tokens": 19}})
    pieces: list[str] = []
    model = make_model()
    assert isinstance(model, Model)
    reply = model.query(MESSAGES, TOOLS, pieces.append)
    assert "".join(pieces) == reply.text == text and len(pieces) == len(text) // 3 + 1
    assert reply.tool_calls == [] and reply.finish_reason == "stop"
    assert (reply.usage.prompt_tokens, reply.usage.completion_tokens, reply.usage.total_tokens) == (120, 19, 139)
    assert not reply.usage.estimated and reply.model == "openai/stub-model" and reply.retries == 0
    assert reply.message == {"role": "assistant", "content": text}  # no tool call: no tool_calls key


def test_request_carries_the_messages_and_tools(stub_llm, make_model):
    stub_llm.push({"text": "ok"})
    history = MESSAGES + [
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c9", "type": "function", "function": {"name": "view", "arguments": '{"path": "cart.py"}'}}]},
        {"role": "tool", "tool_call_id": "c9", "content": "1 def total(items):"}]
    make_model(temperature=0.0).query(history, TOOLS)
    (request,) = stub_llm.requests
    body = request["body"]
    assert request["path"] == "/v1/chat/completions"
    assert body["model"] == "stub-model" and body["stream"] is True and body["temperature"] == 0.0
    assert body["tools"] == TOOLS and body["tool_choice"] == "auto"
    # As sent, except that litellm leaves out an assistant message's null content.
    assert body["messages"] == [{k: v for k, v in m.items() if v is not None} for m in history]
    assert request["headers"]["Authorization"] == "Bearer dummy"


def test_a_tool_call(stub_llm, make_model):
    stub_llm.push({"text": "Looking.", "tool_calls": [{"name": "view", "arguments": {"path": "cart.py"}}]})
    reply = make_model().query(MESSAGES, TOOLS)
    (call,) = reply.tool_calls
    assert (call.name, call.arguments, call.error, call.id) == ("view", {"path": "cart.py"}, None, "call_0_view")
    assert reply.finish_reason == "tool_calls"
    assert reply.message == {"role": "assistant", "content": "Looking.", "tool_calls": [
        {"id": "call_0_view", "type": "function", "function": {"name": "view", "arguments": '{"path": "cart.py"}'}}]}


def test_parallel_tool_calls_in_one_reply(stub_llm, make_model):
    calls = [{"name": "view", "arguments": {"path": "cart.py"}},
             {"name": "grep", "arguments": {"pattern": "discount", "path": "."}},
             {"name": "pdb", "arguments": {"command": "b cart.py:12"}}]
    stub_llm.push({"tool_calls": calls, "interleave": True, "chunk_size": 5})
    reply = make_model().query(MESSAGES, TOOLS)
    assert [(c.name, c.arguments) for c in reply.tool_calls] == [(c["name"], c["arguments"]) for c in calls]
    assert len({c.id for c in reply.tool_calls}) == 3 and reply.message["content"] is None


def test_malformed_tool_arguments_become_an_error_not_an_exception(stub_llm, make_model):
    stub_llm.push({"tool_calls": [{"name": "edit", "arguments": '{"path": "cart.py", "new_code": "x'},
                                  {"name": "view", "arguments": {"path": "ok.py"}}]})
    bad, good = make_model().query(MESSAGES, TOOLS).tool_calls
    assert bad.arguments is None and "not valid JSON" in bad.error and bad.raw_arguments.endswith('"x')
    assert good.arguments == {"path": "ok.py"} and good.error is None


def test_unknown_tool_is_passed_through(stub_llm, make_model):
    stub_llm.push({"tool_calls": [{"name": "rm_rf", "arguments": {"path": "/"}}]})
    (call,) = make_model().query(MESSAGES, TOOLS).tool_calls
    assert call.name == "rm_rf" and call.arguments == {"path": "/"} and call.error is None


def test_rate_limit_then_success_honours_retry_after(stub_llm, make_model):
    stub_llm.push({"status": 429, "retry_after": 0.3, "message": "Rate limit reached"}, {"text": "hello"})
    retries: list[tuple] = []
    reply = make_model(backoff_base=5).query(MESSAGES, TOOLS, on_retry=lambda *a: retries.append(a))
    assert reply.text == "hello" and reply.retries == 1
    assert retries == [(1, 0.3, "rate limited")]
    first, second = (r["time"] for r in stub_llm.requests)
    assert second - first >= 0.3


def test_server_error_then_success(stub_llm, make_model):
    stub_llm.push({"status": 500, "message": "upstream exploded"}, {"text": "fine now"})
    retries: list[tuple] = []
    reply = make_model().query(MESSAGES, TOOLS, on_retry=lambda *a: retries.append(a))
    assert reply.text == "fine now" and len(stub_llm.requests) == 2
    ((attempt, wait, reason),) = retries
    assert attempt == 1 and 0 < wait <= 0.02 and reason == "server error 500"


def test_server_error_forever_is_a_clear_model_error(stub_llm, make_model):
    stub_llm.push(*[{"status": 500, "message": "upstream exploded"}] * 4)
    retries: list[tuple] = []
    with pytest.raises(ModelError) as err:
        make_model(max_retries=3).query(MESSAGES, TOOLS, on_retry=lambda *a: retries.append(a))
    message = str(err.value)
    assert err.value.kind == "server" and err.value.status == 500 and err.value.attempts == 4
    assert "HTTP 500" in message and "4 attempts" in message and "upstream exploded" in message
    assert "\n" not in message and "litellm." not in message
    assert [a for a, _, _ in retries] == [1, 2, 3] and len(stub_llm.requests) == 4
    waits = [w for _, w, _ in retries]
    assert waits[0] < waits[1] < waits[2]  # exponential backoff


def test_auth_and_not_found_are_not_retried(stub_llm, make_model):
    stub_llm.push({"status": 401, "message": "Incorrect API key provided"})
    with pytest.raises(ModelError) as err:
        make_model().query(MESSAGES, TOOLS)
    assert err.value.kind == "auth" and "refused the credentials" in str(err.value)
    stub_llm.push({"status": 404, "message": "The model `stub-model` does not exist"})
    with pytest.raises(ModelError) as err:
        make_model().query(MESSAGES, TOOLS)
    assert err.value.kind == "not_found" and "does not know this model" in str(err.value)
    assert len(stub_llm.requests) == 2


def test_connection_refused_is_retried_then_explained(litellm_module):
    from dgym_tui.agent.litellm_model import LiteLLMModel

    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    model = LiteLLMModel("openai/x", api_base=f"http://127.0.0.1:{port}/v1", api_key="d", max_retries=2,
                         backoff_base=0.01)
    retries: list[tuple] = []
    with pytest.raises(ModelError) as err:
        model.query(MESSAGES, TOOLS, on_retry=lambda *a: retries.append(a))
    assert err.value.kind == "connection" and len(retries) == 2
    assert f"cannot connect to http://127.0.0.1:{port}/v1 (3 attempts)" in str(err.value)
    assert "refused" in str(err.value).lower()


def test_dropped_connection_and_timeout_are_retried(stub_llm, make_model):
    stub_llm.push({"disconnect": True}, {"delay": 1.0, "text": "too late"}, {"text": "made it"})
    reasons: list[str] = []
    reply = make_model(timeout=0.4).query(MESSAGES, TOOLS, on_retry=lambda a, w, r: reasons.append(r))
    assert reply.text == "made it" and reasons == ["connection failed", "timed out"]


def test_a_reply_broken_mid_stream_is_retried_from_its_start(stub_llm, make_model):
    text = "First I will set a breakpoint."
    stub_llm.push({"text": text, "chunk_size": 4, "drop_after": 4}, {"text": text, "chunk_size": 4})
    events: list = []
    reply = make_model().query(MESSAGES, TOOLS, events.append, on_retry=lambda *a: events.append(a))
    retry_at = next(i for i, e in enumerate(events) if isinstance(e, tuple))
    assert "".join(events[:retry_at]) == text[:12]  # what arrived before the break (then void)
    assert events[retry_at][2] == "reply broken off"
    assert "".join(events[retry_at + 1:]) == reply.text == text


def test_timeout_forever(stub_llm, make_model):
    stub_llm.push({"delay": 0.6, "text": "late"}, {"delay": 0.6, "text": "late"})
    with pytest.raises(ModelError) as err:
        make_model(timeout=0.2, max_retries=1).query(MESSAGES, TOOLS)
    assert err.value.kind == "timeout" and "no reply from" in str(err.value) and "0.2 s" in str(err.value)


def test_reply_without_usage_still_counts_tokens(stub_llm, make_model):
    # Some local servers report no usage; litellm then counts with its tokenizer, and where even
    # that gives nothing, the model estimates (and says so).
    stub_llm.push({"text": "a" * 80, "usage": False})
    model = make_model()
    reply = model.query(MESSAGES, TOOLS)
    assert reply.usage.prompt_tokens > 0 and reply.usage.completion_tokens > 0
    fallback = model._usage(None, MESSAGES, TOOLS, "a" * 80, [])
    assert fallback.estimated and fallback.completion_tokens == 20 and fallback.prompt_tokens > 0


def test_cost_unknown_known_and_configured(stub_llm, make_model):
    usage = {"prompt_tokens": 1000, "completion_tokens": 100}
    stub_llm.push({"text": "a", "usage": usage}, {"text": "b", "usage": usage}, {"text": "c", "usage": usage})
    assert make_model().query(MESSAGES, TOOLS).cost is None  # no price for "stub-model": unknown, not 0
    known = make_model("openai/gpt-4o").query(MESSAGES, TOOLS).cost  # litellm's price list
    assert known == pytest.approx(1000 * 2.5e-6 + 100 * 10e-6)
    priced = make_model(cost_per_token=(1e-6, 2e-6)).query(MESSAGES, TOOLS).cost
    assert priced == pytest.approx(1000 * 1e-6 + 100 * 2e-6)


def test_cancel_stops_the_stream_and_the_retry_wait(stub_llm, make_model):
    stub_llm.push({"text": "x" * 200, "chunk_size": 2, "chunk_delay": 0.005})
    cancel = threading.Event()
    seen: list[str] = []

    def on_delta(text):
        seen.append(text)
        if len(seen) == 5:
            cancel.set()

    with pytest.raises(ModelCancelled):
        make_model().query(MESSAGES, TOOLS, on_delta, cancel=cancel)
    assert len(seen) == 5
    stub_llm.push({"status": 503, "retry_after": 30})
    cancel = threading.Event()
    threading.Timer(0.2, cancel.set).start()
    started = time.monotonic()
    with pytest.raises(ModelCancelled):
        make_model().query(MESSAGES, TOOLS, cancel=cancel)
    assert time.monotonic() - started < 5


def test_a_failing_callback_is_the_callers_exception(stub_llm, make_model):
    stub_llm.push({"text": "hello"})

    def on_delta(text):
        raise KeyError("ui bug")

    with pytest.raises(KeyError, match="ui bug"):
        make_model().query(MESSAGES, TOOLS, on_delta)
    assert len(stub_llm.requests) == 1  # not retried


def test_empty_script_says_so(stub_llm, make_model):
    with pytest.raises(ModelError) as err:
        make_model().query(MESSAGES, TOOLS)
    assert err.value.kind == "bad_request" and "no scripted response left" in str(err.value)


def test_bad_model_and_missing_key_are_explained(litellm_module, monkeypatch):
    from dgym_tui.agent.litellm_model import LiteLLMModel

    with pytest.raises(ModelError) as err:
        LiteLLMModel("no-such-model-anywhere", max_retries=0).query(MESSAGES, TOOLS)
    assert err.value.kind == "bad_model" and "provider/model" in str(err.value)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ModelError) as err:  # the client refuses before any request is sent
        LiteLLMModel("openai/gpt-4o", max_retries=0).query(MESSAGES, TOOLS)
    assert err.value.kind == "auth" and "no API key: set OPENAI_API_KEY in the environment" in str(err.value)


def test_local_server_needs_no_key(stub_llm, make_model, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    stub_llm.push({"text": "local"})
    assert make_model(api_key=None).query(MESSAGES, TOOLS).text == "local"
    assert stub_llm.requests[0]["headers"]["Authorization"] == "Bearer no-key"


def test_litellm_prints_nothing(stub_llm, make_model, capfd):
    stub_llm.push({"status": 400, "message": "bad"}, {"text": "ok"})
    with pytest.raises(ModelError):
        make_model().query(MESSAGES, TOOLS)
    make_model().query(MESSAGES, TOOLS)
    out, err = capfd.readouterr()
    assert out == "" and err == ""  # no banner or log line in the middle of the TUI


def test_context_window_and_token_counts(litellm_module):
    from dgym_tui.agent.litellm_model import LiteLLMModel, context_window, count_tokens

    assert context_window("openai/gpt-4o") == 128000
    assert context_window("openai/stub-model") is None
    assert LiteLLMModel("openai/stub-model", context_window=32000).context_window() == 32000
    counted = count_tokens(MESSAGES, "openai/gpt-4o")
    assert 10 < counted < estimate_tokens(MESSAGES)  # a real tokenizer: fewer than chars/4 of the JSON
    assert count_tokens(MESSAGES, "openai/gpt-4o", TOOLS) > counted
    assert count_tokens(MESSAGES) == estimate_tokens(MESSAGES)


def test_stub_answers_non_streaming_requests_too(stub_llm, litellm_module):
    stub_llm.push({"text": "plain", "tool_calls": [{"name": "view", "arguments": {"path": "a.py"}}]})
    response = litellm_module.completion(model="openai/stub", api_base=stub_llm.url, api_key="d",
                                         messages=MESSAGES, tools=TOOLS, max_retries=0)
    message = response.choices[0].message
    assert message.content == "plain" and json.loads(message.tool_calls[0].function.arguments) == {"path": "a.py"}
    assert stub_llm.bodies[0].get("stream") in (None, False)


def test_model_error_for_an_empty_name():
    from dgym_tui.agent.litellm_model import LiteLLMModel

    with pytest.raises(ValueError, match="model name is empty"):
        LiteLLMModel("  ")
    assert "dummy" not in repr(LiteLLMModel("openai/x", api_key="dummy"))

