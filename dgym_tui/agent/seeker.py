"""The seeker: a model whose only job is to find out, in the live session, what a fix needs
(breakpoints, values, the failing path), and to say what it saw. Another model writes the fix.

Two forms, as a batch arm or `--seeker` chooses:
- ask: the fixer has a `debug(question)` tool (tools/debug.py); each question is one seeker turn on
  the same live session, within a step budget, with a fresh conversation that is told what it
  answered before;
- report: the seeker investigates the task first, to a findings report, and the fixer starts with
  that report in its task (the "RAG-like" form); the fixer has no debug tool.

The seeker is an Agent (agent/loop.py) under the actor "agent:seeker", with the investigating tools
only (pdb, view, listdir, grep, eval: never edit) and `answer` to end its turn. It shares the
fixer's approval gate, so the person approves its calls where they approve the fixer's. Its answer
is checked against its own observations (agent/grounding.py) and recorded as a SeekerAnswer.

The person can be the seeker (`--seeker person`: for teaching, every question waits for their
answer), or take over a model seeker's turn mid-way (`take_over`): the question then waits for
them. Their answer is checked against what the session showed them.
"""

from __future__ import annotations

import threading
import time

from dgym_tui.agent.grounding import UNANSWERED, check
from dgym_tui.core import events as ev
from dgym_tui.core.events import SEEKER

SEEKER_TOOLS = ("pdb", "view", "listdir", "grep", "eval")
PERSON = "person"        # --seeker person: the person answers the agent's questions
FORMS = ("ask", "report")
DEFAULT_STEPS = 10       # a question's budget
TASK_CAP = 3000          # characters of the fixer's task the seeker is shown
EARLIER_CAP = 1500       # characters of each earlier answer it is reminded of

SEEKER_PROMPT = """\
You are the debugger of a team of two, in a Python repository whose code runs in a sandbox.
Another model writes the fix; it asks you questions about the running code. You never change
code: you investigate the live program and answer with what you saw.
{workflow}

Your answer is checked against what your tools printed: quote only values you saw.

Tools:
{tools}

This task's repository is "{repo}"; it runs in {sandbox}, as `{entrypoint}`.
"""

REPORT_QUESTION = ("Investigate this task for the model that will fix it: where the failure comes from "
                   "(file:line), the values that are wrong there and where they come from, and what a fix "
                   "must change. Do not fix it.")


class Seeker:
    """Answers questions on one session, one at a time, each within `max_steps`."""

    def __init__(self, session, model, *, tools: dict, policy=None, max_steps: int | None = DEFAULT_STEPS,
                 tool_format: str = "auto", context_window: int | None = None, task: str = "",
                 form: str = "ask", mode: str | None = None):
        if form not in FORMS:
            raise ValueError(f"unknown seeker form {form!r}: ask or report")
        self.session, self.model, self.policy = session, model, policy
        self.tools = {name: tool for name, tool in tools.items() if name in SEEKER_TOOLS}
        self.max_steps, self.tool_format, self.context_window = max_steps, tool_format, context_window
        self.task, self.form = task, form
        self.mode = mode            # its own approval mode (None: the agent's, read at each question)
        self.parent = None          # the fixer's Agent: its gate, mode, headless answers and stop
        self.answers: list[ev.SeekerAnswer] = []
        self._taken_over = threading.Event()
        self._turn = None           # the model's turn under way (an Agent)

    @property
    def by_person(self) -> bool:
        return self.model is None

    @property
    def at_work(self) -> bool:
        """A model's turn is under way (the person may take it over)."""
        return self._turn is not None

    def take_over(self) -> bool:
        """The person answers this question instead: the model's turn stops where it is."""
        turn = self._turn
        if turn is None:
            return False
        self._taken_over.set()
        turn.stop()
        return True

    def ask(self, question: str, call_id: str = "") -> ev.SeekerAnswer:
        if self.by_person:
            return self._from_person(question, call_id, time.monotonic())
        return self._from_model(question, call_id)

    def _from_model(self, question: str, call_id: str) -> ev.SeekerAnswer:
        from dgym_tui.agent.loop import Agent
        from dgym_tui.tools.debug import AnswerTool

        observations: list[str] = []
        commands: list[str] = []

        def listen(event) -> None:  # quick: the seeker's own calls and what they printed
            if event.actor != SEEKER:
                return
            if event.kind == "tool_result" and event.data.executed and event.data.tool != "answer":
                observations.append(event.data.observation)
            elif event.kind == "tool_call" and event.data.tool == "pdb" and event.data.verdict != "invalid":
                commands.append(str(event.data.args.get("command", "")))

        parent = self.parent
        agent = Agent(self.session, self.model, tools={**self.tools, "answer": AnswerTool()},
                      policy=self.policy, mode=self.mode or (parent.mode if parent else "auto"),
                      max_steps=self.max_steps,
                      task=self._task(question), system_template=SEEKER_PROMPT,
                      context_window=self.context_window,
                      auto_answer=parent.auto_answer if parent else (lambda request: _approve()),
                      on_model_error="stop", tool_format=self.tool_format, actor=SEEKER,
                      gate=parent.gate if parent else None, ends_at_limit=True)
        started = time.monotonic()
        unsubscribe = self.session.events.subscribe(listen, replay=False)
        if parent is not None:
            parent.children.append(agent)
        self._taken_over.clear()
        self._turn = agent
        try:
            agent.run()
        finally:
            self._turn = None
            unsubscribe()
            if parent is not None and agent in parent.children:
                parent.children.remove(agent)
        if self._taken_over.is_set():
            return self._from_person(question, call_id, started)
        answer = agent.submitted if agent.submitted not in (None, "(empty)") else ""
        grounding = check(answer, observations)
        found = ev.SeekerAnswer(
            call_id=call_id, question=question,
            answer=answer or _why_none(agent), grounding=grounding.status if answer else UNANSWERED,
            unseen=grounding.unseen, places=grounding.places, commands=[c for c in commands if c],
            values=grounding.values, model=self.model.name, steps=agent.step, tokens=agent.tokens,
            cost=agent.cost, seconds=round(time.monotonic() - started, 3))
        self.session.events.emit(found, SEEKER)
        self.answers.append(found)
        return found

    def _from_person(self, question: str, call_id: str, started: float) -> ev.SeekerAnswer:
        """The question waits for the person's answer (in the app's agent pane); headless, nobody
        is there: unanswered. Grounded against everything the session printed so far."""
        from dgym_tui.agent.approval import Answer

        parent = self.parent
        request = ev.ApprovalRequested(call_id=f"{call_id or 'report'}:person", tool="answer",
                                       args={"question": question, "text": ""},
                                       rule="the agent asks you: answer as its seeker")
        self.session.events.emit(request, SEEKER)
        auto = parent.auto_answer if parent is not None else None
        if auto is not None or parent is None:
            reply = Answer("skip", "nobody was there to answer")
        else:
            reply = parent.gate.wait(request.call_id, parent._stop_event)
        self.session.events.emit(ev.Decision(call_id=request.call_id, verdict=reply.verdict, comment=reply.comment,
                                             args=reply.args), ev.HUMAN if auto is None and parent else ev.SYSTEM)
        text = str((reply.args or {}).get("text") or "").strip() if reply.verdict in ("approve", "edit") else ""
        seen = [e.data.text if e.kind == "pdb_output" else e.data.observation for e in self.session.events.history
                if e.kind in ("pdb_output", "tool_result")]
        grounding = check(text, seen)
        found = ev.SeekerAnswer(
            call_id=call_id, question=question, answer=text or f"the person gave no answer ({reply.comment or reply.verdict})",
            grounding=grounding.status if text else UNANSWERED, unseen=grounding.unseen, places=grounding.places,
            values=grounding.values, by=PERSON, seconds=round(time.monotonic() - started, 3))
        self.session.events.emit(found, SEEKER)
        self.answers.append(found)
        return found

    def with_findings(self, task: str) -> str:
        """The report form: the task investigated before the fixer starts, and the fixer's task
        with the findings after its own."""
        return findings_task(task, self.ask(REPORT_QUESTION))

    def _task(self, question: str) -> str:
        parts = [f"Question from the model that writes the fix:\n{question}"]
        task = self.task or (self.parent.task_text if self.parent is not None else "")
        if task:
            parts.append(f"The task it works on:\n{_cut(task, TASK_CAP)}")
        if self.answers:
            earlier = "\n\n".join(f"Q: {a.question}\nA: {_cut(a.answer, EARLIER_CAP)}" for a in self.answers[-3:])
            parts.append(f"What you answered before (the code may have changed since):\n{earlier}")
        from dgym_tui.tools.debug import ANSWER_FORM

        parts.append(f"Investigate, then call answer in this form:\n{ANSWER_FORM}")
        return "\n\n".join(parts)


def findings_task(task: str, found: ev.SeekerAnswer) -> str:
    """The fixer's task in the report form: its own, then the seeker's findings."""
    from dgym_tui.tools.debug import for_the_fixer

    return f"{task}\n\nFindings of an investigation of this task in the debugger, made before you started:\n" \
           f"{for_the_fixer(found)}"


def _approve():
    from dgym_tui.agent.approval import Answer

    return Answer("approve")


def _why_none(agent) -> str:
    if agent.outcome == "limit":
        return f"it reached its budget ({agent.max_steps} steps) without answering"
    if agent.outcome == "error":
        return "its model failed"
    return f"it ended ({agent.outcome or 'stopped'}) without answering"


def _cut(text: str, cap: int) -> str:
    return text if len(text) <= cap else text[:cap] + " [...]"
