"""The rollout pool on a local two-node cluster: docs/distributed.md's example runs as written and scores both
tasks; a hung environment is stopped by its named time limit, reported and replaced; the Gymnasium vector env
batches what the pool returns."""
import json
import os
import re
import threading
from pathlib import Path

import numpy as np
import pytest

from desktop_env.distributed import EnvPool
from desktop_env.limits import SCALE_ENV

pytestmark = [pytest.mark.vm, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "distributed.md"
GUI_TASK = "8a1d4e22-7c3b-4f5a-b6d9-1e2f3a4b5c62"
FILE_TASK = "3f6c2a10-5b7e-4c1d-9a8e-0d2b6c4e7f11"


def _example() -> str:
    text = DOC.read_text()
    head = text.index("## A rollout loop")
    return re.search(r"```python\n(.*?)```", text[head:], re.S).group(1)


def test_the_rollout_loop_of_the_docs_runs_as_written(cluster, monkeypatch, capsys):
    code = _example()
    assert 'ADDRESS = "127.0.0.1:6379"' in code
    monkeypatch.chdir(ROOT)  # the example names the tasks relative to the checkout
    scope: dict = {}
    exec(compile(code.replace('"127.0.0.1:6379"', repr(cluster.address)), str(DOC), "exec"), scope)
    assert scope["rewards"] == {GUI_TASK: ("ok", 1.0), FILE_TASK: ("ok", 1.0)}, scope["rewards"]
    assert str(scope["rewards"]) in capsys.readouterr().out


def _path(task_id: str) -> Path:
    return next((ROOT / "evaluation_examples" / "examples").glob(f"*/{task_id}/{task_id}.json"))


def test_a_hung_environment_is_stopped_by_its_limit_and_its_task_retried(cluster, monkeypatch):
    with EnvPool(1, tasks=[_path(FILE_TASK)], path_to_vm="base", max_steps=5) as pool:
        [first] = pool.results(timeout=900)
        assert first.ok and first.kind == "reset", first
        vm_pid = first.where["vm_pid"]
        monkeypatch.setenv(SCALE_ENV, str(20 / 1800))  # pool.step: 20 s from here on
        pool.submit(first.env_id, "import time; time.sleep(600)")
        [hung] = pool.results(timeout=300)
        assert hung.status == "infra_error" and hung.will_retry, hung
        assert "pool.step" in hung.error, hung.error
        monkeypatch.delenv(SCALE_ENV)
        [again] = pool.results(timeout=900)  # the task again, on a new actor and VM
        assert again.ok and again.kind == "reset" and again.attempt == 2, again
        assert again.where["pid"] != first.where["pid"]
        assert not os.path.exists(f"/proc/{vm_pid}") or b"qemu" not in Path(f"/proc/{vm_pid}/cmdline").read_bytes()
        pool.submit(again.env_id, "open('/home/user/Desktop/hello.txt', 'w').write('hello world\\n')")
        pool.results(timeout=600)
        pool.submit(again.env_id, "DONE")
        [done] = pool.results(timeout=600)
        assert done.ok and done.terminated and done.reward == 1.0, done


def test_the_vector_env_batches_the_pool(cluster):
    from desktop_env.distributed.vector import DesktopVectorEnv

    envs = DesktopVectorEnv(2, address=cluster.address, path_to_vm="base", max_steps=5)
    try:
        obs, infos = envs.reset(options={"tasks": [_path(FILE_TASK), _path(GUI_TASK)]})
        assert obs["screenshot"].shape == (2, 1080, 1920, 3) and obs["screenshot"].any()
        assert list(infos["status"]) == ["ok", "ok"], infos
        assert "hello world" in obs["instruction"][0] and "projects/demo" in obs["instruction"][1]
        obs, rewards, terminated, truncated, infos = envs.step(
            ["open('/home/user/Desktop/hello.txt', 'w').write('hello world\\n')", "WAIT"])
        assert not terminated.any() and not truncated.any(), infos
        obs, rewards, terminated, truncated, infos = envs.step(["DONE", "DONE"])
        assert list(terminated) == [True, True]
        assert rewards.tolist() == [1.0, 0.0]  # the second task was not done
        assert isinstance(rewards, np.ndarray)
    finally:
        envs.close()
    json.dumps(infos["status"].tolist())


def test_a_node_with_another_build_of_the_image_stops_the_pool_and_the_run(cluster, monkeypatch, tmp_path):
    """The nodes hold a rebuild of the driver's image (here: the driver says its build is another): the pool's
    results and run.py --ray stop with the node named and the copy commands, before any VM starts; the run's
    tasks keep no status (a rerun runs them)."""
    from desktop_env.distributed.images import ImageIdentity, NodeImageError, driver_image
    from desktop_env.harness.config import RunConfig
    from desktop_env.harness.suite import run_suite

    real = driver_image("base")
    wrong = ImageIdentity(real.name, "0" * 16)
    monkeypatch.setattr(EnvPool, "_driver_image", lambda self: wrong)
    with EnvPool(1, tasks=[_path(FILE_TASK)], path_to_vm=real.name, address=cluster.address) as pool:
        with pytest.raises(NodeImageError, match=f"another build of {real.name} .*the driver's is build 0{{16}}"):
            pool.results(timeout=300)
        assert pool.where()[0] is None  # no reset got as far as a VM

    monkeypatch.setattr("desktop_env.harness.ray_jobs.driver_image", lambda *args: wrong)
    index = tmp_path / "index.json"
    index.write_text(json.dumps({"os": [FILE_TASK]}))
    config = RunConfig(model="oracle", test_all_meta_path=index, test_config_base_dir=ROOT / "evaluation_examples",
                       result_dir=tmp_path / "driver", num_envs=1, ray=cluster.address, path_to_vm=real.name)
    lines: list[str] = []
    outcome = run_suite(config, report=lambda line, error=False: lines.append(line))
    assert outcome.exit_code == 1, lines
    assert any(f"another build of {real.name}" in line and "desktop-env image import" in line for line in lines), lines
    assert not list((tmp_path / "driver").rglob("status.json")), "a task the node could not run has a status"
