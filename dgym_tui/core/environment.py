"""A repository that lives in an image beside the environment it runs in (a SWE-bench instance
image: the repository at /testbed, a conda env, C extensions built in place): where it is, how to
activate the environment, how its tests run and how their output is read. The session works there
instead of copying the repository in (the Docker sandbox's in-image mode)."""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable
from dataclasses import dataclass

MIN_PDB = (3, 11)  # what the in-box debugger needs
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
        """What runs under pdb: the test command when it is pytest, else None."""
        words = shlex.split(self.test_command.strip().splitlines()[0]) if self.test_command and \
            self.test_command.strip() else []
        if words[:1] == ["pytest"]:
            return shlex.join(words)
        if words[:3] in (["python", "-m", "pytest"], ["python3", "-m", "pytest"]):
            return shlex.join(["pytest", *words[3:]])
        return None

    def pdb_problem(self, sandbox) -> str | None:
        """Why the debugger cannot run in this environment (None: it can)."""
        if self.pdb_entrypoint() is None:
            return "its tests do not run under pytest, which the debugger's entrypoint needs here"
        probe = sandbox.exec([sandbox.python, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"], timeout=60)
        version = probe.output.strip().splitlines()[-1] if probe.ok and probe.output.strip() else "unknown"
        try:
            if tuple(int(x) for x in version.split(".")) >= MIN_PDB:
                return None
        except ValueError:
            pass
        return (f"the environment's Python is {version}, and dgym-tui's debugger needs "
                f"{'.'.join(map(str, MIN_PDB))} or newer")
