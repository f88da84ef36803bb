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

JSON actions (`json`) are text actions held to their form by the server itself: each request
carries a JSON schema (`response_format`) that admits exactly one object, a short thought and one
tool's name and arguments, and servers of one's own (llama.cpp, Ollama, vLLM, LM Studio) turn it
into a grammar the model's sampling cannot leave. A 1.5B model that wrote a valid fenced action
in 1 reply of 4 at one point of a session wrote 4 of 4 held to the schema, in a fifth of the time.

Repairs are few and said to the model: `{"tool": …, "args": …}`-style keys, a `<tool_call>`
wrapper (Qwen's native format written as text), a pdb command used as a tool name
(`{"name": "p", "arguments": {"expr": "x"}}` is `pdb` with `p x`), and an argument the tool does
not have, dropped (`eval` with a `timeout`).
"""

from __future__ import annotations

import json
import re
import uuid
from dataclasses import dataclass

from dgym_tui.agent.model import ToolCall

ID_PREFIX = "text_"  # the ids of calls read from text (no native call to answer)
FORM = 'one action as fenced JSON: ```json {"name": TOOL, "arguments": {...}}```'
HELD_FORM = 'one JSON object: {"thought": "...", "name": TOOL, "arguments": {...}}'

# pdb's own commands (and ours), which small models often name as if they were tools
PDB_COMMANDS = {
    "b", "break", "tbreak", "c", "cont", "continue", "n", "next", "s", "step", "r", "return", "p", "pp",
    "w", "where", "bt", "u", "up", "d", "down", "l", "list", "ll", "longlist", "a", "args", "cl", "clear",
    "until", "unt", "j", "jump", "display", "undisplay", "whatis", "condition", "ignore", "disable",
    "enable", "restart", "run", "watch", "unwatch", "log", "hit", "dbreak", "dclear", "history", "back",
}

_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_-]*)[ \t]*\n?(.*?)```", re.S)
_TAGGED = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|$)", re.S)
_TAGGED_CLOSED = re.compile(r"<tool_call>\s*(.*?)\s*</tool_call>", re.S)
_NAME_KEYS = ("name", "tool", "tool_name", "action", "function")
_ARG_KEYS = ("arguments", "args", "parameters", "params", "input")


@dataclass
class Parsed:
    """What a reply held: one call (maybe repaired: `note` says how), or an error in one line."""

    call: ToolCall | None
    error: str | None = None
    note: str = ""


THOUGHT_MAX = 600  # characters of a JSON action's thought: room to reason, none to ramble
# The example action of the prompt: the first of these the agent has (an arm without pdb is
# never shown a pdb call), with the thought a JSON action gives it. A fenced action shows pdb
# first, where there is pdb; a JSON action, whose thought comes with it, starts by looking around.
EXAMPLES = (("pdb", {"command": "c"}, "Run on to the breakpoint."),
            ("listdir", {"path": "."}, "See which files the repository holds."),
            ("eval", {}, "Run the tests to see what fails."),
            ("grep", {"pattern": "def main"}, "Find where main is defined."))


def example(tools=None, held: bool = False) -> str:
    """One action in the answer's form, calling a tool of `tools` (names; None: any)."""
    order = EXAMPLES[1:2] + EXAMPLES[:1] + EXAMPLES[2:] if held else EXAMPLES
    name, args, thought = next((e for e in order if tools is None or e[0] in tools),
                               (sorted(tools)[0] if tools else "submit", {}, "Say it is done."))
    if held:
        return json.dumps({"thought": thought, "name": name, "arguments": args})
    return "```json\n" + json.dumps({"name": name, "arguments": args}) + "\n```"


def instructions(tool_listing: str, held: bool = False, tools=None) -> str:
    """The part of the prompt that replaces native tools: the tools and the answer's form
    (`held`: JSON actions, whose form the server enforces), the example calling one of `tools`."""
    if held:
        return (f"Tools (call them by writing an action):\n{tool_listing}\n\n"
                "Answer every time with one JSON object: a short thought, then one tool's name and its "
                "arguments, like this:\n" + example(tools, held=True) +
                "\nOne action per reply; its result comes back to you.")
    return (f"Tools (call them by writing an action, not code):\n{tool_listing}\n\n"
            "Answer every time with a short thought, then exactly one action as a fenced JSON block, "
            "like this:\n" + example(tools) + "\nThe action's \"name\" is one of the tools above and \"arguments\" "
            "its arguments. One action per reply; wait for its result before the next.")


def response_format(schemas: list[dict]) -> dict:
    """The request's `response_format` for JSON actions: one object, {thought, name, arguments},
    whose arguments are those of the tool it names (one branch of anyOf per tool)."""
    branches = []
    for schema in schemas:
        fn = schema.get("function", schema)
        params = {"type": "object", "properties": {}, **(fn.get("parameters") or {}), "additionalProperties": False}
        branches.append({"type": "object", "additionalProperties": False,
                         "required": ["thought", "name", "arguments"],
                         "properties": {"thought": {"type": "string", "maxLength": THOUGHT_MAX},
                                        "name": {"type": "string", "const": fn["name"]},
                                        "arguments": params}})
    return {"type": "json_schema", "json_schema": {"name": "action", "schema": {"anyOf": branches}}}


def refuses_schema(message: str) -> bool:
    """A server's refusal of response_format (it takes no schema, or not this one)."""
    text = message.lower()
    return any(word in text for word in ("response_format", "json_schema", "grammar", "schema"))


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


def reminder(held: bool = False) -> str:
    return "(Reply with your next action.)" if held else f"(Reply with a thought and {FORM}.)"


def action_end(text: str) -> int | None:
    """Where the reply's first whole action ends (a closed fence or <tool_call> block whose body
    is a JSON object with a tool's name), or None. What comes after it is never read (one action
    per reply), so the agent stops the reply there rather than wait for the model to ramble on."""
    if text.count("```") < 2 and "</tool_call>" not in text:
        return None
    ends = [m.end() for pattern in (_FENCE, _TAGGED_CLOSED) for m in pattern.finditer(text)
            if m.group(m.lastindex).strip().startswith("{") and _looks_like_action(m.group(m.lastindex))]
    return min(ends, default=None)


LOOP_TAIL = 100     # the end of a reply: found LOOP_COPIES times in it, the model is going round
LOOP_COPIES = 5


def loop_start(text: str) -> int | None:
    """Where a reply that has started to repeat itself over and over (a small model's
    degenerate loop: one paragraph forty times) begins its second round, or None. Whatever the
    period, a looping text's last LOOP_TAIL characters are found again and again before them."""
    if len(text) < LOOP_TAIL * LOOP_COPIES:
        return None
    tail = text[-LOOP_TAIL:]
    if text.count(tail) < LOOP_COPIES:
        return None
    first = text.find(tail)
    return text.find(tail, first + 1)


def parse_action(text: str, tools: dict, form: str = FORM) -> Parsed:
    """The one action a text reply holds. `tools` maps names to Tool objects (for repairs);
    `form` is the answer's form as the errors show it."""
    candidates = _candidates(text or "")
    actions = []
    for raw in candidates:
        value, problem = _load(raw, tools)
        if problem is not None:
            if _looks_like_action(raw):
                return Parsed(None, f"the action is not valid JSON ({problem}); write {form}")
            continue
        if isinstance(value, dict) and _name_of(value) is not None:
            actions.append(value)
    if not actions:
        if not candidates and "{" not in (text or ""):
            return Parsed(None, f"no action in your reply; write {form}")
        return Parsed(None, f"no action found (a JSON object with \"name\" and \"arguments\"); write {form}")
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
        elif unknown:  # an argument the tool does not have (eval's "timeout"): dropped, and said
            args = {k: v for k, v in args.items() if k in tool.parameters}
            note = f"(ignored {', '.join(unknown)}: {name} has no such argument)"
    if args is None and tool is not None and not tool.required:
        args = {}  # `"arguments": null` for a tool that needs none
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
