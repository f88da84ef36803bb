"""Which pygments lexer colours a file, chosen by its name among pygments' own lexers.

pygments' get_lexer_for_filename also loads every lexer plugin installed in the environment to
compare their file patterns, and compiles all ~900 of its patterns as regular expressions: with
IPython installed (its plugin imports IPython) the first lookup took ~0.5 s of CPU, in a thread
that shared the interpreter with the UI while the person stepped through the first stop. Here
only pygments' built-in lexers are considered (a plugin-only file type shows as plain text), and
a pattern like `*.py` is an `endswith`; the few with other wildcards go through fnmatch. Between
several matches the choice is pygments' own when no code is given: the lexer's priority, a
pattern without `*` first, then the class name.
"""

from __future__ import annotations

import fnmatch
import os
import threading
from typing import Any

_CLASSES: dict[str, Any] = {}  # file name -> lexer class (None: plain text)
_LOCK = threading.Lock()       # the source view asks from a worker thread, the diff view from the UI


def _matches(name: str, pattern: str) -> bool:
    rest = pattern[1:] if pattern.startswith("*") else pattern
    if not any(c in rest for c in "*?["):
        return name.endswith(rest) if pattern.startswith("*") else name == pattern
    return fnmatch.fnmatchcase(name, pattern)


def _find_class(name: str) -> Any:
    from pygments.lexers import find_lexer_class, get_all_lexers

    candidates = []
    for lexer_name, _aliases, patterns, _mimetypes in get_all_lexers(plugins=False):
        for pattern in patterns:
            if _matches(name, pattern):
                cls = find_lexer_class(lexer_name)  # a built-in name: found before any plugin is loaded
                if cls is not None:
                    candidates.append((cls.priority + (0.5 if "*" not in pattern else 0), cls.__name__, cls))
    if not candidates:
        return None
    cls = max(candidates, key=lambda c: c[:2])[2]
    return None if cls.name == "Text only" else cls


def lexer_for(path: str, **options) -> Any:
    """A new lexer (pygments options as given) for the file's name; None for plain text."""
    name = os.path.basename(path)
    with _LOCK:
        if name not in _CLASSES:
            try:
                _CLASSES[name] = _find_class(name)
            except Exception:  # a lexer module that fails to import: plain text, not a crash
                _CLASSES[name] = None
        cls = _CLASSES[name]
    return None if cls is None else cls(**options)


def known(path: str) -> bool:
    """The lexer for this file's name has been looked up already (lexer_for is quick)."""
    return os.path.basename(path) in _CLASSES
