"""What the agent may see of a task's hidden tests (`--tests`), three ways researchers run
SWE-bench:

- hidden (the default, SWE-bench's own rule): the agent never sees them; scoring adds them in a
  fresh sandbox.
- eval (debug-gym's `swebench` environment): the agent's `eval` runs with them applied for that
  run only, then taken away (tools/eval.py, core/hidden_tests.py); pdb runs the base's test files;
  the workspace, the session's diff and the agent's patch never hold them.
- visible (debug-gym's `swebench-debug`): they are part of the baseline from the start (so no
  part of the agent's patch), and pdb runs the failing tests, so its first stop is the failing
  test's post-mortem.

Scoring is the same in all three: the agent's patch at the pristine base, the hidden tests added
in a fresh sandbox (in visible mode the patch is first cut of the test files, so the tests are
never applied twice). A task with no hidden tests (a test_patch or hidden files) has nothing to
show: eval and visible are refused for it, in one line.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from dgym_tui.batch.spec import Task

MODES = ("hidden", "eval", "visible")
DEFAULT = "hidden"
SAID = {"hidden": "hidden (SWE-bench's rule: the agent never sees the task's tests)",
        "eval": "eval (the agent's eval runs with the task's tests added for that run only: debug-gym's swebench)",
        "visible": "visible (the task's tests in the repository from the start: debug-gym's swebench-debug)"}


def hidden_tests(task: Task):
    """The task's hidden tests as core/hidden_tests.HiddenTests (test patch and hidden files)."""
    from dgym_tui.core.hidden_tests import HiddenTests

    return HiddenTests(task.test_patch or "", dict(task.hidden_files))


def mode_problem(task: Task, mode: str) -> str | None:
    """Why `mode` means nothing for this task (None: it can run so)."""
    if mode not in MODES:
        return f"--tests {mode!r}: choose one of {', '.join(MODES)}"
    if mode == DEFAULT:
        return None
    if task.issue is not None:
        return (f"--tests {mode} means nothing for open issues (task {task.id}): they have no hidden tests, "
                "the agent writes the reproduction itself")
    if not hidden_tests(task):
        return (f"--tests {mode} means nothing for task {task.id}: it has no hidden tests (a test_patch, or "
                f"files listed as hidden in its task.toml); run it with --tests hidden")
    return None


def check_tasks(tasks: list[Task], mode: str) -> None:
    """ValueError, one line, when the mode means nothing for some task of the set."""
    for task in tasks:
        problem = mode_problem(task, mode)
        if problem:
            others = sum(1 for t in tasks if mode_problem(t, mode)) - 1
            raise ValueError(problem + (f" (nor for {others} other task{'s' if others > 1 else ''})" if others else ""))


def write_visible(task: Task, repo: Path) -> None:
    """The hidden tests put into a prepared copy of the task's repo on the host (a folder, not a
    git repository): the test patch applied, the hidden files written. TrialError-free:
    ValueError with git's reason when the patch does not apply at the base."""
    if task.test_patch and task.test_patch.strip():
        env = {**os.environ, "GIT_CEILING_DIRECTORIES": str(repo.parent)}  # never an enclosing repository's
        done = subprocess.run(["git", "apply", "--whitespace=nowarn", "-"], input=task.test_patch.encode(),
                              cwd=repo, env=env, capture_output=True)
        if done.returncode != 0:
            lines = done.stderr.decode(errors="replace").strip().splitlines()
            raise ValueError(f"the task's test patch does not apply at its base: {(lines or ['git failed'])[-1]}")
    for path, text in task.hidden_files.items():
        target = repo / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")


def visible_entrypoint(task: Task) -> str | None:
    """What pdb runs in visible mode, for a task outside an environment image: pytest on the
    files of its failing tests (FAIL_TO_PASS), else on the hidden test files, keeping the
    entrypoint's own options and environment; the task's entrypoint as it is otherwise."""
    import shlex

    from dgym_tui.batch.scoring import is_test_file

    files = [t.split("::", 1)[0] for t in task.fail_to_pass if t.split("::", 1)[0].endswith(".py")]
    if not files:
        files = [p for p in hidden_tests(task).paths if is_test_file(p, set(task.test_files))]
    files = list(dict.fromkeys(files))
    if not files:
        return task.entrypoint
    if not task.entrypoint:
        return shlex.join(["pytest", *files])
    from dgym_tui.core.entrypoint import parse_entrypoint
    from dgym_tui.sandbox.errors import SandboxError

    try:
        entry = parse_entrypoint(task.entrypoint)
    except SandboxError:
        return task.entrypoint
    if entry.kind != "pytest":
        return task.entrypoint
    words = shlex.split(task.entrypoint)
    env = []
    while words and "=" in words[0] and not words[0].startswith("-"):
        env.append(words.pop(0))
    options = [w for w in words[1:] if w.startswith("-")]
    return shlex.join([*env, words[0] if words else "pytest", *options, *files])


def without_tests(task: Task, patch: str) -> tuple[str, list[str]]:
    """A visible-mode patch cut of the files the hidden tests touch (scoring resets and adds them
    itself: SWE-bench's eval script checks the test files out, then applies the test patch), and
    which files were cut."""
    from dgym_tui.core.workspace import split_patch

    paths = set(hidden_tests(task).paths)
    kept, cut = [], []
    for path, text in split_patch(patch):
        (cut if path in paths else kept).append((path, text))
    if not cut:
        return patch, []
    return "".join(text for _, text in kept), sorted({p for p, _ in cut})


__all__ = ["MODES", "DEFAULT", "SAID", "hidden_tests", "mode_problem", "check_tasks", "write_visible",
           "visible_entrypoint", "without_tests"]
