"""RayExecutor: each trial a Ray task on whichever node has a free `dgym_sandbox` slot.

    driver (this process) ── ray.put(the task's repo, packed) once per task ──> object store
        └─ trial task: num_cpus=0, resources={"dgym_sandbox": 1} ──> a node: run_trial(spec)
              its sandbox on that node's own engine; returns the outcome (session, patch, result)
        <── (spec, outcome) as they finish; only the driver writes RUN_DIR

A node says how many sandboxes it holds with `ray start … --resources '{"dgym_sandbox": N}'`.
The repo travels through the object store (no shared filesystem needed) unless `shared_repos`
says every node sees the tasks' paths. spec.env (API keys) travels in the task's arguments and
reaches the trial's agent only: run_trial never gives it to a sandbox.

A lost node (its raylet killed, the machine gone) costs only the trials running there: Ray runs
them again elsewhere (max_retries), then this executor submits them once more itself; a result
is yielded once per trial, whichever attempt gave it. The trials killed with their node leave
their containers behind (their owner process died with the raylet): after a node loss, or a
cancel, every live node runs sandbox/docker_sandbox.reap_orphans on its own engine, which removes
the containers of owners gone on that host. A machine that is gone entirely takes its containers
with it; one whose raylet alone died reaps them at its next sandbox start.

Ray is an optional extra: without it, making this executor is a one-line ValueError naming it.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import socket
import time
from collections.abc import Callable, Iterable, Iterator

from dgym_tui.batch.executors import BACKSTOP_GRACE, DEFAULT_TRIAL, call_trial, error_outcome, resolve_trial
from dgym_tui.batch.spec import TrialOutcome, TrialSpec

EXTRA = "pip install 'dgym-tui[ray]'"
RESOURCE = "dgym_sandbox"
RAY_RETRIES = 2        # Ray's own re-runs of a trial whose worker or node died
DRIVER_RETRIES = 1     # then ours: the trial submitted once more before it is an error
POLL = 0.5             # seconds between looks at events and cancellation while trials run
NO_SLOTS_WAIT = 120.0  # seconds with no node offering a slot before the waiting trials are errors
CANCEL_GRACE = 10.0    # seconds a cancelled trial gets to remove its sandbox before its worker is killed
log = logging.getLogger(__name__)


def import_ray():
    """The ray module, or a one-line ValueError naming the extra (make_executor shows it)."""
    try:
        import ray
    except ImportError:
        raise ValueError(f"--executor ray needs Ray, an optional extra: {EXTRA}") from None
    return ray


def connect(address: str | None = None):
    """ray, connected to the cluster at `address` (else RAY_ADDRESS, else auto). Returns (ray,
    whether this call connected, so the caller disconnects only what it connected)."""
    ray = import_ray()
    if ray.is_initialized():
        return ray, False
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    address = address or os.environ.get("RAY_ADDRESS") or "auto"
    try:
        ray.init(address=address, log_to_driver=False, logging_level=logging.ERROR, configure_logging=False)
    except Exception as e:
        raise ValueError(f"no Ray cluster at {address}: {' '.join(str(e).split())[:200]} "
                         "(start one with `ray start --head`, or give --ray-address)") from None
    _quiet_cluster_errors(ray)
    return ray, True


def _quiet_cluster_errors(ray) -> None:
    """Ray prints the cluster's errors (a raylet died, a node marked dead) straight to the
    driver's stdout, across the progress table: send them to the log instead. Private API,
    hence guarded: where it changed, Ray's printing stays as it is."""
    worker = getattr(getattr(ray, "_private", None), "worker", None)
    if worker is not None and hasattr(worker, "print_to_stdstream"):
        worker.print_to_stdstream = lambda data, *a, **k: log.info("ray: %s", data.get("lines", data))


def provider_keys() -> dict[str, str]:
    """The model providers' keys set in this process's environment (doctor's list)."""
    from dgym_tui.config import PROVIDER_KEYS

    return {k: os.environ[k] for k in PROVIDER_KEYS if os.environ.get(k)}


def node_label(ray) -> tuple[str, str]:
    """(label for result.json's `node`, the Ray node id) of the node running this code."""
    node_id = ray.get_runtime_context().get_node_id()
    try:
        ip = ray.util.get_node_ip_address()
    except Exception:
        ip = socket.gethostname()
    return f"{ip}/{node_id[:8]}", node_id


# --- what runs on a node --------------------------------------------------------------------------

def _trial_on_node(spec: TrialSpec, repo_blob: bytes | None, trial_ref, events) -> TrialOutcome:
    """A Ray task: one trial on this node, its sandbox on this node's engine."""
    import ray

    from dgym_tui.batch.trial import NODE_ENV

    label, node_id = node_label(ray)
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # litellm must not fetch prices at import
    if repo_blob is not None:
        spec.repo_blob = repo_blob
    spec.env = {**spec.env, NODE_ENV: label}

    def emit(data: dict) -> None:
        if events is not None:
            events.put.remote(spec.trial_id, data)  # fire and forget: progress, never the result

    emit({"kind": "started", "node": label, "pid": os.getpid()})
    try:
        outcome = call_trial(resolve_trial(trial_ref), spec, emit)
    except Exception as e:  # run_trial never raises; another trial function might
        outcome = error_outcome(spec, f"the trial raised {type(e).__name__}: {e}", node=label)
    outcome.result["node"] = label
    outcome.result["ray_node_id"] = node_id
    return outcome


def _reap_here() -> dict:
    """On one node: remove the containers (and volumes) whose owner process is gone."""
    import ray

    label, _ = node_label(ray)
    try:
        from dgym_tui.sandbox.docker_sandbox import connect as docker_connect, reap_orphans

        client = docker_connect(timeout=5)
    except Exception as e:  # no engine on this node: nothing of ours to reap there
        return {"node": label, "reaped": [], "note": str(e).split(":")[0]}
    reaped = reap_orphans(client)
    return {"node": label, "reaped": reaped}


def _probe_here(image: str) -> dict:
    """On one node: what `doctor --ray` reports (dgym-tui's version, the engine, the image)."""
    import ray

    import dgym_tui

    label, node_id = node_label(ray)
    info = {"node": label, "node_id": node_id, "version": getattr(dgym_tui, "__version__", "?"), "engine": None}
    try:
        from dgym_tui.sandbox.docker_sandbox import connect as docker_connect

        client = docker_connect(timeout=5)
    except Exception as e:
        from dgym_tui.sandbox.bwrap_sandbox import bwrap_problem

        info["engine_error"] = str(e).split(" (")[0]
        info["bwrap"] = bwrap_problem() or "ok"
        return info
    info["engine"] = client.version().get("Version", "?")
    try:
        client.images.get(image)
        info["image"] = True
    except Exception:
        info["image"] = False
    return info


def probe_nodes(address: str | None, image: str, timeout: float = 60) -> list[dict]:
    """Every live node of the cluster: its sandbox slots (total, free) and, for a node with
    slots, what _probe_here finds there. ValueError: no Ray, or no cluster at the address."""
    ray, connected = connect(address)
    try:
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        try:  # private API (no public per-node view in 2.60): without it, free is unknown
            from ray._private.state import available_resources_per_node

            free = available_resources_per_node()
        except Exception:
            free = {}
        probe = ray.remote(_probe_here)
        nodes = []
        for n in ray.nodes():
            if not n.get("Alive"):
                continue
            node_id = n["NodeID"]
            slots = int(n.get("Resources", {}).get(RESOURCE, 0))
            entry = {"node_id": node_id, "node": f"{n.get('NodeManagerAddress', '?')}/{node_id[:8]}",
                     "slots": slots, "free": (free.get(node_id) or {}).get(RESOURCE) if free else None,
                     "head": "node:__internal_head__" in n.get("Resources", {})}
            if slots:
                entry["ref"] = probe.options(num_cpus=0, max_retries=0, scheduling_strategy=
                                             NodeAffinitySchedulingStrategy(node_id, soft=False)).remote(image)
            nodes.append(entry)
        for entry in nodes:
            ref = entry.pop("ref", None)
            if ref is not None:
                try:
                    entry.update(ray.get(ref, timeout=timeout))
                except Exception as e:
                    entry["error"] = _one_line(e)
        return nodes
    finally:
        if connected:
            ray.shutdown()


class _Events:
    """A tiny actor the trials tell "started on node X" (and any progress) to; the driver drains it."""

    def __init__(self):
        self.items: list = []

    def put(self, trial_id: str, data: dict) -> None:
        self.items.append((trial_id, data))

    def drain(self) -> list:
        items, self.items = self.items, []
        return items


# --- the driver's side ----------------------------------------------------------------------------

class RayExecutor:
    """Trials as Ray tasks on a cluster (see the module's docstring)."""

    name = "ray"

    def __init__(self, workers: int = 4, address: str | None = None, trial: str | Callable = DEFAULT_TRIAL,
                 shared_repos: bool = False, ray_retries: int = RAY_RETRIES, retries: int = DRIVER_RETRIES,
                 **_ignored):
        # --workers does not apply: each node's dgym_sandbox count says how many trials it runs.
        # Connected here, so a missing extra, no cluster or a cluster without slots is a one-line
        # error before the batch starts.
        self._ray, self._connected = connect(address)
        if not self._ray.cluster_resources().get(RESOURCE):
            if self._connected:
                self._ray.shutdown()
            raise ValueError(f"the Ray cluster has no {RESOURCE} slots: start each Docker host's node with "
                             f"ray start --address ADDR --resources '{{\"{RESOURCE}\": N}}'")
        self.address = address
        self.trial = trial
        self.shared_repos = shared_repos
        self.ray_retries = ray_retries
        self.retries = retries
        self._cancelled = False
        self._running: dict = {}   # ObjectRef -> (spec, started, attempt)
        self.reaped: list[dict] = []  # what the last clean-up removed, per node (for tests and logs)
        self.nodes_lost: set[str] = set()
        self._needs_reap = False
        self._overdue: set = set()  # trials cancelled for running far past their time limit

    # The driver may stop feeding (total cost reached), so specs are pulled only as slots free.
    def run(self, specs: Iterable[TrialSpec], on_event: Callable[[str, dict], None] | None = None
            ) -> Iterator[tuple[TrialSpec, TrialOutcome]]:
        ray, connected = self._ray, self._connected
        self._connected = False  # one run per connection: the next run connects again
        if not ray.is_initialized():
            ray, connected = connect(self.address)
        emit = on_event or (lambda trial, data: None)
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        remote = ray.remote(_trial_on_node)
        # The events actor lives on the driver's node: it goes when the driver goes, not before.
        events = ray.remote(_Events).options(num_cpus=0, scheduling_strategy=NodeAffinitySchedulingStrategy(
            ray.get_runtime_context().get_node_id(), soft=True)).remote()
        blobs: dict[str, object] = {}   # task id -> ObjectRef of its packed repo (one put per task)
        nodes_seen = self._alive_nodes(ray)
        todo = iter(specs)
        exhausted = False
        no_slots_since: float | None = None

        def submit(spec: TrialSpec, attempt: int) -> None:
            blob = None
            if not self.shared_repos:
                if spec.task.id not in blobs:
                    from dgym_tui.batch.trial import pack_task

                    blobs[spec.task.id] = ray.put(spec.repo_blob if spec.repo_blob is not None
                                                  else pack_task(spec.task))
                blob = blobs[spec.task.id]
            # The blob goes by reference; the driver's provider keys go along for the agent (the
            # nodes do not have this process's environment).
            shipped = dataclasses.replace(spec, repo_blob=None, env={**provider_keys(), **spec.env})
            ref = remote.options(num_cpus=0, resources={RESOURCE: 1}, max_retries=self.ray_retries,
                                 retry_exceptions=False, scheduling_strategy="SPREAD",
                                 name=f"dgym-trial:{spec.trial_id}").remote(shipped, blob, self.trial, events)
            self._running[ref] = (spec, time.time(), attempt)

        try:
            while not self._cancelled:
                total = int(ray.cluster_resources().get(RESOURCE, 0))
                # The cluster's sandbox slots, plus a few queued so a slot that frees is taken
                # without a round trip to the driver.
                slots = total + max(2, total // 4) if total else 0
                while not exhausted and len(self._running) < slots:
                    spec = next(todo, None)
                    if spec is None:
                        exhausted = True
                        break
                    try:
                        submit(spec, 1)
                    except Exception as e:  # the repo could not be packed: this trial's error
                        yield spec, error_outcome(spec, f"cannot send the task's repo: {type(e).__name__}: {e}")
                if not self._running and exhausted:
                    return
                if not total:  # every node with slots gone (or not back yet): wait, then give up
                    no_slots_since = no_slots_since or time.time()
                    if time.time() - no_slots_since > NO_SLOTS_WAIT:
                        why = f"no node of the cluster offered a {RESOURCE} slot for {NO_SLOTS_WAIT:.0f} s"
                        for ref, (spec, started, _) in list(self._running.items()):
                            ray.cancel(ref, force=True)
                            del self._running[ref]
                            yield spec, error_outcome(spec, why, started=started)
                        for spec in todo:
                            yield spec, error_outcome(spec, why)
                        return
                    if not self._running:
                        time.sleep(POLL)
                        continue
                else:
                    no_slots_since = None
                done, _ = ray.wait(list(self._running), num_returns=1, timeout=POLL)
                self._forward_events(ray, events, emit)
                for ref in done:
                    spec, started, attempt = self._running.pop(ref)
                    try:
                        outcome = ray.get(ref)
                    except Exception as e:  # the task failed after Ray's retries: a lost node, most often
                        if self._cancelled:
                            return
                        self.nodes_lost |= nodes_seen - self._alive_nodes(ray)
                        if ref in self._overdue:
                            self._overdue.discard(ref)
                            outcome = error_outcome(spec, f"the trial ran {BACKSTOP_GRACE:.0f} s past its time "
                                                    "limit; its worker was killed", started=started)
                        elif attempt <= self.retries:
                            emit(spec.trial_id, {"kind": "retry", "reason": _one_line(e)})
                            submit(spec, attempt + 1)
                            continue
                        else:
                            outcome = error_outcome(spec, f"the trial failed on the cluster: {_one_line(e)}",
                                                started=started)
                    yield spec, outcome
                self._stop_overdue(ray)
        finally:
            self._finish(ray, events, nodes_seen, connected)

    @staticmethod
    def _alive_nodes(ray) -> set[str]:
        return {n["NodeID"] for n in ray.nodes() if n.get("Alive")}

    def _forward_events(self, ray, events, emit) -> None:
        try:
            items = ray.get(events.drain.remote(), timeout=5)
        except Exception:  # the events actor's node is gone: progress only, the results are safe
            return
        for trial_id, data in items:
            emit(trial_id, data)

    def _stop_overdue(self, ray) -> None:
        """A trial far past its own time limit (its timeout is enforced inside run_trial; this is
        the backstop) is cancelled; its worker is killed, its container reaped after."""
        now = time.time()
        for ref, (spec, started, _) in list(self._running.items()):
            limit = spec.task.time_limit or spec.timeout
            if limit and now > started + limit + BACKSTOP_GRACE and ref not in self._overdue:
                self._overdue.add(ref)
                ray.cancel(ref, force=True)
                self._needs_reap = True

    def _finish(self, ray, events, nodes_seen: set[str], connected: bool) -> None:
        if self._running:  # cancelled, or the caller stopped early: end what still runs
            self._stop_running(ray)
        alive = self._alive_nodes(ray)
        self.nodes_lost |= nodes_seen - alive
        if self.nodes_lost or self._cancelled or self._needs_reap:
            self.reaped = self._reap(ray, alive)
        try:
            ray.kill(events)
        except Exception:
            pass
        if connected:
            ray.shutdown()

    def _stop_running(self, ray) -> None:
        """Cancel what runs: first an interrupt (the trial unwinds and removes its sandbox), then
        its worker killed; what is still left is reaped by _reap."""
        refs = list(self._running)
        for ref in refs:
            ray.cancel(ref, force=False)
        deadline = time.time() + CANCEL_GRACE
        pending = refs
        while pending and time.time() < deadline:
            _, pending = ray.wait(pending, num_returns=len(pending), timeout=0.5)
        for ref in pending:
            try:
                ray.cancel(ref, force=True)
            except Exception:
                pass
        self._running.clear()
        self._needs_reap = True

    def _reap(self, ray, alive: set[str]) -> list[dict]:
        """reap_orphans on every live node that runs sandboxes, each on its own engine. Twice, a
        moment apart: a worker killed with its raylet may take a moment to be gone."""
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        reap = ray.remote(_reap_here)
        hosts = [n["NodeID"] for n in ray.nodes() if n.get("Alive") and n["NodeID"] in alive
                 and n.get("Resources", {}).get(RESOURCE)]
        reports: list[dict] = []
        for round_ in range(2):
            if round_:
                time.sleep(2)
            refs = [reap.options(num_cpus=0, max_retries=0, scheduling_strategy=NodeAffinitySchedulingStrategy(
                node_id, soft=False)).remote() for node_id in hosts]
            for ref in refs:
                try:
                    reports.append(ray.get(ref, timeout=60))
                except Exception as e:  # that node went too: nothing more to do from here
                    reports.append({"node": "?", "reaped": [], "note": _one_line(e)})
        return reports

    def cancel(self) -> None:
        """Nothing more starts; run() ends its running trials and reaps what they leave."""
        self._cancelled = True


def _one_line(e: BaseException) -> str:
    text = " ".join(str(e).split()) or type(e).__name__
    return f"{type(e).__name__}: {text[:300]}"
