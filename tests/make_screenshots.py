"""Make the manual's pictures from the real app: python tests/make_screenshots.py [NAME ...]

Each picture is the app's own SVG screenshot (Textual's pilot, app.save_screenshot), or, for a
batch, what the batch itself prints and reports, made from a real batch: the scripted comparison
of getting started (docs/getting-started.md), run on all six tasks of examples/minibugs.

    main-dgym-dark, main-dgym-light   docs/: the debugger, stopped at a conditional breakpoint
    agent-approval                    docs/screens/: the agent's edit waiting for the person
    seeker-person                     docs/screens/: the agent asks the person, as its seeker
    review-inbox                      docs/screens/: the review inbox of that batch
    batch-progress                    docs/screens/: the batch's progress table (rich, as in a terminal)
    report                            docs/report/: the batch report's charts (rates, distributions, tools)

tests/test_docs.py fails when one of them is missing, or when the manual shows a picture that is
not in PICTURES. Sandboxes are local ones (nothing to install), the models scripted.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from types import SimpleNamespace

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
SIZE = (160, 48)
# name -> the files it makes, relative to docs/
PICTURES = {
    "main-dgym-dark": ["main-dgym-dark.svg"],
    "main-dgym-light": ["main-dgym-light.svg"],
    "agent-approval": ["screens/agent-approval.svg"],
    "seeker-person": ["screens/seeker-person.svg"],
    "review-inbox": ["screens/review-inbox.svg"],
    "batch-progress": ["screens/batch-progress.svg"],
    "report": ["report/rates.svg", "report/distributions.svg", "report/tools.svg"],
}
# The comparison getting started runs (there with --only fib --only clamp), on every task.
ARMS = ["--arm", "with-pdb=pdb,view,listdir,grep,eval,edit", "--arm", "no-pdb=view,listdir,grep,eval,edit"]
# The seeker's picture: a fixer that asks about the catalog's pages (the example's first bug).
QUESTION = "What do number and self.page_count(size) hold at shopcart/catalog.py:92 when test_pages_cover_every_product_exactly_once runs?"
FIXER = {"name": "shopcart_fixer", "steps": [{"text": "I need the values in pages().",
                                                "tool_calls": [{"name": "debug", "arguments": {"question": QUESTION}}]}]}


def copy_example(tmp: str) -> Path:
    from dgym_tui.examples import example_path

    repo = Path(tmp) / "shopcart"
    shutil.copytree(example_path(), repo, ignore=shutil.ignore_patterns("__pycache__"))
    return repo


async def until(pilot, predicate, timeout: float = 60.0) -> None:
    for _ in range(int(timeout / 0.05)):
        if predicate():
            return
        await pilot.pause(0.05)
    raise TimeoutError("the screen never got there")


def save(app, name: str) -> Path:
    target = DOCS / PICTURES[name][0]
    target.parent.mkdir(parents=True, exist_ok=True)
    app.save_screenshot(filename=target.name, path=str(target.parent))
    return target


async def debugger(theme: str) -> Path:
    """A local session on the bundled example, stopped at a breakpoint inside the order loop,
    with the variables, stack and transcript filled in."""
    from dgym_tui.core.session import Session
    from dgym_tui.ui.app import DgymApp

    with tempfile.TemporaryDirectory() as tmp:
        session = Session(str(copy_example(tmp)), sandbox="local", entrypoint="python main.py")
        app = DgymApp(session, theme=theme)
        async with app.run_test(size=SIZE) as pilot:
            await until(pilot, lambda: session.state.program == "stopped")
            app.main.source.goto_line(56)
            await until(pilot, lambda: app.main.source.path == "main.py")
            app.calls.set_breakpoint("shopcart/inventory.py", 56, cond="sku == 'MUG-01'")
            app.calls.set_breakpoint("main.py", 76)
            app.send_pdb("continue")
            await until(pilot, lambda: getattr(session.state.stop, "line", None) == 76)
            app.send_pdb("p order.cart.customer")
            app.send_pdb("clear 2")
            app.send_pdb("continue")
            await until(pilot, lambda: getattr(session.state.stop, "file", None) == "shopcart/inventory.py")
            await until(pilot, lambda: app.main.source.path == "shopcart/inventory.py")
            await app.workers.wait_for_complete()
            await pilot.pause(0.5)
            out = save(app, f"main-{theme}")
        session.close()
    return out


async def agent_approval() -> Path:
    """The bundled script in auto mode: pdb's calls run, its first edit waits for the person."""
    from dgym_tui.config import AgentSettings
    from dgym_tui.core.session import Session
    from dgym_tui.ui.app import DgymApp

    with tempfile.TemporaryDirectory() as tmp:
        session = Session(str(copy_example(tmp)), sandbox="local")
        app = DgymApp(session, agent_settings=AgentSettings(model="scripted:shopcart", mode="auto", max_steps=30))
        async with app.run_test(size=SIZE) as pilot:
            await until(pilot, lambda: (w := app.main.state.agent.waiting) is not None and w.tool == "edit", 120)
            await app.workers.wait_for_complete()
            await pilot.pause(0.5)
            out = save(app, "agent-approval")
        session.close()
    return out


async def seeker_person() -> Path:
    """--seeker person: the fixer's debug(question) waits; `a` opens the answer prompt, half typed."""
    from dgym_tui.config import AgentSettings
    from dgym_tui.core.session import Session
    from dgym_tui.ui.app import DgymApp

    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "fixer.json"
        script.write_text(json.dumps(FIXER))
        session = Session(str(copy_example(tmp)), sandbox="local")
        settings = AgentSettings(model=f"scripted:{script}", seeker="person", mode="auto", max_steps=10)
        app = DgymApp(session, agent_settings=settings)
        async with app.run_test(size=SIZE) as pilot:
            await until(pilot, lambda: (w := app.main.state.agent.waiting) is not None and w.tool == "answer", 120)
            await pilot.pause(0.5)
            app.main.query_one("AgentPanel").focus()
            await pilot.press("a")
            await pilot.pause(0.5)
            await pilot.press(*"catalog.py:91: range(1, 3) stops at page 2")
            await pilot.pause(0.5)
            out = save(app, "seeker-person")
            await pilot.press("escape")
        session.close()
    return out


def scripted_batch(out: Path) -> Path:
    """The scripted with/without-pdb comparison on all of examples/minibugs, run by the CLI."""
    if not (out / "report.html").exists():
        command = [sys.executable, "-m", "dgym_tui", "batch", str(ROOT / "examples" / "minibugs"),
                   "--model", f"scripted:{DOCS / 'examples' / 'minibugs.json'}", "--out", str(out), "--yes",
                   "--sandbox", "local", "--workers", "2", *ARMS]
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    return out


async def review_inbox(run: Path) -> Path:
    from dgym_tui.review.inbox import RunDir
    from dgym_tui.ui.screens.review import ReviewApp

    app = ReviewApp(RunDir.open(run))
    async with app.run_test(size=(140, 30)) as pilot:
        await pilot.pause(1.0)
        await app.workers.wait_for_complete()
        await pilot.pause(0.5)
        return save(app, "review-inbox")


def batch_progress(run: Path) -> Path:
    """The live table the batch shows in a terminal, as it stands at the end of the run."""
    from rich.console import Console

    from dgym_tui.batch import run_dir as rd
    from dgym_tui.batch.progress import LiveProgress
    from dgym_tui.batch.result import TrialResult

    progress = LiveProgress(open(os.devnull, "w"))
    progress.SHOWN_DONE = 12
    results = rd.load_results(run)
    progress.tally.total = len(results)
    for result in results:
        result = result if isinstance(result, TrialResult) else TrialResult.from_dict(result)
        spec = SimpleNamespace(trial_id=f"{result.task}__{result.arm}__{result.attempt}", attempt=result.attempt,
                               task=SimpleNamespace(id=result.task), arm=SimpleNamespace(name=result.arm))
        progress.finished(spec, result)
    console = Console(record=True, width=100, file=open(os.devnull, "w"), force_terminal=True, color_system="truecolor")
    console.print(progress._render())
    target = DOCS / PICTURES["batch-progress"][0]
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(console.export_svg(title="dgym-tui batch"), encoding="utf-8")
    return target


def report_charts(run: Path) -> list[Path]:
    """The three charts report.html holds inline, each as an SVG file of its own."""
    page = (run / "report.html").read_text(encoding="utf-8")
    charts = re.findall(r'<div class="chart">\s*(<svg.*?</svg>)\s*</div>', page, re.S)
    if len(charts) != 3:
        raise RuntimeError(f"report.html holds {len(charts)} charts, not 3 (rates, distributions, tools)")
    out = []
    for rel, svg in zip(PICTURES["report"], charts):
        target = DOCS / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text('<?xml version="1.0" encoding="utf-8" standalone="no"?>\n' + svg + "\n", encoding="utf-8")
        out.append(target)
    return out


async def main(names: list[str]) -> None:
    os.environ.setdefault("DGYM_TUI_CONFIG_DIR", tempfile.mkdtemp(prefix="dgym-shots-config-"))
    os.environ.setdefault("DGYM_TUI_DATA_DIR", tempfile.mkdtemp(prefix="dgym-shots-data-"))
    wanted = names or list(PICTURES)
    unknown = sorted(set(wanted) - set(PICTURES))
    if unknown:
        raise SystemExit(f"no picture named {', '.join(unknown)} (pictures: {', '.join(PICTURES)})")
    if "main-dgym-dark" in wanted:
        print(await debugger("dgym-dark"))
    if "main-dgym-light" in wanted:
        print(await debugger("dgym-light"))
    if "agent-approval" in wanted:
        print(await agent_approval())
    if "seeker-person" in wanted:
        print(await seeker_person())
    if {"review-inbox", "batch-progress", "report"} & set(wanted):
        with tempfile.TemporaryDirectory() as tmp:
            # DGYM_SHOTS_RUN=DIR keeps the batch there, to make the pictures again without rerunning it
            run = scripted_batch(Path(os.environ.get("DGYM_SHOTS_RUN") or Path(tmp) / "run"))
            if "report" in wanted:
                print(*report_charts(run), sep="\n")
            if "batch-progress" in wanted:
                print(batch_progress(run))
            if "review-inbox" in wanted:
                print(await review_inbox(run))


if __name__ == "__main__":
    sys.exit(asyncio.run(main(sys.argv[1:])))
