"""The agent loop: ask the model, run the tools it calls (each one through the session's runner,
as actor "agent", after the policy and the person allow it), tell it what happened, repeat.

The control flow is plain: one loop in `run()`, one model query per step, one tool result per
tool call whatever becomes of it. Everything is an event (core/events.py), so the transcript,
the status bar, the session file and replay follow the agent without asking it anything. The
person steers from any thread: pause/resume, stop, the mode, the limits, a hint, and the
answers to the calls that wait (`answer`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from dgym_tui.agent.approval import Answer
from dgym_tui.agent.calls import CallHandler
from dgym_tui.agent.history import fit_to_window
from dgym_tui.agent.model import Model, ModelCancelled, ModelError, ModelReply, ReplyCut, ToolCall
from dgym_tui.agent.policy import Policy
from dgym_tui.agent.probe import probe_once, refuses_tools
from dgym_tui.agent.prompts import TEXT_SYSTEM_PROMPT, system_prompt, task_from_tests, workflow
from dgym_tui.agent.repeats import RepeatGuard
from dgym_tui.agent import text_actions
from dgym_tui.core import events as ev
from dgym_tui.core.describe import Describer
from dgym_tui.core.events import AGENT, HUMAN

PERSON_NOTES_CAP = 4000     # characters of "what the person did" per step
NUDGE = ("You replied without calling a tool. Call one of the tools to go on, or `submit` when the "
         "bug is fixed.")
AUTO_NUDGE = NUDGE + (" If you cannot call tools, write the call as " + text_actions.FORM + ".")
TOOL_FORMATS = ("native", "json", "text", "auto")
AS_TEXT = ("json", "text")  # the formats in which the model writes its action in its reply
SILENT_SWITCH = 2           # auto: native replies in a row without a tool call before text actions
LOOP_CHECK_EVERY = 200      # characters streamed between two looks for a reply going round in circles
LOOPED = "[the reply went on repeating itself from here, and was cut off]"
# what the person did that the agent is told of, and how much of its detail
PERSON_KINDS = {"pdb_input", "pdb_output", "breakpoints", "checkpoint", "restored", "tests", "tool_result"}
PERSON_DETAIL = {"checkpoint": 1500, "tests": 0}


class Agent:
    def __init__(self, session, model: Model, *, tools: dict | None = None, policy: Policy | None = None,
                 mode: str = "step", max_steps: int | None = 50, max_cost: float | None = None,
                 task: str | None = None, system_template: str | None = None,
                 context_window: int | None = None,
                 auto_answer: Callable[[ev.ApprovalRequested], Answer] | None = None,
                 on_model_error: str = "pause", resume=None, tool_format: str = "auto",
                 later: dict | None = None, actor: str = AGENT, gate=None,
                 ends_at_limit: bool = False, seeker=None):
        """resume: the AgentView of a recorded session (DebugState.agent) whose conversation
        this agent goes on with, instead of starting one.
        tool_format: native (the provider's tool calls), text (one fenced JSON action per reply,
        agent/text_actions.py), json (one JSON action per reply, held to its form by the server's
        grammar) or auto (native, switching for good when the model twice replies without a call,
        writes a text action, or the provider refuses tools: to json on a server of one's own,
        else to text; json the server refuses goes on as text).
        tools: the tools it has (default: the session's); later: tools a schedule holds back,
        name -> (Tool, edits): each is given to it once it has made that many successful edits
        (debug-gym's "pdb after 5 rewrites"), and it is told so.
        actor: whose events these are: "agent", or "agent:seeker" for the seeker that investigates
        for it (agent/seeker.py), which shares the agent's approval gate (`gate`): the person
        answers both in one place. ends_at_limit: at a limit or stuck, end rather than wait for
        the person to resume (a seeker's budget is its own). seeker: the Seeker that investigates
        for it (agent/seeker.py): in the report form it runs first, and its findings join the
        task."""
        self.session, self.model, self.actor = session, model, actor
        self._stop_event = threading.Event()
        self.children: list[Agent] = []       # a seeker at work for it: stopped with it
        self.tools = tools if tools is not None else session.tools
        self.later = dict(later or {})
        self.edits = 0                        # successful edit calls, for the schedule
        self.policy = policy or Policy.from_config(None)
        self.mode = mode
        self.max_steps, self.max_cost = max_steps, max_cost
        self.task, self.system_template = task, system_template
        self.context_window = context_window
        self.auto_answer = auto_answer        # headless runs answer by rule, nobody waits
        self.on_model_error = on_model_error  # pause (the app: the person may retry) | stop
        self.ends_at_limit = ends_at_limit
        self.seeker = seeker
        if seeker is not None:
            seeker.parent = self
        self.task_text = task or ""           # the task as the model read it (made from the tests if none)
        self.calls = CallHandler(session, self.tools, self.policy, mode=lambda: self.mode,
                                 auto_answer=lambda: self.auto_answer, stop=self._stop_event,
                                 status=lambda state, reason: self._status(state, reason), actor=actor)
        if gate is not None:
            self.calls.gate = gate
        self.gate = self.calls.gate
        self.messages: list[dict] = []
        self.origins: list[str] = []
        self.step = 0
        self.tokens = 0
        self.cost: float | None = 0.0
        self.submitted: str | None = None
        self.outcome = ""                     # why it ended: submitted | stopped | limit | error
        self._stop = self._stop_event
        self._resume = threading.Condition()
        self._paused = False
        self._lock = threading.Lock()
        self._hints: list[str] = []
        self._person: list[str] = []          # what the person did since the last step
        self._thread: threading.Thread | None = None
        self._unsubscribe = None
        self._trimmed: set[int] = set()      # messages already sent cut short
        self.resume_from = resume if resume is not None and resume.conversation else None
        if tool_format not in TOOL_FORMATS:
            raise ValueError(f"unknown tool format {tool_format!r}: native, json, text or auto")
        self.tool_format = tool_format        # what was asked
        self.format = tool_format if tool_format in AS_TEXT else "native"  # what is in use now
        if self.resume_from is not None and getattr(resume, "tool_format", "native") in AS_TEXT:
            self.format = resume.tool_format  # a switch is for the rest of the session
        self._silent = 0                      # native replies in a row without a tool call
        self._repeats = RepeatGuard()         # the same thing done again (agent/repeats.py)
        self.stuck = ""                       # why the model was judged stuck, if it was
        self._describer = Describer()         # the person's acts in words, as every view says them

    # --- control, from any thread ------------------------------------------------------------

    def start(self) -> threading.Thread:
        self._thread = threading.Thread(target=self.run, name="dgym-agent", daemon=True)
        self._thread.start()
        return self._thread

    def stop(self) -> None:
        self._stop.set()
        for child in list(self.children):
            child.stop()
        self.gate.wake()
        with self._resume:
            self._resume.notify_all()

    def pause(self) -> None:
        with self._resume:
            self._paused = True
        self._status("paused", "paused by the person")

    def resume(self) -> None:
        with self._resume:
            self._paused = False
            self._resume.notify_all()

    @property
    def paused(self) -> bool:
        return self._paused

    @property
    def alive(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def set_mode(self, mode: str) -> None:
        if mode not in ("step", "auto"):
            raise ValueError(f"unknown mode {mode!r}: step or auto")
        self.mode = mode
        self._status(self._state_now(), f"mode: {mode}")

    def raise_limits(self, max_steps: int | None = None, max_cost: float | None = None) -> None:
        """Allow more steps or cost; an agent stopped at a limit goes on."""
        if max_steps is not None:
            self.max_steps = max_steps
        if max_cost is not None:
            self.max_cost = max_cost
        self.resume()

    def hint(self, text: str) -> None:
        """Words from the person, read at the next step (and kept in full: never trimmed)."""
        text = text.strip()
        if text:
            self.session.events.emit(ev.Hint(text=text), HUMAN)
            with self._lock:
                self._hints.append(text)

    def answer(self, call_id: str, answer: Answer) -> bool:
        return self.gate.answer(call_id, answer)

    # --- the loop -----------------------------------------------------------------------------

    def run(self) -> str:
        self._unsubscribe = self.session.events.subscribe(self._watch, replay=False)
        try:
            self._begin()
            while not self._stop.is_set():
                if self._limit_reached():
                    if self.auto_answer is not None or self.ends_at_limit or not self._wait_for_resume():
                        self.outcome = self.outcome or "limit"
                        break
                    continue
                if not self._wait_for_resume():
                    break
                reply = self._query()
                if reply is None:
                    continue  # a model error paused us, or we were stopped: the loop decides
                done = self._act(reply)
                if self.submitted is not None:
                    self.outcome = "submitted"
                    break
                if self._stuck(reply, done) and not self._wait_stuck():
                    break
            if not self.outcome:
                self.outcome = "stopped"
            if self.outcome == "submitted" and self.seeker is not None:
                self._say_if_findings_ignored()
        except Exception as e:  # a bug of ours: say it, never take the session down
            self.outcome = "error"
            self.session.events.emit(ev.Error(message=f"the agent stopped on an internal error: "
                                                      f"{type(e).__name__}: {e}"), self.actor)
        finally:
            self._status(self.outcome, self.submitted or self.stuck or "")
            if self._unsubscribe is not None:
                self._unsubscribe()
        return self.outcome

    def _say_if_findings_ignored(self) -> None:
        """A fix that touches none of the places the seeker's grounded answers named is said in
        the session: the person (and the report) see a fixer that ignored what it was told."""
        from dgym_tui.agent.grounding import grounded_places, touched

        named = grounded_places(self.seeker.answers)
        if touched(self.session.diff(), named) is False:
            self.session.events.emit(ev.Notice(message="the fix touches none of the places the seeker's grounded "
                                                       f"answers named ({', '.join(named)})"),
                                     self.actor)

    def _begin(self) -> None:
        if self.resume_from is not None:
            return self._go_on()
        names = sorted(self.tools)
        task = self.task
        if not task:
            task = task_from_tests(self.session.run_tests(actor=self.actor, stop_after_hang=True))
        self.task_text = task
        if self.seeker is not None and self.seeker.form == "report":
            task = self.seeker.with_findings(task)
        self.session.events.emit(ev.AgentStarted(model=self.model.name, mode=self.mode, tools=names,
                                                 max_steps=self.max_steps, max_cost=self.max_cost,
                                                 scripted=self.model.name.startswith("scripted:"),
                                                 schemas=[self.tools[n].schema() for n in names], task=task,
                                                 tool_format=self.format,
                                                 schedule={n: after for n, (_t, after) in self.later.items()}),
                                 self.actor)
        self._status("running", "")
        self._probe()
        brief = self.format in AS_TEXT
        if brief:  # the tools live in the prompt: compact, for small windows
            listing = text_actions.instructions(text_actions.compact_listing(self._schemas()),
                                                held=self.format == "json", tools=self.tools)
        else:
            listing = "\n".join(f"- {name}: {self.tools[name].summary}" for name in names)
        ready = self.session.state.sandbox
        template = self.system_template
        if template is None and brief:
            template = TEXT_SYSTEM_PROMPT
        prompt = system_prompt(template, workflow=workflow(self.tools, brief=brief), tools=listing,
                               repo=self.session.repo_name, entrypoint=self.session.entrypoint_label,
                               sandbox=ready.description if ready else "a sandbox")
        self._add({"role": "system", "content": prompt}, "system")
        self._add({"role": "user", "content": task}, "task")

    def _go_on(self) -> None:
        """Take up a recorded conversation: its messages are already in the stream; calls left
        without a result where it was cut get one now (the model needs a result per call)."""
        past = self.resume_from
        self.messages, self.origins = list(past.conversation), list(past.origins)
        self.step, self.tokens, self.cost = past.step, past.tokens, past.cost
        names = sorted(self.tools)
        self.session.events.emit(ev.AgentStarted(model=self.model.name, mode=self.mode, tools=names,
                                                 max_steps=self.max_steps, max_cost=self.max_cost,
                                                 scripted=self.model.name.startswith("scripted:"),
                                                 schemas=[self.tools[n].schema() for n in names],
                                                 resumed=len(self.messages), tool_format=self.format), self.actor)
        answered = {m.get("tool_call_id") for m in self.messages if m.get("role") == "tool"}
        for message in list(self.messages):
            for call in message.get("tool_calls") or []:
                if call.get("id") not in answered:
                    self._add({"role": "tool", "tool_call_id": call["id"],
                               "content": "not executed: the session was interrupted here"}, "tool")
        if self.task:
            self._add({"role": "user", "content": f"A new task from the person: {self.task}"}, "person")
        self._status("running", "resumed")

    def _limit_reached(self) -> bool:
        reason = ""
        if self.max_steps is not None and self.step >= self.max_steps:
            reason = f"reached the step limit ({self.max_steps})"
        elif self.max_cost is not None and self.cost is not None and self.cost >= self.max_cost:
            reason = f"reached the cost limit (${self.max_cost:.2f})"
        if reason:
            self.outcome = "limit"
            with self._resume:
                self._paused = True
            self._status("limit", reason)
            return True
        return False

    def _wait_for_resume(self) -> bool:
        """Wait while paused; False when stopped."""
        with self._resume:
            if self._paused and not self._stop.is_set():
                while self._paused and not self._stop.is_set():
                    self._resume.wait()
                if not self._stop.is_set():
                    self.outcome, self.stuck = "", ""
                    self._status("running", "resumed")
        return not self._stop.is_set()

    # --- one model query --------------------------------------------------------------------

    def _query(self) -> ModelReply | None:
        self._tell_person_notes()
        self.step += 1
        prompt, trimmed = self._prompt()
        fresh = sorted(set(trimmed) - self._trimmed)  # cut ones stay cut: record each once
        self._trimmed.update(trimmed)
        self.session.events.emit(ev.ModelRequest(step=self.step, upto=len(self.messages), trimmed=fresh), self.actor)
        schemas = self._schemas() if self.format == "native" else []
        held = {"response_format": text_actions.response_format(self._schemas())} if self.format == "json" else {}
        try:
            reply = self.model.query(prompt, schemas, on_delta=self._streamer(), on_retry=self._retrying,
                                     cancel=self._stop, **held)
        except ModelCancelled:
            self.step -= 1
            return None
        except ModelError as e:
            self.step -= 1  # the step did not happen: a retry asks again
            self._model_failed(e, prompt)
            return None
        switched = ""
        if self.format == "native" and self.tool_format == "auto" and not reply.tool_calls \
                and text_actions.parse_action(reply.text, self.tools).call is not None:
            switched = "the model writes its tool calls as text"
        if reply.cut == "loop":
            self._cut_loop(reply)
        elif reply.cut == "action":  # the chunk that closed the action may hold a little more
            reply.text = reply.text[:text_actions.action_end(reply.text) or len(reply.text)]
        if self.format in AS_TEXT or switched:
            reply = self._text_reply(reply)
        index = self._add(reply.message, "reply")
        self.tokens += reply.usage.total_tokens
        self.cost = None if self.cost is None or reply.cost is None else self.cost + reply.cost
        self.session.events.emit(ev.ModelReplied(
            step=self.step, text=reply.text,
            tool_calls=[{"id": c.id, "name": c.name, "arguments": c.arguments, "error": c.error}
                        for c in reply.tool_calls],
            prompt_tokens=reply.usage.prompt_tokens, completion_tokens=reply.usage.completion_tokens,
            cost=reply.cost, message_index=index), self.actor)
        if switched:
            self._switch(switched)
        self._status("running", "")
        return reply

    def _model_failed(self, e: ModelError, prompt: list[dict]) -> None:
        """A provider's error: another tool format where the provider refuses this one; else say
        it, and pause (the person may retry) or stop (headless)."""
        if self.tool_format == "auto" and self.format == "native" and refuses_tools(e):
            return self._switch(f"the provider refused tools ({e})")
        if self.format == "json" and e.kind == "bad_request" and text_actions.refuses_schema(str(e)):
            return self._switch(f"the server takes no schema for replies ({e})", to="text")
        self.session.events.emit(ev.Error(message=f"the model failed: {e}"), self.actor)
        if e.kind == "context_window" and self.context_window is None:
            self.context_window = max(2048, self.model.count_tokens(prompt) // 2)  # trim harder next time
        if self.on_model_error == "stop" or e.kind == "script_over":
            self.outcome = "error"
            self._stop.set()
        else:
            with self._resume:
                self._paused = True
            self._status("error", f"{e} — resume to try again")

    def _streamer(self):
        """The reply's text as it streams: to the transcript, and cut short (ReplyCut) once a text
        action is whole (nothing after it is read) or once the reply goes round in circles (a
        small model can repeat one paragraph until its token ceiling: minutes on a laptop)."""
        so_far: list[str] = []
        looked = [0]

        def on_delta(text: str) -> None:
            self.session.events.emit(ev.ModelDelta(step=self.step, text=text), self.actor)
            so_far.append(text)
            if self.format == "text" and ("`" in text or ">" in text):  # json: the grammar ends it
                if text_actions.action_end("".join(so_far)) is not None:
                    raise ReplyCut("action")
            size = looked[0] + len(text)
            if size >= LOOP_CHECK_EVERY:
                looked[0] = 0
                if text_actions.loop_start("".join(so_far)) is not None:
                    raise ReplyCut("loop")
            else:
                looked[0] = size

        return on_delta

    def _cut_loop(self, reply: ModelReply) -> None:
        """Keep one round of a looping reply: the rest would only teach the model to loop."""
        text = reply.text
        start = text_actions.loop_start(text) or len(text)
        line_end = text.rfind("\n", 0, start)
        kept = text[:line_end if line_end > start // 2 else start].rstrip()
        reply.text = f"{kept}\n{LOOPED}"
        reply.message = {**reply.message, "content": reply.text}

    def _retrying(self, attempt: int, wait_s: float, reason: str) -> None:
        self.session.events.emit(ev.ModelRetry(attempt=attempt, wait_s=wait_s, reason=reason), self.actor)

    def _prompt(self) -> tuple[list[dict], list[int]]:
        """The history to send, old observations trimmed to fit the window (agent/history.py)."""
        window = self.context_window or _safe(self.model.context_window)
        return fit_to_window(self.messages, self.origins, window, self.model.count_tokens)

    # --- one tool call ------------------------------------------------------------------------

    def _act(self, reply: ModelReply) -> list:
        """Run the reply's calls; tell the model when it made none. What each call did, for the
        stuck check: (ok, name, arguments, the start of its observation)."""
        done = []
        looped = "your reply went on repeating itself and was cut off: keep it short"
        if not reply.tool_calls:
            if self.format in AS_TEXT:
                form = text_actions.HELD_FORM if self.format == "json" else text_actions.FORM
                problem = reply.text_error or f"no action in your reply; write {form}"
                if reply.cut == "loop":
                    problem = f"{looped}, a thought of a few lines, then {form}"
                self._add({"role": "user", "content": f"error: {problem}"}, "nudge")
                return done
            self._silent += 1
            if self.tool_format == "auto" and self._silent >= SILENT_SWITCH:
                self._switch(f"{self._silent} replies in a row without a tool call")
            else:
                nudge = AUTO_NUDGE if self.tool_format == "auto" else NUDGE
                self._add({"role": "user", "content": (f"{looped}. " if reply.cut == "loop" else "") + nudge}, "nudge")
            return done
        self._silent = 0
        for call in reply.tool_calls:
            handled = self._handle(call, note=reply.text_note)
            done.append((handled.ok, call.name, call.raw_arguments, handled.observation))
        self._unlock()
        return done

    def _unlock(self) -> None:
        """Give the tools whose time has come by the schedule, and tell the model about them."""
        due = sorted(n for n, (_tool, after) in self.later.items() if self.edits >= after)
        if not due:
            return
        for name in due:
            self.tools[name] = self.later.pop(name)[0]
        schemas = [self.tools[n].schema() for n in due]
        self.session.events.emit(ev.ToolsUnlocked(tools=due, edits=self.edits, schemas=schemas), self.actor)
        if "pdb" in due and hasattr(self.session, "start_debugger"):
            self.session.start_debugger(actor=self.actor)  # the program under pdb, as at a session's start
        if self.format in AS_TEXT:
            listing = text_actions.compact_listing(schemas)
        else:
            listing = "\n".join(f"- {n}: {self.tools[n].summary}" for n in due)
        new = {n: self.tools[n] for n in due}
        self._add({"role": "user", "content": f"From now on you also have {', '.join(due)}:\n{listing}\n"
                                              f"{workflow(new)}"}, "unlock")

    def _handle(self, call: ToolCall, note: str = ""):
        """Exactly one tool message (and one ToolResult event) per call, whatever happens: the
        policy, the person's approval and the runner decide, in agent/calls.py."""
        handled = self.calls.handle(call)
        self.submitted = self.calls.submitted
        if call.name == "edit" and handled.executed and handled.ok:
            self.edits += 1
        observation = handled.observation
        if handled.origin == "tool":
            observation = self._repeats.note_result(self.step, call.name, call.raw_arguments, observation)
        self._tool_message(call, (note + "\n" if note else "") + observation, handled.origin)
        return handled

    def _tool_message(self, call: ToolCall, content: str, origin: str) -> None:
        if call.id.startswith(text_actions.ID_PREFIX):
            # no native call to answer: the observation is the user's next message
            header = f"Result of {call.name}:" if origin == "tool" else f"About your {call.name} call:"
            reminder = text_actions.reminder(held=self.format == "json")
            self._add({"role": "user", "content": f"{header}\n{content}\n\n{reminder}"}, origin)
            return
        self._add({"role": "tool", "tool_call_id": call.id, "content": content}, origin)

    # --- tool formats ---------------------------------------------------------------------------

    def _schemas(self) -> list[dict]:
        return [tool.schema() for _, tool in sorted(self.tools.items())]

    def _text_reply(self, reply: ModelReply) -> ModelReply:
        """A text-mode reply: its one action parsed into the call a native one would be."""
        form = text_actions.HELD_FORM if self.format == "json" else text_actions.FORM
        parsed = text_actions.parse_action(reply.text, self.tools, form)
        reply.tool_calls = [parsed.call] if parsed.call is not None else []
        reply.text_error, reply.text_note = parsed.error, parsed.note
        reply.message = {"role": "assistant", "content": reply.text}  # what the model wrote, no native calls
        return reply

    def _probe(self) -> None:
        """auto, on a server of one's own: one small request says whether native calls come back
        (probe.py); if not, JSON actions from the first step — finding out with real steps costs
        one or two of them, each a prompt of thousands of tokens and a page of prose."""
        if self.tool_format != "auto" or self.format != "native" or not getattr(self.model, "own_server", False):
            return
        try:
            found, known = probe_once(self.model, cancel=self._stop)
        except (ModelError, ModelCancelled):
            return  # the first step meets the same failure, and says it
        if not known:
            self.tokens += found.tokens
        if found.native:
            return
        reason = found.said if found.native is None else \
            f"no native tool call came back to a one-line probe (it wrote {found.said!r})"
        if known:
            reason += " (asked once for this model and server, by an earlier session in this process)"
        self.format = "json"
        self.session.events.emit(ev.ToolFormat(format="json", reason=reason), self.actor)

    def _switch(self, reason: str, to: str | None = None) -> None:
        """For the rest of the session: tools described in the prompt, one JSON action per reply —
        held to its form by the server's grammar (json) on a server of one's own, else as text."""
        was = self.format
        self.format = to or ("json" if getattr(self.model, "own_server", False) else "text")
        self._silent = 0
        self.session.events.emit(ev.ToolFormat(format=self.format, reason=reason), self.actor)
        listing = text_actions.instructions(text_actions.compact_listing(self._schemas()), held=self.format == "json",
                                            tools=self.tools)
        if was == "native":
            intro = "Your tool calls are not coming through. From now on, call tools by writing them as text."
        else:
            intro = "From now on, write your action as a fenced JSON block."
        self._add({"role": "user", "content": f"{intro}\n\n{listing}"}, "format")

    # --- a stuck model --------------------------------------------------------------------------

    def _stuck(self, reply: ModelReply, done: list) -> bool:
        """The same reply, failing call or call and result too often of late (agent/repeats.py)."""
        self.stuck = self._repeats.stuck(self.step, reply.text, done, native=self.format == "native")
        return bool(self.stuck)

    def _wait_stuck(self) -> bool:
        """Headless: end here. In the app: pause; the person may resume after a hint. False: end."""
        self._repeats.forget()
        self.outcome = "limit"
        if self.auto_answer is not None or self.ends_at_limit:
            self._status("limit", self.stuck)
            return False
        with self._resume:
            self._paused = True
        self._status("limit", self.stuck + " (give a hint, then resume)")
        return True

    # --- the conversation ---------------------------------------------------------------------

    def _add(self, message: dict, origin: str) -> int:
        index = len(self.messages)
        self.messages.append(message)
        self.origins.append(origin)
        self.session.events.emit(ev.AgentMessage(index=index, message=message, origin=origin), self.actor)
        return index

    def _tell_person_notes(self) -> None:
        """What the person did and said since the last step, as one user message."""
        with self._lock:
            hints, self._hints = self._hints, []
            notes, self._person = self._person, []
        parts = []
        if notes:
            text = "\n".join(notes)
            if len(text) > PERSON_NOTES_CAP:
                text = text[:PERSON_NOTES_CAP] + f"\n[... {len(text) - PERSON_NOTES_CAP} more characters]"
            parts.append("Meanwhile the person did this in the debugger:\n" + text)
        for hint in hints:
            parts.append(f"A hint from the person: {hint}")
        if parts:
            self._add({"role": "user", "content": "\n\n".join(parts)}, "person")

    def _watch(self, event: ev.Event) -> None:
        """A listener (quick, no waiting): remember what the person does beside the agent, in
        the words every view uses (core/describe.py), each with its detail cut short."""
        if event.kind not in PERSON_KINDS:
            return
        said = self._describer.describe(event)  # everyone's breakpoints: a change says only what changed
        if event.actor != HUMAN:
            return
        for w in said:
            body = w.body.rstrip()[:PERSON_DETAIL.get(w.kind, 800)] if w.body else ""
            line = body if w.kind == "output" else f"{w.text}\n{body}" if body else w.text
            with self._lock:
                self._person.append(line)

    # --- status -------------------------------------------------------------------------------

    def _state_now(self) -> str:
        if self.gate.waiting:
            return "waiting"
        return "paused" if self._paused else "running"

    def _status(self, state: str, reason: str) -> None:
        self.session.events.emit(ev.AgentStatus(state=state, mode=self.mode, step=self.step, tokens=self.tokens,
                                                cost=self.cost, reason=reason, max_steps=self.max_steps,
                                                max_cost=self.max_cost), self.actor)


def _safe(fn):
    try:
        return fn()
    except Exception:
        return None
