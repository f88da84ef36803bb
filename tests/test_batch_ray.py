"""`dgym-tui batch --executor ray` on a real multi-node Ray cluster on 127.0.0.1 (tests/ray_cluster.py:
a head with no CPUs, two worker nodes with 2 dgym_sandbox slots each), real Docker sandboxes, the
installed CLI as the driver and the stub OpenAI-compatible server as the model (it tells the
trials apart by the test name in each conversation, and records every request's headers).
The nodes' environment holds no provider key: the key reaches the agents only through the specs.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import require_docker
from ray_cluster import RAY_ENV, ray_cluster  # noqa: F401  (fixture)
from stub_llm_server import StubLLMServer

from dgym_tui.batch import run_dir as rd

KEY = "sk-dgym-ray-test-7f3a9c51"
FIXED = "def add(a, b):\n    return a + b\n"
pytestmark = pytest.mark.docker


def make_tasks(root: Path, names: list[str]) -> Path:
    """A folder of repos, one per name: add() subtracts; its test is named after the repo."""
    for name in names:
        repo = root / name
        repo.mkdir(parents=True)
        ident = name.replace("-", "_")
        (repo / "calc.py").write_text("def add(a, b):\n    return a - b\n")
        (repo / f"test_calc_{ident}.py").write_text(
            f"from calc import add\n\n\ndef test_add_{ident}():\n    assert add(2, 3) == 5\n")
    return root


class Model:
    """resolved-*: edit the fix in, then submit. env-*: run `env` in the sandbox (what a leaked
    key would show), then submit without a fix. `delay`: seconds before each answer."""

    def __init__(self, names: list[str], delay: float = 0.0):
        self.names, self.delay = names, delay
        self.calls: dict[str, int] = {}
        self.server = StubLLMServer()
        self.server.push(*[self.answer] * 2000)

    def answer(self, body: dict) -> dict:
        text = json.dumps(body.get("messages"))
        name = next(n for n in self.names if f"test_add_{n.replace('-', '_')}" in text)
        self.calls[name] = n = self.calls.get(name, 0) + 1
        reply = {"delay": self.delay}
        if n == 1 and name.startswith("resolved"):
            return {**reply, "tool_calls": [{"name": "edit", "arguments": {"path": "calc.py", "new_code": FIXED}}]}
        if n == 1 and name.startswith("env"):
            return {**reply, "tool_calls": [{"name": "bash", "arguments": {"command": "env"}}]}
        return {**reply, "tool_calls": [{"name": "submit", "arguments": {"message": "done"}}]}


def batch(tasks: Path, out: Path, url: str, *extra: str) -> list[str]:
    return ["dgym-tui", "batch", str(tasks), "--model", "openai/stub", "--api-base", url, "--out", str(out),
            "--sandbox", "docker", "--yes", "--max-steps", "4", *extra]


def run_batch(args: list[str], env: dict, out: Path, timeout: float = 300) -> subprocess.CompletedProcess:
    """The batch to its end; past `timeout`, a failure that says how far it got (its output, the
    trials with a result, and the requests the model had), not only that it ran long."""
    try:
        return subprocess.run(args, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as expired:
        # (what it printed comes as bytes here, even with text=True)
        output = [raw.decode(errors="replace") if isinstance(raw, bytes) else raw or ""
                  for raw in (expired.stdout, expired.stderr)]
        done = sorted(p.parent.name for p in out.glob("trials/*/result.json"))
        raise AssertionError(f"the batch ran past {timeout:.0f} s; trials with a result: {done}\n"
                             f"its output:\n{output[0][-3000:]}\n{output[1][-3000:]}") from None


def driver_env(address: str) -> dict:
    return {**os.environ, **RAY_ENV, "RAY_ADDRESS": address, "OPENAI_API_KEY": KEY}


def containers_of(client, pids: set[int]) -> list[str]:
    """Our containers on this host whose owner is one of these processes."""
    # The low-level list: one call, no inspect per container (others' containers come and go).
    return [c["Names"][0].lstrip("/") for c in client.api.containers(all=True, filters={"label": "dgym-tui.app"})
            if (c.get("Labels") or {}).get("dgym-tui.owner-host") == socket.gethostname()
            and int((c.get("Labels") or {}).get("dgym-tui.owner-pid") or 0) in pids]


def results_once(out: Path, trials: int) -> dict:
    """Every trial's result, each exactly once in results.jsonl and as trials/<id>/result.json."""
    lines = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines() if line.strip()]
    ids = [r["trial"] for r in lines]
    assert len(ids) == len(set(ids)) == trials, ids
    assert len(list(out.glob("trials/*/result.json"))) == trials
    return {r.trial: r.to_dict() for r in rd.load_results(out)}


def test_six_trials_spread_over_both_nodes_the_key_reaching_the_agents_only(ray_cluster, tmp_path):
    client = require_docker()
    names = ["resolved-1", "resolved-2", "resolved-3", "resolved-4", "env-5", "env-6"]
    tasks = make_tasks(tmp_path / "tasks", names)
    out = tmp_path / "run"
    model = Model(names)
    with model.server:
        r = run_batch(batch(tasks, out, model.server.url, "--executor", "ray"), driver_env(ray_cluster.address), out)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    results = results_once(out, 6)
    status = {t.split("__")[0]: res["status"] for t, res in results.items()}
    assert status == {**{f"resolved-{i}": "resolved" for i in range(1, 5)}, "env-5": "unresolved", "env-6": "unresolved"}
    # each result says which node ran it; both worker nodes ran some
    nodes = ray_cluster.node_ids()
    ran_on = {res["ray_node_id"] for res in results.values()}
    assert ran_on == set(nodes.values()), (ran_on, nodes)
    for res in results.values():
        assert res["node"].endswith("/" + res["ray_node_id"][:8])
    # the key reached the agents (every request carried it) and never a sandbox (`env` did not show it)
    requests = model.server.requests
    assert requests and all(req["headers"].get("Authorization") == f"Bearer {KEY}" for req in requests)
    env_outputs = [json.dumps(req["body"]["messages"]) for req in requests if "HOME=/home/dgym" in json.dumps(req["body"])]
    assert env_outputs, "the env trials' observations never reached the model"
    assert not any(KEY in text for text in env_outputs)
    # the nodes left no container behind
    assert containers_of(client, ray_cluster.all_pids()) == []


def test_doctor_checks_every_node(ray_cluster):
    require_docker()
    r = subprocess.run(["dgym-tui", "doctor", "--ray", ray_cluster.address], capture_output=True, text=True,
                       timeout=120, env=driver_env(ray_cluster.address))
    lines = [line for line in r.stdout.splitlines() if "ray " in line]
    assert lines[0].startswith("[ ok ] ray cluster:") and "4 dgym_sandbox slot(s)" in lines[0], r.stdout
    for node_id in ray_cluster.node_ids().values():
        line = next(line for line in lines if node_id[:8] in line)
        assert line.startswith("[ ok ]") and "image dgym-tui-sandbox:latest present" in line and "2 slots free" in line, line
    assert sum("runs no trials (head)" in line for line in lines) == 1


def test_without_ray_the_executor_is_a_one_line_error(tmp_path):
    """A Python where `import ray` fails (a sitecustomize blocks it): one line naming the extra."""
    blocker = tmp_path / "no_ray"
    blocker.mkdir()
    (blocker / "sitecustomize.py").write_text(
        "import sys\n\n\nclass _NoRay:\n    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'ray' or name.startswith('ray.'):\n"
        "            raise ModuleNotFoundError(\"No module named 'ray'\")\n\n\n"
        "sys.meta_path.insert(0, _NoRay())\n")
    tasks = make_tasks(tmp_path / "tasks", ["resolved-1"])
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"name": "s", "steps": []}))
    env = {**os.environ, "PYTHONPATH": str(blocker)}
    assert subprocess.run([sys.executable, "-c", "import ray"], env=env, capture_output=True).returncode != 0
    r = subprocess.run(["dgym-tui", "batch", str(tasks), "--model", f"scripted:{script}", "--out", str(tmp_path / "run"),
                        "--executor", "ray"], env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 2, r.stdout + r.stderr
    assert r.stderr.count("\n") == 1 and "pip install 'dgym-tui[ray]'" in r.stderr, r.stderr
    assert not (tmp_path / "run" / "trials").exists()


def test_a_lost_node_costs_only_its_running_trials(ray_cluster, tmp_path):
    """Kill one worker node's raylet while its trials run: every trial's result still comes once,
    the same statuses as the same batch run locally, and no container left on the engine (the
    killed node's are reaped by the surviving one)."""
    client = require_docker()
    names = ["resolved-1", "resolved-2", "resolved-3", "giveup-4"]
    tasks = make_tasks(tmp_path / "tasks", names)
    model = Model(names, delay=0.5)  # trials long enough to be caught running
    seen: set[int] = set()
    with model.server:
        out = tmp_path / "ray-run"
        driver = subprocess.Popen(batch(tasks, out, model.server.url, "--executor", "ray"),
                                  env=driver_env(ray_cluster.address), stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, text=True)
        try:
            # wait until a trial's sandbox runs on w1, then kill w1's raylet
            deadline = time.time() + 180
            victims: list[str] = []
            while time.time() < deadline and driver.poll() is None and not victims:
                w1 = ray_cluster.node_pids("w1")
                seen |= ray_cluster.all_pids()
                victims = containers_of(client, w1)
                time.sleep(0.2)
            assert victims, "no trial's sandbox ever ran on w1"
            seen |= ray_cluster.all_pids()
            killed_ids = ray_cluster.node_ids()
            ray_cluster.kill_node("w1")
            while driver.poll() is None:
                seen |= ray_cluster.all_pids()
                time.sleep(0.5)
            output = driver.stdout.read()
        finally:
            if driver.poll() is None:
                driver.kill()
        assert driver.returncode == 0, output[-4000:]
        ray_results = results_once(out, 4)
        assert {res["ray_node_id"] for res in ray_results.values()} <= set(killed_ids.values())
        # the same batch, run locally
        model.calls.clear()
        local_out = tmp_path / "local-run"
        local = run_batch(batch(tasks, local_out, model.server.url, "--executor", "local", "--workers", "4"),
                          driver_env(ray_cluster.address), local_out)
        assert local.returncode == 0, local.stdout[-3000:] + local.stderr[-3000:]
    local_results = results_once(local_out, 4)
    status = lambda results: sorted((t, r["status"]) for t, r in results.items())  # noqa: E731
    assert status(ray_results) == status(local_results)
    assert sum(r["status"] == "resolved" for r in ray_results.values()) == 3
    # the killed node's containers were reaped by the surviving node; none of the cluster's left
    assert set(victims).isdisjoint(c["Names"][0].lstrip("/") for c in client.api.containers(all=True))
    assert containers_of(client, seen) == []
    # the cluster whole again for whatever runs next
    ray_cluster.add_node("w1")
    ray_cluster.wait_nodes(3)


def test_an_arm_with_a_seeker_runs_on_the_cluster(ray_cluster, tmp_path):
    """Two roles travel with the trial: the node builds both models and the seeker's answer
    reaches the fixer there (scripted models, local sandboxes: the cluster is what is tested)."""
    from batch_fixtures import folder_of_repos, write_script
    from test_seeker import CALC_FIXER, CALC_SEEKER

    tasks = folder_of_repos(tmp_path / "tasks", ("calc_a",))
    out = tmp_path / "run"
    args = ["dgym-tui", "batch", str(tasks), "--model", write_script(tmp_path / "fixer.json", CALC_FIXER),
            "--seeker", write_script(tmp_path / "seeker.json", CALC_SEEKER), "--arm", "pair=view,edit,eval+seeker",
            "--out", str(out), "--sandbox", "local", "--yes", "--executor", "ray"]
    r = run_batch(args, driver_env(ray_cluster.address), out)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    result = results_once(out, 1)["calc_a__pair__1"]
    assert result["status"] == "resolved" and result["ray_node_id"] in set(ray_cluster.node_ids().values())
    assert result["roles"]["seeker"]["grounded"] == 1 and result["roles"]["seeker"]["touched_named_place"] is True
