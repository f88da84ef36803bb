"""The main screen's compositor (dgym_tui/ui/compositor.py): a partial update renders only the
widgets it can show, and its frame is byte for byte what Textual's own compositor makes."""

from __future__ import annotations

import pytest
from textual._compositor import Compositor
from textual.app import App, ComposeResult
from textual.containers import Horizontal
from textual.screen import Screen
from textual.widgets import Footer, Label, Static

from dgym_tui.ui.compositor import CroppedCompositor, paint_now
from dgym_tui.ui.widgets.source_view import SourceView

SOURCE = "".join(f"value_{n} = {n} * 2  # line {n}\n" for n in range(1, 200))


class Panes(Screen):
    """Laid out like the main screen: a bar on top, the tree, the source and a log side by side
    in one container, a footer."""

    BINDINGS = [("q", "quit", "Quit")]

    def __init__(self) -> None:
        super().__init__()
        self._compositor = CroppedCompositor()

    def compose(self) -> ComposeResult:
        yield Label("status bar", id="bar")
        with Horizontal():
            yield Static("tree\n" * 30, id="tree")
            yield SourceView()
            yield Static("(Pdb) n\n" * 30, id="log")
        yield Footer()


class PanesApp(App):
    CSS = "#bar { dock: top; } #tree { width: 20; } SourceView { width: 1fr; } #log { width: 30; }"

    def get_default_screen(self) -> Screen:
        return Panes()


def frame(screen: Screen, cls: type[Compositor], dirty) -> str:
    """The escape sequences a partial update of `dirty` sends, made by compositor class `cls`."""
    compositor = screen._compositor
    compositor.__class__ = cls
    try:
        compositor._dirty_regions.clear()
        compositor._dirty_regions.update(dirty)
        update = compositor.render_partial_update()
        return update.render_segments(screen.app.console)
    finally:
        compositor.__class__ = CroppedCompositor


@pytest.mark.asyncio
async def test_a_step_renders_the_source_view_alone_and_the_same_bytes():
    app = PanesApp()
    async with app.run_test(size=(100, 40)) as pilot:
        view = app.query_one(SourceView)
        view.load("big.py", SOURCE)
        await pilot.pause()
        rendered: list[str] = []
        for widget in app.screen.walk_children():
            original = widget.render_lines

            def spy(crop, widget=widget, original=original):
                rendered.append(type(widget).__name__)
                return original(crop)

            widget.render_lines = spy
        screen = app.screen
        area = view.region
        for old, new in [(4, 5), (5, 30), (30, 31)]:  # a step, a step to a line far down, a step
            view.set_current("big.py", new)
            await pilot.pause()
            # two rows of the source view as a step dirties them (its text, not its scrollbar):
            # the view alone is rendered, nothing behind it, and the bytes are the same
            text_width = view.size.width - view.scrollbar_gutter.right
            rows = [area._replace(y=area.y + old % area.height, height=1, width=text_width),
                    area._replace(y=area.y + new % area.height, height=1, width=text_width)]
            rendered.clear()
            ours = frame(screen, CroppedCompositor, rows)
            assert rendered == ["SourceView"], rendered
            assert ours == frame(screen, Compositor, rows)
            # the same rows with the scrollbar's cells: the bar is drawn too, the same bytes
            dirty = [row._replace(width=area.width) for row in rows]
            rendered.clear()
            ours = frame(screen, CroppedCompositor, dirty)
            assert "SourceView" in rendered
            assert not {"Footer", "Label", "Static"} & set(rendered), rendered
            assert ours == frame(screen, Compositor, dirty)
        # the whole screen: the same bytes (a full update is Textual's own)
        full = [screen.size.region]
        assert frame(screen, CroppedCompositor, full) == frame(screen, Compositor, full)
        # the footer's row renders the footer, not the panes above it
        footer = [app.query_one(Footer).region]
        rendered.clear()
        ours = frame(screen, CroppedCompositor, footer)
        assert "Footer" in rendered and not {"SourceView", "Static"} & set(rendered), rendered
        assert ours == frame(screen, Compositor, footer)


@pytest.mark.asyncio
async def test_a_step_repaints_only_the_source_views_own_cells_even_with_long_lines():
    """The source view's rows are repainted within its own width: a file wider than the view
    does not make a step repaint the panes to its right (Textual clips a widget's dirty region
    to its container, not to the widget)."""
    app = PanesApp()
    async with app.run_test(size=(100, 40)) as pilot:
        view = app.query_one(SourceView)
        view.load("wide.py", "".join(f"x_{n} = '{'w' * 150}'\n" for n in range(1, 80)))
        await pilot.pause(0.2)
        compositor = app.screen._compositor
        painted: list[set] = []
        render = compositor.render_partial_update

        def spy():
            painted.append(set(compositor._dirty_regions))
            return render()

        compositor.render_partial_update = spy
        for line in (3, 4, 20):
            view.set_current("wide.py", line)
            await pilot.pause()
        regions = set().union(*painted)
        assert regions, "nothing was painted"
        log = app.query_one("#log").region
        assert any(view.region.contains_region(region) for region in regions), regions
        assert not [r for r in regions if r.overlaps(log)], [r for r in regions if r.overlaps(log)]


@pytest.mark.asyncio
async def test_paint_now_draws_a_plain_repaint_at_once_and_leaves_layout_to_textual():
    app = PanesApp()
    async with app.run_test(size=(100, 40)) as pilot:
        view = app.query_one(SourceView)
        view.load("big.py", SOURCE)
        await pilot.pause()
        screen = app.screen
        compositor = screen._compositor
        frames: list[set] = []
        render = compositor.render_update

        def spy(*args, **kwargs):
            if compositor._dirty_regions:  # (an update with nothing dirty writes nothing)
                frames.append(set(compositor._dirty_regions))
            return render(*args, **kwargs)

        compositor.render_update = spy
        view.set_current("big.py", 6)
        assert paint_now(screen, view) is True
        assert len(frames) == 1 and frames[0], "the two rows were rendered there and then"
        assert all(view.region.contains_region(region) for region in frames[0])
        assert "▶" in view.render_line(5 - int(view.scroll_offset.y)).text
        assert paint_now(screen, view) is False  # nothing left to paint
        await pilot.pause()
        # the rows' text was not drawn again (the footer or the view's scrollbar may settle meanwhile)
        text = view.scrollable_content_region
        rows = [row.intersection(text) for row in frames[0]]
        later = [r.intersection(text) for frame in frames[1:] for r in frame if r.intersection(text).area]
        assert not [r for r in later if any(r.overlaps(row) for row in rows)], "the rows were drawn twice"
        # a change that needs layout is Textual's to do
        view.set_current("big.py", 7)
        view.refresh(layout=True)
        assert paint_now(screen, view) is False
        drawn = len(frames)
        await pilot.pause()
        assert len(frames) > drawn
