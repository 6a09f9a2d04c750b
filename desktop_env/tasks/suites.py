"""Finding and loading tasks: a task file or folder, every task under a folder, index files
(``test_*.json``: app -> task ids) and the tasks they list."""
from __future__ import annotations

import difflib
import json
import os
from pathlib import Path
from typing import Any

from desktop_env.tasks.common import UUID_RE, TaskFileNotFound, task_error
from desktop_env.tasks.corrections import correction_for
from desktop_env.tasks.spec import TaskSpec


def read_json_file(path: str | os.PathLike) -> Any:
    """Decode a JSON file.

    Raises:
        TaskConfigError: unreadable, or malformed (with line and column; a truncated file says so).
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise task_error("no such file", path) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise task_error(f"cannot read: {exc}", path) from exc
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        stripped = text.rstrip()
        truncated = (" (the file looks truncated)"
                     if exc.pos >= len(stripped) - 1 or not stripped.endswith(("}", "]")) else "")
        raise task_error(f"malformed JSON at line {exc.lineno} column {exc.colno}: {exc.msg}{truncated}", path) from exc


def load_task(path: str | os.PathLike, suite_root: str | os.PathLike | None = None,
              validate: bool = True, grader_corrections: bool = False) -> TaskSpec:
    """Load one task from its JSON file, or from its folder (``<uuid>/<uuid>.json``).

    Args:
        grader_corrections: apply the project's correction of this task's grader, when it has one
            (:mod:`desktop_env.tasks.corrections`); the task's ``correction`` then names the finding.

    Raises:
        TaskConfigError: malformed file, missing fields, unknown names, missing task files, or a malformed
            correction table (with corrections on).
    """
    path = Path(path)
    if path.is_dir():
        candidate = path / f"{path.name}.json"
        if not candidate.is_file():
            raise task_error(f"a task folder must hold {candidate.name}", path)
        path = candidate
    data = read_json_file(path)
    correction = None
    if grader_corrections and isinstance(data, dict) and isinstance(data.get("id"), str):
        correction = correction_for(data["id"])
        if correction is not None:
            data = correction.apply(data)
    task = TaskSpec.from_json(data, path=path, suite_root=suite_root, validate=validate)
    if correction is not None:
        task.correction = correction.finding
    return task


def is_task_file(path: Path) -> bool:
    """Whether ``path`` looks like a task file: ``<uuid>/<uuid>.json``, ``<app>/<uuid>.json``, or
    a JSON object with ``id`` and ``instruction``. Index files (``test_*.json``) and settings are not."""
    if path.suffix != ".json" or path.name.startswith("test_") or "settings" in path.parts:
        return False
    if path.stem == path.parent.name or UUID_RE.match(path.stem):
        return True
    try:
        head = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return False
    return isinstance(head, dict) and "instruction" in head and "id" in head and (
        "evaluator" in head or "evaluation" in head)


def find_task_files(root: str | os.PathLike) -> list[Path]:
    """Every task file under ``root`` (a file, a task folder, an app folder or a whole suite), sorted."""
    root = Path(root)
    if root.is_file():
        return [root]
    if (root / f"{root.name}.json").is_file():
        return [root / f"{root.name}.json"]
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and d != "settings")
        for fn in sorted(filenames):
            p = Path(dirpath) / fn
            if is_task_file(p):
                out.append(p)
    return out


def load_index(path: str | os.PathLike) -> dict[str, list[str]]:
    """Read an index file ``test_*.json``: app -> list of task ids.

    Raises:
        TaskConfigError: malformed, or not an object of lists of strings.
    """
    data = read_json_file(path)
    if not isinstance(data, dict):
        raise task_error(f"an index file maps app -> [task id], got {type(data).__name__}", path)
    for app, ids in data.items():
        if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
            raise task_error("must be a list of task ids", path, app)
    return {app: list(ids) for app, ids in data.items()}


def task_file_for(examples_dir: str | os.PathLike, app: str, task_id: str) -> Path | None:
    """The file of task ``task_id`` of ``app``: folder layout first, then flat; None if neither."""
    base = Path(examples_dir) / app
    for c in (base / task_id / f"{task_id}.json", base / f"{task_id}.json"):
        if c.is_file():
            return c
    return None


def load_tasks_from_index(index_path: str | os.PathLike, examples_dir: str | os.PathLike | None = None,
                          apps: list[str] | None = None) -> list[TaskSpec]:
    """Load the tasks an index file lists.

    Args:
        index_path: ``evaluation_examples/test_*.json``.
        examples_dir: where the task folders are (default: ``examples/`` beside the index).
        apps: only these apps (default: all).

    Raises:
        TaskConfigError: the index is malformed, an app filter names no app of it (with a
            did-you-mean), a listed task has no file (field ``<app>[i]``), or a task fails to load.
    """
    index_path = Path(index_path)
    index = load_index(index_path)
    examples = Path(examples_dir) if examples_dir else index_path.parent / "examples"
    for a in apps or []:
        if a not in index:
            close = difflib.get_close_matches(a, list(index), n=2)
            hint = f"; did you mean {' or '.join(map(repr, close))}?" if close else ""
            raise task_error(f"no app {a!r} in this index{hint}", index_path)
    out = []
    for app, ids in index.items():
        if apps and app not in apps:
            continue
        for i, tid in enumerate(ids):
            f = task_file_for(examples, app, tid)
            if f is None:
                raise TaskFileNotFound(f"task {tid!r} listed but has no file",
                                       [examples / app / tid / f"{tid}.json", examples / app / f"{tid}.json"],
                                       path=str(index_path), field=f"{app}[{i}]")
            out.append(load_task(f))
    return out
