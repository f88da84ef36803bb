"""Any hosted or local model, through litellm: streaming, native tool calls, retries, cost.

litellm speaks to a hundred providers with one call, reads their keys from the usual environment
variables (OPENAI_API_KEY, ANTHROPIC_API_KEY…) and knows their prices and context windows. It
costs seconds and ~170 MB to import, so it is loaded on the first query or `warm_up()`, which the
app calls from a background thread only when a model is configured; importing this module does
not load it. `LITELLM_LOCAL_MODEL_COST_MAP=True` keeps its import off the network.

Retries are ours, not litellm's or the openai client's (both are told `max_retries=0`): only
here can each one be reported to the person (`on_retry`) and cut short by a cancel.
"""

from __future__ import annotations

import email.utils
import logging
import os
import random
import re
import socket
import threading
import time
from dataclasses import dataclass

from dgym_tui.agent.model import (ModelCancelled, ModelError, ModelReply, OnDelta, OnRetry, ReplyCut,
                                  ToolCallAssembler, Usage, assistant_message, estimate_text_tokens,
                                  estimate_tokens)

_litellm = None
_warmed = False
_load_lock = threading.Lock()


def load_litellm():
    """Import litellm once, set up for living inside a terminal app.

    It must not print: its "Give Feedback / Get Help" banners and log lines would land in the
    middle of the Textual screen. Its loggers stay quiet unless LITELLM_LOG asks otherwise.
    """
    global _litellm
    with _load_lock:
        if _litellm is None:
            os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
            import litellm

            litellm.suppress_debug_info = True
            if "LITELLM_LOG" not in os.environ:
                for name in ("LiteLLM", "LiteLLM Router", "LiteLLM Proxy"):
                    logging.getLogger(name).setLevel(logging.CRITICAL + 1)
            _litellm = litellm
    return _litellm


def _loaded():
    """litellm for a query: a broken install is a ModelError like any other failure to answer."""
    try:
        return load_litellm()
    except Exception as exc:
        raise ModelError(f"cannot load litellm ({type(exc).__name__}: {exc}): reinstall dgym-tui with its "
                         f"dependencies", kind="other") from exc


def warm_up() -> None:
    """Load litellm and everything its first request would load (the openai client, mcp, the
    stream handler: about a second more), so the agent's first step is not the slow one.

    It sends one streamed request with a tool to a local port we hold without listening on, so
    the connection is refused at once and not a byte leaves the machine.
    """
    global _warmed
    litellm = _loaded()
    if _warmed:
        return
    _warmed = True
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        port = holder.getsockname()[1]
        tool = {"type": "function", "function": {"name": "noop", "parameters": {"type": "object", "properties": {}}}}
        try:
            for _ in litellm.completion(model="openai/warm-up", api_base=f"http://127.0.0.1:{port}/v1",
                                        api_key="no-key", messages=[{"role": "user", "content": "-"}],
                                        tools=[tool], stream=True, max_retries=0, timeout=5):
                pass
        except Exception:
            pass  # refused, as intended


def context_window(model: str) -> int | None:
    """The model's input limit in tokens according to litellm's model map; None when unknown."""
    litellm = load_litellm()
    try:
        info = litellm.get_model_info(model)
    except Exception:  # litellm raises for models it has not mapped
        return None
    value = info.get("max_input_tokens") or info.get("max_tokens")
    return int(value) if value else None


LOCAL_MAX_TOKENS = 4096       # a reply's ceiling on an OpenAI-compatible server of one's own (--api-base)
OLLAMA_DEFAULT_CONTEXT = 4096  # Ollama's window when neither the model file nor the request sets num_ctx


def server_context_window(api_base: str, model: str, timeout: float = 3.0) -> int | None:
    """The context window a local server reports: llama.cpp's GET /props (n_ctx, per slot),
    else Ollama's POST /api/show (num_ctx when set, else its default window). None when
    the server says neither (a hosted API, vLLM: litellm or config.toml's context_window decide)."""
    import json
    import urllib.request

    root = re.sub(r"/v1/?$", "", api_base.rstrip("/"))

    def fetch(path: str, body: dict | None = None):
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(root + path, data=data, headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                return json.loads(response.read(1_000_000))
        except Exception:
            return None

    props = fetch("/props")
    if isinstance(props, dict):
        settings = props.get("default_generation_settings") or {}
        n_ctx = settings.get("n_ctx") or props.get("n_ctx")
        if isinstance(n_ctx, int) and n_ctx > 0:
            return n_ctx
    name = model.split("/", 1)[1] if "/" in model else model
    shown = fetch("/api/show", {"model": name})
    if isinstance(shown, dict):
        match = re.search(r"^\s*num_ctx\s+(\d+)", str(shown.get("parameters") or ""), re.M)
        if match:
            return int(match.group(1))
        # Without num_ctx Ollama serves its default window, not the model's trained length
        trained = [v for k, v in (shown.get("model_info") or {}).items()
                   if k.endswith(".context_length") and isinstance(v, int) and v > 0]
        if trained:
            return min(trained[0], OLLAMA_DEFAULT_CONTEXT)
    return None


def count_tokens(messages: list[dict], model: str | None = None, tools: list[dict] | None = None) -> int:
    """Tokens in a prompt by the model's tokenizer when litellm has one, else characters / 4.

    Without a model it never loads litellm (cheap enough for a scripted session).
    """
    if model is None:
        return estimate_tokens(messages, tools)
    try:
        return int(load_litellm().token_counter(model=model, messages=messages, tools=tools or None))
    except Exception:
        return estimate_tokens(messages, tools)


class LiteLLMModel:
    """A model named by a litellm model string ("openai/gpt-4o", "anthropic/claude-…",
    "ollama/llama3", "openai/<name>" with `api_base` for any OpenAI-compatible server).

    `cost_per_token` = (input, output) USD per token prices a model litellm has no price for.
    `backoff_base` is the first retry's wait in seconds (doubled each time, with jitter, capped at
    `max_wait`); a Retry-After from the provider takes precedence, up to the same cap.
    `timeout` is how long the provider may stay silent (before the first byte, or between two
    chunks), not a limit on a long reply that keeps streaming.
    `extra` passes further keyword arguments to litellm.completion (e.g. max_tokens).
    """

    def __init__(self, model: str, api_base: str | None = None, api_key: str | None = None,
                 temperature: float | None = None, max_retries: int = 4, timeout: float = 120.0,
                 context_window: int | None = None, backoff_base: float = 1.0, max_wait: float = 60.0,
                 cost_per_token: tuple[float, float] | None = None, extra: dict | None = None):
        if not model or not model.strip():
            raise ValueError("the model name is empty: give a litellm model string such as openai/gpt-4o")
        self.name = model.strip()
        self.api_base = api_base
        self.api_key = api_key
        self.temperature = temperature
        self.max_retries = max(0, max_retries)
        self.timeout = timeout
        self.backoff_base = backoff_base
        self.max_wait = max_wait
        self.cost_per_token = cost_per_token
        self.extra = dict(extra or {})
        self._context_window = context_window

    def __repr__(self) -> str:  # never shows the key
        base = f", api_base={self.api_base!r}" if self.api_base else ""
        return f"LiteLLMModel({self.name!r}{base})"

    def warm_up(self) -> None:
        warm_up()

    def context_window(self) -> int | None:
        """litellm's figure; for a model it does not know behind a local server, the window the
        server itself reports (llama.cpp, Ollama), which is what really limits the prompt."""
        if self._context_window is None:
            self._context_window = context_window(self.name)
            base = self.api_base
            if base is None and self.name.startswith(("ollama/", "ollama_chat/")):
                base = os.environ.get("OLLAMA_API_BASE", "http://localhost:11434")  # litellm's default too
            if self._context_window is None and base:
                self._context_window = server_context_window(base, self.name)
        return self._context_window

    def count_tokens(self, messages: list[dict], tools: list[dict] | None = None) -> int:
        return count_tokens(messages, self.name, tools)

    @property
    def own_server(self) -> bool:
        """Served by a server of one's own (--api-base, Ollama): llama.cpp, Ollama, vLLM and LM
        Studio all hold a reply to a JSON schema, which is what JSON actions need."""
        return bool(self.api_base) or self.name.startswith(("ollama/", "ollama_chat/"))

    def query(self, messages: list[dict], tools: list[dict], on_delta: OnDelta | None = None, *,
              on_retry: OnRetry | None = None, cancel: threading.Event | None = None,
              response_format: dict | None = None) -> ModelReply:
        litellm = _loaded()
        request = self._request(messages, tools)
        if response_format is not None:
            request["response_format"] = response_format
        for attempt in range(self.max_retries + 1):
            if cancel is not None and cancel.is_set():
                raise ModelCancelled()
            try:
                reply = self._stream(litellm, request, messages, tools, on_delta, cancel)
            except ModelCancelled:
                raise
            except _CallerFailed as failed:
                raise failed.__cause__ from None
            except Exception as exc:
                failure = _classify(litellm, exc)
                if not failure.retryable or attempt == self.max_retries:
                    raise ModelError(self._describe(failure, attempt + 1), failure.kind, failure.status,
                                     attempt + 1) from exc
                wait = self._wait(attempt, failure.retry_after)
                if on_retry is not None:
                    on_retry(attempt + 1, wait, failure.reason)
                if cancel is not None:
                    if cancel.wait(wait):
                        raise ModelCancelled() from exc
                else:
                    time.sleep(wait)
                continue
            reply.retries = attempt
            return reply
        raise AssertionError("unreachable")

    def _request(self, messages: list[dict], tools: list[dict]) -> dict:
        request = {
            "model": self.name,
            # Shallow copies: litellm may adjust messages for a provider; the caller's history stays as is.
            "messages": [dict(m) for m in messages],
            "stream": True,
            "stream_options": {"include_usage": True},
            "timeout": self.timeout,
            "max_retries": 0,
            "drop_params": True,  # a parameter a provider does not take is dropped, not an error
        }
        if tools:
            request["tools"] = tools
            request["tool_choice"] = "auto"
        if self.temperature is not None:
            request["temperature"] = self.temperature
        if self.api_base:
            request["api_base"] = self.api_base
            # a small local model can ramble until its window is full (a 0.5B one wrote 4,000+
            # tokens at 2 tok/s in one reply): a step's reply has a ceiling unless one is given
            request["max_tokens"] = LOCAL_MAX_TOKENS
        key = self.api_key
        if key is None and self.api_base and self.name.startswith("openai/") and not os.environ.get("OPENAI_API_KEY"):
            key = "no-key"  # local OpenAI-compatible servers (Ollama, vLLM…) take none, but the client insists
        if key is not None:
            request["api_key"] = key
        request.update(self.extra)
        return request

    def _stream(self, litellm, request, messages, tools, on_delta, cancel) -> ModelReply:
        response = litellm.completion(**request)
        text: list[str] = []
        calls = ToolCallAssembler()
        usage = finish = None
        cut = ""
        for chunk in response:
            if cancel is not None and cancel.is_set():
                _close(response)
                raise ModelCancelled()
            if getattr(chunk, "usage", None):
                usage = chunk.usage
            for choice in chunk.choices or ():
                if choice.index not in (0, None):  # we never ask for n > 1
                    continue
                finish = choice.finish_reason or finish
                delta = choice.delta
                if delta is None:
                    continue
                if delta.content:
                    text.append(delta.content)
                    if on_delta is not None:
                        try:
                            on_delta(delta.content)
                        except ReplyCut as stop:
                            cut = stop.reason
                        except Exception as exc:
                            raise _CallerFailed() from exc
                for piece in delta.tool_calls or ():
                    function = piece.function
                    calls.add(getattr(piece, "index", None), piece.id, function and function.name,
                              function and function.arguments)
            if cut:  # the caller has what it needs: closing the stream stops the server generating
                _close(response)
                finish = "cut"
                break
        reply_text = "".join(text)
        tool_calls = calls.calls()
        counted = self._usage(usage, messages, tools, reply_text, tool_calls)
        return ModelReply(text=reply_text, tool_calls=tool_calls, usage=counted, cost=self._cost(litellm, counted),
                          model=self.name, message=assistant_message(reply_text, tool_calls), finish_reason=finish,
                          cut=cut)

    def _usage(self, usage, messages, tools, text, tool_calls) -> Usage:
        if usage and (usage.prompt_tokens or usage.completion_tokens):
            return Usage(usage.prompt_tokens or 0, usage.completion_tokens or 0, usage.total_tokens or 0)
        # Neither the server (some local ones ignore stream_options) nor litellm (which usually
        # counts in their place) gave a usage: count it ourselves, and say so.
        produced = text + "".join(c.name + c.raw_arguments for c in tool_calls)
        return Usage(self.count_tokens(messages, tools), estimate_text_tokens(produced), estimated=True)

    def _cost(self, litellm, usage: Usage) -> float | None:
        if self.cost_per_token is not None:
            return usage.prompt_tokens * self.cost_per_token[0] + usage.completion_tokens * self.cost_per_token[1]
        try:
            prompt, completion = litellm.cost_per_token(model=self.name, prompt_tokens=usage.prompt_tokens,
                                                        completion_tokens=usage.completion_tokens)
        except Exception:  # litellm raises for a model it has no price for: unknown, not free
            return None
        return float(prompt) + float(completion)

    def _wait(self, attempt: int, retry_after: float | None) -> float:
        if retry_after is not None:
            return min(max(retry_after, 0.0), self.max_wait)
        return min(self.backoff_base * (2 ** attempt) * random.uniform(0.75, 1.25), self.max_wait)

    def _describe(self, failure: _Failure, attempts: int) -> str:
        """One line a person can act on."""
        where = self.api_base or "the provider"
        tries = f" ({attempts} attempts)" if attempts > 1 else ""
        detail = failure.detail
        kind = failure.kind
        if kind == "auth":
            keys = " or ".join(_missing_keys(self.name))
            if failure.reason == "no API key":
                return f"{self.name}: no API key: set {keys or 'the provider’s API key variable'} in the environment"
            fix = ": check the API key given" if self.api_key else f": check {keys or 'the API key'}"
            return f"{self.name}: the provider refused the credentials{fix} ({detail})"
        if kind == "bad_model":
            return (f"litellm cannot tell which provider serves '{self.name}': write it as provider/model, "
                    f"e.g. openai/gpt-4o, anthropic/claude-sonnet-4-5 or ollama/llama3")
        if kind == "not_found":
            return f"{self.name}: {where} does not know this model (HTTP 404): check its name ({detail})"
        if kind == "connection":
            return f"{self.name}: cannot connect to {where}{tries}: is it running and reachable? ({detail})"
        if kind == "timeout":
            return f"{self.name}: no reply from {where} within {self.timeout:g} s{tries}"
        if kind == "rate_limit":
            return f"{self.name}: still rate limited{tries}: wait a little and go on ({detail})"
        if kind == "quota":
            return f"{self.name}: the provider says the account's quota or credit is used up ({detail})"
        if kind == "server":
            return f"{self.name}: {where} failed with HTTP {failure.status}{tries} ({detail})"
        if kind == "context_window":
            return f"{self.name}: the conversation no longer fits the model's context window ({detail})"
        if kind == "bad_request":
            return f"{self.name}: the provider rejected the request (HTTP {failure.status or 400}): {detail}"
        return f"{self.name}: {detail}"


class _CallerFailed(Exception):
    """The caller's own callback raised: its exception goes back to it untouched, never retried."""


@dataclass
class _Failure:
    kind: str
    retryable: bool
    reason: str                   # for "retrying in 2 s (reason)"
    detail: str                   # the provider's words, cleaned to one line
    status: int | None = None
    retry_after: float | None = None


def _classify(litellm, exc: Exception) -> _Failure:
    """What went wrong and whether trying again may help.

    Status codes decide where there is one; litellm reports a refused connection and a missing
    key both as a 500 "InternalServerError", so those are told apart by its words first.
    """
    ex = litellm.exceptions
    status = getattr(exc, "status_code", None)
    if not isinstance(status, int):
        status = None
    text = str(exc)
    detail = _detail(exc)
    lowered = text.lower()

    def failure(kind, retryable, reason, **kw):
        return _Failure(kind, retryable, reason, detail, status, **kw)

    if isinstance(exc, ex.Timeout):
        return failure("timeout", True, "timed out")
    if "missing credentials" in lowered or ("api key" in lowered and "missing" in lowered):
        return failure("auth", False, "no API key")
    if isinstance(exc, (ex.AuthenticationError, ex.PermissionDeniedError)) or status in (401, 403):
        return failure("auth", False, "credentials refused")
    if isinstance(exc, getattr(ex, "LiteLLMUnknownProvider", ())) or "llm provider not provided" in lowered:
        return failure("bad_model", False, "unknown provider")
    if isinstance(exc, getattr(ex, "MidStreamFallbackError", ())) or "peer closed connection" in lowered:
        return failure("connection", True, "reply broken off")
    if isinstance(exc, ex.APIConnectionError) or "connection error" in lowered:
        return failure("connection", True, "connection failed")
    if isinstance(exc, ex.ContextWindowExceededError):
        return failure("context_window", False, "context window exceeded")
    if isinstance(exc, ex.RateLimitError) or status == 429:
        if "quota" in lowered or "billing" in lowered:
            return failure("quota", False, "quota used up")
        return failure("rate_limit", True, "rate limited", retry_after=_retry_after(exc))
    if isinstance(exc, ex.NotFoundError) or status == 404:
        return failure("not_found", False, "model not found")
    if status is not None and status >= 500:
        return failure("server", True, f"server error {status}", retry_after=_retry_after(exc))
    if isinstance(exc, ex.BadRequestError) or status in (400, 413, 422):
        return failure("bad_request", False, "request rejected")
    if isinstance(exc, OSError) or type(exc).__module__.startswith(("httpx", "httpcore")):
        return failure("connection", True, "connection failed")
    return _Failure("other", False, type(exc).__name__, f"{type(exc).__name__}: {detail}", status)


def _retry_after(exc: Exception) -> float | None:
    """Seconds the provider asked us to wait (Retry-After in seconds or as a date, or retry-after-ms)."""
    headers = getattr(exc, "litellm_response_headers", None)
    if not headers:
        response = getattr(exc, "response", None)
        headers = getattr(response, "headers", None)
    if not headers:
        return None
    try:
        if headers.get("retry-after-ms"):
            return float(headers["retry-after-ms"]) / 1000
        value = headers.get("retry-after")
        if value is None:
            return None
        try:
            return float(value)
        except ValueError:
            when = email.utils.parsedate_to_datetime(value)
            return max(0.0, when.timestamp() - time.time())
    except (TypeError, ValueError, OverflowError):
        return None


_PREFIX = re.compile(r"^(?:litellm\.\w+:\s*|\w*(?:Error|Exception)\s*(?::|-)\s*)+")
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def _detail(exc: BaseException) -> str:
    """The provider's message on one line, without litellm's class-name prefixes or control bytes.

    Where litellm says only "Connection error.", the underlying cause (e.g. "Connection refused")
    is what helps, so the chain of causes is followed to its end.
    """
    text = str(exc)
    cause = exc.__cause__ or exc.__context__
    seen = {id(exc)}
    while cause is not None and id(cause) not in seen and "connection error" in text.lower():
        seen.add(id(cause))
        if str(cause):
            text = str(cause)
        cause = cause.__cause__ or cause.__context__
    text = text.split(" Original exception:")[0]  # litellm repeats the message after this
    text = _CONTROL.sub(" ", text)
    text = " ".join(text.split())
    text = _PREFIX.sub("", text).strip() or type(exc).__name__
    return text if len(text) <= 240 else text[:240] + "…"


def _missing_keys(model: str) -> list[str]:
    try:
        return list(load_litellm().validate_environment(model).get("missing_keys") or [])
    except Exception:
        return []


def _close(response) -> None:
    """Drop a stream we no longer read, so its connection is released rather than left half-read."""
    for holder in (response, getattr(response, "completion_stream", None)):
        close = getattr(holder, "close", None)
        if callable(close):
            try:
                close()
            except Exception:
                pass
