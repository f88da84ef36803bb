"""bash: a shell command in the sandbox (never on the person's machine)."""

from __future__ import annotations

from dgym_tui.tools.base import Tool, ToolOutput, as_int, cap

DEFAULT_TIMEOUT, MAX_TIMEOUT = 30, 600


class BashTool(Tool):
    name = "bash"
    description = ("Run a shell command in the sandbox's copy of the repository (no network). Files it "
                   "changes become a checkpoint the person can undo.")
    guidance = "run a shell command in the sandbox (bash) when no other tool does what you need;"
    order = 60
    parameters = {
        "command": {"type": "string", "description": "The command, run with sh -c in the repository root."},
        "timeout": {"type": ["integer", "null"], "description": f"Seconds before it is stopped (default {DEFAULT_TIMEOUT})."},
    }
    required = ("command",)
    changes_files = True

    def run(self, session, actor: str, command: str, timeout=None) -> ToolOutput:
        seconds = min(MAX_TIMEOUT, max(1, as_int(timeout, "timeout") or DEFAULT_TIMEOUT))
        result = session.shell(command, timeout=seconds, actor=actor)
        output = result.output.rstrip("\n")
        if result.timed_out:
            return ToolOutput(cap(f"Command timed out after {seconds} s.\nPartial output:\n{output}"), ok=False)
        if result.exit_code != 0:
            return ToolOutput(cap(f"Command failed (exit code {result.exit_code}) with output:\n{output}"), ok=False)
        return ToolOutput(cap(output) if output else "Command executed successfully (no output)")
