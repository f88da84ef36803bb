"""End to end: the installed dgym-tui, driven in tmux like a person at a terminal.

Builds the wheel, installs it into a fresh virtualenv, opens a copy of the example in tmux and
goes: open, go to a line, set a breakpoint, continue to it, read a variable in the pdb console,
quit. Then the user's repo is checked unchanged, and no sandbox is left behind.
"""

from __future__ import annotations

import glob
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
import venv

import pytest

from conftest import BACKENDS, ROOT, docker_engine, is_running, tree_hash

pytestmark = [pytest.mark.e2e,
              pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")]


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> str:
    """dgym-tui installed from its wheel into a new virtualenv (dependencies from this Python)."""
    tmp = tmp_path_factory.mktemp("install")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                    "-w", str(tmp), str(ROOT)], check=True, capture_output=True)
    (wheel,) = tmp.glob("dgym_tui-*.whl")
    venv.create(tmp / "venv", system_site_packages=True)
    subprocess.run([tmp / "venv" / "bin" / "python", "-m", "pip", "install", "-q", "--no-deps", str(wheel)],
                   check=True, capture_output=True)
    return str(tmp / "venv" / "bin" / "dgym-tui")


class Tmux:
    # Named with the test run's pid: several suites may share one tmux server, and a session of
    # the same name is killed first.
    def __init__(self, name: str, command: str, cwd: str, env: dict[str, str]):
        self.name, self.env = name, env
        exports = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
        subprocess.run(["tmux", "kill-session", "-t", name], capture_output=True)
        subprocess.run(["tmux", "new-session", "-d", "-s", name, "-x", "140", "-y", "45", "-c", cwd,
                        # The pane's size must come from the pane: a COLUMNS/LINES inherited from
                        # whatever started the tmux server would override it.
                        f"env -u COLUMNS -u LINES {exports} {command}; echo DGYM-EXITED-$?; sleep 30"],
                       check=True)

    def screen(self) -> str:
        return subprocess.run(["tmux", "capture-pane", "-p", "-t", self.name], capture_output=True,
                              text=True).stdout

    def keys(self, *keys: str) -> None:
        subprocess.run(["tmux", "send-keys", "-t", self.name, *keys], check=True)

    def type(self, text: str) -> None:
        subprocess.run(["tmux", "send-keys", "-t", self.name, "-l", text], check=True)

    def wait_for(self, text: str, timeout: float = 60) -> str:
        return self.wait_until(lambda screen: text in screen, repr(text), timeout)

    def wait_until(self, condition, what: str, timeout: float = 60) -> str:
        """The screen once condition(screen) holds."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            screen = self.screen()
            if condition(screen):
                return screen
            time.sleep(0.1)
        # What the app was doing first, then the console and status lines, then the whole screen:
        # a CI log that keeps only the start of a long failure still says why.
        screen = self.screen()
        bottom = "\n".join(screen.rstrip("\n").splitlines()[-12:])
        raise AssertionError(f"{what} never appeared; {self.last_events()}\nthe screen's last lines:\n{bottom}\n"
                             f"the whole screen:\n{screen}")

    def session_file(self) -> str | None:
        """The newest session file the app writes (in its data folder)."""
        home = self.env.get("HOME", "")
        roots = [self.env.get("DGYM_TUI_DATA_DIR", ""), os.path.join(home, ".local", "share", "dgym-tui") if home else ""]
        files = [f for root in roots if root for f in glob.glob(os.path.join(root, "sessions", "*", "*.jsonl"))]
        return max(files, key=os.path.getmtime) if files else None

    def events(self) -> list[dict]:
        """The newest session file's events so far (a line still being written left out)."""
        newest = self.session_file()
        if newest is None:
            return []
        found = []
        with open(newest, errors="replace") as fh:
            for line in fh:
                try:
                    found.append(json.loads(line))
                except ValueError:
                    pass
        return found

    def wait_events(self, condition, what: str, timeout: float = 10) -> list[dict]:
        """The session's events once condition(events) holds: the app writes its events from a
        thread that flushes every 100 ms, so what the screen shows may not be in the file yet."""
        deadline = time.monotonic() + timeout
        while True:
            events = self.events()
            if condition(events) or time.monotonic() > deadline:
                if not condition(events):
                    raise AssertionError(f"{what} never happened; {self.last_events()}")
                return events
            time.sleep(0.1)

    def last_events(self, count: int = 15) -> str:
        """The newest session file's last events, one line each: what the app was doing."""
        newest = self.session_file()
        if newest is None:
            return "(no session file to show the last events of)"
        with open(newest, errors="replace") as fh:
            lines = fh.read().splitlines()[-count:]
        shown = []
        for line in lines:
            try:
                event = json.loads(line)
                shown.append(f"  {event.get('seq')} {event.get('actor')} {event.get('kind')} "
                             f"{json.dumps(event.get('data'))[:160]}")
            except ValueError:
                shown.append(f"  (a torn line) {line[:160]}")
        return f"the last events of {newest}:\n" + "\n".join(shown)

    def close(self, timeout: float = 60) -> None:
        """Kill the session, and wait for the app to have gone: it removes its sandbox as it
        exits (a Docker container takes a moment), and what comes next may need it gone (the
        derived image removed after a test). One still running after the wait is for the suite's
        end to name (conftest's check of what was left running), not to hide a test's failure."""
        listed = subprocess.run(["tmux", "list-panes", "-t", self.name, "-F", "#{pane_pid}"],
                                capture_output=True, text=True)
        pids = descendants(int(listed.stdout.split()[0])) if listed.returncode == 0 and listed.stdout.split() else []
        subprocess.run(["tmux", "kill-session", "-t", self.name], capture_output=True)
        deadline = time.monotonic() + timeout
        while any(is_running(pid) for pid in pids) and time.monotonic() < deadline:
            time.sleep(0.1)


def descendants(pid: int) -> list[int]:
    """pid and every process under it, from /proc."""
    children: dict[int, list[int]] = {}
    for entry in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{entry}/stat") as fh:
                parent = int(fh.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        children.setdefault(parent, []).append(int(entry))
    found, todo = [], [pid]
    while todo:
        found.append(todo.pop())
        todo.extend(children.get(found[-1], []))
    return found


@pytest.mark.parametrize("backend", BACKENDS)
def test_open_break_continue_inspect_quit(installed, example_repo, backend, tmp_path):
    if backend == "docker" and docker_engine() is None:
        pytest.skip("no Docker engine answers here")
    before = tree_hash(example_repo)
    env = {"TERM": "xterm-256color", "DGYM_TUI_CONFIG_DIR": str(tmp_path / "config"), "HOME": str(tmp_path)}
    tmux = Tmux(f"dgym-e2e-{backend}-{os.getpid()}", f"{installed} --sandbox {backend} -e 'python main.py' {example_repo}",
                str(tmp_path), env)
    try:
        screen = tmux.wait_for("stopped at main.py:1")
        assert ("NOT ISOLATED" in screen) == (backend == "local")
        if backend == "docker":
            assert "docker dgym-tui-sandbox" in screen
        tmux.type(":")  # go to line
        tmux.wait_for("go to line")
        tmux.type("76")
        tmux.keys("Enter")
        tmux.wait_for("76         print(format_quote")
        tmux.type("b")  # breakpoint at the cursor
        tmux.wait_for("Breakpoint 1 at main.py:76")
        tmux.type("c")
        tmux.wait_for("stopped at main.py:76 in main")
        tmux.type("!")  # the pdb console
        tmux.type("p order.cart.customer.name")
        tmux.keys("Enter")
        tmux.wait_for("'Alice'")
        tmux.keys("Escape")
        tmux.type("q")
        tmux.wait_for("DGYM-EXITED-0", timeout=30)
    finally:
        tmux.close()
    assert tree_hash(example_repo) == before
    if backend == "docker":
        client = docker_engine()
        left = [c for c in client.containers.list(all=True, filters={"label": "dgym-tui.app=dgym-tui"})
                if c.labels.get("dgym-tui.repo") == str(example_repo)]
        assert not left, "the sandbox container was not removed on quit"


NEWCOMER_REPO = {
    "discount.py": "def total(prices, percent):\n    subtotal = sum(prices)\n    cut = subtotal * percent / 10\n"
                   "    return subtotal - cut\n",
    # the failing test comes first; a later, passing test calls the same function
    "tests/test_discount.py": "from discount import total\n\n\ndef test_ten_percent_off():\n"
                              "    assert total([100, 50], 10) == 135\n\n\ndef test_no_discount():\n"
                              "    assert total([7, 3], 0) == 10\n",
    "pytest.ini": "[pytest]\npythonpath = .\n",
}


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_newcomers_path_shows_the_failing_tests_value(installed, tmp_path, backend):
    """What a newcomer does (issue 11): open the repo, the file from the palette, go to the line,
    b, c, p EXPR: the value is the failing test's, not the later passing test's (10, 0.0)."""
    from test_agent import make_repo

    if backend == "docker" and docker_engine() is None:
        pytest.skip("no Docker engine answers here")
    repo = make_repo(tmp_path / "shop", NEWCOMER_REPO)
    env = {"TERM": "xterm-256color", "DGYM_TUI_CONFIG_DIR": str(tmp_path / "config"), "HOME": str(tmp_path),
           "DGYM_TUI_DATA_DIR": str(tmp_path / "data")}
    tmux = Tmux(f"dgym-e2e-newcomer-{backend}-{os.getpid()}", f"{installed} --sandbox {backend} {repo}",
                str(tmp_path), env)
    try:
        tmux.wait_for("stopped at tests/test_discount.py:5 in test_ten_percent_off", timeout=120)
        tmux.keys("C-p")
        tmux.wait_for("Search for commands")  # typed before the palette is up, keys are the app's
        tmux.type("discount.py")
        tmux.wait_for("open file")
        tmux.keys("Enter")
        tmux.wait_for("─ discount.py ─")
        tmux.type(":")
        tmux.wait_for("go to line")
        tmux.type("4")
        tmux.keys("Enter")
        tmux.type("b")
        tmux.wait_for("Breakpoint 1 at discount.py:4")
        tmux.type("c")
        screen = tmux.wait_for("stopped at discount.py:4 in total", timeout=120)
        assert "pytest tests/test_discount.py::test_ten_percent_off" in screen  # what is run, said
        tmux.type("!")
        tmux.type("p subtotal, cut")
        tmux.keys("Enter")
        screen = tmux.wait_for("(150, 150.0)")
        assert "(10, 0.0)" not in screen
        tmux.keys("Escape")
        tmux.type("q")
        tmux.wait_for("DGYM-EXITED-0", timeout=30)
    finally:
        tmux.close()


def test_agent_with_a_model_over_http_and_the_person_approving(installed, tmp_path, stub_llm):
    """The installed app with an LLM (the stub server, over real HTTP through litellm), step mode:
    every call waits for the person, who approves, rejects an edit with a comment, tries the next
    one and approves it; then quits, keeping nothing: the user's repo is unchanged."""
    from test_agent import TALLY, make_repo

    repo = make_repo(tmp_path / "tally", TALLY)
    before = tree_hash(repo)
    fix = lambda code: {"tool_calls": [{"name": "edit", "arguments": {  # noqa: E731
        "path": "tally/__init__.py", "start": 5, "end": 5, "new_code": code}}]}
    stub_llm.push(
        {"text": "Stopping where the mean is computed.",
         "tool_calls": [{"name": "pdb", "arguments": {"command": "b tally/__init__.py:5"}}]},
        {"tool_calls": [{"name": "pdb", "arguments": {"command": "c"}}]},
        {"tool_calls": [{"name": "pdb", "arguments": {"command": "p total, len(values)"}}]},
        fix("    return total / (len(values) - 1 + 1)"),
        fix("    return total / len(values)"),
        {"tool_calls": [{"name": "submit", "arguments": {"message": "divide by n"}}]})
    env = {"TERM": "xterm-256color", "DGYM_TUI_CONFIG_DIR": str(tmp_path / "config"), "HOME": str(tmp_path),
           "DGYM_TUI_DATA_DIR": str(tmp_path / "data")}
    tmux = Tmux(f"dgym-e2e-agent-{os.getpid()}", f"{installed} --sandbox local --model openai/stub-model "
                                  f"--api-base {stub_llm.url} --mode step {repo}", str(tmp_path), env)
    try:
        tmux.wait_for("pdb waits for you", timeout=90)
        tmux.wait_for("b tally/__init__.py:5")
        tmux.type("a")
        tmux.wait_for("Breakpoint 1 at tally/__init__.py:5")
        tmux.wait_for("│ c            ")  # the next call, shown in the agent pane
        tmux.type("a")
        tmux.wait_for("stopped at tally/__init__.py:5")
        tmux.wait_for(" p total, len(values)")
        tmux.type("a")
        tmux.wait_for("(12, 3)")
        tmux.wait_for("edit waits for you")
        tmux.wait_for("(len(values) - 1 + 1)")  # the diff
        tmux.type("r")
        tmux.wait_for("a comment for the agent")
        tmux.type("plainer, please")
        tmux.keys("Enter")
        tmux.wait_for("return total / len(values)")
        tmux.type("t")
        tmux.wait_for("Tests after this change: 2 passed", timeout=60)
        tmux.type("a")
        tmux.wait_for("submit waits for you")
        tmux.type("a")
        tmux.wait_for("agent submitted", timeout=60)
        assert any("Their comment: plainer, please" in (m.get("content") or "")
                   for m in stub_llm.bodies[4]["messages"])
        tmux.keys("Escape")
        tmux.type("q")
        tmux.wait_for("unapplied changes")  # the fix lives in the sandbox only
        tmux.type("y")
        tmux.wait_for("DGYM-EXITED-0", timeout=30)
    finally:
        tmux.close()
    assert tree_hash(repo) == before


def replay_position(screen: str) -> str | None:
    """The event the replay's timeline says it is at."""
    at = re.search(r"event (\d+)/", screen)
    return at.group(1) if at else None


def live_stop_after_take_over(events: list[dict]) -> bool:
    """A take-over's `resumed` event, then a program started and stopped after it."""
    kinds = [e.get("kind") for e in events]
    taken = next((i for i, e in enumerate(events) if e.get("kind") == "resumed"
                  and (e.get("data") or {}).get("take_over")), None)
    return taken is not None and "program_start" in kinds[taken:] and "stop" in kinds[kinds.index("program_start", taken):]


def test_replay_a_saved_session_and_take_over(installed, tmp_path):
    """`dgym-tui run` saves a session; `dgym-tui replay` shows it read-only, moves back and
    forth, and `enter` takes over: a live session where the replay stood."""
    from test_agent import TALLY, make_repo

    repo = make_repo(tmp_path / "tally", TALLY)
    script = ROOT / "tests" / "agent_scripts" / "tally.json"
    saved = tmp_path / "tally.jsonl"
    env = {"TERM": "xterm-256color", "DGYM_TUI_CONFIG_DIR": str(tmp_path / "config"), "HOME": str(tmp_path),
           "DGYM_TUI_DATA_DIR": str(tmp_path / "data")}
    made = subprocess.run([installed, "run", str(repo), "--sandbox", "local", "--model", f"scripted:{script}",
                           "--mode", "auto", "--yes", "--session", str(saved)], capture_output=True, text=True,
                          timeout=240, env={**__import__("os").environ, **env})
    assert made.returncode == 0, made.stdout + made.stderr
    tmux = Tmux(f"dgym-e2e-replay-{os.getpid()}", f"{installed} replay {saved}", str(tmp_path), env)
    try:
        tmux.wait_for("❚❚ paused")
        screen = tmux.wait_for("stopped at tests/test_tally.py:5")
        assert "NOT ISOLATED" in screen
        for _ in range(60):  # one event at a time, to the agent's stop in mean()
            screen = tmux.screen()
            if "stopped at tally/__init__.py:5" in screen:
                break
            at = replay_position(screen)
            assert at is not None, screen
            tmux.keys("Right")
            # that one key taken before the next is sent (bookkeeping events are skipped over, and
            # the total grows as the file is read: only the position's change is waited for)
            tmux.wait_until(lambda shown: replay_position(shown) not in (None, at), "the next event")
        screen = tmux.wait_for("stopped at tally/__init__.py:5")
        assert "values" in screen and "[2, 4, 6]" in screen  # the variables at that moment
        tmux.keys("Left")
        tmux.keys("Right")
        tmux.wait_for("stopped at tally/__init__.py:5")
        tmux.type("n")  # acting in a replay is refused, with the way to act
        tmux.wait_for("this is a replay")
        tmux.keys("Enter")  # take over here
        # The new session says so in its file: taken over at this event, the program started
        # again in a new sandbox and stopped. (Not from the screen: on a busy machine the
        # transcript's "↻ taken over" line and "running…" are painted with the stop that follows,
        # and the line has scrolled out of the pane when the screen first shows it. Its words:
        # tests/test_describe.py.)
        deadline = time.monotonic() + 120
        while not live_stop_after_take_over(tmux.events()):
            assert time.monotonic() < deadline, f"no live stop after a take-over; {tmux.last_events()}"
            time.sleep(0.1)
        tmux.wait_until(lambda shown: "stopped at tally/__init__.py:5" in shown and replay_position(shown) is None,
                        "the live session's stop, the replay's timeline gone")
        tmux.type("!")
        tmux.type("p total")
        tmux.keys("Enter")
        tmux.wait_for("(Pdb) p total")  # a live pdb answers
        tmux.wait_for("12")
        tmux.keys("Escape")
        tmux.type("q")
        tmux.wait_for("DGYM-EXITED-0", timeout=30)
    finally:
        tmux.close()
    branches = list((tmp_path / "data" / "sessions").glob("*/*.jsonl"))
    assert len(branches) == 1 and '"taken_over_from"' in branches[0].read_text().splitlines()[0]


def test_demo_replays_the_scripted_agent_fixing_the_example(installed, tmp_path):
    """`dgym-tui demo` with no key and no sandbox: the bundled session, labelled scripted, played to
    its end (the agent's summary, the tests passing); applying it never touches the bundled example."""
    from dgym_tui.examples import example_path

    example = example_path()
    before = tree_hash(example)
    env = {"TERM": "xterm-256color", "DGYM_TUI_CONFIG_DIR": str(tmp_path / "config"), "HOME": str(tmp_path),
           "DGYM_TUI_DATA_DIR": str(tmp_path / "data")}
    tmux = Tmux(f"dgym-e2e-demo-{os.getpid()}", f"{installed} demo", str(tmp_path), env)
    try:
        tmux.wait_for("❚❚ paused")
        tmux.wait_for("scripted model (a demo)")
        screen = tmux.wait_for("stopped at tests/test_catalog.py:52")  # the first failure's post-mortem
        assert "AssertionError" in screen
        tmux.keys("End")
        screen = tmux.wait_for("submitted · auto mode", timeout=30)
        assert "(scripted)" in screen
        tmux.wait_for("0 failed, 0 errors")
        tmux.type("W")
        tmux.wait_for("the bundled example is part of", timeout=30)
        tmux.type("q")
        tmux.wait_for("DGYM-EXITED-0", timeout=30)
    finally:
        tmux.close()
    assert tree_hash(example) == before
    assert not list((tmp_path / "data").rglob("*.jsonl")), "a replay must not write a session"


def _app_pid(installed: str, repo) -> int | None:
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            argv = open(f"/proc/{pid}/cmdline", "rb").read().decode(errors="replace").split("\0")
        except OSError:
            continue
        if any(a.endswith("/dgym-tui") or a == installed for a in argv[:2]) and str(repo) in argv:
            return int(pid)
    return None


@pytest.mark.parametrize("backend", BACKENDS)
def test_closing_the_terminal_removes_the_sandbox(installed, example_repo, backend, tmp_path):
    """Closing the terminal sends SIGHUP: the app exits as on SIGTERM and removes its sandbox."""
    if backend == "docker" and docker_engine() is None:
        pytest.skip("no Docker engine answers here")
    env = {"TERM": "xterm-256color", "DGYM_TUI_CONFIG_DIR": str(tmp_path / "config"), "HOME": str(tmp_path)}
    tmux = Tmux(f"dgym-hup-{backend}-{os.getpid()}", f"{installed} --sandbox {backend} -e 'python main.py' {example_repo}",
                str(tmp_path), env)
    try:
        tmux.wait_for("stopped at main.py:1")
        pid = _app_pid(installed, example_repo)
        assert pid, "the app's process was not found"
        if backend == "docker":
            owned = docker_engine().containers.list(all=True, filters={"label": f"dgym-tui.owner-pid={pid}"})
            assert len(owned) == 1
        else:
            copies = [d for d in glob.glob(os.path.join(tempfile.gettempdir(), "dgym-tui-*"))
                      if os.path.exists(os.path.join(d, "owner.json"))
                      and json.load(open(os.path.join(d, "owner.json")))["pid"] == pid]
            assert len(copies) == 1
    finally:
        tmux.close()  # the terminal goes away: SIGHUP to the app
    deadline = time.monotonic() + 30
    while os.path.exists(f"/proc/{pid}") and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not os.path.exists(f"/proc/{pid}"), "the app did not exit on SIGHUP"
    if backend == "docker":
        assert not docker_engine().containers.list(all=True, filters={"label": f"dgym-tui.owner-pid={pid}"})
        assert not docker_engine().volumes.list(filters={"label": f"dgym-tui.owner-pid={pid}"})
    else:
        assert not os.path.exists(copies[0]), "the sandbox copy was left behind"


def _break_and_continue(tmux, where: str) -> None:
    """In the pdb console, as a person types: a breakpoint at WHERE, then `c` to it."""
    tmux.type("!")  # the pdb console
    tmux.type(f"b {where}")
    tmux.keys("Enter")
    tmux.wait_for(f"Breakpoint 1 at {where}")
    tmux.type("c")
    tmux.keys("Enter")
    tmux.wait_for(f"stopped at {where}", timeout=120)


def _real_repo_cases():
    from real_repos import NEEDS_PACKAGE, WITHOUT_PACKAGES

    return [pytest.param(real, backend, id=f"{real.name}-{backend}",
                         marks=[pytest.mark.docker] if backend == "docker" else [])
            for real in [*WITHOUT_PACKAGES, NEEDS_PACKAGE] for backend in ("bwrap", "docker")]


@pytest.mark.parametrize("real, backend", _real_repo_cases())
def test_a_real_shaped_repo_opens_at_its_failure_and_shows_the_failing_tests_value(installed, tmp_path, real,
                                                                                   backend):
    """Issue 19's repos (tests/real_repos.py: tests inside the package, a src/ layout whose
    conftest imports it, a unittest suite, a collection error, a third-party dependency served
    from a wheel folder) opened with no option but the wheel folder:
    the app stops at the failure, and `b` + `c` in the failing code shows the failing test's
    value, typed in the pdb console as a person would."""
    if backend == "docker" and docker_engine() is None:
        pytest.skip("no Docker engine answers here")
    if backend == "bwrap":
        from conftest import require_bwrap

        require_bwrap()
    repo = real.write(tmp_path / real.name)
    options = ""
    if real.extra:  # its dependency, from a wheel folder: into Docker's derived image, or the repo's .venv
        from real_repos import dependency_wheels, install_into_venv

        wheels = dependency_wheels(real, tmp_path / "wheels")
        if backend == "docker":
            options = f"--wheels {wheels} "
        else:
            install_into_venv(repo, wheels, real.extra["package"])
    env = {"TERM": "xterm-256color", "DGYM_TUI_CONFIG_DIR": str(tmp_path / "config"), "HOME": str(tmp_path),
           "DGYM_TUI_DATA_DIR": str(tmp_path / "data")}
    tmux = Tmux(f"dgym-e2e-{real.name}-{backend}-{os.getpid()}", f"{installed} --sandbox {backend} {options}{repo}",
                str(tmp_path), env)
    try:
        tmux.wait_for(f"stopped at {real.opens_at}", timeout=120)
        _break_and_continue(tmux, real.breakpoint)
        tmux.type(f"p {real.expression}")
        tmux.keys("Enter")
        tmux.wait_for(real.value)
        tmux.keys("Escape")
        tmux.type("q")
        tmux.wait_for("DGYM-EXITED-0", timeout=30)
    finally:
        tmux.close()
        if backend == "docker":  # the derived image of the dependency's repo
            for image in docker_engine().images.list(filters={"label": f"dgym-tui.repo={repo}"}):
                docker_engine().images.remove(image.id, force=True)


def test_a_tool_from_the_palette_runs_from_its_form(installed, example_repo, tmp_path):
    """The palette's "Tool: grep…" (which crashed the app before): its form, filled and run;
    the transcript shows the match, and the app goes on."""
    env = {"TERM": "xterm-256color", "DGYM_TUI_CONFIG_DIR": str(tmp_path / "config"), "HOME": str(tmp_path),
           "DGYM_TUI_DATA_DIR": str(tmp_path / "data")}
    tmux = Tmux(f"dgym-e2e-tool-{os.getpid()}", f"{installed} --sandbox local -e 'python main.py' {example_repo}",
                str(tmp_path), env)
    try:
        tmux.wait_for("stopped at main.py:1")
        tmux.keys("C-p")
        tmux.wait_for("Search for commands")  # typed before the palette is up, keys are the app's
        tmux.type("Tool: grep")
        tmux.wait_for("Tool: grep…")
        tmux.keys("Enter")
        tmux.wait_for("Run grep:")
        tmux.type("class OutOfStockError")
        tmux.keys("C-s")
        screen = tmux.wait_for("shopcart/inventory.py", timeout=30)
        assert "Run grep:" not in screen  # the form closed
        tmux.type("n")  # the app still drives pdb
        tmux.wait_for("stopped at main.py:10")
        tmux.type("q")
        tmux.wait_for("DGYM-EXITED-0", timeout=30)
    finally:
        tmux.close()


@pytest.mark.parametrize("minor", ["3.6", "3.9", "3.10"])
def test_a_repo_on_its_own_older_python_opens_at_its_failing_test(installed, tmp_path, minor):
    """Issue 42: a repo whose .venv is CPython 3.6, 3.9 or 3.10 opens at its failing test, and a
    breakpoint, `c` and `p` in the pdb console work as on 3.13 (the venv sees that Python's own
    pytest, as a person's venv would have its own)."""
    import pythons
    from real_repos import PACKAGE_TESTS as real

    pythons.require_pytest(pythons.require(minor))
    repo = real.write(tmp_path / "repo")
    subprocess.run([pythons.PATHS[minor], "-m", "venv", "--without-pip", "--system-site-packages",
                    str(repo / ".venv")], check=True)
    env = {"TERM": "xterm-256color", "DGYM_TUI_CONFIG_DIR": str(tmp_path / "config"), "HOME": str(tmp_path),
           "DGYM_TUI_DATA_DIR": str(tmp_path / "data")}
    tmux = Tmux(f"dgym-e2e-py{minor.replace('.', '')}-{os.getpid()}", f"{installed} --sandbox local {repo}", str(tmp_path), env)
    try:
        # pdb runs on this Python: had the session turned it off, its status bar would say "pdb off
        # (Python 3.6)" and its console "pdb is off for this task: …" (then no stop ever comes)
        screen = tmux.wait_until(lambda s: f"stopped at {real.opens_at}" in s or re.search(r"pdb (is )?off", s),
                                 f"'stopped at {real.opens_at}' or pdb off", timeout=120)
        assert not re.search(r"pdb (is )?off", screen), screen
        _break_and_continue(tmux, real.breakpoint)
        tmux.type("p (__import__('sys').version_info[:2], total, count)")
        tmux.keys("Enter")
        tmux.wait_for(f"(({minor.replace('.', ', ')}), 12, 2)")
        tmux.keys("Escape")
        tmux.type("q")
        tmux.wait_for("DGYM-EXITED-0", timeout=30)
    finally:
        tmux.close()


def test_a_unittest_runner_scripts_first_c_stops_in_the_failing_test(installed, tmp_path):
    """Issue 42: a repo whose tests run under a runner script like Django's tests/runtests.py
    (unittest underneath), opened with `-e "python tests/runtests.py --verbosity 2"`: the first
    `c` stops in the failing test with its values, not at the end of the run."""
    from real_repos import UNITTEST_SUITE as real

    repo = real.write(tmp_path / "repo")
    (repo / "tests" / "runtests.py").write_text(
        "import argparse, os, sys, unittest\n"
        "sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))\n"
        "parser = argparse.ArgumentParser()\nparser.add_argument('--verbosity', type=int, default=1)\n"
        "options = parser.parse_args()\n"
        "suite = unittest.defaultTestLoader.discover('tests', top_level_dir='.')\n"
        "result = unittest.TextTestRunner(verbosity=options.verbosity).run(suite)\n"
        "sys.exit(not result.wasSuccessful())\n")
    env = {"TERM": "xterm-256color", "DGYM_TUI_CONFIG_DIR": str(tmp_path / "config"), "HOME": str(tmp_path),
           "DGYM_TUI_DATA_DIR": str(tmp_path / "data")}
    tmux = Tmux(f"dgym-e2e-runner-{os.getpid()}",
                f"{installed} --sandbox bwrap -e 'python tests/runtests.py --verbosity 2' {repo}", str(tmp_path), env)
    try:
        tmux.wait_for("stopped at tests/runtests.py:1", timeout=120)
        tmux.type("!c")
        tmux.keys("Enter")
        tmux.wait_for(f"stopped at {real.opens_at}", timeout=120)
        # the output differs from the command's echo (and from the text typed in the input box)
        tmux.type("p [list(s) for s in merge([(1, 3), (3, 5)])]")
        tmux.keys("Enter")
        tmux.wait_for("[[1, 3], [3, 5]]")
        tmux.keys("Escape")
        tmux.type("q")
        tmux.wait_for("DGYM-EXITED-0", timeout=30)
    finally:
        tmux.close()


def test_the_person_answers_the_agents_question_as_its_seeker(installed, tmp_path):
    """--seeker person: the fixer's debug(question) waits in the agent pane; the person's answer
    reaches the fixer, checked against what the session printed, and the fix goes on."""
    from test_agent import TALLY, make_repo

    repo = make_repo(tmp_path / "tally", TALLY)
    fixer = ROOT / "tests" / "agent_scripts" / "tally_fixer.json"
    env = {"TERM": "xterm-256color", "DGYM_TUI_CONFIG_DIR": str(tmp_path / "config"), "HOME": str(tmp_path),
           "DGYM_TUI_DATA_DIR": str(tmp_path / "data")}
    tmux = Tmux(f"dgym-e2e-seeker-{os.getpid()}", f"{installed} --sandbox local --model scripted:{fixer} "
                                   f"--seeker person --mode auto {repo}", str(tmp_path), env)
    answer = "tally/__init__.py:5 gives mean([2, 4, 6]) == 6.0: it divides by len(values) - 1"
    try:
        tmux.wait_for("the agent asks you (as its seeker)", timeout=90)
        tmux.type("a")
        tmux.wait_for("The agent asks: What do total and len(values) hold")
        tmux.type(answer)
        tmux.keys("Enter")
        tmux.wait_for("edit waits for you", timeout=30)
        tmux.type("a")
        tmux.wait_for("submit waits for you", timeout=60)
        tmux.type("a")
        tmux.wait_for("agent submitted", timeout=60)
        events = tmux.wait_events(lambda es: any(e.get("kind") == "seeker_answer" for e in es), "the answer")
    finally:
        tmux.close()
    found = next(e["data"] for e in events if e.get("kind") == "seeker_answer")
    assert found["by"] == "person" and found["answer"] == answer
    assert found["grounding"] == "grounded" and found["values"] == ["6.0"]
    told = [e["data"]["message"]["content"] for e in events if e.get("kind") == "agent_message"
            and e["actor"] == "agent" and e["data"]["origin"] == "tool"]
    assert any(answer in text and "Answer from the person" in text for text in told), told
