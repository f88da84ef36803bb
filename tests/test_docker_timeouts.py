"""A slow or vanishing Docker engine during start-up, through a forwarder this test controls.

The forwarder sits on 127.0.0.1 between the SDK and the real engine's socket (DOCKER_HOST=tcp://).
When it sees the repo being copied in (PUT .../archive), it either holds the engine's answer back
for a while, as a busy disk does, or drops every connection and stops listening, as an engine
that dies does.
"""

from __future__ import annotations

import os
import select
import socket
import threading
import time

import pytest

from conftest import SANDBOX_IMAGE, require_docker
from dgym_tui.sandbox import SandboxError
from dgym_tui.sandbox.docker_sandbox import DockerSandbox

pytestmark = pytest.mark.docker

ENGINE_SOCKET = "/var/run/docker.sock"


class EngineForwarder:
    def __init__(self, mode: str, delay: float = 0.0):
        self.mode, self.delay = mode, delay
        self.server = socket.create_server(("127.0.0.1", 0))
        self.port = self.server.getsockname()[1]
        self.stopped = threading.Event()
        self.archive_seen = threading.Event()
        self.sockets: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while not self.stopped.is_set():
            try:
                client, _ = self.server.accept()
            except OSError:
                return
            client.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            upstream = socket.socket(socket.AF_UNIX)
            upstream.connect(ENGINE_SOCKET)
            self.sockets += [client, upstream]
            threading.Thread(target=self._pump, args=(client, upstream), daemon=True).start()

    def _pump(self, client, upstream):
        hold_answer = False
        deadline = time.monotonic() + 300  # bounded: never outlives a test run
        try:
            while not self.stopped.is_set() and time.monotonic() < deadline:
                ready, _, _ = select.select([client, upstream], [], [], 0.2)
                for sock in ready:
                    data = sock.recv(65536)
                    if not data:
                        return
                    if sock is client:
                        if b"PUT /" in data and b"/archive?path=%2Fworkspace" in data:
                            self.archive_seen.set()
                            if self.mode == "die":
                                self.stop()
                                return
                            hold_answer = True
                        upstream.sendall(data)
                    else:
                        if hold_answer:  # the engine finished unpacking: answer late
                            time.sleep(self.delay)
                            hold_answer = False
                        client.sendall(data)
        except OSError:
            return
        finally:
            for sock in (client, upstream):
                try:
                    sock.close()
                except OSError:
                    pass

    def stop(self):
        self.stopped.set()
        try:
            self.server.close()
        except OSError:
            pass
        for sock in self.sockets:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


@pytest.fixture
def engine():
    client = require_docker()
    if not os.path.exists(ENGINE_SOCKET):
        pytest.skip("the engine is not on the default local socket")
    return client


def _ours(client, repo):
    return [c for c in client.containers.list(all=True, filters={"label": "dgym-tui.app=dgym-tui"})
            if c.labels.get("dgym-tui.repo") == str(repo)]


def test_a_slow_copy_in_is_waited_for(engine, example_repo, monkeypatch):
    # The engine answers the upload 8 s late: more than one call's old 5-second time-out.
    forwarder = EngineForwarder("slow", delay=8.0)
    monkeypatch.setenv("DOCKER_HOST", f"tcp://127.0.0.1:{forwarder.port}")
    try:
        sandbox = DockerSandbox(example_repo, image=SANDBOX_IMAGE)
        sandbox.start()
        try:
            assert forwarder.archive_seen.is_set()
            assert sandbox.exec("cat main.py", timeout=30).output.startswith('"""')
        finally:
            sandbox.close()
    finally:
        forwarder.stop()
    assert not _ours(engine, example_repo)


def test_an_engine_that_dies_mid_start_is_one_line(engine, example_repo, monkeypatch):
    forwarder = EngineForwarder("die")
    monkeypatch.setenv("DOCKER_HOST", f"tcp://127.0.0.1:{forwarder.port}")
    try:
        sandbox = DockerSandbox(example_repo, image=SANDBOX_IMAGE)
        with pytest.raises(SandboxError) as err:
            sandbox.start()
    finally:
        forwarder.stop()
    message = str(err.value)
    assert forwarder.archive_seen.is_set()
    assert "\n" not in message and message.startswith("the Docker engine failed while copying the repo in: ")
    assert message.endswith("start Docker or use --sandbox local; `dgym-tui doctor` explains")
    assert err.value.__cause__ is None and err.value.__suppress_context__
    # The engine never heard the removal: the container is left for the next start to reap
    # (its owner, this process, is alive, so clear it up here).
    for c in _ours(engine, example_repo):
        c.remove(force=True)
    for v in engine.volumes.list(filters={"label": f"dgym-tui.owner-pid={os.getpid()}"}):
        if v.name.startswith(f"dgym-tui-{sandbox.session_id}"):
            v.remove(force=True)
