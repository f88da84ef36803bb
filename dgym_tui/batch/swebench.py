"""SWE-bench as its users run it, through the official `swebench` package (the optional extra
`dgym-tui[swebench]`; imported only here, and only when a task set holds SWE-bench instances):

- each instance runs in its own environment image (the dataset's `image`, else `--image-template`,
  else the name swebench gives it: swebench/sweb.eval.x86_64.<id, "__" as "_1776_">), in its
  repository folder (/testbed) with its environment active (the eval script's own activation
  lines), when the image is on the engine or can be pulled;
- the agent's `eval` runs the harness's test command for it (the eval script's, over the test
  files that exist at the base), and reads it with the repository's log parser;
- scoring is the harness's: a fresh container of the image, the agent's patch applied the way
  run_evaluation applies it, the instance's eval script run as root (it adds the hidden tests
  itself), its log graded by swebench's get_eval_report: FAIL_TO_PASS and PASS_TO_PASS decide,
  and a test that errors or times out fails.

Without the extra, or for an instance whose image is nowhere, a task runs as any JSON-lines
instance does (the repo cloned into the generic sandbox, our own pytest scoring) and a one-line
note says so.
"""

from __future__ import annotations

import posixpath
import re
import tempfile
import threading
import time
from pathlib import Path

from dgym_tui.batch.spec import Task

WORKDIR = "/testbed"
START, END = ">>>>> Start Test Output", ">>>>> End Test Output"
SUITE_TIMEOUT = 1800.0          # the harness's own default limit on the eval script
EVAL_SCRIPT = ".git/dgym-eval.sh"
# The harness works as root. Its scoring container here gives root back only what writing the
# sandbox user's files needs (no network, no new privileges, nothing else); root's home is its own
# and git accepts the folder the sandbox user owns.
AS_ROOT = "export HOME=/root\n"
ROOT_CAPS = ["CHOWN", "DAC_OVERRIDE", "FOWNER"]
INSTANCE_FIELDS = ("instance_id", "repo", "version", "base_commit", "FAIL_TO_PASS", "PASS_TO_PASS", "image",
                   "eval_script", "log_parser", "eval_type")


def installed() -> bool:
    try:
        import swebench.harness.grading  # noqa: F401
    except ImportError:
        return False
    return True


def is_instance(record: dict) -> bool:
    """A SWE-bench instance (the dataset's shape), not just any JSON-lines task."""
    return isinstance(record.get("version"), str) and (
        "environment_setup_commit" in record or "eval_script" in record)


def image_name(record: dict, template: str | None = None) -> str:
    """The instance's environment image: the dataset's `image`, else the template (`{instance_id}`,
    `{id_1776}`: the id with "__" as "_1776_", as Docker Hub names them), else swebench's name."""
    instance_id = record["instance_id"]
    if template:
        return template.format(instance_id=instance_id, id_1776=instance_id.replace("__", "_1776_"))
    if record.get("image"):
        return str(record["image"])
    from swebench.task.checks import expected_image

    return expected_image(instance_id)


def environment(record: dict, where: str, template: str | None = None, check_image=None) -> tuple[dict | None, str | None]:
    """The task's environment for a SWE-bench instance (Task.environment), or None and a note
    saying why it runs in the generic sandbox. check_image(name) -> bool: whether the image is
    there or can be pulled (None: not checked here)."""
    if not installed():
        return None, (f"{where}: a SWE-bench instance, but the swebench package is not installed "
                      "(pip install 'dgym-tui[swebench]'): it runs in the generic sandbox, scored by dgym-tui")
    image = image_name(record, template)
    if check_image is not None and not check_image(image):
        return None, (f"{where}: its image {image} is not on this Docker engine and cannot be pulled: it runs "
                      "in the generic sandbox, scored by dgym-tui (dgym-tui image swebench builds it here)")
    if not record.get("eval_script"):  # the dataset's older shape: the script made from swebench's specs
        from dgym_tui.batch.swebench_specs import SpecsError, harness_scripts

        try:
            record = {**record, "eval_script": harness_scripts(record, eval_only=True)["eval_script"]}
        except SpecsError as e:
            return None, (f"{where}: no eval script ({e}): it runs in the generic sandbox, scored by "
                          "dgym-tui's own pytest run")
    instance = {k: record.get(k) for k in INSTANCE_FIELDS}
    instance.update(image=image, log_parser=record.get("log_parser") or _parser_for(record["repo"]),
                    eval_type=record.get("eval_type") or "pass_and_fail")
    lines = _script_lines(record["eval_script"])
    return {"image": image, "workdir": WORKDIR, "activate": "\n".join(_activation(lines)),
            "test_command": "\n".join(_test_lines(lines)), "instance": instance}, None


def _parser_for(repo: str) -> str:
    from swebench.harness.log_parsers.python import MAP_REPO_TO_PARSER_PY

    parser = MAP_REPO_TO_PARSER_PY.get(repo)
    return parser.__name__ if parser is not None else "parse_log_pytest"


def _script_lines(script: str) -> list[str]:
    from swebench.harness.utils import parse_eval_script

    return parse_eval_script(script)


def _activation(lines: list[str]) -> list[str]:
    """The eval script's lines before it first changes folder (its environment's activation), and
    the variables it exports before the tests (Django's locale)."""
    out, started = [], False
    for line in lines:
        if START in line:
            break
        if line.startswith("cd "):
            started = True
        if not started or line.startswith("export "):
            out.append(line)
    return out


def _test_lines(lines: list[str]) -> list[str]:
    """The harness's test command: what the eval script runs between its output markers."""
    inside, out = False, []
    for line in lines:
        if START in line:
            inside = True
        elif END in line:
            break
        elif inside and not line.startswith("SWEBENCH_TEST_EXIT_CODE"):
            out.append(line)
    return out


def test_spec(task: Task):
    """swebench's TestSpec of the task's instance."""
    from swebench.harness.utils import make_test_spec

    return make_test_spec(dict(task.environment["instance"]))


def read_statuses(task: Task):
    """test id -> PASSED/FAILED/... from a test run's output, by the repository's log parser."""
    from swebench.harness.log_parsers import PARSER_REGISTRY

    spec = test_spec(task)
    parser = PARSER_REGISTRY[spec.log_parser]
    return lambda output: parser(output, spec)


def session_environment(task: Task, tests: str = "hidden"):
    """The core's Environment for the task's session. tests "visible": the test patch is made part
    of its baseline at start, and pdb runs the failing tests (FAIL_TO_PASS) where its runner can
    name them, else the test patch's files (batch/test_modes.py)."""
    from dgym_tui.core.environment import Environment

    env = task.environment
    visible = tests == "visible"
    return Environment(image=env["image"], workdir=env["workdir"], activate=env.get("activate") or None,
                       test_command=env.get("test_command") or None, read_statuses=read_statuses(task),
                       visible_tests=task.test_patch if visible else None,
                       focus=list(task.fail_to_pass) if visible else None)


# --- scoring ----------------------------------------------------------------------------------------


class HarnessScorer:
    """Scoring as SWE-bench's harness does it, in a fresh container of the instance's image: the
    FreshSandbox of SWE-bench tasks (start(), score(patch), close(), `seconds`). The eval script's
    run at the base is made while the agent works ("tests before")."""

    def __init__(self, task: Task, repo_dir: str, test_timeout: float | None = None,
                 suite_timeout: float = SUITE_TIMEOUT):
        self.task, self.repo_dir, self.test_timeout, self.suite_timeout = task, repo_dir, test_timeout, suite_timeout
        self.box = None
        self.seconds = 0.0
        self.before = None
        self.log = ""  # the eval script's log of the last statuses_with()
        self.base: str | None = None
        self._error: BaseException | None = None
        self._thread: threading.Thread | None = None
        self._closed = False
        self._lock = threading.Lock()

    def start(self) -> HarnessScorer:
        self._thread = threading.Thread(target=self._ready, name="dgym-score", daemon=True)
        self._thread.start()
        return self

    def _wait_ready(self) -> None:
        """The container started and the base run made, once: by start()'s thread, else here (a
        second call made a second container, and the first was never removed)."""
        if self._thread is not None:
            self._thread.join()
        elif self.box is None and self._error is None:
            self._ready()

    def _ready(self) -> None:
        from dgym_tui.sandbox.docker_sandbox import DockerSandbox, connect

        started = time.monotonic()
        env = self.task.environment
        try:
            box = DockerSandbox(self.repo_dir, image=env["image"], workdir=env["workdir"],
                                activate=env.get("activate") or None, client=connect(timeout=10), as_root=True,
                                cap_add=ROOT_CAPS)
            with self._lock:
                if self._closed:
                    return
                self.box = box
            box.start()
            self.base = box.baseline
            self.before = self._run(box)
            self._root(box, f"git reset -q --hard {self.base} && git clean -q -fd", 300)
        except BaseException as e:  # handed to score()
            self._error = e
        finally:
            self.seconds += time.monotonic() - started

    def _run(self, box) -> tuple[str, object]:
        """The eval script as root, as the harness runs it; (its log, the plugin's report)."""
        from dgym_tui.core.test_runs import DEFAULT_TEST_TIMEOUT, run_pytest

        box.write_text(EVAL_SCRIPT, test_spec(self.task).eval_script)
        limit = DEFAULT_TEST_TIMEOUT if self.test_timeout is None else self.test_timeout
        command = f"{AS_ROOT}bash {posixpath.join(box.root, EVAL_SCRIPT)}"
        run = run_pytest(box, [], command=command, user="0", timeout=self.suite_timeout, test_timeout=limit)
        if "dgym_test_timeout" in run.output and re.search(r"Error importing plugin|ImportError while loading",
                                                           run.output):
            # an environment whose pytest cannot load the per-test limit: the harness's run, without it
            run = run_pytest(box, [], command=command, user="0", timeout=self.suite_timeout, test_timeout=0)
        return run.output, run

    @staticmethod
    def _root(box, command: str, timeout: float):
        from dgym_tui.sandbox.errors import SandboxError

        done = box.exec(AS_ROOT + command, timeout=timeout, user="0")
        if not done.ok:
            raise SandboxError(f"{command.split()[0]} {command.split()[1]} failed in the scoring sandbox: "
                               f"{done.output.strip()[-300:]}")
        return done

    def score(self, patch: str):
        from dgym_tui.batch.spec import Score, ScoringError
        from dgym_tui.sandbox.errors import SandboxError

        self._wait_ready()
        if self._error is not None:
            e = self._error
            raise ScoringError(f"scoring failed: {e}" if isinstance(e, SandboxError)
                               else f"scoring failed: {type(e).__name__}: {e}") from None
        started = time.monotonic()
        try:
            before = self._statuses(*self.before)
            applied, why = self._apply(patch)
            if not applied:
                score = Score(False, f"the agent's patch does not apply: {why}", before["counts"],
                              {"passed": 0, "failed": 0, "errors": 0},
                              {t: "missing" for t in self.task.fail_to_pass},
                              {t: "missing" for t in self.task.pass_to_pass}, [], applied=False)
            else:
                score = self._grade(patch, before, *self._run(self.box))
        except SandboxError as e:
            raise ScoringError(f"scoring failed: {e}") from None
        self.seconds += time.monotonic() - started
        score.score_seconds = round(self.seconds, 3)
        return score

    def statuses_with(self, patch: str) -> dict[str, str]:
        """Every test's status, as the repository's log parser reads the eval script's log, with
        `patch` applied (the base, as run at start, when it is empty): what validating an instance
        needs (its FAIL_TO_PASS and PASS_TO_PASS), not a score. SandboxError when it cannot run."""
        from dgym_tui.sandbox.errors import SandboxError

        self._wait_ready()
        if self._error is not None:
            raise SandboxError(str(self._error))
        if not patch.strip():
            self.log = self.before[0]
            return self._statuses(*self.before)["statuses"]
        applied, why = self._apply(patch)
        if not applied:
            raise SandboxError(f"the patch does not apply: {why}")
        run = self._run(self.box)
        self.log = run[0]
        return self._statuses(*run)["statuses"]

    def _apply(self, patch: str) -> tuple[bool, str]:
        """The patch applied as run_evaluation applies it: each of its commands in turn, the tree
        cleaned between two tries."""
        from swebench.harness.run_evaluation import GIT_APPLY_CMDS

        if not patch.strip():
            return True, ""
        box = self.box
        path = posixpath.join(box.root, ".git/dgym-patch.diff")
        box.write_text(".git/dgym-patch.diff", patch if patch.endswith("\n") else patch + "\n")
        last = ""
        for attempt, command in enumerate(GIT_APPLY_CMDS):
            if attempt:
                box.exec(AS_ROOT + "git checkout -- . ; git clean -fd", timeout=300, user="0")
            done = box.exec(f"{AS_ROOT}{command} {path}", timeout=300, user="0")
            if done.ok:
                return True, ""
            last = done.output
        if box.exec(f"{AS_ROOT}git apply --check --reverse {path}", timeout=300, user="0").ok:
            return True, ""
        lines = [ln for ln in last.strip().splitlines() if ln.strip()]
        return False, (lines[-1] if lines else "git refused it")[:300]

    def _statuses(self, log: str, run) -> dict:
        from swebench.harness.grading import get_logs_eval

        with tempfile.TemporaryDirectory(prefix="dgym-swebench-") as tmp:
            path = Path(tmp) / "test_output.txt"
            path.write_text(log)
            statuses, found = get_logs_eval(test_spec(self.task), str(path))
        values = list(statuses.values())
        counts = {"passed": sum(v in ("PASSED", "XFAIL") for v in values), "failed": values.count("FAILED"),
                  "errors": values.count("ERROR")}
        return {"statuses": statuses, "found": found, "counts": counts, "run": run}

    def _grade(self, patch: str, before: dict, log: str, run):
        from swebench.harness.grading import get_eval_report

        from dgym_tui.batch.spec import Score, ScoringError

        spec = test_spec(self.task)
        after = self._statuses(log, run)
        with tempfile.TemporaryDirectory(prefix="dgym-swebench-") as tmp:
            path = Path(tmp) / "test_output.txt"
            path.write_text(log)
            report = get_eval_report(spec, {"instance_id": spec.instance_id, "model_name_or_path": "dgym-tui",
                                            "model_patch": patch}, str(path), include_tests_status=True)
        report = report[spec.instance_id]
        if report.get("infra_failure"):
            raise ScoringError(f"scoring failed: the environment failed ({report.get('infra_failure_reason')})")
        tests = report.get("tests_status") or {}
        stopped = {t.test: t for t in run.timed_out}

        def outcomes(key: str, names: list[str]) -> dict[str, str]:
            won = set((tests.get(key) or {}).get("success") or [])
            return {t: "passed" if t in won else ("failed" if t in after["statuses"] or t in stopped else "missing")
                    for t in names}

        f2p, p2p = outcomes("FAIL_TO_PASS", spec.FAIL_TO_PASS), outcomes("PASS_TO_PASS", spec.PASS_TO_PASS)
        touched = set(_patched(patch)) & set(_patched(self.task.test_patch or ""))
        if report["resolved"]:
            reason = "every FAIL_TO_PASS and PASS_TO_PASS test passes (SWE-bench's harness)"
        elif not after["found"]:
            reason = ("the tests ran past the harness's limit" if run.suite_timed_out
                      else "the eval script's log held no test results (SWE-bench's harness)")
        else:
            bad = [f"{t} {s}" + (f" (timed out after {stopped[t].seconds:g} s at {stopped[t].where})"
                                  if t in stopped else "")
                   for t, s in {**f2p, **p2p}.items() if s != "passed"]
            reason = f"not passing: {', '.join(bad[:5])}" + (f" and {len(bad) - 5} more" if len(bad) > 5 else "")
        if touched:
            reason += f" (the harness reset the agent's edits to {', '.join(sorted(touched))})"
        return Score(bool(report["resolved"]), reason, before["counts"], after["counts"], f2p, p2p,
                     sorted(touched), timed_out=[{"test": t.test, "seconds": t.seconds, "where": t.where}
                                                 for t in run.timed_out])

    def close(self) -> None:
        with self._lock:
            self._closed = True
            box = self.box
        if box is not None:
            box.close()
        if self._thread is not None and self._thread.is_alive():
            self._thread.join(60)
            if self.box is not None:
                self.box.close()


def _patched(patch: str) -> list[str]:
    from dgym_tui.core.workspace import patched_files

    return patched_files(patch)


def export_is_harness_input(path: str | Path) -> list[dict]:
    """Predictions as swebench's own reader loads them (for tests: what --export-preds writes is
    the harness's input as it is)."""
    from swebench.harness.utils import get_predictions_from_file

    return get_predictions_from_file(str(path), "SWE-bench/SWE-bench_Lite", "test")


__all__ = ["environment", "is_instance", "image_name", "installed", "HarnessScorer", "session_environment"]
