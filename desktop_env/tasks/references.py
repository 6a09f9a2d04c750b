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

A task that no solution can solve here (its own code needs what the VMs lack, such as the internet, where
:func:`desktop_env.tasks.offline.offline_blockers` cannot see it) is kept instead with the reason and its
evidence, under ``cannot_run_here`` (a :data:`desktop_env.tasks.common.KINDS` key -> where it was found):

.. code-block:: json

    {
      "ids": ["0814b61e-e421-41d1-9d16-897c33057d29", "22ef9058-6188-422a-9c12-e6934e4ed936"],
      "suite": "spider2-v",
      "cannot_run_here": {"internet": "hacker_news.zip: hacker_news/assets.py line 9 reads https://..."}
    }

:func:`~desktop_env.tasks.offline.offline_blockers` reports it like a reason it found itself, so verification
lists the task as not runnable with it and ``run.py`` leaves it out.

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
from desktop_env.tasks.common import KINDS, index_by_task_id, read_json_file

#: Where the kept solutions live (package data).
REFERENCE_DIR = Path(__file__).resolve().parent / "reference_solutions"
#: The keys of a kept solution's file (it has ``solution`` or ``cannot_run_here``, not both).
_KEYS = {"ids", "suite", "note", "solution", "cannot_run_here"}


@dataclass(frozen=True)
class KeptSolution:
    """One file of :data:`REFERENCE_DIR`: the solution it holds and the task ids it solves, or, for tasks no
    solution can solve here, why (``cannot_run_here``: a reason kind -> where it was found; ``solution`` None)."""

    path: Path
    ids: tuple[str, ...]
    suite: str
    solution: list | None
    note: str = ""
    cannot_run_here: tuple[tuple[str, str], ...] = ()

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
        if ("solution" in data) == ("cannot_run_here" in data):
            raise TaskConfigError("needs either a solution (a list of solution items) or cannot_run_here (why no "
                                  "solution can solve its tasks here), not both", str(path), "solution")
        if "solution" in data and (not isinstance(data["solution"], list) or not data["solution"]):
            raise TaskConfigError("must be a non-empty list of solution items", str(path), "solution")
        if not isinstance(data.get("note", ""), str):
            raise TaskConfigError("must be a string", str(path), "note")
        return cls(path, tuple(ids), data["suite"], data.get("solution"), data.get("note", ""),
                   _reasons(data.get("cannot_run_here"), path))


def _reasons(value, path: Path) -> tuple[tuple[str, str], ...]:
    """``cannot_run_here`` checked: a non-empty object of reason kind -> where it was found."""
    if value is None:
        return ()
    if not isinstance(value, dict) or not value:
        raise TaskConfigError(f"must be an object of reason -> where it was found, the reasons being "
                              f"{', '.join(KINDS)}", str(path), "cannot_run_here")
    for kind, where in value.items():
        if kind not in KINDS:
            raise TaskConfigError(f"unknown reason {kind!r}; the reasons are {', '.join(KINDS)}", str(path),
                                  f"cannot_run_here.{kind}")
        if not isinstance(where, str) or not where.strip():
            raise TaskConfigError("must say where it was found (the file, the line and what it does)", str(path),
                                  f"cannot_run_here.{kind}")
    return tuple(value.items())


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
    if kept is not None and kept.solution is not None:
        return SolutionSource(kept.solution, str(kept.path), "kept")
    return SolutionSource(None, where, "none")
