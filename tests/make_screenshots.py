"""Export README screenshots (SVG) from the real app: python tests/make_screenshots.py

A local session on the bundled example, stopped at a breakpoint inside the order loop, with
the variables, stack and transcript filled in; saved to docs/ in both of our themes.
"""

from __future__ import annotations

import asyncio
import shutil
import sys
import tempfile
from pathlib import Path

from dgym_tui.core.session import Session
from dgym_tui.examples import example_path
from dgym_tui.ui.app import DgymApp

OUT = Path(__file__).resolve().parents[1] / "docs"


async def shoot(theme: str, size: tuple[int, int]) -> Path:
    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp) / "shopcart"
        shutil.copytree(example_path(), repo, ignore=shutil.ignore_patterns("__pycache__"))
        session = Session(str(repo), sandbox="local", entrypoint="python main.py")
        app = DgymApp(session, theme=theme)
        async with app.run_test(size=size) as pilot:
            async def until(predicate, timeout=30.0):
                for _ in range(int(timeout / 0.05)):
                    if predicate():
                        return
                    await pilot.pause(0.05)
                raise TimeoutError

            await until(lambda: session.state.program == "stopped")
            app.main.source.goto_line(56)
            await until(lambda: app.main.source.path == "main.py")
            app.calls.set_breakpoint("shopcart/inventory.py", 56, cond="sku == 'MUG-01'")
            app.calls.set_breakpoint("main.py", 76)
            app.send_pdb("continue")
            await until(lambda: getattr(session.state.stop, "line", None) == 76)
            app.send_pdb("p order.cart.customer")
            app.send_pdb("clear 2")
            app.send_pdb("continue")
            await until(lambda: getattr(session.state.stop, "file", None) == "shopcart/inventory.py")
            await until(lambda: app.main.source.path == "shopcart/inventory.py")
            await app.workers.wait_for_complete()
            await pilot.pause(0.5)
            OUT.mkdir(exist_ok=True)
            name = f"main-{theme}.svg"
            app.save_screenshot(filename=name, path=str(OUT))
        session.close()
    return OUT / name


async def main() -> None:
    for theme in ("dgym-dark", "dgym-light"):
        print(await shoot(theme, (160, 48)))


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
