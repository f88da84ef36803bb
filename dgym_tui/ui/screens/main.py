"""The main screen: tree | source | transcript, variables, stack; pdb console; status bar.

The screen builds the panes, shows files in the source view and paints what the session's
events changed (their timing is the pump's: ui/event_pump.py). Its keys are ui/keymap.py's table;
the debugger's actions (screens/debugger_actions.py) and where the panes go
(screens/pane_layout.py) are parts of this class kept in their own files. Every call into the
session goes through `app.calls` (ui/session_calls.py), queued, never run on this thread.
"""

from __future__ import annotations

import gc
from functools import partial
from typing import TypeVar

from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Container, Vertical
from textual.content import Content
from textual.screen import UPDATE_PERIOD, Screen
from textual.widget import Widget
from textual.widgets import Input, Static

from dgym_tui.core import events as ev
from dgym_tui.core.safe_text import one_line, visible
from dgym_tui.core.state import ASPECTS, DebugState
from dgym_tui.ui import keymap
from dgym_tui.ui.compositor import CroppedCompositor, paint_now
from dgym_tui.ui.event_pump import EventPump
from dgym_tui.ui.screens.debugger_actions import DebuggerActions
from dgym_tui.ui.screens.pane_layout import PANE_TITLES, SIDE_PANES, PaneLayout
from dgym_tui.ui.messages import SessionEvents
from dgym_tui.ui.slots import fill_slot
from dgym_tui.ui.widgets.pdb_console import PdbConsole, PdbInput
from dgym_tui.ui.widgets.source_view import SourceView
from dgym_tui.ui.widgets.status_bar import StatusBar
from dgym_tui.ui.widgets.transcript import Transcript

W = TypeVar("W", bound=Widget)

# What the first frame does not show (the modal screens, the agent pane, the tabs, the key hints,
# the tree, variables and stack widgets) is imported where it is first used: each import here
# delays that frame.

BUSY_DELAY = 0.15  # seconds a call runs before the console says it is busy


class MainScreen(PaneLayout, DebuggerActions, Screen):
    BINDINGS = keymap.bindings()
    AUTO_FOCUS = "SourceView"

    def __init__(self, session) -> None:
        super().__init__()
        self._compositor = CroppedCompositor()  # a step's frame renders the source view alone
        self.session = session
        self.hidden: set[str] = {"agent"}  # shown once an agent is configured or started
        self.sizes = {"tree": 28, "side": 50, "console": 10, "stack": 9, "compact_side": 36}
        self.active_tab = "transcript"
        self.compact = False
        self.state = DebugState()  # folded from the session's events, on this thread
        self.repo_files: list[str] = []  # for the palette's file finder, filled after start
        self.pump = EventPump(self)  # when the session's events are painted
        self._busy_timer = None
        self._state_timer = None  # the status bar, a frame after a stop
        self._widgets: dict[type, Widget] = {}  # see _composed
        self._want: tuple[str, int | None, bool] | None = None  # the file to show once its text is here
        self._shown_sha: str | None = None
        self._stale: set[str] = set()  # files changed since their text was recorded
        self._followed: ev.Stop | None = None  # the stop the source view last moved to
        self.source_lookup = None  # replay: a file's text from the recording
        self._agent_launched = False
        self._offering_restart = False  # the "restart the sandbox?" question is up
        self._told_skipped = False  # the files left out of the copy were said once
        self._resumed = False  # the screen was shown once
        self.panes_ready = False  # the tree, variables and stack widgets are mounted (_mount_later)

    # --- building --------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        with Container(id="body"):
            yield Static(id="tree", classes="pane")  # each slot's widget comes after the first frame
            with Vertical(id="source-area", classes="pane"):
                yield Static(id="source-message")
                yield SourceView(id="source")
            yield Transcript(id="transcript", classes="pane")
            yield Static(id="variables", classes="pane")
            yield Static(id="stack", classes="pane")
        yield PdbConsole(id="console", classes="pane")
        yield StatusBar(id="status")

    def _agent_pane(self):
        from dgym_tui.ui.widgets.agent_panel import AgentPanel

        panel = AgentPanel(id="agent", classes="pane", on_answer=self._agent_answered, on_control=self.action_agent)
        panel.agent = self.state.agent
        return panel

    async def _mount_later(self) -> None:
        """What the first frame does not show, mounted just after it (importing and styling each
        widget is most of what the first frame costs): the tree, variables and stack widgets (the
        first frame has their empty frames; Textual's Tree, DataTable and OptionList are the
        heaviest), the side tabs (for a small terminal), the agent pane (an agent starts at the
        first stop, after this: with a model configured, the first frame comes as soon as without
        one) and the key hints. Session events that come meanwhile are painted at the end."""
        from textual.widgets import Footer, Tab, Tabs

        from dgym_tui.ui.widgets.repo_tree import RepoTree
        from dgym_tui.ui.widgets.stack import StackPane
        from dgym_tui.ui.widgets.variables import VariablesPane

        body = self.query_one("#body")
        for name, cls in (("tree", RepoTree), ("variables", VariablesPane), ("stack", StackPane)):
            await fill_slot(self.pane(name), cls(id=name, classes="pane"))  # shown by apply_layout below
        self.panes_ready = True
        await body.mount(Tabs(*(Tab(PANE_TITLES[p], id=f"tab-{p}") for p in SIDE_PANES), id="side-tabs",
                              active=f"tab-{self.active_tab}"), after="#source-area")
        await body.mount(self._agent_pane(), before="#transcript")
        await self.mount(Footer(compact=True))
        self.refresh_bindings()  # the footer lists the keys when told the bindings changed
        self.pane("agent").border_title = PANE_TITLES["agent"]
        self.apply_layout()
        # The collector, off while the app started (cli), back on: what start-up made stays (frozen:
        # never scanned again), and full collections are rarer (each scan of what the panes keep
        # stalled the screen ~20 ms, about once a second while stepping).
        gc.freeze()
        gc.set_threshold(10_000, 20, 20)
        gc.enable()
        if self.pump.timer is None:
            self.pump.flush()  # what came while the panes were mounted

    def _optional(self, selector: str):
        """The widget, or None before _mount_later has mounted it."""
        found = self.query(selector)
        return found.first() if found else None

    def on_mount(self) -> None:
        for pane, title in PANE_TITLES.items():
            if pane != "agent" or self._optional("#agent") is not None:
                self.pane(pane).border_title = title
        self.pane("variables").border_subtitle = "⏎ full value"
        self.query_one("#source-message").display = False
        if self.app.agents.configured:
            self.hidden.discard("agent")
        self._composed(StatusBar).set_entrypoint(self.session.entrypoint_label)
        self.apply_layout()
        self.call_after_refresh(self.app.attach_session)  # the first frame shows before the sandbox starts
        self.call_after_refresh(self._mount_later)

    def on_screen_resume(self, event: events.ScreenResume) -> None:
        # Runs before Textual's own handler. The first resume comes just after every widget was
        # styled as it mounted: styling them all again cost the first frame ~15 ms. (A resume
        # after a modal still restyles: the theme may have changed meanwhile.)
        if not self._resumed:
            self._resumed = True
            event.refresh_styles = False

    def pane(self, name: str):
        return self.query_one("#source-area" if name == "source" else f"#{name}")

    def _composed(self, kind: type[W]) -> W:
        """One of the widgets composed once for the screen's life, looked up once: a query walks
        the whole DOM, and a step asked several (~0.5 ms of the step)."""
        widget = self._widgets.get(kind)
        if widget is None:
            widget = self._widgets[kind] = self.query_one(kind)
        return widget

    @property
    def source(self) -> SourceView:
        return self._composed(SourceView)

    @property
    def console(self) -> PdbConsole:
        return self._composed(PdbConsole)

    def action_help(self) -> None:
        sections = keymap.binding_sections()
        sections.append(("Source view", list(Binding.make_bindings(SourceView.BINDINGS))))
        sections.append(("pdb console", [
            Binding("enter", "submit", "Send", tooltip="send the command to pdb (empty: repeat the last)"),
            *Binding.make_bindings(PdbInput.BINDINGS), *Binding.make_bindings(PdbConsole.BINDINGS)]))
        sections.append(("Everywhere", [
            Binding("ctrl+p", "command_palette", "Commands",
                    tooltip="command palette: open file, go to line, breakpoints, entrypoint, restart, tests, "
                            "theme, panes"),
            Binding("ctrl+q", "quit", "Quit", tooltip="quit (asks first if the sandbox holds changes)"),
            Binding("tab,shift+tab", "focus_next", "Next pane", tooltip="move the focus between panes"),
        ]))
        from dgym_tui.ui.screens.help import HelpScreen

        self.app.push_screen(HelpScreen(sections))

    # --- messages from the panes -----------------------------------------------------------

    def action_agent(self, action: str) -> None:
        self.app.agents.control(action)

    def _agent_answered(self, call_id: str, verdict: str) -> None:
        self.app.agents.answer(call_id, verdict)


    @on(PdbConsole.CommandSubmitted)
    def _console_command(self, event: PdbConsole.CommandSubmitted) -> None:
        self.app.send_pdb(event.command, notify_errors=False)  # the console shows pdb's errors itself

    def on_repo_tree_file_selected(self, event) -> None:
        self.open_file(event.path, focus=True)

    @on(SourceView.BreakpointToggled)
    def _gutter_clicked(self, event: SourceView.BreakpointToggled) -> None:
        self.action_toggle_breakpoint(event.path, event.line)

    def on_stack_pane_frame_selected(self, event) -> None:
        current = self.state.stop.frame_index if self.state.stop else 0
        steps = current - event.index  # the stack lists the outermost frame first
        if steps:
            self.app.send_pdb(f"up {steps}" if steps > 0 else f"down {-steps}")

    def on_variables_pane_inspect_requested(self, event) -> None:
        name = event.name
        loader = expand = None
        if name.isidentifier() and self.state.program == "stopped":
            # runner calls, ordered after any command in flight; `pp` shows in the console too
            loader = partial(self.app.calls.evaluate, name)
            expand = self.app.calls.children
        from dgym_tui.ui.screens.modals import ValueScreen

        self.app.push_screen(ValueScreen(name, event.value, loader, expand))

    # --- the source view -------------------------------------------------------------------

    def open_file(self, path: str, line: int | None = None, focus: bool = False) -> None:
        """Show a file: from the state when an event already carried its text, else read it
        through the session (its text arrives as an event, and is shown then)."""
        self._want = (path, line, focus)
        if path in self.state.sources and path not in self._stale:
            self._show_wanted()
            return
        if self.source_lookup is not None:  # a replay: the recording has it, or nothing does
            text = self.source_lookup(path)
            if text is None:
                self._want = None
                self.show_message(f"{one_line(path)} is not in the recording", "warning")
                return
            self._show_text(path, text, line, focus)
            return

        def failed(error: Exception) -> None:
            if self._want and self._want[0] == path:
                self._want = None
                self.show_message(f"Cannot show {one_line(path)}: {error}", "warning")

        self.app.calls.read_source(path, lambda _text: self._show_wanted(), failed)

    def _show_wanted(self) -> None:
        if self._want is None:
            return
        path, line, focus = self._want
        text = self.state.source(path)
        if text is None:
            return  # its event has not arrived yet
        self._show_text(path, text, line, focus, self.state.sources.get(path))

    def _show_text(self, path: str, text: str, line: int | None, focus: bool, sha: str | None = None) -> None:
        self._want = None
        self._stale.discard(path)
        source = self.source
        self.show_message(None)
        # `:76⏎` typed as soon as the stop was announced, before its file arrived, goes there once
        # it is shown (over the current line the load puts the cursor on).
        line = line or source.take_waiting_line()
        if source.path != path or self._shown_sha != sha or sha is None:
            source.load(path, text)
            self._shown_sha = sha
            source.set_breakpoints(self._breakpoint_dicts())
        stop = self.state.stop
        source.set_current(stop.file if stop else None, stop.line if stop else None)
        if line:
            source.goto_line(line)
        self.pane("source").border_title = one_line(path)
        if self.panes_ready:
            self.pane("tree").reveal(path)
        if focus:
            source.focus()

    def _breakpoint_dicts(self) -> list[dict]:
        return [bp.to_dict() for bp in self.state.breakpoints]

    def show_message(self, text: str | None, severity: str = "error") -> None:
        """A message over the source (start-up errors, unreadable files); None hides it."""
        message = self.query_one("#source-message", Static)
        message.display = text is not None
        if text is not None:
            message.update(Content(text))
            message.set_class(severity == "error", "-error")

    # --- session events: the pump (ui/event_pump.py) says when, these paint -------------------

    def on_session_events(self, message: SessionEvents) -> None:
        self.pump.deliver(self.app.take_batch(message))

    def feed(self, events: list[ev.Event], log_tail: int | None = None) -> None:
        """Apply recorded events at once (replay): see EventPump.feed."""
        self.pump.feed(events, log_tail)

    def reset(self) -> None:
        """Start over with an empty state (replay going back, a take-over): every pane cleared."""
        self.pump.reset()
        self.state = DebugState()
        self._want, self._shown_sha, self._followed, self._stale = None, None, None, set()
        self._agent_launched = False
        self._composed(Transcript).reset()
        self.console.clear()
        self.source.set_current(None, None)  # the file stays until a stop opens another
        if not self.panes_ready:  # (a take-over this early) _mount_later paints it all once they are there
            self.pump.aspects = set(ASPECTS)
            return
        self.pane("variables").show_stop(None)
        self.pane("stack").show_stop(None)
        self._paint(set(ASPECTS))

    def show_stop_now(self) -> bool:
        """A new stop's current line, on screen before anything else; False if it was shown."""
        if self.state.stop is self._followed:
            return False
        self._follow_stop()
        paint_now(self, self.source)
        # The status bar goes in the frame after: the current line's frame then draws only
        # what changed in the source view (~0.5 ms sooner on screen, measured per frame).
        if self._state_timer is not None:
            self._state_timer.stop()
        self._state_timer = self.set_timer(UPDATE_PERIOD, self._show_state)
        return True

    def paint(self, events: list[ev.Event], aspects: set[str]) -> None:
        """The events' lines (transcript, console) and the panes their changes touch."""
        self._composed(Transcript).add_events(events)
        for event in events:
            handler = getattr(self, f"_on_{event.kind}", None)
            if handler is not None:
                handler(event.data, event.actor)
        self._paint(aspects)

    def _paint(self, aspects: set[str]) -> None:
        state = self.state
        bar = self._composed(StatusBar)
        if "sandbox" in aspects and state.sandbox is not None:
            self._sandbox_shown(state.sandbox)
        if "session" in aspects or "program" in aspects:
            bar.set_entrypoint(state.entrypoint)
        if "files" in aspects:
            self.pane("tree").set_files(state.files, state.changed)
            self.repo_files = state.files
            self._stale |= set(state.changed)  # their text may have changed: read again when shown
            if self.source.path in state.changed:
                self.open_file(self.source.path)
        if "breakpoints" in aspects:
            self.source.set_breakpoints(self._breakpoint_dicts())
        if "stop" in aspects:
            stop = state.stop
            self.pane("variables").show_stop(stop)
            self.pane("stack").show_stop(stop)
            self.console.input.names = list(stop.locals) if stop else []
            self._follow_stop()
        if aspects & {"stop", "program"}:
            self._show_state()
        if "source" in aspects and self._want is not None:
            self._show_wanted()
        if "busy" in aspects:
            self._show_busy()
        if aspects & {"agent", "approval"}:
            self._show_agent(aspects)
        if "progress" in aspects:
            if state.progress:
                bar.set_progress(state.progress)
            else:
                bar.end_progress()

    def _show_state(self) -> None:
        """The debugger's state in the status bar."""
        state, bar = self.state, self._composed(StatusBar)
        stop = state.stop
        if state.program == "error":
            bar.set_state(f"error: {state.error}", "error")
        elif state.program == "exited":
            code = state.exit_code
            # the program ended, but breakpoints typed now are kept for the next run: say how to get there
            ended = f"ended (exit code {code})" if code is not None else "ended (pdb quit)"
            bar.set_state(f"{ended} · c runs it again to the breakpoints", "exited")
        elif state.program == "running":
            bar.set_state("running…", "running")
        elif stop is not None:
            exc = f" — {stop.exception.type}" if stop.exception else ""
            deeper = ""
            below = len(stop.stack) - 1 - stop.frame_index
            if stop.reason == "post_mortem" and below > 0 and stop.stack[-1].file:
                # the shim opened at the deepest frame of the repo's code: say where it was raised
                deeper = f" (raised {below} frame{'s' if below > 1 else ''} down in {stop.stack[-1].file.rsplit('/', 1)[-1]}: d)"
            bar.set_state(f"stopped at {stop.where} in {stop.function or '?'}{exc}{deeper}", "stopped")
        elif state.pdb_off:  # no pdb will run (the project's Python is too old): not "starting…" forever
            bar.set_state(state.pdb_off_label)

    def _follow_stop(self) -> None:
        """Show where a new stop is: its file in the source view, the current line marked. Once
        per stop, so a file the person opened since is not taken away by a repaint."""
        stop = self.state.stop
        if stop is self._followed:
            return
        self._followed = stop
        if stop is None or not stop.file:
            self.source.set_current(None, None)
            return
        if stop.file == self.source.path and stop.file not in self._stale:
            self.source.set_current(stop.file, stop.line)
        elif self._want is None or self._want[0] != stop.file:
            self.open_file(stop.file)  # marks the current line once shown

    def _show_busy(self) -> None:
        """Say "running…" only for calls that take a while: a quick step repaints nothing."""
        if self._busy_timer is not None:
            self._busy_timer.stop()
            self._busy_timer = None
        if self.state.busy is None:
            self.console.set_busy(False)
        else:
            self._busy_timer = self.set_timer(BUSY_DELAY, lambda: self.console.set_busy(self.state.busy is not None))

    def _show_agent(self, aspects: set[str]) -> None:
        agent = self.state.agent
        if (panel := self._optional("#agent")) is not None:  # (else it shows the state once mounted)
            panel.show(agent)
        if agent.state != "off":
            self._composed(StatusBar).set_agent(
                f"{agent.mode} · {agent.state}", (agent.model + (" (scripted)" if agent.scripted else "")) or "–",
                agent.tokens, agent.cost, step=agent.step, retry=agent.retry, replies=agent.replies)
        if agent.state != "off" and "agent" in self.hidden and not self.app.agents.hidden_by_person:
            self.show_agent_pane()
        if "approval" in aspects:
            self.show_agent_pane()
            self.apply_layout()  # a waiting call gets more room
            if agent.waiting is not None:
                focused = self.focused
                if focused is None or not isinstance(focused, Input):  # never take the keyboard from typing
                    self.action_focus_pane("agent")
                else:
                    self.notify(f"the agent waits for you ({agent.waiting.tool}): F7", title="Agent", timeout=5)

    def _sandbox_shown(self, ready: ev.SandboxReady) -> None:
        self._composed(StatusBar).set_sandbox(ready.backend, ready.description, ready.isolated, ready.python)
        self.pane("tree").set_repo(self.state.repo_name or self.session.repo_name)
        if ready.skipped and self.source_lookup is None and not self._told_skipped:
            self._told_skipped = True  # once: the transcript keeps the list
            listed = "\n".join(one_line(s) for s in ready.skipped[:8])
            more = f"\n… and {len(ready.skipped) - 8} more (the transcript lists them)" if len(ready.skipped) > 8 else ""
            self.notify(f"left out of the sandbox's copy:\n{listed}{more}", severity="warning", title="Sandbox",
                        timeout=12)
        if ready.warning and self.source_lookup is None:
            self.notify(visible(ready.warning), severity="warning", title="Sandbox", timeout=10)

    # --- the logs: the console's lines for the events that print ----------------------------

    def _on_stop(self, d: ev.Stop, actor: str) -> None:
        self._launch_agent()

    def _launch_agent(self) -> None:
        if not self._agent_launched:
            # the agent starts once the program is at its first stop, or has ended without one (a
            # SWE-bench instance's tests at its base, the failing ones hidden: they all pass)
            self._agent_launched = True
            # What start-up made (imports, the panes, the sandbox's client) lives as long as the
            # app: out of the collector's reach, a full collection no longer stalls a step for
            # ~100 ms scanning it.
            gc.freeze()
            if self.app.agents.configured:
                self.app.agents.start()

    def _on_program_start(self, d: ev.ProgramStart, actor: str) -> None:
        if d.restart:  # a fresh run: the console starts clean (the transcript keeps the past)
            self.console.clear()
            self.console.show_note(f"▶ restarted {d.entrypoint}" + (f": {d.reason}" if d.reason else ""))

    def _on_pdb_input(self, d: ev.PdbInput, actor: str) -> None:
        self.console.show_input(actor, d.command)

    def _on_pdb_output(self, d: ev.PdbOutput, actor: str) -> None:
        self.console.show_output(d.text)

    def _on_program_exit(self, d: ev.ProgramExit, actor: str) -> None:
        self.console.show_note(d.message or f"the program exited with code {d.code}")
        self._launch_agent()

    def _on_interrupted(self, d: ev.Interrupted, actor: str) -> None:
        self.console.show_note(d.message, "warning")

    def _on_notice(self, d: ev.Notice, actor: str) -> None:
        self.console.show_note(d.message, "warning" if d.level == "warning" else "muted")
        if d.level == "warning" and self.source_lookup is None:  # live only: a replay has the transcript
            self.notify(visible(d.message), severity="warning", title="dgym-tui", timeout=12)

    def _on_error(self, d: ev.Error, actor: str) -> None:
        self.console.show_note(d.message, "error")
        if self.source.path is None or d.fatal:
            self.show_message(f"✖ {d.message}")
        if self.source_lookup is None:  # live only: a replay shows it in the transcript
            if d.sandbox_gone:
                self._offer_sandbox_restart(d.message)
            else:
                self.notify(visible(d.message), severity="error", title="dgym-tui", timeout=15)

    def _offer_sandbox_restart(self, message: str) -> None:
        """The sandbox died: say so and offer the fix (its changes and checkpoints are kept)."""
        if self._offering_restart:
            return
        self._offering_restart = True
        kept = len(self.state.checkpoints)
        changes = f" Its {kept} change{'s' if kept != 1 else ''} will be applied again." if kept else ""

        def answer(ok: bool | None) -> None:
            self._offering_restart = False
            if ok:
                self.app.calls.restart_sandbox()

        from dgym_tui.ui.screens.modals import ConfirmScreen

        self.app.push_screen(ConfirmScreen(f"{one_line(message)}. Restart the sandbox now?{changes}",
                                           yes="Restart", no="Later"), answer)

    def _on_tests(self, d: ev.Tests, actor: str) -> None:
        if self.source_lookup is not None:
            return  # a replay: the transcript has it; no toast per recorded run
        body = d.summary() + ("\n" + "\n".join(d.failing[:10]) if d.failing else "")
        self.notify(visible(body), title="Tests", severity="information" if d.ok else "warning", timeout=10)
