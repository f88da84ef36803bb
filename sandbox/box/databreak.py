"""Data breakpoints: stop where a watched value changes, with its old and new values and the line
that changed it. sys.monitoring's LINE and PY_RETURN events on 3.12+ (cheap: lines outside the repo
are disabled), the debugger's settrace before 3.12 (DgymPdb._dgym_trace_data)."""

import os
import sys
import threading

from . import origins, state
from .origins import rel
from .reprs import safe_repr

class _Unreadable:
    """A data breakpoint's expression could not be read (a deleted key, a local not yet set)."""

    def __init__(self, why):
        self.why = why

    def __eq__(self, other):
        return isinstance(other, _Unreadable) and other.why == self.why

    def __repr__(self):
        return f"<{self.why}>"


_SNAPSHOT = {list: list, dict: dict, set: set, bytearray: bytes}
DBREAKS = []             # the data breakpoints, in the order set
_NEXT_NUMBER = [1]
PAUSED = False           # the debugger is at its prompt: the program's changes are not ours
PREV = [None]            # (file, line) of the last line seen running: what made a change
MAIN_THREAD = None       # data breakpoints are checked in the program's main thread only
MONITOR_ID = None        # our sys.monitoring tool (3.12+); None: the settrace fallback
_own_code = {}           # code object -> its lines are checked (repo code, or a watched frame's)


class DataBreakpoint:
    """Stop when EXPR's value changes. Its scope: "frame" (an expression over the locals of the
    frame it was set in, checked at that frame's lines until it returns), "object" (an attribute
    or item of an object fetched once: checked at every line of the repo's code) or "global" (a
    module-level name, same)."""

    def __init__(self, expr, frame):
        import ast
        self.number = _NEXT_NUMBER[0]
        self.expr, self.frame = expr, None
        self.where = f"{rel(frame.f_code.co_filename)}:{frame.f_lineno} in {frame.f_code.co_name}"
        tree = ast.parse(expr.strip(), mode="eval").body
        g, local_ns = frame.f_globals, frame.f_locals

        def part(node):
            return eval(compile(ast.Expression(node), "<dbreak>", "eval"), g, local_ns)

        if isinstance(tree, ast.Attribute):
            base, attr = part(tree.value), tree.attr
            self.scope, self.read = "object", lambda: getattr(base, attr)
        elif isinstance(tree, ast.Subscript):
            base, key = part(tree.value), part(tree.slice)
            self.scope, self.read = "object", lambda: base[key]
        elif isinstance(tree, ast.Name) and (local_ns is g or tree.id not in _local_names(frame.f_code)):
            name = tree.id
            self.scope, self.read = "global", lambda: g[name]
        else:
            code = compile(expr.strip(), "<dbreak>", "eval")
            self.scope, self.frame = "frame", frame
            self.read = lambda: eval(code, frame.f_globals, frame.f_locals)
        self.value = self.get()
        if isinstance(self.value, _Unreadable) and self.scope != "frame":  # a local not yet set: news
            raise ValueError(f"cannot read {expr} here: {self.value.why}")
        self.snap = self._snapshot(self.value)
        _NEXT_NUMBER[0] += 1

    def get(self):
        try:
            return self.read()
        except Exception as e:
            return _Unreadable(f"{type(e).__name__}: {e}")

    @staticmethod
    def _snapshot(value):
        copy = _SNAPSHOT.get(type(value))  # a list changed in place is the same object
        return copy(value) if copy is not None else None

    def changed(self, new):
        old = self.value
        try:
            if new is old:
                return self.snap is not None and bool(new != self.snap)
            if isinstance(new, _Unreadable) or isinstance(old, _Unreadable):
                return new != old
            return bool(new != old)
        except Exception:  # a value that cannot be compared (an array): by identity
            return new is not old

    @staticmethod
    def shown(value):
        return safe_repr(value)

    def status(self):
        return {"number": self.number, "expr": self.expr, "scope": self.scope, "where": self.where,
                "value": self.shown(self.value)}


def _local_names(code):
    return set(code.co_varnames) | set(code.co_cellvars) | set(code.co_freevars)


def rebase():
    """Leaving the prompt: what the person changed there (`!cart.total = 0`) is the new value,
    not a change for the data breakpoints to stop at."""
    for db in DBREAKS:
        db.value = db.get()
        db.snap = db._snapshot(db.value)


def code_is_checked(code):
    hit = _own_code.get(code)
    if hit is None:
        fn = code.co_filename
        r = rel(fn)
        parts = fn.split(os.sep)
        hit = (bool(r) and not r.startswith(("<", os.sep)) and os.path.abspath(fn) not in origins.HIDDEN_FILES
               and "site-packages" not in parts and "dist-packages" not in parts)
        _own_code[code] = hit
    return hit


def check_data(frame, line):
    """At a line about to run: did a watched value change since the last line? Returns the
    change (a dict for the marker) or None."""
    prev = PREV[0]
    PREV[0] = (frame.f_code.co_filename, line)
    for db in DBREAKS:
        if db.frame is not None and db.frame is not frame:
            continue
        new = db.get()
        if db.changed(new):
            before = db.snap if new is db.value and db.snap is not None else db.value  # changed in place
            change = {"number": db.number, "expr": db.expr, "old": db.shown(before), "new": db.shown(new),
                      "by": f"{rel(prev[0])}:{prev[1]}" if prev else None}
            db.value, db.snap = new, db._snapshot(new)
            return change
    return None


def frame_returned(frame):
    """A frame-scoped data breakpoint ends with its frame."""
    for db in list(DBREAKS):
        if db.frame is frame:
            DBREAKS.remove(db)
            state.PENDING_NOTICES.append(f"data breakpoint {db.number} ({db.expr}) ended: "
                                         f"{frame.f_code.co_name}() returned")
    update_events()
    dbg = state.ACTIVE
    if (not DBREAKS and MONITOR_ID is None and dbg is not None and not dbg.breaks
            and dbg.stoplineno == -1):  # settrace fallback, running on after `c`: no more tracing
        sys.settrace(None)


def _on_line(code, line):
    """sys.monitoring LINE callback (3.12+): cheap for lines outside the repo (disabled there).
    Its guards are written out again in _on_return, not shared: it runs at every line of the
    repo's code while a data breakpoint exists, where one more call would show."""
    if PAUSED or not DBREAKS:
        return None
    if not code_is_checked(code):
        return sys.monitoring.DISABLE
    if threading.get_ident() != MAIN_THREAD:
        return None
    frame = sys._getframe(1)
    change = check_data(frame, line)
    if change is not None and state.ACTIVE is not None:
        state.ACTIVE._dgym_data_stop(frame, change)
    return None


def _on_return(code, offset, value):
    """PY_RETURN (3.12+): a change made by a function's last line is seen as it returns (the next
    line to run may be outside the repo); a local's data breakpoint ends with its frame."""
    if PAUSED or not DBREAKS:
        return None
    if not code_is_checked(code):
        return sys.monitoring.DISABLE
    if threading.get_ident() != MAIN_THREAD:
        return None
    frame = sys._getframe(1)
    change = check_data(frame, frame.f_lineno)
    if change is not None and state.ACTIVE is not None:
        state.ACTIVE._dgym_data_stop(frame, change)
    if any(db.frame is frame for db in DBREAKS):
        frame_returned(frame)
    return None


def update_events():
    """Turn sys.monitoring's events on while data breakpoints exist, off when none is left."""
    if MONITOR_ID is None:
        return
    mon = sys.monitoring
    wanted = mon.events.LINE | mon.events.PY_RETURN if any(db.frame is None for db in DBREAKS) else 0
    mon.set_events(MONITOR_ID, wanted)
    for db in DBREAKS:  # a frame's own code, wherever it is (even outside the repo)
        if db.frame is not None:
            _own_code[db.frame.f_code] = True
            mon.set_local_events(MONITOR_ID, db.frame.f_code, mon.events.LINE | mon.events.PY_RETURN)
    mon.restart_events()  # lines disabled before (outside the repo) may matter now


def start_monitoring():
    """Claim a sys.monitoring tool id (3.12+); else data breakpoints use settrace."""
    global MONITOR_ID
    mon = getattr(sys, "monitoring", None)
    if mon is None or os.environ.get("DGYM_DATA_SETTRACE"):
        return
    for tool in (3, 4):  # ids no standard tool uses (3.14's pdb takes DEBUGGER_ID itself)
        try:
            mon.use_tool_id(tool, "dgym data breakpoints")
        except ValueError:
            continue  # taken (another debugger, a coverage tool)
        mon.register_callback(tool, mon.events.LINE, _on_line)
        mon.register_callback(tool, mon.events.PY_RETURN, _on_return)
        MONITOR_ID = tool
        return


def stop_in_child():
    """A forked child is not debugged: no data breakpoint, no monitoring event."""
    del DBREAKS[:]
    if MONITOR_ID is not None:
        sys.monitoring.set_events(MONITOR_ID, 0)
