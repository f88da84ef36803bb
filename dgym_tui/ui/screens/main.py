"""The main screen: tree | source | transcript, variables, stack; pdb console; status bar.

The screen turns session events into pane updates (`_handle_events`) and keys into session
calls, which always go through the app's command queue (a thread worker), never on this thread.
Layout is computed in `apply_layout`: a grid whose columns and rows follow the pane sizes, the
hidden panes and the terminal size (below 100x30 the side panes fold into tabs).
"""

from __future__ import annotations

import posixpath

from textual import on, work
from textual.actions import SkipAction
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Container, Vertical
from textual.content import Content
from textual.screen import UPDATE_PERIOD, Screen
from textual.widgets import Footer, Static, Tab, Tabs
from textual.worker import get_current_worker

from dgym_tui.core import events as ev
from dgym_tui.ui.messages import SessionEvents
from dgym_tui.ui.screens.help import HelpScreen
from dgym_tui.ui.screens.modals import PromptScreen, ValueScreen
from dgym_tui.ui.widgets.pdb_console import PdbConsole, PdbInput
from dgym_tui.ui.widgets.repo_tree import RepoTree
from dgym_tui.ui.widgets.source_view import SourceView
from dgym_tui.ui.widgets.stack import StackPane
from dgym_tui.ui.widgets.status_bar import StatusBar
from dgym_tui.ui.widgets.transcript import Transcript
from dgym_tui.ui.widgets.variables import VariablesPane

COMPACT_WIDTH, COMPACT_HEIGHT = 100, 30
SIDE_PANES = ("tree", "transcript", "variables", "stack")  # the ones that fold into tabs
PANE_TITLES = {"tree": "Files", "source": "Source", "console": "pdb", "transcript": "Transcript",
               "variables": "Variables", "stack": "Stack"}
INPUT_GRACE = 0.05  # seconds a command's input waits to be shown with its output
# A screen update runs at most every UPDATE_PERIOD; waiting a little longer than that lets the
# frame with the new current line go out before the other panes are updated.
FIRST_FRAME_WAIT = UPDATE_PERIOD + 0.006
RUNNING_COMMANDS = {"c", "cont", "continue", "n", "next", "s", "step", "r", "return", "unt", "until"}

# Bindings by section: the help screen lists them in this order, the Footer shows those with show=True.
BINDING_SECTIONS: list[tuple[str, list[Binding]]] = [
    ("Debugger (pudb keys; not while typing in the console)", [
        Binding("n", "pdb('next')", "Next", tooltip="next: run to the next line in this function"),
        Binding("s", "pdb('step')", "Step", tooltip="step: into the call on this line"),
        Binding("c", "pdb('continue')", "Cont", tooltip="continue to the next breakpoint"),
        Binding("r", "pdb('return')", "Return", tooltip="return: run until this function returns"),
        Binding("b", "toggle_breakpoint", "Break", tooltip="toggle a breakpoint at the cursor line"),
        Binding("B", "conditional_breakpoint", "Cond. break", show=False,
                tooltip="set a conditional breakpoint at the cursor line (asks for the condition)"),
        Binding("t", "run_to_cursor", "To cursor", tooltip="run to the cursor line (temporary breakpoint)"),
        Binding("u", "pdb('up')", "Up", show=False, tooltip="up: to the calling frame"),
        Binding("d", "pdb('down')", "Down", show=False, tooltip="down: to the called frame"),
        Binding("ctrl+c", "interrupt", "Interrupt", show=False, priority=True,
                tooltip="interrupt a running command (when idle, ctrl+c copies as usual)"),
    ]),
    ("Panes", [
        Binding("exclamation_mark", "focus_pane('console')", "Console",
                tooltip="! focus the pdb console (Escape goes back to the source)"),
        Binding("f1", "focus_pane('tree')", "Files", show=False, tooltip="focus the repo tree"),
        Binding("f2", "focus_pane('source')", "Source", show=False, tooltip="focus the source view"),
        Binding("f3", "focus_pane('console')", "Console", show=False, tooltip="focus the pdb console"),
        Binding("f4", "focus_pane('transcript')", "Transcript", show=False, tooltip="focus the transcript"),
        Binding("f5", "focus_pane('variables')", "Variables", show=False,
                tooltip="focus the variables (Enter shows a full value)"),
        Binding("f6", "focus_pane('stack')", "Stack", show=False,
                tooltip="focus the stack (Enter moves pdb to that frame)"),
        Binding("z", "toggle_maximize", "Zoom", show=False, tooltip="maximize / restore the focused pane"),
        Binding("ctrl+right", "resize(1)", "Wider", show=False, tooltip="widen the focused pane"),
        Binding("ctrl+left", "resize(-1)", "Narrower", show=False, tooltip="narrow the focused pane"),
        Binding("ctrl+up", "resize_console(1)", "Console taller", show=False, tooltip="make the console taller"),
        Binding("ctrl+down", "resize_console(-1)", "Console shorter", show=False,
                tooltip="make the console shorter"),
    ]),
    ("App", [
        Binding("question_mark", "help", "Help", tooltip="this help"),
        Binding("q", "app.quit", "Quit", tooltip="quit (asks first if the sandbox holds changes)"),
    ]),
]


class MainScreen(Screen):
    BINDINGS = [b for _, section in BINDING_SECTIONS for b in section]
    AUTO_FOCUS = "SourceView"

    def __init__(self, session) -> None:
        super().__init__()
        self.session = session
        self.hidden: set[str] = set()
        self.sizes = {"tree": 28, "side": 50, "console": 10, "stack": 9, "compact_side": 36}
        self.active_tab = "transcript"
        self.compact = False
        self.breakpoints: list[dict] = []
        self.status: dict | None = None
        self.repo_files: list[str] = []  # for the palette's file finder, filled after start
        self._last_seq = 0
        self._deferred: list[ev.Event] = []  # a command's input, waiting briefly for its output
        self._backlog: list[ev.Event] | None = None  # events waiting for a stop's first frame
        self._opening: str | None = None  # the file being read for the source view

    # --- building --------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        with Container(id="body"):
            yield RepoTree(id="tree", classes="pane")
            with Vertical(id="source-area", classes="pane"):
                yield Static(id="source-message")
                yield SourceView(id="source")
            yield Tabs(*(Tab(PANE_TITLES[p], id=f"tab-{p}") for p in SIDE_PANES), id="side-tabs",
                       active=f"tab-{self.active_tab}")
            yield Transcript(id="transcript", classes="pane")
            yield VariablesPane(id="variables", classes="pane")
            yield StackPane(id="stack", classes="pane")
        yield PdbConsole(id="console", classes="pane")
        yield StatusBar(id="status")
        yield Footer(compact=True)

    def on_mount(self) -> None:
        for pane, title in PANE_TITLES.items():
            self.pane(pane).border_title = title
        self.query_one("#source-message").display = False
        self.query_one(StatusBar).set_entrypoint(self.session.entrypoint_label)
        self.apply_layout()
        self.call_after_refresh(self.app.attach_session)  # the first frame shows before the sandbox starts

    def pane(self, name: str):
        return self.query_one("#source-area" if name == "source" else f"#{name}")

    @property
    def source(self) -> SourceView:
        return self.query_one(SourceView)

    @property
    def console(self) -> PdbConsole:
        return self.query_one(PdbConsole)

    # --- layout ----------------------------------------------------------------------------

    def on_resize(self) -> None:
        self.apply_layout()

    def apply_layout(self) -> None:
        """Place the panes: wide, a tree docked left and the side panes in a right column;
        compact, the source beside one side pane at a time chosen with tabs."""
        width, height = self.size
        self.compact = width < COMPACT_WIDTH or height < COMPACT_HEIGHT
        self.set_class(self.compact, "-compact")
        body, tabs, tree = self.query_one("#body"), self.query_one("#side-tabs", Tabs), self.pane("tree")
        source = self.pane("source")
        console = self.pane("console")
        console.display = "console" not in self.hidden
        console.styles.height = max(4, min(self.sizes["console"] - (4 if self.compact else 0), height - 8))
        shown = [p for p in SIDE_PANES if p not in self.hidden]
        if self.compact:
            tree.styles.dock = "none"
            tree.styles.width = "1fr"  # fills its grid cell, like the other side panes
            if shown and self.active_tab not in shown:
                self.active_tab = shown[0]
            for p in SIDE_PANES:
                self.pane(p).display = p == self.active_tab and p in shown
                tabs.query_one(f"#tab-{p}").display = p in shown
            tabs.display = bool(shown)
            if shown and tabs.active != f"tab-{self.active_tab}":
                tabs.active = f"tab-{self.active_tab}"
            columns = ["1fr", str(self.sizes["compact_side"])] if shown else ["1fr"]
            rows = ["2", "1fr"] if shown else ["1fr"]
        else:
            tabs.display = False
            tree.styles.dock = "left"
            tree.display = "tree" in shown
            tree.styles.width = self.sizes["tree"]
            right = [p for p in shown if p != "tree"]
            for p in ("transcript", "variables", "stack"):
                self.pane(p).display = p in right
            columns = ["1fr", str(self.sizes["side"])] if right else ["1fr"]
            rows = [str(self.sizes["stack"]) if p == "stack" else "1fr" for p in right] or ["1fr"]
        body.styles.grid_size_columns = len(columns)
        body.styles.grid_size_rows = len(rows)
        body.styles.grid_columns = " ".join(columns)
        body.styles.grid_rows = " ".join(rows)
        source.styles.row_span = len(rows)

    def on_tabs_tab_activated(self, event: Tabs.TabActivated) -> None:
        event.stop()
        name = event.tab.id.removeprefix("tab-")
        if self.compact and name != self.active_tab:
            self.active_tab = name
            self.apply_layout()

    def toggle_pane(self, name: str) -> None:
        self.hidden ^= {name}
        if name not in self.hidden and self.compact and name in SIDE_PANES:
            self.active_tab = name
        self.apply_layout()

    def action_focus_pane(self, name: str) -> None:
        if name in self.hidden:
            self.toggle_pane(name)
        if self.compact and name in SIDE_PANES and self.active_tab != name:
            self.active_tab = name
            self.apply_layout()
        target = self.query_one({"console": "#pdb-input", "source": "#source"}.get(name, f"#{name}"))
        if self.maximized is not None and self.maximized is not target:
            self.minimize()
        target.focus()

    def _focused_pane(self) -> str | None:
        widget = self.focused
        while widget is not None and widget is not self:
            if widget.id in ("tree", "source-area", "transcript", "variables", "stack", "console"):
                return "source" if widget.id == "source-area" else widget.id
            widget = widget.parent
        return None

    def action_resize(self, step: int) -> None:
        pane = self._focused_pane()
        if pane == "tree":
            self.sizes["tree"] = max(12, min(80, self.sizes["tree"] + 4 * step))
        elif pane in ("transcript", "variables", "stack"):
            key = "compact_side" if self.compact else "side"
            self.sizes[key] = max(20, min(120, self.sizes[key] + 4 * step))
        elif pane == "source":  # wider source: narrower side column
            key = "compact_side" if self.compact else "side"
            self.sizes[key] = max(20, min(120, self.sizes[key] - 4 * step))
        else:
            return
        self.apply_layout()

    def action_resize_console(self, step: int) -> None:
        self.sizes["console"] = max(5, min(40, self.sizes["console"] + 2 * step))
        self.apply_layout()

    def action_toggle_maximize(self) -> None:
        if self.maximized is not None:
            self.minimize()
        elif self.focused is not None:
            self.maximize(self.focused)

    def action_help(self) -> None:
        sections = list(BINDING_SECTIONS)
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
        self.app.push_screen(HelpScreen(sections))

    # --- debugger actions ------------------------------------------------------------------

    def action_pdb(self, command: str) -> None:
        self.app.send_pdb(command)

    def _cursor(self) -> tuple[str, int] | None:
        path = self.source.path
        if path is None:
            self.notify("Open a file first (Enter in the tree, or ctrl+p)", severity="warning")
            return None
        return path, self.source.cursor_line

    def action_toggle_breakpoint(self, path: str | None = None, line: int | None = None) -> None:
        where = (path, line) if path and line else self._cursor()
        if where:
            self.app.submit(lambda: self.session.toggle_breakpoint(*where), self._breakpoint_done)

    def action_conditional_breakpoint(self) -> None:
        where = self._cursor()
        if where is None:
            return
        existing = next((bp for bp in self.breakpoints if (bp["file"], bp["line"]) == where), None)

        def ask(cond: str | None) -> None:
            if not cond:
                return
            number = (existing or {}).get("number")
            if number is not None and self.session.state == "stopped":
                # pdb's own way to change a breakpoint's condition; a second `break` would duplicate it
                self.app.submit(lambda: self.session.send(f"condition {number} {cond}"), self._pdb_done)
            else:
                self.app.submit(lambda: self.session.set_breakpoint(*where, cond=cond), self._breakpoint_done)

        self.app.push_screen(PromptScreen(f"Condition for a breakpoint at {where[0]}:{where[1]}",
                                          value=(existing or {}).get("cond") or "",
                                          placeholder="e.g. qty > 10"), ask)

    def _breakpoint_done(self, message: str) -> None:
        message = (message or "").strip()
        if message.startswith("***"):
            self.notify(message.removeprefix("***").strip(), severity="warning", title="Breakpoint")
        elif "will be set" in message:  # no pdb running: the core kept it for the next start
            self.console.show_note(message)

    def action_run_to_cursor(self) -> None:
        where = self._cursor()
        if where:
            self.app.submit(lambda: self.session.run_to(*where), self._pdb_done)

    def _pdb_done(self, result) -> None:
        error = getattr(result, "error", None)
        if error:
            self.notify(error.removeprefix("***").strip(), severity="warning")

    def action_interrupt(self) -> None:
        if not self.app.busy:
            raise SkipAction()  # nothing running: ctrl+c copies, as Textual's inputs expect
        self.app.interrupt()

    def clear_breakpoints(self) -> None:
        for bp in list(self.breakpoints):
            self.app.submit(lambda bp=bp: self.session.clear_breakpoint(bp["file"], bp["line"]))

    # --- messages from the panes -----------------------------------------------------------

    @on(PdbConsole.CommandSubmitted)
    def _console_command(self, event: PdbConsole.CommandSubmitted) -> None:
        self.app.send_pdb(event.command, notify_errors=False)  # the console shows pdb's errors itself

    @on(RepoTree.FileSelected)
    def _file_selected(self, event: RepoTree.FileSelected) -> None:
        self.open_file(event.path, focus=True)

    @on(SourceView.BreakpointToggled)
    def _gutter_clicked(self, event: SourceView.BreakpointToggled) -> None:
        self.action_toggle_breakpoint(event.path, event.line)

    @on(StackPane.FrameSelected)
    def _frame_selected(self, event: StackPane.FrameSelected) -> None:
        current = (self.status or {}).get("frame_index", 0)
        steps = current - event.index  # the stack lists the outermost frame first
        if steps:
            self.app.send_pdb(f"up {steps}" if steps > 0 else f"down {-steps}")

    @on(VariablesPane.InspectRequested)
    def _inspect(self, event: VariablesPane.InspectRequested) -> None:
        name = event.name
        loader = expand = None
        if name.isidentifier() and self.session.state == "stopped":
            # the core's lock orders this after any command in flight; it shows in the console too
            loader = lambda: self.session.send(f"pp {name}").output  # noqa: E731
            expand = self.session.children  # one level at a time, quietly, when opened
        self.app.push_screen(ValueScreen(name, event.value, loader, expand))

    # --- the source view -------------------------------------------------------------------

    def open_file(self, path: str, line: int | None = None, focus: bool = False) -> None:
        self._read_file(path, line, focus)

    @work(thread=True, group="read-file", exclusive=True)
    def _read_file(self, path: str, line: int | None, focus: bool) -> None:
        worker = get_current_worker()
        sandbox = self.session.sandbox
        try:
            if posixpath.isabs(path):  # a stop outside the repo (the stdlib): read it as it is
                result = sandbox.exec(["cat", path], timeout=10)
                if not result.ok:
                    raise OSError(result.output.strip() or "cannot read it")
                text = result.output
            else:
                text = sandbox.read_text(path)
        except Exception as e:
            self.app.call_from_thread(self.show_message, f"Cannot show {path}: {e}", "warning")
            return
        if not worker.is_cancelled:  # a newer request (another stop, another file) wins
            self.app.call_from_thread(self._show_file, path, text, line, focus)

    def _show_file(self, path: str, text: str, line: int | None, focus: bool) -> None:
        self._opening = None
        source = self.source
        self.show_message(None)
        source.load(path, text)
        source.set_breakpoints(self.breakpoints)
        stop = self.status or {}
        source.set_current(stop.get("file"), stop.get("line"))
        if line:
            source.goto_line(line)
        self.pane("source").border_title = path
        self.query_one(RepoTree).reveal(path)
        if focus:
            source.focus()

    def show_message(self, text: str | None, severity: str = "error") -> None:
        """A message over the source (start-up errors, unreadable files); None hides it."""
        message = self.query_one("#source-message", Static)
        message.display = text is not None
        if text is not None:
            message.update(Content(text))
            message.set_class(severity == "error", "-error")

    # --- session events --------------------------------------------------------------------

    def on_session_events(self, message: SessionEvents) -> None:
        deferred, self._deferred = self._deferred, []
        events = deferred + message.events + self.app.take_events()
        if not events:
            return
        if self._backlog is not None:  # an earlier batch waits for its first frame: keep order
            self._backlog.extend(events)
            return
        if not deferred and self.app.busy and all(e.kind == ev.PDB_INPUT for e in events):
            # A command just went out; its output and stop usually follow within milliseconds.
            # Showing them together costs one repaint instead of two. Held once: a command that
            # runs longer shows as running when the grace is over.
            self._deferred = events
            self.set_timer(INPUT_GRACE, lambda: self.on_session_events(SessionEvents([])))
            return
        stops = [e for e in events if e.kind == ev.STOP]
        if not stops:
            self._handle_events(events)
            return
        # Where the program stopped goes on screen first, in a frame of its own (two source
        # lines and the status bar: little for a terminal to draw); the other panes follow once
        # that frame is out, in the next one.
        self._show_location(stops[-1].data)
        self._backlog = events
        self.set_timer(FIRST_FRAME_WAIT, self._drain_backlog)

    def _drain_backlog(self) -> None:
        events, self._backlog = self._backlog or [], None
        self._handle_events(events)

    def _handle_events(self, events: list[ev.Event]) -> None:
        fresh = []
        for event in events:
            if event.seq and event.seq <= self._last_seq:
                continue  # already shown (history replayed at mount overlaps live events)
            self._last_seq = event.seq or self._last_seq
            fresh.append(event)
        self.query_one(Transcript).add_events(fresh)
        for event in fresh:
            handler = getattr(self, f"_on_{event.kind}", None)
            if handler is not None:
                handler(event.data, event.actor)

    def handle_event(self, event: ev.Event) -> None:
        self._handle_events([event])

    def _on_progress(self, d: dict, actor: str) -> None:
        self.query_one(StatusBar).set_progress(d.get("message", "working…"))

    def _on_sandbox_ready(self, d: dict, actor: str) -> None:
        self.query_one(StatusBar).set_sandbox(d.get("kind", ""), d.get("description", ""), d.get("isolated", False))
        if d.get("warning"):
            self.notify(d["warning"], severity="warning", title="Sandbox", timeout=10)
        self.query_one(RepoTree).set_sandbox(self.session.sandbox, self.session.repo_name)
        self.refresh_repo_state()

    def _on_program_start(self, d: dict, actor: str) -> None:
        bar = self.query_one(StatusBar)
        bar.set_entrypoint(d.get("entrypoint") or self.session.entrypoint_label)
        bar.set_state("running…", "running")

    def _on_pdb_input(self, d: dict, actor: str) -> None:
        command = d.get("command", "")
        self.console.show_input(actor, command)
        if command.split(" ", 1)[0] in RUNNING_COMMANDS:
            self.query_one(StatusBar).set_state("running…", "running")

    def _on_pdb_output(self, d: dict, actor: str) -> None:
        self.console.show_output(d.get("text", ""))

    def _on_stop(self, d: dict, actor: str) -> None:
        self.status = d
        self.query_one(VariablesPane).show_status(d)
        self.query_one(StackPane).show_status(d)
        self.console.input.names = list((d.get("locals") or {}).keys())
        self._show_location(d)

    def _show_location(self, d: dict) -> None:
        """The status bar's state and the current line in the source view."""
        where = f"{d.get('file')}:{d.get('line')}"
        exc = d.get("exception")
        state = f"stopped at {where} in {d.get('function', '?')}" + (f" — {exc.get('type')}" if exc else "")
        self.query_one(StatusBar).set_state(state, "stopped")
        path = d.get("file")
        if not path:
            return
        if path == self.source.path:
            self.source.set_current(path, d.get("line"))
        elif path != self._opening:
            self._opening = path
            self.open_file(path)  # _show_file marks the current line once loaded

    def _on_breakpoints(self, d: dict, actor: str) -> None:
        self.breakpoints = list(d.get("breakpoints") or [])
        self.source.set_breakpoints(self.breakpoints)

    def _on_program_exit(self, d: dict, actor: str) -> None:
        self.status = None
        code = d.get("code")
        self.query_one(StatusBar).set_state(
            f"exited with code {code}" if code is not None else "exited (pdb ended)", "exited")
        self.source.set_current(None, None)
        self.query_one(VariablesPane).show_status(None)
        self.query_one(StackPane).show_status(None)
        self.console.show_note(d.get("message") or f"the program exited with code {code}")
        self.refresh_repo_state()

    def _on_interrupted(self, d: dict, actor: str) -> None:
        self.console.show_note(d.get("message", "interrupted"), "warning")

    def _on_error(self, d: dict, actor: str) -> None:
        message = d.get("message", "error")
        self.query_one(StatusBar).set_state(f"error: {message}", "error")
        self.console.show_note(message, "error")
        if self.source.path is None or self.session.state == "error":
            self.show_message(f"✖ {message}")
        self.notify(message, severity="error", title="dgym-tui", timeout=15)

    def _on_checkpoint(self, d: dict, actor: str) -> None:
        self.refresh_repo_state()
        if self.source.path:
            self.open_file(self.source.path)  # the file may have changed

    def _on_tests(self, d: dict, actor: str) -> None:
        summary = f"{d.get('passed', 0)} passed, {d.get('failed', 0)} failed, {d.get('errors', 0)} errors"
        failing = d.get("failing") or []
        body = summary + ("\n" + "\n".join(failing[:10]) if failing else "")
        ok = not d.get("failed") and not d.get("errors")
        self.notify(body, title="Tests", severity="information" if ok else "warning", timeout=10)
        self.query_one(StatusBar).end_progress()
        self.refresh_repo_state()

    @work(thread=True, group="repo-state", exclusive=True)
    def refresh_repo_state(self) -> None:
        """Changed files (tree markers) and the file list (palette), read off the UI thread."""
        try:
            changed = self.session.changed_files()
            files = self.session.list_files()
        except Exception:
            return  # the sandbox is closing or gone; nothing to mark
        self.app.call_from_thread(self._set_repo_state, changed, files)

    def _set_repo_state(self, changed: list[str], files: list[str]) -> None:
        self.query_one(RepoTree).set_changed(changed)
        self.repo_files = files
