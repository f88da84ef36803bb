"""`dgym-tui review RUN_DIR`: the inbox of a batch's proposed fixes, and one trial's evidence.

ReviewScreen lists the trials (resolved first) in a DataTable, which draws only the rows on
screen, so a thousand trials open and scroll like ten. A timer checks the run directory's files
(a few stat() calls) off the UI thread and redraws only when something changed: a batch still
running shows its trials as they finish. Decisions go through dgym_tui/review (no Textual there);
slow work (scoring again, a send-back, exports) runs in thread workers.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path

from rich.text import Text
from textual import work
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Static

from dgym_tui.core.safe_text import one_line
from dgym_tui.review import reviews
from dgym_tui.review.inbox import STATUS_ORDER, RunDir, Trial

STATUS_STYLE = {"resolved": "bold green", "unresolved": "bold red", "limit": "bold yellow", "no-reproduction": "bold cyan",
                "error": "bold magenta"}

CSS_PATH = Path(__file__).with_suffix(".tcss")
POLL_SECONDS = 1.0
COLUMNS = (("task", "task"), ("arm", "arm"), ("#", "attempt"), ("status", "status"), ("diff", "diff"),
           ("steps", "steps"), ("cost", "cost"), ("verdict", "verdict"))
STATUS_FILTERS = (None, *STATUS_ORDER)

DECISION_KEYS = [
    Binding("a", "decide('approve')", "Approve", tooltip="approve this trial's patch (recorded in reviews.jsonl)"),
    Binding("r", "decide('reject')", "Reject", tooltip="reject it, with a note"),
    Binding("s", "decide('skip')", "Skip", tooltip="decide later (recorded as skipped)"),
    Binding("e", "edit", "Edit", tooltip="edit the patch in an editor; the edit is scored again before approval"),
    Binding("R", "send_back", "Send back", tooltip="a new attempt of the agent from this trial's session, "
                                                   "with your note as a hint"),
    Binding("o", "open_replay", "Replay", tooltip="open the trial's replay in the debugger (take over there: a "
                                                  "new revision, scored again)"),
]


class ReviewScreen(Screen):
    BINDINGS = [
        Binding("enter", "open_trial", "Open", tooltip="the trial's change, its scored tests, the agent's summary"),
        *DECISION_KEYS,
        Binding("f", "filter_status", "Status", tooltip="show one status only (cycles)"),
        Binding("m", "filter_arm", "Arm", tooltip="show one arm only (cycles)"),
        Binding("u", "filter_undecided", "Undecided", tooltip="show only the trials not yet approved or rejected"),
        Binding("x", "export", "Export", tooltip="write the approved patches to RUN_DIR/approved/"),
        Binding("question_mark,f1", "help", "Keys", tooltip="list every key"),
        Binding("q", "quit", "Quit", tooltip="leave (every decision is already saved)"),
    ]

    def __init__(self, run: RunDir) -> None:
        super().__init__()
        self.run = run
        self.status_filter: str | None = None
        self.arm_filter: str | None = None
        self.undecided_only = False
        self.shown: list[Trial] = []

    def compose(self) -> ComposeResult:
        yield Static(id="review-header")
        table = DataTable(id="review-table", cursor_type="row", zebra_stripes=True)
        for label, key in COLUMNS:
            table.add_column(label, key=key)
        yield table
        yield Static(id="review-note")
        yield Footer()

    def on_mount(self) -> None:
        self.redraw()
        self.set_interval(POLL_SECONDS, self.poll)
        self.fill_diff_sizes()

    @work(thread=True, group="review-sizes")
    def fill_diff_sizes(self) -> None:
        """Each patch's +/- counts, read after the first frame (a file per trial)."""
        missing = [t for t in self.run.sorted_trials() if t.added is None]
        for t in missing:
            self.run.diff_size(t)
        if missing:
            self.app.call_from_thread(self._fill_sizes)

    def _fill_sizes(self) -> None:
        """The diff column filled in place (a rebuild of a thousand rows would stall a scroll)."""
        column = [k for _, k in COLUMNS].index("diff")
        for i, t in enumerate(self.shown):
            if t.added is not None:
                self.table.update_cell_at((i, column), f"+{t.added}/-{t.removed}")

    # --- drawing ----------------------------------------------------------------------------

    @property
    def table(self) -> DataTable:
        return self.query_one("#review-table", DataTable)

    def current(self) -> Trial | None:
        table = self.table
        if not self.shown or table.cursor_row is None or not 0 <= table.cursor_row < len(self.shown):
            return None
        return self.shown[table.cursor_row]

    def visible_trials(self) -> list[Trial]:
        out = []
        for t in self.run.sorted_trials():
            if self.status_filter and t.status != self.status_filter:
                continue
            if self.arm_filter and t.arm != self.arm_filter:
                continue
            if self.undecided_only and t.decided:
                continue
            out.append(t)
        return out

    def redraw(self) -> None:
        """Rebuild the rows (the filters or the trials changed), keeping the cursor's trial."""
        table = self.table
        keep = self.current()
        self.shown = self.visible_trials()
        table.clear()
        table.add_rows([self.row(t) for t in self.shown])
        if keep is not None:
            for i, t in enumerate(self.shown):
                if t.id == keep.id:
                    table.move_cursor(row=i, animate=False)
                    break
        self.draw_header()

    def row(self, t: Trial) -> list:
        added, removed = (t.added, t.removed) if t.added is not None else ("…", "…")
        cost = "?" if t.cost is None else f"{t.cost:.3f}"
        verdict_style = {"approved": "green", "rejected": "red", "approve?": "yellow"}.get(t.verdict_text, "")
        return [one_line(t.task), one_line(t.arm), str(t.attempt) + (f"r{t.revision}" if t.revision else ""),
                Text(one_line(t.status), style=STATUS_STYLE.get(t.status, "")), f"+{added}/-{removed}",
                "?" if t.steps is None else str(t.steps), cost, Text(t.verdict_text, style=verdict_style)]

    def redraw_row(self, t: Trial) -> None:
        for i, shown in enumerate(self.shown):
            if shown.id == t.id:
                for (_, key), value in zip(COLUMNS, self.row(t)):
                    self.table.update_cell_at((i, [k for _, k in COLUMNS].index(key)), value)
        self.draw_header()

    def draw_header(self) -> None:
        c = self.run.counts()
        done = len(self.run.trials)
        total = f"{done}/{self.run.expected}" if self.run.expected and self.run.expected > done else str(done)
        filters = [f for f in (self.status_filter, self.arm_filter and f"arm {self.arm_filter}",
                               self.undecided_only and "undecided") if f]
        text = Text()
        text.append(f"{one_line(self.run.path.name)} ", style="bold")
        text.append(f"{total} trials  ")
        for status in STATUS_ORDER:
            if status in c:  # (no-reproduction only in a run that has it)
                text.append(f"{status} {c[status]} ", style=STATUS_STYLE.get(status, ""))
        text.append(f"│ approved {c['approved']} rejected {c['rejected']} undecided {c['undecided']}")
        if filters:
            text.append(f"  │ showing: {', '.join(filters)} ({len(self.shown)})", style="italic")
        self.query_one("#review-header", Static).update(text)

    def say(self, message: str) -> None:
        self.query_one("#review-note", Static).update(Text(one_line(message)))

    # --- live refresh -----------------------------------------------------------------------

    def poll(self) -> None:
        self._poll()

    @work(thread=True, exclusive=True, group="review-poll")
    def _poll(self) -> None:
        changed = self.run.refresh()
        if changed == {"reviews"}:  # decisions only (ours, or another reviewer's): those cells
            self.app.call_from_thread(self.redraw_verdicts)
        elif changed:  # new trials or revisions: the order may change
            self.app.call_from_thread(self.redraw)

    def redraw_verdicts(self) -> None:
        column = [k for _, k in COLUMNS].index("verdict")
        for i, t in enumerate(self.shown):
            value = self.row(t)[column]
            if str(self.table.get_cell_at((i, column))) != str(value):
                self.table.update_cell_at((i, column), value)
        self.draw_header()

    # --- keys -------------------------------------------------------------------------------

    def action_open_trial(self) -> None:
        t = self.current()
        if t is not None:
            self.app.push_screen(TrialScreen(self.run, t))

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self.action_open_trial()

    def action_decide(self, verdict: str) -> None:
        t = self.current()
        if t is not None:
            self.app.decide(t, verdict, self.after_decision)

    def after_decision(self, t: Trial) -> None:
        if self.undecided_only and t.decided:
            self.redraw()
        else:
            self.redraw_row(t)
            if self.table.cursor_row < len(self.shown) - 1:  # on to the next one
                self.table.move_cursor(row=self.table.cursor_row + 1, animate=False)

    def action_edit(self) -> None:
        t = self.current()
        if t is not None:
            self.app.edit(t)

    def action_send_back(self) -> None:
        t = self.current()
        if t is not None:
            self.app.send_back(t)

    def action_open_replay(self) -> None:
        t = self.current()
        if t is not None:
            self.app.open_replay(t)

    def action_filter_status(self) -> None:
        counts = self.run.counts()  # it holds no-reproduction only in a run that has it (open issues)
        cycle = [s for s in STATUS_FILTERS if s is None or s in counts]
        i = cycle.index(self.status_filter) if self.status_filter in cycle else 0
        self.status_filter = cycle[(i + 1) % len(cycle)]
        self.redraw()

    def action_filter_arm(self) -> None:
        arms = [None, *sorted({t.arm for t in self.run.trials.values()})]
        i = arms.index(self.arm_filter) if self.arm_filter in arms else 0
        self.arm_filter = arms[(i + 1) % len(arms)]
        self.redraw()

    def action_filter_undecided(self) -> None:
        self.undecided_only = not self.undecided_only
        self.redraw()

    def action_export(self) -> None:
        self.app.export_patches()

    def action_help(self) -> None:
        self.app.show_help()

    def action_quit(self) -> None:
        self.app.quit_review()


class TrialScreen(Screen):
    """One trial: its score, the agent's summary, its change; the same decision keys."""

    BINDINGS = [
        *DECISION_KEYS,
        Binding("v", "toggle_layout", "Unified/split", tooltip="the change unified or side by side"),
        Binding("escape,q", "back", "Back", tooltip="back to the list"),
        Binding("question_mark,f1", "help", "Keys", show=False, tooltip="list every key"),
    ]

    def __init__(self, run: RunDir, trial: Trial) -> None:
        super().__init__()
        self.run, self.trial = run, trial

    def compose(self) -> ComposeResult:
        from dgym_tui.ui.widgets.review_detail import ReviewDetail

        yield ReviewDetail(self.trial, self.run.patch(self.trial), id="review-detail")
        yield Static(id="review-note")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#review-detail").focus()

    def say(self, message: str) -> None:
        self.query_one("#review-note", Static).update(Text(one_line(message)))

    def action_decide(self, verdict: str) -> None:
        self.app.decide(self.trial, verdict, self.after_decision)

    def after_decision(self, t: Trial) -> None:
        self.app.inbox.redraw_row(t)
        self.dismiss()

    def action_edit(self) -> None:
        self.app.edit(self.trial)

    def action_send_back(self) -> None:
        self.app.send_back(self.trial)

    def action_open_replay(self) -> None:
        self.app.open_replay(self.trial)

    def action_toggle_layout(self) -> None:
        self.query_one("#review-detail").toggle_layout()

    def action_back(self) -> None:
        self.dismiss()

    def action_help(self) -> None:
        self.app.show_help()


class ReviewApp(App):
    """The review inbox as an app of its own (`dgym-tui review RUN_DIR`)."""

    CSS_PATH = CSS_PATH
    TITLE = "dgym-tui review"

    def __init__(self, run: RunDir, theme: str | None = None, scorer=None, agent_runner=None,
                 model: str | None = None, api_base: str | None = None) -> None:
        """model, api_base: what a send-back runs (default: the batch's model)."""
        super().__init__()
        from dgym_tui.config import load_config
        from dgym_tui.themes.dgym import DEFAULT_THEME, THEMES

        for t in THEMES:
            self.register_theme(t)
        wanted = theme or load_config().get("theme") or DEFAULT_THEME
        self.theme = wanted if wanted in self.available_themes else DEFAULT_THEME
        self.rundir = run
        self.scorer = scorer              # review/rework.py's default when None
        self.agent_runner = agent_runner  # likewise, for send-back
        self.model, self.api_base = model, api_base
        self.reworking: set[str] = set()  # trials whose new revision is being made or scored
        self.inbox = ReviewScreen(run)
        self.sub_title = str(run.path)

    def get_default_screen(self) -> ReviewScreen:
        return self.inbox

    def on_mount(self) -> None:
        # A revision a closed (or killed) inbox left waiting for its score is scored now, unless
        # another reviewer's process is scoring it (review/rework.py: score_left).
        from dgym_tui.review import rework

        for t in self.rundir.sorted_trials():
            if t.pending:
                self.reworking.add(t.id)
                self._rework_worker(t, "scoring its waiting revision",
                                    partial(rework.score_left, self.rundir, t, scorer=self.scorer), close_trial=False)

    def action_quit(self) -> None:  # ctrl+q, and the palette's Quit: the same as q
        self.quit_review()

    def quit_review(self) -> None:
        """Leave at once, unless a new revision is on its way: then ask, and say what quitting means."""
        if not self.reworking:
            self.exit()
            return
        from dgym_tui.ui.screens.modals import ConfirmScreen

        names = ", ".join(one_line(name) for name in sorted(self.reworking))
        message = (f"finishing the new revision of {names} before quitting (if this is killed, a revision "
                   "left unscored is scored when the review next opens)")

        def answered(yes: bool | None) -> None:
            if yes:
                self.exit(message=message)

        self.push_screen(ConfirmScreen(f"A new revision of {names} is on its way. Quit once it is in?",
                                       yes="Quit when done", no="Stay"), answered)

    def get_system_commands(self, screen):
        yield from super().get_system_commands(screen)
        from textual.app import SystemCommand

        yield SystemCommand("Review: export approved patches", "to RUN_DIR/approved/<task>.patch", self.export_patches)
        yield SystemCommand("Review: export SWE-bench predictions", "RUN_DIR/approved/predictions.jsonl",
                            self.export_preds)
        yield SystemCommand("Review: apply approved patches", "to their tasks' repos, all or nothing",
                            self.apply_approved)
        yield SystemCommand("Review: make a branch per approved task", "dgym/<task> in each repo, never pushed",
                            self.make_branches)
        yield SystemCommand("Review: show undecided only", "toggle the filter", self.inbox.action_filter_undecided)

    def say(self, message: str, severity: str = "information") -> None:
        screen = self.screen
        if hasattr(screen, "say"):
            screen.say(message)
        if severity != "information":
            self.notify(one_line(message), severity=severity, title="Review", timeout=10, markup=False)

    def show_help(self) -> None:
        from textual.containers import Vertical, VerticalScroll
        from textual.widgets import Label

        from dgym_tui.ui.screens.help import HelpScreen

        class ReviewHelp(HelpScreen):
            def compose(self) -> ComposeResult:
                with Vertical():
                    yield Label("dgym-tui review — keys", classes="title")
                    with VerticalScroll(can_focus=True):
                        for title, bindings in self.sections:
                            yield Static(self.render_section(title, bindings), classes="section")
                    yield Label("Escape closes · ctrl+p: every command (exports, apply, branches)", classes="hint")

        self.push_screen(ReviewHelp([("The inbox", ReviewScreen.BINDINGS), ("A trial", TrialScreen.BINDINGS)]))

    # --- decisions --------------------------------------------------------------------------

    def decide(self, t: Trial, verdict: str, done) -> None:
        if (t.pending or t.id in self.reworking) and verdict == "approve":
            self.say(f"{t.id}: its new revision is being scored; approve once the score is in", "warning")
            return
        if verdict == "reject":
            from dgym_tui.ui.screens.modals import PromptScreen

            def got(note: str | None) -> None:
                if note is not None:
                    self._record(t, "reject", note, done)

            self.push_screen(PromptScreen(f"Reject {one_line(t.id)}: why? (the note is saved with the verdict)",
                                          placeholder="a note for the record"), got)
            return
        self._record(t, verdict, "", done)

    def _record(self, t: Trial, verdict: str, note: str, done) -> None:
        try:
            t.verdict = reviews.record(self.rundir.path, t.id, verdict, t.patch_sha256, note, revision=t.revision)
        except OSError as e:
            self.say(f"not recorded: {e}", "error")
            return
        self.say(f"{t.id}: {t.verdict_text}" + (f" ({note})" if note else ""))
        done(t)

    # --- edits, send-backs, replays (review/rework.py does the work) ------------------------

    def edit(self, t: Trial) -> None:
        from textual.widgets import Label

        from dgym_tui.ui.screens.code_editor import CodeEditorScreen

        class PatchEditor(CodeEditorScreen):
            def on_mount(self) -> None:
                self.query_one(".hint", Label).update("ctrl+s keeps it (scored again) · escape drops it")

        def got(text: str | None) -> None:
            if text is None or text == self.rundir.patch(t):
                self.say("the patch is unchanged")
                return
            self._rework("edit", t, patch=text)

        screen = PatchEditor(f"Edit the patch of {t.id} (scored again before it can be approved)",
                                  self.rundir.patch(t), path="patch.diff")
        self.push_screen(screen, got)

    def send_back(self, t: Trial) -> None:
        from dgym_tui.ui.screens.modals import PromptScreen

        def got(note: str | None) -> None:
            if note:
                self._rework("send-back", t, note=note)

        self.push_screen(PromptScreen(f"Send {one_line(t.id)} back to the agent: your hint",
                                      placeholder="what the agent should know or do differently",
                                      hint="The agent goes on from this trial's session with your hint; "
                                           "its new patch is scored again. Escape cancels."), got)

    def open_replay(self, t: Trial) -> None:
        from dgym_tui.review import rework

        session = self.rundir.session_path(t)
        if not session.is_file() or session.stat().st_size == 0:
            self.say(f"{t.id} has no session file to replay", "warning")
            return
        from textual.app import SuspendNotSupported

        from dgym_tui.sandbox.errors import SandboxError

        try:
            try:
                with self.suspend():  # the replay is the debugger app: it takes the terminal meanwhile
                    taken = rework.replay(self.rundir, t)
            except SuspendNotSupported:  # no terminal to hand over (a headless run): it runs as it is
                taken = rework.replay(self.rundir, t)
        except (rework.ReworkError, OSError, SandboxError) as e:
            self.say(f"{t.id}: the replay did not open: {e}", "error")
            return
        except Exception as e:  # ours, unforeseen: said in one line, and the inbox stays up
            self.say(f"{t.id}: the replay did not open: {type(e).__name__}: {e}", "error")
            return
        if taken is not None:
            self._rework("take-over", t, session_file=taken)
        else:
            self.say(f"back from {t.id}'s replay (no take-over: nothing new)")

    def _rework(self, origin: str, t: Trial, **kwargs) -> None:
        if t.id in self.reworking:
            self.say(f"{t.id}: a new revision is already on its way", "warning")
            return
        self.reworking.add(t.id)
        self.say(f"{t.id}: {origin}… (scoring in a fresh sandbox)")
        t.pending = "scoring…" if origin != "send-back" else "agent…"
        self.inbox.redraw_row(t)
        from dgym_tui.review import rework

        self._rework_worker(t, f"the {origin}", partial(
            rework.make_revision, self.rundir, t, origin, scorer=self.scorer, agent_runner=self.agent_runner,
            model=self.model, api_base=self.api_base, **kwargs))

    @work(thread=True, group="review-rework")
    def _rework_worker(self, t: Trial, what: str, make, close_trial: bool = True) -> None:
        """make() makes or scores a revision (blocking: an agent, a fresh sandbox) and returns its
        line; None when there was nothing to do (another process scores it: the poll shows it)."""
        from dgym_tui.review import rework

        try:
            message, severity = make(), "information"
        except rework.ReworkError as e:
            message, severity = f"{t.id}: {e}", "error"
        except Exception as e:  # ours, unforeseen: said in one line, and the inbox stays up
            message, severity = f"{t.id}: {what} failed: {type(e).__name__}: {e}", "error"
        self.call_from_thread(self._reworked, t, message, severity, close_trial)

    def _reworked(self, t: Trial, message: str | None, severity: str, close_trial: bool = True) -> None:
        if not self.is_running:  # it ended after the person quit (the score is saved): no screen to show it
            return
        self.reworking.discard(t.id)
        t.pending = None
        self.rundir.refresh(force=True)  # marks it again if a revision still waits for its score
        self.inbox.redraw()
        self.inbox.fill_diff_sizes()  # the new revision's +/- counts
        if message is not None:
            self.say(message, severity)
        if close_trial and isinstance(self.screen, TrialScreen):
            self.screen.dismiss()

    # --- out ----------------------------------------------------------------------------------

    def export_patches(self) -> None:
        self._export("patches")

    def export_preds(self) -> None:
        self._export("preds")

    def apply_approved(self) -> None:
        self._export("apply")

    def make_branches(self) -> None:
        self._export("branches")

    @work(thread=True, group="review-export")
    def _export(self, what: str) -> None:
        from dgym_tui.review import exports

        try:
            if what == "patches":
                written = exports.export_patches(self.rundir)
                message = f"{len(written)} approved patch(es) written to {self.rundir.path / exports.APPROVED}"
            elif what == "preds":
                path = self.rundir.path / exports.APPROVED / "predictions.jsonl"
                path.parent.mkdir(parents=True, exist_ok=True)
                message = f"{exports.export_preds(self.rundir, path)} prediction(s) written to {path}"
            elif what == "apply":
                done = exports.apply_approved(self.rundir)
                message = "; ".join(done) or "nothing to apply: no approved trial with a change"
            else:
                made = exports.make_branches(self.rundir)
                message = "; ".join(made) or "no approved trial with a change: no branch made"
            severity = "information"
        except (exports.ExportError, OSError) as e:
            message, severity = str(e), "error"
        self.call_from_thread(self.say, message, severity)
