"""What leaves the review: the approved patches as files, applied to their repos (all or
nothing), as one git branch per task, or as SWE-bench's predictions file.

Only approved trials whose approval still holds (the patch-sha rule, inbox.Trial.approved) go
out, one per task (the latest approval of a task wins). Applying reuses sessions/apply.py's
apply(): every file checked against the task's base (drift), `git apply --check` first, each
file verified after; every task is planned and checked before any is applied. Branches are made
with git plumbing on a temporary index: the user's work tree, index and current branch are never
touched, and nothing is pushed.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from dgym_tui.core.safe_text import one_line
from dgym_tui.review.inbox import RunDir, Trial
from dgym_tui.sessions.apply import ApplyError, ApplyPlan, apply
from dgym_tui.sessions.patch import FinalPatch, PatchError, _TempRepo, file_sha256, git_location, run_git

APPROVED = "approved"


class ExportError(Exception):
    """Nothing was exported or applied; str() says why in one line."""


def export_patches(run: RunDir, out_dir: str | Path | None = None) -> list[Path]:
    """<out_dir>/<task>.patch for each approved task with a change (default RUN_DIR/approved/)."""
    out = Path(out_dir) if out_dir else run.path / APPROVED
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for trial in run.approved():
        patch = run.patch(trial)
        if not patch.strip():
            continue  # an approved empty change: nothing to apply (git apply refuses an empty patch)
        path = out / f"{_safe_name(trial.task)}.patch"
        path.write_bytes(patch.encode("utf-8", "surrogateescape"))
        written.append(path)
    return written


def export_preds(run: RunDir, file: str | Path, model: str | None = None) -> int:
    """SWE-bench's predictions, one JSON object a line: instance_id, model_name_or_path,
    model_patch. Returns how many were written."""
    name = model or str(run.batch.get("model") or "dgym-tui")
    lines = [json.dumps({"instance_id": t.task, "model_name_or_path": name, "model_patch": run.patch(t)},
                        ensure_ascii=False) for t in run.approved()]
    Path(file).write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return len(lines)


# --- applying -------------------------------------------------------------------------------

@dataclass
class _Target:
    trial: Trial
    repo: Path
    base: str | None                  # the task's base commit, if any
    diff: str
    issue: dict | None = None         # an open issue's task: number, title, url


def _targets(run: RunDir) -> list[_Target]:
    tasks = run.tasks()
    out = []
    for trial in run.approved():
        task = tasks.get(trial.task)
        if task is None or not task.get("repo"):
            raise ExportError(f"task {trial.task}: not in the run's tasks.jsonl, so its repo is unknown")
        diff = run.patch(trial)
        if diff.strip():
            out.append(_Target(trial, Path(task["repo"]), task.get("base_commit"), diff, task.get("issue")))
    return out


def plan(run: RunDir, target: _Target) -> ApplyPlan:
    """What applying one approved patch to its task's repo would do (sessions/apply.py's plan)."""
    repo = target.repo
    result = ApplyPlan(session=str(run.trial_dir(target.trial)), repo=repo, diff=target.diff)
    if not repo.is_dir():
        result.problem = f"not applied: task {target.trial.task}'s repo {repo} no longer exists"
        return result
    task = target.trial.task
    try:
        result.is_git = git_location(repo) is not None
        with _TempRepo() as tmp:
            touched = tmp.paths_of([target.diff])
            start = {rel: _base_bytes(run, target, rel) for rel in touched}
            now = {rel: file_sha256(repo / rel) for rel in touched}
            start_hashes = {rel: _sha(data) for rel, data in start.items()}
            recorded = None if target.base else _session_hashes(run, target)
            if recorded is not None:  # a folder task: its base is what the trial's session started from
                start_hashes = {rel: recorded.get(rel) for rel in touched}
            result.touched = touched
            if now != start_hashes and recorded is not None:
                # the folder is not the base any more: it holds the change already, or drifted
                for rel, data in start.items():
                    tmp.write(rel, data)
                if tmp.reverse([target.diff]) and tmp.hashes(touched) == start_hashes:
                    result.already_applied = True
                    result.patch = FinalPatch(target.diff, touched, start_hashes, now)
                    return result
                return _drifted(result, task, repo, touched, now, start_hashes)
            for rel, data in start.items():
                tmp.write(rel, data)
            tmp.commit()
            if not tmp.apply(target.diff):
                raise PatchError("the approved patch does not apply to the task's base")
            final = tmp.hashes(touched)
    except PatchError as e:
        result.problem = f"not applied: task {task}: {e}"
        return result
    result.patch = FinalPatch(diff=target.diff, touched=touched, start=start_hashes, final=final)
    if now == final:
        result.already_applied = True
    elif now != start_hashes:
        _drifted(result, task, repo, touched, now, start_hashes)
    return result


def _drifted(result: ApplyPlan, task: str, repo: Path, touched: list[str], now: dict, start: dict) -> ApplyPlan:
    result.changed_files = [rel for rel in touched if now[rel] != start[rel]]
    result.problem = (f"not applied: task {task}: {len(result.changed_files)} file(s) differ in {repo} from the "
                      f"task's base: {', '.join(result.changed_files)}")
    return result


def apply_approved(run: RunDir) -> list[str]:
    """Apply every approved patch to its task's repo: all of them or none (every plan made and
    checked first). Returns one line per task; raises ExportError saying why nothing changed."""
    targets = _targets(run)
    if not targets:
        return []
    plans = [plan(run, t) for t in targets]
    problems = [p.problem for p in plans if p.problem]
    seen: dict[tuple[str, str], str] = {}
    for target, p in zip(targets, plans):
        for rel in p.touched:
            key = (str(target.repo.resolve()), rel)
            if key in seen and not p.problem:
                problems.append(f"not applied: tasks {seen[key]} and {target.trial.task} both change {rel} in "
                                f"{target.repo}")
            seen.setdefault(key, target.trial.task)
    for target, p in zip(targets, plans):
        if not p.problem and p.can_apply:
            check = _git_check(p)
            if check:
                problems.append(f"not applied: task {target.trial.task}: {check}")
    if problems:
        raise ExportError(problems[0] + (f" (and {len(problems) - 1} more)" if len(problems) > 1 else "")
                          + "; nothing was changed")
    done = []
    for target, p in zip(targets, plans):
        try:
            done.append(f"{target.trial.task}: {apply(p)}")
        except ApplyError as e:
            raise ExportError(f"{target.trial.task}: {e} (tasks before it in this list were applied: "
                              f"{', '.join(t.trial.task for t in targets[:targets.index(target)]) or 'none'})") from None
    return done


def _git_check(p: ApplyPlan) -> str | None:
    command, cwd = ["apply", "--check", "--whitespace=nowarn"], p.repo
    where = git_location(p.repo)
    if where is not None:
        cwd, prefix = where
        if prefix:
            command.append(f"--directory={prefix.rstrip('/')}")
    out = run_git([*command, "-"], cwd=cwd, input=p.diff.encode("utf-8", "surrogateescape"))
    if out.returncode == 0:
        return None
    why = out.stderr.decode(errors="replace").strip().splitlines()
    return f"git apply --check refused it ({why[-1] if why else 'no reason given'})"


def _base_bytes(run: RunDir, target: _Target, rel: str) -> bytes | None:
    """A file as the task's base has it: at base_commit when the task names one, else as the
    repo has it now (plan() then checks it against the hashes the trial's session started from)."""
    if target.base:
        where = git_location(target.repo)
        if where is None:
            raise PatchError(f"{target.repo} is not a git repo, but the task names base commit {target.base}")
        top, prefix = where
        shown = run_git(["-C", str(top), "show", f"{target.base}:{prefix}{rel}"])
        return shown.stdout if shown.returncode == 0 else None
    path = target.repo / rel
    return path.read_bytes() if path.is_file() else None


def _sha(data: bytes | None) -> str | None:
    import hashlib

    return None if data is None else hashlib.sha256(data).hexdigest()


def _session_hashes(run: RunDir, target: _Target) -> dict | None:
    try:
        with open(run.session_path(target.trial), encoding="utf-8") as fh:
            header = json.loads(fh.readline())
    except (OSError, ValueError):
        return None
    # the session ran on a copy of the task's repo at its base (the batch's prepare_repo): its
    # header's hashes are the base's files, wherever that copy was
    if not isinstance(header, dict) or not isinstance(header.get("repo_hashes"), dict) or not header["repo_hashes"]:
        return None
    return header["repo_hashes"]


# --- branches -------------------------------------------------------------------------------

def make_branches(run: RunDir, prefix: str = "dgym/") -> list[str]:
    """One branch per approved task in its repo, `<prefix><task>`: the task's base commit (or
    HEAD) plus the approved patch, as one commit. Made on a temporary index with git plumbing;
    an existing branch of that name is moved to the new commit. Never pushed."""
    targets = _targets(run)
    made = []
    for target in targets:
        made.append(_branch(run, target, prefix))
    return made


def _branch(run: RunDir, target: _Target, prefix: str) -> str:
    task = target.trial.task
    where = git_location(target.repo) if target.repo.is_dir() else None
    if where is None:
        raise ExportError(f"task {task}: {target.repo} is not a git repo: no branch can be made there")
    top, sub = where
    name = f"{prefix}{task}"
    if run_git(["check-ref-format", "--branch", name], cwd=top).returncode != 0:
        raise ExportError(f"task {task}: {name!r} is not a valid branch name")
    base = run_git(["rev-parse", "--verify", "--quiet", f"{target.base or 'HEAD'}^{{commit}}"], cwd=top, text=True)
    if base.returncode != 0:
        raise ExportError(f"task {task}: no commit {target.base or 'HEAD'} in {top}")
    base_sha = base.stdout.strip()
    with tempfile.TemporaryDirectory(prefix="dgym-review-index-") as tmp:
        env = dict(os.environ, GIT_INDEX_FILE=str(Path(tmp) / "index"))
        steps = [["read-tree", base_sha]]
        for args in steps:
            out = run_git(args, cwd=top, env=env)
            if out.returncode != 0:
                raise ExportError(f"task {task}: git {args[0]} failed: {out.stderr.decode(errors='replace').strip()}")
        command = ["apply", "--cached", "--whitespace=nowarn"] + ([f"--directory={sub.rstrip('/')}"] if sub else [])
        out = run_git([*command, "-"], cwd=top, env=env, input=target.diff.encode("utf-8", "surrogateescape"))
        if out.returncode != 0:
            why = out.stderr.decode(errors="replace").strip().splitlines()
            raise ExportError(f"task {task}: the approved patch does not apply to {base_sha[:12]} "
                              f"({why[-1] if why else 'no reason given'}); no branch made")
        tree = run_git(["write-tree"], cwd=top, env=env, text=True).stdout.strip()
    identity = {"GIT_AUTHOR_NAME": "dgym-tui review", "GIT_AUTHOR_EMAIL": "dgym-tui@localhost",
                "GIT_COMMITTER_NAME": "dgym-tui review", "GIT_COMMITTER_EMAIL": "dgym-tui@localhost"}
    message = commit_message(target)
    commit = run_git(["commit-tree", tree, "-p", base_sha, "-F", "-"], cwd=top, text=True, input=message,
                     env=dict(os.environ, **{k: os.environ.get(k, v) for k, v in identity.items()}))
    if commit.returncode != 0:
        raise ExportError(f"task {task}: git commit-tree failed: {commit.stderr.strip()}")
    sha = commit.stdout.strip()
    out = run_git(["update-ref", "-m", "dgym-tui review", f"refs/heads/{name}", sha], cwd=top, text=True)
    if out.returncode != 0:
        raise ExportError(f"task {task}: git update-ref failed: {out.stderr.strip()}")
    return f"{task}: branch {name} at {sha[:12]} in {top}"


def commit_message(target: _Target) -> str:
    """An issue's fix says what it fixes (`Fix #N: title`, the agent's summary); any other task's
    that it is an approved fix. Both end with where it came from."""
    t = target.trial
    origin = (f"trial {t.id}, revision {t.revision}, approved by {t.verdict.who} at {t.verdict.when}\n"
              f"patch sha256 {t.patch_sha256}\n")
    if target.issue:
        summary = one_line(t.summary).strip()
        return (f"Fix #{target.issue['number']}: {one_line(target.issue['title'])}\n\n"
                + (f"{summary}\n\n" if summary else "") + f"Reproduced by {_tests(t)} before the fix.\n\n" + origin)
    return f"dgym-tui: approved fix for {t.task}\n\n" + origin


def _tests(trial: Trial) -> str:
    tests = (trial.result.reproduction or {}).get("tests") or []
    return ", ".join(tests) if tests else "the tests it adds"


def export_prs(run: RunDir, out_dir: str | Path) -> list[Path]:
    """One Markdown body per approved issue fix, DIR/issue-<N>.md, for `gh pr create --body-file`:
    `Fixes #N`, the agent's summary, the reproduction's outcomes before and after the fix, the
    reviewer's note. ExportError: nothing approved is an issue's."""
    targets = [t for t in _targets(run) if t.issue]
    if not targets:
        raise ExportError("no approved trial of an open issue: nothing to write (batch ISSUES --repo REPO makes them)")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for target in targets:
        path = out / f"issue-{target.issue['number']}.md"
        path.write_text(pr_body(target), encoding="utf-8")
        written.append(path)
    return written


def pr_body(target: _Target) -> str:
    t, issue = target.trial, target.issue
    evidence = t.result.reproduction or {}
    lines = [f"Fixes #{issue['number']}", ""]
    summary = one_line(t.summary).strip()
    if summary:
        lines += [summary, ""]
    lines += ["## Evidence", "", "A test that fails before the fix and passes with it, run by dgym-tui's harness in a "
              "fresh sandbox (not claimed by the agent):", "", "| test | at the base | with the fix |", "|---|---|---|"]
    for test in evidence.get("tests") or []:
        lines.append(f"| `{one_line(test)}` | {evidence.get('before', {}).get(test, '?')} | "
                     f"{evidence.get('after', {}).get(test, '?')} |")
    after = t.result.tests_after or {}
    lines += ["", f"Every test that passed before still passes ({after.get('passed', 0)} passed with the fix)."]
    output = (evidence.get("base_output") or "").strip()
    if output:
        tail = "\n".join(output.splitlines()[-25:])
        lines += ["", "<details><summary>The reproduction's failure at the base</summary>", "", "```",
                  tail.replace("```", "`\u200b``"), "```", "", "</details>"]
    if t.verdict and t.verdict.note:
        lines += ["", f"Reviewer's note ({one_line(t.verdict.who)}): {one_line(t.verdict.note)}"]
    lines += ["", f"<sub>dgym-tui trial {t.id}, revision {t.revision}; approved by {one_line(t.verdict.who)} "
              f"at {t.verdict.when}.</sub>", ""]
    return "\n".join(lines)


def _safe_name(task: str) -> str:
    return "".join(c if c.isalnum() or c in "._-" else "_" for c in task) or "task"
