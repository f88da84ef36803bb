"""Apply a session's final change to the user's repo: all of it or none of it.

`plan_apply(recording)` says what would happen without touching anything (the diff, the files,
whether they changed since the session started, whether the repo holds the change already);
`apply(plan)` checks again, asks `git apply --check`, applies, and verifies each file came out
as the session left it. The app and `dgym-tui apply` both use these two.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from dgym_tui.sessions.patch import FinalPatch, PatchError, file_sha256, final_patch, git_location, run_git


class ApplyError(Exception):
    """The change was not applied (the repo is as it was); str() says why in one line."""


@dataclass
class ApplyPlan:
    session: str                      # the session file
    repo: Path
    diff: str = ""
    touched: list[str] = field(default_factory=list)      # files the diff changes
    changed_files: list[str] = field(default_factory=list)  # touched files edited since the start
    already_applied: bool = False
    is_git: bool = False
    problem: str | None = None        # why it cannot be applied, one line
    patch: FinalPatch | None = None

    @property
    def can_apply(self) -> bool:
        return self.problem is None and not self.already_applied and bool(self.diff)

    def summary(self) -> str:
        """One line saying what applying would do (or why it will not)."""
        if self.problem:
            return self.problem
        if self.already_applied:
            return f"already applied: {self.repo} holds this session's change; nothing to do"
        if not self.diff:
            return "the session changed nothing: nothing to apply"
        return f"would change {len(self.touched)} file(s) in {self.repo}: {', '.join(self.touched)}"


def plan_apply(recording) -> ApplyPlan:
    """What applying this recorded session (a SessionFile) would do; never changes anything."""
    repo = Path(str(recording.header.get("repo") or ""))
    plan = ApplyPlan(session=getattr(recording, "path", ""), repo=repo)
    if _is_bundled_example(repo):
        plan.problem = ("not applied: the bundled example is part of dgym-tui and stays as shipped "
                        "(to keep changes, debug a copy of it: dgym-tui COPY)")
        return plan
    try:
        plan.is_git = repo.is_dir() and git_location(repo) is not None
        patch = final_patch(recording)
    except PatchError as e:
        plan.problem = f"not applied: {e}"
        if e.changed:
            plan.changed_files = e.changed
            if plan.is_git:
                plan.problem += (f". To merge it anyway: dgym-tui export {plan.session or 'SESSION'} --patch "
                                 "FILE --against-start, then git apply --3way FILE (your changes staged or committed)")
        return plan
    plan.patch, plan.diff, plan.touched = patch, patch.diff, patch.touched
    plan.already_applied = patch.applied
    return plan


def _is_bundled_example(repo: Path) -> bool:
    from dgym_tui.examples import example_path

    try:
        return repo.resolve().parent == example_path().parent
    except (OSError, FileNotFoundError):
        return False


def apply(plan: ApplyPlan) -> str:
    """Apply a plan made by plan_apply; returns what was done, in one line. All or nothing:
    a repo edited since the plan, or a diff git would not apply whole, raises ApplyError and
    leaves every file as it was."""
    if plan.problem:
        raise ApplyError(plan.problem)
    if plan.already_applied:
        return plan.summary()
    if not plan.diff or plan.patch is None:
        return plan.summary()
    patch = plan.patch
    edited = [rel for rel in patch.touched if file_sha256(plan.repo / rel) != patch.start[rel]]
    if edited:
        raise ApplyError(f"not applied: changed since the plan was made: {', '.join(edited)}; nothing was changed")
    command, cwd = ["apply", "--whitespace=nowarn"], plan.repo
    try:
        where = git_location(plan.repo)
    except PatchError as e:
        raise ApplyError(f"not applied: {e}") from None
    if where is not None:  # paths in the diff are the repo's; git reads them from the work tree's top
        cwd, prefix = where
        if prefix:
            command.append(f"--directory={prefix.rstrip('/')}")
    data = plan.diff.encode("utf-8", "surrogateescape")
    check = run_git([*command, "--check", "-"], cwd=cwd, input=data)
    if check.returncode != 0:
        why = check.stderr.decode(errors="replace").strip().splitlines()
        raise ApplyError(f"not applied: git apply --check refused it ({why[-1] if why else 'no reason given'}); "
                         "nothing was changed")
    done = run_git([*command, "-"], cwd=cwd, input=data)
    if done.returncode != 0:
        why = done.stderr.decode(errors="replace").strip().splitlines()
        raise ApplyError(f"git apply failed after its check passed: {why[-1] if why else 'no reason given'}")
    wrong = [rel for rel in patch.touched if file_sha256(plan.repo / rel) != patch.final[rel]]
    if wrong:
        raise ApplyError(f"applied, but these files did not come out as the session left them: {', '.join(wrong)}")
    return f"applied: changed {len(patch.touched)} file(s) in {plan.repo}: {', '.join(patch.touched)}"
