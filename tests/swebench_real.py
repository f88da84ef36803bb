"""A real SWE-bench-style instance whose code comes from the package index at test time (CI cannot
fetch repositories, and no upstream code is kept in this repository): requests 2.27.0's sdist is
the base, in a git repository of its own; the fix is the real change 2.27.1 made to the package
(requests/), the test patch the real change it made to tests/, the problem statement 2.27.0's
release notes (one bug fix: psf/requests#6028, the auth dropped from proxy URLs). FAIL_TO_PASS and PASS_TO_PASS are not written here: the harness computes them
(swebench_image.validate). swebench's spec for psf/requests 2.27 gives its Python (3.9), its
packages (pytest), its install step and its test command."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

SDISTS = Path(os.environ.get("DGYM_SDISTS", "/var/cache/dgym-tui/sdists"))
BASE, NEXT = "2.27.0", "2.27.1"
INSTANCE_ID = f"psf__requests-v{NEXT}"
# A fixed author and date: the same sdist makes the same base commit, so a built image is reused.
GIT_ENV = {"GIT_AUTHOR_NAME": "sdist", "GIT_AUTHOR_EMAIL": "sdist@dgym-tui.invalid", "GIT_COMMITTER_NAME": "sdist",
           "GIT_COMMITTER_EMAIL": "sdist@dgym-tui.invalid", "GIT_AUTHOR_DATE": "2022-01-03T15:07:34+00:00",
           "GIT_COMMITTER_DATE": "2022-01-03T15:07:34+00:00"}


def sdist(name: str, version: str) -> Path:
    """The release's sdist, unpacked (downloaded once into SDISTS)."""
    SDISTS.mkdir(parents=True, exist_ok=True)
    archive = SDISTS / f"{name}-{version}.tar.gz"
    if not archive.exists():
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--disable-pip-version-check", "--no-deps",
                        "--no-binary", ":all:", f"{name}=={version}", "-d", str(SDISTS)], check=True)
    unpacked = SDISTS / f"{name}-{version}"
    if not unpacked.is_dir():
        with tarfile.open(archive) as tar:
            tar.extractall(SDISTS)
    return unpacked


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True,
                          env={**os.environ, **GIT_ENV}).stdout


def _diff_of(repo: Path, new_tree: Path, folder: str) -> str:
    """The change from the base to `new_tree` in `folder`, as a git diff; the repo left at its base."""
    shutil.rmtree(repo / folder)
    shutil.copytree(new_tree / folder, repo / folder)
    _git(repo, "add", "-A", folder)
    diff = _git(repo, "diff", "--cached", "--", folder)
    _git(repo, "reset", "-q", "--hard")
    _git(repo, "clean", "-q", "-fd")
    return diff


def requests_instance(repos: Path) -> dict:
    """The instance's record (the dataset's fields), its repository made at repos/psf+requests."""
    base, new = sdist("requests", BASE), sdist("requests", NEXT)
    repo = repos / "psf+requests"
    if repo.exists():
        shutil.rmtree(repo)
    shutil.copytree(base, repo, ignore=shutil.ignore_patterns("*.egg-info", "PKG-INFO"))
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", f"requests {BASE} (its sdist)")
    commit = _git(repo, "rev-parse", "HEAD").strip()
    notes = (new / "HISTORY.md").read_text()
    section = re.search(rf"^{re.escape(NEXT)} \(.*?\n-+\n(.*?)\n(?=\d+\.\d+\.\d+ \()", notes, re.S | re.M)
    return {
        "repo": "psf/requests", "instance_id": INSTANCE_ID, "base_commit": commit,
        "patch": _diff_of(repo, new, "requests"), "test_patch": _diff_of(repo, new, "tests"),
        "problem_statement": f"requests {NEXT}'s release notes, against {BASE}:\n\n{section.group(1).strip()}",
        "hints_text": "", "created_at": "2022-01-05T15:36:01Z", "version": "2.27",
        "environment_setup_commit": commit, "FAIL_TO_PASS": "[]", "PASS_TO_PASS": "[]",
    }
