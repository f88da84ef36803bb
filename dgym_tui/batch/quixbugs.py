"""QuixBugs (github.com/jkoppel/QuixBugs) read as it comes: a checkout of the benchmark is a task
set of its Python programs, each one task with a one-line bug.

The checkout holds all forty programs side by side, their tests, and the corrected programs. A
task gets only what its own test needs, laid out as in the checkout (so the test's imports work
unchanged): `python_programs/NAME.py`, `python_testcases/test_NAME.py` with the helpers the tests
share, the program's `json_testcases/NAME.json`, and the benchmark's conftest.py. The corrected
programs and the other programs stay out: the agent must not read the answer. The folders are
made once per content in a cache (never in the checkout), and made again when it changes.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

from dgym_tui.batch.spec import Task

PROGRAMS, TESTS, DATA = "python_programs", "python_testcases", "json_testcases"
SHARED_TEST_FILES = ("load_testdata.py", "node.py")  # what several tests import


def is_checkout(folder: Path) -> bool:
    return (folder / PROGRAMS).is_dir() and (folder / TESTS).is_dir() and (folder / DATA).is_dir()


def program_names(folder: Path) -> list[str]:
    """The programs that have a test of their own (node.py is a helper, *_test.py old drivers)."""
    return sorted(name for name in (p.stem for p in (folder / PROGRAMS).glob("*.py"))
                  if (folder / TESTS / f"test_{name}.py").is_file())


def task_files(folder: Path, name: str) -> dict[str, Path]:
    """Repo-relative path -> file in the checkout, for the task of program `name`."""
    files = {f"{PROGRAMS}/{name}.py": folder / PROGRAMS / f"{name}.py",
             f"{TESTS}/test_{name}.py": folder / TESTS / f"test_{name}.py"}
    for shared in SHARED_TEST_FILES:
        if (folder / TESTS / shared).is_file():
            files[f"{TESTS}/{shared}"] = folder / TESTS / shared
    if (folder / PROGRAMS / "node.py").is_file():  # the graph programs' own Node, beside them
        files[f"{PROGRAMS}/node.py"] = folder / PROGRAMS / "node.py"
    if (folder / DATA / f"{name}.json").is_file():
        files[f"{DATA}/{name}.json"] = folder / DATA / f"{name}.json"
    if (folder / "conftest.py").is_file():  # its --correct and --runslow options
        files["conftest.py"] = folder / "conftest.py"
    return files


def read_checkout(folder: Path, cache: str | os.PathLike | None = None) -> list[Task]:
    """One task per program, its folder made under `cache` (default: the user cache)."""
    root = Path(cache) if cache else _cache_dir()
    tasks = []
    for name in program_names(folder):
        files = task_files(folder, name)
        digest = hashlib.sha256()
        for rel in sorted(files):
            digest.update(rel.encode() + b"\0" + files[rel].read_bytes() + b"\0")
        made = root / f"{name}-{digest.hexdigest()[:12]}"
        if not made.is_dir():
            part = made.with_name(made.name + ".part")
            shutil.rmtree(part, ignore_errors=True)
            for rel, source in files.items():
                (part / rel).parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(source, part / rel)
            try:
                part.rename(made)
            except OSError:  # another batch made it meanwhile: the same content
                shutil.rmtree(part, ignore_errors=True)
        test = f"{TESTS}/test_{name}.py"
        tasks.append(Task(id=name, repo=str(made), entrypoint=f"pytest {test}", test_files=[test],
                          source=f"{folder}/{PROGRAMS}/{name}.py"))
    return tasks


def _cache_dir() -> Path:
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("dgym-tui")) / "quixbugs"
