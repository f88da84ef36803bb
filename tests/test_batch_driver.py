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
import threading
import time
from pathlib import Path

import pytest

from dgym_tui.batch.result import TrialResult
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
    if kind == "dieafter":  # its worker dies once idle again
        threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGKILL)).start()
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
    results = {r.trial: r.to_dict() for r in run.results}
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
    started = time.time()
    threading.Timer(3, ex.cancel).start()
    finished = list(gen)
    assert finished == [] and time.time() - started < 25
    assert {tid for tid, d in events if d.get("kind") == "started"} == {"slow-1__a__1", "slow-2__a__1"}
    assert ("slow-1__a__1", {"step": 1, "cost": 0.01}) in events  # the trial's own events reach the driver


def test_a_worker_that_dies_while_idle_is_replaced(tmp_path, run_log):
    ex = LocalExecutor(workers=1, trial=fake_trial)
    specs = [TrialSpec(task=t, arm=Arm("a", ["view"]), attempt=1, model="scripted:x")
             for t in tasks_named("dieafter-1", "resolved-2", log=run_log)]

    def slow_feed():
        yield specs[0]
        # asked for the next trial: the first one's worker is dying; hand it out once it is dead
        import multiprocessing

        workers = multiprocessing.active_children()
        deadline = time.monotonic() + 60
        while any(w.is_alive() for w in workers) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not any(w.is_alive() for w in workers), "the worker told to die after its trial is still alive"
        yield specs[1]

    pids = []
    done = {spec.trial_id: outcome.result["status"]
            for spec, outcome in ex.run(slow_feed(), on_event=lambda tid, d: pids.append(d.get("pid")))}
    assert done == {"dieafter-1__a__1": "resolved", "resolved-2__a__1": "resolved"}
    assert len(set(filter(None, pids))) == 2


def test_make_executor_by_name():
    assert isinstance(make_executor("local", workers=3), LocalExecutor)
    with pytest.raises(ValueError, match="unknown executor 'nope'"):
        make_executor("nope")


# --- `dgym-tui batch` end to end: real task sets, real sandboxes, the stub model over HTTP -------

from conftest import require_docker  # noqa: E402
from stub_llm_server import StubLLMServer  # noqa: E402

FIXED = "def add(a, b):\n    return a + b\n"


def make_task_set(root: Path, names: list[str]) -> Path:
    """A folder of repos, one per name; each an `add` with a bug and a test named after the repo
    (test_add_<name>), which is how the stub tells the trials' requests apart."""
    for name in names:
        repo = root / name
        repo.mkdir(parents=True)
        (repo / "calc.py").write_text("def add(a, b):\n    return a - b\n")
        (repo / f"test_calc_{name.replace('-', '_')}.py").write_text(
            f"from calc import add\n\n\ndef test_add_{name.replace('-', '_')}():\n    assert add(2, 3) == 5\n")
    return root


class BatchModel:
    """The stub's answers for a whole batch at once: each request is put down to its trial (the
    repo named in the conversation, the arm from the tools offered) and answered by the repo's
    name: resolved-* edits the fix in then submits, unresolved-* submits at once, limit-* views
    a file until the step limit, error-* gets an HTTP 400 (a provider's error)."""

    def __init__(self, names: list[str], delay: float = 0.0):
        self.names = names
        self.delay = delay
        self.calls: dict[str, int] = {}
        self.server = StubLLMServer()
        self.server.push(*[self.answer] * 5000)

    def trial_of(self, body: dict) -> tuple[str, str]:
        text = json.dumps(body.get("messages"))
        name = next(n for n in self.names if f"test_add_{n.replace('-', '_')}" in text)
        tools = sorted(t["function"]["name"] for t in body.get("tools") or [])
        return name, "with-pdb" if "pdb" in tools else "no-pdb"

    def answer(self, body: dict) -> dict:
        name, arm = self.trial_of(body)
        key = f"{name}__{arm}"
        self.calls[key] = n = self.calls.get(key, 0) + 1
        kind = name.split("-")[0]
        reply = {"delay": self.delay}
        if kind == "error":
            return {**reply, "status": 400, "message": "stub: this model refuses"}
        if kind == "resolved":
            if n == 1:
                return {**reply, "tool_calls": [{"name": "edit", "arguments": {"path": "calc.py", "new_code": FIXED}}]}
            return {**reply, "tool_calls": [{"name": "submit", "arguments": {"message": "fixed add"}}]}
        if kind == "limit":
            return {**reply, "tool_calls": [{"name": "view", "arguments": {"path": "calc.py"}}]}
        return {**reply, "tool_calls": [{"name": "submit", "arguments": {"message": "nothing to do"}}]}


def batch_command(tasks: Path, out: Path, url: str, *extra: str, sandbox: str = "docker") -> list[str]:
    return ["dgym-tui", "batch", str(tasks), "--model", "openai/stub", "--api-base", url, "--out", str(out),
            "--arm", "with-pdb=pdb,view,edit,eval", "--arm", "no-pdb=view,edit,eval", "--max-steps", "3",
            "--sandbox", sandbox, "--yes", *extra]


def our_containers(client, pids: set[int]) -> list[str]:
    """Containers whose owner is one of these processes (the batch's workers)."""
    import socket

    # the low-level listing: one call, no inspect per container (others' come and go meanwhile)
    return [c["Names"][0] for c in client.api.containers(all=True, filters={"label": "dgym-tui.app"})
            if (c.get("Labels") or {}).get("dgym-tui.owner-host") == socket.gethostname()
            and int((c.get("Labels") or {}).get("dgym-tui.owner-pid") or 0) in pids]


def children(pid: int) -> set[int]:
    """Every descendant of pid (from /proc): the executor's forkserver and workers."""
    parents = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = open(f"/proc/{entry}/stat").read()
            except OSError:
                continue
            parents[int(entry)] = int(stat.rsplit(")", 1)[1].split()[1])
    found, frontier = set(), {pid}
    while frontier:
        frontier = {p for p, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return found


@pytest.mark.docker
def test_batch_every_status_two_arms_then_resume_after_sigkill(tmp_path):
    client = require_docker()
    names = ["resolved-a", "unresolved-b", "limit-c", "error-d"]
    tasks = make_task_set(tmp_path / "tasks", names)
    out = tmp_path / "run"
    model = BatchModel(names, delay=0.3)
    with model.server:
        cmd = batch_command(tasks, out, model.server.url, "--workers", "2")
        driver = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                  start_new_session=True)
        # SIGKILL the driver once some but not all trials are done
        deadline = time.time() + 480
        pids: set[int] = set()
        while time.time() < deadline and driver.poll() is None:
            pids |= children(driver.pid)
            done = list(out.glob("trials/*/result.json"))
            if 2 <= len(done) < 8:
                break
            time.sleep(0.2)
        assert driver.poll() is None, driver.stdout.read()
        done_before = {p.parent.name for p in out.glob("trials/*/result.json")}
        pids |= children(driver.pid)
        os.kill(driver.pid, signal.SIGKILL)
        driver.wait(10)
        calls_before = dict(model.calls)
        # its workers go with it (they get SIGTERM when their parent dies) and remove their sandboxes
        deadline = time.time() + 30
        while time.time() < deadline and any(os.path.exists(f"/proc/{p}") for p in pids):
            time.sleep(0.2)
        # the same command goes on
        again = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
        assert again.returncode == 1, again.stdout + again.stderr  # 1: errors remain (error-d)
        calls_after = dict(model.calls)
    results = {r.trial: r.to_dict() for r in rd.load_results(out)}
    assert len(results) == 8
    status = {t: r["status"] for t, r in results.items()}
    assert status["resolved-a__with-pdb__1"] == status["resolved-a__no-pdb__1"] == "resolved"
    assert status["unresolved-b__with-pdb__1"] == "unresolved"
    assert status["limit-c__no-pdb__1"] == "limit"
    assert status["error-d__with-pdb__1"] == "error"
    # nothing run twice: a trial finished before the kill got no request after it
    for trial in done_before:
        key = trial.rsplit("__", 1)[0]
        assert calls_after.get(key) == calls_before.get(key), (trial, calls_before, calls_after)
    # the log: no TTY, one line per finished trial
    assert again.stdout.count("]") >= 8 - len(done_before)
    assert "report.html" in again.stdout
    # no sandbox of either run left behind
    assert our_containers(client, pids) == []
    assert (out / "report.html").exists() and (out / "summary.md").exists()


def test_batch_reaches_every_status_in_two_arms(tmp_path):
    """Every status in one batch, both arms, in local sandboxes (the quickest: the Docker test
    below goes through a SIGKILL and a resume)."""
    names = ["resolved-a", "unresolved-b", "limit-c", "error-d"]
    tasks = make_task_set(tmp_path / "tasks", names)
    out = tmp_path / "run"
    model = BatchModel(names)
    with model.server:
        done = subprocess.run(batch_command(tasks, out, model.server.url, "--workers", "4", sandbox="local"),
                              capture_output=True, text=True, timeout=600)
    assert done.returncode == 1, done.stdout + done.stderr  # 1: errors to retry remain
    status = {r.trial: r.status for r in rd.load_results(out)}
    assert status == {f"{n}__{arm}__1": n.split("-")[0] for n in names for arm in ("with-pdb", "no-pdb")}, status
    # one line per finished trial (no TTY), then the total and where the report is
    lines = done.stdout.splitlines()
    assert sum(1 for line in lines if line.startswith("[")) == 8
    assert any("resolved-a__with-pdb__1: resolved" in line for line in lines)
    assert "8/8 done (2 resolved, 2 unresolved, 2 limit, 2 error)" in done.stdout
    assert "--retry errors" in done.stdout and (out / "report.html").exists()
    # every trial asked the model only as many times as its script (nothing run twice)
    assert model.calls["resolved-a__with-pdb"] == 2 and model.calls["limit-c__no-pdb"] == 3
    # the report: each arm 1 resolved of 3 scored (the error apart); each trial's replay beside it
    summary = (out / "summary.md").read_text()
    assert "| with-pdb | 1 | 1 | 1 | 1 | 33.3% |" in summary and "| no-pdb | 1 | 1 | 1 | 1 | 33.3% |" in summary
    assert (out / "replays" / "resolved-a__with-pdb__1.html").exists()
    assert 'href="replays/resolved-a__with-pdb__1.html"' in (out / "report.html").read_text()


@pytest.mark.parametrize("args, message", [
    (["--arm", "x=pdb,teleport"], "--arm x: unknown tool teleport (tools: "),
    (["--arm", "x"], "write NAME=TOOL,TOOL"),
    (["--api-base", "http://127.0.0.1:9/v1"], "the model's server does not answer at http://127.0.0.1:9/v1"),
    (["--executor", "carrier-pigeon"], "unknown executor 'carrier-pigeon'"),
])
def test_bad_input_is_one_line_and_exit_2(tmp_path, args, message):
    tasks = make_task_set(tmp_path / "tasks", ["resolved-a"])
    done = subprocess.run(["dgym-tui", "batch", str(tasks), "--model", "openai/stub", "--out", str(tmp_path / "run"),
                           "--api-base", "http://127.0.0.1:9/v1", *args], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2, done.stdout + done.stderr
    assert message in done.stderr and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert not (tmp_path / "run").exists()  # nothing written


def test_missing_task_set_and_another_batchs_run_dir(tmp_path):
    done = subprocess.run(["dgym-tui", "batch", str(tmp_path / "nope"), "--model", "scripted:x", "--out",
                           str(tmp_path / "run")], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and done.stderr.strip() == f"dgym-tui batch: {tmp_path / 'nope'}: no such file or folder"
    # a RUN_DIR made with other options is refused by the command too, saying what differs
    tasks = make_task_set(tmp_path / "tasks", ["resolved-a"])
    rd.prepare(tmp_path / "run", {"tasks": str(tasks), "model": "openai/other"}, [])
    script = tmp_path / "script.json"
    script.write_text("[]")
    done = subprocess.run(["dgym-tui", "batch", str(tasks), "--model", f"scripted:{script}", "--out",
                           str(tmp_path / "run")], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "another configuration" in done.stderr
    assert f'model: "openai/other" then, "scripted:{script}" now' in done.stderr


def test_only_runs_the_tasks_it_names_and_a_pattern_matching_none_is_one_line(tmp_path):
    tasks = make_task_set(tmp_path / "tasks", ["alpha-1", "alpha-2", "beta"])
    script = tmp_path / "script.json"
    script.write_text(json.dumps([{"tool_calls": [{"name": "submit", "arguments": {"message": "no"}}]}]))
    base = ["dgym-tui", "batch", str(tasks), "--model", f"scripted:{script}", "--sandbox", "local", "--yes",
            "--workers", "1", "--arm", "a=view,submit"]
    done = subprocess.run([*base, "--out", str(tmp_path / "none"), "--only", "gamma*"], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 2 and done.stderr.strip() == (
        "dgym-tui batch: --only 'gamma*' matches no task of the set (its tasks: alpha-1, alpha-2, beta)")
    assert not (tmp_path / "none").exists()
    done = subprocess.run([*base, "--out", str(tmp_path / "run"), "--only", "alpha-*"], capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert [t.id for t in rd.load_tasks(tmp_path / "run")] == ["alpha-1", "alpha-2"]
    assert sorted(p.name for p in (tmp_path / "run" / "trials").iterdir()) == ["alpha-1__a__1", "alpha-2__a__1"]


def test_live_table_shows_running_trials_with_step_cost_and_totals():
    import io

    from dgym_tui.batch.progress import LiveProgress

    out = io.StringIO()
    progress = LiveProgress(out)
    specs = [TrialSpec(task=t, arm=Arm("with-pdb", ["pdb"]), attempt=1, model="m")
             for t in tasks_named("alpha", "beta", "\x1b[2Jevil")]
    progress.begin(specs, [])
    progress.event("alpha__with-pdb__1", {"kind": "started"})
    progress.event("alpha__with-pdb__1", {"step": 4, "cost": 0.0123})
    progress.finished(specs[1], TrialResult(status="resolved", steps=2, cost=0.01, seconds=3))
    from rich.console import Console

    console = Console(file=io.StringIO(), width=120, color_system=None)
    console.print(progress._render())
    table = console.file.getvalue()
    progress.end()
    row = next(line for line in table.splitlines() if "alpha" in line)
    assert "running" in row and " 4 " in row and "$0.0123" in row and "0m0" in row
    assert "resolved" in next(line for line in table.splitlines() if "beta" in line)
    assert "1 waiting" in table and "1/3 done (1 resolved" in table and "left ~" in table
    assert "\x1b[2J" not in out.getvalue() + table


@pytest.mark.docker
def test_ctrl_c_removes_every_sandbox_and_keeps_what_finished(tmp_path):
    client = require_docker()
    names = ["limit-a", "limit-b", "limit-c"]
    tasks = make_task_set(tmp_path / "tasks", names)
    out = tmp_path / "run"
    model = BatchModel(names, delay=1.0)
    with model.server:
        driver = subprocess.Popen(batch_command(tasks, out, model.server.url, "--workers", "2"),
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
        # Ctrl-C once both workers hold a sandbox (to the whole process group, as a terminal does)
        deadline = time.time() + 480
        pids: set[int] = set()
        while time.time() < deadline and driver.poll() is None:
            pids |= children(driver.pid)
            if len(our_containers(client, pids)) >= 2:
                break
            time.sleep(0.3)
        assert len(our_containers(client, pids)) >= 2, driver.communicate()
        os.killpg(driver.pid, signal.SIGINT)
        stdout, stderr = driver.communicate(timeout=60)
    assert driver.returncode == 130, stdout + stderr
    assert "interrupted" in stderr and "the same command goes on" in stderr
    # removed by the batch itself, before it exited: no reaping needed
    assert our_containers(client, pids) == []
    assert (out / "batch.json").exists() and not list(out.glob("trials/*/result.json"))
