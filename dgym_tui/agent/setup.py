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


def make_agent(session, settings: AgentSettings, model=None, seeker_model=None, seeker_tools: dict | None = None,
               **kwargs) -> Agent:
    """The agent for this session (the model built here unless given). A session resumed from
    a recording with an agent's conversation goes on with it. With `settings.seeker`, a seeker
    investigates for it (agent/seeker.py): through a debug tool (form ask), or first, to a report
    in its task (form report). seeker_tools: the seeker's (default: the registry's investigating
    tools)."""
    template = load_template(settings.system_prompt_file) if settings.system_prompt_file else None
    model = model or make_model(settings)
    if settings.seeker or seeker_model is not None:
        kwargs["seeker"] = make_seeker(session, settings, seeker_model, seeker_tools)
        if settings.seeker_form == "ask":
            from dgym_tui.tools.debug import DebugTool

            tools = kwargs.get("tools")
            tools = dict(tools if tools is not None else fixer_tools(session.tools))
            tools["debug"] = DebugTool(kwargs["seeker"])
            kwargs["tools"] = tools
        elif kwargs.get("tools") is None:
            kwargs["tools"] = fixer_tools(session.tools)
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


FIXER_TOOLS = ("view", "edit", "eval", "submit")


def fixer_tools(tools: dict) -> dict:
    """What the agent that writes the fix keeps beside a seeker: what changing code needs. The
    investigating is the seeker's."""
    return {name: tool.fitted(frozenset(FIXER_TOOLS)) for name, tool in tools.items() if name in FIXER_TOOLS}


def make_seeker(session, settings: AgentSettings, model=None, tools: dict | None = None):
    from dataclasses import replace

    from dgym_tui.agent.seeker import SEEKER_TOOLS, Seeker
    from dgym_tui.tools import registry

    from dgym_tui.agent.seeker import PERSON

    if model is None and settings.seeker != PERSON:  # the person as the seeker: no model
        model = make_model(replace(settings, model=settings.seeker, api_base=settings.seeker_api_base))
    if tools is None:
        every = registry()
        tools = {name: every[name].fitted(frozenset(SEEKER_TOOLS)) for name in SEEKER_TOOLS if name in every}
    return Seeker(session, model, tools=tools, policy=Policy.from_config(settings.policy),
                  max_steps=settings.seeker_steps, tool_format=settings.tool_format,
                  context_window=settings.context_window, form=settings.seeker_form,
                  mode=None if settings.seeker_mode is None else settings.seeker_mode)
