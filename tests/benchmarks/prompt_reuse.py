"""Benchmark: how much of each prompt a local model's server processes anew, trial after trial.

llama.cpp's llama-server (Qwen2.5-Coder-1.5B by default, one slot, its prompt cache as it ships)
sits behind a recording proxy that reads each response's `timings`: prompt_n, the prompt tokens
the server processed, and cache_n, the ones it reused. The agent runs trials one after another on
the bundled minibugs tasks (one arm, as `dgym-tui batch --workers 1` runs them, each trial in a
sandbox of its own). Per trial, its first request: the tokens processed against its task-specific
tokens (those after the prefix it shares with the previous trial's first prompt, tokenized by the
server itself); per later step, the tokens processed against the context's growth since the step
before. Both layouts in one run: the prompt as dgym-tui builds it (what every trial shares first,
the task's own last) and the repository's name leading it (the layout before).

Goals (issue 33): a trial's first request processes at most its task-specific tokens + 10%; a
step at most 1.2x its new tokens.

Run: python tests/benchmarks/prompt_reuse.py [--model 0.5b|1.5b] [--tasks 4] [--steps 4]
     [--format json|text|native|auto] [--sandbox local|docker]
"""

from __future__ import annotations

import argparse
import http.client
import json
import statistics
import sys
import threading
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from real_model import LlamaServer  # noqa: E402

from dgym_tui.agent import loop, prompts  # noqa: E402
from dgym_tui.batch.spec import Arm, TrialSpec  # noqa: E402
from dgym_tui.batch.tasks import load_tasks  # noqa: E402
from dgym_tui.batch.trial import run_trial  # noqa: E402
from dgym_tui.examples import example_path  # noqa: E402


class RecordingProxy:
    """Forwards /v1/chat/completions to the server, the reply streamed through as it comes, and
    records each request's messages with the timings of its response."""

    def __init__(self, upstream_port: int):
        self.upstream = upstream_port
        self.records: list[dict] = []
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                conn = http.client.HTTPConnection("127.0.0.1", proxy.upstream, timeout=900)
                conn.request("POST", self.path, body, {"Content-Type": "application/json"})
                response = conn.getresponse()
                self.send_response(response.status)
                for key, value in response.getheaders():
                    if key.lower() not in ("transfer-encoding", "connection", "content-length"):
                        self.send_header(key, value)
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                timings, seen, gone = None, b"", False
                while True:
                    chunk = response.read1(65536)
                    if not chunk:
                        break
                    seen = (seen + chunk)[-65536:]
                    if gone:  # the agent stopped reading (a whole action): the server still says its timings
                        continue
                    try:
                        self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                        self.wfile.flush()
                    except OSError:
                        gone = True
                if not gone:
                    try:
                        self.wfile.write(b"0\r\n\r\n")
                    except OSError:
                        pass
                for line in seen.decode(errors="replace").splitlines():
                    text = line.removeprefix("data: ").strip()
                    if '"timings"' in text:
                        try:
                            timings = json.loads(text)["timings"]
                        except (ValueError, KeyError):
                            pass
                request = json.loads(body or b"{}")
                proxy.records.append({"messages": request.get("messages") or [], "timings": timings})

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"


def tokens(server_port: int, messages: list[dict]) -> list[int]:
    def post(path: str, data: dict) -> dict:
        req = urllib.request.Request(f"http://127.0.0.1:{server_port}{path}", json.dumps(data).encode(),
                                     {"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=60) as r:
            return json.loads(r.read())

    prompt = post("/apply-template", {"messages": messages})["prompt"]
    return post("/tokenize", {"content": prompt, "add_special": False, "parse_special": True})["tokens"]


def common(a: list[int], b: list[int]) -> int:
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n


REPO_FIRST = 'This task\'s repository is "{repo}"; it runs in {sandbox}, as `{entrypoint}`.\n\n'


def leading_repo(template: str) -> str:
    """The same prompt with the task's own line first, as dgym-tui had it before."""
    lines = template.rstrip("\n").splitlines()
    return REPO_FIRST + "\n".join(lines[:-1]).rstrip() + "\n"


def run_layout(name: str, server: LlamaServer, proxy: RecordingProxy, tasks, args) -> list[dict]:
    saved = prompts.SYSTEM_PROMPT, loop.TEXT_SYSTEM_PROMPT
    if name == "repo first":
        prompts.SYSTEM_PROMPT, loop.TEXT_SYSTEM_PROMPT = leading_repo(saved[0]), leading_repo(saved[1])
    trials = []
    try:
        for task in tasks:
            start = len(proxy.records)
            spec = TrialSpec(task=task, arm=Arm("all", []), attempt=1, model="openai/qwen2.5-coder",
                             api_base=proxy.url, tool_format=args.format, max_steps=args.steps,
                             sandbox=args.sandbox, yes=True)
            result = run_trial(spec).result
            trials.append({"task": task.id, "status": result["status"], "requests": proxy.records[start:]})
    finally:
        prompts.SYSTEM_PROMPT, loop.TEXT_SYSTEM_PROMPT = saved
    return trials


def figures(trials: list[dict], port: int) -> tuple[list[tuple], list[tuple]]:
    firsts, steps = [], []
    previous_first = None
    for trial in trials:
        requests = [r for r in trial["requests"] if r["timings"] and len(r["messages"]) >= 2]  # not the probe
        if not requests:
            continue
        toks = [tokens(port, r["messages"]) for r in requests]
        if previous_first is not None:
            own = len(toks[0]) - common(toks[0], previous_first)
            firsts.append((trial["task"], requests[0]["timings"]["prompt_n"], own, len(toks[0])))
        previous_first = toks[0]
        for k in range(1, len(requests)):
            growth = len(toks[k]) - len(toks[k - 1])
            if growth > 0:
                steps.append((trial["task"], k + 1, requests[k]["timings"]["prompt_n"], growth))
    return firsts, steps


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--model", choices=["0.5b", "1.5b"], default="1.5b")
    p.add_argument("--tasks", type=int, default=4)
    p.add_argument("--steps", type=int, default=4)
    p.add_argument("--format", default="json")
    p.add_argument("--sandbox", default="local")
    p.add_argument("--context", type=int, default=16384)
    args = p.parse_args()
    tasks = load_tasks(Path(example_path()).parent / "minibugs")[:args.tasks]
    print(f"model: Qwen2.5-Coder-{args.model.upper()} Q4_K_M, llama-server --jinja -c {args.context} --parallel 1; "
          f"{len(tasks)} minibugs trials one after another per layout, {args.steps} steps, --tool-format {args.format}")
    with LlamaServer(args.model, context=args.context) as server:
        proxy = RecordingProxy(server.port)
        for layout in ("shared first", "repo first"):
            trials = run_layout(layout, server, proxy, tasks, args)
            firsts, steps = figures(trials, server.port)
            print(f"\n{layout}:")
            for task, processed, own, total in firsts:
                print(f"  first request of {task:<14} processed {processed:>5} of {total:>5} tokens; "
                      f"task-specific {own:>5}: {processed / max(1, own):.2f}x")
            for task, step, processed, growth in steps:
                print(f"  {task:<14} step {step}: processed {processed:>5}, the context grew {growth:>5}: "
                      f"{processed / growth:.2f}x")
            first_ratio = statistics.median(p / max(1, o) for _t, p, o, _n in firsts) if firsts else float("nan")
            step_ratio = statistics.median(p / g for *_x, p, g in steps) if steps else float("nan")
            reprocessed = statistics.median(p / n for _t, p, _o, n in firsts) if firsts else float("nan")
            print(f"prompt_reuse layout={layout!r} first_request_vs_task_tokens={first_ratio:.2f} "
                  f"first_request_share_processed={reprocessed:.2f} step_vs_growth={step_ratio:.2f} "
                  f"trials={len(trials)} steps={len(steps)}")


if __name__ == "__main__":
    main()
