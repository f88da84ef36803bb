"""The live pdb engine, for real: one suite over both sandboxes (and, locally, the Pythons of
pythons.SANDBOXED: 3.6, 3.9 and 3.13)."""

from __future__ import annotations

import os
import shutil
import subprocess
import textwrap
import time

import pytest

import pythons
from conftest import make_sandbox, require_bwrap, require_docker
from dgym_tui.core.events import AGENT, HUMAN
from dgym_tui.core.session import Session

_has_pytest = pythons.has_pytest


# Each engine variant: the Docker sandbox, the bwrap jail, and the local sandbox with each Python
# of pythons.SANDBOXED, whether it is here or not: a missing one fails under CI, is skipped
# elsewhere (pythons.require). Where none of them is here, the local sandbox with its own choice too.
ENGINES = [pytest.param(("docker", None), id="docker", marks=pytest.mark.docker),
           pytest.param(("bwrap", None), id="bwrap")] + [
    pytest.param(("local", v), id=f"local-py{v}") for v in pythons.SANDBOXED
] + ([] if any(map(pythons.exists, pythons.SANDBOXED)) else [pytest.param(("local", None), id="local")])

PROGRAMS = {
    "main.py": """\
        import sys
        from helpers import total


        def main(n):
            values = list(range(n))
            result = total(values)
            print("result", result)
            return result


        if __name__ == "__main__":
            main(int(sys.argv[1]) if len(sys.argv) > 1 else 5)
        """,
    "helpers.py": """\
        def total(values):
            acc = 0
            for v in values:
                acc += v
            return acc
        """,
    "exits.py": "import sys\nprint('bye')\nsys.exit(3)\n",
    "pid.py": "import os\npid = os.urandom(8).hex()\ndone = True\n",
    "crash.py": "def f(d):\n    return d['missing']\n\nf({'present': 1})\n",
    "loop.py": "i = 0\nwhile True:\n    i += 1\n",
    "stubborn.py": "import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\ni = 0\nwhile True:\n    i += 1\n",
    "flood.py": "import sys\nfor i in range(20 * 1024):\n    sys.stdout.write('x' * 1023 + '\\n')\nprint('done')\n",
    "logs_then_crash.py": "for i in range(2048):\n    print('log line', i, 'x' * 1000)\nraise ValueError('the real cause')\n",
    "fork_loop.py": """\
        import os, time
        child = os.fork()
        while True:
            time.sleep(0.01)
        """,
    "pool.py": """\
        import multiprocessing


        def square(x):
            return x * x


        if __name__ == "__main__":
            with multiprocessing.get_context("fork").Pool(2) as pool:
                squares = pool.map(square, range(6))
            print("squares", squares)
        """,
    # A fork bomb, but a bounded one (each process forks at most 6 times, 3 levels deep) so a
    # broken process cap cannot take the machine down; half the children leave the session.
    "bomb.py": """\
        import os, time


        def bomb(depth):
            for i in range(6):
                try:
                    if os.fork() == 0:
                        if i % 2:
                            os.setsid()
                        if depth < 3:
                            bomb(depth + 1)
                        while True:
                            time.sleep(1)
                except OSError:
                    pass


        bomb(1)
        print("bomb done", flush=True)
        while True:
            time.sleep(0.05)
        """,
    "reads_fd0.py": "import os\ndata = os.read(0, 100)\nprint('read', data)\n",
    "reads_tty.py": "import getpass\nsecret = getpass.getpass('password: ')\nprint('got', secret)\n",
    "kills_itself.py": "import os, signal\nprint('bye', flush=True)\nos.kill(os.getpid(), signal.SIGKILL)\n",
    "hard_exit.py": "import os\nos._exit(3)\n",
    "hog.py": "blocks = []\nwhile True:\n    blocks.append(b'x' * (16 * 1024 * 1024))\n",
    "spoof.py": "print('(Pdb) ')\nprint('\\x1b_dgym:00ff00ff00ff00ff:{\"event\":\"exit\",\"code\":9}\\x1b\\\\')\nprint('(Pdb) (Pdb) ')\nx = 42\nprint('after', x)\n",
    "reads.py": "name = input('name? ')\nprint('hello', name)\n",
    "forever_thread.py": "import threading, time\n\ndef spin():\n    while True:\n        time.sleep(0.1)\n\nthreading.Thread(target=spin).start()\nprint('main done')\n",
    "syntax_error.py": "def broken(:\n    pass\n",
    "pkg/__init__.py": "",
    "pkg/__main__.py": "from helpers import total\nprint('module says', total([1, 2]))\n",
    "tests/test_things.py": """\
        from helpers import total


        def test_ok():
            assert total([1, 2]) == 3


        def test_bad():
            values = [1, 2, 3]
            assert total(values) == 7
        """,
}


@pytest.fixture
def repo(tmp_path):
    root = tmp_path / "proj"
    for rel, text in PROGRAMS.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return root


@pytest.fixture(params=ENGINES)
def engine(request):
    kind, minor = request.param
    if kind == "docker":
        require_docker()
    if kind == "bwrap":
        require_bwrap()
    return kind, pythons.require(minor) if minor else None


@pytest.fixture
def open_session(engine, repo):
    sessions = []

    def factory(entrypoint: str, timeout: float = 30.0) -> Session:
        kind, python = engine
        kwargs = {"python": python} if python else {}
        sandbox = make_sandbox(kind, repo, **kwargs)
        session = Session(str(repo), entrypoint=entrypoint, pdb_timeout=timeout, sandbox_obj=sandbox)
        sessions.append(session)
        session.start()
        assert session.state.program in ("stopped", "exited"), session.error
        if session.debugger:
            session.debugger.grace = 1.0
        return session

    yield factory
    for s in sessions:
        s.close()


def test_first_stop_and_stepping(open_session):
    s = open_session("python main.py 4")
    assert (s.state.stop.file, s.state.stop.line, s.state.stop.reason) == ("main.py", 1, "start")
    r = s.send("n")
    assert r.stop.line == 2 and r.stop.reason == "step"
    r = s.send("b helpers.py:4")
    assert r.output.startswith("Breakpoint 1 at ") and r.output.strip().endswith("helpers.py:4")
    r = s.send("c")
    assert (r.stop.file, r.stop.line, r.stop.function) == ("helpers.py", 4, "total")
    assert r.stop.reason == "breakpoint"
    assert r.stop.locals["values"] == "[0, 1, 2, 3]"
    assert [f.function for f in r.stop.stack] == ["<module>", "main", "total"]
    r = s.send("u")
    assert r.stop.function == "main" and r.stop.frame_index == 1
    assert s.send("p n").output == "4\n"
    assert s.send("d").stop.function == "total"


def test_events_record_both_actors(open_session):
    s = open_session("python main.py")
    s.send("n", actor=HUMAN)
    s.send("p 6 * 7", actor=AGENT)
    inputs = [(e.actor, e.data.command) for e in s.events.history if e.kind == "pdb_input"]
    outputs = [(e.actor, e.data.text) for e in s.events.history if e.kind == "pdb_output"]
    assert inputs == [(HUMAN, "n"), (AGENT, "p 6 * 7")]
    assert (AGENT, "42\n") in outputs
    stops = [e for e in s.events.history if e.kind == "stop"]
    assert [e.data.line for e in stops] == [1, 2]


def test_program_end_then_restart(open_session):
    s = open_session("python main.py 3")
    r = s.send("c")
    assert r.exited and r.exit_code == 0 and "result 3" in r.output
    assert s.state.program == "exited"
    r = s.send("n")
    # `n` after the end starts the program again, as `python -m pdb` does (no breakpoint: it
    # stays at the start)
    assert r.restarted and "Starting the program again" in r.output and s.state.stop.line == 1
    assert s.state.program == "stopped"


def test_sys_exit_code(open_session):
    s = open_session("python exits.py")
    r = s.send("c")
    assert r.exited and r.exit_code == 3 and "bye" in r.output
    exits = [e.data for e in s.events.history if e.kind == "program_exit"]
    assert exits[-1].code == 3 and "exited with code 3" in exits[-1].message


def test_uncaught_exception_goes_post_mortem(open_session):
    s = open_session("python crash.py")
    r = s.send("c")
    assert "Traceback" in r.output and "KeyError: 'missing'" in r.output
    assert r.stop.reason == "post_mortem"
    assert (r.stop.exception.type, r.stop.exception.message) == ("KeyError", "'missing'")
    assert (r.stop.file, r.stop.line) == ("crash.py", 2)
    assert s.send("p d").output == "{'present': 1}\n"
    assert s.state.stop.reason == "post_mortem"  # inspecting does not change why it stopped
    # `c` after a post-mortem starts the program again, as `python -m pdb` does: no breakpoint,
    # so it runs into the same crash
    r = s.send("c")
    assert r.restarted and "Starting the program again" in r.output
    assert r.stop.reason == "post_mortem" and r.stop.exception.type == "KeyError"


def test_module_entrypoint(open_session):
    s = open_session("python -m pkg")
    r = s.send("c")
    assert "module says 3" in r.output and r.exited and r.exit_code == 0


def test_pytest_entrypoint_lands_on_the_failure(open_session, engine):
    kind, python = engine
    if python and not _has_pytest(python):
        pytest.skip(f"pytest is not installed for {python}")
    s = open_session("pytest tests/test_things.py")
    assert s.state.stop.reason == "post_mortem", s.state.stop
    assert s.state.stop.file == "tests/test_things.py" and s.state.stop.function == "test_bad"
    assert s.state.stop.exception.type == "AssertionError"
    assert s.send("p values").output == "[1, 2, 3]\n"


def test_pytest_breakpoint_in_library_code(open_session, engine, repo):
    kind, python = engine
    if python and not _has_pytest(python):
        pytest.skip(f"pytest is not installed for {python}")
    s = open_session("pytest tests/test_things.py::test_ok")
    s.set_breakpoint("helpers.py", 3)
    s.restart()
    assert (s.state.stop.file, s.state.stop.line, s.state.stop.reason) == ("helpers.py", 3, "breakpoint")
    assert s.state.stop.locals["values"] == "[1, 2]"


def test_endless_loop_is_interrupted(open_session):
    s = open_session("python loop.py", timeout=1.5)
    start = time.monotonic()
    r = s.send("c")
    assert time.monotonic() - start < 8
    assert r.interrupted and "interrupted" in r.output
    assert r.stop.file == "loop.py" and r.stop.line in (2, 3)
    assert int(s.send("p i").output) > 0
    assert any(e.kind == "interrupted" for e in s.events.history)


def test_interrupt_from_another_thread(open_session):
    import threading

    s = open_session("python loop.py", timeout=60)
    threading.Timer(0.5, s.interrupt).start()
    start = time.monotonic()
    r = s.send("c")
    assert time.monotonic() - start < 5 and r.stop.file == "loop.py"


def test_program_ignoring_sigint_is_killed_and_restarted(open_session):
    s = open_session("python stubborn.py", timeout=1.0)
    r = s.send("c")
    assert r.interrupted and r.restarted and "killed and restarted" in r.output
    assert s.state.stop.line == 1 and s.state.program == "stopped"


def test_flood_of_output_is_capped_and_engine_stays_fast(open_session):
    s = open_session("python flood.py")
    start = time.monotonic()
    r = s.send("c", actor=AGENT)
    assert time.monotonic() - start < 30
    assert r.truncated and len(r.output) < 70 * 1024 and "output truncated" in r.output
    assert r.exited
    assert s.send("n").restarted


def test_crash_after_2mb_of_logs_keeps_its_traceback(open_session):
    s = open_session("python logs_then_crash.py")
    r = s.send("c")
    assert r.truncated and r.stop.reason == "post_mortem"
    assert r.output.startswith("log line 0 ") and "log line 2047 " in r.output
    assert "Traceback (most recent call last)" in r.output and "ValueError: the real cause" in r.output


def _program_processes(session, script: str) -> int:
    """How many Python processes run `script` in this session's sandbox (counted from the host
    for local and bwrap, whose runs are invisible to each other; inside the container for docker)."""
    if session.sandbox.kind == "docker":
        code = ("import os\nn = 0\nfor p in os.listdir('/proc'):\n    try:\n"
                "        a = open(f'/proc/{p}/cmdline', 'rb').read().split(b'\\0')\n    except OSError:\n        continue\n"
                f"    n += b'python' in os.path.basename(a[0]) and {script.encode()!r} in a\nprint(n)\n")
        return int(session.sandbox.exec(["python3", "-c", code], timeout=60).output.strip())
    count = 0
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            argv = open(f"/proc/{pid}/cmdline", "rb").read().split(b"\0")
            cwd = os.readlink(f"/proc/{pid}/cwd")
        except OSError:
            continue
        if b"python" in os.path.basename(argv[0]) and script.encode() in argv and cwd.startswith(session.sandbox.tmp):
            count += 1
    return count


def test_forked_child_never_takes_over_the_dialogue(open_session):
    s = open_session("python fork_loop.py", timeout=1.0)
    r = s.send("c")  # both processes loop; the time-out interrupts
    assert r.interrupted and s.state.program == "stopped" and r.stop.file == "fork_loop.py"
    assert s.send("p 1+1").output == "2\n"
    assert s.send("p 2+2").output == "4\n"
    assert s.send("p child > 0").output == "True\n"  # the parent, not the child, is debugged
    # The Ctrl-C reached the child too: it neither stopped in a debugger nor died of it.
    assert "Traceback" not in r.output and "KeyboardInterrupt" not in r.output
    assert _program_processes(s, "fork_loop.py") == 2
    assert s.restart().stop.line == 1
    assert _program_processes(s, "fork_loop.py") == 1, "a process of the old run survived the restart"


def test_pool_workers_never_attach(open_session):
    s = open_session("python pool.py", timeout=20)
    s.set_breakpoint("pool.py", 5)  # inside the worker function: workers are not debugged
    s.set_breakpoint("pool.py", 11)  # after the pool, in the main process
    r = s.send("c")
    assert not r.interrupted and r.stop.line == 11 and r.stop.function == "<module>", r.output
    assert s.send("p squares").output == "[0, 1, 4, 9, 16, 25]\n"
    r = s.send("c")
    assert r.exited and r.exit_code == 0 and "squares [0, 1, 4, 9, 16, 25]" in r.output


def test_fork_bomb_then_restart_leaves_nothing_behind(engine, repo):
    kind, python = engine
    kwargs = {"python": python} if python else {}
    sandbox = make_sandbox(kind, repo, pids=64, **kwargs)
    s = Session(str(repo), entrypoint="python bomb.py", pdb_timeout=6, sandbox_obj=sandbox)
    try:
        s.start()
        s.debugger.grace = 1.0
        r = s.send("c")  # forks until the cap says no, then loops: interrupted at the time-out
        assert "bomb done" in r.output and r.interrupted, r.output[-500:]
        assert 8 <= _program_processes(s, "bomb.py") <= 64
        r = s.restart()
        assert r.stop.line == 1 and s.state.program == "stopped"
        assert _program_processes(s, "bomb.py") == 1, "processes of the fork bomb survived the restart"
        assert s.send("n").stop.line == 4
    finally:
        s.close()


def test_spoofed_prompt_and_marker_are_plain_output(open_session):
    s = open_session("python spoof.py")
    s.send("b spoof.py:5")
    r = s.send("c")
    assert r.stop.line == 5 and not r.exited
    assert r.output.count("(Pdb) ") == 3 and "dgym:00ff00ff00ff00ff" in r.output
    assert s.send("p x").output == "42\n"


def test_program_reading_stdin_does_not_hang(open_session):
    s = open_session("python reads.py", timeout=5)
    start = time.monotonic()
    r = s.send("c")
    # The program's stdin is empty (the terminal carries pdb commands): input() fails at once.
    assert time.monotonic() - start < 4 and not r.interrupted
    assert r.stop.reason == "post_mortem" and r.stop.exception.type == "EOFError"


def test_program_reading_fd0_gets_an_empty_stdin(open_session):
    # Not only sys.stdin: fd 0 itself is empty, so os.read(0) and child processes cannot block on
    # (or swallow) the terminal that carries pdb's commands.
    s = open_session("python reads_fd0.py", timeout=5)
    r = s.send("c")
    assert not r.interrupted and r.exited and r.exit_code == 0 and "read b''" in r.output


def test_program_blocked_on_the_terminal_is_named(open_session):
    s = open_session("python reads_tty.py", timeout=1.5)
    r = s.send("c")
    assert r.interrupted and r.restarted
    assert "waiting to read the terminal (/dev/tty, as getpass does)" in r.output, r.output
    assert "ignored Ctrl-C" not in r.output
    assert s.state.stop.line == 1


@pytest.mark.parametrize("script, cause", [
    ("kills_itself.py", "the program was killed (SIGKILL): from outside the sandbox, or by the kernel"),
    ("hard_exit.py", "the program ended with exit code 3 before pdb could report it (os._exit"),
])
def test_an_unexpected_end_names_its_cause(open_session, script, cause):
    s = open_session(f"python {script}")
    r = s.send("c")
    assert r.exited and cause in r.output, r.output
    exits = [e.data.message for e in s.events.history if e.kind == "program_exit"]
    assert exits and cause in exits[-1]


@pytest.mark.docker
def test_killed_for_memory_says_so_with_the_limit(repo):
    sandbox = make_sandbox("docker", repo, memory="128m")
    s = Session(str(repo), entrypoint="python hog.py", pdb_timeout=60, sandbox_obj=sandbox)
    try:
        s.start()
        r = s.send("c")
        assert r.exited
        assert ("the program was killed for using more memory than the sandbox allows (128m): "
                "raise the limit with --memory, e.g. --memory 256m") in r.output, r.output
        assert s.send("n").restarted  # the sandbox itself is fine
    finally:
        s.close()


def test_thread_that_runs_forever_does_not_hang_the_end(open_session):
    s = open_session("python forever_thread.py", timeout=5)
    start = time.monotonic()
    r = s.send("c")
    assert "main done" in r.output and time.monotonic() - start < 12
    assert r.exited or r.interrupted


@pytest.mark.parametrize("entry, message", [("python nope.py", "nope.py"), ("python syntax_error.py", "SyntaxError")])
def test_bad_entrypoint_is_a_clear_message_and_engine_usable(open_session, entry, message):
    s = open_session(entry)
    assert s.state.program == "exited"
    outputs = " ".join(e.data.text for e in s.events.history if e.kind == "pdb_output")
    assert message in outputs and "Traceback" not in outputs
    r = s.set_entrypoint("python main.py")
    assert r.stop.file == "main.py"


def test_unknown_empty_and_long_commands(open_session):
    s = open_session("python main.py")
    assert s.send("frobnicate").error.startswith("*** NameError")
    s.send("n")
    r = s.send("")  # pdb repeats the last command
    assert r.stop is not None
    long = "p len('" + "a" * 10_000 + "')"
    assert s.send(long).output.strip() == "10000"


def test_breakpoint_errors(open_session):
    s = open_session("python main.py")
    missing = s.set_breakpoint("missing.py", 3)  # 3.13's pdb words it its own way
    assert missing.startswith("*** ") and "missing.py" in missing and ("no such file" in missing or "not found" in missing)
    assert s.set_breakpoint("main.py", 3) == "*** Blank or comment"
    assert s.set_breakpoint("main.py", 999) == "*** line 999 is past the end of main.py (13 lines)"
    assert s.breakpoints.items() == []


def test_breakpoints_survive_restarts_with_their_state(open_session):
    s = open_session("python main.py 4")
    s.set_breakpoint("helpers.py", 4, cond="v == 2", actor=AGENT)
    s.set_breakpoint("main.py", 7, actor=HUMAN)
    s.set_breakpoint("helpers.py", 5, temporary=True)
    s.send("disable 2")
    s.send("ignore 3 1")
    before = [(b.file, b.line, b.cond, b.enabled, b.temporary, b.ignore, b.actor) for b in s.breakpoints.items()]
    assert before == [("helpers.py", 4, "v == 2", True, False, 0, AGENT), ("main.py", 7, None, False, False, 0, HUMAN),
                      ("helpers.py", 5, None, True, True, 1, HUMAN)]
    s.restart()
    after = [(b.file, b.line, b.cond, b.enabled, b.temporary, b.ignore, b.actor) for b in s.breakpoints.items()]
    assert after == before
    r = s.send("c")  # the disabled one on main.py:7 is passed; the conditional stops when v == 2
    assert (r.stop.file, r.stop.line, r.stop.locals["v"]) == ("helpers.py", 4, "2")
    assert "No breakpoints." != s.breakpoints.listing()


def test_breakpoints_move_with_a_patch(open_session):
    s = open_session("python main.py 4")
    s.set_breakpoint("helpers.py", 4)
    s.set_breakpoint("helpers.py", 2)
    sandbox = s.sandbox
    base = sandbox.checkpoint("before patch")
    # Two lines inserted above, line 2 rewritten: 2 is dropped, 4 moves to 6.
    sandbox.write_text("helpers.py", "def total(values):\n    # sum them\n    # one by one\n    acc = 0.0\n"
                       "    for v in values:\n        acc += v\n    return acc\n")
    dropped = s.breakpoints.remap(sandbox.diff(base))
    assert [(b.file, b.line) for b in dropped] == [("helpers.py", 2)]
    assert [(b.file, b.line) for b in s.breakpoints.items()] == [("helpers.py", 6)]
    s.restart()
    r = s.send("c")
    assert (r.stop.file, r.stop.line) == ("helpers.py", 6)


def test_sandbox_dying_mid_command_is_reported_and_restartable(open_session, engine):
    kind, _ = engine
    s = open_session("python loop.py", timeout=60)
    import threading

    def kill_sandbox():
        if kind == "docker":
            s.sandbox.container.kill()
            s.sandbox.container.wait()
        else:
            shutil.rmtree(s.sandbox.tmp)
            s.debugger.channel.kill()

    killer = threading.Timer(0.5, kill_sandbox)
    killer.start()
    r = s.send("c")
    killer.join()
    assert r.exited and s.state.program == "error" and "restart the sandbox" in s.error
    assert [e.data.message for e in s.events.history if e.kind == "error"] == [s.error]
    r = s.restart_sandbox()
    assert s.state.program == "stopped" and r.stop.line == 1
    assert s.send("n").stop.line in (2, 3)  # 3.8 and 3.9 give `while True:` no line of its own


def test_one_breakpoint_per_line_and_paths_read_repo_relative(open_session):
    s = open_session("python main.py 4")
    assert s.set_breakpoint("helpers.py", 4) == "Breakpoint 1 at helpers.py:4"
    assert s.set_breakpoint("helpers.py", 4) == "Breakpoint 1 is already at helpers.py:4"
    s.set_breakpoint("helpers.py", 4, cond="v > 1")
    assert [(b.line, b.cond) for b in s.breakpoints.items()] == [(4, "v > 1")]
    commands = [e.data.command for e in s.events.history if e.kind == "pdb_input"]
    assert commands[0] == "break helpers.py:4" and commands[-1] == "condition 1 v > 1"
    where = s.send("where").output
    assert s.sandbox.root not in where and "main.py(" in where


def test_a_typed_break_names_the_repos_file_and_only_the_root_is_cut_from_paths(open_session, repo):
    # A copy of helpers.py elsewhere on sys.path (an installed one, as site-packages holds): pdb
    # would find that first for `b helpers.py:4` when the program runs from another folder.
    (repo / "elsewhere").mkdir()
    (repo / "elsewhere" / "helpers.py").write_text("def other():\n    return 0\n\n\nx = 1\n")
    (repo / "elsewhere" / "run.py").write_text(
        "import sys\nsys.path.insert(0, sys.argv[1])\nimport helpers\nprint(helpers.total([1, 2]))\n")
    s = open_session("python elsewhere/run.py .")
    root = s.sandbox.root.rstrip("/")
    assert s.send("b helpers.py:4").output.startswith("Breakpoint 1 at helpers.py:4")
    assert s.send("c").stop.file == "helpers.py"  # the repo's, stopped in
    # the root's name inside a longer path is not a repo path (/opt/envs/testbed/lib under /testbed)
    assert s.debugger._relative(f"x {root}/a.py /opt{root}/lib/b.py") == f"x a.py /opt{root}/lib/b.py"


def test_children_expand_one_level_quietly(open_session, repo):
    (repo / "data.py").write_text(
        "class Point:\n    def __init__(self):\n        self.x, self.tags = 1, {'a': [1, 2]}\n\n"
        "p = Point()\nitems = [p, 'two', ()]\nprint('ready')\n")
    s = open_session("python data.py")
    s.send("b data.py:7")
    s.send("c")
    before = len(s.events.history)
    kids = s.children("items")
    assert [(k["name"], k["repr"], k["expandable"]) for k in kids] == [
        ("0", kids[0]["repr"], True), ("1", "'two'", False), ("2", "()", False)]
    attrs = s.children(kids[0]["expr"])
    assert [(k["name"], k["repr"]) for k in attrs] == [("x", "1"), ("tags", "{'a': [1, 2]}")]
    assert s.children(attrs[1]["expr"]) == [{"name": "'a'", "expr": f"({attrs[1]['expr']})['a']",
                                             "repr": "[1, 2]", "expandable": True}]
    assert not [e for e in s.events.history[before:] if e.kind in ("pdb_input", "pdb_output")]
    with pytest.raises(Exception, match="NameError"):
        s.children("no_such_name")


def test_watches_logpoints_and_hit_conditions_survive_restarts(open_session):
    s = open_session("python main.py 5")
    assert s.watch("acc * 100") == "Watching acc * 100"
    s.set_breakpoint("helpers.py", 4, hit="% 2 == 0", actor=AGENT)  # every other time
    s.set_breakpoint("main.py", 8, log="result={result} n={n}")
    labels = [b.label() for b in s.breakpoints.items()]
    assert labels == ["helpers.py:4 when hit % 2 == 0", "main.py:8 log 'result={result} n={n}'"]
    s.restart()
    assert [b.label() for b in s.breakpoints.items()] == labels  # restored with their state
    assert s.breakpoints.items()[0].actor == AGENT
    r = s.send("c")
    assert (r.stop.file, r.stop.line, r.stop.locals["v"]) == ("helpers.py", 4, "1")  # the 2nd hit
    assert [(w.expr, w.value) for w in r.stop.watches] == [("acc * 100", "0")]
    r = s.send("c")
    assert r.stop.locals["v"] == "3" and r.stop.watches[0].value == "300"
    r = s.send("up")
    assert r.stop.watches[0].error == "NameError: name 'acc' is not defined"
    r = s.send("c")
    assert r.exited and "[log main.py:8] result=10 n=5" in r.output
    stops = [e.data for e in s.events.history if e.kind == "stop"]
    assert any(w.value == "300" for stop in stops for w in stop.watches)  # in the events, so in the session file
    assert s.unwatch("acc * 100") == "Not watching acc * 100"
    assert s.breakpoints.watches == []


def test_data_breakpoint_stops_on_change_with_old_and_new(open_session):
    from dgym_tui.core.events import Event

    s = open_session("python main.py 4")
    s.set_breakpoint("helpers.py", 3)
    s.send("c")
    r = s.data_breakpoint("acc")
    assert "Data breakpoint 1: stop when acc changes (now 0" in r.output
    assert [(d.expr, d.scope, d.value) for d in r.stop.data_breakpoints] == [("acc", "frame", "0")]
    s.clear_breakpoint("helpers.py", 3)
    r = s.send("c")  # acc += 0 leaves it as it was; acc += 1 changes it
    assert (r.stop.reason, r.stop.line, r.stop.locals["v"]) == ("data", 3, "1")
    change = r.stop.data_change
    assert (change.expr, change.old, change.new, change.by) == ("acc", "0", "1", "helpers.py:4")
    p = s.send("p acc")  # inspecting keeps the reason and the change on show
    assert p.output == "1\n" and s.state.stop.data_change == change and s.state.stop.reason == "data"
    stop_event = [e for e in s.events.history if e.kind == "stop"][-1]
    assert Event.from_dict(stop_event.to_dict()) == stop_event  # the session file keeps all of it
    r = s.send("c")
    assert r.stop.data_change.new == "3"
    s.send("dclear")
    r = s.send("c")
    assert r.exited and r.exit_code == 0


def test_back_to_an_earlier_stop_runs_there_again(open_session):
    s = open_session("python main.py 4")
    s.set_breakpoint("helpers.py", 4)
    for v in ("0", "1", "2"):
        assert s.send("c").stop.locals["v"] == v
    s.send("p acc")  # inspecting is no new place in the run
    s.send("up")
    assert [(st.line, st.locals.get("v")) for st in s.state.run_stops] == [(1, None), (4, "0"), (4, "1"), (4, "2")]
    verdict = s.back_to(2)
    assert verdict == "Back at stop #3: helpers.py:4, the 2nd time, with the stack and values recorded"
    stop = s.state.stop
    assert (stop.file, stop.line, stop.locals["v"], stop.locals["acc"]) == ("helpers.py", 4, "1", "0")
    starts = [e.data for e in s.events.history if e.kind == "program_start"]
    assert starts[-1].reason == "back to stop #3: helpers.py:4, arrival 2"
    assert [e.data.message for e in s.events.history if e.kind == "notice"][-1] == verdict
    assert [(b.file, b.line, b.enabled) for b in s.breakpoints.items()] == [("helpers.py", 4, True)]
    assert s.send("c").stop.locals["v"] == "2"  # the breakpoint stops again from there


def test_back_to_says_when_the_run_differs(open_session):
    s = open_session("python pid.py")
    s.send("n")
    s.send("n")
    first_pid = s.state.stop.locals["pid"]
    verdict = s.back_to(2)
    assert verdict.startswith("Reached pid.py:3 the 1st time, but not as stop #3 was: pid: ")
    assert f"pid: {first_pid} → {s.state.stop.locals['pid']}" in verdict
    with pytest.raises(Exception, match="there is no stop #9 in this run"):
        s.back_to(8)


def test_compare_stops_names_a_run_that_ended_or_stopped_elsewhere():
    from dgym_tui.core.debugger import PdbResult
    from dgym_tui.core.events import Frame, Stop
    from dgym_tui.core.session_pdb import compare_stops

    target = Stop(reason="breakpoint", file="a.py", line=3, function="f", stack=[Frame("a.py", 3, "f")])
    verdict, level = compare_stops(4, target, 2, PdbResult(output="", exited=True, exit_code=0))
    assert level == "warning" and verdict == ("Could not go back to stop #5: the program ended (exit code 0) before "
                                              "reaching a.py:3 the 2nd time; this program does not run the same way twice")
    elsewhere = Stop(reason="post_mortem", file="b.py", line=9, function="g", stack=[Frame("b.py", 9, "g")])
    verdict, _ = compare_stops(4, target, 2, PdbResult(output="", stop=elsewhere))
    assert verdict == "Could not go back to stop #5: the program stopped at b.py:9 (post_mortem) before reaching a.py:3 the 2nd time"
