"""The core's seam: one door in (the runner), one ordered stream out (the event bus), one state
folded from it (DebugState). Real sessions: a local sandbox over a copy of the example, real pdb."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import threading
import time

import pytest
from conftest import EXAMPLE

from dgym_tui.core import events as ev
from dgym_tui.core.events import AGENT, HUMAN, Event, EventBus
from dgym_tui.core.session import Session
from dgym_tui.core.state import DebugState, fold

LOOP = "def spin():\n    n = 0\n    while True:\n        n += 1\n\n\nspin()\n"


@pytest.fixture
def repo(tmp_path):
    repo = tmp_path / "shopcart"
    shutil.copytree(EXAMPLE, repo, ignore=shutil.ignore_patterns("__pycache__", ".pytest_cache"))
    (repo / "loop.py").write_text(LOOP)
    return repo


@pytest.fixture
def session(repo):
    made = []

    def make(entrypoint="python main.py"):
        s = Session(str(repo), sandbox="local", entrypoint=entrypoint)
        made.append(s)
        s.start()
        assert s.state.program == "stopped", s.state.error
        return s

    yield make
    for s in made:
        s.close()


# --- the stream -----------------------------------------------------------------------------------


def test_two_threads_emitting_reach_every_listener_once_in_order():
    bus = EventBus()
    seen: dict[str, list[int]] = {"a": [], "b": []}
    per_thread: dict[str, list[int]] = {"one": [], "two": []}
    bus.subscribe(lambda e: seen["a"].append(e.seq))
    start = threading.Barrier(3)

    def emit(name: str) -> None:
        start.wait()
        for i in range(10_000):
            bus.emit(ev.Progress(message=f"{name} {i}"))
            if i == 5_000 and name == "one":  # a listener that joins mid-stream gets the past first
                bus.subscribe(lambda e: seen["b"].append(e.seq))

    def order(e: Event) -> None:
        name, i = e.data.message.split()
        per_thread[name].append(int(i))

    bus.subscribe(order)
    threads = [threading.Thread(target=emit, args=(n,)) for n in ("one", "two")]
    for t in threads:
        t.start()
    start.wait()
    for t in threads:
        t.join()
    expected = list(range(1, 20_001))
    assert seen["a"] == expected and seen["b"] == expected
    # and each thread's own events arrive in the order it emitted them
    assert per_thread["one"] == list(range(10_000)) and per_thread["two"] == list(range(10_000))
    assert bus.listener_errors == 0


def test_a_listener_that_emits_gets_its_event_after_the_current_one():
    bus = EventBus()
    got: list[tuple[str, int]] = []

    def echo(e: Event) -> None:
        got.append(("echo", e.seq))
        if e.data.message == "ping":
            bus.emit(ev.Progress(message="pong"))

    bus.subscribe(echo)
    bus.subscribe(lambda e: got.append(("late", e.seq)))
    bus.emit(ev.Progress(message="ping"))
    assert got == [("echo", 1), ("late", 1), ("echo", 2), ("late", 2)]


def test_events_round_trip_through_json():
    bp = ev.Breakpoint("a.py", 3, cond="x > 1", actor=AGENT, number=1)
    stop = ev.Stop(reason="breakpoint", file="a.py", line=3, function="f",
                   stack=[ev.Frame("a.py", 3, "f")], locals={"x": "2"},
                   exception=ev.ExceptionInfo("KeyError", "'k'"), test="tests/test_a.py::test_f")
    for payload in (stop, ev.Breakpoints(breakpoints=[bp]), ev.Changes(changed={"a.py": "M"}),
                    ev.CallStarted(id=1, name="send", args={"command": "n"})):
        event = Event(seq=7, ts=1.5, actor=HUMAN, data=payload)
        again = Event.from_dict(json.loads(json.dumps(event.to_dict())))
        assert again == event
    with pytest.raises(ValueError, match="unknown event kind"):
        Event.from_dict({"seq": 1, "kind": "no_such_kind", "data": {}})


# --- the runner -------------------------------------------------------------------------------


def test_the_person_interrupts_an_endless_continue_the_agent_started(session):
    s = session("python loop.py")
    s.pdb_timeout = s.debugger.timeout = 60  # no automatic interrupt: the person's ctrl+c does it
    call = s.runner.submit(AGENT, "send", {"command": "continue"})
    deadline = time.monotonic() + 10
    while s.state.busy is None or s.state.program != "running":
        assert time.monotonic() < deadline, "the agent's continue never started"
        time.sleep(0.01)
    assert s.state.acting == AGENT and s.runner.busy
    time.sleep(0.3)  # it really loops
    assert not call.finished
    started = time.monotonic()
    interrupted = s.runner.interrupt()  # what the person's ctrl+c does
    result = call.wait(10)
    assert interrupted is call and time.monotonic() - started < 5
    assert result.stop.file == "loop.py" and result.stop.function == "spin"
    assert s.state.program == "stopped" and s.state.busy is None
    assert s.send("p n > 0", actor=HUMAN).output == "True\n"  # the same pdb goes on


def test_a_call_from_each_actor_queued_while_one_runs_both_run_in_order(session):
    s = session()
    gate = threading.Event()
    order: list[str] = []
    # the running call: the agent's, held until both others are queued
    s.runner.operations["_hold"] = type(s.runner.operations["send"])(
        "_hold", lambda target, actor, **_: gate.wait(10) and order.append("hold"))
    try:
        hold = s.runner.submit(AGENT, "_hold")
        while s.runner.running is not hold:
            time.sleep(0.005)
        agent = s.runner.submit(AGENT, "send", {"command": "p 'agent'"}, done=lambda c: order.append("agent"))
        human = s.runner.submit(HUMAN, "send", {"command": "p 'human'"}, done=lambda c: order.append("human"))
        time.sleep(0.2)
        assert not agent.finished and not human.finished
        gate.set()
        assert agent.wait(10).output == "'agent'\n" and human.wait(10).output == "'human'\n"
        hold.wait(10)
    finally:
        del s.runner.operations["_hold"]
    # the person's call goes before the agent's queued one: the keys are never starved
    assert order == ["hold", "human", "agent"]
    inputs = [(e.actor, e.data.command) for e in s.events.history if e.kind == "pdb_input"]
    assert inputs[-2:] == [(HUMAN, "p 'human'"), (AGENT, "p 'agent'")]
    calls = [(e.kind, e.data.id) for e in s.events.history if e.kind in ("call_started", "call_finished")
             and e.data.id in (hold.id, agent.id, human.id)]
    assert calls == [("call_started", hold.id), ("call_finished", hold.id), ("call_started", human.id),
                     ("call_finished", human.id), ("call_started", agent.id), ("call_finished", agent.id)]


def test_a_look_runs_beside_a_long_command_but_after_an_earlier_write(session):
    s = session("python loop.py")
    s.pdb_timeout = s.debugger.timeout = 60
    call = s.runner.submit(AGENT, "send", {"command": "continue"})
    while s.state.program != "running":
        time.sleep(0.01)
    # reading a file does not wait for the endless loop
    text = s.runner.submit(HUMAN, "read_source", {"path": "main.py"}).wait(5)
    assert text.startswith('"""Demo') and not call.finished
    s.runner.interrupt()
    call.wait(10)


def test_the_session_is_the_only_door_and_records_what_the_views_read(session):
    s = session()
    assert s.read_source("shopcart/cart.py") == (EXAMPLE / "shopcart" / "cart.py").read_text()
    again = s.read_source("shopcart/cart.py")
    files = [e.data for e in s.events.history if e.kind == "file" and e.data.path == "shopcart/cart.py"]
    assert len(files) == 2 and files[0].text == again and files[1].text is None  # content once per hash
    assert files[0].sha == files[1].sha
    assert {e.name for e in s.list_dir("shopcart")} >= {"cart.py", "orders.py"}
    assert "shopcart/cart.py" in s.list_files()
    stdlib = s.read_source(json.__file__)  # a stack may show files outside the repo
    assert "def dumps" in stdlib
    s.sandbox.write_text("shopcart/cart.py", again + "# changed\n")
    assert s.changed_files() == ["shopcart/cart.py"]
    assert s.state.changed == {"shopcart/cart.py": "M"} and "# changed" in s.diff()


# --- the state --------------------------------------------------------------------------------


def test_state_folded_from_the_recorded_stream_equals_the_live_one(session):
    s = session()
    s.set_breakpoint("shopcart/inventory.py", 56, cond="sku == 'MUG-01'")
    assert s.send("continue").stop.function == "reserve"
    assert s.send("step").stop is not None
    assert s.send("up", actor=AGENT).stop.function == "process_order"
    assert s.send("p order.cart.customer", actor=AGENT).output.startswith("Customer(")
    s.restart()
    recorded = [json.dumps(e.to_dict()) for e in s.events.history]  # as a session file holds them
    replayed = fold(Event.from_dict(json.loads(line)) for line in recorded)
    assert replayed == s.state
    assert replayed.stop.where == "main.py:1" and replayed.program == "stopped"
    assert [(bp.file, bp.line, bp.cond) for bp in replayed.breakpoints] == [
        ("shopcart/inventory.py", 56, "sku == 'MUG-01'")]
    assert replayed.source("shopcart/inventory.py") == s.sandbox.read_text("shopcart/inventory.py")
    assert replayed.files == s.sandbox.list_files() and replayed.busy is None
    # and folding it in two halves gives the same as at once
    halves = DebugState()
    for e in s.events.history:
        halves.apply(e)
    assert halves == s.state


def test_views_can_follow_who_is_acting(session):
    s = session()
    seen: list[tuple[str | None, str | None]] = []
    state = DebugState()

    def view(e: Event) -> None:
        if state.apply(e) & {"busy"}:
            seen.append((state.acting, state.busy.name if state.busy else None))

    s.events.subscribe(view)
    s.send("n", actor=AGENT)
    assert seen[-2:] == [(AGENT, "send"), (None, None)]


# --- the split ----------------------------------------------------------------------------------


def test_the_core_never_imports_the_ui():
    code = (
        "import sys\n"
        "import dgym_tui.core.session, dgym_tui.core.state, dgym_tui.core.runner, dgym_tui.core.events\n"
        "import dgym_tui.core.debugger, dgym_tui.core.breakpoints, dgym_tui.core.entrypoint\n"
        "import dgym_tui.core.safe_text, dgym_tui.core.pdb_commands\n"
        "import dgym_tui.sandbox, dgym_tui.sandbox.base, dgym_tui.sandbox.local_sandbox\n"
        "import dgym_tui.sandbox.docker_sandbox, dgym_tui.sandbox.repo_copy\n"
        "import dgym_tui.sandbox.bwrap_sandbox, dgym_tui.core.session_file, dgym_tui.core.replayer\n"
        "import dgym_tui.core.workspace, dgym_tui.agent.loop, dgym_tui.agent.setup, dgym_tui.headless\n"
        "import dgym_tui.lifecycle, dgym_tui.cli, dgym_tui.commands.run, dgym_tui.commands.options\n"
        "import dgym_tui.sessions, dgym_tui.commands.sessions\n"
        "import dgym_tui.tools\n"
        "from dgym_tui.tools import registry; registry()\n"
        "bad = sorted(m for m in sys.modules if m == 'textual' or m.startswith(('textual.', 'dgym_tui.ui')))\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == ""
