"""Benchmark: a scripted pdb arm on real SWE-bench instances, in each test mode (hidden, eval,
visible), on the default entrypoint (the harness's test command): `b` in the code the tests reach,
`c`, `p`, then the gold patch and submit. What each mode's pdb did, per instance:

    swebench_modes instance=ID mode=M first_stop=REASON@FILE:LINE c_stop=REASON@FILE:LINE p=VALUE unasked_runs=N status=S

- first_stop: where the session's first run stopped (visible: the failing test's post-mortem;
  hidden and eval: none, the base's tests pass and the run ends: "ended(0)");
- c_stop and p: where `c` stopped and what `p` printed (hidden: the value, read inside the
  instance although every test there passes);
- unasked_runs: program runs no c/n/s/restart asked for (core/reruns.py), from the session;
- status: the harness's grade of the gold patch.

Run: python tests/benchmarks/swebench_modes.py VALIDATED.jsonl --repos DIR --break ID=FILE:LINE=EXPR ...
     [--modes hidden,eval,visible] [--out DIR]
The instances' images must be built (`dgym-tui image swebench FILE --repos DIR --validate OUT`).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

TOOLS = "pdb,view,listdir,grep,eval,edit,bash,submit"


def script(record: dict, where: str, expr: str) -> list[dict]:
    return [
        {"tool_calls": [{"name": "pdb", "arguments": {"command": f"b {where}"}}]},
        {"tool_calls": [{"name": "pdb", "arguments": {"command": "c"}}]},
        {"tool_calls": [{"name": "pdb", "arguments": {"command": f"p {expr}"}}]},
        {"tool_calls": [{"name": "bash", "arguments": {
            "command": f"git apply <<'EOF_GOLD'\n{record['patch']}EOF_GOLD\ngit status --short"}}]},
        {"tool_calls": [{"name": "submit", "arguments": {"message": "the gold patch"}}]},
    ]


def place(stop: dict | None) -> str:
    if not stop:
        return "none"
    return f"{stop.get('reason')}@{stop.get('file')}:{stop.get('line')}"


def summarize(session: Path) -> dict:
    from dgym_tui.core.reruns import unasked_runs

    events = [json.loads(line) for line in session.read_text().splitlines()[1:] if line.strip()]
    stops = [(i, e["data"]) for i, e in enumerate(events) if e["kind"] == "stop"]
    exits = [(i, e["data"]) for i, e in enumerate(events) if e["kind"] == "program_exit"]
    calls = [i for i, e in enumerate(events) if e["kind"] == "tool_call" and e["data"].get("tool") == "pdb"]
    results = [e["data"] for e in events if e["kind"] == "tool_result" and e["data"]["tool"] == "pdb"]
    first_call = calls[0] if calls else len(events)
    # where pdb was when the agent began: the last stop before its first pdb call, or the end
    before = [(i, place(s)) for i, s in stops if i < first_call] + [
        (i, f"ended({x.get('code')})") for i, x in exits if i < first_call]
    first = max(before)[1] if before else "none"
    c_call = calls[1] if len(calls) > 1 else None
    after_c = [s for i, s in stops if c_call is not None and i > c_call and s.get("reason") != "start"]
    p_text = results[2]["observation"] if len(results) > 2 else ""
    value = p_text.split("Pdb command output:\n", 1)[-1].split("\n", 1)[0] if p_text else ""
    return {"first_stop": first, "c_stop": place(after_c[0]) if after_c else "none", "p": value,
            "unasked_runs": unasked_runs(events)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("instances")
    parser.add_argument("--repos", required=True)
    parser.add_argument("--break", dest="breaks", action="append", default=[], metavar="ID=FILE:LINE=EXPR")
    parser.add_argument("--modes", default="hidden,eval,visible")
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    breaks = {}
    for spec in args.breaks:
        iid, where, expr = spec.split("=", 2)
        breaks[iid] = (where, expr)
    out = Path(args.out or tempfile.mkdtemp(prefix="dgym-modes-"))
    records = [json.loads(line) for line in Path(args.instances).read_text().splitlines() if line.strip()]
    for record in records:
        iid = record["instance_id"]
        if iid not in breaks:
            print(f"# {iid}: no --break given, skipped", flush=True)
            continue
        one = out / f"{iid}.jsonl"
        one.parent.mkdir(parents=True, exist_ok=True)
        one.write_text(json.dumps(record) + "\n")
        steps = out / f"{iid}.script.json"
        steps.write_text(json.dumps(script(record, *breaks[iid])))
        for mode in args.modes.split(","):
            run_dir = out / f"{iid}-{mode}"
            done = subprocess.run([sys.executable, "-m", "dgym_tui", "batch", str(one), "--repos", args.repos,
                                   "--model", f"scripted:{steps}", "--out", str(run_dir), "--yes", "--tests", mode,
                                   "--arm", f"with-pdb={TOOLS}"], capture_output=True, text=True, timeout=3600)
            results = list(run_dir.glob("trials/*/result.json"))
            if done.returncode != 0 or not results:
                print(f"swebench_modes instance={iid} mode={mode} failed: {(done.stderr or done.stdout).strip()[-300:]}",
                      flush=True)
                continue
            result = json.loads(results[0].read_text())
            seen = summarize(results[0].parent / "session.jsonl")
            print(f"swebench_modes instance={iid} mode={mode} first_stop={seen['first_stop']} c_stop={seen['c_stop']} "
                  f"p={seen['p']!r} unasked_runs={seen['unasked_runs']} status={result.get('status')} "
                  f"tests={result.get('tests_mode', result.get('tests'))}", flush=True)


if __name__ == "__main__":
    main()
