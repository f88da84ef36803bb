"""A repository that lives in an image beside the environment it runs in (a SWE-bench instance
image: the repository at /testbed, a conda env, C extensions built in place): where it is, how to
activate the environment, how its tests run and how their output is read. The session works there
instead of copying the repository in (the Docker sandbox's in-image mode)."""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable
from dataclasses import dataclass

_PATHLIKE = re.compile(r"^[\w./-]+\.py(::\S+)?$")


@dataclass
class Environment:
    image: str                                   # the image as named (its tag or name)
    workdir: str = "/testbed"                    # the repository's folder in it
    activate: str | None = None                  # shell lines that activate its environment
    test_command: str | None = None              # how its tests run (a harness's command), from workdir
    read_statuses: Callable[[str], dict[str, str]] | None = None  # test id -> PASSED/FAILED/... from the output

    def ready(self, sandbox) -> None:
        """Once the sandbox is up: the test command without the test files that do not exist
        yet (the hidden tests bring them: pytest would refuse to run at all)."""
        if not self.test_command:
            return
        kept = []
        for n, word in enumerate(self.test_command.split(" ")):
            if n and _PATHLIKE.match(word) and not sandbox.exec(["test", "-e", word.split("::")[0]], timeout=30).ok:
                continue  # an argument, never the program (`./tests/runtests.py`)
            kept.append(word)
        self.test_command = " ".join(kept)

    def pdb_entrypoint(self) -> str | None:
        """What runs under pdb: the harness's test command, whatever its runner (debug_command)."""
        line = self.test_command.strip().splitlines()[0] if self.test_command and self.test_command.strip() else ""
        return debug_command(line)

    def pdb_problem(self, sandbox) -> str | None:
        """Why the debugger cannot run in this environment (None: it can)."""
        from dgym_tui.sandbox.interpreter import MIN_VERSION

        if self.pdb_entrypoint() is None:
            return "the environment names no test command to run under pdb"
        version = sandbox.python_version()
        if version[:2] >= MIN_VERSION:
            return None
        shown = ".".join(map(str, version[:2])) or "unknown"
        return (f"the environment's Python is {shown}, and dgym-tui's debugger runs on "
                f"{'.'.join(map(str, MIN_VERSION))} or newer")


_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")


def debug_command(command: str) -> str | None:
    """A test command as a harness writes it, as the debugger's entrypoint (core/entrypoint.py):
    pytest stays pytest; a runner script (Django's `./tests/runtests.py`, sympy's `bin/test`) or
    `python -m unittest` runs as the script or module it is, and the debugger stops at its first
    failing test (sandbox/box/runners.py); tox, which runs pytest in these environments, becomes
    pytest on the paths after `--`. None when there is nothing to run."""
    try:
        words = shlex.split(command)
    except ValueError:
        return None
    env = []
    while words and _ASSIGNMENT.match(words[0]):
        env.append(words.pop(0))
    if not words:
        return None
    program, rest = words[0], words[1:]
    if program in ("pytest", "py.test"):
        run = ["pytest", *rest]
    elif program in ("python", "python3") or program.startswith("python3."):
        run = ["pytest", *rest[2:]] if rest[:2] == ["-m", "pytest"] else ["python", *rest]
    elif program == "tox":
        run = ["pytest", *(rest[rest.index("--") + 1:] if "--" in rest else [])]
    elif "/" in program or program.endswith(".py"):
        run = ["python", program, *rest]  # a runner script, whatever its name (bin/test)
    else:
        return None
    if run == ["python"]:
        return None
    return shlex.join([*env, *run])
