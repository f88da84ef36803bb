"""The main screen: tree | source | transcript, variables, stack; pdb console; status bar.

The screen turns session events into pane updates (`_handle_events`) and keys into session
calls, which always go through the app's command queue (a thread worker), never on this thread.
Layout is computed in `apply_layout`: a grid whose columns and rows follow the pane sizes, the
hidden panes and the terminal size (below 100x30 the side panes fold into tabs).
"""

from __future__ import annotations

import gc
import time
from functools import partial
from typing import TypeVar

from textual import events, on
from textual.actions import SkipAction
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
from dgym_tui.ui.compositor import CroppedCompositor, paint_now
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

COMPACT_WIDTH, COMPACT_HEIGHT = 100, 30
SIDE_PANES = ("tree", "agent", "transcript", "variables", "stack")  # the ones that fold into tabs
PANE_TITLES = {"tree": "Files", "source": "Source", "console": "pdb", "transcript": "Transcript",
               "variables": "Variables", "stack": "Stack", "agent": "Agent"}
INPUT_GRACE = 0.05  # seconds a command's input waits to be shown with its output
# After a stop, the other panes wait PANES_WAIT: longer than a screen update (UPDATE_PERIOD), so
# the frame with the new current line goes out first, and than a key's repeat (~33 ms), so a
# key held down is seen (its next step is under way) before they are painted.
PANES_WAIT = max(UPDATE_PERIOD + 0.006, 0.045)
# While a key is held down (stops closer together than BURST_GAP, or the next step already
# under way), only the current line follows each step: painting the other panes costs more than
# the time between two steps, so they wait for a pause of PANES_WAIT_IN_BURST, PANES_MAX_WAIT at most.
BURST_GAP = 0.15
PANES_WAIT_IN_BURST = 0.1
PANES_MAX_WAIT = 0.5
BUSY_DELAY = 0.15  # seconds a call runs before the console says it is busy
OPENING_KINDS = {ev.CallStarted.kind, ev.PdbInput.kind}  # what a command emits before its output

# Bindings by section: the help screen lists them in this order, the Footer shows those with show=True.
BINDING_SECTIONS: list[tuple[str, list[Binding]]] = [
    ("Debugger (pudb keys; not while typing in the console)", [
        # n s c u d are priority bindings: taken as the key comes in rather than after it has
        # passed through the focused widget and its parents (~1 ms of each step). A focused text
        # field still gets them (Textual leaves the keys an Input consumes to it); r and t stay
        # ordinary bindings: the agent pane binds them when it has the focus.
        Binding("n", "pdb('next')", "Next", tooltip="next: run to the next line in this function", priority=True),
        Binding("s", "pdb('step')", "Step", tooltip="step: into the call on this line", priority=True),
        Binding("c", "pdb('continue')", "Cont", tooltip="continue to the next breakpoint", priority=True),
        Binding("r", "pdb('return')", "Return", tooltip="return: run until this function returns"),
        Binding("b", "toggle_breakpoint", "Break", tooltip="toggle a breakpoint at the cursor line"),
        Binding("B", "conditional_breakpoint", "Cond. break", show=False,
                tooltip="set a conditional breakpoint at the cursor line (asks for the condition)"),
        Binding("L", "logpoint", "Logpoint", show=False,
                tooltip="set a logpoint at the cursor line: prints a message with {expr} values, never stops"),
        Binding("H", "hit_condition", "Hit count", show=False,
                tooltip="stop at the cursor line's breakpoint only on some hits (3, >= 5, % 10 == 0)"),
        Binding("w", "watch", "Watch", show=False,
                tooltip="watch an expression: shown at every stop (Delete on its row removes it)"),
        Binding("D", "data_breakpoint", "Data break", show=False,
                tooltip="data breakpoint: stop when an expression's value changes (old and new shown)"),
        Binding("left_square_bracket", "step_back", "Back", show=False,
                tooltip="step back: this run's stops as recorded (read-only); Enter runs the program again to one"),
        Binding("t", "run_to_cursor", "To cursor", tooltip="run to the cursor line (temporary breakpoint)"),
        Binding("R", "restart_program", "Restart", tooltip="restart the program: a fresh pdb, breakpoints kept "
                                                             "(pdb's `restart`/`run` in the console do the same)"),
        Binding("u", "pdb('up')", "Up", show=False, tooltip="up: to the calling frame", priority=True),
        Binding("d", "pdb('down')", "Down", show=False, tooltip="down: to the called frame", priority=True),
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
        Binding("f7", "focus_pane('agent')", "Agent", show=False,
                tooltip="focus the agent pane (its keys answer a waiting call: a A e r t)"),
        Binding("z", "toggle_maximize", "Zoom", show=False, tooltip="maximize / restore the focused pane"),
        Binding("ctrl+right", "resize(1)", "Wider", show=False, tooltip="widen the focused pane"),
        Binding("ctrl+left", "resize(-1)", "Narrower", show=False, tooltip="narrow the focused pane"),
        Binding("ctrl+up", "resize_console(1)", "Console taller", show=False, tooltip="make the console taller"),
        Binding("ctrl+down", "resize_console(-1)", "Console shorter", show=False,
                tooltip="make the console shorter"),
    ]),
    ("Agent (anywhere)", [
        Binding("f8", "agent('pause')", "Pause agent", show=False, tooltip="pause or resume the agent"),
        Binding("f9", "agent('mode')", "Agent mode", show=False, tooltip="cycle the agent's mode: step / auto"),
    ]),
    ("App", [
        Binding("question_mark", "help", "Help", tooltip="this help"),
        Binding("W", "app.apply_changes", "Apply", show=False,
                tooltip="write the session's changes to your repo (shows the diff first; all or nothing)"),
        Binding("q", "app.quit", "Quit", tooltip="quit (asks first if the sandbox holds changes)"),
    ]),
]


class MainScreen(Screen):
    BINDINGS = [b for _, section in BINDING_SECTIONS for b in section]
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
        self._log: list[ev.Event] = []  # events folded but not yet painted
        self._aspects: set[str] = set()  # what they changed
        self._flush_timer = None
        self._grace = False  # the flush timer waits for a command's output
        self._held = False  # the running command's input was held once already
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
        self._last_stop_at = 0.0  # (time.monotonic) when the last stop's line was shown
        self._panes_due = 0.0  # the other panes are painted by then at the latest
        self._panes_ready = False  # the tree, variables and stack widgets are mounted (_mount_later)

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

        panel = AgentPanel(id="agent", classes="pane")
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
        self._panes_ready = True
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
        if self._flush_timer is None:
            self._flush()  # what came while the panes were mounted

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

    # --- layout ----------------------------------------------------------------------------

    def on_resize(self) -> None:
        self.apply_layout()

    def apply_layout(self) -> None:
        """Place the panes: wide, a tree docked left and the side panes in a right column;
        compact, the source beside one side pane at a time chosen with tabs."""
        width, height = self.size
        self.compact = width < COMPACT_WIDTH or height < COMPACT_HEIGHT
        self.set_class(self.compact, "-compact")
        body, tabs, tree = self.query_one("#body"), self._optional("#side-tabs"), self.pane("tree")
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
                if (pane := self._optional(f"#{p}")) is not None:
                    pane.display = p == self.active_tab and p in shown
                if tabs is not None:
                    tabs.query_one(f"#tab-{p}").display = p in shown
            if tabs is not None:
                tabs.display = bool(shown)
                if shown and tabs.active != f"tab-{self.active_tab}":
                    tabs.active = f"tab-{self.active_tab}"
            columns = ["1fr", str(self.sizes["compact_side"])] if shown else ["1fr"]
            rows = ["2", "1fr"] if shown else ["1fr"]
        else:
            if tabs is not None:
                tabs.display = False
            tree.styles.dock = "left"
            tree.display = "tree" in shown
            tree.styles.width = self.sizes["tree"]
            right = [p for p in shown if p != "tree"]
            for p in ("agent", "transcript", "variables", "stack"):
                if (pane := self._optional(f"#{p}")) is not None:
                    pane.display = p in right
            columns = ["1fr", str(self.sizes["side"])] if right else ["1fr"]
            waiting = self._agent_waiting()  # a waiting call gets room, and so do the values to judge it
            weights = {"agent": "5fr" if waiting else "1fr", "variables": "2fr" if waiting else "1fr"}
            rows = [str(self.sizes["stack"]) if p == "stack" else weights.get(p, "1fr") for p in right] or ["1fr"]
        body.styles.grid_size_columns = len(columns)
        body.styles.grid_size_rows = len(rows)
        body.styles.grid_columns = " ".join(columns)
        body.styles.grid_rows = " ".join(rows)
        source.styles.row_span = len(rows)

    def _agent_waiting(self) -> bool:
        return self.state.agent.waiting is not None

    def show_agent_pane(self) -> None:
        if "agent" in self.hidden:
            self.toggle_pane("agent")

    def action_agent(self, action: str) -> None:
        self.app.agents.control(action)

    def on_agent_panel_answered(self, event) -> None:
        self.app.agents.answer(event.call_id, event.verdict)

    def on_agent_panel_control(self, event) -> None:
        self.app.agents.control(event.action)

    def on_tabs_tab_activated(self, event) -> None:
        event.stop()
        name = event.tab.id.removeprefix("tab-")
        if self.compact and name != self.active_tab:
            self.active_tab = name
            self.apply_layout()

    def toggle_pane(self, name: str) -> None:
        self.hidden ^= {name}
        if name == "agent":
            self.app.agents.hidden_by_person = name in self.hidden
        if name not in self.hidden and self.compact and name in SIDE_PANES:
            self.active_tab = name
        self.apply_layout()

    def action_focus_pane(self, name: str) -> None:
        if name in self.hidden:
            self.toggle_pane(name)
        if self.compact and name in SIDE_PANES and self.active_tab != name:
            self.active_tab = name
            self.apply_layout()
        target = self._optional({"console": "#pdb-input", "source": "#source"}.get(name, f"#{name}"))
        if target is None:
            return  # not mounted yet (in the first instants)
        if self.maximized is not None and self.maximized is not target:
            self.minimize()
        target.focus()

    def _focused_pane(self) -> str | None:
        widget = self.focused
        while widget is not None and widget is not self:
            if widget.id in ("tree", "source-area", "agent", "transcript", "variables", "stack", "console"):
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
        from dgym_tui.ui.screens.help import HelpScreen

        self.app.push_screen(HelpScreen(sections))

    # --- debugger actions: every one a call through the session's runner --------------------

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
            self.app.submit("toggle_breakpoint", self._breakpoint_done, file=where[0], line=where[1])

    def action_conditional_breakpoint(self) -> None:
        where = self._cursor()
        if where is None:
            return
        existing = next((bp for bp in self.state.breakpoints if (bp.file, bp.line) == where), None)

        def ask(cond: str | None) -> None:
            if cond:  # the core changes an existing breakpoint's condition in place
                self.app.submit("set_breakpoint", self._breakpoint_done, file=where[0], line=where[1], cond=cond)

        from dgym_tui.ui.screens.modals import PromptScreen

        self.app.push_screen(PromptScreen(f"Condition for a breakpoint at {where[0]}:{where[1]}",
                                          value=(existing.cond if existing else None) or "",
                                          placeholder="e.g. qty > 10"), ask)

    def _breakpoint_at_cursor(self, title: str, field: str, placeholder: str, hint: str = "") -> None:
        """Ask for one property of the cursor line's breakpoint (made if there is none)."""
        where = self._cursor()
        if where is None:
            return
        existing = next((bp for bp in self.state.breakpoints if (bp.file, bp.line) == where), None)

        def ask(value: str | None) -> None:
            if value:
                self.app.submit("set_breakpoint", self._breakpoint_done, file=where[0], line=where[1],
                                **{field: value})

        from dgym_tui.ui.screens.modals import PromptScreen

        self.app.push_screen(PromptScreen(f"{title} at {where[0]}:{where[1]}",
                                          value=(getattr(existing, field, None) if existing else None) or "",
                                          placeholder=placeholder, hint=hint), ask)

    def action_logpoint(self) -> None:
        self._breakpoint_at_cursor("Logpoint message", "log", "e.g. qty={qty} total={cart.total()}",
                                   "printed each time the line runs; the program does not stop")

    def action_hit_condition(self) -> None:
        self._breakpoint_at_cursor("Hit condition", "hit", "e.g. 3, >= 5, % 10 == 0",
                                   "stop only when the hit count (times reached, condition true) meets it")

    def action_watch(self) -> None:
        def ask(expr: str | None) -> None:
            if expr and expr.strip():
                self.app.submit("watch", self._breakpoint_done, expr=expr.strip())

        from dgym_tui.ui.screens.modals import PromptScreen

        self.app.push_screen(PromptScreen("Watch expression", placeholder="e.g. cart.total() or len(items)",
                                          hint="shown in the variables pane at every stop"), ask)

    def action_data_breakpoint(self) -> None:
        def ask(expr: str | None) -> None:
            if expr and expr.strip():
                self.app.submit("data_breakpoint", self._pdb_done, expr=expr.strip())

        from dgym_tui.ui.screens.modals import PromptScreen

        self.app.push_screen(PromptScreen("Stop when this value changes", placeholder="e.g. self.total or prices['tea']",
                                          hint="a local until its function returns; an attribute or item wherever it "
                                               "changes"), ask)

    def action_step_back(self) -> None:
        stops = list(self.state.run_stops)
        if not stops:
            self.notify("No stop recorded in this run yet", severity="warning")
            return
        from dgym_tui.ui.screens.history import StopHistoryScreen

        def chosen(index: int | None) -> None:
            if index is not None:
                self.app.submit("back_to", self._stepped_back, index=index)

        self.app.push_screen(StopHistoryScreen(stops), chosen)

    def _stepped_back(self, verdict: str) -> None:
        self.notify(verdict, title="Step back", severity="information" if verdict.startswith("Back at") else "warning",
                    timeout=8)

    def on_variables_pane_unwatch_requested(self, event) -> None:
        self.app.submit("unwatch", self._breakpoint_done, expr=event.expr)

    def _breakpoint_done(self, message: str) -> None:
        message = (message or "").strip()
        if message.startswith("***"):
            self.notify(message.removeprefix("***").strip(), severity="warning", title="Breakpoint")
        elif "will be set" in message:  # no pdb running: the core kept it for the next start
            self.console.show_note(message)

    def action_restart_program(self) -> None:
        self.app.submit("restart")

    def action_run_to_cursor(self) -> None:
        where = self._cursor()
        if where:
            self.app.submit("run_to", self._pdb_done, file=where[0], line=where[1])

    def _pdb_done(self, result) -> None:
        error = getattr(result, "error", None)
        if error:
            self.notify(error.removeprefix("***").strip(), severity="warning")

    def action_interrupt(self) -> None:
        if not self.app.busy:
            raise SkipAction()  # nothing running: ctrl+c copies, as Textual's inputs expect
        self.app.interrupt()

    def clear_breakpoints(self) -> None:
        self.app.submit("clear_breakpoints")

    # --- messages from the panes -----------------------------------------------------------

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
            loader = partial(self.app.ask, "evaluate", expr=name)
            expand = lambda expr, done, fail: self.app.ask("children", done, fail, expr=expr)  # noqa: E731
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

        self.app.ask("read_source", lambda _text: self._show_wanted(), failed, path=path)

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
        if source.path != path or self._shown_sha != sha or sha is None:
            source.load(path, text)
            self._shown_sha = sha
            source.set_breakpoints(self._breakpoint_dicts())
        stop = self.state.stop
        source.set_current(stop.file if stop else None, stop.line if stop else None)
        if line:
            source.goto_line(line)
        self.pane("source").border_title = one_line(path)
        if self._panes_ready:
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

    # --- session events --------------------------------------------------------------------
    #
    # Events arrive in batches (SessionEvents). Each is folded into self.state at once; the panes
    # are painted from the state. A new stop's current line goes out in a frame of its own first
    # (little for a terminal to draw), the rest in the next frame (or, while a key is held down,
    # once the steps pause: see BURST_GAP). A batch that only opens a command (its input) waits
    # up to INPUT_GRACE for the command's output and stop, to paint them at once.

    def on_session_events(self, message: SessionEvents) -> None:
        events = message.events + self.app.take_events()
        if not events:
            return
        for event in events:
            self._aspects |= self.state.apply(event)
        self._log.extend(events)
        stop = self.state.stop
        if "stop" in self._aspects and stop is not None and stop is not self._followed:
            self._follow_stop()
            paint_now(self, self.source)  # the new current line on screen before anything else
            # The status bar goes in the frame after: the current line's frame then draws only
            # what changed in the source view (~0.5 ms sooner on screen, measured per frame).
            if self._state_timer is not None:
                self._state_timer.stop()
            self._state_timer = self.set_timer(UPDATE_PERIOD, self._show_state)
            now = time.monotonic()
            burst = now - self._last_stop_at < BURST_GAP
            self._last_stop_at = now
            if self._flush_timer is None or self._grace:
                self._panes_due = now + PANES_MAX_WAIT
            self._panes_later(PANES_WAIT_IN_BURST if burst else PANES_WAIT)
        elif self._flush_timer is not None and (not self._grace or self.state.busy is not None):
            return  # these go with the flush to come (within the grace, a command's output waits for its stop)
        elif all(e.kind in OPENING_KINDS for e in events) and self.state.busy is not None and not self._held:
            self._held = True  # once per command: a long one shows as running when the grace ends
            self._flush_later(INPUT_GRACE, grace=True)
        else:
            self._flush()

    def _panes_later(self, wait: float) -> None:
        self._flush_later(max(0.0, min(wait, self._panes_due - time.monotonic())), panes=True)

    def _flush_panes(self) -> None:
        if self.app.busy and time.monotonic() < self._panes_due:
            self._panes_later(PANES_WAIT_IN_BURST)  # the next step is under way already: a key held down
        else:
            self._flush()

    def _flush_later(self, delay: float, grace: bool = False, panes: bool = False) -> None:
        if self._flush_timer is not None:
            self._flush_timer.stop()
        self._flush_timer, self._grace = self.set_timer(delay, self._flush_panes if panes else self._flush), grace

    def _flush(self) -> None:
        self._flush_timer, self._grace = None, False
        if not self._panes_ready:
            return  # _mount_later paints what gathered once the panes are there
        events, self._log = self._log, []
        aspects, self._aspects = self._aspects, set()
        self._composed(Transcript).add_events(events)
        for event in events:
            handler = getattr(self, f"_on_{event.kind}", None)
            if handler is not None:
                handler(event.data, event.actor)
        self._paint(aspects)

    def feed(self, events: list[ev.Event], log_tail: int | None = None) -> None:
        """Apply recorded events at once (replay): fold them all; the logs get the last
        `log_tail` of them (all by default), which is what going back re-draws."""
        if self._flush_timer is not None:
            self._flush_timer.stop()
            self._flush_timer, self._grace = None, False
        for event in events:
            self._aspects |= self.state.apply(event)
        shown = events if log_tail is None else events[-log_tail:]
        self._log.extend(shown)
        self._flush()

    def reset(self) -> None:
        """Start over with an empty state (replay going back, a take-over): every pane cleared."""
        if self._flush_timer is not None:
            self._flush_timer.stop()
        self._flush_timer, self._grace, self._log, self._aspects = None, False, [], set()
        self.state = DebugState()
        self._want, self._shown_sha, self._followed, self._stale = None, None, None, set()
        self._agent_launched = False
        self._composed(Transcript).reset()
        self.console.clear()
        self.source.set_current(None, None)  # the file stays until a stop opens another
        if not self._panes_ready:  # (a take-over this early) _mount_later paints it all once they are there
            self._aspects = set(ASPECTS)
            return
        self.pane("variables").show_stop(None)
        self.pane("stack").show_stop(None)
        self._paint(set(ASPECTS))

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
        if "stop" in aspects and not self._agent_launched and state.stop is not None:
            self._agent_launched = True  # the agent starts once the program is at its first stop
            # What start-up made (imports, the panes, the sandbox's client) lives as long as the
            # app: out of the collector's reach, a full collection no longer stalls a step for
            # ~100 ms scanning it.
            gc.freeze()
            if self.app.agents.configured:
                self.app.agents.start()
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
            bar.set_state(f"exited with code {code}" if code is not None else "exited (pdb ended)", "exited")
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
            self._held = False
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
                agent.tokens, agent.cost, step=agent.step, retry=agent.retry)
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
                self.app.submit("restart_sandbox")

        from dgym_tui.ui.screens.modals import ConfirmScreen

        self.app.push_screen(ConfirmScreen(f"{one_line(message)}. Restart the sandbox now?{changes}",
                                           yes="Restart", no="Later"), answer)

    def _on_tests(self, d: ev.Tests, actor: str) -> None:
        if self.source_lookup is not None:
            return  # a replay: the transcript has it; no toast per recorded run
        body = d.summary() + ("\n" + "\n".join(d.failing[:10]) if d.failing else "")
        self.notify(visible(body), title="Tests", severity="information" if d.ok else "warning", timeout=10)
