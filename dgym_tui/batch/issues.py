"""Open issues as tasks (their fixes are judged by their evidence: batch/scoring.py, score_issue).

`gh issue list --json number,title,body,url` writes a JSON list of objects; a folder of
Markdown files holds one issue each (the first line its title, the file name's first number its
number). Each issue is a task `issue-<number>` on one repo at one commit (its HEAD, or --base).
No test fails yet, so the agent's task asks for a reproduction first.

"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

from dgym_tui.batch.spec import Task

ISSUE_TASK = """Issue #{number}: {title}{url}

{body}

No test reproduces this issue yet. First write one: a test that fails because of the bug the issue
describes — a new test file (for example tests/test_issue_{number}.py; editing a file that does not
exist creates it) or a new test in an existing test file — and run the tests to see it fail for
that reason. Then find the cause and fix the code, so that the new test passes and every test that
passed before still passes. Keep the test in your change: it is the evidence a maintainer reads
before merging the fix."""
NUMBER = re.compile(r"\d+")


class IssueSetError(ValueError):
    """Issues that cannot be read; str() is one line naming the file."""


def read_issues(path: str | Path, repo: str | Path, base: str | None = None) -> list[Task]:
    """The issues at `path` (gh's JSON, or a folder of Markdown files) as tasks on `repo` at
    `base` (default: its HEAD), resolved to a commit now so every trial starts from the same one."""
    path, repo = Path(path), Path(repo).resolve()
    commit = _commit(repo, base or "HEAD")
    issues = _markdown_folder(path) if path.is_dir() else _gh_json(path)
    if not issues:
        raise IssueSetError(f"{path}: no issue in it")
    tasks, seen = [], set()
    for issue in issues:
        number = issue["number"]
        if number in seen:
            raise IssueSetError(f"{path}: issue #{number} is given twice")
        seen.add(number)
        tasks.append(Task(id=f"issue-{number}", repo=str(repo), base_commit=commit, problem=issue_task(issue),
                          issue={"number": number, "title": issue["title"], "url": issue.get("url") or ""},
                          source=str(path)))
    return tasks


def issue_task(issue: dict) -> str:
    url = f"\n{issue['url']}" if issue.get("url") else ""
    body = (issue.get("body") or "").strip() or "(the issue has no description beyond its title)"
    return ISSUE_TASK.format(number=issue["number"], title=issue["title"], url=url, body=body)


def _gh_json(path: Path) -> list[dict]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as e:
        raise IssueSetError(f"{path}: cannot read it ({e.strerror or e})") from None
    except ValueError as e:
        raise IssueSetError(f"{path}: not JSON ({e}); give what `gh issue list --json number,title,body,url` "
                            "writes, or a folder of Markdown files") from None
    if not isinstance(data, list):
        raise IssueSetError(f"{path}: a JSON list of issues was expected (gh issue list --json number,title,body,url)")
    out = []
    for i, item in enumerate(data, 1):
        if not isinstance(item, dict) or not isinstance(item.get("number"), int) or not str(item.get("title") or "").strip():
            raise IssueSetError(f"{path}: item {i} has no number and title (gh issue list --json number,title,body,url)")
        out.append({"number": item["number"], "title": str(item["title"]).strip(), "body": str(item.get("body") or ""),
                    "url": str(item.get("url") or "")})
    return out


def _markdown_folder(folder: Path) -> list[dict]:
    out = []
    for path in sorted(folder.glob("*.md")):
        found = NUMBER.search(path.stem)
        if found is None:
            raise IssueSetError(f"{path}: its name holds no issue number (e.g. 12.md or issue-12.md)")
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
        title = lines[0].lstrip("#").strip() if lines else ""
        if not title:
            raise IssueSetError(f"{path}: its first line, the issue's title, is empty")
        out.append({"number": int(found.group()), "title": title, "body": "\n".join(lines[1:]).strip(), "url": ""})
    return out


def _commit(repo: Path, ref: str) -> str:
    if not repo.is_dir():
        raise IssueSetError(f"--repo {repo}: no such folder")
    done = subprocess.run(["git", "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}"], cwd=repo,
                          capture_output=True, text=True)
    if done.returncode != 0:
        raise IssueSetError(f"--repo {repo}: no commit {ref} there (is it a git repo?)")
    return done.stdout.strip()
