"""Benchmark: what MCP adds to an outside agent's `pdb` call, against the same call made directly.

On the bundled example (local sandbox, `python main.py`), in one run and one session:
  - direct_ms: `session.run_tool("pdb", {"command": "p 1+1"})`, the floor;
  - http_ms: the same call by the MCP Python SDK's client over streamable HTTP on 127.0.0.1
    with the token (dgym-tui's endpoint: the policy, the CallHandler, the events, the worker
    thread), the client in a process of its own (mcp_py_client.py) as an outside agent's is:
    in this process its work would contend with the endpoint's thread for the GIL;
  - inproc_ms: the same through the SDK's in-process dispatch (MCP's own cost without HTTP);
  - ts_http_ms: the same call by the official TypeScript SDK's client (mcp_ts_client.mjs, run
    with node; the SDK is looked up from MCP_TS_SDK_DIR, a folder holding its node_modules,
    and the arm is "n/a" without it). The Python client spends ~0.8 ms of its own per call
    (2.2 ms a call against 1.4 ms from a bare HTTP/1.1 client), so both are given.
Medians over N calls, after a warm-up. Goal: at most 2 ms added. Last line:

    bench_mcp direct_ms=X http_ms=Y added_ms=Y-X ratio=Y/X inproc_ms=Z ts_added_ms=T n=N

Run: python tests/benchmarks/bench_mcp.py [N]
(for the TypeScript arm: cd DIR && npm install @modelcontextprotocol/sdk; MCP_TS_SDK_DIR=DIR python ...)
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import time

import anyio
from mcp import Client

from dgym_tui.agent.policy import Policy
from dgym_tui.core.session import Session
from dgym_tui.examples import example_path
from dgym_tui.mcp_server import HttpEndpoint, OutsideAgents, build_server

HERE = os.path.dirname(os.path.abspath(__file__))


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    session = Session(str(example_path()), sandbox="local", entrypoint="python main.py")
    session.start()
    agents = OutsideAgents(session, Policy.from_config({"allow": ["pdb"], "ask": []}), mode="auto")
    endpoint = HttpEndpoint(agents).start()
    try:
        direct = []
        for _ in range(n + 10):
            started = time.perf_counter()
            session.run_tool("pdb", {"command": "p 1+1"})
            direct.append(time.perf_counter() - started)

        async def over(client) -> list[float]:
            times = []
            for _ in range(n + 10):
                started = time.perf_counter()
                result = await client.call_tool("pdb", {"command": "p 1+1"})
                times.append(time.perf_counter() - started)
                assert "2" in result.content[0].text, result
            return times

        async def inproc() -> list[float]:
            async with Client(build_server(agents)) as client:
                return await over(client)

        inproc_times = anyio.run(inproc)
        http_ms = client_median([sys.executable, os.path.join(HERE, "mcp_py_client.py")], endpoint, n)
        ts_ms = ts_client(endpoint, n)
    finally:
        endpoint.stop()
        session.close()

    def median_ms(times: list[float]) -> float:
        return statistics.median(times[10:]) * 1000

    d, h, i = median_ms(direct), http_ms, median_ms(inproc_times)
    ts = "n/a" if ts_ms is None else f"{ts_ms:.2f} ms"
    print(f"direct run_tool: {d:.2f} ms; over MCP (HTTP): {h:.2f} ms; MCP in-process: {i:.2f} ms; "
          f"over MCP (HTTP) by the TypeScript SDK's client: {ts}")
    ts_added = "n/a" if ts_ms is None else f"{ts_ms - d:.2f}"
    print(f"bench_mcp direct_ms={d:.2f} http_ms={h:.2f} added_ms={h - d:.2f} ratio={h / d:.2f} "
          f"inproc_ms={i:.2f} ts_added_ms={ts_added} n={n}")


def ts_client(endpoint, n: int) -> float | None:
    """The TypeScript SDK client's median (ms), or None without node or the SDK."""
    sdk_dir = os.environ.get("MCP_TS_SDK_DIR")
    node = shutil.which("node")
    if not sdk_dir or not node or not os.path.isdir(os.path.join(sdk_dir, "node_modules", "@modelcontextprotocol")):
        return None
    script = os.path.join(sdk_dir, "mcp_ts_client.mjs")  # beside its node_modules, where node resolves them
    shutil.copy(os.path.join(HERE, "mcp_ts_client.mjs"), script)
    return client_median([node, script], endpoint, n)


def client_median(argv: list[str], endpoint, n: int) -> float:
    """A client script's median (ms) for n calls against the endpoint, run in a process of its own."""
    out = subprocess.run([*argv, endpoint.url, endpoint.token, str(n)], capture_output=True, text=True, timeout=600)
    if out.returncode != 0:
        sys.exit(f"{os.path.basename(argv[-1])} failed: {out.stderr.strip()[-500:]}")
    return json.loads(out.stdout)["median_ms"]


if __name__ == "__main__":
    main()
