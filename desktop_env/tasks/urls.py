"""The host files and URLs a task names: the fields its setup steps, getters and evaluation functions
read as host files (each registry entry's ``host_paths``), in both spellings; the URLs among them are
what the host fetches. A URL in any other field (an instruction, ``source``, a page Chromium opens) is
not fetched by the host and is not listed."""
from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from desktop_env.errors import TaskConfigError
from desktop_env.tasks.common import SPELLING_FUNC, is_remote_url, values_at

if TYPE_CHECKING:
    from desktop_env.tasks.spec import TaskSpec


def task_urls(task: "TaskSpec") -> list[tuple[str, str]]:
    """Every (URL, field) the host fetches for ``task``, in file order; a name the registries lack
    contributes nothing (``tasks check`` reports it)."""
    return [(v, dotted) for v, dotted in host_path_values(task) if is_remote_url(v)]


def host_path_values(task: "TaskSpec") -> list[tuple[str, str]]:
    """Every (value, field) of the fields ``task``'s setup steps, getters and evaluation function read as
    host files or URLs (each registry entry's ``host_paths``), in file order: ``("init.sh",
    "config[1].parameters.src")``. A name the registries lack contributes nothing."""
    from desktop_env import registry as reg

    found: list[tuple[str, str]] = []

    def scan(table, name: str, fields: dict, where: str) -> None:
        if name not in table:  # (``in`` loads the registry's modules)
            return
        for spec in table.get(name).host_paths:
            found.extend((v, dotted) for v, dotted in values_at(fields, spec, where) if isinstance(v, str))

    steps = [(s, f"config[{i}]") for i, s in enumerate(task.config)]
    if task.evaluator is not None:
        steps += [(s, f"evaluator.postconfig[{i}]") for i, s in enumerate(task.evaluator.postconfig)]
    for step, where in steps:
        func = step.spelling == SPELLING_FUNC
        scan(reg.CONFIG_DISPATCH if func else reg.SETUP_STEPS, step.name, step.params,
             f"{where}.{'arguments' if func else 'parameters'}")
    if task.evaluator is not None:
        ev = task.evaluator
        for i in range(len(ev.funcs)):
            at = f"[{i}]" if ev.listed else ""
            for key, getters in (("result", ev.results), ("expected", ev.expecteds)):
                if getters[i] is not None:
                    scan(reg.GETTERS, getters[i].type, getters[i].fields, f"evaluator.{key}{at}")
    if task.evaluation is not None:
        scan(reg.EVAL_DISPATCH, task.evaluation.name, task.evaluation.params, "evaluation.arguments")
    return found


def suite_task_files(source: str | os.PathLike) -> list[Path]:
    """The task files of ``source``: an index file (``test_*.json``, its tasks under ``examples/``
    beside it), or a folder (a suite, an app folder or one task), or one task file.

    Raises:
        TaskConfigError: ``source`` does not exist, or an index names a task with no file.
    """
    from desktop_env.tasks import find_task_files, is_task_file, load_index, task_file_for

    source = Path(source)
    if not source.exists():
        raise TaskConfigError("does not exist; give a suite folder, an index file (test_*.json) or a task file",
                              str(source))
    if source.is_dir() or is_task_file(source):
        return find_task_files(source)
    files = []
    for domain, ids in load_index(source).items():
        for i, task_id in enumerate(ids):
            path = task_file_for(source.parent / "examples", domain, task_id)
            if path is None:
                raise TaskConfigError(f"task {task_id!r} is listed but has no file under "
                                      f"{source.parent / 'examples' / domain}", str(source), f"{domain}[{i}]")
            files.append(path)
    return files


def suite_urls(source: str | os.PathLike) -> tuple[dict[str, list[str]], list[TaskConfigError]]:
    """URL -> the task files fetching it, over every task of ``source`` (see :func:`suite_task_files`),
    and the load errors of task files that could not be read (their URLs are still listed when the
    file parses)."""
    from desktop_env.tasks import load_task

    uses: dict[str, list[str]] = {}
    errors: list[TaskConfigError] = []
    for path in suite_task_files(source):
        try:
            task = load_task(path)
        except TaskConfigError as exc:
            errors.append(exc)
            try:
                task = load_task(path, validate=False)
            except TaskConfigError:
                continue
        for url, _ in task_urls(task):
            users = uses.setdefault(url, [])
            if str(path) not in users:
                users.append(str(path))
    return uses, errors
