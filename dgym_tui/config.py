"""The user's settings: a TOML file in the platform's config dir.

`DGYM_TUI_CONFIG_DIR` overrides the directory (tests point it at tmp_path). The file is read
with tomllib. The app writes only top-level keys (the theme), line by line, so whatever else the
person wrote — the [agent] table, comments — stays as it was.

    theme = "dgym-dark"

    [agent]
    model = "anthropic/claude-sonnet-4-5"   # any litellm model string
    api_base = "http://localhost:11434/v1"  # an OpenAI-compatible server (Ollama, vLLM)
    mode = "step"                           # step | auto
    max_steps = 50
    max_cost = 2.0                          # USD
    context_window = 32000                  # tokens, when litellm does not know the model
    tool_format = "auto"                    # native | json | text | auto (json/text: one action per reply)
    system_prompt_file = "~/my-prompt.txt"  # a template: {repo} {entrypoint} {tools} {sandbox}

    [agent.policy]
    allow = ["view", "listdir", "grep", "pdb", "eval"]
    ask = ["edit", "bash", "submit"]
    deny = ["bash(rm -rf *)"]
"""

from __future__ import annotations

import json
import os
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

ENV_VAR = "DGYM_TUI_CONFIG_DIR"
# Environment variables litellm reads for the common providers (doctor, a Ray batch's trials).
# Only their names are ever printed.
PROVIDER_KEYS = [
    "OPENAI_API_KEY", "ANTHROPIC_API_KEY", "AZURE_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY",
    "MISTRAL_API_KEY", "GROQ_API_KEY", "OPENROUTER_API_KEY", "DEEPSEEK_API_KEY", "TOGETHERAI_API_KEY",
    "XAI_API_KEY", "COHERE_API_KEY", "AWS_ACCESS_KEY_ID", "OLLAMA_API_BASE",
]
APP_NAME = "dgym-tui"


def config_dir() -> Path:
    override = os.environ.get(ENV_VAR)
    if override:
        return Path(override)
    from platformdirs import user_config_dir

    return Path(user_config_dir(APP_NAME))


def config_path() -> Path:
    return config_dir() / "config.toml"


def load_config() -> dict:
    """The settings, or {} when the file is missing or unreadable (a broken file must not stop the app)."""
    try:
        with open(config_path(), "rb") as f:
            return tomllib.load(f)
    except (OSError, tomllib.TOMLDecodeError):
        return {}


def _toml_value(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    # JSON string escapes are valid TOML basic-string escapes.
    return json.dumps(str(value), ensure_ascii=False)


def save_config(**updates) -> Path:
    """Set top-level keys, keeping every other line of the file, and write it atomically."""
    path = config_path()
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError:
        lines = ["# dgym-tui settings"]
    first_table = next((i for i, ln in enumerate(lines) if ln.lstrip().startswith("[")), len(lines))
    for key, value in sorted(updates.items()):
        line = f"{key} = {_toml_value(value)}"
        pattern = re.compile(rf"^\s*{re.escape(key)}\s*=")
        at = next((i for i in range(first_table) if pattern.match(lines[i])), None)
        if at is None:
            lines.insert(first_table, line)
            first_table += 1
        else:
            lines[at] = line
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".toml.tmp")
    tmp.write_text("\n".join(lines) + "\n", encoding="utf-8")
    os.replace(tmp, path)
    return path


@dataclass
class AgentSettings:
    """The agent's settings: config.toml's [agent] table, then the command line's flags."""

    model: str | None = None
    api_base: str | None = None
    mode: str = "step"
    max_steps: int | None = 50
    max_cost: float | None = None
    context_window: int | None = None
    tool_format: str = "auto"
    system_prompt_file: str | None = None
    task: str | None = None
    # A second model that investigates for the agent (agent/seeker.py): its litellm model string
    # or scripted:FILE, its server, its form (ask: a debug tool; report: findings before the
    # agent starts) and its step budget per question.
    seeker: str | None = None
    seeker_api_base: str | None = None
    seeker_form: str = "ask"
    seeker_steps: int | None = 10
    seeker_mode: str | None = None  # step | auto for the seeker's own calls (None: the agent's mode)
    policy: dict = field(default_factory=dict)

    @classmethod
    def load(cls, config: dict | None = None, **overrides) -> AgentSettings:
        table = dict((config if config is not None else load_config()).get("agent") or {})
        policy = table.pop("policy", {}) or {}
        known = {f for f in cls.__dataclass_fields__ if f != "policy"}
        unknown = sorted(set(table) - known)
        if unknown:
            raise ValueError(f"config.toml [agent]: unknown key{'s' if len(unknown) > 1 else ''} "
                             f"{', '.join(unknown)} (known: {', '.join(sorted(known))})")
        settings = cls(**table, policy=policy)
        for key, value in overrides.items():
            if value is not None:
                setattr(settings, key, value)
        if settings.mode not in ("manual", "step", "auto"):
            raise ValueError(f"unknown agent mode {settings.mode!r}: manual, step or auto")
        if settings.tool_format not in ("native", "json", "text", "auto"):
            raise ValueError(f"unknown tool format {settings.tool_format!r}: native, json, text or auto")
        if settings.seeker_mode not in (None, "step", "auto"):
            raise ValueError(f"unknown seeker mode {settings.seeker_mode!r}: step or auto")
        if settings.seeker_form not in ("ask", "report"):
            raise ValueError(f"unknown seeker form {settings.seeker_form!r}: ask or report")
        return settings
