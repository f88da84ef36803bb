"""Reading and writing the run directory (docs/run-dir.md). The driver is the only writer; the
report and the review inbox use the reading side (`load_batch`, `load_tasks`, `load_results`,
`load_result`, `trial_files`).

A trial is done when its result.json exists: it is written last, to a temporary name, flushed and
renamed, so a driver killed at any moment leaves either a whole result or none. results.jsonl is a
convenience copy, appended as trials finish and rebuilt from trials/ whenever a batch starts or
ends (an append torn by a SIGKILL is repaired then).
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from datetime import datetime, timezone
from pathlib import Path

from dgym_tui.batch.result import FORMAT, TrialResult
from dgym_tui.batch.spec import Task, TrialOutcome

# batch.json keys that may differ between the run that started a RUN_DIR and one that goes on
# with it (docs/run-dir.md): how it runs, not what it measures.
NOT_COMPARED = ("format", "created", "workers", "executor", "total_cost")
# batch.json keys added later, with the value a RUN_DIR written before them had
DEFAULTS = {"tests": "hidden"}
HISTORY = "history"  # trials/<trial>/history/<n>/: an earlier result replaced by --retry errors


class RunDirError(Exception):
    """The RUN_DIR cannot be used as asked (another batch's, unreadable): one line."""


def now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


# --- writing ------------------------------------------------------------------------------------

def write_atomic(path: Path, data: bytes) -> None:
    """Write `data` to `path` so a reader (or a crash) sees the old file or the new one, whole."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def config_differences(old: dict, new: dict) -> list[str]:
    """What differs between two batch.json configurations, one phrase per key, ignoring the keys
    a resume may change (workers, executor, total cost, creation time)."""
    old, new = {**DEFAULTS, **old}, {**DEFAULTS, **new}
    keys = sorted((set(old) | set(new)) - set(NOT_COMPARED))
    return [f"{k}: {json.dumps(old.get(k))} then, {json.dumps(new.get(k))} now"
            for k in keys if old.get(k) != new.get(k)]


def prepare(run_dir: Path, config: dict, tasks: list[Task]) -> bool:
    """Start RUN_DIR with this configuration and task list, or check it is the one it holds.
    True when resuming. RunDirError (one line, saying what differs) when it is another batch's."""
    run_dir = Path(run_dir)
    batch_file = run_dir / "batch.json"
    if batch_file.exists():
        old = load_batch(run_dir)
        differences = config_differences(old, config)
        if differences:
            raise RunDirError(f"{run_dir} holds a batch with another configuration ({'; '.join(differences)}): "
                              "give the same options to go on with it, or another --out")
        old_ids = [t.id for t in load_tasks(run_dir)]
        new_ids = [t.id for t in tasks]
        if old_ids != new_ids:
            added = sorted(set(new_ids) - set(old_ids))
            removed = sorted(set(old_ids) - set(new_ids))
            what = "; ".join(filter(None, [added and f"added {', '.join(added[:5])}",
                                           removed and f"removed {', '.join(removed[:5])}"])) or "reordered"
            raise RunDirError(f"{run_dir} holds a batch whose task set has changed since ({what}): "
                              "use another --out")
        return True
    # What a start killed before batch.json (written last) leaves may be started afresh.
    leftover = {"tasks.jsonl", "trials"}
    if run_dir.exists() and any(p.name not in leftover or (p.is_dir() and any(p.iterdir())) for p in run_dir.iterdir()):
        raise RunDirError(f"{run_dir} exists and is not a batch's run directory (no batch.json): use another --out")
    (run_dir / "trials").mkdir(parents=True, exist_ok=True)
    lines = "".join(json.dumps(t.to_dict(), ensure_ascii=False) + "\n" for t in tasks)
    write_atomic(run_dir / "tasks.jsonl", lines.encode())
    write_atomic(batch_file, (json.dumps({**config, "format": FORMAT, "created": now()}, indent=2) + "\n").encode())
    return False


def write_trial(run_dir: Path, trial_id: str, outcome: TrialOutcome) -> TrialResult:
    """The trial's files, result.json last and atomically; returns the result as written (with
    the fields only the driver knows filled in)."""
    folder = Path(run_dir) / "trials" / trial_id
    folder.mkdir(parents=True, exist_ok=True)
    patch = (outcome.patch or "").encode("utf-8", "surrogateescape")
    write_atomic(folder / "session.jsonl", outcome.session or b"")
    write_atomic(folder / "patch.diff", patch)
    result = TrialResult.from_dict(dict(outcome.result))
    result.format, result.trial, result.patch_sha256 = FORMAT, trial_id, hashlib.sha256(patch).hexdigest()
    data = result.to_dict()
    write_atomic(folder / "result.json", (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode())
    with open(Path(run_dir) / "results.jsonl", "a", encoding="utf-8") as fh:
        fh.write(json.dumps(data, ensure_ascii=False) + "\n")
    return result


def retire(run_dir: Path, trial_id: str) -> Path:
    """Move a finished trial's files into trials/<trial>/history/<n>/ (n = 1, 2, …), so it runs
    again (--retry errors) and the earlier result is kept. result.json moves first: from then on
    the trial counts as not done, whatever happens to the rest."""
    folder = Path(run_dir) / "trials" / trial_id
    history = folder / HISTORY
    n = 1 + max((int(p.name) for p in history.glob("*") if p.name.isdigit()), default=0)
    target = history / str(n)
    target.mkdir(parents=True)
    for name in ("result.json", "session.jsonl", "patch.diff"):
        if (folder / name).exists():
            os.replace(folder / name, target / name)
    return target


def rebuild_results(run_dir: Path) -> list[dict]:
    """results.jsonl made again from trials/*/result.json (in the order tasks.jsonl lists the
    tasks); returns the results."""
    results = load_results(run_dir, from_trials=True)
    text = "".join(json.dumps(r.to_dict(), ensure_ascii=False) + "\n" for r in results)
    write_atomic(Path(run_dir) / "results.jsonl", text.encode())
    return results


# --- reading ------------------------------------------------------------------------------------

def _read_json(path: Path) -> dict:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as e:
        raise RunDirError(f"cannot read {path}: {e.strerror or e}") from None
    except ValueError as e:
        raise RunDirError(f"{path} is not JSON: {e}") from None
    if not isinstance(data, dict):
        raise RunDirError(f"{path} is not a JSON object")
    return data


def load_batch(run_dir: Path) -> dict:
    """batch.json; RunDirError when RUN_DIR is not a batch's or is of a later format."""
    path = Path(run_dir) / "batch.json"
    if not path.exists():
        raise RunDirError(f"{run_dir} is not a batch's run directory (no batch.json)")
    config = _read_json(path)
    if config.get("format", FORMAT) > FORMAT:
        raise RunDirError(f"{run_dir} is of run-directory format {config['format']}: a newer dgym-tui wrote it")
    return config


def load_tasks(run_dir: Path) -> list[Task]:
    path = Path(run_dir) / "tasks.jsonl"
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as e:
        raise RunDirError(f"cannot read {path}: {e.strerror or e}") from None
    known = set(Task.__dataclass_fields__)
    return [Task.from_dict({k: v for k, v in json.loads(line).items() if k in known})
            for line in lines if line.strip()]


def load_result(run_dir: Path, trial_id: str) -> TrialResult | None:
    """A trial's result.json, or None while it is not done (or its file is unreadable)."""
    try:
        return TrialResult.from_dict(_read_json(Path(run_dir) / "trials" / trial_id / "result.json"))
    except RunDirError:
        return None


def finished(run_dir: Path) -> dict[str, TrialResult]:
    """trial id -> result, for every trial with a result.json."""
    out = {}
    trials = Path(run_dir) / "trials"
    if trials.is_dir():
        for folder in sorted(trials.iterdir()):
            result = load_result(run_dir, folder.name) if folder.is_dir() else None
            if result is not None:
                out[folder.name] = result
    return out


def load_results(run_dir: Path, from_trials: bool = True) -> list[TrialResult]:
    """Every finished trial's result, in task order (tasks.jsonl), then arm and attempt. From
    trials/ (the truth) by default; from_trials=False reads results.jsonl, the last line for a
    trial winning, torn lines skipped."""
    if from_trials:
        results = list(finished(run_dir).values())
    else:
        latest: dict[str, TrialResult] = {}
        path = Path(run_dir) / "results.jsonl"
        if path.exists():
            for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
                try:
                    r = json.loads(line)
                except ValueError:
                    continue  # a line torn by a kill
                if isinstance(r, dict) and r.get("trial"):
                    latest[r["trial"]] = TrialResult.from_dict(r)
        results = list(latest.values())
    try:
        order = {t.id: i for i, t in enumerate(load_tasks(run_dir))}
    except RunDirError:
        order = {}
    return sorted(results, key=lambda r: (order.get(r.task, len(order)), r.task, r.arm, int(r.attempt or 0)))


def trial_files(run_dir: Path, trial_id: str) -> dict[str, Path]:
    """The paths of a trial's files (which may not exist yet): session, patch, result, replay."""
    folder = Path(run_dir) / "trials" / trial_id
    return {"session": folder / "session.jsonl", "patch": folder / "patch.diff",
            "result": folder / "result.json", "replay": Path(run_dir) / "replays" / f"{trial_id}.html"}
