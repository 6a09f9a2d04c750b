"""Reference solutions this project keeps for tasks of other suites, keyed by task id.

The public data-science suite's task files carry no reference solution, and its files are not ours to
edit or copy. This project keeps its own solutions for them in ``desktop_env/tasks/reference_solutions/``
(one JSON file per task, or per group of twin tasks: the suite lists most of its tasks twice, once with a
step-by-step tutorial appended to the instruction, under two ids):

.. code-block:: json

    {
      "ids": ["1e8df695-bd1b-45b3-b557-e7d599cf7597", "2cb129af-84bc-4542-8c4c-b35fb3ea6156"],
      "suite": "spider2-v",
      "note": "what the solution does, and anything a reader should know about the task",
      "solution": [ ... the items of a task's `solution` list (desktop_env.tasks.solution) ... ]
    }

A task's own ``solution`` list, or a ``solution.sh`` beside its file, comes first; the kept solution is
used only when the task has neither. So ``desktop-env tasks verify --suite PATH/TO/SUITE/test_xxx.json``
and ``run.py --model oracle`` find these when pointed at a checkout of the suite, with the same rules
(``gui`` tasks act through the GUI only; ``cli+gui`` tasks mark their essential GUI steps) as the
project's own tasks.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from desktop_env.errors import TaskConfigError
from desktop_env.tasks.common import index_by_task_id, read_json_file

#: Where the kept solutions live (package data).
REFERENCE_DIR = Path(__file__).resolve().parent / "reference_solutions"
#: The keys of a kept solution's file.
_KEYS = {"ids", "suite", "note", "solution"}


@dataclass(frozen=True)
class KeptSolution:
    """One file of :data:`REFERENCE_DIR`: the solution it holds and the task ids it solves."""

    path: Path
    ids: tuple[str, ...]
    suite: str
    solution: list
    note: str = ""

    #: where in its file the task ids are (for errors)
    ids_field = "ids"

    @classmethod
    def read(cls, path: Path) -> "KeptSolution":
        """Read and check one file.

        Raises:
            TaskConfigError: unreadable or malformed JSON, a missing or unknown key, or a value of the
                wrong type (naming the file and the key).
        """
        data = read_json_file(path)
        if not isinstance(data, dict):
            raise TaskConfigError("a kept solution is a JSON object with ids, suite and solution", str(path))
        unknown = sorted(set(data) - _KEYS)
        if unknown:
            raise TaskConfigError(f"unknown key(s) {', '.join(unknown)}; the keys are {', '.join(sorted(_KEYS))}",
                                  str(path), unknown[0])
        ids = data.get("ids")
        if not isinstance(ids, list) or not ids or not all(isinstance(i, str) and i for i in ids):
            raise TaskConfigError("must be a non-empty list of task ids", str(path), "ids")
        if not isinstance(data.get("suite"), str) or not data["suite"]:
            raise TaskConfigError("must name the suite the tasks come from (e.g. \"spider2-v\")", str(path), "suite")
        if not isinstance(data.get("solution"), list) or not data["solution"]:
            raise TaskConfigError("must be a non-empty list of solution items", str(path), "solution")
        if not isinstance(data.get("note", ""), str):
            raise TaskConfigError("must be a string", str(path), "note")
        return cls(path, tuple(ids), data["suite"], data["solution"], data.get("note", ""))


def kept_solutions(root: Path | None = None) -> dict[str, KeptSolution]:
    """Every kept solution under ``root`` (default :data:`REFERENCE_DIR`), by task id; read once per folder.

    Raises:
        TaskConfigError: a file is malformed, or two files claim the same task id.
    """
    return _read_all(Path(root or REFERENCE_DIR))


@functools.lru_cache(maxsize=None)
def _read_all(root: Path) -> dict[str, KeptSolution]:
    if not root.is_dir():
        return {}
    return index_by_task_id((KeptSolution.read(p) for p in sorted(root.rglob("*.json"))), "has a kept solution")


def kept_solution(task_id: str, root: Path | None = None) -> KeptSolution | None:
    """The kept solution of task ``task_id``, or None."""
    return kept_solutions(root).get(task_id)


@dataclass(frozen=True)
class SolutionSource:
    """Where a task's reference solution comes from.

    Attributes:
        items: the raw ``solution`` items (None when the task has no solution).
        where: the file to name in errors about them (the task file, its ``solution.sh`` or the kept file).
        kind: ``task`` (its own ``solution`` list), ``solution.sh``, ``kept`` (this project's file for a
            task of another suite), or ``none``.
    """

    items: list[Any] | None
    where: str
    kind: str


def solution_source(task, root: Path | None = None) -> SolutionSource:
    """The reference solution ``task`` is replayed with: its own ``solution`` list, else a ``solution.sh``
    beside its file (one shell step), else the project's kept solution for its id, else none.

    Raises:
        TaskConfigError: a kept solution's file is malformed.
    """
    where = str(task.path) if task.path else task.id
    items = task.extra.get("solution")
    if items is not None:
        return SolutionSource(items, where, "task")
    if task.path is not None and (task.path.parent / "solution.sh").exists():
        sh = task.path.parent / "solution.sh"
        return SolutionSource([{"command": sh.read_text(), "shell": True}], str(sh), "solution.sh")
    kept = kept_solution(task.id, root)
    if kept is not None:
        return SolutionSource(kept.solution, str(kept.path), "kept")
    return SolutionSource(None, where, "none")
