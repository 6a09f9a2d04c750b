"""``run.py --ray`` on a local two-node cluster: smoke tasks reach their proven scores on both nodes, and a node
killed mid-episode (its raylet, SIGKILL) loses only that episode, which is retried on the head; the run ends with
the scores of the local run, the results come back through Ray, and the killed node's VM dies with it."""
import json
import threading
import time
from pathlib import Path

import pytest

from desktop_env.distributed.local import tagged
from desktop_env.harness.config import RunConfig
from desktop_env.harness.suite import run_suite

pytestmark = [pytest.mark.vm, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
#: Four smoke tasks: the worker node (one slot) runs one, then is killed while it runs its second.
TASKS = {"os": ["8a1d4e22-7c3b-4f5a-b6d9-1e2f3a4b5c62", "3f6c2a10-5b7e-4c1d-9a8e-0d2b6c4e7f11"],
         "sqlite3": ["9b7c3e21-4d5a-4f68-8e2b-1a9c6d3f5e42"], "terminal": ["e05a7c36-1b9d-4f2e-8a4c-7d6b3e9f2a86"]}


def _statuses(model_dir: Path) -> dict[str, dict]:
    return {p.parent.name: json.loads(p.read_text()) for p in model_dir.rglob("status.json")}


def _qemu_pids(tag: str) -> list[int]:
    out = []
    for pid in tagged(tag):
        try:
            if b"qemu-system" in Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0]:
                out.append(pid)
        except OSError:
            continue
    return out


def _kill_worker_in_its_second_job(cluster, model_dir: Path, log: dict, stop: threading.Event) -> None:
    """Once the worker node has finished a task (a status.json the driver wrote says so) and has started another
    (a job folder in its own scratch folder), kill its raylet."""
    worker = cluster.node("worker1")
    while not stop.is_set():
        done_there = [s for s in _statuses(model_dir).values() if s.get("ray_node") == worker.node_id]
        running = [p.parent.name for p in worker.scratch.glob("desktop-env-ray-jobs-*/*/*/trial_1")]
        running = [task for task in running if task not in _statuses(model_dir)]
        if done_there and running:
            log["vm_pids"] = [pid for pid in _qemu_pids(cluster.tag)
                              if f"TMPDIR={worker.scratch}".encode()
                              in Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")]
            log["killed_in"] = running[0]
            log["at"] = time.monotonic()
            cluster.kill_node("worker1")
            return
        time.sleep(0.2)


@pytest.fixture(scope="module")
def ray_run(cluster, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("ray_run")
    index = tmp / "index.json"
    index.write_text(json.dumps(TASKS))
    config = RunConfig(model="oracle", test_all_meta_path=index, test_config_base_dir=ROOT / "evaluation_examples",
                       result_dir=tmp / "driver", num_envs=2, ray=cluster.address, retries=1)
    model_dir = tmp / "driver" / "pyautogui" / "screenshot" / "oracle"
    lines, log, stop = [], {}, threading.Event()
    killer = threading.Thread(target=_kill_worker_in_its_second_job, args=(cluster, model_dir, log, stop),
                              daemon=True)
    killer.start()
    try:
        outcome = run_suite(config, report=lambda line, error=False: lines.append(line))
    finally:
        stop.set()
        killer.join(10)
    qemu_left = _qemu_pids(cluster.tag)  # the run closed its environments; the killed node's VM died with it
    return {"outcome": outcome, "lines": lines, "kill": log, "statuses": _statuses(model_dir),
            "qemu_left": qemu_left, "model_dir": model_dir}


def test_both_nodes_run_smoke_tasks_to_their_proven_scores(cluster, ray_run, smoke_results):
    proven = {row.task_id: row.oracle.score for row in smoke_results.rows}
    statuses = ray_run["statuses"]
    assert sorted(statuses) == sorted(t for ids in TASKS.values() for t in ids), ray_run["lines"]
    for task_id, status in statuses.items():
        assert status["status"] == "success" and status["score"] == proven[task_id] == 1.0, (task_id, status)
    nodes = {status["ray_node"] for status in statuses.values()}
    assert nodes == {cluster.node("head").node_id, cluster.node("worker1").node_id}, nodes
    assert ray_run["outcome"].exit_code == 0, ray_run["lines"]
    # the results came back through Ray into the driver's folder: screenshots and the trajectory included
    for task_id in statuses:
        folder = next(ray_run["model_dir"].rglob(task_id))
        assert (folder / "traj.jsonl").is_file() and (folder / "result.txt").read_text().strip() == "1.0"
        assert list(folder.glob("step_*.png")) or task_id != "8a1d4e22-7c3b-4f5a-b6d9-1e2f3a4b5c62"


def test_a_killed_node_loses_only_its_episode_and_it_is_retried_on_the_head(cluster, ray_run):
    kill = ray_run["kill"]
    assert "killed_in" in kill, f"the worker node never started a second task: {ray_run['lines']}"
    retried = ray_run["statuses"][kill["killed_in"]]
    assert retried["ray_node"] == cluster.node("head").node_id, retried
    assert retried["status"] == "success", retried
    assert any(kill["killed_in"] in line and "infra_error" in line and "retried" in line
               for line in ray_run["lines"]), ray_run["lines"]
    # only that episode was lost: every other task ran once
    retry_lines = [line for line in ray_run["lines"] if "retried on a new environment" in line]
    assert len(retry_lines) == 1, retry_lines
    assert kill["vm_pids"], "the worker node's job had no VM running when its node was killed"
    assert not ray_run["qemu_left"], f"VMs still running after the run: {ray_run['qemu_left']}"
