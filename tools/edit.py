"""edit: change a file of the repository (a range of lines, the whole file, or a new file)."""

from __future__ import annotations

import difflib

from dgym_tui.tools.base import Tool, ToolError, ToolOutput, as_int


class EditTool(Tool):
    name = "edit"
    description = (
        "Replace lines start..end (1-based, inclusive) of a file with new_code; without start the whole "
        "file is replaced (or created). The change becomes a checkpoint the person can undo; "
        "breakpoints move with their lines and the program is restarted on the new code.")
    parameters = {
        "path": {"type": "string", "description": "The file to change, relative to the repository root."},
        "start": {"type": ["integer", "null"], "description": "First line to replace (1-based); null: the whole file."},
        "end": {"type": ["integer", "null"], "description": "Last line to replace (inclusive); null: the same as start."},
        "new_code": {"type": "string", "description": "The new lines, with their full indentation."},
    }
    required = ("path", "new_code")
    changes_files = True
    guidance = "change the code with edit once you know the cause;"
    brief = "fix the code with edit"
    order = 70

    def fitted(self, tools) -> Tool:
        if "pdb" in tools:
            return self
        fitted = EditTool()
        fitted.description = ("Replace lines start..end (1-based, inclusive) of a file with new_code; without "
                              "start the whole file is replaced (or created). The change becomes a checkpoint "
                              "the person can undo.")
        return fitted

    def run(self, session, actor: str, path: str, new_code: str, start=None, end=None) -> ToolOutput:
        start, end = as_int(start, "start"), as_int(end, "end")
        if start is not None and start < 1:
            raise ToolError("Edit failed. Error message:\nInvalid line number, line numbers are 1-based.")
        if start is not None and end is not None and end < start:
            raise ToolError("Edit failed. Error message:\nInvalid line number range, start should be less "
                            "than or equal to end.")
        before, after = session.preview_edit(path, new_code, start, end, actor=actor)
        session.edit(path, new_code, start, end, actor=actor)
        diff = "".join(difflib.unified_diff(before.splitlines(keepends=True), after.splitlines(keepends=True),
                                            "original", "current"))
        return ToolOutput(f"The file `{path}` has been updated successfully.\n\nDiff:\n\n{diff}")
