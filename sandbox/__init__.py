"""Where the code under debug runs (installed as ``dgym_tui.sandbox``).

One protocol (`Sandbox`), two backends: `DockerSandbox` (isolated, the default when an engine
answers and the image exists) and `LocalSandbox` (a temporary copy, NOT isolated).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from dgym_tui.sandbox.errors import SandboxError, SandboxGone

if TYPE_CHECKING:
    from dgym_tui.sandbox.base import Sandbox

__all__ = ["Channel", "DirEntry", "ExecResult", "Sandbox", "SandboxError", "SandboxGone",
           "LocalSandbox", "DockerSandbox", "choose_sandbox"]

# Loaded on first use: the backends import pexpect, tarfile and the docker SDK, which the UI's
# first frame does not need.
_LAZY = {"Channel": "base", "DirEntry": "base", "ExecResult": "base", "Sandbox": "base",
         "LocalSandbox": "local_sandbox", "DockerSandbox": "docker_sandbox"}


def __getattr__(name):
    if name in _LAZY:
        return getattr(importlib.import_module(f"dgym_tui.sandbox.{_LAZY[name]}"), name)
    raise AttributeError(name)


def choose_sandbox(repo, kind: str = "auto", image: str | None = None, network: str | None = None,
                   **kwargs) -> tuple[Sandbox, str | None]:
    """The sandbox to use (not started yet) and, when falling back to local, the warning to show.

    auto: Docker when an engine answers and the image exists, else local with a warning.
    docker: Docker or a SandboxError naming the fix; never a silent fallback.
    """
    from dgym_tui.sandbox.repo_copy import check_repo_path

    from dgym_tui.sandbox.local_sandbox import LocalSandbox

    check_repo_path(repo)
    if kind == "local":
        return LocalSandbox(repo, **kwargs), None
    if kind not in ("auto", "docker"):
        raise SandboxError(f"unknown sandbox {kind!r}: use docker, local or auto")
    from dgym_tui.sandbox import docker_sandbox as ds

    image = image or ds.DEFAULT_IMAGE
    try:
        client = ds.connect(timeout=3 if kind == "auto" else 10)
        import docker

        try:
            client.images.get(image)
        except docker.errors.ImageNotFound:
            raise SandboxError(ds.image_missing_message(image)) from None
    except SandboxError as e:
        if kind == "docker":
            raise
        return LocalSandbox(repo, **kwargs), f"running locally, NOT isolated: {e}"
    return ds.DockerSandbox(repo, image=image, network=network, client=client, **kwargs), None
