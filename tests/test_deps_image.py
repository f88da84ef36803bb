"""The repo's declared dependencies in the Docker sandbox (sandbox/deps_image.py), on a real
engine: a package served from a wheel folder built here, installed into a derived image that
the next start reuses and a changed requirements file replaces; the set-up command; what the
person is told when a module is missing or the install fails."""

from __future__ import annotations

import time

import pytest

from conftest import SANDBOX_IMAGE, make_sandbox, require_docker
from dgym_tui.core.session import Session
from dgym_tui.sandbox.deps_image import REPOSITORY, DepsOptions
from real_repos import NEEDS_PACKAGE, dependency_wheels, write_wheel

pytestmark = pytest.mark.docker


@pytest.fixture
def engine():
    client = require_docker()
    before = {tag for image in client.images.list(REPOSITORY) for tag in image.tags}
    yield client
    for image in client.images.list(REPOSITORY):  # the derived images this test made
        for tag in image.tags:
            if tag not in before:
                client.images.remove(tag, force=True)


@pytest.fixture
def wheels(tmp_path):
    dependency_wheels(NEEDS_PACKAGE, tmp_path / "wheels")
    write_wheel(tmp_path / "wheels", "tinyunits", "2.0", "tinyunits.py", "CM_PER_INCH = 2.54\n")
    return tmp_path / "wheels"


def open_session(repo, deps: DepsOptions) -> tuple[Session, list[str], float]:
    session = Session(str(repo), pdb_timeout=60, sandbox_obj=make_sandbox("docker", repo), deps=deps)
    said: list[str] = []
    session.events.subscribe(lambda e: e.kind == "progress" and said.append(e.data.message))
    started = time.monotonic()
    session.start()
    return session, said, time.monotonic() - started


def notices(session) -> list[str]:
    return [e.data.message for e in session.events.history if e.kind == "notice"]


def test_a_dependency_from_a_wheel_folder_runs_the_tests_and_the_image_is_reused(engine, wheels, tmp_path):
    real = NEEDS_PACKAGE
    repo = real.write(tmp_path / real.name)
    options = DepsOptions(wheels=str(wheels))
    first, said, first_time = open_session(repo, options)
    try:
        image = first.sandbox.image
        assert image.startswith(f"{REPOSITORY}:") and image != SANDBOX_IMAGE
        assert any("Successfully installed tinymoney-1.0" in line for line in said), said  # progress, as it builds
        stop = first.state.stop
        assert f"{stop.file}:{stop.line}" == real.opens_at, (stop, first.error, notices(first))
        first.send(f"b {real.breakpoint}")
        assert first.send("c").stop.reason == "breakpoint"
        assert first.send(f"p {real.expression}").output.strip() == real.value
        assert any("1 declared dependency (from pyproject.toml)" in n for n in notices(first))
    finally:
        first.close()

    second, said, second_time = open_session(repo, options)
    try:
        assert second.sandbox.image == image
        assert any("(built before)" in line for line in said) and not any("Step " in line for line in said)
        assert f"{second.state.stop.file}:{second.state.stop.line}" == real.opens_at
    finally:
        second.close()
    print(f"\nderived image: first start {first_time:.1f} s (build), second {second_time:.1f} s (cached)")

    # a changed declaration makes another image, with the new package in it
    (repo / "requirements-test.txt").write_text("tinyunits==2.0\n")
    third, said, _ = open_session(repo, options)
    try:
        assert third.sandbox.image != image and any("Successfully installed" in line and "tinyunits-2.0" in line
                                                    for line in said), said
        assert third.sandbox.exec("python3 -c 'import tinyunits; print(tinyunits.CM_PER_INCH)'").output.strip() == "2.54"
    finally:
        third.close()


def test_the_setup_command_runs_at_build_as_root(engine, tmp_path):
    repo = tmp_path / "plain"
    repo.mkdir()
    (repo / "main.py").write_text("print('hi')\n")
    session, said, _ = open_session(repo, DepsOptions(setup="echo made-at-build > /etc/dgym-setup && id -u >> /etc/dgym-setup"))
    try:
        assert session.sandbox.image.startswith(f"{REPOSITORY}:")
        assert session.sandbox.exec("cat /etc/dgym-setup").output.split() == ["made-at-build", "0"]
        assert session.sandbox.exec("id -u").output.strip() == "1000"  # the program still runs unprivileged
        assert session.sandbox.exec("python3 -m pip --version").exit_code == 0  # pip came with it
    finally:
        session.close()


def test_a_missing_module_is_named_with_the_fix(engine, tmp_path):
    repo = NEEDS_PACKAGE.write(tmp_path / "needs")
    session, _, _ = open_session(repo, DepsOptions(install=False))
    try:
        assert session.sandbox.image == SANDBOX_IMAGE
        (said,) = [n for n in notices(session) if n.startswith("the sandbox lacks tinymoney: ")]
        assert "requirements.txt" in said and "--setup" in said
    finally:
        session.close()


def test_an_install_that_fails_is_said_and_the_sandbox_runs_without_it(engine, tmp_path):
    empty = tmp_path / "no-wheels"
    empty.mkdir()
    repo = NEEDS_PACKAGE.write(tmp_path / "needs")
    session, _, _ = open_session(repo, DepsOptions(wheels=str(empty)))
    try:
        assert session.error is None and session.state.program == "stopped"
        (said,) = [n for n in notices(session) if n.startswith("installing the repo's dependencies failed")]
        assert "tinymoney==1.0" in said and "--wheels" in said and said.endswith("the sandbox runs without them")
        assert any(n.startswith("the sandbox lacks tinymoney") for n in notices(session))
    finally:
        session.close()
