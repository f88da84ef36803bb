"""A batch as training data: each trial's trajectory with its labels — the score the harness
measured, the reviewer's verdict and note, the revision's origin — in the formats trainers load.

One *example* per trial (its current revision: the newest scored one), or per revision with
`all_revisions`. Its conversation is the session that made it, in the OpenAI chat shape
(sessions/chat.py); a person's edited patch (origin "edit") has no session of its own and carries
the conversation it was edited from, its `patch` the person's. Formats:

- `sft`: Hugging Face TRL's conversational SFT rows: {"messages", "tools", "patch", "labels"}.
- `sharegpt`: {"conversations": [{"from", "value"}], "system", "tools" (a JSON string), "labels"},
  as LLaMA-Factory reads ShareGPT with tool calls (function_call / observation turns).
- `atif`: one ATIF trajectory per line (sessions/atif.py), the labels in its `extra`.
- `dpo`: TRL's conversational preference rows {"prompt", "chosen", "rejected", "tools",
  "labels"}: for one task, a resolved and approved trial against a scored one that is not resolved
  or was rejected, only where both began from the same prompt (system prompt and task alike).

Nothing of the machine's is written: the trial's host and sandbox paths become relative, and the
value of any key-like variable of this process's environment (provider keys, tokens, passwords)
is replaced wherever it would appear.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from dgym_tui.batch.result import TrialResult
from dgym_tui.review import reviews, revisions

FORMATS = ("sft", "sharegpt", "atif", "dpo")
ROLES = ("fixer", "seeker")  # --role: whose trajectories (default: the agent's, the fixer's where there are two)
ONLY = ("all", "resolved", "approved", "unresolved")
NOT_RESOLVED = ("unresolved", "limit")  # scored, and the patch does not resolve the task
SECRET_NAME = re.compile(r"(KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL)S?$|^AWS_|_AUTH$", re.IGNORECASE)
REDACTED = "[redacted]"
# Well-known shapes of keys and tokens, redacted wherever they are (a key in the repo that the
# agent read, where no variable of the exporting environment holds it): OpenAI and Anthropic
# (sk-…), GitHub (ghp_…, github_pat_…), Hugging Face (hf_…), AWS access key ids, Google API keys,
# Slack tokens.
KEY_SHAPES = re.compile(r"\b(?:sk-[A-Za-z0-9_-]{20,}|gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,}"
                        r"|hf_[A-Za-z0-9]{30,}|AKIA[0-9A-Z]{16}|AIza[0-9A-Za-z_-]{35}|xox[abprs]-[A-Za-z0-9-]{10,})")


class TrainingExportError(Exception):
    """The run directory cannot be exported; str() says why in one line."""


@dataclass
class Example:
    trial: str
    task: str
    arm: str
    revision: int
    origin: str                       # agent | edit | take-over | send-back
    labels: dict
    messages: list[dict] = field(default_factory=list)
    tools: list[dict] = field(default_factory=list)
    patch: str = ""
    story: object = None              # the session's Story (for ATIF), None without a session
    paths: list[str] = field(default_factory=list)  # the session's absolute repo paths
    session_file: str = ""            # the session's file, relative to the run directory

    @property
    def prompt(self) -> list[dict]:
        """The messages before the agent's first turn: the system prompt and the task."""
        lead = []
        for message in self.messages:
            if message.get("role") not in ("system", "user"):
                break
            lead.append(message)
        return lead

    @property
    def prompt_key(self) -> str:
        return hashlib.sha256(json.dumps(self.prompt, sort_keys=True).encode()).hexdigest()

    @property
    def resolved_and_approved(self) -> bool:
        return self.labels["status"] == "resolved" and self.labels["approved"]

    @property
    def worse(self) -> bool:
        """Scored and not resolved, or rejected by the reviewer."""
        return self.labels["status"] in NOT_RESOLVED or self.labels["verdict"] == "reject"


# --- reading a run directory ---------------------------------------------------------------


def examples(run_dir: str | Path, only: str = "all", arms: list[str] | tuple = (),
             all_revisions: bool = False, role: str | None = None) -> Iterator[Example]:
    """The run's examples in results.jsonl's order, filtered: `only` one of ONLY, `arms` (none:
    every arm). A trial whose session cannot be read still gives its labels, with no messages.
    role "seeker": one example per question a seeker answered (trials without one give none),
    labelled by whether the fix it fed resolved the task; "fixer": the agent's, the findings in
    its context (as without a role)."""
    if only not in ONLY:
        raise ValueError(f"unknown filter {only!r}: one of {', '.join(ONLY)}")
    if role is not None and role not in ROLES:
        raise ValueError(f"unknown role {role!r}: one of {', '.join(ROLES)}")
    root = Path(run_dir)
    batch = _json(root / "batch.json")
    if batch is None and not (root / "results.jsonl").is_file():
        raise TrainingExportError(f"{root} holds no batch.json nor results.jsonl: not a batch's run directory")
    arm_tools = {a.get("name"): a for a in (batch or {}).get("arms") or []}
    verdicts = reviews.read(root)
    from dgym_tui.batch.run_dir import load_results

    for result in load_results(root):
        if arms and result.arm not in arms:
            continue
        for revision, origin, res, session, patch in _revisions(root, result, all_revisions):
            verdict = next((v for v in reversed(verdicts) if v.trial == result.trial and v.revision == revision), None)
            labels = _labels(res, revision, origin, verdict, arm_tools.get(result.arm) or {}, batch or {})
            labels["latest"] = not all_revisions or revision == _latest_number(root, result.trial)
            if not _kept(labels, only):
                continue
            labels["role"] = role or ("fixer" if res.roles else "agent")
            if role == "seeker":
                for example in _seeker_examples(result, revision, origin, labels, session):
                    example.session_file = os.path.relpath(session, root)
                    yield example
                continue
            example = _example(result, revision, origin, labels, session, patch)
            example.session_file = os.path.relpath(session, root)
            yield example


def _revisions(root: Path, result: TrialResult, all_revisions: bool):
    """(number, origin, result, session file, patch) of the trial's revisions: the batch's (0)
    and the review's scored ones; the newest only unless all_revisions."""
    trial_dir = root / "trials" / result.trial
    found = [(0, "agent", result, trial_dir / "session.jsonl", _text(trial_dir / "patch.diff"))]
    for number in revisions._numbers(root, result.trial):
        revision = revisions.read(root, result.trial, number)
        if revision.result is None:
            continue  # not scored yet: no label to give it
        session = revision.path / "session.jsonl"
        if not session.is_file():  # an edited patch: the conversation it was edited from
            origin_file = _json(revision.path / "origin.json") or {}
            session = _session_of(root, result.trial, int(origin_file.get("from_revision") or 0))
        found.append((number, revision.origin, revision.result, session, _text(revision.path / "patch.diff")))
    return found if all_revisions else found[-1:]


def _session_of(root: Path, trial: str, number: int) -> Path:
    while number > 0:
        folder = revisions.folder(root, trial, number)
        if (folder / "session.jsonl").is_file():
            return folder / "session.jsonl"
        number = int((_json(folder / "origin.json") or {}).get("from_revision") or 0)
    return root / "trials" / trial / "session.jsonl"


def _latest_number(root: Path, trial: str) -> int:
    scored = [n for n in revisions._numbers(root, trial) if (revisions.folder(root, trial, n) / "result.json").is_file()]
    return scored[-1] if scored else 0


def _labels(r: TrialResult, revision: int, origin: str, verdict, arm: dict, batch: dict) -> dict:
    approved = bool(verdict and verdict.verdict == "approve" and verdict.patch_sha256 == r.patch_sha256)
    return {
        "trial": r.trial, "task": r.task, "arm": r.arm, "arm_tools": list(arm.get("tools") or []),
        "arm_schedule": dict(arm.get("unlock") or {}), "attempt": r.attempt,
        "revision": revision, "origin": origin,
        "status": r.status or "error", "scored": r.status in ("resolved", *NOT_RESOLVED),
        "reason": r.reason, "tests_before": r.tests_before, "tests_after": r.tests_after,
        "fail_to_pass": r.fail_to_pass, "pass_to_pass": r.pass_to_pass, "timed_out": r.timed_out,
        "verdict": verdict.verdict if verdict else None, "approved": approved,
        "note": verdict.note if verdict else None, "reviewer": verdict.who if verdict else None,
        "reviewed": verdict.when if verdict else None,
        "model": _model_name(r.model or batch.get("model")), "steps": r.steps, "tokens": r.tokens, "cost": r.cost,
        "seconds": r.seconds, "patch_sha256": r.patch_sha256,
        "tests": r.tests or batch.get("tests") or "hidden",  # what the agent saw of the hidden tests (--tests)
    }


def _model_name(model: str | None) -> str | None:
    """The model as named, a script's path reduced to its file name (no path of this machine)."""
    if model and "/" in model and ":" in model and model.split(":", 1)[1].startswith("/"):
        kind, path = model.split(":", 1)
        return f"{kind}:{os.path.basename(path)}"
    return model


def _kept(labels: dict, only: str) -> bool:
    if only == "resolved":
        return labels["status"] == "resolved"
    if only == "approved":
        return labels["approved"]
    if only == "unresolved":
        return labels["status"] in NOT_RESOLVED
    return True


def _example(result: TrialResult, revision: int, origin: str, labels: dict, session: Path, patch: str) -> Example:
    from dgym_tui.core.session_file import SessionFileError
    from dgym_tui.sessions.chat import conversation
    from dgym_tui.sessions.export import load
    from dgym_tui.sessions.story import tell

    example = Example(trial=result.trial, task=result.task, arm=result.arm, revision=revision, origin=origin,
                      labels=labels, patch=patch)
    try:
        recording = load(session)
    except (OSError, SessionFileError) as e:
        labels["session"] = f"unreadable: {e}"
        return example
    story = tell(recording)
    chat = conversation(story)
    example.paths = _paths(recording)
    example.messages = [_relative(m, example.paths) for m in chat["messages"]]
    example.tools = chat["tools"]
    example.story = story
    return example


def _seeker_examples(result: TrialResult, revision: int, origin: str, labels: dict, session: Path) -> list[Example]:
    """One example per seeker turn: its conversation, the question, how its answer stood, and
    whether the fix it fed resolved the task (the info-seeking data debug-gym's authors call for)."""
    from dgym_tui.core.events import SEEKER
    from dgym_tui.core.session_file import SessionFileError
    from dgym_tui.sessions.chat import conversation
    from dgym_tui.sessions.export import load
    from dgym_tui.sessions.story import tell, turns

    try:
        recording = load(session)
    except (OSError, SessionFileError):
        return []
    answers = [e.data for e in recording.events if e.kind == "seeker_answer"]
    found = []
    for k in range(turns(recording, SEEKER)):
        story = tell(recording, SEEKER, k)
        chat = conversation(story)
        answer = answers[k] if k < len(answers) else None
        own = dict(labels, turn=k, fed_resolved=labels["status"] == "resolved",
                   question=answer.question if answer else None, answer=answer.answer if answer else None,
                   grounding=answer.grounding if answer else "unanswered",
                   unseen=list(answer.unseen) if answer else [], places=list(answer.places) if answer else [],
                   model=_model_name(answer.model) if answer else None,
                   steps=answer.steps if answer else 0, tokens=answer.tokens if answer else 0,
                   cost=answer.cost if answer else None)
        example = Example(trial=result.trial, task=result.task, arm=result.arm, revision=revision, origin=origin,
                          labels=own)
        example.paths = _paths(recording)
        example.messages = [_relative(m, example.paths) for m in chat["messages"]]
        example.tools, example.story = chat["tools"], story
        found.append(example)
    return found


# --- what must not leave the machine ------------------------------------------------------


def _paths(recording) -> list[str]:
    """The session's absolute paths of the repo (the host's copy, each sandbox's root), longest
    first, to be made relative."""
    found = {str(recording.header.get("repo") or "")}
    found |= {str(e.data.root or "") for e in recording.events if e.kind == "sandbox_ready"}
    return sorted((p.rstrip("/") for p in found if p.startswith("/") and p.rstrip("/")), key=len, reverse=True)


def _relative(value, paths: list[str]):
    if isinstance(value, str):
        for path in paths:
            value = value.replace(path + "/", "").replace(path, ".")
        return value
    if isinstance(value, list):
        return [_relative(v, paths) for v in value]
    if isinstance(value, dict):
        return {k: _relative(v, paths) for k, v in value.items()}
    return value


def secrets(environ=None) -> list[str]:
    """The values of this environment's key-like variables (provider keys, tokens, passwords),
    longest first; short ones (under 6 characters) are too common to replace safely."""
    from dgym_tui.config import PROVIDER_KEYS

    environ = os.environ if environ is None else environ
    values = {v for k, v in environ.items() if (k in PROVIDER_KEYS or SECRET_NAME.search(k)) and len(v) >= 6}
    return sorted(values, key=len, reverse=True)


def redact(line: str, hidden: list[str]) -> str:
    """A JSON line with every hidden value replaced, as written and as JSON escapes it, and
    every value shaped like a well-known key."""
    for value in hidden:
        line = line.replace(value, REDACTED)
        escaped = json.dumps(value)[1:-1]
        if escaped != value:
            line = line.replace(escaped, REDACTED)
    return KEY_SHAPES.sub(REDACTED, line)


# --- the formats -----------------------------------------------------------------------------


def sft_record(ex: Example) -> dict:
    return {"messages": ex.messages, "tools": ex.tools, "patch": ex.patch, "labels": ex.labels}


def sharegpt_record(ex: Example) -> dict:
    turns, system = [], ""
    for message in ex.messages:
        role, content = message.get("role"), message.get("content")
        if role == "system":
            system = content or ""
        elif role == "user":
            turns.append({"from": "human", "value": content or ""})
        elif role == "tool":
            turns.append({"from": "observation", "value": content or ""})
        elif role == "assistant":
            if content:
                turns.append({"from": "gpt", "value": content})
            calls = [{"name": c["function"]["name"], "arguments": _arguments(c["function"].get("arguments"))}
                     for c in message.get("tool_calls") or []]
            if calls:
                turns.append({"from": "function_call", "value": json.dumps(calls[0] if len(calls) == 1 else calls)})
    return {"conversations": turns, "system": system, "tools": json.dumps([t.get("function", t) for t in ex.tools]),
            "patch": ex.patch, "labels": ex.labels}


def atif_record(ex: Example) -> dict | None:
    if ex.story is None:
        return None
    from dgym_tui.sessions.atif import atif

    record = _relative(atif(ex.story), ex.paths)
    extra = record.setdefault("extra", {})
    extra.update(labels=ex.labels, patch=ex.patch, source_file=ex.session_file)
    return record


def preference_pairs(found: list[Example]) -> Iterator[dict]:
    """Each resolved-and-approved example against each worse one of the same task and prompt.
    An edited patch never takes part: its conversation did not make it."""
    groups: dict[tuple[str, str], list[Example]] = {}
    for ex in found:
        if ex.messages and ex.origin != "edit":
            groups.setdefault((ex.task, ex.prompt_key), []).append(ex)
    for (task, _), group in groups.items():
        chosen = [ex for ex in group if ex.resolved_and_approved]
        rejected = [ex for ex in group if ex.worse and not ex.resolved_and_approved]
        for good in chosen:
            for bad in rejected:
                lead = len(good.prompt)
                yield {"prompt": good.prompt, "chosen": good.messages[lead:], "rejected": bad.messages[lead:],
                       "tools": good.tools, "labels": {"task": task, "chosen": good.labels, "rejected": bad.labels}}


PAIR_RULE = ("pairs are two attempts of one task in one arm (the same prompt), the chosen one resolved and "
             "approved in `dgym-tui review`, the other unresolved or rejected")


def no_pairs_reason(found: list[Example], only: str = "all") -> str:
    """Why preference_pairs(found) gives none, in terms of this run: the first of its conditions
    that no task meets (two trials of one prompt; one of them resolved and approved; a worse one
    beside it)."""
    kept = "" if only == "all" else f" (of the trials --only {only} keeps)"
    usable = [ex for ex in found if ex.messages and ex.origin != "edit"]
    if not usable:
        return f"no DPO pairs: {PAIR_RULE}; this run has no trial with a readable conversation{kept}"
    per_arm: dict[tuple[str, str], int] = {}
    groups: dict[tuple[str, str], list[Example]] = {}
    for ex in usable:
        per_arm[ex.task, ex.arm] = per_arm.get((ex.task, ex.arm), 0) + 1
        groups.setdefault((ex.task, ex.prompt_key), []).append(ex)
    twins = [g for g in groups.values() if len(g) >= 2]
    if not twins:
        most = max(per_arm.values())
        if most == 1:
            why = f"this run has 1 attempt per task and arm{kept}"
        else:
            why = f"no two attempts of one task in one arm began from the same prompt{kept}"
        return f"no DPO pairs: {PAIR_RULE}; {why}"
    among = [ex for g in twins for ex in g]
    if not any(ex.resolved_and_approved for ex in among):
        resolved = sum(ex.labels["status"] == "resolved" for ex in among)
        why = (f"none of the {resolved} resolved trial(s) that have a twin is approved" if resolved
               else "no trial that has a twin is resolved")
        return f"no DPO pairs: {PAIR_RULE}; {why}{kept}"
    return (f"no DPO pairs: {PAIR_RULE}; every trial beside an approved one is resolved and not "
            f"rejected: nothing worse to pair it with{kept}")


def _arguments(arguments):
    if isinstance(arguments, str):
        try:
            return json.loads(arguments)
        except ValueError:
            return arguments
    return arguments


# --- writing ---------------------------------------------------------------------------------


def write(run_dir: str | Path, fmt: str, out, only: str = "all", arms: list[str] | tuple = (),
          all_revisions: bool = False, role: str | None = None, notes: list[str] | None = None) -> int:
    """The export as JSON lines on the text stream `out`; returns how many records. notes, when
    given, gets a line that says why no record came out where the format can say (dpo's pairs)."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}: one of {', '.join(FORMATS)}")
    hidden = secrets()
    found = examples(run_dir, only=only, arms=arms, all_revisions=all_revisions, role=role)
    if fmt == "dpo":
        found = list(found)
        records = preference_pairs(found)
    else:
        make = {"sft": sft_record, "sharegpt": sharegpt_record, "atif": atif_record}[fmt]
        records = (make(ex) for ex in found)
    count = 0
    for record in records:
        if record is None:
            continue
        out.write(redact(json.dumps(record, ensure_ascii=False), hidden) + "\n")
        count += 1
    if fmt == "dpo" and not count and notes is not None:
        notes.append(no_pairs_reason(found, only))
    return count


def _json(path: Path) -> dict | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="surrogateescape")
    except OSError:
        return ""
