"""One small request that tells whether a model makes native tool calls.

Small models behind a server of one's own rarely do (the server parses a call only when the chat
template marks it the way the model writes it). Finding out with the agent's first real step
costs a whole step: a prompt of thousands of tokens and a long prose answer, half a minute or
more on a laptop. This asks a one-line question with one tool instead, and stops reading once
the answer is plainly prose. `dgym-tui doctor --model` and the agent's auto format both use it.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

from dgym_tui.agent.model import ModelError, ReplyCut

PROBE_TASK = "Use the tool `view` to show the file main.py. Call the tool now; do not explain."
PROSE_LIMIT = 600  # characters of text with no call yet: the model is writing, not calling


@dataclass
class Probe:
    native: bool | None      # True: a native call came back; False: none; None: tools refused
    said: str                # what the model wrote instead (one line), or the refusal
    tokens: int = 0


_answers: dict[tuple, Probe] = {}   # (model, server) -> its answer: one probe per process
_answers_lock = threading.Lock()


def probe_once(model, cancel: threading.Event | None = None) -> tuple[Probe, bool]:
    """probe_native, asked once per model and server in this process (a batch's worker runs
    trial after trial on one server: a probe before each would cost a request, and on a server
    with one slot, the cached prompt of the trial before). Returns (the answer, whether it was
    known already)."""
    key = (getattr(model, "name", ""), getattr(model, "api_base", None))
    with _answers_lock:
        known = _answers.get(key)
    if known is not None:
        return known, True
    found = probe_native(model, cancel=cancel)
    with _answers_lock:
        _answers[key] = found
    return found, False


def refuses_tools(e: ModelError) -> bool:
    """A provider that does not take `tools` at all (not a failure of one request)."""
    return e.kind == "bad_request" and "tool" in str(e).lower()


def probe_native(model, cancel: threading.Event | None = None) -> Probe:
    """Ask `model` for one call of `view` with the tool offered natively. A ModelError other than
    a refusal of tools is raised (the caller decides what a dead provider means)."""
    from dgym_tui.tools import registry

    schema = registry()["view"].schema()
    written: list[str] = []

    def on_delta(text: str) -> None:
        written.append(text)
        if sum(map(len, written)) > PROSE_LIMIT:
            raise ReplyCut("prose")

    try:
        reply = model.query([{"role": "user", "content": PROBE_TASK}], [schema], on_delta=on_delta, cancel=cancel)
    except ModelError as e:
        if refuses_tools(e):
            return Probe(None, f"the provider refused tools ({e})")
        raise
    if any(c.error is None for c in reply.tool_calls):  # whatever it called: native calls come back
        return Probe(True, "", reply.usage.total_tokens)
    return Probe(False, " ".join(reply.text.split())[:60], reply.usage.total_tokens)
