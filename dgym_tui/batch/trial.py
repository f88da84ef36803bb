"""One trial: a function of its TrialSpec, returning a TrialOutcome and writing nothing anyone
else sees (its temp folders and sandboxes are removed whatever happens).

    the task's repo at its base (git archive, or the spec's repo_blob) ─> a temp folder,
        hidden files and task.toml left out
    a Session on it (its own sandbox) ─> the task's setup ─> the headless agent, limited to the
        arm's tools, under a wall clock ─> the session file (bytes) and its diff (the patch)
    scoring.score_patch: a fresh sandbox at the base, the hidden tests, the verdict

Every failure of ours or the provider's is status "error" with its text, never a raise.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
import shlex
import shutil
import socket
import subprocess
import tarfile
import tempfile
import threading
import time
import traceback
from collections import Counter
from pathlib import Path

from dgym_tui.batch.result import TrialResult, now
from dgym_tui.batch.scoring import FreshSandbox, ScoringError
from dgym_tui.batch.spec import Task, TrialOutcome, TrialSpec
from dgym_tui.sandbox.errors import SandboxError

NODE_ENV = "DGYM_TUI_NODE"     # in spec.env: the node's name for result.json (a Ray executor sets it)
STOP_GRACE = 10.0              # seconds the agent's thread may take to end once its sandbox is gone
ALWAYS_TOOLS = ("submit",)     # every arm can say it is done
SKIP = {".git", "__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache"}


class TrialError(Exception):
    """A failure of ours before or around the agent; str() is the result's error."""


# --- the task's repo at its base -----------------------------------------------------------------


def prepare_repo(task: Task, dest: Path, repo_blob: bytes | None = None, tests: str = "hidden") -> Path:
    """The task's repo as the agent may see it, in dest/repo: at base_commit when given (git
    archive: no history, so no later commit gives the fix away), else the folder as it is; its
    hidden files and task.toml left out (tests "visible": its hidden tests put in, the test patch
    applied: the agent's baseline; batch/test_modes.py). TrialError: a missing repo or commit, a
    test patch that does not apply. The folder is named after the task, so the agent's prompt
    (and a stub model serving many trials) names it."""
    from dgym_tui.batch.tasks import TASK_TOML, safe_id

    repo = dest / safe_id(task.id)
    repo.mkdir(parents=True)
    if task.environment is not None:  # the repository is in the task's image: nothing to copy
        return repo
    if repo_blob is not None:
        with tarfile.open(fileobj=io.BytesIO(repo_blob)) as tar:
            tar.extractall(repo, filter="data")
    elif task.base_commit:
        archive = subprocess.run(["git", "-C", task.repo, "archive", "--format=tar", task.base_commit],
                                 capture_output=True)
        if archive.returncode != 0:
            raise TrialError(f"cannot check out {task.base_commit} of {task.repo}: "
                             f"{archive.stderr.decode(errors='replace').strip().splitlines()[-1:] or ['git failed']}")
        with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
            tar.extractall(repo, filter="data")
    else:
        source = Path(task.repo)
        if not source.is_dir():
            raise TrialError(f"the task's repo {task.repo} is not a folder")
        shutil.copytree(source, repo, dirs_exist_ok=True, symlinks=True,
                        ignore=shutil.ignore_patterns(*SKIP))
    for hidden in [TASK_TOML, *task.hidden_files]:
        target = repo / hidden
        if target.is_file() or target.is_symlink():
            target.unlink()
    if tests == "visible":
        from dgym_tui.batch.test_modes import write_visible

        try:
            write_visible(task, repo)
        except ValueError as e:
            raise TrialError(str(e)) from None
    return repo


def pack_repo(path: str | os.PathLike) -> bytes:
    """A folder as a gzipped tar (its .git and caches left out), for an executor that ships
    repos to where trials run (TrialSpec.repo_blob)."""
    root = Path(path)
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for folder, dirs, files in os.walk(root):
            dirs[:] = sorted(d for d in dirs if d not in SKIP)
            for name in sorted(files):
                full = Path(folder) / name
                tar.add(full, arcname=full.relative_to(root).as_posix(), recursive=False)
    return buffer.getvalue()


def pack_task(task: Task) -> bytes:
    """The task's repo at its base, hidden files left out, packed: what repo_blob carries."""
    with tempfile.TemporaryDirectory(prefix="dgym-pack-") as tmp:
        return pack_repo(prepare_repo(task, Path(tmp)))


# --- the agent's session ----------------------------------------------------------------------------


def open_session(task: Task, repo: Path, sandbox: str = "auto", image: str | None = None, made=None,
                 tools: dict | None = None, tests: str = "hidden"):
    """A started Session on the prepared repo, the task's setup done (a setup that changed files
    is the new baseline, so it is no part of the agent's patch). TrialError: it did not start.
    made(session): called before it starts, so a wall clock can close it while it does.
    tools: the session's tools (default: every tool); without pdb among them, no pdb starts.
    tests: what the agent sees of the hidden tests (batch/test_modes.py): "eval", its eval runs
    with them for that run only; "visible", they are in the baseline (prepare_repo put them in the
    repo, or the environment applies them) and pdb runs the failing tests."""
    from dgym_tui.batch.scoring import test_timeout_of
    from dgym_tui.batch.test_modes import hidden_tests, visible_entrypoint
    from dgym_tui.core.session import Session

    debugger = tools is None or "pdb" in tools
    if tests == "eval":
        from dgym_tui.tools.eval import EvalTool

        tools = dict(tools) if tools is not None else arm_tools([])
        if "eval" in tools:
            tools["eval"] = EvalTool.with_hidden_tests(hidden_tests(task))
    environment = None
    entrypoint = task.entrypoint
    if task.environment is not None:
        from dgym_tui.batch.swebench import session_environment

        environment = session_environment(task, tests)
    elif tests == "visible":
        entrypoint = visible_entrypoint(task)
    session = Session(str(repo), sandbox=sandbox, image=image, entrypoint=entrypoint,
                      test_timeout=test_timeout_of(task), tools=tools, debugger=debugger, environment=environment)
    if made is not None:
        made(session)
    try:
        session.start()
        ready = session.state.sandbox
        if session.state.program == "error" or ready is None or not ready.baseline:
            raise TrialError(f"the sandbox did not start: {session.state.error or 'no reason given'}")
        if task.setup:
            try:
                session.set_up(task.setup)
            except SandboxError as e:
                raise TrialError(str(e).replace("the set-up command", "the task's setup command", 1)) from None
        stop = session.debugger.stop if tests == "visible" and session.debugger is not None else None
        if stop is not None and stop.reason == "start":
            # a runner script (Django's runtests.py) stops at its first line, as raw pdb does: on to
            # its first failing test, where pytest mode opens by itself (sandbox/box/runners.py)
            from dgym_tui.core.events import SYSTEM

            # that run is part of the start (sympy's runner imports sympy first): a start's time limit,
            # not a command's (under load the 30 s of a command ran out inside sympy's imports)
            debugger = session.debugger
            saved, debugger.timeout = debugger.timeout, max(debugger.timeout, debugger.start_timeout)
            try:
                session.send("c", actor=SYSTEM)
            finally:
                debugger.timeout = saved
    except BaseException:
        session.close()
        raise
    return session


def task_text(session, task: Task) -> str:
    """The agent's task: the problem statement, else made from the failing tests (run the way
    the task runs them: debug-gym's `pytest test.py` names its file)."""
    if task.problem:
        return task.problem
    from dgym_tui.agent.prompts import task_from_tests
    from dgym_tui.batch.scoring import entrypoint_args

    # Ended at the first hang: its place is what the agent needs, and each more hanging test
    # would delay its first step by a quarter of the limit (scoring still runs every test).
    return task_from_tests(session.run_tests(args=shlex.join(entrypoint_args(task)), actor="agent",
                                             stop_after_hang=True))


@contextlib.contextmanager
def agent_environment(env: dict[str, str]):
    """spec.env for this process while the agent runs (litellm reads API keys from it), restored
    after. Never the sandbox's: no host variable enters a sandbox. Trials sharing a process must
    agree on these values."""
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update({k: str(v) for k, v in env.items()})
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


# --- the trial -------------------------------------------------------------------------------------


def run_trial(spec: TrialSpec, on_event=None) -> TrialOutcome:
    """Run one trial; never raises (a failure of ours is status "error"). `on_event(data)`, when
    given, hears the agent's progress as it goes ({"step", "cost", "state"}: the live table)."""
    clock = time.monotonic()
    result = TrialResult(trial=spec.trial_id, task=spec.task.id, arm=spec.arm.name, attempt=spec.attempt,
                         notes=[spec.task.note] if spec.task.note else [], tool_format=spec.tool_format or "native",
                         model=spec.model, sandbox=spec.sandbox, node=spec.env.get(NODE_ENV) or socket.gethostname(),
                         started=now(), issue=spec.task.issue, tests=spec.tests)
    outcome = TrialOutcome(result={})
    tmp = Path(tempfile.mkdtemp(prefix="dgym-trial-"))
    try:
        _run(spec, tmp, result, outcome, on_event)
    except Exception as e:  # ours: said, never raised
        message = str(e) if isinstance(e, TrialError) else f"{type(e).__name__}: {e}"
        result.fail(message, message if isinstance(e, TrialError) else message + "\n" + traceback.format_exc(limit=8))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    result.patch_sha256 = hashlib.sha256(outcome.patch.encode("utf-8")).hexdigest()
    result.seconds = round(time.monotonic() - clock, 3)
    result.finished = now()
    outcome.result = result.to_dict()  # plain data at the edge: it crosses processes and Ray nodes
    return outcome


def _run(spec: TrialSpec, tmp: Path, result: TrialResult, outcome: TrialOutcome, on_event=None) -> None:
    task = spec.task
    try:
        arm_tools(spec.arm.tools)  # a bad arm fails before any sandbox starts
    except ValueError as e:
        raise TrialError(str(e)) from None
    repo = prepare_repo(task, tmp, spec.repo_blob, tests=spec.tests)
    # scoring starts from the pristine base whatever the agent saw (visible: its repo holds the tests)
    base = prepare_repo(task, tmp / "base", spec.repo_blob) if spec.tests == "visible" else repo
    limit = task.time_limit or spec.timeout
    agent_run = AgentRun(spec, repo, tmp / "session.jsonl", on_event, base=base)
    try:
        started = time.monotonic()
        agent_run.run(limit)
        result.agent_seconds = round(time.monotonic() - started, 3)
        outcome.session = agent_run.session_bytes()
        outcome.patch = agent_run.patch
        if spec.tests == "visible":  # the tests are the harness's to add: never twice
            from dgym_tui.batch.test_modes import without_tests

            outcome.patch, cut = without_tests(task, outcome.patch)
            if cut:
                result.notes.append(f"the agent's edits to the task's tests ({', '.join(cut)}) are left out of its "
                                    "patch: scoring adds the tests as they are")
        agent_run.fill(result)
        if agent_run.error is not None:
            result.outcome = "error"
            result.fail(agent_run.error)
            return
        if agent_run.scorer is None and task.environment is not None:
            agent_run._start_scorer()
        elif agent_run.scorer is None:  # the clock ran out before the agent's sandbox was up
            agent_run.scorer = FreshSandbox(task, str(base), agent_run.sandbox_kind or spec.sandbox,
                                            agent_run.image or spec.image, agent_run.python)
        try:
            score = agent_run.scorer.score(outcome.patch)
        except ScoringError as e:
            result.fail(str(e))
            return
    finally:
        agent_run.close()  # both sandboxes gone before the trial returns
    result.tests_before, result.tests_after = score.tests_before, score.tests_after
    result.fail_to_pass, result.pass_to_pass = score.fail_to_pass, score.pass_to_pass
    result.reverted, result.timed_out, result.score_seconds = score.reverted, score.timed_out, score.score_seconds
    result.reproduction = score.reproduction
    if score.resolved:
        result.status, result.reason = "resolved", score.reason
    elif score.reproduction is not None and not score.reproduction["reproduced"]:
        result.status = "no-reproduction"
        result.reason = score.reason + (f" ({agent_run.limit_reason})" if result.outcome in ("limit", "timeout") else "")
    elif result.outcome in ("limit", "timeout"):
        result.status, result.reason = "limit", f"{agent_run.limit_reason}; {score.reason}"
    else:
        result.status, result.reason = "unresolved", score.reason


class AgentRun:
    """The agent's half of a trial: its session, its sandbox, its wall clock."""

    def __init__(self, spec: TrialSpec, repo: Path, session_path: Path, on_event=None, base: Path | None = None):
        self.spec, self.repo, self.session_path = spec, repo, session_path
        self.base = base or repo  # the pristine base the scoring sandbox starts from
        self.on_event = on_event
        self.session = None
        self.agent = None
        self.writer = None
        self.error: str | None = None
        self.outcome = "error"
        self.timed_out = False
        self.limit_reason = ""
        self.patch = ""
        self.sandbox_kind = self.image = self.python = None
        self.scorer: FreshSandbox | None = None   # the scoring sandbox, readied while the agent works
        self.notes: list[str] = []
        self._closer: threading.Thread | None = None
        self._tools: Counter = Counter()

    def run(self, limit: float | None) -> None:
        """Start, run the agent and take its patch, under the wall clock `limit`: past it the
        agent is stopped and its sandbox killed; the patch then comes from the session's
        checkpoints, kept on the host."""
        worker = threading.Thread(target=self._work, name="dgym-trial", daemon=True)
        worker.start()
        worker.join(limit)
        if worker.is_alive():
            self.timed_out = True
            self.outcome, self.limit_reason = "timeout", f"ran past the time limit ({limit:g} s)"
            if self.agent is not None:
                self.agent.stop()
            in_image = self.spec.task.environment is not None
            if in_image:  # its base is only in the sandbox: the patch from there, before it goes
                self.patch = self._host_patch()
            if self.session is not None:
                self.session.close()  # kills the sandbox: whatever runs in it ends now
            worker.join(STOP_GRACE)
            if not in_image:
                self.patch = self._host_patch()
            while worker.is_alive():  # a sandbox still starting: closed again once it has
                worker.join(STOP_GRACE)
                if self.session is not None:
                    self.session.close()
        self._release()

    def _work(self) -> None:
        from dgym_tui.agent.approval import headless_answers
        from dgym_tui.agent.setup import make_agent
        from dgym_tui.config import AgentSettings
        from dgym_tui.core.session_file import SessionWriter

        spec = self.spec
        try:
            tools = arm_tools(spec.arm.tools)
            later = {name: (tools.pop(name), after) for name, after in spec.arm.unlock.items() if name in tools}
            if spec.tests == "eval" and "eval" in later:  # eval given later runs with the task's tests too
                from dgym_tui.batch.test_modes import hidden_tests
                from dgym_tui.tools.eval import EvalTool

                later["eval"] = (EvalTool.with_hidden_tests(hidden_tests(spec.task)), later["eval"][1])
            seeker_tools = None
            if spec.arm.seeker:  # two roles: the session runs the seeker's tools too (pdb among them)
                from dgym_tui.agent.seeker import SEEKER_TOOLS

                seeker_tools = {n: t for n, t in arm_tools(list(SEEKER_TOOLS)).items() if n in SEEKER_TOOLS}
            session = open_session(spec.task, self.repo, sandbox=spec.sandbox, image=spec.image, made=self._made,
                                   tools={**(seeker_tools or {}), **tools}, tests=spec.tests)
            if seeker_tools is not None:  # eval as this trial's tests mode made it
                seeker_tools["eval"] = session.tools.get("eval", seeker_tools["eval"])
                tools = {n: session.tools[n] for n in tools}
            if session.pdb_unavailable:  # its environment cannot run the debugger: nor will a schedule give it
                later.pop("pdb", None)
                self.notes.append(f"pdb is off for this task: {session.pdb_unavailable}")
            if self.timed_out:
                return
            if self.scorer is None:
                ready = session.state.sandbox
                self._start_scorer(ready.backend, ready.image, ready.python)
            in_image = {}
            if spec.task.environment is not None:  # its replay's take-over starts in the task's image again
                from dgym_tui.batch.instance import header

                in_image = header(spec.task, spec.tests)
            self.writer = SessionWriter.open(str(self.session_path), session, mode="auto", model=spec.model,
                                             **in_image)
            session.events.subscribe(self._count, replay=False)
            settings = AgentSettings(model=spec.model, api_base=spec.api_base, mode="auto",
                                     max_steps=spec.max_steps, max_cost=spec.max_cost,
                                     task=task_text(session, spec.task))
            if spec.arm.seeker:  # two roles: the arm's tools are the fixer's
                settings.seeker = spec.arm.seeker.get("model") or spec.seeker
                settings.seeker_api_base = spec.arm.seeker.get("api_base") or spec.seeker_api_base
                settings.seeker_form = spec.arm.seeker.get("form", "ask")
                settings.seeker_steps = spec.seeker_steps
            if spec.tool_format and hasattr(settings, "tool_format"):
                settings.tool_format = spec.tool_format
            with agent_environment({k: v for k, v in spec.env.items() if k != NODE_ENV}):
                self.agent = agent = make_agent(session, settings, tools=tools if spec.arm.seeker else session.tools,
                                                later=later, seeker_tools=seeker_tools,
                                                auto_answer=headless_answers(spec.yes, "this batch trial"),
                                                on_model_error="stop")
                if self.timed_out:
                    return
                ended = agent.run()
            if self.timed_out:  # the wall clock stopped it: "timeout" stays
                return
            self.outcome = ended
            if self.outcome == "limit":
                self.limit_reason = (getattr(agent, "stuck", "") or
                                     (f"reached the step limit ({spec.max_steps})"
                                      if spec.max_steps is not None and agent.step >= spec.max_steps
                                      else "reached the cost limit"))
            if self.outcome == "error":
                self.error = f"the agent stopped on an error: {_last_error(session) or 'no reason given'}"
            self.patch = session.diff()
        except Exception as e:
            if not self.timed_out:
                self.error = str(e) if isinstance(e, TrialError | ValueError) else f"{type(e).__name__}: {e}"

    def _made(self, session) -> None:
        """The session exists: keep it (the wall clock may close it), and start the scoring
        sandbox as soon as the agent's sandbox is chosen and its image ready (the repo's
        dependencies installed), so both start side by side."""
        self.session = session
        if self.spec.task.environment is not None:  # scored in the task's own image: start it now
            self._start_scorer()
            return

        def chosen(event) -> None:
            if self.scorer is None and event.kind == "sandbox_chosen":
                d = event.data
                self.sandbox_kind, self.image, self.python = d.backend, d.image, d.python
                self._start_scorer(d.backend, d.image, d.python)

        session.events.subscribe(chosen, replay=False)

    def _start_scorer(self, kind: str | None = None, image: str | None = None, python: str | None = None) -> None:
        """The scoring sandbox, started beside the agent's: of the same kind, image and Python."""
        task = self.spec.task
        if task.environment is not None:
            from dgym_tui.batch.scoring import test_timeout_of
            from dgym_tui.batch.swebench import HarnessScorer

            self.scorer = HarnessScorer(task, str(self.base), test_timeout_of(task)).start()
            return
        self.scorer = FreshSandbox(task, str(self.base), kind, image, python).start()

    def _count(self, event) -> None:
        if event.kind == "tool_result" and event.actor.startswith("agent"):
            self._tools[event.data.tool] += 1
        elif event.kind == "agent_status" and self.on_event is not None:
            d = event.data
            try:  # a listener: what the driver does with it must not stop the trial
                self.on_event({"step": d.step, "cost": d.cost, "state": "running" if d.state == "running" else d.state})
            except Exception:
                pass

    def _host_patch(self) -> str:
        """The change from the session's checkpoints (and what was pending), applied on the host
        to a copy of the base: the sandbox is gone."""
        session = self.session
        if session is None:
            return ""
        if self.spec.task.environment is not None:  # no copy of the base on the host: ask its git directly
            return session.diff_now()
        patches = [r.patch for r in session.workspace.records] + [session.workspace.pending]
        patches = [p for p in patches if p.strip()]
        if not patches:
            return ""
        with tempfile.TemporaryDirectory(prefix="dgym-patch-") as tmp:
            copy = Path(tmp) / "repo"
            shutil.copytree(self.repo, copy, symlinks=True, ignore=shutil.ignore_patterns(*SKIP))
            git = ["git", "-c", "user.name=dgym", "-c", "user.email=dgym@localhost", "-C", str(copy)]
            subprocess.run([*git, "init", "-q"], check=True, capture_output=True)
            subprocess.run([*git, "add", "-A"], check=True, capture_output=True)
            subprocess.run([*git, "commit", "-qm", "base", "--allow-empty"], check=True, capture_output=True)
            for patch in patches:
                subprocess.run([*git, "apply", "--whitespace=nowarn", "-"], input=patch.encode(),
                               capture_output=True)
            subprocess.run([*git, "add", "-A"], check=True, capture_output=True)
            return subprocess.run([*git, "diff", "--cached", "--binary", "--no-color", "HEAD"],
                                  check=True, capture_output=True).stdout.decode("utf-8", errors="replace")

    def _release(self) -> None:
        """The session file closed; the agent's sandbox removed in the background (while the
        scoring runs): close() waits for it."""
        if self.writer is not None:
            self.writer.close()
        session = self.session
        if session is not None:
            ready = session.state.sandbox
            if ready is not None:
                self.sandbox_kind, self.python, self.image = ready.backend, ready.python, ready.image
            self._closer = threading.Thread(target=session.close, name="dgym-trial-close", daemon=True)
            self._closer.start()

    def close(self) -> None:
        """Every sandbox of the trial removed (safe twice)."""
        if self.scorer is not None:
            self.scorer.close()
        if self._closer is not None:
            self._closer.join()
        if self.session is not None:
            self.session.close()

    def session_bytes(self) -> bytes:
        try:
            return self.session_path.read_bytes()
        except OSError:
            return b""

    def fill(self, result: TrialResult) -> None:
        """What the agent's half knows into the result: how it ended, its steps, tools, cost."""
        agent = self.agent
        result.outcome, result.tool_calls = self.outcome, dict(sorted(self._tools.items()))
        result.notes += self.notes
        if self.sandbox_kind:
            result.sandbox = self.sandbox_kind
        if self.session is not None:
            from dgym_tui.core.reruns import unasked_runs

            result.unasked_runs = unasked_runs(self.session.events.history)
        if agent is not None:
            result.steps, result.tokens, result.cost, result.summary = agent.step, agent.tokens, agent.cost, agent.submitted
            result.tool_format = getattr(agent, "format", None) or self.spec.tool_format or "native"
        if self.session is not None and self.spec.arm.seeker:
            result.roles = self._roles()
            if result.roles:  # the trial's totals are both roles'
                seeker = result.roles["seeker"]
                result.tokens = result.roles["fixer"]["tokens"] + seeker["tokens"]
                costs = (result.roles["fixer"]["cost"], seeker["cost"])
                result.cost = None if None in costs else round(sum(costs), 6)

    def _roles(self) -> dict:
        """Per-role figures (core/roles.py), and whether the patch touched a place the seeker named."""
        from dgym_tui.agent.grounding import grounded_places, touched
        from dgym_tui.core.roles import role_figures

        history = self.session.events.history
        figures = role_figures(history)
        if figures:
            named = grounded_places(e.data for e in history if e.kind == "seeker_answer")
            figures["seeker"]["form"] = self.spec.arm.seeker.get("form", "ask")
            figures["seeker"]["touched_named_place"] = touched(self.patch, named)
        return figures


def arm_tools(names: list[str]) -> dict:
    """The registry's tools an arm names, plus submit (every arm can end), each described as it
    is beside the others (Tool.fitted: no word of pdb where pdb is not among them). ValueError: a
    name the registry does not know."""
    from dgym_tui.tools import registry

    every = registry()
    unknown = sorted(set(names) - set(every))
    if unknown:
        raise ValueError(f"unknown tool {', '.join(unknown)} in the arm (tools: {', '.join(sorted(every))})")
    wanted = list(dict.fromkeys([*names, *ALWAYS_TOOLS])) if names else list(every)
    return {name: every[name].fitted(frozenset(wanted)) for name in wanted}


def _last_error(session) -> str | None:
    for event in reversed(session.events.history if hasattr(session.events, "history") else []):
        if event.kind == "error":
            return event.data.message
    return session.state.error
