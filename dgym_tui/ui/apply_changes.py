"""Applying the session's change to the person's repo from the app (`W`, the palette).

The same plan and apply as `dgym-tui apply`: the change is the checkpoints in force (every
approved edit, every command that changed files), rebuilt against the repo and checked against
the file hashes the session file's header took at the start. Nothing reaches the repo before
the person has seen the whole diff and said yes; git and the file reads run off the UI thread.
"""

from __future__ import annotations

import json
import threading

from dgym_tui.core.safe_text import one_line
from dgym_tui.core.session_file import SessionFile, read_session

CHANGE_KINDS = {"checkpoint", "restored", "sandbox_ready"}  # events that change what would be applied


class ApplyChanges:
    def __init__(self, app) -> None:
        self.app = app
        self.applied_seq: int | None = None  # the stream's seq when the change was last applied

    def start(self) -> None:
        """Plan in a thread, then show the diff (or say why there is nothing to apply)."""
        recording = self._recording_source()
        if recording is None:
            self.app.notify("this session is not saved to a file, so the repo cannot be checked against "
                            "its start: nothing applied", severity="warning", title="Apply")
            return
        self.app.notify("rebuilding the change against your repo…", title="Apply", timeout=3)
        threading.Thread(target=self._plan, args=(recording,), name="dgym-apply", daemon=True).start()

    def already_applied(self) -> bool:
        """The change was applied and nothing changed it since (quitting need not ask)."""
        if self.applied_seq is None or self.app.replay is not None:
            return False
        history = self.app.session.events.history
        return not any(e.kind in CHANGE_KINDS for e in history if e.seq > self.applied_seq)

    def _recording_source(self):
        """A callable giving the session as recorded so far (run in the thread), or None."""
        app = self.app
        if app.replay is not None:
            recording = app.replay.recording
            return (lambda: recording) if recording.complete else (lambda: read_session(recording.path))
        writer = app.writer
        if writer is None:
            return None
        events = list(app.session.events.history)  # the live stream: newer than what is on disk

        def live() -> SessionFile:
            header = writer.header if writer.header is not None else _read_header(writer.path)
            return SessionFile(header=header, events=events, path=str(writer.path))
        return live

    def _plan(self, source) -> None:
        from dgym_tui.sessions import plan_apply

        try:
            recording = source()
            plan = plan_apply(recording)
            seq = recording.events[-1].seq if recording.events else 0
        except Exception as e:  # a file gone or unreadable: said, nothing changed
            self.app.run_on_ui(self._said, f"not applied: {e}", "error")
            return
        self.app.run_on_ui(self._show, plan, seq)

    def _show(self, plan, seq: int) -> None:
        from dgym_tui.ui.screens.apply import ApplyScreen

        if not plan.can_apply:
            if plan.already_applied:
                self.applied_seq = seq
            self._said(plan.summary(), "error" if plan.problem else "information")
            return

        def answered(yes: bool | None) -> None:
            if yes:
                threading.Thread(target=self._apply, args=(plan, seq), name="dgym-apply", daemon=True).start()
        self.app.push_screen(ApplyScreen(plan.summary(), plan.diff), answered)

    def _apply(self, plan, seq: int) -> None:
        from dgym_tui.sessions import apply

        try:
            message = apply(plan)
        except Exception as e:  # ApplyError: the repo is as it was
            self.app.run_on_ui(self._said, str(e), "error")
            return
        self.applied_seq = seq
        self.app.run_on_ui(self._said, message, "information")

    def _said(self, message: str, severity: str) -> None:
        self.app.notify(one_line(message), severity=severity, title="Apply", timeout=15)


def _read_header(path) -> dict:
    with open(path, "rb") as fh:
        header = json.loads(fh.readline())
    if not isinstance(header, dict):
        raise ValueError(f"{path} has no session header")
    return header
