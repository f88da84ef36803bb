"""What runs under pdb: a script with arguments, a module, or pytest.

Written the way a person types it ("python app.py --x 1", "python -m pkg",
"pytest tests/test_x.py::test_y"); the default is read from the repo.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass

from dgym_tui.sandbox.errors import SandboxError

PYTHONS = ("python", "python3")


@dataclass(frozen=True)
class Entrypoint:
    kind: str  # "script" | "module" | "pytest"
    target: str  # script path, module name, or "" for pytest
    args: tuple[str, ...] = ()

    @property
    def label(self) -> str:
        if self.kind == "pytest":
            return shlex.join(["pytest", *self.args])
        if self.kind == "module":
            return shlex.join(["python", "-m", self.target, *self.args])
        return shlex.join(["python", self.target, *self.args])

    def shim_args(self) -> list[str]:
        """Arguments for sandbox/box/dgym_pdb.py."""
        if self.kind == "pytest":
            return ["--pytest", *self.args]
        if self.kind == "module":
            return ["-m", self.target, *self.args]
        return [self.target, *self.args]


# pytest options whose value is the next word (`-k expr`): kept with their option when narrowing
_PYTEST_VALUE_OPTIONS = {"-k", "-m", "-p", "-c", "-o", "-W", "-r", "--deselect", "--ignore",
                         "--rootdir", "--confcutdir", "--maxfail", "--tb"}


def narrowed(entrypoint: Entrypoint, node_ids: list[str]) -> Entrypoint:
    """A pytest entrypoint that runs only these tests: its options kept, its paths replaced."""
    options: list[str] = []
    args = list(entrypoint.args)
    while args:
        word = args.pop(0)
        if word.startswith("-"):
            options.append(word)
            if word in _PYTEST_VALUE_OPTIONS and args:
                options.append(args.pop(0))
    return Entrypoint("pytest", "", tuple(options) + tuple(node_ids))


def parse_entrypoint(spec: str) -> Entrypoint:
    try:
        words = shlex.split(spec)
    except ValueError as e:
        raise SandboxError(f"cannot read the entrypoint {spec!r}: {e}") from None
    if not words:
        raise SandboxError("the entrypoint is empty: give e.g. 'python main.py' or 'pytest tests/'")
    if words[0] in PYTHONS or words[0].startswith("python3."):
        words = words[1:]
        if not words:
            raise SandboxError("the entrypoint names no script: give e.g. 'python main.py'")
        if words[0] == "-m":
            if len(words) < 2:
                raise SandboxError("'python -m' needs a module name")
            if words[1] == "pytest":
                return Entrypoint("pytest", "", tuple(words[2:]))
            return Entrypoint("module", words[1], tuple(words[2:]))
        return Entrypoint("script", words[0], tuple(words[1:]))
    if words[0] in ("pytest", "py.test"):
        return Entrypoint("pytest", "", tuple(words[1:]))
    if words[0].endswith(".py"):
        return Entrypoint("script", words[0], tuple(words[1:]))
    raise SandboxError(f"cannot tell how to run {spec!r}: start it with python, python -m or pytest")


MAIN_SCRIPTS = ("main.py", "__main__.py", "app.py", "run.py", "cli.py", "manage.py")


NO_ENTRYPOINT = ("give what to run with -e (e.g. -e 'python tool.py --x 1' or -e 'pytest tests/') or the "
                 "palette's 'Change entrypoint…'")


def detect_entrypoint(sandbox) -> Entrypoint:
    """pytest when the repo has tests, else a script with a __main__ block, else pytest anyway.
    A repo with no Python file at all has nothing to run: a SandboxError says how to give it."""
    if not any(path.endswith(".py") for path in sandbox.list_files()):
        raise SandboxError(f"there is no Python file in this repository, so nothing to run under pdb: {NO_ENTRYPOINT}")
    names = {e.name: e for e in sandbox.list_dir(".")}
    if "tests" in names or "test" in names or any(
            n.startswith("test_") and n.endswith(".py") for n in names):
        return Entrypoint("pytest", "", ())
    for name in MAIN_SCRIPTS:
        if name in names and not names[name].is_dir:
            return Entrypoint("script", name, ())
    for name in sorted(names):
        if name.endswith(".py") and 'if __name__ == "__main__"' in sandbox.read_text(name).replace("'", '"'):
            return Entrypoint("script", name, ())
    return Entrypoint("pytest", "", ())
