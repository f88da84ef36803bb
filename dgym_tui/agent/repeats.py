"""A model going round in circles: the same reply, the same failing call, or the same call
getting the same result, within the last few steps.

Two things come of it: a call that got exactly what an earlier one got is answered with a note
saying so (the model learns nothing new from it), and a model that does the same thing
REPEATS_STUCK times is judged stuck (the loop then stops or pauses it: agent/loop.py).
"""

from __future__ import annotations

import json
import re

REPEATS_STUCK = 3           # the same reply (or call with the same result) this often within
REPEAT_WINDOW = 6           # ... this many steps: stuck (a model may go round a cycle of two calls)
SAME_RESULT = ("(the same call and result as at step {step}: calling it again tells you nothing new; "
               "try another action)")
# pdb commands that move the program on
MOVES = {"c", "cont", "continue", "n", "next", "s", "step", "r", "return", "unt", "until", "j", "jump",
         "restart", "run", "back"}


class RepeatGuard:
    """What the last steps did, to spot a repeat. `done` is what a step's calls did: (ok, name,
    raw arguments, observation) each."""

    def __init__(self) -> None:
        self._steps: list = []     # a key per step, for the stuck check
        self._results: list = []   # (step, name, raw arguments, observation) of the recent calls

    def note_result(self, step: int, name: str, raw_arguments: str, observation: str) -> str:
        """The observation to give the model: with a note when the same call got the same result
        at an earlier step (a pdb command that moves the program on never counts)."""
        if _moves(name, raw_arguments, observation):
            return observation
        again = (name, raw_arguments, _same(observation))
        earlier = next((at for at, *seen in reversed(self._results) if tuple(seen) == again), None)
        self._results = [*self._results, (step, *again)][-REPEAT_WINDOW:]
        if earlier is None:
            return observation
        return f"{observation}\n{SAME_RESULT.format(step=earlier)}"

    def stuck(self, step: int, reply_text: str, done: list, native: bool) -> str:
        """Why the model is stuck after this step, or "" (native: tool calls are the provider's)."""
        failed = tuple((name, raw, _same(seen)[:200]) for ok, name, raw, seen in done if not ok)
        # a call is judged by the call and what it got back, whatever the words around it
        if failed:
            key, what = ("failed", failed), "the same failing call"
        elif done and not any(_moves(name, raw, seen) for _ok, name, raw, seen in done):
            key, what = ("same", tuple((name, raw, _same(seen)) for _ok, name, raw, seen in done)), \
                "the same call and result"
        elif done:  # `c` to the same breakpoint again: the program moved on
            key, what = ("moved", step), ""
        else:
            key, what = ("text", " ".join(reply_text.split())), "the same reply"
        self._steps = [*self._steps, key][-REPEAT_WINDOW:]
        if self._steps.count(key) < REPEATS_STUCK:
            return ""
        shown = (done[0][1] if done else "") or " ".join(reply_text.split())[:40] or "(empty)"
        if done and done[0][2] not in ("", "{}"):
            shown = f"{shown} {done[0][2][:40]}"
        advice = ("it may not support tool calls: try --tool-format text" if native and not done
                  else "it may be too small for this task, or need a hint")
        return f"the model repeats itself ({what}): {shown!r} ×{REPEATS_STUCK} — {advice}"

    def forget(self) -> None:
        """After the model was judged stuck: the person's hint starts a new count."""
        self._steps = []


def _moves(tool: str, raw_arguments: str, observation: str) -> bool:
    """A pdb command that moves the program on: the same words may well get the same answer (a
    breakpoint in a loop) while the program's state has changed. Not so when it started the
    program again: the same answer then is the same run."""
    if tool != "pdb" or "Starting the program again" in observation:
        return False
    try:
        command = str(json.loads(raw_arguments or "{}").get("command", ""))
    except (ValueError, AttributeError):
        return False
    return (command.split() or [""])[0] in MOVES


def _same(observation: str) -> str:
    """An observation as compared with an earlier one: the objects' addresses aside."""
    return re.sub(r"0x[0-9a-fA-F]{4,}", "0x…", observation)
