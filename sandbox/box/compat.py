"""What the box needs from Pythons older than the newest it runs on (CPython 3.6 to 3.13): one
name per difference, so the other modules read as if every Python had it."""

import io
import os
import sys

PY = sys.version_info[:2]


def open_code(path):
    """io.open_code (3.8+: lets an audit hook see the program's code being read)."""
    opener = getattr(io, "open_code", None)
    return opener(path) if opener is not None else open(path, "rb")


def register_at_fork(after_in_child):
    """os.register_at_fork (3.7+). On 3.6 a forked child is not told: it keeps tracing, and
    interaction() still never prompts there (state.is_main)."""
    register = getattr(os, "register_at_fork", None)
    if register is not None:
        register(after_in_child=after_in_child)


def safe_path():
    """python -P / PYTHONSAFEPATH (3.11+): sys.path[0] is not the program's folder."""
    return bool(getattr(sys.flags, "safe_path", False))
