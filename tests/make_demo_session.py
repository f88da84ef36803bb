"""Record the bundled demo session (dgym_tui/demo/shopcart.jsonl) that `dgym-tui demo` replays.

A real session on a copy of the bundled example (local sandbox, real pdb, real git) with the
scripted agent `scripted:shopcart` (not an LLM) and a simulated person at the keyboard, who
approves the calls that ask, rejects the first fix of reserve() with a comment, and tries the
second before keeping it. Run after a change to the event schema, the example or the script:

    python tests/make_demo_session.py
"""

from __future__ import annotations

import shutil
import sys
import tempfile
import threading
from pathlib import Path

from dgym_tui.agent.approval import Answer
from dgym_tui.agent.setup import make_agent
from dgym_tui.config import AgentSettings
from dgym_tui.core.session import Session
from dgym_tui.core.session_file import SessionWriter
from dgym_tui.demo import DEMO
from dgym_tui.examples import example_path

# The person: what they answer to each call that asks, in order (edits and the submit).
ANSWERS = [Answer("approve"),                                                    # the catalog fix
           Answer("reject", "available() already answers 0 for an unknown SKU: use it"),
           Answer("try"), Answer("approve"),                                     # reserve(): tried, kept
           Answer("approve"), Answer("approve"),                                 # pricing, cart
           Answer("approve")]                                                    # submit


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp) / "shopcart"
        shutil.copytree(example_path(), repo, ignore=shutil.ignore_patterns("__pycache__", ".pytest_cache"))
        session = Session(str(repo), sandbox="auto")  # the container when an engine answers
        settings = AgentSettings(model="scripted:shopcart", mode="auto", max_steps=40)
        out = DEMO.with_suffix(".tmp")
        out.unlink(missing_ok=True)
        writer = SessionWriter.open(out, session, mode=settings.mode, model=settings.model)
        try:
            session.start()
            agent = make_agent(session, settings)
            answers = list(ANSWERS)

            def person(event) -> None:
                if event.kind == "approval_requested":
                    answer = answers.pop(0)
                    threading.Timer(0.3, agent.answer, args=(event.data.call_id, answer)).start()

            session.events.subscribe(person, replay=False)
            outcome = agent.run()
            tests = session.run_tests()
        finally:
            session.close()
            writer.close()
        print(f"outcome: {outcome}; tests: {tests.summary()}; answers left: {len(answers)}")
        if outcome != "submitted" or not tests.ok or answers:
            print("the demo did not go as scripted: not saved", file=sys.stderr)
            return 1
        out.replace(DEMO)
        print(f"saved {DEMO} ({DEMO.stat().st_size:,} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
