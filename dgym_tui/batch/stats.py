"""The statistics a batch's report gives, from its results alone (stdlib only):

- per arm, the resolved rate over its scored trials with a 95% Wilson interval, and with K
  attempts per task the unbiased pass@k for k = 1..K (Chen et al. 2021: 1 - C(n-c, k) / C(n, k)
  for a task with n scored attempts of which c resolved, averaged over the tasks with n >= k);
- for each pair of arms, over the tasks both scored: how many both / only one / neither resolved
  (a task counts as resolved by an arm when any attempt was), McNemar's exact test on the tasks
  only one resolved (two-sided binomial, p = 0.5), and the difference in resolved rate with a
  95% bootstrap interval that resamples tasks (seeded: the same run gives the same interval);
- per task, each arm's attempts; what each arm could not score (errors, ours or the provider's),
  and why;
- what the agent saw of the hidden tests (`--tests`: hidden, eval or visible), per arm: two arms
  run in different modes are not compared (their pair says why instead of its figures), and
  `warnings` says so.

`stats(results, arms)` returns all of it as plain data: stats.json, summary.md and report.html
are views of it.
"""

from __future__ import annotations

import math
import random
from collections import Counter, defaultdict

from dgym_tui.batch.result import SCORED, TrialResult

BOOTSTRAP = 10_000
SEED = 20261127
Z95 = 1.959964


def wilson(k: int, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of k successes in n trials (95% by default); (0, 1) for n = 0."""
    if n == 0:
        return 0.0, 1.0
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def pass_at_k(n: int, c: int, k: int) -> float:
    """The unbiased estimate of pass@k from n attempts with c successes (k <= n)."""
    if not 0 < k <= n or not 0 <= c <= n:
        raise ValueError(f"pass@k needs 0 < k <= n and 0 <= c <= n (n={n}, c={c}, k={k})")
    if n - c < k:
        return 1.0
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def mcnemar_exact(b: int, c: int) -> float:
    """McNemar's exact test: the two-sided p-value that b against c discordant pairs arose with
    either side equally likely (a binomial test at p = 0.5). 1.0 when there are none."""
    n = b + c
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, i) for i in range(min(b, c) + 1)) / 2 ** n
    return min(1.0, 2 * tail)


def bootstrap_difference(pairs: list[tuple[list[bool], list[bool]]], resamples: int = BOOTSTRAP,
                         seed: int = SEED) -> tuple[float, tuple[float, float]]:
    """The difference in resolved rate (second arm minus first) over tasks both arms scored, each
    pair holding the two arms' attempts on one task, with its 95% percentile interval from
    resampling tasks with replacement."""
    def difference(sample) -> float:
        a = [x for first, _ in sample for x in first]
        b = [x for _, second in sample for x in second]
        return sum(b) / len(b) - sum(a) / len(a)

    if not pairs:
        return 0.0, (0.0, 0.0)
    point = difference(pairs)
    rng = random.Random(seed)
    draws = sorted(difference([pairs[rng.randrange(len(pairs))] for _ in pairs]) for _ in range(resamples))
    return point, (draws[int(0.025 * resamples)], draws[min(resamples - 1, int(0.975 * resamples))])


def stats(results: list[TrialResult | dict], arms: list[dict] | None = None, attempts: int = 1) -> dict:
    """All of the report's figures from the trials' results (TrialResult, or result.json's dicts).
    arms: batch.json's arms, for their order, tools and schedules."""
    results = [r if isinstance(r, TrialResult) else TrialResult.from_dict(r) for r in results]
    arms = list(arms or [])
    order = [a.get("name") for a in arms]
    by_arm_task: dict[str, dict[str, list[TrialResult]]] = defaultdict(lambda: defaultdict(list))
    for r in sorted(results, key=lambda r: (r.task, r.attempt)):
        by_arm_task[r.arm][r.task].append(r)
        if r.arm not in order:
            order.append(r.arm)
    described = {a.get("name"): a for a in arms}
    tasks = sorted({r.task for r in results})
    modes = {name: sorted({r.tests or "hidden" for rs in by_arm_task[name].values() for r in rs}) for name in order}
    every = sorted({m for ms in modes.values() for m in ms})
    out: dict = {"attempts": attempts, "tests": every[0] if len(every) == 1 else ("mixed" if every else None),
                 "warnings": [], "arms": {}, "pairs": [], "tasks": {}}
    for name in order:
        out["arms"][name] = _arm(name, by_arm_task[name], described.get(name, {}), attempts)
        out["arms"][name]["tests"] = modes[name]
        if len(modes[name]) > 1:
            out["warnings"].append(f"arm {name} mixes trials run with --tests {' and '.join(modes[name])}: "
                                   "its rate is no one setting's")
    for i, first in enumerate(order):
        for second in order[i + 1:]:
            if modes[first] != modes[second] and modes[first] and modes[second]:
                why = (f"not compared: {first} ran with --tests {'/'.join(modes[first])}, {second} with "
                       f"--tests {'/'.join(modes[second])} (what the agent saw of the tests differs)")
                out["pairs"].append({"first": first, "second": second, "tasks": 0, "refused": why})
                out["warnings"].append(why)
                continue
            out["pairs"].append(_pair(first, second, by_arm_task[first], by_arm_task[second]))
    for task in tasks:
        out["tasks"][task] = {name: [r.status for r in by_arm_task[name].get(task, [])]
                              for name in order}
    return out


def _arm(name: str, by_task: dict[str, list[TrialResult]], described: dict, attempts: int) -> dict:
    trials = [r for rs in by_task.values() for r in rs]
    counts = Counter(r.status for r in trials)
    scored = sum(counts[s] for s in SCORED)
    resolved = counts["resolved"]
    lo, hi = wilson(resolved, scored)
    passes = {}
    for k in range(1, max(1, attempts) + 1):
        values = []
        for rs in by_task.values():
            n = sum(1 for r in rs if r.status in SCORED)
            c = sum(1 for r in rs if r.status == "resolved")
            if n >= k:
                values.append(pass_at_k(n, c, k))
        passes[str(k)] = {"value": sum(values) / len(values) if values else None, "tasks": len(values)}
    unscored = {task: sorted({(r.reason or r.error or "no reason given").splitlines()[0][:200]
                              for r in rs if r.status == "error"})
                for task, rs in by_task.items() if not any(r.status in SCORED for r in rs)}
    errors = [{"trial": r.trial, "reason": (r.reason or "").splitlines()[0][:300] if r.reason else ""}
              for r in trials if r.status == "error"]
    tokens = [int(r.tokens or 0) for r in trials if r.status != "error"]
    costs = [r.cost for r in trials if r.status != "error"]
    known = [float(c) for c in costs if c is not None]
    return {"tools": list(described.get("tools") or []), "unlock": dict(described.get("unlock") or {}),
            "trials": len(trials), "counts": {s: counts[s] for s in (*SCORED, "error")}
            | ({"no-reproduction": counts["no-reproduction"]} if counts["no-reproduction"] else {}),
            "scored": scored, "resolved": resolved, "rate": resolved / scored if scored else None,
            "interval": [lo, hi], "pass_at_k": passes, "errors": errors, "unscored_tasks": unscored,
            "tokens_total": sum(tokens), "tokens_median": _median(tokens),
            "cost_total": sum(known) if known else None, "cost_unknown": len(costs) - len(known),
            "steps_median": _median([int(r.steps or 0) for r in trials if r.status != "error"]),
            "timed_out_tests": sum(len(r.timed_out or []) for r in trials)} | _roles(trials, described)


def _roles(trials: list[TrialResult], described: dict) -> dict:
    """An arm with two roles: per role the total steps, tokens, cost and seconds, and the seeker's
    questions, how its answers stood, and how many patches touched a place it named."""
    with_roles = [r.roles for r in trials if r.status != "error" and r.roles]
    if not described.get("seeker") and not with_roles:
        return {}
    out: dict = {"seeker": dict(described.get("seeker") or {}), "roles": {}}
    for role in ("fixer", "seeker"):
        figures = [r[role] for r in with_roles if role in r]
        costs = [f.get("cost") for f in figures]
        known = [float(c) for c in costs if c is not None]
        out["roles"][role] = {"steps": sum(int(f.get("steps") or 0) for f in figures),
                              "tokens": sum(int(f.get("tokens") or 0) for f in figures),
                              "cost": sum(known) if known else None, "cost_unknown": len(costs) - len(known),
                              "seconds": round(sum(float(f.get("seconds") or 0) for f in figures), 2)}
    seekers = [r["seeker"] for r in with_roles if "seeker" in r]
    for key in ("questions", "grounded", "ungrounded", "no_values", "unanswered"):
        out["roles"]["seeker"][key] = sum(int(f.get(key) or 0) for f in seekers)
    touched = [f.get("touched_named_place") for f in seekers]
    out["roles"]["seeker"]["touched"] = sum(1 for t in touched if t is True)
    out["roles"]["seeker"]["touched_of"] = sum(1 for t in touched if t is not None)
    return out


def _pair(first: str, second: str, a: dict[str, list[TrialResult]], b: dict[str, list[TrialResult]]) -> dict:
    split: dict[str, list[str]] = {"both": [], "only_first": [], "only_second": [], "neither": []}
    pairs = []
    for task in sorted(set(a) & set(b)):
        xs = [r.status == "resolved" for r in a[task] if r.status in SCORED]
        ys = [r.status == "resolved" for r in b[task] if r.status in SCORED]
        if not xs or not ys:
            continue
        pairs.append((xs, ys))
        x, y = any(xs), any(ys)
        split["both" if x and y else "only_first" if x else "only_second" if y else "neither"].append(task)
    difference, interval = bootstrap_difference(pairs)
    return {"first": first, "second": second, "tasks": len(pairs), **split,
            "mcnemar_p": mcnemar_exact(len(split["only_first"]), len(split["only_second"])),
            "difference": difference, "interval": list(interval)}


def _median(values: list[float]) -> float | None:
    if not values:
        return None
    s = sorted(values)
    mid = len(s) // 2
    return s[mid] if len(s) % 2 else (s[mid - 1] + s[mid]) / 2
