"""An agent from the person's settings: the model, the policy, the prompt, the limits.

`--model scripted:FILE` (or scripted:NAME for a script bundled with the package) runs a
ScriptedModel: no key, no network, the same every time — for tests and `dgym-tui demo`.
Anything else is a litellm model string. Building the model loads litellm, which takes seconds:
callers do it off the UI thread.
"""

from __future__ import annotations

from pathlib import Path

from dgym_tui.agent.loop import Agent
from dgym_tui.agent.policy import Policy
from dgym_tui.agent.prompts import load_template
from dgym_tui.config import AgentSettings

SCRIPTS = Path(__file__).resolve().parent / "scripts"


def make_model(settings: AgentSettings):
    name = (settings.model or "").strip()
    if not name:
        raise ValueError("no model: give --model (a litellm model string) or set model in config.toml [agent]")
    if name.startswith("scripted:"):
        from dgym_tui.agent.scripted import ScriptedModel

        ref = name.removeprefix("scripted:")
        path = Path(ref).expanduser()
        if not path.is_file():
            path = SCRIPTS / f"{ref}.json"
        if not path.is_file():
            raise ValueError(f"no script {ref!r}: give a JSON file (bundled: "
                             f"{', '.join(sorted(p.stem for p in SCRIPTS.glob('*.json'))) or 'none'})")
        return ScriptedModel.from_file(path, chunk_delay=0.01, context_window=settings.context_window)
    from dgym_tui.agent.litellm_model import LiteLLMModel

    return LiteLLMModel(name, api_base=settings.api_base, context_window=settings.context_window)


def make_agent(session, settings: AgentSettings, model=None, **kwargs) -> Agent:
    """The agent for this session (the model built here unless given). A session resumed from
    a recording with an agent's conversation goes on with it."""
    template = load_template(settings.system_prompt_file) if settings.system_prompt_file else None
    model = model or make_model(settings)
    past = session.state.agent if session.state.agent.conversation else None
    if past is not None:
        kwargs.setdefault("resume", past)
        if hasattr(model, "skip"):  # a scripted model goes on from the step it had reached
            model.skip(past.step)
    return Agent(session, model, policy=Policy.from_config(settings.policy),
                 mode="step" if settings.mode == "manual" else settings.mode,
                 max_steps=settings.max_steps, max_cost=settings.max_cost, task=settings.task,
                 system_template=template, context_window=settings.context_window,
                 tool_format=settings.tool_format, **kwargs)
