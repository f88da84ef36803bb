"""The batch report: the figures (Wilson interval, the paired table), summary.md, and report.html
opened in a real headless Chromium (tests/browser.py) showing each arm's rate, its charts, and
each trial linked to its replay page, which opens too. Results are written into a RUN_DIR the
way the driver writes them (run_dir.prepare / write_trial), the sessions being real ones."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from browser import Browser, chromium_path, file_url

from dgym_tui.batch import run_dir as rd
from dgym_tui.batch.report import summary_md, wilson, write_all
from dgym_tui.batch.stats import stats
from dgym_tui.batch.spec import Task, TrialOutcome
from dgym_tui.demo import demo_session


def test_wilson_interval_matches_the_textbook():
    # Wilson 95% for 8 of 10: 0.4902 – 0.9433 (e.g. Newcombe 1998, method 3)
    lo, hi = wilson(8, 10)
    assert (round(lo, 4), round(hi, 4)) == (0.4902, 0.9433)
    assert wilson(0, 0) == (0.0, 1.0)
    lo, hi = wilson(0, 5)
    assert lo == 0.0 and 0.43 < hi < 0.44


def result(task, arm, status, attempt=1, steps=3, cost=0.002, tools=None):
    return {"task": task, "arm": arm, "attempt": attempt, "status": status, "reason": f"{status} because",
            "steps": steps, "cost": cost, "seconds": 4.5, "tool_calls": tools or {"view": 2}}


def test_paired_counts_tasks_scored_in_both_arms():
    results = [result("a", "pdb", "resolved"), result("a", "nopdb", "resolved"),
               result("b", "pdb", "resolved"), result("b", "nopdb", "unresolved"),
               result("c", "pdb", "limit"), result("c", "nopdb", "unresolved", attempt=1),
               result("c", "nopdb", "resolved", attempt=2),
               result("d", "pdb", "unresolved"), result("d", "nopdb", "error"),  # not scored in both
               result("e", "pdb", "unresolved"), result("e", "nopdb", "limit")]
    [p] = stats(results, [{"name": "pdb"}, {"name": "nopdb"}], attempts=2)["pairs"]
    assert {k: p[k] for k in ("both", "only_first", "only_second", "neither")} == \
        {"both": ["a"], "only_first": ["b"], "only_second": ["c"], "neither": ["e"]}


def test_an_arm_whose_model_has_no_price_costs_unknown_not_zero():
    from dgym_tui.batch.report import arm_stats, total_cost

    local = arm_stats([result("a", "x", "resolved", cost=None), result("b", "x", "limit", cost=None)], ["x"])["x"]
    assert total_cost(local) == "unknown (no price for the model)"
    mixed = arm_stats([result("a", "x", "resolved", cost=0.5), result("b", "x", "limit", cost=None)], ["x"])["x"]
    assert total_cost(mixed) == "$0.5000 (+1 unknown)"


def make_run_dir(out: Path) -> Path:
    tasks = [Task(id=f"t{i}", repo="/r") for i in range(5)]
    config = {"tasks": "/r", "model": "openai/stub", "arms": [{"name": "with-pdb", "tools": ["pdb", "view"]},
                                                             {"name": "no-pdb", "tools": ["view"]}],
              "attempts": 1, "max_steps": 30, "sandbox": "docker"}
    rd.prepare(out, config, tasks)
    statuses = {"with-pdb": ["resolved", "resolved", "resolved", "unresolved", "error"],
                "no-pdb": ["resolved", "unresolved", "limit", "unresolved", "resolved"]}
    session = demo_session().read_bytes()
    for arm, row in statuses.items():
        for i, status in enumerate(row):
            tools = {"pdb": 4, "view": 1} if arm == "with-pdb" else {"view": 3, "edit": 1}
            r = result(f"t{i}", arm, status, steps=3 + i, cost=0.001 * (i + 1), tools=tools)
            # a hostile reason: markup and a terminal escape must show as text
            r["reason"] = "<b>bold</b> \x1b[31mred"
            rd.write_trial(out, f"t{i}__{arm}__1", TrialOutcome(result=r, session=session if i == 0 else b"",
                                                              patch="--- a/x\n+++ b/x\n"))
    return out


def test_summary_markdown(tmp_path):
    out = make_run_dir(tmp_path / "run")
    text = summary_md(out)
    # with-pdb: 3 of 4 scored (the error apart) = 75.0%; no-pdb: 2 of 5 = 40.0%
    assert "| with-pdb | 3 | 1 | 0 | 1 | 75.0% |" in text
    assert "| no-pdb | 2 | 2 | 1 | 0 | 40.0% |" in text
    lo, hi = wilson(3, 4)
    assert f"{100 * lo:.1f}%–{100 * hi:.1f}%" in text
    assert "| 1 | 2 | 0 | 1 |" in text  # t0 both; t1, t2 only with-pdb; t3 neither; t4 not scored in both
    assert "\x1b" not in text
    # made again from RUN_DIR alone, as the README says
    (out / "summary.md").unlink(missing_ok=True)
    done = subprocess.run([sys.executable, "-m", "dgym_tui.batch.report", str(out)], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0 and (out / "summary.md").read_text() == text and (out / "report.html").exists()
    done = subprocess.run([sys.executable, "-m", "dgym_tui.batch.report", str(out / "trials")], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 2 and "not a batch's run directory" in done.stderr


@pytest.mark.skipif(chromium_path() is None, reason="no chromium installed (.ci/run installs it)")
async def test_report_opens_in_a_browser_with_each_arms_rate(tmp_path):
    out = make_run_dir(tmp_path / "run")
    write_all(out)
    assert (out / "summary.md").exists() and (out / "replays" / "t0__with-pdb__1.html").exists()
    assert not (out / "replays" / "t1__with-pdb__1.html").exists()  # an empty session: no replay, no link
    assert len((out / "results.jsonl").read_text().splitlines()) == 10
    page_text = (out / "report.html").read_text()
    assert "http://" not in page_text.replace("http://www.w3.org", "")  # self-contained (SVG namespaces aside)
    async with Browser() as browser:
        page = await browser.page()
        await page.send("Network.enable")
        await page.goto(file_url(out / "report.html"))
        requests = [e for e in page.events if e["method"] == "Network.requestWillBeSent"]
        assert len(requests) == 1  # the page itself: charts inline, nothing fetched
        rates = await page.eval("Object.fromEntries(Array.from(document.querySelectorAll('#rates tr[data-arm]'))"
                                ".map(r => [r.dataset.arm, r.querySelector('.rate').textContent]))")
        assert rates == {"with-pdb": "75.0%", "no-pdb": "40.0%"}
        assert await page.eval("document.querySelectorAll('.chart svg').length") == 3  # rates, distributions, tools
        assert await page.eval("document.querySelector('.chart svg').getBoundingClientRect().height") > 50
        # markup from a trial is text, its escape a visible stand-in
        reason = await page.eval("document.querySelector('#trials td:nth-child(3)').textContent")
        assert reason.startswith("<b>bold</b> ") and "\x1b" not in reason
        assert await page.eval("document.querySelectorAll('#trials b').length") == 0
        links = await page.eval("Array.from(document.querySelectorAll('#trials a')).map(a => a.href)")
        assert len(links) == 2 and all(link.endswith("__1.html") for link in links)
        await page.goto(links[0])
        assert await page.wait_for("document.getElementById('caption') && "
                                   "document.getElementById('caption').textContent")
    result_t0 = json.loads((out / "trials" / "t0__with-pdb__1" / "result.json").read_text())
    assert result_t0["trial"] == "t0__with-pdb__1" and result_t0["format"] == 1
