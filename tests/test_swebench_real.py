"""Real SWE-bench instances end to end, from a fresh clone (issue 43), their code from the package
index at test time (tests/swebench_real.py): requests 2.27.0 + 2.27.1's fix (psf/requests#6028;
swebench's spec: Python 3.9, pytest, `pip install .`) and Django 3.0 + 3.0.1's fix of ticket #31061
(Python 3.6, tests/requirements/py3.txt, `pip install -e .`, tests/runtests.py). Each environment
image is built here with no conda and no registry by `dgym-tui image swebench`; FAIL_TO_PASS and
PASS_TO_PASS are computed by the harness's own eval script and log parser; `dgym-tui batch` runs a
pdb arm and a no-pdb arm with no flag naming the image: the scripted model reproduces the bug, stops
in the failing code with b/c/p on the instance's own Python, applies the gold patch, and
swebench's get_eval_report grades both arms resolved; an empty patch is unresolved. A real Docker
engine."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.docker
pytest.importorskip("swebench", reason="the swebench extra: pip install 'dgym-tui[swebench]' (.ci/run does)")

TOOLS = "view,listdir,grep,eval,edit,bash,submit"
IMPORT_REPO = "import sys\nsys.path.insert(0, '/testbed')  # the repository's code, not an installed copy\n"
CASES = {
    "requests": {
        "make": "requests_instance", "python": "(3, 9)", "min_p2p": 150,
        "image": "swebench/sweb.eval.x86_64.psf_1776_requests-v2.27.1:latest",
        "f2p": ["tests/test_utils.py::test_prepend_scheme_if_needed[http://user:pass@example.com/path?query-"
                "http://user:pass@example.com/path?query]",
                "tests/test_utils.py::test_prepend_scheme_if_needed[http://user@example.com/path?query-"
                "http://user@example.com/path?query]"],
        "repro": IMPORT_REPO + "from requests.utils import prepend_scheme_if_needed\n"
                               "print(prepend_scheme_if_needed('http://user:pass@example.com/path?query', 'http'))\n",
        "before": "http://example.com/path?query", "after": "http://user:pass@example.com/path?query",
        "break": "requests/utils.py:977", "function": "prepend_scheme_if_needed", "print": "auth, netloc",
        "printed": "('user:pass', 'example.com')",
    },
    "django": {
        "make": "django_instance", "python": "(3, 6)", "min_p2p": 20,
        "image": "swebench/sweb.eval.x86_64.django_1776_django-v3.0.1-31061:latest",
        "f2p": ["test_re_path_with_missing_optional_parameter (urlpatterns.tests.SimplifiedURLTests)"],
        "repro": IMPORT_REPO + "from django.urls.resolvers import RegexPattern\n"
                               "print(RegexPattern(r'^regex_only_optional/(?:(?P<arg1>\\d+)/)?').match("
                               "'regex_only_optional/'))\n",
        "before": "('', (None,), {})", "after": "('', (), {})",
        "break": "django/urls/resolvers.py:162", "function": "match", "print": "kwargs, match.groups()",
        "printed": "({}, (None,))",
    },
}


def _dgym(*args: str, timeout: float = 1200) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "dgym_tui", *args], capture_output=True, text=True,
                          timeout=timeout)


@pytest.fixture(scope="module", params=list(CASES))
def instance(request, tmp_path_factory):
    """(the instances file with the harness's FAIL_TO_PASS/PASS_TO_PASS, as `--validate` wrote it,
    --repos DIR, that record, the case)."""
    import swebench_real
    from conftest import require_docker

    require_docker()
    case = CASES[request.param]
    root = tmp_path_factory.mktemp(f"swebench-{request.param}")
    repos = root / "repos"
    record = getattr(swebench_real, case["make"])(repos)
    path = root / "instances.jsonl"
    path.write_text(json.dumps(record) + "\n")
    checked = root / "validated.jsonl"
    built = _dgym("image", "swebench", str(path), "--repos", str(repos), "--validate", str(checked))
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-2000:]
    # validating leaves no container behind (a second one per instance was made and never removed)
    import docker

    assert not docker.from_env().containers.list(all=True, filters={"label": f"dgym-tui.instance={record['instance_id']}"})
    lines = built.stdout.strip().splitlines()
    [counted] = [line for line in lines if line.startswith(f"[1/1] {record['instance_id']}: FAIL_TO_PASS ")]
    said = next(line for line in lines if line.startswith(f"{record['instance_id']}: {case['image']} "))
    print(f"\n{said}\n{counted}")
    # the report's row and the logs kept beside OUT
    [row] = [json.loads(line) for line in Path(f"{checked}.report.jsonl").read_text().splitlines()]
    assert row["status"] == "validated" and row["testbed"] == "history" and 0 < row["own"] < row["size"], row
    logs = Path(f"{checked}.logs") / record["instance_id"]
    assert {p.name for p in logs.iterdir()} == {"build.log", "before.log", "after.log"}
    [valid] = [json.loads(line) for line in checked.read_text().splitlines()]
    return checked, repos, valid, case


def test_the_image_is_the_specs_environment_built_offline(instance):
    import docker

    _path, _repos, record, case = instance
    client = docker.from_env()
    module = record["repo"].split("/")[1]
    out = client.containers.run(case["image"], ["bash", "-c", (
        "source /opt/miniconda3/bin/activate && conda activate testbed && cd / && "
        f"python -c 'import sys, {module}; print(sys.version_info[:2], {module}.__file__)' && cd /testbed && "
        "git log --format=%H -n 2 && git status --short --untracked-files=no | wc -l && pip download -q six 2>&1 "
        "| tail -1")], network_mode="none", remove=True, user="0").decode()
    lines = out.strip().splitlines()
    # the spec's Python, with the repository installed as its install step does it
    where = {"requests": "/opt/miniconda3/envs/testbed/lib/python3.9/site-packages/requests/__init__.py",  # pip install .
             "django": "/testbed/django/__init__.py"}[module]  # pip install -e .
    assert lines[0] == f"{case['python']} {where}", out
    # swebench's setup script ran as it does: its commit on top of the base, the tree clean
    assert lines[2] == record["base_commit"] and lines[3] == "0", out
    assert "six" in lines[-1]  # pip there reads only the wheels the image was built with


def test_the_harness_computes_fail_to_pass_and_pass_to_pass(instance):
    _path, _repos, record, case = instance
    f2p = case["f2p"]
    assert json.loads(record["FAIL_TO_PASS"]) == f2p  # the tests the next release added, as SWE-bench lists them
    p2p = json.loads(record["PASS_TO_PASS"])
    assert len(p2p) > case["min_p2p"] and not set(p2p) & set(f2p)


def _script(tmp_path: Path, record: dict, case: dict) -> Path:
    steps = [
        {"tool_calls": [{"name": "eval", "arguments": {}}]},
        {"text": "Reproduce the issue.", "tool_calls": [{"name": "bash", "arguments": {
            "command": f"cat > /tmp/repro.py <<'EOF'\n{case['repro']}EOF\npython /tmp/repro.py"}}]},
        {"with_tool": "pdb", "then": {"tool_calls": [{"name": "pdb", "arguments": {
            "command": f"b {case['break']}", "entrypoint": "python /tmp/repro.py"}}]}},
        {"with_tool": "pdb", "then": {"tool_calls": [{"name": "pdb", "arguments": {"command": "c"}}]}},
        {"with_tool": "pdb", "then": {"tool_calls": [{"name": "pdb", "arguments": {"command": f"p {case['print']}"}}]}},
        {"text": "Found it: the fix.", "tool_calls": [{"name": "bash", "arguments": {
            "command": f"git apply <<'EOF_GOLD'\n{record['patch']}EOF_GOLD\npython /tmp/repro.py"}}]},
        {"tool_calls": [{"name": "submit", "arguments": {"message": "fixed"}}]},
    ]
    path = tmp_path / "gold.json"
    path.write_text(json.dumps(steps))
    return path


def _observations(session: Path) -> list[tuple[str, str]]:
    events = [json.loads(line) for line in session.read_text().splitlines()[1:]]
    return [(e["data"]["tool"], e["data"]["observation"]) for e in events if e["kind"] == "tool_result"]


def test_both_arms_resolve_with_the_gold_patch_and_pdb_stops_in_the_failing_code(instance, tmp_path):
    path, repos, record, case = instance
    out = tmp_path / "run"
    done = _dgym("batch", str(path), "--repos", str(repos), "--model", f"scripted:{_script(tmp_path, record, case)}",
                 "--out", str(out), "--arm", f"with-pdb=pdb,{TOOLS}", "--arm", f"no-pdb={TOOLS}", "--yes",
                 "--workers", "2")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    results = {json.loads(line)["arm"]: json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()}
    for arm in ("with-pdb", "no-pdb"):
        r = results[arm]
        assert r["status"] == "resolved", (arm, r["reason"], r.get("error"))
        assert r["reason"] == "every FAIL_TO_PASS and PASS_TO_PASS test passes (SWE-bench's harness)"
        assert r["fail_to_pass"] == {t: "passed" for t in case["f2p"]}
    pdb_trial = out / "trials" / f"{record['instance_id']}__with-pdb__1" / "session.jsonl"
    seen = _observations(pdb_trial)
    pdb = [o for tool, o in seen if tool == "pdb"]
    file, line = case["break"].split(":")
    assert f"Breakpoint 1 at {case['break']}" in pdb[0], pdb[0]  # the repo's file, not an installed copy
    assert f"> {file}({line}){case['function']}()" in pdb[1], pdb[1]
    assert f"Pdb command output:\n{case['printed']}\n" in pdb[2], pdb[2]  # on the instance's own Python
    bash = [o for tool, o in seen if tool == "bash"]
    assert bash[0].strip() == case["before"] and bash[1].strip().endswith(case["after"]), bash
    no_pdb = _observations(out / "trials" / f"{record['instance_id']}__no-pdb__1" / "session.jsonl")
    assert [tool for tool, _ in no_pdb] == ["eval", "bash", "bash", "submit"]


def test_visible_tests_the_first_stop_is_the_failing_tests_post_mortem(instance, tmp_path):
    """--tests visible (debug-gym's swebench-debug): the test patch in the baseline, pdb on the
    FAIL_TO_PASS tests; its first stop is one of them failing. The gold patch still resolves it,
    the test patch applied once, by the harness."""
    path, repos, record, case = instance
    script = tmp_path / "gold-visible.json"
    script.write_text(json.dumps([
        {"tool_calls": [{"name": "bash", "arguments": {
            "command": f"git apply <<'EOF_GOLD'\n{record['patch']}EOF_GOLD\ngit status --porcelain"}}]},
        {"tool_calls": [{"name": "submit", "arguments": {"message": "fixed"}}]}]))
    out = tmp_path / "run"
    done = _dgym("batch", str(path), "--repos", str(repos), "--model", f"scripted:{script}", "--out", str(out),
                 "--arm", f"with-pdb=pdb,{TOOLS}", "--yes", "--tests", "visible")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    [r] = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert r["status"] == "resolved" and r["tests"] == "visible", (r["reason"], r.get("error"))
    trial = out / "trials" / f"{record['instance_id']}__with-pdb__1"
    events = [json.loads(line) for line in (trial / "session.jsonl").read_text().splitlines()[1:]]
    # what pdb showed before the agent's first step: a runner script's stop at its first line
    # (Django's runtests.py, as raw pdb's), then the failing test's post-mortem, where it is left
    first_call = next(n for n, e in enumerate(events) if e["kind"] == "tool_result")
    stops = [e["data"] for e in events[:first_call] if e["kind"] == "stop"]
    assert stops and all(s["reason"] == "start" for s in stops[:-1]), [s["reason"] for s in stops]
    # pytest's node ids as they are; unittest's (Django) `test (module.Class)` as its dotted id
    named = {t if "::" in t else "{1}.{0}".format(*t.rstrip(")").split(" (")) for t in case["f2p"]}
    assert stops[-1]["reason"] == "post_mortem" and stops[-1]["test"] in named, stops[-1]
    patched = [ln for ln in (trial / "patch.diff").read_text().splitlines() if ln.startswith("diff --git")]
    assert patched and not set(patched) & {ln for ln in record["test_patch"].splitlines() if ln.startswith("diff --git")}


def test_an_empty_patch_is_unresolved(instance, tmp_path):
    path, repos, _record, case = instance
    script = tmp_path / "give-up.json"
    script.write_text(json.dumps([{"tool_calls": [{"name": "submit", "arguments": {"message": "nothing"}}]}]))
    out = tmp_path / "run"
    done = _dgym("batch", str(path), "--repos", str(repos), "--model", f"scripted:{script}", "--out", str(out),
                 "--arm", f"no-pdb={TOOLS}", "--yes")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    [r] = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert r["status"] == "unresolved", r
    assert r["fail_to_pass"] == {t: "failed" for t in case["f2p"]}


def test_what_cannot_be_had_is_said_in_one_line_and_nothing_is_built(tmp_path):
    from swebench_real import requests_instance

    repos = tmp_path / "repos"
    path = tmp_path / "instances.jsonl"
    path.write_text(json.dumps(requests_instance(repos)) + "\n")
    env = {**os.environ, "PYENV_ROOT": str(tmp_path / "no-pyenv"), "DGYM_PYTHON_39": ""}
    done = subprocess.run([sys.executable, "-m", "dgym_tui", "image", "swebench", str(path), "--repos", str(repos),
                           "--rebuild"], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 1
    failed = [line.split("] ", 1)[1] for line in done.stdout.splitlines() if line.startswith("[") and "] FAILED " in line]
    assert failed == ["FAILED psf__requests-v2.27.1: Python 3.9 is needed and this machine has none that can be "
                      "copied into an image (pyenv install 3.9, or set DGYM_PYTHON_39 to one)"], done.stdout
    missing = _dgym("image", "swebench", str(path), "--repos", str(tmp_path / "elsewhere"))
    assert missing.returncode == 1 and "no clone of psf/requests under" in missing.stdout


def test_a_package_with_no_release_for_the_specs_python_is_named_in_one_line(tmp_path):
    """numpy 2 needs Python 3.9 or newer: asked for on 3.6, the build stops naming it."""
    from dgym_tui.batch.swebench_image import BuildError, build_wheels, find_python, wheel_builder

    python = find_python("3.6")
    builder = wheel_builder(python, "3.6", progress=lambda line: None)
    (tmp_path / "wheels").mkdir()
    with pytest.raises(BuildError) as caught:
        build_wheels(builder, [["six"], ["numpy==2.0.0"]], tmp_path / "wheels", tmp_path / "cache",
                     progress=lambda line: None)
    assert str(caught.value) == "numpy==2.0.0: no release of it installs on Python 3.6 here"


@pytest.mark.parametrize("sig", ["SIGTERM", "SIGINT"])
def test_a_validation_stopped_by_a_signal_leaves_no_container_and_goes_on_next_time(instance, tmp_path, sig):
    import signal
    import time

    import docker

    checked, repos, valid, case = instance
    client = docker.from_env()
    label = {"label": f"dgym-tui.instance={valid['instance_id']}"}
    out = tmp_path / "again.jsonl"
    proc = subprocess.Popen([sys.executable, "-m", "dgym_tui", "image", "swebench", str(checked), "--repos", str(repos),
                             "--validate", str(out)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 300
    while time.time() < deadline and proc.poll() is None and not client.containers.list(filters=label):
        time.sleep(0.2)
    assert client.containers.list(filters=label), "the validation never started its container"
    started = time.monotonic()
    proc.send_signal(getattr(signal, sig))
    _, stderr = proc.communicate(timeout=60)
    assert time.monotonic() - started < 30 and proc.returncode != 0
    assert "stopped; the report holds what finished" in stderr, stderr
    assert not client.containers.list(all=True, **{"filters": label})
    # the validation its stop cut short is no result: not written as "failed" (its container gone
    # under it, it ended "'NoneType' object has no attribute 'id'"), so the next run does it
    report = out.parent / (out.name + ".report.jsonl")
    rows = [json.loads(line) for line in report.read_text().splitlines()] if report.exists() else []
    assert not [r for r in rows if r["instance_id"] == valid["instance_id"]], rows
