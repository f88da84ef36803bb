"""Where code comes from: the repo's own, the debugger's machinery, or a library's; file names as
the host sees them; and the repo's modules imported from elsewhere (a notice for the person)."""

import bdb
import cmd
import glob
import importlib.util
import os
import sys

from . import state

# Stepping never stops in these modules (bdb's skip= patterns, matched on __name__): this
# package (its name differs inside the sandbox and on the host) and the machinery around it.
SKIP_MODULES = [__package__, __package__ + ".*", "bdb", "pdb", "cmd", "runpy", "importlib._bootstrap",
                "importlib._bootstrap_external", "pytest", "_pytest.*", "pluggy.*"]
# pdb's file by its spec: importing pdb here would load readline (see terminal.NoReadline).
HIDDEN_FILES = {os.path.abspath(f) for f in (
    *glob.glob(os.path.join(os.path.dirname(os.path.abspath(__file__)), "*.py")),
    bdb.__file__, importlib.util.find_spec("pdb").origin, cmd.__file__)}
HIDDEN_DIRS = []         # pytest/pluggy package dirs, filled in pytest mode
hidden_cache = {}


def is_hidden(frame):
    """Frames of the debugger machinery: never shown in "stack" nor selectable with up/down."""
    fn = frame.f_code.co_filename
    hit = hidden_cache.get(fn)
    if hit is None:
        if fn.startswith("<frozen "):
            hit = fn.startswith(("<frozen importlib", "<frozen runpy"))
        else:
            path = os.path.abspath(fn)
            hit = path in HIDDEN_FILES or path.startswith(tuple(HIDDEN_DIRS))
        hidden_cache[fn] = hit
    return hit


_in_root_cache = {}


def in_root(frame):
    """Code from the repo (not the stdlib, not site-packages outside it)."""
    fn = frame.f_code.co_filename
    hit = _in_root_cache.get(fn)
    if hit is None:
        r = rel(fn)
        hit = _in_root_cache[fn] = bool(r) and not r.startswith(("<", os.sep))
    return hit


def is_own(frame):
    """A frame of the repo's own code: in the root, neither a package installed in a folder of
    it (a .venv) nor the debugger's machinery."""
    if not in_root(frame) or is_hidden(frame):
        return False
    parts = frame.f_code.co_filename.split(os.sep)
    return "site-packages" not in parts and "dist-packages" not in parts


def collection_cause(exc):
    """pytest wraps an import that failed while collecting a test file in a CollectError raised
    from pytest's own code; the import's own exception is its cause."""
    cause = getattr(exc, "__cause__", None)
    if type(exc).__name__ == "CollectError" and isinstance(cause, BaseException) and cause.__traceback__:
        return cause
    return None


_rel_cache = {}


def rel(filename):
    """A file name for the host: relative to the repo root when inside it, else absolute.

    Absolute names are looked up once: realpath costs a system call per folder of the path, and
    every marker names each frame's file and scans sys.path (~0.1 ms a marker, before caching)."""
    if not filename or filename.startswith("<"):
        return filename
    hit = _rel_cache.get(filename)
    if hit is not None:
        return hit
    path = os.path.abspath(filename)
    root = state.ROOT
    for p, r in ((path, root), (os.path.realpath(path), os.path.realpath(root))):
        if p.startswith(r.rstrip(os.sep) + os.sep):
            path = os.path.relpath(p, r)
            break
    if os.path.isabs(filename) and len(_rel_cache) < 100_000:  # a relative one moves with chdir
        _rel_cache[filename] = path
    return path


# --- the repo's own modules, imported from elsewhere ------------------------------------------

_REPO_MODULES = {}       # top-level module name -> its path in the repo (relative)
_SCANNED = set()         # folders of the repo already looked at for modules
_WARNED = set()          # module names already reported


def _scan_for_modules():
    """The repo's importable top-level modules: in the root, in src/, and in every folder of the
    repo on sys.path (pytest and PYTHONPATH add some as the program runs)."""
    folders = [state.ROOT, os.path.join(state.ROOT, "src")]
    for entry in sys.path:
        path = os.path.abspath(entry or os.curdir)
        if rel(path) != path or path == state.ROOT:
            folders.append(path)
    for folder in folders:
        if folder in _SCANNED:
            continue
        _SCANNED.add(folder)
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            name = entry.name
            if name.endswith(".py"):
                module = name[:-3]
            elif os.path.isfile(os.path.join(entry.path, "__init__.py")):
                module = name
            else:
                continue
            if module.isidentifier() and not module.startswith(("test", "conftest", "setup", "_")):
                _REPO_MODULES.setdefault(module, rel(entry.path))


_checked_at = None       # (len(sys.modules), len(sys.path)) when last checked


def _check_foreign_imports():
    """A module the repo holds but that was imported from outside it (an installed copy, or a
    standard module the repo's file shadows): say so once, with the fix. Checked again only
    once a module was imported or a folder put on sys.path since (most steps do neither)."""
    global _checked_at
    now = (len(sys.modules), len(sys.path))
    if now == _checked_at:
        return
    _checked_at = now
    _scan_for_modules()
    for module, path in _REPO_MODULES.items():
        if module in _WARNED:
            continue
        loaded = sys.modules.get(module)
        where = getattr(loaded, "__file__", None) if loaded is not None else None
        if not where or rel(where) != os.path.abspath(where):
            continue  # not imported, built in, or the repo's own
        _WARNED.add(module)
        folder = os.path.dirname(path) or "."
        state.PENDING_NOTICES.append(
            f"{module} is imported from {os.path.abspath(where)}, not from the repo's {path}: breakpoints in the "
            f"repo's copy will not be hit (put its folder first: -e 'PYTHONPATH={folder} ...' before the command)")


def take_notices():
    _check_foreign_imports()
    notices = list(state.PENDING_NOTICES)
    del state.PENDING_NOTICES[:]
    return notices
