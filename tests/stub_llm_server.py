"""A stub OpenAI-compatible chat server on 127.0.0.1, so tests exercise litellm's real HTTP path.

Tests never call a real provider, yet the code that talks to one (litellm, the openai client,
httpx, SSE parsing, error mapping, retries) must run for real: this server answers
POST /v1/chat/completions (and /chat/completions) from a queue of scripted responses, streaming
(SSE) or not, and records every request body it receives so a test can check what the model was
sent.

A response is a plain dict (so a JSON file can hold a script too):

    {"text": "Hello"}                                   a text reply
    {"tool_calls": [{"name": "view", "arguments": {"path": "a.py"}}], "text": "..."}
                                                        one or more (parallel) tool calls;
                                                        "arguments" given as a string is sent
                                                        verbatim (malformed JSON, say)
    {"status": 429, "retry_after": 0.2}                 an HTTP error (any status), with an
                                                        optional Retry-After header and "message"
    {"disconnect": True}                                close the connection without answering
    {"text": "...", "drop_after": 3}                    close it after 3 streamed chunks
    {"delay": 1.5, ...}                                 wait before answering (a slow model)

The agent's auto format first asks a server of one's own whether native tool calls come back
(dgym_tui/agent/probe.py): such a probe is answered as a server with native tool calls answers it
(a `view` call), without taking a scripted response, and recorded apart in `probes`
(`answer_probes=False` leaves it to the script, for tests of the probe itself).

A client that stops reading a stream (the agent cuts a reply short) is recorded in `hung_up`: the
number of chunks that stream had sent.

Optional keys of a reply: "chunk_size" (characters per streamed text chunk, default 4),
"chunk_delay" (seconds between chunks), "interleave" (stream parallel calls' argument pieces
interleaved rather than one call after another), "usage" ({"prompt_tokens", "completion_tokens"},
or False to report none), "finish_reason", "model". A response may also be a callable taking the
request body and returning one of these dicts, for a stub that reacts to what it was sent.

When the queue is empty the server answers 400 with a message saying so, so a test that scripted
too few responses fails at once instead of retrying.
"""

from __future__ import annotations

import argparse
import json
import socket
import threading
import time
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

CHAT_PATHS = ("/v1/chat/completions", "/chat/completions")


class StubLLMServer:
    """The server and its script; `url` is the api_base to give litellm (ends in /v1)."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0, answer_probes: bool = True):
        self._queue: deque = deque()
        self.answer_probes = answer_probes
        self.probes: list[dict] = []     # auto's probe requests, answered apart (see the module's doc)
        self._lock = threading.Lock()
        self.requests: list[dict] = []   # {"path", "headers", "body", "time"} in arrival order
        self.served: list[float] = []    # seconds spent answering each request (for benchmarks)
        self.hung_up: list[int] = []     # chunks a stream had sent when its client stopped reading
        self._httpd = ThreadingHTTPServer((host, port), _make_handler(self))
        self._httpd.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return self._httpd.server_address[1]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def push(self, *responses) -> StubLLMServer:
        """Queue responses, answered in order, one per request."""
        with self._lock:
            self._queue.extend(responses)
        return self

    @property
    def pending(self) -> int:
        with self._lock:
            return len(self._queue)

    @property
    def bodies(self) -> list[dict]:
        """The JSON bodies received, in order."""
        return [r["body"] for r in self.requests]

    def start(self) -> StubLLMServer:
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.05,), name="stub-llm",
                                        daemon=True)  # a short poll: stop() returns at once
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        if self._thread:
            self._thread.join(timeout=5)

    def __enter__(self) -> StubLLMServer:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def _next(self, path: str, headers: dict, body: dict) -> dict:
        if self.answer_probes and _is_probe(body):
            with self._lock:
                self.probes.append(body)
            return {"tool_calls": [{"name": "view", "arguments": {"path": "main.py"}}]}
        with self._lock:
            self.requests.append({"path": path, "headers": headers, "body": body, "time": time.time()})
            n = len(self.requests)
            spec = self._queue.popleft() if self._queue else None
        if spec is None:
            return {"status": 400, "message": f"stub LLM server: no scripted response left (request {n})"}
        return spec(body) if callable(spec) else spec


def _make_handler(server: StubLLMServer):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, as real providers: the client reuses connections

        def log_message(self, *args):  # quiet: pytest output stays readable
            pass

        def setup(self):
            super().setup()
            # Many small SSE writes: without this, Nagle's algorithm and delayed ACKs add ~40 ms.
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

        def handle(self):
            try:
                super().handle()
            except (BrokenPipeError, ConnectionResetError):  # the client gave up (a timeout test)
                self.close_connection = True

        def do_POST(self):
            started = time.perf_counter()
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            if self.path.split("?")[0] not in CHAT_PATHS:
                self._send_json(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})
                return
            try:
                body = json.loads(raw)
            except ValueError:
                self._send_json(400, {"error": {"message": "body is not JSON", "type": "invalid_request_error"}})
                return
            spec = server._next(self.path, dict(self.headers), body)
            self._answer(spec, body)
            server.served.append(time.perf_counter() - started)

        def _answer(self, spec, body):
            time.sleep(spec.get("delay", 0))
            if spec.get("disconnect"):
                self.close_connection = True
                self.connection.shutdown(socket.SHUT_RDWR)
                return
            if "status" in spec:
                self._send_error(spec)
            elif body.get("stream"):
                self._send_stream(spec, body)
            else:
                self._send_json(200, _completion(spec, body))

        def _send_error(self, spec):
            status = spec["status"]
            kind = {401: "authentication_error", 404: "not_found_error", 429: "rate_limit_exceeded"}.get(
                status, "server_error" if status >= 500 else "invalid_request_error")
            headers = {}
            if spec.get("retry_after") is not None:
                headers["Retry-After"] = str(spec["retry_after"])
            message = spec.get("message", f"stub error {status}")
            self._send_json(status, {"error": {"message": message, "type": kind, "code": kind}}, headers)

        def _send_json(self, status, obj, headers=None):
            data = json.dumps(obj).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(data)

        def _send_stream(self, spec, body):
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            include_usage = (body.get("stream_options") or {}).get("include_usage")
            for n, chunk in enumerate(_chunks(spec, body, include_usage)):
                if n == spec.get("drop_after"):  # the connection breaks mid-reply
                    self.close_connection = True
                    self.connection.shutdown(socket.SHUT_RDWR)
                    return
                data = f"data: {json.dumps(chunk)}\n\n".encode()
                try:
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
                    self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError):  # the client stopped reading
                    server.hung_up.append(n)
                    self.close_connection = True
                    return
                time.sleep(spec.get("chunk_delay", 0))
            done = b"data: [DONE]\n\n"
            self.wfile.write(b"%x\r\n%s\r\n0\r\n\r\n" % (len(done), done))
            self.wfile.flush()

    return Handler


def _is_probe(body: dict) -> bool:
    from dgym_tui.agent.probe import PROBE_TASK

    messages = body.get("messages") or []
    return len(messages) == 1 and messages[0].get("content") == PROBE_TASK


def _arguments(call: dict) -> str:
    args = call.get("arguments", {})
    return args if isinstance(args, str) else json.dumps(args)


def _calls(spec: dict) -> list[dict]:
    return [{"id": call.get("id", f"call_{i}_{call['name']}"), "type": "function",
             "function": {"name": call["name"], "arguments": _arguments(call)}}
            for i, call in enumerate(spec.get("tool_calls") or [])]


def _usage(spec: dict, body: dict) -> dict | None:
    usage = spec.get("usage")
    if usage is False:
        return None
    if usage is None:  # a rough count, like a real server's, so usage is never all zeros
        prompt = len(json.dumps(body.get("messages", []))) // 4
        completion = (len(spec.get("text") or "") + len(json.dumps(_calls(spec)))) // 4
        usage = {"prompt_tokens": prompt, "completion_tokens": completion}
    return {**usage, "total_tokens": usage["prompt_tokens"] + usage["completion_tokens"]}


def _finish(spec: dict) -> str:
    return spec.get("finish_reason") or ("tool_calls" if spec.get("tool_calls") else "stop")


def _completion(spec: dict, body: dict) -> dict:
    message = {"role": "assistant", "content": spec.get("text")}
    if spec.get("tool_calls"):
        message["tool_calls"] = _calls(spec)
    reply = {"id": "chatcmpl-stub", "object": "chat.completion", "created": int(time.time()),
             "model": spec.get("model", body.get("model", "stub")),
             "choices": [{"index": 0, "message": message, "finish_reason": _finish(spec)}]}
    usage = _usage(spec, body)
    if usage:
        reply["usage"] = usage
    return reply


def _chunks(spec: dict, body: dict, include_usage: bool):
    """The SSE chunks of one streamed reply: text pieces, then tool-call pieces by index."""
    base = {"id": "chatcmpl-stub", "object": "chat.completion.chunk", "created": int(time.time()),
            "model": spec.get("model", body.get("model", "stub"))}

    def chunk(delta, finish=None):
        return {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    yield chunk({"role": "assistant", "content": ""})
    text, size = spec.get("text") or "", spec.get("chunk_size", 4)
    for i in range(0, len(text), size):
        yield chunk({"content": text[i:i + size]})
    pieces = []  # per call: its opening delta (id, name), then its arguments in pieces
    for index, call in enumerate(_calls(spec)):
        args = call["function"]["arguments"]
        parts = [{"index": index, "id": call["id"], "type": "function",
                  "function": {"name": call["function"]["name"], "arguments": ""}}]
        parts += [{"index": index, "function": {"arguments": args[i:i + size]}} for i in range(0, len(args), size)]
        pieces.append(parts)
    if spec.get("interleave"):
        order = [p for group in _zip_longest(pieces) for p in group]
    else:
        order = [p for parts in pieces for p in parts]
    for piece in order:
        yield chunk({"tool_calls": [piece]})
    yield chunk({}, _finish(spec))
    usage = _usage(spec, body)
    if include_usage and usage:
        yield {**base, "choices": [], "usage": usage}


def _zip_longest(groups):
    for i in range(max((len(g) for g in groups), default=0)):
        yield [g[i] for g in groups if i < len(g)]


@pytest.fixture
def stub_llm():
    """A running stub server for one test; push responses, read .requests / .bodies."""
    with StubLLMServer() as server:
        yield server


def main(argv=None) -> None:
    """Serve a JSON list of responses by hand: for trying the app against a scripted provider."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("responses", nargs="?", help="JSON file holding a list of responses")
    args = parser.parse_args(argv)
    server = StubLLMServer(port=args.port)
    if args.responses:
        with open(args.responses) as fh:
            server.push(*json.load(fh))
    print(f"stub LLM server on {server.url} ({server.pending} responses queued); Ctrl-C stops it", flush=True)
    try:
        server._httpd.serve_forever()
    except KeyboardInterrupt:
        pass
    # What a benchmark reads: the server's own seconds per request, measured in its own process.
    print(json.dumps({"requests": len(server.requests), "served_s": server.served}), flush=True)


if __name__ == "__main__":
    main()
