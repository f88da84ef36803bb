"""`dgym-tui doctor`: check what dgym-tui needs, one line each, with the fix when something is off."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass

from dgym_tui.config import PROVIDER_KEYS


@dataclass
class Check:
    level: str  # "ok", "warn" or "fail"
    name: str
    detail: str
    fix: str = ""

    def line(self) -> str:
        tag = {"ok": " ok ", "warn": "warn", "fail": "FAIL"}[self.level]
        return f"[{tag}] {self.name}: {self.detail}" + (f" -> {self.fix}" if self.fix else "")


def check_python() -> Check:
    v = sys.version_info
    return Check("ok" if v >= (3, 11) else "fail", "python", f"{sys.version.split()[0]} at {sys.executable}",
                 "" if v >= (3, 11) else "install Python 3.11 or newer")


def check_git() -> Check:
    git = shutil.which("git")
    if not git:
        return Check("fail", "git", "not found", "install git (needed to copy repos and make patches)")
    out = subprocess.run([git, "--version"], capture_output=True, text=True).stdout.strip()
    return Check("ok", "git", out)


def check_docker(image: str) -> list[Check]:
    from dgym_tui.sandbox import SandboxError
    from dgym_tui.sandbox.docker_sandbox import connect

    try:
        client = connect(timeout=5)
    except SandboxError as e:
        return [Check("warn", "docker engine", str(e).split(":", 1)[0],
                      "start Docker (or set DOCKER_HOST); until then dgym-tui runs in bwrap, or locally "
                      "(NOT isolated) where bwrap cannot run")]
    version = client.version().get("Version", "?")
    where = os.environ.get("DOCKER_HOST", "local socket")
    checks = [Check("ok", "docker engine", f"version {version} ({where})")]
    import docker

    try:
        client.images.get(image)
    except docker.errors.ImageNotFound:
        checks.append(Check("warn", "sandbox image", f"{image} missing (dgym-tui runs locally, NOT isolated, until built)",
                            "dgym-tui image build (offline: sandbox/build-offline-base.sh, then "
                            "dgym-tui image build --base dgym-tui-base:offline)"))
        return checks
    checks.append(Check("ok", "sandbox image", image))
    try:
        out = client.containers.run(
            image, ["python3", "-c", "import sys, pytest; print(sys.version.split()[0], pytest.__version__)"],
            remove=True, network_mode="none", cap_drop=["ALL"], labels={"dgym-tui.app": "doctor"},
        ).decode().split()
        checks.append(Check("ok", "python in sandbox", f"python {out[0]}, pytest {out[1]}"))
    except Exception as e:  # the image exists but cannot run what we need
        checks.append(Check("fail", "python in sandbox", f"python3/pytest do not run: {e}",
                            "rebuild the image: dgym-tui image build"))
    return checks


def check_bwrap() -> Check:
    """bwrap: the isolated sandbox where Docker is missing (auto's second choice)."""
    from dgym_tui.sandbox.bwrap_sandbox import bwrap_problem

    problem = bwrap_problem()
    if problem:
        return Check("warn", "bwrap", problem.split(":", 1)[0],
                     "apt-get install bubblewrap (and allow unprivileged user namespaces); "
                     "without Docker or bwrap dgym-tui runs locally, NOT isolated")
    out = subprocess.run(["bwrap", "--version"], capture_output=True, text=True).stdout.strip()
    return Check("ok", "bwrap", f"{out}, can make a sandbox here")


def check_terminal() -> Check:
    size = shutil.get_terminal_size(fallback=(0, 0))
    colors = "truecolor" if os.environ.get("COLORTERM") in ("truecolor", "24bit") else (
        "256 colours" if "256" in os.environ.get("TERM", "") else f"TERM={os.environ.get('TERM', 'unset')}")
    if size.columns and (size.columns < 80 or size.lines < 24):
        return Check("warn", "terminal", f"{size.columns}x{size.lines}, {colors}", "use at least 80x24")
    shown = f"{size.columns}x{size.lines}" if size.columns else "not a terminal"
    return Check("ok", "terminal", f"{shown}, {colors}")


KEYLESS_PROVIDERS = ("ollama/", "ollama_chat/")  # served on one's own machine: no key asked


def check_llm_keys(model: str | None = None, api_base: str | None = None) -> Check:
    """The provider keys set (names only). None set is a warning, unless the model to try is
    served by a server of one's own (--api-base, Ollama), which asks for none."""
    present = [k for k in PROVIDER_KEYS if os.environ.get(k)]
    if not present:
        if api_base:
            return Check("ok", "LLM keys", f"none needed for a local server at {api_base} (--api-base)")
        if model and model.startswith(KEYLESS_PROVIDERS):
            base = os.environ.get("OLLAMA_API_BASE") or "http://localhost:11434"  # litellm's default too
            return Check("ok", "LLM keys", f"none needed for {model.split('/', 1)[0]}'s local server at {base}")
        return Check("warn", "LLM keys", "none set", "set e.g. OPENAI_API_KEY or ANTHROPIC_API_KEY to use the agent; "
                     "the debugger works without one")
    return Check("ok", "LLM keys", ", ".join(present) + " set (values never shown)")


def check_mcp() -> Check:
    """The MCP endpoint: the SDK imports, and a client, over 127.0.0.1 with the token, lists the
    tools an outside agent gets (no sandbox needed: listing runs nothing)."""
    try:
        import importlib.metadata

        import anyio
        import httpx2
        from mcp import Client
        from mcp.client.streamable_http import streamable_http_client

        from dgym_tui.mcp_server import HttpEndpoint, OutsideAgents

        version = importlib.metadata.version("mcp")
        endpoint = HttpEndpoint(OutsideAgents(None)).start()
        try:
            async def listed() -> list[str]:
                headers = {"Authorization": f"Bearer {endpoint.token}"}
                async with httpx2.AsyncClient(headers=headers, timeout=10) as http:
                    async with Client(streamable_http_client(endpoint.url, http_client=http)) as client:
                        return [t.name for t in (await client.list_tools()).tools]

            names = anyio.run(listed)
        finally:
            endpoint.stop()
    except Exception as e:
        return Check("fail", "MCP endpoint", f"{type(e).__name__}: {e}"[:200],
                     "reinstall dgym-tui (its `mcp` dependency); outside agents cannot come in")
    return Check("ok", "MCP endpoint", f"mcp {version}: a client over 127.0.0.1 listed {len(names)} tools "
                 f"({', '.join(names)}); `dgym-tui mcp REPO` or the app's --mcp-port")


def check_ray(address: str, image: str) -> list[Check]:
    """`doctor --ray ADDR`: the cluster, then each node that runs trials: its engine, the image,
    its dgym_sandbox slots (free / total). Probed by a Ray task pinned to each node."""
    from dgym_tui.batch.ray_executor import probe_nodes

    try:
        nodes = probe_nodes(address, image)
    except ValueError as e:
        return [Check("fail", "ray cluster", str(e))]
    slots = sum(n["slots"] for n in nodes)
    checks = [Check("ok" if slots else "fail", "ray cluster", f"{address}: {len(nodes)} node(s), {slots} "
                    "dgym_sandbox slot(s)", "" if slots else
                    "on each Docker host: ray start --address ADDR --resources '{\"dgym_sandbox\": N}'")]
    for n in nodes:
        name = f"ray node {n['node']}"
        free = "?" if n.get("free") is None else f"{n['free']:g}"
        if not n["slots"]:
            checks.append(Check("ok", name, "no dgym_sandbox slots: runs no trials" + (" (head)" if n["head"] else "")))
        elif n.get("error"):
            checks.append(Check("fail", name, f"did not answer: {n['error']}"))
        elif not n.get("engine"):
            bwrap = n.get("bwrap")
            checks.append(Check("warn" if bwrap == "ok" else "fail", name,
                                f"{n.get('engine_error', 'no Docker engine')}; bwrap: {bwrap}; "
                                f"{free}/{n['slots']} slots free", "start Docker on that node"))
        elif not n.get("image"):
            checks.append(Check("fail", name, f"docker {n['engine']}, image {image} missing; {free}/{n['slots']} "
                                "slots free", f"on that node: dgym-tui image build (or docker load {image})"))
        else:
            checks.append(Check("ok", name, f"docker {n['engine']}, image {image} present, {free}/{n['slots']} "
                                f"slots free, dgym-tui {n.get('version', '?')}"))
    return checks


def check_model(model: str, api_base: str | None = None) -> list[Check]:
    """`doctor --model M`: one small request with one tool. Did a native tool call come back?
    If not, does the model write a text action when asked? Then: which --tool-format suits it,
    and the context window it will be trimmed to."""
    from dgym_tui.agent.litellm_model import LiteLLMModel
    from dgym_tui.agent.model import ModelError
    from dgym_tui.agent.probe import PROBE_TASK, probe_native
    from dgym_tui.agent.text_actions import compact_listing, instructions, parse_action, response_format
    from dgym_tui.tools import registry

    tools = {"view": registry()["view"]}
    schemas = [tools["view"].schema()]
    llm = LiteLLMModel(model, api_base=api_base, max_retries=1, timeout=120)
    name = f"model {model}"
    try:
        native = probe_native(llm)
    except ModelError as e:
        return [Check("fail", name, f"no answer: {e}", "check --model, --api-base and the key (`doctor` lists keys)")]
    window = llm.context_window()
    size = f"context window {window:,} tokens" if window else "context window unknown (set context_window in config.toml)"
    if native.native:
        return [Check("ok", name, f"native tool calls come back; {size}", "--tool-format auto (the default) or native")]
    said = "the provider refused tools" if native.native is None else f"no native tool call (it wrote {native.said!r})"
    if llm.own_server:  # a server of one's own may hold the reply to a JSON action's schema
        prompt = instructions(compact_listing(schemas), held=True) + "\n\n" + PROBE_TASK
        try:
            held = llm.query([{"role": "user", "content": prompt}], [], response_format=response_format(schemas))
        except ModelError:
            held = None  # it takes no schema: plain text actions below
        parsed = parse_action(held.text, tools) if held is not None else None
        if parsed is not None and parsed.call is not None and parsed.call.name == "view":
            return [Check("warn", name, f"{said}, but the server holds it to JSON actions; {size}",
                          "--tool-format json, or auto (the default), whose probe finds the same before step 1")]
    prompt = instructions(compact_listing(schemas)) + "\n\n" + PROBE_TASK
    try:
        text = llm.query([{"role": "user", "content": prompt}], [])
    except ModelError as e:
        return [Check("fail", name, f"{said}; then no answer: {e}")]
    parsed = parse_action(text.text, tools)
    if parsed.call is not None and parsed.call.name == "view":
        return [Check("warn", name, f"{said}, but it writes text actions well; {size}",
                      "--tool-format text; auto gets there too (before step 1 on a server of your own, "
                      "else after two replies without a call)")]
    return [Check("fail", name, f"{said}, and no text action either ({parsed.error}); {size}",
                  "try a larger or instruction-tuned model")]


def run(image: str | None = None, out=print, ray: str | None = None, model: str | None = None,
        api_base: str | None = None) -> int:
    from dgym_tui.sandbox.docker_sandbox import DEFAULT_IMAGE

    checks = [check_python(), check_git(), *check_docker(image or DEFAULT_IMAGE), check_bwrap(),
              check_terminal(), check_llm_keys(model, api_base), check_mcp(),
              *(check_ray(ray, image or DEFAULT_IMAGE) if ray else []),
              *(check_model(model, api_base) if model else [])]
    for c in checks:
        out(c.line())
    return 1 if any(c.level == "fail" for c in checks) else 0


def main(argv: list[str]) -> int:
    """`dgym-tui doctor`."""
    import argparse

    parser = argparse.ArgumentParser(prog="dgym-tui doctor",
                                     description="Check what dgym-tui needs, one line each with the fix.")
    parser.add_argument("--ray", metavar="ADDR", help="also check a Ray cluster's nodes (engine, image, free "
                        "dgym_sandbox slots); needs pip install 'dgym-tui[ray]'")
    parser.add_argument("--model", metavar="M", help="also try this model: one small request with a tool; says "
                        "whether native tool calls come back and which --tool-format suits it")
    parser.add_argument("--api-base", metavar="URL", help="the model's OpenAI-compatible server (llama.cpp, Ollama, vLLM)")
    args = parser.parse_args(argv)
    return run(ray=args.ray, model=args.model, api_base=args.api_base)
