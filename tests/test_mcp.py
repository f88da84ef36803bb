"""dgym-tui as an MCP server (`dgym-tui mcp`), driven by the MCP SDK's own client over stdio: the
real command in a subprocess, a real sandbox and pdb. The outside agent lists the tools, debugs
with pdb, is refused what the policy asks about (headless, without --yes) and reads why, edits
with --yes; the session file holds it all under the client's actor."""

from __future__ import annotations

import shutil
import sys

import anyio
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.types import Implementation

from dgym_tui.core.session_file import read_session
from test_ui_support import EXAMPLE


@pytest.fixture
def repo(tmp_path):
    repo = tmp_path / "shopcart"
    shutil.copytree(EXAMPLE, repo, ignore=shutil.ignore_patterns("__pycache__", ".pytest_cache"))
    return repo


def server(repo, tmp_path, *extra: str) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "dgym_tui", "mcp", "--sandbox", "local", "-e", "python main.py", "--session",
              str(tmp_path / "mcp.jsonl"), *extra, str(repo)],
        env={"DGYM_TUI_CONFIG_DIR": str(tmp_path / "cfg"), "DGYM_TUI_DATA_DIR": str(tmp_path / "data"),
             "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)})


async def call(client, tool: str, args: dict) -> tuple[str, bool]:
    result = await client.call_tool(tool, args)
    return result.content[0].text, bool(result.is_error)


def run(test):
    anyio.run(test)


NO_YES = ("not executed: refused: this MCP server was started without --yes, and the policy asks before this call "
          "(ask edit); no person was there to approve it. Do it another way, or restart with --yes to allow such "
          "calls.")


def test_a_call_the_policy_denies_names_the_rule_and_is_an_error(repo, tmp_path):
    (tmp_path / "cfg").mkdir()
    (tmp_path / "cfg" / "config.toml").write_text('[agent.policy]\ndeny = ["bash(rm *)"]\n')

    async def test():
        async with Client(server(repo, tmp_path, "--yes"), client_info=Implementation(name="Claude Code", version="2")) as c:
            text, error = await call(c, "bash", {"command": "rm -rf main.py"})
            assert error and text == ("not executed: the policy's rule refuses this call (deny bash(rm *)). "
                                      "Do it another way.")
            text, error = await call(c, "bash", {"command": "exit 3"})  # ran, and failed
            assert error, text
            text, error = await call(c, "bash", {"command": "ls main.py"})  # --yes approved, ran, fine
            assert not error and "main.py" in text

    run(test)


def test_an_outside_agent_debugs_and_is_refused_what_asks(repo, tmp_path):
    async def test():
        async with Client(server(repo, tmp_path), client_info=Implementation(name="Claude Code", version="2")) as c:
            tools = {t.name: t for t in (await c.list_tools()).tools}
            assert sorted(tools) == ["bash", "edit", "eval", "grep", "listdir", "pdb", "submit", "view"]
            assert tools["pdb"].input_schema["required"] == ["command"]
            text, error = await call(c, "pdb", {"command": "b main.py:76"})
            assert not error and "Breakpoint 1 at main.py:76" in text
            text, _ = await call(c, "pdb", {"command": "c"})
            assert "main.py:76 in main" in text
            text, _ = await call(c, "pdb", {"command": "p order.cart.customer.name"})
            assert text.startswith("Pdb command output:\n'Alice'")
            text, error = await call(c, "edit", {"path": "main.py", "start": 1, "end": 1, "new_code": "# changed"})
            # nobody was there: the refusal names the missing --yes, never a person, and is an error
            assert error and text == NO_YES
            text, error = await call(c, "view", {"path": "main.py", "start": 1, "end": 1})
            assert "# changed" not in text
            text, error = await call(c, "nope", {})
            assert error and "there is no tool named 'nope'" in text
            text, error = await call(c, "pdb", {})
            assert error and "command" in text
            text, _ = await call(c, "pdb", {"command": "p 6 * 7"})  # still usable
            assert "42" in text

    run(test)
    saved = read_session(tmp_path / "mcp.jsonl")
    mine = [e for e in saved.events if e.actor == "agent:Claude-Code"]
    assert [e.data.command for e in mine if e.kind == "pdb_input"] == [
        "b main.py:76", "c", "p order.cart.customer.name", "p 6 * 7"]
    assert [e.data.verdict for e in mine if e.kind == "tool_call"] == ["run", "run", "run", "ask", "run", "invalid",
                                                                       "invalid", "run"]
    assert (repo / "main.py").read_text() == (EXAMPLE / "main.py").read_text()  # the user's repo untouched


def test_with_yes_an_edit_is_approved_and_runs_in_the_sandbox(repo, tmp_path):
    async def test():
        async with Client(server(repo, tmp_path, "--yes"), client_info=Implementation(name="codex", version="1")) as c:
            text, error = await call(c, "edit", {"path": "main.py", "start": 1, "end": 1,
                                                 "new_code": '"""Demo, changed by the agent."""'})
            assert not error and "refused" not in text
            text, _ = await call(c, "view", {"path": "main.py", "start": 1, "end": 1})
            assert "changed by the agent" in text

    run(test)
    saved = read_session(tmp_path / "mcp.jsonl")
    decisions = [(e.actor, e.data.verdict) for e in saved.events if e.kind == "decision"]
    assert decisions == [("system", "approve")]
    assert any(e.kind == "checkpoint" and e.actor == "agent:codex" for e in saved.events)
    assert (repo / "main.py").read_text() == (EXAMPLE / "main.py").read_text()


def test_replay_shows_the_outside_agent(repo, tmp_path):
    import subprocess

    async def test():
        async with Client(server(repo, tmp_path), client_info=Implementation(name="goose", version="1")) as c:
            await call(c, "pdb", {"command": "n"})

    run(test)
    out = subprocess.run([sys.executable, "-m", "dgym_tui", "replay", "--headless", str(tmp_path / "mcp.jsonl")],
                         capture_output=True, text=True, timeout=60)
    assert "agent:goose (Pdb) n" in out.stdout and "agent:goose → pdb(command='n')" in out.stdout, out.stdout


# --- over HTTP, in the app: the person approves and rejects ---------------------------------------


async def http_calls(url: str, token: str, calls: list[tuple[str, dict]], results: list,
                     errors: list | None = None) -> None:
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=120) as http:
        async with Client(streamable_http_client(url, http_client=http),
                          client_info=Implementation(name="codex", version="1")) as c:
            for tool, args in calls:
                result = await c.call_tool(tool, args)
                results.append(result.content[0].text)
                if errors is not None:
                    errors.append(bool(result.is_error))


async def test_in_the_app_the_person_approves_and_rejects_an_outside_agents_calls(repo, tmp_path, monkeypatch):
    import threading

    import httpx2
    from test_ui_app import SIZE, started
    from test_ui_support import wait_for

    from dgym_tui.core.session import Session
    from dgym_tui.ui.app import DgymApp
    from dgym_tui.ui.screens.modals import PromptScreen, TextScreen

    monkeypatch.setenv("DGYM_TUI_CONFIG_DIR", str(tmp_path / "cfg"))
    session = Session(str(repo), sandbox="local", entrypoint="python main.py")
    app = DgymApp(session, mcp_port=0)
    results: list[str] = []
    errors: list[bool] = []
    try:
        async with app.run_test(size=SIZE) as pilot:
            await started(pilot)
            await wait_for(pilot, lambda: isinstance(app.screen, TextScreen), what="the client's set-up")
            endpoint = app.agents.endpoint
            assert endpoint.token in app.screen.text and endpoint.url.startswith("http://127.0.0.1:")
            await pilot.press("escape")
            # no token, a wrong token: refused before any MCP
            assert httpx2.post(endpoint.url, json={}).status_code == 401
            assert httpx2.post(endpoint.url, json={}, headers={"Authorization": "Bearer nope"}).status_code == 401

            edit = {"path": "main.py", "start": 76, "end": 76,
                    "new_code": "        print(format_quote(order.cart.customer, quote(order.cart)))  # by codex"}
            calls = [("pdb", {"command": "b main.py:76"}), ("pdb", {"command": "c"}),
                     ("pdb", {"command": "p order.cart.customer.name"}), ("edit", edit), ("edit", edit)]
            client = threading.Thread(target=lambda: anyio.run(http_calls, endpoint.url, endpoint.token, calls,
                                                               results, errors))
            client.start()

            def waiting(tool):
                w = app.main.state.agent.waiting
                return w if w is not None and w.tool == tool else None

            for _ in range(3):  # b, c, p: each waits in step mode, the person approves
                await wait_for(pilot, lambda: waiting("pdb"), timeout=60, what="a pdb call to wait for the person")
                answered = waiting("pdb").call_id
                app.agents.answer(answered, "approve")
                await wait_for(pilot, lambda: app.main.state.agent.waiting is None
                               or app.main.state.agent.waiting.call_id != answered, what="the answer to land")
            await wait_for(pilot, lambda: waiting("edit"), timeout=60, what="the edit to wait for the person")
            app.agents.answer(waiting("edit").call_id, "reject")
            await wait_for(pilot, lambda: isinstance(app.screen, PromptScreen), what="the comment prompt")
            await pilot.press(*"look at the caller")
            await pilot.press("enter")
            await wait_for(pilot, lambda: waiting("edit") and len(results) == 4, timeout=60, what="the edit again")
            app.agents.answer(waiting("edit").call_id, "approve")
            await wait_for(pilot, lambda: not client.is_alive(), timeout=60, what="the client to finish")
            assert "# by codex" in session.sandbox.read_text("main.py")
    finally:
        session.close()
    assert "Breakpoint 1 at main.py:76" in results[0] and "main.py:76 in main" in results[1]
    assert "'Alice'" in results[2]
    assert results[3] == "not executed: the person rejected this call. Their comment: look at the caller"
    assert errors == [False, False, False, True, False]  # the rejected call is an error to the client
    assert "refused" not in results[4] and "rejected" not in results[4]
    decisions = [(e.actor, e.data.verdict) for e in session.events.history if e.kind == "decision"]
    assert decisions == [("human", "approve")] * 3 + [("human", "reject"), ("human", "approve")]
    assert {e.actor for e in session.events.history if e.kind == "tool_call"} == {"agent:codex"}


# --- several clients, and one that leaves mid-call ------------------------------------------------


def test_two_clients_at_once_and_one_that_leaves_mid_call(tmp_path):
    import threading

    from dgym_tui.agent.policy import Policy
    from dgym_tui.core.session import Session
    from dgym_tui.mcp_server import HttpEndpoint, OutsideAgents

    repo = tmp_path / "spin"
    repo.mkdir()
    (repo / "spin.py").write_text("import time\nn = 0\nwhile True:\n    n += 1\n    time.sleep(0.01)\n")
    session = Session(str(repo), sandbox="local", entrypoint="python spin.py", pdb_timeout=4)
    session.start()
    endpoint = HttpEndpoint(OutsideAgents(session, Policy.from_config({"allow": ["pdb"], "ask": []}),
                                          mode="auto")).start()
    try:
        async def leave_mid_call():
            with anyio.move_on_after(1):  # the client gives up while `c` runs the endless loop
                await http_calls(endpoint.url, endpoint.token, [("pdb", {"command": "c"})], [])

        anyio.run(leave_mid_call)
        results: list[list[str]] = [[], []]
        clients = [threading.Thread(target=lambda r=r: anyio.run(
            http_calls, endpoint.url, endpoint.token, [("pdb", {"command": "p n > 0"}), ("pdb", {"command": "p 6 * 7"})],
            r)) for r in results]
        for c in clients:
            c.start()
        for c in clients:
            c.join(60)
        # the interrupted `c` ended (pdb's time-out), and both clients' calls ran, one at a time
        for r in results:
            assert len(r) == 2 and "True" in r[0] and "42" in r[1], r
        assert session.state.program == "stopped"
    finally:
        endpoint.stop()
        session.close()


def test_an_outside_agents_session_exports_like_any_other(repo, tmp_path):
    import json
    import subprocess

    async def test():
        async with Client(server(repo, tmp_path), client_info=Implementation(name="cursor", version="1")) as c:
            await call(c, "pdb", {"command": "p 6 * 7"})

    run(test)
    for fmt in ("markdown", "html", "atif"):
        out = subprocess.run([sys.executable, "-m", "dgym_tui", "export", str(tmp_path / "mcp.jsonl"), "--format", fmt,
                              "-o", str(tmp_path / f"out.{fmt}")], capture_output=True, text=True, timeout=60)
        assert out.returncode == 0, out.stderr
    markdown = (tmp_path / "out.markdown").read_text()
    assert "(agent:cursor)" in markdown and 'pdb(command="p 6 * 7")' in markdown and "42" in markdown
    atif = json.loads((tmp_path / "out.atif").read_text())
    assert any(call["function_name"] == "pdb" for step in atif["steps"] for call in step.get("tool_calls") or [])


def test_a_saved_session_resumes_and_the_client_reconnects(repo, tmp_path):
    async def first():
        async with Client(server(repo, tmp_path, "--yes"), client_info=Implementation(name="codex", version="1")) as c:
            await call(c, "pdb", {"command": "b main.py:76"})
            await call(c, "edit", {"path": "main.py", "start": 1, "end": 8,
                                   "new_code": '"""Resumed demo.\n' + "\n" * 6 + '"""'})  # as many lines

    async def again():
        params = StdioServerParameters(command=sys.executable,
                                       args=["-m", "dgym_tui", "mcp", "--yes", "--resume", str(tmp_path / "mcp.jsonl")],
                                       env=server(repo, tmp_path).env)
        async with Client(params, client_info=Implementation(name="codex", version="1")) as c:
            text, _ = await call(c, "view", {"path": "main.py", "start": 1, "end": 1})
            assert "Resumed demo." in text  # the change, applied again in the new sandbox
            text, _ = await call(c, "pdb", {"command": "c"})
            assert "main.py:76 in main" in text  # the breakpoint, set again

    run(first)
    run(again)
    saved = read_session(tmp_path / "mcp.jsonl")
    assert [e.kind for e in saved.events].count("resumed") == 1
    assert [e.data.command for e in saved.events if e.kind == "pdb_input" and e.actor == "agent:codex"] == [
        "b main.py:76", "c"]


async def test_the_palette_lets_an_outside_agent_in(repo, tmp_path, monkeypatch):
    import httpx2
    from test_ui_app import SIZE, from_palette, started
    from test_ui_support import wait_for

    from dgym_tui.core.session import Session
    from dgym_tui.ui.app import DgymApp
    from dgym_tui.ui.screens.modals import TextScreen

    monkeypatch.setenv("DGYM_TUI_CONFIG_DIR", str(tmp_path / "cfg"))
    session = Session(str(repo), sandbox="local", entrypoint="python main.py")
    app = DgymApp(session)
    try:
        async with app.run_test(size=SIZE) as pilot:
            await started(pilot)
            assert app.agents.endpoint is None
            await from_palette(pilot, "outside agent", "Let an outside agent in…")
            await wait_for(pilot, lambda: isinstance(app.screen, TextScreen), what="the client's set-up")
            endpoint = app.agents.endpoint
            assert f"claude mcp add --transport http dgym {endpoint.url}" in app.screen.text
            ok = httpx2.post(endpoint.url, headers={"Authorization": f"Bearer {endpoint.token}",
                                                    "Accept": "application/json, text/event-stream"},
                             json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
            assert ok.status_code != 401
        import time

        deadline = time.monotonic() + 10  # the app closes its session (and the endpoint) on a thread
        while app.agents.endpoint is not None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert app.agents.endpoint is None
        with pytest.raises(httpx2.ConnectError):
            httpx2.post(endpoint.url, json={})
    finally:
        session.close()


def test_the_schema_the_server_checks_headers_against_is_the_one_clients_list(repo):
    """The SDK checks a call's Mcp-Param-* headers against get_tool_input_schema (given so that it
    does not run tools/list on every call): it must say what tools/list says, tool for tool."""
    from dgym_tui.agent.policy import Policy
    from dgym_tui.core.session import Session
    from dgym_tui.mcp_server import OutsideAgents, build_server

    session = Session(str(repo), sandbox="local", entrypoint="python main.py")
    try:
        server = build_server(OutsideAgents(session, Policy.from_config({}), mode="auto"))

        async def listed():
            async with Client(server) as client:
                return (await client.list_tools()).tools

        tools = anyio.run(listed)
        assert len(tools) >= 8
        for tool in tools:
            assert server.get_tool_input_schema(tool.name) == tool.input_schema, tool.name
        assert server.get_tool_input_schema("no-such-tool") is None
    finally:
        session.close()


def test_an_outside_agent_asks_a_seeker_and_gets_a_grounded_answer(repo, tmp_path):
    """The outside agent is the fixer; a local model (scripted here) investigates with pdb."""
    import json

    script = tmp_path / "seeker.json"
    script.write_text(json.dumps({"name": "shop_seeker", "steps": [
        {"tool_calls": [{"name": "pdb", "arguments": {"command": "b main.py:76"}}]},
        {"tool_calls": [{"name": "pdb", "arguments": {"command": "c"}}]},
        {"tool_calls": [{"name": "pdb", "arguments": {"command": "p order.cart.customer.name"}}]},
        {"tool_calls": [{"name": "answer", "arguments": {"text": (
            "Looked: main.py:76\nRan: b main.py:76; c; p order.cart.customer.name\n"
            "Saw: order.cart.customer.name = 'Alice'\nAnswer: the first order is Alice's.")}}]}]}))

    async def test():
        async with Client(server(repo, tmp_path, "--seeker", f"scripted:{script}"),
                          client_info=Implementation(name="Claude Code", version="2")) as c:
            tools = {t.name: t for t in (await c.list_tools()).tools}
            assert "debug" in tools and tools["debug"].input_schema["required"] == ["question"]
            text, error = await call(c, "debug", {"question": "Whose order is processed first?"})
            assert not error, text
            assert "'Alice'" in text and "[Grounded" in text and "main.py:76" in text

    run(test)
    saved = read_session(tmp_path / "mcp.jsonl")
    answer = next(e.data for e in saved.events if e.kind == "seeker_answer")
    assert answer.grounding == "grounded" and answer.commands == ["b main.py:76", "c", "p order.cart.customer.name"]
    seeker_pdb = [e.data.command for e in saved.events if e.kind == "pdb_input" and e.actor == "agent:seeker"]
    assert seeker_pdb == ["b main.py:76", "c", "p order.cart.customer.name"]
