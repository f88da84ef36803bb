"""Task sets read as they are (batch/tasks.py). Real git; no sandbox. (pytest's outcomes by node
id: tests/test_test_runs.py.)"""

from __future__ import annotations

import json
import subprocess

import pytest

from batch_fixtures import (HIDDEN_MARKER, calc_repo, debug_gym_folder, folder_of_repos, git, swe_instances,
                            toml_task)
from dgym_tui.batch.tasks import TaskSetError, load_tasks, patched_files


def test_a_folder_of_repos_is_one_task_per_repo(tmp_path):
    root = folder_of_repos(tmp_path / "set")
    (root / "notes").mkdir()  # no Python inside: not a task
    (root / "notes" / "README.md").write_text("x")
    tasks = load_tasks(root)
    assert [t.id for t in tasks] == ["calc_a", "calc_b"]
    assert tasks[0].repo == str(root / "calc_a")
    assert tasks[0].entrypoint is None  # detected in the sandbox, as `dgym-tui REPO` does
    assert tasks[0].test_files == ["tests/test_calc.py"]
    assert tasks[0].base_commit is None and tasks[0].problem is None


def test_a_repo_given_alone_is_one_task(tmp_path):
    repo = calc_repo(tmp_path / "calc")
    assert [t.id for t in load_tasks(repo)] == ["calc"]


def test_debug_gym_folders_run_their_test_py(tmp_path):
    tasks = load_tasks(debug_gym_folder(tmp_path / "mini"))
    assert [t.id for t in tasks] == ["calc", "greeter"]
    assert all(t.entrypoint == "pytest test.py" and t.test_files == ["test.py"] for t in tasks)


def test_swe_bench_instances(tmp_path):
    path = swe_instances(tmp_path / "swe", count=2)
    tasks = load_tasks(path)
    assert [t.id for t in tasks] == ["calc__calc-1", "calc__calc-2"]
    task = tasks[0]
    assert task.repo == str(tmp_path / "swe" / "calc-src")
    assert task.base_commit == git(tmp_path / "swe" / "calc-src", "rev-parse", "HEAD~1").strip()
    assert task.fail_to_pass == ["tests/test_calc.py::test_add", "tests/test_calc.py::test_add_negative"]
    assert task.pass_to_pass == ["tests/test_calc.py::test_sub"]
    assert HIDDEN_MARKER in task.test_patch and task.test_files == ["tests/test_calc.py"]
    assert task.problem.startswith("add(2, 3)") and task.source == f"{path}:1"


def test_swe_bench_as_one_json_list_with_plain_lists(tmp_path):
    path = swe_instances(tmp_path / "swe")
    record = json.loads(path.read_text().splitlines()[0])
    record["FAIL_TO_PASS"] = json.loads(record["FAIL_TO_PASS"])
    listed = tmp_path / "swe" / "set.json"
    listed.write_text(json.dumps([record]))
    assert load_tasks(listed)[0].fail_to_pass == record["FAIL_TO_PASS"]


def test_a_remote_repo_is_cloned_once_into_the_cache(tmp_path):
    path = swe_instances(tmp_path / "swe", count=2, repo_field=f"file://{tmp_path / 'swe' / 'calc-src'}")
    tasks = load_tasks(path, cache=tmp_path / "cache")
    clones = list((tmp_path / "cache").iterdir())
    assert len(clones) == 1 and clones[0].name.endswith(".git")
    assert tasks[0].repo == tasks[1].repo == str(clones[0])
    assert subprocess.run(["git", "-C", tasks[0].repo, "cat-file", "-e", tasks[0].base_commit]).returncode == 0


@pytest.mark.parametrize("line, says", [
    ("{not json", "instances.jsonl:2: not a JSON object"),
    ('{"instance_id": "x", "repo": "nowhere", "base_commit": "abc"}', "instances.jsonl:2: repo nowhere: no such folder"),
    ('{"instance_id": "x", "repo": "calc-src"}', "instances.jsonl:2: missing base_commit"),
    ('{"instance_id": "x", "repo": "calc-src", "base_commit": "0123456789"}', "instances.jsonl:2: base_commit 0123456789 is not a commit"),
    ('{"instance_id": "x", "repo": "calc-src", "base_commit": "HEAD", "FAIL_TO_PASS": "[oops"}', "instances.jsonl:2: FAIL_TO_PASS is a string but not a JSON list"),
    ("[1, 2]", "instances.jsonl:2: an instance is a JSON object, not list"),
])
def test_a_bad_instance_is_one_line_naming_its_line(tmp_path, line, says):
    path = swe_instances(tmp_path / "swe")
    path.write_text(path.read_text() + line + "\n")
    with pytest.raises(TaskSetError) as caught:
        load_tasks(path)
    message = str(caught.value)
    assert says in message and "\n" not in message


def test_a_missing_task_set_and_an_empty_folder(tmp_path):
    with pytest.raises(TaskSetError, match="no such file or folder"):
        load_tasks(tmp_path / "nope")
    (tmp_path / "empty").mkdir()
    with pytest.raises(TaskSetError, match="no tasks here"):
        load_tasks(tmp_path / "empty")


def test_task_toml_overrides_what_is_detected(tmp_path):
    task = load_tasks(toml_task(tmp_path / "t"))[0]
    assert task.id == "t" and task.problem == "Make add() add."
    assert task.fail_to_pass == ["tests/test_calc.py::test_add", "hidden/test_hidden.py::test_hidden"]
    assert task.pass_to_pass == ["tests/test_calc.py::test_sub"]
    assert list(task.hidden_files) == ["hidden/test_hidden.py"] and HIDDEN_MARKER in task.hidden_files["hidden/test_hidden.py"]
    assert task.time_limit == 120.0 and task.setup == "echo ready > setup_done.txt"


@pytest.mark.parametrize("toml, says", [
    ('colour = "red"\n', "unknown key colour"),
    ('hidden = ["../x.py"]\n', "hidden file '../x.py' is not a file of the task's folder"),
    ('time_limit = -1\n', "time_limit must be a positive number"),
    ('entrypoint = "make all"\n', "entrypoint: cannot tell how to run"),
    ('must_pass = "tests"\n', "must_pass must be a list of strings"),
    ('must_pass = [\n', "task.toml: "),
])
def test_a_bad_task_toml_names_its_file(tmp_path, toml, says):
    folder = calc_repo(tmp_path / "t")
    (folder / "task.toml").write_text(toml)
    with pytest.raises(TaskSetError) as caught:
        load_tasks(folder)
    assert says in str(caught.value) and str(folder / "task.toml") in str(caught.value)


def test_ids_are_file_name_safe_and_unique(tmp_path):
    path = swe_instances(tmp_path / "swe")
    record = json.loads(path.read_text().splitlines()[0])
    lines = [json.dumps({**record, "instance_id": name}) for name in ("a/b c", "a/b c", "A-B-C", "../..")]
    path.write_text("\n".join(lines))
    assert [t.id for t in load_tasks(path)] == ["a-b-c", "a-b-c-2", "A-B-C-3", "task"]


def test_patched_files():
    patch = ("diff --git a/tests/test_x.py b/tests/test_x.py\n--- a/tests/test_x.py\n+++ b/tests/test_x.py\n"
             "diff --git a/new.py b/new.py\nnew file mode 100644\n--- /dev/null\n+++ b/new.py\n")
    assert patched_files(patch) == ["tests/test_x.py", "new.py"]
