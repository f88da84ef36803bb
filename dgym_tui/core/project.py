"""What a repository is, as far as running it under pdb goes: where its tests are (found the way
pytest would find them: its configuration, then its default file patterns), and which folders
hold its importable code (a src/ layout, pytest's `pythonpath`, the build tool's package folder),
so that the repo's own copy is imported first — never an installed copy of it.

Everything is read from the repo's file list and a few small configuration files: no process
runs, so it is quick enough for a sandbox's start.
"""

from __future__ import annotations

import configparser
import fnmatch
import posixpath
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, replace

# pytest's defaults (`python_files`, `norecursedirs`)
PYTHON_FILES = ("test_*.py", "*_test.py")
NORECURSE = ("*.egg", ".*", "_darcs", "build", "CVS", "dist", "node_modules", "venv", "{arch}")
SOURCE_FOLDERS = ("src",)  # folders that hold a package in the usual layouts
# Test files that pytest's default patterns miss but that hold a project's tests all the same:
# debug-gym's task folders keep theirs in test.py next to the code, Django apps in tests.py.
# They count only where pytest's own patterns find nothing, and are then named to pytest.
NAMED_TEST_FILES = ("test.py", "tests.py")


@dataclass(frozen=True)
class PytestConfig:
    """The parts of pytest's configuration that say where tests and code are."""

    source: str | None = None             # the file it came from (None: pytest's defaults)
    testpaths: tuple[str, ...] = ()
    python_files: tuple[str, ...] = PYTHON_FILES
    pythonpath: tuple[str, ...] = ()
    norecursedirs: tuple[str, ...] = NORECURSE


@dataclass(frozen=True)
class Project:
    config: PytestConfig
    tests: tuple[str, ...]                # test files pytest would collect, repo-relative
    import_roots: tuple[str, ...]         # folders to put first on the import path ("" excluded)
    named: bool = False                   # the tests are test.py / tests.py files pytest collects
                                          # only when they are named on its command line

    @property
    def has_tests(self) -> bool:
        """pytest run with no file named finds tests here (named ones need naming: see tests)."""
        return bool(self.tests) and not self.named


Reader = Callable[[str], "str | None"]


def read_project(files: list[str], read: Reader) -> Project:
    """files: every file of the repo (relative paths); read(path): a file's text, or None."""
    config = pytest_config(files, read)
    tests, named = find_tests(files, config), False
    if not tests and config.python_files == PYTHON_FILES:
        # pytest's own patterns find nothing: a debug-gym or Django layout's test.py / tests.py
        tests = find_tests(files, replace(config, python_files=NAMED_TEST_FILES))
        named = bool(tests)
    return Project(config, tuple(tests), tuple(import_roots(files, read, config)), named)


# --- pytest's configuration ------------------------------------------------------------------


def _words(value) -> tuple[str, ...]:
    """An ini value (whitespace-separated, possibly over several lines) or a TOML list."""
    if value is None:
        return ()
    if isinstance(value, str):
        return tuple(value.split())
    return tuple(str(v) for v in value)


def pytest_config(files: list[str], read: Reader) -> PytestConfig:
    """The first configuration pytest would use from the repo's root, in pytest's order:
    pytest.ini / .pytest.ini (always), pyproject.toml with [tool.pytest.ini_options], tox.ini
    with [pytest], setup.cfg with [tool:pytest]."""
    present = set(files)
    for name in ("pytest.ini", ".pytest.ini"):
        if name in present:
            return _from_ini(name, read(name) or "", "pytest") or PytestConfig(source=name)
    if "pyproject.toml" in present:
        try:
            table = tomllib.loads(read("pyproject.toml") or "").get("tool", {}).get("pytest", {})
        except tomllib.TOMLDecodeError:
            table = {}
        options = table.get("ini_options") if isinstance(table, dict) else None
        if isinstance(options, dict):
            return _config("pyproject.toml", options.get)
    for name, section in (("tox.ini", "pytest"), ("setup.cfg", "tool:pytest")):
        if name in present:
            found = _from_ini(name, read(name) or "", section)
            if found is not None:
                return found
    return PytestConfig()


def _from_ini(name: str, text: str, section: str) -> PytestConfig | None:
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read_string(text)
    except configparser.Error:
        return None
    if not parser.has_section(section):
        return None
    return _config(name, lambda key: parser.get(section, key, fallback=None))


def _config(source: str, get) -> PytestConfig:
    return PytestConfig(source=source, testpaths=_words(get("testpaths")),
                        python_files=_words(get("python_files")) or PYTHON_FILES,
                        pythonpath=_words(get("pythonpath")),
                        norecursedirs=_words(get("norecursedirs")) or NORECURSE)


# --- where the tests are -----------------------------------------------------------------------


def find_tests(files: list[str], config: PytestConfig) -> list[str]:
    """The files pytest would collect when run with no arguments from the root: under
    `testpaths` if set (folders, files or globs), else anywhere, minus `norecursedirs`."""
    found = []
    for path in files:
        if not path.endswith(".py"):
            continue
        folders, name = path.split("/")[:-1], path.rsplit("/", 1)[-1]
        if any(fnmatch.fnmatch(folder, pattern) for folder in folders for pattern in config.norecursedirs):
            continue
        if not any(_matches(path, name, pattern) for pattern in config.python_files):
            continue
        if config.testpaths and not any(_under(path, testpath) for testpath in config.testpaths):
            continue
        found.append(path)
    return found


def _matches(path: str, name: str, pattern: str) -> bool:
    # pytest matches a pattern with a slash against the path, one without against the name
    return fnmatch.fnmatch(path if "/" in pattern else name, pattern)


def _under(path: str, testpath: str) -> bool:
    testpath = posixpath.normpath(testpath)
    if testpath == ".":
        return True
    if any(c in testpath for c in "*?["):
        parts = path.split("/")
        return any(fnmatch.fnmatch("/".join(parts[:i]), testpath) for i in range(1, len(parts) + 1))
    return path == testpath or path.startswith(testpath + "/")


# --- where the code is --------------------------------------------------------------------------


def import_roots(files: list[str], read: Reader, config: PytestConfig) -> list[str]:
    """Folders of the repo that hold its importable code besides the root, in the order they go
    on the import path: pytest's `pythonpath`, the build tool's package folder, then src/."""
    folders = {posixpath.dirname(f) for f in files}
    present = set()
    for f in folders:  # every ancestor too: "src" for "src/pkg"
        while f:
            present.add(f)
            f = posixpath.dirname(f)
    wanted = [*config.pythonpath, *_build_tool_roots(set(files), read), *SOURCE_FOLDERS]
    roots: list[str] = []
    for entry in wanted:
        entry = posixpath.normpath(entry).strip("/")
        if entry in ("", ".") or entry.startswith("..") or entry in roots or entry not in present:
            continue
        if entry in SOURCE_FOLDERS and entry not in config.pythonpath and not _holds_code(files, entry):
            continue
        roots.append(entry)
    return roots


def _holds_code(files: list[str], folder: str) -> bool:
    """A package (a folder with __init__.py) or a module right inside the folder."""
    prefix = folder + "/"
    for f in files:
        if f.startswith(prefix):
            rest = f[len(prefix):]
            if rest.endswith(".py") and ("/" not in rest or rest.split("/", 1)[1] == "__init__.py"):
                return True
    return False


def _build_tool_roots(present: set[str], read: Reader) -> list[str]:
    """Package folders that pyproject.toml or setup.cfg name: setuptools' package-dir and
    packages.find `where`, poetry's `from`, hatch's wheel `packages` (their parent folder)."""
    roots: list[str] = []
    if "pyproject.toml" in present:
        try:
            tool = tomllib.loads(read("pyproject.toml") or "").get("tool", {})
        except tomllib.TOMLDecodeError:
            tool = {}
        setuptools = tool.get("setuptools", {}) if isinstance(tool, dict) else {}
        if isinstance(setuptools, dict):
            package_dir = setuptools.get("package-dir", {})
            if isinstance(package_dir, dict) and isinstance(package_dir.get(""), str):
                roots.append(package_dir[""])
            find = (setuptools.get("packages") or {}) if isinstance(setuptools.get("packages"), dict) else {}
            roots += [w for w in (find.get("find") or {}).get("where", []) if isinstance(w, str)]
        poetry = tool.get("poetry", {}) if isinstance(tool, dict) else {}
        for package in (poetry.get("packages") or []) if isinstance(poetry, dict) else []:
            if isinstance(package, dict) and isinstance(package.get("from"), str):
                roots.append(package["from"])
        wheel = tool.get("hatch", {}).get("build", {}).get("targets", {}).get("wheel", {}) \
            if isinstance(tool.get("hatch"), dict) else {}
        for package in (wheel.get("packages") or []) if isinstance(wheel, dict) else []:
            if isinstance(package, str) and "/" in package.strip("/"):
                roots.append(posixpath.dirname(package.strip("/")))
    if "setup.cfg" in present:
        parser = configparser.ConfigParser(interpolation=None)
        try:
            parser.read_string(read("setup.cfg") or "")
            package_dir = parser.get("options", "package_dir", fallback="")
        except configparser.Error:
            package_dir = ""
        for line in package_dir.splitlines():
            key, _, value = line.partition("=")
            if _ and not key.strip() and value.strip():
                roots.append(value.strip())
    return roots
