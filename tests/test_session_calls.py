"""The UI's typed calls (ui/session_calls.py) against the session's operations they queue, and the
key map (ui/keymap.py) against the actions the screen and the app have."""

from __future__ import annotations

import ast
import inspect

import pytest

import dgym_tui.core.session  # noqa: F401  (registers the operations)
from dgym_tui.core.runner import OPERATIONS
from dgym_tui.ui import keymap
from dgym_tui.ui.app import DgymApp
from dgym_tui.ui.screens.main import MainScreen
from dgym_tui.ui.session_calls import SessionCalls

CALLBACKS = {"done", "failed"}


def queued(method) -> list[tuple[str, set[str]]]:
    """The (operation, keyword arguments) each `self._queue(...)` in a method's source passes."""
    tree = ast.parse(inspect.getsource(method).strip().replace("\n    ", "\n"))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "_queue":
            name = node.args[0].value
            found.append((name, {k.arg for k in node.keywords if k.arg not in ("actor", *CALLBACKS)}))
    return found


CALLS = [name for name, _ in inspect.getmembers(SessionCalls, inspect.isfunction) if not name.startswith("_")]


@pytest.mark.parametrize("name", CALLS)
def test_each_call_queues_its_operation_with_the_operations_own_arguments(name):
    method = getattr(SessionCalls, name)
    [(operation, passed)] = queued(method)
    assert operation == name, "a call is named after the operation it queues"
    assert operation in OPERATIONS, f"no session operation {operation!r}"
    wanted = inspect.signature(OPERATIONS[operation].fn).parameters
    accepted = {p for p in wanted if p not in ("self", "actor")}
    assert passed <= accepted, f"{name} passes {passed - accepted} that {operation} does not take"
    required = {p for p, v in wanted.items() if v.default is inspect.Parameter.empty and p not in ("self", "actor")}
    assert required <= passed, f"{name} leaves out {required - passed}"
    # and what the UI gives the method is what it passes on (no argument dropped on the way)
    own = set(inspect.signature(method).parameters) - {"self", *CALLBACKS}
    assert own == passed


def test_the_ui_names_no_operation_outside_session_calls():
    import pathlib

    import dgym_tui.ui as ui

    for path in pathlib.Path(ui.__file__).parent.rglob("*.py"):
        if path.name == "session_calls.py":
            continue
        text = path.read_text()
        assert ".submit(" not in text and "app.ask(" not in text, f"{path.name} queues a call by name"


def action_exists(action: str) -> bool:
    target = DgymApp if action.startswith("app.") else MainScreen
    name = action.removeprefix("app.").split("(")[0]
    return callable(getattr(target, f"action_{name}", None))


def test_every_command_in_the_key_map_is_an_action_the_screen_or_the_app_has():
    assert all(action_exists(c.action) for c in keymap.COMMANDS), [c.action for c in keymap.COMMANDS
                                                                    if not action_exists(c.action)]
    keys = [k for c in keymap.COMMANDS if c.keys for k in c.keys.split(",")]
    assert len(keys) == len(set(keys)), "a key bound twice"
    titles = [c.palette for c in keymap.in_palette()]
    assert len(titles) == len(set(titles))
    assert {b.key for b in MainScreen.BINDINGS} == set(keys)
