"""The debugging tools shared by the agent and the person (installed as ``dgym_tui.tools``).

One module per tool, each a small `Tool` (name, description, JSON schema, run); `registry()`
gives them by name, third-party ones included. Names, arguments and observations follow
debug-gym's, so its prompts and agents carry over.
"""

from dgym_tui.tools.base import Tool, ToolError, ToolOutput
from dgym_tui.tools.registry import call_problem, registry

__all__ = ["Tool", "ToolError", "ToolOutput", "call_problem", "registry"]
