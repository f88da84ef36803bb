"""The batch's report: results.jsonl, stats.json, summary.md and a self-contained report.html,
with every trial's HTML replay in replays/. Made from RUN_DIR alone (run_dir.load_results), so it
can be made again at any time: `write_all(run_dir)`.

The figures are batch/stats.py's: per arm the resolved rate over the scored trials (errors, ours
or the provider's, are counted apart and never as unresolved) with a 95% Wilson interval and, with
several attempts, pass@k; for each pair of arms the tasks both / only one / neither resolved,
McNemar's exact p and the difference in rate with a bootstrap interval; each task's attempts; what
could not be scored and why. Charts: steps, cost (tokens where the price is unknown, as a local
model's) and time distributions, tool use: matplotlib's, as inline SVG (text kept as text);
matplotlib is imported only here, when a report is made.
"""

from __future__ import annotations

import html
import io
import json
import os
import re
from collections import Counter
from pathlib import Path

from dgym_tui.batch import run_dir as rd
from dgym_tui.batch.result import SCORED, TrialResult
from dgym_tui.batch.stats import stats, wilson
from dgym_tui.core.safe_text import one_line

__all__ = ["arm_stats", "stats_of", "summary_md", "report_html", "total_cost", "wilson", "write_all"]
MARKS = {"resolved": "✓", "unresolved": "✗", "limit": "L", "no-reproduction": "R", "error": "E"}
REPRO = "no-reproduction"  # an issue's patch with no failing test: counted apart (a column only when there is one)


def arm_stats(results: list[TrialResult | dict], order: list[str] = ()) -> dict[str, dict]:
    """arm -> counts by status, scored, rate, interval, and the steps / cost / seconds lists
    and tool-call totals of its trials (arms in `order`, then as they first appear)."""
    results = [r if isinstance(r, TrialResult) else TrialResult.from_dict(r) for r in results]
    arms: dict[str, dict] = {}

    def new() -> dict:
        return {"counts": Counter(), "steps": [], "cost": [], "seconds": [], "tokens": [], "tools": Counter(),
                "cost_unknown": 0}

    for name in order:
        arms[name] = new()
    for r in results:
        a = arms.setdefault(r.arm, new())
        a["counts"][r.status] += 1
        if r.status != "error":
            a["steps"].append(int(r.steps or 0))
            a["seconds"].append(float(r.seconds or 0))
            a["tokens"].append(int(r.tokens or 0))
            if r.cost is None:
                a["cost_unknown"] += 1
            else:
                a["cost"].append(float(r.cost))
        a["tools"].update({k: int(v) for k, v in (r.tool_calls or {}).items()})
    for a in arms.values():
        a["scored"] = sum(a["counts"][s] for s in SCORED)
        a["resolved"] = a["counts"]["resolved"]
        a["rate"] = a["resolved"] / a["scored"] if a["scored"] else None
        a["interval"] = wilson(a["resolved"], a["scored"])
    return arms


def _pct(x: float | None) -> str:
    return "–" if x is None else f"{100 * x:.1f}%"


def _median(values: list[float]) -> float | None:
    if not values:
        return None
    s = sorted(values)
    mid = len(s) // 2
    return s[mid] if len(s) % 2 else (s[mid - 1] + s[mid]) / 2


def total_cost(arm: dict) -> str:
    """An arm's total cost as said in the summary and the report: a model with no known price
    (a local one) is "unknown", not $0."""
    if arm["cost_unknown"] and not arm["cost"]:
        return "unknown (no price for the model)"
    return f"${sum(arm['cost']):.4f}" + (f" (+{arm['cost_unknown']} unknown)" if arm["cost_unknown"] else "")


def stats_of(run_dir: Path) -> dict:
    """batch/stats.py's figures for RUN_DIR (what stats.json holds)."""
    config = rd.load_batch(run_dir)
    return stats(rd.load_results(run_dir), config.get("arms") or [], int(config.get("attempts") or 1))


def _arm_label(arm: dict) -> str:
    unlock = arm.get("unlock") or {}
    tools = ", ".join(f"{t} after {unlock[t]} edits" if t in unlock else t for t in arm.get("tools") or []) or "every tool"
    seeker = arm.get("seeker") or {}
    if seeker:
        form = "debug(question) answered by" if seeker.get("form", "ask") == "ask" else "findings first from"
        tools += f"; {form} a seeker ({seeker.get('model') or 'the batch --seeker'})"
    return tools


def roles_md(figures: dict) -> list[str]:
    """The arms with two roles: each role's steps, tokens, cost and time, and the seeker's answers."""
    arms = {name: f for name, f in figures["arms"].items() if f.get("roles")}
    if not arms:
        return []
    lines = ["", "## Per role (arms with a seeker)", "",
             "Totals over the arm's scored trials. Grounded: every value the answer quotes was printed by the "
             "seeker's tools. Touched: the patch changed a place (file, within 10 lines) a grounded answer named.", "",
             "| arm | role | steps | tokens | cost | seconds | questions | grounded | ungrounded | no values | "
             "unanswered | touched |", "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for name, f in arms.items():
        for role, r in f["roles"].items():
            cost = "?" if r["cost"] is None else f"${r['cost']:.4f}" + (" + ?" if r["cost_unknown"] else "")
            tail = "| | | | | | |"
            if role == "seeker":
                tail = (f"| {r['questions']} | {r['grounded']} | {r['ungrounded']} | {r['no_values']} | "
                        f"{r['unanswered']} | {r['touched']} of {r['touched_of']} |")
            lines.append(f"| {_md(name)} | {role} | {r['steps']} | {r['tokens']:,} | {cost} | {r['seconds']:g} {tail}")
    return lines


def _points(x: float) -> str:
    return f"{100 * x:+.1f} pts"


def _p(x: float) -> str:
    return f"{x:.3g}" if x >= 0.001 else "<0.001"


def summary_md(run_dir: Path) -> str:
    config = rd.load_batch(run_dir)
    results = rd.load_results(run_dir)
    figures = stats(results, config.get("arms") or [], int(config.get("attempts") or 1))
    attempts = figures["attempts"]
    arms = arm_stats(results, list(figures["arms"]))
    lines = [f"# Batch: {config.get('model')} on {config.get('tasks')}", ""]
    lines += [f"**WARNING: {_md(w)}**" for w in figures["warnings"]] + ([""] if figures["warnings"] else [])
    lines += [f"{len(results)} trial(s) finished; {attempts} attempt(s) per task and arm. "
              "Rate: resolved over scored trials (errors counted apart), 95% Wilson interval."
              + (" pass@k: the unbiased estimate from each task's scored attempts." if attempts > 1 else ""), "",
              f"Tests: {_md(tests_said(figures, config, _tasks(run_dir)))}.", ""]
    lines += ["| arm | tools |", "|---|---|"]
    lines += [f"| {_md(name)} | {_md(_arm_label(arm))} |" for name, arm in figures["arms"].items()]
    ks = [str(k) for k in range(1, attempts + 1)] if attempts > 1 else []
    repro = any(r.status == REPRO for r in results)
    lines += ["", "| arm | resolved | unresolved | limit | " + ("no reproduction | " if repro else "")
              + "error | rate | 95% interval | "
              + "".join(f"pass@{k} | " for k in ks) + "median steps | median tokens | total cost |",
              "|---|---|---|---|---|---|---|" + "---|" * (len(ks) + repro) + "---|---|---|"]
    for name, f in figures["arms"].items():
        c = f["counts"]
        lo, hi = f["interval"]
        passes = "".join(f"{_pct(f['pass_at_k'][k]['value'])} | " for k in ks)
        steps, tokens = f["steps_median"], f["tokens_median"]
        lines.append(f"| {_md(name)} | {c['resolved']} | {c['unresolved']} | {c['limit']} | "
                     + (f"{c.get(REPRO, 0)} | " if repro else "") + f"{c['error']} | "
                     f"{_pct(f['rate'])} | {_pct(lo)}–{_pct(hi)} | {passes}{'–' if steps is None else f'{steps:g}'} | "
                     f"{'–' if tokens is None else f'{tokens:g}'} | {total_cost(arms[name])} |")
    for pair in figures["pairs"]:
        first, second = _md(pair["first"]), _md(pair["second"])
        if pair.get("refused"):
            lines += ["", f"## {first} against {second}", "", f"**WARNING: {_md(pair['refused'])}.**"]
            continue
        lo, hi = pair["interval"]
        lines += ["", f"## {first} against {second} ({pair['tasks']} tasks scored in both)", "",
                  f"| both resolved | only {first} | only {second} | neither | McNemar's exact p | "
                  f"{second} − {first} | 95% bootstrap interval |", "|---|---|---|---|---|---|---|",
                  f"| {len(pair['both'])} | {len(pair['only_first'])} | {len(pair['only_second'])} | "
                  f"{len(pair['neither'])} | {_p(pair['mcnemar_p'])} | {_points(pair['difference'])} | "
                  f"{_points(lo)} to {_points(hi)} |"]
    lines += roles_md(figures)
    names = list(figures["arms"])
    lines += ["", "## Per task", "", "Each attempt: ✓ resolved, ✗ unresolved, L limit, "
              + ("R no reproduction, " if repro else "") + "E error.", "",
              "| task | " + " | ".join(_md(n) for n in names) + " |", "|---|" + "---|" * len(names)]
    for task, row in figures["tasks"].items():
        lines.append(f"| {_md(task)} | " + " | ".join("".join(MARKS.get(s, "?") for s in row[n]) or "–"
                                                       for n in names) + " |")
    errors = [r for r in results if r.status == "error"]
    if errors:
        lines += ["", "## Not scored (errors, ours or the provider's; `--retry errors` runs them again)", ""]
        for name, f in figures["arms"].items():
            if f["counts"]["error"]:
                lost = f["unscored_tasks"]
                lines.append(f"- {_md(name)}: {f['counts']['error']} trial(s) in error; "
                             f"{len(lost)} task(s) with no scored attempt"
                             + (": " + "; ".join(f"{_md(t)} ({_md(', '.join(why))})" for t, why in lost.items())
                                if lost else ""))
        lines += [f"  - {_md(r.trial)}: {_md(r.reason or '')}" for r in errors]
    return "\n".join(lines) + "\n"


OWN_SUITES = "the tasks' own suites (no hidden tests: each task is scored against the tests the agent could see and run)"


def tests_said(figures: dict, config: dict, tasks: list | None = None) -> str:
    """What the agent saw of the hidden tests (--tests), in words. tasks (tasks.jsonl's): which
    of them have hidden tests at all (a test patch, hidden files); a task with none (a
    debug-gym-style folder) is scored against its own suite, which the agent saw, and an open
    issue by the reproduction the agent writes, so --tests hidden says nothing true of them."""
    from dgym_tui.batch.test_modes import SAID, hidden_tests

    mode = figures.get("tests") or config.get("tests") or "hidden"
    if mode == "mixed":
        return "mixed: " + "; ".join(f"{name} {'/'.join(f['tests'])}" for name, f in figures["arms"].items())
    said = "--tests " + SAID.get(mode, mode)
    if mode != "hidden" or not tasks:
        return said
    issues = sum(1 for t in tasks if t.issue is not None)
    hidden = sum(1 for t in tasks if t.issue is None and hidden_tests(t))
    own = len(tasks) - issues - hidden
    parts = []
    if hidden:
        parts.append(said + (f" for the {hidden} task(s) with hidden tests" if own or issues else ""))
    if own:
        parts.append(OWN_SUITES if not hidden and not issues else
                     f"their own suites for the {own} task(s) with none (each scored against the tests the "
                     "agent could see and run)")
    if issues:
        parts.append(f"{issues} open issue(s), scored by the reproduction the agent writes (no hidden tests)")
    return "; ".join(parts)


def _tasks(run_dir: Path) -> list | None:
    try:
        return rd.load_tasks(run_dir)
    except rd.RunDirError:
        return None


def _md(text) -> str:
    return one_line(str(text)).replace("|", "\\|")


# --- charts -------------------------------------------------------------------------------------

def _pyplot():
    import matplotlib

    matplotlib.use("Agg", force=True)
    matplotlib.rcParams.update({"svg.fonttype": "none", "svg.hashsalt": "dgym-tui", "font.size": 9,
                                "figure.dpi": 72})
    import matplotlib.pyplot as plt

    return plt


def _svg(fig) -> str:
    buf = io.StringIO()
    fig.savefig(buf, format="svg", bbox_inches="tight", metadata={"Date": None, "Creator": None})
    _pyplot().close(fig)
    text = buf.getvalue()
    text = text[text.index("<svg"):]  # no XML prolog or DOCTYPE inside HTML
    return re.sub(r"\s*<metadata>.*?</metadata>", "", text, flags=re.S)  # RDF boilerplate, naming URLs


def _chart_rates(arms: dict) -> str:
    plt = _pyplot()
    names = list(arms)
    fig, ax = plt.subplots(figsize=(1.2 + 1.1 * len(names), 2.8))
    rates = [100 * (a["rate"] or 0) for a in arms.values()]
    lows = [r - 100 * a["interval"][0] for r, a in zip(rates, arms.values())]
    highs = [100 * a["interval"][1] - r for r, a in zip(rates, arms.values())]
    ax.bar(range(len(names)), rates, yerr=[lows, highs], capsize=4, color="#4c78a8")
    ax.set_xticks(range(len(names)), [one_line(n) for n in names])
    ax.set_ylim(0, 100)
    ax.set_ylabel("resolved (%) with 95% interval")
    return _svg(fig)


def _chart_distributions(arms: dict, priced: bool = True) -> str:
    """Steps, cost (tokens when no trial has a known price) and seconds, per arm."""
    plt = _pyplot()
    fig, axes = plt.subplots(1, 3, figsize=(9, 2.6))
    names = [one_line(n) for n in arms]
    middle = ("cost", "cost (USD)") if priced else ("tokens", "tokens")
    for ax, (key, label) in zip(axes, (("steps", "steps"), middle, ("seconds", "seconds"))):
        data = [a[key] or [0] for a in arms.values()]
        ax.boxplot(data, showmeans=True)
        ax.set_xticks(range(1, len(names) + 1), names)
        ax.set_title(label)
    fig.tight_layout()
    return _svg(fig)


def _chart_tools(arms: dict) -> str:
    plt = _pyplot()
    tools = sorted({t for a in arms.values() for t in a["tools"]})
    if not tools:
        return ""
    fig, ax = plt.subplots(figsize=(max(4.0, 0.7 * len(tools) * max(1, len(arms)) / 2 + 2), 2.6))
    width = 0.8 / max(1, len(arms))
    for i, (name, a) in enumerate(arms.items()):
        trials = max(1, sum(a["counts"].values()))
        ax.bar([x + i * width for x in range(len(tools))], [a["tools"][t] / trials for t in tools], width,
               label=one_line(name))
    ax.set_xticks([x + width * (len(arms) - 1) / 2 for x in range(len(tools))], [one_line(t) for t in tools])
    ax.set_ylabel("calls per trial")
    ax.legend(fontsize=8)
    return _svg(fig)


# --- the page -----------------------------------------------------------------------------------

CSS = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 1.5em auto; max-width: 1100px; padding: 0 1em; color: #222; }
h1 { font-size: 1.4em; } h2 { font-size: 1.15em; margin-top: 1.6em; }
table { border-collapse: collapse; margin: .5em 0; } td, th { border: 1px solid #ccc; padding: .25em .6em; }
th { background: #f3f3f3; text-align: left; } td.n { text-align: right; font-variant-numeric: tabular-nums; }
.resolved { color: #1a7f37; } .unresolved { color: #9a6700; } .limit { color: #8250df; } .error { color: #cf222e; }
.chart svg { max-width: 100%; height: auto; } .muted { color: #666; } .warning { color: #cf222e; }
"""


def _e(text) -> str:
    return html.escape(one_line(str(text)), quote=True)


def report_html(run_dir: Path, replays: set[str] | None = None) -> str:
    config = rd.load_batch(run_dir)
    results = rd.load_results(run_dir)
    figures = stats(results, config.get("arms") or [], int(config.get("attempts") or 1))
    attempts = figures["attempts"]
    arms = arm_stats(results, list(figures["arms"]))
    replays = replays or set()
    ks = [str(k) for k in range(1, attempts + 1)] if attempts > 1 else []
    out = ["<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
           "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
           "img-src data:; base-uri 'none'; form-action 'none'\">\n"
           f"<title>dgym-tui batch: {_e(config.get('model'))}</title>\n<style>{CSS}</style>\n</head>\n<body>\n",
           f"<h1>Batch: {_e(config.get('model'))} on {_e(config.get('tasks'))}</h1>\n",
           "".join(f"<p class=\"warning\"><strong>WARNING: {_e(w)}</strong></p>\n" for w in figures["warnings"]),
           f"<p id=\"tests-mode\">Tests: {_e(tests_said(figures, config, _tasks(run_dir)))}.</p>\n",
           f"<p class=\"muted\">{len(results)} trial(s) finished; {_e(attempts)} attempt(s) per "
           f"task and arm; max steps {_e(config.get('max_steps'))}; sandbox {_e(config.get('sandbox'))}. The rate is "
           "resolved over scored trials (errors, ours or the provider's, are counted apart), with a 95% Wilson "
           "interval" + ("; pass@k is the unbiased estimate from each task's scored attempts" if ks else "") +
           ".</p>\n", "<h2>Resolved rate per arm</h2>\n<table id=\"rates\">\n<tr><th>arm</th><th>tools</th>"
           "<th>resolved</th><th>unresolved</th><th>limit</th>"
           + ("<th>no reproduction</th>" if any(r.status == REPRO for r in results) else "")
           + "<th>error</th><th>rate</th><th>95% interval</th>"
           + "".join(f"<th>pass@{k}</th>" for k in ks) +
           "<th>median steps</th><th>median tokens</th><th>total cost</th><th>median time</th></tr>\n"]
    for name, f in figures["arms"].items():
        c, a = f["counts"], arms[name]
        lo, hi = f["interval"]
        med_s, med_t = f["steps_median"], _median(a["seconds"])
        passes = "".join(f"<td class=\"n pass\" data-k=\"{k}\">{_pct(f['pass_at_k'][k]['value'])}</td>" for k in ks)
        tokens = f["tokens_median"]
        out.append(f"<tr data-arm=\"{_e(name)}\"><td>{_e(name)}</td><td>{_e(_arm_label(f))}</td>"
                   f"<td class=n>{c['resolved']}</td><td class=n>{c['unresolved']}</td><td class=n>{c['limit']}</td>"
                   + (f"<td class=n>{c.get(REPRO, 0)}</td>" if any(r.status == REPRO for r in results) else "")
                   + f"<td class=n>{c['error']}</td><td class=\"n rate\">{_pct(f['rate'])}</td>"
                   f"<td class=n>{_pct(lo)} – {_pct(hi)}</td>{passes}"
                   f"<td class=n>{'–' if med_s is None else f'{med_s:g}'}</td>"
                   f"<td class=n>{'–' if tokens is None else f'{tokens:g}'}</td>"
                   f"<td class=n>{_e(total_cost(a))}</td>"
                   f"<td class=n>{'–' if med_t is None else f'{med_t:.1f} s'}</td></tr>\n")
    out.append("</table>\n")
    if arms:
        out.append(f"<div class=\"chart\">{_chart_rates(arms)}</div>\n")
    for pair in figures["pairs"]:
        first, second = _e(pair["first"]), _e(pair["second"])
        if pair.get("refused"):
            out.append(f"<h2>{first} against {second}</h2>\n<p class=\"warning\"><strong>WARNING: "
                       f"{_e(pair['refused'])}.</strong></p>\n")
            continue
        lo, hi = pair["interval"]
        out.append(f"<h2>{first} against {second}</h2>\n<p class=\"muted\">{pair['tasks']} tasks scored in both "
                   "arms; resolved by an arm when any of its attempts was. McNemar's exact test on the tasks only "
                   "one arm resolved; the difference in resolved rate with a 95% bootstrap interval over tasks.</p>\n"
                   "<table class=\"paired\">\n"
                   f"<tr><th>both resolved</th><th>only {first}</th><th>only {second}</th><th>neither</th>"
                   f"<th>McNemar's exact p</th><th>{second} − {first}</th><th>95% bootstrap interval</th></tr>\n<tr>"
                   + "".join(f"<td class=n title=\"{_e(', '.join(pair[k]))}\">{len(pair[k])}</td>"
                             for k in ("both", "only_first", "only_second", "neither"))
                   + f"<td class=\"n mcnemar\">{_p(pair['mcnemar_p'])}</td><td class=\"n difference\">"
                     f"{_points(pair['difference'])}</td><td class=n>{_points(lo)} to {_points(hi)}</td></tr>\n</table>\n")
    if arms:
        priced = any(a["cost"] for a in arms.values())
        out.append("<h2>Steps, " + ("cost" if priced else "tokens") + " and time</h2>\n<p class=\"muted\">Scored "
                   "trials; boxes are quartiles, triangles the means." + ("" if priced else " The model has no "
                   "known price (a local one): its tokens are charted instead of a cost.") + "</p>\n"
                   f"<div class=\"chart\">{_chart_distributions(arms, priced)}</div>\n")
        tools_chart = _chart_tools(arms)
        if tools_chart:
            out.append(f"<h2>Tool use</h2>\n<div class=\"chart\">{tools_chart}</div>\n")
    names = list(figures["arms"])
    out.append("<h2>Per task</h2>\n<p class=\"muted\">Each attempt: ✓ resolved, ✗ unresolved, L limit, "
               "E error.</p>\n<table id=\"tasks\">\n<tr><th>task</th>"
               + "".join(f"<th>{_e(n)}</th>" for n in names) + "</tr>\n")
    for task, row in figures["tasks"].items():
        out.append(f"<tr><td>{_e(task)}</td>" + "".join(
            f"<td class=\"attempts\">{_e(''.join(MARKS.get(s, '?') for s in row[n]) or '–')}</td>" for n in names)
            + "</tr>\n")
    out.append("</table>\n")
    if any(f["counts"]["error"] for f in figures["arms"].values()):
        out.append("<h2>Not scored</h2>\n<p class=\"muted\">Errors, ours or the provider's: never counted as "
                   "unresolved; <code>--retry errors</code> runs them again.</p>\n<ul id=\"unscored\">\n")
        for name, f in figures["arms"].items():
            if not f["counts"]["error"]:
                continue
            lost = f["unscored_tasks"]
            out.append(f"<li>{_e(name)}: {f['counts']['error']} trial(s) in error, {len(lost)} task(s) with no "
                       "scored attempt" + ("".join(f"<br>{_e(t)}: {_e('; '.join(why))}" for t, why in lost.items()))
                       + "</li>\n")
        out.append("</ul>\n")
    out.append("<h2>Trials</h2>\n<table id=\"trials\">\n<tr><th>trial</th><th>status</th><th>why</th><th>steps</th>"
               "<th>cost</th><th>time</th><th>tools</th></tr>\n")
    for r in results:
        trial = str(r.trial)
        status = str(r.status)
        link = (f"<a href=\"replays/{html.escape(trial, quote=True)}.html\">{_e(trial)}</a>"
                if trial in replays else _e(trial))
        tools = ", ".join(f"{k} {v}" for k, v in sorted((r.tool_calls or {}).items()))
        cost = "?" if r.cost is None else f"${float(r.cost):.4f}"
        out.append(f"<tr><td>{link}</td><td class=\"{_e(status)}\">{_e(status)}</td><td>{_e(r.reason or '')}</td>"
                   f"<td class=n>{_e(r.steps)}</td><td class=n>{cost}</td>"
                   f"<td class=n>{float(r.seconds or 0):.1f} s</td><td>{_e(tools)}</td></tr>\n")
    out.append("</table>\n</body>\n</html>\n")
    return "".join(out)


def write_replays(run_dir: Path) -> set[str]:
    """replays/<trial>.html for each finished trial with a session, made again only when the
    session is newer; returns the trials that have one. A session that cannot be read gets none."""
    from dgym_tui.core.session_file import SessionFileError, read_session
    from dgym_tui.sessions.html import render

    have = set()
    for r in rd.load_results(run_dir):
        trial = str(r.trial)
        files = rd.trial_files(run_dir, trial)
        session, replay = files["session"], files["replay"]
        if not session.exists() or session.stat().st_size == 0:
            continue
        if replay.exists() and replay.stat().st_mtime >= session.stat().st_mtime:
            have.add(trial)
            continue
        try:
            patch = files["patch"].read_text(encoding="utf-8", errors="replace") if files["patch"].exists() else ""
            page = render(read_session(session), patch or None)
        except (SessionFileError, ValueError, KeyError, TypeError, OSError):
            continue
        rd.write_atomic(replay, page.encode("utf-8"))
        have.add(trial)
    return have


def write_all(run_dir: str | Path) -> None:
    """results.jsonl (rebuilt), stats.json, summary.md, replays/ and report.html."""
    run_dir = Path(run_dir)
    rd.rebuild_results(run_dir)
    rd.write_atomic(run_dir / "stats.json", (json.dumps(stats_of(run_dir), indent=2, ensure_ascii=False) + "\n").encode())
    rd.write_atomic(run_dir / "summary.md", summary_md(run_dir).encode("utf-8"))
    replays = write_replays(run_dir)
    rd.write_atomic(run_dir / "report.html", report_html(run_dir, replays).encode("utf-8"))


def main(argv: list[str] | None = None) -> int:
    """python -m dgym_tui.batch.report RUN_DIR: make the report again."""
    import sys

    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1:
        print("usage: python -m dgym_tui.batch.report RUN_DIR", file=sys.stderr)
        return 2
    try:
        write_all(argv[0])
    except rd.RunDirError as e:
        print(f"dgym-tui batch: {e}", file=sys.stderr)
        return 2
    print(os.path.join(argv[0], "report.html"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
