"""The CPythons the pdb engine is tested on: pyenv's 3.6 to 3.13, as every machine here has them,
and pyenv's 2.7 (OLD), which the debugger does not run on (pdb is off, the rest works).

The in-box debugger's own suite (test_shim*.py) runs on FULL, every one of them by default; the
suite over real sandboxes (test_debugger.py) on SANDBOXED, the oldest, one in the middle and the
newest. DGYM_ENGINE_PYTHONS="3.7,3.11" (or "all") chooses FULL by hand.

require(minor) is how a test gets one: where its interpreter is missing the test FAILS under CI
(the CI environment variable set, as .ci/run is run: pyenv's Pythons are part of the machine, as
bwrap is, see conftest.require_bwrap) and is skipped elsewhere, saying which one is missing."""

from __future__ import annotations

import glob
import os
import re
import subprocess
from functools import cache

import pytest

MINORS = ("3.6", "3.7", "3.8", "3.9", "3.10", "3.11", "3.12", "3.13")
OLD = "2.7"  # older than the debugger runs on


def _path(minor: str) -> str:
    found = [p for p in glob.glob(f"/root/.pyenv/versions/{minor}.*/bin/python")
             if re.fullmatch(rf"/root/.pyenv/versions/{re.escape(minor)}\.\d+/bin/python", p)]
    return sorted(found)[-1] if found else f"/root/.pyenv/versions/{minor}.x/bin/python (missing)"


PATHS = {minor: _path(minor) for minor in (OLD, *MINORS)}

_chosen = os.environ.get("DGYM_ENGINE_PYTHONS", "")
if _chosen == "all":
    FULL = MINORS
elif _chosen:
    FULL = tuple(v.strip() for v in _chosen.split(",") if v.strip())
else:
    FULL = MINORS  # the whole shim suite takes about 15 s per Python
SANDBOXED = ("3.6", "3.9", "3.13")


def exists(minor: str) -> bool:
    return os.access(PATHS[minor], os.X_OK)


def require(minor: str) -> str:
    """The path of pyenv's `minor`; where it is missing, fail under CI, skip elsewhere."""
    if exists(minor):
        return PATHS[minor]
    missing = f"no Python {minor} here (pyenv's CPython {minor}: {PATHS[minor]})"
    if os.environ.get("CI"):
        pytest.fail(f"CI must have every pyenv Python: {missing}")
    pytest.skip(missing)


@cache
def has_pytest(exe: str) -> bool:
    return subprocess.run([exe, "-c", "import pytest"], capture_output=True).returncode == 0


def require_pytest(exe: str) -> str:
    """exe, when pytest imports in it; else fail under CI (.ci/run installs it in each), skip elsewhere."""
    if has_pytest(exe):
        return exe
    missing = f"pytest is not importable by {exe}"
    if os.environ.get("CI"):
        pytest.fail(f"CI must have pytest in every pyenv Python (.ci/run installs it): {missing}")
    pytest.skip(missing)


def minor_of(exe: str) -> tuple[int, int]:
    """(3, 6) for pyenv's 3.6.15, and so on."""
    for minor, path in PATHS.items():
        if path == exe:
            return tuple(int(x) for x in minor.split("."))
    out = subprocess.run([exe, "-c", "import sys; print('%d %d' % sys.version_info[:2])"], capture_output=True, text=True)
    return tuple(int(x) for x in out.stdout.split())


def set_trace_call(exe: str) -> str:
    """breakpoint() (3.7+), or what a program on 3.6 writes instead."""
    return "breakpoint()" if minor_of(exe) >= (3, 7) else "__import__('pdb').set_trace()"
