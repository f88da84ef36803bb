"""README stays true: its library example runs, and CI runs its test command."""

from __future__ import annotations

import re
import shutil

from conftest import EXAMPLE, ROOT

README = (ROOT / "README.md").read_text()


def test_library_example_runs(tmp_path, monkeypatch, capsys):
    block = re.search(r"## Using the core as a library.*?```python\n(.*?)```", README, re.S).group(1)
    assert len(block.strip().splitlines()) <= 20
    shutil.copytree(EXAMPLE, tmp_path / "examples" / "shopcart")
    monkeypatch.chdir(tmp_path)
    exec(compile(block.replace('sandbox="auto"', 'sandbox="local"'), "README.md", "exec"), {})
    out = capsys.readouterr().out
    assert "reserve" in out and "'MUG-01'" in out and "if sku == 'MUG-01'" in out
    assert "['tests/test_orders.py::test_batch_backorders_when_stock_runs_out']" in out


def test_ci_runs_the_readme_test_command():
    command = re.search(r"The test command itself, once set up:\n\n```bash\n(.+?)\n```", README).group(1)
    ci_lines = [ln.strip() for ln in (ROOT / ".ci" / "run").read_text().splitlines()
                if ln.strip() and not ln.strip().startswith("#")]
    assert ci_lines[-1] == command
