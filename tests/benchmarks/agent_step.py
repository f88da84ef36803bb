"""Benchmark: what the agent itself costs per step, and one pdb tool call, next to the floor.

On the bundled example (local sandbox, `python main.py`), in one run:
  - overhead_ms: an agent's own time per step with the model's time taken out — building the
    prompt (token count, trimming), the policy, the runner's thread hop, the events, the
    observation — median over STEPS steps of a scripted model (instant) calling `pdb p 1+1`;
  - pdb_tool_ms: one `pdb` tool call through the session's runner, from the parsed call to the
    observation ready (pdb's output, the current frame and the code around it), median;
  - the floor: a bare `Debugger.send("p 1+1")` round trip in the same sandbox.
debug-gym 1.3's pdb tool takes about 400 ms for the same call (DESIGN.md). Goals: overhead
under 10 ms, pdb tool under 2 ms. Last line:

    agent_step overhead_ms=X pdb_tool_ms=Y steps=N

Run: python tests/benchmarks/agent_step.py
"""

from __future__ import annotations

import statistics
import sys
import time

from dgym_tui.agent.approval import Answer
from dgym_tui.agent.loop import Agent
from dgym_tui.agent.policy import Policy
from dgym_tui.agent.scripted import ScriptedModel
from dgym_tui.core.events import AGENT
from dgym_tui.core.session import Session
from dgym_tui.examples import example_path

STEPS = 200
CALLS = 300


class TimedModel:
    """A scripted model whose query time is measured, so it can be taken out."""

    def __init__(self, inner):
        self.inner, self.name = inner, inner.name
        self.times: list[float] = []

    def query(self, *args, **kwargs):
        start = time.perf_counter()
        try:
            return self.inner.query(*args, **kwargs)
        finally:
            self.times.append(time.perf_counter() - start)

    def __getattr__(self, name):
        return getattr(self.inner, name)


def median_ms(samples) -> float:
    return statistics.median(samples) * 1000


def main() -> int:
    session = Session(str(example_path()), sandbox="local", entrypoint="python main.py")
    session.start()
    try:
        # the floor: the engine alone
        floor = []
        for _ in range(CALLS):
            t = time.perf_counter()
            session.debugger.send("p 1+1", AGENT, quiet=True)
            floor.append(time.perf_counter() - t)
        # one pdb tool call, from this (non-runner) thread, as the agent's thread makes it
        session.run_tool("pdb", {"command": "p 1+1"}, actor=AGENT)  # warm: the source is recorded
        tool = []
        for _ in range(CALLS):
            t = time.perf_counter()
            out = session.run_tool("pdb", {"command": "p 1+1"}, actor=AGENT)
            tool.append(time.perf_counter() - t)
        assert "Pdb command output:\n2" in out.observation and "Context around the current frame" in out.observation
        # whole agent steps, the model's time taken out
        # each step its own command: the same call again and again is what the repeat guard stops
        steps = [{"tool_calls": [{"name": "pdb", "arguments": {"command": f"p 1+{n}"}}]} for n in range(STEPS)]
        model = TimedModel(ScriptedModel(steps, name="bench"))
        agent = Agent(session, model, mode="auto", max_steps=STEPS, task="measure",
                      policy=Policy.from_config({"allow": ["pdb", "submit"], "ask": []}),
                      auto_answer=lambda r: Answer("approve"))
        marks: list[float] = []
        session.events.subscribe(lambda e: marks.append(time.perf_counter()) if e.kind == "model_request" else None,
                                 replay=False)
        agent.run()
        walls = [b - a for a, b in zip(marks, marks[1:])]
        own = [w - m for w, m in zip(walls, model.times[:len(walls)])]
    finally:
        session.close()
    floor_ms, tool_ms, own_ms = median_ms(floor), median_ms(tool), median_ms(own)
    print(f"floor: Debugger.send p50 {floor_ms:.3f} ms")
    print(f"pdb tool call p50 {tool_ms:.3f} ms (ratio to the floor {tool_ms / floor_ms:.1f}); "
          f"debug-gym 1.3: ~400 ms")
    print(f"agent step p50 {median_ms(walls):.3f} ms, of which the model {median_ms(model.times):.3f} ms; "
          f"the agent's own {own_ms:.3f} ms (ratio to the floor {own_ms / floor_ms:.1f})")
    print(f"agent_step overhead_ms={own_ms:.3f} pdb_tool_ms={tool_ms:.3f} steps={len(own)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
