"""debug: the agent that writes the fix asks the seeker (agent/seeker.py) a question, and reads
its answer; answer: how the seeker ends its turn.

Neither is in the registry: they exist only where a seeker does (`--seeker MODEL`, a batch arm's
`seeker=`). Both run on the asking agent's own thread (`on_caller_thread`), never on the
session's: the seeker's own calls go through the session one by one, the person's in between.
"""

from __future__ import annotations

from dgym_tui.tools.base import Tool, ToolOutput

ANSWER_FORM = """\
Looked: the places you looked at, as file:line
Ran: the pdb commands you ran
Saw: the values you saw, each as `expression = value`, copied exactly as the tools printed them
Answer: the answer to the question, in a few sentences"""


class DebugTool(Tool):
    name = "debug"
    description = ("Ask the debugger a question about the running code: a second model that investigates "
                   "the live program for you with pdb, view, grep and eval, and never edits. Ask one "
                   "precise question (what a variable holds at a line, which path a failing test takes, "
                   "where a wrong value comes from). Its answer says where it looked (file:line), what it "
                   "ran and the values it saw.")
    parameters = {"question": {"type": "string", "description": "One precise question about the running code."}}
    required = ("question",)
    on_caller_thread = True
    guidance = ("before you edit, ask `debug` what you need to know about the running code (values at a "
                "line, the path a failing test takes); trust the values it quotes only when it says it saw them.")
    brief = "ask debug(question) what the code does at run time"
    order = 15

    def __init__(self, seeker=None):
        self.seeker = seeker

    def run(self, session, actor: str, question: str, call_id: str = "") -> ToolOutput:
        found = self.seeker.ask(question, call_id=call_id)
        return ToolOutput(for_the_fixer(found), ok=found.grounding != "unanswered")


class AnswerTool(Tool):
    name = "answer"
    description = "Give your answer to the question, once, in this form:\n" + ANSWER_FORM
    parameters = {"text": {"type": "string", "description": "Your answer, in the form above."}}
    required = ("text",)
    on_caller_thread = True
    guidance = "when you know, call answer once, in the form it describes; quote only values a tool printed."
    brief = "then answer, quoting only values you saw"
    order = 90

    def run(self, session, actor: str, text: str, call_id: str = "") -> ToolOutput:
        return ToolOutput("Your answer was passed on.", submitted=text.strip() or "(empty)")


def for_the_fixer(found) -> str:
    """A SeekerAnswer as the fixer reads it: the answer, then how it stands."""
    who = "the person" if found.by == "person" else f"the debugger ({found.model}, {found.steps} steps)"
    if found.grounding == "unanswered":
        return f"No answer from {who}: {found.answer or 'it gave none within its budget'}."
    verdict = {
        "grounded": "Grounded: every value it quotes was printed by its tools.",
        "no values": "It quotes no value.",
        "ungrounded": ("NOT grounded: it quotes " + ", ".join(found.unseen) + ", which its tools never "
                       "printed. Check those before you rely on them."),
    }[found.grounding]
    return f"Answer from {who}:\n{found.answer}\n\n[{verdict}]"
