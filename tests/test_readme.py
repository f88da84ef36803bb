"""README stays true and short: at most 200 lines, the front door to the manual in docs/; its
Python API example is the manual's; the manual's library example runs; CI runs its test command."""

from __future__ import annotations

import re
import shutil

from conftest import EXAMPLE, ROOT

README = (ROOT / "README.md").read_text()
PYTHON_API = (ROOT / "docs" / "python-api.md").read_text()


def test_the_readme_is_a_front_door_of_at_most_200_lines():
    assert len(README.splitlines()) <= 200
    for topic in ("docs/getting-started.md", "docs/agent.md", "docs/batch.md", "docs/swebench.md",
                  "docs/review.md", "docs/mcp.md", "## Licence"):
        assert topic in README


def test_the_readmes_python_api_example_is_the_manuals():
    def task_env(text: str) -> str:
        return re.search(r"```python\n(from dgym_tui.batch import TaskEnv.*?)```", text, re.S).group(1)

    assert task_env(README) == task_env(PYTHON_API)


def test_library_example_runs(tmp_path, monkeypatch, capsys):
    block = re.search(r"## The core as a library.*?```python\n(.*?)```", PYTHON_API, re.S).group(1)
    assert len(block.strip().splitlines()) <= 20
    shutil.copytree(EXAMPLE, tmp_path / "examples" / "shopcart")
    monkeypatch.chdir(tmp_path)
    exec(compile(block.replace('sandbox="auto"', 'sandbox="local"'), "docs/python-api.md", "exec"), {})
    out = capsys.readouterr().out
    assert "reserve" in out and "'MUG-01'" in out and "if sku == 'MUG-01'" in out
    assert "['tests/test_orders.py::test_batch_backorders_when_stock_runs_out']" in out


def test_ci_runs_the_readme_test_command():
    command = re.search(r"The test command itself, once set up:\n\n```bash\n(.+?)\n```", README).group(1)
    ci_lines = [ln.strip() for ln in (ROOT / ".ci" / "run").read_text().splitlines()
                if ln.strip() and not ln.strip().startswith("#")]
    assert ci_lines[-1] == command
