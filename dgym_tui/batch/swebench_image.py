"""A SWE-bench instance's environment image, built on this machine with no conda and no registry
(`dgym-tui image swebench INSTANCES.jsonl --repos DIR`).

SWE-bench's own images come from a registry these machines may not reach, and its build makes a
conda environment from the network. This builds the same environment from what is here:

- the spec's Python: a self-contained interpreter of that version on this machine (pyenv's),
  copied into the image at its own path;
- the spec's packages and pins (its requirements file at the environment's commit, its package
  list, then its pip_packages), resolved and built into wheels on this machine by that Python's
  own pip from the package index, then installed in the image with no network;
- the repository in /testbed with its history up to the base commit (tags made after it left
  out, no remote), fetched from a local clone (--repos), then the spec's own install steps, as
  swebench's setup script runs them (swebench 4.1.0's scripts); the spec's edits before the
  install (`pre_install`: pins in setup.py) are made before the wheels are resolved, in a
  container with no network, so the wheels are those of the edited pins;
- three layers as SWE-bench's images have them: the Python (per version), the environment (per
  Python and packages, shared by a repository's instances of one version), the instance;
- `source /opt/miniconda3/bin/activate; conda activate testbed` work as in SWE-bench's images
  (a shell function over a copy of the Python at conda's path), so the harness's eval script
  runs unchanged; pip in the image reads only the wheels it was built with;
- the image is named as swebench names it, so `dgym-tui batch INSTANCES.jsonl` finds it.

Anything that cannot be had (no such Python here, a package with no release for it, a build
that fails) stops that instance's build with one line naming it; no image is tagged half-built.
"""

from __future__ import annotations

import functools
import glob
import hashlib
import json
import os
import re
import shutil
import subprocess
import tarfile
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from dgym_tui.batch.swebench_specs import SpecsError, harness_scripts
from dgym_tui.batch.swebench_wheels import (BUILD_TIMEOUT, PACKAGES_AS_OF, BuildError, build_requirements,
                                            build_wheels, dated_sources, env_tools, environment_to_pip,
                                            install_target, project_dependencies, requirement_phases,
                                            wheel_builder, wheel_cache)
from dgym_tui.batch.tasks import find_repo
from dgym_tui.core.safe_text import visible

FORMAT = 2          # bump when what goes into an image changes: older builds are not reused
LABEL = "dgym-tui.swebench-build"
WHEELS = "/opt/dgym-wheels"                   # the environment's wheels (its layer)
INSTANCE_WHEELS = "/opt/dgym-wheels-instance"  # what the instance's install step adds (its layer)
PYTHON_IMAGE = "dgym-tui-swe-python"
ENV_IMAGE = "dgym-tui-swe-env"
ENV = "/opt/miniconda3/envs/testbed"
# swebench's repo script clones and trims the repository's history from the network; here the
# repository comes fetched at its base commit instead, and the rest of that script runs as it is.
# Its tags made after the base are left out as the fetch is made (_fetch_base); its check that no
# later commit is there runs as it is.
# Its `chmod -R 777 /testbed` and `git reset --hard` (after which git has given the files their own
# modes back, the folders staying open to all) are done in the build context instead: run in the
# image, each would copy every file of /testbed into a layer of its own (a changed mode or a
# rewritten file is a copy in overlayfs), twice the repository's size on disk.
_CLONE_STEPS = ("git clone", "git remote remove", "git tag -l", "git gc", "chmod -R 777", "git reset --hard")
CONDA_SHIM = ('# conda as SWE-bench\'s scripts use it, over an environment at conda\'s path\n'
              'conda() { if [ "$1" = activate ]; then . "/opt/miniconda3/envs/${2:-testbed}/bin/activate" && '
              'export CONDA_DEFAULT_ENV="${2:-testbed}" CONDA_PREFIX="/opt/miniconda3/envs/${2:-testbed}"; '
              'else echo "conda $1: not in this image (built by dgym-tui without conda)" >&2; return 1; fi; }\n')


def find_python(version: str) -> str:
    """A self-contained interpreter of `version` (X.Y) on this machine: pyenv's, or
    $DGYM_PYTHON_<X><Y> (a python binary inside its own prefix). BuildError when there is none."""
    override = os.environ.get(f"DGYM_PYTHON_{version.replace('.', '')}")
    candidates = [override] if override else []
    root = os.environ.get("PYENV_ROOT") or os.path.expanduser("~/.pyenv")
    for prefix in sorted(glob.glob(os.path.join(root, "versions", f"{version}.*")),
                         key=lambda p: [int(x) if x.isdigit() else 0 for x in re.split(r"[.]", os.path.basename(p))],
                         reverse=True):
        candidates.append(os.path.join(prefix, "bin", f"python{version}"))
    for path in candidates:
        if path and os.access(path, os.X_OK):
            prefix = os.path.dirname(os.path.dirname(os.path.realpath(path)))
            if prefix not in ("/usr", "/usr/local", "/"):
                return path
    raise BuildError(f"Python {version} is needed and this machine has none that can be copied into an image "
                     f"(pyenv install {version}, or set DGYM_PYTHON_{version.replace('.', '')} to one)")


# --- the image ------------------------------------------------------------------------------------


def _setup_env(python: str, phases: list[list[str]], tools: tuple[str, ...]) -> str:
    # The environment is a copy of the Python layer's interpreter, as a conda environment is an
    # interpreter of its own: its prefix is where its binary is, by whatever path it is run. A
    # virtual environment's python finds its packages only when run by its own path (pyvenv.cfg
    # beside it); through a symlink elsewhere it is the bare interpreter, and tox-current-env runs
    # sphinx's tests through one (.tox/py39/bin/python: "No module named pytest").
    prefix = os.path.dirname(os.path.dirname(python))
    activate = f'# the environment first on PATH, as conda\'s activate puts it\nexport PATH="{ENV}/bin:$PATH"\n'
    lines = ["#!/bin/bash", "set -euxo pipefail", f"mkdir -p {os.path.dirname(ENV)}", f"cp -a {prefix} {ENV}",
             # the copied prefix's scripts run the Python layer's interpreter: the environment makes its own
             f"rm -f {ENV}/bin/pip* {ENV}/bin/idle* {ENV}/bin/2to3* {ENV}/bin/pydoc* {ENV}/bin/easy_install*",
             f"cat > {ENV}/bin/activate <<'EOF_DGYM'\n{activate}EOF_DGYM", "mkdir -p /opt/miniconda3/bin",
             f"cat > /opt/miniconda3/bin/activate <<'EOF_DGYM'\n{CONDA_SHIM}EOF_DGYM",
             f"mkdir -p {INSTANCE_WHEELS}",
             f"printf '[global]\\nno-index = true\\nfind-links =\\n    {WHEELS}\\n    {INSTANCE_WHEELS}\\n"
             "disable-pip-version-check = true\\n' > /etc/pip.conf",
             "source /opt/miniconda3/bin/activate", "conda activate testbed",
             "python -m ensurepip",  # the interpreter's own bundled pip, then the environment's tools
             f"python -m pip install -q {' '.join(repr(t) for t in tools)}"]
    for n, phase in enumerate(phases):
        lines.append(f"cat > /root/phase{n}.txt <<'EOF_DGYM'\n" + "\n".join(phase) + "\nEOF_DGYM")
        lines.append(f"python -m pip install -r /root/phase{n}.txt")
    return "\n".join(lines) + "\n"


def _setup_repo(repo_script: list[str], edits_done: list[str], apt_steps: list[str]) -> str:
    """swebench's setup script, less its clone (the history came fetched), the pre_install edits
    (made before the wheels were resolved), its apt steps installing from the fetched files."""
    from dgym_tui.batch.swebench_testbed import APT_FROM_FILES, DEBS

    kept = []
    for line in repo_script:
        if line.startswith(_CLONE_STEPS) or line in edits_done:
            continue
        kept.append(f"if ls {DEBS}/*.deb >/dev/null 2>&1; then {APT_FROM_FILES}; fi" if line in apt_steps else line)
    # the index's file times are the build machine's: refreshed once here, not by every git command later
    return "\n".join(["#!/bin/bash", "set -euxo pipefail", "git -C /testbed update-index -q --refresh || true",
                      *kept]) + "\n"


def _python_dockerfile(base: str, prefix: str) -> str:
    parents = []
    path = os.path.dirname(prefix)
    while path not in ("/", ""):
        parents.append(path)
        path = os.path.dirname(path)
    return (f"FROM {base}\nUSER root\nENV HOME=/root\nCOPY python {prefix}\n"
            f"RUN chmod 755 {' '.join(parents) or '/'}\n")


def _env_dockerfile(python_image: str) -> str:
    # a compiler (for a repository with C extensions) is installed from fetched files, then the files go
    return (f"FROM {python_image}\nCOPY wheels {WHEELS}\nCOPY debs /root/debs\nCOPY setup_env.sh /root/\n"
            "RUN if ls /root/debs/*.deb >/dev/null 2>&1; then apt-get install -y --no-install-recommends "
            "/root/debs/*.deb && rm -rf /root/debs /var/lib/apt/lists/*; fi "
            "&& bash /root/setup_env.sh\n")


def _instance_dockerfile(env_image: str, httpbin_python: str | None = None) -> str:
    from dgym_tui.batch.swebench_testbed import DEBS, HTTPBIN_CERT, HTTPBIN_URL

    served = ""
    if httpbin_python:  # the tests' httpbin, served in the container (a virtual environment of its own)
        served = ("COPY httpbin-wheels /root/httpbin-wheels\nCOPY httpbin-serve /opt/dgym-httpbin-serve\n"
                  "COPY httpbin-cert.py /root/\n"
                  f"RUN {httpbin_python} -m venv /opt/dgym-httpbin && /opt/dgym-httpbin/bin/python -m pip install -q "
                  "--no-index --find-links /root/httpbin-wheels httpbin gunicorn cryptography "
                  "&& /opt/dgym-httpbin/bin/python /root/httpbin-cert.py "
                  "&& rm -rf /root/httpbin-wheels /root/httpbin-cert.py && chmod 755 /opt/dgym-httpbin-serve\n"
                  f'ENV HTTPBIN_URL={HTTPBIN_URL} REQUESTS_CA_BUNDLE={HTTPBIN_CERT}\n'
                  'ENTRYPOINT ["/opt/dgym-httpbin-serve"]\n')
    return (f"FROM {env_image}\nCOPY wheels {INSTANCE_WHEELS}\nCOPY debs {DEBS}\nCOPY testbed /testbed\n"
            "COPY setup_repo.sh /root/\n"
            f"RUN bash /root/setup_repo.sh\n{served}WORKDIR /testbed\n")


def _readable(info: tarfile.TarInfo) -> tarfile.TarInfo:
    """Owned by root, readable by all (and what its owner runs, runnable by all): set as the build
    context is made, since a `chmod -R` in the image would copy every file into a layer of its own."""
    info.uid = info.gid = 0
    info.uname = info.gname = "root"
    if info.isdir():
        info.mode |= 0o555
    elif info.isfile():
        info.mode |= 0o444 | (0o111 if info.mode & 0o100 else 0)
    return info


def _python_files(prefix: str):
    """The interpreter's prefix without its own test suite, caches and installed packages (the
    environment gets its own), readable by all."""
    skip = re.compile(r"/lib/python\d\.\d+/(test|idlelib|tkinter|turtledemo)(/|$)|/__pycache__(/|$)"
                      r"|/lib/python\d\.\d+/site-packages/.+")

    def keep(info: tarfile.TarInfo):
        return None if skip.search("/" + info.name) else _readable(info)
    return keep


def _open_to_all(info: tarfile.TarInfo) -> tarfile.TarInfo:
    """/testbed as swebench's `chmod -R 777` then `git reset --hard` leave it: its folders open to
    all (a non-root user runs the tests), its files as git checks them out; owned by root."""
    info.uid = info.gid = 0
    info.uname = info.gname = "root"
    if info.isdir():
        info.mode = 0o777
    return info


@functools.cache
def builder_digest() -> str:
    """The builder's own code, in every image's key: a change to how images are made is a new
    image, never a stale one that still passes. Read once: the code this process runs."""
    here = Path(__file__).parent
    digest = hashlib.sha256()
    for name in ("swebench_image.py", "swebench_wheels.py", "swebench_testbed.py", "swebench_specs.py"):
        digest.update((here / name).read_bytes())
    return digest.hexdigest()[:16]


def _digest(*parts) -> str:
    return hashlib.sha256(json.dumps([FORMAT, builder_digest(), *parts], sort_keys=True).encode()).hexdigest()[:16]


def _present(client, image: str, digest: str):
    """The image when it is there and was built from the same inputs (its label), else None."""
    import docker

    try:
        found = client.images.get(image)
    except docker.errors.ImageNotFound:
        return None
    return found if found.labels.get(LABEL) == digest else None


def _layer(client, image: str, digest: str, context: dict, progress, instance_id: str, rebuild: bool):
    """Build `image` from `context` (name -> a path, or a (path, tar filter)) unless it is there."""
    found = None if rebuild else _present(client, image, digest)
    if found is None:
        progress(f"{instance_id}: building {image} (no network)…")
        _docker_build(client, context, image, {LABEL: digest, "dgym-tui.instance": instance_id}, progress, instance_id)
        found = client.images.get(image)
    return found


def build(record: dict, repos: str | os.PathLike, base: str | None = None, client=None,
          progress: Callable[[str], None] = print, rebuild: bool = False) -> dict:
    """Build (or find already built) the instance's image, in three layers: the Python, the
    environment, the instance. Returns {"image", "seconds", "size" (the whole image), "own" (the
    instance's layer alone), "env", "env_size", "built", "testbed" ("history" or "archive"), "left_out",
    "serves"}. BuildError: one line
    saying what cannot be had."""
    from dgym_tui.batch.swebench import image_name
    from dgym_tui.batch.swebench_testbed import (HTTPBIN_ENTRYPOINT, HTTPBIN_MAKE_CERT, apply_edits, calls_httpbin,
                                                 fetch, fetch_debs, fill_submodules, lost_paths,
                                                 split_pre_install, stand_in_lost)
    from dgym_tui.sandbox.docker_sandbox import DEFAULT_IMAGE, connect

    instance_id = record.get("instance_id", "?")
    image = image_name(record)
    client = client or connect(timeout=10, call_timeout=60)
    base = base or DEFAULT_IMAGE
    git_dir = find_repo(repos, record["repo"])
    if git_dir is None:
        raise BuildError(f"{instance_id}: no clone of {record['repo']} under {repos} "
                         f"(expected {record['repo'].replace('/', '+')}, {record['repo'].split('/')[-1]}, …)")
    base_id = _image_id(client, base)
    digest = _digest(base_id, {k: record.get(k) for k in ("repo", "version", "base_commit",
                                                           "environment_setup_commit", "test_patch")})
    found = None if rebuild else _present(client, image, digest)
    if found is not None:
        return {"image": image, "seconds": 0.0, **_sizes(client, found),
                "built": False, "testbed": found.labels.get("dgym-tui.testbed", "history"),
                "serves": [found.labels["dgym-tui.serves"]] if found.labels.get("dgym-tui.serves") else []}
    started = time.monotonic()
    try:
        scripts = harness_scripts(record, git_dir)
    except SpecsError as e:
        raise BuildError(str(e)) from None
    specs = scripts["specs"]
    version = str(specs["python"])
    try:
        python = find_python(version)
        phases = requirement_phases(specs, scripts.get("requirements"), scripts.get("environment"))
    except BuildError as e:
        raise BuildError(f"{instance_id}: {e}") from None
    prefix = os.path.dirname(os.path.dirname(os.path.realpath(python)))
    progress(f"{instance_id}: {record['repo']} {record['version']} on Python {version} ({prefix})")
    edits, system, packages = split_pre_install(list(specs.get("pre_install") or []))
    apt_steps = [step for step in specs.get("pre_install") or [] if step not in edits and step not in system]
    with tempfile.TemporaryDirectory(prefix="dgym-swebench-build-") as tmp:
        context = Path(tmp)
        for name in ("wheels", "env-wheels", "debs", "env-debs", "httpbin-wheels"):
            (context / name).mkdir()
        try:
            testbed = fetch(git_dir, record["base_commit"], context / "testbed")
            if testbed == "archive":
                progress(f"{instance_id}: the mirror refused a fetch; /testbed is the base's tree in one commit")
            filled, missing = fill_submodules(context / "testbed", repos)
            if filled:
                progress(f"{instance_id}: submodules from the clones under --repos: {', '.join(filled)}")
            if missing:
                progress(f"{instance_id}: submodules with no clone under --repos, left empty: {', '.join(missing)}")
            apply_edits(client, base, context / "testbed", edits)
            fetch_debs(client, base, packages, context / "debs")
            compiler = needs_compiler(context / "testbed")
            if compiler:  # SWE-bench's base image has build-essential; this one gets it where it is used
                fetch_debs(client, base, list(COMPILER), context / "env-debs")
            builder = wheel_builder(python, version, progress)
            sources = dated_sources(builder, PACKAGES_AS_OF, wheel_cache(version).parent / "pip-dated.conf")
            progress(f"{instance_id}: packages as the index had them on {sources.as_of}" if sources.as_of else
                     f"{instance_id}: packages as the index has them today (this Python's last pip resolves "
                     f"as of no date)")
            cache = wheel_cache(version, sources.as_of)
            lost = lost_paths(testbed)
            if lost:
                stood_in = stand_in_lost(context / "testbed", git_dir, record["base_commit"], lost,
                                         record["repo"].split("/")[-1], builder, sources.args, sources.env)
                if stood_in:
                    testbed = f"archive (the mirror lost {', '.join(lost)}; {stood_in})"
                    progress(f"{instance_id}: {stood_in}")
            # the environment: what the spec installs, shared by the instances of its version
            optional = set(environment_to_pip(scripts["environment"])) if scripts.get("environment") else set()
            left_out = build_wheels(builder, phases, context / "env-wheels", cache, progress, optional,
                                    tools=env_tools(version), sources=sources)
            # the instance: what building /testbed needs, and what its install step pulls in
            target = install_target(specs.get("install"))
            needs = build_requirements(context / "testbed")
            wanted = [needs] if needs else []
            if target:
                local = str(context / "testbed") + target[1:]
                deps = project_dependencies(builder, local, cache, installed_versions(context / "env-wheels", phases),
                                            progress, sources)
                if deps is not None:
                    wanted.append(deps)
            build_wheels(builder, [phase for phase in wanted if phase], context / "wheels", cache, progress,
                         sources=sources)
            if target and deps is None:  # a pip too old to report (3.6's): what it pulls in, from its wheel
                try:
                    build_wheels(builder, [[local]], context / "wheels", cache, progress, sources=sources)
                except BuildError as e:
                    # a setup.py that needs the environment to run (astropy 1.3's imports numpy): its
                    # install step in the image then takes what the environment holds, or names what not
                    progress(f"{instance_id}: the project's own wheel does not build outside its environment "
                             f"({e}); its install step takes what the environment holds")
            httpbin = calls_httpbin(context / "testbed")
            if httpbin:
                progress(f"{instance_id}: its tests call httpbin.org: an httpbin is served in the container")
                build_wheels(builder, [["httpbin", "gunicorn", "cryptography"]], context / "httpbin-wheels", cache,
                             progress, sources=sources)
        except BuildError as e:
            raise BuildError(f"{instance_id}: {e}") from None
        # the repository's own wheel is built from /testbed in the image; what the environment has is not copied twice
        env_names = {w.name for w in (context / "env-wheels").glob("*.whl")}
        for wheel in (context / "wheels").glob("*.whl"):
            if wheel.name in env_names or wheel.name.split("-")[0].lower() == _dist_name(context / "testbed"):
                wheel.unlink()
        python_digest = _digest(base_id, prefix, _tree_stamp(prefix))
        python_image = f"{PYTHON_IMAGE}:{version}-{python_digest}"
        (context / "python.Dockerfile").write_text(_python_dockerfile(base, prefix))
        _layer(client, python_image, python_digest, {"Dockerfile": context / "python.Dockerfile",
                                                      "python": (prefix, _python_files(prefix))},
               progress, instance_id, rebuild)
        env_digest = _digest(python_digest, phases, sorted(env_names), compiler)
        env_image = f"{ENV_IMAGE}:py{version}-{env_digest}"
        (context / "setup_env.sh").write_text(_setup_env(os.path.join(prefix, "bin", os.path.basename(python)), phases,
                                                               env_tools(version)))
        (context / "env.Dockerfile").write_text(_env_dockerfile(python_image))
        _layer(client, env_image, env_digest, {"Dockerfile": context / "env.Dockerfile",
                                               "wheels": (context / "env-wheels", _readable),
                                               "debs": context / "env-debs", "setup_env.sh": context / "setup_env.sh"},
               progress, instance_id, rebuild)
        (context / "setup_repo.sh").write_text(_setup_repo(scripts["repo_script_list"], edits, apt_steps))
        interpreter = os.path.join(prefix, "bin", os.path.basename(python))
        (context / "Dockerfile").write_text(_instance_dockerfile(env_image, interpreter if httpbin else None))
        (context / "httpbin-serve").write_text(HTTPBIN_ENTRYPOINT)
        (context / "httpbin-cert.py").write_text(HTTPBIN_MAKE_CERT)
        progress(f"{instance_id}: building {image} (no network)…")
        _docker_build(client, {**{name: context / name for name in ("Dockerfile", "debs", "setup_repo.sh",
                                                                    "httpbin-wheels", "httpbin-serve",
                                                                    "httpbin-cert.py")},
                               "wheels": (context / "wheels", _readable),
                               "testbed": (context / "testbed", _open_to_all)},
                      image, {LABEL: digest, "dgym-tui.instance": instance_id, "dgym-tui.testbed": testbed,
                             "dgym-tui.env": env_image, "dgym-tui.serves": "httpbin" if httpbin else ""},
                      progress, instance_id)
    found = client.images.get(image)
    return {"image": image, "seconds": round(time.monotonic() - started, 1), **_sizes(client, found), "built": True, "testbed": testbed, "left_out": left_out,
            "serves": ["httpbin"] if httpbin else []}


def installed_versions(wheels: Path, phases: list[list[str]]) -> list[str]:
    """name==version of what the environment ends up with: a package with one wheel, that one; with
    several (an early phase took the newest, a later one pins another), the last exact pin."""
    def norm(name: str) -> str:
        return re.sub(r"[-_.]+", "-", name).lower()
    versions: dict[str, set[str]] = {}
    for wheel in wheels.glob("*.whl"):
        name, version = wheel.name.split("-")[:2]
        versions.setdefault(norm(name), set()).add(version)
    pins = {}
    for phase in phases:
        for requirement in phase:
            m = re.match(r"^([A-Za-z0-9_.\-]+)==([^,;\s*]+)$", requirement.strip())
            if m:
                pins[norm(m.group(1))] = m.group(2)
    out = []
    for name, found in sorted(versions.items()):
        if len(found) == 1:
            out.append(f"{name}=={next(iter(found))}")
        elif name in pins:
            out.append(f"{name}=={pins[name]}")
    return out


COMPILER = ("gcc", "g++", "libc6-dev", "make")


def needs_compiler(testbed: Path) -> bool:
    """The repository builds C code: a build requirement that compiles (Cython, numpy's headers,
    extension-helpers, cffi, pybind11), a setup.py that declares extensions, or Cython sources and
    the `setup_package.py` files in which astropy_helpers' layout declares them (astropy 1.3's
    setup.py names neither: its setup_requires is a variable, its extensions found at run time)."""
    names = {re.split(r"[<>=!~;\[ ]", r, 1)[0].strip().lower().replace("_", "-")
             for r in build_requirements(testbed)}
    if names & {"cython", "numpy", "oldest-supported-numpy", "extension-helpers", "cffi", "pybind11"}:
        return True
    declares = re.compile(r"\bExtension\(|ext_modules\s*=|cythonize\(")
    setup_py = testbed / "setup.py"
    if setup_py.is_file() and declares.search(setup_py.read_text(errors="replace")):
        return True
    for folder, dirs, files in os.walk(testbed):
        dirs[:] = [d for d in dirs if d != ".git"]
        if any(f.endswith(".pyx") for f in files):
            return True
        if "setup_package.py" in files and declares.search(
                (Path(folder) / "setup_package.py").read_text(errors="replace")):
            return True
    return False


def _dist_name(testbed: Path) -> str:
    """The repository's own distribution name as a wheel's file name starts (normalised), or ""."""
    for path, pattern in ((testbed / "setup.cfg", r"^name\s*=\s*(\S+)"), (testbed / "pyproject.toml", r'^name\s*=\s*"([^"]+)"'),
                          (testbed / "setup.py", r"""\bname\s*=\s*['"]([^'"]+)['"]""")):
        if path.is_file():
            m = re.search(pattern, path.read_text(errors="replace"), re.M)
            if m:
                return re.sub(r"[-_.]+", "_", m.group(1)).lower()
    return ""


def _tree_stamp(prefix: str) -> list:
    """What says the interpreter at `prefix` is the same one: its binary's size and time."""
    exe = max(glob.glob(os.path.join(prefix, "bin", "python3*")) or [prefix], key=len)
    stat = os.stat(exe)
    return [os.path.basename(exe), stat.st_size, int(stat.st_mtime)]


def _sizes(client, image) -> dict:
    """{"size": the image whole, "own": what it adds to its environment image (the layers it alone
    has), "env": that environment image's name, "env_size": its size (shared by its instances)}."""
    import docker

    size = image.attrs.get("Size", 0)
    name = (image.labels or {}).get("dgym-tui.env", "")
    try:
        env_size = client.images.get(name).attrs.get("Size", 0) if name else 0
    except (docker.errors.ImageNotFound, docker.errors.APIError):
        env_size = 0
    return {"size": size, "own": max(0, size - env_size) if env_size else size, "env": name, "env_size": env_size}


def _image_id(client, name: str) -> str:
    import docker

    try:
        return client.images.get(name).id
    except docker.errors.ImageNotFound:
        raise BuildError(f"the base image {name} is not on this engine: build it first (dgym-tui image build)") from None


def _docker_build(client, context: dict, image: str, labels: dict, progress, instance_id: str) -> None:
    """Build from `context` (name in the build context -> a path, or (path, tar filter)) with no
    network; BuildError names the step that failed."""
    import docker

    buffer = tempfile.TemporaryFile()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for name, source in context.items():
            path, keep = source if isinstance(source, tuple) else (source, None)
            tar.add(path, arcname=name, filter=keep)
    buffer.seek(0)
    tail: list[str] = []
    saved = client.api.timeout
    client.api.timeout = BUILD_TIMEOUT
    try:
        for chunk in client.api.build(fileobj=buffer, custom_context=True, tag=image, network_mode="none", rm=True,
                                      forcerm=True, decode=True, labels=labels):
            for line in (chunk.get("stream") or "").splitlines():
                line = visible(_COLOUR.sub("", line))  # the build's output is the repository's: untrusted
                if line.strip():
                    tail = (tail + [line.strip()])[-40:]
                    progress(line.strip()[:200])
            if "error" in chunk:
                raise BuildError(f"{instance_id}: the image build failed: {_build_failure(tail, chunk['error'])}")
    except docker.errors.DockerException as e:
        raise BuildError(f"{instance_id}: the image build failed: {e}") from None
    finally:
        client.api.timeout = saved
        buffer.close()


_COLOUR = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]")


def _build_failure(tail: list[str], error: str) -> str:
    """The line that says why: a missing compiler, pip's ERROR, else the last command the setup
    scripts ran."""
    for line in tail:
        if re.search(r"command '[\w+-]*(gcc|cc|g\+\+|clang)' failed|(gcc|cc): (command )?not found", line):
            return f"a C compiler is needed and the image has none ({line.strip()[:200]})"
    for line in reversed(tail):
        if line.startswith("ERROR:") and "subprocess-exited-with-error" not in line:
            return line[:300]
    ran = [ln[2:] for ln in tail if ln.startswith("+ ")]
    said = [ln for ln in tail if not ln.startswith(("+", "Step ", "--->", "Removing"))]
    return ((f"`{ran[-1][:200]}` failed" if ran else "the setup failed")
            + (f": {said[-1][:200]}" if said else f": {error.strip().splitlines()[-1][:200]}"))


def read_records(path: str | os.PathLike) -> list[dict]:
    """The instances of a JSON-lines file (or a JSON list)."""
    text = Path(path).read_text()
    if text.lstrip().startswith("["):
        return json.loads(text)
    return [json.loads(line) for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]
