"""A change to one file, syntax-coloured, unified or side by side (`v` toggles)."""

from __future__ import annotations

from rich.style import Style
from rich.text import Text
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.widgets import Static

from dgym_tui.ui.widgets import diff_model
from dgym_tui.ui.widgets.diff_model import Row, Tokens


class DiffView(VerticalScroll, can_focus=True):
    DEFAULT_CSS = """
    DiffView { height: auto; max-height: 100%; background: $panel; padding: 0 1; }
    DiffView > Static { width: auto; }
    """
    BINDINGS = [Binding("v", "toggle_layout", "Unified/side by side",
                        tooltip="show the change unified or side by side")]

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.before = self.after = ""
        self.path: str | None = None
        self.side_by_side = False

    def compose(self):
        yield Static(id="diff-text")

    def on_mount(self) -> None:
        self.app.theme_changed_signal.subscribe(self, lambda _theme: self._draw())

    def show(self, path: str | None, before: str, after: str) -> None:
        self.path, self.before, self.after = path, before, after
        self._draw()

    def action_toggle_layout(self) -> None:
        self.side_by_side = not self.side_by_side
        self._draw()

    def rows(self) -> list[Row]:
        layout = diff_model.side_by_side if self.side_by_side else diff_model.unified
        return layout(self.before, self.after, self.path)

    def render_text(self, width: int | None = None) -> Text:
        rows = self.rows()
        if not rows:
            return Text("(no change)")
        digits = max(3, len(str(max(len(self.before.splitlines()), len(self.after.splitlines()), 1))))
        out = Text()
        if self.side_by_side:
            column = max(20, ((width or self.size.width or 100) - 2 * digits - 7) // 2)
            for row in rows:
                if row.kind == "hunk":
                    out.append(row.text + "\n", style=self._color("accent", "dim"))
                    continue
                left_kind = {"change": "del", "del": "del", "same": "same"}.get(row.kind)
                right_kind = {"change": "add", "add": "add", "same": "same"}.get(row.kind)
                self._cell(out, row.old_no, row.old, left_kind, digits, column)
                out.append(" │ ", style="dim")
                self._cell(out, row.new_no, row.new, right_kind, digits, column)
                out.append("\n")
        else:
            for row in rows:
                if row.kind == "hunk":
                    out.append(row.text + "\n", style=self._color("accent", "dim"))
                    continue
                number = row.new_no if row.kind == "add" else row.old_no
                sign = {"del": "-", "add": "+"}.get(row.kind, " ")
                tokens = row.new if row.kind == "add" else row.old
                background = self._background(row.kind)
                out.append(f"{number or '':>{digits}} {sign} ", style=Style(dim=True, bgcolor=background))
                self._tokens(out, tokens or [], background)
                out.append("\n")
        out.rstrip()
        return out

    def _cell(self, out: Text, number, tokens: Tokens | None, kind: str | None, digits: int, width: int) -> None:
        background = self._background(kind) if kind else None
        if tokens is None:
            out.append(" " * (digits + 1 + width), style=Style(bgcolor=background))
            return
        out.append(f"{number:>{digits}} ", style=Style(dim=True, bgcolor=background))
        cell = Text()
        self._tokens(cell, tokens, background)
        cell.truncate(width, overflow="ellipsis", pad=True)
        cell.stylize(Style(bgcolor=background))
        out.append_text(cell)

    def _tokens(self, out: Text, tokens: Tokens, background) -> None:
        for ttype, value in tokens:
            out.append(value, style=self._token_style(ttype) + Style(bgcolor=background))

    def _background(self, kind: str | None):
        if kind == "del":
            return self._color("error", None, alpha=0.25)
        if kind == "add":
            return self._color("success", None, alpha=0.25)
        return None

    def _color(self, name: str, fallback, alpha: float | None = None):
        from textual.color import Color

        value = self.app.theme_variables.get(name) if self.is_mounted else None
        if value is None:
            return fallback
        if alpha is None:
            return value
        base = Color.parse(self.app.theme_variables.get("panel", "#000000"))
        return Color.parse(value).blend(base, 1 - alpha).hex

    def _token_style(self, ttype) -> Style:
        if ttype is None:
            return Style()
        from pygments.styles import get_style_by_name

        dark = not self.is_mounted or self.app.current_theme.dark
        style = get_style_by_name("monokai" if dark else "friendly")
        while ttype is not None and ttype not in style.styles:
            ttype = ttype.parent
        spec = style.style_for_token(ttype) if ttype is not None else {}
        color = spec.get("color")
        return Style(color=f"#{color}" if color else None, bold=spec.get("bold") or None,
                     italic=spec.get("italic") or None)

    def _draw(self) -> None:
        if self.is_mounted:
            self.query_one("#diff-text", Static).update(self.render_text())
