"""eval: run the test suite in the sandbox (outside pdb).

With a task's hidden tests (`dgym-tui batch --tests eval`, as debug-gym's `swebench` environment
runs its eval), each run has them applied for that run only and taken away after it: the agent
reads the failing tests' output, while pdb, the workspace and the agent's patch never hold them
(core/hidden_tests.py)."""

from __future__ import annotations

from dgym_tui.tools.base import Tool, ToolOutput

OUTPUT_TAIL = 8000  # characters of the test run's output the model reads (the failures are at the end)


class EvalTool(Tool):
    name = "eval"
    description = ("Run the repository's tests and report what passes and fails; a test that runs "
                   "past its time limit fails, with the line where it was.")
    guidance = "run the tests with eval to check a change;"
    brief = "run eval to check the tests"
    order = 80
    parameters: dict = {}

    def __init__(self, hidden=None):
        self.hidden = hidden  # core/hidden_tests.HiddenTests: applied for each run only (--tests eval)

    @classmethod
    def with_hidden_tests(cls, hidden) -> EvalTool:
        """An eval that runs with the task's hidden tests applied for each run, then reverted."""
        tool = cls(hidden)
        tool.description = ("Run the repository's tests, with the task's own tests (hidden from the files "
                            "you see) added for this run only, and report what passes and fails; a test that "
                            "runs past its time limit fails, with the line where it was.")
        return tool

    def run(self, session, actor: str) -> ToolOutput:
        note = ""
        hidden = self.hidden
        if hidden:
            problem = hidden.problem(session.sandbox)
            if problem is None:
                note = (f"The task's own tests (in {', '.join(hidden.paths)}) were applied for this run only, then "
                        "taken away: the files you see and your change do not hold them.\n")
            else:
                note = (f"The task's tests ({', '.join(hidden.paths)}) do not apply over your changes "
                        f"({problem}): the tests ran without them.\n")
                hidden = None
        tests = session.run_tests(actor=actor, hidden=hidden)
        return ToolOutput(note + report(tests, runner_of(session)), ok=tests.ok)


def runner_of(session) -> str:
    """What runs the session's tests: the environment's own command (Django's runtests.py,
    sympy's bin/test), else pytest."""
    found = getattr(session, "environment", None)
    if found is not None and (found.test_command or found.harness_command):
        return found.runner()
    return "pytest"


def summary(tests) -> str:
    """The counts, or that no test ran (Tests.summary says which)."""
    return tests.summary()


def report(tests, runner: str = "pytest") -> str:
    text = f"Tests: {summary(tests)}"
    if tests.failing:
        text += "\nFailing:\n" + "\n".join(f"- {t}" for t in tests.failing[:50])
    output = tests.output.strip()
    if len(output) > OUTPUT_TAIL:
        output = f"[... {len(output) - OUTPUT_TAIL} characters of output before this ...]\n" + output[-OUTPUT_TAIL:]
    heading = "pytest's output" if runner == "pytest" else (f"the tests' output ({runner})" if runner
                                                            else "the tests' output")
    return text + f"\n\n{heading}:\n" + output + "\n"
