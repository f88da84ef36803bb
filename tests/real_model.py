"""A real small model behind llama.cpp's `llama-server` on 127.0.0.1, for the tests and the
benchmark: the binary and the GGUF built once by tests/setup-real-model.sh into a cache folder.

    with LlamaServer("0.5b") as server:
        model = server.model()          # a LiteLLMModel talking to it over HTTP, greedy and seeded
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path

CACHE = Path(os.environ.get("DGYM_MODEL_CACHE", "/var/cache/dgym-tui-model"))
MODELS = {"0.5b": "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf", "1.5b": "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"}
SETUP = "bash tests/setup-real-model.sh"


def free_cores(sample: float = 0.5) -> int:
    """The cores no other work is using now (the machine's idle time over a moment, /proc/stat).
    llama.cpp's threads wait for each other at every layer: a thread on a core another process
    holds stalls them all. With a busy loop on one of two cores, `-t 2` generated 0.5 tokens/s
    where `-t 1` made 14.7; on the quiet machine `-t 2` is 1.8x faster than `-t 1`."""
    def idle_and_total() -> tuple[int, int]:
        with open("/proc/stat") as f:
            fields = [int(x) for x in f.readline().split()[1:]]
        return fields[3] + fields[4], sum(fields[:8])  # idle + iowait; user..steal

    cores = os.cpu_count() or 1
    try:
        idle0, total0 = idle_and_total()
        time.sleep(sample)
        idle1, total1 = idle_and_total()
    except (OSError, ValueError, IndexError):
        return cores
    share = (idle1 - idle0) / max(1, total1 - total0)
    return max(1, min(cores, round(share * cores)))


def missing(size: str = "0.5b") -> str | None:
    """Why the real model cannot run here, or None."""
    if not (CACHE / "llama-server").is_file():
        return f"no llama-server in {CACHE}: run `{SETUP}`"
    if not (CACHE / MODELS[size]).is_file():
        return f"no {size} model in {CACHE}: run `{SETUP} {size}`"
    return None


class LlamaServer:
    """`llama-server -m MODEL --jinja -c CTX` on a free local port; stopped on exit."""

    def __init__(self, size: str = "0.5b", context: int = 8192, jinja: bool = True, threads: int | None = None):
        """threads: default, as many as the cores free when it starts (free_cores)."""
        self.size, self.context, self.jinja, self.threads = size, context, jinja, threads
        self.process: subprocess.Popen | None = None
        self.port = 0
        self._log = None  # the server's log, in a file: a pipe nobody reads would stall it once full

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self, timeout: float = 180) -> LlamaServer:
        problem = missing(self.size)
        if problem:
            raise RuntimeError(problem)
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        if self.threads is None:
            self.threads = free_cores()
        args = [str(CACHE / "llama-server"), "-m", str(CACHE / MODELS[self.size]), "--host", "127.0.0.1",
                "--port", str(self.port), "-c", str(self.context), "-t", str(self.threads), "--parallel", "1",
                "--no-webui"]
        if self.jinja:
            args.append("--jinja")
        self._log = tempfile.TemporaryFile()
        self.process = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=self._log, start_new_session=True)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"llama-server exited: {self.log()[-2000:]}")
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/health", timeout=2) as r:
                    if json.loads(r.read()).get("status") == "ok":
                        return self
            except Exception:
                time.sleep(0.3)
        self.stop()
        raise RuntimeError(f"llama-server did not answer within {timeout:.0f} s")

    def model(self, **kwargs):
        """A LiteLLMModel on this server: greedy (temperature 0) and seeded, so a run repeats."""
        from dgym_tui.agent.litellm_model import LiteLLMModel

        extra = {"seed": 7, "max_tokens": 512, **kwargs.pop("extra", {})}
        return LiteLLMModel("openai/qwen2.5-coder", api_base=self.url, temperature=kwargs.pop("temperature", 0.0),
                            extra=extra, max_retries=1, timeout=300, **kwargs)

    def log(self) -> str:
        if self._log is None:
            return ""
        self._log.seek(0)
        return self._log.read().decode(errors="replace")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.process = None
        if self._log is not None:
            self._log.close()
            self._log = None

    def __enter__(self) -> LlamaServer:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


def step_stats(events) -> dict:
    """What an agent run did, from its events: steps, steps whose action was valid and ran,
    the step of the first stop the agent's pdb commands took the program to (not a restart after
    an edit), the format switch's step."""
    steps, valid, first_stop, switched, step, last_tool = 0, 0, None, None, 0, ""
    executed = {e.data.call_id for e in events if e.kind == "tool_result" and e.data.executed}
    for e in events:
        d = e.data
        if e.kind == "model_reply":
            step, steps = d.step, steps + 1
            if any(c["id"] in executed and not c.get("error") for c in d.tool_calls):
                valid += 1
        elif e.kind == "tool_call" and e.actor == "agent":
            last_tool = d.tool
        elif e.kind == "tool_format" and switched is None:
            switched = step
        elif (e.kind == "stop" and e.actor == "agent" and first_stop is None and last_tool == "pdb"
              and d.reason not in ("start", "post_mortem")):  # a place the agent's pdb took it to
            first_stop = step
    return {"steps": steps, "valid": valid, "first_stop": first_stop, "switched": switched}
