"""The app's side of the agent: starting it off the UI thread, and the person's answers and
commands (keys in the agent pane, the palette), turned into calls on the core's Agent.

The Agent itself (dgym_tui/agent/loop.py) runs in its own thread and reports only through the
session's events; nothing here waits on it.
"""

from __future__ import annotations

import json
import threading

from dgym_tui.core.safe_text import one_line

# The agent's modules and the modal screens are imported where first used: the app builds this
# before its first frame, which would wait for them.


class AgentControl:
    def __init__(self, app, settings) -> None:
        self.app = app
        self.settings = settings  # AgentSettings, or None: no agent configured
        self.agent = None
        self.outside = None    # mcp_server.OutsideAgents: outside agents' calls, once let in
        self.endpoint = None   # mcp_server.HttpEndpoint serving them
        self.starting = False
        self.hidden_by_person = False  # the person hid the agent pane: do not show it again by itself

    @property
    def configured(self) -> bool:
        return bool(self.settings and self.settings.model and self.settings.mode != "manual")

    # --- starting ---------------------------------------------------------------------------

    def start(self, task: str | None = None) -> None:
        """Build the model (litellm loads here: seconds) in a thread, then run the agent."""
        if self.starting or (self.agent is not None and self.agent.alive):
            self.app.notify("the agent is already running", severity="warning")
            return
        if not (self.settings and self.settings.model):
            self.app.notify("no model: start dgym-tui with --model (or set it in config.toml [agent])",
                            severity="warning", title="Agent")
            return
        self.starting = True
        self.app.main.show_agent_pane()
        self.app.main.query_one("#status").set_progress(f"loading the model {one_line(self.settings.model)}…")
        if task is not None:
            self.settings.task = task
        threading.Thread(target=self._build, name="dgym-agent-setup", daemon=True).start()

    def _build(self) -> None:
        from dgym_tui.agent.setup import make_agent

        try:
            agent = make_agent(self.app.session, self.settings)
            agent.model.warm_up()
        except Exception as e:  # a bad model name, a missing key...: say so, the debugger goes on
            self.app.run_on_ui(self._failed, str(e) or type(e).__name__)
            return
        self.app.run_on_ui(self._started, agent)

    def _started(self, agent) -> None:
        self.starting = False
        self.agent = agent
        self.app.main.query_one("#status").end_progress()
        agent.start()

    def _failed(self, message: str) -> None:
        self.starting = False
        self.app.main.query_one("#status").end_progress()
        self.app.notify(one_line(message), severity="error", title="Agent", timeout=15)

    # --- the person's answers ----------------------------------------------------------------

    def answer(self, call_id: str, verdict: str) -> None:
        from dgym_tui.agent.approval import Answer
        from dgym_tui.agent.policy import main_argument
        from dgym_tui.ui.screens.modals import PromptScreen

        waiting = self.app.main.state.agent.waiting
        if (self.agent is None and self.outside is None) or waiting is None or waiting.call_id != call_id:
            return
        if waiting.tool == "answer" and verdict != "reject":  # the agent's question, for the person as its seeker
            self._answer_question(call_id, waiting)
            return
        if verdict in ("approve", "try"):
            self.answer_call(call_id, Answer(verdict))
        elif verdict == "reject":
            self.app.push_screen(PromptScreen(
                f"Reject {waiting.tool}: a comment for the agent (it reads it)", placeholder="e.g. look at the caller first",
                hint="Enter sends (an empty comment is fine), Escape goes back"),
                lambda comment: comment is not None and self.answer_call(call_id, Answer("reject", comment)))
        elif verdict == "always":
            current = main_argument(waiting.tool, waiting.args)

            def always(pattern: str | None) -> None:
                if pattern is not None:
                    self.answer_call(call_id, Answer("always", pattern=pattern.strip() or None))

            self.app.push_screen(PromptScreen(
                f"Always allow {waiting.tool} calls matching (empty: every {waiting.tool} call)",
                value=current or "", placeholder="a pattern, e.g. `b *` or `tests/*`",
                hint="* matches anything; Enter allows, Escape goes back"), always)
        elif verdict == "edit":
            self._edit(call_id, waiting)

    def _answer_question(self, call_id: str, waiting) -> None:
        from dgym_tui.agent.approval import Answer
        from dgym_tui.ui.screens.modals import PromptScreen

        question = one_line(str(waiting.args.get("question", "")))
        self.app.push_screen(PromptScreen(
            f"The agent asks: {question}", placeholder="e.g. at calc.py:2, a = 2 and b = 3: it returns a - b",
            hint="Your answer, as its seeker: say where you looked (file:line) and the values you saw, "
                 "as `name = value` (checked against what the session printed). Enter sends, Escape goes back"),
            lambda text: text is not None and self.answer_call(call_id, Answer("edit", args={**waiting.args, "text": text})))

    def take_over_seeker(self) -> None:
        """Stop the seeker's turn where it is; the agent's question waits for the person's answer."""
        seeker = getattr(self.agent, "seeker", None)
        if seeker is None or not seeker.take_over():
            self.app.notify("the seeker is not at work on a question", severity="warning")

    def _edit(self, call_id: str, waiting) -> None:
        from dgym_tui.agent.approval import Answer
        from dgym_tui.ui.screens.modals import PromptScreen

        if waiting.tool == "edit":
            from dgym_tui.ui.screens.code_editor import CodeEditorScreen

            def done(code: str | None) -> None:
                if code is not None:
                    self.answer_call(call_id, Answer("edit", args={**waiting.args, "new_code": code}))

            self.app.push_screen(CodeEditorScreen(f"Edit the agent's change to {waiting.args.get('path')}",
                                                  str(waiting.args.get("new_code", "")), waiting.args.get("path")),
                                 done)
            return
        key = {"pdb": "command", "bash": "command"}.get(waiting.tool)
        if key:
            self.app.push_screen(PromptScreen(
                f"Edit the {waiting.tool} command before it runs", value=str(waiting.args.get(key, "")),
                validate=lambda v: None if v.strip() else "give a command"),
                lambda value: value is not None and self.answer_call(call_id, Answer("edit", args={**waiting.args, key: value})))
            return

        def parse(value: str) -> str | None:
            try:
                return None if isinstance(json.loads(value), dict) else "a JSON object, please"
            except ValueError as e:
                return f"not JSON: {e}"

        self.app.push_screen(PromptScreen(
            f"Edit the arguments of {waiting.tool} (JSON)", value=json.dumps(waiting.args), validate=parse),
            lambda value: value is not None and self.answer_call(call_id, Answer("edit", args=json.loads(value))))

    def answer_call(self, call_id: str, answer) -> bool:
        """To whichever agent's call waits: the built-in one, or an outside one (MCP)."""
        if self.agent is not None and self.agent.answer(call_id, answer):
            return True
        return self.outside is not None and self.outside.answer(call_id, answer)

    # --- outside agents (MCP) ----------------------------------------------------------------

    def let_outside_agents_in(self, port: int = 0) -> None:
        """Serve this session over MCP (streamable HTTP on 127.0.0.1, a random token): an outside
        agent's calls go through the same policy, and the person answers them here."""
        from dgym_tui.agent.policy import Policy
        from dgym_tui.core import events as ev
        from dgym_tui.mcp_server import HttpEndpoint, OutsideAgents

        if self.endpoint is None:
            settings = self.settings
            mode = settings.mode if settings is not None and settings.mode in ("step", "auto") else "step"
            self.outside = OutsideAgents(self.app.session, Policy.from_config(settings.policy if settings else None),
                                         mode=mode)
            try:
                self.endpoint = HttpEndpoint(self.outside, port=port).start()
            except OSError as e:
                self.outside = None
                self.app.notify(one_line(f"cannot serve MCP on 127.0.0.1:{port}: {e}"), severity="error",
                                title="Outside agent", timeout=15)
                return
            self.app.session.events.emit(ev.Notice(message=f"outside agents may come in over MCP at "
                                                           f"{self.endpoint.url} (with the token), {mode} mode",
                                                   level="info"), ev.SYSTEM)
        self.app.main.show_agent_pane()
        from dgym_tui.ui.screens.modals import TextScreen

        self.app.push_screen(TextScreen("Let an outside agent in: give it this (the token is the key)",
                                        self.endpoint.client_config()))

    def close(self) -> None:
        if self.endpoint is not None:
            self.endpoint.stop()
            self.endpoint = None

    # --- controls ---------------------------------------------------------------------------

    def control(self, action: str) -> None:
        from dgym_tui.ui.screens.modals import PromptScreen

        agent = self.agent
        if action == "start":
            self._ask_task()
            return
        if agent is None:
            if action in ("pause", "mode"):
                self.app.notify("no agent is running (palette: Agent: start)", severity="warning")
            return
        if action == "pause":
            if agent.paused:
                agent.resume()
            else:
                agent.pause()
        elif action == "mode":
            agent.set_mode("auto" if agent.mode == "step" else "step")
            self.app.notify(f"agent mode: {agent.mode}", title="Agent")
        elif action == "stop":
            agent.stop()
        elif action == "hint":
            self.app.push_screen(PromptScreen("A hint for the agent (read at its next step)",
                                              placeholder="e.g. the bug is in how stock is reserved"),
                                 lambda text: text and agent.hint(text))
        elif action == "limits":
            self._ask_limits()

    def _ask_task(self) -> None:
        from dgym_tui.ui.screens.modals import PromptScreen

        self.app.push_screen(PromptScreen(
            "Start the agent: its task (empty: fix the failing tests)", placeholder="e.g. why is the total wrong?",
            hint="Enter starts it, Escape goes back"),
            lambda task: task is not None and self.start(task.strip() or None))

    def _ask_limits(self) -> None:
        from dgym_tui.ui.screens.modals import PromptScreen

        agent = self.agent
        current = f"{agent.max_steps or ''} {agent.max_cost or ''}".strip()

        def check(value: str) -> str | None:
            parts = value.split()
            try:
                int(parts[0])
                if len(parts) > 1:
                    float(parts[1])
            except (IndexError, ValueError):
                return "steps, then (optionally) a cost in USD: e.g. `80` or `80 2.5`"
            return None

        def apply(value: str | None) -> None:
            if value:
                parts = value.split()
                agent.raise_limits(int(parts[0]), float(parts[1]) if len(parts) > 1 else None)

        self.app.push_screen(PromptScreen("Agent limits: steps [cost]", value=current, validate=check), apply)

    def palette_commands(self) -> list[tuple[str, str, callable]]:
        running = self.agent is not None and self.agent.alive
        commands = []
        if not running:
            commands.append(("Agent: start…", f"model {self.settings.model if self.settings and self.settings.model else '(none: --model)'}",
                             lambda: self.control("start")))
        else:
            commands += [
                ("Agent: pause / resume", "p in the agent pane, F8", lambda: self.control("pause")),
                ("Agent: cycle the mode", f"now {self.agent.mode} (m, F9)", lambda: self.control("mode")),
                ("Agent: hint…", "words for the agent, read at its next step", lambda: self.control("hint")),
                ("Agent: raise the limits…", "more steps or cost", lambda: self.control("limits")),
                ("Agent: stop", "x in the agent pane", lambda: self.control("stop")),
            ]
            seeker = getattr(self.agent, "seeker", None)
            if seeker is not None and seeker.at_work:
                commands.append(("Seeker: answer its question yourself", "stop the seeker's turn here; the "
                                 "agent's question waits for your answer", self.take_over_seeker))
        commands.append(("Let an outside agent in…", "serve this session over MCP for Claude Code, Codex or any "
                         "client (127.0.0.1, with a token); you approve its calls here", self.let_outside_agents_in))
        return commands
