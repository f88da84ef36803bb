"""pdb before anything fails: on a repo whose tests pass, the program ends; breakpoints typed after
that are kept (nothing runs), `p` says there is no frame, and `c` runs it again to them.

Real sessions on real sandboxes (local on the oldest and newest Python, bwrap, Docker).
"""

from __future__ import annotations

import json
import textwrap

import pytest

import pythons
from conftest import make_sandbox, require_bwrap, require_docker
from dgym_tui.core.events import AGENT
from dgym_tui.core.session import Session

CALC = "def add(a, b):\n    total = a + b\n    return total\n\n\ndef sub(a, b):\n    diff = a - b\n    return diff\n"
FILES = {
    "calc.py": CALC,
    "tests/test_calc.py": "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n",
    "tests/test_sub.py": "from calc import sub\n\n\ndef test_sub():\n    assert sub(5, 3) == 2\n",
    # a runner script whose tests all pass (as Django's runtests.py is, at a base commit)
    "runtests.py": """\
        import sys
        import unittest

        from calc import add


        class AddTests(unittest.TestCase):
            def test_add(self):
                self.assertEqual(add(4, 5), 9)


        if __name__ == "__main__":
            result = unittest.main(exit=False).result
            sys.exit(0 if result.wasSuccessful() else 1)
        """,
}

ENGINES = [
    pytest.param(("local", "3.6"), id="local-py3.6"),
    pytest.param(("local", "3.13"), id="local-py3.13"),
    pytest.param(("bwrap", None), id="bwrap"),
    pytest.param(("docker", None), id="docker", marks=pytest.mark.docker),
]


@pytest.fixture
def repo(tmp_path):
    root = tmp_path / "calc"
    for rel, text in FILES.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return root


@pytest.fixture
def open_session(repo):
    sessions = []

    def factory(engine, entrypoint="pytest tests/test_calc.py") -> Session:
        kind, minor = engine
        kwargs = {}
        if kind == "docker":
            require_docker()
        elif kind == "bwrap":
            require_bwrap()
        elif minor is not None:
            kwargs["python"] = pythons.require(minor)
        session = Session(str(repo), entrypoint=entrypoint, sandbox_obj=make_sandbox(kind, repo, **kwargs))
        sessions.append(session)
        session.start()
        return session

    yield factory
    for s in sessions:
        s.close()


def starts(session) -> list:
    return [e for e in session.events.history if e.kind == "program_start"]


@pytest.mark.parametrize("engine", ENGINES)
def test_a_passing_suite_keeps_b_answers_p_and_c_stops_there(open_session, engine):
    s = open_session(engine)
    assert s.state.program == "exited" and s.state.exit_code == 0  # the suite passed: nothing stopped
    assert len(starts(s)) == 1

    r = s.send("b calc.py:3", actor=AGENT)
    assert r.output.strip() == "Breakpoint 1 at calc.py:3"
    assert [(bp.file, bp.line, bp.number, bp.actor) for bp in s.breakpoints.items()] == [("calc.py", 3, 1, AGENT)]
    assert [(bp.file, bp.line) for bp in s.state.breakpoints] == [("calc.py", 3)]  # the views see it at once
    r = s.send("p total", actor=AGENT)
    assert r.output.startswith("*** There is no frame: the program ended (exit code 0). `c` runs it again")
    assert s.send("where").output.startswith("*** There is no frame")
    assert len(starts(s)) == 1, "a command that runs no code started the program"

    r = s.send("c", actor=AGENT)
    assert (r.stop.file, r.stop.line, r.stop.reason) == ("calc.py", 3, "breakpoint")
    assert r.stop.locals["total"] == "5" and r.stop.function == "add"
    assert s.send("p total").output == "5\n"
    assert len(starts(s)) == 2


def test_kept_commands_are_checked_against_the_file_and_run_nothing(open_session):
    s = open_session(("local", None))
    assert s.send("b calc.py:99").output.strip() == "*** line 99 is past the end of calc.py (8 lines)"
    assert s.send("b calc.py:4").output.strip() == "*** calc.py:4: no code on that line; the next line with code is 6"
    assert s.send("b nowhere.py:3").output.startswith("*** 'nowhere.py' not found")
    assert s.send("tbreak calc.py:7").output.strip() == "Breakpoint 1 at calc.py:7"
    assert s.send("b calc.py:2, b > 100").output.strip() == "Breakpoint 2 at calc.py:2"
    assert s.send("disable 1").output.strip() == "Disabled breakpoint 1 at calc.py:7"
    assert s.send("ignore 2 1").output.strip() == "Will ignore next 1 crossing of breakpoint 2."
    assert s.send("condition 2").output.strip() == "Breakpoint 2 is now unconditional."
    assert s.send("watch a + b").output.strip() == "Watching a + b"
    assert s.send("dbreak total").output.startswith("*** a data breakpoint watches a value in a running frame")
    assert [(bp.line, bp.temporary, bp.enabled, bp.ignore, bp.cond) for bp in s.breakpoints.items()] == [
        (7, True, False, 0, None), (2, False, True, 1, None)]
    assert s.breakpoints.watches == ["a + b"]
    assert len(starts(s)) == 1
    # the next run gets them all: the ignore count passes the first arrival (test_add is the only one)
    r = s.send("c")
    assert r.stop is None and r.exited  # ignored once, then the suite ended
    assert len(starts(s)) == 2
    s.send("ignore 2 0")
    r = s.send("c")
    assert (r.stop.line, r.stop.reason) == (2, "breakpoint") and [w.expr for w in r.stop.watches] == ["a + b"]
    assert r.stop.watches[0].value == "5"


def test_a_unittest_runner_script_whose_tests_pass_stops_at_a_kept_breakpoint(open_session):
    s = open_session(("local", None), entrypoint="python runtests.py")
    assert s.state.stop.reason == "start"
    r = s.send("c")
    assert r.exited and r.exit_code == 0  # every test passed
    assert s.send("b calc.py:3").output.strip() == "Breakpoint 1 at calc.py:3"
    r = s.send("c")
    assert (r.stop.file, r.stop.line) == ("calc.py", 3) and r.stop.locals["total"] == "9"
    assert [f.function for f in r.stop.stack][-2:] == ["test_add", "add"]


def test_a_run_that_never_reaches_the_breakpoint_says_so_and_names_a_test_that_would(open_session):
    s = open_session(("local", None))
    s.send("b calc.py:7")  # in sub(): tests/test_calc.py never calls it
    r = s.send("c", actor=AGENT)
    assert r.exited and r.stop is None
    assert "This run of `pytest tests/test_calc.py` ended (exit code 0) without reaching the breakpoint at calc.py:7" in r.output
    assert "`pytest tests/test_sub.py::test_sub` (it calls sub)" in r.output
    notices = [e.data.message for e in s.events.history if e.kind == "notice"]
    assert any("without reaching the breakpoint at calc.py:7" in n for n in notices)
    r = s.send("p diff")  # still kept, still nothing run
    assert r.output.startswith("*** There is no frame") and len(starts(s)) == 2
    r = s.set_entrypoint("pytest tests/test_sub.py::test_sub")
    r = s.send("c") if r.stop is None and r.exited else r
    assert (r.stop.file, r.stop.line, r.stop.locals["a"], r.stop.locals["b"]) == ("calc.py", 7, "5", "3")


def test_with_no_process_left_a_shell_alone_keeps_the_breakpoint(open_session):
    s = open_session(("local", None))
    s.debugger.channel.close()  # the process after the end is gone (killed, the sandbox restarted...)
    s.debugger.channel = None
    r = s.send("b calc.py:3")
    assert r.output.strip() == "Breakpoint 1 at calc.py:3"
    assert s.send("p 1").output.startswith("*** There is no frame: the program ended (exit code 0)")
    assert len(starts(s)) == 1  # the shell alone runs no program
    r = s.send("c")
    assert (r.stop.file, r.stop.line) == ("calc.py", 3)


@pytest.mark.parametrize("engine", [pytest.param(("local", None), id="local"), pytest.param(("bwrap", None), id="bwrap"),
                                    pytest.param(("docker", None), id="docker", marks=pytest.mark.docker)])
def test_a_reproduction_script_outside_the_repo_runs_under_pdb(open_session, engine):
    s = open_session(engine)
    s.send("b calc.py:3")
    script = "import sys; sys.path.insert(0, '" + s.sandbox.root + "')\nfrom calc import add\nprint('sum', add(1, 2))\n"
    # written by one command (the agent's bash), run by another (pdb): the same /tmp in every sandbox
    s.sandbox.exec(["python3", "-c", f"open('/tmp/dgym_repro.py', 'w').write({script!r})"], timeout=30)
    r = s.set_entrypoint("python /tmp/dgym_repro.py")
    assert r.stop.reason == "start" and r.stop.file == "/tmp/dgym_repro.py"
    r = s.send("c")
    assert (r.stop.file, r.stop.line, r.stop.locals["total"]) == ("calc.py", 3, "3")


def test_the_agent_pdb_tool_keeps_b_after_the_end(open_session):
    from dgym_tui.tools.registry import registry

    s = open_session(("local", None))
    pdb_tool = registry(["pdb"])["pdb"]
    out = pdb_tool.run(s, AGENT, command="b calc.py:3")
    assert "Breakpoint 1 at calc.py:3" in out.observation and out.ok
    out = pdb_tool.run(s, AGENT, command="c")
    assert "Current frame:\ncalc.py:3 in add" in out.observation
    out = pdb_tool.run(s, AGENT, command="p total")
    assert "5" in out.observation


def test_an_edit_ends_the_run_in_progress_and_nothing_is_rerun_unasked(open_session, repo):
    from dgym_tui.core.reruns import unasked_runs

    s = open_session(("local", None))
    s.send("b calc.py:3")
    assert s.send("c").stop.line == 3
    # the agent's edit at a stop: the run had the old code; it ends, and is not run again
    s.run_tool("edit", {"path": "calc.py", "start": 2, "end": 2, "new_code": "    total = a + b + 0"})
    assert s.state.program == "exited" and len(starts(s)) == 2
    assert any("the run with the old code ended" in e.data.message for e in s.events.history if e.kind == "program_exit")
    assert s.send("p total").output.startswith("*** There is no frame")
    assert s.send("b").output.count("calc.py:3") == 1  # kept through the edit (a fresh shell, restored)
    r = s.send("c")
    assert (r.stop.line, r.stop.locals["total"]) == (3, "5") and len(starts(s)) == 3
    assert unasked_runs(s.events.history) == 0
    # the same count over what the old behaviour recorded: `b` after the end reran the suite
    old = [{"kind": "program_start", "data": {"restart": False}},
           {"kind": "pdb_input", "data": {"command": "b calc.py:3"}},
           {"kind": "program_start", "data": {"restart": True, "reason": "the next command after the program ended"}},
           {"kind": "pdb_input", "data": {"command": "c"}},
           {"kind": "program_start", "data": {"restart": True, "reason": "'c' after the program ended"}}]
    assert unasked_runs(old) == 1


def test_a_trials_result_counts_no_unasked_run(tmp_path):
    """result.json's unasked_runs: the pdb commands after the end (b, p) ran nothing; the
    agent's edit at a stop ended that run instead of starting another."""
    from batch_fixtures import FIX, spec_for, swe_instances
    from dgym_tui.batch.spec import Arm
    from dgym_tui.batch.tasks import load_tasks
    from dgym_tui.batch.trial import run_trial

    task = load_tasks(swe_instances(tmp_path / "swe"))[0]
    pdb = [{"tool_calls": [{"name": "pdb", "arguments": {"command": c}}]}
           for c in ("c", "b calc.py:6", "p 1", "c", "b calc.py:2", "c")]
    out = run_trial(spec_for(task, tmp_path, [*pdb, *FIX], arm=Arm("pdb", ["pdb", "view", "edit", "eval"])))
    r = out.result
    assert r["status"] == "resolved" and r["unasked_runs"] == 0, r
    events = [json.loads(line) for line in out.session.splitlines()[1:]]
    starts = [e["data"]["reason"] for e in events if e["kind"] == "program_start"]
    # the start, then one for each of the three `c` (after test_add's post-mortem): none for b, p or the edit
    assert starts[0] == "" and len(starts) == 4 and all(s.startswith("'c' after") for s in starts[1:]), starts
