"""The session's workspace: edits, the shell, checkpoints and undo, set-up, tools.

A part of Session (core/session.py), in a module of its own: its methods are the Session's,
marked `@operation` where the runner runs them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dgym_tui.core.events import HUMAN, SYSTEM, Breakpoints, Checkpoint, Notice, Progress, Restored, ToolResult
from dgym_tui.core.workspace import Record, edited_text
from dgym_tui.core.runner import operation
from dgym_tui.sandbox.errors import SandboxError, SandboxGone

if TYPE_CHECKING:  # the debugger and the backends load in start(), off the UI's first frame
    from dgym_tui.sandbox.base import ExecResult
    from dgym_tui.tools.base import ToolOutput


AGENT_SHELL_CAP = 64 * 1024  # bytes of a shell command's output kept


class WorkspaceDoor:
    """The repository's copy as it changes: edits, the shell, checkpoints, undo, the tools."""

    @operation(writes=True)
    def set_up(self, command: str, timeout: float = 900, actor: str = SYSTEM) -> bool:
        """A task's set-up command run in the sandbox before anyone works there; what it changed
        becomes the baseline (no part of anyone's patch). True when it changed files. SandboxError:
        it failed (its last line said)."""
        sandbox = self._sandbox()
        self.events.emit(Progress(message=f"setting up: {command}", step="sandbox"), actor)
        result = sandbox.exec(command, timeout=timeout)
        if not result.ok:
            raise SandboxError(f"the set-up command failed ({command}): "
                               f"{(result.output.strip().splitlines() or ['no output'])[-1]}")
        if not sandbox.changed_files():
            return False
        sandbox.baseline = sandbox.checkpoint("the task's setup")
        self._refresh_changes(actor)
        return True


    @operation(writes=True)
    def edit(self, path: str, new_code: str, start: int | None = None, end: int | None = None,
             actor: str = HUMAN) -> Record:
        """Replace lines start..end (1-based, inclusive) of a repo file with new_code — or the
        whole file, or write a new one — as a checkpoint; breakpoints move with their code and
        the program starts again on the new code."""
        sandbox = self._sandbox()
        path = sandbox.rel_path(path)
        text = self._edited(path, new_code, start, end)
        sandbox.write_text(path, text)
        label = f"{path}:{start}-{end if end is not None else start}" if start is not None else path
        record = self.checkpoint(f"edit {label}", actor=actor)
        if record is None:
            raise SandboxError(f"the edit leaves {path} as it was: nothing changed")
        return record


    @operation(lane="look")
    def preview_edit(self, path: str, new_code: str, start: int | None = None, end: int | None = None,
                     actor: str = SYSTEM) -> tuple[str, str]:
        """What an edit would do, without doing it: the file's text before and after."""
        path = self._sandbox().rel_path(path)
        old = self._text_or_none(path)
        return old or "", self._edited(path, new_code, start, end, old)


    def _text_or_none(self, path: str) -> str | None:
        try:
            return self._sandbox().read_text(path)
        except SandboxGone:
            raise
        except SandboxError:
            return None  # a new file


    def _edited(self, path: str, new_code: str, start, end, old: str | None = "") -> str:
        if old == "":
            old = self._text_or_none(path)
        if old is None and start is not None and start > 1:
            raise SandboxError(f"{path} does not exist: give no start/end to create it")
        try:
            return edited_text(old, new_code, start, end)
        except ValueError as e:
            raise SandboxError(f"{path}: {e}") from None


    @operation(writes=True)
    def shell(self, command: str, timeout: float = 60, actor: str = HUMAN) -> ExecResult:
        """A shell command in the sandbox (never on the host). If it changed files, that is a
        checkpoint like an edit."""
        sandbox = self._sandbox()
        result = sandbox.exec(command, timeout=timeout, output_cap=AGENT_SHELL_CAP)
        if self.checkpoint(f"shell: {command[:60]}", actor=actor) is None:
            self._refresh_changes(actor)
        return result


    @operation(writes=True)
    def checkpoint(self, message: str, actor: str = HUMAN) -> Record | None:
        """Commit what changed in the sandbox since the last checkpoint (None if nothing did)."""
        sandbox = self._sandbox()
        record = self.workspace.checkpoint(sandbox, message, actor)
        if record is None:
            return None
        self.events.emit(Checkpoint(id=record.id, message=record.message, patch=record.patch), actor)
        self._moved(record.patch, actor)
        self._refresh_changes(actor)
        self._code_changed(actor, f"the code changed ({message})")
        return record


    @operation(writes=True)
    def undo(self, actor: str = HUMAN) -> Record:
        """Revert the last checkpoint; the files, breakpoints and program follow."""
        undone, target, reverse = self.workspace.undo(self._sandbox())
        self.events.emit(Restored(to=target, undone=[undone.id], message=f"undid: {undone.message}"), actor)
        self._moved(reverse, actor)
        self._refresh_changes(actor)
        self._code_changed(actor, f"undid {undone.message}")
        return undone


    def _moved(self, patch: str, actor: str) -> None:
        """Breakpoints follow their code through a patch; those whose line went are reported."""
        if not self.breakpoints.items():
            return
        dropped = self.breakpoints.remap(patch)
        self.events.emit(Breakpoints(breakpoints=self.breakpoints.snapshot()), actor)
        for bp in dropped:
            self.events.emit(Notice(message=f"breakpoint {bp.label()} removed: its line was changed"), actor)


    def _code_changed(self, actor: str, reason: str) -> None:
        """A run in progress runs the old code: it ends here, and the next c, n or s runs the new
        code to the breakpoints (moved with their code). Nothing is run again unasked: a suite
        that takes minutes is not rerun after every edit."""
        self.compile_ahead.request(self.sandbox)  # the changed modules: the old bytecode no longer matches
        if self.debugger is not None and self.debugger.state != "idle":
            self.debugger.end_run(actor, f"{reason}: the run with the old code ended; c, n or s runs the new code")


    @property
    def tools(self) -> dict:
        if self._tools is None:
            from dgym_tui.tools import registry

            self._tools = registry()
        return self._tools


    @operation(writes=True)
    def run_tool(self, name: str, args: dict, call_id: str = "", record: bool = True,
                 actor: str = HUMAN) -> ToolOutput:
        """Run a tool (tools/); whatever happens, an observation comes back, never an exception.
        record: emit its ToolResult (a tried call's result comes with its final decision)."""
        from dgym_tui.tools.base import ToolError, ToolOutput, cap
        from dgym_tui.tools.registry import call_problem

        if problem := call_problem(self.tools, name, args):
            output = ToolOutput(f"error: {problem}", ok=False)
        else:
            tool = self.tools[name]
            try:
                given = {k: v for k, v in args.items() if v is not None}  # null: the default
                output = tool.run(self, actor, **given)
                if isinstance(output, str):
                    output = ToolOutput(output)
            except SandboxGone as e:
                self._fail(str(e), actor, gone=True)
                output = ToolOutput(f"error: {e}", ok=False)
            except (SandboxError, ToolError, ValueError) as e:
                output = ToolOutput(str(e) if isinstance(e, ToolError) else f"error: {e}", ok=False)
            except Exception as e:  # a tool's bug: the model is told, the session goes on
                output = ToolOutput(f"error: the {name} tool failed: {type(e).__name__}: {e}", ok=False)
        output.observation = cap(output.observation)
        if record:
            self.events.emit(ToolResult(call_id=call_id, tool=name, observation=output.observation,
                                        executed=True, ok=output.ok), actor)
        return output
