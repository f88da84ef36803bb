"""`--tests hidden|eval|visible` (batch/test_modes.py): what the agent sees of a task's hidden
tests. Real git, real sandboxes (local), the scripted model: a SWE-bench-style JSONL row over a
small git repo whose hidden test patch adds test_add_negative (carrying HIDDEN_MARKER)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from batch_fixtures import FIX, HIDDEN_MARKER, debug_gym_folder, spec_for, swe_instances, toml_task, write_script
from dgym_tui.batch import TaskEnv
from dgym_tui.batch.spec import Arm
from dgym_tui.batch.tasks import load_tasks
from dgym_tui.batch.trial import run_trial

F2P = ["tests/test_calc.py::test_add", "tests/test_calc.py::test_add_negative"]
EVAL_FIX = [{"tool_calls": [{"name": "eval", "arguments": {}}]}, *FIX[:1],
            {"tool_calls": [{"name": "eval", "arguments": {}}]}, FIX[1]]


def _events(session: bytes) -> list[dict]:
    return [json.loads(line) for line in session.splitlines()[1:]]


def _observations(session: bytes, tool: str) -> list[str]:
    return [e["data"]["observation"] for e in _events(session) if e["kind"] == "tool_result" and e["data"]["tool"] == tool]


@pytest.fixture
def task(tmp_path):
    return load_tasks(swe_instances(tmp_path / "swe"))[0]


def test_eval_mode_the_agents_eval_shows_the_failing_hidden_test_and_nothing_else_keeps_it(task, tmp_path):
    spec = spec_for(task, tmp_path, EVAL_FIX, arm=Arm("tools", ["view", "edit", "eval"]), tests="eval")
    out = run_trial(spec)
    r = out.result
    assert r["status"] == "resolved" and r["tests"] == "eval", r
    first, second = _observations(out.session, "eval")
    assert "tests/test_calc.py::test_add_negative" in first and HIDDEN_MARKER in first, first
    assert "applied for this run only" in first and "1 passed, 2 failed" in first
    assert "3 passed, 0 failed" in second
    assert "test_add_negative" not in out.patch and out.patch.startswith("diff --git a/calc.py b/calc.py")
    # the workspace never held them: no change listed, no checkpoint of them
    for e in _events(out.session):
        if e["kind"] == "changes":
            assert list(e["data"]["changed"]) in ([], ["calc.py"]), e
        if e["kind"] == "checkpoint":
            assert HIDDEN_MARKER not in e["data"]["patch"]


def test_eval_mode_leaves_git_status_and_the_diff_as_they_were(task):
    with TaskEnv(task, sandbox="local", tests="eval", tools=["view", "edit", "eval", "bash"]) as env:
        env.reset()
        status = env.step("bash", command="git status --porcelain").observation
        out = env.step("eval")
        assert HIDDEN_MARKER in out.observation and not out.ok
        assert env.step("bash", command="git status --porcelain").observation == status
        assert env.session.changed_files() == [] and env.patch() == ""
        assert HIDDEN_MARKER not in env.step("view", path="tests/test_calc.py").observation
        env.step("edit", path="calc.py", start=2, end=2, new_code="    return a + b")
        assert env.step("eval").ok
        assert env.session.changed_files() == ["calc.py"]
        assert "test_add_negative" not in env.patch()
        assert env.score().resolved


def test_eval_mode_with_hidden_files_removes_what_it_added(tmp_path):
    """A task.toml's hidden file in a folder that does not exist: added for the run, the folder
    gone after it (with the caches the run left there)."""
    task = load_tasks(toml_task(tmp_path / "t"))[0]
    with TaskEnv(task, sandbox="local", tests="eval", tools=["eval", "bash"]) as env:
        env.reset()
        out = env.step("eval")
        assert "hidden/test_hidden.py::test_hidden" in out.observation, out.observation
        listing = env.step("bash", command="ls; git status --porcelain").observation
        assert "hidden" not in listing and env.patch() == ""


def test_visible_mode_the_tests_are_the_baseline_and_pdb_stops_at_the_failing_test(task):
    with TaskEnv(task, sandbox="local", tests="visible") as env:
        env.reset()
        stops = [e.data for e in env.session.events.history if e.kind == "stop"]
        assert stops and stops[0].reason == "post_mortem" and stops[0].test in F2P, stops[:1]
        assert HIDDEN_MARKER in env.step("view", path="tests/test_calc.py").observation
        assert env.patch() == "" and env.session.changed_files() == []
        env.step("edit", path="calc.py", start=2, end=2, new_code="    return a + b")
        assert [ln for ln in env.patch().splitlines() if ln.startswith("diff ")] == ["diff --git a/calc.py b/calc.py"]
        score = env.score()  # the hidden tests added once, at the pristine base
        assert score.resolved, score.reason


def test_visible_mode_trial_resolved_its_patch_without_the_tests(task, tmp_path):
    edit_test = {"tool_calls": [{"name": "edit", "arguments": {
        "path": "tests/test_calc.py", "start": 1, "end": 1, "new_code": "from calc import add, sub  # seen"}}]}
    spec = spec_for(task, tmp_path, [edit_test, *FIX], tests="visible")
    out = run_trial(spec)
    r = out.result
    assert r["status"] == "resolved" and r["tests"] == "visible", r
    assert "tests/test_calc.py" not in out.patch and "calc.py" in out.patch
    assert any("left out of its patch" in n for n in r["notes"]), r["notes"]
    stops = [e["data"] for e in _events(out.session) if e["kind"] == "stop"]
    assert stops[0]["reason"] == "post_mortem" and stops[0]["test"] in F2P


def test_hidden_is_the_default_and_recorded(task, tmp_path):
    out = run_trial(spec_for(task, tmp_path, FIX))
    assert out.result["tests"] == "hidden" and out.result["status"] == "resolved"
    assert HIDDEN_MARKER.encode() not in out.session


def test_a_mode_that_means_nothing_is_refused_in_one_line(tmp_path):
    folder = load_tasks(debug_gym_folder(tmp_path / "dg"))[0]
    with pytest.raises(ValueError, match=r"--tests eval means nothing for task .*no hidden tests"):
        TaskEnv(folder, tests="eval")
    with pytest.raises(ValueError, match="choose one of hidden, eval, visible"):
        TaskEnv(folder, tests="shown")
    script = write_script(tmp_path / "s.json", FIX)
    for args, said in ((["--tests", "visible"], "--tests visible means nothing for task"),
                       (["--tests", "shown"], "--tests 'shown': choose one of hidden, eval, visible")):
        done = subprocess.run([sys.executable, "-m", "dgym_tui", "batch", str(tmp_path / "dg"), "--model", script,
                               "--out", str(tmp_path / "out"), *args], capture_output=True, text=True, timeout=120)
        assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1, done.stderr
        assert said in done.stderr, done.stderr


def _tests_line(run) -> str:
    return next(ln for ln in (run / "summary.md").read_text().splitlines() if ln.startswith("Tests: "))


def test_the_report_says_a_task_with_no_hidden_tests_is_scored_by_its_own_suite(tmp_path):
    """debug-gym's folders have no hidden tests: each is scored against the test.py the agent saw
    and ran, so summary.md must not say SWE-bench's rule (the agent never sees the tests); a set
    with both kinds says how many of each."""
    script = write_script(tmp_path / "submit.json", [{"tool_calls": [{"name": "submit", "arguments": {"message": "no"}}]}])

    def batch(tasks, out):
        done = subprocess.run([sys.executable, "-m", "dgym_tui", "batch", str(tasks), "--model", script, "--out",
                               str(out), "--sandbox", "local", "--yes", "--workers", "2", "--arm", "a=view,submit"],
                              capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stdout + done.stderr
        return out

    own = batch(debug_gym_folder(tmp_path / "dg"), tmp_path / "own")
    assert _tests_line(own) == ("Tests: the tasks' own suites (no hidden tests: each task is scored against the "
                                "tests the agent could see and run).")
    assert "SWE-bench's rule" not in (own / "report.html").read_text()
    toml_task(tmp_path / "dg" / "tomled")  # a third task, whose task.toml hides a test file
    mixed = batch(tmp_path / "dg", tmp_path / "mixed")
    assert _tests_line(mixed) == (
        "Tests: --tests hidden (SWE-bench's rule: the agent never sees the task's tests) for the 1 task(s) with "
        "hidden tests; their own suites for the 2 task(s) with none (each scored against the tests the agent "
        "could see and run).")


def test_batch_help_lists_the_three_modes():
    done = subprocess.run([sys.executable, "-m", "dgym_tui", "batch", "--help"], capture_output=True, text=True,
                          timeout=60)
    assert "--tests hidden|eval|visible" in done.stdout, done.stdout


def test_the_mode_is_in_batch_json_results_stats_and_the_report_which_refuses_mixed_arms(tmp_path):
    from dgym_tui.batch import run_dir as rd
    from dgym_tui.batch.driver import BatchConfig, run_batch
    from dgym_tui.batch.executors import make_executor
    from dgym_tui.batch.report import write_all

    instances = swe_instances(tmp_path / "swe")
    tasks = load_tasks(instances)
    out = tmp_path / "run"
    config = BatchConfig(tasks=str(instances), model=write_script(tmp_path / "fix.json", FIX), sandbox="local",
                         arms=[Arm("a", ["view", "edit", "eval"]), Arm("b", ["view", "edit"])], yes=True,
                         workers=2, tests="eval")
    run = run_batch(out, config, tasks, make_executor("local", workers=2))
    assert [r.tests for r in run.results] == ["eval", "eval"]
    assert json.loads((out / "batch.json").read_text())["tests"] == "eval"
    assert all(json.loads(line)["tests"] == "eval" for line in (out / "results.jsonl").read_text().splitlines())
    stats = json.loads((out / "stats.json").read_text())
    assert stats["tests"] == "eval" and stats["warnings"] == [] and "refused" not in stats["pairs"][0]
    assert "Tests: --tests eval (" in (out / "summary.md").read_text()
    # an arm's trials from another mode (results merged by hand): the pair is not compared, loudly
    path = rd.trial_files(out, f"{tasks[0].id}__b__1")["result"]
    result = json.loads(path.read_text())
    path.write_text(json.dumps({**result, "tests": "hidden"}))
    write_all(out)
    stats = json.loads((out / "stats.json").read_text())
    assert stats["tests"] == "mixed" and stats["pairs"][0]["refused"].startswith("not compared: a ran with --tests eval")
    summary, page = (out / "summary.md").read_text(), (out / "report.html").read_text()
    assert "**WARNING: not compared: a ran with --tests eval, b with --tests hidden" in summary
    assert "McNemar" not in summary and "WARNING: not compared" in page
    # a RUN_DIR from before --tests goes on with the default
    assert rd.config_differences({k: v for k, v in config.to_json().items() if k != "tests"},
                                 {**config.to_json(), "tests": "hidden"}) == []


def test_eval_names_the_runner_that_ran_the_tests():
    from types import SimpleNamespace

    from dgym_tui.core.environment import Environment
    from dgym_tui.core.events import Tests
    from dgym_tui.tools.eval import report, runner_of

    tests = Tests(passed=1, failed=0, errors=0, failing=[], output="OK", exit_code=0)
    django = Environment("img", test_command="./tests/runtests.py --verbosity 2 --settings=test_sqlite urlpatterns.tests")
    sympy = Environment("img", test_command="PYTHONWARNINGS='ignore::UserWarning' bin/test -C --verbose a.py")
    pytest_env = Environment("img", test_command="pytest -rA tests/test_utils.py")
    said = {name: report(tests, runner_of(SimpleNamespace(environment=env)))
            for name, env in (("django", django), ("sympy", sympy), ("pytest", pytest_env), ("none", None))}
    assert "the tests' output (./tests/runtests.py):\nOK" in said["django"] and "pytest" not in said["django"]
    assert "the tests' output (bin/test):\nOK" in said["sympy"]
    assert "pytest's output:\nOK" in said["pytest"] and "pytest's output:\nOK" in said["none"]
