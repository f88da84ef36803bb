"""The batch driver: tasks × arms × attempts become trial specs, an executor runs them, and the
driver alone writes RUN_DIR as their outcomes come back (run_dir.py), then the report.

Resume is the same call on the same RUN_DIR: trials with a result.json are kept, the others run
(again), the configuration must match (run_dir.prepare says what differs). `retry_errors` first
moves errored trials' results into their history, so they run again. Ctrl-C (KeyboardInterrupt)
cancels the executor, which removes the sandboxes its trials hold, and what finished is kept.
"""

from __future__ import annotations

import signal
import socket
import threading
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path

from dgym_tui.batch import run_dir as rd
from dgym_tui.batch.result import STATUSES, TrialResult
from dgym_tui.batch.spec import Arm, Task, TrialOutcome, TrialSpec


@dataclass
class BatchConfig:
    """What a batch measures (batch.json; everything here but `workers`, `executor` and
    `total_cost` must match for a resume)."""

    tasks: str                                # the task set's path, as given (made absolute)
    model: str
    arms: list[Arm]
    api_base: str | None = None
    tool_format: str | None = None
    attempts: int = 1
    max_steps: int | None = 30
    max_cost: float | None = None
    trial_timeout: float | None = None
    test_timeout: float | None = None         # seconds per test, for tasks that do not set theirs
    sandbox: str = "auto"
    image: str | None = None
    image_template: str | None = None         # SWE-bench instances' environment images
    yes: bool = False
    workers: int = 4
    executor: str = "local"
    total_cost: float | None = None
    tests: str = "hidden"                     # what the agent sees of the hidden tests (test_modes.py)
    seeker: str | None = None                 # the seeker's model, for arms with +seeker or +report
    seeker_api_base: str | None = None
    seeker_steps: int | None = 10
    env: dict[str, str] = field(default_factory=dict)  # for the agent (API keys): never written

    def to_json(self) -> dict:
        data = asdict(self)
        data.pop("env")
        data["arms"] = [arm.to_dict() for arm in self.arms]
        return data

    def specs(self, tasks: list[Task]) -> list[TrialSpec]:
        """Task by task, every arm and attempt of a task side by side (a batch stopped early by
        its total cost still compares the arms on the tasks it reached)."""
        return [TrialSpec(task=task, arm=arm, attempt=attempt, model=self.model, api_base=self.api_base,
                          tool_format=self.tool_format, max_steps=self.max_steps, max_cost=self.max_cost,
                          timeout=self.trial_timeout, sandbox=self.sandbox, image=self.image, yes=self.yes,
                          tests=self.tests, seeker=self.seeker, seeker_api_base=self.seeker_api_base,
                          seeker_steps=self.seeker_steps, env=dict(self.env))
                for task in tasks for arm in self.arms for attempt in range(1, self.attempts + 1)]


@dataclass
class BatchRun:
    """What one call of run_batch did."""

    results: list[TrialResult]                # every finished trial's result in RUN_DIR, now
    ran: int = 0                              # trials run by this call
    kept: int = 0                             # trials found done and kept
    not_started: int = 0                      # trials left unrun by the total cost
    interrupted: bool = False
    report_error: str | None = None


def normalise(spec: TrialSpec, outcome: TrialOutcome) -> TrialOutcome:
    """The outcome with the fields only the driver can vouch for (which trial) set from the
    spec, and an unknown status made an error: a trial's answer is not trusted to name itself."""
    given = dict(outcome.result or {})
    result = TrialResult.from_dict(given)
    if given.get("status") not in STATUSES:
        bad = given.get("status")
        result.fail(f"the trial returned no valid status ({bad!r})", result.error or f"invalid status {bad!r}")
    result.trial, result.task, result.arm, result.attempt = spec.trial_id, spec.task.id, spec.arm.name, spec.attempt
    result.node = given.get("node") or socket.gethostname()
    result.model = given.get("model") or spec.model
    return TrialOutcome(result=result.to_dict(), session=outcome.session or b"", patch=outcome.patch or "")


def reap_stale_sandboxes(sandbox: str) -> None:
    """Remove sandboxes left by a killed batch (their owner process is gone), as any start does;
    here too because a resumed batch may have nothing left to start."""
    if sandbox in ("auto", "docker"):
        try:
            from dgym_tui.sandbox.docker_sandbox import connect, reap_orphans

            reap_orphans(connect(timeout=2))
        except Exception:  # no engine: nothing of Docker's to reap
            pass
    try:
        from dgym_tui.sandbox.local_sandbox import reap_leftovers

        reap_leftovers()
    except Exception:  # best effort: a later start reaps again
        pass


def run_batch(run_dir: str | Path, config: BatchConfig, tasks: list[Task], executor, progress=None,
              retry_errors: bool = False, write_report: bool = True, reap: bool = True) -> BatchRun:
    """Run (or go on with) a batch. RunDirError when RUN_DIR holds another batch."""
    run_dir = Path(run_dir)
    tasks = with_test_timeout(tasks, config.test_timeout)
    resuming = rd.prepare(run_dir, config.to_json(), tasks)
    if reap:
        reap_stale_sandboxes(config.sandbox)
    done = rd.finished(run_dir) if resuming else {}
    if retry_errors:
        for trial_id, result in list(done.items()):
            if result.status == "error":
                rd.retire(run_dir, trial_id)
                del done[trial_id]
    if resuming:
        rd.rebuild_results(run_dir)  # repairs an append a kill tore
    all_specs = config.specs(tasks)
    specs = [s for s in all_specs if s.trial_id not in done]
    kept = [r for tid, r in done.items() if tid in {s.trial_id for s in all_specs}]
    run = BatchRun(results=[], kept=len(kept))
    if progress is not None:
        progress.begin(specs, kept)

    spent = {"done": sum(float(r.cost or 0) for r in kept), "live": {}}
    skipped = []

    def feed() -> Iterator[TrialSpec]:
        for i, spec in enumerate(specs):
            total = spent["done"] + sum(spent["live"].values())
            if config.total_cost is not None and total >= config.total_cost:
                skipped.extend(specs[i:])
                return
            yield spec

    def on_event(trial_id: str, data: dict) -> None:
        if data.get("cost") is not None:
            spent["live"][trial_id] = float(data["cost"])
        if progress is not None:
            progress.event(trial_id, data)

    try:
        for spec, outcome in executor.run(feed(), on_event=on_event):
            outcome = normalise(spec, outcome)
            result = rd.write_trial(run_dir, spec.trial_id, outcome)
            spent["live"].pop(spec.trial_id, None)
            spent["done"] += float(result.cost or 0)
            run.ran += 1
            if progress is not None:
                progress.finished(spec, result)
    except KeyboardInterrupt:
        run.interrupted = True
        # A second Ctrl-C must not cut the clean-up short (signals are the main thread's only).
        main = threading.current_thread() is threading.main_thread()
        previous = signal.signal(signal.SIGINT, signal.SIG_IGN) if main else None
        try:
            if progress is not None:
                progress.note("interrupted: stopping the running trials and removing their sandboxes…")
            executor.cancel()
        finally:
            if main:
                signal.signal(signal.SIGINT, previous)
    except BaseException:
        # A failure of the driver itself: the trials and the live display end with it, what
        # finished stays in trials/ for the next run.
        executor.cancel()
        if progress is not None:
            progress.end()
        raise
    run.not_started = len(skipped)
    run.results = rd.rebuild_results(run_dir)
    if skipped and progress is not None:
        progress.note(f"total cost ${config.total_cost:g} reached: {len(skipped)} trial(s) not started "
                      "(run again with a higher --total-cost to go on)")
    if write_report:
        try:
            from dgym_tui.batch.report import write_all

            write_all(run_dir)
        except Exception as e:  # the results are safe in trials/; the report can be made again
            run.report_error = f"{type(e).__name__}: {e}"
            if progress is not None:
                progress.note(f"the report could not be written: {run.report_error}")
    if progress is not None:
        progress.end()
    return run


def with_test_timeout(tasks: list[Task], seconds: float | None) -> list[Task]:
    """The tasks with the batch's --test-timeout where they set none of their own (tasks.jsonl
    then holds the limit each task's tests had, for the review's rescoring too)."""
    if seconds is None:
        return tasks
    return [t if t.test_timeout is not None else Task.from_dict({**t.to_dict(), "test_timeout": float(seconds)})
            for t in tasks]


def pending_trials(run_dir: str | Path) -> list[str]:
    """Trial ids of a RUN_DIR's batch that have no result yet (for a status line or the review)."""
    config = rd.load_batch(run_dir)
    arms = [Arm(**a) for a in config.get("arms") or []]
    done = rd.finished(run_dir)
    return [f"{t.id}__{a.name}__{k}" for t in rd.load_tasks(run_dir) for a in arms
            for k in range(1, int(config.get("attempts") or 1) + 1) if f"{t.id}__{a.name}__{k}" not in done]


def config_from_json(data: dict) -> BatchConfig:
    """A BatchConfig back from batch.json (for tools that go on with a RUN_DIR)."""
    known = set(BatchConfig.__dataclass_fields__) - {"arms", "env"}
    return BatchConfig(arms=[Arm(**a) for a in data.get("arms") or []],
                       **{k: v for k, v in data.items() if k in known})


__all__ = ["BatchConfig", "BatchRun", "run_batch", "normalise", "pending_trials", "config_from_json",
           "reap_stale_sandboxes"]
