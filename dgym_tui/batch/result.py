"""A trial's result: result.json as one dataclass, written by the trial (and the driver's
corrections), read by the report, the live table and the review. docs/run-dir.md documents its
fields; a field is added, never renamed or removed, without bumping FORMAT. A result.json read
back keeps any field it does not know (`extra`), so a newer writer's fields survive a rewrite."""

from __future__ import annotations

import dataclasses
import hashlib
from dataclasses import dataclass, field
from datetime import datetime, timezone

FORMAT = 1
STATUSES = ("resolved", "unresolved", "limit", "no-reproduction", "error")
"""resolved / unresolved: scored in a fresh sandbox; limit: the agent hit --max-steps, --max-cost
or --trial-timeout before submitting (still scored: its patch may resolve the task; status says
limit only when it does not); no-reproduction: an open issue's patch holds no test that fails at
the base, so there is no evidence to score it by (counted apart); error: a failure of ours or the
provider's, never the agent's."""
SCORED = ("resolved", "unresolved", "limit")
EMPTY_SHA = hashlib.sha256(b"").hexdigest()


def now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


@dataclass
class TrialResult:
    trial: str = ""
    task: str = ""
    arm: str = ""
    attempt: int = 1
    status: str = "error"
    reason: str = ""
    outcome: str = "error"             # how the agent ended: submitted | limit | stopped | error | timeout
    summary: str | None = None
    tests_before: dict | None = None
    tests_after: dict | None = None
    fail_to_pass: dict = field(default_factory=dict)
    pass_to_pass: dict = field(default_factory=dict)
    reverted: list = field(default_factory=list)
    timed_out: list = field(default_factory=list)
    notes: list = field(default_factory=list)
    steps: int = 0
    tokens: int = 0
    cost: float | None = None
    seconds: float = 0.0
    agent_seconds: float = 0.0
    score_seconds: float = 0.0
    tool_calls: dict = field(default_factory=dict)
    unasked_runs: int = 0              # program runs under pdb no c/n/s/restart asked for (core/reruns.py): 0
    tool_format: str = "native"
    tests: str = "hidden"              # what the agent saw of the hidden tests: hidden | eval | visible (--tests)
    model: str = ""
    sandbox: str = ""
    node: str = ""
    started: str = ""
    finished: str | None = None
    patch_sha256: str = EMPTY_SHA
    error: str | None = None
    format: int = FORMAT
    # set by some writers only, left out of result.json while unset
    ray_node_id: str | None = None     # the Ray executor: the node's full id
    revision: int | None = None        # the review: a revision's number
    origin: str | None = None          # the review: edit | take-over | send-back
    issue: dict | None = None          # an open issue's task: its number, title, url
    reproduction: dict | None = None   # an issue's evidence: files, tests, before, after, reproduced, base_output
    roles: dict | None = None          # two roles (an arm's +seeker/+report): per role steps, tokens, cost, seconds; the seeker's answers
    extra: dict = field(default_factory=dict)  # fields this version does not know, kept as read

    OPTIONAL = ("ray_node_id", "revision", "origin", "issue", "reproduction", "roles")

    @classmethod
    def from_dict(cls, data: dict) -> TrialResult:
        known = {f.name for f in dataclasses.fields(cls)} - {"extra"}
        result = cls(**{k: v for k, v in data.items() if k in known})
        result.extra = {k: v for k, v in data.items() if k not in known}
        return result

    def to_dict(self) -> dict:
        """As result.json holds it: `format` first, the optional fields only when set."""
        data = {"format": self.format}
        for f in dataclasses.fields(self):
            if f.name in ("format", "extra") or (f.name in self.OPTIONAL and getattr(self, f.name) is None):
                continue
            data[f.name] = getattr(self, f.name)
        return {**data, **self.extra}

    def fail(self, message: str, error: str | None = None) -> TrialResult:
        """Status error, for a failure of ours or the provider's: the reason its first line."""
        self.status = "error"
        self.reason = message.splitlines()[0][:300] if message else "error"
        self.error = error if error is not None else message
        return self

    @property
    def scored(self) -> bool:
        return self.status in SCORED

    @property
    def resolved(self) -> bool:
        return self.status == "resolved"
