"""`dgym-tui replay`: a recorded session in the same app, read-only, with no sandbox and no model.

The main screen is fed the recorded events through the same fold as a live session; a timeline
moves through them (play/pause, one event at a time, start/end, faster/slower). "Take over here"
turns the replay into a live session from that moment: a new sandbox from the repo with the
recorded changes up to it, the breakpoints, and (if wanted) the agent with its conversation cut
there.
"""

from __future__ import annotations

from textual.binding import Binding

from dgym_tui.core.replayer import Replayer
from dgym_tui.core.runner import CallCancelled
from dgym_tui.core.safe_text import one_line
from dgym_tui.ui.widgets.timeline import Timeline

REBUILD_TAIL = 300  # events of the recent past re-drawn in the logs when going back
READ_REST_AFTER = 0.3  # seconds after the first stop is shown before the rest of a big file is read


class ReadOnly(CallCancelled):
    """A replay takes no calls."""


class ReplayRunner:
    busy = False
    running = None

    def submit(self, actor, name, args=None, done=None):
        raise ReadOnly("this is a replay: nothing runs (enter on the timeline takes over from here)")

    def interrupt(self):
        return None


class ReplaySession:
    """What the app asks of a session, for a recording: its names, and no door in."""

    started = True

    def __init__(self, recording):
        self.recording = recording
        header = recording.header
        self.repo = header.get("repo", "")
        self.repo_name = header.get("repo_name") or self.repo.rstrip("/").rsplit("/", 1)[-1]
        self.entrypoint_label = header.get("entrypoint") or ""
        self.runner = ReplayRunner()
        self.entrypoint = self.wide_entrypoint = None
        self.tools: dict = {}  # nothing runs in a replay

    def close(self) -> None:
        pass


class ReplayTimeline(Timeline):
    BINDINGS = [
        Binding("space", "play", "Play/pause", tooltip="play or pause the replay"),
        Binding("right,l", "step(1)", "Forward", tooltip="one event forward"),
        Binding("left,h", "step(-1)", "Back", tooltip="one event back"),
        Binding("home", "edge(0)", "Start", show=False, tooltip="the first event"),
        Binding("end", "edge(1)", "End", show=False, tooltip="the last event"),
        Binding("plus,equals_sign", "speed(1)", "Faster", show=False, tooltip="play faster"),
        Binding("minus", "speed(-1)", "Slower", show=False, tooltip="play slower"),
        Binding("enter", "take_over", "Take over", tooltip="start a live session from this moment"),
    ]

    def action_play(self) -> None:
        self.app.replay.toggle_play()

    def action_step(self, direction: int) -> None:
        self.app.replay.step(direction)

    def action_edge(self, end: int) -> None:
        self.app.replay.to_edge(end)

    def action_speed(self, direction: int) -> None:
        self.app.replay.change_speed(direction)

    def action_take_over(self) -> None:
        self.app.replay.take_over()


class ReplayControl:
    def __init__(self, app, recording, agent_settings=None):
        self.app = app
        self.recording = recording
        self.replayer = Replayer(recording.events)
        self.agent_settings = agent_settings
        self.timeline = ReplayTimeline(self.replayer, id="timeline")
        self._timer = None
        # What the person asked for before the rest of a big file was read (End, take over): done
        # once it is, rather than at the part read so far or not at all.
        self._at_end_when_loaded = False
        self._take_over_when_loaded: tuple[bool | None] | None = None
        self._steps_when_loaded = 0  # → pressed at the end of the part read so far

    @property
    def main(self):
        return self.app.main

    def start(self) -> None:
        """After the first frame: the timeline in place, the replay at the program's first stop.
        A big file was read only to its first stop: the rest loads in a thread meanwhile."""
        self.main.mount(self.timeline, before="#body")
        if not self.recording.complete:
            self.timeline.note = "reading the rest of the session…"
            # once the first stop is on screen: the reading thread would hold the GIL meanwhile
            self.app.set_timer(READ_REST_AFTER, self._start_reading)
        self.main.source_lookup = self.replayer.upcoming_source
        for warning in self.recording.warnings:
            self.app.notify(warning, severity="warning", title="Session file")
        scripted = next((e.data.scripted for e in self.recording.events if e.kind == "agent_started"), False)
        if scripted:
            self.app.notify("this session's agent is a scripted model (a demo), not an LLM", title="Replay",
                            timeout=8)
        self.seek(self.replayer.first_stop())
        self.timeline.focus()

    def _start_reading(self) -> None:
        import threading

        threading.Thread(target=self._read_all, name="dgym-replay-read", daemon=True).start()

    def _read_all(self) -> None:
        from dgym_tui.core.session_file import SessionFileError, read_session

        try:
            whole = read_session(self.recording.path)
        except SessionFileError as e:
            self.app.run_on_ui(self.app.notify, str(e), severity="error", title="Replay")
            return
        self.app.run_on_ui(self._loaded, whole)

    def _loaded(self, whole) -> None:
        header = self.recording.header  # keep what the caller set on it (the demo's repo)
        self.recording = whole
        whole.header = header
        self.replayer.load(whole.events)
        self.timeline.note = ""
        self.timeline.refresh()
        stop = self.main.state.stop
        if stop is not None and stop.file and self.main.source.path != stop.file:
            self.main.open_file(stop.file)  # its text was further on in the file
        for warning in whole.warnings:
            self.app.notify(warning, severity="warning", title="Session file")
        if self._at_end_when_loaded:
            self._at_end_when_loaded = False
            self.seek(len(self.replayer.events))
        steps, self._steps_when_loaded = self._steps_when_loaded, 0
        for _ in range(steps):
            self.step(1)
        if self._take_over_when_loaded is not None:
            (with_agent,), self._take_over_when_loaded = self._take_over_when_loaded, None
            self.take_over(with_agent)

    # --- moving -----------------------------------------------------------------------------

    def seek(self, position: int) -> None:
        events, rebuild = self.replayer.move_to(position)
        if rebuild:
            self.main.reset()
            self.main.feed(events, log_tail=REBUILD_TAIL)
        else:
            self.main.feed(events)
        self.timeline.refresh()

    def to_edge(self, end: int) -> None:
        """The first or the last event; the last one of the whole file, once it is read."""
        self._at_end_when_loaded = bool(end) and not self.recording.complete
        self.seek(len(self.replayer.events) if end else 0)

    def step(self, direction: int) -> None:
        self.pause()
        target = self.replayer.next_position() if direction > 0 else self.replayer.previous_position()
        if target is not None:
            self.seek(target)
        elif direction > 0 and not self.recording.complete:
            self._steps_when_loaded += 1  # the next event is in the part still being read

    def toggle_play(self) -> None:
        if self.replayer.playing:
            self.pause()
        else:
            if self.replayer.next_position() is None and self.recording.complete:
                self.seek(0)  # at the end: play from the start
            self.replayer.playing = True
            self._tick()

    def pause(self) -> None:
        self.replayer.playing = False
        if self._timer is not None:
            self._timer.stop()
            self._timer = None
        self.timeline.refresh()

    def _tick(self) -> None:
        self._timer = None
        if not self.replayer.playing:
            return
        target = self.replayer.next_position()
        if target is None and not self.recording.complete:
            self._timer = self.app.set_timer(1 / self.replayer.speed, self._tick)  # the rest is being read
            return
        if target is None:
            self.pause()
            return
        self.seek(target)
        self._timer = self.app.set_timer(1 / self.replayer.speed, self._tick)

    def change_speed(self, direction: int) -> None:
        if direction > 0:
            self.replayer.faster()
        else:
            self.replayer.slower()
        self.timeline.refresh()

    # --- taking over ------------------------------------------------------------------------

    def take_over(self, with_agent: bool | None = None) -> None:
        """A live session from this moment (the repo must still be there)."""
        from dgym_tui.core.session import Session
        from dgym_tui.core.session_file import SessionFileError, SessionWriter, changed_since
        from dgym_tui.ui.screens.modals import ConfirmScreen

        self.pause()
        if not self.recording.complete:
            self._take_over_when_loaded = (with_agent,)
            self.timeline.note = "reading the rest of the session: taking over once it is read…"
            self.timeline.refresh()
            return
        event = self.replayer.current()
        upto = event.seq if event is not None else 0
        from dgym_tui.batch.instance import HEADER_KEYS, resume_options

        header = self.recording.header
        in_image = resume_options(header)  # an instance's session: in its image again ({}: a repo's)
        try:
            changed = [] if in_image else changed_since(header)  # an image's files do not change
        except SessionFileError as e:
            self.app.notify(one_line(f"cannot take over: {e}"), severity="error", title="Replay", timeout=10,
                            markup=False)
            return
        settings = self.agent_settings
        recorded = self.recording.header.get("model") or ""
        if with_agent is None:
            with_agent = bool(settings and settings.model)
        if with_agent and not (settings and settings.model):
            if not recorded.startswith("scripted:"):
                self.app.notify("to take over with the agent, give a model: dgym-tui replay SESSION --model M",
                                severity="warning", title="Replay", timeout=10)
                return
            from dgym_tui.config import AgentSettings

            settings = AgentSettings(model=recorded, mode="step")  # a scripted agent goes on with its script

        def go(ok: bool | None = True) -> None:
            if not ok:
                return
            try:
                session = Session.resume(self.recording, upto=upto, take_over=True, changed=changed, **in_image)
            except Exception as e:  # one line, and the replay stays
                self.app.notify(one_line(f"cannot take over: {type(e).__name__}: {e}"), severity="error",
                                title="Replay", timeout=10, markup=False)
                return
            carried = {k: header[k] for k in HEADER_KEYS if in_image and k in header}
            writer = SessionWriter.open(None, session, mode=header.get("mode"), model=header.get("model"),
                                        taken_over_from=self.recording.path, upto=upto, **carried)
            self.app.become_live(session, writer, settings if with_agent else None)

        if changed:
            names = ", ".join(changed[:6]) + (f" and {len(changed) - 6} more" if len(changed) > 6 else "")
            self.app.push_screen(ConfirmScreen(
                f"The repository changed since this session ({names}); the recorded changes may not apply. "
                "Take over anyway?", yes="Take over", no="Stay"), go)
        else:
            go()

    def palette_commands(self):
        return [
            ("Replay: play / pause", "space on the timeline", self.toggle_play),
            ("Replay: take over here", "a live session from this moment, without the agent",
             lambda: self.take_over(with_agent=False)),
            ("Replay: take over here with the agent", "needs --model (its conversation is cut here)",
             lambda: self.take_over(with_agent=True)),
        ]
