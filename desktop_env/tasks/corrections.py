"""Grader corrections: an opt-in table of fixes to other suites' graders, keyed by task id.

Where a public suite's grader is wrong (its gold file holds a wrong value, its rule cannot tell a right answer
from a wrong one), the task is listed with the finding and its evidence in docs/task_verification.md, and
the fix may be offered here, in ``desktop_env/tasks/grader_corrections/<suite>.json``: a list of entries

.. code-block:: json

    [{"ids": ["65551792-4c32-4904-983d-7c68c189b474"],
      "finding": "what the grader gets wrong",
      "evidence": "the file, the expected value, and what the grader did",
      "patch": {"evaluator": {"options": {"rules": [...]}}}}]

``patch`` is a JSON merge patch (RFC 7396) applied to the task's JSON when it is loaded: an object merges
key by key, ``null`` removes a key, anything else replaces the value. The suite's own files are never
edited. Corrections are off unless asked for (``run.py --grader_corrections``, ``tasks verify
--grader_corrections``), and the results say whether they were on: ``summary.json``'s
``grader_corrections``, and ``status.json``'s ``grader_correction`` (the finding) for a task that was corrected.
"""
from __future__ import annotations

import copy
import functools
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from desktop_env.errors import TaskConfigError
from desktop_env.tasks.common import index_by_task_id, read_json_file

#: Where the correction tables live (package data), one JSON file per suite.
CORRECTIONS_DIR = Path(__file__).resolve().parent / "grader_corrections"
_KEYS = {"ids", "finding", "evidence", "patch"}


@dataclass(frozen=True)
class GraderCorrection:
    """One entry of a correction table.

    Attributes:
        path: the table file.
        index: the entry's position in it.
        ids: the task ids it corrects.
        finding: what the suite's grader gets wrong.
        evidence: the file, the expected value and what the grader did.
        patch: the JSON merge patch applied to the task's JSON.
    """

    path: Path
    index: int
    ids: tuple[str, ...]
    finding: str
    evidence: str
    patch: dict

    @property
    def ids_field(self) -> str:
        """Where in its table the entry's task ids are (for errors)."""
        return f"[{self.index}].ids"

    def apply(self, data: dict) -> dict:
        """A copy of the task JSON ``data`` with the patch merged in."""
        return merge_patch(data, self.patch)


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7396: ``patch`` merged into a copy of ``target``."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    out = copy.deepcopy(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = merge_patch(out.get(key), value)
    return out


def _read_table(path: Path) -> list[GraderCorrection]:
    data = read_json_file(path)
    if not isinstance(data, list):
        raise TaskConfigError("a correction table is a JSON list of {ids, finding, evidence, patch}", str(path))
    out = []
    for i, entry in enumerate(data):
        where = f"[{i}]"
        if not isinstance(entry, dict):
            raise TaskConfigError("must be an object with ids, finding, evidence and patch", str(path), where)
        unknown, missing = sorted(set(entry) - _KEYS), sorted(_KEYS - set(entry))
        if unknown or missing:
            raise TaskConfigError(
                (f"unknown key(s) {', '.join(unknown)}" if unknown else f"missing key(s) {', '.join(missing)}")
                + f"; the keys are {', '.join(sorted(_KEYS))}", str(path), where)
        ids = entry["ids"]
        if not isinstance(ids, list) or not ids or not all(isinstance(x, str) and x for x in ids):
            raise TaskConfigError("must be a non-empty list of task ids", str(path), f"{where}.ids")
        for key in ("finding", "evidence"):
            if not isinstance(entry[key], str) or not entry[key].strip():
                raise TaskConfigError("must be a non-empty string", str(path), f"{where}.{key}")
        if not isinstance(entry["patch"], dict) or not entry["patch"]:
            raise TaskConfigError("must be a non-empty object (a JSON merge patch of the task file)", str(path),
                                  f"{where}.patch")
        out.append(GraderCorrection(path, i, tuple(ids), entry["finding"], entry["evidence"], entry["patch"]))
    return out


def grader_corrections(root: Path | None = None) -> dict[str, GraderCorrection]:
    """Every correction under ``root`` (default :data:`CORRECTIONS_DIR`), by task id; read once per folder.

    Raises:
        TaskConfigError: a table is malformed, or two entries correct the same task.
    """
    return _read_all(Path(root or CORRECTIONS_DIR))


@functools.lru_cache(maxsize=None)
def _read_all(root: Path) -> dict[str, GraderCorrection]:
    if not root.is_dir():
        return {}
    return index_by_task_id((entry for path in sorted(root.glob("*.json")) for entry in _read_table(path)),
                            "is corrected")


def correction_for(task_id: str, root: Path | None = None) -> GraderCorrection | None:
    """The correction of task ``task_id``, or None."""
    return grader_corrections(root).get(task_id)
