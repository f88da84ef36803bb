"""Compiling the sandbox copy ahead (sandbox/box/dgym_compile.py, core/bytecode.py): the
program imports the repo's modules from checked-hash bytecode, never stale, never in a diff."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import git, tree_hash
from dgym_tui.core.session import Session
from dgym_tui.sandbox.base import BOX_SOURCE

HELPER = BOX_SOURCE / "dgym_compile.py"
ENV = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}  # as the program runs: only reads bytecode


def compile_tree(root: Path) -> str:
    done = subprocess.run([sys.executable, str(HELPER), str(root)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def pyc(path: Path) -> Path:
    return Path(importlib.util.cache_from_source(str(path)))


def imported_from_bytecode(root: Path, module: str) -> tuple[str, bool]:
    """The module's VALUE as a fresh interpreter imports it, and whether it came from a .pyc."""
    done = subprocess.run([sys.executable, "-v", "-c", f"import {module}; print({module}.VALUE)"], cwd=root,
                          env=ENV, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    loaded = f"code object from '{pyc(root / (module + '.py'))}'" in done.stderr
    return done.stdout.strip(), loaded


def test_the_helper_writes_checked_hash_bytecode_for_the_repos_modules_only(tmp_path):
    (tmp_path / "mod.py").write_text("VALUE = 1\n")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "broken.py").write_text("def f(:\n")
    (tmp_path / "notes.txt").write_text("not python\n")
    (tmp_path / "table.py").write_text("DATA = " + repr(list(range(500_000))) + "\n")  # > 2 MB: left to the run
    for skipped in (".git", ".venv", "node_modules", "env"):
        (tmp_path / skipped).mkdir()
        (tmp_path / skipped / "x.py").write_text("X = 1\n")
    (tmp_path / "env" / "pyvenv.cfg").write_text("home = /usr\n")  # a virtualenv, whatever its name

    assert compile_tree(tmp_path) == "compiled 2 of 4"  # mod and pkg; broken.py is left to the run
    header = pyc(tmp_path / "mod.py").read_bytes()[:16]
    assert int.from_bytes(header[4:8], "little") == 0b11  # hash-based and checked: never trusted on mtime
    assert header[8:16] == importlib.util.source_hash(b"VALUE = 1\n")
    assert not pyc(tmp_path / "broken.py").exists() and not pyc(tmp_path / "table.py").exists()
    for skipped in (".git", ".venv", "node_modules", "env"):
        assert not (tmp_path / skipped / "__pycache__").exists()
    assert imported_from_bytecode(tmp_path, "mod") == ("1", True)

    assert compile_tree(tmp_path) == "compiled 0 of 4"  # current bytecode is left alone


def test_an_edit_of_the_same_size_in_the_same_second_never_runs_the_old_code(tmp_path):
    source = tmp_path / "mod.py"
    source.write_text("VALUE = 1\n")
    compile_tree(tmp_path)
    stat = source.stat()
    source.write_text("VALUE = 2\n")
    os.utime(source, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # what a timestamp pyc would trust
    assert imported_from_bytecode(tmp_path, "mod") == ("2", False)  # the hash did not match: the source ran
    assert compile_tree(tmp_path) == "compiled 1 of 1"
    assert imported_from_bytecode(tmp_path, "mod") == ("2", True)


@pytest.fixture
def small_repo(tmp_path) -> Path:
    repo = tmp_path / "small"
    repo.mkdir()
    (repo / "mod.py").write_text("VALUE = 1\n")
    (repo / "main.py").write_text("import mod\nprint(mod.VALUE)\n")
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "init")
    return repo


def in_sandbox(session: Session, code: str) -> str:
    sandbox = session.sandbox
    result = sandbox.exec([sandbox.python, "-v", "-c", code], timeout=60)
    assert result.exit_code == 0, result.output
    return result.output


def test_a_session_runs_the_repo_from_bytecode_and_recompiles_what_an_edit_changed(small_repo, backend):
    before = tree_hash(small_repo)
    session = Session(str(small_repo), sandbox=backend, entrypoint="python main.py")
    try:
        session.start()
        assert session.state.stop is not None and session.state.stop.line == 1
        assert session.compile_ahead.idle.wait(60)
        assert session.compile_ahead.last_output == "compiled 2 of 2"
        out = in_sandbox(session, "import mod; print('VALUE', mod.VALUE)")
        assert "VALUE 1" in out and "code object from" in out and "mod.cpython" in out
        # the bytecode stays in the sandbox: not in a change, not in a listing, not in the user's repo
        assert session.changed_files() == []
        assert not any("__pycache__" in path for path, _ in session.walk(".", depth=3))
        assert tree_hash(small_repo) == before

        session.edit("mod.py", "VALUE = 2", start=1, end=1)  # the same size: only a hash tells them apart
        assert session.compile_ahead.idle.wait(60)
        assert session.compile_ahead.last_output == "compiled 1 of 2"
        assert session.state.program == "exited"  # the run with the old code ended; nothing ran again
        assert session.send("n").stop.line == 1  # `n` runs the new code, from its first line
        session.send("n")
        assert session.send("p mod.VALUE").output.strip().endswith("2")
        out = in_sandbox(session, "import mod; print('VALUE', mod.VALUE)")
        assert "VALUE 2" in out and "code object from" in out
        assert session.changed_files() == ["mod.py"]
        assert "__pycache__" not in session.diff()
    finally:
        session.close()
    assert tree_hash(small_repo) == before
