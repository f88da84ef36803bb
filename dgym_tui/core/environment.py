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
    visible_tests: str | None = None             # a test patch made part of the baseline at start (`--tests visible`)
    focus: list[str] | None = None               # the failing tests pdb runs, where its runner can name them
    harness_command: str | None = None           # the test command as given, before ready() left files out

    def ready(self, sandbox) -> None:
        """Once the sandbox is up: the visible tests applied and committed as the new baseline
        (no part of anyone's patch), then the test command without the test files that do not
        exist yet (the hidden tests bring them: pytest would refuse to run at all)."""
        if self.visible_tests and self.visible_tests.strip():
            from dgym_tui.core.workspace import apply_patch

            apply_patch(sandbox, self.visible_tests)
            sandbox.baseline = sandbox.checkpoint("the task's tests (--tests visible)")
            self.visible_tests = None  # once: a sandbox rebuilt later starts from this baseline's image
        if not self.test_command:
            return
        self.harness_command = self.harness_command or self.test_command
        kept = []
        for n, word in enumerate(self.test_command.split(" ")):
            if n and _PATHLIKE.match(word) and not sandbox.exec(["test", "-e", word.split("::")[0]], timeout=30).ok:
                continue  # an argument, never the program (`./tests/runtests.py`)
            kept.append(word)
        self.test_command = " ".join(kept)

    def pdb_entrypoint(self) -> str | None:
        """What runs under pdb: the harness's test command, whatever its runner (debug_command)."""
        line = self.test_command.strip().splitlines()[0] if self.test_command and self.test_command.strip() else ""
        command = debug_command(line)
        return focused(command, self.focus) if command and self.focus else command

    def runner(self) -> str:
        """What runs its tests, in a word or two (`pytest`, `./tests/runtests.py`, `bin/test`)."""
        return runner_name(self.test_command or self.harness_command or "")

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


def runner_name(command: str) -> str:
    """The program a test command runs, as a person names it: pytest (also through `python -m
    pytest` or tox), else the script or module (`./tests/runtests.py`, `bin/test`, `unittest`);
    "" when it cannot tell."""
    line = command.strip().splitlines()[0] if command.strip() else ""
    try:
        words = shlex.split(line)
    except ValueError:
        return ""
    while words and _ASSIGNMENT.match(words[0]):
        words.pop(0)
    if not words:
        return ""
    program, rest = words[0], words[1:]
    if program in ("pytest", "py.test") or program == "tox" or rest[:2] == ["-m", "pytest"]:
        return "pytest"
    if program in ("python", "python3") or program.startswith("python3."):
        if rest[:1] == ["-m"] and len(rest) > 1:
            return rest[1]
        return rest[0] if rest else "python"
    return program


_DJANGO_TEST = re.compile(r"^(\w+) \(([\w.]+)\)$")       # SWE-bench's Django ids: `test_x (app.tests.Class)`
_LABEL = re.compile(r"^[A-Za-z_]\w*(\.\w+)*$")


def focused(command: str, tests: list[str]) -> str:
    """A debug command (debug_command's) narrowed to the given failing tests where its runner
    takes them: pytest's node ids (`file.py::test[param]`) in place of its files; Django's
    runtests.py the tests' dotted labels in place of its own. Any other runner, or tests it cannot
    name, leave the command as it was (it runs the test patch's files)."""
    try:
        words = shlex.split(command)
    except ValueError:
        return command
    env = []
    while words and _ASSIGNMENT.match(words[0]):
        env.append(words.pop(0))
    if not words:
        return command
    if words[0] == "pytest":
        ids = [t for t in tests if "::" in t and t.split("::", 1)[0].endswith(".py")]
        if not ids:
            return command
        kept = [w for n, w in enumerate(words) if not n or not _PATHLIKE.match(w)]
        return shlex.join([*env, *kept, *ids])
    if words[0] == "python" and len(words) > 1 and words[1].endswith("runtests.py"):
        labels = [f"{m.group(2)}.{m.group(1)}" for m in map(_DJANGO_TEST.match, tests) if m]
        if not labels:
            return command
        kept = words[:2] + [w for w in words[2:] if w.startswith("-") or not _LABEL.match(w)]
        return shlex.join([*env, *kept, *labels])
    return command
