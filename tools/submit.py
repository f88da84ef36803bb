"""submit: the agent says it is done; the tests run once more for the record."""

from __future__ import annotations

from dgym_tui.tools.base import Tool, ToolOutput
from dgym_tui.tools.eval import report, runner_of


class SubmitTool(Tool):
    name = "submit"
    description = "Call once when the bug is fixed and the tests pass, with a one-line summary of the fix."
    guidance = "when the tests pass and you are done, call submit with a one-line summary."
    brief = "then submit with a one-line summary"
    order = 90
    parameters = {"message": {"type": ["string", "null"], "description": "What was wrong and what you changed."}}

    def run(self, session, actor: str, message: str | None = None) -> ToolOutput:
        tests = session.run_tests(actor=actor)
        head = f"Agent message: {message}\n\n" if message else ""
        return ToolOutput(head + report(tests, runner_of(session)), submitted=message or "")
