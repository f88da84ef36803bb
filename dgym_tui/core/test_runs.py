"""pytest in a sandbox, each test under a time limit: what every test run of ours goes through
(the eval tool, a task's first report, `run`'s summary, scoring before and after).

The limit is the in-box plugin sandbox/box/plugins/dgym_test_timeout.py: a test past it fails
with "timed out after S s at FILE:LINE in FUNC (values)", every process it started is killed, and
the run goes on with the next test. Each test's outcome comes back as a JSON line in a report
file, so that a run that had to be killed (a test stuck in C code) or that ran past the suite's
own limit still says what ran, what did not, and which test it was in. A killed run is run again
without the tests it already reported, a few times at most.
"""

from __future__ import annotations

import json
import posixpath
import re
import shlex
import uuid
from dataclasses import dataclass, field

from dgym_tui.sandbox.errors import SandboxError

PLUGIN = "dgym_test_timeout"
DEFAULT_TEST_TIMEOUT = 20.0   # seconds per test (--test-timeout, task.toml test_timeout)
KILLED_EXIT = 86              # the plugin's exit when it had to end the run itself
MAX_ROUNDS = 5                # runs of one suite, each after a test that had to be killed
PASSED, FAILED, ERROR, SKIPPED, MISSING = "passed", "failed", "error", "skipped", "missing"
_RANK = {PASSED: 0, SKIPPED: 1, FAILED: 2, ERROR: 3}


@dataclass
class TimedOut:
    """A test stopped at its limit, and where it was."""

    test: str
    seconds: float
    where: str                       # file:line in function (values), the innermost frame of its own code
    stack: str = ""
    killed: bool = False             # stopped by ending the run (it ignored the soft stop)

    def line(self) -> str:
        return f"{self.test}: timed out after {self.seconds:g} s at {self.where}"


@dataclass
class PytestRun:
    """One suite's run (maybe in several rounds): each test's outcome by id (repo-relative
    pytest node ids), the files that could not be collected, the tests that timed out."""

    outcomes: dict[str, str] = field(default_factory=dict)
    broken_files: list[str] = field(default_factory=list)
    timed_out: list[TimedOut] = field(default_factory=list)
    output: str = ""
    exit_code: int | None = None
    suite_timed_out: bool = False    # the whole run ran past its own limit
    reported: bool = False           # the plugin reported at least one test or file
    rounds: int = 1
    not_run: int = 0                 # tests left out by stop_after_hang
    problem: str | None = None       # pytest did not run at all (a usage error, a hang before any test): why

    def status_of(self, test_id: str) -> str:
        """passed | failed | error | skipped | missing (did not run)."""
        if test_id in self.outcomes:
            return self.outcomes[test_id]
        if test_id.split("::", 1)[0] in self.broken_files:
            return ERROR
        return MISSING

    def counts(self) -> dict[str, int]:
        values = list(self.outcomes.values())
        return {"passed": values.count(PASSED), "failed": values.count(FAILED),
                "errors": values.count(ERROR) + len(self.broken_files)}

    def failing(self) -> list[str]:
        return [t for t, s in self.outcomes.items() if s in (FAILED, ERROR)] + list(self.broken_files)


def plugin_env(box, test_timeout: float | None, report: str | None = None, skip: str | None = None,
               pythonpath: str | None = None, stop_after_hang: bool = False) -> dict[str, str]:
    """The environment that loads the plugin (its folder last on PYTHONPATH, after `pythonpath`)."""
    folder = posixpath.join(box.box_dir, "plugins")
    env = {"PYTHONPATH": f"{pythonpath}:{folder}" if pythonpath else folder,
           "DGYM_TEST_TIMEOUT": f"{float(test_timeout or 0):g}"}
    if report:
        env["DGYM_TEST_REPORT"] = report
    if skip:
        env["DGYM_TEST_SKIP"] = skip
    if stop_after_hang:
        env["DGYM_TEST_STOP_AFTER_HANG"] = "1"
    return env


def run_pytest(box, args: list[str] | str, env: dict[str, str] | None = None, timeout: float = 600,
               test_timeout: float | None = DEFAULT_TEST_TIMEOUT, options: str = "-q -rfE",
               output_cap: int | None = None, command: str | None = None, user: str | None = None,
               stop_after_hang: bool = False) -> PytestRun:
    """`python -m pytest OPTIONS ARGS` in the sandbox's repo, each test limited to test_timeout
    seconds (None or 0: no limit) and the whole to `timeout`. env: assignments for the command
    (the entrypoint's); the sandbox's program_env applies beneath them. Never raises for what
    the tests do; SandboxError only when the sandbox itself fails.
    command: a shell command of the task's own instead (a harness's test command, an eval
    script): the plugin reaches any pytest it runs through PYTEST_ADDOPTS, and a run that had to
    be killed is not run again (the command is the task's, whole). user: Docker's exec user.
    stop_after_hang: the run ends after the first test past its limit (run.not_run says how many
    were left out): for a run that only needs to say what fails, never for scoring."""
    env = dict(env or {})
    words = args if isinstance(args, str) else shlex.join(args)
    token = uuid.uuid4().hex[:10]
    # beside the repository's own git files (every backend's commands see them), but where root
    # may write when the command runs as root without capabilities (not in the user's folder)
    folder = "/tmp" if user is not None else posixpath.join(box.root, ".git")
    report = posixpath.join(folder, f"dgym-tests-{token}.jsonl")
    skip = posixpath.join(box.root, f".git/dgym-tests-{token}.skip")
    pythonpath = (env.pop("PYTHONPATH", None) or box.program_env.get("PYTHONPATH")
                  or getattr(box, "base_env", {}).get("PYTHONPATH"))
    run = PytestRun()
    records: list[dict] = []
    outputs: list[str] = []
    seen_lines = 0
    try:
        for round_ in range(1, MAX_ROUNDS + 1):
            assign = {**env, **plugin_env(box, test_timeout, report, skip if round_ > 1 else None, pythonpath,
                                          stop_after_hang)}
            if command is not None:
                assign["PYTEST_ADDOPTS"] = f"-p {PLUGIN}"
            line = "".join(f"{k}={shlex.quote(v)} " for k, v in assign.items())
            if command is not None:  # exported, so that every process of the command has them
                shell = f"export {line.strip()}\n{command}"
            else:
                shell = f"{line}{box.python} -m pytest {options} -p no:cacheprovider -p {PLUGIN} {words}"
            kwargs = {"output_cap": output_cap} if output_cap else {}
            if user is not None:
                kwargs["user"] = user
            result = box.exec(shell, timeout=timeout, **kwargs)
            outputs.append(result.output)
            run.rounds, run.exit_code = round_, result.exit_code
            records = _read_report(box, report)
            killed = _apply(run, records[seen_lines:], result.timed_out, timeout)
            seen_lines = len(records)
            run.suite_timed_out = result.timed_out
            if result.timed_out or not killed or command is not None or (stop_after_hang and run.timed_out):
                break
            # a test had to be killed with its run: the rest again, without what already ran
            done = [r["id"] for r in records if "id" in r and not r.get("collect")]
            box.write_text(posixpath.relpath(skip, box.root), "\n".join(done) + "\n")
            outputs.append(f"\n[dgym-tui: {killed} was stopped by ending the test run; "
                           "running the tests that had not run yet]\n")
    finally:
        box.exec(["rm", "-f", report, skip], timeout=30, **({"user": user} if user is not None else {}))
    run.output = "".join(outputs)
    if stop_after_hang and run.timed_out:
        totals = [r["total"] for r in records if isinstance(r.get("total"), int)]
        if totals:
            run.not_run = max(0, totals[0] - len(run.outcomes))
    if command is None and not run.reported and (run.suite_timed_out or run.exit_code not in (0, 5)):
        last = [ln for ln in run.output.strip().splitlines() if ln.strip()][-1:] or ["no output"]
        run.problem = (f"the tests ran past {timeout:g} s before any test ended" if run.suite_timed_out
                       else f"pytest did not run (exit {run.exit_code}): {last[0][:300]}")
    return run


def _read_report(box, path: str) -> list[dict]:
    try:
        text = box.exec(["cat", path], timeout=60, output_cap=64 * 1024 * 1024).output
    except SandboxError:
        return []
    records = []
    for line in text.splitlines():
        try:
            value = json.loads(line)
        except ValueError:
            continue  # a line torn by a kill
        if isinstance(value, dict):
            records.append(value)
    return records


def _apply(run: PytestRun, records: list[dict], suite_timed_out: bool, timeout: float) -> str | None:
    """Fold one round's report into the run; the id of a test whose run had to be killed (the
    plugin said so, or the run stopped inside it), else None."""
    running, killed = None, None
    for r in records:
        if "start" in r:
            running = r["start"]
            continue
        test = r.get("id")
        if not isinstance(test, str):
            continue
        run.reported = True
        running = None
        outcome = r.get("outcome") if r.get("outcome") in _RANK else ERROR
        if r.get("collect"):
            if test not in run.broken_files:
                run.broken_files.append(test)
        else:
            run.outcomes[test] = outcome
        if r.get("timeout"):
            run.timed_out.append(TimedOut(test, float(r["timeout"]), str(r.get("where") or "an unknown place"),
                                          str(r.get("stack") or ""), bool(r.get("killed"))))
        if r.get("killed"):
            killed = test
    if running is not None:  # the run ended inside this test: the suite's limit, or a kill from outside
        run.reported = True
        run.outcomes[running] = FAILED
        why = f"the whole run's limit ({timeout:g} s)" if suite_timed_out else "the run ended inside it"
        run.timed_out.append(TimedOut(running, timeout if suite_timed_out else 0.0, why, killed=True))
        killed = killed or running
    return killed


def tests_event(run: PytestRun, statuses: dict[str, str] | None = None):
    """The Tests event of a run: its counts and failing tests from a harness's statuses (test id
    -> PASSED/FAILED/ERROR/XFAIL...) when given, else from pytest's own summary (the report's,
    when the run went over several rounds or was cut short), and the tests stopped at the limit
    said at the end of the output."""
    from dataclasses import replace

    from dgym_tui.core.events import Tests

    output = run.output
    if run.timed_out:
        output = output.rstrip("\n") + "\n\n" + timeouts_text(run) + "\n"
    if statuses:
        values = list(statuses.values())
        tests = Tests(passed=sum(v in ("PASSED", "XFAIL") for v in values), failed=values.count("FAILED"),
                      errors=values.count("ERROR"), failing=[t for t, v in statuses.items() if v in ("FAILED", "ERROR")],
                      output=output[-20000:], exit_code=run.exit_code)
    elif run.rounds > 1 or run.suite_timed_out:  # pytest's own summary covers one round only
        tests = Tests(**run.counts(), failing=run.failing(), output=output[-20000:], exit_code=run.exit_code)
    else:
        tests = parse_pytest_summary(output, run.exit_code)
    return replace(tests, timed_out=[{"test": t.test, "seconds": t.seconds, "where": t.where} for t in run.timed_out],
                   not_run=run.not_run)


_COUNT = re.compile(r"(\d+) (passed|failed|errors?)")


def parse_pytest_summary(output: str, exit_code: int | None = None):
    """pytest's counts and failing node ids, from its `-q -rfE` output (the tail kept)."""
    from dgym_tui.core.events import Tests

    lines = output.strip().splitlines()
    summary = next((ln for ln in reversed(lines) if " in " in ln and _COUNT.search(ln)), "")
    counts = {"passed": 0, "failed": 0, "errors": 0}
    for number, word in _COUNT.findall(summary):
        counts["errors" if word.startswith("error") else word] = int(number)
    failing = [ln.split(" ", 1)[1].split(" - ")[0] for ln in lines if ln.startswith(("FAILED ", "ERROR "))]
    return Tests(**counts, failing=failing, output=output[-20000:], exit_code=exit_code)


def timeouts_text(run: PytestRun) -> str:
    """One line per test stopped at its limit (for reports and the agent's task), or ""."""
    if not run.timed_out:
        return ""
    lines = [t.line() for t in run.timed_out]
    return "Stopped at the time limit:\n" + "\n".join(f"- {line}" for line in lines)
