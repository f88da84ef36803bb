"""A person on a real SWE-bench instance (issue 48, part 5): `dgym-tui --task FILE ID` opens it in
the app, in its own image at /testbed; in the review inbox of a batch over it, `o` (the trial's
replay, then a take-over) runs in that image too, and the take-over's change, rebuilt over the
image's files, becomes a new revision scored by the harness. A sandbox error is one line, and the
app stays up.

The instance is requests 2.27.0 + 2.27.1's fix (tests/swebench_real.py), in the environment image
`dgym-tui image swebench` builds (reused when the engine has it); the batch is a real one, its
model scripted (it applies the gold patch). A real Docker engine; the installed app in tmux."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from test_e2e_tmux import installed  # noqa: F401  (fixture: dgym-tui installed from its wheel)
from test_ui_support import wait_for

from dgym_tui.batch import instance
from dgym_tui.review import rework
from dgym_tui.review.inbox import RunDir

pytestmark = pytest.mark.docker
pytest.importorskip("swebench", reason="the swebench extra: pip install 'dgym-tui[swebench]' (.ci/run does)")

IMAGE = "swebench/sweb.eval.x86_64.psf_1776_requests-v2.27.1:latest"
ID = "psf__requests-v2.27.1"
F2P = ["tests/test_utils.py::test_prepend_scheme_if_needed[http://user:pass@example.com/path?query-"
       "http://user:pass@example.com/path?query]",
       "tests/test_utils.py::test_prepend_scheme_if_needed[http://user@example.com/path?query-"
       "http://user@example.com/path?query]"]
TOOLS = "view,listdir,grep,eval,edit,bash,submit"
SCORE_TIMEOUT = 300  # seconds: the harness's eval script in a fresh container, on a shared 2-core machine


def _dgym(*args: str, timeout: float = 1200, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "dgym_tui", *args], capture_output=True, text=True,
                          timeout=timeout, env=env)


@pytest.fixture(scope="module")
def made(tmp_path_factory) -> Path:
    """root/instances.jsonl (the dataset's row, its image named), root/repos, root/run: a batch of
    both arms over it, each applying the gold patch (resolved)."""
    import docker
    import swebench_real
    from conftest import require_docker

    require_docker()
    root = tmp_path_factory.mktemp("instance")
    record = swebench_real.requests_instance(root / "repos")
    record.update(FAIL_TO_PASS=json.dumps(F2P), image=IMAGE)  # the harness's F2P (test_swebench_real checks it)
    path = root / "instances.jsonl"
    path.write_text(json.dumps(record) + "\n")
    try:
        docker.from_env().images.get(IMAGE)
    except docker.errors.ImageNotFound:  # built here, offline, as test_swebench_real builds it
        built = _dgym("image", "swebench", str(path), "--repos", str(root / "repos"))
        assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-2000:]
    script = root / "gold.json"
    script.write_text(json.dumps([
        {"tool_calls": [{"name": "bash", "arguments": {
            "command": f"git apply <<'EOF_GOLD'\n{record['patch']}EOF_GOLD\ngit status --short"}}]},
        {"tool_calls": [{"name": "submit", "arguments": {"message": "fixed"}}]}]))
    done = _dgym("batch", str(path), "--repos", str(root / "repos"), "--model", f"scripted:{script}",
                 "--out", str(root / "run"), "--arm", f"with-pdb=pdb,{TOOLS}", "--arm", f"no-pdb={TOOLS}",
                 "--yes", "--workers", "2")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    results = [json.loads(line) for line in (root / "run" / "results.jsonl").read_text().splitlines()]
    assert [r["status"] for r in results] == ["resolved", "resolved"], [r["reason"] for r in results]
    return root


@pytest.fixture
def run_dir(made, tmp_path) -> Path:
    """A private copy of the batch's RUN_DIR."""
    shutil.copytree(made / "run", tmp_path / "run")
    return tmp_path / "run"


@pytest.fixture(autouse=True)
def config_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("DGYM_TUI_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("DGYM_TUI_DATA_DIR", str(tmp_path / "data"))


# --- the instance, found and opened ------------------------------------------------------------------


def test_find_reads_the_datasets_row_and_a_batchs_task(made):
    row = instance.find(made / "instances.jsonl", ID)
    ran = instance.find(made / "run" / "tasks.jsonl", ID)
    for task in (row, ran):
        assert task.id == ID and task.environment["image"] == IMAGE and task.environment["workdir"] == "/testbed"
        assert task.fail_to_pass == F2P and "pytest" in task.environment["test_command"]
    with pytest.raises(instance.InstanceError, match=r"instances\.jsonl: no instance 'nope' in it$"):
        instance.find(made / "instances.jsonl", "nope")
    with pytest.raises(instance.InstanceError, match="is not on this Docker engine and cannot be pulled"):
        instance.find(made / "instances.jsonl", ID, check_image=lambda image: False)


def test_task_option_errors_exit_2_with_one_line(made, tmp_path):
    env = {**os.environ, "DGYM_TUI_DATA_DIR": str(tmp_path / "data")}
    path = str(made / "instances.jsonl")
    for args, said in [((path, "nope"), "no instance 'nope' in it"),
                       ((path,), "give the id of the instance to open"),
                       ((path, ID, "--sandbox", "local"), "--sandbox docker, not local"),
                       ((path, ID, "--tests", "eval", str(tmp_path)), "no REPO with it")]:
        done = _dgym("--task", *args, env=env, timeout=120)
        assert done.returncode == 2, (args, done.stdout, done.stderr)
        assert said in done.stderr and "Traceback" not in done.stderr, done.stderr
        assert len([ln for ln in done.stderr.splitlines() if ln.startswith("dgym-tui")]) == 1, done.stderr


def test_a_trials_change_is_rebuilt_over_the_images_files(made):
    """A trial's session file now names its task; its checkpoints over the image's own files give
    the trial's patch again (what a take-over's revision is made from)."""
    from dgym_tui.core.session_file import read_session

    trial = made / "run" / "trials" / f"{ID}__no-pdb__1"
    recording = read_session(str(trial / "session.jsonl"))
    task, tests = instance.from_header(recording.header)
    assert task.id == ID and tests == "hidden"
    assert instance.patch_of(recording, task, tests) == (trial / "patch.diff").read_text()


def _tmux(name: str, command: str, cwd: Path, tmp_path: Path, installed: str):  # noqa: F811
    if shutil.which("tmux") is None:
        pytest.fail("tmux is needed for the end-to-end tests (CI installs it)")
    from test_e2e_tmux import Tmux

    env = {"DGYM_TUI_CONFIG_DIR": str(tmp_path / "config"), "DGYM_TUI_DATA_DIR": str(tmp_path / "data"),
           "TERM": "xterm-256color", "PATH": f"{Path(installed).parent}:{os.environ['PATH']}"}
    return Tmux(f"dgym-{name}-{os.getpid()}", command, str(cwd), env)


def test_installed_app_opens_the_instance_in_its_image_with_the_agent_beside(installed, made, tmp_path):  # noqa: F811
    """One command: `dgym-tui --task FILE ID`, the agent (scripted) beside the person; the code
    is the image's /testbed, on the image's Python."""
    script = tmp_path / "look.json"
    script.write_text(json.dumps([
        {"tool_calls": [{"name": "bash", "arguments": {
            "command": "pwd; python -c 'import sys; print(\"python\", sys.version_info[:2])'"}}]},
        {"tool_calls": [{"name": "submit", "arguments": {"message": "looked"}}]}]))
    tmux = _tmux("task", f"{installed} --task {made / 'instances.jsonl'} {ID} --model scripted:{script} "
                         "--mode auto", tmp_path, tmp_path, installed)
    try:
        tmux.wait_for(f"docker {IMAGE}, repo at /testbed", timeout=120)  # the status line: the instance's image
        tmux.wait_for("bash waits for you", timeout=180)  # the agent started once the tests ran (all pass)
        tmux.keys("a")  # the person approves its command
        events = tmux.wait_events(lambda events: any(e.get("kind") == "tool_result" for e in events),
                                  "the agent's bash", timeout=120)
        [ran] = [e["data"] for e in events if e.get("kind") == "tool_result"][:1]
        assert ran["observation"] == "/testbed\npython (3, 9)", ran  # in the image's folder, on its Python
        screen = tmux.screen()
        assert ID in screen and "Traceback" not in screen
        tmux.keys("q")
        if "Quit and" in tmux.wait_until(lambda s: "Quit and" in s or "DGYM-EXITED" in s, "quitting", timeout=30):
            tmux.keys("y")
        tmux.wait_for("DGYM-EXITED-0", timeout=60)
    finally:
        tmux.close()
    [session] = (tmp_path / "data" / "sessions").rglob("*.jsonl")
    header = json.loads(session.read_text().splitlines()[0])
    assert header["task"]["id"] == ID and header["tests"] == "hidden" and header["repo_name"] == ID


# --- the review inbox: o, its replay and take-over --------------------------------------------------


def replayed_in(app) -> bool:
    """The replay is read whole and on the screen (the trial's tests passed at the base without a
    stop: there is no first stop to wait for)."""
    return (app.replay is not None and app.replay.recording.complete and bool(app.main.query("#timeline"))
            and bool(app.main.query("Footer")))


async def test_take_over_runs_in_the_image_and_becomes_a_scored_revision(run_dir, monkeypatch):
    from dgym_tui.core.session_file import read_session
    from dgym_tui.ui.app import DgymApp
    from dgym_tui.ui.screens.review import ReviewApp

    run = RunDir.open(run_dir)
    trial = run.trials[f"{ID}__with-pdb__1"]
    replayed, data_dir = rework.prepare_replay(run, trial)
    monkeypatch.setenv("DGYM_TUI_DATA_DIR", str(data_dir))
    replay = DgymApp(recording=read_session(str(replayed)))
    async with replay.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: replayed_in(replay), timeout=30, what="the replay")
        replay.replay.seek(len(replay.replay.replayer.events))  # its end: the gold patch applied
        replay.replay.take_over(with_agent=False)
        await wait_for(pilot, lambda: replay.replay is None and replay.session.state.program in ("stopped", "exited",
                                                                                                 "error"),
                       timeout=240, what="the live session")
        session = replay.session
        assert session.state.program != "error", session.state.error
        assert session.state.sandbox.description == f"docker {IMAGE}, repo at /testbed", session.state.sandbox
        source = session.read_source("requests/utils.py")
        assert "netloc = '@'.join([auth, netloc])" in source  # the trial's change carried over
        first = source.splitlines()[0]
        session.edit("requests/utils.py", first + "  # reviewed by hand", 1, 1)  # the person's own edit
    replay.writer.close()
    monkeypatch.setattr(rework, "replay", lambda run_, trial_: rework.taken_over(data_dir))
    app = ReviewApp(run)
    async with app.run_test(size=(100, 24)) as pilot:
        await pilot.pause()
        row = [t.id for t in app.inbox.visible_trials()].index(trial.id)
        await pilot.press(*["down"] * row, "o")
        await wait_for(pilot, lambda: trial.revision == 1 and trial.pending is None, timeout=SCORE_TIMEOUT,
                       what="the take-over scored")
        assert trial.origin == "take-over" and trial.status == "resolved", trial.result.reason
    patch = (run_dir / "revisions" / trial.id / "1" / "patch.diff").read_text()
    assert "+# -*- coding: utf-8 -*-  # reviewed by hand" in patch and "'@'.join([auth, netloc])" in patch
    assert "tests/" not in patch


async def test_a_sandbox_that_cannot_start_is_one_line_and_the_replay_stays(run_dir):
    """The task's image gone: the take-over says so in one line; the app is still up."""
    from dgym_tui.core.session_file import read_session
    from dgym_tui.ui.app import DgymApp

    tasks = run_dir / "tasks.jsonl"
    tasks.write_text(tasks.read_text().replace(IMAGE, "dgym-tui-test-no-such-image:gone"))
    run = RunDir.open(run_dir)
    replayed, _data = rework.prepare_replay(run, run.trials[f"{ID}__no-pdb__1"])
    replay = DgymApp(recording=read_session(str(replayed)))
    async with replay.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: replayed_in(replay), timeout=30, what="the replay")
        replay.replay.take_over(with_agent=False)
        await wait_for(pilot, lambda: replay.replay is None and replay.session.state.program == "error",
                       timeout=120, what="the start's error")
        error = replay.session.state.error
        assert "dgym-tui-test-no-such-image" in error and "\n" not in error, error
        await pilot.pause()
        assert replay.is_running
    replay.writer.close()


async def test_o_says_a_failure_in_one_line_and_the_inbox_stays(run_dir, monkeypatch):
    from dgym_tui.sandbox.errors import SandboxError
    from dgym_tui.ui.screens.review import ReviewApp

    def fails(run_, trial_):
        raise SandboxError("x has no files to copy: nothing to debug there [/] (markup is not read)")

    monkeypatch.setattr(rework, "replay", fails)
    app = ReviewApp(RunDir.open(run_dir))
    async with app.run_test(size=(100, 24)) as pilot:
        await pilot.pause()
        await pilot.press("o")
        await pilot.pause()
        assert app.is_running
        note = str(app.screen.query_one("#review-note").render())
        assert "the replay did not open: x has no files to copy" in note, note


def test_installed_review_o_replays_and_takes_over_in_the_image(installed, run_dir, tmp_path):  # noqa: F811
    """`o` in a terminal on an instance's trial (the with-pdb arm's, then the no-pdb arm's): the
    replay takes the terminal, a take-over there is live in the instance's image, and quitting
    it comes back to the inbox (nothing changed: no new revision); the inbox exits 0."""
    tmux = _tmux("review-instance", f"{installed} review {run_dir}", tmp_path, tmp_path, installed)
    try:
        for arm in ("no-pdb", "with-pdb"):  # the inbox's rows, in its order
            tmux.wait_for("undecided 2", timeout=60)
            tmux.keys("o")
            tmux.wait_for("take over here", timeout=60)  # the replay's timeline
            tmux.keys("End")
            tmux.keys("Enter")
            screen = tmux.wait_for(f"docker {IMAGE.split(':')[0]}", timeout=240)  # live, in the image
            assert "Traceback" not in screen
            tmux.wait_for("(Pdb)", timeout=240)
            tmux.keys("Escape")
            tmux.keys("q")
            tmux.wait_for("Quit and discard", timeout=30)
            tmux.keys("y")
            screen = tmux.wait_for(f"{ID}__{arm}__1: the take-over changed nothing", timeout=180)  # the inbox
            assert "Traceback" not in screen
            tmux.keys("Down")
        tmux.keys("q")
        tmux.wait_for("DGYM-EXITED-0", timeout=60)
    finally:
        tmux.close()
    for arm in ("with-pdb", "no-pdb"):
        [session] = (run_dir / "revisions" / f"{ID}__{arm}__1" / "takeover" / "1" / "sessions").rglob("*.jsonl")
        header = json.loads(session.read_text().splitlines()[0])
        assert header["taken_over_from"] and header["task"]["id"] == ID
