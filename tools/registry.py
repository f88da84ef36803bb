"""The tools by name: the built-in ones, then third-party ones from the entry-point group
`dgym_tui.tools` (an entry point names a Tool subclass or instance; see README "Adding a tool")."""

from __future__ import annotations

from importlib.metadata import entry_points

from dgym_tui.tools.base import Tool
from dgym_tui.tools.bash import BashTool
from dgym_tui.tools.edit import EditTool
from dgym_tui.tools.eval import EvalTool
from dgym_tui.tools.grep import GrepTool
from dgym_tui.tools.listdir import ListdirTool
from dgym_tui.tools.pdb import PdbTool
from dgym_tui.tools.submit import SubmitTool
from dgym_tui.tools.view import ViewTool

GROUP = "dgym_tui.tools"
BUILTIN = (PdbTool, ViewTool, ListdirTool, GrepTool, EvalTool, EditTool, BashTool, SubmitTool)
problems: list[str] = []  # third-party tools that could not be loaded, for `dgym-tui doctor`


def registry(names: list[str] | None = None) -> dict[str, Tool]:
    """name -> tool; `names` keeps only those (config's [agent] tools)."""
    tools: dict[str, Tool] = {cls.name: cls() for cls in BUILTIN}
    problems.clear()
    for ep in entry_points(group=GROUP):
        try:
            loaded = ep.load()
            tool = loaded() if isinstance(loaded, type) else loaded
            if not isinstance(tool, Tool) or not tool.name:
                raise TypeError("not a dgym_tui.tools.Tool with a name")
        except Exception as e:  # a broken plug-in must not stop the app
            problems.append(f"{ep.name} ({ep.value}): {type(e).__name__}: {e}")
            continue
        tools.setdefault(tool.name, tool)  # a plug-in cannot replace a built-in tool
    if names is not None:
        unknown = sorted(set(names) - set(tools))
        if unknown:
            raise ValueError(f"unknown tool{'s' if len(unknown) > 1 else ''}: {', '.join(unknown)} "
                             f"(tools: {', '.join(sorted(tools))})")
        tools = {n: t for n, t in tools.items() if n in names}
    return tools


def call_problem(tools: dict[str, Tool], name: str, args: dict) -> str | None:
    """What is wrong with calling the tool `name` with `args` among `tools` (None: nothing). The
    one check: an agent's call is checked before the person is asked about it (agent/calls.py),
    and the session checks whatever it runs (Session.run_tool), a call from the person included."""
    tool = tools.get(name)
    if tool is None:
        return f"there is no tool named {name!r}. The tools are: {', '.join(sorted(tools))}."
    return tool.check(args)
