"""A session as a Markdown write-up, to share or to teach from: the task, every step with the
model's words, its tool calls, the person's decisions and comments, the observations (long ones
folded), what the person did in the debugger, the final diff, tokens and cost.

All of it is text from the model or the sandbox: control characters are shown as visible
stand-ins (safe_text) and HTML is escaped, so the write-up is safe in a terminal and a browser.
"""

from __future__ import annotations

import json
import re
import time

from dgym_tui.core.safe_text import visible
from dgym_tui.sessions.story import PersonAction, Step, Story

FOLD_LINES = 12       # observations longer than this are folded (<details>)


def render(story: Story, diff: str | None, diff_note: str = "") -> str:
    out: list[str] = []
    add = out.append
    title = f"# Debugging session: {story.repo_name}"
    add(title)
    add("")
    add(_facts(story))
    add("")
    if story.warnings:
        for warning in story.warnings:
            add(f"> **Note:** {_inline(warning)}")
        add("")
    if story.task:
        add("## Task")
        add("")
        add(_fence(story.task))
        add("")
    if story.entries:
        add("## What happened")
        add("")
        for entry in story.entries:
            add(_step(entry) if isinstance(entry, Step) else _person(entry))
            add("")
    else:
        add("_Nothing was done in this session._")
        add("")
    add("## Outcome")
    add("")
    add(_outcome(story))
    add("")
    add("## Final change")
    add("")
    if diff_note:
        add(f"_{_inline(diff_note)}_")
        add("")
    if diff:
        add(_fence(diff, "diff"))
    elif diff is not None:
        add("_The session changed no file._")
    add("")
    return visible("\n".join(out).rstrip() + "\n")


def _facts(story: Story) -> str:
    started = time.strftime("%Y-%m-%d %H:%M", time.localtime(story.header.get("created") or story.started or 0))
    rows = [("repository", _code(story.repo)), ("started", started),
            ("sandbox", _inline(str(story.header.get("sandbox") or "?"))), ("mode", _inline(story.mode))]
    if story.model:
        scripted = " (scripted: a replayed script, not a real model)" if story.agent and story.agent.scripted else ""
        rows.append(("model", _code(story.model) + scripted))
    if story.header.get("entrypoint"):
        rows.append(("entrypoint", _code(str(story.header["entrypoint"]))))
    rows.append(("dgym-tui", _inline(str(story.header.get("version") or "?"))))
    return "\n".join(f"- **{name}**: {value}" for name, value in rows)


def _step(step: Step) -> str:
    lines = [f"### Step {step.number}", ""]
    if step.text.strip():
        lines += [_quote(step.text), ""]
    if not step.calls:
        lines.append("_No tool call in this reply (the agent was asked to call one)._")
    for call in step.calls:
        lines.append(f"**Tool call** {_code(call.name)}" + (f" — policy: {call.verdict} ({_inline(call.rule)})"
                                                                if call.verdict else ""))
        lines.append("")
        if call.error:
            lines.append(f"_The call was malformed: {_inline(call.error)}_")
        else:
            lines.append(_fence(_arguments(call.name, call.arguments), "python" if call.name == "edit" else ""))
        for decided in call.decisions:
            who = "The person" if decided.actor == "human" else "The headless run's rule"
            words = f"**{who}**: {decided.verdict}"
            if decided.comment:
                words += f" — “{_inline(decided.comment)}”"
            if decided.args is not None:
                words += f" (edited to {_code(json.dumps(decided.args, ensure_ascii=False))})"
            lines += ["", words]
        if call.result is not None:
            label = "Observation" if call.result.executed else "Not run"
            lines += ["", _folded(label, call.result.observation)]
        lines.append("")
    tokens = f"{step.prompt_tokens:,} prompt + {step.completion_tokens:,} completion tokens"
    lines.append(f"<sub>{tokens}, cost {_money(step.cost)}</sub>")
    return "\n".join(lines).rstrip()


def _person(action: PersonAction) -> str:
    if action.kind == "pdb":
        command = action.arguments.get("command", "")
        head = f"**The person, in pdb:** {_code('(Pdb) ' + command)}"
        where = f" → stopped at {_code(action.stop.where)} in {_code(str(action.stop.function))}" \
            if action.stop is not None and action.stop.file else ""
        body = action.output.strip()
        return head + where + ("\n\n" + _folded("Output", body) if body else "")
    if action.kind == "tool":
        args = _code(json.dumps(action.arguments, ensure_ascii=False))
        return f"**The person ran the tool** {_code(action.tool)} {args}\n\n" + _folded("Observation", action.output)
    if action.kind == "tests":
        return f"**The person ran the tests:** {action.tests.summary() if action.tests else '?'}"
    if action.kind == "hint":
        return f"**The person's hint to the agent:**\n\n{_quote(action.output)}"
    if action.kind == "change":
        return f"**The person changed the code** ({_inline(action.output)}):\n\n" + _fence(action.patch, "diff")
    if action.kind == "undo":
        return f"**The person undid a change** ({_inline(action.output)})"
    return f"**The person:** {_inline(action.kind)}"


def _outcome(story: Story) -> str:
    prompt, completion = story.tokens
    rows = [("outcome", story.outcome)]
    if story.status is not None and story.status.reason and story.status.reason != story.submission:
        rows.append(("why", story.status.reason))
    if story.submission:
        rows.append(("the agent's summary", story.submission))
    if story.tests is not None:
        rows.append(("last test run", story.tests.summary() + (" (before the last change)" if story.tests_stale else "")))
    if story.steps:
        rows.append(("model queries", str(len(story.steps))))
        rows.append(("tokens", f"{prompt:,} prompt + {completion:,} completion"))
        rows.append(("cost", _money(story.cost)))
    if story.person:
        rows.append(("the person's own actions", str(len(story.person))))
    return "\n".join(f"- **{name}**: {_inline(value)}" for name, value in rows)


def _money(cost: float | None) -> str:
    return "unknown (no price for this model)" if cost is None else f"${cost:.4f}"


def _arguments(name: str, arguments: dict | None) -> str:
    if not arguments:
        return f"{name}()"
    if name == "edit" and "new_code" in arguments:
        where = ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in arguments.items() if k != "new_code")
        return f"# edit({where})\n{arguments['new_code']}"
    call = f"{name}(" + ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in arguments.items()) + ")"
    if len(call) <= 100 and "\n" not in call:
        return call
    return json.dumps(arguments, indent=2, ensure_ascii=False)


def _folded(label: str, text: str) -> str:
    text = text.rstrip("\n")
    count = text.count("\n") + 1
    if count <= FOLD_LINES:
        return f"{label}:\n\n{_fence(text)}"
    return (f"<details><summary>{label} ({count} lines)</summary>\n\n{_fence(text)}\n\n</details>")


def _fence(text: str, lang: str = "") -> str:
    """A code block whose fence no backtick run inside the text can close."""
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{lang}\n{text.rstrip(chr(10))}\n{fence}"


def _quote(text: str) -> str:
    return "\n".join("> " + _no_tags(line) if line else ">" for line in text.strip().splitlines())


def _code(text: str) -> str:
    """An inline code span (literal: no HTML, no Markdown) that no backtick inside can close."""
    text = " ".join(text.split())
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    ticks = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


def _inline(text: str) -> str:
    return _no_tags(" ".join(text.split()))


def _no_tags(text: str) -> str:
    """Text from the model or the program, kept from becoming HTML in a Markdown viewer."""
    return text.replace("<", "&lt;")
