"""DgymApp: the Textual application around one Session.

Small on purpose: themes and config, the session's lifecycle (start after the first frame, close
on quit without blocking), and the command queue: every blocking session call runs in one
thread worker, in the order asked, so the UI thread never waits on pdb or the sandbox.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable

from textual import work
from textual.app import App
from textual.theme import Theme

from dgym_tui.themes import APP_CSS
from dgym_tui.themes.dgym import DEFAULT_THEME, THEMES
from dgym_tui.ui.config import load_config, save_config
from dgym_tui.ui.messages import SessionEvents
from dgym_tui.ui.keys import EscapeThenKey
from dgym_tui.ui.screens.main import MainScreen
from dgym_tui.ui.screens.modals import ConfirmScreen, PromptScreen

CLOSE_TIMEOUT = 20.0  # seconds to wait for the sandbox to close before leaving anyway
BUSY_DELAY = 0.15  # seconds a session call runs before the console says it is busy


def _dgym_commands():
    # The palette's provider, imported when the palette first opens (textual.command is slow
    # to import and not needed for the first frame).
    from dgym_tui.ui.commands import DgymCommands

    return DgymCommands


class DgymApp(EscapeThenKey):  # an App in which Escape then a key, typed quickly, is two keys
    CSS_PATH = APP_CSS
    TITLE = "dgym-tui"
    COMMANDS = App.COMMANDS | {_dgym_commands}

    def __init__(self, session, theme: str | None = None) -> None:
        super().__init__()
        self.session = session
        self.sub_title = session.repo_name
        for t in THEMES:
            self.register_theme(t)
        wanted = theme or load_config().get("theme") or DEFAULT_THEME
        self.theme = wanted if wanted in self.available_themes else DEFAULT_THEME
        self.main = MainScreen(session)
        self._queue: deque[tuple[Callable, Callable | None]] = deque()
        self._queue_lock = threading.Lock()
        self._draining = False
        self._unsubscribe: Callable | None = None
        self._events_lock = threading.Lock()
        self._pending_events: list = []
        self._events_posted = False
        self._busy_timer = None
        self.closing = False
        self.closed = False

    def get_default_screen(self) -> MainScreen:
        return self.main

    def on_mount(self) -> None:
        self.theme_changed_signal.subscribe(self, self._save_theme)

    def attach_session(self) -> None:
        """Called by the main screen after its first frame: listen, catch up, start the session."""
        # Subscribe first, then replay what already happened; the screen drops duplicates by seq.
        self._unsubscribe = self.session.events.subscribe(self._on_core_event)
        self.main.post_message(SessionEvents(list(self.session.events.history)))
        if not self.session.started:
            self.submit(self.session.start)  # takes seconds: the queue runs it in a thread

    def _on_core_event(self, event) -> None:
        # Called on whichever thread acted (a worker, the core's). Events gather in a list and
        # one message carries whatever has gathered by the time the UI thread takes it.
        with self._events_lock:
            self._pending_events.append(event)
            if self._events_posted:
                return
            self._events_posted = True
        self.main.post_message(SessionEvents([]))  # post_message is thread-safe

    def take_events(self) -> list:
        """The events gathered since the last call (UI thread)."""
        with self._events_lock:
            events, self._pending_events = self._pending_events, []
            self._events_posted = False
        return events

    def _save_theme(self, theme: Theme) -> None:
        try:
            save_config(theme=theme.name)
        except OSError as e:
            self.notify(f"could not save the theme: {e}", severity="warning")

    # --- the command queue -----------------------------------------------------------------

    @property
    def busy(self) -> bool:
        """A session call is running or waiting."""
        return self._draining

    def submit(self, fn: Callable, done: Callable | None = None) -> None:
        """Run fn() off the UI thread after the calls already queued; done(result) on the UI thread."""
        with self._queue_lock:
            self._queue.append((fn, done))
            if self._draining:
                return
            self._draining = True
        self._show_busy()
        self.run_worker(self._drain, thread=True, group="session", name="session calls")

    def _drain(self) -> None:
        while True:
            with self._queue_lock:
                if not self._queue:
                    self._draining = False
                    break
                fn, done = self._queue.popleft()
            try:
                result, error = fn(), None
            except Exception as e:  # expected failures (not started, sandbox gone) become notices
                result, error = None, e
            self._from_thread(self._finished, done, result, error)
        self._from_thread(self._show_busy)

    def _show_busy(self) -> None:
        """Say "running…" only for calls that take a while: a quick step repaints nothing."""
        if self._busy_timer is not None:
            self._busy_timer.stop()
            self._busy_timer = None
        if not self.main.is_mounted:
            return
        if self._draining:
            self._busy_timer = self.set_timer(BUSY_DELAY, lambda: self.main.console.set_busy(self._draining))
        else:
            self.main.console.set_busy(False)

    def _from_thread(self, fn: Callable, *args) -> None:
        try:
            self.call_from_thread(fn, *args)
        except RuntimeError:
            pass  # the app has already exited

    def _finished(self, done: Callable | None, result, error: Exception | None) -> None:
        if error is not None:
            self.notify(str(error) or type(error).__name__, severity="error", title="dgym-tui")
        elif done is not None:
            done(result)

    def send_pdb(self, command: str, notify_errors: bool = True) -> None:
        self.submit(lambda: self.session.send(command), self.main._pdb_done if notify_errors else None)

    @work(thread=True, group="interrupt")
    def interrupt(self) -> None:
        self.session.interrupt()

    # --- palette commands --------------------------------------------------------------------

    def palette_commands(self, main: MainScreen) -> list[tuple[str, str, Callable]]:
        s = self.session
        commands = [
            ("Go to line…", "move the source cursor to a line", self.ask_goto_line),
            ("Toggle breakpoint at cursor", "b", main.action_toggle_breakpoint),
            ("Conditional breakpoint at cursor…", "B", main.action_conditional_breakpoint),
            ("Run to cursor", "t", main.action_run_to_cursor),
            ("Clear all breakpoints", "in every file", main.clear_breakpoints),
            ("Change entrypoint…", f"now: {s.entrypoint_label or 'automatic'} (restarts the program)",
             self.ask_entrypoint),
            ("Restart the program", "a fresh pdb process; breakpoints are kept",
             lambda: self.submit(s.restart)),
            ("Run the tests", "pytest in the sandbox (outside pdb)", self.run_tests),
            ("Interrupt", "stop a running command (ctrl+c)", self.interrupt),
            ("Maximize / restore the focused pane", "z", main.action_toggle_maximize),
            ("Help: keys", "?", main.action_help),
        ]
        for pane, title in (("tree", "Files"), ("transcript", "Transcript"), ("variables", "Variables"),
                            ("stack", "Stack"), ("console", "pdb console")):
            state = "show" if pane in main.hidden else "hide"
            commands.append((f"Toggle pane: {title}", state, lambda p=pane: main.toggle_pane(p)))
        for name in ("dgym-dark", "dgym-light"):
            commands.append((f"Theme: {name}", "the 'Theme' command lists every theme",
                             lambda n=name: setattr(self, "theme", n)))
        return commands

    def ask_goto_line(self) -> None:
        source = self.main.source

        def check(value: str) -> str | None:
            return None if value.isdigit() and int(value) > 0 else "a line number, please"

        def go(value: str | None) -> None:
            if value:
                source.goto_line(int(value))
                source.focus()

        self.push_screen(PromptScreen("Go to line", placeholder=f"1-{source.line_count}", validate=check), go)

    def ask_entrypoint(self) -> None:
        def change(spec: str | None) -> None:
            if spec:
                self.submit(lambda: self.session.set_entrypoint(spec))

        self.push_screen(PromptScreen(
            "Entrypoint (restarts the program under pdb)", value=self.session.entrypoint_label,
            placeholder="python main.py --x 1 · python -m pkg · pytest tests/test_x.py",
            hint="python SCRIPT [ARGS] · python -m MODULE [ARGS] · pytest [ARGS]",
            validate=lambda v: None if v else "give an entrypoint"), change)

    def run_tests(self, args: str = "") -> None:
        # the TESTS event shows the result (transcript, notification); here only failures to run
        self.submit(lambda: self.session.run_tests(args))

    # --- quitting ------------------------------------------------------------------------------

    async def action_quit(self) -> None:
        """q, ctrl+q and the palette's Quit: ask first when the sandbox holds changes."""
        if not self.closing and not isinstance(self.screen, ConfirmScreen):
            self._check_changes_then_quit()

    @work(thread=True, group="quit", exclusive=True)
    def _check_changes_then_quit(self) -> None:
        try:
            changed = self.session.changed_files()
        except Exception:
            changed = []  # a dead sandbox holds nothing we could apply
        self._from_thread(self._confirm_quit, changed)

    def _confirm_quit(self, changed: list[str]) -> None:
        if not changed:
            self.shutdown()
            return
        names = ", ".join(changed[:5]) + (f" and {len(changed) - 5} more" if len(changed) > 5 else "")
        self.push_screen(ConfirmScreen(
            f"The sandbox holds unapplied changes ({names}). Quit and discard them?",
            yes="Quit", no="Stay"), lambda ok: self.shutdown() if ok else None)

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
        self._from_thread(self.exit)

    def _close_now(self) -> None:
        try:
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
