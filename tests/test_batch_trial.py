"""One trial end to end (batch/trial.py + scoring.py): a real session, pdb, git and sandbox; only
the model is scripted (or the stub OpenAI-compatible server through litellm). Each status is
reached; the hidden tests never reach the agent; test-file edits are reverted and reported; the
wall clock kills the sandbox."""

from __future__ import annotations

import hashlib
import json
import os
import re
import time

import pytest

from batch_fixtures import (CHEAT, FIX, GIVE_UP, HIDDEN_MARKER, SLEEP, WANDER, debug_gym_folder, folder_of_repos,
                            spec_for, stub_responder, swe_instances, toml_task)
from dgym_tui.batch.spec import STATUSES, Arm, Task, TrialSpec
from dgym_tui.batch.tasks import load_tasks
from dgym_tui.batch.trial import pack_task, run_trial

RESULT_FIELDS = {"format", "trial", "task", "arm", "attempt", "status", "reason", "outcome", "summary",
                 "tests_before", "tests_after", "fail_to_pass", "pass_to_pass", "reverted", "timed_out", "notes", "steps", "tokens",
                 "cost", "seconds", "agent_seconds", "score_seconds", "tool_calls", "unasked_runs", "tool_format", "tests", "model",
                 "sandbox", "node", "started", "finished", "patch_sha256", "error"}

# Looks for the hidden test every way the agent can, without writing the marker itself
# (a regex that matches it but does not contain it), then fixes the bug.
SNOOP_THEN_FIX = [
    {"tool_calls": [{"name": "grep", "arguments": {"pattern": HIDDEN_MARKER[:-1] + "[" + HIDDEN_MARKER[-1] + "]"}}]},
    {"tool_calls": [{"name": "view", "arguments": {"path": "tests/test_calc.py"}}]},
    {"tool_calls": [{"name": "bash", "arguments": {"command": "git log --all --oneline | wc -l; env | grep -c DGYM_TEST_SECRE[T]; ls -a; ls tests"}}]},
    *FIX,
]


def check_result(result: dict, spec: TrialSpec, patch: str) -> None:
    assert set(result) == RESULT_FIELDS
    assert result["status"] in STATUSES
    assert result["trial"] == spec.trial_id and result["task"] == spec.task.id
    assert result["patch_sha256"] == hashlib.sha256(patch.encode()).hexdigest()
    assert result["finished"] >= result["started"]
    json.dumps(result)  # JSON-able as it is


def test_swe_instance_resolved_and_its_hidden_test_never_seen(tmp_path):
    task = load_tasks(swe_instances(tmp_path / "swe"))[0]
    spec = spec_for(task, tmp_path, SNOOP_THEN_FIX, arm=Arm("pdb", ["pdb", "view", "grep", "bash", "edit"]),
                    env={"DGYM_TEST_SECRET": "sk-never-in-the-sandbox"})
    out = run_trial(spec)
    r = out.result
    check_result(r, spec, out.patch)
    assert r["status"] == "resolved", json.dumps(r, default=str)
    assert r["fail_to_pass"] == {"tests/test_calc.py::test_add": "passed", "tests/test_calc.py::test_add_negative": "passed"}
    assert r["pass_to_pass"] == {"tests/test_calc.py::test_sub": "passed"}
    assert r["tests_before"] == {"passed": 1, "failed": 2, "errors": 0}  # base + the hidden test
    assert r["tests_after"] == {"passed": 3, "failed": 0, "errors": 0}
    assert r["tool_calls"] == {"bash": 1, "edit": 1, "grep": 1, "submit": 1, "view": 1}
    assert r["outcome"] == "submitted" and r["summary"] == "add subtracted" and r["steps"] == 5
    # the hidden test is nowhere in what the agent saw: not its file, not the repo's later history
    assert HIDDEN_MARKER.encode() not in out.session and b"test_add_negative" not in out.session
    seen = [json.loads(line) for line in out.session.splitlines()[1:]]
    results = [e["data"]["observation"] for e in seen if e["kind"] == "tool_result"]
    assert results[0].startswith("No matches found"), results[0]
    assert results[2].split("\n")[:2] == ["1", "0"], results[2]  # one commit (the baseline); no spec.env
    assert b"sk-never-in-the-sandbox" not in out.session
    assert "test_calc.py" in out.patch or "calc.py" in out.patch
    assert "test_add_negative" not in out.patch


def test_repo_folder_unresolved_and_repo_blob_travels(tmp_path):
    task = load_tasks(folder_of_repos(tmp_path / "set"))[0]
    blob = pack_task(task)
    travelled = Task.from_dict({**task.to_dict(), "repo": str(tmp_path / "not-here")})  # only the blob
    spec = spec_for(travelled, tmp_path, GIVE_UP, repo_blob=blob)
    out = run_trial(spec)
    check_result(out.result, spec, out.patch)
    assert out.result["status"] == "unresolved", json.dumps(out.result, default=str)
    assert out.result["reason"] == "failing: tests/test_calc.py::test_add"
    assert out.patch == "" and out.result["tests_after"] == {"passed": 1, "failed": 1, "errors": 0}


def test_test_file_edits_are_reverted_and_reported(tmp_path):
    task = load_tasks(folder_of_repos(tmp_path / "set", names=("calc",)))[0]
    out = run_trial(spec_for(task, tmp_path, CHEAT))
    r = out.result
    assert r["status"] == "unresolved" and r["reverted"] == ["tests/test_calc.py"], json.dumps(r, default=str)
    assert "tests/test_calc.py" in out.patch  # the patch is what the agent did; only the score reverts it
    assert "reverted" in r["reason"]


def test_the_trial_tells_its_steps_and_cost_as_it_goes(tmp_path):
    """The executor's live table hears each step while the agent works (run_trial's on_event)."""
    task = load_tasks(folder_of_repos(tmp_path / "set", names=("calc",)))[0]
    heard: list[dict] = []
    out = run_trial(spec_for(task, tmp_path, CHEAT), on_event=heard.append)
    steps = [d["step"] for d in heard if d["state"] == "running"]
    assert steps and steps == sorted(steps) and max(steps) == out.result["steps"], (heard, out.result)
    assert heard[-1]["state"] in ("submitted", "limit", "stopped") and "cost" in heard[-1]


def test_limit_when_unresolved_and_resolved_when_the_patch_fixes_it_anyway(tmp_path):
    task = load_tasks(folder_of_repos(tmp_path / "set", names=("calc",)))[0]
    out = run_trial(spec_for(task, tmp_path, WANDER, max_steps=2, script_name="wander"))
    r = out.result
    assert (r["status"], r["outcome"], r["steps"]) == ("limit", "limit", 2), json.dumps(r, default=str)
    assert r["reason"].startswith("reached the step limit (2)")
    fixed_then_wander = [FIX[0], *WANDER]
    out = run_trial(spec_for(task, tmp_path, fixed_then_wander, max_steps=2, script_name="fixwander"))
    assert (out.result["status"], out.result["outcome"]) == ("resolved", "limit"), json.dumps(out.result, default=str)


def test_a_provider_failure_is_an_error_not_unresolved(tmp_path, stub_llm):
    task = load_tasks(folder_of_repos(tmp_path / "set", names=("calc",)))[0]
    stub_llm.push({"status": 401, "message": "bad key"})
    spec = TrialSpec(task=task, arm=Arm("all", []), attempt=1, model="openai/stub", api_base=stub_llm.url,
                     sandbox="local", yes=True, env={"OPENAI_API_KEY": "sk-test-not-real"})
    before = os.environ.get("OPENAI_API_KEY")
    out = run_trial(spec)
    r = out.result
    check_result(r, spec, out.patch)
    assert (r["status"], r["outcome"]) == ("error", "error"), json.dumps(r, default=str)
    assert "model failed" in r["error"] and r["tests_after"] is None
    assert os.environ.get("OPENAI_API_KEY") == before  # spec.env was for the trial only
    assert len(stub_llm.requests) == 1


def test_an_error_of_ours_is_a_result_never_a_raise(tmp_path):
    task = Task(id="gone", repo=str(tmp_path / "missing"))
    out = run_trial(spec_for(task, tmp_path, GIVE_UP))
    assert out.result["status"] == "error" and "not a folder" in out.result["error"]
    task = load_tasks(folder_of_repos(tmp_path / "set", names=("calc",)))[0]
    out = run_trial(spec_for(task, tmp_path, GIVE_UP, arm=Arm("odd", ["pdb", "telepathy"])))
    assert out.result["status"] == "error" and "unknown tool telepathy" in out.result["error"]


def test_task_toml_hidden_file_and_debug_gym_folder_resolved(tmp_path):
    task = load_tasks(toml_task(tmp_path / "t"))[0]
    out = run_trial(spec_for(task, tmp_path, SNOOP_THEN_FIX[:2] + FIX))
    r = out.result
    assert r["status"] == "resolved", json.dumps(r, default=str)
    assert r["fail_to_pass"]["hidden/test_hidden.py::test_hidden"] == "passed"
    assert HIDDEN_MARKER.encode() not in out.session and b"task.toml" not in out.session
    assert "setup_done" not in out.patch and "calc.py" in out.patch  # setup's files are the baseline
    gym = load_tasks(debug_gym_folder(tmp_path / "mini"))[0]  # calc: calc_code.py + test.py
    fix = [{"tool_calls": [{"name": "edit", "arguments": {"path": "calc_code.py", "start": 2, "end": 2,
                                                          "new_code": "    return a + b"}}]}, FIX[1]]
    out = run_trial(spec_for(gym, tmp_path, fix, script_name="gym"))
    # the reason and the error in full: a fresh-clone CI run once ended 'error' after 0.1 s of agent
    assert out.result["status"] == "resolved", (out.result["reason"], out.result["error"])
    assert out.result["tests_before"] == {"passed": 0, "failed": 1, "errors": 0}


def _trial_containers(client):
    return [c for c in client.containers.list(all=True, filters={"label": f"dgym-tui.owner-pid={os.getpid()}"})
            if "dgym-trial-" in c.labels.get("dgym-tui.repo", "")]


@pytest.mark.docker
def test_docker_resolved_then_a_timeout_kills_the_sandbox(tmp_path):
    from conftest import SANDBOX_IMAGE, require_docker

    client = require_docker()
    task = load_tasks(swe_instances(tmp_path / "swe"))[0]
    out = run_trial(spec_for(task, tmp_path, SNOOP_THEN_FIX, sandbox="docker", image=SANDBOX_IMAGE))
    assert out.result["status"] == "resolved" and out.result["sandbox"] == "docker", json.dumps(out.result, default=str)
    assert HIDDEN_MARKER.encode() not in out.session
    assert _trial_containers(client) == []

    started = time.monotonic()
    spec = spec_for(task, tmp_path, [FIX[0], *SLEEP], sandbox="docker", image=SANDBOX_IMAGE, timeout=25,
                    script_name="sleep")
    out = run_trial(spec)
    r = out.result
    assert time.monotonic() - started < 100
    assert (r["status"], r["outcome"]) in {("limit", "timeout"), ("resolved", "timeout")}, json.dumps(r, default=str)
    if r["steps"] >= 2:  # the edit was made before the clock ran out: it is in the patch, and scored
        assert "return a + b" in out.patch and r["status"] == "resolved"
    assert _trial_containers(client) == []


def readme_example() -> str:
    from conftest import ROOT

    text = (ROOT / "README.md").read_text()
    section = text.split("## Python API", 1)[1]
    return section.split("```python\n", 1)[1].split("```", 1)[0]


def _run_example(code: str, tmp_path, monkeypatch, capsys) -> str:
    folder_of_repos(tmp_path / "tasks", names=("calc",))
    monkeypatch.chdir(tmp_path)
    exec(compile(code, "README.md (Python API)", "exec"), {})
    return capsys.readouterr().out


@pytest.mark.docker
def test_the_readme_python_api_example_as_written(tmp_path, monkeypatch, capsys):
    from conftest import require_docker

    client = require_docker()
    out = _run_example(readme_example(), tmp_path, monkeypatch, capsys)
    assert "test_add" in out and "(2, 3)" in out  # the failing test, then pdb's `p a, b`
    assert "+    return a + b" in out
    assert out.rstrip().endswith("True the whole suite passes (2 tests)"), out
    assert [c for c in client.containers.list(all=True, filters={"label": f"dgym-tui.owner-pid={os.getpid()}"})
            if "dgym-env-" in c.labels.get("dgym-tui.repo", "")] == []


def test_the_python_api_locally(tmp_path, monkeypatch, capsys):
    """The same example on the local sandbox, plus what it does not show: a tool not allowed,
    submit's done, score before any fix, the recorded session."""
    code = readme_example()
    assert 'sandbox="docker"' in code
    out = _run_example(code.replace('sandbox="docker"', 'sandbox="local"'), tmp_path, monkeypatch, capsys)
    assert out.rstrip().endswith("True the whole suite passes (2 tests)"), out

    from dgym_tui.batch import TaskEnv

    task = load_tasks(tmp_path / "tasks")[0]
    with TaskEnv(task, sandbox="local", tools=["view", "edit"], session_file=str(tmp_path / "s.jsonl")) as env:
        with pytest.raises(RuntimeError, match="reset"):
            env.step("view", path="calc.py")
        assert "test_add" in env.reset()
        assert sorted(t["function"]["name"] for t in env.tools) == ["edit", "submit", "view"]
        refused = env.step("bash", command="ls")
        assert not refused.ok and "not allowed" in refused.observation
        assert "return a - b" in env.step("view", path="calc.py").observation
        env.step("edit", path="tests/test_calc.py", start=5, end=5, new_code="    assert True")
        score = env.score()
        assert not score.resolved and score.reverted == ["tests/test_calc.py"]
        assert env.step("submit", message="done").done
    assert b'"tool_result"' in (tmp_path / "s.jsonl").read_bytes()


def test_scoring_a_patch_that_does_not_apply_and_one_that_breaks_the_import(tmp_path):
    from dgym_tui.batch.scoring import score_patch
    from dgym_tui.batch.trial import prepare_repo

    task = load_tasks(swe_instances(tmp_path / "swe"))[0]
    repo = str(prepare_repo(task, tmp_path / "work"))
    score = score_patch(task, "diff --git a/calc.py b/calc.py\n--- a/calc.py\n+++ b/calc.py\n@@ -1,1 +1,1 @@\n"
                              "-def nothing_like_this():\n+def add(a, b):\n", repo, sandbox="local")
    assert not score.resolved and not score.applied and score.reason.startswith("the agent's patch does not apply")
    assert score.tests_before == {"passed": 1, "failed": 2, "errors": 0}
    broken = ("diff --git a/calc.py b/calc.py\n--- a/calc.py\n+++ b/calc.py\n@@ -1,5 +1,5 @@\n"
              " def add(a, b):\n-    return a - b\n+    return a +\n \n \n def sub(a, b):\n"
              "diff --git a/tests/test_new.py b/tests/test_new.py\nnew file mode 100644\n--- /dev/null\n"
              "+++ b/tests/test_new.py\n@@ -0,0 +1,2 @@\n+def test_new():\n+    pass\n")
    score = score_patch(task, broken, repo, sandbox="local")
    assert not score.resolved and score.reverted == ["tests/test_new.py"]
    assert set(score.fail_to_pass.values()) == {"error"} and score.pass_to_pass == {"tests/test_calc.py::test_sub": "error"}
    assert score.tests_after == {"passed": 0, "failed": 0, "errors": 1}


def test_a_trial_through_litellm_and_the_stub_server(tmp_path, stub_llm):
    """The real HTTP path: litellm talks to the stub, which answers each task from its script."""
    tasks = load_tasks(folder_of_repos(tmp_path / "set"))
    respond = stub_responder({"calc_a": FIX, "calc_b": GIVE_UP})
    stub_llm.push(*[respond] * 6)
    results = {}
    for task in reversed(tasks):
        spec = TrialSpec(task=task, arm=Arm("all", []), attempt=1, model="openai/stub", api_base=stub_llm.url,
                         sandbox="local", yes=True, env={"OPENAI_API_KEY": "sk-test-not-real"})
        results[task.id] = run_trial(spec).result
    assert results["calc_a"]["status"] == "resolved", results["calc_a"]
    assert results["calc_b"]["status"] == "unresolved", results["calc_b"]
    assert results["calc_a"]["tool_calls"] == {"edit": 1, "submit": 1} and results["calc_a"]["tokens"] > 0
    assert len(stub_llm.requests) == 3


def test_a_patch_that_stops_pytest_is_unresolved_not_an_error(tmp_path):
    from dgym_tui.batch.scoring import score_patch
    from dgym_tui.batch.trial import prepare_repo

    task = load_tasks(folder_of_repos(tmp_path / "set", names=("calc",)))[0]
    repo = str(prepare_repo(task, tmp_path / "work"))
    patch = ("diff --git a/pytest.ini b/pytest.ini\nnew file mode 100644\n--- /dev/null\n+++ b/pytest.ini\n"
             "@@ -0,0 +1,2 @@\n+[pytest]\n+addopts = --no-such-option\n")
    score = score_patch(task, patch, repo, sandbox="local")
    assert not score.resolved and score.reason.startswith("with the agent's patch, pytest did not run (exit 4)"), score


def test_a_clock_that_runs_out_before_the_sandbox_is_up(tmp_path, monkeypatch):
    import glob
    import tempfile

    task = load_tasks(folder_of_repos(tmp_path / "set", names=("calc",)))[0]
    (tmp_path / "tmp").mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))  # this trial's temp folders only
    out = run_trial(spec_for(task, tmp_path, FIX, timeout=0.2, script_name="quick"))
    r = out.result
    assert (r["status"], r["outcome"], r["steps"]) == ("limit", "timeout", 0), json.dumps(r, default=str)
    assert r["reason"].startswith("ran past the time limit (0.2 s); failing: tests/test_calc.py::test_add")
    assert glob.glob(str(tmp_path / "tmp" / "dgym-trial-*")) == []


# --- a test that loops forever ------------------------------------------------------------------

BITCOUNT = "def bitcount(n):\n    count = 0\n    while n:\n        n ^= n - 1\n        count += 1\n    return count\n"
BITCOUNT_TESTS = ("from bitcount_code import bitcount\n\n\ndef test_bitcount():\n    assert bitcount(127) == 7\n\n\n"
                  "def test_zero():\n    assert bitcount(0) == 0\n")
BITCOUNT_FIX = [{"tool_calls": [{"name": "edit", "arguments": {"path": "bitcount_code.py", "start": 4, "end": 4,
                                                               "new_code": "        n &= n - 1"}}]},
                {"tool_calls": [{"name": "submit", "arguments": {"message": "n ^= n - 1 never reached 0"}}]}]


def hang_task(root):
    """debug-gym's layout, its bug a loop that never ends (QuixBugs' bitcount)."""
    from batch_fixtures import write

    write(root / "bitcount", {"bitcount_code.py": BITCOUNT, "test.py": BITCOUNT_TESTS})
    return load_tasks(root)[0]


def _our_processes_left(before: set[str]) -> list[str]:
    """Processes whose folder is a sandbox copy made since `before` was taken (local sandboxes)."""
    import glob

    left = []
    for link in glob.glob("/proc/[0-9]*/cwd"):
        try:
            cwd = os.readlink(link)
        except OSError:
            continue
        if "/dgym-tui-" in cwd and cwd.split("/repo")[0] not in before:
            from conftest import process_command

            pid = link.split("/")[2]
            left.append(f"{pid} in {cwd}: {process_command(pid) or '?'}")
    return left


def _sandbox_folders() -> set[str]:
    import glob
    import tempfile

    return set(glob.glob(os.path.join(tempfile.gettempdir(), "dgym-tui-*")))


@pytest.mark.parametrize("sandbox", ["local", pytest.param("docker", marks=pytest.mark.docker)])
def test_a_test_that_loops_forever_is_a_failure_found_in_seconds(tmp_path, stub_llm, sandbox):
    """The default per-test limit (20 s): the agent's first request comes within 60 s of the
    trial's start, its task names the hang and the line and values where it was, the trial is
    scored unresolved (not an error), and nothing of the sandbox runs on after it."""
    from conftest import SANDBOX_IMAGE, require_docker

    client = require_docker() if sandbox == "docker" else None
    task = hang_task(tmp_path / "set")
    assert task.test_timeout is None  # the default applies
    limit = 20
    if sandbox == "docker":  # the default's wait is the local case's to show: here, Docker's kill
        (tmp_path / "set" / "bitcount" / "task.toml").write_text("test_timeout = 4\n")
        task, limit = load_tasks(tmp_path / "set")[0], 4
    stub_llm.push(*[stub_responder({"bitcount": [GIVE_UP[0]]})] * 2)
    before = _sandbox_folders()
    started = time.time()
    out = run_trial(TrialSpec(task=task, arm=Arm("all", []), attempt=1, model="openai/stub", api_base=stub_llm.url,
                              sandbox=sandbox, image=SANDBOX_IMAGE if sandbox == "docker" else None, yes=True,
                              env={"OPENAI_API_KEY": "sk-test-not-real"}))
    r = out.result
    first_step = stub_llm.requests[0]["time"] - started
    print(f"\n{sandbox}: the first request came {first_step:.1f} s after the trial started")
    assert first_step < 60, f"the agent's first request came {first_step:.1f} s after the trial's start"
    assert (r["status"], r["error"]) == ("unresolved", None), json.dumps(r, default=str)
    assert f"test.py::test_bitcount (timed out after {limit} s at bitcount_code.py:" in r["reason"], r["reason"]
    assert [t["test"] for t in r["timed_out"]] == ["test.py::test_bitcount"], r["timed_out"]
    assert r["tests_before"] == {"passed": 1, "failed": 1, "errors": 0}
    task_message = next(m["content"] for m in stub_llm.requests[0]["body"]["messages"] if m["role"] == "user")
    assert re.search(rf"test\.py::test_bitcount: timed out after {limit} s at bitcount_code\.py:[34] in bitcount "
                     r"\(n = 1, count = \d+\)", task_message), task_message
    assert "loops or waits forever" in task_message
    if client is not None:
        assert _trial_containers(client) == []
    # the processes' exit is waited for (one killed a moment ago may still be going), never a
    # process that runs on: the outer limit only catches that
    deadline = time.monotonic() + 15
    while (left := _our_processes_left(before)) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert left == [], left


def test_a_suite_that_hangs_everywhere_gives_the_agent_its_task_at_the_first_hang(tmp_path, stub_llm):
    """Issue 42: as QuixBugs' bitcount, nine parametrized tests that all loop forever. The run that
    writes the task ends at the first hang and says how many were left out: the agent's first
    request comes within 60 s at the default 20 s limit (84 s before, with each hang after the
    first costing 5 s); scoring still runs and reports every test. Here with a 4 s limit: the same
    run, its first request within 30 s (the default's 45 s is in README)."""
    from batch_fixtures import write

    tests = ("import pytest\nfrom bitcount_code import bitcount\n\n\n"
             "@pytest.mark.parametrize('n, expected', [(127, 7), (128, 1), (3005, 9), (13, 3), (14, 3), "
             "(27, 4), (834, 4), (254, 7), (256, 1)])\ndef test_bitcount(n, expected):\n"
             "    assert bitcount(n) == expected\n")
    write(tmp_path / "set" / "bitcount", {"bitcount_code.py": BITCOUNT, "test.py": tests, "task.toml": "test_timeout = 4\n"})
    task = load_tasks(tmp_path / "set")[0]
    stub_llm.push(*[stub_responder({"bitcount": [GIVE_UP[0]]})] * 2)
    started = time.time()
    out = run_trial(TrialSpec(task=task, arm=Arm("all", []), attempt=1, model="openai/stub", api_base=stub_llm.url,
                              sandbox="local", yes=True, env={"OPENAI_API_KEY": "sk-test-not-real"}))
    r = out.result
    first_step = stub_llm.requests[0]["time"] - started
    print(f"\nnine hanging tests: the first request came {first_step:.1f} s after the trial started, "
          f"the trial took {time.time() - started:.1f} s")
    assert first_step < 30, f"the agent's first request came {first_step:.1f} s after the trial's start"
    task_message = next(m["content"] for m in stub_llm.requests[0]["body"]["messages"] if m["role"] == "user")
    assert "The run ended at this first hang: 8 more tests were not run (eval runs them all)." in task_message
    assert "test.py::test_bitcount[127-7]: timed out after 4 s at bitcount_code.py:" in task_message
    assert r["status"] == "unresolved", json.dumps(r, default=str)
    assert len(r["timed_out"]) == 9, r["timed_out"]  # scoring ran every test


def test_a_hang_fixed_is_resolved(tmp_path):
    """With the loop fixed the same task is resolved; task.toml's test_timeout sets the limit."""
    task = hang_task(tmp_path / "set")
    (tmp_path / "set" / "bitcount" / "task.toml").write_text("test_timeout = 3\n")
    task = load_tasks(tmp_path / "set")[0]
    assert task.test_timeout == 3.0
    out = run_trial(spec_for(task, tmp_path, BITCOUNT_FIX))
    r = out.result
    assert r["status"] == "resolved" and r["timed_out"] == [], json.dumps(r, default=str)
    assert r["tests_before"] == {"passed": 1, "failed": 1, "errors": 0}
