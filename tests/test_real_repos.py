"""Real-shaped repositories (tests/real_repos.py) open at the failing test in every sandbox, and
a breakpoint in the failing code shows the failing test's value (issue 19): tests inside the
package, a src/ layout whose conftest imports it, a unittest suite, a collection error. Plus the
cases around them: an installed copy imported instead of the repo's, environment assignments
in the entrypoint, a repo with nothing to run.
"""

from __future__ import annotations

import re
import shutil

import pytest

from conftest import BACKENDS, make_sandbox
from dgym_tui.core.session import Session
from real_repos import COLLECT_ERROR, SRC_LAYOUT, UNITTEST_SUITE, WITHOUT_PACKAGES


@pytest.fixture
def open_repo(tmp_path):
    sessions = []

    def factory(real, backend="local", entrypoint=None, root=None):
        repo = real.write(root or tmp_path / real.name)
        sandbox = make_sandbox(backend, repo)
        session = Session(str(repo), entrypoint=entrypoint or real.entrypoint, pdb_timeout=60,
                          sandbox_obj=sandbox)
        sessions.append(session)
        session.start()
        return session

    yield factory
    for s in sessions:
        s.close()


def notices(session) -> list[str]:
    return [e.data.message for e in session.events.history if e.kind == "notice"]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("real", WITHOUT_PACKAGES, ids=[r.name for r in WITHOUT_PACKAGES])
def test_opens_at_the_failure_and_a_breakpoint_shows_the_failing_tests_value(open_repo, real, backend):
    s = open_repo(real, backend)
    assert s.error is None
    assert s.entrypoint.kind == "pytest"
    stop = s.state.stop
    assert (stop.reason, f"{stop.file}:{stop.line}") == ("post_mortem", real.opens_at)
    if real.notice:
        assert any(real.notice in n for n in notices(s)), notices(s)
    assert s.send(f"b {real.breakpoint}").output.strip().endswith(real.breakpoint)
    r = s.send("c")
    assert (r.stop.reason, f"{r.stop.file}:{r.stop.line}") == ("breakpoint", real.breakpoint)
    assert s.send(f"p {real.expression}").output.strip() == real.value


def test_a_unittest_failure_opens_at_the_test_method_with_unittest_below_it(open_repo):
    s = open_repo(UNITTEST_SUITE)
    stop = s.state.stop
    assert stop.function == "test_touching_spans_merge"
    below = [f.file for f in stop.stack[stop.frame_index + 1:]]
    assert below and all("unittest" in f for f in below), below  # `down` still goes into them
    assert stop.exception.type == "AssertionError"


def test_a_collection_error_is_reported_and_c_goes_on_to_the_next_failure(open_repo):
    s = open_repo(COLLECT_ERROR)
    (said,) = [n for n in notices(s) if "could not collect" in n]
    assert "tests/test_convert.py" in said and "to_mm" in said and "tests/test_convert.py:1" in said
    assert s.state.stop.phase == "collect"
    r = s.send("c")  # not a restart into the same error: on to the test that fails
    assert r.stop.reason == "post_mortem" and r.stop.file == "tests/test_units.py", r.stop
    assert r.stop.function == "test_inch"


def test_an_installed_copy_imported_instead_of_the_repos_is_said_loudly(open_repo, tmp_path):
    installed = tmp_path / "site" / "slugkit"
    shutil.copytree(SRC_LAYOUT.write(tmp_path / "pristine") / "src" / "slugkit", installed)
    s = open_repo(SRC_LAYOUT, entrypoint=f"PYTHONPATH={installed.parent} pytest", root=tmp_path / "repo")
    (said,) = [n for n in notices(s) if "is imported from" in n]
    assert said.startswith(f"slugkit is imported from {installed / '__init__.py'}, not from the repo's src/slugkit")
    assert "PYTHONPATH=src" in said


def test_environment_assignments_in_the_entrypoint_reach_the_program_and_the_tests(open_repo, tmp_path):
    from real_repos import RealRepo

    lib_layout = RealRepo(  # code in lib/: no tool names it, so the person says where it is
        name="lib-layout",
        files={"lib/shapes.py": "def area(w, h):\n    return w * h + 1\n",
               "tests/test_shapes.py": "from shapes import area\n\n\ndef test_area():\n    assert area(2, 3) == 6\n"},
        opens_at="tests/test_shapes.py:5", breakpoint="lib/shapes.py:2", expression="(w, h)", value="(2, 3)")
    s = open_repo(lib_layout, entrypoint="PYTHONPATH=lib pytest")
    assert s.entrypoint.label == "PYTHONPATH=lib pytest"
    assert f"{s.state.stop.file}:{s.state.stop.line}" == lib_layout.opens_at
    s.send(f"b {lib_layout.breakpoint}")
    assert s.send("c").stop.line == 2
    assert s.send("p (w, h)").output.strip() == "(2, 3)"
    tests = s.run_tests()
    assert (tests.failed, tests.errors) == (1, 0), tests  # imported: a failure, not an error


def test_a_repo_with_nothing_to_run_says_so_and_how_to_choose(open_repo):
    from real_repos import RealRepo

    s = open_repo(RealRepo(name="lib-only", files={"colors.py": "RED = 1\n", "README.md": "colors\n"},
                           opens_at="", breakpoint="", expression="", value=""))
    assert s.error is not None
    assert "no tests here for pytest to run" in s.error and "-e" in s.error and "Change entrypoint" in s.error


async def test_the_app_says_where_a_unittest_failure_was_raised_and_toasts_a_collection_error(tmp_path):
    from test_ui_app import SIZE, started, state_text
    from test_ui_support import wait_for

    from dgym_tui.ui.app import DgymApp

    made = []
    try:
        for real in (UNITTEST_SUITE, COLLECT_ERROR):
            session = Session(str(real.write(tmp_path / real.name)), sandbox="local")
            made.append(session)
            app = DgymApp(session)
            async with app.run_test(size=SIZE) as pilot:
                await started(pilot)
                if real is UNITTEST_SUITE:
                    # the status bar follows the stop a frame later (as the toasts below do)
                    await wait_for(pilot, lambda: state_text(app).startswith(
                        "stopped at tests/test_intervals.py:8 in test_touching_spans_merge"), timeout=10,
                        what="the status bar at the failing assertion")
                    text = state_text(app)
                    assert re.search(r"\(raised \d frames down in case\.py: d\)$", text), text
                else:
                    # the notice is painted with the other panes, after the stop's frame (PANES_WAIT)
                    def toasted() -> bool:
                        return any("could not collect tests/test_convert.py" in n.message for n in app._notifications)

                    await wait_for(pilot, toasted, timeout=10, what="the collection error's toast")
    finally:
        for session in made:
            session.close()


@pytest.fixture
def repo_with_venv(tmp_path):
    """NEEDS_PACKAGE with its dependency installed, from a wheel folder, into the repo's .venv
    (the project's interpreter, which the bwrap and local sandboxes use)."""
    from real_repos import NEEDS_PACKAGE, dependency_wheels, install_into_venv

    repo = NEEDS_PACKAGE.write(tmp_path / NEEDS_PACKAGE.name)
    install_into_venv(repo, dependency_wheels(NEEDS_PACKAGE, tmp_path / "wheels"), NEEDS_PACKAGE.extra["package"])
    return repo


@pytest.mark.parametrize("backend", ["local", pytest.param("bwrap")])
def test_a_dependency_in_the_projects_venv_is_what_bwrap_and_local_use(repo_with_venv, backend):
    from real_repos import NEEDS_PACKAGE as real

    sandbox = make_sandbox(backend, repo_with_venv)
    session = Session(str(repo_with_venv), pdb_timeout=60, sandbox_obj=sandbox)
    try:
        session.start()
        assert session.sandbox.python == str(repo_with_venv / ".venv" / "bin" / "python")
        stop = session.state.stop
        assert f"{stop.file}:{stop.line}" == real.opens_at, (stop, session.error)
        session.send(f"b {real.breakpoint}")
        assert session.send("c").stop.reason == "breakpoint"
        assert session.send(f"p {real.expression}").output.strip() == real.value
    finally:
        session.close()
