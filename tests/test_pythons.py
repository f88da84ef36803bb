"""pythons.require: a pyenv Python that is missing fails the test under CI (as a missing bwrap
does, conftest.require_bwrap) and skips it elsewhere, saying which one."""

from __future__ import annotations

import pytest

import pythons


@pytest.fixture
def missing_39(monkeypatch):
    monkeypatch.setitem(pythons.PATHS, "3.9", "/nonexistent/pyenv/versions/3.9.x/bin/python")


def test_a_missing_python_fails_under_ci(missing_39, monkeypatch):
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match=r"CI must have every pyenv Python: no Python 3\.9 here"):
        pythons.require("3.9")


def test_a_missing_python_is_skipped_elsewhere(missing_39, monkeypatch):
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match=r"no Python 3\.9 here \(pyenv's CPython 3\.9: /nonexistent/"):
        pythons.require("3.9")


def test_a_python_that_is_here_is_its_path(monkeypatch):
    monkeypatch.setenv("CI", "true")
    assert pythons.require(pythons.OLD) == pythons.PATHS["2.7"]  # pyenv's 2.7.18, on every machine here
    assert pythons.PATHS["2.7"].startswith("/root/.pyenv/versions/2.7.")
