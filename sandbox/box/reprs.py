"""Reprs of the program's values that can neither break nor stall a marker: capped in length,
a failing __repr__ said as such, a slow one abandoned after a time budget."""

import reprlib
import sys
import threading
import time
import types
from importlib.machinery import ModuleSpec

REPR_CHARS = 200         # per value
REPR_TOTAL_BUDGET = 1.0  # seconds for all the reprs of one marker
REPR_ITEM_BUDGET = 0.3   # seconds before one slow __repr__ is abandoned
CHILDREN_MAX = 200       # children listed by dgym_children

class _SafeRepr(reprlib.Repr):
    def __init__(self):
        super().__init__()
        self.maxlevel, self.maxstring, self.maxother, self.maxlong = 3, REPR_CHARS, REPR_CHARS, 60
        self.maxdict = self.maxlist = self.maxtuple = self.maxset = self.maxfrozenset = 10
        self.maxdeque = self.maxarray = 10

    def repr_instance(self, x, level):
        # reprlib hides a failing __repr__ as "<X instance at 0x..>"; we say what happened.
        try:
            s = repr(x)
        except BaseException as e:
            return f"<repr failed: {type(e).__name__}>"
        return s if len(s) <= self.maxother else s[:self.maxother - 3] + "..."


_REPR = _SafeRepr()


def short(text, limit=REPR_CHARS):
    return text if len(text) <= limit else text[:limit - 3] + "..."


def has_children(value):
    try:
        if isinstance(value, (dict, list, tuple, set, frozenset)):
            return len(value) > 0
        attrs = getattr(value, "__dict__", None)
        return isinstance(attrs, dict) and bool(attrs) and not isinstance(value, types.ModuleType)
    except Exception:
        return False


def safe_repr(obj):
    try:
        s = _REPR.repr(obj)
        if not isinstance(s, str):
            s = f"<repr returned {type(s).__name__}>"
    except BaseException as e:  # even SystemExit/KeyboardInterrupt: this is only a report
        s = f"<repr failed: {type(e).__name__}>"
    return short(s)


def safe_str(obj):
    try:
        s = str(obj)
    except BaseException as e:
        s = f"<str failed: {type(e).__name__}>"
    return short(s, 1000)


TIMED_OUT = "<repr timed out>"
# Taken now, before the program runs: a program that fakes the clock (freezegun patches
# time.monotonic) must not make the repr budget endless.
_monotonic = time.monotonic
_Thread = threading.Thread


# Values whose repr runs none of the program's code and takes little time. They are shown
# without the helper thread below, whose start and join were most of a marker's cost (~0.2 ms
# of a step at module level, where every value is a module, a class, a function or a number).
_ATOMS = frozenset({int, float, complex, bool, type(None), str, range, type, type(Ellipsis),
                    types.FunctionType, types.BuiltinFunctionType})
_SEQUENCES = frozenset({list, tuple})
_SORTED = frozenset({dict, set, frozenset})  # reprlib sorts all of their keys before it cuts
_CHECK_BUDGET = 2000  # items looked at, at most, before a value goes to the thread anyway


# Standard library classes whose repr formats their own plain state; trusted by exact type, and
# only once their module is imported (never imported here: the program's modules stay its own).
_STDLIB_PLAIN = {"pathlib": ("PurePath", "PurePosixPath", "PureWindowsPath", "Path", "PosixPath", "WindowsPath"),
                 "__future__": ("_Feature",), "uuid": ("UUID",),
                 "datetime": ("date", "timedelta", "timezone", "datetime", "time")}
_stdlib_types = (-1, frozenset())  # (len(sys.modules) when gathered, the types)


def _plain_stdlib(x, t):
    global _stdlib_types
    if _stdlib_types[0] != len(sys.modules):
        found = set()
        for name, classes in _STDLIB_PLAIN.items():
            module = sys.modules.get(name)
            found.update(c for c in (getattr(module, n, None) for n in classes) if type(c) is type)
        _stdlib_types = (len(sys.modules), frozenset(found))
    if t not in _stdlib_types[1]:
        return False
    tz = getattr(x, "tzinfo", None)  # a datetime shows its tzinfo's repr: a fixed offset's is theirs
    return tz is None or type(tz) is sys.modules["datetime"].timezone


def _plain_module(module):
    """A module's repr formats its spec's name and origin; only strings there are plain (a
    spec without an origin shows its loader's repr, which may be anyone's code)."""
    spec = vars(module).get("__spec__")
    return (type(spec) is ModuleSpec and type(spec.name) is str and type(spec.origin) is str
            and type(getattr(spec, "has_location", None)) is bool)


def is_plain(obj):
    """True when safe_repr(obj) cannot run the program's code nor take long: built-in numbers,
    strings, modules, functions and classes (exact types: a subclass may define __repr__), and
    the built-in containers of those that reprlib shows."""
    budget = [_CHECK_BUDGET]

    def plain(x, level):
        budget[0] -= 1
        t = type(x)
        if budget[0] < 0:
            return False
        if t is types.ModuleType:
            return _plain_module(x)
        if t in _ATOMS:  # a class whose metaclass is not `type` itself is not one: it may define __repr__
            return True
        if _plain_stdlib(x, t):
            return True
        if t in _SEQUENCES:
            # reprlib shows the first items down to its depth; deeper containers as "[...]"
            return level <= 0 or all(plain(item, level - 1) for item in x[:_REPR.maxlist])
        if t in _SORTED:
            if len(x) > _CHECK_BUDGET:
                return False
            keys = x if t is not dict else x.keys()
            if not all(type(k) in _ATOMS for k in keys):
                return False  # sorting compares every key: only built-in ones compare safely
            return level <= 0 or t is not dict or all(plain(v, level - 1) for v in x.values())
        return False

    return plain(obj, _REPR.maxlevel)


def guarded(jobs, slow_ids):
    """[fn(obj) for fn, obj in jobs]: plain values' reprs at once (is_plain), the others in a
    helper thread with a time budget (_in_thread)."""
    results = [None] * len(jobs)
    rest = []
    for i, (fn, obj) in enumerate(jobs):
        if fn is safe_repr and is_plain(obj):
            results[i] = safe_repr(obj)
        else:
            rest.append(i)
    if rest:
        for i, value in zip(rest, _in_thread([jobs[i] for i in rest], slow_ids)):
            results[i] = value
    return results


def _in_thread(jobs, slow_ids):
    """[fn(obj) for fn, obj in jobs], computed in a helper thread with a time budget.

    A value whose __repr__ takes longer than REPR_ITEM_BUDGET is abandoned (its thread is left
    to finish on its own: a daemon, told to stop after that item) and reported as timed out, and
    its id joins `slow_ids` so the following markers of the same stop skip it at once. The whole
    call never takes much more than REPR_TOTAL_BUDGET. The helper thread is not traced, so
    breakpoints inside a __repr__ do not fire here.
    """
    results = [TIMED_OUT] * len(jobs)
    deadline = _monotonic() + REPR_TOTAL_BUDGET
    start = 0
    while start < len(jobs):
        state = {"i": start, "t": _monotonic(), "stop": False}

        def work(state=state, first=start):
            for i in range(first, len(jobs)):
                if state["stop"]:
                    return
                state["i"], state["t"] = i, _monotonic()
                fn, obj = jobs[i]
                value = TIMED_OUT if id(obj) in slow_ids else fn(obj)
                if not state["stop"]:
                    results[i] = value
            state["i"] = len(jobs)

        worker = _Thread(target=work, name="dgym-repr", daemon=True)
        try:
            worker.start()
        except Exception:  # no threads available (interpreter shutting down...): no time cap
            work()
            break
        while worker.is_alive():
            worker.join(0.02)
            now = _monotonic()
            if now >= deadline or now - state["t"] >= REPR_ITEM_BUDGET:
                break
        if not worker.is_alive():
            break
        state["stop"] = True
        stuck = state["i"]
        if stuck < len(jobs):
            slow_ids.add(id(jobs[stuck][1]))
        if _monotonic() >= deadline:
            break
        start = stuck + 1
    return list(results)


# --- the marker line -----------------------------------------------------------------------------

