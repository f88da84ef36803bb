"""Benchmark: from a 100-issue batch's end to its branches and pull-request bodies.

A RUN_DIR of ISSUES open-issue trials on one real git repo (tests/review_fixtures.py's calc repo),
written as the driver writes them: each task `issue-<N>` with its issue in tasks.jsonl, each
trial resolved with its reproduction in result.json and a patch that adds its own test file and
the fix, every one approved in reviews.jsonl. Timed, best of RUNS: `dgym-tui review RUN_DIR
--branches --export-prs DIR` (one branch `dgym/issue-<N>` per issue, one Markdown body each),
next to the floor measured the same way: a shell loop doing only git's part of each branch
(read-tree, apply --cached, write-tree, commit-tree, update-ref on a temporary index).
Last line: issue_branches issues=N seconds=A floor_s=B ratio=A/B ms_per_issue=A/N*1000
Run: python tests/benchmarks/issue_branches.py   (ISSUES=100 RUNS=3 by default)
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from review_fixtures import BUGGY, FIXED, fix_patch, git, task_repo  # noqa: E402

ISSUES = int(os.environ.get("ISSUES", "100"))
RUNS = int(os.environ.get("RUNS", "3"))
FLOOR = r"""
set -e
cd "$1"; base=$(git rev-parse HEAD); export GIT_INDEX_FILE="$2/index"
for f in "$2"/patches/*.diff; do
  n=$(basename "$f" .diff)
  git read-tree "$base"; git apply --cached "$f"; tree=$(git write-tree)
  sha=$(echo "Fix #$n" | git commit-tree "$tree" -p "$base"); git update-ref "refs/heads/floor/$n" "$sha"
done
"""


def new_test(n: int) -> str:
    text = f"from calc import add\n\n\ndef test_issue_{n}():\n    assert add({n}, 1) == {n + 1}\n"
    return (f"diff --git a/tests/test_issue_{n}.py b/tests/test_issue_{n}.py\nnew file mode 100644\n"
            f"--- /dev/null\n+++ b/tests/test_issue_{n}.py\n@@ -0,0 +1,{len(text.splitlines())} @@\n"
            + "".join(f"+{line}\n" for line in text.splitlines()))


def run_dir(root: Path, repo: Path, base: str) -> Path:
    run = root / "run"
    (run / "trials").mkdir(parents=True)
    tasks, results, decisions = [], [], []
    fix = fix_patch("calc.py", BUGGY, FIXED)
    for n in range(1, ISSUES + 1):
        issue = {"number": n, "title": f"add() is wrong for {n}", "url": f"https://github.com/acme/calc/issues/{n}"}
        tasks.append({"id": f"issue-{n}", "repo": str(repo), "base_commit": base, "problem": "…", "issue": issue})
        patch = new_test(n) + fix
        sha = hashlib.sha256(patch.encode()).hexdigest()
        test = f"tests/test_issue_{n}.py::test_issue_{n}"
        result = {"format": 1, "trial": f"issue-{n}__all__1", "task": f"issue-{n}", "arm": "all", "attempt": 1,
                  "status": "resolved", "reason": f"reproduced at the base and passing with the fix: {test}",
                  "outcome": "submitted", "summary": f"add() adds now (issue {n})",
                  "tests_before": {"passed": 1, "failed": 0, "errors": 0},
                  "tests_after": {"passed": 2, "failed": 0, "errors": 0}, "fail_to_pass": {test: "passed"},
                  "pass_to_pass": {}, "steps": 4, "tokens": 3000, "cost": None, "seconds": 30.0,
                  "model": "openai/stub", "sandbox": "docker", "patch_sha256": sha, "issue": issue,
                  "reproduction": {"files": [f"tests/test_issue_{n}.py"], "tests": [test], "before": {test: "failed"},
                                   "after": {test: "passed"}, "reproduced": True,
                                   "base_output": "E   assert -1 == 2\n1 failed"}}
        folder = run / "trials" / result["trial"]
        folder.mkdir()
        (folder / "patch.diff").write_text(patch)
        (folder / "result.json").write_text(json.dumps(result))
        results.append(json.dumps(result) + "\n")
        decisions.append(json.dumps({"trial": result["trial"], "verdict": "approve", "note": "", "patch_sha256": sha,
                                     "who": "bench", "when": "2026-11-27T12:00:00+00:00", "revision": 0}) + "\n")
        (root / "patches").mkdir(exist_ok=True)
        (root / "patches" / f"{n}.diff").write_text(patch)
    (run / "batch.json").write_text(json.dumps({"format": 1, "tasks": "issues.json", "model": "openai/stub",
                                                "arms": [{"name": "all", "tools": []}], "attempts": 1}))
    (run / "tasks.jsonl").write_text("".join(json.dumps(t) + "\n" for t in tasks))
    (run / "results.jsonl").write_text("".join(results))
    (run / "reviews.jsonl").write_text("".join(decisions))
    return run


def best(argv: list[str], reset) -> float:
    times = []
    for _ in range(RUNS):
        reset()
        started = time.perf_counter()
        subprocess.run(argv, check=True, capture_output=True)
        times.append(time.perf_counter() - started)
    return min(times)


def main() -> None:
    root = Path(tempfile.mkdtemp(prefix="dgym-bench-issues-"))
    try:
        repo, base = task_repo(root)
        run = run_dir(root, repo, base)
        exe = shutil.which("dgym-tui") or sys.exit("dgym-tui is not installed")
        prs = root / "prs"

        def reset() -> None:
            for ref in git(repo, "for-each-ref", "--format=%(refname)", "refs/heads/dgym", "refs/heads/floor").split():
                git(repo, "update-ref", "-d", ref)
            shutil.rmtree(prs, ignore_errors=True)

        ours = best([exe, "review", str(run), "--branches", "--export-prs", str(prs)], reset)
        made = len(git(repo, "for-each-ref", "refs/heads/dgym/").splitlines())
        assert made == ISSUES and len(list(prs.iterdir())) == ISSUES, (made, ISSUES)
        floor = best(["bash", "-c", FLOOR, "floor", str(repo), str(root)], reset)
        print(f"{ISSUES} approved issue fixes: {made} branches and {ISSUES} PR bodies in {ours:.2f} s "
              f"(git alone: {floor:.2f} s)")
        print(f"issue_branches issues={ISSUES} seconds={ours:.2f} floor_s={floor:.2f} ratio={ours / floor:.2f} "
              f"ms_per_issue={ours / ISSUES * 1000:.1f}")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
