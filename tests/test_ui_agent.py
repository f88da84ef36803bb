"""The agent in the app, driven by a person's keys (pilot): a real session (local sandbox, pdb,
git) and a scripted model. The person rejects the agent's first edit with a comment, tries the
second, approves it; inspects values while a call waits; pauses and cycles the mode."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_agent import TALLY, make_repo
from test_ui_support import type_at_once, wait_for
from textual.widgets import Collapsible

from dgym_tui.config import AgentSettings
from dgym_tui.core.session import Session
from dgym_tui.ui.app import DgymApp
from dgym_tui.ui.screens.modals import PromptScreen
from dgym_tui.ui.widgets.agent_panel import AgentPanel
from dgym_tui.ui.widgets.diff_view import DiffView
from dgym_tui.ui.widgets.status_bar import StatusBar
from dgym_tui.ui.widgets.transcript import Transcript

SCRIPT = Path(__file__).resolve().parent / "agent_scripts" / "tally.json"
SIZE = (160, 48)


@pytest.fixture(autouse=True)
def config_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("DGYM_TUI_CONFIG_DIR", str(tmp_path / "config"))


@pytest.fixture
def session(tmp_path):
    s = Session(str(make_repo(tmp_path / "tally", TALLY)), sandbox="local")
    yield s
    s.close()


def settings(mode="auto"):
    return AgentSettings(model=f"scripted:{SCRIPT}", mode=mode, max_steps=20)


def texts(app) -> list[str]:
    return [str(e.title) if isinstance(e, Collapsible) else str(e.render())
            for e in app.main.query_one(Transcript).children]


async def waiting_for(pilot, tool: str, tried: bool = False):
    app = pilot.app
    await wait_for(pilot, lambda: (w := app.main.state.agent.waiting) is not None and w.tool == tool
                   and w.tried == tried and app.agents.agent is not None, timeout=60,
                   what=f"{tool} waiting{' after a try' if tried else ''}")
    await pilot.pause()
    return app.main.state.agent.waiting


async def test_the_person_rejects_tries_and_approves_with_keys(session):
    app = DgymApp(session, agent_settings=settings())
    async with app.run_test(size=SIZE) as pilot:
        first = await waiting_for(pilot, "edit")
        panel = app.main.query_one(AgentPanel)
        assert app.main.focused is panel  # nothing was being typed: the pane takes the focus
        diff = panel.query_one(DiffView)
        assert diff.display and "- " in diff.render_text().plain and "+ " in diff.render_text().plain
        assert "return total / (len(values) - 1 + 1)" in diff.render_text().plain
        assert "ask edit" in str(panel.query_one("#agent-call").render())
        # while it waits, the debugger is the person's: a value, read in the console
        await pilot.press("exclamation_mark", *"p total", "enter")
        await wait_for(pilot, lambda: any(e.kind == "pdb_output" and e.data.text == "12\n"
                                          for e in session.events.history), what="p total")
        await pilot.press("f7")
        assert app.main.focused is panel
        await pilot.press("v")  # side by side, and back
        assert diff.side_by_side and "│" in diff.render_text(120).plain
        await pilot.press("v")
        await pilot.press("r")
        await wait_for(pilot, lambda: isinstance(app.screen, PromptScreen), what="the comment prompt")
        await pilot.press(*"divide by len(values)", "enter")
        second = await waiting_for(pilot, "edit")
        assert second.call_id != first.call_id
        assert "Their comment: divide by len(values)" in app.agents.agent.messages[-2]["content"] or any(
            "Their comment: divide by len(values)" in (m.get("content") or "") for m in app.agents.agent.messages)
        await pilot.press("t")
        tried = await waiting_for(pilot, "edit", tried=True)
        assert "Tests after this change: 2 passed" in tried.outcome
        await pilot.press("a")
        await waiting_for(pilot, "submit")
        await pilot.press("a")
        await wait_for(pilot, lambda: app.main.state.agent.state == "submitted", timeout=60, what="submitted")
        assert session.run_tests().ok
        bar = app.main.query_one(StatusBar)
        assert "scripted:tally (scripted)" in str(bar.query_one("#sb-model").render())
        assert str(bar.query_one("#sb-cost").render()) == "cost: ?"
        shown = texts(app)
        assert any("agent started: scripted:tally" in t and "scripted, not an LLM" in t for t in shown)
        assert any(t.startswith("agent → pdb(command='c')") for t in shown)
        assert any(t == "human rejected: “divide by len(values)”" for t in shown)
        assert any(t.startswith("human tried") for t in shown) and "human approved" in shown
        assert any("agent submitted: mean divided by n - 1 instead of n" in t for t in shown)


async def test_no_cost_figure_shows_before_the_models_first_reply(session, stub_llm):
    """Before any reply nothing is priced: the status bar and the agent pane show no figure (never
    a false $0), then "?" once a reply of a model with no known price came back."""
    stub_llm.push({"delay": 6, "text": "Nothing to do.",
                   "tool_calls": [{"name": "submit", "arguments": {"message": "done"}}]})
    agent = AgentSettings(model="openai/stub", api_base=stub_llm.url, mode="auto", max_steps=3, tool_format="native")
    app = DgymApp(session, agent_settings=agent)
    async with app.run_test(size=SIZE) as pilot:
        bar = app.main.query_one(StatusBar)
        await wait_for(pilot, lambda: app.main.state.agent.state == "running" and stub_llm.requests, timeout=60,
                       what="the first request under way")
        await pilot.pause()
        assert str(bar.query_one("#sb-cost").render()) == "cost: –"
        assert str(app.main.query_one(AgentPanel).query_one("#agent-state").render()).split("\n")[0].endswith(" tok · –")
        assert not any(e.kind == "model_reply" for e in session.events.history)  # still the first request
        await wait_for(pilot, lambda: any(e.kind == "model_reply" for e in session.events.history), timeout=60,
                       what="the first reply")
        await pilot.pause()
        assert str(bar.query_one("#sb-cost").render()) == "cost: ?"


async def test_a_reject_and_its_comment_typed_at_once_reach_the_agent(session):
    """`r` and the comment typed together (a busy app, a quick typist): the comment prompt opens
    from a message the agent pane sends, after `r` has been handled; the letters typed meanwhile
    must go into the prompt, not to the pane (or to the debugger: `n` is `next`)."""
    app = DgymApp(session, agent_settings=settings())
    async with app.run_test(size=SIZE) as pilot:
        await waiting_for(pilot, "edit")
        assert app.main.focused is app.main.query_one(AgentPanel)
        stops = sum(e.kind == "stop" for e in session.events.history)
        type_at_once(app, "rno, divide by len(values)\r")
        await wait_for(pilot, lambda: any("Their comment: no, divide by len(values)" in (m.get("content") or "")
                                          for m in app.agents.agent.messages), timeout=30, what="the comment read")
        assert sum(e.kind == "stop" for e in session.events.history) == stops  # no `n` reached pdb


async def test_a_waiting_call_does_not_take_the_keyboard_from_typing(session):
    app = DgymApp(session, agent_settings=settings())
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.main.state.stop is not None, timeout=60, what="the first stop")
        await pilot.press("exclamation_mark", *"p 1")  # the person is typing in the console
        await waiting_for(pilot, "edit")
        assert app.main.focused.id == "pdb-input" and app.main.console.input.value == "p 1"
        assert any("the agent waits for you" in n.message for n in app._notifications)
        # the agent's keys do nothing while typing: the letters go into the console
        await pilot.press("a")
        assert app.main.console.input.value == "p 1a" and app.main.state.agent.waiting is not None


async def test_step_mode_pause_and_mode_keys(session):
    app = DgymApp(session, agent_settings=settings(mode="step"))
    async with app.run_test(size=SIZE) as pilot:
        waiting = await waiting_for(pilot, "pdb")  # step mode: even a breakpoint waits
        assert waiting.rule == "step mode (allow pdb)"
        await pilot.press("f9")  # to auto
        await wait_for(pilot, lambda: app.agents.agent.mode == "auto", what="auto mode")
        await pilot.press("a")
        await waiting_for(pilot, "edit")  # pdb calls ran without asking; the edit still asks
        await pilot.press("f8")
        await wait_for(pilot, lambda: app.main.state.agent.state == "paused", what="paused")
        await pilot.press("x")  # stop: the waiting call gets its result, not run
        await wait_for(pilot, lambda: app.main.state.agent.state == "stopped", timeout=30, what="stopped")
        results = [e.data for e in session.events.history if e.kind == "tool_result"]
        assert results[-1].observation == "not executed: the agent was stopped while this call waited"


async def test_the_pane_shown_while_its_mount_is_under_way_shows_it_once_composed():
    """The screen mounts the agent pane after the first frame; an event painted meanwhile (a
    replay's seek, as in CI) found the pane in the DOM but not its parts (NoMatches)."""
    from textual.app import App

    from dgym_tui.core.state import AgentView

    app = App()
    async with app.run_test(size=(80, 20)) as pilot:
        panel = AgentPanel(id="agent")
        mounting = app.screen.mount(panel)  # not awaited yet: the pane is in the DOM, uncomposed
        panel.show(AgentView(model="openai/stub", state="running", step=3, max_steps=9))
        await mounting
        await pilot.pause()
        assert "working… · manual mode · 3/9 steps" in str(panel.query_one("#agent-state").render())
