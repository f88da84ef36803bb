"""grep: search the repository's files with a regular expression."""

from __future__ import annotations

from dgym_tui.tools.base import Tool, ToolError, ToolOutput, as_int

LINE_CAP = 300


class GrepTool(Tool):
    name = "grep"
    description = ("Search the repository's text files for a regular expression (extended, as `grep -E`); "
                   "matches grouped by file with line numbers.")
    guidance = "find where a name is defined and used (grep);"
    brief = "grep"
    order = 30
    parameters = {
        "pattern": {"type": "string", "description": "The regular expression, e.g. `def total` or `qty\\s*=`."},
        "path": {"type": ["string", "null"], "description": "A file or folder to search, relative to the root; null: all."},
        "max_results": {"type": ["integer", "null"], "description": "Most matches to show (default 100)."},
    }
    required = ("pattern",)

    def run(self, session, actor: str, pattern: str, path: str | None = None, max_results=None) -> ToolOutput:
        if not pattern:
            raise ToolError("Pattern cannot be empty.")
        limit = max(1, as_int(max_results, "max_results") or 100)
        matches = session.search(pattern, path or ".", limit + 1, actor=actor)
        where = f"in {path}." if path else "in repository."
        if not matches:
            return ToolOutput(f"No matches found for pattern '{pattern}' {where}")
        shown = matches[:limit]
        header = (f"Showing first {limit} matches (search limit reached):" if len(matches) > limit
                  else f"Found {len(shown)} matches:")
        out, current = [header], None
        for file, line, text in shown:
            if file != current:
                out.append(f"\n=== {file} ===")
                current = file
            out.append(f"{line:>4}: {text[:LINE_CAP] + '...' if len(text) > LINE_CAP else text}")
        return ToolOutput("\n".join(out) + "\n")
