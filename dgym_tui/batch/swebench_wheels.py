"""The packages of a SWE-bench instance's environment, as wheels built on this machine for the
spec's Python (batch/swebench_image.py puts them in the image, whose pip reads nothing else):
the spec's packages and pip_packages in the harness's order, what the install step pulls in from
/testbed, and what building /testbed itself needs (its PEP 517/518 `[build-system] requires` and
its `setup_requires`), since pip in the image cannot fetch a build backend either.
"""

from __future__ import annotations

import ast
import configparser
import dataclasses
import fcntl
import json
import os
import re
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path

BUILD_TIMEOUT = 3600

# The last pip, setuptools and wheel for the oldest Pythons: an old pip does not always skip the
# releases that need a newer Python (an index may not say which they are).
LAST_TOOLS = {"3.6": ("pip==21.3.1", "setuptools==59.6.0", "wheel==0.37.1"),
              "3.7": ("pip==24.0", "setuptools==68.0.0", "wheel==0.42.0"),
              "3.8": ("pip==25.0.1", "setuptools==75.3.0", "wheel==0.45.1")}


# The environment's own pip, setuptools and wheel, as SWE-bench's images had them (built in
# 2024 from conda's python of the time): a newer pip has no `setup.py develop` (25.1) and a newer
# setuptools makes `develop` a PEP 660 install (80), whose import hook leaves /testbed off
# sys.path, where a test suite (pylint's) looks for the package.
SWEBENCH_ERA_TOOLS = ("pip==24.2", "setuptools==75.1.0", "wheel==0.44.0")


def env_tools(version: str) -> tuple[str, ...]:
    """The tools an environment of that Python gets: the last that run on it, else those above."""
    return LAST_TOOLS.get(version, SWEBENCH_ERA_TOOLS)


class BuildError(RuntimeError):
    """An instance that cannot be built here; str() is one line saying what and why."""


# Releases as the package index had them on this day, about when SWE-bench's published instance
# images were built: an unpinned requirement then resolves as it did for them, not to today's
# release (docutils 0.22 took out docutils.utils.roman, which Sphinx 3 to 6 import at start).
PACKAGES_AS_OF = "2025-01-01"


@dataclasses.dataclass(frozen=True)
class PipSources:
    """Where the wheel builder's pip takes releases from: the extra arguments and environment of
    its commands, and the day they are resolved as of (None: as the index is today)."""
    args: tuple[str, ...] = ()
    env: dict | None = None
    as_of: str | None = None


def dated_sources(python: str, as_of: str | None, config_into: Path) -> PipSources:
    """The builder's pip resolving as of `as_of` (YYYY-MM-DD), where its pip can (25.3 and later:
    not the last pips of Python 3.6 to 3.8, whose builds resolve as the index is today). pip takes
    a file with no upload date (a find-links folder, a file:// index) whatever its release, so the
    pip configuration's are left out: the rest of it (index, certificates, proxy) is written to
    `config_into` and used instead."""
    if not as_of:
        return PipSources()
    done = subprocess.run([python, "-m", "pip", "install", "--help"], capture_output=True, text=True)
    if "--uploaded-prior-to" not in done.stdout:
        return PipSources()
    listed = subprocess.run([python, "-m", "pip", "config", "list"], capture_output=True, text=True).stdout
    config = configparser.ConfigParser(interpolation=None)
    for line in listed.splitlines():
        m = re.match(r"^([\w-]+)\.([\w-]+)=(.*)$", line)  # `:env:.` lines are the environment's, below
        if not m:
            continue
        try:
            value = ast.literal_eval(m.group(3))
        except (ValueError, SyntaxError):
            continue
        value = _dated_value(m.group(2), str(value))
        if value is not None:
            if not config.has_section(m.group(1)):
                config.add_section(m.group(1))
            config.set(m.group(1), m.group(2), value)
    config_into.parent.mkdir(parents=True, exist_ok=True)
    part = config_into.with_name(f".{config_into.name}.{os.getpid()}-{threading.get_ident()}")
    with open(part, "w") as f:
        config.write(f)
    os.replace(part, config_into)  # builds side by side write the same file
    env = {k: v for k, v in os.environ.items() if k != "PIP_FIND_LINKS"}
    for name, key in (("PIP_INDEX_URL", "index-url"), ("PIP_EXTRA_INDEX_URL", "extra-index-url")):
        if name in env:
            value = _dated_value(key, env.pop(name))
            if value:
                env[name] = value
    env["PIP_CONFIG_FILE"] = str(config_into)
    return PipSources(("--uploaded-prior-to", f"{as_of}T00:00:00Z"), env, as_of)


def _dated_value(key: str, value: str) -> str | None:
    """A pip setting as a dated resolution keeps it: indexes over http(s) only, no find-links."""
    if key == "find-links":
        return None
    if key in ("index-url", "extra-index-url"):
        urls = [u for u in value.split() if u.startswith(("http://", "https://"))]
        return " ".join(urls) or None
    return value



def conda_to_pip(words: list[str]) -> list[str]:
    """Conda package specs (`name`, `name=1.2`, `name>=1`) as pip requirements; python itself left out."""
    out = []
    for word in words:
        word = word.strip()
        if not word or re.match(r"^python([<>=!~ ]|$)", word):
            continue
        m = re.match(r"^([A-Za-z0-9_.\-]+)=([^=<>!].*)$", word)  # conda's single '=' is a version prefix
        out.append(f"{m.group(1)}=={m.group(2)}.*" if m and not m.group(2).endswith("*") and m.group(2).count(".") < 2
                   else (f"{m.group(1)}=={m.group(2)}" if m else word))
    return out


# conda packages whose PyPI distribution has another name; on PyPI, `iris` is a placeholder that
# raises at import (xarray's suite then fails to collect), SciTools' Iris is `scitools-iris`
_PYPI_NAMES = {"matplotlib-base": "matplotlib", "pytables": "tables", "msgpack-python": "msgpack",
               "pyqt": "PyQt5", "python-graphviz": "graphviz", "iris": "scitools-iris", "dask-core": "dask",
               "pytorch": "torch"}


def environment_to_pip(text: str) -> list[str]:
    """A conda environment.yml's dependencies as pip requirements: its conda packages (conda_to_pip)
    and its `pip:` list; python and pip themselves left out."""
    import yaml

    try:
        deps = (yaml.safe_load(text) or {}).get("dependencies") or []
    except yaml.YAMLError as e:
        raise BuildError(f"its environment.yml cannot be read: {str(e).splitlines()[0]}") from None
    conda = [d.strip() for d in deps if isinstance(d, str) and not re.match(r"^pip([<>=!~ ]|$)", d.strip())]
    conda = [re.sub(r"^[A-Za-z0-9_.\-]+", lambda m: _PYPI_NAMES.get(m.group(), m.group()), d) for d in conda]
    pip = [p for d in deps if isinstance(d, dict) for p in d.get("pip") or [] if isinstance(p, str)]
    return conda_to_pip(conda) + pip


def requirement_phases(specs: dict, requirements: str | None, environment: str | None = None) -> list[list[str]]:
    """What the harness installs, in its order: the environment's packages, then pip_packages."""
    packages = specs.get("packages") or ""
    first: list[str] = []
    if packages == "requirements.txt":
        first = [line.strip() for line in (requirements or "").splitlines()
                 if line.strip() and not line.strip().startswith(("#", "-e", "--"))]
    elif packages == "environment.yml":
        if environment is None:
            raise BuildError("its spec builds a conda environment from environment.yml, which was not found")
        # resolved with the spec's pins, so the environment's unpinned packages fit them
        first = environment_to_pip(environment) + list(specs.get("pip_packages") or [])
    elif packages:
        first = conda_to_pip(packages.split())
    return [phase for phase in (first, list(specs.get("pip_packages") or [])) if phase]


def install_target(install: str | None) -> str | None:
    """What the spec's install step installs from /testbed (`.`, `.[test]`), whose dependencies the
    wheels must then hold; None when it installs nothing from there."""
    if not install:
        return None
    m = re.search(r"pip install\b.*?(?:^|\s)(\.(?:\[[^\]]*\])?)(?:\s|$)", install)
    if m:
        return m.group(1)
    return "." if re.search(r"setup\.py (install|develop)", install) else None


def wheel_builder(python: str, version: str, progress: Callable[[str], None]) -> str:
    """A virtual environment of that Python with a current pip, setuptools and wheel (made once,
    kept beside the wheel cache): the interpreter's own pip may be too old to build (3.6's is 18.1)."""
    venv = wheel_cache(version).parent / f"builder-py{version}"
    venv.parent.mkdir(parents=True, exist_ok=True)
    # Builds side by side (--jobs) share it: one makes it while the others wait (the kernel lets
    # go of the lock if its holder dies).
    with open(venv.parent / f".builder-py{version}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return _wheel_builder(python, version, venv, progress)


def _wheel_builder(python: str, version: str, venv: Path, progress: Callable[[str], None]) -> str:
    exe = str(venv / "bin" / "python")
    if os.access(exe, os.X_OK) and subprocess.run([exe, "-m", "pip", "--version"], capture_output=True).returncode == 0:
        return exe
    progress(f"making a wheel builder for Python {version} ({venv})…")
    shutil.rmtree(venv, ignore_errors=True)
    for argv in ([python, "-m", "venv", str(venv)],
                 [exe, "-m", "pip", "install", "-q", "--disable-pip-version-check", "--upgrade",
                  *LAST_TOOLS.get(version, ("pip", "setuptools", "wheel"))]):
        done = subprocess.run(argv, capture_output=True, text=True, timeout=BUILD_TIMEOUT)
        if done.returncode != 0:
            shutil.rmtree(venv, ignore_errors=True)
            last = ((done.stderr or done.stdout).strip().splitlines() or ["it failed"])[-1]
            raise BuildError(f"cannot make a wheel builder for Python {version}: {last[:300]}")
    return exe


def build_wheels(python: str, phases: list[list[str]], into: Path, cache: Path,
                 progress: Callable[[str], None], optional: set[str] = frozenset(),
                 tools: tuple[str, ...] = ("pip", "setuptools", "wheel"),
                 sources: PipSources = PipSources()) -> list[str]:
    """Every package the phases need, as wheels in `into`, built by that Python's pip (so they fit
    it), taking what `cache` already holds and keeping there what was new. A requirement in
    `optional` (a conda package PyPI may not have) that cannot be had is left out of its phase;
    the ones left out are returned, and the phase is trimmed in place (the image installs it)."""
    cache.mkdir(parents=True, exist_ok=True)
    listing = into.parent / "wheels.txt"
    dropped: list[str] = []
    for phase in [list(tools), *phases]:  # the build backend the install step needs
        env = dict(sources.env or os.environ)
        while True:
            listing.write_text("\n".join(phase) + "\n")
            progress(f"wheels: {' '.join(phase)[:160]}")
            done = subprocess.run([python, "-m", "pip", "wheel", "--disable-pip-version-check", "--no-cache-dir",
                                   "--use-pep517", *sources.args, "--wheel-dir", str(into), "--find-links", str(cache),
                                   "-r", str(listing)], capture_output=True, text=True, timeout=BUILD_TIMEOUT, env=env)
            if done.returncode == 0:
                break
            older = _older_setuptools(done.stdout + done.stderr)
            if older and "PIP_CONSTRAINT" not in env:
                # an sdist written for a setuptools of its time: its build gets one
                progress(f"wheels: an old sdist needs {older} to build: built with it")
                constraint = into.parent / "build-constraint.txt"
                constraint.write_text(older + "\n")
                env["PIP_CONSTRAINT"] = str(constraint)
                continue
            culprit = _culprit(done.stdout + done.stderr, [r for r in phase if r in optional])
            if culprit is None:
                _said_in_full(progress, done.stdout + done.stderr)
                raise BuildError(_pip_failure(done.stdout + done.stderr, python))
            progress(f"wheels: {culprit} cannot be had from the package index here: left out")
            phase.remove(culprit)
            dropped.append(culprit)
    for wheel in into.glob("*.whl"):
        if not (cache / wheel.name).exists():  # whole or not at all: another build may read it now
            part = cache / f".{wheel.name}.{os.getpid()}-{threading.get_ident()}.part"
            shutil.copy2(wheel, part)
            os.replace(part, cache / wheel.name)
    return dropped


def _older_setuptools(output: str) -> str | None:
    """The setuptools an old sdist's setup.py needs, from how it failed: `Feature` went in 46,
    `use_2to3` in 58."""
    if "cannot import name 'Feature'" in output:
        return "setuptools<46"
    if "use_2to3 is invalid" in output or "error in setup command: use_2to3" in output:
        return "setuptools<58"
    return None


def _culprit(output: str, candidates: list[str]) -> str | None:
    """Which of the candidate requirements pip's failure is about: no release of it, or its wheel
    did not build."""
    def name(requirement: str) -> str:
        return re.split(r"[<>=!~;\[ ]", requirement, 1)[0].strip().lower().replace("_", "-")
    named = re.findall(r"(?:satisfies the requirement|distribution found for|Failed to build|"
                       r"Failed building wheel for|for package) ([A-Za-z0-9_.\-]+)", output)
    wanted = {name(n) for n in named}
    return next((c for c in candidates if name(c) in wanted), None)


def project_dependencies(python: str, target: str, cache: Path, installed: list[str] = (),
                         progress: Callable[[str], None] | None = None,
                         sources: PipSources = PipSources()) -> list[str] | None:
    """What installing `target` (/testbed, with its extras) pulls in, pinned as that Python's pip
    resolves it, the project itself left out: read from pip's report of a dry run, which prepares
    the project's metadata and does not build it (astropy's C extensions would be compiled twice,
    here then in the image). `installed` (name==version: the environment's) holds the packages the
    environment has to their versions, as pip in the image keeps them; where the project needs
    others, it is resolved without. None with a pip too old to report (3.6's): then its wheel is
    built."""
    with tempfile.TemporaryDirectory(prefix="dgym-resolve-") as tmp:
        report, constraints = Path(tmp) / "report.json", Path(tmp) / "installed.txt"
        constraints.write_text("\n".join(installed) + "\n")
        for held in ([["-c", str(constraints)]] if installed else []) + [[]]:
            done = subprocess.run([python, "-m", "pip", "install", "--dry-run", "--ignore-installed", "-q",
                                   "--disable-pip-version-check", "--use-pep517", *sources.args, "--find-links",
                                   str(cache), *held, "--report", str(report), target],
                                  capture_output=True, text=True, timeout=BUILD_TIMEOUT, env=sources.env)
            if done.returncode == 0:
                break
            if "no such option: --report" in done.stderr or "no such option: --dry-run" in done.stderr:
                return None
        if done.returncode != 0:
            _said_in_full(progress, done.stdout + done.stderr)
            raise BuildError(_pip_failure(done.stdout + done.stderr, python))
        installs = json.loads(report.read_text()).get("install") or []
    return [f"{item['metadata']['name']}=={item['metadata']['version']}" for item in installs
            if "dir_info" not in (item.get("download_info") or {})]


def _said_in_full(progress: Callable[[str], None] | None, output: str, lines: int = 120) -> None:
    """pip's own words on a failure, its last lines, into the build's log: the one-line cause
    cannot hold why a build backend failed."""
    if progress is not None:
        progress("pip said:\n" + "\n".join(output.rstrip().splitlines()[-lines:]))


def _pip_failure(output: str, python: str) -> str:
    """pip's failure in one line: the requirement no release satisfies, the wheel that did not
    build (and its first error), else pip's last ERROR line."""
    version = subprocess.run([python, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                             capture_output=True, text=True).stdout.strip()
    m = re.search(r"Could not find a version that satisfies the requirement (\S+)", output)
    if m:
        return f"{m.group(1)}: no release of it installs on Python {version} here"
    m = re.search(r"Failed to build ([^\n]+)", output) or re.search(r"Failed building wheel for (\S+)", output)
    if m:
        why = [ln.strip() for ln in output.splitlines() if re.search(r"error:|Error:", ln)]
        return f"{m.group(1).strip()}: building its wheel for Python {version} failed" + (f" ({why[0][:200]})" if why else "")
    lines = [ln.strip() for ln in output.splitlines() if ln.strip().startswith("ERROR")] or output.strip().splitlines()
    return f"pip could not get the packages for Python {version}: {(lines or ['it failed'])[-1][:300]}"


def wheel_cache(version: str, as_of: str | None = None) -> Path:
    """The wheels built for that Python, one folder per day they were resolved as of: a wheel
    resolved as of today would otherwise be taken by a build resolving as of an earlier day."""
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("dgym-tui")) / "wheels" / (f"py{version}-as-of-{as_of}" if as_of else f"py{version}")


def build_requirements(testbed: Path) -> list[str]:
    """What building the repository needs before pip can read its dependencies: pyproject.toml's
    `[build-system] requires` (PEP 518), setup.cfg's and setup.py's `setup_requires`. pip fetches
    them into an isolated build environment, from the index; the image has only its wheels."""
    found: list[str] = []
    pyproject = testbed / "pyproject.toml"
    if pyproject.is_file():
        import tomllib

        try:
            found += list(tomllib.loads(pyproject.read_text(errors="replace")).get("build-system", {})
                          .get("requires") or [])
        except (tomllib.TOMLDecodeError, AttributeError):
            pass
    setup_cfg = testbed / "setup.cfg"
    if setup_cfg.is_file():
        parser = configparser.ConfigParser(interpolation=None)
        try:
            parser.read_string(setup_cfg.read_text(errors="replace"))
            found += [w.strip() for w in parser.get("options", "setup_requires", fallback="").splitlines()
                      if w.strip()]
        except configparser.Error:
            pass
    setup_py = testbed / "setup.py"
    if setup_py.is_file():
        found += _setup_requires(setup_py.read_text(errors="replace"))
    return list(dict.fromkeys(r for r in found if r and not r.startswith("#")))


def _setup_requires(source: str) -> list[str]:
    """setup(setup_requires=[...]) when it is a literal list of strings (read, never run)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    for node in ast.walk(tree):
        if isinstance(node, ast.keyword) and node.arg == "setup_requires":
            try:
                value = ast.literal_eval(node.value)
            except ValueError:
                return []
            return [value] if isinstance(value, str) else [v for v in value if isinstance(v, str)]
    return []
