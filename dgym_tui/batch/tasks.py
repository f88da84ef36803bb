"""Task sets, read as they are into spec.Task:

- a folder whose subfolders are repos: each one a task, run and scored as `dgym-tui REPO` finds
  it (pytest's configuration and patterns; core/project.py);
- debug-gym's task folders: a `test.py` (or Django's `tests.py`) next to the code, where pytest's
  own patterns find no test file: the entrypoint is `pytest test.py`, and test.py a test file;
- SWE-bench-style JSON lines (instance_id, repo, base_commit, problem_statement, test_patch,
  FAIL_TO_PASS, PASS_TO_PASS; the last two may be JSON strings holding lists, as in SWE-bench's
  dataset). `repo` is a local git repo (relative to the file), a URL, or GitHub's owner/name; a
  remote one is cloned once (bare) into a cache, so a Task always names a local repo;
- a checkout of QuixBugs: each of its Python programs a task (batch/quixbugs.py);
- an optional `task.toml` in a task folder, overriding what is detected (TASK_TOML_KEYS).

Every error is one line naming the file (and line) at fault; nothing runs but git.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import tomllib
from pathlib import Path

from dgym_tui.batch import quixbugs
from dgym_tui.batch.spec import Task
from dgym_tui.core.workspace import patched_files

TASK_TOML = "task.toml"
TASK_TOML_KEYS = {
    "id": "the task's id (default: the folder's name)",
    "entrypoint": "what runs under pdb, e.g. 'pytest test.py'",
    "instructions": "the agent's task (default: made from the failing tests)",
    "must_pass": "test ids that must pass after the fix",
    "pass_to_pass": "test ids that must keep passing",
    "hidden": "files of the folder (paths) hidden from the agent, added only when scoring",
    "test_files": "files whose edits by the agent are reverted before scoring",
    "setup": "a shell command run in the sandbox before the agent starts (and before scoring)",
    "time_limit": "wall-clock seconds for the trial",
    "test_timeout": "seconds each test may run before it is stopped and failed (default 20)",
}
DEBUG_GYM_TESTS = ("test.py", "tests.py")
SKIP_FOLDERS = {"__pycache__", "node_modules", "venv", ".venv"}
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


class TaskSetError(ValueError):
    """A task set that cannot be read; str() is one line naming the file (and line)."""


def load_tasks(path: str | os.PathLike, cache: str | os.PathLike | None = None,
               image_template: str | None = None, check_image=None, repos: str | os.PathLike | None = None) -> list[Task]:
    """The tasks of a task set: a JSONL file (or a JSON list) of SWE-bench-style instances, a
    folder of task folders, or one task folder (a task.toml, a .git, a project file or Python
    files at its top). cache: where remote repos are cloned (default: the user cache).
    SWE-bench instances run in their own image (batch/swebench.py) when the swebench package is
    installed: image_template names it (`{instance_id}`), check_image(name) says whether it is
    there; one that cannot gets a `note` and runs as any instance. repos: a folder of local clones
    (DIR/owner+name, DIR/owner/name, DIR/name) looked in before any clone is made."""
    p = Path(path).expanduser()
    if not p.exists():
        raise TaskSetError(f"{p}: no such file or folder")
    if p.is_file():
        tasks = read_instances(p, cache, image_template, check_image, repos)
    elif quixbugs.is_checkout(p.resolve()):
        tasks = quixbugs.read_checkout(p.resolve(), Path(cache) / "quixbugs" if cache else None)
    else:
        p = p.resolve()
        folders = [p] if _one_task(p) else sorted(
            f for f in p.iterdir() if f.is_dir() and not f.name.startswith(".")
            and f.name not in SKIP_FOLDERS and _holds_a_task(f))
        if not folders:
            raise TaskSetError(f"{p}: no tasks here (subfolders holding Python files, a {TASK_TOML}, "
                               "or a .jsonl file of instances)")
        tasks = [read_folder(f) for f in folders]
    if not tasks:
        raise TaskSetError(f"{p}: the task set is empty")
    return unique_ids(tasks)


def safe_id(text: str) -> str:
    """A file-name-safe id: letters, digits, . _ - (anything else becomes -)."""
    cleaned = _UNSAFE.sub("-", text).strip(".-") or "task"
    return cleaned[:120]


def unique_ids(tasks: list[Task]) -> list[Task]:
    """Ids made file-name safe and unique in the set (a second `x` becomes `x-2`)."""
    seen: set[str] = set()
    for task in tasks:
        base = safe_id(task.id)
        name, n = base, 1
        while name.lower() in seen:  # case-insensitive file systems
            n += 1
            name = f"{base}-{n}"
        seen.add(name.lower())
        task.id = name
    return tasks


# --- task folders ------------------------------------------------------------------------------


PROJECT_FILES = ("pyproject.toml", "setup.py", "setup.cfg", "pytest.ini", "tox.ini")


def _one_task(folder: Path) -> bool:
    """The folder is a task itself, not a folder of tasks: a task.toml, a git repo's root, a
    project file or Python files at its top."""
    return ((folder / TASK_TOML).is_file() or (folder / ".git").exists()
            or any((folder / name).is_file() for name in PROJECT_FILES)
            or any(f.suffix == ".py" and f.is_file() for f in folder.iterdir()))


def _holds_a_task(folder: Path) -> bool:
    if (folder / TASK_TOML).is_file():
        return True
    for _, dirs, files in os.walk(folder):
        dirs[:] = [d for d in dirs if not d.startswith(".") and d not in SKIP_FOLDERS]
        if any(f.endswith(".py") for f in files):
            return True
    return False


def folder_files(folder: Path) -> list[str]:
    """The folder's files, repo-relative (no .git, no caches)."""
    found = []
    for root, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if d != ".git" and d not in SKIP_FOLDERS)
        rel = Path(root).relative_to(folder)
        found += [(rel / f).as_posix() for f in sorted(files)]
    return found


def read_folder(folder: Path) -> Task:
    """One task folder: what `dgym-tui FOLDER` detects, then its task.toml over it."""
    from dgym_tui.core.project import read_project

    files = folder_files(folder)

    def read(path: str) -> str | None:
        try:
            return (folder / path).read_text(encoding="utf-8", errors="replace")
        except OSError:
            return None

    project = read_project(files, read)
    task = Task(id=folder.name, repo=str(folder), source=str(folder), test_files=list(project.tests))
    if not project.has_tests:
        # debug-gym: test.py / tests.py next to the code, which pytest's patterns do not collect
        found = next((name for name in DEBUG_GYM_TESTS if name in files), None)
        if found:
            task.entrypoint = f"pytest {found}"
            task.test_files = [found]
    toml = folder / TASK_TOML
    if toml.is_file():
        _apply_toml(task, toml, folder)
    return task


def _apply_toml(task: Task, toml: Path, folder: Path) -> None:
    try:
        table = tomllib.loads(toml.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as e:
        raise TaskSetError(f"{toml}: cannot read it: {e}") from None
    except tomllib.TOMLDecodeError as e:
        raise TaskSetError(f"{toml}: {e}") from None
    unknown = sorted(set(table) - set(TASK_TOML_KEYS))
    if unknown:
        raise TaskSetError(f"{toml}: unknown key {', '.join(unknown)} (known: {', '.join(TASK_TOML_KEYS)})")

    def text(key: str) -> str | None:
        value = table.get(key)
        if value is not None and not isinstance(value, str):
            raise TaskSetError(f"{toml}: {key} must be a string")
        return value

    def strings(key: str) -> list[str] | None:
        value = table.get(key)
        if value is None:
            return None
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise TaskSetError(f"{toml}: {key} must be a list of strings")
        return value

    task.id = text("id") or task.id
    task.entrypoint = text("entrypoint") or task.entrypoint
    task.problem = text("instructions") or task.problem
    task.setup = text("setup") or task.setup
    task.fail_to_pass = strings("must_pass") or task.fail_to_pass
    task.pass_to_pass = strings("pass_to_pass") or task.pass_to_pass
    if (files := strings("test_files")) is not None:
        task.test_files = files
    for rel in strings("hidden") or []:
        path = (folder / rel).resolve()
        if not path.is_relative_to(folder.resolve()) or not path.is_file():
            raise TaskSetError(f"{toml}: hidden file {rel!r} is not a file of the task's folder")
        task.hidden_files[path.relative_to(folder.resolve()).as_posix()] = path.read_text(encoding="utf-8")
    for key in ("time_limit", "test_timeout"):
        if key in table:
            limit = table[key]
            if isinstance(limit, bool) or not isinstance(limit, int | float) or limit <= 0:
                raise TaskSetError(f"{toml}: {key} must be a positive number of seconds")
            setattr(task, key, float(limit))
    if task.entrypoint:
        from dgym_tui.core.entrypoint import parse_entrypoint
        from dgym_tui.sandbox.errors import SandboxError

        try:
            parse_entrypoint(task.entrypoint)
        except SandboxError as e:
            raise TaskSetError(f"{toml}: entrypoint: {e}") from None
    task.source = str(toml)


# --- SWE-bench-style instances -----------------------------------------------------------------

REQUIRED = ("instance_id", "repo", "base_commit")


def read_instances(path: Path, cache: str | os.PathLike | None = None, image_template: str | None = None,
                   check_image=None, repos: str | os.PathLike | None = None) -> list[Task]:
    """JSON lines (blank lines and lines starting with # skipped), or one JSON list."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise TaskSetError(f"{path}: cannot read it: {e}") from None
    records: list[tuple[int, object]] = []
    if text.lstrip().startswith("["):
        try:
            records = [(0, r) for r in json.loads(text)]
        except json.JSONDecodeError as e:
            raise TaskSetError(f"{path}: not JSON: {e}") from None
    else:
        for number, line in enumerate(text.splitlines(), 1):
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            try:
                records.append((number, json.loads(line)))
            except json.JSONDecodeError as e:
                raise TaskSetError(f"{path}:{number}: not a JSON object: {e.msg} (column {e.colno})") from None
    clones: dict[str, Path] = {}
    records = _with_eval_scripts(records)
    return [_instance(record, f"{path}:{number}" if number else str(path), path.parent, cache, clones,
                      image_template, check_image, repos)
            for number, record in records]


def read_instance(record: dict, where: str, base: Path, check_image=None, image_only: bool = False) -> Task:
    """One row of an instances file, as read_instances reads each (its eval script made from
    swebench's specs when it has none): for a caller that wants one row of a big file.
    image_only: a row that cannot run in its own image is a TaskSetError saying why (no clone)."""
    [(_, record)] = _with_eval_scripts([(0, record)])
    if image_only:
        from dgym_tui.batch import swebench

        if not swebench.is_instance(record):
            raise TaskSetError(f"{where}: not a SWE-bench instance (no version, environment_setup_commit "
                               "or eval_script)")
        environment, note = swebench.environment(record, where, None, check_image)
        if environment is None:
            raise TaskSetError(note)
        check_image = None  # it is there
    return _instance(record, where, base, None, {}, None, check_image)


def _with_eval_scripts(records: list[tuple[int, object]]) -> list[tuple[int, object]]:
    """SWE-bench rows of the dataset's older shape (no eval_script) with the one swebench's specs
    make, all made at once; a row the specs cannot serve is left as it was (its note says why)."""
    needing = [r for _, r in records if isinstance(r, dict) and _swebench_shaped(r) and not r.get("eval_script")
               and isinstance(r.get("instance_id"), str) and isinstance(r.get("test_patch"), str)]
    if not needing:
        return records
    from dgym_tui.batch import swebench

    if not swebench.installed():
        return records
    from dgym_tui.batch.swebench_specs import SpecsError, eval_scripts

    try:
        made = eval_scripts(needing)
    except SpecsError:
        return records  # each row then says why, in its own note
    return [(n, {**r, "eval_script": made[r["instance_id"]]} if isinstance(r, dict) and r.get("instance_id") in made
             and not r.get("eval_script") else r) for n, r in records]


def _instance(record, where: str, base: Path, cache, clones: dict[str, Path], image_template=None,
              check_image=None, repos=None) -> Task:
    if not isinstance(record, dict):
        raise TaskSetError(f"{where}: an instance is a JSON object, not {type(record).__name__}")
    missing = [k for k in REQUIRED if not isinstance(record.get(k), str) or not record[k].strip()]
    if missing:
        raise TaskSetError(f"{where}: missing {', '.join(missing)}")
    environment, note = None, None
    if (image_template or "image" in record or "eval_script" in record) or _swebench_shaped(record):
        from dgym_tui.batch import swebench

        if swebench.is_instance(record):
            environment, note = swebench.environment(record, where, image_template, check_image)
    if environment is not None:  # the repository is the image's: nothing to clone
        test_patch = record.get("test_patch") or None
        return Task(id=record["instance_id"], repo=str(record["repo"]), base_commit=record["base_commit"].strip(),
                    problem=(record.get("problem_statement") or None),
                    entrypoint=None, fail_to_pass=_test_list(record, "FAIL_TO_PASS", where),
                    pass_to_pass=_test_list(record, "PASS_TO_PASS", where), test_patch=test_patch,
                    test_files=patched_files(test_patch or ""), time_limit=_seconds(record, "time_limit", where),
                    test_timeout=_seconds(record, "test_timeout", where), source=where, environment=environment)
    repo = local_repo(record["repo"], base, cache, clones, where, repos)
    commit = record["base_commit"].strip()
    if subprocess.run(["git", "-C", str(repo), "cat-file", "-e", f"{commit}^{{commit}}"],
                      capture_output=True).returncode != 0:
        raise TaskSetError(f"{where}: base_commit {commit} is not a commit of {record['repo']}")
    test_patch = record.get("test_patch") or None
    if test_patch is not None and not isinstance(test_patch, str):
        raise TaskSetError(f"{where}: test_patch must be a string (a unified diff)")
    return Task(id=record["instance_id"], repo=str(repo), base_commit=commit,
                problem=(record.get("problem_statement") or None), entrypoint=record.get("entrypoint") or None,
                fail_to_pass=_test_list(record, "FAIL_TO_PASS", where),
                pass_to_pass=_test_list(record, "PASS_TO_PASS", where),
                test_patch=test_patch, test_files=patched_files(test_patch or ""),
                setup=record.get("setup") or None, time_limit=_seconds(record, "time_limit", where),
                test_timeout=_seconds(record, "test_timeout", where), source=where, note=note)


def _swebench_shaped(record: dict) -> bool:
    return isinstance(record.get("version"), str) and "environment_setup_commit" in record


def _seconds(record: dict, key: str, where: str) -> float | None:
    value = record.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        raise TaskSetError(f"{where}: {key} must be a positive number of seconds")
    return float(value)


def _test_list(record: dict, key: str, where: str) -> list[str]:
    value = record.get(key)
    if value is None or value == "":
        return []
    if isinstance(value, str):  # SWE-bench's dataset: a JSON string holding the list
        try:
            value = json.loads(value)
        except json.JSONDecodeError:
            raise TaskSetError(f"{where}: {key} is a string but not a JSON list") from None
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise TaskSetError(f"{where}: {key} must be a list of test ids")
    return value


_SLUG = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*/[A-Za-z0-9_.-]+$")


def local_repo(repo: str, base: Path, cache, clones: dict[str, Path], where: str, repos=None) -> Path:
    """A local git repo for `repo`: a path (relative to the task file's folder), or a remote one
    (a URL, or GitHub's owner/name when no such folder exists): its clone under `repos` when
    there is one, else cloned bare into the cache."""
    candidate = (base / Path(repo).expanduser()).resolve()
    remote = "://" in repo or repo.startswith("git@") or (_SLUG.match(repo) and not candidate.exists())
    if remote and repos is not None and _SLUG.match(repo):
        found = find_repo(repos, repo)
        if found is not None:
            return Path(found)
    if not remote:
        if not candidate.is_dir():
            raise TaskSetError(f"{where}: repo {repo}: no such folder")
        if subprocess.run(["git", "-C", str(candidate), "rev-parse", "--git-dir"],
                          capture_output=True).returncode != 0:
            raise TaskSetError(f"{where}: repo {repo} is not a git repository")
        return candidate
    url = repo if ("://" in repo or repo.startswith("git@")) else f"https://github.com/{repo}.git"
    if url in clones:
        return clones[url]
    root = Path(cache) if cache else _cache_dir()
    dest = root / f"{safe_id(url.rstrip('/').rsplit('/', 1)[-1])}-{hashlib.sha256(url.encode()).hexdigest()[:10]}.git"
    if not dest.is_dir():
        root.mkdir(parents=True, exist_ok=True)
        tmp = dest.with_suffix(f".tmp{os.getpid()}")
        done = subprocess.run(["git", "clone", "-q", "--bare", url, str(tmp)], capture_output=True, text=True)
        if done.returncode != 0:
            raise TaskSetError(f"{where}: cannot clone {url}: {(done.stderr.strip().splitlines() or ['git failed'])[-1]}"
                               + (f" (and no clone of {repo} under --repos {repos})" if repos is not None else
                                  " (offline? give --repos DIR, a folder of local clones)"))
        os.replace(tmp, dest)
    clones[url] = dest
    return dest


def find_repo(repos: str | os.PathLike, repo: str) -> str | None:
    """The git directory of `repo` (owner/name) under `repos`: DIR/owner+name (a mirror's layout,
    with its git dir at repo/), DIR/owner__name, DIR/owner/name or DIR/name; bare or not."""
    owner, _, name = repo.partition("/")
    root = Path(repos).expanduser()
    for folder in (root / f"{owner}+{name}", root / f"{owner}__{name}", root / owner / name, root / name):
        for candidate in (folder / "repo", folder / ".git", folder):
            if candidate.is_dir() and (candidate / "objects").is_dir() and (candidate / "HEAD").exists():
                return str(candidate.resolve())
    return None


def _cache_dir() -> Path:
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("dgym-tui")) / "repos"
