"""Starting the program: the handshake, then a script, a module or pytest run under the debugger
from its first line, to the exit marker. The process never runs a second program: `restart`
ends it and the host starts a fresh one."""

import io
import os
import signal
import sys
import threading
import traceback

from . import breakpoints, compat, databreak, ended, protocol, pytest_plugin, runners, state
from .debugger import DgymPdb, pdb, stop_here_from_program
from .origins import is_hidden
from .terminal import flush_program_output, setup_terminal, take_stdin

def _after_fork_in_child():
    """A forked child (os.fork, multiprocessing's fork workers) is not debugged: one pdb owns the
    terminal. Tracing off, no prompt ever (see interaction), stdin from /dev/null so it cannot
    read what the host types. Ctrl-C is the person pausing the debugged process: the child
    neither opens a second debugger (pdb's handler) nor dies of it (Python's default would kill
    a pool's workers under the paused parent). A handler that does nothing, rather than SIG_IGN,
    so that programs the child execs get the default back. Its output still reaches the console."""
    sys.settrace(None)
    threading.settrace(None)
    databreak.stop_in_child()
    try:
        signal.signal(signal.SIGINT, _ignore_signal)
    except (ValueError, OSError):
        pass
    try:
        fd = os.open(os.devnull, os.O_RDONLY)
        os.dup2(fd, 0)
        if state.TTY_IN is not None:  # pdb's handle on the terminal is the parent's alone
            os.dup2(fd, state.TTY_IN.fileno())
        os.close(fd)
        sys.stdin = sys.__stdin__ = open(os.devnull)
    except OSError:
        pass


def _ignore_signal(signum, frame):
    pass


def _cannot_run(what, why):
    print(f"dgym: cannot run {what}: {why}", flush=True)
    if state.ACTIVE is None:
        protocol.emit_exit(2)
        sys.exit(2)
    _end(state.ACTIVE, 2)


def _exit_status(exc):
    """What the interpreter would exit with for this SystemExit (printing a message like it)."""
    code = exc.code
    if code is None:
        return 0
    if isinstance(code, int):
        return int(code)
    flush_program_output()
    print(code, file=sys.stderr, flush=True)
    return 1


def _set_path0(directory):
    """sys.path[0] is the box's folder: make it the program's, as python would (unless -P)."""
    if not compat.safe_path():
        sys.path[0] = directory


def _load_script(path):
    try:
        with compat.open_code(path) as f:
            source = f.read()
    except FileNotFoundError:
        _cannot_run(repr(path), "No such file")
    except IsADirectoryError:
        _cannot_run(repr(path), "Is a directory")
    except OSError as e:
        _cannot_run(repr(path), e.strerror or str(e))
    full = os.path.abspath(path)
    try:
        code = compile(source, full, "exec", dont_inherit=True)
    except SyntaxError as e:
        _cannot_run(repr(path), f"{type(e).__name__}: {e.msg} (line {e.lineno})")
    except (ValueError, UnicodeError) as e:
        _cannot_run(repr(path), f"{type(e).__name__}: {e}")
    sys.argv[:] = [path] + sys.argv[2:]
    _set_path0(os.path.dirname(os.path.realpath(full)))
    namespace = {"__name__": "__main__", "__file__": full, "__builtins__": __builtins__,
                 "__spec__": None, "__package__": None}
    return code, namespace


def _load_module(name, args):
    import runpy
    _set_path0(state.ROOT)  # as `python -m` does
    try:
        _, spec, code = runpy._get_module_details(name)
    except BaseException as e:  # ImportError, SyntaxError, or an error importing the parents
        msg = str(e) if isinstance(e, ImportError) else f"{type(e).__name__}: {e}"
        _cannot_run(f"module {name!r}", msg)
    sys.argv[:] = [code.co_filename] + args
    namespace = {"__name__": "__main__", "__file__": code.co_filename,
                 "__package__": spec.parent, "__loader__": spec.loader, "__spec__": spec,
                 "__builtins__": __builtins__}
    return code, namespace


def _run_program(dbg, code, namespace):
    """Run the program under dbg (stopping at its first line); never returns."""
    import __main__
    # The program runs as __main__ (pickle, `if __name__`...). Like pdb, we reuse the original
    # __main__ module; this module was imported separately so its globals survive the clear.
    __main__.__dict__.clear()
    __main__.__dict__.update(namespace)
    dbg.mainpyfile = dbg.canonic(code.co_filename)
    dbg._wait_for_mainpyfile = True
    dbg._user_requested_quit = False
    try:
        dbg.run(code, __main__.__dict__)
    except SystemExit as e:
        _end(dbg, _exit_status(e))
    except BaseException as e:
        sys.settrace(None)
        tb = e.__traceback__
        while tb is not None and is_hidden(tb.tb_frame):
            tb = tb.tb_next
        tb = tb or e.__traceback__
        e.__traceback__ = tb
        flush_program_output()
        traceback.print_exception(type(e), e, tb, file=dbg.stdout)
        dbg.stdout.flush()
        dbg.reset()
        dbg._dgym_exc = e
        dbg.interaction(None, e if sys.version_info >= (3, 13) else tb)
        _end(dbg, None if state.RESTART else 1, status=1)
    _end(dbg, None if state.QUIT else 0)


def _end(dbg, code, status=None):
    """The program is over: the process exits when the host is to start a fresh one (restart) or
    in a forked child; otherwise it stays, answering the commands that run no code (ended.py)."""
    status = (code or 0) if status is None else status
    if state.RESTART or not state.is_main():
        protocol.emit_exit(code)
        sys.exit(status)
    sys.settrace(None)
    try:
        import atexit
        atexit._run_exitfuncs()  # the program's own end (its atexit handlers) belongs to its run
    except Exception:
        pass
    ended.serve(dbg, code, status)


def _run_pytest(dbg, args):
    state.MODE = "pytest"
    _set_path0(state.ROOT)  # as `python -m pytest` does
    try:
        import pytest
        import _pytest
        import pluggy
    except ImportError as e:
        _cannot_run("pytest", str(e))
    pytest_plugin.hide_machinery(pytest, _pytest, pluggy)
    sys.argv[:] = ["pytest"] + args
    # A file that cannot be collected is a post-mortem like a failing test, and `continue`
    # goes on with the others instead of ending the run.
    argv = ["-s", "-p", "no:cacheprovider", "--pdb", f"--pdbcls={DgymPdb.__module__}:DgymPdb",
            "--continue-on-collection-errors"] + args
    dbg.reset()
    pytest_plugin.FRAME = sys._getframe()
    if dbg.breaks:
        pytest_plugin.arm_tracer()
    try:
        status = pytest.main(argv, plugins=[pytest_plugin.make_plugin(pytest)])
    except SystemExit as e:
        status = _exit_status(e)
    finally:
        sys.settrace(None)
        dbg.quitting = True
    status = int(status)
    _end(dbg, None if state.QUIT else status, status=status)


USAGE = "usage: dgym_pdb.py script.py [args...] | -m module [args...] | --pytest [args...]"


def main():
    state.MAIN_PID = os.getpid()
    databreak.MAIN_THREAD = threading.get_ident()
    databreak.start_monitoring()
    compat.register_at_fork(after_in_child=_after_fork_in_child)
    # No colour anywhere (3.13 tracebacks, pytest); set before anything prints.
    os.environ["PYTHON_COLORS"] = "0"
    os.environ["NO_COLOR"] = "1"
    os.environ.pop("FORCE_COLOR", None)
    setup_terminal()
    protocol.announce_ready()
    specs, run_to = protocol.handshake()
    take_stdin()

    dbg = state.ACTIVE = DgymPdb()
    pdb.set_trace = stop_here_from_program  # breakpoint() goes through sys.breakpointhook -> pdb.set_trace
    breakpoints.restore(dbg, specs)
    if run_to:
        breakpoints.start_run_to(dbg, run_to)

    args = sys.argv[1:]
    if not args or args[0] in ("-h", "--help") or (args[0] == "-m" and len(args) < 2):
        print("dgym: " + USAGE, flush=True)
        protocol.emit_exit(2)
        sys.exit(2)
    if args[0] == "--ended":  # no program: only the shell after one (the host lost the last process)
        code = args[1] if len(args) > 1 else ""
        ended.serve(dbg, int(code) if code.lstrip("-").isdigit() else None)
    if args[0] == "--pytest":
        _run_pytest(dbg, args[1:])
    runners.install()  # a unittest or sympy runner's failing test stops here too
    dbg._dgym_started = False  # the first stop is "start"
    if args[0] == "-m":
        state.MODE = "module"
        code, namespace = _load_module(args[1], args[2:])
    else:
        code, namespace = _load_script(args[0])
    _run_program(dbg, code, namespace)

