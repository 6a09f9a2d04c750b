"""Every task shipped in evaluation_examples/ has a reference solution the oracle can replay."""
from pathlib import Path

import pytest

from desktop_env.errors import TaskConfigError
from desktop_env.replay import ShellStep, solution_steps
from desktop_env.tasks import TaskSpec, find_task_files, load_index, load_task, task_file_for

ROOT = Path(__file__).resolve().parents[2]
TASKS = find_task_files(ROOT / "evaluation_examples" / "examples")


@pytest.mark.parametrize("path", TASKS, ids=[p.stem for p in TASKS])
def test_task_has_a_replayable_solution(path):
    task = load_task(path)
    space = "computer_13" if any(isinstance(i, dict) and i.get("action_space") == "computer_13"
                                 for i in task.extra.get("solution", [])) else "pyautogui"
    assert solution_steps(task, space)


def test_smoke_index_points_at_files():
    index = load_index(ROOT / "evaluation_examples" / "test_smoke.json")
    assert index and all(task_file_for(ROOT / "evaluation_examples" / "examples", app, tid)
                         for app, ids in index.items() for tid in ids)


def test_gui_task_rejects_command_solutions():
    task = TaskSpec.from_json({"id": "t", "instruction": "x", "tags": ["gui"],
                               "evaluator": {"func": "infeasible"},
                               "solution": [{"command": "touch /tmp/x", "shell": True}]})
    with pytest.raises(TaskConfigError, match="tagged `gui`"):
        solution_steps(task, "pyautogui")
    task.tags = ["cli"]
    assert solution_steps(task, "pyautogui") == [ShellStep("touch /tmp/x", shell=True, index=0)]
    task.extra["solution"] = [{"action_space": "computer_13", "action": {"action_type": "CLICK"}}]
    with pytest.raises(TaskConfigError, match="--action_space computer_13"):
        solution_steps(task, "pyautogui")


def test_file_urls_with_escapes_resolve():
    from desktop_env.tasks import strip_file_scheme

    assert strip_file_scheme(Path("/tmp/a b/x y.txt").as_uri()) == "/tmp/a b/x y.txt"
    assert strip_file_scheme("relative/path.txt") == "relative/path.txt"
