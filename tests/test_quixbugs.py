"""A QuixBugs checkout as a task set (batch/quixbugs.py): one task per program, holding only what
its test needs, never the corrected programs. The checkout here is written in the benchmark's own
layout (CI has no copy of it); trials are real: local sandbox, pdb, pytest, scoring."""

from __future__ import annotations

import json
import os

from batch_fixtures import spec_for, write
from dgym_tui.batch.tasks import load_tasks
from dgym_tui.batch.trial import run_trial

LOAD_TESTDATA = '''import json
from pathlib import Path


def load_json_testcases(algorithm):
    root = Path(__file__).parent / ".."
    with open(root / f"json_testcases/{algorithm}.json") as data_file:
        return [json.loads(line) for line in data_file]
'''
CONFTEST = '''import pytest


def pytest_addoption(parser):
    parser.addoption("--correct", action="store_true")
    parser.addoption("--runslow", action="store_true")


def pytest_configure(config):
    pytest.use_correct = config.getoption("--correct")
    pytest.run_slow = config.getoption("--runslow")
'''
GCD = "\ndef gcd(a, b):\n    if b == 0:\n        return a\n    else:\n        return gcd(a % b, b)\n"
GCD_FIXED = "\ndef gcd(a, b):\n    if b == 0:\n        return a\n    else:\n        return gcd(b, a % b)\n"
TEST_GCD = '''import pytest
from load_testdata import load_json_testcases

if pytest.use_correct:
    from correct_python_programs.gcd import gcd
else:
    from python_programs.gcd import gcd

testdata = load_json_testcases(gcd.__name__)


@pytest.mark.parametrize("input_data,expected", testdata)
def test_gcd(input_data, expected):
    assert gcd(*input_data) == expected
'''
REVERSE = ("def reverse_linked_list(node):\n    prevnode = None\n    while node:\n"
           "        nextnode = node.successor\n        node.successor = prevnode\n        node = nextnode\n"
           "    return prevnode\n")
TEST_REVERSE = '''import pytest
from node import Node

if pytest.use_correct:
    from correct_python_programs.reverse_linked_list import reverse_linked_list
else:
    from python_programs.reverse_linked_list import reverse_linked_list


def test1():
    node2 = Node(2)
    node1 = Node(1, node2)
    assert reverse_linked_list(node1).value == 2
'''
NODE = "class Node:\n    def __init__(self, value=None, successor=None):\n        self.value = value\n        self.successor = successor\n"


def checkout(root):
    return write(root, {
        "conftest.py": CONFTEST,
        "python_programs/gcd.py": GCD,
        "python_programs/reverse_linked_list.py": REVERSE,
        "python_programs/reverse_linked_list_test.py": "from .reverse_linked_list import reverse_linked_list\n",
        "python_programs/node.py": NODE,
        "python_programs/untested.py": "def f():\n    return 1\n",
        "python_testcases/load_testdata.py": LOAD_TESTDATA,
        "python_testcases/node.py": NODE,
        "python_testcases/test_gcd.py": TEST_GCD,
        "python_testcases/test_reverse_linked_list.py": TEST_REVERSE,
        "json_testcases/gcd.json": "[[35, 21], 7]\n[[31, 0], 31]\n",
        "correct_python_programs/gcd.py": GCD_FIXED,
        "correct_python_programs/reverse_linked_list.py": REVERSE,
        "README.md": "QuixBugs\n",
    })


def files_of(folder) -> set[str]:
    return {os.path.relpath(os.path.join(d, f), folder) for d, _, fs in os.walk(folder) for f in fs}


def test_each_tested_program_is_a_task_with_only_what_its_test_needs(tmp_path):
    root = checkout(tmp_path / "QuixBugs")
    tasks = load_tasks(root, cache=tmp_path / "cache")
    assert [t.id for t in tasks] == ["gcd", "reverse_linked_list"]  # untested.py is no task
    gcd = tasks[0]
    assert gcd.entrypoint == "pytest python_testcases/test_gcd.py"
    assert gcd.test_files == ["python_testcases/test_gcd.py"]
    assert files_of(gcd.repo) == {"conftest.py", "python_programs/gcd.py", "python_programs/node.py",
                                  "python_testcases/test_gcd.py", "python_testcases/load_testdata.py",
                                  "python_testcases/node.py", "json_testcases/gcd.json"}
    assert "reverse_linked_list" not in str(files_of(tasks[0].repo))
    assert not any("correct" in f for t in tasks for f in files_of(t.repo))  # never the answer
    # read again: the same folders; the checkout changed: a new one, the old one as it was
    assert [t.repo for t in load_tasks(root, cache=tmp_path / "cache")] == [t.repo for t in tasks]
    (root / "json_testcases/gcd.json").write_text("[[35, 21], 7]\n")
    again = load_tasks(root, cache=tmp_path / "cache")[0]
    assert again.repo != gcd.repo and (os.path.getsize(f"{again.repo}/json_testcases/gcd.json")
                                       < os.path.getsize(f"{gcd.repo}/json_testcases/gcd.json"))
    assert (root / "python_programs/gcd.py").read_text() == GCD  # the checkout is never written


def test_a_quixbugs_task_is_resolved_by_its_one_line_fix_and_not_without_it(tmp_path):
    tasks = load_tasks(checkout(tmp_path / "QuixBugs"), cache=tmp_path / "cache")
    fix = [{"text": "The arguments are swapped.", "tool_calls": [{"name": "edit", "arguments": {
               "path": "python_programs/gcd.py", "start": 6, "end": 6, "new_code": "        return gcd(b, a % b)"}}]},
           {"tool_calls": [{"name": "submit", "arguments": {"message": "gcd's recursion swapped its arguments"}}]}]
    out = run_trial(spec_for(tasks[0], tmp_path, fix))
    r = out.result
    assert r["status"] == "resolved", json.dumps(r, default=str)[:3000]
    # its failing test found by running it: the recursion that never ends is a failure, not a hang
    assert r["tests_before"]["failed"] == 1 and r["tests_before"]["passed"] == 1, r["tests_before"]
    assert "python_programs/gcd.py" in out.patch and b"correct_python_programs" not in out.session
    unfixed = run_trial(spec_for(tasks[1], tmp_path, fix[1:], script_name="give-up"))
    assert unfixed.result["status"] == "unresolved", json.dumps(unfixed.result, default=str)[:3000]
