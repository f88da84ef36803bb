"""What a hostile program can reach from inside each sandbox, tried for real.

The program reads every /proc/*/environ looking for the app's secrets, connects to a TCP server
this test opens on the host's 127.0.0.1, and writes into a host folder outside the copy. In the
isolated backends (bwrap, docker) all three fail; in `local`, which README says does not protect,
all three succeed: the control that shows the probe itself works.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading

import pytest

from conftest import SANDBOX_IMAGE, make_sandbox

SECRET = "sk-isolation-test-secret-4242"

PROBE = r"""
import json, os, socket, sys
port, outside = int(sys.argv[1]), sys.argv[2]
result = {"pids": [], "leaks": [], "net": None, "write": None}
for name in os.listdir("/proc"):
    if name.isdigit():
        result["pids"].append(int(name))
        try:
            with open(f"/proc/{name}/environ", "rb") as fh:
                if b"SECRET_MARK" in fh.read():
                    result["leaks"].append(int(name))
        except OSError:
            pass
try:
    with socket.create_connection(("127.0.0.1", port), timeout=3) as s:
        result["net"] = "connected: " + s.recv(100).decode()
except OSError as e:
    result["net"] = f"refused: {e}"
try:
    with open(outside, "w") as fh:
        fh.write("escaped")
    result["write"] = "written"
except OSError as e:
    result["write"] = f"refused: {e}"
print(json.dumps(result))
""".replace("SECRET_MARK", SECRET)


# The app: a process started with the secret in its environment (as an API key would be), which
# opens a sandbox and runs the probe in it.
APP = r"""
import sys
from dgym_tui.sandbox import BwrapSandbox, DockerSandbox, LocalSandbox
kind, repo, image, probe, *args = sys.argv[1:]
cls = {"local": LocalSandbox, "bwrap": BwrapSandbox, "docker": DockerSandbox}[kind]
sandbox = cls(repo, image=image) if kind == "docker" else cls(repo)
with sandbox:
    sandbox.write_text("probe.py", open(probe).read())
    run = sandbox.exec([sandbox.python, "probe.py", *args], timeout=60)
print(run.exit_code, run.output.strip().splitlines()[-1] if run.output.strip() else "")
"""


@pytest.fixture
def host_server():
    """A TCP server on the host's loopback that greets whoever connects."""
    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(0.2)
    stop = threading.Event()

    def serve():
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except OSError:
                continue
            with conn:
                conn.sendall(b"hello from the host")

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield server.getsockname()[1]
    stop.set()
    thread.join(5)
    server.close()


@pytest.mark.parametrize("kind", ["local", "bwrap", pytest.param("docker", marks=pytest.mark.docker)])
def test_hostile_program_reaches_nothing_outside_an_isolated_sandbox(kind, example_repo, tmp_path,
                                                                     host_server):
    make_sandbox(kind, example_repo)  # skips where this backend cannot run here
    outside = tmp_path / "outside" / "escaped.txt"
    outside.parent.mkdir()
    probe = tmp_path / "probe.py"
    probe.write_text(PROBE)
    app = subprocess.run([sys.executable, "-c", APP, kind, str(example_repo), SANDBOX_IMAGE, str(probe),
                          str(host_server), str(outside)], capture_output=True, text=True, timeout=180,
                         env={**os.environ, "DGYM_TEST_API_KEY": SECRET})
    assert app.returncode == 0, app.stderr[-2000:]
    code, _, line = app.stdout.strip().splitlines()[-1].partition(" ")
    assert code == "0", app.stdout
    result = json.loads(line)
    if kind == "local":  # NOT isolated: the control, where every probe gets through
        assert result["leaks"], "the local control should read the app's environment through /proc"
        assert result["net"] == "connected: hello from the host"
        assert result["write"] == "written" and outside.read_text() == "escaped"
        return
    assert result["leaks"] == [], f"the app's secret is readable in /proc/{result['leaks']}/environ"
    # Its own PID namespace: only the sandbox's few processes, not the app's nor this test's.
    assert os.getpid() not in result["pids"] and len(result["pids"]) <= 4, result["pids"]
    assert result["net"].startswith("refused"), result["net"]
    assert result["write"].startswith("refused") and not outside.exists(), result["write"]
