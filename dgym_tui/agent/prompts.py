"""The agent's system prompt (a template a user may replace) and its task.

The prompt is assembled from the agent's tools: each tool brings its own lines of the way to work
(`Tool.guidance`, or `brief` for the short prompt of small models), so an arm without pdb is told
nothing of pdb. What every trial of an arm shares comes first and what is the task's own last
(the repository's name, the sandbox, the entrypoint), so that a model server that keeps a prompt's
prefix (llama.cpp's slots, providers' prompt caching) reuses it from one trial to the next.

A template is formatted with str.format: {workflow} (the tools' lines), {tools} (one line per
tool, or the tools and the form of an action for text and JSON actions), {repo}, {entrypoint}
and {sandbox}. A user's own template (`[agent] system_prompt_file` in config.toml, or
--system-prompt FILE) may use any of them.
"""

from __future__ import annotations

import re

from pathlib import Path

SYSTEM_PROMPT = """\
You are a debugging agent working in a Python repository, side by side with a person who watches
everything you do and approves your changes. The repository's code runs in a sandbox.

Find the root cause of the failure, then fix it with the smallest correct change. Work like an
experienced developer:
{workflow}

Call exactly the tools you need, one step at a time. When the person rejects an action, read
their comment and follow it. Messages from the person (hints, what they did meanwhile) come as
user messages: take them into account.

Tools:
{tools}

This task's repository is "{repo}"; it runs in {sandbox}, as `{entrypoint}`.
"""

# Text and JSON actions (agent/text_actions.py): for small context windows and small models, the
# same work in fewer words; {tools} holds the tools and the form of an action.
TEXT_SYSTEM_PROMPT = """\
You are a debugging agent in a Python repository. Its code runs in a sandbox. A person watches and
approves.

Find the root cause of the failing tests and fix it with the smallest correct change:
{workflow}

{tools}

This task's repository is "{repo}"; it runs in {sandbox}, as `{entrypoint}`.
"""

TASK_FROM_TESTS = """\
The test suite of this repository fails. Here is pytest's report of the failures:

{report}

Find why, and fix the code (not the tests, unless a test is clearly wrong)."""

HANGS = """\
{hangs}
A test stopped at its time limit is still running when it is stopped: it loops or waits forever
(or is far too slow). The line above is where it was."""

NO_FAILURES = """\
The test suite of this repository passes; pytest reports:

{report}

Ask the person what to look at, or look for a bug they may have described in the repository's
README or issues."""


def workflow(tools, brief: bool = False) -> str:
    """The tools' own lines of the way to work, in the order the work goes (`tools`: name ->
    Tool). brief: one numbered line per step, in a few words, for small models."""
    ordered = sorted(tools.values(), key=lambda t: (t.order, t.name))
    if not brief:
        return "\n".join(f"- {line}" for t in ordered for line in t.guidance.splitlines() if line.strip())
    reading = [t.brief for t in ordered if t.brief and t.order < 40]
    steps = []
    if reading:
        steps.append(f"read the failing test and the code it calls ({', '.join(reading)});")
    steps += [f"{t.brief};" for t in ordered if t.brief and 40 <= t.order < 70]
    closing = [t.brief for t in ordered if t.brief and t.order >= 70]
    if closing:
        steps.append(", ".join(closing) + ".")
    return "\n".join(f"{n}. {step}" for n, step in enumerate(steps, 1))


def system_prompt(template: str | None, **values) -> str:
    text = template if template is not None else SYSTEM_PROMPT
    try:
        return text.format(**values)
    except (KeyError, IndexError, ValueError) as e:
        raise ValueError(f"the system prompt template cannot be filled: {e!r} "
                         f"(it may use {{{'}, {'.join(values)}}})") from None


def load_template(path: str | Path) -> str:
    try:
        return Path(path).expanduser().read_text()
    except OSError as e:
        raise ValueError(f"cannot read the system prompt template {path}: {e.strerror}") from None


PYTEST_DURATION = re.compile(r"^(=* ?\d+ (?:passed|failed|error|errors|skipped|xfailed|xpassed|deselected|warnings?)"
                             r"[^\n]*?) in [\d.]+s(?: \([\d:]+\))?( =*)?$", re.MULTILINE)


def task_from_tests(tests) -> str:
    """The default task: the failing tests' output (its tail, which holds the failures), and
    the tests stopped at their time limit with the place each was."""
    # pytest's closing "in 1.95s" left out: the same failure reads the same in every trial (one
    # task's prompts compare equal, and a server's prompt cache holds across attempts)
    report = PYTEST_DURATION.sub(r"\1\2", tests.output.strip())[-6000:] or tests.summary()
    text = (TASK_FROM_TESTS if not tests.ok else NO_FAILURES).format(report=report)
    hung = getattr(tests, "timed_out", None) or []
    if hung and "Stopped at the time limit:" not in report:
        lines = "\n".join(f"- {h['test']}: timed out after {h['seconds']:g} s at {h['where']}" for h in hung)
        text += "\n\n" + HANGS.format(hangs="Stopped at the time limit:\n" + lines)
    elif hung:
        text += "\n\n" + HANGS.format(hangs="").lstrip("\n")
    not_run = getattr(tests, "not_run", 0)
    if not_run:
        text += (f"\nThe run ended at this first hang: {not_run} more test{'s were' if not_run > 1 else ' was'} "
                 "not run (eval runs them all).")
    return text
