"""Slots: a cheap placeholder in the first frame, replaced by its widget just after it.

Importing and styling Textual's heavier widgets is most of what the first frame costs; a slot
keeps the widget's place (and border titles) in that frame, so the layout does not move when the
widget comes.
"""

from __future__ import annotations

from textual.widget import Widget


async def fill_slot(slot: Widget, widget: Widget) -> None:
    """Mount `widget` where `slot` stands, with its border titles, and remove the slot (first:
    the widget may take the slot's id)."""
    parent = slot.parent
    position = parent.children.index(slot)
    widget.border_title, widget.border_subtitle = slot.border_title, slot.border_subtitle
    await slot.remove()
    await parent.mount(widget, before=position)
