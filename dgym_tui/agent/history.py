"""The conversation as sent: old tool observations trimmed to fit the model's context window.

Never trimmed: the system prompt, the task, anything the person said (only tool observations
are), and the newest observation. The oldest go first; the newest few (KEEP_RECENT) only when
the old ones are not enough.
"""

from __future__ import annotations

from collections.abc import Callable

TRIMMED = "[this old observation was trimmed to keep the conversation within the model's context window]"
KEEP_RECENT = 4             # the newest tool observations are trimmed last
BUDGET = 0.8                # of the window: the rest is the reply's


def fit_to_window(messages: list[dict], origins: list[str], window: int | None,
                  count_tokens: Callable[[list[dict]], int]) -> tuple[list[dict], list[int]]:
    """(the messages to send, the indices trimmed to make them fit)."""
    messages = list(messages)
    if not window:
        return messages, []
    budget = int(window * BUDGET)
    tools = [i for i, origin in enumerate(origins) if origin == "tool"]
    candidates = tools[:-KEEP_RECENT] + tools[-KEEP_RECENT:-1] if len(tools) > 1 else []
    trimmed: list[int] = []
    while candidates and count_tokens(messages) > budget:
        i = candidates.pop(0)
        if messages[i].get("content") != TRIMMED:
            messages[i] = {**messages[i], "content": TRIMMED}
            trimmed.append(i)
    return messages, trimmed
