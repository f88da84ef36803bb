"""The same pdb call as bench_mcp.py's, by the MCP Python SDK's client over streamable HTTP, in a
process of its own as an outside agent's client is; prints {"median_ms": X}.
Run by bench_mcp.py: python mcp_py_client.py URL TOKEN N"""

import json
import statistics
import sys
import time

import anyio
import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client


async def main(url: str, token: str, n: int) -> float:
    times = []
    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60) as http:
        async with Client(streamable_http_client(url, http_client=http)) as client:
            for _ in range(n + 10):
                started = time.perf_counter()
                result = await client.call_tool("pdb", {"command": "p 1+1"})
                times.append(time.perf_counter() - started)
                if "2" not in result.content[0].text:
                    sys.exit(f"bad answer: {result}")
    return statistics.median(times[10:]) * 1000


if __name__ == "__main__":
    print(json.dumps({"median_ms": anyio.run(main, sys.argv[1], sys.argv[2], int(sys.argv[3]))}))
