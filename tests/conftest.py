"""Shared fixtures: real sandboxes of both kinds, copies of the example repo, tree hashes."""

from __future__ import annotations

import hashlib
import os
import shutil
import signal
import subprocess
from pathlib import Path

import pytest

from stub_llm_server import stub_llm  # noqa: F401  (fixture: an OpenAI-compatible stub for litellm)

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "shopcart"
SANDBOX_IMAGE = os.environ.get("DGYM_TEST_IMAGE", "dgym-tui-sandbox:latest")

# A suite started in the background (`nohup … &`, a CI step run as a background job) inherits
# SIGINT ignored, and an ignored signal stays ignored across exec: the tests that press Ctrl-C on
# the programs they start (the app, a batch) would see it do nothing. Give it back its default.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

# The repos these tests debug need no third-party pytest plugin, and this machine's Python has
# many (hypothesis, syrupy, anyio...): loading them made each run of a fixture's suite take 4 s
# instead of 0.6, most of the suite's time. The sandboxes pass this switch on as a shell's pytest
# would see it (sandbox/base.py PASSED_ENV). This suite's own plugins are loaded by now.
os.environ.setdefault("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")

_docker_state: dict = {}


def docker_engine():
    """The Docker client if an engine answers, else None (the only reason Docker tests skip)."""
    if "client" not in _docker_state:
        try:
            from dgym_tui.sandbox.docker_sandbox import connect

            _docker_state["client"] = connect(timeout=5)
        except Exception:
            _docker_state["client"] = None
    return _docker_state["client"]


def require_docker():
    client = docker_engine()
    if client is None:
        pytest.skip("no Docker engine answers here")
    import docker

    try:
        client.images.get(SANDBOX_IMAGE)
    except docker.errors.ImageNotFound:
        # An engine without the image is a broken set-up, not a reason to skip.
        pytest.fail(f"{SANDBOX_IMAGE} missing: run `dgym-tui image build` (CI's .ci/run does)")
    return client


def require_bwrap():
    """Skip only where bwrap cannot make a jail on this machine (not installed, or user
    namespaces refused); CI installs it, so there it always runs."""
    from dgym_tui.sandbox.bwrap_sandbox import bwrap_problem

    problem = bwrap_problem()
    if problem:
        if os.environ.get("CI"):
            pytest.fail(f"CI must be able to run bwrap: {problem}")
        pytest.skip(problem)


def make_sandbox(kind: str, repo, **kwargs):
    from dgym_tui.sandbox import BwrapSandbox, DockerSandbox, LocalSandbox

    if kind == "docker":
        require_docker()
        return DockerSandbox(repo, image=SANDBOX_IMAGE, **kwargs)
    if kind == "bwrap":
        require_bwrap()
        return BwrapSandbox(repo, **kwargs)
    return LocalSandbox(repo, **kwargs)


BACKENDS = [pytest.param("local", id="local"), pytest.param("bwrap", id="bwrap"),
            pytest.param("docker", id="docker", marks=pytest.mark.docker)]


def tree_hash(path: Path) -> str:
    """A hash of every file, link and folder under path (.git included): 'byte-for-byte unchanged'."""
    h = hashlib.sha256()
    for dirpath, dirnames, filenames in os.walk(path):
        dirnames.sort()
        for name in sorted(filenames) + [d + "/" for d in dirnames]:
            full = os.path.join(dirpath, name.rstrip("/"))
            rel = os.path.relpath(full, path)
            st = os.lstat(full)
            h.update(f"{rel}\0{st.st_mode}\0".encode())
            if os.path.islink(full):
                h.update(os.readlink(full).encode())
            elif os.path.isfile(full):
                with open(full, "rb") as fh:
                    h.update(fh.read())
    return h.hexdigest()


def git(repo, *args):
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t"}
    return subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True, text=True).stdout


@pytest.fixture
def example_repo(tmp_path) -> Path:
    """A private copy of the bundled example, made a git checkout like a user's repo."""
    repo = tmp_path / "shopcart"
    shutil.copytree(EXAMPLE, repo, ignore=shutil.ignore_patterns("__pycache__", ".pytest_cache"))
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "init")
    return repo


@pytest.fixture(params=BACKENDS)
def backend(request) -> str:
    if request.param == "docker":
        require_docker()
    if request.param == "bwrap":
        require_bwrap()
    return request.param


# --- nothing of the suite's is left running after it --------------------------------------------------
#
# What a test may start and must stop: our containers, Ray's daemons, llama.cpp's server, the pdb
# shim, the app, tmux sessions named dgym-*. Whatever was running before the suite (a model server
# of your own) is not counted; what the suite started and left is listed at the end and fails the run.

LEFT_PATTERNS = ("raylet", "gcs_server", "llama-server", "dgym_pdb.py", "bin/dgym-tui", "-m dgym_tui")
_before_suite: dict[str, set[str]] = {}


def process_command(pid: int | str) -> str:
    """A process's command line, or "" once it is gone."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            return fh.read().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return ""


def is_running(pid: int) -> bool:
    """Alive and not a zombie (a zombie has exited; its parent has not reaped it yet)."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def running_things() -> dict[str, set[str]]:
    found: dict[str, set[str]] = {"containers": set(), "processes": set(), "tmux sessions": set()}
    client = docker_engine()
    if client is not None:
        try:
            for c in client.containers.list(all=True, filters={"label": "dgym-tui.app"}):
                found["containers"].add(f"{c.name} ({c.status})")
        except Exception:
            pass
    me = os.getpid()
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == me:
            continue
        command = process_command(entry)
        if command and any(p in command for p in LEFT_PATTERNS):
            found["processes"].add(f"{entry}: {command[:160]}")
    listed = subprocess.run(["tmux", "ls", "-F", "#S"], capture_output=True, text=True) if shutil.which("tmux") else None
    if listed is not None and listed.returncode == 0:
        found["tmux sessions"] = {s for s in listed.stdout.split() if s.startswith("dgym-")}
    return found


_test_starts: list[tuple[float, str]] = []  # (wall-clock start, test id): who started a leftover


def pytest_runtest_logstart(nodeid, location):
    import time

    _test_starts.append((time.time(), nodeid))


def started_during(pid: str) -> str:
    """Which test was running when a process started, its parent and folder: a leftover named
    by the test that made it (the end-of-suite check alone could not say, on a CI run)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            fields = fh.read().rsplit(b")", 1)[1].split()
        with open("/proc/stat") as fh:
            boot = next(int(line.split()[1]) for line in fh if line.startswith("btime"))
        started = boot + int(fields[19]) / os.sysconf("SC_CLK_TCK")
        ppid = fields[1].decode()
        cwd = os.readlink(f"/proc/{pid}/cwd")
    except (OSError, StopIteration, IndexError, ValueError):
        return ""
    # boot time is in whole seconds: the tests that started within a second of it are named
    near = [nodeid for at, nodeid in _test_starts if started - 1 <= at <= started + 1]
    before = [nodeid for at, nodeid in _test_starts if at < started - 1][-1:]
    test = " or ".join(before + near) or "before the first test"
    return f"\n      started during {test}; parent {ppid} ({process_command(ppid)[:80]}), working in {cwd}"


def pytest_sessionstart(session):
    _before_suite.update(running_things())


def pytest_sessionfinish(session, exitstatus):
    import time

    if not _before_suite or getattr(session.config.option, "collectonly", False):
        return
    deadline = time.monotonic() + 30  # a sandbox closing in a thread, a process exiting: given time to go
    while True:
        now = running_things()
        left = {kind: sorted(now[kind] - _before_suite.get(kind, set())) for kind in now}
        if not any(left.values()) or time.monotonic() > deadline:
            break
        time.sleep(1)
    if any(left.values()):
        report = "\n".join(f"  {kind}: {item}" + (started_during(item.split(":")[0]) if kind == "processes" else "")
                           for kind, items in left.items() for item in items)
        print(f"\nthe suite left these running (each should have been stopped by the test that started it):\n"
              f"{report}", flush=True)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
