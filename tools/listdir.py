"""listdir: the repository's folders as a tree."""

from __future__ import annotations

from dgym_tui.tools.base import Tool, ToolError, ToolOutput, as_int

MAX_DEPTH = 20
MAX_ENTRIES = 1000


class ListdirTool(Tool):
    name = "listdir"
    description = "List a folder of the repository as a tree, folders ending in `/` (depth 1 by default)."
    guidance = "see how the repository is laid out (listdir);"
    brief = "listdir"
    order = 10
    parameters = {
        "path": {"type": ["string", "null"], "description": "A folder relative to the repository root; null: the root."},
        "depth": {"type": ["integer", "null"], "description": "How many levels to show (default 1)."},
    }

    def run(self, session, actor: str, path: str | None = None, depth=None) -> ToolOutput:
        path = (path or ".").strip() or "."
        depth = as_int(depth, "depth") or 1
        if depth < 1:
            raise ToolError(f"Depth must be 1 or greater, got `depth={depth}`")
        entries = session.walk(path, min(depth, MAX_DEPTH), actor=actor)
        lines = [("." if path == "." else path.rstrip("/")) + "/"]
        for rel, is_dir in entries[:MAX_ENTRIES]:
            level = rel.count("/")
            lines.append("  " * level + "|-- " + rel.rsplit("/", 1)[-1] + ("/" if is_dir else ""))
        if len(entries) > MAX_ENTRIES:
            lines.append(f"[... {len(entries) - MAX_ENTRIES} more entries: list a sub-folder]")
        return ToolOutput("\n".join(lines) + "\n")
