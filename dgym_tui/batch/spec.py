"""The contract between the batch's parts: what a trial is given, what it gives back, and what
an executor must do. Plain data (JSON-able dicts at the edges), so a spec and an outcome cross
a process or a Ray node as they are.

    TaskSet (tasks.py) ─> Task ─┐
    arms × attempts ────────────┴─> TrialSpec ─> Executor ─> run_trial(spec) ─> TrialOutcome
                                                                              └─> driver writes RUN_DIR
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import asdict, dataclass, field
from typing import Protocol

from dgym_tui.batch.result import STATUSES  # noqa: F401  (re-exported: the statuses, with what each means)


@dataclass
class Task:
    """One task, as every task-set format reads into. `repo` is a local folder (a git checkout
    at `base_commit` when given, else the folder as it is)."""

    id: str                                   # unique in its set; file-name safe
    repo: str                                 # absolute path of a local folder or git repo
    base_commit: str | None = None            # SWE-bench: check this commit out first
    problem: str | None = None                # the agent's task (None: made from the failing tests)
    entrypoint: str | None = None             # what runs under pdb (None: detected as `dgym-tui REPO` does)
    fail_to_pass: list[str] = field(default_factory=list)  # tests that must pass after the fix
    pass_to_pass: list[str] = field(default_factory=list)  # tests that must keep passing
    test_patch: str | None = None             # hidden from the agent; applied only when scoring
    hidden_files: dict[str, str] = field(default_factory=dict)  # path -> text, hidden likewise
    test_files: list[str] = field(default_factory=list)     # files whose agent edits are reverted before scoring
    setup: str | None = None                  # a shell command run in the sandbox before the agent
    time_limit: float | None = None           # seconds (task.toml), overrides --trial-timeout
    test_timeout: float | None = None         # seconds per test (task.toml; else --test-timeout; else the default)
    environment: dict | None = None           # a SWE-bench instance's own image, folder, commands (batch/swebench.py)
    note: str | None = None                   # what the reading had to say of it (one line), e.g. why no image
    issue: dict | None = None                 # an open issue (batch/issues.py): number, title, url; scored by its evidence
    source: str = ""                          # where it was read from (folder, line of a JSONL)

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> Task:
        return cls(**d)


@dataclass
class Arm:
    """One configuration compared in a batch: a name, the tools the agent gets, and when: a tool
    in `unlock` is given only once the agent has made that many successful edits."""

    name: str
    tools: list[str]                          # tool names from the registry (all of them by default)
    unlock: dict[str, int] = field(default_factory=dict)  # tool -> edits before it is given
    # Two roles (agent/seeker.py): {"form": "ask" | "report", "model": M or None (the batch's
    # --seeker)}; the arm's tools are then the fixer's. None: one model does everything.
    seeker: dict | None = None

    def to_dict(self) -> dict:
        """As batch.json has it (no `unlock` or `seeker` key when unset, as before them)."""
        data = {"name": self.name, "tools": list(self.tools)}
        if self.unlock:
            data["unlock"] = dict(self.unlock)
        if self.seeker:
            data["seeker"] = dict(self.seeker)
        return data

    def label(self) -> str:
        """The arm as --arm takes it: `view,edit,pdb@5`, `view,edit,eval+seeker`."""
        tools = ",".join(f"{t}@{self.unlock[t]}" if t in self.unlock else t for t in self.tools)
        if self.seeker:
            role = "seeker" if self.seeker.get("form", "ask") == "ask" else "report"
            tools += f"+{role}" + (f"={self.seeker['model']}" if self.seeker.get("model") else "")
        return tools


@dataclass
class TrialSpec:
    """Everything one trial needs, and nothing else: a trial is a function of its spec."""

    task: Task
    arm: Arm
    attempt: int                              # 1-based
    model: str                                # a litellm model string, or scripted:FILE
    api_base: str | None = None
    tool_format: str | None = None            # native | json | text | auto (None: the default)
    max_steps: int | None = 30
    max_cost: float | None = None
    timeout: float | None = None              # wall-clock seconds; enforced by killing the sandbox
    sandbox: str = "auto"                     # auto | docker | bwrap | local
    image: str | None = None
    yes: bool = False                         # approve what the policy asks about (as `run --yes`)
    tests: str = "hidden"                     # what the agent sees of the hidden tests: hidden | eval | visible (test_modes.py)
    seeker: str | None = None                 # the seeker's model for arms with one (their own wins)
    seeker_api_base: str | None = None
    seeker_steps: int | None = 10             # the seeker's budget per question
    repo_blob: bytes | None = None            # the task's repo as a tar, when it travels (Ray)
    env: dict[str, str] = field(default_factory=dict)  # for the agent's process only (API keys); never the sandbox

    @property
    def trial_id(self) -> str:
        return f"{self.task.id}__{self.arm.name}__{self.attempt}"


@dataclass
class TrialOutcome:
    """What a trial returns to the driver: the result (result.json's content) and the files the
    driver writes beside it. The trial writes nothing where the driver could see it."""

    result: dict                              # result.TrialResult.to_dict(): docs/run-dir.md, "result.json"
    session: bytes = b""                      # the session file (JSON lines)
    patch: str = ""                           # the agent's change against the base (git diff)


class ScoringError(Exception):
    """A failure of ours while scoring (the sandbox, git, pytest would not run): status error."""


@dataclass
class Score:
    resolved: bool
    reason: str
    tests_before: dict
    tests_after: dict
    fail_to_pass: dict
    pass_to_pass: dict
    reverted: list[str]
    score_seconds: float = 0.0
    applied: bool = True            # the agent's patch applied
    timed_out: list = field(default_factory=list)  # {test, seconds, where}: stopped at their limit, with the patch
    reproduction: dict | None = None  # an issue's evidence (batch/issues.py): its tests, before and after

    def to_dict(self) -> dict:
        return asdict(self)


class Executor(Protocol):
    """Runs trials, each a call of `run_trial(spec)` somewhere; yields (spec, outcome) as they
    finish. An exception inside a trial becomes an outcome with status "error", never a raise.
    `cancel()` stops what runs (sandboxes removed) and what waits.

    `specs` is consumed lazily: an executor takes the next spec only when it can start it, so a
    driver that stops yielding (the batch's total cost reached) starts nothing more.
    `on_event(trial_id, data)`: {"kind": "started", "node": ...} when a trial starts, then what
    the trial itself reports, when run_trial takes an `on_event(data)` keyword
    ({"step": n, "cost": usd, "state": ...}); called on the thread that iterates run()."""

    def run(self, specs: Iterable[TrialSpec], on_event: Callable[[str, dict], None] | None = None
            ) -> Iterator[tuple[TrialSpec, TrialOutcome]]: ...

    def cancel(self) -> None: ...
