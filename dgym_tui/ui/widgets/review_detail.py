"""One trial's evidence in the review: its score (the tests as scored in a fresh sandbox), the
agent's summary and its change, file by file, in the app's diff view (`v`: unified/split). An open
issue's trial shows the issue, its reproduction (each test at the base and with the fix, as the
harness ran them) and the change in two parts: the reproduction test, then the fix.
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

STATUS_STYLE = {"resolved": "bold green", "unresolved": "bold red", "limit": "bold yellow", "no-reproduction": "bold cyan",
                "error": "bold magenta"}
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
        changes = self.changes()
        if not changes:
            yield Static(Text("(the agent changed nothing)", style="dim"), classes="detail-part")
        part = None
        for heading, path, _before, _after in changes:
            if heading and heading != part:
                part = heading
                yield Static(Text(heading, style="bold underline"), classes="detail-part detail-section")
            yield Static(Text(one_line(path), style="bold"), classes="detail-file")
            yield DiffView()

    def changes(self) -> list[tuple[str, str, str, str]]:
        """(part, path, before, after) per file: an issue's reproduction test first, then its fix."""
        changes = file_changes(self.patch)
        evidence = self.trial.result.reproduction
        if evidence is None:
            return [("", path, before, after) for path, before, after in changes]
        tests = set(evidence.get("files") or [])
        return ([("Reproduction test", *c) for c in changes if c[0] in tests]
                + [("Fix", *c) for c in changes if c[0] not in tests])

    def on_mount(self) -> None:
        for view, (_part, path, before, after) in zip(self.query(DiffView), self.changes()):
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
        issue = r.issue
        if issue:
            out.append(f"\nIssue #{issue.get('number')}: {one_line(str(issue.get('title') or ''))}", style="bold")
            if issue.get("url"):
                out.append(f"  {one_line(str(issue['url']))}", style="underline")
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
        if r.reproduction is not None:
            return self.render_reproduction()
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

    def render_reproduction(self) -> Table:
        """An issue's evidence, as the harness ran it: each reproduction test at the base (the
        patch's tests alone) and with the fix."""
        r = self.trial.result
        evidence = r.reproduction or {}
        title = ("Reproduction — " + self._counts().removeprefix("Tests — ")) if evidence.get("reproduced") else \
            "No reproduction: no test of the patch fails at the base"
        table = Table(box=None, padding=(0, 1), expand=True, title_justify="left", title=Text(title, style="bold"))
        table.add_column("test", ratio=1)
        table.add_column("at the base", no_wrap=True)
        table.add_column("with the fix", no_wrap=True)
        tests = list(evidence.get("before") or {})
        for name in tests[:MAX_TESTS]:
            before, after = str(evidence["before"].get(name, "?")), str((evidence.get("after") or {}).get(name, "?"))
            shown = Text(one_line(name), style="" if name in (evidence.get("tests") or []) else "dim")
            table.add_row(shown, Text(before, style=TEST_STYLE.get(before, "")), Text(after, style=TEST_STYLE.get(after, "")))
        if not tests:
            files = ", ".join(evidence.get("files") or []) or "none"
            table.add_row(Text(f"test files the patch changes: {one_line(files)}", style="dim"), "", "")
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
