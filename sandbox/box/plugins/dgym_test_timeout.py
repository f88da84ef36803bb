"""A time limit per test for pytest, which says where each stopped test was.

Loaded with `-p dgym_test_timeout` (its folder on PYTHONPATH, alone: nothing else of the box is
importable beside it). Standard library and pytest only, and Python 3.6+ with pytest 3.0+ (the
interpreters of SWE-bench's environments), so no newer syntax here. Set by the environment:

  DGYM_TEST_TIMEOUT  seconds a test may take (setup, call and teardown together; unset or 0: no
                     limit). Importing a test file has the same limit.
  DGYM_TEST_REPORT   a file to which one JSON line is appended per test as it ends:
                     {"id", "outcome" (passed|failed|error|skipped), "timeout", "where"}; a line
                     {"start": id} comes before each test, so a run killed from outside still
                     says which test it was in.
  DGYM_TEST_SKIP     a file of test ids, one per line, left out of the run (the tests a run that
                     had to be killed already reported: the harness runs the rest again).
  DGYM_TEST_STOP_AFTER_HANG  "1": the run ends after the first test past its limit (a run that
                     only needs to say what fails, not every test: a bug that hangs one test
                     often hangs all of them). The report's {"total": N} line, written once the
                     tests are collected, tells how many were not run.

A test past its limit gets SIGALRM, whose handler fails it (pytest.fail, a BaseException: an
`except Exception` in the loop cannot swallow it) with the place it was running and that frame's
values: `timed out after 20 s at bitcount.py:4 in bitcount (n = 1, count = 5022893)`. A test that
still runs GRACE seconds later (a loop in C code, a bare `except:`) is stopped harder: the place is
read from the main thread's stack, the test reported, and the process ends (KILLED_EXIT). Either
way, every process the test started is killed with it. After one test of a run timed out, the
others get a quarter of the limit (at least SHORT_MIN s): a bug that hangs one test often hangs
many (a parametrized one), and each must not cost the whole limit.

Test ids are made relative to the folder pytest was started in (the repository), whatever
pytest's rootdir, so that they match the ids tasks name.
"""

import json
import os
import signal
import sys
import threading
import time

import pytest

GRACE = 5.0
SHORT_MIN = 2.0
KILLED_EXIT = 86
_LOCALS = 6          # values shown of the frame where a test was stopped
_FRAMES = 8          # frames shown of its stack
_HIDDEN = ("_pytest", "pluggy", "dgym_test_timeout")
_RANK = {"passed": 0, "skipped": 1, "failed": 2, "error": 3}  # a test's phases: the worst counts


def _env_float(name):
    try:
        return max(0.0, float(os.environ.get(name) or 0))
    except ValueError:
        return 0.0


class _Limit(object):
    def __init__(self, config):
        self.config = config
        self.limit = _env_float("DGYM_TEST_TIMEOUT")
        self.report_path = os.environ.get("DGYM_TEST_REPORT") or None
        self.cwd = os.getcwd()
        self.skip = set()
        skip_file = os.environ.get("DGYM_TEST_SKIP")
        if skip_file:
            try:
                with open(skip_file) as f:
                    self.skip = set(line.strip() for line in f if line.strip())
            except (IOError, OSError):
                pass
        self.timed_out_once = False
        self.stop_after_hang = os.environ.get("DGYM_TEST_STOP_AFTER_HANG") == "1"
        self.current = None          # the id of the test (or file) under a limit now
        self.deadline = None
        self.fired = None            # (seconds, where) once the limit fired for the current one
        self.outcomes = {}
        self.watchdog = None
        self.lock = threading.Lock()
        self.can_signal = hasattr(signal, "SIGALRM") and threading.current_thread() is threading.main_thread()
        if self.can_signal and self.limit:
            signal.signal(signal.SIGALRM, self._on_alarm)

    # --- ids ------------------------------------------------------------------------------------

    def test_id(self, nodeid):
        """pytest's node id (relative to its rootdir) made relative to the starting folder."""
        root = getattr(self.config, "rootpath", None) or getattr(self.config, "rootdir", None)
        if root is None:
            return nodeid
        prefix = os.path.relpath(str(root), self.cwd).replace(os.sep, "/")
        if prefix in (".", "") or prefix.startswith(".."):
            return nodeid
        return prefix + "/" + nodeid

    # --- the limit ------------------------------------------------------------------------------

    def seconds(self):
        if not self.limit:
            return 0.0
        if self.timed_out_once:
            return max(SHORT_MIN, self.limit / 4.0)
        return self.limit

    def arm(self, what):
        seconds = self.seconds()
        self.current, self.fired = what, None
        if not seconds:
            return
        self.deadline = time.monotonic() + seconds
        if self.can_signal:
            signal.setitimer(signal.ITIMER_REAL, seconds)
        self.watchdog = threading.Timer(seconds + GRACE, self._kill, args=(what,))
        self.watchdog.daemon = True
        self.watchdog.start()

    def disarm(self):
        if self.can_signal and self.limit:
            signal.setitimer(signal.ITIMER_REAL, 0)
        if self.watchdog is not None:
            self.watchdog.cancel()
            self.watchdog = None
        with self.lock:
            self.current = None
        if self.fired is not None:
            _kill_descendants()

    def _on_alarm(self, signum, frame):
        if self.current is None:
            return
        seconds = self.seconds()
        if self.fired is None:
            self.fired = (seconds, where_text(frame, self.cwd))
            self.timed_out_once = True
        signal.setitimer(signal.ITIMER_REAL, 1.0)  # again while it runs on (an `except:` took it)
        _kill_descendants()
        place, stack = self.fired[1]
        pytest.fail("timed out after %g s at %s\n%s" % (self.fired[0], place, stack), pytrace=False)

    def _kill(self, what):
        """GRACE seconds past the limit and still running: report it from here and end."""
        with self.lock:
            if self.current != what:
                return
            frame = sys._current_frames().get(threading.main_thread().ident)
            place, stack = self.fired[1] if self.fired else where_text(frame, self.cwd)
            seconds = self.fired[0] if self.fired else self.seconds()
            message = "timed out after %g s at %s (stopped by killing the test run)" % (seconds, place)
            self.write({"id": what, "outcome": "failed", "timeout": seconds, "where": place,
                        "stack": stack, "killed": True})
            try:  # pytest holds the test's output: give the terminal back for the last word
                capture = self.config.pluginmanager.getplugin("capturemanager")
                if capture is not None:
                    capture.suspend_global_capture(in_=True)
            except Exception:
                pass
            try:
                sys.stderr.write("\nFAILED %s - %s\n%s\n" % (what, message, stack))
                sys.stderr.flush()
            except Exception:
                pass
            _kill_descendants()
            os._exit(KILLED_EXIT)

    # --- the report -----------------------------------------------------------------------------

    def write(self, record):
        if not self.report_path:
            return
        line = json.dumps(record, sort_keys=True) + "\n"
        try:
            fd = os.open(self.report_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        except OSError:  # a report that cannot be written never stops the tests
            return
        try:
            os.write(fd, line.encode("utf-8"))
        finally:
            os.close(fd)

    # --- hooks ----------------------------------------------------------------------------------

    def pytest_collection_modifyitems(self, session, config, items):
        if self.skip:
            kept = [item for item in items if self.test_id(item.nodeid) not in self.skip]
            gone = [item for item in items if self.test_id(item.nodeid) in self.skip]
            if gone:
                config.hook.pytest_deselected(items=gone)
                items[:] = kept
        if self.stop_after_hang:
            self.write({"total": len(items)})

    @pytest.hookimpl(hookwrapper=True)
    def pytest_make_collect_report(self, collector):
        """Importing a test file is limited too: a loop at module level is a collection error."""
        limited = bool(self.limit) and isinstance(collector, pytest.Module)
        if limited:
            self.arm(self.test_id(collector.nodeid))
        try:
            yield
        finally:
            if limited:
                self.disarm()

    def pytest_collectreport(self, report):
        if report.failed and isinstance(getattr(report, "nodeid", None), str) and report.nodeid:
            record = {"id": self.test_id(report.nodeid), "outcome": "error", "collect": True,
                      "timeout": None, "where": None}
            if self.fired is not None:
                record.update(timeout=self.fired[0], where=self.fired[1][0], stack=self.fired[1][1])
            self.write(record)

    def pytest_runtest_logstart(self, nodeid, location):
        test = self.test_id(nodeid)
        self.outcomes[test] = "passed"
        self.write({"start": test})

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item, nextitem):
        test = self.test_id(item.nodeid)
        self.arm(test)
        try:
            yield
        finally:
            fired = self.fired
            self.disarm()
            record = {"id": test, "outcome": self.outcomes.pop(test, "passed"), "timeout": None, "where": None}
            if fired is not None:
                record.update(outcome="failed", timeout=fired[0], where=fired[1][0], stack=fired[1][1])
                if self.stop_after_hang:
                    item.session.shouldstop = "stopped after the first test past its time limit"
            self.write(record)

    def pytest_runtest_logreport(self, report):
        test = self.test_id(report.nodeid)
        now = self.outcomes.get(test, "passed")
        if report.failed:
            new = "failed" if report.when == "call" else "error"
        elif report.skipped:
            new = "passed" if getattr(report, "wasxfail", None) is not None else "skipped"
        else:
            new = "passed"
        if _RANK[new] > _RANK[now]:
            self.outcomes[test] = new


# --- where a test was ---------------------------------------------------------------------------


def where_text(frame, cwd):
    """(place, stack): the innermost frame of the test's own code as `file:line in function
    (name = value, ...)`, and the stack above it one frame a line, outermost first."""
    frames = []
    while frame is not None:
        name = frame.f_code.co_filename
        if not any(part in name for part in _HIDDEN):
            frames.append(frame)
        frame = frame.f_back
    if not frames:
        return "an unknown place", ""
    frames.reverse()
    own = [i for i, f in enumerate(frames) if _own(f.f_code.co_filename, cwd)]
    if own:  # from the test's own first frame down: the runner's frames above it say nothing
        frames = frames[own[0]:]
    inner = frames[own[-1] - own[0]] if own else frames[-1]
    values = []
    for name, value in list(inner.f_locals.items()):
        if name.startswith("@") or (name.startswith("__") and name.endswith("__")):
            continue
        values.append("%s = %s" % (name, safe_repr(value)))
        if len(values) >= _LOCALS:
            break
    place = _location(inner, cwd) + (" (%s)" % ", ".join(values) if values else "")
    stack = "\n".join("  " + _location(f, cwd) for f in frames[-_FRAMES:])
    return place, stack


def _inside(filename, cwd):
    """The file is under the starting folder (a pseudo-file such as <frozen runpy> is not)."""
    return not filename.startswith("<") and os.path.abspath(filename).startswith(cwd.rstrip(os.sep) + os.sep)


def _own(filename, cwd):
    return _inside(filename, cwd) and "site-packages" not in filename


def _location(frame, cwd):
    path = frame.f_code.co_filename
    if _inside(path, cwd):
        path = os.path.relpath(os.path.abspath(path), cwd).replace(os.sep, "/")
    return "%s:%d in %s" % (path, frame.f_lineno, frame.f_code.co_name)


_PLAIN = (int, float, complex, bool, type(None), str, bytes)


def safe_repr(value, room=60, depth=0):
    """A short repr that runs no code of the program's: plain values and containers of them;
    anything else is named by its type (a __repr__ could itself hang)."""
    try:
        if isinstance(value, _PLAIN):
            text = repr(value)
        elif isinstance(value, (list, tuple, set, frozenset)) and depth < 2:
            items = [safe_repr(v, 20, depth + 1) for v in list(value)[:6]]
            more = ", ..." if len(value) > 6 else ""
            if isinstance(value, list):
                text = "[%s%s]" % (", ".join(items), more)
            elif isinstance(value, tuple):
                text = "(%s%s)" % (", ".join(items), "," if len(items) == 1 else more)
            else:
                text = "{%s%s}" % (", ".join(items), more) if items else type(value).__name__ + "()"
        elif isinstance(value, dict) and depth < 2:
            items = ["%s: %s" % (safe_repr(k, 20, depth + 1), safe_repr(v, 20, depth + 1))
                     for k, v in list(value.items())[:6]]
            text = "{%s%s}" % (", ".join(items), ", ..." if len(value) > 6 else "")
        else:
            text = "<%s>" % type(value).__name__
    except Exception:
        text = "<%s>" % type(value).__name__
    return text if len(text) <= room else text[:room - 3] + "..."


# --- the test's processes -----------------------------------------------------------------------


def _kill_descendants():
    """SIGKILL every process this one started (its children, theirs...), never itself or its
    parents: a stopped test leaves nothing running. Linux's /proc only."""
    me = os.getpid()
    try:
        names = os.listdir("/proc")
    except OSError:
        return
    parents = {}
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % name) as f:
                stat = f.read()
        except (IOError, OSError):
            continue
        fields = stat[stat.rfind(")") + 2:].split()
        if len(fields) >= 2:
            parents[int(name)] = int(fields[1])
    doomed = set()
    changed = True
    while changed:
        changed = False
        for pid, parent in parents.items():
            if pid not in doomed and pid != me and (parent == me or parent in doomed):
                doomed.add(pid)
                changed = True
    for pid in doomed:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


def pytest_configure(config):
    config.pluginmanager.register(_Limit(config), "dgym-test-timeout")
