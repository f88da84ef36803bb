"""A real SWE-bench instance end to end, from a fresh clone (issue 43): requests 2.27.0's sdist
from the package index is the base, 2.27.1's real fix (psf/requests#6028) the gold patch
(tests/swebench_real.py). Its environment image is built here with no conda and no registry by
`dgym-tui image swebench` (swebench's spec: Python 3.9, pytest, `pip install .`); FAIL_TO_PASS and
PASS_TO_PASS are computed by the harness's own eval script and log parser; `dgym-tui batch` runs a
pdb arm and a no-pdb arm on it with no flag naming the image, and swebench's get_eval_report grades
them: the gold patch resolved in both, an empty patch unresolved. A real Docker engine."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.docker
pytest.importorskip("swebench", reason="the swebench extra: pip install 'dgym-tui[swebench]' (.ci/run does)")

F2P = ["tests/test_utils.py::test_prepend_scheme_if_needed[http://user:pass@example.com/path?query-"
       "http://user:pass@example.com/path?query]",
       "tests/test_utils.py::test_prepend_scheme_if_needed[http://user@example.com/path?query-"
       "http://user@example.com/path?query]"]
TOOLS = "view,listdir,grep,eval,edit,bash,submit"
REPRO = ("import sys\nsys.path.insert(0, '/testbed')  # the repository's code, not the installed copy\n"
         "from requests.utils import prepend_scheme_if_needed\n"
         "print(prepend_scheme_if_needed('http://user:pass@example.com/path?query', 'http'))\n")


def _dgym(*args: str, timeout: float = 1200) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "dgym_tui", *args], capture_output=True, text=True,
                          timeout=timeout)


@pytest.fixture(scope="module")
def instance(tmp_path_factory):
    """(the instances file with the harness's FAIL_TO_PASS/PASS_TO_PASS, --repos DIR, the record)."""
    from conftest import require_docker
    from swebench_real import requests_instance

    require_docker()
    root = tmp_path_factory.mktemp("swebench-real")
    repos = root / "repos"
    record = requests_instance(repos)
    path = root / "instances.jsonl"
    path.write_text(json.dumps(record) + "\n")
    built = _dgym("image", "swebench", str(path), "--repos", str(repos))
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-2000:]
    last = built.stdout.strip().splitlines()[-1]
    assert last.startswith(f"{record['instance_id']}: swebench/sweb.eval.x86_64.psf_1776_requests-v2.27.1:latest "), last
    print(f"\n{last}")
    from dgym_tui.batch.swebench_image import validate

    valid = validate(record)
    statuses = valid.pop("statuses")
    path.write_text(json.dumps(valid) + "\n")
    return path, repos, valid, statuses


def test_the_image_is_the_specs_environment_built_offline(instance):
    import docker

    _path, _repos, record, _ = instance
    client = docker.from_env()
    image = "swebench/sweb.eval.x86_64.psf_1776_requests-v2.27.1:latest"
    out = client.containers.run(image, ["bash", "-c", (
        "source /opt/miniconda3/bin/activate && conda activate testbed && cd / && "
        "python -c 'import sys, requests, pytest; print(sys.version_info[:2], requests.__version__, "
        "requests.__file__)' && cd /testbed && git log --format=%H -n 2 && git status --short --untracked-files=no | wc -l && pip download -q six 2>&1 "
        "| tail -1")], network_mode="none", remove=True, user="0").decode()
    lines = out.strip().splitlines()
    # the spec's Python; `pip install .` put the base's requests in the environment (not editable)
    assert lines[0].startswith("(3, 9) 2.27.0 /opt/miniconda3/envs/testbed/lib/python3.9/site-packages/requests/"), out
    # swebench's setup script ran as it does: its commit on top of the base, the tree clean
    assert lines[2] == record["base_commit"] and lines[3] == "0", out
    assert "six" in lines[-1]  # pip there reads only the wheels the image was built with


def test_the_harness_computes_fail_to_pass_and_pass_to_pass(instance):
    _path, _repos, record, statuses = instance
    assert json.loads(record["FAIL_TO_PASS"]) == F2P  # the two tests 2.27.1 added, as SWE-bench lists them
    p2p = json.loads(record["PASS_TO_PASS"])
    assert len(p2p) > 150 and not set(p2p) & set(F2P)
    assert all(statuses["before"][t] == "FAILED" for t in F2P)
    assert all(statuses["after"][t] == "PASSED" for t in F2P + p2p)


def _script(tmp_path: Path, record: dict) -> Path:
    steps = [
        {"tool_calls": [{"name": "eval", "arguments": {}}]},
        {"text": "Reproduce the issue.", "tool_calls": [{"name": "bash", "arguments": {
            "command": f"cat > /tmp/repro.py <<'EOF'\n{REPRO}EOF\npython /tmp/repro.py"}}]},
        {"with_tool": "pdb", "then": {"tool_calls": [{"name": "pdb", "arguments": {
            "command": "b requests/utils.py:977", "entrypoint": "python /tmp/repro.py"}}]}},
        {"with_tool": "pdb", "then": {"tool_calls": [{"name": "pdb", "arguments": {"command": "c"}}]}},
        {"with_tool": "pdb", "then": {"tool_calls": [{"name": "pdb", "arguments": {"command": "p auth, netloc"}}]}},
        {"text": "The auth is parsed but never put back: the fix.", "tool_calls": [{"name": "bash", "arguments": {
            "command": f"git apply <<'EOF_GOLD'\n{record['patch']}EOF_GOLD\npython /tmp/repro.py"}}]},
        {"tool_calls": [{"name": "submit", "arguments": {"message": "auth kept in the netloc"}}]},
    ]
    path = tmp_path / "gold.json"
    path.write_text(json.dumps(steps))
    return path


def _observations(session: Path) -> list[tuple[str, str]]:
    events = [json.loads(line) for line in session.read_text().splitlines()[1:]]
    return [(e["data"]["tool"], e["data"]["observation"]) for e in events if e["kind"] == "tool_result"]


def test_both_arms_resolve_with_the_gold_patch_and_pdb_stops_in_the_failing_code(instance, tmp_path):
    path, repos, record, _ = instance
    out = tmp_path / "run"
    done = _dgym("batch", str(path), "--repos", str(repos), "--model", f"scripted:{_script(tmp_path, record)}",
                 "--out", str(out), "--arm", f"with-pdb=pdb,{TOOLS}", "--arm", f"no-pdb={TOOLS}", "--yes",
                 "--workers", "2")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    results = {json.loads(line)["arm"]: json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()}
    for arm in ("with-pdb", "no-pdb"):
        r = results[arm]
        assert r["status"] == "resolved", (arm, r["reason"], r.get("error"))
        assert r["reason"] == "every FAIL_TO_PASS and PASS_TO_PASS test passes (SWE-bench's harness)"
        assert r["fail_to_pass"] == {t: "passed" for t in F2P}
    pdb_trial = out / "trials" / f"{record['instance_id']}__with-pdb__1" / "session.jsonl"
    seen = _observations(pdb_trial)
    pdb = [o for tool, o in seen if tool == "pdb"]
    assert "Breakpoint 1 at requests/utils.py:977" in pdb[0], pdb[0]  # the repo's file, not site-packages'
    assert "> requests/utils.py(977)prepend_scheme_if_needed()" in pdb[1], pdb[1]
    assert "Pdb command output:\n('user:pass', 'example.com')\n" in pdb[2], pdb[2]  # on the instance's own Python 3.9
    bash = [o for tool, o in seen if tool == "bash"]
    assert bash[0].strip() == "http://example.com/path?query" and bash[1].strip().endswith(
        "http://user:pass@example.com/path?query")
    no_pdb = _observations(out / "trials" / f"{record['instance_id']}__no-pdb__1" / "session.jsonl")
    assert [tool for tool, _ in no_pdb] == ["eval", "bash", "bash", "submit"]


def test_an_empty_patch_is_unresolved(instance, tmp_path):
    path, repos, _record, _ = instance
    script = tmp_path / "give-up.json"
    script.write_text(json.dumps([{"tool_calls": [{"name": "submit", "arguments": {"message": "nothing"}}]}]))
    out = tmp_path / "run"
    done = _dgym("batch", str(path), "--repos", str(repos), "--model", f"scripted:{script}", "--out", str(out),
                 "--arm", f"no-pdb={TOOLS}", "--yes")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    [r] = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert r["status"] == "unresolved", r
    assert r["fail_to_pass"] == {t: "failed" for t in F2P}


def test_what_cannot_be_had_is_said_in_one_line_and_nothing_is_built(instance, tmp_path):
    path, repos, _record, _ = instance
    env = {**os.environ, "PYENV_ROOT": str(tmp_path / "no-pyenv"), "DGYM_PYTHON_39": ""}
    done = subprocess.run([sys.executable, "-m", "dgym_tui", "image", "swebench", str(path), "--repos", str(repos),
                           "--rebuild"], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 1
    failed = [line for line in done.stdout.splitlines() if line.startswith("FAILED")]
    assert failed == ["FAILED psf__requests-v2.27.1: Python 3.9 is needed and this machine has none that can be "
                      "copied into an image (pyenv install 3.9, or set DGYM_PYTHON_39 to one)"], done.stdout
    missing = _dgym("image", "swebench", str(path), "--repos", str(tmp_path))
    assert missing.returncode == 1 and "no clone of psf/requests under" in missing.stdout
