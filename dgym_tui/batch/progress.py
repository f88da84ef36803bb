"""How a batch shows its progress: a live table in a terminal (rich.live), one line per finished
trial in a log. Both take the same calls from the driver:

    begin(specs, done_before)  event(trial_id, data)  finished(spec, result)  end()

`data` is what an executor's on_event passes: {"kind": "started"} when a worker takes the trial,
then whatever the trial reports ({"step": n, "cost": usd, "state": ...}). Everything shown that
came from a trial goes through safe_text first.
"""

from __future__ import annotations

import sys
import threading
import time

from dgym_tui.batch.result import TrialResult
from dgym_tui.core.safe_text import one_line


def _money(cost) -> str:
    return "?" if cost is None else f"${cost:.4f}" if cost < 1 else f"${cost:.2f}"


def _duration(seconds: float | None) -> str:
    if seconds is None:
        return "?"
    seconds = int(seconds)
    return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m" if seconds >= 3600 else f"{seconds // 60}m{seconds % 60:02d}s"


class Tally:
    """Counts by status, cost so far, and an estimate of the time left (from this run's own
    throughput: what is done per second, over what remains)."""

    def __init__(self):
        self.total = 0
        self.counts = {"resolved": 0, "unresolved": 0, "limit": 0, "error": 0}
        self.cost = 0.0
        self.cost_known = True
        self.done_now = 0
        self.started = time.time()

    def add(self, result: TrialResult, now: bool = True) -> None:
        status = result.status
        self.counts[status] = self.counts.get(status, 0) + 1
        if result.cost is None:
            self.cost_known = False
        else:
            self.cost += float(result.cost)
        self.done_now += now

    @property
    def done(self) -> int:
        return sum(self.counts.values())

    def eta(self) -> float | None:
        left = self.total - self.done
        if left <= 0:
            return 0.0
        if not self.done_now:
            return None
        return (time.time() - self.started) / self.done_now * left

    def line(self) -> str:
        counts = ", ".join(f"{n} {s}" for s, n in self.counts.items())
        cost = _money(self.cost) + ("" if self.cost_known else "+?") if self.cost or self.cost_known else "?"
        return f"{self.done}/{self.total} done ({counts}); cost {cost}; left ~{_duration(self.eta())}"


class LogProgress:
    """No terminal: one line per finished trial, and one at the start and the end."""

    def __init__(self, out=None):
        self.out = out or sys.stdout
        self.tally = Tally()

    def _print(self, text: str) -> None:
        print(one_line(text), file=self.out, flush=True)

    def begin(self, specs: list, done_before: list[dict]) -> None:
        self.tally.total = len(specs) + len(done_before)
        for r in done_before:
            self.tally.add(r, now=False)
        kept = f" ({len(done_before)} done before, kept)" if done_before else ""
        self._print(f"batch: {len(specs)} trial(s) to run{kept}")

    def event(self, trial_id: str, data: dict) -> None:
        pass

    def finished(self, spec, result: TrialResult) -> None:
        self.tally.add(result)
        status = result.status
        why = f" — {result.reason}" if result.reason and status != "resolved" else ""
        self._print(f"[{self.tally.done}/{self.tally.total}] {spec.trial_id}: {status} "
                    f"steps {result.steps} cost {_money(result.cost)} "
                    f"{float(result.seconds or 0):.1f}s{why}")

    def note(self, text: str) -> None:
        self._print(text)

    def end(self) -> None:
        self._print("batch: " + self.tally.line())


class LiveProgress(LogProgress):
    """In a terminal: a table of the running and the last finished trials, with totals."""

    SHOWN_DONE = 8  # finished rows kept under the running ones

    def __init__(self, out=None):
        super().__init__(out)
        self.rows: dict[str, dict] = {}  # trial id -> task, arm, state, step, cost, started
        self.lock = threading.Lock()
        self.live = None

    def begin(self, specs: list, done_before: list[dict]) -> None:
        from rich.console import Console
        from rich.live import Live

        super().begin(specs, done_before)
        for s in specs:
            self.rows[s.trial_id] = {"task": s.task.id, "arm": s.arm.name, "attempt": s.attempt, "state": "waiting",
                                     "step": None, "cost": None, "started": None, "ended": None}
        self.live = Live(get_renderable=self._render, console=Console(file=self.out), refresh_per_second=4,
                         transient=False)
        self.live.start()

    def event(self, trial_id: str, data: dict) -> None:
        with self.lock:
            row = self.rows.get(trial_id)
            if row is None:
                return
            if data.get("kind") == "started":
                row["state"], row["started"] = "running", time.time()
                if data.get("node"):
                    row["node"] = str(data["node"])
            if data.get("state"):
                row["state"] = str(data["state"])
            for key in ("step", "cost"):
                if data.get(key) is not None:
                    row[key] = data[key]

    def finished(self, spec, result: TrialResult) -> None:
        with self.lock:
            row = self.rows.setdefault(spec.trial_id, {"task": spec.task.id, "arm": spec.arm.name,
                                                       "attempt": spec.attempt, "started": None})
            row.update(state=result.status, step=result.steps, cost=result.cost,
                       ended=time.time(), node=result.node or row.get("node"))
            if row["started"] is None:
                row["started"] = row["ended"] - float(result.seconds or 0)
        self.tally.add(result)

    def note(self, text: str) -> None:
        if self.live:
            self.live.console.print(one_line(text), markup=False, highlight=False)
        else:
            super().note(text)

    def _render(self):
        from rich.console import Group
        from rich.table import Table
        from rich.text import Text

        table = Table(expand=False)
        for name, justify in (("task", "left"), ("arm", "left"), ("#", "right"), ("state", "left"),
                              ("step", "right"), ("cost", "right"), ("elapsed", "right"), ("node", "left")):
            table.add_column(name, justify=justify, no_wrap=True)
        now = time.time()
        with self.lock:
            rows = list(self.rows.values())
        running = [r for r in rows if r.get("ended") is None and r.get("started")]
        done = sorted((r for r in rows if r.get("ended")), key=lambda r: r["ended"])[-self.SHOWN_DONE:]
        waiting = sum(1 for r in rows if r.get("ended") is None and not r.get("started"))
        colour = {"resolved": "green", "unresolved": "yellow", "limit": "magenta", "error": "red"}
        for r in done + running:
            elapsed = (r.get("ended") or now) - r["started"] if r.get("started") else None
            state = one_line(str(r.get("state")))
            table.add_row(Text(one_line(r["task"])), Text(one_line(r["arm"])), str(r.get("attempt", "")),
                          Text(state, style=colour.get(state, "")),
                          "" if r.get("step") is None else str(r["step"]),
                          "" if r.get("step") is None and r.get("cost") is None else _money(r.get("cost")),
                          _duration(elapsed) if elapsed is not None else "", Text(one_line(r.get("node") or "")))
        if waiting:
            table.add_row("…", "", "", f"{waiting} waiting", "", "", "", "")
        return Group(table, Text(self.tally.line()))

    def end(self) -> None:
        if self.live:
            self.live.stop()
            self.live = None
        super().end()


def make_progress(out=None):
    """The live table on a terminal, log lines otherwise."""
    out = out or sys.stdout
    return LiveProgress(out) if out.isatty() else LogProgress(out)
