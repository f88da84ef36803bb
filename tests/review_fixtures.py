"""Run directories for the review inbox's tests and benchmark, written by hand to docs/run-dir.md
(a real batch's are made where a test needs its sessions and scores: see test_review.py).

`task_repo(path, name)`: a small git repo with one bug (`add` subtracts) and its test.
`synthetic_run_dir(root, trials, repos)`: a RUN_DIR of that many trials over those task repos,
statuses cycling resolved / unresolved / limit / error, each trial's patch the repo's real fix
(so exported patches apply), its result.json and results.jsonl as the driver writes them.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
from pathlib import Path

BUGGY = "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n"
FIXED = BUGGY.replace("a - b", "a + b")
TEST = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"
STATUSES = ("resolved", "unresolved", "limit", "error")
ENV = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
       "GIT_COMMITTER_EMAIL": "t@t", "GIT_CONFIG_GLOBAL": os.devnull}


def git(repo, *args, **kwargs) -> str:
    return subprocess.run(["git", *args], cwd=repo, env=ENV, check=True, capture_output=True, text=True,
                          **kwargs).stdout


def task_repo(path: Path, name: str = "calc") -> tuple[Path, str]:
    """(the repo, its base commit)."""
    repo = Path(path) / name
    repo.mkdir(parents=True)
    (repo / "calc.py").write_text(BUGGY)
    (repo / "test_calc.py").write_text(TEST)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base")
    return repo, git(repo, "rev-parse", "HEAD").strip()


def fix_patch(name: str = "calc.py", before: str = BUGGY, after: str = FIXED) -> str:
    """A git-style diff of one file."""
    import difflib

    body = difflib.unified_diff(before.splitlines(True), after.splitlines(True), f"a/{name}", f"b/{name}")
    return f"diff --git a/{name} b/{name}\n" + "".join(body)


def synthetic_run_dir(root: Path, trials: int, repos: list[tuple[Path, str]] | None = None,
                      arms: tuple[str, ...] = ("all",), model: str = "scripted:fix", session: bytes | None = None
                      ) -> Path:
    """A finished batch of `trials` trials (tasks × arms, one attempt) to docs/run-dir.md."""
    run = Path(root)
    (run / "trials").mkdir(parents=True, exist_ok=True)
    tasks_count = max(1, trials // len(arms))
    tasks = []
    for i in range(tasks_count):
        repo, base = repos[i % len(repos)] if repos else (Path("/nonexistent/calc"), None)
        tasks.append({"id": f"task-{i:04d}", "repo": str(repo), "base_commit": base, "problem": None,
                      "entrypoint": "pytest test_calc.py", "fail_to_pass": ["test_calc.py::test_add"],
                      "pass_to_pass": [], "test_patch": None, "hidden_files": {}, "test_files": [],
                      "setup": None, "time_limit": None, "source": str(repo)})
    batch = {"format": 1, "tasks": str(run / "tasks"), "model": model, "api_base": None, "tool_format": None,
             "arms": [{"name": a, "tools": []} for a in arms], "attempts": 1, "max_steps": 10,
             "max_cost": None, "trial_timeout": None, "sandbox": "local", "image": None, "yes": True,
             "created": "2026-11-25T12:00:00+00:00"}
    (run / "batch.json").write_text(json.dumps(batch, indent=2))
    (run / "tasks.jsonl").write_text("".join(json.dumps(t) + "\n" for t in tasks))
    lines = []
    n = 0
    for task in tasks:
        for arm in arms:
            if n >= trials:
                break
            status = STATUSES[n % len(STATUSES)]
            patch = "" if status == "error" else fix_patch()
            trial = f"{task['id']}__{arm}__1"
            folder = run / "trials" / trial
            folder.mkdir()
            (folder / "patch.diff").write_text(patch)
            (folder / "session.jsonl").write_bytes(session or b"")
            result = {"format": 1, "trial": trial, "task": task["id"], "arm": arm, "attempt": 1, "status": status,
                      "reason": {"resolved": "every named test passes",
                                 "unresolved": "not passing: test_calc.py::test_add failed",
                                 "limit": "the step limit (10) was reached",
                                 "error": "the provider answered 500"}[status],
                      "outcome": "submitted" if status in ("resolved", "unresolved") else status,
                      "summary": "add subtracted its arguments; it adds them now" if status == "resolved" else "",
                      "tests_before": {"passed": 0, "failed": 1, "errors": 0},
                      "tests_after": {"passed": int(status == "resolved"), "failed": int(status != "resolved"),
                                      "errors": 0},
                      "fail_to_pass": {"test_calc.py::test_add": "passed" if status == "resolved" else "failed"},
                      "pass_to_pass": {}, "reverted": [], "steps": 3 + n % 7, "tokens": 1000 + n,
                      "cost": None if n % 5 == 0 else round(0.001 * (n % 13), 4), "seconds": 12.5,
                      "agent_seconds": 10.0, "score_seconds": 2.5, "tool_calls": {"pdb": 2, "edit": 1},
                      "tool_format": "native", "model": model, "sandbox": "local", "node": "here",
                      "started": "2026-11-25T12:00:00+00:00", "finished": "2026-11-25T12:00:12+00:00",
                      "patch_sha256": hashlib.sha256(patch.encode()).hexdigest(),
                      "error": "the provider answered 500" if status == "error" else None}
            (folder / "result.json").write_text(json.dumps(result, indent=2))
            lines.append(json.dumps(result) + "\n")
            n += 1
    (run / "results.jsonl").write_text("".join(lines))
    return run


# --- a real batch ------------------------------------------------------------------------------

BROKEN_SUB = "def add(a, b):\n    return a - b\n\n\ndef sub(a, b):\n    return a + b\n"


def real_run_dir(root: Path, sandbox: str = "local") -> tuple[Path, dict[str, Path]]:
    """A RUN_DIR made by a real batch (the driver, its local executor, run_trial, the fresh-sandbox
    scoring) of the scripted model that fixes add(): task `fixed` ends resolved, `half` (sub() is
    broken too) unresolved, `gone` (a base commit its repo lacks) error. Returns (RUN_DIR, the
    task repos by task id)."""
    from batch_fixtures import FIX, calc_repo, commit_all, write, write_script

    from dgym_tui.batch.driver import BatchConfig, run_batch
    from dgym_tui.batch.executors import LocalExecutor
    from dgym_tui.batch.spec import Arm, Task

    root = Path(root)
    fixed = calc_repo(root / "repos" / "fixed")
    half = write(root / "repos" / "half", {"calc.py": BROKEN_SUB, "tests/test_calc.py":
                                           "from calc import add, sub\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"
                                           "\n\ndef test_sub():\n    assert sub(5, 3) == 2\n"})
    commit_all(half)
    gone = calc_repo(root / "repos" / "gone")
    tasks = [Task(id="fixed", repo=str(fixed), base_commit=git(fixed, "rev-parse", "HEAD").strip()),
             Task(id="half", repo=str(half)),
             Task(id="gone", repo=str(gone), base_commit="0" * 40)]
    model = write_script(root / "fix.json", FIX)
    config = BatchConfig(tasks=str(root / "repos"), model=model, arms=[Arm("all", [])], sandbox=sandbox, yes=True,
                         workers=2, max_steps=6)
    run_dir = root / "run"
    run_batch(run_dir, config, tasks, LocalExecutor(workers=2), write_report=False, reap=False)
    return run_dir, {"fixed": fixed, "half": half, "gone": gone}


def shared_real_run_dir(tmp_path_factory) -> Path:
    """The real batch of real_run_dir, made once per test session (both review test modules use
    it; each test works on a copy: see copy_run)."""
    root = tmp_path_factory.getbasetemp() / "review-real-batch"
    if not (root / "run" / "results.jsonl").is_file():
        shutil.rmtree(root, ignore_errors=True)
        real_run_dir(root)
    return root


def copy_run(made: Path, dest: Path) -> tuple[Path, dict[str, Path]]:
    """A private copy of a real batch's RUN_DIR and its task repos (tasks.jsonl pointed at them)."""
    shutil.copytree(made, dest, symlinks=True)
    tasks = dest / "run" / "tasks.jsonl"
    tasks.write_text(tasks.read_text().replace(str(made), str(dest)))
    return dest / "run", {name: dest / "repos" / name for name in ("fixed", "half", "gone")}
