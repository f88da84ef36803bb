"""A Textual compositor that renders only the widgets a partial update can show.

Textual's Compositor._get_renders (textual 8.x, MIT) picks the widgets to render for an update
by whether the update's region overlaps each widget's *clip* (its container's region), not the
part of the widget inside it. A widget placed straight on the screen is clipped by the whole
screen, so every such widget (the footer, the status bar, every pane's container) is asked for all
its lines on every frame, to have them all thrown away: a step's frame repaints two source lines
and paid ~1 ms for ~17 widgets' cached lines. Here a widget is rendered only when its visible part
(its region within its clip) overlaps the update, and none behind the first widget that holds the
whole update; the frame's bytes are the same.
"""

from __future__ import annotations

from collections.abc import Iterable

from textual._compositor import Compositor
from textual.geometry import Region
from textual.strip import Strip


class CroppedCompositor(Compositor):
    def _get_renders(self, crop: Region | None = None) -> Iterable[tuple[Region, Region, list[Strip]]]:
        if not crop:
            yield from super()._get_renders(crop)
            return
        overlaps, intersection = crop.overlaps, Region.intersection
        for widget, (region, clip) in self.visible_widgets.items():
            visible = intersection(region, clip)
            if not overlaps(visible):
                continue  # nothing of it is in the update: its lines would all be dropped
            # As Textual does: the whole widget when it is not clipped, else its visible part.
            if clip.contains_region(region):
                lines = Region(0, 0, region.width, region.height)
            else:
                x, y, width, height = visible
                lines = Region(x - region.x, y - region.y, width, height)
            yield region, clip, widget.render_lines(lines)
            if intersection(region.shrink(widget.scrollbar_gutter), clip).contains_region(crop):
                # Widgets come front first, and each paints every cell of its region but its
                # scrollbars' gutter (the bars are widgets of their own, in either order): none
                # behind it can show in the update. A step's rows had the pane's container, the
                # panes' row and the screen rendered for nothing.
                return


def paint_now(screen, widget) -> bool:
    """Put `widget`'s pending repaint on the terminal now, as Textual would a few turns of its
    event loop later (widget idle -> Update to the screen -> screen idle -> its update timer:
    ~0.5-1 ms of a step on a busy machine). Only a plain repaint of a widget already on screen;
    anything needing layout or scrolling is left to Textual (False)."""
    if (screen.app._batch_count or not screen.is_current or not widget._repaint_required
            or screen._layout_required or screen._scroll_required or screen._recompose_required
            or screen._repaint_required or widget._layout_required or widget._scroll_required
            or widget not in screen._compositor.visible_widgets):
        return False
    widget._repaint_required = False  # its idle handler then has no Update left to send
    screen._dirty_widgets.add(widget)
    screen._compositor.update_widgets(screen._dirty_widgets)
    screen._compositor_refresh()  # renders the dirty regions and writes the frame
    return True
