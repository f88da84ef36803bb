"""SWE-bench as its users run it (batch/swebench.py, through the official swebench package): an
instance in its own environment image, its repository at /testbed, its environment active, the
harness's test command and log parser, scored by swebench's own grading; predictions the harness
reads as they are. Offline: the instance image is built here, FROM the sandbox's base, and named
as swebench names it; the instance has the dataset's real field shapes (lists as JSON strings,
version, environment_setup_commit, the eval script with its markers). A real Docker engine."""

from __future__ import annotations

import io
import os
import json
import tarfile

import pytest

from batch_fixtures import FIX, GIVE_UP, HIDDEN_MARKER, spec_for, swe_repo
from dgym_tui.batch.tasks import load_tasks
from dgym_tui.batch.trial import run_trial

pytestmark = pytest.mark.docker
swebench = pytest.importorskip("swebench", reason="the swebench extra: pip install 'dgym-tui[swebench]' (.ci/run does)")

INSTANCE = "acme__calc-1"
BASE_IMAGE = "dgym-tui-base:offline"
# A conda-like environment, as SWE-bench's images have one: `source /opt/miniconda3/bin/activate`
# then `conda activate testbed` puts the env's python (a venv here) first on PATH; the repository
# is installed in it as `pip install -e .` would (a .pth file naming /testbed), with its own pytest.
DOCKERFILE = f"""\
FROM {BASE_IMAGE}
RUN python3 -m venv --system-site-packages --without-pip /opt/miniconda3/envs/testbed \\
 && mkdir -p /opt/miniconda3/bin \\
 && printf '%s\\n' 'conda() {{ [ "$1" = activate ] && . "/opt/miniconda3/envs/$2/bin/activate"; }}' \\
      > /opt/miniconda3/bin/activate \\
 && echo /testbed > /opt/miniconda3/envs/testbed/lib/python3.11/site-packages/testbed.pth \\
 && printf '#!/opt/miniconda3/envs/testbed/bin/python\\nimport sys, pytest\\nsys.exit(pytest.console_main())\\n' \\
      > /opt/miniconda3/envs/testbed/bin/pytest && chmod 755 /opt/miniconda3/envs/testbed/bin/pytest
COPY testbed /testbed
WORKDIR /testbed
"""


def eval_script(base: str, test_patch: str, test_files: list[str], test_cmd: str) -> str:
    """An eval script of the harness's shape (swebench's make_eval_script_list for Python repos)."""
    files = " ".join(test_files)
    return "\n".join([
        "#!/bin/bash", "set -uxo pipefail", "source /opt/miniconda3/bin/activate", "conda activate testbed",
        "cd /testbed", "git config --global --add safe.directory /testbed", "cd /testbed", "git status", "git show",
        f"git -c core.fileMode=false diff {base}", "source /opt/miniconda3/bin/activate", "conda activate testbed",
        f"git checkout {base} {files}", f"git apply -v - <<'EOF_114329324912'\n{test_patch}\nEOF_114329324912",
        ": '>>>>> Start Test Output'", f"{test_cmd} {files}", ": '>>>>> End Test Output'",
        f"git checkout {base} {files}"]) + "\n"


@pytest.fixture(scope="module")
def instance(tmp_path_factory):
    """(the instances' JSONL, the image's name): the image built once for the module."""
    from conftest import require_docker
    from swebench.task.checks import expected_image

    client = require_docker()
    root = tmp_path_factory.mktemp("swebench")
    repo, base, test_patch = swe_repo(root / "calc-src")
    gold = _git(repo, "diff", base, "HEAD", "--", "calc.py")
    image = expected_image(INSTANCE)  # swebench/sweb.eval.x86_64.acme_1776_calc-1:latest
    context = root / "context"
    (context / "testbed").mkdir(parents=True)
    _git(repo, "checkout", "-q", base)
    _git(repo, "clone", "-q", str(repo), str(context / "testbed"))
    _git(context / "testbed", "checkout", "-q", base)
    _git(context / "testbed", "remote", "remove", "origin")  # as SWE-bench's images: no way to the future
    (context / "Dockerfile").write_text(DOCKERFILE)
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        tar.add(context, arcname=".")
    buffer.seek(0)
    for chunk in client.api.build(fileobj=buffer, custom_context=True, tag=image, network_mode="none", rm=True,
                                  decode=True):
        assert "error" not in chunk, chunk
    record = {
        "repo": "acme/calc", "instance_id": INSTANCE, "base_commit": base, "patch": gold, "test_patch": test_patch,
        "problem_statement": "add(2, 3) returns -1; it should add its arguments.", "hints_text": "",
        "created_at": "2026-11-27T00:00:00Z", "version": "1.0",
        "FAIL_TO_PASS": json.dumps(["tests/test_calc.py::test_add", "tests/test_calc.py::test_add_negative"]),
        "PASS_TO_PASS": json.dumps(["tests/test_calc.py::test_sub"]), "environment_setup_commit": base,
        "eval_script": eval_script(base, test_patch, ["tests/test_calc.py"], "pytest -rA"),
        "log_parser": "parse_log_pytest", "eval_type": "pass_and_fail",
    }
    path = root / "instances.jsonl"
    path.write_text(json.dumps(record) + "\n")
    yield path, image
    if not os.environ.get("DGYM_KEEP_IMAGE"):
        client.images.remove(image, force=True)


def _git(repo, *args) -> str:
    from batch_fixtures import git

    return git(repo, *args)


def test_an_instance_reads_into_its_own_environment(instance):
    path, image = instance
    [task] = load_tasks(path)
    env = task.environment
    assert env["image"] == image == "swebench/sweb.eval.x86_64.acme_1776_calc-1:latest"
    assert env["workdir"] == "/testbed" and env["activate"].splitlines() == [
        "source /opt/miniconda3/bin/activate", "conda activate testbed"]
    assert env["test_command"] == "pytest -rA tests/test_calc.py"
    assert task.repo == "acme/calc"  # nothing cloned: the repository is the image's
    assert task.fail_to_pass == ["tests/test_calc.py::test_add", "tests/test_calc.py::test_add_negative"]
    # a template names another image; one that is nowhere falls back, saying so in one line
    [templated] = load_tasks(path, image_template="registry.local/sweb.eval.x86_64.{id_1776}:v2")
    assert templated.environment["image"] == "registry.local/sweb.eval.x86_64.acme_1776_calc-1:v2"


def test_an_instance_is_run_and_scored_as_the_harness_does(instance, tmp_path):
    path, _image = instance
    [task] = load_tasks(path)
    look_then_fix = [{"tool_calls": [{"name": "eval", "arguments": {}}]},
                     {"tool_calls": [{"name": "bash", "arguments": {"command": "pwd; which python; git log --oneline | wc -l"}}]},
                     {"tool_calls": [{"name": "pdb", "arguments": {"command": "p add(2, 3)"}}]},
                     *FIX]
    out = run_trial(spec_for(task, tmp_path, look_then_fix, sandbox="docker"))
    r = out.result
    assert r["status"] == "resolved", (r["reason"], r["error"])
    assert r["reason"] == "every FAIL_TO_PASS and PASS_TO_PASS test passes (SWE-bench's harness)"
    assert r["fail_to_pass"] == {"tests/test_calc.py::test_add": "passed", "tests/test_calc.py::test_add_negative": "passed"}
    assert r["pass_to_pass"] == {"tests/test_calc.py::test_sub": "passed"}
    assert r["tests_before"] == {"passed": 1, "failed": 2, "errors": 0}  # the eval script at the base
    assert r["tests_after"] == {"passed": 3, "failed": 0, "errors": 0}
    events = [json.loads(line) for line in out.session.splitlines()[1:]]
    ready = next(e["data"] for e in events if e["kind"] == "sandbox_ready")
    assert ready["root"] == "/testbed" and "swebench/sweb.eval.x86_64.acme_1776_calc-1" in ready["description"]
    observations = [e["data"]["observation"] for e in events if e["kind"] == "tool_result"]
    # eval ran the harness's command in the env; the shell was at /testbed with the env's python
    assert "1 passed" in observations[0] and "1 failed" in observations[0], observations[0]
    assert observations[1].splitlines()[:2] == ["/testbed", "/opt/miniconda3/envs/testbed/bin/python"], observations[1]
    assert "-1" in observations[2]  # pdb on the env's Python (3.11 here)
    assert HIDDEN_MARKER.encode() not in out.session
    assert "calc.py" in out.patch and "tests/" not in out.patch


def test_an_unresolved_instance_names_its_failing_tests(instance, tmp_path):
    path, _image = instance
    [task] = load_tasks(path)
    out = run_trial(spec_for(task, tmp_path, GIVE_UP, sandbox="docker"))
    r = out.result
    assert (r["status"], r["error"]) == ("unresolved", None), r
    assert r["reason"].startswith("not passing: tests/test_calc.py::test_add failed"), r["reason"]
    assert r["fail_to_pass"]["tests/test_calc.py::test_add_negative"] == "failed"


def test_a_batch_of_the_instance_exports_predictions_the_harness_reads(instance, tmp_path):
    """A batch through the driver, its trial approved in the review, `--export-preds` read by
    swebench's own loader: the patch is the trial's, under the instance's id."""
    from batch_fixtures import write_script
    from dgym_tui.batch.driver import BatchConfig, run_batch
    from dgym_tui.batch.executors import LocalExecutor
    from dgym_tui.batch.spec import Arm
    from dgym_tui.batch.swebench import export_is_harness_input
    from dgym_tui.commands.review import main as review_main
    from dgym_tui.review import reviews
    from dgym_tui.review.inbox import RunDir

    path, _image = instance
    tasks = load_tasks(path)
    model = write_script(tmp_path / "fix.json", FIX)
    config = BatchConfig(tasks=str(path), model=model, arms=[Arm("no-pdb", ["view", "edit", "eval"])],
                         sandbox="docker", yes=True, workers=1)
    out = tmp_path / "run"
    run = run_batch(out, config, tasks, LocalExecutor(workers=1))
    assert [r.status for r in run.results] == ["resolved"], run.results
    inbox = RunDir.open(out)
    [trial] = inbox.sorted_trials()
    reviews.record(inbox.path, trial.id, "approve", trial.patch_sha256)
    preds = tmp_path / "preds.jsonl"
    assert review_main([str(out), "--export-preds", str(preds)]) == 0
    [pred] = export_is_harness_input(preds)
    assert pred["instance_id"] == INSTANCE and pred["model_patch"] == (out / "trials" / trial.id / "patch.diff").read_text()
    summary = (out / "summary.md").read_text()
    assert "| no-pdb | 1 | 0 | 0 | 0 | 100.0% |" in summary


def test_without_the_extra_an_instance_runs_as_before_and_says_so(tmp_path, monkeypatch):
    from dgym_tui.batch import swebench as sw

    monkeypatch.setattr(sw, "installed", lambda: False)
    root = tmp_path / "set"
    repo, base, test_patch = swe_repo(root / "calc-src")
    record = {"repo": "calc-src", "instance_id": "acme__calc-2", "base_commit": base, "test_patch": test_patch,
              "version": "1.0", "environment_setup_commit": base,
              "FAIL_TO_PASS": json.dumps(["tests/test_calc.py::test_add"]), "PASS_TO_PASS": "[]"}
    path = root / "i.jsonl"
    path.write_text(json.dumps(record) + "\n")
    [task] = load_tasks(path)
    assert task.environment is None and task.repo == str(repo)
    assert "swebench package is not installed (pip install 'dgym-tui[swebench]')" in task.note
