"""The HTML export, opened in a real headless Chromium (tests/browser.py, over the DevTools
protocol): stepping the demo's timeline shows the recorded stop's line and values, and a session
full of `</script>`, markup and terminal escapes renders all of it as text."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from browser import Browser, chromium_path, file_url
from session_samples import hostile_session, long_session

from dgym_tui.core.replayer import Replayer
from dgym_tui.core.session_file import read_session
from dgym_tui.demo import demo_session

pytestmark = pytest.mark.skipif(chromium_path() is None, reason="no chromium installed (.ci/run installs it)")


def export(session, out: Path, fmt: str = "html") -> str:
    done = subprocess.run([sys.executable, "-m", "dgym_tui", "export", str(session), "--format", fmt, "-o", str(out)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return out.read_text(encoding="utf-8")


def recorded(session) -> tuple[dict, list[dict]]:
    lines = Path(session).read_text(encoding="utf-8").splitlines()
    return json.loads(lines[0]), [json.loads(line) for line in lines[1:] if line.strip()]


async def test_demo_replays_in_a_browser(tmp_path):
    html = export(demo_session(), tmp_path / "demo.html")
    _, events = recorded(demo_session())
    # the first stop inside the package's own code, and its file's text as recorded
    stop = next(e["data"] for e in events if e["kind"] == "stop" and e["data"]["file"].startswith("shopcart/"))
    text = next(e["data"]["text"] for e in events
                if e["kind"] == "file" and e["data"]["path"] == stop["file"] and e["data"]["text"])
    expected_line = text.split("\n")[stop["line"] - 1].strip()
    name, value = next(iter(stop["locals"].items()))
    assert "http://" not in html.split("<script type=\"application/json\"")[0].replace("http-equiv", "")

    async with Browser() as browser:
        page = await browser.page()
        await page.send("Network.enable")
        await page.goto(file_url(tmp_path / "demo.html"))
        requests = [e for e in page.events if e["method"] == "Network.requestWillBeSent"]
        assert len(requests) == 1, [r["params"]["request"]["url"] for r in requests]  # the page itself, nothing else
        # it opens at the program's first stop, as the app's replay does
        assert "stopped at tests/test_catalog.py:52" in await page.eval("document.getElementById('caption').textContent")
        marks = await page.eval("Array.from(document.querySelectorAll('#timeline .m')).map(m => m.textContent).join('')")
        assert "▸" in marks and "◆" in marks and "●" in marks
        # the same marks as the app's replay timeline, squeezed into as many columns
        replayer = Replayer(read_session(demo_session()).events)
        assert marks == "".join(m.glyph if m else "·" for m in replayer.marks(len(marks)))
        # step with the "next" button until the stop in the package's code
        for _ in range(400):
            caption = await page.eval("document.getElementById('next').click(); document.getElementById('caption').textContent")
            if f"stopped at {stop['file']}:{stop['line']}" in caption:
                break
        else:
            pytest.fail(f"never reached the stop at {stop['file']}:{stop['line']}")
        assert await page.eval("document.getElementById('source-path').textContent") == stop["file"]
        current = await page.eval("document.querySelector('#source .line.current').textContent")
        assert str(stop["line"]) in current and expected_line in current
        rows = await page.eval("Array.from(document.querySelectorAll('#vars tr')).map(r => r.textContent)")
        assert name + value in rows
        stack = await page.eval("document.querySelector('#stack li.selected').textContent")
        assert stop["function"] in stack
        # the agent's breakpoint is drawn on its line
        marked = await page.eval("Array.from(document.querySelectorAll('#source .line.brk .ln')).map(n => n.textContent)")
        assert str(stop["line"]) in marked
        # back one step: no longer that stop; to the end: the final diff and outcome are there
        await page.eval("document.getElementById('prev').click()")
        assert f"stopped at {stop['file']}:{stop['line']}" not in await page.eval(
            "document.getElementById('caption').textContent")
        await page.eval("document.getElementById('last').click()")
        where = await page.eval("document.getElementById('where').textContent")
        frames, of = where.split(" · ")[0].removeprefix("frame ").split(" / ")
        assert frames == of and int(of) > 100, where
        assert "diff --git" in await page.eval("document.getElementById('diff').textContent")
        # the transcript shows the agent's tool calls and the person's decisions
        transcript = await page.eval("document.getElementById('transcript').textContent")
        assert "→ pdb(" in transcript or "→ edit(" in transcript
        assert "approved" in transcript


async def test_session_text_never_runs_as_script(tmp_path):
    html = export(hostile_session(tmp_path / "evil.jsonl"), tmp_path / "evil.html")
    assert html.count("</script>") == 2  # the data block's and the page script's own: none from the session
    assert "\x1b" not in html and "<!--" not in html and "<b id" not in html
    async with Browser() as browser:
        page = await browser.page()
        await page.goto(file_url(tmp_path / "evil.html"))
        await page.wait_for("document.body.dataset.frame !== undefined")
        title = await page.eval("document.title")
        assert title.startswith("dgym-tui session: evil</title><script>")  # the name, as text
        assert await page.eval("document.querySelectorAll('script').length") == 2
        assert await page.eval("document.querySelectorAll('img, b, #bold').length") == 0
        # the program's output and the hint: shown, escapes as visible stand-ins, bidi control neutralised
        await page.eval("document.getElementById('last').click()")
        console = await page.eval("document.getElementById('console').textContent")
        assert "</script><script>document.title='pwned'</script><!-- <img src=x" in console
        assert "␛]0;retitled␇␛[31mred" in console and "\x1b" not in console and "\u202e" not in console
        transcript = await page.eval("document.getElementById('transcript').textContent")
        assert "hint for the agent: </script><script>" in transcript
        # the stop: values and the source line with `</script>` in it, as text
        await page.eval("document.getElementById('first').click()")
        for _ in range(10):
            if "evil.py:2" in await page.eval("document.getElementById('caption').textContent"):
                break
            await page.eval("document.getElementById('next').click()")
        vars_text = await page.eval("document.getElementById('vars').textContent")
        assert "'</script><b id=bold>bold</b>'" in vars_text and "␛[2J␛]0;t␇" in vars_text
        current = await page.eval("document.querySelector('#source .line.current').textContent")
        assert "</script><script>document.title=\"src\"</script>" in current
        assert await page.eval("document.title") == title


async def test_a_long_session_stays_usable(tmp_path):
    """1,000 steps: the page opens at the first stop, goes to the end and back, and keeps the
    transcript to its last entries (the DOM does not grow with the session)."""
    export(long_session(tmp_path / "long.jsonl", 1000), tmp_path / "long.html")
    async with Browser() as browser:
        page = await browser.page()
        await page.goto(file_url(tmp_path / "long.html"))
        assert "stopped at long.py:2" in await page.eval("document.getElementById('caption').textContent")
        await page.eval("document.getElementById('last').click()")
        frame, of = (await page.eval("document.getElementById('where').textContent")).split(" · ")[0][6:].split(" / ")
        assert frame == of and int(of) >= 4000  # each step: reply, call, pdb input, stop, result
        number = await page.eval("document.querySelector('#source .line.current .ln').textContent")
        code = await page.eval("document.querySelector('#source .line.current .code').textContent")
        assert (number, code) == ("1001", "x1000 = 1000")
        entries = await page.eval("document.querySelectorAll('#transcript .entry').length")
        assert 0 < entries <= 400
        assert "pdb: > long.py(1001)" in await page.eval("document.querySelector('#transcript .entry:last-child').textContent")
        assert "i1000" in await page.eval("document.getElementById('vars').textContent")
        await page.eval("document.getElementById('first').click()")
        assert await page.eval("document.querySelectorAll('#transcript .entry').length") < entries
        # the start: before the first stop, nothing to show yet
        assert await page.eval("document.querySelector('#source .line.current') === null")
        assert "agent started" in await page.eval("document.getElementById('transcript').textContent")
