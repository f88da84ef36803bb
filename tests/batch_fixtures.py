"""Task sets for the batch's tests, built from scratch in a temp folder, with scripted models
whose outcome is known:

    calc repo      calc.py's add() subtracts (tests/test_calc.py::test_add fails, test_sub passes)
    FIX            edits calc.py and submits                        -> resolved
    GIVE_UP        submits at once                                  -> unresolved
    CHEAT          rewrites the failing test to pass                 -> unresolved, the edit reverted
    WANDER         views files forever                              -> limit (with max_steps)
    SLEEP          `bash sleep 120` (needs yes)                     -> limit by the wall clock

    folder_of_repos(root)    root/{calc_a, calc_b}: two calc repos (git checkouts)
    debug_gym_folder(root)   root/{greeter, calc}: debug-gym's layout, *_code.py next to test.py
    swe_instances(root)      root/instances.jsonl: instances from a local git repo whose later
                             commit holds the fix and a new test (the hidden test patch,
                             carrying HIDDEN_MARKER); FAIL_TO_PASS/PASS_TO_PASS as JSON strings
    toml_task(root)          a folder with task.toml: instructions, must_pass, a hidden test file

Use: `spec_for(task, script=FIX, ...)` gives a TrialSpec on the scripted model; `write_script`
writes any script; `stub_responder({task id: script})` answers many trials at once through
tests/stub_llm_server.py (litellm's real HTTP path). Part B's driver tests and the review's
tests import these.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

HIDDEN_MARKER = "HIDDEN_TEST_MARKER_5b1e"   # only in the hidden tests: grep the agent's session for it

CALC = "def add(a, b):\n    return a - b\n\n\ndef sub(a, b):\n    return a - b\n"
CALC_FIXED = "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n"
CALC_TESTS = ("from calc import add, sub\n\n\ndef test_add():\n    assert add(2, 3) == 5\n\n\n"
              "def test_sub():\n    assert sub(5, 3) == 2\n")

FIX = [
    {"text": "add() subtracts.", "tool_calls": [{"name": "edit", "arguments": {
        "path": "calc.py", "start": 2, "end": 2, "new_code": "    return a + b"}}]},
    {"tool_calls": [{"name": "submit", "arguments": {"message": "add subtracted"}}]},
]
GIVE_UP = [{"tool_calls": [{"name": "submit", "arguments": {"message": "nothing to do"}}]}]
CHEAT = [
    {"tool_calls": [{"name": "edit", "arguments": {
        "path": "tests/test_calc.py", "start": 5, "end": 5, "new_code": "    assert True"}}]},
    {"tool_calls": [{"name": "submit", "arguments": {"message": "the test was wrong"}}]},
]
WANDER = [{"tool_calls": [{"name": "view", "arguments": {"path": "calc.py"}}]}] * 20
SLEEP = [{"tool_calls": [{"name": "bash", "arguments": {"command": "sleep 120", "timeout": 300}}]}]


def git(repo, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t"}
    return subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True, text=True).stdout


def write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def commit_all(repo: Path, message: str = "init") -> str:
    if not (repo / ".git").exists():
        git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", message)
    return git(repo, "rev-parse", "HEAD").strip()


def calc_repo(path: Path, fixed: bool = False) -> Path:
    """The calc repo, a git checkout (add() wrong unless fixed)."""
    write(path, {"calc.py": CALC_FIXED if fixed else CALC, "tests/test_calc.py": CALC_TESTS})
    commit_all(path)
    return path


def folder_of_repos(root: Path, names: tuple[str, ...] = ("calc_a", "calc_b")) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for name in names:
        calc_repo(root / name)
    return root


def debug_gym_folder(root: Path) -> Path:
    """debug-gym's layout: each task a folder with NAME_code.py and test.py (no test_*.py)."""
    write(root / "greeter", {
        "greeter_code.py": "def greet(name):\n    return 'Hello ' + name.upper()\n",
        "test.py": "from greeter_code import greet\n\n\ndef test_greet():\n    assert greet('Ann') == 'Hello Ann'\n",
    })
    write(root / "calc", {
        "calc_code.py": "def add(a, b):\n    return a - b\n",
        "test.py": "from calc_code import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n",
    })
    return root


HIDDEN_TEST = (f"\n\ndef test_add_negative():\n    # {HIDDEN_MARKER}\n    assert add(-2, -3) == -5\n")


def swe_repo(path: Path) -> tuple[Path, str, str]:
    """A git repo: base (add() wrong; tests/test_calc.py without the hidden test), then the fix
    with a new test. Returns (repo, base commit, test patch)."""
    calc_repo(path)
    base = git(path, "rev-parse", "HEAD").strip()
    write(path, {"calc.py": CALC_FIXED, "tests/test_calc.py": CALC_TESTS + HIDDEN_TEST})
    commit_all(path, "fix add; test negatives")
    test_patch = git(path, "diff", base, "HEAD", "--", "tests")
    return path, base, test_patch


def swe_instances(root: Path, count: int = 1, repo_field: str | None = None) -> Path:
    """root/instances.jsonl with `count` instances of the calc repo (repo given relative to the
    file, FAIL_TO_PASS/PASS_TO_PASS as JSON strings, as in SWE-bench's dataset)."""
    root.mkdir(parents=True, exist_ok=True)
    repo, base, test_patch = swe_repo(root / "calc-src")
    lines = []
    for n in range(1, count + 1):
        lines.append(json.dumps({
            "instance_id": f"calc__calc-{n}", "repo": repo_field or "calc-src", "base_commit": base,
            "problem_statement": "add(2, 3) returns -1; it should add its arguments.",
            "test_patch": test_patch,
            "FAIL_TO_PASS": json.dumps(["tests/test_calc.py::test_add", "tests/test_calc.py::test_add_negative"]),
            "PASS_TO_PASS": json.dumps(["tests/test_calc.py::test_sub"]),
        }))
    path = root / "instances.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


def toml_task(root: Path) -> Path:
    """A task folder with task.toml: instructions, must_pass, a hidden test file, a setup command
    that writes a file (no part of the agent's patch), a time limit."""
    write(root, {
        "calc.py": CALC,
        "tests/test_calc.py": CALC_TESTS,
        "hidden/test_hidden.py": f"from calc import add\n\n\ndef test_hidden():\n    # {HIDDEN_MARKER}\n"
                                 "    assert add(1, 1) == 2\n",
        "task.toml": 'instructions = "Make add() add."\n'
                     'must_pass = ["tests/test_calc.py::test_add", "hidden/test_hidden.py::test_hidden"]\n'
                     'pass_to_pass = ["tests/test_calc.py::test_sub"]\n'
                     'hidden = ["hidden/test_hidden.py"]\n'
                     'setup = "echo ready > setup_done.txt"\n'
                     'time_limit = 120\n',
    })
    return root


def write_script(path: Path, steps: list) -> str:
    """A script file for the scripted model; returns the model string."""
    path.write_text(json.dumps({"name": path.stem, "steps": steps}))
    return f"scripted:{path}"


def spec_for(task, tmp: Path, script: list, arm=None, **kwargs):
    """A TrialSpec on a scripted model following `script` (written under tmp). yes defaults to
    True: edits and submit ask under the default policy."""
    from dgym_tui.batch.spec import Arm, TrialSpec

    name = kwargs.pop("script_name", "script")
    model = write_script(tmp / f"{name}-{task.id}.json", script)
    kwargs.setdefault("yes", True)
    kwargs.setdefault("sandbox", "local")
    return TrialSpec(task=task, arm=arm or Arm("all", []), attempt=kwargs.pop("attempt", 1), model=model, **kwargs)


def stub_responder(scripts: dict[str, list[dict]], default: list[dict] | None = None):
    """A response for tests/stub_llm_server.py (push it once per expected request) that serves
    many trials at once, each from its own script: the task is the one whose id the system
    prompt names (a trial's repo folder is named after its task), the step is the number of
    replies already in the conversation. Past a script's end it submits. Stateless, so trials
    may run in any order, in parallel. Steps as the scripted model's ({"text", "tool_calls"});
    a step may add {"delay": seconds} (a slow model)."""
    by_length = sorted(scripts, key=len, reverse=True)  # "calc_b" before "calc"

    def respond(body: dict) -> dict:
        messages = body.get("messages") or []
        system = next((str(m.get("content")) for m in messages if m.get("role") == "system"), "")
        name = next((n for n in by_length if f'"{n}"' in system), None)
        steps = scripts[name] if name is not None else default
        if steps is None:
            return {"status": 400, "message": "stub_responder: no script for this trial's task"}
        step = sum(1 for m in messages if m.get("role") == "assistant")
        if step < len(steps):
            return dict(steps[step])
        return {"tool_calls": [{"name": "submit", "arguments": {"message": "done"}}]}

    return respond
