"""The reference solutions this project keeps for other suites' tasks (desktop_env.tasks.references): how a
task finds one, the errors a malformed one gives, and every kept one checked against its real task files."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from desktop_env.errors import TaskConfigError
from desktop_env.tasks import load_index, load_task, task_file_for
from desktop_env.tasks import references as refs
from desktop_env.tasks.solution import solution_items

DEV = os.environ.get("DESKTOP_ENV_PUBLIC_SUITE_DEV")

TASK = {"id": "task-1", "instruction": "make hello.txt", "config": [], "tags": ["cli+gui"],
        "evaluator": {"func": "check_include_exclude",
                      "result": {"type": "vm_command_line", "command": "cat hello.txt"},
                      "expected": {"type": "rule", "rules": {"include": ["hello"]}}}}
GUI_SOLUTION = [{"command": "echo hello > hello.txt", "shell": True},
                {"gui": "click", "target": {"role": "push-button", "name": "OK"}, "essential": True}]


@pytest.fixture
def kept(tmp_path, monkeypatch):
    """kept(name, data) writes a kept solution into a fresh folder that the lookups use."""
    root = tmp_path / "kept"
    root.mkdir()
    monkeypatch.setattr(refs, "REFERENCE_DIR", root)

    def write(name, data):
        (root / name).write_text(json.dumps(data))
        refs._read_all.cache_clear()
        return root / name
    yield write
    refs._read_all.cache_clear()


def test_a_task_without_a_solution_of_its_own_takes_the_kept_one(suite, kept):
    path = kept("a.json", {"ids": ["task-1", "task-1-twin"], "suite": "spider2-v", "solution": GUI_SOLUTION})
    task = load_task(suite("os", TASK))
    source = refs.solution_source(task)
    assert (source.kind, source.where, source.items) == ("kept", str(path), GUI_SOLUTION)
    assert task.solution_kind == "mixed" and len(solution_items(task)) == 2
    assert refs.kept_solution("task-1-twin").path == path


def test_the_task_s_own_solution_and_solution_sh_come_first(suite, kept):
    kept("a.json", {"ids": ["task-1", "task-2"], "suite": "spider2-v", "solution": GUI_SOLUTION})
    own = load_task(suite("os", dict(TASK, solution=[{"action": "DONE"}], tags=[])))
    assert refs.solution_source(own).kind == "task" and refs.solution_source(own).items == [{"action": "DONE"}]
    sh = load_task(suite("os", dict(TASK, id="task-2", tags=[]), files={"solution.sh": "echo hi\n"}))
    assert refs.solution_source(sh).kind == "solution.sh" and sh.solution_kind == "commands"
    none = load_task(suite("os", dict(TASK, id="task-3")))
    assert refs.solution_source(none).kind == "none" and none.solution_kind is None
    with pytest.raises(TaskConfigError, match="has no reference solution.*reference_solutions"):
        solution_items(none)


def test_a_kept_solution_follows_the_task_s_rules_and_errors_name_its_file(suite, kept):
    """A cli+gui task's kept solution must mark an essential GUI step, as the task's own would; the error
    names the kept file, not the suite's task file."""
    path = kept("a.json", {"ids": ["task-1"], "suite": "spider2-v", "solution": GUI_SOLUTION[:1]})
    with pytest.raises(TaskConfigError) as err:
        solution_items(load_task(suite("os", TASK)))
    assert str(path) in str(err.value) and "essential" in str(err.value)


@pytest.mark.parametrize("data, field, words", [
    ({"ids": [], "suite": "s", "solution": GUI_SOLUTION}, "ids", "non-empty list of task ids"),
    ({"ids": ["t"], "solution": GUI_SOLUTION}, "suite", "must name the suite"),
    ({"ids": ["t"], "suite": "s", "solution": []}, "solution", "non-empty list"),
    ({"ids": ["t"], "suite": "s", "solution": GUI_SOLUTION, "notes": "x"}, "notes", "unknown key(s) notes"),
    ({"ids": ["t"], "suite": "s", "solution": GUI_SOLUTION, "note": 3}, "note", "must be a string"),
    ({"ids": ["t"], "suite": "s"}, "solution", "either a solution"),
    ({"ids": ["t"], "suite": "s", "solution": GUI_SOLUTION, "cannot_run_here": {"internet": "x.py line 1"}},
     "solution", "not both"),
    ({"ids": ["t"], "suite": "s", "cannot_run_here": {}}, "cannot_run_here", "reason -> where it was found"),
    ({"ids": ["t"], "suite": "s", "cannot_run_here": {"network": "x.py line 1"}}, "cannot_run_here.network",
     "unknown reason 'network'; the reasons are docker, astro"),
    ({"ids": ["t"], "suite": "s", "cannot_run_here": {"internet": " "}}, "cannot_run_here.internet",
     "must say where it was found"),
])
def test_a_malformed_kept_solution_names_its_file_and_field(kept, data, field, words):
    path = kept("bad.json", data)
    with pytest.raises(TaskConfigError) as err:
        refs.kept_solutions()
    assert str(path) in str(err.value) and field in str(err.value) and words in str(err.value)


def test_a_kept_reason_holds_a_task_back_as_one_found_in_its_files(suite, kept):
    """A task no solution can solve here (its code fetches from the internet) is kept with why: verification
    and run.py's offline rule report it like a reason read from the task's own scripts."""
    from desktop_env.tasks.offline import INTERNET, offline_blockers
    from desktop_env.verify import NOT_RUNNABLE, not_run_because

    where = "project.zip: project/assets.py line 9 fetches https://example.org/top.json"
    path = kept("a.json", {"ids": ["task-1"], "suite": "spider2-v", "cannot_run_here": {"internet": where}})
    task = load_task(suite("os", TASK))
    assert [(b.kind, b.where) for b in offline_blockers(task)] == [(INTERNET, f"{where}; kept in {path}")]
    assert not_run_because(task) == (NOT_RUNNABLE, f"fetches from the internet ({where}; kept in {path})")
    assert refs.solution_source(task).kind == "none"
    other = load_task(suite("os", dict(TASK, id="task-2")))
    assert offline_blockers(other) == []


def test_two_files_claiming_one_task_are_refused(kept):
    first = kept("a.json", {"ids": ["t"], "suite": "s", "solution": GUI_SOLUTION})
    second = kept("b.json", {"ids": ["u", "t"], "suite": "s", "solution": GUI_SOLUTION})
    with pytest.raises(TaskConfigError) as err:
        refs.kept_solutions()
    assert str(first) in str(err.value) and str(second) in str(err.value) and "task t" in str(err.value)


def test_broken_json_is_named(kept):
    path = kept("a.json", {})
    path.write_text('{"ids": ["t"],')
    refs._read_all.cache_clear()
    with pytest.raises(TaskConfigError, match="malformed JSON at line 1"):
        refs.kept_solutions()


# -- the solutions this project keeps, against the public suite's real task files -----------------------------
KEPT = sorted(refs.REFERENCE_DIR.rglob("*.json"))


def test_the_project_keeps_solutions_and_they_load():
    assert KEPT, f"no kept solution under {refs.REFERENCE_DIR}"
    solutions = refs.kept_solutions()
    for path in KEPT:
        for task_id in refs.KeptSolution.read(path).ids:
            assert solutions[task_id].path == path
    assert len(solutions) == sum(len(refs.KeptSolution.read(p).ids) for p in KEPT)


def _dev_tasks() -> dict[str, Path]:
    if not DEV:
        pytest.skip("DESKTOP_ENV_PUBLIC_SUITE_DEV is not set (.ci/run sets it where the public suite's development "
                    "split is on the machine)")
    examples = Path(DEV) / "evaluation_examples"
    return {task_id: task_file_for(examples / "examples", app, task_id)
            for app, ids in load_index(examples / "test_dev.json").items() for task_id in ids}


@pytest.mark.parametrize("path", KEPT, ids=[p.stem[:8] for p in KEPT])
def test_each_kept_solution_solves_tasks_of_the_split_that_run_here_by_their_rules(path):
    """Each id is a task of the development split that runs here, and the solution passes the rules of that
    task's interface (read through the task, as the oracle reads it); or, kept with why it cannot run here,
    the task is listed as not runnable for that reason."""
    from desktop_env.verify import not_run_because

    from desktop_env.verify import NOT_RUNNABLE

    tasks = _dev_tasks()
    kept = refs.KeptSolution.read(path)
    for task_id in kept.ids:
        assert task_id in tasks, f"{path}: {task_id} is not a task of the development split"
        task = load_task(tasks[task_id])
        if kept.solution is None:  # kept with why no solution solves it here: listed as not runnable, with that
            status, reason = not_run_because(task)
            assert status == NOT_RUNNABLE and all(where in reason for _, where in kept.cannot_run_here)
            continue
        assert refs.solution_source(task).where == str(path)
        assert not_run_because(task) == ("", "")
        assert solution_items(task)
