"""Where the main screen's panes go: a grid whose columns and rows follow the pane sizes, the
hidden panes and the terminal's size (below 100x30 the side panes fold into tabs); which pane has
the focus, and the keys that resize, zoom and show them. Part of MainScreen (a mixin): it reads
the screen's `hidden`, `sizes`, `active_tab` and `state`, and sets `compact`."""

from __future__ import annotations

COMPACT_WIDTH, COMPACT_HEIGHT = 100, 30
SIDE_PANES = ("tree", "agent", "transcript", "variables", "stack")  # the ones that fold into tabs
PANE_TITLES = {"tree": "Files", "source": "Source", "console": "pdb", "transcript": "Transcript",
               "variables": "Variables", "stack": "Stack", "agent": "Agent"}


class PaneLayout:
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
        # At once, not on the next tick (Widget.focus): keys typed right after this one (`!p x⏎`)
        # are already queued, and must reach the pane they were typed for.
        self.set_focus(target)

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
