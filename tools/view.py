"""view: a file of the repository, with line numbers and breakpoint marks."""

from __future__ import annotations

from dgym_tui.tools.base import Tool, ToolError, ToolOutput, as_int

MAX_LINES = 1000  # per call; the model asks for the next range
NUMBERED = "include_line_numbers_and_breakpoints"  # debug-gym's name for it


class ViewTool(Tool):
    name = "view"
    description = (
        "Show a file of the repository (as it is in the sandbox now), with line numbers and `B` "
        "before lines with a breakpoint. Give start/end (1-based, inclusive) for part of a long file.")
    parameters = {
        "path": {"type": "string", "description": "A file path relative to the repository root."},
        "start": {"type": ["integer", "null"], "description": "First line to show (1-based); null: 1."},
        "end": {"type": ["integer", "null"], "description": "Last line to show (inclusive); null: the end."},
        "include_line_numbers_and_breakpoints": {
            "type": ["boolean", "null"], "default": True,
            "description": "Prefix each line with its number and `B` where a breakpoint is (default true).",
        },
    }
    required = ("path",)
    also_takes = {"include_line_numbers": {"type": ["boolean", "null"]}}
    guidance = "read the failing tests and the code they call (view);"
    brief = "view"
    order = 20

    def fitted(self, tools) -> Tool:
        """Without pdb there are no breakpoints to mark: the same tool, said without them."""
        if "pdb" in tools:
            return self
        fitted = ViewTool()
        fitted.description = ("Show a file of the repository (as it is in the sandbox now), with line numbers. "
                              "Give start/end (1-based, inclusive) for part of a long file.")
        fitted.parameters = {**{k: v for k, v in self.parameters.items() if k != NUMBERED},
                             "include_line_numbers": {"type": ["boolean", "null"], "default": True,
                                                      "description": "Prefix each line with its number (default true)."}}
        fitted.also_takes = {NUMBERED: self.parameters[NUMBERED]}
        return fitted

    def run(self, session, actor: str, path: str, start=None, end=None,
            include_line_numbers_and_breakpoints: bool | None = None,
            include_line_numbers: bool | None = None) -> ToolOutput:
        if include_line_numbers_and_breakpoints is None:
            include_line_numbers_and_breakpoints = include_line_numbers
        path = path.strip()
        if not path:
            raise ToolError("Invalid file path. Please specify a valid file path.")
        text = session.read_source(path, actor=actor)
        lines = text.splitlines()
        total = len(lines)
        if not total:
            return ToolOutput(f"The file `{path}` is empty.")
        first, last = as_int(start, "start") or 1, as_int(end, "end") or total
        last = min(last, total)
        if not 1 <= first <= total:
            raise ToolError(f"Invalid start index: `{first}`. It should be between 1 and {total}.")
        if first > last:
            raise ToolError(f"Invalid range: start index `{first}` is greater than end index `{last}`.")
        note = ""
        if last - first + 1 > MAX_LINES:
            last = first + MAX_LINES - 1
            note = f"\n(only {MAX_LINES} lines per call: ask for start={last + 1} to go on)"
        numbered = include_line_numbers_and_breakpoints is not False
        marked = {bp.line for bp in session.breakpoints.items() if bp.file == path}
        width = 4 if total < 10_000 else 8
        body = []
        for number in range(first, last + 1):
            code = lines[number - 1]
            if numbered:
                body.append(f"{'B ' if number in marked else '  '}{number:>{width}} {code}")
            else:
                body.append(code)
        legend = " B indicates breakpoint before a certain line of code." if numbered and marked else ""
        return ToolOutput(f"Viewing `{path}`, lines {first}-{last} of {total} total lines.{legend}{note}\n\n"
                          "```\n" + "\n".join(body) + "\n```\n")
