"""Command-line options shared by the subcommands, and the agent settings they make."""

from __future__ import annotations

import argparse


def sandbox_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--sandbox", choices=["auto", "docker", "bwrap", "local"], default="auto",
                   help="where the code runs (default: auto = docker if available, else bwrap, "
                        "else local with a warning); docker and bwrap never fall back")
    p.add_argument("--python", metavar="PATH",
                   help="the interpreter that runs the repo's code (local and bwrap; default: the repo's "
                        ".venv or venv, else $VIRTUAL_ENV, else python3 on PATH; docker: a command in the image)")
    p.add_argument("--image", help="sandbox image for --sandbox docker (default: dgym-tui-sandbox:latest)")
    p.add_argument("--memory", metavar="SIZE",
                   help="the container's memory limit, e.g. 4g (docker only; default: 2g)")
    p.add_argument("--network", metavar="NAME",
                   help="give the container this Docker network (default: none, no network at all)")
    deps = p.add_argument_group("the repo's dependencies (docker: installed into a derived image, built once "
                                "with network, then reused; config.toml [sandbox] sets them per repo)")
    deps.add_argument("--no-deps", action="store_true",
                      help="do not install the dependencies the repo declares (pyproject, requirements*.txt, setup.cfg)")
    deps.add_argument("--wheels", metavar="DIR",
                      help="install them from this folder of wheels only, offline (pip --no-index --find-links)")
    deps.add_argument("--index-url", metavar="URL", help="install them from this package index (a mirror, a private one)")
    deps.add_argument("--setup", metavar="CMD",
                      help="a shell command run as root while the image builds, with network "
                           "(e.g. \"apt-get install -y libpq-dev\" or \"python3 -m pip install torch\")")
    p.add_argument("--test-timeout", type=float, metavar="S",
                   help="seconds a test may run (pytest: in test runs, and under pdb not counting its stops) "
                        "before it is stopped where it is and counted as failed (default: 20; 0: no limit)")
    p.add_argument("-e", "--entrypoint", metavar="CMD",
                   help='what runs under pdb, e.g. "pytest tests/test_x.py::test_y", "python app.py --x 1", '
                        '"python -m pkg", "PYTHONPATH=src pytest" (default: pytest where pytest would find tests, '
                        'else the __main__ script)')


def agent_arguments(p: argparse.ArgumentParser, modes: list[str]) -> None:
    p.add_argument("--model", metavar="M",
                   help="an LLM for the agent: any litellm model string (openai/gpt-4o, anthropic/..., "
                        "openai/NAME with --api-base for llama.cpp/Ollama/vLLM), or scripted:FILE, a JSON list of "
                        "replies (scripted:shopcart: the one bundled for the example) (default: config.toml)")
    p.add_argument("--api-base", metavar="URL", help="an OpenAI-compatible server, e.g. http://localhost:11434/v1")
    p.add_argument("--mode", choices=modes,
                   help="step: every agent action waits for you; auto: only what the policy marks `ask` waits"
                        + ("; manual: no agent" if "manual" in modes else "") + " (default: config.toml, else step)")
    p.add_argument("--max-steps", type=int, metavar="N", help="stop the agent after N model calls (default 50)")
    p.add_argument("--max-cost", type=float, metavar="USD", help="stop the agent once it has cost this much")
    p.add_argument("--tool-format", choices=["native", "json", "text", "auto"],
                   help="how the model calls tools: native (the provider's tool calls), json (one JSON action "
                        "per reply, held to its form by the server: llama.cpp, Ollama, vLLM), text (one fenced "
                        "JSON action per reply), auto (native, switching to json on a server of your own, else "
                        "to text, when the model makes no native call; default)")
    p.add_argument("--task", metavar="TEXT", help="what the agent should do (default: fix the failing tests)")
    p.add_argument("--system-prompt", metavar="FILE",
                   help="the agent's system prompt template ({repo} {entrypoint} {tools} {sandbox})")
    roles = p.add_argument_group("two roles: a seeker investigates with pdb, the agent writes the fix "
                                 "(it keeps view, edit, eval and submit)")
    roles.add_argument("--seeker", metavar="M",
                       help="the seeker's model (a litellm model string or scripted:FILE): it gets pdb, view, "
                            "listdir, grep and eval, never edit, and answers with the places, commands and "
                            "values it saw; `person`: you answer the agent's questions yourself (in the app). "
                            "The palette's 'Seeker: answer its question yourself' takes over a model's turn")
    roles.add_argument("--seeker-api-base", metavar="URL", help="the seeker's OpenAI-compatible server")
    roles.add_argument("--seeker-form", choices=["ask", "report"],
                       help="ask: the agent calls debug(question) when it wants to know (default); report: "
                            "the seeker investigates first, and its findings join the agent's task")
    roles.add_argument("--seeker-steps", type=int, metavar="N",
                       help="the seeker's step budget per question (default 10)")
    roles.add_argument("--seeker-mode", choices=["step", "auto"],
                       help="which of the seeker's own calls wait for you: step (all), auto (what the policy "
                            "asks about) (default: the agent's --mode)")


def agent_settings(args):
    """config.toml's [agent], then the flags of `agent_arguments`. ValueError: a bad setting."""
    from dgym_tui.config import AgentSettings

    return AgentSettings.load(model=args.model, api_base=args.api_base, mode=args.mode,
                              max_steps=args.max_steps, max_cost=args.max_cost, task=args.task,
                              tool_format=args.tool_format, system_prompt_file=args.system_prompt,
                              seeker=args.seeker, seeker_api_base=args.seeker_api_base,
                              seeker_form=args.seeker_form, seeker_steps=args.seeker_steps,
                              seeker_mode=args.seeker_mode)


def configured_model() -> str | None:
    from dgym_tui.config import load_config

    return (load_config().get("agent") or {}).get("model")

