"""Where the code under debug runs (installed as ``dgym_tui.sandbox``).

One protocol (`Sandbox`), three backends: `DockerSandbox` (isolated, the default when an engine
answers and the image exists), `BwrapSandbox` (a temporary copy inside a bubblewrap jail,
isolated, where bwrap can run) and `LocalSandbox` (a temporary copy, NOT isolated).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from dgym_tui.sandbox.errors import SandboxError, SandboxGone, short_error

if TYPE_CHECKING:
    from dgym_tui.sandbox.base import Sandbox

__all__ = ["Channel", "DirEntry", "ExecResult", "Sandbox", "SandboxError", "SandboxGone",
           "LocalSandbox", "BwrapSandbox", "DockerSandbox", "choose_sandbox"]

# Loaded on first use: the backends import pexpect, tarfile and the docker SDK, which the UI's
# first frame does not need.
_LAZY = {"Channel": "base", "DirEntry": "base", "ExecResult": "base", "Sandbox": "base",
         "LocalSandbox": "local_sandbox", "BwrapSandbox": "bwrap_sandbox", "DockerSandbox": "docker_sandbox"}


def __getattr__(name):
    if name in _LAZY:
        return getattr(importlib.import_module(f"dgym_tui.sandbox.{_LAZY[name]}"), name)
    raise AttributeError(name)


def choose_sandbox(repo, kind: str = "auto", image: str | None = None, network: str | None = None,
                   python: str | None = None, memory: str | None = None,
                   **kwargs) -> tuple[Sandbox, str | None]:
    """The sandbox to use (not started yet) and, when falling back to local, the warning to show.

    auto: Docker when an engine answers and the image exists, else bwrap where it can run, else
    local with a warning naming why neither could. docker / bwrap: that one or a SandboxError
    naming the fix, never a silent fallback. python: the interpreter (local and bwrap: a host
    path, default the project's own; docker: a command inside the image, default python3).
    memory: the container's limit (docker only).
    """
    from dgym_tui.sandbox.repo_copy import check_repo_path

    check_repo_path(repo)
    deps = kwargs.pop("deps", None)  # the Docker sandbox's: how the repo's dependencies get into its image
    if kind not in ("auto", "docker", "bwrap", "local"):
        raise SandboxError(f"unknown sandbox {kind!r}: use docker, bwrap, local or auto")
    if kwargs.get("workdir"):  # the repository lives in an environment image (SWE-bench): Docker only
        if kind not in ("auto", "docker"):
            raise SandboxError(f"an environment image ({image}) runs only in the Docker sandbox, not {kind}")
        from dgym_tui.sandbox import docker_sandbox as ds

        if memory:
            kwargs["memory"] = memory
        return ds.DockerSandbox(repo, image=image, network=network, client=ds.connect(timeout=10), python=python,
                                **kwargs), None
    if kind == "local":
        from dgym_tui.sandbox.local_sandbox import LocalSandbox

        return LocalSandbox(repo, python=python, **kwargs), None
    from dgym_tui.sandbox.bwrap_sandbox import BwrapSandbox, bwrap_problem

    if kind == "bwrap":
        problem = bwrap_problem()
        if problem:
            raise SandboxError(problem)
        return BwrapSandbox(repo, python=python, **kwargs), None
    from dgym_tui.sandbox import docker_sandbox as ds

    image = image or ds.DEFAULT_IMAGE
    try:
        client = ds.connect(timeout=3 if kind == "auto" else 10)
        import docker

        try:
            client.images.get(image)
        except docker.errors.ImageNotFound:
            raise SandboxError(ds.image_missing_message(image)) from None
        except docker.errors.DockerException as e:
            raise SandboxError(f"the Docker engine failed to answer about {image}: {short_error(e)}") from None
    except SandboxError as e:
        if kind == "docker":
            raise
        if bwrap_problem() is None:
            return BwrapSandbox(repo, python=python, **kwargs), None
        from dgym_tui.sandbox.local_sandbox import LocalSandbox

        return (LocalSandbox(repo, python=python, **kwargs),
                f"running locally, NOT isolated: {e}; and {bwrap_problem()}")
    if memory:
        kwargs["memory"] = memory
    return ds.DockerSandbox(repo, image=image, network=network, client=client, python=python, deps=deps,
                            **kwargs), None
