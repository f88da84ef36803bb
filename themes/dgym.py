"""dgym-tui's own Textual themes: a dark and a light one, registered on the app.

Actor colours follow the theme: the person is `primary`, the agent `secondary`, the system
`foreground` (muted), so the pdb console and transcript read the same in every theme.
"""

from __future__ import annotations

from textual.theme import Theme

DGYM_DARK = Theme(
    name="dgym-dark",
    primary="#59A6F2",      # the person
    secondary="#C792EA",    # the agent
    accent="#FFB454",       # current line, highlights
    warning="#E6B450",
    error="#F07178",
    success="#95D16A",
    foreground="#D5DCE6",
    background="#0E1218",
    surface="#141A22",
    panel="#1D2631",
    dark=True,
    variables={
        "footer-key-foreground": "#FFB454",
    },
)

DGYM_LIGHT = Theme(
    name="dgym-light",
    primary="#1F6FEB",
    secondary="#8250DF",
    accent="#BC4C00",
    warning="#9A6700",
    error="#CF222E",
    success="#1A7F37",
    foreground="#1F2328",
    background="#FAFAF7",
    surface="#F0F1ED",
    panel="#E1E4E8",
    dark=False,
    variables={
        "footer-key-foreground": "#BC4C00",
    },
)

THEMES: tuple[Theme, ...] = (DGYM_DARK, DGYM_LIGHT)
DEFAULT_THEME = DGYM_DARK.name
