"""Open issues to approved fixes (batch/issues.py, scoring.score_issue, review --branches and
--export-prs): a repo of our own with three issues in `gh issue list --json` shape, the agent
driven by the stub OpenAI-compatible server through litellm, every trial in Docker, run with the
installed `dgym-tui batch ISSUES --repo REPO`. The harness, not the agent, says which fix has
evidence: a test that fails at the base and passes with the fix."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from batch_fixtures import commit_all, git, stub_responder, write

from dgym_tui.review import reviews
from dgym_tui.review.inbox import RunDir

SHOP = '''def total(prices, discount=0):
    """The sum of prices, less a discount in percent."""
    return sum(prices) * (1 - discount / 100)


def average(prices):
    return sum(prices) / len(prices)


def label(name):
    return name.title()
'''
SHOP_TESTS = '''from shop import average, label, total


def test_total():
    assert total([1, 2, 3]) == 6


def test_average():
    assert average([2, 4]) == 3


def test_label():
    assert label("tea") == "Tea"
'''
ISSUES = [
    {"number": 1, "title": "average() crashes on an empty cart", "url": "https://github.com/acme/shop/issues/1",
     "body": "average([]) raises ZeroDivisionError; it should be 0 for an empty cart."},
    {"number": 2, "title": "label() should strip spaces", "url": "https://github.com/acme/shop/issues/2",
     "body": "label('  tea ') gives '  Tea ' instead of 'Tea'."},
    {"number": 3, "title": "total() with a 100% discount", "url": "https://github.com/acme/shop/issues/3",
     "body": "Is total([5], discount=100) zero? I think it may not be."},
]


def create(path: str, text: str) -> dict:
    return {"tool_calls": [{"name": "edit", "arguments": {"path": path, "new_code": text}}]}


def change(start: int, end: int, text: str) -> dict:
    return {"tool_calls": [{"name": "edit", "arguments": {"path": "shop.py", "start": start, "end": end,
                                                          "new_code": text}}]}


RUN_TESTS = {"tool_calls": [{"name": "eval", "arguments": {}}]}
SCRIPTS = {
    # reproduces (the new test fails at the base), then fixes: resolved
    "issue-1": [create("tests/test_issue_1.py", "from shop import average\n\n\ndef test_empty_cart_averages_zero():\n"
                                                "    assert average([]) == 0\n"),
                RUN_TESTS,
                change(6, 7, "def average(prices):\n    return sum(prices) / len(prices) if prices else 0"),
                {"tool_calls": [{"name": "submit", "arguments": {"message": "average() of no prices is 0"}}]}],
    # fixes without a test: no reproduction
    "issue-2": [change(10, 11, "def label(name):\n    return name.strip().title()"),
                {"tool_calls": [{"name": "submit", "arguments": {"message": "strip before title"}}]}],
    # a "reproduction" that passes at the base: not evidence
    "issue-3": [create("tests/test_issue_3.py", "from shop import total\n\n\ndef test_full_discount():\n"
                                                "    assert total([5], discount=100) == 0\n"),
                {"tool_calls": [{"name": "submit", "arguments": {"message": "it was already right"}}]}],
}


@pytest.fixture(scope="module")
def issues_run(tmp_path_factory):
    from conftest import SANDBOX_IMAGE, require_docker
    from stub_llm_server import StubLLMServer

    require_docker()
    root = tmp_path_factory.mktemp("issues")
    repo = write(root / "shop", {"shop.py": SHOP, "tests/test_shop.py": SHOP_TESTS})
    commit_all(repo)
    (root / "issues.json").write_text(json.dumps(ISSUES))
    with StubLLMServer() as stub:
        stub.push(*[stub_responder(SCRIPTS)] * 30)
        env = {**os.environ, "OPENAI_API_KEY": "sk-test-not-real"}
        done = subprocess.run([shutil.which("dgym-tui"), "batch", str(root / "issues.json"), "--repo", str(repo),
                               "--model", "openai/stub", "--api-base", stub.url, "--tool-format", "native",
                               "--out", str(root / "run"), "--sandbox", "docker", "--image", SANDBOX_IMAGE,
                               "--workers", "2", "--yes", "--max-steps", "8"],
                              env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return RunDir.open(root / "run"), repo, root


def test_each_issue_is_judged_by_its_evidence_not_the_agents_word(issues_run):
    run, repo, _ = issues_run
    results = {t.task: t.result for t in run.trials.values()}
    one, two, three = results["issue-1"], results["issue-2"], results["issue-3"]
    assert one.status == "resolved", one.reason
    assert one.reproduction["tests"] == ["tests/test_issue_1.py::test_empty_cart_averages_zero"]
    assert one.reproduction["before"] == {"tests/test_issue_1.py::test_empty_cart_averages_zero": "failed"}
    assert one.reproduction["after"] == {"tests/test_issue_1.py::test_empty_cart_averages_zero": "passed"}
    assert "ZeroDivisionError" in one.reproduction["base_output"]
    assert one.issue == {"number": 1, "title": ISSUES[0]["title"], "url": ISSUES[0]["url"]}
    assert one.tests_after == {"passed": 4, "failed": 0, "errors": 0}
    assert (two.status, two.reproduction["reproduced"]) == ("no-reproduction", False), two.reason
    assert "adds or changes no test" in two.reason
    assert (three.status, three.reproduction["reproduced"]) == ("no-reproduction", False), three.reason
    assert "do not fail at the base" in three.reason
    assert three.reproduction["before"] == {"tests/test_issue_3.py::test_full_discount": "passed"}
    task = json.loads((run.path / "tasks.jsonl").read_text().splitlines()[0])
    assert "No test reproduces this issue yet" in task["problem"] and task["base_commit"] == git(repo, "rev-parse", "HEAD").strip()
    summary = (run.path / "summary.md").read_text()
    assert "| no reproduction |" in summary and "R no reproduction" in summary


def test_an_approved_fix_becomes_a_branch_and_a_pull_request_body(issues_run, tmp_path):
    run, repo, _ = issues_run
    head, status = git(repo, "rev-parse", "HEAD"), git(repo, "status", "--porcelain")
    fixed = run.trials["issue-1__all__1"]
    reviews.record(run.path, fixed.id, "approve", fixed.patch_sha256, "good test", by="maintainer")
    exe = shutil.which("dgym-tui")
    done = subprocess.run([exe, "review", str(run.path), "--branches", "--export-prs", str(tmp_path / "prs")],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    message = git(repo, "log", "-1", "--format=%B", "dgym/issue-1")
    assert message.startswith("Fix #1: average() crashes on an empty cart\n\naverage() of no prices is 0\n")
    assert sorted(git(repo, "show", "--name-only", "--format=", "dgym/issue-1").split()) == \
        ["shop.py", "tests/test_issue_1.py"]
    assert git(repo, "rev-parse", "dgym/issue-1^") == head  # on the issues' base, one commit
    assert (git(repo, "rev-parse", "HEAD"), git(repo, "status", "--porcelain")) == (head, status)
    body = (tmp_path / "prs" / "issue-1.md").read_text()
    assert body.startswith("Fixes #1\n")
    assert "| `tests/test_issue_1.py::test_empty_cart_averages_zero` | failed | passed |" in body
    assert "Reviewer's note (maintainer): good test" in body and "ZeroDivisionError" in body
    assert sorted(os.listdir(tmp_path / "prs")) == ["issue-1.md"]


def test_the_review_shows_the_issue_the_reproduction_and_the_fix_apart(issues_run):
    from rich.console import Console

    from dgym_tui.ui.widgets.review_detail import ReviewDetail

    run, _, _ = issues_run
    trial = run.trials["issue-1__all__1"]
    detail = ReviewDetail(trial, run.patch(trial))
    assert [(part, path) for part, path, _, _ in detail.changes()] == [
        ("Reproduction test", "tests/test_issue_1.py"), ("Fix", "shop.py")]
    console = Console(width=120, record=True)
    console.print(detail.render_heading())
    console.print(detail.render_tests())
    shown = console.export_text()
    assert "Issue #1: average() crashes on an empty cart" in shown and ISSUES[0]["url"] in shown
    assert "tests/test_issue_1.py::test_empty_cart_averages_zero" in shown
    row = [line for line in shown.splitlines() if "test_empty_cart_averages_zero" in line][-1]  # the table's
    assert row.split()[-2:] == ["failed", "passed"]
    none = run.trials["issue-2__all__1"]
    console = Console(width=120, record=True)
    console.print(ReviewDetail(none, run.patch(none)).render_tests())
    assert "No reproduction" in console.export_text()


def test_issues_as_markdown_files_and_bad_input_in_one_line(tmp_path):
    from dgym_tui.batch.issues import IssueSetError, read_issues

    repo = write(tmp_path / "r", {"a.py": "x = 1\n"})
    commit_all(repo)
    folder = tmp_path / "issues"
    write(folder, {"issue-7.md": "# Crash on start\n\nIt crashes.\n", "12.md": "Slow export\n"})
    tasks = read_issues(folder, repo)
    assert [(t.id, t.issue["title"]) for t in tasks] == [("issue-12", "Slow export"), ("issue-7", "Crash on start")]
    assert "It crashes." in tasks[1].problem and "(the issue has no description" in tasks[0].problem
    (tmp_path / "bad.json").write_text('{"number": 1}')
    for bad, words in ((tmp_path / "bad.json", "a JSON list of issues"), (tmp_path / "none.json", "cannot read")):
        with pytest.raises(IssueSetError, match=words):
            read_issues(bad, repo)
    with pytest.raises(IssueSetError, match="no commit nope"):
        read_issues(folder, repo, base="nope")
