"""Test runners other than pytest: their failing tests stop the debugger at the failure, as
pytest mode does (a post-mortem in the test's frame, or in the repo's frame that raised).

- unittest, and every runner built on it (Django's tests/runtests.py, `python -m unittest`):
  its TestResult is told of each error and failure, with the exception's traceback still alive;
- sympy's own runner (bin/test, sympy.test()): its reporter is told likewise, and the tests run
  in this process instead of a fresh interpreter it would start for hash randomization (which
  no debugger would reach).

The hooks are put in as the runner's module is imported (a finder on sys.meta_path), so a
program that never imports one is not touched. Script and module mode only: under pytest, its
own --pdb does this.
"""

import bdb
import importlib.abc
import sys
import traceback

from . import state
from .origins import is_hidden, rel
from .terminal import flush_program_output


def install():
    for name, hook in HOOKS.items():
        if name in sys.modules:  # imported before the program started
            hook(sys.modules[name])
    sys.meta_path.insert(0, _HookFinder())


def _on_failure(test_id, err):
    """A test failed: a post-mortem at its failure, unless the person already quit."""
    if not state.is_main() or state.QUIT or state.ACTIVE is None:
        return
    from .debugger import DgymPdb

    exc_type, exc, tb = err
    if exc is None or tb is None:
        return
    if test_id not in state.FAILED:
        state.FAILED.append(test_id)
    state.TEST = test_id
    while tb is not None and is_hidden(tb.tb_frame):
        tb = tb.tb_next
    dbg = DgymPdb()
    flush_program_output()
    dbg.message(f"FAILED {test_id}")
    traceback.print_exception(exc_type, exc, tb or exc.__traceback__, file=dbg.stdout)
    dbg.stdout.flush()
    dbg.reset()
    dbg._dgym_exc = exc
    try:
        dbg.interaction(None, exc if sys.version_info >= (3, 13) else (tb or exc.__traceback__))
    finally:
        state.TEST = None
    if state.QUIT:
        sys.settrace(None)
        raise bdb.BdbQuit  # the launch's dbg.run ends on it; the exit marker follows


# --- unittest ------------------------------------------------------------------------------------

def _test_id(test):
    try:
        return str(test.id())
    except Exception:
        return str(test)


def _hook_unittest(module):
    result = module.TestResult
    if getattr(result, "_dgym_hooked", False):
        return
    add_error, add_failure, add_sub_test = result.addError, result.addFailure, result.addSubTest

    def addError(self, test, err):
        _on_failure(_test_id(test), err)
        return add_error(self, test, err)

    def addFailure(self, test, err):
        _on_failure(_test_id(test), err)
        return add_failure(self, test, err)

    def addSubTest(self, test, subtest, err):
        if err is not None:
            _on_failure(_test_id(subtest), err)
        return add_sub_test(self, test, subtest, err)

    result.addError, result.addFailure, result.addSubTest = addError, addFailure, addSubTest
    result._dgym_hooked = True


# --- sympy's runner ------------------------------------------------------------------------------

def _hook_sympy(module):
    reporter = getattr(module, "PyTestReporter", None)
    if reporter is None or getattr(reporter, "_dgym_hooked", False):
        return
    if hasattr(module, "run_in_subprocess_with_hash_randomization"):
        # False is its own "could not start one": sympy.test() then runs the tests here.
        module.run_in_subprocess_with_hash_randomization = lambda *args, **kwargs: False
    test_fail, test_exception = reporter.test_fail, reporter.test_exception

    def current(self):
        f = getattr(self, "_active_f", None)
        where = getattr(self, "_active_file", "") or ""
        return f"{rel(where)}::{getattr(f, '__name__', '?')}"

    def on_fail(self, exc_info):
        _on_failure(current(self), exc_info)
        return test_fail(self, exc_info)

    def on_exception(self, exc_info):
        _on_failure(current(self), exc_info)
        return test_exception(self, exc_info)

    reporter.test_fail, reporter.test_exception = on_fail, on_exception
    reporter._dgym_hooked = True


HOOKS = {"unittest": _hook_unittest,
         "sympy.testing.runtests": _hook_sympy, "sympy.utilities.runtests": _hook_sympy}


class _HookFinder(importlib.abc.MetaPathFinder):
    """Finds nothing itself: for a runner's module it asks the other finders, then wraps the
    loader so the hook runs once the module is loaded."""

    def find_spec(self, name, path, target=None):
        if name not in HOOKS:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None:
                break
        else:
            return None
        loader = spec.loader
        if loader is None or not hasattr(loader, "exec_module"):
            return spec
        spec.loader = _HookedLoader(loader, HOOKS[name])
        return spec


class _HookedLoader(importlib.abc.Loader):
    def __init__(self, loader, hook):
        self._loader, self._hook = loader, hook

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module):
        self._loader.exec_module(module)
        try:
            self._hook(module)
        except Exception as e:  # a runner whose shape we do not know: it runs, unhooked
            state.PENDING_NOTICES.append(f"{module.__name__}: its failures will not stop the debugger "
                                         f"({type(e).__name__}: {e})")

    def __getattr__(self, name):  # get_source, is_package...: the real loader's
        return getattr(self._loader, name)
