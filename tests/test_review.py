"""The review inbox's core and command line (no UI): RUN_DIR reading, decisions and the patch-sha
rule, revisions, and what goes out (patch files, predictions, all-or-nothing apply, branches).

The exports run on a RUN_DIR made by a real batch (the driver, its local executor, run_trial and
the fresh-sandbox scoring) of the scripted model: built once per module, copied per test.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from review_fixtures import copy_run, fix_patch, git, shared_real_run_dir, synthetic_run_dir, task_repo

from dgym_tui.batch.result import TrialResult
from dgym_tui.commands.review import main as review_main
from dgym_tui.review import reviews, revisions
from dgym_tui.review.exports import ExportError, apply_approved, make_branches
from dgym_tui.review.inbox import RunDir, RunDirError
from dgym_tui.review.patch_files import file_changes


@pytest.fixture
def real(tmp_path_factory, tmp_path) -> tuple[RunDir, dict[str, Path]]:
    """A private copy of the real batch's RUN_DIR and task repos."""
    run_dir, repos = copy_run(shared_real_run_dir(tmp_path_factory), tmp_path / "copy")
    return RunDir.open(run_dir), repos


def head_state(repo: Path) -> tuple[str, str, str]:
    """The checkout as its owner sees it: the current branch, HEAD, the work tree's status."""
    return (git(repo, "symbolic-ref", "HEAD").strip(), git(repo, "rev-parse", "HEAD").strip(),
            git(repo, "status", "--porcelain"))


# --- reading and deciding ------------------------------------------------------------------------

def test_a_real_batch_reads_resolved_first_with_its_scores(real):
    run, _repos = real
    trials = run.sorted_trials()
    assert [(t.task, t.status) for t in trials] == [("fixed", "resolved"), ("half", "unresolved"),
                                                    ("gone", "error")]
    fixed = trials[0]
    assert run.diff_size(fixed) == (1, 1) and fixed.steps == 2 and fixed.summary == "add subtracted"
    assert fixed.result.tests_after["failed"] == 0
    assert run.session_path(fixed).stat().st_size > 0
    assert run.expected == 3 and run.counts()["undecided"] == 3


def test_decisions_append_and_the_latest_is_the_verdict(tmp_path):
    run = RunDir.open(synthetic_run_dir(tmp_path / "run", 4))
    t = run.sorted_trials()[0]
    reviews.record(run.path, t.id, "reject", t.patch_sha256, "too broad", by="ann")
    reviews.record(run.path, t.id, "approve", t.patch_sha256, by="bob")
    run.refresh()
    lines = [json.loads(line) for line in (run.path / "reviews.jsonl").read_text().splitlines()]
    assert [(d["verdict"], d["note"], d["who"]) for d in lines] == [("reject", "too broad", "ann"), ("approve", "", "bob")]
    assert set(lines[0]) == {"trial", "verdict", "note", "patch_sha256", "who", "when", "revision"}
    assert t.approved and t.verdict_text == "approved"
    with pytest.raises(reviews.ReviewError):
        reviews.record(run.path, t.id, "maybe", t.patch_sha256)


def test_an_approval_lapses_when_the_patch_changes_and_never_changes_a_score(tmp_path):
    run = RunDir.open(synthetic_run_dir(tmp_path / "run", 4))
    t = run.sorted_trials()[0]
    results_before = (run.path / "results.jsonl").read_bytes()
    reviews.record(run.path, t.id, "approve", t.patch_sha256)
    run.refresh()
    assert t.approved
    rev = revisions.create(run.path, t.id, "edit", fix_patch().replace("a + b", "b + a"))
    run.refresh()
    assert t.pending == "scoring…" and not t.approved  # waiting for its score: not approvable
    revisions.save_score(rev, TrialResult.from_dict(dict(t.result.to_dict(), status="unresolved", reason="scored again")))
    run.refresh()
    assert t.revision == 1 and t.status == "unresolved" and t.pending is None
    assert not t.approved and t.verdict_text == "approve?"  # approved a patch that is no longer the one
    reviews.record(run.path, t.id, "approve", t.patch_sha256, revision=1)
    run.refresh()
    assert t.approved
    assert (run.path / "results.jsonl").read_bytes() == results_before
    assert json.loads((run.path / "trials" / t.id / "result.json").read_text())["status"] == "resolved"


def test_a_running_batch_shows_trials_as_they_finish(tmp_path):
    run_dir = synthetic_run_dir(tmp_path / "run", 8)
    lines = (run_dir / "results.jsonl").read_text().splitlines(keepends=True)
    (run_dir / "results.jsonl").write_text("".join(lines[:3]) + lines[3][:20])  # a line being written
    run = RunDir.open(run_dir)
    assert len(run.trials) == 3
    assert run.refresh() == set()  # nothing new: a stat() and no reading
    with open(run_dir / "results.jsonl", "a") as fh:
        fh.write(lines[3][20:] + "".join(lines[4:6]))
    assert run.refresh() == {"results"} and len(run.trials) == 6
    tmp = run_dir / "results.jsonl.new"  # the driver rebuilds it at the end (a new file)
    tmp.write_text("".join(lines))
    os.replace(tmp, run_dir / "results.jsonl")
    assert run.refresh() and len(run.trials) == 8


def test_not_a_run_dir_is_one_line(tmp_path, capsys):
    with pytest.raises(RunDirError):
        RunDir.open(tmp_path)
    assert review_main([str(tmp_path), "--list"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "not a batch's run directory" in err


def test_list_prints_each_trial_and_json_for_scripts(tmp_path, capsys):
    run_dir = synthetic_run_dir(tmp_path / "run", 4)
    run = RunDir.open(run_dir)
    first = run.sorted_trials()[0]
    reviews.record(run_dir, first.id, "reject", first.patch_sha256, "wrong\x1b[2J file")
    assert review_main([str(run_dir), "--list"]) == 0
    text = capsys.readouterr().out.splitlines()
    assert len(text) == 4 and text[0].startswith(first.id) and "rejected" in text[0] and "\x1b" not in text[0]
    assert review_main([str(run_dir), "--list", "--json"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [r["status"] for r in rows] == ["resolved", "unresolved", "limit", "error"]
    assert rows[0]["verdict"] == "reject" and rows[1]["verdict"] is None and rows[0]["added"] == 1


def test_a_patch_splits_into_files_at_their_line_numbers():
    patch = fix_patch("a.py", "x\n" * 20 + "old\n" + "y\n" * 20, "x\n" * 20 + "new\nnew2\n" + "y\n" * 20)
    patch += fix_patch("b.py", "one\n", "two\n")
    (a, before, after), (b, before_b, after_b) = file_changes(patch)
    assert a == "a.py" and before.splitlines()[20] == "old" and after.splitlines()[20:22] == ["new", "new2"]
    assert before.splitlines()[:17] == [""] * 17  # the unchanged start: blank filler, not shown as a change
    assert (b, before_b, after_b) == ("b.py", "one\n", "two\n")


# --- out ---------------------------------------------------------------------------------------

def approve_two_reject_one(run: RunDir) -> None:
    for t in run.sorted_trials():
        verdict = "reject" if t.task == "gone" else "approve"
        reviews.record(run.path, t.id, verdict, t.patch_sha256, "no change" if verdict == "reject" else "")
    run.refresh()


def test_exported_patches_apply_to_the_untouched_repos_and_predictions_name_the_tasks(real, tmp_path, capsys):
    run, repos = real
    approve_two_reject_one(run)
    assert review_main([str(run.path), "--export-patches", "--export-preds", str(tmp_path / "preds.jsonl")]) == 0
    written = sorted(p.name for p in (run.path / "approved").iterdir())
    assert written == ["fixed.patch", "half.patch"]
    for name in ("fixed", "half"):
        patch = run.path / "approved" / f"{name}.patch"
        check = subprocess.run(["git", "apply", "--check", str(patch)], cwd=repos[name], capture_output=True, text=True)
        assert check.returncode == 0, check.stderr
    preds = [json.loads(line) for line in (tmp_path / "preds.jsonl").read_text().splitlines()]
    assert [p["instance_id"] for p in preds] == ["fixed", "half"]
    assert all(set(p) == {"instance_id", "model_name_or_path", "model_patch"} for p in preds)
    assert preds[0]["model_patch"] == run.patch(run.trials["fixed__all__1"])
    assert preds[0]["model_name_or_path"].startswith("scripted:")


def test_branches_hold_exactly_the_approved_change_and_leave_the_checkout_alone(real):
    run, repos = real
    approve_two_reject_one(run)
    before = {name: head_state(repos[name]) for name in ("fixed", "half", "gone")}
    made = make_branches(run, "dgym/")
    assert [line.split(":")[0] for line in made] == ["fixed", "half"]
    for name in ("fixed", "half"):
        repo = repos[name]
        assert head_state(repo) == before[name]  # same branch, same HEAD, clean work tree
        base = json.loads([line for line in (run.path / "tasks.jsonl").read_text().splitlines()
                           if json.loads(line)["id"] == name][0]).get("base_commit") or before[name][1]
        assert git(repo, "rev-parse", f"dgym/{name}^").strip() == base  # one commit on the base
        changed = git(repo, "diff", "--name-only", base, f"dgym/{name}").split()
        assert changed == ["calc.py"]
        shown = git(repo, "show", f"dgym/{name}:calc.py")
        assert "return a + b" in shown.split("def sub")[0]
        applied = subprocess.run(["git", "diff", base, f"dgym/{name}"], cwd=repo, capture_output=True, text=True).stdout
        assert _hunks(applied) == _hunks(run.patch(run.trials[f"{name}__all__1"]))
    assert "dgym/gone" not in git(repos["gone"], "branch", "--list")
    assert git(repos["fixed"], "remote").strip() == ""  # nothing pushed anywhere


def _hunks(diff: str) -> list[str]:
    return [line for line in diff.splitlines() if line[:1] in "+-@ " and not line.startswith(("+++", "---"))]


def test_apply_is_all_or_nothing(real):
    run, repos = real
    approve_two_reject_one(run)
    (repos["half"] / "calc.py").write_text((repos["half"] / "calc.py").read_text() + "# mine\n")  # drift
    fixed_before = (repos["fixed"] / "calc.py").read_bytes()
    with pytest.raises(ExportError, match="half.*differ.*calc.py.*nothing was changed"):
        apply_approved(run)
    assert (repos["fixed"] / "calc.py").read_bytes() == fixed_before  # the other task was not applied either
    git(repos["half"], "checkout", "--", "calc.py")
    done = apply_approved(run)
    assert len(done) == 2 and all("applied: changed 1 file" in line for line in done)
    assert "return a + b" in (repos["fixed"] / "calc.py").read_text()
    assert all("already applied" in line for line in apply_approved(run))  # twice: nothing more happens


def test_export_to_a_folder_and_nothing_approved(tmp_path, capsys):
    repo = task_repo(tmp_path / "repos")
    run_dir = synthetic_run_dir(tmp_path / "run", 4, [repo])
    assert review_main([str(run_dir), "--export-patches", str(tmp_path / "out")]) == 0
    assert "0 approved patch(es)" in capsys.readouterr().out
    run = RunDir.open(run_dir)
    t = run.sorted_trials()[0]
    reviews.record(run_dir, t.id, "approve", t.patch_sha256)
    assert review_main([str(run_dir), "--export-patches", str(tmp_path / "out")]) == 0
    assert (tmp_path / "out" / f"{t.task}.patch").read_text() == fix_patch()


def test_the_review_core_never_imports_textual():
    code = ("import sys, dgym_tui.review.inbox, dgym_tui.review.reviews, dgym_tui.review.revisions, "
            "dgym_tui.review.exports, dgym_tui.review.rework, dgym_tui.review.patch_files; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] == 'textual'))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


@pytest.mark.docker
def test_an_edit_is_scored_again_in_a_fresh_docker_sandbox(tmp_path):
    """The batch ran in Docker: the review scores a revision where the trial was scored."""
    from conftest import require_docker
    from review_fixtures import real_run_dir

    from dgym_tui.review import rework

    client = require_docker()
    run_dir, repos = real_run_dir(tmp_path, sandbox="docker")
    run = RunDir.open(run_dir)
    half = run.trials["half__all__1"]
    assert half.status == "unresolved" and half.result.sandbox == "docker"
    edited = run.patch(half).rstrip("\n") + "\n-    return a + b\n+    return a - b\n"
    message = rework.make_revision(run, half, "edit", patch=edited)
    run.refresh(force=True)
    assert half.revision == 1 and half.status == "resolved", message
    assert half.result.sandbox == "docker"
    ours = client.containers.list(all=True, filters={"label": f"dgym-tui.owner-pid={os.getpid()}"})
    assert ours == []  # the scoring's sandbox removed
    reviews.record(run.path, half.id, "approve", half.patch_sha256, revision=1)
    run.refresh()
    assert apply_approved(run) == [f"half: applied: changed 1 file(s) in {repos['half']}: calc.py"]
    assert "return a - b" in (repos["half"] / "calc.py").read_text().split("def sub")[1]
