"""A batch's trials as the review inbox sees them, read from RUN_DIR (docs/run-dir.md).

results.jsonl is read, never each result.json: one file for a thousand trials. It is read
again only from where it was last read (a batch still running appends to it), and whole when
it shrank or was replaced (a resumed batch rebuilds it). A trial's current revision is the
batch's own (0) or the newest scored one the review made (revisions.py). Nothing here writes.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from pathlib import Path

from dgym_tui.batch.result import TrialResult
from dgym_tui.review import reviews

FORMAT = 1  # docs/run-dir.md
STATUS_ORDER = {"resolved": 0, "unresolved": 1, "limit": 2, "no-reproduction": 3, "error": 4}


class RunDirError(Exception):
    """RUN_DIR cannot be read as a batch's run directory; str() says why in one line."""


@dataclass
class Trial:
    id: str
    task: str
    arm: str
    attempt: int
    result: TrialResult                # result.json (the current revision's)
    revision: int = 0                  # 0: the batch's; n: the review's n-th (revisions/<trial>/<n>/)
    origin: str = "batch"              # batch | edit | take-over | send-back
    added: int | None = None           # the patch's + and - lines (None: not read yet)
    removed: int | None = None
    verdict: reviews.Verdict | None = None
    pending: str | None = None         # a new revision waiting for its score ("scoring…")

    @property
    def status(self) -> str:
        return self.result.status or "error"

    @property
    def patch_sha256(self) -> str:
        return self.result.patch_sha256 or ""

    @property
    def steps(self) -> int | None:
        return self.result.steps

    @property
    def cost(self) -> float | None:
        return self.result.cost

    @property
    def summary(self) -> str:
        return str(self.result.summary or "")

    @property
    def tests(self) -> str:
        """What the agent saw of the hidden tests (--tests): hidden | eval | visible."""
        return str(self.result.tests or "hidden")

    @property
    def verdict_text(self) -> str:
        """What the verdict column says."""
        if self.pending:
            return self.pending
        v = self.verdict
        if v is None:
            return ""
        if v.verdict == "approve" and not self.approved:
            return "approve?"  # approved, then the patch changed: approve again
        return {"approve": "approved", "reject": "rejected", "skip": "skipped", "edit": "edited",
                "send-back": "sent back"}.get(v.verdict, v.verdict)

    @property
    def approved(self) -> bool:
        """Approved, and the patch approved is the current one (the patch-sha rule)."""
        return (self.verdict is not None and self.verdict.verdict == "approve" and not self.pending
                and self.verdict.patch_sha256 == self.patch_sha256)

    @property
    def decided(self) -> bool:
        return self.approved or (self.verdict is not None and self.verdict.verdict == "reject")

    def sort_key(self) -> tuple:
        return (STATUS_ORDER.get(self.status, 9), self.task, self.arm, self.attempt)


@dataclass
class RunDir:
    """A RUN_DIR and its trials; `refresh()` reads what changed since the last call."""

    path: Path
    batch: dict = field(default_factory=dict)
    trials: dict[str, Trial] = field(default_factory=dict)
    expected: int | None = None        # trials the batch will make (tasks × arms × attempts)
    _results_mark: tuple = ()          # (inode, size) of results.jsonl as last read
    _results_offset: int = 0
    _reviews_mark: tuple = ()
    _revisions_mark: float = 0.0
    lock: threading.RLock = field(default_factory=threading.RLock)  # the poll's thread and the UI's

    @classmethod
    def open(cls, path: str | Path) -> RunDir:
        root = Path(path)
        if not root.is_dir():
            raise RunDirError(f"{root} is not a folder (give the RUN_DIR of `dgym-tui batch ... --out RUN_DIR`)")
        if not (root / "batch.json").is_file() and not (root / "results.jsonl").is_file():
            raise RunDirError(f"{root} holds no batch.json nor results.jsonl: not a batch's run directory")
        run = cls(root)
        run.batch = _read_json(root / "batch.json") or {}
        if isinstance(run.batch.get("format"), int) and run.batch["format"] > FORMAT:
            raise RunDirError(f"{root} is of run-directory format {run.batch['format']}: a newer dgym-tui wrote it")
        run.expected = _expected(root, run.batch)
        run.refresh()
        return run

    # --- reading ----------------------------------------------------------------------------

    def refresh(self, force: bool = False) -> set[str]:
        """Read what changed; returns which of "results", "revisions", "reviews" did (empty:
        nothing, and then it cost three stat() calls)."""
        with self.lock:
            if force:
                self._revisions_mark, self._reviews_mark = 0.0, ()
            changed = set()
            if self._read_results():
                changed.add("results")
            if self._read_revisions(force=bool(changed)):
                changed.add("revisions")
            if self._read_reviews(force=bool(changed)):
                changed.add("reviews")
            return changed

    def _read_results(self) -> bool:
        path = self.path / "results.jsonl"
        try:
            st = path.stat()
        except FileNotFoundError:
            return False
        mark = (st.st_ino, st.st_size)
        if mark == self._results_mark:
            return False
        if self._results_mark and (st.st_ino != self._results_mark[0] or st.st_size < self._results_offset):
            self._results_offset = 0  # rebuilt (a resumed batch): read it whole again
            self.trials = {k: t for k, t in self.trials.items() if t.revision}
        with open(path, "rb") as fh:
            fh.seek(self._results_offset)
            data = fh.read()
        end = data.rfind(b"\n") + 1  # a line being appended is read next time, whole
        for line in data[:end].splitlines():
            try:
                result = json.loads(line)
            except ValueError:
                continue  # a torn line (a crash mid-append): the trial's result.json still holds it
            if isinstance(result, dict) and result.get("trial"):
                self._add(result)
        self._results_offset += end
        self._results_mark = (st.st_ino, st.st_size)
        return True

    def _add(self, data: dict) -> None:
        result = TrialResult.from_dict(data)
        tid = result.trial
        old = self.trials.get(tid)
        if old is not None and old.revision:
            return  # a review's revision stays current over the batch's line
        self.trials[tid] = Trial(id=tid, task=result.task or tid.split("__")[0], arm=result.arm,
                                 attempt=int(result.attempt or 1), result=result)

    def _read_revisions(self, force: bool = False) -> bool:
        from dgym_tui.review import revisions

        root = self.path / revisions.FOLDER
        try:
            mtime = root.stat().st_mtime_ns
        except FileNotFoundError:
            return False
        if mtime == self._revisions_mark and not force:  # revisions.py touches it at every write
            return False
        self._revisions_mark = mtime
        for tid, (rev, waiting) in revisions.current_all(self.path).items():
            trial = self.trials.get(tid)
            if trial is None:
                continue
            if rev is not None and rev.number > trial.revision:
                trial.result, trial.revision, trial.origin = rev.result, rev.number, rev.origin
                trial.added = trial.removed = None
            trial.pending = "scoring…" if waiting is not None else None
        return True

    def _read_reviews(self, force: bool = False) -> bool:
        path = self.path / reviews.FILE
        try:
            st = path.stat()
        except FileNotFoundError:
            return False
        mark = (st.st_ino, st.st_size, st.st_mtime_ns)
        if mark == self._reviews_mark and not force:
            return False
        self._reviews_mark = mark
        latest = reviews.latest(self.path)
        for tid, trial in self.trials.items():
            trial.verdict = latest.get(tid)
        return True

    # --- what a trial holds -----------------------------------------------------------------

    def trial_dir(self, trial: Trial) -> Path:
        from dgym_tui.review import revisions

        if trial.revision:
            return revisions.folder(self.path, trial.id, trial.revision)
        return self.path / "trials" / trial.id

    def patch(self, trial: Trial) -> str:
        try:
            return (self.trial_dir(trial) / "patch.diff").read_bytes().decode("utf-8", "surrogateescape")
        except FileNotFoundError:
            return ""

    def session_path(self, trial: Trial) -> Path:
        """The session to replay or resume: the newest revision's that has one, else the batch's."""
        from dgym_tui.review import revisions

        for number in range(trial.revision, 0, -1):
            candidate = revisions.folder(self.path, trial.id, number) / "session.jsonl"
            if candidate.is_file():
                return candidate
        return self.path / "trials" / trial.id / "session.jsonl"

    def diff_size(self, trial: Trial) -> tuple[int, int]:
        if trial.added is None:
            trial.added, trial.removed = diff_counts(self.patch(trial))
        return trial.added, trial.removed or 0

    def tasks(self) -> dict[str, dict]:
        """tasks.jsonl by task id (spec.Task's fields)."""
        out: dict[str, dict] = {}
        try:
            with open(self.path / "tasks.jsonl", encoding="utf-8") as fh:
                for line in fh:
                    try:
                        task = json.loads(line)
                    except ValueError:
                        continue
                    if isinstance(task, dict) and task.get("id"):
                        out[str(task["id"])] = task
        except FileNotFoundError:
            pass
        return out

    def sorted_trials(self) -> list[Trial]:
        with self.lock:
            return sorted(self.trials.values(), key=Trial.sort_key)

    def counts(self) -> dict[str, int]:
        out = {s: 0 for s in STATUS_ORDER if s != "no-reproduction"}  # that one only in a run that has it
        out.update(approved=0, rejected=0, undecided=0)
        with self.lock:
            trials = list(self.trials.values())
        for t in trials:
            out[t.status] = out.get(t.status, 0) + 1
            if t.approved:
                out["approved"] += 1
            elif t.decided:
                out["rejected"] += 1
            else:
                out["undecided"] += 1
        return out

    def approved(self) -> list[Trial]:
        """The trials approved so far, one per task (the latest approval of a task wins)."""
        best: dict[str, Trial] = {}
        with self.lock:
            trials = list(self.trials.values())
        for t in trials:
            if t.approved:
                seen = best.get(t.task)
                if seen is None or t.verdict.when > seen.verdict.when:
                    best[t.task] = t
        return sorted(best.values(), key=lambda t: t.task)


def diff_counts(patch: str) -> tuple[int, int]:
    """Lines added and removed by a unified diff (headers not counted)."""
    added = removed = 0
    for line in patch.splitlines():
        if line.startswith("+") and not line.startswith("+++ "):
            added += 1
        elif line.startswith("-") and not line.startswith("--- "):
            removed += 1
    return added, removed


def _read_json(path: Path) -> dict | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _expected(root: Path, batch: dict) -> int | None:
    try:
        with open(root / "tasks.jsonl", "rb") as fh:
            tasks = sum(1 for line in fh if line.strip())
    except OSError:
        return None
    arms = len(batch.get("arms") or []) or 1
    return tasks * arms * int(batch.get("attempts") or 1)

