"""`--tests eval` and `--tests visible` for a SWE-bench instance in its own environment image
(the offline image of tests/test_swebench.py: a small repository at /testbed, a conda-like
environment, the harness's eval script and log parser). A real Docker engine."""

from __future__ import annotations

import json

import pytest

from batch_fixtures import FIX, HIDDEN_MARKER, spec_for
from dgym_tui.batch.spec import Arm
from dgym_tui.batch.tasks import load_tasks
from dgym_tui.batch.trial import run_trial

pytestmark = pytest.mark.docker
pytest.importorskip("swebench", reason="the swebench extra: pip install 'dgym-tui[swebench]' (.ci/run does)")

from test_swebench import instance  # noqa: E402,F401  (the image, built once for this module)

F2P = ["tests/test_calc.py::test_add", "tests/test_calc.py::test_add_negative"]
STATUS = {"tool_calls": [{"name": "bash", "arguments": {"command": "git status --porcelain; echo end"}}]}


def _events(out) -> list[dict]:
    return [json.loads(line) for line in out.session.splitlines()[1:]]


def _observations(out) -> list[tuple[str, str]]:
    return [(e["data"]["tool"], e["data"]["observation"]) for e in _events(out) if e["kind"] == "tool_result"]


def test_eval_mode_in_the_image(instance, tmp_path):  # noqa: F811
    path, _image = instance
    [task] = load_tasks(path)
    script = [{"tool_calls": [{"name": "eval", "arguments": {}}]}, STATUS, *FIX]
    out = run_trial(spec_for(task, tmp_path, script, arm=Arm("a", ["eval", "bash", "edit"]), sandbox="docker",
                             tests="eval"))
    r = out.result
    assert r["status"] == "resolved" and r["tests"] == "eval", (r["reason"], r["error"])
    seen = _observations(out)
    assert seen[0][0] == "eval" and "tests/test_calc.py::test_add_negative" in seen[0][1], seen[0][1]
    assert HIDDEN_MARKER in seen[0][1] and "pytest's output" in seen[0][1]
    assert seen[1][1].strip() == "end", seen[1][1]  # git status clean after the run
    assert "test_add_negative" not in out.patch and "calc.py" in out.patch


def test_visible_mode_in_the_image_first_stop_is_the_failing_test(instance, tmp_path):  # noqa: F811
    path, _image = instance
    [task] = load_tasks(path)
    view = {"tool_calls": [{"name": "view", "arguments": {"path": "tests/test_calc.py"}}]}
    out = run_trial(spec_for(task, tmp_path, [STATUS, view, *FIX], sandbox="docker", tests="visible"))
    r = out.result
    assert r["status"] == "resolved" and r["tests"] == "visible", (r["reason"], r["error"])
    stops = [e["data"] for e in _events(out) if e["kind"] == "stop"]
    assert stops and stops[0]["reason"] == "post_mortem" and stops[0]["test"] in F2P, stops[:1]
    seen = _observations(out)
    assert seen[0][1].strip() == "end" and HIDDEN_MARKER in seen[1][1]  # in the baseline: no change to show
    assert [ln for ln in out.patch.splitlines() if ln.startswith("diff ")] == ["diff --git a/calc.py b/calc.py"]
