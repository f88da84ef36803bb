"""Files as an image holds them, read without running it (a container created, never started,
then removed): the base a session in an instance's image started from, for rebuilding its diff
on the host once its sandbox is gone (a SWE-bench instance's /testbed)."""

from __future__ import annotations

import io
import posixpath
import tarfile

from dgym_tui.sandbox.docker_sandbox import LABEL_APP, connect
from dgym_tui.sandbox.errors import SandboxError, short_error


def read_files(image: str, root: str, paths: list[str], client=None) -> dict[str, tuple[bytes, int] | None]:
    """path -> (its bytes, its mode) under `root` in `image`; None for a path the image does not
    hold as a regular file. SandboxError (one line) when the engine or the image fails."""
    import docker

    client = client or connect(timeout=10)
    try:
        container = client.containers.create(image, command=["true"], network_disabled=True,
                                             labels={LABEL_APP: "dgym-tui", "dgym-tui.purpose": "read-files"})
    except docker.errors.ImageNotFound:
        raise SandboxError(f"the image {image} is not on this Docker engine") from None
    except docker.errors.APIError as e:
        raise SandboxError(f"cannot read files of the image {image}: {short_error(e)}") from None
    try:
        return {rel: _one(container, posixpath.join(root, rel)) for rel in paths}
    finally:
        try:
            container.remove(force=True)
        except docker.errors.APIError:
            pass


def _one(container, path: str) -> tuple[bytes, int] | None:
    import docker

    try:
        stream, _stat = container.get_archive(path)
    except docker.errors.NotFound:
        return None
    except docker.errors.APIError as e:
        raise SandboxError(f"cannot read {path} in the image: {short_error(e)}") from None
    with tarfile.open(fileobj=io.BytesIO(b"".join(stream))) as tar:
        member = tar.next()
        if member is None or not member.isfile():
            return None
        return tar.extractfile(member).read(), member.mode
