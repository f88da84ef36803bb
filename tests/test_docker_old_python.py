"""Docker with an image whose Python is older (issue 42): the sandbox image with pyenv's CPython
3.6 (and its pytest 6.2) added as the image's `python3`, built here offline. The session runs
the debugger on the image's own Python: it opens at the failing test, and a breakpoint, `c` and
`p` work; a Django-style runner script's first `c` stops in its failing test there too."""

from __future__ import annotations

import io
import os
import tarfile

import pytest

import pythons
from conftest import SANDBOX_IMAGE, require_docker
from dgym_tui.core.session import Session

pytestmark = pytest.mark.docker

IMAGE = "dgym-tui-test-py36:latest"
DOCKERFILE = f"""FROM {SANDBOX_IMAGE}
USER root
COPY python /root/.pyenv/versions/{{version}}
RUN chmod 755 /root /root/.pyenv /root/.pyenv/versions \\
 && ln -sf /root/.pyenv/versions/{{version}}/bin/python3 /usr/local/bin/python3 \\
 && ln -sf /root/.pyenv/versions/{{version}}/bin/python3 /usr/local/bin/python \\
 && python3 -c "import sys, pytest; assert sys.version_info[:2] == (3, 6), sys.version"
USER dgym
"""


@pytest.fixture(scope="module")
def old_image():
    """The image, built once per engine (its label says from what); pyenv's 3.6 is a prefix
    that runs wherever it is put at its own path (its libpython is found by that path)."""
    client = require_docker()
    pythons.require_pytest(pythons.require("3.6"))
    prefix = os.path.dirname(os.path.dirname(pythons.PATHS["3.6"]))
    version = os.path.basename(prefix)
    import docker

    try:
        found = client.images.get(IMAGE)
        if found.labels.get("dgym-tui.test-python") == version:
            return IMAGE
    except docker.errors.ImageNotFound:
        pass
    context = io.BytesIO()
    with tarfile.open(fileobj=context, mode="w") as tar:
        text = DOCKERFILE.format(version=version).encode()
        info = tarfile.TarInfo("Dockerfile")
        info.size = len(text)
        tar.addfile(info, io.BytesIO(text))
        tar.add(prefix, arcname="python", filter=lambda t: None if "__pycache__" in t.name else t)
    context.seek(0)
    client.images.build(fileobj=context, custom_context=True, tag=IMAGE, rm=True,
                        labels={"dgym-tui.test-python": version})
    return IMAGE


def _session(repo, image, entrypoint=None) -> Session:
    from dgym_tui.sandbox import DockerSandbox

    sandbox = DockerSandbox(str(repo), image=image)
    session = Session(str(repo), entrypoint=entrypoint, pdb_timeout=60, sandbox_obj=sandbox)
    session.start()
    return session


def test_an_image_on_python_36_debugs_with_its_own_python(old_image, tmp_path):
    from real_repos import PACKAGE_TESTS as real

    repo = real.write(tmp_path / "repo")
    session = _session(repo, old_image)
    try:
        assert session.pdb_unavailable is None and session.debugger is not None, session.error
        stop = session.debugger.stop
        assert f"{stop.file}:{stop.line}" == real.opens_at and stop.reason == "post_mortem"
        file, line = real.breakpoint.split(":")
        session.send(f"b {real.breakpoint}")
        result = session.send("c")
        assert (result.stop.file, result.stop.line) == (file, int(line)), result.output
        out = session.send("p (__import__('sys').version_info[:2], total, count)").output
        assert "((3, 6), 12, 2)" in out, out
    finally:
        session.close()


def test_a_runner_script_stops_in_its_failing_test_on_the_images_python_36(old_image, tmp_path):
    from real_repos import UNITTEST_SUITE as real

    repo = real.write(tmp_path / "repo")
    (repo / "tests" / "runtests.py").write_text(
        "import os, sys, unittest\n"
        "sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))\n"
        "suite = unittest.defaultTestLoader.discover('tests', top_level_dir='.')\n"
        "sys.exit(not unittest.TextTestRunner(verbosity=2).run(suite).wasSuccessful())\n")
    session = _session(repo, old_image, entrypoint="./tests/runtests.py")
    try:
        assert session.debugger.stop.reason == "start", session.error
        result = session.send("c")
        assert f"{result.stop.file}:{result.stop.line}" == real.opens_at and result.stop.reason == "post_mortem"
        assert result.stop.test == "tests.test_intervals.MergeTest.test_touching_spans_merge", result.stop
        assert "(3, 6)" in session.send("p __import__('sys').version_info[:2]").output
    finally:
        session.close()
