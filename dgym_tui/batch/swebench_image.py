"""A SWE-bench instance's environment image, built on this machine with no conda and no registry
(`dgym-tui image swebench INSTANCES.jsonl --repos DIR`).

SWE-bench's own images come from a registry these machines may not reach, and its build makes a
conda environment from the network. This builds the same environment from what is here:

- the spec's Python: a self-contained interpreter of that version on this machine (pyenv's),
  copied into the image at its own path;
- the spec's packages and pins (its requirements file at the environment's commit, its package
  list, then its pip_packages), resolved and built into wheels on this machine by that Python's
  own pip from the package index, then installed in the image with no network;
- the repository at its base commit in /testbed, fetched from a local clone (--repos), then the
  spec's own install steps, as swebench's setup script runs them (swebench 4.1.0's scripts);
- `source /opt/miniconda3/bin/activate; conda activate testbed` work as in SWE-bench's images
  (a shell function over a virtual environment at conda's path), so the harness's eval script
  runs unchanged; pip in the image reads only the wheels it was built with;
- the image is named as swebench names it, so `dgym-tui batch INSTANCES.jsonl` finds it.

Anything that cannot be had (no such Python here, a package with no release for it, a build
that fails) stops that instance's build with one line naming it; no image is tagged half-built.
"""

from __future__ import annotations

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
from dgym_tui.batch.tasks import find_repo

FORMAT = 1          # bump when what goes into an image changes: older builds are not reused
LABEL = "dgym-tui.swebench-build"
WHEELS = "/opt/dgym-wheels"
ENV = "/opt/miniconda3/envs/testbed"
BUILD_TIMEOUT = 3600
# swebench's repo script clones and trims the repository's history from the network; here the
# repository comes fetched at its base commit instead, and the rest of that script runs as it is.
_CLONE_STEPS = ("git clone", "git reset --hard", "git remote remove", "TARGET_TIMESTAMP=", "git tag -l",
                "git reflog expire", "git gc", "AFTER_TIMESTAMP=", "COMMIT_COUNT=", '[ "$COMMIT_COUNT"')
CONDA_SHIM = ('# conda as SWE-bench\'s scripts use it, over a virtual environment at conda\'s path\n'
              'conda() { if [ "$1" = activate ]; then . "/opt/miniconda3/envs/${2:-testbed}/bin/activate" && '
              'export CONDA_DEFAULT_ENV="${2:-testbed}" CONDA_PREFIX="/opt/miniconda3/envs/${2:-testbed}"; '
              'else echo "conda $1: not in this image (built by dgym-tui without conda)" >&2; return 1; fi; }\n')


# The last pip, setuptools and wheel for the oldest Pythons: an old pip does not always skip the
# releases that need a newer Python (an index may not say which they are).
LAST_TOOLS = {"3.6": ("pip==21.3.1", "setuptools==59.6.0", "wheel==0.37.1"),
              "3.7": ("pip==24.0", "setuptools==68.0.0", "wheel==0.42.0"),
              "3.8": ("pip==25.0.1", "setuptools==75.3.0", "wheel==0.45.1")}


class BuildError(RuntimeError):
    """An instance that cannot be built here; str() is one line saying what and why."""


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


# --- the packages ---------------------------------------------------------------------------------


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


def requirement_phases(specs: dict, requirements: str | None) -> list[list[str]]:
    """What the harness installs, in its order: the environment's packages, then pip_packages."""
    packages = specs.get("packages") or ""
    first: list[str] = []
    if packages == "requirements.txt":
        first = [line.strip() for line in (requirements or "").splitlines()
                 if line.strip() and not line.strip().startswith(("#", "-e", "--"))]
    elif packages == "environment.yml":
        raise BuildError("its spec builds a conda environment from environment.yml, which needs conda")
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
                 progress: Callable[[str], None]) -> None:
    """Every package the phases need, as wheels in `into`, built by that Python's pip (so they fit
    it), taking what `cache` already holds and keeping there what was new."""
    cache.mkdir(parents=True, exist_ok=True)
    listing = into.parent / "wheels.txt"
    for phase in [["pip", "setuptools", "wheel"], *phases]:  # the build backend the install step needs
        listing.write_text("\n".join(phase) + "\n")
        progress(f"wheels: {' '.join(phase)[:160]}")
        done = subprocess.run([python, "-m", "pip", "wheel", "--disable-pip-version-check", "--no-cache-dir", "--use-pep517",
                               "--wheel-dir", str(into), "--find-links", str(cache), "-r", str(listing)],
                              capture_output=True, text=True, timeout=BUILD_TIMEOUT)
        if done.returncode != 0:
            raise BuildError(_pip_failure(done.stdout + done.stderr, python))
    for wheel in into.glob("*.whl"):
        if not (cache / wheel.name).exists():
            shutil.copy2(wheel, cache / wheel.name)


def _pip_failure(output: str, python: str) -> str:
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


# --- the image ------------------------------------------------------------------------------------


def _setup_env(python: str, phases: list[list[str]]) -> str:
    lines = ["#!/bin/bash", "set -euxo pipefail", f"{python} -m venv {ENV}", "mkdir -p /opt/miniconda3/bin",
             f"cat > /opt/miniconda3/bin/activate <<'EOF_DGYM'\n{CONDA_SHIM}EOF_DGYM",
             f"printf '[global]\\nno-index = true\\nfind-links = {WHEELS}\\ndisable-pip-version-check = true\\n' "
             "> /etc/pip.conf",
             "source /opt/miniconda3/bin/activate", "conda activate testbed",
             "python -m pip install -q --upgrade pip setuptools wheel"]
    for n, phase in enumerate(phases):
        lines.append(f"cat > /root/phase{n}.txt <<'EOF_DGYM'\n" + "\n".join(phase) + "\nEOF_DGYM")
        lines.append(f"python -m pip install -r /root/phase{n}.txt")
    return "\n".join(lines) + "\n"


def _setup_repo(repo_script: list[str]) -> str:
    kept = [line for line in repo_script if not line.startswith(_CLONE_STEPS)]
    return "\n".join(["#!/bin/bash", "set -euxo pipefail", *kept]) + "\n"


def _dockerfile(base: str, prefix: str) -> str:
    parents = []
    path = os.path.dirname(prefix)
    while path not in ("/", ""):
        parents.append(path)
        path = os.path.dirname(path)
    return (f"FROM {base}\nUSER root\nENV HOME=/root\n"
            f"COPY python {prefix}\nCOPY wheels {WHEELS}\nCOPY testbed /testbed\n"
            "COPY setup_env.sh setup_repo.sh /root/\n"
            f"RUN chmod 755 {' '.join(parents) or '/'} && chmod -R a+rX {prefix} {WHEELS} "
            "&& bash /root/setup_env.sh && bash /root/setup_repo.sh\n"
            "WORKDIR /testbed\n")


def _fetch_base(git_dir: str, commit: str, into: Path) -> None:
    """The repository at its base commit, on a branch of its own, with no remote and no later
    history (one commit deep: the harness needs the commit itself, not its ancestors)."""
    into.mkdir(parents=True)
    for args in (["init", "-q"], ["-c", "uploadpack.allowAnySHA1InWant=true", "fetch", "-q", "--depth", "1",
                                  "--no-tags", git_dir, commit],
                 ["checkout", "-q", "-b", "main", "FETCH_HEAD"]):
        done = subprocess.run(["git", "-C", str(into), *args], capture_output=True, text=True)
        if done.returncode != 0:
            raise BuildError(f"cannot get base commit {commit[:12]} from {git_dir}: "
                             f"{(done.stderr.strip().splitlines() or ['git failed'])[-1]}")


def _python_files(prefix: str):
    """The interpreter's prefix without its own test suite, caches and installed packages (the
    environment gets its own)."""
    skip = re.compile(r"/lib/python\d\.\d+/(test|idlelib|tkinter|turtledemo)(/|$)|/__pycache__(/|$)"
                      r"|/lib/python\d\.\d+/site-packages/.+")

    def keep(info: tarfile.TarInfo):
        return None if skip.search("/" + info.name) else info
    return keep


def build(record: dict, repos: str | os.PathLike, base: str | None = None, client=None,
          progress: Callable[[str], None] = print, rebuild: bool = False) -> dict:
    """Build (or find already built) the instance's image. Returns {"image", "seconds", "size",
    "built"}. BuildError: one line saying what cannot be had."""
    import docker

    from dgym_tui.sandbox.docker_sandbox import DEFAULT_IMAGE, connect

    instance_id = record.get("instance_id", "?")
    from dgym_tui.batch.swebench import image_name

    image = image_name(record)
    client = client or connect(timeout=10, call_timeout=60)
    base = base or DEFAULT_IMAGE
    git_dir = find_repo(repos, record["repo"])
    if git_dir is None:
        raise BuildError(f"{instance_id}: no clone of {record['repo']} under {repos} "
                         f"(expected {record['repo'].replace('/', '+')}, {record['repo'].split('/')[-1]}, …)")
    key = json.dumps({"format": FORMAT, "base": _image_id(client, base), "record": {
        k: record.get(k) for k in ("repo", "version", "base_commit", "environment_setup_commit", "test_patch")}},
        sort_keys=True)
    digest = hashlib.sha256(key.encode()).hexdigest()[:16]
    if not rebuild:
        try:
            found = client.images.get(image)
            if found.labels.get(LABEL) == digest:
                return {"image": image, "seconds": 0.0, "size": found.attrs.get("Size", 0), "built": False}
        except docker.errors.ImageNotFound:
            pass
    started = time.monotonic()
    try:
        scripts = harness_scripts(record, git_dir)
    except SpecsError as e:
        raise BuildError(str(e)) from None
    specs = scripts["specs"]
    try:
        python = find_python(str(specs["python"]))
        phases = requirement_phases(specs, scripts.get("requirements"))
    except BuildError as e:
        raise BuildError(f"{instance_id}: {e}") from None
    prefix = os.path.dirname(os.path.dirname(os.path.realpath(python)))
    progress(f"{instance_id}: {record['repo']} {record['version']} on Python {specs['python']} ({prefix})")
    with tempfile.TemporaryDirectory(prefix="dgym-swebench-build-") as tmp:
        context = Path(tmp)
        (context / "wheels").mkdir()
        try:
            _fetch_base(git_dir, record["base_commit"], context / "testbed")
            target = install_target(specs.get("install"))
            # what the install step pulls in is fetched here too: the image has no network
            wanted = phases + ([[str(context / "testbed") + target[1:]]] if target else [])
            builder = wheel_builder(python, str(specs["python"]), progress)
            build_wheels(builder, wanted, context / "wheels", wheel_cache(specs["python"]), progress)
        except BuildError as e:
            raise BuildError(f"{instance_id}: {e}") from None
        (context / "setup_env.sh").write_text(_setup_env(os.path.join(prefix, "bin", os.path.basename(python)), phases))
        (context / "setup_repo.sh").write_text(_setup_repo(scripts["repo_script_list"]))
        (context / "Dockerfile").write_text(_dockerfile(base, prefix))
        progress(f"{instance_id}: building {image} (no network)…")
        _docker_build(client, context, prefix, image, {LABEL: digest, "dgym-tui.instance": instance_id}, progress,
                      instance_id)
    found = client.images.get(image)
    return {"image": image, "seconds": round(time.monotonic() - started, 1), "size": found.attrs.get("Size", 0),
            "built": True}


def wheel_cache(version: str) -> Path:
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("dgym-tui")) / "wheels" / f"py{version}"


def _image_id(client, name: str) -> str:
    import docker

    try:
        return client.images.get(name).id
    except docker.errors.ImageNotFound:
        raise BuildError(f"the base image {name} is not on this engine: build it first (dgym-tui image build)") from None


def _docker_build(client, context: Path, prefix: str, image: str, labels: dict, progress, instance_id: str) -> None:
    import docker

    buffer = tempfile.TemporaryFile()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for name in ("Dockerfile", "setup_env.sh", "setup_repo.sh", "wheels", "testbed"):
            tar.add(context / name, arcname=name)
        tar.add(prefix, arcname="python", filter=_python_files(prefix))
    buffer.seek(0)
    tail: list[str] = []
    saved = client.api.timeout
    client.api.timeout = BUILD_TIMEOUT
    try:
        for chunk in client.api.build(fileobj=buffer, custom_context=True, tag=image, network_mode="none", rm=True,
                                      forcerm=True, decode=True, labels=labels):
            for line in (chunk.get("stream") or "").splitlines():
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


def _build_failure(tail: list[str], error: str) -> str:
    """The line that says why: pip's ERROR, else the last command the setup scripts ran."""
    for line in reversed(tail):
        if line.startswith("ERROR:"):
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


def validate(record: dict, progress: Callable[[str], None] = print) -> dict:
    """FAIL_TO_PASS and PASS_TO_PASS as SWE-bench's validation computes them, in fresh containers
    of the instance's image: the harness's eval script (which applies the test patch) at the base,
    then with the gold patch; each log read by the repository's log parser. Returns the record
    with both lists filled (JSON strings, as the dataset has them) and "statuses": {"before",
    "after"}. BuildError: the image is missing or a run failed."""
    from dgym_tui.batch.spec import Task
    from dgym_tui.batch.swebench import HarnessScorer, environment
    from dgym_tui.sandbox.errors import SandboxError

    env, note = environment(record, record.get("instance_id", "?"))
    if env is None:
        raise BuildError(note)
    task = Task(id=record["instance_id"], repo=record["repo"], base_commit=record["base_commit"], problem=None,
                entrypoint=None, fail_to_pass=[], pass_to_pass=[], test_patch=record.get("test_patch"),
                test_files=[], environment=env)
    runs = {}
    for name, patch in (("before", ""), ("after", record.get("patch") or "")):
        progress(f"{task.id}: the eval script, {'with the gold patch' if patch else 'at the base'}…")
        scorer = HarnessScorer(task, "/dev/null")
        try:
            runs[name] = scorer.statuses_with(patch)
        except SandboxError as e:
            raise BuildError(f"{task.id}: {'the gold patch' if patch else 'the base'}: {e}") from None
        finally:
            scorer.close()
    good = ("PASSED", "XFAIL")
    before, after = runs["before"], runs["after"]
    f2p = sorted(t for t, s in after.items() if s in good and before.get(t) not in good)
    p2p = sorted(t for t, s in after.items() if s in good and before.get(t) in good)
    return {**record, "FAIL_TO_PASS": json.dumps(f2p), "PASS_TO_PASS": json.dumps(p2p),
            "statuses": {"before": before, "after": after}}
