"""Reprs of the program's values that can neither break nor stall a marker: capped in length,
a failing __repr__ said as such, a slow one abandoned after a time budget."""

import reprlib
import threading
import time
import types

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


def guarded(jobs, slow_ids):
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

