"""The lexer chosen for a file's name: pygments' own choice, without loading lexer plugins."""

from __future__ import annotations

import pytest
from pygments.lexers import get_lexer_for_filename
from pygments.util import ClassNotFound

from dgym_tui.ui import lexers
from dgym_tui.ui.widgets.diff_model import tokens_by_line

NAMES = ["main.py", "types.pyi", "README.md", "pyproject.toml", "setup.cfg", "pytest.ini", "Makefile",
         "Dockerfile", "CMakeLists.txt", "a.h", "b.c", "c.cpp", "x.json", "ci.yaml", "run.sh", ".bashrc",
         "index.html", "app.js", "app.ts", "doc.rst", "q.sql", "x.php5", "notes.txt", "data.csv", "LICENSE"]


@pytest.fixture(autouse=True)
def fresh_cache(monkeypatch):
    monkeypatch.setattr(lexers, "_CLASSES", {})


def pygments_choice(name: str) -> str | None:
    try:
        lexer = get_lexer_for_filename(name)
    except ClassNotFound:
        return None
    return None if lexer.name == "Text only" else lexer.name


@pytest.mark.parametrize("name", NAMES)
def test_the_same_lexer_as_pygments_own_lookup(name):
    lexer = lexers.lexer_for(name)
    assert (lexer.name if lexer is not None else None) == pygments_choice(name)


def test_no_lexer_plugin_is_loaded(monkeypatch):
    import pygments.lexers
    import pygments.plugin

    def refuse(*args, **kwargs):
        raise AssertionError("a lexer plugin was looked up")

    monkeypatch.setattr(pygments.plugin, "find_plugin_lexers", refuse)
    monkeypatch.setattr(pygments.lexers, "find_plugin_lexers", refuse)
    for name in ["main.py", "README.md", "x.php5", "no-such.kind"]:
        lexers.lexer_for(name)
    assert lexers.lexer_for("main.py").name == "Python"
    assert lexers.lexer_for("no-such.kind") is None


def test_options_reach_the_lexer_and_each_call_gets_its_own():
    one = lexers.lexer_for("src/pkg/mod.py", stripnl=False, ensurenl=True)
    two = lexers.lexer_for("mod.py")
    assert one is not two and one.stripnl is False and two.stripnl is True
    assert lexers.known("other/dir/mod.py") and not lexers.known("unseen.py")


def test_a_lexer_module_that_fails_to_load_means_plain_text(monkeypatch):
    import pygments.lexers

    def broken(name):
        raise ImportError("broken lexer module")

    monkeypatch.setattr(pygments.lexers, "find_lexer_class", broken)
    assert lexers.lexer_for("main.py") is None
    assert tokens_by_line("x = 1\n", "main.py") == [[(None, "x = 1")]]
