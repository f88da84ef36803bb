"""A session as one conversation in the OpenAI chat format with tool calls, for fine-tuning:
`{"messages": [...], "tools": [...]}`, one JSON line per session.

The person's own debugging is part of it, so human demonstrations are training data: each pdb
command they typed becomes an assistant call to the `pdb` tool with pdb's output as its result,
a tool they ran from the palette a call to that tool, a test run a call to `eval`; their hints
are user messages, and their code changes and undos are told in user messages. These sit in
order among the agent's messages. The agent's own "what the person did" notes are left out (the
calls above say it better). The format's rules hold: every tool call has exactly one result,
right after the assistant message that made it (what the person did while a call was pending
comes after its result); a call the session ended before answering gets a result saying so.
"""

from __future__ import annotations

import json

from dgym_tui.sessions.story import PersonAction, Story
from dgym_tui.sessions.trajectory import tool_schemas

UNANSWERED = "(no result: the session ended before this call returned)"


def conversation(story: Story) -> dict:
    messages: list[dict] = []
    pending: list[str] = []       # tool calls of the last assistant message still without a result
    waiting: list[PersonAction] = []

    def person(action: PersonAction) -> None:
        if pending:
            waiting.append(action)
        else:
            messages.extend(_person_messages(action))

    items = [(seq, i, "agent", (m, o)) for i, (seq, m, o) in enumerate(zip(story.message_seqs, story.messages,
                                                                          story.origins))]
    lead = [item for item in items if item[3][1] in ("system", "task")]
    if lead:  # the system prompt and the task open the conversation, whatever came before them
        rest = [item for item in items if item not in lead]
    else:
        rest = items
        messages += [{"role": "system", "content": _system_prompt(story)},
                     {"role": "user", "content": story.instructions}]
    for _, _, _, (message, _) in lead:
        messages.append(_clean(message))
    timeline = sorted(rest + [(a.seq, 0, "person", a) for a in story.person], key=lambda t: (t[0], t[1]))
    for _, _, who, item in timeline:
        if who == "person":
            person(item)
            continue
        message, origin = item
        role = message.get("role")
        if role == "user" and origin == "person":
            continue  # the person's actions are in the conversation as their own calls
        if role == "tool":
            call_id = message.get("tool_call_id")
            if call_id not in pending:
                continue  # an orphan (its call was cut by a take-over): the format forbids it
            pending.remove(call_id)
            messages.append(_clean(message))
            if not pending:
                for action in waiting:
                    messages.extend(_person_messages(action))
                waiting.clear()
            continue
        _close(messages, pending)
        cleaned = _clean(message)
        messages.append(cleaned)
        pending = [c["id"] for c in cleaned.get("tool_calls") or []]
    _close(messages, pending)
    for action in waiting:
        messages.extend(_person_messages(action))
    return {"messages": messages, "tools": tool_schemas(story)}


def _close(messages: list[dict], pending: list[str]) -> None:
    """Answer the calls that never got a result, so each call has exactly one."""
    for call_id in pending:
        messages.append({"role": "tool", "tool_call_id": call_id, "content": UNANSWERED})
    pending.clear()


def _clean(message: dict) -> dict:
    """Only the fields the chat format defines (a provider's extras dropped)."""
    role = message.get("role")
    out: dict = {"role": role, "content": message.get("content")}
    if role == "assistant":
        calls = []
        for call in message.get("tool_calls") or []:
            function = call.get("function") or {}
            arguments = function.get("arguments")
            if not isinstance(arguments, str):
                arguments = json.dumps(arguments if arguments is not None else {})
            calls.append({"id": call.get("id"), "type": "function",
                          "function": {"name": function.get("name"), "arguments": arguments}})
        if calls:
            out["tool_calls"] = calls
        elif out["content"] is None:
            out["content"] = ""
    elif role == "tool":
        out["tool_call_id"] = message.get("tool_call_id")
        out["content"] = str(out["content"] if out["content"] is not None else "")
    return out


def _person_messages(action: PersonAction) -> list[dict]:
    if action.kind in ("pdb", "tool", "tests"):
        call_id = f"person_{action.seq}"
        call = {"id": call_id, "type": "function",
                "function": {"name": action.tool, "arguments": json.dumps(action.arguments)}}
        return [{"role": "assistant", "content": None, "tool_calls": [call]},
                {"role": "tool", "tool_call_id": call_id, "content": action.observation()}]
    if action.kind == "hint":
        return [{"role": "user", "content": f"A hint from the person: {action.output}"}]
    if action.kind == "change":
        return [{"role": "user", "content": f"The person changed the code ({action.output}):\n{action.patch}"}]
    if action.kind == "undo":
        return [{"role": "user", "content": f"The person undid a change ({action.output})."}]
    return []


def _system_prompt(story: Story) -> str:
    """For a session without an agent: the agent's own system prompt, filled for this repo."""
    from dgym_tui.agent.prompts import system_prompt, workflow
    from dgym_tui.tools import registry

    tools = registry()
    listing = "\n".join(f"- {name}: {tools[name].summary}" for name in sorted(tools))
    return system_prompt(None, repo=story.repo_name, tools=listing, workflow=workflow(tools),
                         entrypoint=story.header.get("entrypoint") or "the tests",
                         sandbox=story.header.get("sandbox") or "a sandbox")


def check_pairs(messages: list[dict]) -> list[str]:
    """Problems with the tool-call pairing (empty when every call has exactly one result, right
    after its assistant message); the tests use it, and so can a training pipeline."""
    problems, open_ids = [], []
    for i, message in enumerate(messages):
        if message.get("role") == "tool":
            if message.get("tool_call_id") not in open_ids:
                problems.append(f"message {i}: a result for no open call ({message.get('tool_call_id')})")
            else:
                open_ids.remove(message["tool_call_id"])
            continue
        if open_ids:
            problems.append(f"message {i}: calls without a result before it: {', '.join(open_ids)}")
            open_ids = []
        open_ids = [c["id"] for c in message.get("tool_calls") or []]
    if open_ids:
        problems.append(f"the end: calls without a result: {', '.join(open_ids)}")
    return problems
