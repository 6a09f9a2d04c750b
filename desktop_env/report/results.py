"""Reading a run's result folders (with or without ``status.json``) into ``TaskResult`` records."""
from __future__ import annotations

import datetime
import json
import logging
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from desktop_env.errors import DesktopEnvError
from desktop_env.evaluators.reasons import Reason
from desktop_env.harness.layout import RESULT_FILE, STATUS_FILE, TRAJECTORY_FILE
from desktop_env.harness.status import STATUSES, UnreadableStatus, read_status
from desktop_env.report.actions import action_parts, summarize

logger = logging.getLogger(__name__)

FAILURE_KINDS = STATUSES[1:]

_STEP_PNG = re.compile(r"^step_(\d+)_(\d{8}@\d{6}\d*)\.png$")
_TRIAL = re.compile(r"^trial_(\d+)$")
_TASK_FILES = (STATUS_FILE, RESULT_FILE, TRAJECTORY_FILE)


class ResultsError(DesktopEnvError):
    """A results folder cannot be read (missing, empty, or a file in it is malformed)."""


@dataclass
class Step:
    """One line of ``traj.jsonl``; ``action_struct`` and ``parts`` are derived when the line lacks them."""

    num: int
    action: Any
    action_struct: dict
    parts: list[dict]
    response: str | None = None
    parse_error: str | None = None
    reward: float | None = None
    done: bool = False
    timestamp: str | None = None
    screenshot_file: str | None = None
    tokens_in: int | None = None
    tokens_out: int | None = None
    latency_s: float | None = None
    info: dict = field(default_factory=dict)


@dataclass
class TaskResult:
    """One task attempt (one trial) as the report sees it.

    ``status`` is what :func:`desktop_env.harness.status.read_status` says of the folder (the one
    reader the harness also plans and summarizes with): its ``status.json``, else derived from
    ``result.txt``, the trajectory and ``runtime.log`` (``derived`` is then True). ``reason`` says why
    the score is what it is (None in folders written before reasons, and for unscored statuses).
    """

    folder: Path
    root: Path
    task_id: str
    domain: str
    model: str
    action_space: str
    observation_type: str
    trial: int = 1
    status: str = "infra_error"
    score: float | None = None
    steps: int = 0
    duration_s: float | None = None
    attempts: int | None = None
    error: str | None = None
    reason: Reason | None = None
    started: str | None = None
    finished: str | None = None
    tags: list[str] = field(default_factory=list)
    related_apps: list[str] = field(default_factory=list)
    instruction: str | None = None
    derived: bool = False
    trajectory: list[Step] = field(default_factory=list)
    run: str = ""  # the label the report groups by (set by load_runs)

    @property
    def category(self) -> str:
        """The pipeline-category tag, or ``uncategorized``."""
        from desktop_env.tasks import CATEGORIES

        return next((t for t in self.tags if t in CATEGORIES), "uncategorized")

    @property
    def guidance(self) -> str:
        """``verbose`` or ``abstract`` from the tags, or ``unknown``."""
        return next((t for t in self.tags if t in ("verbose", "abstract")), "unknown")

    @property
    def interface(self) -> str:
        return next((t for t in self.tags if t in ("cli", "gui", "cli+gui")), "unknown")

    @property
    def success(self) -> bool:
        return self.status == "success"

    @property
    def failure_kind(self) -> str:
        """The status when it is a failure, else the empty string."""
        return "" if self.success else self.status

    @property
    def key(self) -> str:
        """A file-name-safe id unique within a report."""
        raw = f"{self.run}__{self.domain}__{self.task_id}" + (f"__trial{self.trial}" if self.trial > 1 else "")
        return re.sub(r"[^A-Za-z0-9._-]+", "_", raw)

    def screenshots(self) -> dict[int, Path]:
        """Step number -> screenshot file (step 0 is the start state)."""
        out = {}
        for p in self.folder.iterdir():
            m = _STEP_PNG.match(p.name)
            if m:
                out[int(m.group(1))] = p
        return dict(sorted(out.items()))

    @property
    def recording(self) -> Path | None:
        p = self.folder / "recording.mp4"
        return p if p.is_file() else None


def read_trajectory(path: Path) -> list[Step]:
    """Parse ``traj.jsonl``; missing ``action_struct`` is derived from the action itself.

    A malformed line (a run killed mid-write) is skipped with a warning.
    """
    steps: list[Step] = []
    if not path.is_file():
        return steps
    cursor: list = [None, None]
    for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except json.JSONDecodeError as exc:
            logger.warning("%s line %d is not JSON (%s); skipped", path, lineno, exc.msg)
            continue
        if not isinstance(rec, dict):
            logger.warning("%s line %d is not an object; skipped", path, lineno)
            continue
        action = rec.get("action")
        parts = action_parts(action, cursor)
        struct = rec.get("action_struct")
        if not isinstance(struct, dict) or not struct.get("type"):
            struct = summarize(parts)
        elif len(parts) == 1 and parts[0]["type"] in ("PYAUTOGUI", "UNKNOWN"):
            parts = [struct]  # the runner understood more of this action than the code parser
        steps.append(Step(
            num=int(rec.get("step_num", len(steps) + 1)), action=action, action_struct=struct, parts=parts,
            response=rec.get("response"), parse_error=rec.get("parse_error") or None,
            reward=rec.get("reward"), done=bool(rec.get("done")), timestamp=rec.get("timestamp"),
            screenshot_file=rec.get("screenshot_file"), tokens_in=rec.get("tokens_in"),
            tokens_out=rec.get("tokens_out"), latency_s=rec.get("latency_s"),
            info=rec.get("info") if isinstance(rec.get("info"), dict) else {}))
    return steps


def _stamp_time(stamp: str) -> datetime.datetime | None:
    try:
        return datetime.datetime.strptime(stamp[:22], "%Y%m%d@%H%M%S%f")
    except ValueError:
        return None


def _apply_status(result: TaskResult, status: dict, path: Path) -> None:
    result.status = status["status"]
    for name in ("task_id", "domain", "model", "action_space", "observation_type"):
        if isinstance(status.get(name), str) and status[name]:
            setattr(result, name, status[name])
    if isinstance(status.get("trial"), int):
        result.trial = status["trial"]
    score = status.get("score")
    result.score = float(score) if isinstance(score, (int, float)) else None
    result.steps = int(status.get("steps") or len(result.trajectory))
    result.duration_s = status.get("duration_s")
    result.attempts = status.get("attempts")
    result.error = status.get("error") or None
    result.reason = Reason.from_json(status.get("reason"))
    result.started, result.finished = status.get("started"), status.get("finished")
    result.tags = list(status.get("tags") or [])
    result.related_apps = list(status.get("related_apps") or [])
    if result.score is None and (path.parent / RESULT_FILE).is_file():
        try:
            result.score = float((path.parent / RESULT_FILE).read_text().strip())
        except ValueError:
            pass
    if status.get("legacy"):  # derived from the files: the times come from the screenshots' names
        result.derived = True
        times = [t for p in result.screenshots().values() if (t := _stamp_time(_STEP_PNG.match(p.name).group(2)))]
        if len(times) >= 2:
            result.duration_s = round((max(times) - min(times)).total_seconds(), 3)
            result.started, result.finished = min(times).isoformat(), max(times).isoformat()


def load_task_folder(folder: Path, root: Path, feasible: bool | None = None) -> TaskResult:
    """Read one task (or trial) folder of the results layout (``feasible``: whether its task can be done,
    when the task files say; it only matters to a folder without status.json).

    Raises:
        ResultsError: status.json is malformed or names an unknown status.
    """
    parts = folder.resolve().parts
    trial = 1
    m = _TRIAL.match(parts[-1])
    if m:
        trial, parts = int(m.group(1)), parts[:-1]
    pad = ["?"] * max(0, 5 - len(parts))
    action_space, observation_type, model, domain, task_id = (pad + list(parts))[-5:]
    result = TaskResult(folder=folder, root=root, task_id=task_id, domain=domain, model=model,
                        action_space=action_space, observation_type=observation_type, trial=trial)
    result.trajectory = read_trajectory(folder / TRAJECTORY_FILE)
    try:
        status = read_status(folder, feasible)
    except UnreadableStatus as exc:
        raise ResultsError(str(exc)) from exc
    if status is not None:
        _apply_status(result, status, folder / STATUS_FILE)
    return result


def find_task_folders(root: Path, exclude: Path | None = None) -> list[Path]:
    """Every folder under ``root`` holding status.json, result.txt or traj.jsonl, sorted."""
    out = []
    exclude = exclude.resolve() if exclude else None
    for dirpath, dirnames, filenames in os.walk(root):
        here = Path(dirpath)
        if exclude is not None and here.resolve() == exclude:
            dirnames[:] = []
            continue
        dirnames.sort()
        if any(f in filenames for f in _TASK_FILES):
            out.append(here)
    return sorted(out)


def load_task_metadata(tasks_root: Path) -> dict[str, dict]:
    """Task id -> {tags, related_apps, instruction, feasible} for every task file under ``tasks_root``
    (a suite root such as ``evaluation_examples`` or any folder of task files); ``feasible`` is None for a
    file that does not load."""
    from desktop_env.tasks import TaskSpec, find_task_files, read_json_file

    meta = {}
    for path in find_task_files(tasks_root):
        try:
            data = read_json_file(path)
        except DesktopEnvError as exc:
            logger.warning("skipping %s: %s", path, exc)
            continue
        if isinstance(data, dict) and isinstance(data.get("id"), str):
            try:
                feasible = not TaskSpec.from_json(data, path).infeasible
            except DesktopEnvError:
                feasible = None
            meta[data["id"]] = {"tags": data.get("tags") or [], "related_apps": data.get("related_apps") or [],
                                "instruction": data.get("instruction"), "feasible": feasible}
    return meta


def load_results(root: str | os.PathLike, tasks_root: str | os.PathLike | None = None,
                 exclude: str | os.PathLike | None = None) -> list[TaskResult]:
    """Every task result under a results folder (any level of the layout down to one task).

    Args:
        root: ``--result_dir`` of a run, or any folder below it.
        tasks_root: where the task files are, to fill tags, apps and instructions that
            status.json does not carry (old-style folders never do).
        exclude: a folder to skip (the report's own output when it lies inside ``root``).

    Raises:
        ResultsError: ``root`` is missing or holds no task results, or a status.json is malformed.
    """
    root = Path(root)
    if not root.is_dir():
        raise ResultsError(f"results folder {root} does not exist; pass the --result_dir of a run")
    folders = find_task_folders(root, Path(exclude) if exclude else None)
    if not folders:
        raise ResultsError(f"no task results under {root} (looked for folders holding "
                           f"{', '.join(_TASK_FILES)}); pass the --result_dir of a run")
    meta = load_task_metadata(Path(tasks_root)) if tasks_root else {}
    results = []
    for folder in folders:
        m = meta.get(folder.parent.name if _TRIAL.match(folder.name) else folder.name)
        r = load_task_folder(folder, root, m["feasible"] if m else None)
        m = meta.get(r.task_id) or m
        if m:
            r.tags = r.tags or [t for t in m["tags"] if isinstance(t, str)]
            r.related_apps = r.related_apps or list(m["related_apps"])
            r.instruction = m["instruction"]
        results.append(r)
    logger.info("%s: %d task results", root, len(results))
    return results


def load_runs(roots: list[str | os.PathLike], tasks_root: str | os.PathLike | None = None,
              exclude: str | os.PathLike | None = None) -> list[TaskResult]:
    """Results of several result folders, each labelled with a ``run`` name for grouping.

    The label is the model name; where that is ambiguous it gains the action space and
    observation type, then the results folder's name.
    """
    results = []
    for root in roots:
        results.extend(load_results(root, tasks_root, exclude))

    def ident(r, level):
        label = r.model
        if level >= 1:
            label += f" ({r.action_space}, {r.observation_type})"
        if level >= 2:
            label = f"{Path(r.root).resolve().name}: {label}"
        return label

    combos = {(str(Path(r.root).resolve()), r.action_space, r.observation_type, r.model) for r in results}
    for level in range(3):
        labels = {}
        for combo in combos:
            fake = TaskResult(folder=Path("."), root=Path(combo[0]), task_id="", domain="", model=combo[3],
                              action_space=combo[1], observation_type=combo[2])
            labels.setdefault(ident(fake, level), set()).add(combo)
        if all(len(v) == 1 for v in labels.values()) or level == 2:
            break
    for r in results:
        r.run = ident(r, level)
    return results
