"""Which of the agent's actions run at once, which wait for the person, which are refused.

Rules come from config.toml (`[agent.policy]`: allow / ask / deny lists) and from the person's
"always allow" choices during a session. A rule is a tool name (`view`) or a tool with a pattern
matched, shell-style, against the call's main argument (`bash(rm *)`, `pdb(c*)`, `edit(tests/*)`).
deny beats ask beats allow; a call no rule names asks. The mode decides what "allow" means:
`step` makes every action wait, `auto` runs what is allowed, `manual` runs no agent at all.
"""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass, field

MODES = ("manual", "step", "auto")
ALLOW, ASK, DENY = "allow", "ask", "deny"

# The argument a pattern is matched against, per tool (the others match on the name only).
MAIN_ARGUMENT = {"pdb": "command", "bash": "command", "edit": "path", "view": "path",
                 "listdir": "path", "grep": "pattern", "submit": "message", "debug": "question"}

DEFAULT_RULES = {
    # debug asks the seeker and answer ends its turn: neither changes anything (the seeker's own
    # calls meet the policy one by one)
    ALLOW: ["view", "listdir", "grep", "pdb", "eval", "debug", "answer"],
    ASK: ["edit", "bash", "submit"],
    DENY: [],
}

_RULE = re.compile(r"^\s*([A-Za-z_][\w.-]*)\s*(?:\((.*)\))?\s*$", re.S)


@dataclass(frozen=True)
class Rule:
    tool: str
    pattern: str | None = None  # None: any call of the tool

    @classmethod
    def parse(cls, text: str) -> Rule:
        match = _RULE.match(text)
        if match is None:
            raise ValueError(f"not a policy rule: {text!r} (write `tool` or `tool(pattern)`)")
        return cls(match.group(1), match.group(2))

    def matches(self, tool: str, args: dict) -> bool:
        if tool != self.tool:
            return False
        if self.pattern is None:
            return True
        value = main_argument(tool, args)
        return value is not None and fnmatch.fnmatchcase(value, self.pattern)

    def __str__(self) -> str:
        return self.tool if self.pattern is None else f"{self.tool}({self.pattern})"


def main_argument(tool: str, args: dict) -> str | None:
    key = MAIN_ARGUMENT.get(tool)
    value = (args or {}).get(key) if key else None
    return None if value is None else str(value).strip()


@dataclass(frozen=True)
class Verdict:
    action: str            # run | ask | deny
    rule: str              # what decided it, for the person to read


@dataclass
class Policy:
    allow: list[Rule] = field(default_factory=list)
    ask: list[Rule] = field(default_factory=list)
    deny: list[Rule] = field(default_factory=list)
    granted: list[Rule] = field(default_factory=list)  # the person's "always allow", this session

    @classmethod
    def from_config(cls, table: dict | None) -> Policy:
        """From config.toml's [agent.policy] table (missing lists take the defaults)."""
        table = table or {}
        lists = {}
        for name in (ALLOW, ASK, DENY):
            raw = table.get(name, DEFAULT_RULES[name])
            if not isinstance(raw, list) or not all(isinstance(r, str) for r in raw):
                raise ValueError(f"[agent.policy] {name} must be a list of strings")
            lists[name] = [Rule.parse(r) for r in raw]
        return cls(**lists)

    def decide(self, tool: str, args: dict, mode: str) -> Verdict:
        for rule in self.deny:
            if rule.matches(tool, args):
                return Verdict("deny", f"deny {rule}")
        for rule in self.granted:  # the person said so, in any mode
            if rule.matches(tool, args):
                return Verdict("run", f"always allowed {rule}")
        for rule in self.ask:
            if rule.matches(tool, args):
                return Verdict("ask", f"ask {rule}")
        for rule in self.allow:
            if rule.matches(tool, args):
                if mode == "step":
                    return Verdict("ask", f"step mode (allow {rule})")
                return Verdict("run", f"allow {rule}")
        return Verdict("ask", "no rule names it")

    def always_allow(self, tool: str, pattern: str | None = None) -> Rule:
        """The person's "always allow" for the rest of the session: beats ask and step mode,
        never deny."""
        rule = Rule(tool, pattern)
        if rule not in self.granted:
            self.granted.append(rule)
        return rule

    def listing(self) -> dict[str, list[str]]:
        return {name: [str(r) for r in getattr(self, name)] for name in (ALLOW, ASK, DENY, "granted")}
