"""SWE-bench's per-repository, per-version specs (the Python, the packages and pins, the install
step, the test command) and the scripts the harness makes from them.

swebench 5 reads an instance's eval script from the dataset and no longer ships the specs; 4.1.0
is the last release that has them and makes the scripts. It is kept in a folder of its own
(`pip install --no-deps --target DIR swebench==4.1.0`, done here when it is missing) and run in a
child interpreter with that folder first on its path, so it never meets the installed swebench.
Where 4.1.0 would download a requirements file from GitHub at the environment's commit, the child
reads it from the local repository instead: the same text, with no network.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

SPECS_VERSION = "4.1.0"
ENV_VAR = "DGYM_SWEBENCH_SPECS"
SHARED_DIR = Path("/var/cache/dgym-tui") / f"swebench-{SPECS_VERSION}"


class SpecsError(RuntimeError):
    """The specs cannot be had or do not know the instance; str() is one line."""


def specs_dir(install: bool = True) -> Path:
    """The folder holding swebench 4.1.0: $DGYM_SWEBENCH_SPECS, the machine's shared cache (CI
    fills it), else the user's cache, installed there on first use."""
    if os.environ.get(ENV_VAR):
        return _ready(Path(os.environ[ENV_VAR]), install)
    if (SHARED_DIR / "swebench").is_dir():
        return SHARED_DIR
    from platformdirs import user_cache_dir

    return _ready(Path(user_cache_dir("dgym-tui")) / f"swebench-{SPECS_VERSION}", install)


def _ready(folder: Path, install: bool) -> Path:
    if (folder / "swebench").is_dir() or not install:
        return folder
    done = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--disable-pip-version-check", "--no-deps",
                           "--target", str(folder), f"swebench=={SPECS_VERSION}"],
                          capture_output=True, text=True)
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["pip failed"])[-1]
        raise SpecsError(f"cannot install swebench {SPECS_VERSION}'s specs into {folder}: {last}")
    return folder


# The child: swebench 4.1.0 on its own path. Reads {"mode", "records", "repo"} on stdin, prints
# one JSON list: per record its scripts, or {"error"}. One interpreter for a whole task set.
_CHILD = r"""
import json, subprocess, sys
sys.path.insert(0, sys.argv[1])
job = json.load(sys.stdin)
from swebench.harness.constants import MAP_REPO_VERSION_TO_SPECS, SWE_BENCH_URL_RAW

class Reply:
    def __init__(self, text):
        self.status_code, self.text = (200, text) if text is not None else (404, "")

def from_repo(url, headers=None, **_):
    # SWE_BENCH_URL_RAW/owner/name/commit/path -> `git show commit:path` in the local repository
    owner, name, commit, path = url[len(SWE_BENCH_URL_RAW):].split("/", 3)
    done = subprocess.run(["git", "--git-dir", job["repo"], "show", f"{commit}:{path}"], capture_output=True)
    return Reply(done.stdout.decode("utf-8", "replace") if done.returncode == 0 else None)

import swebench.harness.test_spec.python as python_spec
python_spec.requests.get = from_repo
from swebench.harness.test_spec.test_spec import make_test_spec
from swebench.harness.test_spec.create_scripts import make_eval_script_list

def scripts(record):
    specs = MAP_REPO_VERSION_TO_SPECS.get(record["repo"], {}).get(record.get("version"))
    if specs is None:
        return {"error": f"swebench {job['version']} has no spec for {record['repo']} {record.get('version')}"}
    out = {"specs": specs}
    if job["mode"] == "eval":
        lines = make_eval_script_list(record, specs, "testbed", "/testbed", record["base_commit"], record["test_patch"])
        out["eval_script"] = "\n".join(["#!/bin/bash", "set -uxo pipefail"] + lines) + "\n"
    else:
        spec = make_test_spec(record)
        out.update(eval_script=spec.eval_script, repo_script_list=spec.repo_script_list,
                   env_script_list=spec.env_script_list)
        if specs.get("packages") == "requirements.txt":
            out["requirements"] = python_spec.get_requirements(record)
        elif specs.get("packages") == "environment.yml":
            out["environment"] = python_spec.get_environment_yml(record, "testbed")
    return out

print(json.dumps([scripts(record) for record in job["records"]]))
"""


_FIELDS = ("instance_id", "repo", "version", "base_commit", "test_patch", "environment_setup_commit",
           "FAIL_TO_PASS", "PASS_TO_PASS")


def harness_scripts(record: dict, git_dir: str | None = None, eval_only: bool = False) -> dict:
    """What swebench 4.1.0 makes for the instance: {"specs", "eval_script"} and, unless eval_only,
    "repo_script_list", "env_script_list" and "requirements" or "environment" (read from git_dir, a local git
    repository of the instance's repo). SpecsError: no spec, or the child failed."""
    [out] = _run_child([record], git_dir, "eval" if eval_only else "all")
    if "error" in out:
        raise SpecsError(f"{record.get('instance_id')}: {out['error']}")
    return out


def eval_scripts(records: list[dict]) -> dict[str, str]:
    """instance_id -> the eval script swebench's specs make for it, for every record that has a
    spec, all made by one child (a task set of hundreds would otherwise start hundreds)."""
    outs = _run_child(records, None, "eval")
    return {r["instance_id"]: out["eval_script"] for r, out in zip(records, outs) if "eval_script" in out}


def _run_child(records: list[dict], git_dir: str | None, mode: str) -> list[dict]:
    job = {"mode": mode, "records": [{k: r[k] for k in _FIELDS if k in r} for r in records],
           "repo": git_dir or "", "version": SPECS_VERSION}
    done = subprocess.run([sys.executable, "-I", "-c", _CHILD, str(specs_dir())], input=json.dumps(job),
                          capture_output=True, text=True, timeout=300 + 5 * len(records))
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["it failed"])[-1]
        who = records[0].get("instance_id") if len(records) == 1 else f"{len(records)} instances"
        raise SpecsError(f"{who}: swebench {SPECS_VERSION} could not make the scripts: {last}")
    outs = json.loads(done.stdout.strip().splitlines()[-1])
    for record, out in zip(records, outs):
        if "eval_script" in out:
            out["eval_script"] = reset_no_files(out["eval_script"], record["base_commit"])
    return outs


def reset_no_files(script: str, base_commit: str) -> str:
    """The eval script with its test-file reset made harmless when the test patch only adds files:
    swebench 4.1.0's Python script then runs a bare `git checkout BASE`, which leaves the image's
    "SWE-bench" commit (the spec's edits: sphinx's `pytest -rA` in tox.ini) for the base itself, and
    the run's passing tests are no longer listed (sphinx-8595 validated 0/0). swebench's own script
    for other languages resets nothing then, as here."""
    bare = re.compile(rf"^git checkout {re.escape(base_commit)}\s*$", re.M)
    return bare.sub('echo "No test files to reset"', script)


_TABLE = r"""
import json, sys
sys.path.insert(0, sys.argv[1])
from swebench.harness.constants import MAP_REPO_VERSION_TO_SPECS
print(json.dumps({repo: {version: {"python": str(spec.get("python") or ""), "test_cmd": bool(spec.get("test_cmd"))}
                         for version, spec in versions.items()} for repo, versions in MAP_REPO_VERSION_TO_SPECS.items()}))
"""


def spec_table() -> dict:
    """repo -> version -> {"python": "3.9", "test_cmd": True}: every spec swebench 4.1.0 has."""
    done = subprocess.run([sys.executable, "-I", "-c", _TABLE, str(specs_dir())], capture_output=True, text=True,
                          timeout=120)
    if done.returncode != 0:
        raise SpecsError(f"swebench {SPECS_VERSION}'s specs could not be read: "
                         f"{(done.stderr.strip().splitlines() or ['it failed'])[-1]}")
    return json.loads(done.stdout)


def coverage(records: list[dict]) -> dict[str, dict[str, int]]:
    """Per repository: how many instances get pdb (their spec's Python is 3.6 or newer and it has
    a test command for pdb to run), and how many do not, by why."""
    from collections import Counter, defaultdict

    table = spec_table()
    out: dict[str, Counter] = defaultdict(Counter)
    for record in records:
        repo, version = record.get("repo"), str(record.get("version"))
        spec = table.get(repo, {}).get(version)
        out[repo]["instances"] += 1
        if spec is None:
            out[repo]["no spec"] += 1
        elif not spec["test_cmd"]:
            out[repo]["no test command"] += 1
        elif tuple(int(x) for x in spec["python"].split(".")[:2]) < (3, 6):
            out[repo][f"Python {spec['python']}"] += 1
        else:
            out[repo]["pdb"] += 1
    return {repo: dict(counts) for repo, counts in sorted(out.items())}
