"""A reviewed batch as training data (review/training.py, `dgym-tui export RUN_DIR`): a real
batch of the scripted model with two arms and two attempts, a review that approves, rejects with
a note and edits a patch, then every format written by the installed command and read back as
trainers read it (Hugging Face `datasets`), each record's labels checked against results.jsonl
and reviews.jsonl."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from batch_fixtures import FIX, calc_repo, commit_all, write, write_script
from review_fixtures import BROKEN_SUB

from dgym_tui.review import reviews
from dgym_tui.review.inbox import RunDir

# A provider key as it would be in a user's environment — and, by accident, in their repo: the
# agent reads it, so it is in the session; the export must still never write it.
SECRET = "sk-proj-Zt7u1TESTONLYq9Xv4bWm2"
READ_NOTES = [{"tool_calls": [{"name": "view", "arguments": {"path": "notes.txt"}}]}]


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> RunDir:
    from dgym_tui.batch.driver import BatchConfig, run_batch
    from dgym_tui.batch.executors import LocalExecutor
    from dgym_tui.batch.spec import Arm, Task
    from dgym_tui.review import rework

    root = tmp_path_factory.mktemp("training")
    fixed = calc_repo(root / "repos" / "fixed")
    write(fixed, {"notes.txt": f"deploy with OPENAI_API_KEY={SECRET}\n"})
    commit_all(fixed, "notes")
    half = write(root / "repos" / "half", {"calc.py": BROKEN_SUB, "tests/test_calc.py": (
        "from calc import add, sub\n\n\ndef test_add():\n    assert add(2, 3) == 5\n\n\n"
        "def test_sub():\n    assert sub(5, 3) == 2\n")})
    commit_all(half)
    tasks = [Task(id="fixed", repo=str(fixed)), Task(id="half", repo=str(half))]
    model = write_script(root / "fix.json", READ_NOTES + FIX)
    config = BatchConfig(tasks=str(root / "repos"), model=model, attempts=2, sandbox="local", yes=True, workers=2,
                         max_steps=6, arms=[Arm("plain", ["view", "edit", "eval"]),
                                            Arm("debugger", ["pdb", "view", "edit", "eval"])])
    run_batch(root / "run", config, tasks, LocalExecutor(workers=2), write_report=False, reap=False)
    run = RunDir.open(root / "run")
    t = run.trials
    assert {i: x.status for i, x in t.items()} == {
        **{f"fixed__{a}__{n}": "resolved" for a in ("plain", "debugger") for n in (1, 2)},
        **{f"half__{a}__{n}": "unresolved" for a in ("plain", "debugger") for n in (1, 2)}}, \
        {i: (x.status, x.result.reason) for i, x in t.items()}
    # the review: approve one fix, reject its twin with a note, edit one unresolved patch into a fix
    reviews.record(run.path, "fixed__plain__1", "approve", t["fixed__plain__1"].patch_sha256, by="ann")
    reviews.record(run.path, "fixed__plain__2", "reject", t["fixed__plain__2"].patch_sha256,
                   "touches more than it should", by="ann")
    reviews.record(run.path, "fixed__debugger__1", "approve", t["fixed__debugger__1"].patch_sha256, by="bob")
    edited = run.patch(t["half__plain__1"]).rstrip("\n") + "\n-    return a + b\n+    return a - b\n"
    rework.make_revision(run, t["half__plain__1"], "edit", patch=edited, note="sub fixed by hand")
    run.refresh(force=True)
    assert t["half__plain__1"].revision == 1 and t["half__plain__1"].status == "resolved"
    reviews.record(run.path, "half__plain__1", "approve", t["half__plain__1"].patch_sha256, revision=1, by="bob")
    run.refresh()
    return run


def export(run: RunDir, out: Path, *args: str) -> Path:
    """The installed command, with the secret in its environment as a provider key."""
    env = {**os.environ, "OPENAI_API_KEY": SECRET, "MY_SERVICE_TOKEN": "tok-" + SECRET[::-1]}
    done = subprocess.run([shutil.which("dgym-tui"), "export", str(run.path), *args, "-o", str(out)],
                          env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return out


def expected_labels(run: RunDir) -> dict[str, dict]:
    """What each trial's labels must say, from the run's own files."""
    results = {json.loads(line)["trial"]: json.loads(line) for line in (run.path / "results.jsonl").read_text().splitlines()}
    decided = {d.trial: d for d in reviews.read(run.path)}  # the latest decision per trial
    out = {}
    for trial, r in results.items():
        current = run.trials[trial].result  # a revision's score replaces the batch's
        verdict = decided.get(trial)
        out[trial] = {"task": r["task"], "arm": r["arm"], "attempt": r["attempt"], "status": current.status,
                      "revision": run.trials[trial].revision,
                      "verdict": verdict.verdict if verdict and verdict.revision == run.trials[trial].revision else None,
                      "note": verdict.note if verdict and verdict.revision == run.trials[trial].revision else None}
    return out


def check_labels(labels: dict, want: dict) -> None:
    w = want[labels["trial"]]
    assert {k: labels[k] for k in w} == w, labels["trial"]
    assert labels["arm_tools"] == (["view", "edit", "eval"] if labels["arm"] == "plain" else ["pdb", "view", "edit", "eval"])
    assert labels["origin"] == ("edit" if labels["revision"] else "agent")
    assert labels["model"].startswith("scripted:") and labels["steps"] >= 1 and labels["seconds"] > 0


def test_sft_loads_with_datasets_and_every_label_matches_the_run(run, tmp_path):
    import datasets

    path = export(run, tmp_path / "sft.jsonl", "--format", "sft")
    rows = datasets.load_dataset("json", data_files=str(path), split="train")
    assert len(rows) == 8 and set(rows.column_names) >= {"messages", "tools", "labels"}
    want = expected_labels(run)
    for row in rows:
        labels = row["labels"]
        check_labels(labels, want)
        roles = [m["role"] for m in row["messages"]]
        assert roles[:2] == ["system", "user"] and "assistant" in roles and "tool" in roles
        names = {t["function"]["name"] for t in row["tools"]}
        assert names == set(labels["arm_tools"]) | {"submit"}
    edited = next(r for r in rows if r["labels"]["trial"] == "half__plain__1")
    assert edited["labels"]["origin"] == "edit" and edited["labels"]["approved"]
    assert "+    return a - b" in edited["patch"]
    rejected = next(r for r in rows if r["labels"]["trial"] == "fixed__plain__2")
    assert (rejected["labels"]["verdict"], rejected["labels"]["note"], rejected["labels"]["reviewer"]) == \
        ("reject", "touches more than it should", "ann")


def test_preference_pairs_are_one_task_and_one_prompt_chosen_approved_rejected_worse(run, tmp_path):
    import datasets

    path = export(run, tmp_path / "dpo.jsonl", "--format", "dpo")
    rows = datasets.load_dataset("json", data_files=str(path), split="train")
    pairs = {(r["labels"]["chosen"]["trial"], r["labels"]["rejected"]["trial"]) for r in rows}
    # fixed: plain 1 (approved) against plain 2 (rejected) — the same prompt; the debugger arm's
    # approved fix has no worse twin of its arm (a plain trial's prompt is not its prompt)
    assert pairs == {("fixed__plain__1", "fixed__plain__2")}
    want = expected_labels(run)
    for row in rows:
        chosen, rejected = row["labels"]["chosen"], row["labels"]["rejected"]
        assert chosen["task"] == rejected["task"] == row["labels"]["task"]
        check_labels(chosen, want)
        check_labels(rejected, want)
        assert chosen["status"] == "resolved" and chosen["approved"]
        assert rejected["verdict"] == "reject" or rejected["status"] in ("unresolved", "limit")
        assert [m["role"] for m in row["prompt"]] == ["system", "user"]
        assert row["chosen"][0]["role"] == row["rejected"][0]["role"] == "assistant"


def dpo_export(run_path: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([shutil.which("dgym-tui"), "export", str(run_path), "--format", "dpo", *args],
                          capture_output=True, text=True, timeout=120)


RULE = ("no DPO pairs: pairs are two attempts of one task in one arm (the same prompt), the chosen one "
        "resolved and approved in `dgym-tui review`, the other unresolved or rejected; ")


def test_no_preference_pair_says_which_condition_this_run_fails(run, tmp_path):
    """0 pairs is not an error (exit 0), but the reason is said on stderr in the run's terms: one
    attempt per task and arm, no approved trial with a twin, or no worse trial beside it."""
    from dgym_tui.batch.driver import BatchConfig, run_batch
    from dgym_tui.batch.executors import LocalExecutor
    from dgym_tui.batch.spec import Arm, Task

    repo = calc_repo(tmp_path / "repos" / "calc")
    config = BatchConfig(tasks=str(tmp_path / "repos"), model=write_script(tmp_path / "fix.json", FIX), attempts=1,
                         sandbox="local", yes=True, workers=1, max_steps=6, arms=[Arm("plain", ["view", "edit", "eval"])])
    run_batch(tmp_path / "once", config, [Task(id="calc", repo=str(repo))], LocalExecutor(workers=1),
              write_report=False, reap=False)
    done = dpo_export(tmp_path / "once")
    assert done.returncode == 0 and done.stdout == "", done.stderr
    assert done.stderr.splitlines()[-1] == "dgym-tui export: " + RULE + "this run has 1 attempt per task and arm"

    # the reviewed run: the debugger arm's approved fix has only a resolved, unrejected twin
    done = dpo_export(run.path, "--arm", "debugger")
    assert done.returncode == 0 and done.stdout == "", done.stderr
    assert done.stderr.splitlines()[-1].endswith("every trial beside an approved one is resolved and not "
                                                 "rejected: nothing worse to pair it with"), done.stderr
    done = dpo_export(run.path, "--only", "approved")
    assert done.returncode == 0 and done.stdout == "", done.stderr
    assert done.stderr.splitlines()[-1].endswith(
        "this run has 1 attempt per task and arm (of the trials --only approved keeps)"), done.stderr
    assert "no DPO pairs" not in dpo_export(run.path).stderr  # one pair: nothing to explain


def test_no_pair_without_an_approval_says_so():
    from dgym_tui.review.training import Example, no_pairs_reason, preference_pairs

    def trial(name: str, status: str) -> Example:
        messages = [{"role": "system", "content": "s"}, {"role": "user", "content": "fix calc"},
                    {"role": "assistant", "content": name}]
        return Example(trial=name, task="calc", arm="plain", revision=0, origin="agent", messages=messages,
                       labels={"status": status, "approved": False, "verdict": None})

    found = [trial("a", "resolved"), trial("b", "unresolved")]
    assert not list(preference_pairs(found))
    assert no_pairs_reason(found) == RULE + "none of the 1 resolved trial(s) that have a twin is approved"
    found = [trial("a", "unresolved"), trial("b", "unresolved")]
    assert no_pairs_reason(found) == RULE + "no trial that has a twin is resolved"


def test_sharegpt_and_atif_and_the_filters(run, tmp_path):
    share = [json.loads(line) for line in export(run, tmp_path / "s.jsonl", "--format", "sharegpt").read_text().splitlines()]
    assert len(share) == 8
    for record in share:
        assert {t["from"] for t in record["conversations"]} <= {"human", "gpt", "function_call", "observation"}
        assert record["system"] and record["conversations"][0]["from"] == "human"
        calls = [json.loads(t["value"]) for t in record["conversations"] if t["from"] == "function_call"]
        assert calls and all("name" in c and isinstance(c["arguments"], dict) for c in calls)
        assert {t["name"] for t in json.loads(record["tools"])} == set(record["labels"]["arm_tools"]) | {"submit"}
    atif = [json.loads(line) for line in export(run, tmp_path / "a.jsonl", "--format", "atif").read_text().splitlines()]
    assert len(atif) == 8 and all(r["schema_version"] == "ATIF-v1.4" and r["extra"]["labels"]["trial"] for r in atif)

    def trials(*args):
        out = export(run, tmp_path / "f.jsonl", "--format", "sft", *args)
        return sorted(json.loads(line)["labels"]["trial"] for line in out.read_text().splitlines())

    assert trials("--only", "approved") == ["fixed__debugger__1", "fixed__plain__1", "half__plain__1"]
    assert trials("--only", "unresolved") == ["half__debugger__1", "half__debugger__2", "half__plain__2"]
    assert trials("--arm", "debugger", "--only", "resolved") == ["fixed__debugger__1", "fixed__debugger__2"]
    every = [json.loads(line)["labels"] for line in
             export(run, tmp_path / "r.jsonl", "--format", "sft", "--all-revisions").read_text().splitlines()]
    half = [(lb["revision"], lb["origin"], lb["status"], lb["latest"]) for lb in every if lb["trial"] == "half__plain__1"]
    assert half == [(0, "agent", "unresolved", False), (1, "edit", "resolved", True)]


def test_no_key_and_no_machine_path_is_in_any_export(run, tmp_path):
    sessions = "".join(p.read_text() for p in run.path.glob("trials/*/session.jsonl"))
    assert SECRET in sessions  # the agent read it: the session holds it, the exports must not
    for fmt in ("sft", "sharegpt", "atif", "dpo"):
        text = export(run, tmp_path / f"{fmt}.jsonl", "--format", fmt).read_text()
        assert text, fmt
        assert SECRET not in text and SECRET[::-1] not in text, fmt
        assert "dgym-trial-" not in text and str(run.path.parent) not in text, fmt
        if fmt != "dpo":
            assert "[redacted]" in text, fmt


def test_a_key_of_a_known_shape_is_redacted_where_no_variable_holds_it(run, tmp_path):
    """A user who exports without the key in their environment (another shell, another machine)
    still does not publish the key the agent read in the repo: its shape gives it away."""
    from dgym_tui.review.training import REDACTED, redact

    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "MY_SERVICE_TOKEN")}
    out = tmp_path / "sft.jsonl"
    done = subprocess.run([shutil.which("dgym-tui"), "export", str(run.path), "--format", "sft", "-o", str(out)],
                          env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    text = out.read_text()
    assert SECRET not in text and f"OPENAI_API_KEY={REDACTED}" in text
    shapes = ["ghp_" + "a1B2" * 9, "github_pat_" + "x9" * 20, "hf_" + "Qw3" * 11, "AKIA" + "ABCD2345EFGH6789",
              "AIza" + "S" * 35, "xoxb-1234567890-abcdef", "sk-ant-api03-" + "k" * 30]
    for shape in shapes:
        assert redact(json.dumps({"content": f"token {shape} here"}), []) == \
            json.dumps({"content": f"token {REDACTED} here"}), shape
    assert redact('"skip-this, task-list, hf_x"', []) == '"skip-this, task-list, hf_x"'  # words, not keys


def test_not_a_run_dir_is_one_line(tmp_path):
    done = subprocess.run([shutil.which("dgym-tui"), "export", str(tmp_path), "--format", "sft"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and done.stderr.strip().count("\n") == 0
    assert "not a batch's run directory" in done.stderr


def test_a_failures_task_reads_the_same_whatever_pytest_took():
    from dgym_tui.agent.prompts import task_from_tests
    from dgym_tui.core.events import Tests

    def task(seconds: str) -> str:
        output = (f"F.\n=== FAILURES ===\nE   assert -1 == 5\n=== short test summary info ===\nFAILED t.py::test_add"
                  f"\n========= 1 failed, 1 passed in {seconds} =========\n")
        return task_from_tests(Tests(passed=1, failed=1, errors=0, failing=["t.py::test_add"], output=output, exit_code=1))

    assert task("1.95s") == task("0.31s (0:00:00)")
    assert "========= 1 failed, 1 passed =========" in task("1.95s")


def test_preference_pairs_stay_within_one_role_and_one_question():
    """Seekers' examples pair when the same question was asked in two trials of one task (one fed a
    resolved, approved fix, one did not); never with another question, nor with a fixer's example."""
    from dgym_tui.review.training import Example, preference_pairs

    def seeker(trial: str, question: str, resolved: bool) -> Example:
        messages = [{"role": "system", "content": "You are the seeker."}, {"role": "user", "content": question},
                    {"role": "assistant", "content": f"{trial} looks"}]
        labels = {"role": "seeker", "status": "resolved" if resolved else "unresolved", "approved": resolved,
                  "verdict": "approve" if resolved else None}
        return Example(trial=trial, task="calc", arm="pair", revision=0, origin="agent", labels=labels,
                       messages=messages)

    fixer = seeker("f", "What does add compute?", False)
    fixer.messages[0] = {"role": "system", "content": "You are the fixer."}
    fixer.labels["role"] = "fixer"
    found = [seeker("a", "What does add compute?", True), seeker("b", "What does add compute?", False),
             seeker("c", "Where is sub?", False), fixer]
    pairs = list(preference_pairs(found))
    assert [(p["chosen"][0]["content"], p["rejected"][0]["content"]) for p in pairs] == [("a looks", "b looks")]
    assert pairs[0]["labels"]["chosen"]["role"] == pairs[0]["labels"]["rejected"]["role"] == "seeker"
