"""How an attempt ends: the one ``Status`` type, the one classifier of outcomes, and the one reader of a folder's status.

A final status is kept and never rerun; ``infra_error`` (the VM, the guest server, the model API or
the host's disk failed) is retried on a fresh VM and, when retries run out, left for the next run.
``task_error`` (the task is broken) and ``evaluator_error`` (the grader raised) carry no score and
stay out of the success rate, so neither looks like the agent's failure. ``agent_error`` (the agent's
own code raised, or the model API refused the request for its content or size) is the agent's
failure: final, scored 0 and counted in the success rate.

Planning and resume (:mod:`~desktop_env.harness.jobs`), the summary and ``desktop-env report`` read a
result folder through :func:`read_status` alone, so one folder has one status everywhere.
"""
from __future__ import annotations

import enum
import errno
import json
import logging
from pathlib import Path

from desktop_env.errors import DesktopEnvError
from desktop_env.harness.layout import RESULT_FILE, RUNTIME_LOG, STATUS_FILE, TRAJECTORY_FILE, count_steps

log = logging.getLogger(__name__)


class Status(str, enum.Enum):
    """How a task attempt ended (the ``status`` field of status.json)."""

    SUCCESS = "success"
    WRONG_RESULT = "wrong_result"
    AGENT_FAIL = "agent_fail"
    PARSE_ERROR = "parse_error"
    AGENT_ERROR = "agent_error"
    TIMEOUT = "timeout"
    INFRA_ERROR = "infra_error"
    TASK_ERROR = "task_error"
    EVALUATOR_ERROR = "evaluator_error"

    def __str__(self) -> str:
        return self.value

    @property
    def final(self) -> bool:
        """Whether a rerun keeps it (every status but ``infra_error``)."""
        return self is not Status.INFRA_ERROR

    @property
    def scored(self) -> bool:
        """Whether it counts in the scores and the success rate (the agent had its chance)."""
        return self not in (Status.INFRA_ERROR, Status.TASK_ERROR, Status.EVALUATOR_ERROR)


#: Every status a task run can have, in the order reports list them (all but ``success`` are failures).
STATUSES = tuple(s.value for s in Status)
#: Statuses a rerun does not repeat; ``infra_error`` is the only one it retries.
FINAL_STATUSES = tuple(s.value for s in Status if s.final)
#: Final statuses that carry no score and stay out of the success rate: the task or its grader is at fault.
UNSCORED_STATUSES = tuple(s.value for s in Status if s.final and not s.scored)
#: Host-side errors (full or read-only disk, I/O error) that are infrastructure failures, not task errors.
HOST_ERRNOS = (errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EIO)
#: Words in a legacy folder's runtime.log that tell why it has no result.txt.
_TIMEOUT_WORDS = ("TimeoutError", "exceeded --task_timeout")
_TASK_ERROR_WORDS = ("cannot run:", "TaskConfigError")


class TaskTimeout(Exception):
    """The attempt ran past its ``task_timeout``."""


class UnreadableStatus(DesktopEnvError):
    """A folder's status.json is not JSON, not an object, or names no known status."""


def classify(score: float, last_action_type: str | None, last_turn_parse_error: bool, feasible: bool = True) -> Status:
    """The status of a scored episode.

    score 1 -> success; FAIL as the last action of a feasible task -> agent_fail; a lower
    score after a last turn whose reply did not parse -> parse_error; otherwise wrong_result.
    """
    if score >= 1.0:
        return Status.SUCCESS
    if last_action_type == "FAIL" and feasible:
        return Status.AGENT_FAIL
    if last_turn_parse_error:
        return Status.PARSE_ERROR
    return Status.WRONG_RESULT


def infra_errors() -> tuple[type, ...]:
    """Exception types that mean the infrastructure failed (retried on a fresh VM), not the task: those of
    :func:`desktop_env.errors.infra_error_types` and the model API's."""
    from desktop_env.agents.llm import ModelAPIError
    from desktop_env.errors import infra_error_types

    return (*infra_error_types(), ModelAPIError)


def read_status(folder: Path, feasible: bool | None = None) -> dict | None:
    """A result folder's status record: its status.json, or one derived from the files of a folder written
    without it (``"legacy": true``); None when nothing has run there.

    A legacy folder with a numeric result.txt is final, classified as :func:`classify` does from the
    score and its trajectory's last line (``feasible`` when the caller knows the task; unknown counts as
    feasible). One without a score is not final (the run stopped before scoring, so a rerun repeats it),
    its status told by runtime.log: ``timeout``, ``task_error`` or ``infra_error``.

    Raises:
        UnreadableStatus: status.json is malformed or names an unknown status.
    """
    folder = Path(folder)
    path = folder / STATUS_FILE
    try:
        status = json.loads(path.read_text())
    except FileNotFoundError:
        return _derive(folder, feasible)
    except json.JSONDecodeError as exc:
        raise UnreadableStatus(f"{path}: malformed JSON at line {exc.lineno} column {exc.colno}: {exc.msg}; "
                               "delete it to run the task again") from exc
    except (OSError, ValueError) as exc:
        raise UnreadableStatus(f"{path} is unreadable ({exc}); delete it to run the task again") from exc
    if not isinstance(status, dict):
        raise UnreadableStatus(f"{path}: expected a JSON object, got {type(status).__name__}")
    if status.get("status") not in STATUSES:
        raise UnreadableStatus(f"{path}: field status is {status.get('status')!r}; expected one of "
                               f"{', '.join(STATUSES)}")
    return status


def _last_turn(folder: Path) -> tuple[str | None, bool]:
    """(the type of the last action, whether the last turn's reply did not parse) of a folder's trajectory."""
    from desktop_env.agents.parsing import action_struct

    traj = folder / TRAJECTORY_FILE
    last = None
    if traj.is_file():
        for line in traj.read_text(encoding="utf-8", errors="replace").splitlines():
            try:
                rec = json.loads(line)
            except ValueError:
                continue  # a run killed mid-write
            if isinstance(rec, dict):
                last = rec
    if last is None:
        return None, False
    struct = last.get("action_struct")
    kind = struct.get("type") if isinstance(struct, dict) and struct.get("type") else action_struct(
        last.get("action")).get("type")
    return kind, bool(last.get("parse_error")) and last.get("action") is None


def _derive(folder: Path, feasible: bool | None) -> dict | None:
    result = folder / RESULT_FILE
    text = result.read_text().strip() if result.is_file() else ""
    if not text and not (folder / TRAJECTORY_FILE).is_file():
        return None
    record = {"final": False, "score": None, "steps": count_steps(folder), "duration_s": None, "legacy": True,
              "error": None}
    if text:
        try:
            score = float(text)
        except ValueError:
            return {**record, "status": Status.INFRA_ERROR.value, "error": f"result.txt holds {text[:40]!r}, not a number"}
        kind, parse_error = _last_turn(folder)
        status = classify(score, kind, parse_error, feasible is not False)
        return {**record, "status": status.value, "final": True, "score": score}
    log_text = (folder / RUNTIME_LOG).read_text(errors="replace") if (folder / RUNTIME_LOG).is_file() else ""
    errors = [ln for ln in log_text.splitlines() if "ERROR" in ln or "Error" in ln or "cannot run" in ln]
    error = errors[-1].strip()[:500] if errors else "no result.txt (the run stopped before scoring)"
    if any(w in log_text for w in _TIMEOUT_WORDS):
        status = Status.TIMEOUT
    elif any(w in log_text for w in _TASK_ERROR_WORDS):
        status = Status.TASK_ERROR
    else:
        status = Status.INFRA_ERROR
    return {**record, "status": status.value, "error": error}
