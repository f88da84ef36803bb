"""One tool call of an agent, from its request to its result: checked against the tool's
schema, decided by the policy (allow / ask / deny), and when it asks, waited on until the
person approves, edits, tries or rejects it (with a comment the agent reads); then run through
the session's runner. The built-in agent (loop.py) and an outside agent over MCP (mcp_server.py)
both go through it, so the same rules and the same approvals hold for either, and everything it
does is an event under the agent's actor ("agent", or "agent:NAME" for an outside one).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from typing import NamedTuple

from dgym_tui.agent.approval import Answer, ApprovalGate
from dgym_tui.agent.model import ToolCall
from dgym_tui.agent.policy import Policy
from dgym_tui.core import events as ev
from dgym_tui.core.events import AGENT, HUMAN, SYSTEM
from dgym_tui.tools.eval import summary
from dgym_tui.tools.registry import call_problem


class Handled(NamedTuple):
    """What the agent is told of one call, where it came from ("tool" | "person"), whether
    the tool reported an error, and whether it ran at all (refused, stopped, invalid: not)."""

    observation: str
    origin: str
    ok: bool = True
    executed: bool = True

    @property
    def error(self) -> bool:
        """A failed or refused call: what MCP's isError says."""
        return not (self.ok and self.executed)


class CallHandler:
    def __init__(self, session, tools: dict, policy: Policy, *, actor: str = AGENT,
                 mode: Callable[[], str] = lambda: "step",
                 auto_answer: Callable[[], Callable[[ev.ApprovalRequested], Answer] | None] = lambda: None,
                 stop: threading.Event | None = None,
                 status: Callable[[str, str], None] = lambda state, reason: None):
        """mode and auto_answer are read at each call (the person may change them meanwhile);
        status(state, reason) is told when a call waits for the person and when it goes on."""
        self.session, self.tools, self.policy, self.actor = session, tools, policy, actor
        self.mode, self.auto_answer = mode, auto_answer
        self.stop = stop or threading.Event()
        self._status = status
        self.gate = ApprovalGate()
        self.submitted: str | None = None

    def handle(self, call: ToolCall) -> Handled:
        """Exactly one ToolResult event per call, whatever happens."""
        if self.submitted is not None:
            return self._not_run(call, "not executed: the agent had already submitted")
        if self.stop.is_set():
            return self._not_run(call, "not executed: the agent was stopped")
        if call.error is not None:
            self._requested(call, {}, "invalid", call.error)
            return self._not_run(call, f"error: {call.error}. Call the tool again with valid arguments.", ok=False)
        args = call.arguments or {}
        problem = call_problem(self.tools, call.name, args)
        if problem:
            self._requested(call, args, "invalid", "no such tool" if call.name not in self.tools else problem)
            return self._not_run(call, f"error: {problem}", ok=False)
        tool = self.tools[call.name]
        verdict = self.policy.decide(call.name, args, self.mode())
        self._requested(call, args, verdict.action, verdict.rule)
        if verdict.action == "deny":
            return self._not_run(call, f"not executed: the policy's rule refuses this call ({verdict.rule}). "
                                       "Do it another way.")
        if verdict.action == "ask":
            return self._ask(call, tool, args, verdict.rule)
        return self._execute(call, args)

    def _ask(self, call: ToolCall, tool, args: dict, rule: str) -> Handled:
        tried = None  # the checkpoint a try made, and what it showed
        preview = None
        while True:
            request = self._request(call, args, rule, tried, preview)
            preview = (request.path, request.before, request.after)
            self._status("waiting", f"{call.name} waits for you ({rule})")
            auto_answer = self.auto_answer()
            if auto_answer is not None:
                answer, by = auto_answer(request), SYSTEM
            else:
                answer, by = self.gate.wait(call.id, self.stop), HUMAN
            granted = None
            if answer.verdict == "always":
                granted = str(self.policy.always_allow(call.name, answer.pattern))
            self.session.events.emit(ev.Decision(call_id=call.id, verdict=answer.verdict, comment=answer.comment,
                                                 args=answer.args, rule=granted), by)
            self._status("running", "")
            if answer.verdict in ("approve", "always"):
                if tried is not None:
                    observation = tried[1] + "\n(the person tried this change, then kept it)"
                    self.session.events.emit(ev.ToolResult(call_id=call.id, tool=call.name, observation=observation,
                                                           executed=True), self.actor)
                    return Handled(observation, "tool")
                return self._execute(call, args)
            if answer.verdict == "edit":
                edited = answer.args or {}
                problem = tool.check(edited)
                if problem:
                    self.session.events.emit(ev.Notice(message=f"the edited call is not valid: {problem}"), self.actor)
                    continue
                self._revert(tried)
                return self._execute(call, edited, note="The person edited this call before it ran; it ran "
                                                        f"with these arguments: {json.dumps(edited)}\n")
            if answer.verdict == "try":
                if tried is None:
                    tried = self._try(call, args)
                continue
            self._revert(tried)
            if answer.verdict == "reject" and answer.by_rule:
                # a rule answered for nobody (headless, no --yes): its reason names what refused
                return self._not_run(call, f"not executed: {answer.comment.strip()}")
            if answer.verdict == "reject":
                comment = answer.comment.strip() or "(no comment)"
                return self._not_run(call, f"not executed: the person rejected this call. Their comment: {comment}",
                                     origin="person")
            return self._not_run(call, "not executed: the agent was stopped while this call waited")

    def _try(self, call: ToolCall, args: dict) -> tuple[str | None, str]:
        """Run a call now, as a checkpoint, and the tests after it; the decision stays open.
        Returns the checkpoint it made (None: it changed nothing) and what it showed."""
        before = self._head()
        outcome = self.session.run_tool(call.name, args, call_id=call.id, record=False, actor=self.actor)
        observation = outcome.observation
        made = self._head() if self._head() != before else None
        if made is not None:
            tests = self.session.run_tests(actor=self.actor)
            observation += f"\n\nTests after this change: {summary(tests)}"
            if tests.failing:
                observation += "\nfailing: " + ", ".join(tests.failing[:20])
        self.session.events.emit(ev.Notice(message=f"tried {call.name}: {observation[-300:]}", level="info"), self.actor)
        return made, observation

    def _revert(self, tried: tuple[str | None, str] | None) -> None:
        """Undo a tried change, if it is still the last one."""
        if tried is None or tried[0] is None:
            return
        if self._head() != tried[0]:
            self.session.events.emit(ev.Notice(message="the tried change was not reverted: other changes came "
                                                       "after it (undo them by hand)"), self.actor)
            return
        self.session.undo(actor=HUMAN)

    def _head(self) -> str:
        records = self.session.workspace.records
        return records[-1].id if records else ""

    def _request(self, call, args, rule, tried, preview) -> ev.ApprovalRequested:
        path = before = after = None
        if preview is not None:
            path, before, after = preview
        elif call.name == "edit":
            try:
                path = str(args.get("path"))
                before, after = self.session.preview_edit(path, args.get("new_code", ""), args.get("start"),
                                                          args.get("end"), actor=self.actor)
            except Exception as e:  # the person sees the error; the model will too if it runs
                after = f"(cannot show this edit: {e})"
        request = ev.ApprovalRequested(call_id=call.id, tool=call.name, args=args, rule=rule, path=path,
                                       before=before, after=after, tried=tried is not None,
                                       outcome=tried[1] if tried is not None else None)
        self.session.events.emit(request, self.actor)
        return request

    def _execute(self, call: ToolCall, args: dict, note: str = "") -> Handled:
        tool = self.tools.get(call.name)
        if getattr(tool, "on_caller_thread", False):
            outcome = self._run_here(call, tool, args)
        else:
            outcome = self.session.run_tool(call.name, args, call_id=call.id, actor=self.actor)
        if outcome.submitted is not None:
            self.submitted = outcome.submitted or "submitted"
        return Handled(note + outcome.observation, "tool", outcome.ok)

    def _run_here(self, call: ToolCall, tool, args: dict):
        """A tool that runs on the agent's own thread, not the session's (`debug`: a second model
        at work, whose every call goes through the session one by one; held on the session's
        thread, it would keep the person out for minutes and wait on itself)."""
        from dgym_tui.tools.base import ToolError, ToolOutput, cap

        try:
            output = tool.run(self.session, self.actor, call_id=call.id,
                              **{k: v for k, v in args.items() if v is not None})
            output = ToolOutput(output) if isinstance(output, str) else output
        except ToolError as e:
            output = ToolOutput(str(e), ok=False)
        except Exception as e:  # a bug of ours: the model is told, the session goes on
            output = ToolOutput(f"error: the {call.name} tool failed: {type(e).__name__}: {e}", ok=False)
        output.observation = cap(output.observation)
        self.session.events.emit(ev.ToolResult(call_id=call.id, tool=call.name, observation=output.observation,
                                               executed=True, ok=output.ok), self.actor)
        return output

    def _requested(self, call: ToolCall, args: dict, verdict: str, rule: str) -> None:
        self.session.events.emit(ev.ToolRequested(call_id=call.id, tool=call.name, args=args, verdict=verdict,
                                                  rule=rule), self.actor)

    def _not_run(self, call: ToolCall, observation: str, ok: bool = True,
                 origin: str = "tool") -> Handled:
        self.session.events.emit(ev.ToolResult(call_id=call.id, tool=call.name, observation=observation,
                                               executed=False, ok=ok), self.actor)
        return Handled(observation, origin, ok, executed=False)

