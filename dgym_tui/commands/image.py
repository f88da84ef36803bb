"""`dgym-tui image build`: build the sandbox image from sandbox/Dockerfile through the Docker SDK."""

from __future__ import annotations

import io
import tarfile
from collections.abc import Callable
from pathlib import Path

from dgym_tui.sandbox import SandboxError
from dgym_tui.sandbox.docker_sandbox import DEFAULT_IMAGE, connect

DEFAULT_BASE = "python:3.12-slim"
# A build step (apt-get on a slow mirror) may print nothing for a long while: the engine's
# answer may take this long between two lines before the build counts as stuck.
BUILD_TIMEOUT = 3600


def dockerfile_path() -> Path:
    """sandbox/Dockerfile in a checkout, dgym_tui/sandbox/Dockerfile once installed."""
    import dgym_tui.sandbox

    return Path(dgym_tui.sandbox.__file__).resolve().parent / "Dockerfile"


def _context() -> io.BytesIO:
    # Only the Dockerfile: the image needs nothing else, and a small context builds fast.
    buf = io.BytesIO()
    data = dockerfile_path().read_bytes()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        info = tarfile.TarInfo("Dockerfile")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    buf.seek(0)
    return buf


def build_image(base: str = DEFAULT_BASE, tag: str = DEFAULT_IMAGE, network: str | None = None,
                progress: Callable[[str], None] = print) -> str:
    """Build the image, streaming each line of progress; returns the image id."""
    client = connect(timeout=10, call_timeout=60)
    progress(f"building {tag} from {dockerfile_path()} on base {base}")
    import docker
    import requests

    try:
        image_id = _build(client, base, tag, network, progress)
    except (docker.errors.DockerException, requests.exceptions.RequestException, OSError) as e:
        from dgym_tui.sandbox.docker_sandbox import short_error

        raise SandboxError(f"image build failed: the Docker engine stopped answering ({short_error(e)})") from None
    progress(f"built {tag}")
    return image_id or tag


def _build(client, base: str, tag: str, network: str | None, progress: Callable[[str], None]) -> str | None:
    image_id = None
    for chunk in client.api.build(fileobj=_context(), custom_context=True, tag=tag, rm=True,
                                  forcerm=True, buildargs={"BASE": base}, decode=True,
                                  network_mode=network, labels={"dgym-tui.app": "image"},
                                  timeout=BUILD_TIMEOUT):
        if "stream" in chunk:
            for line in chunk["stream"].splitlines():
                if line.strip():
                    progress(line)
        elif "status" in chunk:
            progress(f"{chunk['status']} {chunk.get('progress', '')}".rstrip())
        elif "aux" in chunk and "ID" in chunk["aux"]:
            image_id = chunk["aux"]["ID"]
        elif "error" in chunk:
            msg = chunk["error"].strip().splitlines()[-1]
            if "pull access denied" in msg or "not found" in msg or "no such host" in msg:
                msg += " (no registry? build a base offline: sandbox/build-offline-base.sh, then --base dgym-tui-base:offline)"
            raise SandboxError(f"image build failed: {msg}")
    return image_id


def parser():
    import argparse

    p = argparse.ArgumentParser(prog="dgym-tui image", description="Manage the sandbox image.")
    sub = p.add_subparsers(dest="action", required=True)
    b = sub.add_parser("build", help="build the sandbox image from sandbox/Dockerfile",
                       description="Build the sandbox image through the Docker engine, streaming progress.")
    b.add_argument("--base", default=DEFAULT_BASE,
                   help=f"base image with python3 (default: {DEFAULT_BASE}; offline: dgym-tui-base:offline "
                        "from sandbox/build-offline-base.sh)")
    b.add_argument("--tag", default=DEFAULT_IMAGE, help=f"tag of the result (default: {DEFAULT_IMAGE})")
    b.add_argument("--network", help="network for the build's RUN steps (default: the engine's)")
    return p


def main(argv: list[str]) -> int:
    """`dgym-tui image build`."""
    args = parser().parse_args(argv)
    build_image(base=args.base, tag=args.tag, network=args.network)
    return 0
