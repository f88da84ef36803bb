"""Benchmark: what a batch trial costs beyond the agent's own steps, against one `dgym-tui run`
of the same repo (issue 26's goal: at most 1.5 s more on Docker).

Both in one process with litellm already loaded, so neither pays Python's start or the import
(a batch worker pays them once per batch): the floor is the path `dgym-tui run` takes — the
session's sandbox up, the agent, the final test run, the sandbox removed — and the trial is
`run_trial(spec)`, which adds the scoring in a fresh sandbox at the base, the patch, the session
file and the result. The model is the stub OpenAI-compatible server answering in 1 s (an edit,
then submit), so both spend the same 2 s in the model. Runs alternate; medians are printed.

    trial_overhead sandbox=docker run_s=A trial_s=B overhead_s=B-A ratio=B/A

Run: python tests/benchmarks/trial_overhead.py [--sandbox docker|bwrap|local] [--rounds 3]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from batch import DELAY, FIXED, make_tasks  # noqa: E402
from stub_llm_server import StubLLMServer  # noqa: E402


def answer(body: dict) -> dict:
    """Edit the fix in, then submit: two model calls a second each, whatever the run."""
    if not any(m.get("role") == "tool" for m in body.get("messages") or []):
        return {"delay": DELAY, "tool_calls": [{"name": "edit", "arguments": {"path": "calc.py", "new_code": FIXED}}]}
    return {"delay": DELAY, "tool_calls": [{"name": "submit", "arguments": {"message": "fixed"}}]}


def as_run(repo: Path, url: str, sandbox: str) -> float:
    """The path `dgym-tui run REPO --mode auto --yes` takes, timed from the session's start."""
    from dgym_tui.agent.approval import headless_answers
    from dgym_tui.agent.setup import make_agent
    from dgym_tui.config import AgentSettings
    from dgym_tui.core.session import Session

    started = time.perf_counter()
    session = Session(str(repo), sandbox=sandbox)
    try:
        session.start()
        settings = AgentSettings(model="openai/stub", api_base=url, mode="auto", max_steps=5)
        agent = make_agent(session, settings, auto_answer=headless_answers(True, "bench"), on_model_error="stop")
        assert agent.run() == "submitted", agent.outcome
        assert session.run_tests().ok
    finally:
        session.close()
    return time.perf_counter() - started


def as_trial(repo: Path, url: str, sandbox: str) -> float:
    from dgym_tui.batch.spec import Arm, Task, TrialSpec
    from dgym_tui.batch.trial import run_trial

    spec = TrialSpec(task=Task(id=repo.name, repo=str(repo)), arm=Arm("all", []), attempt=1,
                     model="openai/stub", api_base=url, sandbox=sandbox, yes=True, max_steps=5)
    started = time.perf_counter()
    outcome = run_trial(spec)
    seconds = time.perf_counter() - started
    assert outcome.result["status"] == "resolved", outcome.result
    return seconds


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sandbox", default="docker", choices=["docker", "bwrap", "local"])
    p.add_argument("--rounds", type=int, default=3)
    args = p.parse_args()
    from dgym_tui.agent.litellm_model import warm_up

    warm_up()
    with tempfile.TemporaryDirectory(prefix="dgym-bench-overhead-") as tmp:
        names = make_tasks(Path(tmp), 1)
        repo = Path(tmp) / names[0]
        server = StubLLMServer().start()
        server.push(*[answer] * (4 * (2 * args.rounds + 2)))
        try:
            as_run(repo, server.url, args.sandbox)  # one of each first: image, caches, the engine warm
            as_trial(repo, server.url, args.sandbox)
            runs, trials = [], []
            for _ in range(args.rounds):
                runs.append(as_run(repo, server.url, args.sandbox))
                trials.append(as_trial(repo, server.url, args.sandbox))
                print(f"run {runs[-1]:.2f} s, trial {trials[-1]:.2f} s", flush=True)
        finally:
            server.stop()
    run_s, trial_s = statistics.median(runs), statistics.median(trials)
    print(f"model time in each: {2 * DELAY:.1f} s")
    print(f"trial_overhead sandbox={args.sandbox} run_s={run_s:.2f} trial_s={trial_s:.2f} "
          f"overhead_s={trial_s - run_s:.2f} ratio={trial_s / run_s:.2f}")


if __name__ == "__main__":
    main()
