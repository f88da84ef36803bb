"""Scoring, the way SWE-bench's harness does it: in a FRESH sandbox at the task's base, never the
one the agent used.

    base ─> + hidden tests ─> run: "before"
    base ─> + the agent's patch ─> its edits to test files reverted ─> + hidden tests ─> run: "after"

An open issue (task.issue) has no such tests yet: its fix is judged by the reproduction test the
agent wrote (score_issue). A patch that does not apply is unresolved (with git's reason). Resolved: every must-pass test
(FAIL_TO_PASS) passes and no PASS_TO_PASS test stops passing; a task that names no tests is
resolved when its whole suite passes (at least one test, none failing or erroring) and no test
that passed before fails. Per-test outcomes come from the in-box pytest plugin (core/test_runs.py:
repo-relative node ids, parametrized ids kept); each test has the task's time limit, and one
stopped at it is failed, never an error of ours; a named test that did not run is "missing", one
in a file that failed to import "error".
"""

from __future__ import annotations

import fnmatch
import posixpath
import threading
import time

from dgym_tui.batch.spec import Score, ScoringError, Task
from dgym_tui.core.workspace import patched_files, split_patch
from dgym_tui.core.test_runs import (DEFAULT_TEST_TIMEOUT, ERROR, FAILED, MISSING, PASSED, SKIPPED, PytestRun,
                                     run_pytest)
from dgym_tui.sandbox.errors import SandboxError

TEST_TIMEOUT = 900.0   # the whole suite's limit; each test has the task's own (DEFAULT_TEST_TIMEOUT)
TestRun = PytestRun    # one run of the suite: outcomes by test id, broken files, time-outs
__all__ = ["ERROR", "FAILED", "MISSING", "PASSED", "SKIPPED", "Score", "ScoringError"]


# --- the score ---------------------------------------------------------------------------------


def score_patch(task: Task, patch: str, repo_dir: str, sandbox: str = "auto", image: str | None = None,
                python: str | None = None) -> Score:
    """Score `patch` in a fresh sandbox made from repo_dir (the task's repo at its base, hidden
    files left out; a SWE-bench instance in its own image: the harness's way, batch/swebench.py).
    The sandbox is removed whatever happens. ScoringError: a failure of ours."""
    if task.environment is not None:
        from dgym_tui.batch.swebench import HarnessScorer

        fresh = HarnessScorer(task, repo_dir, test_timeout_of(task))
    else:
        fresh = FreshSandbox(task, repo_dir, sandbox, image, python)
    try:
        return fresh.score(patch)
    finally:
        fresh.close()


class FreshSandbox:
    """The scoring sandbox, which can get ready while the agent works (`start()`: up, set up,
    the hidden tests added and run for "before", back at the base), so that scoring after the
    agent is only the patch and one test run."""

    def __init__(self, task: Task, repo_dir: str, sandbox: str = "auto", image: str | None = None,
                 python: str | None = None):
        self.task, self.repo_dir = task, repo_dir
        self.kind, self.image, self.python = sandbox, image, python
        self.box = None
        self.base: str | None = None
        self.test_files: set[str] = set()
        self.before: TestRun | None = None
        self.seconds = 0.0
        self._error: BaseException | None = None
        self._thread = None
        self._closed = False
        self._lock = threading.Lock()

    def start(self) -> FreshSandbox:
        """Get ready in a thread of its own (score() waits for it)."""
        self._thread = threading.Thread(target=self._ready, name="dgym-score", daemon=True)
        self._thread.start()
        return self

    def _ready(self) -> None:
        from dgym_tui.sandbox import choose_sandbox

        started = time.monotonic()
        try:
            box, _warning = choose_sandbox(self.repo_dir, self.kind, image=self.image, python=self.python)
            with self._lock:
                if self._closed:
                    return
                self.box = box
            box.start()
            prepare(box, self.task)
            self.base = box.checkpoint("setup") if box.changed_files() else box.baseline
            self.test_files = base_test_files(box, self.task)
            add_hidden_tests(box, self.task)
            self.before = before_run(box, self.task)
            box.restore(self.base)
        except BaseException as e:  # handed to score()
            self._error = e
        finally:
            self.seconds += time.monotonic() - started

    def score(self, patch: str) -> Score:
        """The verdict on `patch`. ScoringError: a failure of ours."""
        if self._thread is None:
            self._ready()
        else:
            self._thread.join()
        if self._error is not None:
            e = self._error
            raise ScoringError(f"scoring failed: {e}" if isinstance(e, SandboxError)
                               else f"scoring failed: {type(e).__name__}: {e}") from None
        started = time.monotonic()
        try:
            score = score_after(self.box, self.task, patch, self.base, self.test_files, self.before)
        except SandboxError as e:
            raise ScoringError(f"scoring failed: {e}") from None
        self.seconds += time.monotonic() - started
        score.score_seconds = round(self.seconds, 3)
        return score

    def close(self) -> None:
        """Remove the sandbox (safe twice, and while it is still starting: it goes once up)."""
        with self._lock:
            self._closed = True
            box = self.box
        if box is not None:
            box.close()
        if self._thread is not None and self._thread.is_alive():
            self._thread.join(60)
            if self.box is not None:
                self.box.close()


def before_run(box, task: Task) -> TestRun:
    """The tests at the base with the hidden tests: if pytest cannot run there, the task (or
    we) are at fault, never the agent: SandboxError."""
    run = run_tests(box, task)
    if run.problem:
        raise SandboxError(f"at the task's base, {run.problem}")
    return run


def score_after(box, task: Task, patch: str, base: str, test_files: set[str], before: TestRun) -> Score:
    """The patch applied at `base`, test files reverted, the hidden tests added, the tests run
    (an issue: judged by its reproduction instead, score_issue)."""
    from dgym_tui.core.workspace import apply_patch

    if task.issue is not None:
        return score_issue(box, task, patch, base, test_files, before)
    reverted: list[str] = []
    applied, reason = True, ""
    if patch.strip():
        try:
            apply_patch(box, patch)
        except SandboxError as e:
            applied, reason = False, f"the agent's patch does not apply: {_last_line(str(e))}"
    if applied:
        reverted = revert_test_files(box, base, patch, test_files)
        try:
            add_hidden_tests(box, task)
        except SandboxError as e:
            applied, reason = False, f"the hidden tests do not apply over the agent's patch: {_last_line(str(e))}"
    if not applied:
        return Score(False, reason, before.counts(), {"passed": 0, "failed": 0, "errors": 0},
                     {t: MISSING for t in task.fail_to_pass}, {t: MISSING for t in task.pass_to_pass},
                     reverted, applied=False)
    # nothing left of the patch: the tree is the one "before" ran on, so its results stand
    unchanged = not patch.strip() or set(reverted) >= set(patched_files(patch))
    after = before if unchanged else run_tests(box, task)
    if after.problem:  # the agent's change stopped pytest (a hang, a broken configuration)
        return Score(False, f"with the agent's patch, {after.problem}", before.counts(), after.counts(),
                     {t: after.status_of(t) for t in task.fail_to_pass},
                     {t: after.status_of(t) for t in task.pass_to_pass}, reverted)
    return judge(task, before, after, reverted)


def judge(task: Task, before: TestRun, after: TestRun, reverted: list[str]) -> Score:
    """Resolved or not, with one line saying why."""
    f2p = {t: after.status_of(t) for t in task.fail_to_pass}
    p2p = {t: after.status_of(t) for t in task.pass_to_pass}
    stopped = {t.test: t for t in after.timed_out}

    def said(test: str, status: str = "") -> str:
        hung = stopped.get(test)
        return " ".join(filter(None, [test, status])) + (
            f" (timed out after {hung.seconds:g} s at {hung.where})" if hung else "")

    if task.fail_to_pass or task.pass_to_pass:
        bad = [said(t, s) for t, s in {**f2p, **p2p}.items() if s != PASSED]
        resolved = not bad
        reason = "every named test passes" if resolved else f"not passing: {_listed(bad)}"
    else:
        counts = after.counts()
        broke = [t for t, s in before.outcomes.items() if s == PASSED and after.status_of(t) != PASSED]
        failing = [t for t, s in after.outcomes.items() if s in (FAILED, ERROR)] + after.broken_files
        resolved = counts["passed"] > 0 and not failing and not broke
        if resolved:
            reason = f"the whole suite passes ({counts['passed']} tests)"
        elif failing:
            reason = f"failing: {_listed([said(t) for t in failing])}"
        elif broke:
            reason = f"passed before, not now: {_listed(broke)}"
        else:
            reason = "no test ran"
    if reverted:
        reason += f" (the agent's edits to {', '.join(reverted)} reverted)"
    return Score(resolved, reason, before.counts(), after.counts(), f2p, p2p, reverted,
                 timed_out=[{"test": t.test, "seconds": t.seconds, "where": t.where} for t in after.timed_out])


def _listed(items: list[str], most: int = 5) -> str:
    return ", ".join(items[:most]) + (f" and {len(items) - most} more" if len(items) > most else "")


def _last_line(text: str) -> str:
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    return lines[-1][:300] if lines else text[:300]


# --- an issue: no named tests, the agent's reproduction --------------------------------------------

BASE_OUTPUT = 4000  # characters of the reproduction's failure output at the base kept in result.json


def score_issue(box, task: Task, patch: str, base: str, test_files: set[str], before) -> Score:
    """An issue's fix judged by its evidence, not by named tests (there are none yet). The patch
    splits into its tests (test files by is_test_file) and the fix (the rest):

        base + the patch's tests only ─> the changed test files run: which of their tests fail
        base + the whole patch        ─> the whole suite run

    The reproduction is the patch's tests that do not pass at the base (failed, or erroring as
    what they import is still missing). Resolved: there is one, every one passes with the fix,
    and every test that passed at the base still passes. No reproduction (`reproduced` false):
    the patch changes no test, or its tests pass at the base already. The box is at `base`."""
    from dgym_tui.core.workspace import apply_patch

    counts = before.counts()
    nothing = {"passed": 0, "failed": 0, "errors": 0}
    tests = [(path, text) for path, text in split_patch(patch) if is_test_file(path, test_files)]
    files = [path for path, _ in tests]
    evidence = {"files": files, "tests": [], "before": {}, "after": {}, "reproduced": False, "base_output": ""}

    def verdict(resolved: bool, reason: str, after=None, applied: bool = True) -> Score:
        return Score(resolved, reason, counts, after.counts() if after else nothing,
                     {t: evidence["after"].get(t, "missing") for t in evidence["tests"]}, {}, [],
                     applied=applied, reproduction=evidence,
                     timed_out=[{"test": t.test, "seconds": t.seconds, "where": t.where} for t in after.timed_out]
                     if after else [])

    if not patch.strip():
        return verdict(False, "no reproduction: the agent changed nothing")
    if not tests:
        return verdict(False, "no reproduction: the patch adds or changes no test, so nothing shows the issue")
    try:
        apply_patch(box, "".join(text for _, text in tests))
    except SandboxError as e:
        return verdict(False, f"the patch's tests do not apply at the base: {_last_line(str(e))}", applied=False)
    at_base = run_tests(box, task, targets=files)
    box.restore(base)
    try:
        apply_patch(box, patch)
    except SandboxError as e:
        return verdict(False, f"the agent's patch does not apply: {_last_line(str(e))}", applied=False)
    after = run_tests(box, task)
    if after.problem:
        return verdict(False, f"with the agent's patch, {after.problem}", after)
    ids = [t for t in after.outcomes if t.split("::", 1)[0] in files]
    evidence["before"] = {t: at_base.status_of(t) for t in ids}
    evidence["after"] = {t: after.status_of(t) for t in ids}
    evidence["tests"] = [t for t in ids if evidence["before"][t] != PASSED]
    evidence["base_output"] = at_base.output[-BASE_OUTPUT:]
    broken = [f for f in after.broken_files if f in files]
    if broken:
        return verdict(False, f"with the fix, the reproduction's file {broken[0]} does not even import", after)
    if not evidence["tests"]:
        why = "they pass at the base, without the fix" if ids else "none of them ran"
        return verdict(False, f"no reproduction: the patch's tests ({', '.join(files)}) do not fail at the base: {why}",
                       after)
    evidence["reproduced"] = True
    failing = [t for t in evidence["tests"] if evidence["after"][t] != PASSED]
    broke = [t for t, s in before.outcomes.items() if s == PASSED and after.status_of(t) != PASSED]
    shown = ", ".join(evidence["tests"][:3]) + (" …" if len(evidence["tests"]) > 3 else "")
    if failing:
        return verdict(False, f"the reproduction still fails with the fix: {', '.join(failing[:5])}", after)
    if broke:
        return verdict(False, f"reproduced and fixed ({shown}), but tests that passed at the base fail now: "
                              f"{', '.join(broke[:5])}", after)
    return verdict(True, f"reproduced at the base and passing with the fix: {shown}; "
                         f"every test that passed before still passes ({after.counts()['passed']} pass)", after)


# --- steps ---------------------------------------------------------------------------------------


def prepare(box, task: Task) -> None:
    """What every sandbox of the task needs before anything runs: the repo's source folders first
    on the import path (as a Session does), then the task's setup command."""
    from dgym_tui.core.project import read_project

    def read(path: str) -> str | None:
        try:
            return box.read_text(path)
        except SandboxError:
            return None

    project = read_project(box.list_files(), read)
    roots = [posixpath.join(box.root, root) for root in project.import_roots]
    box.program_env = {"PYTHONPATH": ":".join(roots)} if roots else {}
    if task.setup:
        result = box.exec(task.setup, timeout=TEST_TIMEOUT)
        if not result.ok:
            raise SandboxError(f"the task's setup command failed ({task.setup}): {_last_line(result.output)}")


def base_test_files(box, task: Task) -> set[str]:
    """Files at the base whose edits by the agent are undone: the task's test files, every file
    pytest would collect, conftest.py files, the entrypoint's own test files and what the
    hidden tests touch."""
    from dgym_tui.core.project import read_project

    files = box.list_files()
    project = read_project(files, lambda p: _read_or_none(box, p))
    found = set(task.test_files) | set(project.tests) | set(task.hidden_files)
    found |= {f for f in files if posixpath.basename(f) == "conftest.py"}
    found |= set(patched_files(task.test_patch or ""))
    found |= {a for a in entrypoint_args(task) if a.endswith(".py")}
    return found


def _read_or_none(box, path: str) -> str | None:
    try:
        return box.read_text(path)
    except SandboxError:
        return None


def is_test_file(path: str, test_files: set[str], patterns: tuple[str, ...] = ("test_*.py", "*_test.py")) -> bool:
    """A known test file, or a new file pytest would collect (its default patterns)."""
    name = posixpath.basename(path)
    return path in test_files or name == "conftest.py" or any(fnmatch.fnmatch(name, p) for p in patterns)


def revert_test_files(box, base: str, patch: str, test_files: set[str]) -> list[str]:
    """Put the files the patch touched that are test files back as at `base` (a new one
    removed); returns them."""
    reverted = []
    for path in patched_files(patch):
        if not is_test_file(path, test_files):
            continue
        if box.exec(["git", "cat-file", "-e", f"{base}:{path}"], timeout=30).ok:
            box.git("checkout", base, "--", path)
        else:
            box.exec(["rm", "-f", "--", path], timeout=30)
        reverted.append(path)
    return reverted


def add_hidden_tests(box, task: Task) -> None:
    """The test patch applied and the hidden files written (SandboxError if it does not apply)."""
    from dgym_tui.core.workspace import apply_patch

    if task.test_patch and task.test_patch.strip():
        apply_patch(box, task.test_patch)
    for path, text in task.hidden_files.items():
        folder = posixpath.dirname(box.rel_path(path))
        if folder:
            box.exec(["mkdir", "-p", folder], timeout=30)
        box.write_text(path, text)


def entrypoint_args(task: Task) -> list[str]:
    """The pytest arguments of the task's entrypoint (`pytest test.py` -> [test.py]), if it is
    pytest; its environment assignments come with run_tests."""
    if not task.entrypoint:
        return []
    from dgym_tui.core.entrypoint import parse_entrypoint

    try:
        entry = parse_entrypoint(task.entrypoint)
    except SandboxError:
        return []
    return list(entry.args) if entry.kind == "pytest" else []


def pytest_targets(task: Task) -> list[str]:
    """What pytest is given: the files of the named tests (a node id that no longer exists would
    stop the whole run, a file does not), else the entrypoint's pytest arguments (debug-gym's
    `pytest test.py`), else nothing (pytest finds the suite as configured)."""
    named = task.fail_to_pass + task.pass_to_pass
    if named:
        return list(dict.fromkeys(t.split("::", 1)[0] for t in named))
    return entrypoint_args(task)


def test_timeout_of(task: Task) -> float:
    """Seconds each test of the task may run (task.toml / the instance's test_timeout, else the
    batch's --test-timeout, which the driver wrote into the task, else the default)."""
    return DEFAULT_TEST_TIMEOUT if task.test_timeout is None else float(task.test_timeout)


def run_tests(box, task: Task, timeout: float = TEST_TIMEOUT, targets: list[str] | None = None) -> TestRun:
    """pytest in the sandbox, outside pdb, each test under the task's time limit, each test's
    outcome read back; `targets` (files) instead of the task's own."""
    from dgym_tui.core.entrypoint import parse_entrypoint, run_environment

    env = {}
    if task.entrypoint:
        try:
            env = run_environment(parse_entrypoint(task.entrypoint), box.root, box.program_env)
        except SandboxError:
            env = {}
    named = bool(task.fail_to_pass or task.pass_to_pass) or targets is not None
    targets = [t for t in (pytest_targets(task) if targets is None else targets) if not named or _exists(box, t)]
    if named and not targets:
        return TestRun(exit_code=None, output="none of the named tests' files exists",
                       problem="none of the named tests' files exists")
    return run_pytest(box, targets, env=env, timeout=timeout, test_timeout=test_timeout_of(task),
                      options="-q -rA --continue-on-collection-errors")


def _exists(box, path: str) -> bool:
    return box.exec(["test", "-e", path], timeout=30).ok
