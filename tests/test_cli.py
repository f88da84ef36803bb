"""The command line as a user meets it: help, version, doctor, bad paths."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from dgym_tui import __version__


def run(*args, env=None):
    return subprocess.run([sys.executable, "-m", "dgym_tui", *args], capture_output=True, text=True,
                          env={**os.environ, **(env or {})}, timeout=120)


def test_help_lists_subcommands_and_options():
    out = run("--help")
    assert out.returncode == 0
    for word in ("doctor", "image build", "--sandbox", "--entrypoint", "--network", "repo"):
        assert word in out.stdout
    assert run("image", "build", "--help").stdout.count("--base") >= 1


def test_version():
    out = run("--version")
    assert out.stdout.strip() == f"dgym-tui {__version__}"


@pytest.mark.parametrize("path, message", [("/no/such/repo", "no such directory: /no/such/repo"),
                                           (__file__, "is a file, not a directory")])
def test_bad_path_is_one_line(path, message):
    out = run(path)
    assert out.returncode == 2
    assert out.stderr.strip().count("\n") == 0 and message in out.stderr
    assert "Traceback" not in out.stderr


def test_forcing_docker_without_engine_is_an_error_not_a_fallback(tmp_path, monkeypatch):
    from dgym_tui.core.session import Session

    monkeypatch.setenv("DOCKER_HOST", "unix:///nonexistent.sock")
    (tmp_path / "a.py").write_text("print(1)\n")
    session = Session(str(tmp_path), sandbox="docker")
    errors = []
    session.events.subscribe(lambda e: errors.append(e.data.message) if e.kind == "error" else None)
    session.start()
    assert session.state.program == "error" and session.sandbox is None
    assert len(errors) == 1 and "no Docker engine answers" in errors[0] and "dgym-tui doctor" in errors[0]


def test_doctor_without_engine_explains_and_names_keys_only(monkeypatch):
    out = run("doctor", env={"DOCKER_HOST": "unix:///nonexistent.sock", "ANTHROPIC_API_KEY": "sk-secret-value"})
    lines = out.stdout.splitlines()
    assert any(ln.startswith("[ ok ] git:") for ln in lines)
    assert any(ln.startswith("[warn] docker engine:") and "start Docker" in ln for ln in lines)
    from dgym_tui.sandbox.bwrap_sandbox import bwrap_problem

    if bwrap_problem() is None:
        assert any(ln.startswith("[ ok ] bwrap: bubblewrap") and "can make a sandbox here" in ln for ln in lines)
    else:
        assert any(ln.startswith("[warn] bwrap:") and "apt-get install bubblewrap" in ln for ln in lines)
    assert any("ANTHROPIC_API_KEY" in ln for ln in lines)
    assert "sk-secret-value" not in out.stdout
    assert out.returncode == 0


def test_doctor_asks_no_key_of_a_server_given_by_api_base(stub_llm, monkeypatch):
    """A local server (--api-base) needs no provider key: doctor says so, no warning to set one.
    Without a model to try, no key set is still the warning."""
    from dgym_tui.config import PROVIDER_KEYS

    stub_llm.push({"tool_calls": [{"name": "view", "arguments": {"path": "README.md"}}]})
    keyless = {**{k: "" for k in PROVIDER_KEYS}, "DOCKER_HOST": "unix:///nonexistent.sock"}
    out = run("doctor", "--model", "openai/stub", "--api-base", stub_llm.url, env=keyless)
    keys = [ln for ln in out.stdout.splitlines() if "LLM keys" in ln]
    assert keys == [f"[ ok ] LLM keys: none needed for a local server at {stub_llm.url} (--api-base)"], out.stdout
    assert "[ ok ] model openai/stub: native tool calls come back" in out.stdout, out.stdout

    from dgym_tui.commands.doctor import check_llm_keys

    for name in PROVIDER_KEYS:
        monkeypatch.delenv(name, raising=False)
    assert check_llm_keys("ollama/llama3").line() == \
        "[ ok ] LLM keys: none needed for ollama's local server at http://localhost:11434"
    assert check_llm_keys("openai/gpt-4o").level == check_llm_keys().level == "warn"


@pytest.mark.docker
def test_doctor_with_engine_checks_the_image():
    from conftest import require_docker

    require_docker()
    out = run("doctor")
    assert "[ ok ] docker engine: version" in out.stdout
    assert "[ ok ] sandbox image: dgym-tui-sandbox:latest" in out.stdout
    assert "[ ok ] python in sandbox: python 3." in out.stdout and "pytest" in out.stdout


@pytest.mark.docker
def test_image_build_streams_progress_and_tags():
    from conftest import require_docker

    client = require_docker()
    base = os.environ.get("DGYM_TEST_BASE", "dgym-tui-base:offline")
    import docker

    try:
        client.images.get(base)
    except docker.errors.ImageNotFound:
        pytest.fail(f"{base} missing: .ci/run builds it with sandbox/build-offline-base.sh")
    out = run("image", "build", "--base", base, "--tag", "dgym-tui-sandbox:test-build")
    try:
        assert out.returncode == 0, out.stderr
        assert "Step 1/" in out.stdout and "built dgym-tui-sandbox:test-build" in out.stdout
        client.images.get("dgym-tui-sandbox:test-build")
    finally:
        client.images.remove("dgym-tui-sandbox:test-build", noprune=True)


def test_bad_python_is_one_line(tmp_path):
    (tmp_path / "a.py").write_text("print(1)\n")
    out = run(str(tmp_path), "--python", "/no/such/python3")
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert out.stderr.strip() == "dgym-tui: --python /no/such/python3: no such interpreter"


def test_forcing_bwrap_where_it_cannot_run_is_an_error_not_a_fallback(tmp_path, monkeypatch):
    from dgym_tui.core.session import Session
    from dgym_tui.sandbox.bwrap_sandbox import bwrap_problem

    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))  # no bwrap on PATH
    bwrap_problem.cache_clear()
    (tmp_path / "a.py").write_text("print(1)\n")
    session = Session(str(tmp_path), sandbox="bwrap", python=sys.executable)
    errors = []
    session.events.subscribe(lambda e: errors.append(e.data.message) if e.kind == "error" else None)
    try:
        session.start()
    finally:
        bwrap_problem.cache_clear()
    assert session.state.program == "error" and session.sandbox is None
    assert errors == ["bwrap is not installed: install bubblewrap (apt-get install bubblewrap) "
                      "or use --sandbox docker/local"]


def test_help_names_bwrap_and_python():
    out = run("--help").stdout
    assert "{auto,docker,bwrap,local}" in out and "--python PATH" in out
