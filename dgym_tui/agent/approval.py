"""The approval gate: a call that waits for the person, and the answer it waits for.

The agent's thread waits here; the person answers from the UI thread (or a headless run answers
by rule), so it needs nothing of Textual. Verdicts: approve, always (approve, and allow such
calls for the rest of the session), edit (run it with the person's arguments), reject (with a
comment the model reads), try (apply it now, show what it does, decide after), skip (the agent
was stopped while it waited).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

VERDICTS = ("approve", "always", "edit", "reject", "try", "skip")


@dataclass(frozen=True)
class Answer:
    verdict: str
    comment: str = ""
    args: dict | None = None     # for edit
    pattern: str | None = None   # for always: allow only calls whose main argument matches
    by_rule: bool = False        # a rule answered where no person could (headless, no --yes): the comment says why

    def __post_init__(self):
        if self.verdict not in VERDICTS:
            raise ValueError(f"unknown verdict {self.verdict!r}: one of {', '.join(VERDICTS)}")


class ApprovalGate:
    def __init__(self):
        self._cond = threading.Condition()
        self._waiting: str | None = None
        self._answer: Answer | None = None

    @property
    def waiting(self) -> str | None:
        """The call id waiting for an answer, if any."""
        return self._waiting

    def wait(self, call_id: str, stop: threading.Event) -> Answer:
        """Block until the call is answered, or the agent is stopped (then: skip)."""
        with self._cond:
            self._waiting, self._answer = call_id, None
            try:
                while self._answer is None and not stop.is_set():
                    self._cond.wait()
                return self._answer or Answer("skip", "the agent was stopped")
            finally:
                self._waiting = None

    def answer(self, call_id: str, answer: Answer) -> bool:
        """Answer the waiting call; False if that call is not the one waiting (answered already,
        or never asked): a late or doubled key press changes nothing."""
        with self._cond:
            if self._waiting != call_id or self._answer is not None:
                return False
            self._answer = answer
            self._cond.notify_all()
            return True

    def wake(self) -> None:
        """Re-check the stop flag (the agent was stopped)."""
        with self._cond:
            self._cond.notify_all()


def headless_answers(yes: bool, what: str):
    """Answers for a run nobody watches (`what`: "this headless run", "this MCP server"): --yes
    approves what the policy asks about; otherwise it is refused, and the agent told why. The
    refusal names what refused it (the missing --yes), never a person: nobody was there."""

    def answer(request) -> Answer:
        if yes:
            return Answer("approve")
        return Answer("reject", refused_without_yes(what, request.rule), by_rule=True)

    return answer


def refused_without_yes(what: str, rule: str) -> str:
    """Why a call that asks was refused where nobody could be asked."""
    return (f"refused: {what} was started without --yes, and the policy asks before this call ({rule}); "
            "no person was there to approve it. Do it another way, or restart with --yes to allow such calls.")
