"""A task whose code lives in an image (a SWE-bench instance: /testbed in its environment image),
opened by a person rather than a batch: `dgym-tui --task FILE ID`, and a trial's replay and
take-over in the review inbox. The session is the one a trial of the task gets
(trial.open_session): the instance's image, its folder, its test command, the same `--tests`
modes; a session file's header carries the task (`task`, `tests`), so a take-over of its replay
starts in the same image again.

Its repo on the host is an empty folder named after the task (the code is the image's): the
session's name, and where its session files are kept. The final change of such a session is
rebuilt on the host from its checkpoints over the image's own files (patch_of).
"""

from __future__ import annotations

import json
from pathlib import Path

from dgym_tui.batch.spec import Task

HEADER_KEYS = ("task", "tests")


class InstanceError(ValueError):
    """The instance cannot be opened; str() is one line naming the file and the id."""


# --- finding it -----------------------------------------------------------------------------------


def find(path: str | Path, task_id: str, check_image=None) -> Task:
    """The task `task_id` of `path`: a SWE-bench JSON-lines (or JSON list) file of the dataset's
    rows, or a batch's tasks.jsonl. check_image(name) -> bool: whether its image is there or can
    be pulled (None: not checked). InstanceError: no such file or id, or no image to run it in."""
    from dgym_tui.batch.tasks import TaskSetError, read_instance

    path = Path(path).expanduser()
    try:
        record, where = _record(path, task_id)
        if "instance_id" in record:  # the dataset's row: read as a batch reads it
            task = read_instance(record, where, path.parent, check_image=check_image, image_only=True)
        else:  # a batch's tasks.jsonl: the task as the batch ran it
            known = set(Task.__dataclass_fields__)
            task = Task.from_dict({k: v for k, v in record.items() if k in known})
            image = (task.environment or {}).get("image")
            if image and check_image is not None and not check_image(image):
                raise InstanceError(f"{where}: its image {image} is not on this Docker engine and cannot be pulled "
                                    "(dgym-tui image swebench builds it here)")
    except (TaskSetError, TypeError) as e:
        raise InstanceError(str(e)) from None
    if task.environment is None:
        why = task.note or f"{where}: {task_id} names no environment image"
        raise InstanceError(f"{why} (--task opens instances that run in their own image; "
                            "a repository of your own opens as `dgym-tui REPO`)")
    return task


def _record(path: Path, task_id: str) -> tuple[dict, str]:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise InstanceError(f"{path}: cannot read it: {e}") from None
    if text.lstrip().startswith("["):
        try:
            rows = [(str(path), r) for r in json.loads(text)]
        except json.JSONDecodeError as e:
            raise InstanceError(f"{path}: not JSON: {e}") from None
    else:
        rows = []
        for number, line in enumerate(text.splitlines(), 1):
            if not line.strip() or line.lstrip().startswith("#") or task_id not in line:
                continue
            try:
                rows.append((f"{path}:{number}", json.loads(line)))
            except json.JSONDecodeError as e:
                raise InstanceError(f"{path}:{number}: not a JSON object: {e.msg}") from None
    for where, row in rows:
        if isinstance(row, dict) and task_id in (row.get("instance_id"), row.get("id")):
            return row, where
    raise InstanceError(f"{path}: no instance {task_id!r} in it")


# --- its session ----------------------------------------------------------------------------------


def home(task: Task) -> Path:
    """The instance's empty folder on the host (its name is the session's; its sessions are
    listed under it): in the data folder, made if need be."""
    from dgym_tui.batch.tasks import safe_id
    from dgym_tui.core.session_file import sessions_dir

    folder = sessions_dir().parent / "instances" / safe_id(task.id)
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def session_options(task: Task, tests: str = "hidden", tools: dict | None = None) -> dict:
    """A Session's keywords for the task, beside its repo: its environment (the image, the
    folder, the test command; `tests` as batch's --tests), its entrypoint, its per-test limit and
    tools (eval mode: eval runs with the task's tests added). As trial.open_session makes them."""
    from dgym_tui.batch.scoring import test_timeout_of
    from dgym_tui.batch.swebench import session_environment
    from dgym_tui.batch.test_modes import hidden_tests

    debugger = tools is None or "pdb" in tools
    if tests == "eval":
        from dgym_tui.tools import registry
        from dgym_tui.tools.eval import EvalTool

        if tools is None:  # every tool, each described beside the others (as trial.arm_tools has them)
            every = registry()
            tools = {name: tool.fitted(frozenset(every)) for name, tool in every.items()}
        tools = dict(tools)
        if "eval" in tools:
            tools["eval"] = EvalTool.with_hidden_tests(hidden_tests(task))
    return {"environment": session_environment(task, tests), "entrypoint": task.entrypoint,
            "test_timeout": test_timeout_of(task), "tools": tools, "debugger": debugger}


# What the session file never holds: the hidden tests (a session is exported, shared, trained on).
HIDDEN = ("test_patch", "fail_to_pass", "pass_to_pass", "hidden_files")


def header(task: Task, tests: str = "hidden") -> dict:
    """What a session file's header says of the instance (SessionWriter.open's extra keys): the
    task without its hidden tests (and its environment without the harness's record, which holds
    them), and where it came from, to be read whole again."""
    record = {k: v for k, v in task.to_dict().items() if k not in HIDDEN}
    if isinstance(record.get("environment"), dict):
        record["environment"] = {k: v for k, v in record["environment"].items() if k != "instance"}
    return {"task": record, "tests": tests}


def from_header(head: dict) -> tuple[Task, str] | None:
    """The instance a session file's header names, as the header has it, its hidden tests read
    again from its source file where that is still there (else none), and its tests mode; None
    for any other session (or a task that runs in no image)."""
    record = head.get("task")
    if not isinstance(record, dict) or not isinstance(record.get("environment"), dict):
        return None
    tests = str(head.get("tests") or "hidden")
    whole = {"fail_to_pass": [], "pass_to_pass": []}
    source = str(record.get("source") or "").rsplit(":", 1)[0]
    if source and Path(source).is_file() and record.get("id"):
        try:  # the hidden tests from the source; everything else as the header has it
            whole = find(source, str(record["id"])).to_dict()
        except (InstanceError, OSError, ValueError):
            pass
    merged = {**whole, **record, "environment": {**(whole.get("environment") or {}), **record["environment"]}}
    known = set(Task.__dataclass_fields__)
    try:
        task = Task.from_dict({k: v for k, v in merged.items() if k in known})
    except TypeError:
        return None
    return task, tests


def resume_options(head: dict) -> dict:
    """Session.resume's keywords for a recorded session of an instance (its image again, an
    empty folder as its repo): {} for any other session."""
    found = from_header(head)
    if found is None:
        return {}
    task, tests = found
    repo = Path(str(head.get("repo") or ""))
    if not (head.get("repo") and repo.is_dir()):
        repo = home(task)
    return {"repo": str(repo), "sandbox": "docker", **session_options(task, tests)}


# --- its final change -----------------------------------------------------------------------------


def patch_of(recording, task: Task, tests: str = "hidden", client=None) -> str:
    """The final change of a recorded session in the task's image, against the image's files:
    its checkpoints applied in order over them (visible: over them with the test patch, which
    is then left out, as a trial's patch leaves it). PatchError / SandboxError: one line."""
    from dgym_tui.batch.test_modes import without_tests
    from dgym_tui.sandbox.image_files import read_files
    from dgym_tui.sessions.patch import PatchError, _TempRepo, checkpoint_line

    patches = [c.patch for c in checkpoint_line(recording.events) if c.patch.strip()]
    if not patches:
        return ""
    base = [task.test_patch] if tests == "visible" and task.test_patch else []
    env = task.environment
    with _TempRepo() as tmp:
        touched = list(dict.fromkeys(tmp.paths_of(base + patches)))
        for rel, found in read_files(env["image"], env["workdir"], touched, client=client).items():
            tmp.write(rel, *(found or (None,)))
        tmp.commit()
        for patch in base:
            if not tmp.apply(patch):
                raise PatchError("the task's test patch does not apply to its image's files")
            tmp.commit()
        for number, patch in enumerate(patches, start=1):
            if not tmp.apply(patch):
                raise PatchError(f"checkpoint {number} of the session does not apply to the image's files "
                                 f"({env['image']})")
        diff = tmp.diff()
    return without_tests(task, diff)[0] if base else diff
