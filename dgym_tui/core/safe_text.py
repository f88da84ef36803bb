"""Text from the sandbox or the model, made safe for a person's terminal.

Program output, reprs, file names, exception text and the agent's words are untrusted: an
escape sequence in them could retitle, clear or reprogram the terminal that shows them. Every
view (and the headless printer) passes such text through `visible()`, which swaps each control
character for a visible one-cell stand-in, so columns stay put and nothing is lost.
"""

from __future__ import annotations

import re

# C0/C1 controls except tab and newline, DEL, bidi controls (they reorder what is shown: "Trojan
# Source") and lone surrogates (unencodable).
UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
_UNSAFE_ONE_LINE = re.compile(UNSAFE.pattern[:-1] + "\t\n]")


def _stand_in(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code < 0x20:
        return chr(0x2400 + code)  # control pictures: ␀ … ␟ (␛ for ESC)
    return "\u2421" if code == 0x7F else "\ufffd"


def visible(text: str) -> str:
    """The text with every unsafe character shown as a stand-in (tabs and newlines kept)."""
    return UNSAFE.sub(_stand_in, text) if UNSAFE.search(text) else text


def one_line(text: str) -> str:
    """Like visible(), for a single-line place (a file name, a title): newlines and tabs too."""
    return _UNSAFE_ONE_LINE.sub(_stand_in, text) if _UNSAFE_ONE_LINE.search(text) else text
