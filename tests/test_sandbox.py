"""The sandbox conformance suite: every test runs against both backends, for real."""

from __future__ import annotations

import os
import time
import uuid

import pexpect
import pytest

from conftest import git, make_sandbox, tree_hash
from dgym_tui.sandbox import SandboxError


@pytest.fixture
def user_repo(tmp_path):
    """A user's checkout with tracked, untracked, ignored, .dgymignored, binary, unicode and
    symlinked files. Its hash is checked after every test: the sandbox never changes it."""
    repo = tmp_path / "user repo"
    (repo / "pkg").mkdir(parents=True)
    (repo / "pkg" / "mod.py").write_text("def f(x):\n    return x + 1\n")
    (repo / "main.py").write_text("from pkg.mod import f\nprint(f(1))\n")
    (repo / ".gitignore").write_text("*.log\nbuild/\n")
    (repo / ".dgymignore").write_text("secrets.txt\nbig/\n")
    (repo / "secrets.txt").write_text("tracked but dgymignored\n")
    (repo / "big").mkdir()
    (repo / "big" / "blob.bin").write_bytes(b"x" * 100)
    (repo / "build").mkdir()
    (repo / "build" / "out.txt").write_text("ignored\n")
    (repo / "run.log").write_text("ignored\n")
    (repo / "data.bin").write_bytes(bytes(range(256)) * 4)
    (repo / "naïve file ü.py").write_text("print('unicode name')\n")
    os.symlink("/etc/passwd", repo / "escape")
    os.symlink("pkg/mod.py", repo / "alias.py")
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "init")
    (repo / "untracked.py").write_text("print('new')\n")
    before = tree_hash(repo)
    yield repo
    assert tree_hash(repo) == before, "the user's repo was modified"


@pytest.fixture
def sandbox(backend, user_repo):
    sb = make_sandbox(backend, user_repo)
    sb.start()
    yield sb
    sb.close()


def test_copies_working_tree_minus_ignored(sandbox):
    names = set(sandbox.exec("git ls-files", timeout=30).output.split("\n")) - {""}
    assert {"main.py", "pkg/mod.py", "untracked.py", ".gitignore", "data.bin", "alias.py"} <= names
    assert "naïve file ü.py" in sandbox.exec("ls", timeout=30).output
    for left_out in ("run.log", "build/out.txt", "secrets.txt", "big/blob.bin", "escape"):
        assert left_out not in names
    assert any("escape" in s for s in sandbox.skipped)
    # The copy is its own repository, with a baseline commit and a clean tree.
    assert sandbox.baseline and len(sandbox.baseline) == 40
    assert sandbox.exec("git status --porcelain", timeout=30).output == ""


def test_binary_symlink_and_unicode_are_exact(sandbox, user_repo):
    assert sandbox.read_bytes("data.bin") == (user_repo / "data.bin").read_bytes()
    assert sandbox.read_text("naïve file ü.py") == "print('unicode name')\n"
    # The in-repo symlink points inside the copy, never back at the user's repo.
    link = sandbox.exec("readlink alias.py && cat alias.py", timeout=30).output
    assert link.startswith("pkg/mod.py") and "return x + 1" in link
    assert sandbox.exec(["python3", "naïve file ü.py"], timeout=30).output == "unicode name\n"


def test_in_repo_symlinks_are_followed_outside_ones_refused(sandbox):
    # alias.py -> pkg/mod.py is a link in the copy too: reading it reads its target.
    assert sandbox.read_text("alias.py") == "def f(x):\n    return x + 1\n"
    assert any("escape" in s for s in sandbox.skipped)  # kept for the UI to show
    # A link the program plants, pointing out of the repo, is never followed by the host side.
    sandbox.exec("ln -s /etc/hostname leak.txt && ln -s ../../../../../../etc/hostname leak2.txt "
                 "&& ln -s pkg inner && ln -s loop1 loop2 && ln -s loop2 loop1", timeout=30)
    for name in ("leak.txt", "leak2.txt"):
        with pytest.raises(SandboxError, match="symlink pointing outside the repository"):
            sandbox.read_text(name)
    with pytest.raises(SandboxError):
        sandbox.read_text("loop1")
    assert sandbox.read_text("inner/mod.py").startswith("def f(x)")


def test_writing_through_a_planted_link_never_reaches_the_host(sandbox, tmp_path):
    outside = tmp_path / "outside.txt"
    outside.write_text("the person's file\n")
    sandbox.exec(["ln", "-s", str(outside), "planted.py"], timeout=30)
    try:
        sandbox.write_text("planted.py", "overwritten\n")
    except SandboxError as e:  # local, bwrap: refused
        assert "symlink pointing outside the repository" in str(e)
    else:  # docker: the write happens in the container, where the link is replaced by the file
        assert sandbox.read_text("planted.py") == "overwritten\n"
    assert outside.read_text() == "the person's file\n"


def test_exec_result_and_cwd(sandbox):
    result = sandbox.exec(["python3", "main.py"], timeout=30)
    assert (result.exit_code, result.output, result.timed_out) == (0, "2\n", False)
    assert sandbox.exec("exit 7", timeout=30).exit_code == 7
    assert sandbox.exec("pwd", cwd="pkg", timeout=30).output.strip().endswith("/pkg")


def test_environment_is_scrubbed(sandbox, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-must-not-leak")
    monkeypatch.setenv("DGYM_SECRET_TEST", "nope")
    env = sandbox.exec("env", timeout=30).output
    assert "sk-must-not-leak" not in env and "DGYM_SECRET_TEST" not in env
    # pytest's plugin switch is the one thing passed on (conftest.py sets it for the whole suite)
    assert os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] == "1"
    assert "PYTEST_DISABLE_PLUGIN_AUTOLOAD=1" in env.splitlines()
    home = sandbox.exec('echo "$HOME"', timeout=30).output.strip()
    assert home and not home.startswith(os.path.expanduser("~") + "/")


def marked_processes(marker: str) -> str:
    """Shell listing the processes whose environment holds `marker` (a NAME=VALUE line)."""
    return f"for e in /proc/[0-9]*/environ; do tr '\\0' '\\n' 2>/dev/null < $e | grep -qx {marker} && echo $e; done"


def test_timeout_kills_the_process_group_and_sandbox_stays_usable(sandbox):
    # The run's processes carry a marker in their environment that nothing else on the machine
    # has: the local sandbox sees the host's /proc, where anyone may be running "sleep 300".
    marker = f"DGYM_TEST_RUN={uuid.uuid4().hex}"
    start = time.monotonic()
    result = sandbox.exec(f"export {marker}; sleep 300 & sleep 301 & python3 -c 'while True: pass'",
                          timeout=1.5)
    assert result.timed_out and result.exit_code is None
    assert time.monotonic() - start < 10
    # No process of the group survives (read /proc: ps is not in every image). The check's own
    # processes have the marker only in their arguments, never in their environment.
    survivors = marked_processes(marker)
    left = "?"
    for _ in range(40):  # killed processes leave /proc a moment later (bounded: 2 s)
        left = sandbox.exec(survivors, timeout=30).output
        if not left:
            break
        time.sleep(0.05)
    assert left == ""
    assert sandbox.exec("echo alive", timeout=30).output == "alive\n"


def test_the_marker_check_sees_a_marked_process(sandbox):
    """The check above can fail: a live marked process is found (in the same run: bwrap gives
    each run a PID namespace of its own)."""
    marker = f"DGYM_TEST_RUN={uuid.uuid4().hex}"
    script = (f"env {marker} sleep 30 & for i in $(seq 100); do found=$({marked_processes(marker)}); "
              f'[ -n "$found" ] && break; sleep 0.05; done; kill $!; echo "found:$found"')
    assert sandbox.exec(script, timeout=30).output.startswith("found:/proc/")


def test_huge_output_is_capped(sandbox):
    result = sandbox.exec("head -c 52428800 /dev/zero | tr '\\0' 'y'", timeout=120)
    assert result.exit_code == 0 and result.truncated
    assert len(result.output) < 1024 * 1024 + 200
    assert "output truncated: 51380224 bytes cut here" in result.output
    assert result.output.startswith("yyy") and result.output.endswith("yyy")


def test_capped_output_keeps_the_traceback_at_its_end(sandbox):
    # A crash after 2 MB of logs: the cap keeps the start and the end, so the traceback survives.
    script = "import sys\nfor i in range(2048):\n    print('log line', i, 'x' * 1000)\nraise ValueError('the real cause')\n"
    sandbox.write_text("crash_after_logs.py", script)
    result = sandbox.exec(["python3", "crash_after_logs.py"], timeout=60)
    assert result.exit_code == 1 and result.truncated
    assert result.output.startswith("log line 0 ")
    assert "log line 2047 " in result.output
    assert result.output.rstrip().endswith("ValueError: the real cause")
    assert "Traceback (most recent call last)" in result.output


def test_spawn_gives_a_pty_pexpect_can_drive(sandbox):
    channel = sandbox.spawn(["python3", "-c",
                             "import os; print('size', os.get_terminal_size()); print('got', input('> '))"],
                            rows=33, cols=111)
    try:
        channel.child.expect("size os.terminal_size\\(columns=(\\d+), lines=(\\d+)\\)", timeout=10)
        assert channel.child.match.groups() == ("111", "33")
        channel.child.expect("> ", timeout=10)
        channel.child.send("hello\n")
        channel.child.expect("got hello", timeout=10)
        channel.child.expect(pexpect.EOF, timeout=10)
    finally:
        channel.close()


SIZE_STARTS = int(os.environ.get("DGYM_SIZE_STARTS", "10"))


def test_every_start_sees_its_terminal_size_at_once(sandbox):
    """Issue 29: a program that reads its size first thing never sees 0x0 (nor a stale size),
    start after start."""
    for i in range(SIZE_STARTS):
        rows, cols = 20 + i % 17, 80 + i % 53
        channel = sandbox.spawn(["python3", "-c", "import os; print('size', *os.get_terminal_size())"],
                                rows=rows, cols=cols)
        try:
            channel.child.expect("size (\\d+) (\\d+)", timeout=30)
            assert channel.child.match.groups() == (str(cols), str(rows)), f"start {i}"
            channel.child.expect(pexpect.EOF, timeout=30)
        finally:
            channel.close()


@pytest.mark.parametrize("kind", ["local", "bwrap"])
def test_runs_and_terminals_started_at_once_in_two_sandboxes_all_start(kind, user_repo):
    """A run started in one sandbox while a terminal starts in another (a trial's and its
    scoring's, say) never fails the start. Their forks run Python's at-fork handlers; filelock's,
    preempted there, made the other thread's forkpty raise "os.forkpty is unsafe while filelock
    is changing descriptor ownership" (CI: trials ended `error`, pdb never started). A switch
    interval of a microsecond makes the preemption that a busy machine makes now and then
    certain: before the fix, about a third of the starts failed."""
    import sys
    import threading

    import filelock  # noqa: F401 - its at-fork handlers, as litellm, Ray and huggingface_hub bring them

    runs, terminals = make_sandbox(kind, user_repo), make_sandbox(kind, user_repo)
    failures: list[str] = []
    done = threading.Event()
    interval = sys.getswitchinterval()
    try:
        runs.start()
        terminals.start()

        def run_runs():
            while not done.is_set():
                try:
                    runs.exec("true", timeout=30)
                except Exception as e:
                    failures.append(f"exec: {e!r}")

        runner = threading.Thread(target=run_runs)
        sys.setswitchinterval(1e-6)
        runner.start()
        try:
            for _ in range(150):
                try:
                    terminals.spawn(["true"]).close()
                except Exception as e:
                    failures.append(f"spawn: {e!r}")
        finally:
            done.set()
            runner.join(60)
    finally:
        sys.setswitchinterval(interval)
        runs.close()
        terminals.close()
    assert not failures, f"{len(failures)} starts failed, the first: {failures[0]}"


def test_spawn_interrupt_and_kill(sandbox):
    channel = sandbox.spawn(["python3", "-c", "import signal, time\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\n"
                             "print('ready', flush=True)\nwhile True: time.sleep(0.05)"])
    try:
        channel.child.expect("ready", timeout=10)
        channel.interrupt()  # ignored by this program
        with pytest.raises(pexpect.TIMEOUT):
            channel.child.expect(pexpect.EOF, timeout=0.5)
        channel.kill()
        channel.child.expect(pexpect.EOF, timeout=10)
    finally:
        channel.close()


def test_files_read_write_list(sandbox):
    sandbox.write_text("pkg/new dir/x.py", "X = 1\n")
    assert sandbox.read_text("pkg/new dir/x.py") == "X = 1\n"
    names = {(e.name, e.is_dir) for e in sandbox.list_dir("pkg")}
    assert {("mod.py", False), ("new dir", True)} <= names
    assert ".git" not in {e.name for e in sandbox.list_dir(".")}
    for bad in ("../outside.txt", "/etc/passwd", "pkg/../../x"):
        with pytest.raises(SandboxError, match="outside the repository"):
            sandbox.read_text(bad)
    with pytest.raises(SandboxError):
        sandbox.read_text("no_such_file.py")


def test_checkpoint_diff_restore(sandbox):
    sandbox.write_text("pkg/mod.py", "def f(x):\n    return x + 2\n")
    sandbox.write_text("added.py", "A = 1\n")
    sandbox.exec("rm main.py", timeout=30)
    diff = sandbox.diff()
    assert "-    return x + 1\n+    return x + 2" in diff
    assert "new file mode" in diff and "+A = 1" in diff
    assert "deleted file mode" in diff and "-print(f(1))" in diff
    assert sorted(sandbox.changed_files()) == ["added.py", "main.py", "pkg/mod.py"]
    first = sandbox.checkpoint("patch 1")
    sandbox.write_text("added.py", "A = 2\n")
    second = sandbox.checkpoint("patch 2")
    assert "+A = 2" in sandbox.diff(first, second)
    sandbox.restore(first)
    assert sandbox.read_text("added.py") == "A = 1\n"
    sandbox.restore(sandbox.baseline)
    assert sandbox.read_text("main.py").startswith("from pkg.mod")
    assert sandbox.diff() == ""


def test_restart_starts_afresh(sandbox):
    sandbox.write_text("main.py", "changed\n")
    sandbox.restart()
    assert sandbox.read_text("main.py").startswith("from pkg.mod")


@pytest.mark.parametrize("make, message", [
    (lambda tmp: tmp / "does-not-exist", "no such directory"),
    (lambda tmp: (tmp / "file.py").write_text("x") and tmp / "file.py", "is a file, not a directory"),
    (lambda tmp: (tmp / "empty").mkdir() or tmp / "empty", "no files to copy"),
])
def test_bad_repo_paths(backend, tmp_path, make, message):
    path = make(tmp_path)
    with pytest.raises(SandboxError, match=message):
        sb = make_sandbox(backend, path)
        sb.start()


def test_size_limit_names_biggest_folders(backend, tmp_path):
    repo = tmp_path / "r"
    (repo / "assets" / "video").mkdir(parents=True)
    (repo / "assets" / "video" / "a.bin").write_bytes(b"0" * 300_000)
    (repo / "src").mkdir()
    (repo / "src" / "m.py").write_text("x = 1\n")
    sb = make_sandbox(backend, repo, size_limit=100_000)
    with pytest.raises(SandboxError, match=r"over the 0 MB limit; biggest folders: assets/ .*assets/video/"):
        sb.start()
