"""Shared helpers for the UI tests: a scripted session (for pure-widget tests) and pilot helpers.

FakeSession follows the Session contract (events, send, breakpoints, sandbox...) without a pdb:
it emits the same events a real session would, synchronously, so layout and widget tests are
fast and deterministic. Integration tests use the real Session.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from dgym_tui.core import events as ev
from dgym_tui.core.events import EventBus

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "shopcart"


class FakeEntry:
    def __init__(self, name: str, is_dir: bool):
        self.name, self.is_dir = name, is_dir


class FakeResult:
    def __init__(self, output: str = "", status=None):
        self.output, self.status, self.exit_code, self.exited = output, status, None, False
        self.error = next((ln for ln in output.splitlines() if ln.startswith("***")), None)


class FakeSandbox:
    kind = "local"
    isolated = False
    description = "local (NOT isolated)"

    def __init__(self, root: Path):
        self.root = str(root)
        self.baseline = "base"
        self.changed: list[str] = []
        self.listed: list[str] = []

    def list_dir(self, path: str = "."):
        self.listed.append(path)
        with os.scandir(Path(self.root) / path) as it:
            return [FakeEntry(e.name, e.is_dir()) for e in it]

    def read_text(self, path: str) -> str:
        return (Path(self.root) / path).read_text()

    def changed_files(self):
        return list(self.changed)

    def exec(self, command, timeout=60, cwd=None):
        files = sorted(str(p.relative_to(self.root)) for p in Path(self.root).rglob("*")
                       if p.is_file() and "__pycache__" not in p.parts)

        class R:
            ok, exit_code, output = True, 0, "\n".join(files) + "\n"
        return R()


class FakeSession:
    """Emits scripted events; `send` understands just enough pdb for the UI tests."""

    def __init__(self, repo: Path = EXAMPLE, start_delay: float = 0.0):
        self.repo = str(repo)
        self.repo_name = Path(repo).name
        self.events = EventBus()
        self.sandbox = None
        self.debugger = None
        self.state = "starting"
        self.entrypoint_label = "python main.py"
        self.start_delay = start_delay
        self.sent: list[tuple[str, str]] = []
        self.bps: list[dict] = []
        self.closed = False
        self.interrupted = 0
        self.status = None

    def start(self):
        self.events.emit(ev.PROGRESS, message="starting the local sandbox, copying the repo…", step="sandbox")
        time.sleep(self.start_delay)
        self.sandbox = FakeSandbox(Path(self.repo))
        self.events.emit(ev.SANDBOX_READY, kind="local", description="local (NOT isolated)", isolated=False,
                         root="/tmp/x", skipped=[], warning=None)
        self.debugger = object()
        self.events.emit(ev.PROGRAM_START, ev.HUMAN, argv=["python", "main.py"], entrypoint="python main.py",
                         restart=False, reason="")
        self._stop("main.py", 1, "<module>", reason="start")

    def _stop(self, file, line, function, reason="step", frames=None, frame_index=None, locals_=None):
        stack = frames or [{"file": file, "line": line, "function": function}]
        self.status = {"reason": reason, "file": file, "line": line, "function": function, "stack": stack,
                       "frame_index": len(stack) - 1 if frame_index is None else frame_index,
                       "locals": locals_ or {}, "exception": None, "breakpoints": self.bps}
        self.state = "stopped"
        self.events.emit(ev.STOP, ev.HUMAN, **self.status)

    def send(self, command: str, actor: str = "human"):
        self.sent.append((command, actor))
        self.events.emit(ev.PDB_INPUT, actor, command=command)
        word = command.split(" ", 1)[0]
        if word in ("p", "pp"):
            name = command.split(" ", 1)[1]
            value = (self.status or {}).get("locals", {}).get(name, f"*** NameError: name '{name}' is not defined")
            out = value + "\n"
        elif word in ("c", "continue"):
            frames = [{"file": "main.py", "line": 72, "function": "main"},
                      {"file": "shopcart/cart.py", "line": 40, "function": "add"}]
            self._stop("shopcart/cart.py", 40, "add", "breakpoint", frames,
                       locals_={"self": "<Cart Alice>", "qty": "2", "product": "Product(sku='HOO-01')"})
            out = "> shopcart/cart.py(40)add()\n"
        elif word in ("up", "down", "u", "d"):
            st = dict(self.status)
            idx = st["frame_index"] + (-1 if word.startswith("u") else 1) * int((command.split() + ["1"])[1])
            idx = max(0, min(len(st["stack"]) - 1, idx))
            f = st["stack"][idx]
            self._stop(f["file"], f["line"], f["function"], "command", st["stack"], idx, st["locals"])
            out = ""
        elif word in ("n", "next", "s", "step"):
            st = self.status
            self._stop(st["file"], st["line"] + 1, st["function"], "step", st["stack"], st["frame_index"],
                       st["locals"])
            out = ""
        else:
            out = f"*** unknown command {command}\n"
        if out:
            self.events.emit(ev.PDB_OUTPUT, actor, text=out, truncated=False)
        return FakeResult(out, self.status)

    def interrupt(self):
        self.interrupted += 1

    def toggle_breakpoint(self, file, line, actor="human", cond=None):
        existing = [b for b in self.bps if (b["file"], b["line"]) == (file, line)]
        if existing and cond is None:
            self.bps.remove(existing[0])
            message = f"Deleted breakpoint at {file}:{line}"
        else:
            return self.set_breakpoint(file, line, cond=cond, actor=actor)
        self.events.emit(ev.BREAKPOINTS, actor, breakpoints=list(self.bps))
        return message

    def set_breakpoint(self, file, line, cond=None, temporary=False, actor="human"):
        self.bps = [b for b in self.bps if (b["file"], b["line"]) != (file, line)]
        self.bps.append({"number": len(self.bps) + 1, "file": file, "line": line, "cond": cond, "enabled": True,
                         "temporary": temporary, "ignore": 0, "hits": 0, "actor": actor})
        self.events.emit(ev.BREAKPOINTS, actor, breakpoints=list(self.bps))
        return f"Breakpoint {len(self.bps)} at {file}:{line}"

    def clear_breakpoint(self, file, line, actor="human"):
        return self.toggle_breakpoint(file, line, actor)

    def run_to(self, file, line, actor="human"):
        self.sent.append((f"run_to {file}:{line}", actor))
        return FakeResult("")

    def restart(self, actor="human"):
        self.sent.append(("restart", actor))

    def set_entrypoint(self, spec, actor="human"):
        self.entrypoint_label = spec
        self.sent.append((f"entrypoint {spec}", actor))

    def run_tests(self, args=""):
        self.events.emit(ev.TESTS, passed=10, failed=2, errors=0, failing=["tests/test_cart.py::test_a",
                                                                         "tests/test_cart.py::test_b"], output="")

    def close(self):
        self.closed = True


async def wait_for(pilot, condition, timeout: float = 20.0, what: str = "condition"):
    """Poll a condition while the app runs (bounded); fail with `what` on timeout."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await pilot.pause(0.05)
