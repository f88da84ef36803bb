"""Text actions: tool calls for models that cannot make native ones.

Small and local models rarely honour native tool calling (a server parses calls only when the
chat template marks them the way the model writes them), yet asked in plain words they answer
reliably with one fenced JSON action. In text mode the tools are described in the prompt, the
model replies with its reasoning and exactly one action:

    ```json
    {"name": "pdb", "arguments": {"command": "b shopcart/cart.py:12"}}
    ```

`parse_action` turns the reply into the same `ToolCall` a native call would be (or an error in
one line that shows the expected form); the call then goes through the same CallHandler
(schema check, policy, approvals, events) and its observation comes back as a user message.

Repairs are few and said to the model: `{"tool": …, "args": …}`-style keys, a `<tool_call>`
wrapper (Qwen's native format written as text), and a pdb command used as a tool name
(`{"name": "p", "arguments": {"expr": "x"}}` is `pdb` with `p x`).
"""

from __future__ import annotations

import json
import re
import uuid
from dataclasses import dataclass

from dgym_tui.agent.model import ToolCall

EXAMPLE = '```json\n{"name": "pdb", "arguments": {"command": "c"}}\n```'
ID_PREFIX = "text_"  # the ids of calls read from text (no native call to answer)
FORM = 'one action as fenced JSON: ```json {"name": TOOL, "arguments": {...}}```'

# pdb's own commands (and ours), which small models often name as if they were tools
PDB_COMMANDS = {
    "b", "break", "tbreak", "c", "cont", "continue", "n", "next", "s", "step", "r", "return", "p", "pp",
    "w", "where", "bt", "u", "up", "d", "down", "l", "list", "ll", "longlist", "a", "args", "cl", "clear",
    "until", "unt", "j", "jump", "display", "undisplay", "whatis", "condition", "ignore", "disable",
    "enable", "restart", "run", "watch", "unwatch", "log", "hit", "dbreak", "dclear", "history", "back",
}

_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_-]*)[ \t]*\n?(.*?)```", re.S)
_TAGGED = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|$)", re.S)
_NAME_KEYS = ("name", "tool", "tool_name", "action", "function")
_ARG_KEYS = ("arguments", "args", "parameters", "params", "input")


@dataclass
class Parsed:
    """What a reply held: one call (maybe repaired: `note` says how), or an error in one line."""

    call: ToolCall | None
    error: str | None = None
    note: str = ""


def instructions(tool_listing: str) -> str:
    """The part of the prompt that replaces native tools: the tools and the answer's form."""
    return (f"Tools (call them by writing an action, not code):\n{tool_listing}\n\n"
            "Answer every time with a short thought, then exactly one action as a fenced JSON block, "
            "like this:\n" + EXAMPLE + "\nThe action's \"name\" is one of the tools above and \"arguments\" "
            "its arguments. One action per reply; wait for its result before the next.")


def compact_listing(schemas: list[dict]) -> str:
    """One line per tool: its name, its arguments (? = optional) and the first sentence of what
    it does. A small context window cannot afford the full descriptions."""
    lines = []
    for schema in schemas:
        fn = schema.get("function", schema)
        params = (fn.get("parameters") or {}).get("properties") or {}
        required = set((fn.get("parameters") or {}).get("required") or ())
        args = ", ".join(f"{name}{'' if name in required else '?'}: {_type(spec)}" for name, spec in params.items())
        lines.append(f"- {fn['name']}({args}): {_first_sentence(fn.get('description', ''))}")
    return "\n".join(lines)


def reminder() -> str:
    return f"(Reply with a thought and {FORM}.)"


def parse_action(text: str, tools: dict) -> Parsed:
    """The one action a text reply holds. `tools` maps names to Tool objects (for repairs)."""
    candidates = _candidates(text or "")
    actions = []
    for raw in candidates:
        value, problem = _load(raw, tools)
        if problem is not None:
            if _looks_like_action(raw):
                return Parsed(None, f"the action is not valid JSON ({problem}); write {FORM}")
            continue
        if isinstance(value, dict) and _name_of(value) is not None:
            actions.append(value)
    if not actions:
        if not candidates and "{" not in (text or ""):
            return Parsed(None, f"no action in your reply; write {FORM}")
        return Parsed(None, f"no action found (a JSON object with \"name\" and \"arguments\"); write {FORM}")
    distinct = {json.dumps(a, sort_keys=True) for a in actions}
    if len(distinct) > 1:
        names = ", ".join(str(_name_of(a)) for a in actions)
        return Parsed(None, f"{len(actions)} actions ({names}): write exactly one, then wait for its result")
    return _to_call(actions[0], tools)


def _candidates(text: str) -> list[str]:
    """JSON texts that may be actions: fenced blocks, <tool_call> blocks, else bare objects."""
    found = [body.strip() for _lang, body in _FENCE.findall(text)]
    found += [body.strip() for body in _TAGGED.findall(text)]
    found = [f for f in found if f.startswith("{")]
    if found:
        return found
    bare, decoder, i = [], json.JSONDecoder(), text.find("{")
    while i != -1:
        try:
            value, end = decoder.raw_decode(text, i)
        except ValueError:
            i = text.find("{", i + 1)
            continue
        if isinstance(value, dict):
            bare.append(text[i:end])
        i = text.find("{", end)
    if not bare:
        unclosed = text.rfind("```")
        if unclosed != -1 and text[unclosed:].lstrip("`json \n").startswith("{"):
            bare.append(text[unclosed:].lstrip("`json \n"))  # a fence the model never closed
    return bare


def _load(raw: str, tools: dict | None = None):
    try:
        return json.loads(raw), None
    except ValueError as e:
        # a trailing comma or a second object glued on: take the first whole object
        try:
            return json.JSONDecoder().raw_decode(raw)[0], None
        except ValueError:
            lenient = _lenient(raw, tools or {})
            return (lenient, None) if lenient is not None else (None, str(e).split(":")[0])


_LENIENT = re.compile(r'^\{\s*"name"\s*:\s*"([\w.-]+)"\s*,\s*"arguments"\s*:\s*\{(.*)\}\s*\}\s*$', re.S)


def _lenient(raw: str, tools: dict) -> dict | None:
    """An action whose string arguments hold unescaped quotes or raw newlines — the slip small
    models make most, in code above all — read by the tool's own argument names: each value runs
    from its `"name":` to the next one. None when that does not make sense of it either."""
    match = _LENIENT.match(raw.strip())
    tool = tools.get(match.group(1)) if match else None
    if tool is None or not tool.parameters:
        return None
    body = match.group(2)
    keys = sorted((m.start(), m.end(), m.group(1)) for m in
                  re.finditer(r'"(' + "|".join(map(re.escape, tool.parameters)) + r')"\s*:\s*', body))
    if not keys or body[:keys[0][0]].strip():
        return None
    args = {}
    for i, (_start, end, name) in enumerate(keys):
        chunk = body[end:keys[i + 1][0] if i + 1 < len(keys) else len(body)].strip().rstrip(",").strip()
        try:
            args[name] = json.loads(chunk)
        except ValueError:
            if len(chunk) < 2 or chunk[0] != '"' or chunk[-1] != '"':
                return None
            text = chunk[1:-1]
            args[name] = re.sub(r'\\(["\\/nt])', lambda m: {"n": "\n", "t": "\t"}.get(m.group(1), m.group(1)), text)
    return {"name": match.group(1), "arguments": args, "_lenient": True}


def _looks_like_action(raw: str) -> bool:
    return any(f'"{key}"' in raw for key in _NAME_KEYS)


def _name_of(value: dict):
    for key in _NAME_KEYS:
        name = value.get(key)
        if isinstance(name, str) and name.strip():
            return name.strip()
        if isinstance(name, dict) and isinstance(name.get("name"), str):  # {"function": {"name", "arguments"}}
            return name["name"].strip()
    return None


def _arguments_of(value: dict):
    inner = value.get("function")
    if isinstance(inner, dict):
        value = inner
    for key in _ARG_KEYS:
        if key in value:
            args = value[key]
            if isinstance(args, str):  # arguments as a JSON string, OpenAI's wire form
                try:
                    args = json.loads(args)
                except ValueError:
                    pass
            return args
    # arguments given beside the name: {"name": "view", "path": "a.py"}
    return {k: v for k, v in value.items() if k not in _NAME_KEYS}


def _to_call(action: dict, tools: dict) -> Parsed:
    lenient = action.pop("_lenient", False)
    name, args, note = _name_of(action), _arguments_of(action), ""
    if lenient:
        note = "(read although its JSON was not valid: escape quotes inside strings as \\\")"
    call_id = f"{ID_PREFIX}{uuid.uuid4().hex[:10]}"
    if name not in tools and name.lower() in tools:
        name = name.lower()
    if name not in tools and name.split()[0].lower() in PDB_COMMANDS and "pdb" in tools:
        command = " ".join([name, *_pdb_arguments(args)]).strip()
        note = f"(read as the pdb command {command!r})"
        name, args = "pdb", {"command": command}
    tool = tools.get(name)
    if tool is not None and not isinstance(args, dict):
        only = _single_argument(tool)
        if only and args is not None:
            args, note = {only: args}, f"(read as {name}({only}={args!r}))"
    if tool is not None and isinstance(args, dict):
        only = _single_argument(tool)
        unknown = [k for k in args if k not in tool.parameters]
        if only and len(args) == 1 and unknown and only not in args:
            args, note = {only: args[unknown[0]]}, f"(read {unknown[0]!r} as {only!r})"
    if not isinstance(args, dict):
        return Parsed(ToolCall(call_id, name, None, json.dumps(args), error="the arguments must be a JSON object"))
    return Parsed(ToolCall(call_id, name, args, json.dumps(args)), note=note)


def _pdb_arguments(args) -> list[str]:
    """A pdb command's words from the arguments a model gave it ({"file", "line"} is file:line)."""
    if not isinstance(args, dict):
        return [str(args)] if args not in (None, "") else []
    args = dict(args)
    file = args.pop("file", None) or args.pop("filename", None) or args.pop("path", None)
    line = args.pop("line", None) or args.pop("lineno", None)
    words = [f"{file}:{line}" if file and line else str(file or line)] if (file or line) else []
    return words + [str(v) for v in args.values() if v not in (None, "")]


def _single_argument(tool) -> str | None:
    """The argument a tool cannot do without, when it has exactly one."""
    required = list(getattr(tool, "required", ()) or ())
    return required[0] if len(required) == 1 else None


def _type(spec: dict) -> str:
    kind = spec.get("type", "string")
    return "|".join(k for k in kind if k != "null") if isinstance(kind, list) else str(kind)


def _first_sentence(text: str) -> str:
    text = " ".join(text.split())
    match = re.search(r"(?<=[.!?])\s", text)
    return text[:match.start()] if match else text
