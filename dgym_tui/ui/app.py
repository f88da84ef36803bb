"""DgymApp: the Textual application around one Session.

Small on purpose: themes and config, the session's lifecycle (start after the first frame, close
on quit without blocking), the session's events handed to the main screen in batches, and the
palette's commands. Calls into the session go through `self.calls` (ui/session_calls.py): typed,
queued on the session's runner, their results back on the UI thread, so the UI thread never
waits on pdb or the sandbox.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from functools import partial

from textual import work
from textual.app import App
from textual.theme import Theme

from dgym_tui.core.safe_text import one_line
from dgym_tui.themes import APP_CSS
from dgym_tui.themes.dgym import DEFAULT_THEME, THEMES
from dgym_tui.config import load_config, save_config
from dgym_tui.ui.agent_control import AgentControl
from dgym_tui.ui.apply_changes import ApplyChanges
from dgym_tui.ui import keymap, terminal_writer
from dgym_tui.ui.messages import RunOnUI, SessionEvents
from dgym_tui.ui.keys import EscapeThenKey
from dgym_tui.ui.screens.main import MainScreen
from dgym_tui.ui.session_calls import SessionCalls

# The modal screens are imported where first used, not before the first frame.

CLOSE_TIMEOUT = 20.0  # seconds to wait for the sandbox to close before leaving anyway


def _dgym_commands():
    # The palette's provider, imported when the palette first opens (textual.command is slow
    # to import and not needed for the first frame).
    from dgym_tui.ui.palette import DgymCommands

    return DgymCommands


class DgymApp(EscapeThenKey):  # an App in which Escape then a key, typed quickly, is two keys
    CSS_PATH = APP_CSS
    TITLE = "dgym-tui"
    COMMANDS = App.COMMANDS | {_dgym_commands}

    def __init__(self, session=None, theme: str | None = None, agent_settings=None, writer=None,
                 recording=None, mcp_port: int | None = None) -> None:
        """session: a live Session; or recording: a SessionFile to replay (read-only).
        mcp_port: let outside agents in over MCP on this port of 127.0.0.1 at once (0: any)."""
        super().__init__()
        terminal_writer.install()  # a step's small frame is written without a thread hand-over
        self.mcp_port = mcp_port
        self.replay = None
        if recording is not None:
            from dgym_tui.ui.replay_control import ReplayControl, ReplaySession

            session = ReplaySession(recording)
            self.replay = ReplayControl(self, recording, agent_settings)
            agent_settings = None
        self.session = session
        self.calls = SessionCalls(self)
        self.writer = writer  # the session file (saved as it happens), if any
        if writer is not None:
            writer.on_error = lambda message: self.run_on_ui(
                self.notify, one_line(message), severity="error", title="Session file", timeout=20)
        self.agents = AgentControl(self, agent_settings)
        self.applier = ApplyChanges(self)
        self.sub_title = session.repo_name
        for t in THEMES:
            self.register_theme(t)
        wanted = theme or load_config().get("theme") or DEFAULT_THEME
        self._set_first_theme(wanted if wanted in self.available_themes else DEFAULT_THEME)
        self.main = MainScreen(session)
        self._unsubscribe: Callable | None = None
        self._events_lock = threading.Lock()
        self._batch: SessionEvents | None = None  # posted to the screen, still open to more events
        self.closing = False
        self.closed = False

    def _set_first_theme(self, name: str) -> None:
        """The theme to start with. The stylesheet is first read when the app runs, with the
        theme's colours: setting the theme the usual way would read every stylesheet a second
        time just after start (~15 ms of the first frame), so it is set quietly, with the classes
        its watcher would add. A theme whose ANSI colours differ from the default one's (light
        against dark) is set the usual way, which maps them."""
        if self.get_theme(name).dark != self.current_theme.dark:
            self.theme = name
            return
        self.set_reactive(App.theme, name)
        self.add_class(f"-theme-{name}", update=False)
        self.stylesheet.set_variables(self.get_css_variables())  # made with the default theme's

    def get_default_screen(self) -> MainScreen:
        return self.main

    def on_mount(self) -> None:
        self.theme_changed_signal.subscribe(self, self._save_theme)

    def attach_session(self) -> None:
        """Called by the main screen after its first frame: listen (what already happened comes
        first, in order), then start the session. A replay starts its timeline instead."""
        if self.replay is not None:
            self.replay.start()
            return
        self._unsubscribe = self.session.events.subscribe(self._on_core_event)
        if not self.session.started:
            self.calls.start()
        if self.mcp_port is not None:
            self.agents.let_outside_agents_in(self.mcp_port)

    def _on_core_event(self, event) -> None:
        # Called on whichever thread emitted (the runner's), in order. The events join the batch
        # posted to the screen until the UI thread takes it: one message, however many events a
        # command emits by the time the screen gets to it (one repaint, not one per event).
        with self._events_lock:
            if self._batch is not None:
                self._batch.events.append(event)
                return
            self._batch = batch = SessionEvents([event])
        self.main.post_message(batch)  # post_message is thread-safe

    def take_batch(self, batch: SessionEvents) -> list:
        """The batch's events, closed to more (UI thread): later ones go in a new message."""
        with self._events_lock:
            if self._batch is batch:
                self._batch = None
            return batch.events

    def _save_theme(self, theme: Theme) -> None:
        try:
            save_config(theme=theme.name)
        except OSError as e:
            self.notify(f"could not save the theme: {e}", severity="warning")

    def become_live(self, session, writer, agent_settings=None) -> None:
        """From a replay to a live session taken over at its moment: the screen starts over with
        the recorded past, then the new sandbox, program and (maybe) agent."""
        self.main.query("#timeline").remove()  # none yet when taken over before the replay has mounted
        self.replay = None
        self.session = self.main.session = session
        self.writer = writer
        writer.on_error = lambda message: self.run_on_ui(
            self.notify, one_line(message), severity="error", title="Session file", timeout=20)
        self.agents = AgentControl(self, agent_settings)
        self.applier = ApplyChanges(self)
        self.main.reset()
        self.main.source_lookup = None
        self.main.source.focus()
        self.attach_session()

    # --- calls through the session's runner ------------------------------------------------

    @property
    def busy(self) -> bool:
        """A call of anyone's is running or waiting on the debugger."""
        return self.session.runner.busy

    def run_on_ui(self, fn: Callable, *args) -> None:
        """Run fn(*args) on the UI thread soon; never waits (the caller is the core's thread)."""
        self.post_message(RunOnUI(fn, args))  # thread-safe; dropped if the app has exited

    def on_run_on_ui(self, message: RunOnUI) -> None:
        # An answer that comes once the app began to shut down is dropped: its panes may be gone.
        if self.is_running:
            message.fn(*message.args)

    def send_pdb(self, command: str, notify_errors: bool = True) -> None:
        self.calls.send(command, self.main._pdb_done if notify_errors else None)

    @work(thread=True, group="interrupt")
    def interrupt(self) -> None:
        self.session.runner.interrupt()

    # --- palette commands --------------------------------------------------------------------

    def palette_commands(self, main: MainScreen) -> list[tuple[str, str, Callable]]:
        """The palette's commands: the key map's (ui/keymap.py), then what this session offers."""
        commands = []
        for command in keymap.in_palette():
            keys = self.get_key_display(command.binding()) if command.keys else ""
            commands.append((command.palette, f"{keys}: {command.tooltip}" if keys else command.tooltip,
                             partial(self.run_action, command.action, main)))
        s = self.session
        commands.append(("Change entrypoint…", f"now: {s.entrypoint_label or 'automatic'} (restarts the program)",
                         self.action_change_entrypoint))
        if s.wide_entrypoint is not None and s.entrypoint is not None and s.entrypoint != s.wide_entrypoint:
            commands.append(("Run all tests", f"back to {s.wide_entrypoint.label} (now: {s.entrypoint.label})",
                             self.calls.widen))
        commands += self.replay.palette_commands() if self.replay is not None else self.agents.palette_commands()
        commands += self.tool_commands()
        for pane, title in (("tree", "Files"), ("agent", "Agent"), ("transcript", "Transcript"), ("variables", "Variables"),
                            ("stack", "Stack"), ("console", "pdb console")):
            state = "show" if pane in main.hidden else "hide"
            commands.append((f"Toggle pane: {title}", state, partial(main.toggle_pane, pane)))
        for name in ("dgym-dark", "dgym-light"):
            commands.append((f"Theme: {name}", "the 'Theme' command lists every theme",
                             partial(setattr, self, "theme", name)))
        return commands

    def tool_commands(self) -> list[tuple[str, str, Callable]]:
        """Every tool, for the person to run: the same observation the agent would get."""
        return [(f"Tool: {name}…", tool.summary, partial(self.ask_tool, tool))
                for name, tool in sorted(self.session.tools.items())]

    def ask_tool(self, tool) -> None:
        """The tool's arguments as a form, filled from where the person is; then run it."""
        from dgym_tui.ui.screens.tool_form import ToolFormScreen

        if not tool.parameters:
            self.calls.run_tool(tool.name, {})
            return

        def run(args: dict | None) -> None:
            if args is not None:
                self.calls.run_tool(tool.name, args)

        self.push_screen(ToolFormScreen(tool, self._tool_values(tool)), run)

    def _tool_values(self, tool) -> dict:
        """Starting values for a tool's form, from where the person is: a file tool (one with
        line arguments) gets the open file; a folder one (listdir) its folder; an edit the
        cursor's line, as code to change."""
        source = self.main.source
        path = source.path
        if not path or path.startswith("/"):  # nothing open, or a file outside the repo
            return {}
        params = tool.parameters
        if "start" in params:
            values = {"path": path}
        elif tool.name == "listdir":
            return {"path": path.rpartition("/")[0] or None}
        else:
            return {}
        text = self.main.state.source(path)
        line = source.cursor_line
        if "new_code" in params and text is not None and 0 < line <= len(text.splitlines()):
            values.update(start=line, end=line, new_code=text.splitlines()[line - 1])
        return values

    def action_go_to_line(self) -> None:
        from dgym_tui.ui.screens.modals import PromptScreen

        source = self.main.source

        def check(value: str) -> str | None:
            return None if value.isdigit() and int(value) > 0 else "a line number, please"

        def go(value: str | None) -> None:
            if value:
                source.goto_line(int(value))
                source.focus()

        self.push_screen(PromptScreen("Go to line", placeholder=f"1-{source.line_count}", validate=check), go)

    def action_change_entrypoint(self) -> None:
        from dgym_tui.ui.screens.modals import PromptScreen

        def change(spec: str | None) -> None:
            if spec:
                self.calls.set_entrypoint(spec)

        self.push_screen(PromptScreen(
            "Entrypoint (restarts the program under pdb)", value=self.session.entrypoint_label,
            placeholder="python main.py --x 1 · python -m pkg · pytest tests/test_x.py",
            hint="python SCRIPT [ARGS] · python -m MODULE [ARGS] · pytest [ARGS]",
            validate=lambda v: None if v else "give an entrypoint"), change)

    def action_run_tests(self) -> None:
        self.calls.run_tests()

    def action_undo(self) -> None:
        self.calls.undo()

    def action_restart_sandbox(self) -> None:
        self.calls.restart_sandbox()

    # --- quitting ------------------------------------------------------------------------------

    async def action_quit(self) -> None:
        """q, ctrl+q and the palette's Quit: ask first when the sandbox holds changes."""
        from dgym_tui.ui.screens.modals import ConfirmScreen

        if self.closing or isinstance(self.screen, ConfirmScreen):
            return
        if self.replay is not None or not self.session.started or self.main.state.sandbox is None:
            self.shutdown()  # no sandbox yet: nothing in it to lose
            return
        self.calls.changed_files(self._confirm_quit, self._confirm_quit_unsure)

    def action_apply_changes(self) -> None:
        self.applier.start()

    def _confirm_quit(self, changed: list[str]) -> None:
        if not changed or self.applier.already_applied():
            self.shutdown()
            return
        names = ", ".join(changed[:5]) + (f" and {len(changed) - 5} more" if len(changed) > 5 else "")
        self._ask_to_quit(f"The sandbox holds unapplied changes ({one_line(names)}). Quit and discard them? (W applies them to your repo)")

    def _confirm_quit_unsure(self, error: Exception) -> None:
        # When in doubt, ask: git failing in the sandbox is no proof that nothing changed.
        self._ask_to_quit(f"Could not tell whether the sandbox holds changes ({one_line(str(error))}). "
                          "Quit anyway and discard whatever it holds?")

    def _ask_to_quit(self, message: str) -> None:
        from dgym_tui.ui.screens.modals import ConfirmScreen

        self.push_screen(ConfirmScreen(message, yes="Quit", no="Stay"), lambda ok: self.shutdown() if ok else None)

    def shutdown(self) -> None:
        """Close the sandbox in a thread (the UI stays live, saying so), then exit."""
        if self.closing:
            return
        self.closing = True
        self.main.query_one("#status").set_progress("closing sandbox…")
        self.set_timer(CLOSE_TIMEOUT, self.exit)
        self._close_session()

    @work(thread=True, group="close")
    def _close_session(self) -> None:
        self._close_now()
        self.run_on_ui(self.exit)

    def _close_now(self) -> None:
        try:
            self.agents.close()  # outside agents' endpoint first: no call may start meanwhile
            self.session.close()
        except Exception:
            pass  # closing is best effort; the sandbox reaps orphans at the next start
        self.closed = True

    def on_unmount(self) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()
        if not self.closed and not self.closing:
            # left without quitting (an exception, a test's teardown): still remove the sandbox
            threading.Thread(target=self._close_now, name="dgym-close", daemon=False).start()
