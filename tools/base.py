"""What a tool is: a name, a description and a JSON schema for the model, and `run`.

A tool runs on the session's runner thread (through `Session.run_tool`), so it may call any
session operation; it never touches the sandbox directly. What it returns is the observation the
model reads (and the person sees). A bad argument, a path outside the repo or a failure in the
sandbox comes back as an observation, never as an exception in the app.
"""

from __future__ import annotations

from dataclasses import dataclass

OBSERVATION_CAP = 20_000  # characters the model reads of one observation (head and tail kept)

_TYPES = {"string": str, "integer": int, "number": (int, float), "boolean": bool, "object": dict,
          "array": list}


@dataclass
class ToolOutput:
    observation: str
    ok: bool = True
    submitted: str | None = None  # submit: the agent's closing message


class ToolError(Exception):
    """A tool could not do what was asked; str() is what the model reads."""


class Tool:
    name: str = ""
    description: str = ""
    parameters: dict = {}        # JSON-schema properties, by argument name
    required: tuple[str, ...] = ()
    # Other spellings the tool takes but does not show (view's two names for its line numbers): two
    # roles can hold the same tool described two ways, and the session checks with one of them.
    also_takes: dict = {}
    changes_files: bool = False  # may change the workspace (a "try" applies it as a checkpoint)
    # The tool's part of the agent's system prompt (agent/prompts.py), so that a prompt names
    # only the tools the agent has: `guidance`, lines of the way to work with it (after "- ");
    # `brief`, the same in a few words for small models; `order`, where in the work it comes.
    guidance: str = ""
    brief: str = ""
    order: int = 50

    def fitted(self, tools) -> Tool:
        """This tool as it is described beside `tools` (the names the agent has): a tool whose
        words speak of another (view's breakpoint marks, of pdb) says them only when that one is
        there. Default: itself."""
        return self

    @property
    def summary(self) -> str:
        return self.description.strip().split("\n", 1)[0]

    def schema(self) -> dict:
        """The OpenAI function-tool schema sent to the model."""
        params: dict = {"type": "object", "properties": self.parameters, "additionalProperties": False}
        if self.required:
            params["required"] = list(self.required)
        return {"type": "function", "function": {"name": self.name, "description": self.description,
                                                 "parameters": params}}

    def check(self, args: dict) -> str | None:
        """What is wrong with these arguments, in words for the model; None if nothing is.
        null stands for "the default", as many models send it for optional arguments."""
        if not isinstance(args, dict):
            return f"{self.name} takes an object of named arguments"
        known = {**self.also_takes, **self.parameters}
        unknown = sorted(set(args) - set(known))
        if unknown:
            return f"{self.name} has no argument {', '.join(unknown)} (it takes {', '.join(self.parameters) or 'none'})"
        for name in self.required:
            if args.get(name) is None:
                return f"{self.name} needs the argument {name!r}"
        for name, value in args.items():
            if value is None:
                continue
            kinds = known[name].get("type", "string")
            kinds = [kinds] if isinstance(kinds, str) else kinds
            wanted = tuple(t for k in kinds if k != "null" for t in _flat(_TYPES.get(k, object)))
            if isinstance(value, bool) and bool not in wanted:
                return f"{self.name}: {name} must be {' or '.join(k for k in kinds if k != 'null')}"
            if not isinstance(value, wanted):
                if int in wanted and isinstance(value, str) and value.strip().lstrip("-").isdigit():
                    continue  # "12" for a line number: accepted, converted in run
                return f"{self.name}: {name} must be {' or '.join(k for k in kinds if k != 'null')}"
        return None

    def run(self, session, actor: str, **args) -> ToolOutput | str:
        raise NotImplementedError


def _flat(t):
    return t if isinstance(t, tuple) else (t,)


def as_int(value, name: str) -> int | None:
    if value is None:
        return None
    try:
        return int(value)
    except (TypeError, ValueError):
        raise ToolError(f"{name} must be a whole number, not {value!r}") from None


def cap(text: str, limit: int = OBSERVATION_CAP) -> str:
    """The head and the tail of a long text, the middle cut and counted (a crash's traceback is
    at the end of its output)."""
    if len(text) <= limit:
        return text
    half = limit // 2
    return (text[:half] + f"\n[... {len(text) - 2 * half} characters cut from the middle ...]\n"
            + text[-half:])
