"""An environment image that holds its repository (a SWE-bench instance image), made ready for the
sandbox's user.

SWE-bench's images (swebench/sweb.eval.x86_64.<instance>) hold the repository at its base commit
in /testbed, beside the environment it was installed into (a conda env, C extensions built in
place in /testbed), all of it root's. The sandbox runs as uid 1000 with every capability dropped,
so it could change nothing there: this derives an image in which the repository's folder is the
sandbox user's (one layer: the environment itself is untouched), tagged by the instance image's
id and the folder, so it is built once per instance. Built with no network.
"""

from __future__ import annotations

import hashlib
import io
import tarfile
from collections.abc import Callable

from dgym_tui.sandbox.errors import SandboxError
from dgym_tui.sandbox.repo_copy import SANDBOX_UID

REPOSITORY = "dgym-tui-inst"
FORMAT = 1  # bump when the build below changes: older images are not reused
BUILD_TIMEOUT = 3600


def available(client, image: str, pull: bool = True) -> bool:
    """The image is on this engine, or could be pulled now."""
    import docker

    try:
        client.images.get(image)
        return True
    except docker.errors.ImageNotFound:
        pass
    except docker.errors.DockerException:
        return False
    if not pull:
        return False
    try:
        client.images.pull(image)
        return True
    except docker.errors.DockerException:
        return False


def adapted(client, image: str, workdir: str, progress: Callable[[str], None] | None = None) -> str:
    """The tag of `image` with `workdir` owned by the sandbox's user, built if it is not there.
    SandboxError: the image is missing and cannot be pulled, or the build failed."""
    import docker

    if not available(client, image):
        raise SandboxError(f"the environment image {image} is not on this Docker engine and cannot be pulled: "
                           "pull or build it (SWE-bench: python -m swebench.harness.prepare_images), or "
                           "give --image-template")
    base = client.images.get(image)
    key = hashlib.sha256(f"{FORMAT}:{base.id}:{workdir}:{SANDBOX_UID}".encode()).hexdigest()[:16]
    tag = f"{REPOSITORY}:{key}"
    try:
        client.images.get(tag)
        return tag
    except docker.errors.ImageNotFound:
        pass
    if progress:
        progress(f"making {workdir} of {image} the sandbox user's (once for this image)…")
    dockerfile = (f"FROM {image}\nUSER 0\n"
                  f"RUN chown -R {SANDBOX_UID}:{SANDBOX_UID} {workdir}\n"
                  f"LABEL dgym-tui.instance-of={image}\n")
    context = io.BytesIO()
    with tarfile.open(fileobj=context, mode="w") as tar:
        data = dockerfile.encode()
        info = tarfile.TarInfo("Dockerfile")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    context.seek(0)
    saved = client.api.timeout
    client.api.timeout = BUILD_TIMEOUT
    try:
        for chunk in client.api.build(fileobj=context, custom_context=True, tag=tag, network_mode="none",
                                      rm=True, forcerm=True, decode=True):
            if "error" in chunk:
                raise SandboxError(f"could not prepare {image} for the sandbox: {chunk['error'].strip()[-300:]}")
            line = (chunk.get("stream") or "").strip()
            if line and progress:
                progress(line[:200])
    except docker.errors.DockerException as e:
        raise SandboxError(f"could not prepare {image} for the sandbox: {e}") from None
    finally:
        client.api.timeout = saved
    return tag
