"""New revisions of a trial: an edited patch, a take-over from its replay, or a send-back (the
agent resumes the trial's session with the person's note as a hint). Each is scored again with
the batch's own scoring (batch/scoring.py: a fresh sandbox at the task's base, hidden tests
added) before it can be approved. Blocking: the UI calls these from a thread worker.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from contextlib import contextmanager
from pathlib import Path

from dgym_tui.batch.result import TrialResult
from dgym_tui.review import revisions
from dgym_tui.review.inbox import RunDir, Trial

# scorer(task, patch, repo_dir, sandbox=..., image=...) -> batch.scoring.Score
Scorer = Callable[..., object]


class ReworkError(Exception):
    """The new revision was not made or not scored; str() says why in one line."""


def task_of(run: RunDir, trial: Trial):
    from dgym_tui.batch.spec import Task

    record = run.tasks().get(trial.task)
    if record is None:
        raise ReworkError(f"task {trial.task} is not in the run's tasks.jsonl")
    known = set(Task.__dataclass_fields__)
    return Task.from_dict({k: v for k, v in record.items() if k in known})


@contextmanager
def repo_at_base(task, tests: str = "hidden"):
    """A temporary copy of the task's repo at its base, hidden files left out (tests "visible":
    put in, as the trial's agent had them): what the batch's sandboxes start from (the batch's own
    prepare_repo makes it)."""
    from dgym_tui.batch.trial import TrialError, prepare_repo

    with tempfile.TemporaryDirectory(prefix="dgym-review-base-") as tmp:
        try:
            yield prepare_repo(task, Path(tmp), tests=tests)
        except TrialError as e:
            raise ReworkError(str(e)) from None


def normalise_patch(task, patch: str) -> str:
    """The patch as git would write it against the task's base: a hand edit's hunk counts are
    recounted. ReworkError (one line) when it does not apply."""
    from dgym_tui.sessions.patch import _TempRepo

    if not patch.strip():
        return ""
    if not patch.endswith("\n"):
        patch += "\n"
    if getattr(task, "environment", None) is not None:  # its base is in its image: the harness applies it
        return patch
    with repo_at_base(task) as base, _TempRepo() as tmp:
        shutil.copytree(base, tmp.root, symlinks=True, dirs_exist_ok=True)
        tmp.commit()
        out = tmp.git("apply", "--recount", "--index", "--whitespace=nowarn", "-",
                      stdin=patch.encode("utf-8", "surrogateescape"), check=False)
        if out.returncode != 0:
            why = out.stderr.decode(errors="replace").strip().splitlines()
            raise ReworkError(f"the edited patch does not apply to the task's base ({why[-1] if why else 'git refused it'})")
        return tmp.diff()


def score(run: RunDir, trial: Trial, patch: str, scorer: Scorer | None = None) -> TrialResult:
    """A result for `patch` on the trial's task, scored as the batch scores (fresh sandbox): the
    trial's result with the scoring's fields replaced. A failure of ours is status error."""
    task = task_of(run, trial)
    sandbox = str(trial.result.sandbox or run.batch.get("sandbox") or "auto")  # the kind it ran in
    image = run.batch.get("image")
    result = TrialResult.from_dict({k: v for k, v in trial.result.to_dict().items()
                                    if k not in ("patch_sha256", "revision", "origin")})
    try:
        if scorer is None:
            from dgym_tui.batch.scoring import score_patch as scorer
        with repo_at_base(task) as repo_dir:
            found = scorer(task, patch, str(repo_dir), sandbox=sandbox, image=image)
    except ReworkError:
        raise
    except Exception as e:  # ScoringError, or any failure of ours: recorded as an error, not a raise
        return result.fail(f"scoring failed: {e}", str(e))
    scored = found.to_dict() if hasattr(found, "to_dict") else dict(found)
    resolved = bool(scored.pop("resolved", False))
    scored.pop("applied", None)
    for key, value in scored.items():
        setattr(result, key, value)
    result.status, result.error = "resolved" if resolved else "unresolved", None
    return result


def make_revision(run: RunDir, trial: Trial, origin: str, patch: str | None = None, note: str = "",
                  session_file: str | Path | None = None, scorer: Scorer | None = None,
                  agent_runner: Callable | None = None, model: str | None = None, api_base: str | None = None) -> str:
    """Make and score a new revision of `trial`; returns one line saying how it went."""
    from dgym_tui.review import reviews

    task = task_of(run, trial)
    session_bytes = None
    if origin == "edit":
        patch = normalise_patch(task, patch or "")
    elif origin == "take-over":
        session_bytes = Path(session_file).read_bytes()
        patch = patch_of_session(session_file, task, tests_of(run, trial))
    elif origin == "send-back":
        session_bytes, patch = (agent_runner or send_back)(run, trial, note, model=model, api_base=api_base)
    else:
        raise ReworkError(f"unknown origin {origin!r}")
    if patch == run.patch(trial):
        return f"{trial.id}: the {origin} changed nothing in the patch: no new revision"
    rev = revisions.create(run.path, trial.id, origin, patch, note=note, from_revision=trial.revision,
                           session=session_bytes)
    verdict = {"edit": "edit", "send-back": "send-back"}.get(origin)
    if verdict:  # what became of the trial: the new revision's patch, undecided until approved
        reviews.record(run.path, trial.id, verdict, revisions.sha256(patch), note, revision=rev.number)
    result = score_revision(run, trial, rev, scorer)
    return f"{trial.id}: revision {rev.number} ({origin}) scored {result.status}: {result.reason or ''}"


def score_revision(run: RunDir, trial: Trial, rev: revisions.Revision, scorer: Scorer | None = None,
                   wait: bool = True) -> TrialResult | None:
    """Score `rev` (a fresh sandbox) unless it is scored already, holding its lock meanwhile; None
    when another process holds it and wait is False."""
    with revisions.scoring(rev, wait) as held:
        if not held:
            return None
        done = revisions.read(run.path, trial.id, rev.number).result
        if done is not None:  # an inbox that opened meanwhile scored it first
            return done
        patch = (rev.path / "patch.diff").read_bytes().decode("utf-8", "surrogateescape")
        return revisions.save_score(rev, score(run, trial, patch, scorer))


def score_left(run: RunDir, trial: Trial, scorer: Scorer | None = None) -> str | None:
    """Score the trial's newest revision if it still waits for its score and no process is scoring
    it: the inbox that made it was closed, or killed, before its score was in. One line saying how
    it went; None when there is nothing to score here (scored, or another process scores it)."""
    _newest, waiting = revisions.current(run.path, trial.id)
    if waiting is None:
        return None
    rev = revisions.read(run.path, trial.id, waiting)
    result = score_revision(run, trial, rev, scorer, wait=False)
    if result is None:
        return None
    return (f"{trial.id}: revision {rev.number} ({rev.origin}), left unscored when the review ended, "
            f"scored {result.status}: {result.reason or ''}")


def tests_of(run: RunDir, trial: Trial) -> str:
    """What the trial's agent saw of the task's tests (batch's --tests)."""
    return str(trial.result.tests or run.batch.get("tests") or "hidden")


def patch_of_session(path: str | Path, task=None, tests: str = "hidden") -> str:
    """The final change of a session (a take-over) against the repo it ran on; for a task in an
    image (a SWE-bench instance), against the image's files (visible tests left out)."""
    from dgym_tui.core.session_file import SessionFileError, read_session
    from dgym_tui.sandbox.errors import SandboxError
    from dgym_tui.sessions.patch import PatchError, final_patch

    try:
        recording = read_session(str(path))
        if task is not None and task.environment is not None:
            from dgym_tui.batch.instance import patch_of

            return patch_of(recording, task, tests)
        return final_patch(recording).diff
    except (SessionFileError, PatchError, SandboxError) as e:
        raise ReworkError(f"the take-over's change cannot be read: {e}") from None


# --- the replay and its take-over ------------------------------------------------------------

def prepare_replay(run: RunDir, trial: Trial) -> tuple[Path, Path]:
    """A copy of the trial's session whose repo is the task's repo at its base (a copy kept in
    RUN_DIR/revisions/<trial>/takeover/<n>/: a take-over starts from it), and the folder a
    take-over's session is to be written in (DGYM_TUI_DATA_DIR). Returns (session copy, folder).
    A task in an image (a SWE-bench instance): the repo is an empty folder and the copy's header
    names the task, so a take-over starts in the task's image as the trial did."""
    task = task_of(run, trial)
    folder = run.path / revisions.FOLDER / trial.id / "takeover"
    number = 1 + max((int(p.name) for p in folder.glob("*") if p.name.isdigit()), default=0)
    work = folder / str(number)
    work.mkdir(parents=True)
    repo = work / "repo"
    in_image = None
    if task.environment is not None:
        from dgym_tui.batch.instance import header

        repo.mkdir()
        in_image = header(task, tests_of(run, trial))
    else:
        with repo_at_base(task) as base:
            shutil.copytree(base, repo, symlinks=True)
    copy = work / "replayed.jsonl"
    rewrite_repo(run.session_path(trial), copy, repo, in_image)
    return copy, work / "sessions"


def taken_over(data_dir: Path) -> Path | None:
    """The session a take-over wrote in data_dir, if there was one (the newest)."""
    taken = sorted(Path(data_dir).rglob("*.jsonl"), key=lambda p: p.stat().st_mtime)
    return taken[-1] if taken else None


def replay(run: RunDir, trial: Trial, command: list[str] | None = None) -> Path | None:
    """Run the trial's replay in the debugger (`dgym-tui replay`, in this terminal: the caller
    hands it over). A take-over there writes its session into a folder of ours; returns that
    session, or None when there was no take-over."""
    copy, data_dir = prepare_replay(run, trial)
    env = dict(os.environ, DGYM_TUI_DATA_DIR=str(data_dir))
    done = subprocess.run(command or [sys.executable, "-m", "dgym_tui", "replay", str(copy)], env=env)
    taken = taken_over(data_dir)
    # A take-over's session is kept as it was written, however the replay ended; a replay that
    # failed with none is not "no take-over" (Ctrl-C, 130, is the person's own way out).
    if taken is None and done.returncode not in (0, 130):
        raise ReworkError(f"the replay ended with exit status {done.returncode} (what it said is above in the "
                          f"terminal; `dgym-tui replay {copy}` opens it again)")
    return taken


def rewrite_repo(source: Path, target: Path, repo: Path, in_image: dict | None = None) -> None:
    """A copy of a session file whose header names `repo` (with its files' hashes); in_image
    (batch/instance.header's keys): the task in its image, whose repo on the host is empty."""
    from dgym_tui.core.session_file import repo_hashes

    with open(source, encoding="utf-8") as fh:
        header = json.loads(fh.readline())
        rest = fh.read()
    header.update(repo=str(repo.resolve()), repo_hashes={} if in_image else repo_hashes(str(repo)),
                  **(in_image or {}))
    header.pop("repo_hashes_error", None)
    target.write_text(json.dumps(header) + "\n" + rest, encoding="utf-8")


# --- send-back --------------------------------------------------------------------------------

def send_back(run: RunDir, trial: Trial, note: str, model: str | None = None, api_base: str | None = None
              ) -> tuple[bytes, str]:
    """A new attempt of the agent: the trial's session resumed in a new sandbox (its changes,
    its conversation), the note given as the person's hint, run headless to its end with the
    batch's model (or `model`) and limits. Returns (the new session file's bytes, its patch)."""
    from dgym_tui.agent.approval import headless_answers
    from dgym_tui.agent.setup import make_agent
    from dgym_tui.batch.trial import arm_tools
    from dgym_tui.config import AgentSettings
    from dgym_tui.core.session import Session
    from dgym_tui.core.session_file import SessionFileError, SessionWriter, read_session

    task = task_of(run, trial)
    batch = run.batch
    settings = AgentSettings(model=model or str(batch.get("model") or ""), mode="auto")
    settings.api_base = api_base if model else batch.get("api_base")
    settings.tool_format = str(batch.get("tool_format") or "auto")
    if batch.get("max_steps") is not None:
        settings.max_steps = int(batch["max_steps"]) + int(trial.steps or 0)  # as many again as the batch gave
    settings.max_cost = batch.get("max_cost")
    if not settings.model:
        raise ReworkError("the batch's model is unknown (batch.json): cannot send back")
    tests = tests_of(run, trial)
    with tempfile.TemporaryDirectory(prefix="dgym-review-sendback-") as tmp, repo_at_base(task, tests) as base:
        repo = Path(tmp) / base.name
        shutil.copytree(base, repo, symlinks=True)
        copy = Path(tmp) / "trial.jsonl"
        in_image = None
        if task.environment is not None:
            from dgym_tui.batch.instance import header

            in_image = header(task, tests)
        rewrite_repo(run.session_path(trial), copy, repo, in_image)
        try:
            recording = read_session(str(copy))
        except SessionFileError as e:
            raise ReworkError(f"the trial's session cannot be read: {e}") from None
        # the arm's tools, every one of them: a tool its schedule held back is the agent's now
        arm = next((a for a in batch.get("arms") or [] if a.get("name") == trial.arm), None)
        tools = arm_tools(list((arm or {}).get("tools") or []))
        from dgym_tui.batch.test_modes import hidden_tests, visible_entrypoint, without_tests

        if tests == "eval" and "eval" in tools:
            from dgym_tui.tools.eval import EvalTool

            tools["eval"] = EvalTool.with_hidden_tests(hidden_tests(task))
        environment = None
        entrypoint = visible_entrypoint(task) if tests == "visible" else task.entrypoint
        if task.environment is not None:  # a SWE-bench instance: in its own image again
            from dgym_tui.batch.swebench import session_environment

            environment, entrypoint = session_environment(task, tests), task.entrypoint
        session = Session.resume(recording, sandbox=str(trial.result.sandbox or batch.get("sandbox") or "auto"),
                                 image=batch.get("image"), entrypoint=entrypoint, tools=tools,
                                 debugger="pdb" in tools, environment=environment)
        out = Path(tmp) / "sent-back.jsonl"
        writer = SessionWriter.open(out, session, mode="auto", model=settings.model, sent_back_from=trial.id,
                                    note=note)
        try:
            session.start()
            if session.state.program == "error":
                raise ReworkError(f"the sandbox did not start: {session.state.error}")
            agent = make_agent(session, settings, tools=session.tools,
                               auto_answer=headless_answers(bool(batch.get("yes", True)),
                                                                              "a review's send-back"),
                               on_model_error="stop")
            agent.hint(note)
            agent.run()
            patch = session.diff()
            if tests == "visible":  # the tests are the harness's to add, as in the batch
                patch, _cut = without_tests(task, patch)
        finally:
            session.close()
            writer.close()
        return out.read_bytes(), patch
