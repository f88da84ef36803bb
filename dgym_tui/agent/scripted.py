"""A model that follows a script: the same replies every run, for tests and for the demo.

It behaves like a real model where the agent loop can tell: it streams its text in small pieces,
makes tool calls (malformed ones too, when a test asks), counts tokens, and can react to what it
was told, so a scripted agent can propose a second edit after the person rejects the first. Its
name is always "scripted:<name>", so wherever a model name shows, nobody mistakes it for an LLM.

A script is a list of steps, one per query, each a dict (a JSON file holds the list, or
{"name": "...", "steps": [...]}):

    {"text": "Let me look.", "tool_calls": [{"name": "view", "arguments": {"path": "main.py"}}]}
    {"tool_calls": [{"name": "edit", "arguments": "{not json"}]}     arguments as a string: verbatim
    {"when": "not executed", "then": STEP, "else": STEP}

`when` is looked for (ignoring case) in what the model was told since its last reply — tool
results and user messages — so `{"when": "rejected", "then": ...}` fires after a rejection.
`{"with_tool": "pdb", "then": STEP, "else": STEP}` branches on whether that tool is offered, so
one script serves every arm of an ablation. A conditional with no matching branch is skipped and
the next step answers instead. In Python a
step may also be a function of the messages returning a step (or None to skip it). "comment" is
allowed anywhere as a note for the script's reader.

When the steps run out, the model submits: one reply "(end of script)" with a `submit` tool call
when a tool of that name is offered (a plain text reply otherwise); a query after that raises
ModelError(kind="script_over"), so a loop that does not stop is told why rather than spinning.
"""

from __future__ import annotations

import copy
import json
import re
import threading
import time
from collections.abc import Callable
from pathlib import Path

from dgym_tui.agent.model import (ModelCancelled, ModelError, ModelReply, OnDelta, OnRetry, ReplyCut, Usage,
                                  assistant_message, estimate_text_tokens, estimate_tokens, make_tool_call)

END_TEXT = "(end of script)"
_STEP_KEYS = {"text", "tool_calls", "when", "with_tool", "then", "else", "comment"}
_CALL_KEYS = {"name", "arguments", "id", "comment"}


class ScriptError(ValueError):
    """A script that cannot be followed; the message names the step and what is wrong."""


Step = dict | Callable[[list[dict]], "dict | None"]


class ScriptedModel:
    """`fake_price` = (input, output) USD per token gives made-up costs for a demo of the cost
    display; without it the cost is None, as for any model whose price is unknown. `own_server`
    plays a model on a server of one's own (auto switches it to JSON actions)."""

    own_server = False

    def __init__(self, steps: list[Step], name: str = "script", chunk_size: int = 8, chunk_delay: float = 0.0,
                 fake_price: tuple[float, float] | None = None, context_window: int | None = None):
        if not isinstance(steps, list):
            raise ScriptError(f"a script is a list of steps, not {type(steps).__name__}")
        self.name = f"scripted:{name}"
        self.steps = [_check(step, f"step {n}") for n, step in enumerate(steps, 1)]
        self.chunk_size = max(1, chunk_size)
        self.chunk_delay = chunk_delay
        self.fake_price = fake_price
        self._context_window = context_window
        self.requests: list[dict] = []  # {"messages", "tools"} of every query, as received
        self._position = 0
        self._ended = False

    @classmethod
    def from_file(cls, path: str | Path, **kwargs) -> ScriptedModel:
        """Load a JSON script; a bad file is a ScriptError naming the file, never a traceback."""
        path = Path(path)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except OSError as exc:
            raise ScriptError(f"cannot read the script {path}: {exc.strerror or exc}") from exc
        except ValueError as exc:
            raise ScriptError(f"the script {path} is not valid JSON: {exc}") from exc
        name = path.stem
        if isinstance(data, dict):
            unknown = set(data) - {"name", "steps", "comment"}
            if unknown or not isinstance(data.get("steps"), list):
                raise ScriptError(f"{path}: expected a list of steps or {{\"name\": ..., \"steps\": [...]}}")
            name, data = str(data.get("name") or name), data["steps"]
        try:
            return cls(data, name=kwargs.pop("name", name), **kwargs)
        except ScriptError as exc:
            raise ScriptError(f"{path}: {exc}") from None

    def skip(self, steps: int) -> None:
        """Go on from a later step (a resumed session whose agent had made `steps` queries)."""
        self._position = min(len(self.steps), self._position + max(0, steps))

    @property
    def remaining(self) -> int:
        return len(self.steps) - self._position

    def warm_up(self) -> None:
        pass

    def context_window(self) -> int | None:
        return self._context_window

    def count_tokens(self, messages: list[dict], tools: list[dict] | None = None) -> int:
        return estimate_tokens(messages, tools)

    def query(self, messages: list[dict], tools: list[dict], on_delta: OnDelta | None = None, *,
              on_retry: OnRetry | None = None, cancel: threading.Event | None = None,
              response_format: dict | None = None) -> ModelReply:
        request = {"messages": copy.deepcopy(messages), "tools": copy.deepcopy(tools)}
        if response_format is not None:
            request["response_format"] = copy.deepcopy(response_format)
        self.requests.append(request)
        step = self._next_step(messages, tools) or self._end(tools)
        text = step.get("text") or ""
        turn = len(self.requests)
        # the script's name in the id: a seeker's and a fixer's scripts in one session never share one
        tag = re.sub(r"[^A-Za-z0-9]+", "-", self.name.split(":", 1)[-1])[:24]
        calls = [make_tool_call(call.get("id") or f"call_{tag}_{turn}_{i}", call["name"], _raw(call.get("arguments", {})))
                 for i, call in enumerate(step.get("tool_calls") or [])]
        cut = ""
        for start in range(0, len(text), self.chunk_size):
            if cancel is not None and cancel.is_set():
                raise ModelCancelled()
            if on_delta is not None:
                try:
                    on_delta(text[start:start + self.chunk_size])
                except ReplyCut as stop:  # the rest of the script's text is never "generated"
                    text, cut = text[:start + self.chunk_size], stop.reason
                    break
            if self.chunk_delay:
                if cancel is not None:
                    cancel.wait(self.chunk_delay)
                else:
                    time.sleep(self.chunk_delay)
        if cancel is not None and cancel.is_set():
            raise ModelCancelled()
        produced = text + "".join(c.name + c.raw_arguments for c in calls)
        usage = Usage(estimate_tokens(messages, tools), estimate_text_tokens(produced), estimated=True)
        cost = None
        if self.fake_price is not None:
            cost = usage.prompt_tokens * self.fake_price[0] + usage.completion_tokens * self.fake_price[1]
        return ModelReply(text=text, tool_calls=calls, usage=usage, cost=cost, model=self.name,
                          message=assistant_message(text, calls),
                          finish_reason="cut" if cut else "tool_calls" if calls else "stop", cut=cut)

    def _next_step(self, messages: list[dict], tools: list[dict] | None = None) -> dict | None:
        while self._position < len(self.steps):
            self._position += 1
            step = self._resolve(self.steps[self._position - 1], messages, f"step {self._position}", tools)
            if step is not None:
                return step
        return None

    def _resolve(self, step: Step, messages: list[dict], where: str, tools: list[dict] | None = None) -> dict | None:
        if callable(step):
            result = step(copy.deepcopy(messages))
            return None if result is None else self._resolve(_check(result, where), messages, where, tools)
        if "when" in step or "with_tool" in step:
            if "when" in step:
                matched = step["when"].lower() in _told_since_last_reply(messages).lower()
            else:
                matched = step["with_tool"] in {(t.get("function") or {}).get("name") for t in tools or []}
            branch = step.get("then" if matched else "else")
            return None if branch is None else self._resolve(branch, messages, where, tools)
        return step

    def _end(self, tools: list[dict]) -> dict:
        if self._ended:
            raise ModelError(f"{self.name}: the script has no more steps (it already submitted)", kind="script_over")
        self._ended = True
        names = {(tool.get("function") or {}).get("name") for tool in tools or []}
        if "submit" in names:
            return {"text": END_TEXT, "tool_calls": [{"name": "submit", "arguments": {}}]}
        return {"text": END_TEXT}


def _raw(arguments) -> str:
    return arguments if isinstance(arguments, str) else json.dumps(arguments)


def _told_since_last_reply(messages: list[dict]) -> str:
    """The text of every message after the model's last reply: tool results, hints, comments."""
    told: list[str] = []
    for message in reversed(messages):
        if message.get("role") == "assistant":
            break
        content = message.get("content")
        if isinstance(content, list):  # OpenAI's multi-part content
            content = " ".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
        told.append(str(content or ""))
    return "\n".join(reversed(told))


def _check(step, where: str):
    """A step as the script meant it, or a ScriptError that says where it went wrong."""
    if callable(step):
        return step
    if not isinstance(step, dict):
        raise ScriptError(f"{where}: a step is an object, not {type(step).__name__}")
    unknown = set(step) - _STEP_KEYS
    if unknown:
        raise ScriptError(f"{where}: unknown key(s) {', '.join(sorted(unknown))} "
                          f"(a step has text, tool_calls, or when/then/else)")
    if "when" in step or "with_tool" in step:
        key = "when" if "when" in step else "with_tool"
        if "when" in step and "with_tool" in step:
            raise ScriptError(f"{where}: a step has 'when' or 'with_tool', not both")
        if not isinstance(step[key], str) or "then" not in step:
            raise ScriptError(f"{where}: '{key}' takes a string and needs a 'then' step")
        if "text" in step or "tool_calls" in step:
            raise ScriptError(f"{where}: a '{key}' step has only then/else, no text or tool_calls of its own")
        for branch in ("then", "else"):
            if branch in step:
                _check(step[branch], f"{where} ({branch})")
        return step
    if "then" in step or "else" in step:
        raise ScriptError(f"{where}: 'then'/'else' need a 'when' or 'with_tool'")
    if "text" not in step and "tool_calls" not in step:
        raise ScriptError(f"{where}: a step needs text, tool_calls or both")
    if "text" in step and not isinstance(step["text"], str):
        raise ScriptError(f"{where}: text must be a string")
    calls = step.get("tool_calls", [])
    if not isinstance(calls, list):
        raise ScriptError(f"{where}: tool_calls must be a list")
    for i, call in enumerate(calls):
        if not isinstance(call, dict) or not isinstance(call.get("name"), str) or not call["name"]:
            raise ScriptError(f"{where}: tool_calls[{i}] needs a name")
        unknown = set(call) - _CALL_KEYS
        if unknown:
            raise ScriptError(f"{where}: tool_calls[{i}]: unknown key(s) {', '.join(sorted(unknown))}")
        if not isinstance(call.get("arguments", {}), (dict, str)):
            raise ScriptError(f"{where}: tool_calls[{i}]: arguments must be an object (or a string, sent verbatim)")
    return step
