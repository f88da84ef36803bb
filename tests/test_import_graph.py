"""No circle between the installed package's modules: every import (at module level or inside a
function: a lazy import is still a dependency) is read from the installed files, and the graph
has no strongly connected component of more than one module."""

from __future__ import annotations

import ast
import importlib.util
import pkgutil
from pathlib import Path

import dgym_tui


# The packages the build maps from the repo's other top-level folders (pyproject's package-dir):
# an installed layout that a walk of dgym_tui's own folder does not reach in an editable install.
MAPPED = ("dgym_tui.sandbox", "dgym_tui.tools", "dgym_tui.themes")


def modules() -> dict[str, Path]:
    found = {"dgym_tui": Path(dgym_tui.__file__)}
    for package in ("dgym_tui", *MAPPED):
        module = importlib.import_module(package)
        found[package] = Path(module.__file__)
        for info in pkgutil.walk_packages(module.__path__, f"{package}."):
            spec = importlib.util.find_spec(info.name)
            if spec is not None and spec.origin and spec.origin.endswith(".py"):
                found[info.name] = Path(spec.origin)
    return found


def imports_of(name: str, path: Path, known: set[str]) -> set[str]:
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[:len(parts) - node.level + 1] + ([node.module] if node.module else []))
            names = [base, *(f"{base}.{a.name}" for a in node.names)]
        else:
            continue
        out |= {n for n in names if n in known and n != name}
    return out


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components of more than one module."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_the_installed_package_has_no_circle_between_modules():
    found = modules()
    assert len(found) > 100 and "dgym_tui.sandbox.docker_sandbox" in found and "dgym_tui.tools.pdb" in found
    graph = {name: imports_of(name, path, set(found)) for name, path in found.items()}
    assert circles(graph) == []


def test_the_check_finds_a_circle():
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert circles({"a": {"b"}, "b": set()}) == []
