"""The Python API, for people who write their own agents, in the manner of debug-gym's
`env.reset()` / `env.step(action)`: open a task in a sandbox, call the tools, score, close.

    from dgym_tui.batch import TaskEnv, load_tasks

    task = load_tasks("path/to/tasks")[0]
    with TaskEnv(task, sandbox="docker") as env:
        text = env.reset()                         # the task, as an agent reads it
        out = env.step("pdb", command="b calc.py:2")
        out = env.step("edit", path="calc.py", start=2, end=2, new_code="    return a + b")
        score = env.score()                        # in a fresh sandbox, hidden tests added
        print(score.resolved, score.reason)

The same objects as the batch: the trial's session (its own sandbox, the hidden tests never in
it), Session.run_tool for every call (as actor "agent": recorded, replayable), scoring.py for the
score. Nothing here asks for approval: the caller is the agent and its own judge.

`TaskEnv(task, tests="eval")` or `tests="visible"` shows the task's hidden tests as
`dgym-tui batch --tests` does (batch/test_modes.py): in eval's runs only, or in the repository from
the start (then pdb's first run stops at the failing test). ValueError for a task with none.

`TaskEnv(task, tools=["view", "edit", "eval"], seeker="openai/qwen-0.5b", seeker_api_base=URL)`
puts a seeker (agent/seeker.py) beside the caller's own agent: `env.step("debug", question=...)`
(or `env.ask(question)`, which gives the whole SeekerAnswer) has a model investigate with pdb on
the same sandbox and answer with the places, commands and values it saw, checked against them.
"""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from dgym_tui.batch.scoring import Score, score_patch
from dgym_tui.batch.spec import Task
from dgym_tui.batch.trial import arm_tools, open_session, prepare_repo, task_text

ACTOR = "agent"


@dataclass
class Step:
    """What one tool call gave back: the observation (as a model reads it), whether the call
    went well, and done once `submit` was called."""

    observation: str
    ok: bool = True
    done: bool = False


class TaskEnv:
    """One task in a sandbox of its own. tools: the tool names to allow (default: every tool).
    session_file: where to record the session (JSON lines; `dgym-tui replay` reads it)."""

    def __init__(self, task: Task, sandbox: str = "auto", image: str | None = None,
                 tools: list[str] | None = None, session_file: str | None = None, tests: str = "hidden",
                 seeker: str | None = None, seeker_api_base: str | None = None, seeker_steps: int | None = 10,
                 seeker_model=None):
        from dgym_tui.batch.test_modes import mode_problem

        problem = mode_problem(task, tests)
        if problem:
            raise ValueError(problem)
        self.task, self.tests = task, tests
        self.sandbox, self.image = sandbox, image
        self._tools = arm_tools(tools or [])
        # a seeker: its model string (or a model object, for tests), and its tools beside the caller's
        self.seeker_name, self.seeker_api_base, self.seeker_steps = seeker, seeker_api_base, seeker_steps
        self._seeker_model = seeker_model
        self.seeker = None
        self._seeker_tools: dict = {}
        if seeker or seeker_model is not None:
            from dgym_tui.agent.seeker import SEEKER_TOOLS

            self._seeker_tools = {n: t for n, t in arm_tools(list(SEEKER_TOOLS)).items() if n in SEEKER_TOOLS}
        self.session_file = session_file
        self.session = None
        self.done = False
        self.submitted: str | None = None
        self._tmp: Path | None = None
        self._repo: Path | None = None
        self._base: Path | None = None  # the pristine base scoring starts from
        self._writer = None

    # --- the loop -------------------------------------------------------------------------------

    def reset(self) -> str:
        """A fresh sandbox at the task's base (a running one is closed first); returns the task's
        text: its problem statement, else made from its failing tests."""
        self.close()
        self._tmp = Path(tempfile.mkdtemp(prefix="dgym-env-"))
        self._repo = prepare_repo(self.task, self._tmp, tests=self.tests)
        self._base = prepare_repo(self.task, self._tmp / "base") if self.tests == "visible" else self._repo
        self.session = open_session(self.task, self._repo, sandbox=self.sandbox, image=self.image,
                                    tools={**self._seeker_tools, **self._tools}, tests=self.tests)
        if self._seeker_tools:
            self._start_seeker()
        if self.session_file:
            from dgym_tui.core.session_file import SessionWriter

            self._writer = SessionWriter.open(self.session_file, self.session, mode="auto", model="python-api")
        self.done, self.submitted = False, None
        return task_text(self.session, self.task)

    def _start_seeker(self) -> None:
        from dgym_tui.agent.seeker import Seeker
        from dgym_tui.agent.setup import make_model
        from dgym_tui.config import AgentSettings
        from dgym_tui.tools.debug import DebugTool

        model = self._seeker_model or make_model(AgentSettings(model=self.seeker_name, api_base=self.seeker_api_base))
        tools = dict(self._seeker_tools)
        tools["eval"] = self.session.tools.get("eval", tools["eval"])  # as this tests mode made it
        self.seeker = Seeker(self.session, model, tools=tools, max_steps=self.seeker_steps,
                             task=task_text(self.session, self.task))
        self._tools = {**self._tools, "debug": DebugTool(self.seeker)}

    def ask(self, question: str):
        """The seeker's answer to a question (a SeekerAnswer: answer, grounding, places, commands,
        values, steps, tokens, cost). RuntimeError without a seeker."""
        self._live()
        if self.seeker is None:
            raise RuntimeError("this TaskEnv has no seeker: give TaskEnv(..., seeker=MODEL)")
        return self.seeker.ask(question)

    def step(self, tool: str, **args) -> Step:
        """Call one tool with its arguments (as a model would: `env.step("view", path="a.py")`)."""
        session = self._live()
        if tool == "debug" and self.seeker is not None:
            from dgym_tui.tools.debug import for_the_fixer

            problem = self._tools["debug"].check(args)
            if problem:
                return Step(f"error: {problem}", ok=False, done=self.done)
            found = self.seeker.ask(str(args["question"]))
            return Step(for_the_fixer(found), ok=found.grounding != "unanswered", done=self.done)
        if tool not in self._tools:
            return Step(f"error: the tool {tool!r} is not allowed here (tools: {', '.join(sorted(self._tools))})",
                        ok=False, done=self.done)
        output = session.run_tool(tool, args, actor=ACTOR)
        if output.submitted is not None:
            self.done, self.submitted = True, output.submitted
        return Step(output.observation, ok=output.ok, done=self.done)

    def score(self) -> Score:
        """The change so far, scored as a batch scores it: in a fresh sandbox at the base, test
        files reverted, the hidden tests added. The env's own sandbox is left as it is."""
        ready = self._live().state.sandbox
        return score_patch(self.task, self.patch(), str(self._base), sandbox=ready.backend,
                           image=ready.image or self.image, python=ready.python)

    def patch(self) -> str:
        """The change against the task's base (git diff, new files included); in visible mode
        without the task's test files (scoring adds them as they are)."""
        patch = self._live().diff()
        if self.tests == "visible":
            from dgym_tui.batch.test_modes import without_tests

            patch, _cut = without_tests(self.task, patch)
        return patch

    @property
    def tools(self) -> list[dict]:
        """The allowed tools' JSON schemas, as a model is given them."""
        return [self._tools[name].schema() for name in sorted(self._tools)]

    def close(self) -> None:
        """Remove the sandbox and the temp folder (safe twice)."""
        if self.session is not None:
            self.session.close()
            self.session = None
        if self._writer is not None:
            self._writer.close()
            self._writer = None
        if self._tmp is not None:
            shutil.rmtree(self._tmp, ignore_errors=True)
            self._tmp = None

    def _live(self):
        if self.session is None:
            raise RuntimeError("call reset() first: the task has no sandbox yet")
        return self.session

    def __enter__(self) -> TaskEnv:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
