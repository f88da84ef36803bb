"""pytest mode: a plugin that tells the markers which test runs and which failed, the tracer armed
for breakpoints between tests, and pytest's debugger banners kept out of the console."""

import os
import re
import signal
import sys
import threading

from . import origins, state

FRAME = None             # the frame that calls pytest.main (launch sets it)


def arm_tracer():
    """Trace as if `continue` had been typed: stop only at breakpoints. The stop frame is the
    (untraced) frame that calls pytest.main, with stoplineno -1, so stop_here() is never true."""
    state.ACTIVE.quitting = False
    state.ACTIVE._set_stopinfo(FRAME, None, -1)
    sys.settrace(state.ACTIVE.trace_dispatch)


_BANNER = re.compile(r"PDB \w+( \(IO-capturing .*\))?|entering PDB")
CONFIG = None
LAST_FAILURE = None     # (node id, phase) of the last failure, for the traceback's heading
INTERACT_EXC = None     # the exception pytest's --pdb is about to post-mortem (before 3.13 it passes its traceback)


NOT_STARTED = set()     # tests that could not start: a fixture no plugin provides (FixtureLookupError)
MISSING_FIXTURES = set()  # the fixtures said so far (one notice each)
PASS_OVER = False       # the post-mortem about to open is such a test's: no stop (see DgymPdb.interaction)


def _note_failure(nodeid, when):
    global LAST_FAILURE
    if nodeid in NOT_STARTED:
        return
    LAST_FAILURE = (nodeid, when)
    if nodeid not in state.FAILED:
        state.FAILED.append(nodeid)


def _could_not_start(nodeid, exc):
    """A test whose fixture nothing provides (the environment lacks the plugin: pytest-mock's
    `mocker`, pytest-httpbin's `httpbin`): its code never ran, so there is nothing to debug in it,
    and a run narrowed to it could never reach a breakpoint. Said once per fixture; no stop; not
    counted among the failed tests that `c` runs again."""
    global PASS_OVER
    NOT_STARTED.add(nodeid)
    if nodeid in state.FAILED:  # pytest reported it (logreport) before its --pdb hook came here
        state.FAILED.remove(nodeid)
    PASS_OVER = True
    name = getattr(exc, "argname", None) or "?"
    if name not in MISSING_FIXTURES:
        MISSING_FIXTURES.add(name)
        state.PENDING_NOTICES.append(
            f"{nodeid} could not start: fixture {name!r} not found (the environment lacks the pytest plugin "
            "that provides it?); the tests that need it are not stopped at, and the run goes on")


def make_plugin(pytest):
    """A pytest plugin: which test runs now and which failed (for the markers)."""

    class DgymPlugin:
        def pytest_configure(self, config):
            global CONFIG
            CONFIG = config

        def pytest_runtest_logstart(self, nodeid, location):
            state.TEST = nodeid
            clock_start()

        def pytest_runtest_logfinish(self, nodeid, location):
            clock_stop()
            state.TEST = None

        def pytest_runtest_logreport(self, report):
            if report.failed:
                _note_failure(report.nodeid, report.when)

        # before pytest's --pdb handler enters the post-mortem: a collection error is reported
        # (pytest_collectreport) only after it
        @pytest.hookimpl(tryfirst=True)
        def pytest_exception_interact(self, node, call, report):
            global INTERACT_EXC
            INTERACT_EXC = call.excinfo.value if call.excinfo is not None else None
            if report.when == "setup" and type(INTERACT_EXC).__name__ == "FixtureLookupError":
                _could_not_start(node.nodeid, INTERACT_EXC)
            elif report.failed:
                _note_failure(node.nodeid, report.when)
                if report.when == "collect":
                    state.PENDING_NOTICES.append(_collection_notice(node.nodeid, call.excinfo.value))

    return DgymPlugin()


# --- the per-test time limit ----------------------------------------------------------------------
# A test that runs past state.TEST_TIMEOUT (its running time: its stops at the prompt do not count)
# is stopped where it is, as Ctrl-C would stop it, and the stop says why: a hang opens at its
# place in seconds. SIGALRM reaches the main thread, where the test runs.

_LEFT = None   # seconds left of the running test's limit while it is stopped at the prompt


def _timing():
    return (state.TEST_TIMEOUT > 0 and hasattr(signal, "setitimer")
            and threading.current_thread() is threading.main_thread())


def clock_start():
    global _LEFT
    _LEFT = None
    if _timing():
        signal.signal(signal.SIGALRM, _on_time_limit)
        signal.setitimer(signal.ITIMER_REAL, state.TEST_TIMEOUT)


def clock_stop():
    global _LEFT
    _LEFT = None
    if _timing():
        signal.setitimer(signal.ITIMER_REAL, 0)


def clock_pause():
    """At a prompt: the test's clock stands still."""
    global _LEFT
    if _timing() and state.TEST is not None:
        left = signal.setitimer(signal.ITIMER_REAL, 0)[0]
        if left > 0:  # else it has just fired, and set what the test gets next
            _LEFT = left


def clock_resume():
    """The program runs on: the rest of the limit (all of it again after a stop for the limit)."""
    global _LEFT
    if _timing() and state.TEST is not None and _LEFT:
        signal.setitimer(signal.ITIMER_REAL, _LEFT)
    _LEFT = None


def _on_time_limit(signum, frame):
    global _LEFT
    if state.TEST is None or state.ACTIVE is None:
        return
    state.TIMED_OUT = state.TEST
    _LEFT = state.TEST_TIMEOUT  # a `c` after this stop gets the whole limit again
    state.ACTIVE.stop_for_time_limit(frame)


def _collection_notice(nodeid, exc):
    """One line: which file pytest could not collect, why, and where the failing import is."""
    cause = origins.collection_cause(exc) or exc
    where = ""
    if isinstance(cause, SyntaxError) and cause.filename:
        where = f" ({origins.rel(cause.filename)}:{cause.lineno})"
    else:
        tb, own = cause.__traceback__, None
        while tb is not None:
            if origins.is_own(tb.tb_frame):
                own = tb
            tb = tb.tb_next
        if own is not None:
            where = f" (at {origins.rel(own.tb_frame.f_code.co_filename)}:{own.tb_lineno})"
    message = str(cause).strip().splitlines()[0] if str(cause).strip() else ""
    if isinstance(cause, SyntaxError):
        message = cause.msg or message
    return (f"pytest could not collect {nodeid}: {type(cause).__name__}: {message}{where}; "
            "`c` goes on with the other tests")


def line_break():
    """While a test runs, pytest's progress line (`test_x.py .`, or -v's `test_x.py::test_y `)
    is open; pdb's output ends it (see terminal.PdbOutput). Tell pytest, so that after `continue` it
    starts the next result on a new line with its file or test name instead of running on."""
    reporter = CONFIG and CONFIG.pluginmanager.get_plugin("terminalreporter")
    if getattr(reporter, "currentfspath", None) is not None:
        reporter.currentfspath = None


def quiet_debugger_banners(debugging_file, writer_class):
    """pytest frames every debugger entry and exit with banners (`>>>> PDB continue >>>>`,
    `>>>> entering PDB >>>>`, `>>>> PDB post_mortem >>>>`, each after a blank line): in a
    console that shows only the debugger, they are noise. Drop them; the `traceback` banner
    becomes one line naming the failed test. Only what pytest's debugging module writes is
    touched (its writers are made on the fly, so the class is patched)."""
    sep, line = writer_class.sep, writer_class.line

    def from_debugging():
        return sys._getframe(2).f_code.co_filename == debugging_file

    def quiet_sep(self, sepchar, title=None, *args, **kwargs):
        if sepchar == ">" and title is not None and from_debugging():
            if _BANNER.fullmatch(title):
                return None
            if title == "traceback" and LAST_FAILURE is not None:
                nodeid, when = LAST_FAILURE
                heading = {"call": f"FAILED {nodeid}", "collect": f"ERROR collecting {nodeid}"}
                return line(self, heading.get(when, f"ERROR at {when} of {nodeid}"))
        return sep(self, sepchar, title, *args, **kwargs)

    def quiet_line(self, s="", **markup):
        if not s and from_debugging():  # its blank lines only end an open line
            line_break()
            if state.LINE_OPEN:
                line(self)
            return None
        return line(self, s, **markup)

    writer_class.sep, writer_class.line = quiet_sep, quiet_line


def hide_machinery(*modules):
    """pytest's and pluggy's frames are the debugger's machinery, and their banners go."""
    for mod in modules:
        origins.HIDDEN_DIRS.append(os.path.dirname(os.path.abspath(mod.__file__)) + os.sep)
    try:
        from _pytest import debugging
        from _pytest._io import TerminalWriter
        quiet_debugger_banners(debugging.__file__, TerminalWriter)
    except (ImportError, AttributeError):  # another pytest layout: the banners stay
        pass
    origins.hidden_cache.clear()
