"""Whether a seeker's answer rests on what it saw: the values it quotes, the places it names,
each checked against its own observations (the tool results it read), never against the model's
word.

A value is what an expression held, written as Python shows it: a number, a quoted string, a
list, dict or tuple, None/True/False, or an object's <repr>. It counts as quoted when it follows
`name =`, `name ==`, `name is` or `name was`, or stands alone in backticks. Prose is never a
value: the check is about the facts the fixer will act on.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_LITERAL = (r"-?\d+(?:\.\d+)?(?:e-?\d+)?|'[^'\n]*'|\"[^\"\n]*\"|\[[^\]\n]*\]|\{[^}\n]*\}|\([^)\n]*\)"
            r"|None|True|False|<[^>\n]+>")
# a literal ends where no word goes on and no decimal follows ("6.0:" is 6.0, never 6)
_ASSIGNED = re.compile(r"[\w\])'\"]\s*(?:==|=|\bis\b|\bwas\b)\s*`?(" + _LITERAL + r")`?(?!\w)(?!\.\d)")
_TICKED = re.compile(r"`([^`\n]+)`")
_WHOLE_LITERAL = re.compile(r"(?:" + _LITERAL + r")\Z")
_PLACE = re.compile(r"(?<![\w/.-])((?:[\w.-]+/)*[\w.-]+\.py):(\d+)")
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:e-?\d+)?\Z")

GROUNDED, UNGROUNDED, NO_VALUES, UNANSWERED = "grounded", "ungrounded", "no values", "unanswered"


@dataclass
class Grounding:
    status: str                                          # grounded | ungrounded | no values | unanswered
    values: list[str] = field(default_factory=list)      # the values the answer quotes
    unseen: list[str] = field(default_factory=list)      # those never in the observations
    places: list[str] = field(default_factory=list)      # file:line it names


def quoted_values(answer: str) -> list[str]:
    """The values an answer quotes, in order, each once (file:line places are not values)."""
    found: list[str] = []
    text = _PLACE.sub(" ", answer)
    for m in _ASSIGNED.finditer(text):
        found.append(m.group(1))
    for m in _TICKED.finditer(text):
        inner = m.group(1).strip()
        if _WHOLE_LITERAL.match(inner):
            found.append(inner)
    return list(dict.fromkeys(v.strip() for v in found if v.strip()))


def places(answer: str) -> list[str]:
    return list(dict.fromkeys(f"{m.group(1)}:{m.group(2)}" for m in _PLACE.finditer(answer)))


def _squeezed(text: str) -> str:
    return re.sub(r"\s+", "", text)


def seen(value: str, observations: str) -> bool:
    """The value appears in what was observed: a number as a whole number (5 is not in 15), any
    other literal with its spacing ignored (pdb's repr and the model's may space a list apart)."""
    if _NUMBER.match(value):
        return re.search(r"(?<![\w.])" + re.escape(value) + r"(?![\w])", observations) is not None
    if value in ("None", "True", "False"):
        return re.search(r"\b" + value + r"\b", observations) is not None
    squeezed = _squeezed(value)
    if squeezed in _squeezed(observations):
        return True
    if value[:1] in "'\"" and value[-1:] == value[:1]:  # a string quoted the other way round
        other = "'" if value[0] == '"' else '"'
        return _squeezed(other + value[1:-1] + other) in _squeezed(observations)
    return False


def check(answer: str, observations: list[str]) -> Grounding:
    """The answer against what its author saw."""
    if not answer.strip():
        return Grounding(UNANSWERED)
    values = quoted_values(answer)
    where = places(answer)
    if not values:
        return Grounding(NO_VALUES, places=where)
    everything = "\n".join(observations)
    unseen = [v for v in values if not seen(v, everything)]
    return Grounding(UNGROUNDED if unseen else GROUNDED, values, unseen, where)


def grounded_places(answers) -> list[str]:
    """The places the grounded ones of these SeekerAnswers named, each once, in order."""
    return list(dict.fromkeys(p for a in answers if a.grounding == GROUNDED for p in a.places))


def touched(patch: str, named: list[str], slack: int = 10) -> bool | None:
    """Whether a patch changes a place the seeker named: the same file, within `slack` lines of
    the line (None: it named no place, or nothing changed)."""
    if not named or not patch.strip():
        return None
    wanted: dict[str, list[int]] = {}
    for place in named:
        path, _, line = place.rpartition(":")
        wanted.setdefault(path.lstrip("./"), []).append(int(line))
    current = ""
    for line in patch.splitlines():
        if line.startswith("+++ "):
            current = line[4:].strip()
            current = current[2:] if current.startswith("b/") else current
        elif line.startswith("@@") and current:
            m = re.match(r"@@ -(\d+)(?:,(\d+))? ", line)
            if not m:
                continue
            start, count = int(m.group(1)), int(m.group(2) or 1)
            for path, lines in wanted.items():
                if current == path or current.endswith("/" + path) or path.endswith("/" + current):
                    if any(start - slack <= n <= start + count + slack for n in lines):
                        return True
    return False
