"""Saved sessions after the fact: listing, export in every format, the final patch, apply.

The sessions are real: the app's core (Session) in a local sandbox with real pdb and real git,
written by the real SessionWriter, with a scripted model as the only stand-in; the person's part
is played through the same calls the app makes (pdb commands, answers to approvals, a hint, an
edit, an undo). The commands run as a user runs them: `python -m dgym_tui ...` in a subprocess.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from conftest import git, tree_hash
from test_agent import SCRIPTS, TALLY, make_repo

from dgym_tui.agent.approval import Answer
from dgym_tui.agent.loop import Agent
from dgym_tui.agent.policy import Policy
from dgym_tui.agent.scripted import ScriptedModel
from dgym_tui.core.events import HUMAN
from dgym_tui.core.session import Session
from dgym_tui.core.session_file import SessionFileError, SessionWriter, read_session
from dgym_tui.sessions import (ApplyError, PatchError, apply, export, export_patch, list_sessions, load,
                               plan_apply, summarize)
from dgym_tui.sessions.chat import UNANSWERED, check_pairs
from dgym_tui.sessions.story import tell

FIXED = "    return total / len(values)"
# The test Python's pytest plugins (hypothesis, textual snapshots...) take seconds to load on
# every one of a session's test runs; the little repos need none of them.
QUICK = {"pytest.ini": "[pytest]\naddopts = -p no:cacheprovider -p no:asyncio -p no:anyio -p no:hypothesispytest "
                       "-p no:benchmark -p no:syrupy -p no:textual-snapshot -p no:platformdirs\n"}
TALLY = {**TALLY, **QUICK}
FILES = {**TALLY, "NOTES.txt": "remember the mean\n", "tally/old.py": "OLD = 1\n"}


def record(repo: Path, path: Path, act, mode: str = "manual", model: str | None = None) -> Path:
    """A session of the real core, saved as the app saves it."""
    session = Session(str(repo), sandbox="local")
    writer = SessionWriter.open(path, session, mode=mode, model=model)
    try:
        session.start()
        assert session.state.program == "stopped", session.state.error
        act(session)
    finally:
        session.close()
        writer.close()
    assert writer.error is None
    return path


def person_answers(session, agent, answers, while_waiting=None):
    """The person at the keyboard: while the first call waits, they use pdb themselves; then they
    answer each waiting call in turn (from another thread, as the app's keys do)."""
    answers = list(answers)

    def listen(event):
        if event.kind != "approval_requested":
            return
        call_id, answer = event.data.call_id, answers.pop(0)
        todo = while_waiting.pop(0) if while_waiting else None

        def act():
            if todo is not None:
                todo()
            agent.answer(call_id, answer)

        threading.Timer(0.05, act).start()

    session.events.subscribe(listen, replay=False)


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    """Three recorded sessions (built once for the module) and the repos they ran on."""
    root = tmp_path_factory.mktemp("sessions")
    out = {}

    # 1. The agent with the person in the loop: the person rejects the first edit with a comment,
    #    debugs in the same pdb while a call waits, sends a hint, tries and approves the fix.
    repo = make_repo(root / "tally", TALLY)
    out["agent_repo"] = repo

    def agent_run(s):
        model = ScriptedModel.from_file(SCRIPTS / "tally.json")
        agent = Agent(s, model, mode="auto", max_steps=20)

        def person_debugs():
            s.send("p total, len(values)", actor=HUMAN)
            s.send("where", actor=HUMAN)
            agent.hint("len(values) is the count")

        person_answers(s, agent, [Answer("reject", "just divide by len(values)"), Answer("try"),
                                  Answer("approve"), Answer("approve")], [person_debugs])
        assert agent.run() == "submitted"
        s.run_tests()

    out["agent"] = record(repo, root / "agent.jsonl", agent_run, mode="auto", model="scripted:tally")

    # 2. New, deleted and binary files, and an undo; a made-up price, so the cost is known.
    repo = make_repo(root / "files", FILES)
    out["files_repo"] = repo
    steps = [
        {"text": "A helper module.", "tool_calls": [{"name": "bash", "arguments": {
            "command": "printf 'def median(v):\\n    return sorted(v)[len(v) // 2]\\n' > tally/stats.py"}}]},
        {"tool_calls": [{"name": "bash", "arguments": {"command": "rm NOTES.txt tally/old.py"}}]},
        {"tool_calls": [{"name": "bash", "arguments": {"command": "printf '\\000\\001\\002\\377' > tally/blob.bin"}}]},
        {"tool_calls": [{"name": "edit", "arguments": {"path": "tally/__init__.py", "start": 5, "end": 5,
                                                       "new_code": FIXED}}]},
        {"tool_calls": [{"name": "bash", "arguments": {"command": "echo '# oops' >> tests/test_tally.py"}}]},
        {"tool_calls": [{"name": "submit", "arguments": {"message": "fixed, with extras"}}]},
    ]

    def files_run(s):
        agent = Agent(s, ScriptedModel(steps, name="files", fake_price=(1e-6, 2e-6)), mode="auto", max_steps=20,
                      task="fix it", policy=Policy.from_config({"allow": ["bash", "edit", "submit"], "ask": []}))
        assert agent.run() == "submitted"
        s.undo()  # the person takes back the last change (the test file)

    out["files"] = record(repo, root / "files.jsonl", files_run, mode="auto", model="scripted:files")

    # 3. A person alone (no agent): pdb commands, a fix by hand, the tests.
    repo = make_repo(root / "manual", TALLY)
    out["manual_repo"] = repo

    def manual_run(s):
        s.set_breakpoint("tally/__init__.py", 5)
        s.send("c")
        s.send("p total")
        s.send("p len(values)")
        s.edit("tally/__init__.py", FIXED + "\n", 5, 5)
        assert s.run_tests().ok

    out["manual"] = record(repo, root / "manual.jsonl", manual_run)
    return out


def fresh_copy(repo: Path, dest: Path, as_git: bool = False) -> Path:
    shutil.copytree(repo, dest, ignore=shutil.ignore_patterns("__pycache__", ".pytest_cache"))
    if as_git:
        git(dest, "init", "-q")
        git(dest, "add", "-A")
        git(dest, "commit", "-qm", "start")
    return dest


def with_repo(session_file: Path, repo: Path, dest: Path) -> Path:
    """A copy of a session file whose header points at another repo (a copy of the original)."""
    lines = session_file.read_text().splitlines(keepends=True)
    header = json.loads(lines[0])
    header["repo"] = str(repo)
    dest.write_text(json.dumps(header) + "\n" + "".join(lines[1:]))
    return dest


def cli(*args, env=None):
    return subprocess.run([sys.executable, "-m", "dgym_tui", *map(str, args)], capture_output=True, text=True,
                          env={**os.environ, **(env or {})}, timeout=120)


def one_line_error(out) -> str:
    err = [line for line in out.stderr.splitlines() if "warning:" not in line]
    assert len(err) == 1 and "Traceback" not in out.stderr, out.stderr
    return err[0]


def pytest_passes(repo: Path) -> bool:
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"], cwd=repo,
                          capture_output=True).returncode == 0


# --- the final patch ------------------------------------------------------------------------------


def test_the_exported_patch_applies_to_a_clean_copy_and_its_tests_pass(made, tmp_path):
    recording = read_session(made["files"])
    out = cli("export", made["files"], "--patch", tmp_path / "fix.diff")
    assert out.returncode == 0, out.stderr
    diff = (tmp_path / "fix.diff").read_text()
    assert diff == export_patch(recording)
    assert "new file mode" in diff and "deleted file mode" in diff and "GIT binary patch" in diff
    assert "tests/test_tally.py" not in diff  # undone by the person: not part of the final change
    copy = fresh_copy(made["files_repo"], tmp_path / "clean")
    assert not pytest_passes(copy)
    subprocess.run(["git", "apply", str(tmp_path / "fix.diff")], cwd=copy, check=True)
    assert pytest_passes(copy)
    assert (copy / "tally/stats.py").read_text().startswith("def median(v):")
    assert (copy / "tally/blob.bin").read_bytes() == b"\x00\x01\x02\xff"
    assert not (copy / "NOTES.txt").exists() and not (copy / "tally/old.py").exists()
    assert (copy / "tests/test_tally.py").read_text() == TALLY["tests/test_tally.py"]
    assert "wrote the change to 5 file(s)" in out.stderr


def test_a_session_that_changed_nothing_writes_no_patch(made, tmp_path):
    lines = made["manual"].read_text().splitlines(keepends=True)
    cut = [line for line in lines if '"kind":"checkpoint"' not in line]  # as if the edit never happened
    (tmp_path / "s.jsonl").write_text("".join(cut))
    out = cli("export", tmp_path / "s.jsonl", "--patch", tmp_path / "p.diff")
    assert out.returncode == 1 and "the session changed no file" in one_line_error(out)
    assert not (tmp_path / "p.diff").exists()


# --- apply ------------------------------------------------------------------------------------------


def test_apply_shows_then_applies_all_then_the_second_time_is_a_no_op(made, tmp_path):
    repo = fresh_copy(made["files_repo"], tmp_path / "files")
    session = with_repo(made["files"], repo, tmp_path / "s.jsonl")
    before = tree_hash(repo)
    out = cli("apply", session)  # no --yes: shows what it would do, changes nothing
    assert out.returncode == 0 and "+    return total / len(values)" in out.stdout
    assert "would change 5 file(s)" in out.stdout and "--yes" in out.stdout
    assert tree_hash(repo) == before
    out = cli("apply", session, "--yes")
    assert out.returncode == 0 and out.stdout.splitlines()[-1].startswith("applied: changed 5 file(s)")
    assert pytest_passes(repo) and not (repo / "NOTES.txt").exists()
    after = tree_hash(repo)
    out = cli("apply", session, "--yes")
    assert out.returncode == 0 and "already applied" in out.stdout and "nothing to do" in out.stdout
    assert tree_hash(repo) == after
    # and the app's functions agree
    plan = plan_apply(read_session(session))
    assert plan.already_applied and not plan.can_apply and apply(plan).startswith("already applied")


def test_apply_refuses_when_the_person_edited_a_touched_file_and_changes_nothing(made, tmp_path):
    repo = fresh_copy(made["agent_repo"], tmp_path / "tally", as_git=True)
    session = with_repo(made["agent"], repo, tmp_path / "s.jsonl")
    (repo / "tally/__init__.py").write_text("# my own note\n" + TALLY["tally/__init__.py"])
    before = tree_hash(repo)
    out = cli("apply", session, "--yes")
    assert out.returncode == 1
    error = one_line_error(out)
    assert "differ in" in error and "tally/__init__.py" in error and "git apply --3way" in error
    assert tree_hash(repo) == before
    plan = plan_apply(read_session(session))
    assert plan.changed_files == ["tally/__init__.py"] and plan.is_git and not plan.can_apply
    with pytest.raises(ApplyError, match="tally/__init__.py"):
        apply(plan)
    # the way out the message names: a patch against the session's start, merged by git
    assert cli("export", session, "--patch", tmp_path / "p.diff").returncode == 1
    out = cli("export", session, "--patch", tmp_path / "p.diff", "--against-start")
    assert out.returncode == 0 and "git apply --3way" in out.stderr
    git(repo, "add", "-A")  # --3way works on the index
    subprocess.run(["git", "apply", "--3way", str(tmp_path / "p.diff")], cwd=repo, check=True, capture_output=True)
    text = (repo / "tally/__init__.py").read_text()
    assert text.startswith("# my own note\n") and FIXED in text


def test_apply_between_plan_and_apply_a_changed_file_stops_it(made, tmp_path):
    repo = fresh_copy(made["manual_repo"], tmp_path / "tally")
    plan = plan_apply(read_session(with_repo(made["manual"], repo, tmp_path / "s.jsonl")))
    assert plan.can_apply and plan.touched == ["tally/__init__.py"] and plan.changed_files == []
    (repo / "tally/__init__.py").write_text("changed meanwhile\n")
    with pytest.raises(ApplyError, match="changed since the plan"):
        apply(plan)
    assert (repo / "tally/__init__.py").read_text() == "changed meanwhile\n"


def test_apply_in_a_repo_that_is_a_folder_of_a_bigger_git_work_tree(made, tmp_path):
    top = tmp_path / "mono"
    repo = fresh_copy(made["manual_repo"], top / "libs" / "tally")
    git(top, "init", "-q")
    git(top, "add", "-A")
    git(top, "commit", "-qm", "start")
    plan = plan_apply(read_session(with_repo(made["manual"], repo, tmp_path / "s.jsonl")))
    assert plan.is_git and plan.can_apply
    assert apply(plan).startswith("applied")
    assert FIXED in (repo / "tally/__init__.py").read_text() and pytest_passes(repo)
    assert git(top, "status", "--porcelain").split() == ["M", "libs/tally/tally/__init__.py"]


# --- the formats ---------------------------------------------------------------------------------------


def test_chat_export_loads_line_by_line_and_every_tool_call_has_its_result(made, tmp_path):
    target = tmp_path / "train.jsonl"
    out = cli("export", made["agent"], made["manual"], "--format", "chat", "-o", target)
    assert out.returncode == 0, out.stderr
    lines = target.read_text().splitlines()
    assert len(lines) == 2  # one conversation per session
    agent, manual = (json.loads(line) for line in lines)
    for convo in (agent, manual):
        assert check_pairs(convo["messages"]) == []
        assert {"pdb", "edit"} <= {t["function"]["name"] for t in convo["tools"]}
        calls = [c for m in convo["messages"] for c in m.get("tool_calls") or []]
        results = [m for m in convo["messages"] if m["role"] == "tool"]
        assert sorted(c["id"] for c in calls) == sorted(m["tool_call_id"] for m in results)
        assert all(json.loads(c["function"]["arguments"]) is not None for c in calls)
    messages = agent["messages"]
    assert [m["role"] for m in messages[:2]] == ["system", "user"]
    # the person's pdb commands, typed while the agent's edit waited, are tool calls with their output
    person = [(c["function"]["name"], json.loads(c["function"]["arguments"])) for m in messages
              for c in m.get("tool_calls") or [] if c["id"].startswith("person_")]
    assert ("pdb", {"command": "p total, len(values)"}) in person and ("pdb", {"command": "where"}) in person
    i = next(i for i, m in enumerate(messages) if m.get("tool_calls") and
             m["tool_calls"][0]["function"]["arguments"] == json.dumps({"command": "p total, len(values)"})
             and m["tool_calls"][0]["id"].startswith("person_"))
    assert messages[i + 1]["role"] == "tool" and "(12, 3)" in messages[i + 1]["content"]
    assert any(m["role"] == "user" and m["content"] == "A hint from the person: len(values) is the count"
               for m in messages)
    assert any("Their comment: just divide by len(values)" in (m.get("content") or "") for m in messages)
    assert not any("Meanwhile the person did this" in (m.get("content") or "") for m in messages)
    assert all(set(m) <= {"role", "content", "tool_calls", "tool_call_id"} for m in messages)
    # a session with no agent: its own system prompt and task, then the person's commands
    assert manual["messages"][0]["role"] == "system"
    assert manual["messages"][1]["content"].startswith("The program fails in the test tests/test_tally.py::test_mean: "
                                                       "AssertionError: assert 6.0 == 4")
    commands = [json.loads(c["function"]["arguments"]).get("command") for m in manual["messages"]
                for c in m.get("tool_calls") or [] if c["function"]["name"] == "pdb"]
    assert commands[:3] == ["break tally/__init__.py:5", "c", "p total"]  # the gutter's breakpoint, then typed


def test_chat_answers_a_call_the_session_ended_before_running(made, tmp_path):
    lines = made["files"].read_text().splitlines(keepends=True)
    last_reply = max(i for i, line in enumerate(lines) if '"kind":"model_reply"' in line)
    (tmp_path / "cut.jsonl").write_text("".join(lines[:last_reply + 1]))  # killed right after the reply
    story = tell(read_session(tmp_path / "cut.jsonl"))
    assert story.interrupted and story.outcome == "interrupted"
    convo = json.loads(export(read_session(tmp_path / "cut.jsonl"), "chat"))
    assert check_pairs(convo["messages"]) == [] and convo["messages"][-1]["content"] == UNANSWERED


def test_debug_gym_trajectory_has_its_fields(made):
    trajectory = json.loads(export(load(made["agent"]), "debug-gym"))
    assert list(trajectory) == ["problem", "config", "tools", "uuid", "success", "log", "agent_type", "logger"]
    assert trajectory["problem"] == "tally" and trajectory["success"] is True
    assert trajectory["uuid"] == json.loads(export(load(made["agent"]), "debug-gym"))["uuid"]  # stable
    assert {t["function"]["name"] for t in trajectory["tools"]} >= {"pdb", "view", "edit", "eval", "submit"}
    first = trajectory["log"][0]
    assert first["step_id"] == 0 and first["action"] is None and first["system_message"]["role"] == "system"
    assert "pytest's report" in first["problem_message"]["content"]
    steps = trajectory["log"][1:]
    assert [s["step_id"] for s in steps] == list(range(1, len(steps) + 1))
    assert [s["action"]["name"] for s in steps][:4] == ["pdb", "pdb", "pdb", "edit"]
    for step in steps:
        assert list(step)[:5] == ["step_id", "content", "reasoning", "action", "obs"]
        assert set(step["action"]) == {"id", "name", "arguments"}
        pair = step["prompt_response_pairs"][0]
        assert None not in pair.values() and set(pair["token_usage"]) == {"prompt", "response"}
        assert pair["tool"] == step["action"] and pair["prompt"][0]["role"] == "system"
    # the prompt of each step is the conversation up to that query
    assert len(steps[1]["prompt_response_pairs"][0]["prompt"]) == 4
    assert "response" not in steps[1]["prompt_response_pairs"][0]  # no text in that reply: left out
    rejected = steps[3]
    assert rejected["obs"].startswith("not executed: the person rejected this call")
    assert "(12, 3)" in steps[2]["obs"]


def test_debug_gym_prompts_carry_the_trimmed_text_the_agent_sent(tmp_path):
    repo = make_repo(tmp_path / "tally", TALLY)
    steps = [{"tool_calls": [{"name": "bash", "arguments": {"command": "seq 1 3000"}}]} for _ in range(6)]

    def run(s):
        model = ScriptedModel(steps, name="big", context_window=8000)
        Agent(s, model, mode="auto", max_steps=6, task="count", auto_answer=lambda r: Answer("approve"),
              policy=Policy.from_config({"allow": ["bash"], "ask": []})).run()
        run.sent = model.requests

    path = record(repo, tmp_path / "big.jsonl", run, mode="auto", model="scripted:big")
    log = json.loads(export(load(path), "debug-gym"))["log"][1:]
    prompts = [s["prompt_response_pairs"][0]["prompt"] for s in log if "prompt_response_pairs" in s]
    assert prompts == [r["messages"] for r in run.sent[:len(prompts)]]  # exactly what the model was sent
    from dgym_tui.agent.history import TRIMMED

    assert any(m.get("content") == TRIMMED for m in prompts[-1])


def test_mini_swe_agent_trajectory_has_its_fields_and_an_unknown_cost_stays_unknown(made):
    traj = json.loads(export(load(made["agent"]), "mini-swe-agent"))
    assert traj["trajectory_format"] == "mini-swe-agent-1.1"
    info = traj["info"]
    assert info["model_stats"] == {"instance_cost": None, "api_calls": 7}  # scripted: no price, never 0
    assert info["exit_status"] == "Submitted" and info["submission"] == "mean divided by n - 1 instead of n"
    assert info["config"]["model"]["model_name"] == "scripted:tally"
    messages = traj["messages"]
    assert messages[0]["role"] == "system" and messages[-1]["role"] == "exit"
    assert messages[-1]["extra"] == {"exit_status": "Submitted", "submission": "mean divided by n - 1 instead of n"}
    assistant = [m for m in messages if m["role"] == "assistant"]
    assert len(assistant) == 7 and all(m["extra"]["actions"] for m in assistant)
    assert all("raw_output" in m["extra"] for m in messages if m["role"] == "tool")
    known = json.loads(export(load(made["files"]), "mini-swe-agent"))["info"]["model_stats"]
    assert known["api_calls"] == 6 and isinstance(known["instance_cost"], float) and known["instance_cost"] > 0


def test_markdown_tells_the_story(made):
    text = export(load(made["agent"]), "markdown")
    assert text.startswith("# Debugging session: tally\n")
    assert "## Task" in text and "pytest's report" in text
    assert "### Step 1" in text and "The test says mean([2, 4, 6]) is 6.0" in text
    assert "**The person**: reject — “just divide by len(values)”" in text
    assert "**The person, in pdb:** `(Pdb) p total, len(values)`" in text
    assert "len(values) is the count" in text
    assert "```diff" in text and "+    return total / len(values)" in text
    assert "cost unknown" in text and "scripted" in text
    assert "- **outcome**: submitted, tests pass" in text
    assert text.count("- **the agent's summary**: mean divided by n - 1 instead of n") == 1
    files = export(load(made["files"]), "markdown")
    assert "**The person undid a change** (undid: shell: echo '# oops' >> tests/test_tally.py)" in files
    assert "- **outcome**: submitted\n" in files and "(before the last change)" in files
    assert "- **cost**: $0.01" in files and "GIT binary patch" in files
    manual = export(load(made["manual"]), "markdown")
    # each command shows its own output, not what the next call (the edit) made the program print
    assert "`(Pdb) p len(values)`\n\nOutput:\n\n```\n3\n```" in manual


@pytest.mark.parametrize("fmt", ["markdown", "debug-gym", "mini-swe-agent", "chat"])
def test_a_manual_session_exports_in_every_format(made, fmt, tmp_path):
    out = cli("export", made["manual"], "--format", fmt, "-o", tmp_path / "out")
    assert out.returncode == 0 and out.stderr == ""
    text = (tmp_path / "out").read_text()
    if fmt == "markdown":
        assert "**The person, in pdb:** `(Pdb) p total`" in text and "model queries" not in text
        assert "- **mode**: manual" in text and "+    return total / len(values)" in text
    elif fmt == "debug-gym":
        log = json.loads(text)["log"]
        assert [s["action"]["arguments"].get("command") for s in log[1:4]] == ["break tally/__init__.py:5", "c",
                                                                               "p total"]
        assert "12" in log[3]["obs"] and all("prompt_response_pairs" not in s for s in log[1:])
    elif fmt == "mini-swe-agent":
        traj = json.loads(text)
        assert traj["info"]["model_stats"] == {"instance_cost": 0.0, "api_calls": 0}
        assert traj["info"]["exit_status"] == "Manual" and traj["messages"][-1]["role"] == "exit"
        assert any("User command: \n```pdb\np total\n```" == m["content"] for m in traj["messages"])
    else:
        assert check_pairs(json.loads(text)["messages"]) == []


def test_exported_json_cannot_carry_control_sequences_to_a_terminal(made):
    for fmt in ("debug-gym", "mini-swe-agent", "chat"):
        text = export(load(made["agent"]), fmt)
        assert text.isascii() and "\x1b" not in text


# --- the listing ---------------------------------------------------------------------------------------


def test_sessions_lists_newest_first_with_steps_and_outcome(made, tmp_path, monkeypatch):
    monkeypatch.setenv("DGYM_TUI_DATA_DIR", str(tmp_path / "data"))
    from dgym_tui.core.session_file import sessions_dir

    for name, created in (("agent", 100), ("manual", 300), ("files", 200)):
        lines = made[name].read_text().splitlines(keepends=True)
        header = json.loads(lines[0])
        header["created"] = 1.7e9 + created
        target = sessions_dir(header["repo"]) / f"{name}.jsonl"  # where the app saves them
        target.parent.mkdir(parents=True)
        target.write_text(json.dumps(header) + "\n" + "".join(lines[1:]))
    folder = sessions_dir(str(made["agent_repo"]))
    text = (folder / "agent.jsonl").read_text()
    (folder / "killed.jsonl").write_text(text[:text.index('"kind":"model_request","data":{"step":3') + 20])
    (folder / "junk.jsonl").write_text("hello\n")
    out = cli("sessions")
    assert out.returncode == 0, out.stderr
    rows = out.stdout.splitlines()
    assert rows[0].split() == ["DATE", "REPO", "MODE", "MODEL", "STEPS", "OUTCOME", "FILE"]
    by_file = {Path(row.split()[-1]).name: row for row in rows[1:]}
    assert len(by_file) == 5
    order = [Path(row.split()[-1]).name for row in rows[1:]]
    assert order[0] == "junk.jsonl"  # no header: dated by the file's own time (now)
    assert [n for n in order if n in ("manual.jsonl", "files.jsonl", "agent.jsonl")] == \
        ["manual.jsonl", "files.jsonl", "agent.jsonl"]
    assert " auto " in by_file["agent.jsonl"] and "scripted:tally" in by_file["agent.jsonl"]
    assert " 7  submitted, tests pass " in by_file["agent.jsonl"]
    assert " 6  submitted " in by_file["files.jsonl"]  # the person undid a change after the last test run
    assert " manual " in by_file["manual.jsonl"] and " tests pass " in by_file["manual.jsonl"]
    assert " interrupted " in by_file["killed.jsonl"]  # torn mid-line, as a SIGKILL leaves it
    assert "not a dgym-tui session" in by_file["junk.jsonl"]
    # one repo: only its sessions
    out = cli("sessions", made["agent_repo"])
    names = sorted(Path(row.split()[-1]).name for row in out.stdout.splitlines()[1:])
    assert out.returncode == 0 and names == ["agent.jsonl", "junk.jsonl", "killed.jsonl"]
    assert [s.path.name for s in list_sessions(str(made["manual_repo"]))] == ["manual.jsonl"]
    out = cli("sessions", tmp_path / "elsewhere")
    assert out.returncode == 0 and out.stdout.startswith("no saved sessions in ")


def test_the_listing_reads_what_a_full_read_reads(made):
    for name in ("agent", "files", "manual"):
        summary, story = summarize(made[name]), tell(read_session(made[name]))
        assert summary.outcome == story.outcome
        assert summary.steps == len(story.steps)
        assert (summary.mode, summary.repo) == (story.mode, story.repo)


def test_an_event_look_alike_inside_a_payload_does_not_fool_the_listing(made, tmp_path):
    lines = made["manual"].read_text().splitlines(keepends=True)
    fake = '{"kind":"agent_status","data":{"state":"submitted","step":99}}'
    event = {"seq": 999, "ts": 1.0, "actor": "human", "kind": "pdb_input", "data": {"command": fake}}
    (tmp_path / "s.jsonl").write_text("".join(lines) + json.dumps(event, separators=(",", ":")) + "\n")
    summary = summarize(tmp_path / "s.jsonl")
    assert summary.steps == 0 and "submitted" not in summary.outcome


# --- bad input --------------------------------------------------------------------------------------


def test_a_file_truncated_mid_line_is_read_with_a_warning(made, tmp_path):
    text = made["agent"].read_text()
    (tmp_path / "s.jsonl").write_text(text[:len(text) - 40])
    out = cli("export", tmp_path / "s.jsonl", "--format", "markdown")
    assert out.returncode == 0 and "# Debugging session: tally" in out.stdout
    assert out.stderr.count("\n") == 1 and "warning: line" in out.stderr and "cut short" in out.stderr
    assert "interrupted" in out.stdout
    assert summarize(tmp_path / "s.jsonl").outcome == "interrupted"


def test_an_unknown_schema_version_is_a_clear_error(made, tmp_path):
    lines = made["manual"].read_text().splitlines(keepends=True)
    header = json.loads(lines[0])
    header["schema"] = 99
    (tmp_path / "s.jsonl").write_text(json.dumps(header) + "\n" + "".join(lines[1:]))
    for args in (("export", tmp_path / "s.jsonl", "--format", "chat"), ("apply", tmp_path / "s.jsonl")):
        out = cli(*args)
        assert out.returncode == 2 and "uses session schema 99" in one_line_error(out) and out.stdout == ""


def test_a_repo_that_no_longer_exists(made, tmp_path):
    session = with_repo(made["agent"], tmp_path / "gone", tmp_path / "s.jsonl")
    for fmt in ("markdown", "debug-gym", "mini-swe-agent", "chat"):
        out = cli("export", session, "--format", fmt)
        assert out.returncode == 0 and out.stdout, (fmt, out.stderr)
    markdown = export(load(session), "markdown")
    assert "could not be rebuilt from the repo" in markdown and "+    return total / len(values)" in markdown
    out = cli("export", session, "--patch", tmp_path / "p.diff")
    assert out.returncode == 1 and "no longer exists" in one_line_error(out) and not (tmp_path / "p.diff").exists()
    out = cli("apply", session, "--yes")
    assert out.returncode == 1 and "no longer exists" in one_line_error(out)
    with pytest.raises(PatchError, match="no longer exists"):
        export_patch(load(session))


@pytest.mark.parametrize("content, message", [(b"", "is empty"), (b"\n\n", "is empty"),
                                              (b"hello world\nnot json\n", "first line is not JSON"),
                                              (b'{"a": 1}\n{"b": 2}\n', "no session header"),
                                              (b"\x00\x01binary", "first line is not JSON")])
def test_files_that_are_not_sessions_are_refused_in_one_line(tmp_path, content, message):
    path = tmp_path / "s.jsonl"
    path.write_bytes(content)
    for args in (("export", path, "--format", "markdown"), ("export", path, "--patch", "-"), ("apply", path)):
        out = cli(*args)
        assert out.returncode == 2 and message in one_line_error(out) and out.stdout == ""
    with pytest.raises(SessionFileError):
        load(path)


def test_usage_errors_exit_2(made, tmp_path):
    assert cli("export", made["agent"]).returncode == 2  # neither --patch nor --format
    assert cli("export", made["agent"], "--format", "yaml").returncode == 2
    assert cli("export", made["agent"], made["manual"], "--format", "markdown").returncode == 2
    assert cli("export", made["agent"], "--format", "chat", "--against-start").returncode == 2
    out = cli("export", made["agent"], "--format", "chat", "-o", tmp_path / "no" / "such" / "dir")
    assert out.returncode == 2 and "cannot write" in one_line_error(out)
    out = cli("apply", tmp_path / "missing.jsonl")
    assert out.returncode == 2 and "cannot read" in one_line_error(out)
    for sub in ("sessions", "export", "apply"):
        out = cli(sub, "--help")
        assert out.returncode == 0 and f"dgym-tui {sub}" in out.stdout
    assert "dgym-tui export SESSION" in cli("--help").stdout


def test_check_pairs_finds_a_call_without_its_result_and_a_result_without_its_call():
    call = {"role": "assistant", "content": None,
            "tool_calls": [{"id": "a", "type": "function", "function": {"name": "pdb", "arguments": "{}"}}]}
    assert check_pairs([call, {"role": "tool", "tool_call_id": "a", "content": "x"}]) == []
    assert check_pairs([call, {"role": "user", "content": "hi"}])        # the result is missing
    assert check_pairs([call])                                             # ...at the end too
    assert check_pairs([{"role": "tool", "tool_call_id": "b", "content": "x"}])  # no call for it


def test_the_sessions_package_never_imports_the_ui():
    code = ("import sys\n"
            "import dgym_tui.sessions, dgym_tui.commands.sessions, dgym_tui.sessions.markdown\n"
            "import dgym_tui.sessions.trajectory, dgym_tui.sessions.chat\n"
            "print(','.join(sorted(m for m in sys.modules if m == 'textual' or m.startswith(('textual.', 'dgym_tui.ui')))))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == ""


def test_a_killed_session_taken_up_again_lists_and_exports_as_one(made, tmp_path):
    """Cut after its second change (a call under way, as a SIGKILL leaves it), then resumed into
    the same file (the person finishes by hand): one story, one final change."""
    lines = made["files"].read_text().splitlines(keepends=True)
    second = [i for i, line in enumerate(lines) if '"kind":"checkpoint"' in line][1]
    path = tmp_path / "s.jsonl"
    path.write_text("".join(lines[:second + 1]))
    assert summarize(path).outcome == "interrupted" and tell(read_session(path)).interrupted
    session = Session.resume(read_session(path))
    writer = SessionWriter.append(path, session)
    try:
        session.start()
        session.edit("tally/__init__.py", FIXED + "\n", 5, 5)
        assert session.run_tests().ok
    finally:
        session.close()
        writer.close()
    story = tell(read_session(path))
    assert not story.interrupted and story.outcome == "stopped, tests pass" == summarize(path).outcome
    diff = export_patch(read_session(path))
    assert "tally/stats.py" in diff and "NOTES.txt" in diff and "+" + FIXED in diff and "blob.bin" not in diff
    copy = fresh_copy(made["files_repo"], tmp_path / "clean")
    subprocess.run(["git", "apply", "-"], input=diff.encode(), cwd=copy, check=True)
    assert pytest_passes(copy) and not (copy / "NOTES.txt").exists()


def test_the_bundled_demo_session_exports_and_its_change_fixes_the_example(tmp_path):
    from conftest import EXAMPLE

    from dgym_tui.demo import demo_session

    repo = fresh_copy(EXAMPLE, tmp_path / "shopcart")
    session = with_repo(demo_session(), repo, tmp_path / "demo.jsonl")
    recording = load(session)
    story = tell(recording)
    assert story.outcome == "submitted, tests pass" and story.agent.scripted
    for fmt in ("markdown", "debug-gym", "mini-swe-agent"):
        assert export(recording, fmt)
    assert check_pairs(json.loads(export(recording, "chat"))["messages"]) == []
    assert not pytest_passes(repo)
    plan = plan_apply(recording)
    assert plan.can_apply and len(plan.touched) >= 2
    assert apply(plan).startswith("applied") and pytest_passes(repo)


def test_the_bundled_example_itself_is_never_changed_by_apply(tmp_path):
    from conftest import EXAMPLE

    from dgym_tui.demo import demo_session
    from dgym_tui.examples import example_path

    recording = load(demo_session())
    recording.header["repo"] = str(example_path())  # as `dgym-tui demo` replays it
    before = {p: p.read_bytes() for p in Path(EXAMPLE).rglob("*.py")}
    plan = plan_apply(recording)
    assert not plan.can_apply and "bundled example" in plan.problem and "a copy" in plan.problem
    with pytest.raises(ApplyError):
        apply(plan)
    assert {p: p.read_bytes() for p in Path(EXAMPLE).rglob("*.py")} == before
