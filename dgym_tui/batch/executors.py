"""Executors: where trials run. `make_executor(name, ...)` picks one by the name --executor gives.

The local executor keeps N worker processes and hands each one trial at a time. Processes rather
than threads: a trial holds a pdb, a sandbox and the model client, and a stuck or crashed one must
be killable without taking the batch down. The workers are reused (importing litellm costs
seconds) and forked from a forkserver that imported it once. A worker that dies mid-trial (a
crash, the OOM killer, a trial far past its time limit) turns its trial into an error, re-runnable
with --retry errors, and a fresh worker takes its place.

Cleaning up: a worker ignores Ctrl-C (the driver decides) and on SIGTERM unwinds its trial, which
removes its sandbox. cancel() sends SIGTERM, then SIGKILL to what is still there. Each worker
asks the kernel for SIGTERM when its parent goes, so a driver killed with SIGKILL takes its
workers (and their sandboxes) with it; a container left anyway carries its worker's pid as owner
and is reaped at the next start (sandbox/docker_sandbox.reap_orphans).
"""

from __future__ import annotations

import atexit
import importlib
import inspect
import multiprocessing
import multiprocessing.connection
import signal
import socket
import threading
import time
import traceback
from collections.abc import Callable, Iterable, Iterator
from datetime import datetime, timezone

from dgym_tui.batch.spec import TrialOutcome, TrialSpec

DEFAULT_TRIAL = "dgym_tui.batch.trial:run_trial"
# A trial still running this long after its own time limit is killed with its worker (its own
# timeout, enforced inside run_trial, covers the agent; scoring comes after it).
BACKSTOP_GRACE = 300.0
STOP_WAIT = 15.0  # seconds a worker gets to remove its sandbox after SIGTERM


def error_outcome(spec: TrialSpec, message: str, started: float | None = None, node: str | None = None) -> TrialOutcome:
    """A trial that failed on our side (the worker died, the trial raised): status error."""
    from dgym_tui.batch.result import TrialResult

    now = time.time()
    iso = lambda t: datetime.fromtimestamp(t, timezone.utc).isoformat(timespec="seconds")  # noqa: E731
    result = TrialResult(trial=spec.trial_id, task=spec.task.id, arm=spec.arm.name, attempt=spec.attempt,
                         model=spec.model, sandbox=spec.sandbox, node=node or socket.gethostname(), cost=0.0,
                         seconds=round(now - started, 3) if started else 0.0, started=iso(started or now),
                         finished=iso(now))
    return TrialOutcome(result=result.fail(message).to_dict())


def resolve_trial(ref: str | Callable) -> Callable:
    """A trial function from "module:function" (or the function itself)."""
    if callable(ref):
        return ref
    module, _, name = ref.partition(":")
    return getattr(importlib.import_module(module), name)


def call_trial(fn: Callable, spec: TrialSpec, on_event: Callable[[dict], None]) -> TrialOutcome:
    """Run one trial, giving it the event sink when it takes one (run_trial(spec, on_event=…))."""
    try:
        takes_events = "on_event" in inspect.signature(fn).parameters
    except (TypeError, ValueError):
        takes_events = False
    return fn(spec, on_event=on_event) if takes_events else fn(spec)


# --- the worker process ---------------------------------------------------------------------------

def _die_with_parent() -> None:
    """SIGTERM this process when its parent dies (Linux prctl PR_SET_PDEATHSIG)."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # 1 = PR_SET_PDEATHSIG
    except Exception:  # not Linux: an idle worker still ends at EOF on its pipe
        pass


def _terminated(signum, frame):
    raise SystemExit(128 + signum)


def _worker(conn, trial_ref) -> None:
    _die_with_parent()
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, _terminated)
    send_lock = threading.Lock()  # a trial may send events from its own threads

    def send(message) -> None:
        with send_lock:
            conn.send(message)

    try:
        fn = resolve_trial(trial_ref)
        while True:
            try:
                spec = conn.recv()
            except (EOFError, OSError):
                return
            if spec is None:
                return
            trial_id = spec.trial_id
            try:
                outcome = call_trial(fn, spec, lambda data, t=trial_id: send(("event", t, data)))
            except Exception as e:
                outcome = error_outcome(spec, f"the trial raised {type(e).__name__}: {e}\n{traceback.format_exc()}")
            send(("done", trial_id, outcome))
    finally:
        # multiprocessing ends a worker with os._exit, skipping atexit: run it, so the sandboxes'
        # own exit hooks remove whatever a trial interrupted by SIGTERM still held.
        atexit._run_exitfuncs()


class _Worker:
    def __init__(self, ctx, trial_ref):
        self.conn, child = ctx.Pipe()
        self.process = ctx.Process(target=_worker, args=(child, trial_ref), daemon=True, name="dgym-batch-worker")
        self.process.start()
        child.close()
        self.spec: TrialSpec | None = None
        self.started = 0.0

    @property
    def deadline(self) -> float | None:
        limit = self.spec and (self.spec.task.time_limit or self.spec.timeout)
        return self.started + limit + BACKSTOP_GRACE if limit else None

    def give(self, spec: TrialSpec) -> None:
        self.spec, self.started = spec, time.time()
        self.conn.send(spec)

    def stop(self, wait: float = STOP_WAIT) -> None:
        if self.process.is_alive():
            self.process.terminate()
            self.process.join(wait)
        if self.process.is_alive():
            self.process.kill()
            self.process.join(5)
        self.conn.close()


class LocalExecutor:
    """N trials at once on this machine, each in a reused worker process."""

    name = "local"

    def __init__(self, workers: int = 4, trial: str | Callable = DEFAULT_TRIAL, preload: Iterable[str] = ()):
        self.workers = max(1, int(workers))
        self.trial = trial
        self.preload = list(preload)
        self._pool: list[_Worker] = []
        self._cancelled = False
        self._lock = threading.Lock()

    def _context(self):
        if "forkserver" not in multiprocessing.get_all_start_methods():
            return multiprocessing.get_context("spawn")
        ctx = multiprocessing.get_context("forkserver")
        module = self.trial.partition(":")[0] if isinstance(self.trial, str) else getattr(self.trial, "__module__", "")
        # Only the first executor of a process chooses what the forkserver imports.
        ctx.set_forkserver_preload([m for m in [*self.preload, module] if m and m != "__main__"])
        return ctx

    def run(self, specs: Iterable[TrialSpec], on_event: Callable[[str, dict], None] | None = None
            ) -> Iterator[tuple[TrialSpec, TrialOutcome]]:
        """Specs are taken one at a time, only when a worker is free: a driver that stops feeding
        (the total cost reached) starts nothing more."""
        ctx = self._context()
        todo = iter(specs)
        exhausted = False
        emit = on_event or (lambda trial, data: None)
        try:
            while not self._cancelled:
                # Hand out work to idle workers, starting workers as needed.
                while not exhausted and not self._cancelled:
                    idle = next((w for w in self._pool if w.spec is None), None)
                    if idle is None and len(self._pool) >= self.workers:
                        break
                    spec = next(todo, None)
                    if spec is None:
                        exhausted = True
                        break
                    idle = self._hand(ctx, idle, spec)
                    if idle is None:
                        break
                    emit(spec.trial_id, {"kind": "started", "node": socket.gethostname(), "pid": idle.process.pid})
                busy = [w for w in self._pool if w.spec is not None]
                if not busy:
                    if exhausted:
                        return
                    continue
                deadlines = [w.deadline for w in busy if w.deadline]
                timeout = max(0.0, min(deadlines) - time.time()) if deadlines else None
                ready = multiprocessing.connection.wait([w.conn for w in busy] + [w.process.sentinel for w in busy],
                                                        timeout)
                for w in busy:
                    done = None
                    if w.conn in ready:
                        try:
                            while w.conn.poll():
                                kind, trial_id, payload = w.conn.recv()
                                if kind == "event":
                                    emit(trial_id, payload)
                                else:
                                    done = payload
                                    break
                        except (EOFError, OSError):
                            pass  # died: the sentinel says so below
                    if done is not None:
                        spec, w.spec = w.spec, None
                        yield spec, done
                    elif not w.process.is_alive() or (w.deadline and time.time() > w.deadline):
                        if self._cancelled:  # cancel() (another thread) stopped it and emptied the pool
                            return
                        spec = w.spec
                        overdue = w.process.is_alive()
                        w.stop(wait=2)
                        code = w.process.exitcode
                        with self._lock:
                            if w in self._pool:
                                self._pool.remove(w)
                        if self._cancelled:
                            return
                        why = (f"the trial ran {BACKSTOP_GRACE:.0f} s past its time limit; its worker was killed"
                               if overdue else f"its worker process died ({_exit_text(code)})")
                        yield spec, error_outcome(spec, why, started=w.started)
        finally:
            self._shutdown()

    def _hand(self, ctx, worker: _Worker | None, spec: TrialSpec) -> _Worker | None:
        """Give spec to worker, or to a new one when there is none or it died while idle (the
        OOM killer picks idle processes too). None: cancelled meanwhile."""
        for _ in range(2):
            if worker is not None and not worker.process.is_alive():
                self._retire(worker)
                worker = None
            if worker is None:
                with self._lock:
                    if self._cancelled:
                        return None
                    worker = _Worker(ctx, self.trial)
                    self._pool.append(worker)
            try:
                worker.give(spec)
                return worker
            except OSError:  # its pipe broke: it died between the check and the send
                self._retire(worker)
                worker = None
        raise RuntimeError("could not start a worker process for the batch")

    def _retire(self, worker: _Worker) -> None:
        worker.spec = None
        worker.stop(wait=1)
        with self._lock:
            if worker in self._pool:
                self._pool.remove(worker)

    def _shutdown(self) -> None:
        with self._lock:
            pool, self._pool = self._pool, []
        for w in pool:  # idle ones end at once on None; busy ones get SIGTERM
            if w.spec is None and w.process.is_alive():
                try:
                    w.conn.send(None)
                except OSError:
                    pass
        for w in pool:
            if w.spec is None:
                w.process.join(5)
        # SIGTERM to all at once, so their sandboxes are removed side by side.
        for w in pool:
            if w.process.is_alive():
                w.process.terminate()
        deadline = time.time() + STOP_WAIT
        for w in pool:
            w.process.join(max(0.1, deadline - time.time()))
            if w.process.is_alive():
                w.process.kill()
                w.process.join(5)
            w.conn.close()

    def cancel(self) -> None:
        """Stop: nothing more starts; running trials are ended (their sandboxes removed)."""
        self._cancelled = True
        self._shutdown()


def _exit_text(code: int | None) -> str:
    if code is None:
        return "still running"
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit status {code}"


# --- choosing one by name -------------------------------------------------------------------------

EXECUTORS: dict[str, str] = {
    "local": "dgym_tui.batch.executors:LocalExecutor",
    "ray": "dgym_tui.batch.ray_executor:RayExecutor",
}


def make_executor(name: str, workers: int = 4, **options):
    """The executor --executor NAME names, made with the worker count and its own options.
    ValueError (one line) for an unknown name or one that cannot be loaded here."""
    target = EXECUTORS.get(name)
    if target is None:
        raise ValueError(f"unknown executor {name!r} (executors: {', '.join(EXECUTORS)})")
    module, _, cls = target.partition(":")
    try:
        factory = getattr(importlib.import_module(module), cls)
    except (ImportError, AttributeError) as e:
        raise ValueError(f"executor {name!r} is not available here: {e}") from None
    return factory(workers=workers, **options)
