"""The batch driver, the local executor, resume and progress.

Two layers: the driver and executor with plain trial functions defined here (they run in the real
worker processes, so worker death, cancel and events are exercised for real), and the installed
`dgym-tui batch` end to end on real task sets with real sandboxes, the model being the stub
OpenAI-compatible server (tests/stub_llm_server.py), which answers several trials at once by
reading which repo each request is about.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from dgym_tui.batch import run_dir as rd
from dgym_tui.batch.driver import BatchConfig, run_batch
from dgym_tui.batch.executors import LocalExecutor, make_executor
from dgym_tui.batch.progress import LogProgress
from dgym_tui.batch.spec import Arm, Task, TrialOutcome, TrialSpec

# --- trial functions the workers run (module level: they travel to the worker by name) ------------

def _record(spec: TrialSpec) -> None:
    """Each run of a fake trial leaves a file in its task's "repo" folder: what ran, how often.
    (Not an environment variable: workers fork from a forkserver started by the first test.)"""
    if os.path.isdir(spec.task.repo):
        with open(os.path.join(spec.task.repo, f"{spec.trial_id}.{os.getpid()}.{time.time_ns()}"), "w"):
            pass


def fake_trial(spec: TrialSpec, on_event=None) -> TrialOutcome:
    """Status from the task id's prefix; 'die' kills its worker, 'slow' sleeps."""
    _record(spec)
    kind = spec.task.id.split("-")[0]
    if on_event:
        on_event({"step": 1, "cost": 0.01})
    if kind == "die":
        os.kill(os.getpid(), signal.SIGKILL)
    if kind == "slow":
        time.sleep(60)
    if kind == "raise":
        raise RuntimeError("boom")
    status = kind if kind in ("resolved", "unresolved", "limit", "error") else "resolved"
    return TrialOutcome(result={"status": status, "reason": f"fake {status}", "steps": 2, "cost": 0.01,
                                "seconds": 0.1, "tool_calls": {"pdb": 1} if "pdb" in spec.arm.tools else {"view": 1}},
                        session=b"", patch=f"diff for {spec.trial_id}\n")


def tasks_named(*ids: str, log: Path | None = None) -> list[Task]:
    return [Task(id=i, repo=str(log or "/nonexistent")) for i in ids]


def config(**kw) -> BatchConfig:
    base = dict(tasks="/tasks", model="scripted:x", arms=[Arm("with", ["pdb", "view"]), Arm("without", ["view"])])
    return BatchConfig(**{**base, **kw})


def runs(folder: Path) -> list[str]:
    return sorted(p.name.split(".")[0] for p in folder.iterdir())


@pytest.fixture
def run_log(tmp_path):
    folder = tmp_path / "runs"
    folder.mkdir()
    return folder


# --- the driver with fake trials ------------------------------------------------------------------

def test_every_status_two_arms_and_the_run_dir(tmp_path, run_log):
    out = tmp_path / "run"
    tasks = tasks_named("resolved-a", "unresolved-b", "limit-c", "error-d", "raise-e", "die-f", log=run_log)
    lines = []

    class Out:
        def write(self, s):
            lines.append(s)

        def flush(self):
            pass

        def isatty(self):
            return False

    run = run_batch(out, config(), tasks, LocalExecutor(workers=3, trial=fake_trial), progress=LogProgress(Out()),
                    write_report=False, reap=False)
    results = {r["trial"]: r for r in run.results}
    assert len(results) == 12 and run.ran == 12
    assert results["resolved-a__with__1"]["status"] == "resolved"
    assert results["unresolved-b__without__1"]["status"] == "unresolved"
    assert results["limit-c__with__1"]["status"] == "limit"
    assert results["error-d__with__1"]["status"] == "error"
    assert results["raise-e__with__1"]["status"] == "error" and "boom" in results["raise-e__with__1"]["error"]
    # a worker killed mid-trial: that trial is an error, the batch goes on with a fresh worker
    died = results["die-f__without__1"]
    assert died["status"] == "error" and "SIGKILL" in died["reason"], died
    # RUN_DIR as documented: batch.json, tasks.jsonl, trials/<id>/{session,patch,result}, results.jsonl
    batch = json.loads((out / "batch.json").read_text())
    assert batch["format"] == 1 and batch["arms"][1] == {"name": "without", "tools": ["view"]}
    assert [json.loads(line)["id"] for line in (out / "tasks.jsonl").read_text().splitlines()] == [t.id for t in tasks]
    trial = out / "trials" / "resolved-a__with__1"
    assert (trial / "patch.diff").read_text() == "diff for resolved-a__with__1\n"
    assert json.loads((trial / "result.json").read_text())["patch_sha256"]
    assert len((out / "results.jsonl").read_text().splitlines()) == 12
    assert not list(out.rglob("*.tmp"))
    # the log: a line per finished trial and a total
    text = "".join(lines)
    assert text.count("\n[") + text.startswith("[") >= 12 and "resolved-a__with__1: resolved" in text
    assert "12/12 done" in text
    # every trial ran exactly once
    assert runs(run_log) == sorted(results)


def test_resume_runs_only_what_is_missing_and_refuses_another_config(tmp_path, run_log):
    out = tmp_path / "run"
    tasks = tasks_named("resolved-a", "error-b", "unresolved-c", log=run_log)
    run_batch(out, config(), tasks, LocalExecutor(workers=2, trial=fake_trial), write_report=False, reap=False)
    first = runs(run_log)
    assert len(first) == 6
    # as if killed before two trials finished: their result.json gone (a torn results.jsonl too)
    for trial in ("unresolved-c__with__1", "unresolved-c__without__1"):
        (out / "trials" / trial / "result.json").unlink()
    with open(out / "results.jsonl", "a") as fh:
        fh.write('{"trial": "torn')
    again = run_batch(out, config(workers=1), tasks, LocalExecutor(workers=1, trial=fake_trial),
                      write_report=False, reap=False)
    assert again.ran == 2 and again.kept == 4
    assert sorted(runs(run_log)) == sorted(first + ["unresolved-c__with__1", "unresolved-c__without__1"])
    assert len((out / "results.jsonl").read_text().splitlines()) == 6  # rebuilt, the torn line gone
    # --retry errors: only the errored trials, their earlier results kept in history/
    retried = run_batch(out, config(), tasks, LocalExecutor(workers=2, trial=fake_trial), retry_errors=True,
                        write_report=False, reap=False)
    assert retried.ran == 2
    assert runs(run_log).count("error-b__with__1") == 2 and runs(run_log).count("resolved-a__with__1") == 1
    old = json.loads((out / "trials" / "error-b__with__1" / "history" / "1" / "result.json").read_text())
    assert old["status"] == "error"
    # a changed configuration is refused, saying what differs
    with pytest.raises(rd.RunDirError, match=r"max_steps: 30 then, 5 now"):
        run_batch(out, config(max_steps=5), tasks, LocalExecutor(workers=1, trial=fake_trial), reap=False)
    with pytest.raises(rd.RunDirError, match="task set has changed"):
        run_batch(out, config(), tasks[:2], LocalExecutor(workers=1, trial=fake_trial), reap=False)


def test_total_cost_stops_new_trials(tmp_path, run_log):
    out = tmp_path / "run"
    tasks = tasks_named(*(f"resolved-{i}" for i in range(6)), log=run_log)
    run = run_batch(out, config(arms=[Arm("all", ["view"])], total_cost=0.025), tasks,
                    LocalExecutor(workers=1, trial=fake_trial), write_report=False, reap=False)
    assert run.ran == 3 and run.not_started == 3  # 0.01 each: the fourth would start at 0.03 > 0.025


def test_cancel_stops_running_workers(tmp_path, run_log):
    ex = LocalExecutor(workers=2, trial=fake_trial)
    specs = [TrialSpec(task=t, arm=Arm("a", ["view"]), attempt=1, model="scripted:x")
             for t in tasks_named("slow-1", "slow-2", "slow-3", log=run_log)]
    events = []
    gen = ex.run(specs, on_event=lambda tid, data: events.append((tid, data)))
    import threading

    started = time.time()
    threading.Timer(3, ex.cancel).start()
    finished = list(gen)
    assert finished == [] and time.time() - started < 25
    assert {tid for tid, d in events if d.get("kind") == "started"} == {"slow-1__a__1", "slow-2__a__1"}
    assert ("slow-1__a__1", {"step": 1, "cost": 0.01}) in events  # the trial's own events reach the driver


def test_make_executor_by_name():
    assert isinstance(make_executor("local", workers=3), LocalExecutor)
    with pytest.raises(ValueError, match="unknown executor 'nope'"):
        make_executor("nope")
