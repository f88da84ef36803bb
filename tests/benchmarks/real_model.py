"""Benchmark: a real small model driving the agent, native vs text vs json vs auto tool calls.

llama.cpp's llama-server with Qwen2.5-Coder-Instruct (0.5B or 1.5B, built by
tests/setup-real-model.sh) on 127.0.0.1, the model's own template (--jinja), the agent headless as
`dgym-tui run --mode auto --yes` runs it, on the bundled example (or the repos given). Per format:
  - valid: the share of steps whose reply held a tool call that ran (parsed, schema-checked, executed);
  - first_stop: the step at which the agent first stopped the program somewhere in pdb;
  - switched: the step at which auto went over to JSON (or text) actions;
  - resolved: the repo's tests pass at the end;
  - s/step: seconds per step (the model's time, mostly).
The floor is the model itself: a native run in which the model makes no call has valid 0%.

Run: python tests/benchmarks/real_model.py [--model 0.5b|1.5b] [--steps 12] [--sandbox docker]
     [--formats native,text,json,auto] [--temperature T] [REPO ...]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from real_model import LlamaServer, step_stats  # noqa: E402

from dgym_tui.agent.approval import headless_answers  # noqa: E402
from dgym_tui.agent.loop import Agent  # noqa: E402
from dgym_tui.agent.policy import Policy  # noqa: E402
from dgym_tui.core.session import Session  # noqa: E402
from dgym_tui.examples import example_path  # noqa: E402


def one_run(repo: str, server: LlamaServer, fmt: str, steps: int, sandbox: str, temperature: float | None) -> dict:
    session = Session(repo, sandbox=sandbox)
    try:
        session.start()
        if session.state.program == "error":
            raise SystemExit(f"the sandbox did not start: {session.state.error}")
        model = server.model(**({} if temperature is None else {"temperature": temperature}))
        agent = Agent(session, model, mode="auto", policy=Policy.from_config(None), max_steps=steps,
                      auto_answer=headless_answers(True, "this benchmark"), on_model_error="stop",
                      tool_format=fmt)
        started = time.perf_counter()
        outcome = agent.run()
        seconds = time.perf_counter() - started
        stats = step_stats(session.events.history)
        resolved = session.run_tests().ok
        repeats = agent.stuck
        return {**stats, "outcome": outcome, "resolved": resolved, "seconds": seconds, "stuck": repeats}
    finally:
        session.close()


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("repos", nargs="*", help="repositories (default: the bundled example)")
    p.add_argument("--model", choices=["0.5b", "1.5b"], default="0.5b")
    p.add_argument("--steps", type=int, default=12)
    p.add_argument("--sandbox", default="local")
    p.add_argument("--formats", default="native,text,json,auto")
    p.add_argument("--context", type=int, default=16384)
    p.add_argument("--temperature", type=float, default=None,
                   help="default: 0 (greedy, repeatable); give the server's own default with -1")
    args = p.parse_args()
    temperature = 0.0 if args.temperature is None else (None if args.temperature < 0 else args.temperature)
    repos = args.repos or [str(example_path())]
    print(f"model: Qwen2.5-Coder-{args.model.upper()} Q4_K_M, llama-server --jinja -c {args.context}; "
          f"{args.steps} steps max; sandbox {args.sandbox}; temperature {temperature}")
    print(f"{'repo':<14} {'format':<7} {'steps':>5} {'valid':>7} {'switched':>8} {'first_stop':>10} "
          f"{'resolved':>8} {'s/step':>7}  outcome")
    rows = []
    with LlamaServer(args.model, context=args.context) as server:
        for repo in repos:
            for fmt in args.formats.split(","):
                r = one_run(repo, server, fmt, args.steps, args.sandbox, temperature)
                rows.append(r)
                share = r["valid"] / r["steps"] if r["steps"] else 0.0
                print(f"{Path(repo).name[:14]:<14} {fmt:<7} {r['steps']:>5} {share:>6.0%} "
                      f"{str(r['switched'] or '-'):>8} {str(r['first_stop'] or '-'):>10} "
                      f"{'yes' if r['resolved'] else 'no':>8} {r['seconds'] / max(1, r['steps']):>7.1f}  "
                      f"{r['outcome']}{': ' + r['stuck'] if r['stuck'] else ''}", flush=True)
    valid = [r["valid"] / r["steps"] for r in rows if r["steps"]]
    print(f"real_model valid_share_median={statistics.median(valid) if valid else 0:.2f} runs={len(rows)}")


if __name__ == "__main__":
    main()
