"""Where a repo's tests and code are (core/project.py), read as pytest and the build tools would."""

from __future__ import annotations

import pytest

from dgym_tui.core.project import read_project


def project(files: dict[str, str]):
    return read_project(sorted(files), files.get)


CODE = {"pkg/__init__.py": "", "pkg/core.py": ""}


def test_tests_inside_the_package_are_found_and_vendored_scripts_are_not_tests():
    p = project({**CODE, "versioneer.py": "", "pkg/tests/__init__.py": "", "pkg/tests/test_core.py": "",
                 "pkg/tests/helpers.py": "", "docs/conf.py": ""})
    assert p.tests == ("pkg/tests/test_core.py",) and p.config.source is None


def test_pytests_default_patterns_and_skipped_folders():
    p = project({"a_test.py": "", "test_b.py": "", "testc.py": "", ".tox/x/test_d.py": "",
                 "build/test_e.py": "", "node_modules/test_f.py": "", "venv/lib/test_g.py": ""})
    assert p.tests == ("a_test.py", "test_b.py")


@pytest.mark.parametrize("name, text", [
    ("pytest.ini", "[pytest]\ntestpaths = checks\npython_files = check_*.py\n"),
    (".pytest.ini", "[pytest]\ntestpaths = checks\npython_files = check_*.py\n"),
    ("pyproject.toml", "[tool.pytest.ini_options]\ntestpaths = ['checks']\npython_files = ['check_*.py']\n"),
    ("tox.ini", "[tox]\nenvlist = py3\n\n[pytest]\ntestpaths =\n    checks\npython_files = check_*.py\n"),
    ("setup.cfg", "[metadata]\nname = x\n\n[tool:pytest]\ntestpaths = checks\npython_files = check_*.py\n"),
])
def test_each_place_pytest_reads_its_configuration_from(name, text):
    p = project({name: text, "checks/check_one.py": "", "other/check_two.py": "", "checks/test_no.py": ""})
    assert p.config.source == name
    assert p.tests == ("checks/check_one.py",)


def test_pytest_ini_wins_over_pyproject_even_without_a_setting_there():
    p = project({"pytest.ini": "[pytest]\n", "pyproject.toml": "[tool.pytest.ini_options]\ntestpaths=['x']\n",
                 "tests/test_a.py": ""})
    assert p.config.source == "pytest.ini" and p.tests == ("tests/test_a.py",)


def test_a_pyproject_without_pytest_settings_falls_through_to_setup_cfg():
    p = project({"pyproject.toml": "[project]\nname='x'\n", "setup.cfg": "[tool:pytest]\ntestpaths = t\n",
                 "t/test_a.py": "", "test_b.py": ""})
    assert p.config.source == "setup.cfg" and p.tests == ("t/test_a.py",)


def test_testpaths_take_globs_files_and_norecursedirs():
    p = project({"pytest.ini": "[pytest]\ntestpaths = packages/*/tests test_top.py\nnorecursedirs = fixtures\n",
                 "packages/a/tests/test_a.py": "", "packages/b/tests/fixtures/test_data.py": "",
                 "packages/b/test_b.py": "", "test_top.py": ""})
    assert p.tests == ("packages/a/tests/test_a.py", "test_top.py")


def test_broken_configuration_files_are_read_as_absent():
    p = project({"pyproject.toml": "[tool.pytest.ini_options\n", "setup.cfg": "not = [an ini",
                 "tests/test_a.py": ""})
    assert p.config.source is None and p.tests == ("tests/test_a.py",)


@pytest.mark.parametrize("files, roots", [
    ({"src/pkg/__init__.py": ""}, ("src",)),                       # the usual src/ layout
    ({"src/tool.py": ""}, ("src",)),                               # a module right in src/
    ({"src/data/readme.txt": "", "pkg/__init__.py": ""}, ()),       # src/ without code: not a layout
    ({"pyproject.toml": "[tool.setuptools]\npackage-dir = {'' = 'lib'}\n", "lib/pkg/__init__.py": ""},
     ("lib",)),
    ({"pyproject.toml": "[tool.setuptools.packages.find]\nwhere = ['code']\n", "code/pkg/__init__.py": ""},
     ("code",)),
    ({"pyproject.toml": "[tool.poetry]\npackages = [{include = 'pkg', from = 'source'}]\n",
      "source/pkg/__init__.py": ""}, ("source",)),
    ({"pyproject.toml": "[tool.hatch.build.targets.wheel]\npackages = ['python/pkg']\n",
      "python/pkg/__init__.py": ""}, ("python",)),
    ({"setup.cfg": "[options]\npackage_dir =\n    =lib\n", "lib/pkg/__init__.py": ""}, ("lib",)),
    ({"pytest.ini": "[pytest]\npythonpath = . helpers\n", "helpers/h.py": "", "src/pkg/__init__.py": ""},
     ("helpers", "src")),
    ({"pytest.ini": "[pytest]\npythonpath = ../elsewhere missing\n", "a.py": ""}, ()),  # never outside
])
def test_import_roots(files, roots):
    assert project(files).import_roots == roots


# --- debug-gym's task folders: test.py next to the code (issue 26) -------------------------------


def test_a_test_py_next_to_the_code_counts_where_pytests_patterns_find_none():
    p = project({"shopping_cart_code.py": "", "test.py": "", ".debugignore": ""})
    assert p.tests == ("test.py",) and p.named and not p.has_tests  # pytest must be told its name
    p = project({"shop/models.py": "", "shop/tests.py": "", "manage.py": ""})  # a Django app
    assert p.tests == ("shop/tests.py",) and p.named
    # pytest's own patterns win; a configured python_files is the project's word
    assert project({"test.py": "", "test_cart.py": ""}).tests == ("test_cart.py",)
    p = project({"pytest.ini": "[pytest]\npython_files = check_*.py\n", "test.py": ""})
    assert p.tests == () and not p.named
    assert project({"build/test.py": "", "code.py": ""}).tests == ()  # norecursedirs still hold


MINI_NIGHTMARE = {  # shaped like debug-gym's mini_nightmare tasks
    "shopping_cart_code.py": (
        "class ShoppingCart:\n"
        "    def __init__(self):\n"
        "        self.items = {}\n"
        "\n"
        "    def add(self, name, price, quantity=1):\n"
        "        self.items[name] = (price, quantity)\n"
        "\n"
        "    def total(self):\n"
        "        return sum(price for price, quantity in self.items.values())\n"),
    "test.py": (
        "from shopping_cart_code import ShoppingCart\n"
        "\n"
        "\n"
        "def test_total_counts_quantities():\n"
        "    cart = ShoppingCart()\n"
        "    cart.add('apple', 2.0, 3)\n"
        "    assert cart.total() == 6.0\n"
        "\n"
        "\n"
        "def test_empty_cart():\n"
        "    assert ShoppingCart().total() == 0\n"),
    ".debugignore": "*.pyc\n",
}


@pytest.fixture
def mini_nightmare(tmp_path):
    repo = tmp_path / "shopping_cart"
    repo.mkdir()
    for name, text in MINI_NIGHTMARE.items():
        (repo / name).write_text(text)
    return repo


@pytest.mark.parametrize("backend", [pytest.param("local", id="local"),
                                     pytest.param("docker", id="docker", marks=pytest.mark.docker)])
def test_a_debug_gym_folder_opens_at_its_failing_test_and_eval_runs_test_py(mini_nightmare, backend):
    from conftest import make_sandbox, require_docker

    from dgym_tui.core.session import Session
    from dgym_tui.tools.eval import report

    if backend == "docker":
        require_docker()
    s = Session(str(mini_nightmare), pdb_timeout=60, sandbox_obj=make_sandbox(backend, mini_nightmare))
    try:
        s.start()
        assert s.error is None, s.error
        assert s.entrypoint.label == "pytest test.py"
        stop = s.state.stop
        assert (stop.reason, f"{stop.file}:{stop.line}") == ("post_mortem", "test.py:7")
        tests = s.run_tests()
        assert (tests.passed, tests.failed, tests.errors) == (1, 1, 0)
        assert tests.failing == ["test.py::test_total_counts_quantities"]
        # the entrypoint's -k reaches eval too: selecting nothing, it says no test ran
        s.set_entrypoint("pytest test.py -k nothing_matches")
        assert report(s.run_tests()).startswith("Tests: no test ran (pytest found none to run)")
    finally:
        s.close()


def test_dgym_tui_run_on_a_debug_gym_folder_evals_its_test_py(mini_nightmare, tmp_path):
    import json
    import os
    import subprocess
    import sys

    from dgym_tui.core.session_file import read_session

    script = tmp_path / "eval.json"
    script.write_text(json.dumps([{"tool_calls": [{"name": "eval", "arguments": {}}]}]))
    env = {**os.environ, "DGYM_TUI_CONFIG_DIR": str(tmp_path / "cfg"), "DGYM_TUI_DATA_DIR": str(tmp_path / "data")}
    out = subprocess.run([sys.executable, "-m", "dgym_tui", "run", "--sandbox", "local", "--mode", "auto",
                          "-e", "pytest test.py", "--model", f"scripted:{script}", "--max-steps", "3",
                          "--session", str(tmp_path / "run.jsonl"), str(mini_nightmare)],
                         capture_output=True, text=True, timeout=120, env=env)
    assert out.returncode == 1, out.stdout + out.stderr
    assert "tests (pytest test.py): 1 passed, 1 failed, 0 errors" in out.stdout, out.stdout
    told = [e.data.observation for e in read_session(tmp_path / "run.jsonl").events
            if e.kind == "tool_result" and e.data.tool == "eval"]
    assert told and told[0].startswith("Tests: 1 passed, 1 failed, 0 errors\nFailing:\n"
                                       "- test.py::test_total_counts_quantities"), told
