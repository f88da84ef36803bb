"""DockerSandbox: the repo copy lives in a locked-down container, reached through the Docker SDK.

No network unless asked for, an unprivileged user, every capability dropped, no-new-privileges,
memory / pids / CPU limits. The repo goes in with put_archive (never a bind mount), so nothing the
code does can reach the user's checkout. Containers carry labels naming the app, the session and
the owning process; they are removed on exit, and ones left by a crashed run are reaped at the
next start. DOCKER_HOST is honoured, so a remote engine works.
"""

from __future__ import annotations

import atexit
import io
import os
import posixpath
import socket
import tarfile
import threading
import time
import uuid
import weakref

import pexpect.fdpexpect

from dgym_tui.sandbox.base import (BOX_SOURCE, DEFAULT_OUTPUT_CAP, DEFAULT_TIMEOUT,
                                   READING_TERMINAL, Channel, DirEntry, ExecResult, OutputCap,
                                   Sandbox, describe_status, passed_env)
from dgym_tui.sandbox.errors import SandboxError, SandboxGone, short_error
from dgym_tui.sandbox.repo_copy import SANDBOX_UID, RepoFiles, collect_files, tar_stream

DEFAULT_IMAGE = "dgym-tui-sandbox:latest"
LABEL_APP = "dgym-tui.app"
WORKSPACE = "/workspace"
BOX_MOUNT = "/dgym"
BOX_DIR = "/dgym/box"
HOME = "/home/dgym"
# What the program may write: the repo's size plus DEFAULT_DISK in /workspace, DEFAULT_TMP in
# /tmp and as much in the home. tmpfs: it counts against the memory limit too.
DEFAULT_DISK = 1024 * 1024 * 1024
DEFAULT_TMP = 256 * 1024 * 1024
MAX_LINKS = 40  # symlinks followed by read_bytes, as the kernel allows
CALL_TIMEOUT = 60.0  # seconds for an ordinary engine call (create, start, inspect...)


def upload_timeout(size: int) -> float:
    """Seconds to allow for copying `size` bytes in: the engine unpacks and writes every file
    before it answers, which on a busy disk takes far longer than a call's time-out."""
    return 120.0 + size / (256 * 1024)


PIDS_HEADROOM = 32  # processes of the pids limit a run can never take (see spawn)
NO_ENGINE_FIX = "start Docker or use --sandbox local; `dgym-tui doctor` explains"

SERVES_LABEL = "dgym-tui.serves"  # an image's services for its tests, comma-separated (httpbin)
_live: "weakref.WeakSet[DockerSandbox]" = weakref.WeakSet()
# Set once this process is exiting: a sandbox still starting on another thread (a batch worker's
# trial, when SIGTERM reaches its main thread) must not create a container nobody would remove.
_exiting = threading.Event()


def connect(timeout: float = 5, call_timeout: float = CALL_TIMEOUT):
    """A Docker client whose engine answered a ping within `timeout`, or a SandboxError saying
    why not. Its later calls may take `call_timeout` (a busy engine is slow, not gone); the
    ones that move data choose their own (see upload_timeout)."""
    import docker  # the SDK takes ~0.2 s to import: only when a Docker sandbox is wanted

    try:
        client = docker.from_env(timeout=timeout)
        client.ping()
        client.api.timeout = max(timeout, call_timeout)
        return client
    except Exception as e:
        where = os.environ.get("DOCKER_HOST", "the default socket")
        raise SandboxError(f"no Docker engine answers at {where} ({type(e).__name__}): {NO_ENGINE_FIX}") from None


def _double(size: str) -> str:
    """'2g' -> '4g': a limit to suggest."""
    number, unit = size[:-1], size[-1:]
    if unit.isdigit():
        number, unit = size, ""
    try:
        return f"{int(float(number) * 2)}{unit}"
    except ValueError:
        return "4g"


def image_missing_message(image: str) -> str:
    return f"the sandbox image {image} is missing: build it with `dgym-tui image build`"


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _owner_gone(labels: dict, host: str) -> bool:
    return (labels.get("dgym-tui.owner-host") == host
            and not _pid_alive(int(labels.get("dgym-tui.owner-pid", "0") or 0)))


def reap_orphans(client) -> list[str]:
    """Remove containers, then their volumes, this app left behind on this host (their owner
    process is gone)."""
    removed = []
    host = socket.gethostname()
    # ignore_removed: another run may remove one of ours between the list and its inspect (seen
    # as a NotFound raised in this thread, once in 200 starts side by side with other tests)
    for c in client.containers.list(all=True, filters={"label": LABEL_APP}, ignore_removed=True):
        if _owner_gone(c.labels, host):
            try:
                c.remove(force=True)
                removed.append(c.name)
            except Exception:  # already being removed by someone else
                pass
    try:
        volumes = client.api.volumes(filters={"label": LABEL_APP}).get("Volumes") or []
    except Exception:  # an engine that cannot list volumes: nothing of ours to reap there
        volumes = []
    for v in volumes:
        if _owner_gone(v.get("Labels") or {}, host):
            try:
                client.api.remove_volume(v["Name"], force=True)
                removed.append(v["Name"])
            except Exception:  # still in use, or already removed
                pass
    return removed


def set_size(rows: int, cols: int, python: str) -> str:
    """Shell that gives the exec's terminal its size from inside, before the program starts.

    An exec's tty is born 0x0: the engine takes the size only in a resize call after the start
    (exec create's ConsoleSize needs API 1.42; engines still in use speak 1.41), so a program
    that reads its size at once could see 0x0 (issue 29). Setting it here, in the process that
    then execs the program, leaves no ordering in which the program sees anything else. stty is
    in coreutils and busybox; an image without it falls back to the interpreter's ioctl."""
    rows, cols = int(rows), int(cols)
    ioctl = (f"import fcntl, struct, termios; fcntl.ioctl(0, termios.TIOCSWINSZ, "
             f"struct.pack('HHHH', {rows}, {cols}, 0, 0))")
    return f"stty rows {rows} cols {cols} 2>/dev/null || {python} -c \"{ioctl}\" 2>/dev/null"


class _Call:
    """fn(*args) on a thread of its own; result() waits for it and re-raises what it raised."""

    def __init__(self, fn, *args):
        self._out: dict = {}
        self._thread = threading.Thread(target=self._run, args=(fn, args), daemon=True)
        self._thread.start()

    def _run(self, fn, args):
        try:
            self._out["value"] = fn(*args)
        except BaseException as e:  # re-raised by result()
            self._out["error"] = e

    def result(self):
        self._thread.join()
        if "error" in self._out:
            raise self._out["error"]
        return self._out.get("value")


class ExecStream:
    """An exec's stream from the engine, none of its first bytes lost.

    docker-py hands back the socket beneath the HTTP response, but http.client read that
    response's head through a buffer, and the buffer can hold the stream's first bytes too: the
    engine sends them right behind the head, and a process slow to read (a busy machine) gets
    both in one read. Reading only the socket then loses the program's first output (docker-py
    issue 3332): seen here as an exec with exit 0 and no output, and as a pdb whose ready line
    never came. So the stream is read through that buffer."""

    def __init__(self, sock):
        self.sock = sock
        self.socket = getattr(sock, "_sock", sock)  # the socket itself (sock is its SocketIO)
        response = getattr(sock, "_response", None)
        self.reader = getattr(getattr(getattr(response, "raw", None), "_fp", None), "fp", None)
        if self.reader is None:  # docker-py laid out otherwise: a buffer of our own on the socket
            self.reader = self.socket.makefile("rb")

    def buffered(self) -> bytes:
        """What the head's reader holds already, without waiting for more (for a reader that
        goes to the socket itself, as pexpect does)."""
        previous = self.socket.gettimeout()
        self.socket.settimeout(0)  # peek() reads the socket once when its buffer is empty
        try:
            return self.reader.peek() or b""
        finally:
            self.socket.settimeout(previous)

    def frames(self):
        """The payloads of a non-tty exec's multiplexed stream (an 8-byte header each: stream
        id, 3 zero bytes, size), until the engine closes it. No time-out here: the command's
        own `timeout` in the container ends it."""
        self.socket.settimeout(None)
        while True:
            header = self.reader.read(8)
            if len(header) < 8:
                return
            size = int.from_bytes(header[4:8], "big")
            payload = self.reader.read(size) if size else b""
            if payload:
                yield payload
            if len(payload) < size:
                return

    def close(self) -> None:
        # The response first (it closes its reader, then the connection), then what is left.
        for part in (getattr(self.sock, "_response", None), self.reader, self.sock):
            try:
                if part is not None:
                    part.close()
            except (OSError, ValueError):  # already closed beneath it
                pass


class _StreamSpawn(pexpect.fdpexpect.fdspawn):
    """pexpect on an exec's socket whose first reads are the bytes the response's reader took
    along (ExecStream.buffered): pexpect itself reads only the socket."""

    def __init__(self, stream: ExecStream):
        super().__init__(stream.socket.fileno(), encoding="utf-8", codec_errors="replace")
        self._early = stream.buffered()

    def read_nonblocking(self, size=1, timeout=-1):
        if not self._early:
            return super().read_nonblocking(size, timeout)
        chunk, self._early = self._early[:size], self._early[size:]
        text = self._decoder.decode(chunk, final=False)  # the same decoder as later reads
        self._log(text, "read")
        return text


class DockerChannel(Channel):
    def __init__(self, sandbox: "DockerSandbox", exec_id: str, stream: ExecStream, pidfile: str):
        self.sandbox, self.exec_id, self.stream, self.pidfile = sandbox, exec_id, stream, pidfile
        self.child = _StreamSpawn(stream)
        self.child.delaybeforesend = None

    def kill(self) -> None:
        """The run and everything it left (its session, group, descendants and orphans), by the
        in-box dgym_procs.py, which starts no process of its own: it works after a fork bomb."""
        try:
            self.sandbox.exec(f'p=$(cat {self.pidfile}) && exec {self.sandbox.python} '
                              f'{BOX_DIR}/dgym_procs.py kill "$p"', timeout=30)
        except SandboxError:
            pass  # container gone: so is the process

    def close(self) -> None:
        self.kill()
        self.stream.close()


class DockerSandbox(Sandbox):
    kind = "docker"
    isolated = True

    def __init__(self, repo, image: str = DEFAULT_IMAGE, network: str | None = None,
                 memory: str = "2g", pids: int = 512, cpus: float = 2.0, client=None,
                 python: str | None = None, disk: int = DEFAULT_DISK, tmp_size: int = DEFAULT_TMP,
                 workdir: str | None = None, activate: str | None = None, cap_add: list[str] | None = None,
                 as_root: bool = False, deps=None, **kwargs):
        """workdir: the image holds the repository there (a SWE-bench instance image's /testbed):
        nothing is copied in, the sandbox works in that folder (made the sandbox user's once,
        instance_image.py), and the image's files are writable (its environment stays root's).
        activate: shell lines that activate the image's environment (`conda activate testbed`):
        the environment they leave is every command's. as_root, cap_add: the container's user is
        root, with these capabilities given back (a harness that works as root, as SWE-bench's
        does, scoring in its own container: writing the sandbox user's files needs DAC_OVERRIDE;
        a capability given to a container of uid 1000 would never be in effect).
        deps: deps_image.DepsOptions, how the repo's declared dependencies get into the image
        (prepare(); default: installed from the index pip would use)."""
        super().__init__(repo, **kwargs)
        self.python = python or ("python" if workdir else "python3")  # a command inside the image
        self.workdir, self.activate, self.cap_add = workdir, activate, list(cap_add or [])
        self.as_root = as_root
        self.deps = deps
        self._prepared = False
        self.source_image = image               # as asked for (in-image: before it was adapted)
        self.base_env: dict[str, str] = {}      # what `activate` set up, under every command
        self.disk, self.tmp_size = disk, tmp_size
        self._oom_seen = 0  # out-of-memory kills already explained
        self._volumes: list[str] = []
        self.image, self.network = image, network
        self.memory, self.pids, self.cpus = memory, pids, cpus
        self.client = client
        self.container = None
        self._name: str | None = None  # the container's, from the moment it is asked for
        self._starter: threading.Thread | None = None  # the thread in start(), while it runs
        self._closed_meanwhile = False
        self._create_lock = threading.Lock()
        self._close_lock = threading.Lock()
        self._extra_hosts: dict[str, str] | None = None
        self.root = workdir or WORKSPACE
        self.box_dir = BOX_DIR

    @property
    def description(self) -> str:
        net = f", network {self.network}" if self.network else ""
        where = f", repo at {self.workdir}" if self.workdir else ""
        return f"docker {self.source_image if self.workdir else self.image}{where}{net}"

    def missing_module_fix(self, module: str) -> str:
        return ("declare the package that provides it in the repo's requirements.txt or pyproject.toml "
                "dependencies (they are installed into the sandbox's image: --wheels DIR offline), or install it "
                "with --setup \"python3 -m pip install PACKAGE\"")

    # --- lifecycle ----------------------------------------------------------------------------

    def start(self) -> None:
        """Create and fill the container. Any engine failure is one SandboxError line naming the
        step (never a raw ConnectionError), and nothing is left behind."""
        step = ["connecting to the engine"]
        self._starter, self._closed_meanwhile = threading.current_thread(), False
        try:
            self._start_or_explain(step)
        except Exception:
            if self._closed_meanwhile:  # by another thread: whatever failed after is that close
                raise SandboxError("the sandbox was closed while it started") from None
            raise
        finally:
            self._starter = None

    def _start_or_explain(self, step: list[str]) -> None:
        import docker
        import requests

        try:
            self._start(step)
        except SandboxError:
            raise
        except docker.errors.ImageNotFound:
            raise SandboxError(image_missing_message(self.image)) from None
        except (docker.errors.DockerException, requests.exceptions.RequestException, OSError) as e:
            raise SandboxError(f"the Docker engine failed while {step[0]}: {short_error(e)}; "
                               f"{NO_ENGINE_FIX}") from None

    def prepare(self, progress=None) -> list[tuple[str, str]]:
        """The image this sandbox runs, ready: an environment image with the repository made the
        sandbox user's (instance_image.py), else the sandbox image with the repo's declared
        dependencies installed (deps_image.py), each built once and found by its hash after."""
        self._prepared = True
        self.client = self.client or connect()
        if self.workdir:
            from dgym_tui.sandbox.instance_image import adapted

            self.image = adapted(self.client, self.source_image, self.workdir, progress)
            return []
        from dgym_tui.sandbox.deps_image import install_declared

        self.image, notes = install_declared(self.client, self.image, self.repo, self.python, self.deps, progress)
        return notes

    def _start(self, step: list[str]) -> None:
        self.client = self.client or connect()
        if self.workdir and not self._prepared:  # its image must be the sandbox user's, however it is started
            step[0] = "preparing the environment image"
            self.prepare()
        step[0] = "checking the image"
        labels_of_image = self.client.images.get(self.image).labels or {}
        # An environment image that serves its tests' httpbin inside the container
        # (batch/swebench_testbed.py): the name its tests hard-code reaches that one.
        self._extra_hosts = ({"httpbin.org": "127.0.0.1"} if "httpbin" in labels_of_image.get(SERVES_LABEL, "").split(",")
                             else None)
        # Clearing up after crashed runs overlaps with this start (joined before it returns).
        reaper = threading.Thread(target=reap_orphans, args=(self.client,), daemon=True)
        reaper.start()
        # List the repo's files while the engine creates the container.
        listed: dict = {}

        def collect():
            try:
                listed["files"] = None if self.workdir else collect_files(self.repo, self.size_limit)
            except Exception as e:  # re-raised on the calling thread below
                listed["error"] = e

        collector = threading.Thread(target=collect, daemon=True)
        collector.start()
        self.session_id = uuid.uuid4().hex[:12]
        self._oom_seen = 0
        labels = {LABEL_APP: "dgym-tui", "dgym-tui.session": self.session_id,
                  "dgym-tui.owner-pid": str(os.getpid()), "dgym-tui.owner-host": socket.gethostname(),
                  "dgym-tui.repo": str(self.repo)}
        _live.add(self)
        try:
            collector.join()
            if "error" in listed:
                raise listed["error"]
            files = listed["files"]
            self.skipped = files.skipped if files else []
            step[0] = "creating the container"
            self._create(labels, workspace_bytes=(files.total_bytes if files else 0) + self.disk)
            # The volumes are tmpfs: they hold data only while the container runs, so it starts
            # first. Two uploads: the helpers (root's, so the program cannot rewrite them) and
            # the repo (the sandbox user's).
            step[0] = "starting the container"
            self.container.start()
            step[0] = "copying the repo in"
            # The helpers go in beside the repo, each upload on its own connection.
            box_upload = _Call(self._upload, BOX_MOUNT, tar_stream(RepoFiles(BOX_SOURCE), uid=0,
                                                                   extra=(("box", BOX_SOURCE),)), upload_timeout(0))
            if files is not None:
                self._upload(WORKSPACE, tar_stream(files, uid=SANDBOX_UID), upload_timeout(files.total_bytes))
            box_upload.result()
            if self.as_root:  # root's git works in the sandbox user's folder, as the harness's does
                self.exec("git config --global --add safe.directory '*'", timeout=60)
            if self.activate:
                step[0] = "activating the image's environment"
                self.base_env = self._activated_env()
            step[0] = "committing the baseline"
            self.init_repo()
            reaper.join()
        except BaseException:
            self.close()
            raise

    def _upload(self, path: str, data, timeout: float) -> None:
        """put_archive with a time-out of its own (the SDK's uses the client's, for every call)."""
        api = self.client.api
        response = api._put(api._url("/containers/{0}/archive", self.container.id), params={"path": path},
                            data=data, timeout=timeout)
        api._raise_for_status(response)

    def _create(self, labels: dict, workspace_bytes: int) -> None:
        """The container: read-only root; writable only /workspace (a tmpfs volume sized for the
        repo plus `disk`), the home and /tmp (tmpfs, sized); the helpers in a volume of root's."""
        from docker.types import DriverConfig, Mount

        def volume(target: str, role: str, options: str) -> Mount:
            # Made by the engine with the container (no call of its own), removed by close().
            name = f"dgym-tui-{self.session_id}-{role}"
            self._volumes.append(name)
            return Mount(target, name, type="volume", labels=labels,
                         driver_config=DriverConfig("local", {"type": "tmpfs", "device": "tmpfs", "o": options}))

        mounts = [volume(BOX_MOUNT, "box", "size=16m,uid=0,gid=0,mode=0755")]
        if not self.workdir:  # in-image: the repository is the image's own, written in the container's layer
            mounts.insert(0, volume(WORKSPACE, "workspace",
                                    f"size={workspace_bytes},uid={SANDBOX_UID},gid={SANDBOX_UID},mode=0755"))
        with self._create_lock:
            if _exiting.is_set():
                raise SandboxError("this process is exiting: the sandbox was not created")
            self._name = f"dgym-tui-{self.session_id}"
            self.container = self._create_container(mounts, labels)

    def _create_container(self, mounts, labels):
        return self.client.containers.create(
            self.image,
            command=["sleep", "infinity"],
            name=self._name,
            init=True,  # reaps zombies left by killed debuggees
            user="0:0" if self.as_root else f"{SANDBOX_UID}:{SANDBOX_UID}",
            working_dir=self.root,
            network_mode=self.network or "none",
            cap_drop=["ALL"],
            cap_add=self.cap_add or None,
            security_opt=["no-new-privileges"],
            mem_limit=self.memory,
            pids_limit=self.pids,
            nano_cpus=int(self.cpus * 1e9),
            read_only=not self.workdir,
            mounts=mounts,
            # exec: as on any machine, what a build unpacks in /tmp is loaded from there (numpy's .so
            # in pip's build environment; Docker's tmpfs is noexec unless told)
            tmpfs={"/tmp": f"size={self.tmp_size},mode=1777,exec",
                   HOME: f"size={self.tmp_size},uid={SANDBOX_UID},gid={SANDBOX_UID},mode=0755"},
            environment={"HOME": "/root" if self.as_root else HOME, "LANG": "C.UTF-8", "PYTHONDONTWRITEBYTECODE": "1",
                         **passed_env()},
            labels=labels,
            extra_hosts=self._extra_hosts,
        )

    def close(self) -> None:
        with self._close_lock:  # two threads closing at once would each skip a volume
            self._close()

    def _close(self) -> None:
        if self._starter is not None and self._starter is not threading.current_thread():
            self._closed_meanwhile = True
        # A create under way on another thread ends first (the engine makes the container even
        # if its caller is gone), so there is a container to remove, found by its name.
        held = self._create_lock.acquire(timeout=CALL_TIMEOUT)
        try:
            container, self.container = self.container, None
            name, self._name = self._name, None
        finally:
            if held:
                self._create_lock.release()
        if container is not None or name is not None:
            try:
                if container is not None:
                    container.remove(force=True)
                else:
                    self.client.api.remove_container(name, force=True)
            except Exception:  # already gone (killed from outside, or engine down), or never made
                pass
        while self._volumes:
            try:
                self.client.api.remove_volume(self._volumes[0], force=True)
            except Exception:  # already gone, or the engine is down: the next start reaps it
                pass
            self._volumes.pop(0)
        _live.discard(self)

    # --- running things -----------------------------------------------------------------------

    def _api_call(self, fn, *args, **kwargs):
        """Call the engine, turning 'container gone' and 'engine gone' into our errors."""
        import docker
        import requests

        if self.container is None:
            raise SandboxError("the sandbox is not started")
        try:
            return fn(*args, **kwargs)
        except docker.errors.NotFound:
            raise SandboxGone("the sandbox container is gone (removed from outside?): restart the sandbox") from None
        except docker.errors.APIError as e:
            if "is not running" in str(e) or e.status_code == 409:
                raise SandboxGone("the sandbox container stopped (killed from outside?): restart the sandbox") from None
            raise SandboxError(f"Docker refused: {e.explanation or e}") from None
        except (requests.exceptions.RequestException, docker.errors.DockerException) as e:
            raise SandboxError(f"the Docker engine stopped answering ({short_error(e)}): {NO_ENGINE_FIX}") from None

    def _workdir(self, cwd: str | None) -> str:
        return posixpath.join(self.root, self.rel_path(cwd)) if cwd else self.root

    def _activated_env(self) -> dict[str, str]:
        """The environment the image's activation lines leave (what they change of the
        container's own), for every later command."""
        script = f"{self.activate}\n" + 'printf "\\n--dgym-env--\\n"; env -0'
        before = self.exec(["sh", "-c", 'printf "\\n--dgym-env--\\n"; env -0'], timeout=60)
        after = self.exec(["bash", "-c", script], timeout=120)
        if not after.ok:
            raise SandboxError(f"the image's environment did not activate ({self.activate.splitlines()[0]}...): "
                               f"{after.output.strip()[-300:]}")

        def parse(output: str) -> dict[str, str]:
            body = output.rsplit("--dgym-env--\n", 1)[-1]
            return dict(item.split("=", 1) for item in body.split("\0") if "=" in item)

        base = parse(before.output)
        return {k: v for k, v in parse(after.output).items()
                if base.get(k) != v and k not in ("PWD", "OLDPWD", "SHLVL", "_")}

    def exec(self, command, timeout: float = DEFAULT_TIMEOUT, cwd: str | None = None,
             output_cap: int = DEFAULT_OUTPUT_CAP, user: str | None = None) -> ExecResult:
        """user: run as another user of the image ("0": root, as SWE-bench's harness runs its eval
        script; every capability stays dropped)."""
        api = self.client.api
        argv = ["sh", "-c", command] if isinstance(command, str) else list(command)
        # coreutils timeout puts the command in its own process group and signals the whole
        # group; -k follows up with SIGKILL for whatever ignores SIGTERM.
        # stderr joins stdout in the container: one pipe keeps the order the program wrote in
        # (two streams reach the engine separately, so a crash's traceback could land mid-log).
        wrapped = ["sh", "-c", 'exec "$@" 2>&1', "sh", "timeout", "-s", "TERM", "-k", "2", f"{timeout:.3f}", *argv]
        environment = {**self.base_env, **self.program_env}
        exec_id = self._api_call(api.exec_create, self.container.id, wrapped, workdir=self._workdir(cwd),
                                 environment=environment or None, user=user or "")["Id"]
        started = time.monotonic()
        cap = OutputCap(output_cap)
        stream = ExecStream(self._api_call(api.exec_start, exec_id, socket=True))
        try:
            for chunk in stream.frames():
                cap.feed(chunk)
        finally:
            stream.close()
        code = self._api_call(api.exec_inspect, exec_id)["ExitCode"]
        timed_out = code in (124, 137) and time.monotonic() - started >= timeout * 0.95
        return ExecResult(exit_code=None if timed_out else code, output=cap.text(),
                          timed_out=timed_out, truncated=cap.dropped > 0)

    def spawn(self, argv, cwd=None, env=None, rows: int = 40, cols: int = 200) -> DockerChannel:
        api = self.client.api
        pidfile = f"/tmp/dgym-spawn-{uuid.uuid4().hex[:8]}.pid"
        # The run may have most of the container's processes, never all: RLIMIT_NPROC (the user's
        # processes, counted by the kernel) keeps room for the exec that kills it.
        nproc = max(16, self.pids - PIDS_HEADROOM)
        wrapper = ["sh", "-c", f'{set_size(rows, cols, self.python)}; echo $$ > {pidfile}; '
                               f'command -v prlimit >/dev/null && '
                               f'exec prlimit --nproc={nproc}:{nproc} -- "$@"; exec "$@"', "sh", *argv]
        environment = {"TERM": "xterm-256color", **self.base_env, **self.program_env, **(env or {})}
        exec_id = self._api_call(api.exec_create, self.container.id, wrapper, tty=True, stdin=True,
                                 workdir=self._workdir(cwd), environment=environment)["Id"]
        stream = ExecStream(self._api_call(api.exec_start, exec_id, socket=True, tty=True))
        # The engine's own resize, for the record (docker inspect, attach): the wrapper has set
        # the same size already, or will before the program starts, so the order cannot matter.
        try:
            api.exec_resize(exec_id, height=rows, width=cols)
        except Exception:  # the process may already have exited; the size then does not matter
            pass
        return DockerChannel(self, exec_id, stream, pidfile)

    # --- why a run ended or is stuck -----------------------------------------------------------

    def _oom_kills(self) -> int:
        """How many processes the kernel has killed in this container for memory (its cgroup's
        count: memory.events on cgroup v2, memory.oom_control on v1)."""
        out = self.exec("cat /sys/fs/cgroup/memory.events /sys/fs/cgroup/memory/memory.oom_control "
                        "2>/dev/null; true", timeout=30).output
        return sum(int(line.split()[1]) for line in out.splitlines()
                   if line.startswith("oom_kill ") and line.split()[1].isdigit())

    def explain_end(self, channel: "DockerChannel") -> str | None:
        kills = self._oom_kills()
        if kills > self._oom_seen:
            self._oom_seen = kills
            return (f"the program was killed for using more memory than the sandbox allows ({self.memory}): "
                    f"raise the limit with --memory, e.g. --memory {_double(self.memory)}")
        info = {"Running": True}
        for _ in range(25):  # the engine records the exit a moment after the stream ends
            info = self._api_call(self.client.api.exec_inspect, channel.exec_id)
            if not info.get("Running"):
                break
            time.sleep(0.02)
        code = info.get("ExitCode")
        if info.get("Running") or code is None:
            return None
        return describe_status(signum=code - 128) if code > 128 else describe_status(code)

    def explain_stuck(self, channel: "DockerChannel") -> str | None:
        out = self.exec(f'p=$(cat {channel.pidfile}) && exec {self.python} {BOX_DIR}/dgym_procs.py reading "$p"',
                        timeout=30).output
        return READING_TERMINAL if out.strip() else None

    # --- files --------------------------------------------------------------------------------

    def read_bytes(self, path: str) -> bytes:
        rel = self.rel_path(path)
        for _ in range(MAX_LINKS):
            try:
                stream, _ = self._api_call(self.container.get_archive, posixpath.join(self.root, rel))
            except SandboxGone:
                if self._running():
                    raise SandboxError(f"{path}: no such file") from None
                raise
            with tarfile.open(fileobj=io.BytesIO(b"".join(stream))) as tar:
                member = tar.next()
                if member is not None and member.issym():
                    # An in-repo symlink stays a link in the copy: follow it, inside the repo only.
                    target = posixpath.normpath(posixpath.join(posixpath.dirname(rel), member.linkname))
                    try:
                        rel = self.rel_path(target)
                    except SandboxError:
                        raise SandboxError(f"{path}: a symlink pointing outside the repository") from None
                    continue
                if member is None or not member.isfile():
                    raise SandboxError(f"{path}: not a file")
                return tar.extractfile(member).read()
        raise SandboxError(f"{path}: too many levels of symbolic links")

    def write_bytes(self, path: str, data: bytes) -> None:
        rel = self.rel_path(path)
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
            parts = rel.split("/")
            for i in range(1, len(parts)):
                d = tarfile.TarInfo("/".join(parts[:i]))
                d.type, d.mode, d.uid, d.gid = tarfile.DIRTYPE, 0o755, SANDBOX_UID, SANDBOX_UID
                tar.addfile(d)
            info = tarfile.TarInfo(rel)
            info.size, info.mode, info.uid, info.gid = len(data), 0o644, SANDBOX_UID, SANDBOX_UID
            info.mtime = int(time.time())
            tar.addfile(info, io.BytesIO(data))
        self._api_call(self._upload, self.root, buf.getvalue(), upload_timeout(len(data)))

    def list_dir(self, path: str = ".") -> list[DirEntry]:
        full = posixpath.join(self.root, self.rel_path(path))
        result = self.exec(["find", full, "-mindepth", "1", "-maxdepth", "1", "-printf", r"%y\t%f\0"],
                           timeout=30)
        if result.exit_code != 0:
            raise SandboxError(f"{path}: no such directory")
        entries = []
        for item in result.output.split("\0"):
            if "\t" in item:
                kind, name = item.split("\t", 1)
                entries.append(DirEntry(name, kind == "d"))
        return sorted((e for e in entries if e.name != ".git"), key=lambda e: (not e.is_dir, e.name))

    def alive(self) -> bool:
        if self.container is None or not self._running():
            return False
        # A container being killed closes our streams a moment before its state says so: give
        # it a short, event-driven chance to finish stopping (the engine's wait call).
        try:
            self.client.api.wait(self.container.id, timeout=0.3)
            return False
        except Exception:  # still running when the wait timed out
            return True

    def _running(self) -> bool:
        try:
            self.container.reload()
            return self.container.status == "running"
        except Exception:
            return False


@atexit.register
def _remove_live_containers() -> None:
    _exiting.set()
    for sandbox in list(_live):
        sandbox.close()
