"""One trial's evidence in the review: its score (the tests as scored in a fresh sandbox), the
agent's summary and its change, file by file, in the app's diff view (`v`: unified/split).
Everything shown came from the sandbox or the model: it goes through safe_text first."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static

from dgym_tui.core.safe_text import one_line, visible
from dgym_tui.review.inbox import Trial
from dgym_tui.review.patch_files import file_changes
from dgym_tui.ui.widgets.diff_view import DiffView

STATUS_STYLE = {"resolved": "bold green", "unresolved": "bold red", "limit": "bold yellow", "error": "bold magenta"}
TEST_STYLE = {"passed": "green", "failed": "red", "error": "magenta", "missing": "yellow", "skipped": "dim"}
MAX_TESTS = 40  # per list; the rest counted


class ReviewDetail(VerticalScroll, can_focus=True):
    DEFAULT_CSS = """
    ReviewDetail { height: 1fr; padding: 0 1; }
    ReviewDetail > .detail-part { margin-bottom: 1; }
    ReviewDetail > DiffView { margin-bottom: 1; max-height: 1000; }
    """

    def __init__(self, trial: Trial, patch: str, **kwargs) -> None:
        super().__init__(**kwargs)
        self.trial, self.patch = trial, patch

    def compose(self) -> ComposeResult:
        yield Static(self.render_heading(), classes="detail-part", id="detail-heading")
        yield Static(self.render_tests(), classes="detail-part", id="detail-tests")
        yield Static(self.render_summary(), classes="detail-part", id="detail-summary")
        changes = file_changes(self.patch)
        if not changes:
            yield Static(Text("(the agent changed nothing)", style="dim"), classes="detail-part")
        for path, _before, _after in changes:
            yield Static(Text(one_line(path), style="bold"), classes="detail-file")
            yield DiffView()

    def on_mount(self) -> None:
        for view, (path, before, after) in zip(self.query(DiffView), file_changes(self.patch)):
            view.show(path, before, after)

    def toggle_layout(self) -> None:
        for view in self.query(DiffView):
            view.action_toggle_layout()

    def render_heading(self) -> Text:
        t, r = self.trial, self.trial.result
        out = Text()
        out.append(one_line(t.id), style="bold")
        out.append("  ")
        out.append(one_line(t.status), style=STATUS_STYLE.get(t.status, ""))
        if t.revision:
            out.append(f"  revision {t.revision} ({t.origin})", style="italic")
        out.append(f"\n{one_line(str(r.reason or ''))}")
        cost = "?" if t.cost is None else f"${t.cost:.4f}"
        out.append(f"\nsteps {t.steps if t.steps is not None else '?'} · cost {cost} · agent ended: "
                   f"{one_line(str(r.outcome or '?'))}", style="dim")
        if t.verdict is not None:
            note = f" — {one_line(t.verdict.note)}" if t.verdict.note else ""
            out.append(f"\nverdict: {t.verdict_text} by {one_line(t.verdict.who)} at {t.verdict.when}{note}")
        return out

    def render_tests(self) -> Table:
        r = self.trial.result
        table = Table(box=None, show_header=False, padding=(0, 1), expand=True, title_justify="left",
                      title=Text(self._counts(), style="bold"))
        table.add_column(width=10, no_wrap=True)
        table.add_column(ratio=1)
        for label, tests in (("FAIL→PASS", r.fail_to_pass), ("PASS→PASS", r.pass_to_pass)):
            if not isinstance(tests, dict) or not tests:
                continue
            table.add_row(Text(label, style="bold"), "")
            items = sorted(tests.items(), key=lambda kv: (kv[1] == "passed", kv[0]))
            for name, outcome in items[:MAX_TESTS]:
                table.add_row(Text(one_line(str(outcome)), style=TEST_STYLE.get(str(outcome), "")),
                              Text(one_line(str(name))))
            if len(items) > MAX_TESTS:
                table.add_row("", Text(f"… and {len(items) - MAX_TESTS} more", style="dim"))
        return table

    def _counts(self) -> str:
        r = self.trial.result
        parts = []
        for label, c in (("before", r.tests_before), ("scored", r.tests_after)):
            if isinstance(c, dict):
                parts.append(f"{label}: {c.get('passed', 0)} passed, {c.get('failed', 0)} failed, "
                             f"{c.get('errors', 0)} errors")
        reverted = r.reverted or []
        if reverted:
            parts.append(f"test files reverted before scoring: {', '.join(map(str, reverted))}")
        return "Tests — " + (" · ".join(parts) if parts else "no test counts recorded")

    def render_summary(self) -> Text:
        summary = self.trial.summary.strip()
        out = Text("Agent's summary\n", style="bold")
        out.append(visible(summary) if summary else "(none: the agent did not submit)",
                   style="" if summary else "dim")
        return out
