"""Figures per role, read from a session's events: the agent that writes the fix ("fixer") and
the seeker that investigates for it (agent/seeker.py). The same reading serves a live run, a
batch trial's result and a recorded session, so they agree; the roles' tokens and costs add up
to the session's.
"""

from __future__ import annotations

from dgym_tui.core import events as ev


def _role(actor: str) -> str | None:
    if actor == ev.AGENT:
        return "fixer"
    if actor == ev.SEEKER:
        return "seeker"
    return None


def role_figures(events) -> dict[str, dict]:
    """{"fixer": {...}, "seeker": {...}}: steps, tokens, cost (None once a price was unknown),
    seconds; the seeker also questions and how its answers stood: grounded, ungrounded, no_values,
    unanswered. Empty when no seeker
    took part."""
    figures = {role: {"model": "", "steps": 0, "tokens": 0, "cost": 0.0, "seconds": 0.0}
               for role in ("fixer", "seeker")}
    figures["seeker"].update(questions=0, grounded=0, ungrounded=0, no_values=0, unanswered=0)
    span = [None, None]                    # the fixer's first and last event
    inside = 0.0                           # seeker seconds spent within the fixer's turn (debug calls)
    seen_seeker = False
    for event in events:
        role = _role(event.actor)
        d = event.data
        if role == "fixer":
            span[0] = event.ts if span[0] is None else span[0]
            span[1] = event.ts
        if event.kind == "agent_started" and role:
            figures[role]["model"] = d.model
        elif event.kind == "model_request" and role:
            figures[role]["steps"] += 1
        elif event.kind == "model_reply" and role:
            f = figures[role]
            f["tokens"] += d.prompt_tokens + d.completion_tokens
            f["cost"] = None if f["cost"] is None or d.cost is None else f["cost"] + d.cost
        elif event.kind == "seeker_answer":
            seen_seeker = True
            f = figures["seeker"]
            f["questions"] += 1
            f["seconds"] += d.seconds
            key = d.grounding.replace(" ", "_")
            if key in f:
                f[key] += 1
            if d.call_id:
                inside += d.seconds
    if not seen_seeker:
        return {}
    if span[0] is not None:
        figures["fixer"]["seconds"] = max(0.0, span[1] - span[0] - inside)
    for f in figures.values():
        f["seconds"] = round(f["seconds"], 2)
        if f["cost"] is not None:
            f["cost"] = round(f["cost"], 6)
    return figures


def said(figures: dict[str, dict]) -> str:
    """One line: each role's figures."""
    parts = []
    for role, f in figures.items():
        cost = "$?" if f["cost"] is None else f"${f['cost']:.4f}"
        extra = ""
        if role == "seeker":
            extra = f", {f['questions']} question{'s' if f['questions'] != 1 else ''} ({f['grounded']} grounded)"
        parts.append(f"{role} {f['steps']} steps, {f['tokens']:,} tokens, {cost}, {f['seconds']:.1f} s{extra}")
    return "per role: " + "; ".join(parts)
