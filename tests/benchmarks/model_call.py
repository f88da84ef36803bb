"""Benchmark: what litellm costs us: its import, its warm-up, and the overhead of one query.

In a fresh interpreter: the time and RSS of `import litellm` (LITELLM_LOCAL_MODEL_COST_MAP=True),
then `warm_up()`. Then, against the stub OpenAI-compatible server (tests/stub_llm_server.py, run
in its own process so it does not share our GIL), the median of N LiteLLMModel.query calls (a
streamed reply of ~20 chunks with text and a tool call, a prompt with the agent's 8 tools), beside
the floors measured in the same run: the stub's own time per request, and a bare httpx client
doing the same streamed POST and parsing the SSE to [DONE]. Also litellm.completion alone, to
tell litellm's share from ours. The last line is

    model_call import_s=A import_rss_mb=B warm_up_s=C query_p50_ms=D litellm_p50_ms=E http_floor_p50_ms=F stub_p50_ms=G ratio=H

where ratio = query / http floor. Run: python tests/benchmarks/model_call.py [N]
"""

from __future__ import annotations

import json
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

STUB = Path(__file__).resolve().parents[1] / "stub_llm_server.py"

N = int(sys.argv[1]) if len(sys.argv) > 1 else 50
TOOLS = [{"type": "function", "function": {"name": name, "description": f"The {name} tool.",
                                           "parameters": {"type": "object", "properties": {"arg": {"type": "string"}}}}}
         for name in ("pdb", "view", "listdir", "grep", "eval", "edit", "bash", "submit")]
MESSAGES = [{"role": "system", "content": "You debug Python code with pdb. " * 20},
            {"role": "user", "content": "tests/test_cart.py::test_total fails:\n" + "E   assert 90 == 100\n" * 10}]
REPLY = {"text": "The discount is applied twice; let me stop at the loop.",
         "tool_calls": [{"name": "pdb", "arguments": {"command": "b cart.py:12"}}], "chunk_size": 8}

IMPORT_PROBE = """
import os, resource, time
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
t = time.perf_counter(); import litellm; imported = time.perf_counter() - t
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
from dgym_tui.agent.litellm_model import warm_up
t = time.perf_counter(); warm_up(); warmed = time.perf_counter() - t
print(imported, (rss - base) / 1024, rss / 1024, warmed)
"""


def median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


def main() -> None:
    out = subprocess.run([sys.executable, "-c", IMPORT_PROBE], capture_output=True, text=True, check=True)
    import_s, import_rss_mb, total_rss_mb, warm_s = map(float, out.stdout.split())
    print(f"import litellm: {import_s:.2f} s, +{import_rss_mb:.0f} MB RSS ({total_rss_mb:.0f} MB in all); "
          f"warm_up after it: {warm_s:.2f} s")

    import httpx

    from dgym_tui.agent.litellm_model import LiteLLMModel, load_litellm, warm_up

    litellm = load_litellm()
    warm_up()
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as script:
        json.dump([REPLY] * (3 * N + 10), script)
    stub = subprocess.Popen([sys.executable, str(STUB), script.name], stdout=subprocess.PIPE, text=True)
    try:
        url = re.search(r"on (http://\S+)", stub.stdout.readline()).group(1)
        model = LiteLLMModel("openai/bench", api_base=url, api_key="d", max_retries=0)
        for _ in range(5):  # connections opened, caches filled
            model.query(MESSAGES, TOOLS)
        queries = []
        for _ in range(N):
            t = time.perf_counter()
            reply = model.query(MESSAGES, TOOLS)
            queries.append(time.perf_counter() - t)
        assert reply.tool_calls[0].arguments == {"command": "b cart.py:12"}

        direct = []
        for _ in range(N):
            t = time.perf_counter()
            for _chunk in litellm.completion(model="openai/bench", api_base=url, api_key="d", messages=MESSAGES,
                                             tools=TOOLS, tool_choice="auto", stream=True,
                                             stream_options={"include_usage": True}, max_retries=0):
                pass
            direct.append(time.perf_counter() - t)

        body = {"model": "bench", "messages": MESSAGES, "tools": TOOLS, "tool_choice": "auto", "stream": True,
                "stream_options": {"include_usage": True}}
        floor = []
        with httpx.Client() as client:
            for _ in range(N + 5):
                t = time.perf_counter()
                with client.stream("POST", f"{url}/chat/completions", content=json.dumps(body),
                                   headers={"Authorization": "Bearer d", "Content-Type": "application/json"}) as r:
                    for line in r.iter_lines():
                        if line.startswith("data: ") and line != "data: [DONE]":
                            json.loads(line[6:])
                floor.append(time.perf_counter() - t)
        floor = floor[5:]
    finally:
        stub.send_signal(signal.SIGINT)
        report = json.loads(stub.communicate(timeout=10)[0].strip().splitlines()[-1])
        os.unlink(script.name)
    served = report["served_s"][-N:]  # the bare client's requests: the stub alone

    q, d, f, s = median_ms(queries), median_ms(direct), median_ms(floor), median_ms(served)
    print(f"LiteLLMModel.query p50 {q:.2f} ms, litellm.completion alone {d:.2f} ms, "
          f"bare httpx {f:.2f} ms, stub's own time {s:.2f} ms ({N} calls each, ~20 chunks a reply)")
    print(f"model_call import_s={import_s:.2f} import_rss_mb={import_rss_mb:.0f} warm_up_s={warm_s:.2f} "
          f"query_p50_ms={q:.2f} litellm_p50_ms={d:.2f} http_floor_p50_ms={f:.2f} stub_p50_ms={s:.2f} "
          f"ratio={q / f:.1f}")


if __name__ == "__main__":
    main()
