"""The results layout: where a run puts each task's files, and how they are written and read back.

``<result_dir>/<action_space>/<observation_type>/<model>/<domain>/<task_id>/`` (with more than one
trial, ``.../<task_id>/trial_<k>/``) holds ``traj.jsonl``, ``step_<n>_<stamp>.png``, ``result.txt`` (the
score, only for a scored final status), ``status.json``, ``runtime.log`` and ``recording.mp4``; the
model folder holds ``manifest.json`` and ``summary.json`` (COMPAT section 1). The harness writes it;
``desktop-env tasks verify`` and the report read it through these functions, and a folder's status through
:func:`desktop_env.harness.status.read_status`.
"""
from __future__ import annotations

import datetime
import json
import logging
import os
from pathlib import Path

log = logging.getLogger(__name__)

STATUS_FILE = "status.json"
RESULT_FILE = "result.txt"
TRAJECTORY_FILE = "traj.jsonl"
RUNTIME_LOG = "runtime.log"
RECORDING_FILE = "recording.mp4"
MANIFEST_FILE = "manifest.json"
SUMMARY_FILE = "summary.json"


def model_dir(result_dir: str | os.PathLike, action_space: str, observation_type: str, model: str) -> Path:
    """The folder of one model's run (a model name's ``/`` becomes ``_``)."""
    return Path(result_dir) / action_space / observation_type / model.replace("/", "_")


def task_dir(model_folder: Path, domain: str, task_id: str, trial: int = 1, trials: int = 1) -> Path:
    """A task's (or trial's) result folder; a run of one trial keeps the classic layout."""
    folder = Path(model_folder) / domain / task_id
    return folder / f"trial_{trial}" if trials > 1 else folder


def now_iso() -> str:
    """The current UTC time, ISO 8601 to the second."""
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


def write_atomic(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file, so a crash never leaves half a file."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


def write_json_atomic(path: Path, obj) -> None:
    """:func:`write_atomic` of ``obj`` as indented JSON."""
    write_atomic(path, json.dumps(obj, indent=2, ensure_ascii=False) + "\n")


def count_steps(folder: Path) -> int:
    """Lines of the folder's trajectory (0 when it has none)."""
    traj = Path(folder) / TRAJECTORY_FILE
    return sum(1 for line in traj.read_text().splitlines() if line.strip()) if traj.exists() else 0
