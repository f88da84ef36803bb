"""The statistics researchers expect (batch/stats.py) and where the report shows them: pass@k,
McNemar's exact test, the bootstrap interval of a difference in rate, each task's attempts, what
could not be scored; stats.json, summary.md and report.html made from a RUN_DIR."""

from __future__ import annotations

import json
import math
import random

import pytest

from dgym_tui.batch import run_dir as rd
from dgym_tui.batch.report import summary_md, write_all
from dgym_tui.batch.spec import Task, TrialOutcome
from dgym_tui.batch.stats import bootstrap_difference, mcnemar_exact, pass_at_k, stats


def test_pass_at_k_is_the_unbiased_estimate():
    # 5 attempts, 2 resolved: pass@1 = 2/5; pass@2 = 1 - C(3,2)/C(5,2) = 1 - 3/10
    assert pass_at_k(5, 2, 1) == pytest.approx(0.4)
    assert pass_at_k(5, 2, 2) == pytest.approx(0.7)
    assert pass_at_k(5, 2, 4) == 1.0 and pass_at_k(5, 0, 3) == 0.0 and pass_at_k(3, 3, 1) == 1.0
    # it is the chance that k attempts drawn without replacement hold a success, by enumeration
    import itertools

    attempts = [True, False, True, False, False, False]
    for k in range(1, 7):
        draws = list(itertools.combinations(attempts, k))
        assert pass_at_k(6, 2, k) == pytest.approx(sum(any(d) for d in draws) / len(draws))
    with pytest.raises(ValueError):
        pass_at_k(2, 1, 3)


def test_mcnemar_exact_is_the_two_sided_binomial_on_discordant_tasks():
    # 1 against 9: 2 * (C(10,0) + C(10,1)) / 2^10
    assert mcnemar_exact(1, 9) == pytest.approx(2 * 11 / 1024)
    assert mcnemar_exact(9, 1) == mcnemar_exact(1, 9)
    assert mcnemar_exact(0, 0) == 1.0 and mcnemar_exact(3, 3) == 1.0
    assert mcnemar_exact(0, 6) == pytest.approx(2 / 64)
    scipy = pytest.importorskip("scipy.stats", reason="scipy cross-check (not a dependency)")
    for b, c in ((2, 7), (5, 14), (0, 12), (10, 11)):
        assert mcnemar_exact(b, c) == pytest.approx(scipy.binomtest(b, b + c, 0.5).pvalue)


def test_the_bootstrap_interval_covers_the_difference_and_is_seeded():
    rng = random.Random(1)
    pairs = [([rng.random() < 0.4], [rng.random() < 0.7]) for _ in range(200)]
    point, (lo, hi) = bootstrap_difference(pairs)
    a = sum(x for xs, _ in pairs for x in xs) / 200
    b = sum(y for _, ys in pairs for y in ys) / 200
    assert point == pytest.approx(b - a)
    assert lo < point < hi
    # roughly ±1.96 standard errors of a difference of two independent proportions
    se = math.sqrt(a * (1 - a) / 200 + b * (1 - b) / 200)
    assert hi - lo == pytest.approx(2 * 1.96 * se, rel=0.25)
    assert bootstrap_difference(pairs) == (point, (lo, hi))  # the same run, the same interval
    assert bootstrap_difference([]) == (0.0, (0.0, 0.0))


def r(task, arm, status, attempt=1, tokens=1200, cost=None, reason=""):
    return {"trial": f"{task}__{arm}__{attempt}", "task": task, "arm": arm, "attempt": attempt, "status": status,
            "reason": reason or f"{status} because", "steps": 4, "tokens": tokens, "cost": cost, "seconds": 12.0,
            "tool_calls": {"view": 2}}


def three_attempts() -> list[dict]:
    """Two arms, four tasks, three attempts each; one task the pdb arm could never score."""
    rows = {"t1": ("RRR", "RUU"), "t2": ("RRU", "UUU"), "t3": ("UUL", "UUU"), "t4": ("EEE", "RRR")}
    out = []
    for task, (pdb, nopdb) in rows.items():
        for arm, row in (("pdb", pdb), ("no-pdb", nopdb)):
            for attempt, mark in enumerate(row, 1):
                status = {"R": "resolved", "U": "unresolved", "L": "limit", "E": "error"}[mark]
                out.append(r(task, arm, status, attempt,
                             reason="the model failed: 500 from the server" if mark == "E" else ""))
    return out


def test_stats_of_a_batch_with_attempts():
    figures = stats(three_attempts(), [{"name": "pdb", "tools": ["pdb", "view", "edit"], "unlock": {"pdb": 5}},
                                       {"name": "no-pdb", "tools": ["view", "edit"]}], attempts=3)
    pdb, nopdb = figures["arms"]["pdb"], figures["arms"]["no-pdb"]
    assert pdb["counts"] == {"resolved": 5, "unresolved": 3, "limit": 1, "error": 3} and pdb["scored"] == 9
    assert pdb["unlock"] == {"pdb": 5}
    # pass@1 over the tasks pdb scored: t1 3/3, t2 2/3, t3 0/3 -> 5/9; pass@3: t1, t2 -> 2/3
    assert pdb["pass_at_k"]["1"] == {"value": pytest.approx(5 / 9), "tasks": 3}
    assert pdb["pass_at_k"]["3"] == {"value": pytest.approx(2 / 3), "tasks": 3}
    assert nopdb["pass_at_k"]["1"]["value"] == pytest.approx((1 / 3 + 0 + 0 + 1) / 4)
    assert pdb["unscored_tasks"] == {"t4": ["the model failed: 500 from the server"]}
    assert len(pdb["errors"]) == 3 and nopdb["unscored_tasks"] == {}
    assert pdb["cost_total"] is None and pdb["cost_unknown"] == 9 and pdb["tokens_total"] == 9 * 1200
    [pair] = figures["pairs"]
    # tasks both scored: t1 (both), t2 (only pdb), t3 (neither); t4 not scored by pdb
    assert (pair["tasks"], pair["both"], pair["only_first"], pair["only_second"], pair["neither"]) == \
        (3, ["t1"], ["t2"], [], ["t3"])
    assert pair["mcnemar_p"] == 1.0  # one discordant task
    assert pair["difference"] == pytest.approx(1 / 9 - 5 / 9)
    assert figures["tasks"]["t1"] == {"pdb": ["resolved"] * 3, "no-pdb": ["resolved", "unresolved", "unresolved"]}


def write_run(out, results, attempts=3):
    arms = [{"name": "pdb", "tools": ["pdb", "view", "edit"], "unlock": {"pdb": 5}},
            {"name": "no-pdb", "tools": ["view", "edit"]}]
    rd.prepare(out, {"tasks": "/t", "model": "openai/qwen", "arms": arms, "attempts": attempts,
                     "max_steps": 10, "sandbox": "local"}, [Task(id=t, repo="/r") for t in ("t1", "t2", "t3", "t4")])
    for res in results:
        rd.write_trial(out, res["trial"], TrialOutcome(result=res))
    return out


def test_summary_and_stats_json_show_pass_at_k_mcnemar_and_what_was_not_scored(tmp_path):
    out = write_run(tmp_path / "run", three_attempts())
    text = summary_md(out)
    assert "| pdb | pdb after 5 edits, view, edit |" in text
    assert "pass@1 | pass@2 | pass@3 |" in text
    assert "| pdb | 5 | 3 | 1 | 3 | 55.6% |" in text and "| 66.7% |" in text  # pass@3 of pdb
    assert "## pdb against no-pdb (3 tasks scored in both)" in text
    assert "| 1 | 1 | 0 | 1 | 1 | -44.4 pts |" in text
    assert "| t1 | ✓✓✓ | ✓✗✗ |" in text and "| t4 | EEE | ✓✓✓ |" in text
    assert "- pdb: 3 trial(s) in error; 1 task(s) with no scored attempt: t4 (the model failed: 500 from the server)" \
        in text
    assert "unknown (no price for the model)" in text
    write_all(out)
    saved = json.loads((out / "stats.json").read_text())
    assert saved["arms"]["pdb"]["pass_at_k"]["3"]["value"] == pytest.approx(2 / 3)
    assert saved["pairs"][0]["mcnemar_p"] == 1.0 and saved["tasks"]["t4"]["no-pdb"] == ["resolved"] * 3
    page = (out / "report.html").read_text()
    assert 'class="n mcnemar">1</td>' in page and "pass@3</th>" in page and "<h2>Not scored</h2>" in page
    # a local model's cost is unknown: its tokens are charted, not a cost of $0
    assert "<h2>Steps, tokens and time</h2>" in page and "cost (USD)" not in page
