"""dgym-tui as an MCP server: an outside agent (Claude Code, Codex, any MCP client) debugs the
live session with the same tools the built-in agent has (pdb, view, listdir, grep, eval, edit,
bash, submit: debug-gym's names, arguments and descriptions), through the same CallHandler
(agent/calls.py): the policy decides, the person approves what asks, a rejection comes back as
the tool's result for the agent to read. The client is an actor of its own, "agent:NAME" (NAME
from the client's own `clientInfo`), in the events, the transcript and the session file.

Built on the official MCP Python SDK's low-level server. Calls run one at a time on a worker
thread (pdb is one process; the session's runner orders them anyway), never on the event loop.
"""

from __future__ import annotations

import itertools
import re
import threading
from collections.abc import Callable

import anyio
import mcp.types as types
from mcp.server.lowlevel.server import Server

from dgym_tui import __version__
from dgym_tui.agent.approval import Answer
from dgym_tui.agent.calls import CallHandler
from dgym_tui.agent.model import ToolCall
from dgym_tui.agent.policy import Policy
from dgym_tui.core import events as ev

INSTRUCTIONS = ("Debug the repository with a live pdb session in a sandbox. Set breakpoints and run with the "
                "pdb tool (b FILE:LINE, c, n, s, p EXPR), read code with view/listdir/grep, change it with edit; "
                "a policy decides each call, and a person, when one watches, may reject a call with a comment: a "
                "refused call comes back as an error result saying who or what refused it. "
                "Call submit when the bug is fixed.")


def actor_name(client_name: str | None) -> str:
    """The actor of an outside agent: "agent:" and the client's name, made safe and short."""
    name = re.sub(r"[^A-Za-z0-9._-]+", "-", (client_name or "").strip()).strip("-")[:40]
    return f"{ev.AGENT}:{name or 'mcp'}"


class OutsideAgents:
    """The calls of outside agents on one session: one CallHandler per client actor, one call
    at a time. `auto_answer` answers what the policy asks about when nobody is there to (the
    headless server); in the app, the person answers through `handler.gate`."""

    def __init__(self, session, policy: Policy | None = None, *, mode: str = "step",
                 auto_answer: Callable[[ev.ApprovalRequested], Answer] | None = None, tools: dict | None = None):
        from dgym_tui.tools import registry

        self.session = session
        if tools is None:  # the session's own (one registry per session); no session: doctor's probe
            tools = session.tools if session is not None else registry()
        self.tools = tools
        self.policy = policy or Policy.from_config(None)
        self.mode = mode
        self.auto_answer = auto_answer
        self.stop = threading.Event()
        self.handlers: dict[str, CallHandler] = {}
        self._one_at_a_time = threading.Lock()
        self._ids = itertools.count(1)
        self.seeker = None
        self.seeker_host: SeekerHost | None = None

    def add_seeker(self, seeker) -> None:
        """Offer the outside agent a `debug(question)` tool that this seeker answers (a local model
        investigating with pdb in the sandbox): the outside agent is the fixer. Its calls are
        approved as the outside agents' are (`auto_answer` headless, the person in the app)."""
        from dgym_tui.tools.debug import DebugTool

        self.seeker, self.seeker_host = seeker, SeekerHost(self)
        seeker.parent = self.seeker_host
        self.tools = {**self.tools, "debug": DebugTool(seeker)}

    def handler(self, actor: str) -> CallHandler:
        if actor not in self.handlers:
            followed = {}
            if self.session is not None and self.session.state.agent.state == "off":
                # no agent of our own: the agent pane and the status bar follow this one
                self.session.events.emit(ev.AgentStarted(model=f"{actor} over MCP", mode=self.mode,
                                                         tools=sorted(self.tools)), actor)

                def status(state: str, reason: str, actor=actor) -> None:
                    self.session.events.emit(ev.AgentStatus(state=state, mode=self.mode, step=0, cost=None,
                                                            reason=reason), actor)

                followed["status"] = status
            self.handlers[actor] = CallHandler(self.session, self.tools, self.policy, actor=actor,
                                               mode=lambda: self.mode, auto_answer=lambda: self.auto_answer,
                                               stop=self.stop, **followed)
        return self.handlers[actor]

    def call(self, actor: str, name: str, arguments) -> tuple[str, bool]:
        """Run one call (blocking): what the client is told, and whether it is an error."""
        call_id = f"mcp_{next(self._ids)}"
        if isinstance(arguments, dict):
            call = ToolCall(call_id, name, arguments, "")
        else:
            call = ToolCall(call_id, name, None, repr(arguments), error="the arguments must be a JSON object")
        with self._one_at_a_time:
            handled = self.handler(actor).handle(call)
        return handled.observation, handled.error

    def answer(self, call_id: str, answer: Answer) -> bool:
        """The person's answer to an outside agent's (or its seeker's) call that waits (False: none waits)."""
        gates = [handler.gate for handler in list(self.handlers.values())]
        if self.seeker_host is not None:
            gates.append(self.seeker_host.gate)
        return any(gate.answer(call_id, answer) for gate in gates)

    def close(self) -> None:
        self.stop.set()
        for handler in self.handlers.values():
            handler.gate.wake()
        if self.seeker_host is not None:
            for child in list(self.seeker_host.children):
                child.stop()
            self.seeker_host.gate.wake()


class SeekerHost:
    """What a seeker takes from the agent it works for (agent/seeker.py `parent`), when that agent
    is an outside one: an approval gate, the mode and headless answers, and its turns to stop."""

    def __init__(self, agents: OutsideAgents):
        from dgym_tui.agent.approval import ApprovalGate

        self.agents = agents
        self.gate = ApprovalGate()
        self.children: list = []
        self.task_text = ""
        self._stop_event = agents.stop

    @property
    def mode(self) -> str:
        return self.agents.mode

    @property
    def auto_answer(self):
        return self.agents.auto_answer


def build_server(agents: OutsideAgents) -> Server:
    """The MCP server for these outside agents' calls."""

    def input_schema(name: str):
        # tools/list lists this, and the SDK checks a call's Mcp-Param-* headers against it; without
        # it, the SDK would run the whole tools/list handler on every call (a fifth of its time)
        tool = agents.tools.get(name)
        return tool.schema()["function"]["parameters"] if tool is not None else None

    async def list_tools(ctx, params) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[
            types.Tool(name=name, description=agents.tools[name].description, input_schema=input_schema(name))
            for name in sorted(agents.tools)])

    async def call_tool(ctx, params) -> types.CallToolResult:
        client = ctx.session.client_params
        actor = actor_name(client.client_info.name if client is not None and client.client_info else None)
        text, error = await anyio.to_thread.run_sync(agents.call, actor, params.name, params.arguments or {},
                                                     abandon_on_cancel=True)
        return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=error)

    return Server("dgym-tui", version=__version__, instructions=INSTRUCTIONS, get_tool_input_schema=input_schema,
                  on_list_tools=list_tools, on_call_tool=call_tool)


async def serve_stdio(server: Server) -> None:
    from mcp.server.stdio import stdio_server

    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


def new_token() -> str:
    import secrets

    return secrets.token_urlsafe(24)


def _require_token(app, token: str):
    """Only requests that carry `Authorization: Bearer TOKEN`: another local user or a web page
    must not drive the session."""
    import hmac

    expected = f"Bearer {token}".encode()

    async def guarded(scope, receive, send):
        if scope["type"] == "http":
            given = dict(scope.get("headers") or []).get(b"authorization", b"")
            if not hmac.compare_digest(given, expected):
                from starlette.responses import PlainTextResponse

                response = PlainTextResponse("dgym-tui: a missing or wrong token (Authorization: Bearer TOKEN)\n",
                                             status_code=401)
                return await response(scope, receive, send)
        return await app(scope, receive, send)

    return guarded


class HttpEndpoint:
    """The MCP server over streamable HTTP on 127.0.0.1, with a random token, on a thread of
    its own (the app's UI loop never waits on it)."""

    def __init__(self, agents: OutsideAgents, port: int = 0, host: str = "127.0.0.1", token: str | None = None):
        import socket

        import uvicorn

        self.agents, self.host = agents, host
        self.token = token or new_token()
        self._socket = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        # Accepted connections inherit it: an answer written in pieces must not wait for the
        # client's delayed ACK (40 ms a call, measured by tests/benchmarks/bench_mcp.py).
        self._socket.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._socket.bind((host, port))  # OSError (port in use) here, before anything starts
        self.port = self._socket.getsockname()[1]
        app = _require_token(build_server(agents).streamable_http_app(host=host, json_response=True), self.token)
        # (uvicorn parses HTTP with httptools where it is installed, h11 otherwise)
        config = uvicorn.Config(app, log_level="warning", lifespan="on", access_log=False)
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._run, name="dgym-mcp-http", daemon=True)

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}/mcp"

    def start(self) -> HttpEndpoint:
        self._thread.start()
        return self

    def _run(self) -> None:
        import asyncio

        # uvloop where it is installed (not on Windows): ~0.1 ms less per call than asyncio's loop
        try:
            import uvloop

            loop_factory = uvloop.new_event_loop
        except ImportError:
            loop_factory = None
        with asyncio.Runner(loop_factory=loop_factory) as runner:
            runner.run(self._server.serve(sockets=[self._socket]))

    def stop(self) -> None:
        self.agents.close()
        self._server.should_exit = True
        self._thread.join(5)

    def client_config(self) -> str:
        """What to give a client: Claude Code's command, and the generic JSON entry."""
        return (f"claude mcp add --transport http dgym {self.url} --header \"Authorization: Bearer {self.token}\"\n"
                f'{{"mcpServers": {{"dgym": {{"type": "http", "url": "{self.url}", '
                f'"headers": {{"Authorization": "Bearer {self.token}"}}}}}}}}')
