"""Every repository and version in swebench's specs gets a debug entrypoint (issue 42): the
harness's test command, whatever its runner (pytest, Django's tests/runtests.py, sympy's bin/test,
tox), is what pdb runs (core/environment.debug_command), on the spec's Python when it is 3.6 or
newer. The specs are swebench 4.1.0's (5.x no longer ships them), installed apart by .ci/run."""

from __future__ import annotations

import collections
import json
import os
import subprocess
import sys

import pytest

from dgym_tui.core.entrypoint import parse_entrypoint
from dgym_tui.core.environment import debug_command
from dgym_tui.sandbox.interpreter import MIN_VERSION

SPECS_DIR = os.environ.get("DGYM_SWEBENCH_SPECS", "/var/cache/dgym-tui/swebench-4.1.0")
# A test file named after the command, as the harness's eval script adds its directives.
DIRECTIVE = {"django/django": "admin_views.tests", "sympy/sympy": "sympy/core/tests/test_basic.py",
             "swe-bench/humaneval": "test.py"}


def _specs() -> list[dict]:
    if not os.path.isdir(os.path.join(SPECS_DIR, "swebench")):
        if os.environ.get("CI"):
            pytest.fail(f"{SPECS_DIR} missing: .ci/run installs swebench 4.1.0's specs there")
        pytest.skip(f"no swebench 4.1.0 specs at {SPECS_DIR} (.ci/run installs them)")
    code = ("import json, sys; sys.path.insert(0, sys.argv[1])\n"
            "from swebench.harness.constants.python import MAP_REPO_VERSION_TO_SPECS_PY as M\n"
            "print(json.dumps([{'repo': r, 'version': v, 'python': s.get('python'), 'test_cmd': s.get('test_cmd')}"
            " for r, vs in M.items() for v, s in vs.items()]))")
    out = subprocess.run([sys.executable, "-I", "-c", code, SPECS_DIR], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def test_every_spec_gets_a_debug_entrypoint():
    specs = _specs()
    assert len(specs) > 250  # 300 repo-versions in 4.1.0: the walk saw them all
    covered, left_out = collections.Counter(), {}
    for spec in specs:
        key = f"{spec['repo']} {spec['version']}"
        python = tuple(int(x) for x in str(spec["python"]).split(".")[:2])
        commands = spec["test_cmd"] if isinstance(spec["test_cmd"], list) else [spec["test_cmd"]]
        if commands == [None]:
            left_out[key] = "the spec has no test command (swebench cannot run it either)"
            continue
        if python < MIN_VERSION:
            left_out[key] = f"Python {spec['python']}"
            continue
        for command in commands:
            line = f"{command} {DIRECTIVE.get(spec['repo'], 'tests/test_x.py')}"
            spec_text = debug_command(line)
            assert spec_text is not None, (key, line)
            entry = parse_entrypoint(spec_text)
            assert entry.kind in ("pytest", "script"), (key, entry)
            if entry.kind == "script":  # the runner script itself, with the harness's arguments
                assert entry.target in ("./tests/runtests.py", "bin/test", "test.py"), (key, entry)
                assert [entry.target, *entry.args][-1] == DIRECTIVE[spec["repo"]], (key, entry)
            covered[spec["repo"]] += 1
    reasons = collections.Counter(left_out.values())
    print(f"\nswebench specs with a debug entrypoint: {sum(covered.values())} of {len(specs)}; left out: "
          + ", ".join(f"{n} ({why})" for why, n in reasons.items()))
    # Only Pythons older than 3.6 and the specs with no test command are left out.
    assert set(left_out.values()) <= {"the spec has no test command (swebench cannot run it either)", "Python 3.5"}
    assert covered["django/django"] and covered["sympy/sympy"] and covered["sphinx-doc/sphinx"]


def test_the_runners_of_swebench_become_what_pdb_runs():
    assert parse_entrypoint(debug_command(
        "./tests/runtests.py --verbosity 2 --settings=test_sqlite --parallel 1 admin_views.tests")).shim_args() == [
        "./tests/runtests.py", "--verbosity", "2", "--settings=test_sqlite", "--parallel", "1", "admin_views.tests"]
    sympy = parse_entrypoint(debug_command("PYTHONWARNINGS='ignore::UserWarning,ignore::SyntaxWarning' bin/test -C "
                                           "--verbose sympy/core/tests/test_basic.py"))
    assert sympy.shim_args() == ["bin/test", "-C", "--verbose", "sympy/core/tests/test_basic.py"]
    assert sympy.env == (("PYTHONWARNINGS", "ignore::UserWarning,ignore::SyntaxWarning"),)
    assert parse_entrypoint(debug_command("tox --current-env -epy39 -v -- tests/test_build.py")).shim_args() == [
        "--pytest", "tests/test_build.py"]


def test_coverage_says_per_repository_which_instances_get_pdb_and_why_not(tmp_path):
    _specs()  # skips (or fails in CI) without the specs, as above
    rows = [("django/django", "3.0"), ("django/django", "3.0"), ("django/django", "2.2"), ("sympy/sympy", "1.9"),
            ("dbt-labs/dbt-core", "0.13"), ("sympy/sympy", "0.1")]
    path = tmp_path / "instances.jsonl"
    path.write_text("".join(json.dumps({"instance_id": f"x__y-{n}", "repo": repo, "version": version}) + "\n"
                            for n, (repo, version) in enumerate(rows)))
    out = subprocess.run([sys.executable, "-m", "dgym_tui", "image", "swebench", str(path), "--coverage"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[2:] == [
        "| dbt-labs/dbt-core | 1 | 0 | 1 no test command |",
        "| django/django | 3 | 2 | 1 Python 3.5 |",
        "| sympy/sympy | 2 | 1 | 1 no spec |",
        "| all | 6 | 3 | 3 |"]


def test_a_test_patch_that_only_adds_files_resets_nothing():
    """swebench 4.1.0's Python eval script resets the test files with `git checkout BASE FILES`;
    with no file to reset that is `git checkout BASE`, which leaves the image's SWE-bench commit
    (sphinx's `-rA` in tox.ini): the script made here resets nothing then, and keeps the rest."""
    from dgym_tui.batch.swebench_specs import harness_scripts

    base = "b19bce971e82f2497d67fdacdeca8db08ae0ba56"
    added = ("diff --git a/tests/test_new.py b/tests/test_new.py\nnew file mode 100644\n--- /dev/null\n"
             "+++ b/tests/test_new.py\n@@ -0,0 +1 @@\n+def test_new(): pass\n")
    record = {"instance_id": "sphinx-doc__sphinx-8595", "repo": "sphinx-doc/sphinx", "version": "3.5",
              "base_commit": base, "test_patch": added}
    script = harness_scripts(record, eval_only=True)["eval_script"]
    lines = script.splitlines()
    assert not [line for line in lines if line.strip() == f"git checkout {base}"]
    assert lines.count('echo "No test files to reset"') == 2
    assert any(line.startswith("tox --current-env -epy39 -v -- tests/test_new.py") for line in lines)
    changed = added.replace("new file mode 100644\n--- /dev/null", "--- a/tests/test_new.py")
    script = harness_scripts({**record, "test_patch": changed}, eval_only=True)["eval_script"]
    assert script.splitlines().count(f"git checkout {base} tests/test_new.py") == 2
