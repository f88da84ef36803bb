"""The main screen's debugger actions (the key map's `b`, `B`, `L`, `t`, `[`...): each asks what
it needs (the cursor line, a prompt) and queues one session call through `app.calls`; its answer
comes back as a notification or a note in the console. Part of MainScreen (a mixin): it reads
the screen's `source`, `state` and `console`."""

from __future__ import annotations

from textual.actions import SkipAction


class DebuggerActions:
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
            self.app.calls.toggle_breakpoint(where[0], where[1], self._breakpoint_done)

    def action_conditional_breakpoint(self) -> None:
        where = self._cursor()
        if where is None:
            return
        existing = next((bp for bp in self.state.breakpoints if (bp.file, bp.line) == where), None)

        def ask(cond: str | None) -> None:
            if cond:  # the core changes an existing breakpoint's condition in place
                self.app.calls.set_breakpoint(where[0], where[1], cond, done=self._breakpoint_done)

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
                self.app.calls.set_breakpoint(where[0], where[1], **{field: value}, done=self._breakpoint_done)

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
                self.app.calls.watch(expr.strip(), self._breakpoint_done)

        from dgym_tui.ui.screens.modals import PromptScreen

        self.app.push_screen(PromptScreen("Watch expression", placeholder="e.g. cart.total() or len(items)",
                                          hint="shown in the variables pane at every stop"), ask)

    def action_data_breakpoint(self) -> None:
        def ask(expr: str | None) -> None:
            if expr and expr.strip():
                self.app.calls.data_breakpoint(expr.strip(), self._pdb_done)

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
                self.app.calls.back_to(index, self._stepped_back)

        self.app.push_screen(StopHistoryScreen(stops), chosen)

    def _stepped_back(self, verdict: str) -> None:
        self.notify(verdict, title="Step back", severity="information" if verdict.startswith("Back at") else "warning",
                    timeout=8)

    def on_variables_pane_unwatch_requested(self, event) -> None:
        self.app.calls.unwatch(event.expr, self._breakpoint_done)

    def _breakpoint_done(self, message: str) -> None:
        message = (message or "").strip()
        if message.startswith("***"):
            self.notify(message.removeprefix("***").strip(), severity="warning", title="Breakpoint")
        elif "will be set" in message:  # no pdb running: the core kept it for the next start
            self.console.show_note(message)

    def action_restart_program(self) -> None:
        self.app.calls.restart()

    def action_run_to_cursor(self) -> None:
        where = self._cursor()
        if where:
            self.app.calls.run_to(where[0], where[1], self._pdb_done)

    def _pdb_done(self, result) -> None:
        error = getattr(result, "error", None)
        if error:
            self.notify(error.removeprefix("***").strip(), severity="warning")

    def action_interrupt(self) -> None:
        if not self.app.busy:
            raise SkipAction()  # nothing running: ctrl+c copies, as Textual's inputs expect
        self.app.interrupt()

    def action_clear_breakpoints(self) -> None:
        self.app.calls.clear_breakpoints()
