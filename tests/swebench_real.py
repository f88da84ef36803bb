"""Real SWE-bench-style instances whose code comes from the package index at test time (CI cannot
fetch repositories, and no upstream code is kept in this repository): a release's sdist is the
base, in a git repository of its own; the fix and the test patch are the real change the next
release made to those files; the problem statement is that release's note. FAIL_TO_PASS and
PASS_TO_PASS are not written here: the harness computes them (swebench_image.validate).

- requests 2.27.0 + 2.27.1 (its only fix, psf/requests#6028: the auth dropped from proxy URLs):
  swebench's spec for psf/requests 2.27, Python 3.9, pytest, `pip install .`;
- Django 3.0 + 3.0.1's fix of ticket #31061: the spec for django 3.0, Python 3.6,
  tests/requirements/py3.txt, `pip install -e .`, tests/runtests.py."""

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
           "GIT_COMMITTER_EMAIL": "sdist@dgym-tui.invalid"}


def sdist(name: str, version: str, python: str = sys.executable) -> Path:
    """The release's sdist, unpacked (downloaded once into SDISTS; pip prepares its metadata with
    `python`, which must be one the release's setup.py runs on)."""
    SDISTS.mkdir(parents=True, exist_ok=True)
    found = [p for p in SDISTS.glob("*.tar.gz") if p.name.lower() == f"{name}-{version}.tar.gz".lower()]
    if not found:
        subprocess.run([python, "-m", "pip", "download", "-q", "--disable-pip-version-check", "--no-deps",
                        "--no-binary", ":all:", f"{name}=={version}", "-d", str(SDISTS)], check=True)
        found = [p for p in SDISTS.glob("*.tar.gz") if p.name.lower() == f"{name}-{version}.tar.gz".lower()]
    with tarfile.open(found[0]) as tar:
        top = tar.getnames()[0].split("/")[0]
        if not (SDISTS / top).is_dir():
            tar.extractall(SDISTS)
    return SDISTS / top


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True,
                          env={**os.environ, **GIT_ENV}).stdout


def _diff_of(repo: Path, new_tree: Path, paths: list[str]) -> str:
    """The change from the base to `new_tree` in `paths` (folders or files), as a git diff; the
    repo left at its base."""
    for path in paths:
        target = repo / path
        if target.is_dir():
            shutil.rmtree(target)
            shutil.copytree(new_tree / path, target)
        else:
            shutil.copy2(new_tree / path, target)
    _git(repo, "add", "-A", *paths)
    diff = _git(repo, "diff", "--cached", "--", *paths)
    _git(repo, "reset", "-q", "--hard")
    _git(repo, "clean", "-q", "-fd")
    return diff


def release_repo(repos: Path, slug: str, name: str, version: str, date: str,
                 python: str = sys.executable) -> tuple[Path, str]:
    """repos/owner+name: a git repository of the release's sdist, one commit; (it, the commit)."""
    base = sdist(name, version, python)
    repo = repos / slug.replace("/", "+")
    if repo.exists():
        shutil.rmtree(repo)
    shutil.copytree(base, repo, ignore=shutil.ignore_patterns("*.egg-info", "PKG-INFO"))
    env = {"GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date}
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "add", "-A")
    subprocess.run(["git", "-C", str(repo), "commit", "-q", "-m", f"{name} {version} (its sdist)"], check=True,
                   capture_output=True, env={**os.environ, **GIT_ENV, **env})
    return repo, _git(repo, "rev-parse", "HEAD").strip()


def requests_instance(repos: Path) -> dict:
    """The instance's record (the dataset's fields), its repository made at repos/psf+requests."""
    repo, commit = release_repo(repos, "psf/requests", "requests", BASE, "2022-01-03T15:07:34+00:00")
    new = sdist("requests", NEXT)
    notes = (new / "HISTORY.md").read_text()
    section = re.search(rf"^{re.escape(NEXT)} \(.*?\n-+\n(.*?)\n(?=\d+\.\d+\.\d+ \()", notes, re.S | re.M)
    return {
        "repo": "psf/requests", "instance_id": INSTANCE_ID, "base_commit": commit,
        "patch": _diff_of(repo, new, ["requests"]), "test_patch": _diff_of(repo, new, ["tests"]),
        "problem_statement": f"requests {NEXT}'s release notes, against {BASE}:\n\n{section.group(1).strip()}",
        "hints_text": "", "created_at": "2022-01-05T15:36:01Z", "version": "2.27",
        "environment_setup_commit": commit, "FAIL_TO_PASS": "[]", "PASS_TO_PASS": "[]",
    }


DJANGO_ID = "django__django-v3.0.1-31061"
# 3.0.1's fix of ticket #31061: all of the release's change to these files.
DJANGO_FIX = ["django/urls/resolvers.py"]
DJANGO_TESTS = ["tests/urlpatterns/path_urls.py", "tests/urlpatterns/tests.py"]


def django_instance(repos: Path) -> dict:
    """Django 3.0's sdist (it ships tests/runtests.py) with 3.0.1's fix of ticket #31061 (re_path
    passed positional arguments when every optional named group was missing), which is what
    SWE-bench's django__django-12184 fixes at a later commit; swebench's spec for django 3.0:
    Python 3.6, tests/requirements/py3.txt, `pip install -e .`, runtests.py."""
    repo, commit = release_repo(repos, "django/django", "Django", "3.0", "2019-12-02T10:54:40+00:00")
    new = sdist("Django", "3.0.1")
    notes = (new / "docs" / "releases" / "3.0.1.txt").read_text()
    note = re.search(r"^\* Fixed a regression in Django 3\.0 where ``RegexPattern``.*?\(:ticket:`31061`\)\.",
                     notes, re.S | re.M).group(0)
    return {
        "repo": "django/django", "instance_id": DJANGO_ID, "base_commit": commit,
        "patch": _diff_of(repo, new, DJANGO_FIX), "test_patch": _diff_of(repo, new, DJANGO_TESTS),
        "problem_statement": ("Optional URL params crash some view functions (Django ticket #31061). Django "
                              f"3.0.1's release note:\n\n{note}"),
        "hints_text": "", "created_at": "2019-12-18T08:19:07Z", "version": "3.0",
        "environment_setup_commit": commit, "FAIL_TO_PASS": "[]", "PASS_TO_PASS": "[]",
    }


PYTEST_ID = "pytest-dev__pytest-v7.0.0-build"


def pytest_build_instance(repos: Path) -> dict:
    """pytest 7.0.0's sdist as a pytest-dev/pytest 7.0 instance: its build needs setuptools-scm (its
    pyproject.toml's `[build-system] requires`), which pip in an image with no network can only take
    from the wheels it was built with. A build-only instance: no fix, no test patch."""
    repo, commit = release_repo(repos, "pytest-dev/pytest", "pytest", "7.0.0", "2022-02-03T12:00:00+00:00")
    return {
        "repo": "pytest-dev/pytest", "instance_id": PYTEST_ID, "base_commit": commit, "patch": "",
        "test_patch": "", "problem_statement": "pytest 7.0.0, built", "hints_text": "",
        "created_at": "2022-02-03T12:00:00Z", "version": "7.0", "environment_setup_commit": commit,
        "FAIL_TO_PASS": "[]", "PASS_TO_PASS": "[]",
    }


REQUESTS_OLD_ID = "psf__requests-v2.4.3-httpbin"


def requests_httpbin_instance(repos: Path) -> dict:
    """requests 2.4.3's sdist as a psf/requests 2.4 instance: its test_requests.py calls httpbin.org
    (through $HTTPBIN_URL), which SWE-bench's validation reached over the network. Build-only: no
    fix, no test patch. Its setup.py imports collections.Mapping, gone in 3.10: the sdist's
    metadata is read by the spec's Python 3.9."""
    from dgym_tui.batch.swebench_image import find_python

    repo, commit = release_repo(repos, "psf/requests", "requests", "2.4.3", "2014-10-06T12:00:00+00:00",
                                python=find_python("3.9"))
    return {
        "repo": "psf/requests", "instance_id": REQUESTS_OLD_ID, "base_commit": commit, "patch": "",
        "test_patch": "", "problem_statement": "requests 2.4.3, built", "hints_text": "",
        "created_at": "2014-10-06T12:00:00Z", "version": "2.4", "environment_setup_commit": commit,
        "FAIL_TO_PASS": "[]", "PASS_TO_PASS": "[]",
    }
