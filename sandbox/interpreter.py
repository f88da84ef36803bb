"""Which Python runs the project's code in the local and bwrap sandboxes.

The project's own interpreter, not dgym-tui's (installed with pipx or in its own venv, dgym-tui's
Python lacks the project's dependencies and would load dgym-tui's pytest plugins into the run):
an explicit --python, else the repo's .venv/ or venv/, else $VIRTUAL_ENV, else python3 on PATH.
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from dgym_tui.sandbox.errors import SandboxError

MIN_VERSION = (3, 6)  # what the in-box debugger (sandbox/box/) runs on

# Python 2.7 answers too (it has no base_prefix): it runs the repo's code, without pdb.
_PROBE = ("import json, sys; print(json.dumps({'version': list(sys.version_info[:3]), "
          "'prefixes': sorted(set([sys.prefix, sys.exec_prefix, getattr(sys, 'base_prefix', sys.prefix), "
          "getattr(sys, 'base_exec_prefix', sys.exec_prefix)])), "
          "'path': [p for p in sys.path if p], 'executable': sys.executable}))")


def find_python(repo: str | os.PathLike, explicit: str | None = None) -> str:
    """The interpreter for this repo's code, as an absolute path (see the module's docstring)."""
    if explicit:
        found = shutil.which(explicit) if os.sep not in explicit else explicit
        if not found or not os.access(found, os.X_OK):
            raise SandboxError(f"--python {explicit}: no such interpreter")
        return os.path.abspath(found)
    for venv in (".venv", "venv"):
        candidate = Path(repo) / venv / "bin" / "python"
        if os.access(candidate, os.X_OK):
            return str(candidate)
    virtual_env = os.environ.get("VIRTUAL_ENV")
    if virtual_env and os.access(Path(virtual_env) / "bin" / "python", os.X_OK):
        return str(Path(virtual_env) / "bin" / "python")
    found = shutil.which("python3")
    if not found:
        raise SandboxError("no python3 on PATH: install Python 3 or give one with --python PATH")
    return found


@dataclass
class PythonInfo:
    executable: str
    version: tuple[int, ...]
    prefixes: list[str] = field(default_factory=list)
    path: list[str] = field(default_factory=list)  # its sys.path, for bwrap to make visible

    @property
    def version_text(self) -> str:
        return ".".join(map(str, self.version))


@functools.lru_cache(maxsize=16)
def probe_python(python: str) -> PythonInfo:
    """Ask the interpreter what it is; a SandboxError (one line, with the fix) if it cannot run at
    all. One too old for the debugger still runs the repo's code (debugger_problem says why pdb is
    off). Asked once per process (a restart of the sandbox asks no more): a
    pyenv shim alone takes a tenth of a second to answer."""
    try:
        out = subprocess.run([python, "-E", "-s", "-c", _PROBE], capture_output=True, text=True, timeout=30,
                             env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8"})
    except (OSError, subprocess.TimeoutExpired) as e:
        raise SandboxError(f"cannot run the project's Python {python}: {e}; choose one with --python PATH") from None
    if out.returncode != 0:
        last = (out.stderr.strip().splitlines() or ["no output"])[-1]
        raise SandboxError(f"the project's Python {python} failed: {last}; choose one with --python PATH")
    data = json.loads(out.stdout)
    info = PythonInfo(executable=data["executable"] or python, version=tuple(data["version"]), prefixes=data["prefixes"],
                      path=data["path"])
    return info


def debugger_problem(version: tuple[int, ...], python: str) -> str | None:
    """Why the in-box debugger cannot run on this interpreter (None: it can)."""
    if tuple(version[:2]) >= MIN_VERSION:
        return None
    shown = ".".join(map(str, version)) or "unknown"
    return (f"the project's Python {python} is {shown}; dgym-tui's debugger runs on "
            f"{'.'.join(map(str, MIN_VERSION))} or newer: choose one with --python PATH")
