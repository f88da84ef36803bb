"""A session as one self-contained HTML file that replays it in any browser.

The page needs nothing but itself: its script and styles are inline, a Content-Security-Policy
allows that one script (by its hash) and no network at all, and the session travels as JSON in a
`<script type="application/json">` block in which `<`, `>` and `&` are escaped, so nothing in
the session (a `</script>`, a `<!--`) can end the block or become markup. The page's script puts
every piece of session text into the page with `textContent`, never as HTML, and every string
went through safe_text.visible() first, so terminal escapes show as visible stand-ins.

What the page shows is computed here, once, by the same reading the app's replay does: the
frames are `Replayer.frames` (the meaningful events), the marks `replay.mark_for`, the stop,
breakpoints and source at each frame come from folding the events into a `DebugState`. Each frame
is a handful of indices into shared tables (stops, breakpoint sets, files, console and transcript
entries), so the file grows with the events, and the page moves to any frame without folding.
Source files are coloured by pygments here, sent as (token class, text) pairs per line.
"""

from __future__ import annotations

import base64
import bisect
import hashlib
import json
from importlib import resources

from dgym_tui.core import events as ev
from dgym_tui.core.describe import Describer
from dgym_tui.core.replayer import SPEEDS, Replayer, mark_for
from dgym_tui.core.safe_text import one_line, visible
from dgym_tui.core.state import DebugState

OUTPUT_CAP = 200_000    # characters of one output kept in the page (head and tail)


def render(recording, diff: str | None = None, diff_note: str = "") -> str:
    """The page for a SessionFile (see session_file.read_session); `diff` is the final change."""
    data = replay_data(recording, diff, diff_note)
    return page(data)


def page(data: dict) -> str:
    script = _asset("html_replay.js")
    style = _asset("html_replay.css")
    digest = base64.b64encode(hashlib.sha256(script.encode()).digest()).decode()
    csp = (f"default-src 'none'; script-src 'sha256-{digest}'; style-src 'unsafe-inline'; "
           "img-src data:; base-uri 'none'; form-action 'none'")
    return ("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            f"<meta http-equiv=\"Content-Security-Policy\" content=\"{csp}\">\n"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
            "<title>dgym-tui session</title>\n"
            f"<style>\n{style}{_pygments_css()}</style>\n</head>\n<body>\n"
            "<noscript>This replay needs JavaScript.</noscript>\n"
            f"<script type=\"application/json\" id=\"dgym-data\">{embed_json(data)}</script>\n"
            f"<script>{script}</script>\n</body>\n</html>\n")


def embed_json(data) -> str:
    """JSON that can sit inside a <script> element: no `<`, `>` or `&` in it at all (they are
    \\u escapes, which JSON.parse turns back), and ASCII only (U+2028 and friends included)."""
    text = json.dumps(data, ensure_ascii=True, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _asset(name: str) -> str:
    return resources.files("dgym_tui.sessions").joinpath(name).read_text(encoding="utf-8")


def _pygments_css() -> str:
    from pygments.formatters import HtmlFormatter

    light = HtmlFormatter(style="default").get_style_defs(".src")
    dark = HtmlFormatter(style="monokai").get_style_defs("body.dark .src")
    return light + "\n" + dark + "\nbody.dark .src { background: transparent; }\n.src { background: transparent; }\n"


# --- the data ---------------------------------------------------------------------------------

def replay_data(recording, diff: str | None = None, diff_note: str = "") -> dict:
    events = recording.events
    replayer = Replayer(events)
    builder = _Builder(events)
    frames = set(replayer.frames)
    out_frames = []
    state = DebugState()
    for i, event in enumerate(events):
        state.apply(event)
        builder.add(i, event, state)
        if i + 1 in frames:
            out_frames.append(builder.frame(i, event, state))
    header = recording.header
    status = _outcome(recording)
    data = {
        "title": one_line(f"dgym-tui session: {header.get('repo_name') or '?'}"),
        "facts": [[k, one_line(str(v))] for k, v in _facts(header, status) if v not in (None, "")],
        "task": visible(builder.task),
        "files": builder.files,
        "stops": builder.stops,
        "bps": builder.bp_sets,
        "console": builder.console,
        "transcript": builder.transcript,
        "captions": builder.captions,
        "statuses": builder.statuses,
        "frames": out_frames,
        "marks": builder.marks,
        "events": len(events),
        "start": _index_of(out_frames, replayer.first_stop()),
        "speeds": list(SPEEDS),
        "diff": visible(diff) if diff else "",
        "diff_note": one_line(diff_note),
        "warnings": [one_line(w) for w in recording.warnings],
    }
    return data


def _index_of(frames: list, position: int) -> int:
    for i, frame in enumerate(frames):
        if frame[0] >= position:
            return i
    return max(0, len(frames) - 1)


def _facts(header: dict, outcome: str):
    import time

    created = header.get("created")
    when = time.strftime("%Y-%m-%d %H:%M", time.localtime(created)) if created else ""
    return [("repository", header.get("repo_name") or header.get("repo")), ("started", when),
            ("sandbox", header.get("sandbox")), ("mode", header.get("mode")), ("model", header.get("model")),
            ("entrypoint", header.get("entrypoint")), ("outcome", outcome),
            ("dgym-tui", header.get("version"))]


def _outcome(recording) -> str:
    try:
        from dgym_tui.sessions.story import tell

        return tell(recording).outcome
    except Exception:  # an imported log may lack what the story needs: the page goes on without it
        return ""


def _cap(text: str) -> str:
    if len(text) <= OUTPUT_CAP:
        return visible(text)
    half = OUTPUT_CAP // 2
    cut = len(text) - 2 * half
    return visible(text[:half] + f"\n… {cut:,} characters left out of this page …\n" + text[-half:])


class _Builder:
    """The tables the page indexes into, filled in one pass over the events."""

    def __init__(self, events: list[ev.Event]):
        self.files: list[dict] = []          # {path, lines: [[cls, text, cls, text…], …]}
        self._file_index: dict[str, int] = {}
        self._texts: dict[str, str] = {}     # sha -> text
        self.stops: list[list] = []
        self.bp_sets: list[list] = [[]]
        self._bp_key: dict[tuple, int] = {(): 0}
        self.console: list[list] = []        # [actor, kind (in | out | note), text]
        self.transcript: list[list] = []     # [actor, kind, title, body]
        self.captions: list[str] = []
        self.statuses: list[str] = []
        self._status_index: dict[str, int] = {}
        self.marks: list[list] = []          # [event index, glyph, colour, rank (most telling first)]
        self.task = ""
        self._stop = -1
        self._describer = Describer()
        # where each path's text is recorded, for a stop that comes just before its file event
        self._file_events: dict[str, list[tuple[int, str]]] = {}
        for i, event in enumerate(events):
            if event.kind == "file":
                self._file_events.setdefault(event.data.path, []).append((i, event.data.sha))
                if event.data.text is not None:
                    self._texts.setdefault(event.data.sha, event.data.text)
        self._shown_file = -1               # the source shown when no stop says which
        self._stale: set[str] = set()       # files changed since their text was recorded

    # --- per event ---

    def add(self, i: int, event: ev.Event, state: DebugState) -> None:
        d, kind = event.data, event.kind
        if kind == "file":
            self._stale.discard(d.path)
        elif kind == "changes":
            self._stale.update(d.changed)
        mark = mark_for(event)
        if mark is not None:
            self.marks.append([i, mark.glyph, mark.color, mark.rank])
        if kind == "stop":
            self.stops.append(self._stop_row(d))
            self._stop = len(self.stops) - 1
        elif kind in ("program_start", "program_exit"):
            self._stop = -1
        if kind == "agent_started" and d.task:
            self.task = d.task
        self._console(event)
        for actor, kind, title, body in self._entries(event):
            self.transcript.append([actor, kind, title, _cap(body) if body else ""])

    def frame(self, i: int, event: ev.Event, state: DebugState) -> list:
        stop = state.stop if self._stop >= 0 else None
        file_index, line = -1, 0
        if stop is not None and stop.file:
            file_index = self._file_for(stop.file, i)
            line = stop.line or 0
        if file_index < 0:
            file_index = self._shown_file
        else:
            self._shown_file = file_index
        bps = tuple((bp.file, bp.line, bp.cond or "", bp.enabled, bp.actor) for bp in state.breakpoints)
        if bps not in self._bp_key:
            self._bp_key[bps] = len(self.bp_sets)
            self.bp_sets.append([[visible(f), n, visible(c), e, a] for f, n, c, e, a in bps])
        self.captions.append(visible(_caption(event)))
        status = visible(_status(state))
        if status not in self._status_index:
            self._status_index[status] = len(self.statuses)
            self.statuses.append(status)
        return [i + 1, self._stop if stop is not None else -1, self._bp_key[bps], file_index, line,
                len(self.console), len(self.transcript), self._status_index[status], event.actor]

    # --- sources ---

    def _file_for(self, path: str, i: int) -> int:
        """The file's text as the app's replay shows it at event i: the last recorded by then
        unless the code changed since; else what the recording reads next (a stop comes just
        before the text of its file), else the last one recorded."""
        entries = [(j, sha) for j, sha in self._file_events.get(path, ()) if sha in self._texts]
        k = bisect.bisect_right(entries, (i, "\uffff"))
        if k and path not in self._stale:
            sha = entries[k - 1][1]
        elif k < len(entries):
            sha = entries[k][1]
        elif k:
            sha = entries[k - 1][1]
        else:
            return -1
        key = f"{path}\0{sha}"
        if key not in self._file_index:
            self._file_index[key] = len(self.files)
            self.files.append({"path": visible(path), "lines": _tokens(path, self._texts[sha])})
        return self._file_index[key]

    @staticmethod
    def _stop_row(d: ev.Stop) -> list:
        exc = f"{d.exception.type}: {d.exception.message}" if d.exception else ""
        return [visible(d.file or ""), d.line or 0, visible(d.function or ""), d.reason,
                [[visible(f.file or "?"), f.line or 0, visible(f.function or "?")] for f in d.stack],
                d.frame_index, [[visible(k), visible(v)] for k, v in d.locals.items()], d.locals_truncated,
                visible(exc), visible(d.test or "")]

    # --- the pdb console ---

    def _console(self, event: ev.Event) -> None:
        """The pdb console's lines: what was typed, pdb's output, the program's start and end."""
        d, actor, kind = event.data, event.actor, event.kind
        if kind == "pdb_input":
            self.console.append([actor, "in", visible(d.command)])
        elif kind == "pdb_output" and d.text:
            self.console.append([actor, "out", _cap(d.text)])
        elif kind == "program_start":
            self.console.append([actor, "note", visible(("restarted: " if d.restart else "started: ") + d.entrypoint)])
        elif kind == "program_exit":
            self.console.append([actor, "note", visible(d.message or f"exited with code {d.code}")])

    # --- the transcript: one entry per event a person reads (as the app's transcript) ---

    def _entries(self, event: ev.Event) -> list:
        """The transcript's entries for one event, in the words the app's transcript uses
        (core/describe.py): [actor, kind, headline, body]."""
        return [[event.actor, w.kind, visible(w.text), visible(w.body)]
                for w in self._describer.describe(event) if w.kind != "progress"]


def _caption(event: ev.Event) -> str:
    """What the frame's event was, in a few words (the status line of the page): who, then the
    first of its words (a fresh describer: a caption names the event, not what changed since)."""
    said = Describer().describe(event)
    return f"{event.actor}: {said[0].text if said else event.kind.replace('_', ' ')}"


def _status(state: DebugState) -> str:
    parts = [f"program {state.program}"]
    agent = state.agent
    if agent.state != "off":
        cost = "?" if agent.cost is None else f"${agent.cost:.4f}"
        parts.append(f"agent {agent.state}, step {agent.step}, {agent.tokens:,} tokens, {cost}")
    if state.tests is not None:
        parts.append(f"tests: {state.tests.summary()}")
    if state.checkpoints:
        parts.append(f"{len(state.checkpoints)} change(s)")
    return " · ".join(parts)


def _tokens(path: str, text: str) -> list[list[str]]:
    """The file's lines as [class, text, class, text, …] (pygments' short class names)."""
    from pygments import lex
    from pygments.token import STANDARD_TYPES

    from dgym_tui.ui.lexers import lexer_for  # pure pygments (no Textual): the app's choice of lexer

    text = visible(text)
    lexer = lexer_for(path, stripnl=False, ensurenl=False)
    if lexer is None or len(text) > 2_000_000:
        return [["", line] for line in text.split("\n")]
    lines: list[list[str]] = [[]]
    for token, value in lex(text, lexer):
        cls = STANDARD_TYPES.get(token)
        while cls is None and token.parent is not None:
            token = token.parent
            cls = STANDARD_TYPES.get(token)
        pieces = value.split("\n")
        for k, piece in enumerate(pieces):
            if k:
                lines.append([])
            if piece:
                row = lines[-1]
                if row and row[-2] == (cls or ""):
                    row[-1] += piece
                else:
                    row += [cls or "", piece]
    return lines
