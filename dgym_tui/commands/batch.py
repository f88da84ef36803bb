"""`dgym-tui batch TASKS --model M --out RUN_DIR`: run the agent over a task set, arm by arm,
score every trial, and write RUN_DIR (docs/run-dir.md) with its report.

Exit 0 when every trial finished (whatever its status), 1 when some are left (the total cost
reached, or errors to retry), 2 for a usage error (one line), 130 after Ctrl-C (what finished is
kept: the same command goes on).
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import sys
from urllib.parse import urlparse

PROG = "dgym-tui batch"


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog=PROG, description="Run the agent over a task set and score it: each trial in its own sandbox, "
        "the results in RUN_DIR (resumable: the same command goes on where it stopped), with summary.md and "
        "report.html.")
    p.add_argument("tasks", metavar="TASKS", help="a folder of repos, a debug-gym task folder, or SWE-bench-style "
                   "JSON lines; with --repo, open issues: the JSON of `gh issue list --json number,title,body,url`, "
                   "or a folder of Markdown files (one issue each, the first line its title)")
    p.add_argument("--repo", metavar="REPO", help="TASKS are open issues of this git repo: each a task issue-<N> at "
                   "its HEAD (or --base); the agent writes a failing reproduction test first, and a fix counts "
                   "only when that test fails at the base and passes with it (no test that fails at the base: "
                   "status no-reproduction)")
    p.add_argument("--base", metavar="REF", help="with --repo: the commit the issues are fixed on (default: HEAD)")
    p.add_argument("--only", action="append", metavar="ID", default=[],
                   help="run only the tasks whose id matches (shell-style pattern: sympy__*, gcd); repeatable")
    p.add_argument("--model", metavar="M", required=True, help="a litellm model string, or scripted:FILE")
    p.add_argument("--out", metavar="RUN_DIR", required=True, help="the run directory (made, or gone on with)")
    p.add_argument("--api-base", metavar="URL", help="an OpenAI-compatible server, e.g. http://localhost:11434/v1")
    p.add_argument("--workers", type=int, default=4, metavar="N", help="trials at once (default 4)")
    p.add_argument("--arm", action="append", metavar="NAME=TOOL,TOOL,…", default=[],
                   help="a configuration to compare: its name and the agent's tools (repeatable; default: "
                        "one arm 'all' with every tool). submit is always given. TOOL@N gives a tool only after "
                        "N successful edits, as debug-gym's debug(5) agent: pdb-after-5=view,grep,edit,eval,pdb@5. "
                        "Two roles: +seeker gives the arm's agent (the fixer) a debug(question) tool that a seeker "
                        "answers with pdb on the same session (pair=view,edit,eval+seeker); +report runs the seeker "
                        "first and puts its findings in the fixer's task; either =MODEL for this arm's own seeker, "
                        "=MODEL@URL for one behind its own server")
    p.add_argument("--seeker", metavar="M", help="the seeker's model for arms with +seeker or +report (a litellm "
                   "model string, or scripted:FILE); it gets pdb, view, listdir, grep and eval, never edit")
    p.add_argument("--seeker-api-base", metavar="URL", help="the seeker's OpenAI-compatible server")
    p.add_argument("--seeker-steps", type=int, default=10, metavar="N", help="the seeker's step budget per "
                   "question (default 10)")
    p.add_argument("--attempts", type=int, default=1, metavar="K", help="trials per task and arm (default 1)")
    p.add_argument("--max-steps", type=int, default=30, metavar="N", help="model calls per trial (default 30)")
    p.add_argument("--max-cost", type=float, metavar="USD", help="cost per trial")
    p.add_argument("--trial-timeout", type=float, metavar="S", help="wall clock per trial, enforced by killing "
                   "its sandbox (a task.toml's time_limit wins)")
    p.add_argument("--test-timeout", type=float, metavar="S", help="seconds each test may run (in the agent's test "
                   "runs, under pdb, and when scoring) before it is stopped and counted as failed, with the place "
                   "it was; default 20 (a task.toml's test_timeout wins)")
    p.add_argument("--total-cost", type=float, metavar="USD", help="no new trial starts once the batch has cost this")
    p.add_argument("--sandbox", choices=["auto", "docker", "bwrap", "local"], default="auto",
                   help="where each trial's code runs (default: auto)")
    p.add_argument("--image", help="sandbox image for docker (default: dgym-tui-sandbox:latest)")
    p.add_argument("--repos", metavar="DIR", help="a folder of local clones (DIR/owner+name, DIR/owner/name or "
                   "DIR/name) used for instances' repos before cloning any: offline, with no network")
    p.add_argument("--image-template", metavar="NAME", help="SWE-bench instances: the environment image of each, "
                   "{instance_id} (or {id_1776}: its id with __ as _1776_) filled in (default: the dataset's "
                   "image, else swebench's name, swebench/sweb.eval.x86_64.{id_1776}:latest)")
    p.add_argument("--executor", default="local", metavar="local|ray",
                   help="where trials run: local (default: --workers processes here) or ray (a Ray cluster, "
                        "each node's dgym_sandbox slots; pip install 'dgym-tui[ray]')")
    p.add_argument("--ray-address", metavar="ADDR", help="the Ray cluster (default: $RAY_ADDRESS, else auto)")
    p.add_argument("--yes", action="store_true", help="approve every call the policy marks `ask` (never `deny`)")
    p.add_argument("--retry", choices=["errors"], help="errors: run again the trials that ended in error "
                   "(their earlier results kept in trials/<trial>/history/)")
    p.add_argument("--tests", default="hidden", metavar="hidden|eval|visible",
                   help="what the agent sees of each task's hidden tests (its test patch or hidden files): hidden "
                        "(default; SWE-bench's rule: never, they are added only when scoring), eval (its eval tool "
                        "runs with them added for that run only, then taken away: debug-gym's swebench), visible "
                        "(in the repository from the start, and pdb's first run stops at the failing test: "
                        "debug-gym's swebench-debug). Scoring is the same in all three; the mode is in every "
                        "result and the report")
    p.add_argument("--tool-format", choices=["native", "json", "text", "auto"],
                   help="how tool calls travel: the provider's native tool calling, or an action in the reply "
                        "(json: held to its form by the server; text: fenced), as for dgym-tui run")
    return p


class UsageError(Exception):
    """A bad option or an unusable setting: one line, exit 2."""


def parse_arms(values: list[str]) -> list:
    """--arm NAME=TOOL,TOOL… -> Arms (TOOL@N: given after N successful edits); none given: one arm
    'all' with every tool."""
    from dgym_tui.batch.spec import Arm
    from dgym_tui.tools import registry as tool_registry

    known = tool_registry()
    if not values:
        return [Arm("all", list(known))]
    arms, names = [], set()
    for value in values:
        name, sep, tools = value.partition("=")
        name = name.strip()
        tools, *roles = tools.split("+")
        seeker = None
        for role in roles:
            kind, _, model = role.partition("=")
            if kind.strip() not in ("seeker", "report") or seeker is not None:
                raise UsageError(f"--arm {value!r}: after the tools, +seeker or +report (once), "
                                 "optionally =MODEL, e.g. pair=view,edit,eval+seeker")
            # MODEL@URL: this arm's seeker behind its own server (a second llama-server, say)
            model, at, url = model.strip().partition("@http")
            seeker = {"form": "ask" if kind.strip() == "seeker" else "report", "model": model or None}
            if at:
                if not model:
                    raise UsageError(f"--arm {value!r}: +seeker=MODEL@URL needs the MODEL before the URL")
                seeker["api_base"] = "http" + url
        if not sep or not name:
            raise UsageError(f"--arm {value!r}: write NAME=TOOL,TOOL,… (e.g. with-pdb=pdb,view,edit,eval)")
        if not all(c.isalnum() or c in "-_." for c in name):
            raise UsageError(f"--arm {value!r}: an arm's name is letters, digits, - _ and . only (it names folders)")
        if name in names:
            raise UsageError(f"--arm {name!r} is given twice")
        chosen, unlock = [], {}
        for word in (t.strip() for t in tools.split(",") if t.strip()):
            tool, at, after = word.partition("@")
            tool = tool.strip()
            if at:
                if not after.strip().isdigit() or int(after) < 1:
                    raise UsageError(f"--arm {name}: {word!r}: write TOOL@N, N the successful edits before the "
                                     "tool is given (1 or more)")
                unlock[tool] = int(after)
            chosen.append(tool)
        if not chosen:
            raise UsageError(f"--arm {name!r} names no tool")
        if "edit" in unlock or (unlock and "edit" not in chosen):
            raise UsageError(f"--arm {name}: a tool given after N edits needs edit in the arm from the start")
        unknown = [t for t in chosen if t not in known]
        if unknown:
            raise UsageError(f"--arm {name}: unknown tool{'s' if len(unknown) > 1 else ''} {', '.join(unknown)} "
                             f"(tools: {', '.join(sorted(known))})")
        names.add(name)
        arms.append(Arm(name, list(dict.fromkeys(chosen)), unlock, seeker))
    return arms


def only_tasks(tasks: list, patterns: list[str]) -> list:
    """The tasks whose id matches one of the patterns (shell-style: * ? [..]), in the set's order;
    a pattern that matches none is refused, naming a few ids there are."""
    from fnmatch import fnmatchcase

    for pattern in patterns:
        if not any(fnmatchcase(t.id, pattern) for t in tasks):
            ids = ", ".join(t.id for t in tasks[:5]) + (", …" if len(tasks) > 5 else "")
            raise UsageError(f"--only {pattern!r} matches no task of the set (its tasks: {ids})")
    return [t for t in tasks if any(fnmatchcase(t.id, pattern) for pattern in patterns)]


def check_model(model: str, api_base: str | None) -> None:
    """Refuse a model that cannot answer before any trial starts: a scripted file that is not
    there, a server nobody listens on, a provider with no key."""
    if model.startswith("scripted:"):
        path = model.split(":", 1)[1]
        if not os.path.isfile(path):
            raise UsageError(f"--model {model}: no such script file")
        return
    if api_base:
        url = urlparse(api_base)
        if url.scheme not in ("http", "https") or not url.hostname:
            raise UsageError(f"--api-base {api_base}: not an http(s) URL")
        port = url.port or (443 if url.scheme == "https" else 80)
        try:
            socket.create_connection((url.hostname, port), timeout=5).close()
        except OSError as e:
            raise UsageError(f"the model's server does not answer at {api_base} ({e.strerror or e}): start it, "
                             "or give the right --api-base") from None
        return
    from dgym_tui.agent.litellm_model import _missing_keys

    missing = _missing_keys(model)
    if missing:
        raise UsageError(f"--model {model}: set {', '.join(missing)} in the environment (or give --api-base)")


def image_checker():
    """check_image for load_tasks: whether an instance's image is on this machine's engine or can
    be pulled (None where no engine answers: the trials will say)."""
    try:
        from dgym_tui.sandbox.docker_sandbox import connect
        from dgym_tui.sandbox.instance_image import available

        client = connect(timeout=3)
    except Exception:
        return None
    return lambda image: available(client, image)


def _interrupt(signum, frame):
    raise KeyboardInterrupt


def main(argv: list[str]) -> int:
    args = parser().parse_args(argv)
    try:
        return _main(args)
    except UsageError as e:
        print(f"{PROG}: {e}", file=sys.stderr)
        return 2


def _main(args) -> int:
    from dgym_tui.batch import run_dir as rd
    from dgym_tui.batch.driver import BatchConfig, run_batch
    from dgym_tui.batch.executors import make_executor
    from dgym_tui.batch.progress import make_progress
    from dgym_tui.core.safe_text import one_line

    for flag, value in (("--workers", args.workers), ("--attempts", args.attempts), ("--max-steps", args.max_steps)):
        if value is not None and value < 1:
            raise UsageError(f"{flag} must be 1 or more")
    if args.test_timeout is not None and args.test_timeout <= 0:
        raise UsageError("--test-timeout must be a positive number of seconds")
    from dgym_tui.batch.test_modes import MODES, check_tasks

    if args.tests not in MODES:
        raise UsageError(f"--tests {args.tests!r}: choose one of {', '.join(MODES)}")
    if not os.path.exists(args.tasks):
        raise UsageError(f"{args.tasks}: no such file or folder")
    arms = parse_arms(args.arm)
    for arm in arms:
        if arm.seeker and not (arm.seeker.get("model") or args.seeker):
            raise UsageError(f"--arm {arm.name}: its seeker needs a model: --seeker M, or +seeker=M in the arm")
        if arm.seeker and (arm.seeker.get("model") or args.seeker) == "person":
            raise UsageError(f"--arm {arm.name}: a batch has no person to answer as the seeker: give a model")
    if args.seeker_steps is not None and args.seeker_steps < 1:
        raise UsageError("--seeker-steps must be 1 or more")
    scripted = args.model.startswith("scripted:")
    try:
        if args.executor == "ray":
            options = {"address": args.ray_address} if args.ray_address else {}
        else:
            options = {} if scripted else {"preload": ["litellm"]}
        executor = make_executor(args.executor, workers=args.workers, **options)
    except ValueError as e:
        raise UsageError(one_line(str(e))) from None
    if args.base and not args.repo:
        raise UsageError("--base goes with --repo (the issues' repo)")
    try:
        if args.repo:
            from dgym_tui.batch.issues import read_issues

            tasks = read_issues(args.tasks, args.repo, args.base)
        else:
            from dgym_tui.batch.tasks import load_tasks

            tasks = load_tasks(args.tasks, image_template=args.image_template,
                               check_image=image_checker() if args.executor == "local" else None, repos=args.repos)
    except ValueError as e:  # tasks.TaskSetError, issues.IssueSetError
        raise UsageError(one_line(str(e))) from None
    if args.only:
        tasks = only_tasks(tasks, args.only)
    try:
        check_tasks(tasks, args.tests)
    except ValueError as e:
        raise UsageError(one_line(str(e))) from None
    for task in tasks:
        if task.note:
            print(f"{PROG}: {one_line(task.note)}", file=sys.stderr)
    check_model(args.model, args.api_base)
    for seeker, api_base in {(arm.seeker.get("model") or args.seeker, arm.seeker.get("api_base") or args.seeker_api_base)
                             for arm in arms if arm.seeker}:
        if not seeker.startswith("scripted:"):
            check_model(seeker, api_base)
    config = BatchConfig(tasks=os.path.abspath(args.tasks), model=args.model, arms=arms, api_base=args.api_base,
                         tool_format=args.tool_format, attempts=args.attempts, max_steps=args.max_steps,
                         max_cost=args.max_cost, trial_timeout=args.trial_timeout,
                         test_timeout=args.test_timeout, sandbox=args.sandbox, image_template=args.image_template,
                         image=args.image, yes=args.yes, workers=args.workers, executor=args.executor,
                         total_cost=args.total_cost, tests=args.tests, seeker=args.seeker,
                         seeker_api_base=args.seeker_api_base, seeker_steps=args.seeker_steps)
    if not scripted:
        os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # workers inherit it (no fetch at import)
    # SIGTERM (a CI's cancel, systemd) ends the batch as Ctrl-C does: sandboxes removed, results kept.
    signal.signal(signal.SIGTERM, _interrupt)
    progress = make_progress(sys.stdout)
    try:
        run = run_batch(args.out, config, tasks, executor, progress=progress, retry_errors=args.retry == "errors")
    except rd.RunDirError as e:
        raise UsageError(one_line(str(e))) from None
    out = one_line(str(args.out))
    if run.interrupted:
        print(f"{PROG}: interrupted; {len(run.results)} trial(s) done are kept in {out}: the same command goes on",
              file=sys.stderr)
        return 130
    errors = sum(1 for r in run.results if r.status == "error")
    print(f"{PROG}: {out}/summary.md, {out}/report.html"
          + (f"; {errors} error(s): --retry errors runs them again" if errors else ""))
    return 1 if run.not_started or errors else 0
