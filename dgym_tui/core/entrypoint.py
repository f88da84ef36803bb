"""What runs under pdb: a script with arguments, a module, or pytest.

Written the way a person types it ("python app.py --x 1", "python -m pkg",
"pytest tests/test_x.py::test_y", with environment assignments in front as a shell takes them:
"PYTHONPATH=src pytest"); the default is read from the repo (core/project.py).
"""

from __future__ import annotations

import posixpath
import re
import shlex
from dataclasses import dataclass, replace

from dgym_tui.sandbox.errors import SandboxError

PYTHONS = ("python", "python3")


@dataclass(frozen=True)
class Entrypoint:
    kind: str  # "script" | "module" | "pytest"
    target: str  # script path, module name, or "" for pytest
    args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()  # NAME=value given in front of it

    @property
    def label(self) -> str:
        env = [f"{name}={value}" for name, value in self.env]
        if self.kind == "pytest":
            return shlex.join([*env, "pytest", *self.args])
        if self.kind == "module":
            return shlex.join([*env, "python", "-m", self.target, *self.args])
        return shlex.join([*env, "python", self.target, *self.args])

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
    return Entrypoint("pytest", "", tuple(options) + tuple(node_ids), entrypoint.env)


_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")


def parse_entrypoint(spec: str) -> Entrypoint:
    try:
        words = shlex.split(spec)
    except ValueError as e:
        raise SandboxError(f"cannot read the entrypoint {spec!r}: {e}") from None
    env = []
    while words and _ASSIGNMENT.match(words[0]):
        name, _, value = words.pop(0).partition("=")
        env.append((name, value))
    if words and words[0] == "env" and env == []:  # `env NAME=value cmd`, as a shell script would
        words.pop(0)
        while words and _ASSIGNMENT.match(words[0]):
            name, _, value = words.pop(0).partition("=")
            env.append((name, value))
    if not words:
        raise SandboxError("the entrypoint is empty: give e.g. 'python main.py' or 'pytest tests/'")
    return replace(_parse_command(words, spec), env=tuple(env))


def _parse_command(words: list[str], spec: str) -> Entrypoint:
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
    if words[0].endswith(".py") or "/" in words[0]:  # a script by its path (./tests/runtests.py, bin/test)
        return Entrypoint("script", words[0], tuple(words[1:]))
    raise SandboxError(f"cannot tell how to run {spec!r}: start it with python, python -m or pytest")


MAIN_SCRIPTS = ("main.py", "__main__.py", "app.py", "run.py", "cli.py", "manage.py")


NO_ENTRYPOINT = ("give what to run with -e (e.g. -e 'python tool.py --x 1' or -e 'pytest tests/') or the "
                 "palette's 'Change entrypoint…'")


def detect_entrypoint(sandbox, project) -> Entrypoint:
    """pytest when pytest would find tests in the repo (project: core/project.Project; files it
    would not find by itself, a debug-gym folder's test.py, are named to it), else a
    script with a __main__ block at the top. With neither, a SandboxError says so and how to
    give what to run."""
    files = sandbox.list_files()
    if not any(path.endswith(".py") for path in files):
        raise SandboxError(f"there is no Python file in this repository, so nothing to run under pdb: {NO_ENTRYPOINT}")
    if project.tests:
        # test.py / tests.py (project.named): pytest collects them only when named
        return Entrypoint("pytest", "", project.tests if project.named else ())
    names = {e.name: e for e in sandbox.list_dir(".")}
    for name in MAIN_SCRIPTS:
        if name in names and not names[name].is_dir:
            return Entrypoint("script", name, ())
    for name in sorted(names):
        if name.endswith(".py") and 'if __name__ == "__main__"' in sandbox.read_text(name).replace("'", '"'):
            return Entrypoint("script", name, ())
    where = f" ({project.config.source}: testpaths {' '.join(project.config.testpaths)})" \
        if project.config.testpaths else ""
    raise SandboxError(f"no tests here for pytest to run (files named {' or '.join(project.config.python_files)}"
                       f"{where}) and no script with a __main__ block at the top: {NO_ENTRYPOINT}")


def run_environment(entrypoint: Entrypoint, root: str, program_env: dict[str, str]) -> dict[str, str]:
    """The environment assignments an entrypoint asks for, as the program gets them: a PYTHONPATH
    given relative to the repo is made absolute (the program may change folder) and goes before
    the sandbox's own (the repo's source folders)."""
    env = dict(entrypoint.env)
    if "PYTHONPATH" in env:
        entries = [posixpath.normpath(posixpath.join(root, e)) for e in env["PYTHONPATH"].split(":") if e]
        base = program_env.get("PYTHONPATH")
        env["PYTHONPATH"] = ":".join(entries + ([base] if base else []))
    return env
