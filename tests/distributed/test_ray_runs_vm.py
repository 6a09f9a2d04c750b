"""``run.py --ray`` on a local two-node cluster: smoke tasks reach their proven scores (those of the local run,
the session's ``smoke_results``) on both nodes; then a node killed mid-episode (its Ray processes, SIGKILL) loses
only that episode, which is retried on the head, and its VM dies with it. Results come back through Ray."""
import json
import threading
import time
from pathlib import Path

import pytest

from desktop_env.harness.config import RunConfig
from desktop_env.harness.suite import run_suite

pytestmark = [pytest.mark.vm, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
GUI_TASK = "8a1d4e22-7c3b-4f5a-b6d9-1e2f3a4b5c62"
#: The first run: two tasks on two environments, one on each node.
BOTH_NODES = {"os": [GUI_TASK, "3f6c2a10-5b7e-4c1d-9a8e-0d2b6c4e7f11"]}
#: The second run: the worker node is killed while its task's episode runs. Three tasks on three environments
#: fill the cluster's slots (the head has two), so one job runs on the worker: with two, Ray may place both
#: actors on the head and the worker runs nothing.
KILLED = {"os": [GUI_TASK, "3f6c2a10-5b7e-4c1d-9a8e-0d2b6c4e7f11"],
          "terminal": ["e05a7c36-1b9d-4f2e-8a4c-7d6b3e9f2a86"]}


def _statuses(model_dir: Path) -> dict[str, dict]:
    return {p.parent.name: json.loads(p.read_text()) for p in model_dir.rglob("status.json")}


def _qemu_pids(cluster, node: str | None = None) -> list[int]:
    """The VMs of the cluster (of node ``node`` only)."""
    return [pid for pid, argv in cluster.processes(node) if b"qemu-system" in argv[0]]


def _kill_worker_mid_episode(cluster, log: dict, stop: threading.Event) -> None:
    """Once the worker node's job has recorded its first observation (its episode runs), kill the node (its Ray
    processes; its VM is left to die of its owner's death)."""
    worker = cluster.node("worker1")
    while not stop.is_set():
        started = [p.parent.parent for p in worker.scratch.glob("desktop-env-ray-jobs-*/*/*/trial_1/step_0_*.png")]
        if started:
            log["vm_pids"] = _qemu_pids(cluster, "worker1")
            log["killed_in"] = started[0].name
            log["killed_pids"] = cluster.kill_node("worker1")
            return
        time.sleep(0.1)


def _run(cluster, tmp: Path, tasks: dict, killer=None) -> dict:
    index = tmp / "index.json"
    index.write_text(json.dumps(tasks))
    config = RunConfig(model="oracle", test_all_meta_path=index, test_config_base_dir=ROOT / "evaluation_examples",
                       result_dir=tmp / "driver", num_envs=sum(map(len, tasks.values())), ray=cluster.address,
                       retries=1)
    lines, log, stop = [], {}, threading.Event()
    thread = threading.Thread(target=killer, args=(cluster, log, stop), daemon=True) if killer else None
    if thread:
        thread.start()
    try:
        outcome = run_suite(config, report=lambda line, error=False: lines.append(line))
    finally:
        stop.set()
        if thread:
            thread.join(10)
    model_dir = tmp / "driver" / "pyautogui" / "screenshot" / "oracle"
    qemu_left = _qemu_pids(cluster)  # the run closed its VMs; the killed node's died with it
    statuses = _statuses(model_dir)  # the run's own (a rerun would run again what it left without a final status)
    rerun: list[str] = []  # the same run again: every task is done, nothing runs
    again = run_suite(config, report=lambda line, error=False: rerun.append(line))
    return {"outcome": outcome, "lines": lines, "kill": log, "statuses": statuses, "model_dir": model_dir,
            "qemu_left": qemu_left, "rerun": rerun, "rerun_code": again.exit_code}


@pytest.fixture(scope="module")
def runs(cluster, tmp_path_factory):
    both = _run(cluster, tmp_path_factory.mktemp("both_nodes"), BOTH_NODES)
    killed = _run(cluster, tmp_path_factory.mktemp("killed"), KILLED, _kill_worker_mid_episode)
    return {"both": both, "killed": killed}


def _proven(smoke_results) -> dict[str, float]:
    return {row.task_id: row.oracle.score for row in smoke_results.rows}


def test_both_nodes_run_smoke_tasks_to_their_proven_scores(cluster, runs, smoke_results):
    run, proven = runs["both"], _proven(smoke_results)
    statuses = run["statuses"]
    assert sorted(statuses) == sorted(BOTH_NODES["os"]), run["lines"]
    for task_id, status in statuses.items():
        assert status["status"] == "success" and status["score"] == proven[task_id] == 1.0, (task_id, status)
    nodes = {status["ray_node"] for status in statuses.values()}
    assert nodes == {cluster.node("head").node_id, cluster.node("worker1").node_id}, nodes
    assert run["outcome"].exit_code == 0, run["lines"]
    # the results came back through Ray into the driver's folder (the nodes wrote theirs in their own folders)
    for task_id in statuses:
        folder = next(run["model_dir"].rglob(task_id))
        assert (folder / "result.txt").read_text().strip() == "1.0"
        assert (folder / "traj.jsonl").is_file() and list(folder.glob("step_0_*.png")), sorted(folder.iterdir())
    assert not run["qemu_left"], f"VMs still running after the run: {run['qemu_left']}"
    assert run["rerun_code"] == 0 and any("2 already done, 0 to run" in line for line in run["rerun"]), run["rerun"]


def test_a_killed_node_loses_only_its_episode_and_it_is_retried_on_the_head(cluster, runs, smoke_results):
    run, proven = runs["killed"], _proven(smoke_results)
    kill = run["kill"]
    assert "killed_in" in kill, f"the worker node's episode was never seen running: {run['lines']}"
    assert kill["vm_pids"], "the worker node's job had no VM running when its node was killed"
    retried = run["statuses"][kill["killed_in"]]
    assert retried["ray_node"] == cluster.node("head").node_id and retried["status"] == "success", retried
    retry_lines = [line for line in run["lines"] if "retried on a new environment" in line]
    assert len(retry_lines) == 1 and kill["killed_in"] in retry_lines[0] and "infra_error" in retry_lines[0], \
        run["lines"]  # only that episode was lost
    assert {t: s["score"] for t, s in run["statuses"].items()} == {t: proven[t] for t in run["statuses"]}
    assert sorted(run["statuses"]) == sorted(t for ids in KILLED.values() for t in ids)
    assert run["outcome"].exit_code == 0, "\n".join(run["lines"])
    assert not run["qemu_left"], f"VMs still running after the run (the killed node's included): {run['qemu_left']}"


def _sigint_as_in_a_terminal() -> None:
    """A command started in the background by a non-interactive shell (as CI may start the tests) inherits SIGINT
    ignored, and Python then installs no KeyboardInterrupt handler: the driver gets SIGINT as run.py in a
    terminal does."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_ctrl_c_on_the_driver_stops_every_vm_of_the_run(cluster, runs, tmp_path):
    """run.py --ray in a process of its own, interrupted (SIGINT) while its VMs run on the cluster: it exits 130
    and leaves no VM running; the interrupted tasks have no status (a rerun runs them)."""
    import signal
    import subprocess
    import sys

    index = tmp_path / "index.json"
    index.write_text(json.dumps(KILLED))
    driver = subprocess.Popen([sys.executable, str(ROOT / "run.py"), "--ray", cluster.address, "--model", "oracle",
                               "--test_all_meta_path", str(index), "--result_dir", str(tmp_path / "driver"),
                               "--num_envs", "2"], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True, preexec_fn=_sigint_as_in_a_terminal)
    try:
        deadline = time.monotonic() + 600
        while not _qemu_pids(cluster) and time.monotonic() < deadline and driver.poll() is None:
            time.sleep(0.5)
        assert _qemu_pids(cluster), "no VM of the run started"
        driver.send_signal(signal.SIGINT)
        out, _ = driver.communicate(timeout=180)
    finally:
        if driver.poll() is None:
            driver.kill()
    assert driver.returncode == 130, out[-3000:]
    deadline = time.monotonic() + 60
    while _qemu_pids(cluster) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert not _qemu_pids(cluster), "VMs still running after the interrupted run"
    assert not [p for p in (tmp_path / "driver").rglob("status.json")], "an interrupted task has a status"
