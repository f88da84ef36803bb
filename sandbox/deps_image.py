"""The Docker sandbox's image with the repo's dependencies installed: built FROM the sandbox image
the first time a repo declares dependencies (core/dependencies.py), then reused.

As a devcontainer or a SWE-bench image does it: the network is there only while the image
builds (the sandbox itself runs without one), pip is the image's own Python's (an image without
pip gets it from the pip wheel bundled with this Python, run from the wheel itself), and the
result is tagged by a hash of everything that went into it (the base image's id, the
requirements, the wheel folder's files by name, size and time, the index, the set-up command),
so a second start finds it and costs nothing, and a changed requirements file builds a new one.

Offline: `wheels` is a folder of wheels installed with --no-index (copied into the build);
`index_url` points pip at a private index or a mirror.
"""

from __future__ import annotations

import glob
import hashlib
import io
import json
import os
import re
import shlex
import tarfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from dgym_tui.sandbox.errors import SandboxError

REPOSITORY = "dgym-tui-deps"
FORMAT = 1  # bump when the build below changes: older images are not reused
BUILD_TIMEOUT = 3600


@dataclass(frozen=True)
class DepsOptions:
    """How the repo's dependencies get into the Docker sandbox (the command line's --no-deps,
    --wheels, --index-url, --setup and config.toml's [sandbox])."""

    install: bool = True             # read and install the repo's declared dependencies
    wheels: str | None = None        # a folder of wheels: pip installs from it alone (--no-index)
    index_url: str | None = None     # pip's index (a mirror, a private index)
    setup: str | None = None         # a shell command run as root at build time, with network
    network: str | None = None       # the build's network (default: the host's)

    @property
    def wanted(self) -> bool:
        return self.install or bool(self.setup)


def _wheel_files(folder: str) -> list[Path]:
    path = Path(folder).expanduser()
    if not path.is_dir():
        raise SandboxError(f"the wheel folder {folder} is not a folder (--wheels)")
    return sorted(p for p in path.iterdir() if p.is_file() and p.suffix in (".whl", ".gz", ".zip"))


def image_key(base_id: str, requirements: tuple[str, ...], options: DepsOptions, python: str) -> str:
    """The hash that names the derived image: what went into it, and nothing else."""
    # name, size and time of each wheel: hashing their bytes at every start would read a
    # wheelhouse of gigabytes each time
    wheels = [[w.name, w.stat().st_size, w.stat().st_mtime_ns] for w in _wheel_files(options.wheels)] \
        if options.wheels else []
    text = json.dumps({"format": FORMAT, "base": base_id, "requirements": list(requirements),
                       "wheels": wheels, "index_url": options.index_url, "setup": options.setup,
                       "python": python}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _pip_wheel() -> Path | None:
    """The pip wheel bundled with this Python (ensurepip), for images that have no pip."""
    import ensurepip

    found = sorted(glob.glob(os.path.join(os.path.dirname(ensurepip.__file__), "_bundled", "pip-*.whl")))
    return Path(found[-1]) if found else None


def _host_ca_bundle() -> Path | None:
    """The certificates the host's pip is told to trust (a company proxy's): the build's pip
    and set-up command trust them too, for the build only."""
    for name in ("PIP_CERT", "REQUESTS_CA_BUNDLE", "SSL_CERT_FILE"):
        value = os.environ.get(name)
        if value and os.path.isfile(value):
            return Path(value)
    return None


CA_IN_BUILD = "/tmp/dgym-build/host-ca.pem"
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def dockerfile(base: str, python: str, requirements: bool, options: DepsOptions, pip_wheel: str | None,
               user: str, ca: bool = False) -> str:
    q = shlex.quote
    trust = f"export PIP_CERT={CA_IN_BUILD} SSL_CERT_FILE={CA_IN_BUILD}; " if ca else ""
    pip_options = ["--no-cache-dir", "--disable-pip-version-check"]
    if options.wheels:
        pip_options += ["--no-index", "--find-links", "/tmp/dgym-build/wheels"]
    elif options.index_url:
        pip_options += ["--index-url", options.index_url]
    lines = [f"FROM {base}", "USER root", "COPY . /tmp/dgym-build",
             # Debian's Python refuses pip installs outside a venv (PEP 668): this image is
             # the project's own environment, so they go to its site-packages.
             "ENV PIP_BREAK_SYSTEM_PACKAGES=1 PIP_ROOT_USER_ACTION=ignore"]
    if pip_wheel:
        # pip runs from its own wheel to install itself, when the image has none
        lines.append(f"RUN {q(python)} -m pip --version >/dev/null 2>&1 || "
                     f"{q(python)} /tmp/dgym-build/{pip_wheel}/pip install --no-index --no-cache-dir "
                     f"/tmp/dgym-build/{pip_wheel}")
    if requirements:
        lines.append(f"RUN {trust}{q(python)} -m pip install {' '.join(q(o) for o in pip_options)} "
                     "-r /tmp/dgym-build/requirements.txt")
    if options.setup:
        lines.append(f"RUN {trust}{options.setup}")
    # the sandbox runs without writing bytecode: compile what was installed once, here
    lines.append(f"RUN {q(python)} -c \"import compileall, site; "
                 "[compileall.compile_dir(p, quiet=2, workers=0) for p in site.getsitepackages()]\" "
                 "&& rm -rf /tmp/dgym-build")
    lines.append(f"USER {user}")
    return "\n".join(lines) + "\n"


def _context(files: dict[str, bytes]) -> io.BytesIO:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    buf.seek(0)
    return buf


def install_declared(client, image: str, repo, python: str, options: DepsOptions | None,
                     progress: Callable[[str], None] | None = None) -> tuple[str, list[tuple[str, str]]]:
    """The image a Docker sandbox of `repo` should run, with what the repo declares installed
    (core/dependencies.py reads the declarations from the host's copy), and the notices to
    give: (level, message). A failed install is a warning, and the sandbox runs without them."""
    from dgym_tui.core.dependencies import read_dependencies

    options = options or DepsOptions()
    if not options.wanted:
        return image, []
    repo = Path(repo)
    folders = (repo, repo / "requirements", repo / "requirements.d", repo / "tests", repo / "test")
    files = [p.relative_to(repo).as_posix() for folder in folders if folder.is_dir()
             for p in folder.iterdir() if p.is_file()]

    def read(path: str) -> str | None:
        try:
            return (repo / path).read_text(encoding="utf-8", errors="replace")
        except OSError:
            return None

    deps = read_dependencies(files, read) if options.install else None

    def said(line: str) -> None:
        if progress is not None:
            progress(f"the repo's dependencies: {line}")

    if progress is not None:
        progress("checking the repo's dependencies…")
    try:
        image = prepare_image(client, image, deps.requirements if deps else (), options, python, str(repo), said)
    except SandboxError as e:  # offline, a bad pin: the code still runs, without them
        return image, [("warning", f"{e}; the sandbox runs without them")]
    if not deps:
        return image, []
    count = len(deps.requirements)
    return image, [("info", f"{count} declared dependenc{'y' if count == 1 else 'ies'} (from "
                            f"{', '.join(deps.sources)}) installed in the sandbox's image {image}")]


def prepare_image(client, base: str, requirements: tuple[str, ...], options: DepsOptions, python: str,
                  repo: str, progress: Callable[[str], None]) -> str:
    """The image the sandbox should run: `base` when there is nothing to install, else the
    derived image, built now unless one with the same key exists. Raises SandboxError."""
    import docker
    import requests

    try:
        return _prepare(client, base, requirements, options, python, repo, progress)
    except (docker.errors.DockerException, requests.exceptions.RequestException) as e:
        from dgym_tui.sandbox.errors import short_error

        raise SandboxError(f"installing the repo's dependencies failed: the Docker engine stopped answering "
                           f"({short_error(e)})") from None


def _prepare(client, base, requirements, options, python, repo, progress) -> str:
    import docker

    wanted = requirements if options.install else ()
    if not wanted and not options.setup:
        return base
    try:
        base_image = client.images.get(base)
    except docker.errors.ImageNotFound:
        return base  # the sandbox's own start says the image is missing, with the fix
    key = image_key(base_image.id, wanted, options, python)
    tag = f"{REPOSITORY}:{key}"
    try:
        client.images.get(tag)
        progress(f"image {tag} (built before)")
        return tag
    except docker.errors.ImageNotFound:
        pass
    what = f"{len(wanted)} dependenc{'y' if len(wanted) == 1 else 'ies'}" if wanted else "the set-up command"
    progress(f"building {tag}: {what} installed into {base} (once; then it is reused)")
    pip_wheel = _pip_wheel()
    files: dict[str, bytes] = {"requirements.txt": ("\n".join(wanted) + "\n").encode()}
    if pip_wheel is not None:
        files[pip_wheel.name] = pip_wheel.read_bytes()
    if options.wheels:
        for wheel in _wheel_files(options.wheels):
            files[f"wheels/{wheel.name}"] = wheel.read_bytes()
    ca = _host_ca_bundle()
    if ca is not None:
        files["host-ca.pem"] = ca.read_bytes()
    user = base_image.attrs.get("Config", {}).get("User") or "root"
    files["Dockerfile"] = dockerfile(base, python, bool(wanted), options, pip_wheel.name if pip_wheel else None,
                                     user, ca=ca is not None).encode()
    network = options.network or ("none" if options.wheels and not options.setup else "host")
    _build(client, files, tag, network, repo, progress)
    progress(f"built {tag}")
    return tag


def _build(client, files: dict[str, bytes], tag: str, network: str, repo: str,
           progress: Callable[[str], None]) -> None:
    last: list[str] = []
    for chunk in client.api.build(fileobj=_context(files), custom_context=True, tag=tag, rm=True, forcerm=True,
                                  decode=True, network_mode=network, timeout=BUILD_TIMEOUT,
                                  labels={"dgym-tui.app": "deps", "dgym-tui.repo": repo}):
        if "stream" in chunk:
            for line in chunk["stream"].splitlines():
                line = _ANSI.sub("", line).strip()
                if line and not line.startswith(("--->", "Removing intermediate container")):  # the engine's chatter
                    last = (last + [line])[-8:]
                    progress(line)
        elif "error" in chunk:
            cause = _cause(last + _ANSI.sub("", chunk["error"]).strip().splitlines())
            raise SandboxError(f"installing the repo's dependencies failed: {cause} (offline? give a wheel "
                               "folder with --wheels DIR or an index with --index-url URL; --no-deps skips them)")


def _cause(lines: list[str]) -> str:
    """pip's own reason, rather than the engine's 'returned a non-zero code'."""
    for line in reversed(lines):
        if line.startswith("ERROR:") or "No matching distribution" in line:
            return line.removeprefix("ERROR:").strip()
    return lines[-1] if lines else "the build stopped"
