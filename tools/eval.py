"""eval: run the test suite in the sandbox (outside pdb)."""

from __future__ import annotations

from dgym_tui.tools.base import Tool, ToolOutput

OUTPUT_TAIL = 8000  # characters of pytest's output the model reads (the failures are at the end)


class EvalTool(Tool):
    name = "eval"
    description = ("Run the repository's tests (pytest) and report what passes and fails; a test that runs "
                   "past its time limit fails, with the line where it was.")
    guidance = "run the tests with eval to check a change;"
    brief = "run eval to check the tests"
    order = 80
    parameters: dict = {}

    def run(self, session, actor: str) -> ToolOutput:
        tests = session.run_tests(actor=actor)
        return ToolOutput(report(tests), ok=tests.ok)


def summary(tests) -> str:
    """The counts, or that no test ran (Tests.summary says which)."""
    return tests.summary()


def report(tests) -> str:
    text = f"Tests: {summary(tests)}"
    if tests.failing:
        text += "\nFailing:\n" + "\n".join(f"- {t}" for t in tests.failing[:50])
    output = tests.output.strip()
    if len(output) > OUTPUT_TAIL:
        output = f"[... {len(output) - OUTPUT_TAIL} characters of output before this ...]\n" + output[-OUTPUT_TAIL:]
    return text + "\n\npytest's output:\n" + output + "\n"
