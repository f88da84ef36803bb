"""What the agent loop needs from a language model, whichever one answers.

The loop sends the conversation (OpenAI chat format: system / user / assistant with tool_calls /
tool messages) and the tools (OpenAI function-tool JSON schemas), and gets a `ModelReply` back:
the text, the tool calls already parsed, the tokens and the cost, and the assistant message to
append to the history. Two models implement it: `LiteLLMModel` (any provider, in
`litellm_model.py`) and `ScriptedModel` (tests and demos, in `scripted.py`).

The contract that keeps a session alive whatever the model does:
- a malformed tool call is data, not an exception: `ToolCall.error` says what is wrong, in words
  the agent can send back to the model;
- `query` raises only `ModelError` (a provider failure that outlived the retries, one line for a
  person) or `ModelCancelled` (the caller asked it to stop);
- an unknown price is `None`, never 0, so the UI shows "?" rather than a false "$0.00".

This module imports nothing heavy: the UI may import it on its first frame.
"""

from __future__ import annotations

import json
import math
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

OnDelta = Callable[[str], None]
"""Called with each piece of the reply's text as it arrives (the transcript streams it). It may
raise `ReplyCut` to end the reply there."""

OnRetry = Callable[[int, float, str], None]
"""Called before each retry with (attempt number from 1, seconds it will wait, reason), so the
status bar can say "retrying in 2 s (rate limited)". Text streamed before a retry is void: the
retried reply streams again from its start."""


@dataclass
class ToolCall:
    """One tool call as the model made it; `arguments` is None exactly when `error` is set."""

    id: str
    name: str
    arguments: dict | None
    raw_arguments: str
    error: str | None = None


@dataclass
class Usage:
    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0
    estimated: bool = False  # counted by us (characters / 4 or a tokenizer), not reported by the provider

    def __post_init__(self):
        if not self.total_tokens:
            self.total_tokens = self.prompt_tokens + self.completion_tokens


@dataclass
class ModelReply:
    text: str
    tool_calls: list[ToolCall]
    usage: Usage
    cost: float | None            # USD; None when the model's price is unknown
    model: str                    # the configured model name ("openai/gpt-4o", "scripted:demo")
    message: dict                 # the assistant message to append to the history, as sent to us
    finish_reason: str | None = None
    retries: int = 0              # how many retries this reply took
    text_error: str | None = None  # text actions: why no action could be read from the reply
    text_note: str = ""           # text actions: how a near-miss was read ("read as pdb 'p x'")
    cut: str = ""                 # why the reply was cut short by the caller (ReplyCut), if it was


class ModelError(Exception):
    """A provider failure that remains after retries, worded for a person in one line.

    `kind` lets the loop react without parsing words: "auth", "bad_model", "not_found",
    "connection", "timeout", "rate_limit", "quota", "server", "context_window", "bad_request",
    "script_over" or "other". `status` is the HTTP status when there was one.
    """

    def __init__(self, message: str, kind: str = "other", status: int | None = None, attempts: int = 1):
        super().__init__(message)
        self.message = message
        self.kind = kind
        self.status = status
        self.attempts = attempts


class ModelCancelled(Exception):
    """The caller's cancel event was set: the query stopped at the next chunk or retry wait."""


class ReplyCut(Exception):
    """Raised by an `on_delta` callback to end the reply where it is: the model stops reading
    (closing the stream, so a local server stops generating) and returns the text so far, with
    `finish_reason` "cut" and `cut` = the reason given. The agent uses it when a text action is
    complete, and when a reply has started to repeat itself over and over."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


@runtime_checkable
class Model(Protocol):
    name: str

    def query(self, messages: list[dict], tools: list[dict], on_delta: OnDelta | None = None, *,
              on_retry: OnRetry | None = None, cancel: threading.Event | None = None,
              response_format: dict | None = None) -> ModelReply:
        """Ask the model for its next message. Blocks (seconds): call it off the UI thread.

        `response_format` (OpenAI's field: a JSON schema the reply must follow) holds the reply
        to the form of a JSON action (agent/text_actions.py); a model that cannot take it may
        ignore it, and a provider that refuses it raises ModelError (bad_request).

        `cancel` is looked at between streamed chunks and during retry waits (a request still
        waiting for its first byte runs to its timeout). `on_delta` may raise `ReplyCut`: the
        reply ends there (see ReplyCut). Any other exception raised by `on_delta` or `on_retry`
        reaches the caller as it is, never retried.
        """
        ...

    def count_tokens(self, messages: list[dict], tools: list[dict] | None = None) -> int:
        """Tokens these messages take in this model's prompt (an estimate where no tokenizer)."""
        ...

    def context_window(self) -> int | None:
        """The model's input limit in tokens, None when unknown. May load litellm: not on the UI thread."""
        ...

    def warm_up(self) -> None:
        """Do the slow one-off loading now (from a background thread) rather than at the first query."""
        ...


def parse_arguments(raw: str | None) -> tuple[dict | None, str | None]:
    """(arguments, None) or (None, what is wrong): a model's JSON is untrusted input."""
    if raw is None or not raw.strip():
        return {}, None  # a call to a tool without parameters often comes with no arguments at all
    try:
        value = json.loads(raw)
    except ValueError as exc:
        shown = raw if len(raw) <= 200 else raw[:200] + "…"
        return None, f"the arguments are not valid JSON ({exc}): {shown}"
    if not isinstance(value, dict):
        return None, f"the arguments must be a JSON object, not {type(value).__name__}: {raw[:200]}"
    return value, None


def make_tool_call(call_id: str, name: str, raw_arguments: str | None) -> ToolCall:
    raw = raw_arguments or ""
    arguments, error = parse_arguments(raw)
    if not name:
        arguments, error = None, "the tool call has no tool name"
    return ToolCall(id=call_id, name=name, arguments=arguments, raw_arguments=raw, error=error)


def assistant_message(text: str, tool_calls: list[ToolCall]) -> dict:
    """The history entry for a reply, with the model's arguments verbatim (malformed ones too,
    so the history and the session file show what the model really said)."""
    message: dict = {"role": "assistant", "content": text if text or not tool_calls else None}
    if tool_calls:  # an empty tool_calls list is rejected by OpenAI-style APIs
        message["tool_calls"] = [{"id": c.id, "type": "function",
                                  "function": {"name": c.name, "arguments": c.raw_arguments}}
                                 for c in tool_calls]
    return message


def estimate_tokens(messages: list[dict], tools: list[dict] | None = None) -> int:
    """About four characters a token: a cheap count for trimming when no tokenizer is at hand."""
    chars = len(json.dumps(messages, ensure_ascii=False, default=str))
    if tools:
        chars += len(json.dumps(tools, ensure_ascii=False, default=str))
    return math.ceil(chars / 4)


def estimate_text_tokens(text: str) -> int:
    return math.ceil(len(text) / 4)


@dataclass
class _Pending:
    """A tool call being assembled from streamed pieces."""

    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)


class ToolCallAssembler:
    """Joins streamed tool-call pieces into whole calls, by their index in the reply.

    Providers send a call's id and name once, then its arguments in pieces; parallel calls are
    told apart by index (some servers omit it and send one call per chunk: then the id, or else
    the last call, decides). Calls missing an id get one, so every call can get its result.
    """

    def __init__(self):
        self._calls: dict[int, _Pending] = {}
        self._last: int | None = None

    def add(self, index: int | None, call_id: str | None, name: str | None, arguments: str | None) -> None:
        if index is None:
            index = next((i for i, c in self._calls.items() if call_id and c.id == call_id), None)
            if index is None:
                index = len(self._calls) if call_id or self._last is None else self._last
        pending = self._calls.setdefault(index, _Pending())
        self._last = index
        if call_id and not pending.id:
            pending.id = call_id
        if name and not pending.name:
            pending.name = name
        if arguments:
            pending.arguments.append(arguments)

    def calls(self) -> list[ToolCall]:
        prefix = f"call_{uuid.uuid4().hex[:8]}"  # unique across the conversation, not just the reply
        return [make_tool_call(c.id or f"{prefix}_{n}", c.name, "".join(c.arguments))
                for n, (_, c) in enumerate(sorted(self._calls.items()))]
