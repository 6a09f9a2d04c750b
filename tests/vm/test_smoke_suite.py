"""The smoke suite on the base image: every task is proven (oracle 1.0, noop 0.0) by `tasks verify`."""
import pytest

from desktop_env.tasks import load_index

pytestmark = [pytest.mark.vm, pytest.mark.slow]


def test_every_smoke_task_is_proven(smoke_results):
    listed = {(d, t) for d, ids in load_index(smoke_results.suite).items() for t in ids}
    assert {(r.domain, r.task_id) for r in smoke_results.rows} == listed
    assert smoke_results.all_proven, "\n" + smoke_results.to_text()


def test_smoke_results_follow_the_run_py_layout(smoke_results):
    for row in smoke_results.rows:
        for model in ("oracle", "noop"):
            folder = smoke_results.result_dirs[model] / "pyautogui" / "screenshot" / model / row.domain / row.task_id
            assert (folder / "result.txt").read_text().strip(), folder
            assert (folder / "traj.jsonl").exists() and list(folder.glob("step_0_*.png")), folder
    assert smoke_results.recipe_hash and smoke_results.image.endswith(smoke_results.recipe_hash)
