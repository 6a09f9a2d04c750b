"""How an attempt ends: the statuses a task run can get, and which failures are the infrastructure's.

A final status is kept and never rerun; ``infra_error`` (the VM, the guest server, the model API or
the host's disk failed) is retried on a fresh VM and, when retries run out, left for the next run.
``task_error`` (the task is broken) and ``evaluator_error`` (the grader raised) carry no score and
stay out of the success rate, so neither looks like the agent's failure.
"""
from __future__ import annotations

import errno

#: Statuses a rerun does not repeat; ``infra_error`` is the only one it retries.
FINAL_STATUSES = ("success", "agent_fail", "wrong_result", "parse_error", "timeout", "task_error", "evaluator_error")
#: Final statuses that carry no score and stay out of the success rate: the task or its grader is at fault.
UNSCORED_STATUSES = ("task_error", "evaluator_error")
#: Every status a task run can have, in the order reports list them (all but ``success`` are failures).
STATUSES = ("success", "wrong_result", "agent_fail", "parse_error", "timeout", "infra_error", "task_error",
            "evaluator_error")
#: Host-side errors (full or read-only disk, I/O error) that are infrastructure failures, not task errors.
HOST_ERRNOS = (errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EIO)


class TaskTimeout(Exception):
    """The attempt ran past its ``task_timeout``."""


def classify(score: float, last_action_type: str | None, last_turn_parse_error: bool, feasible: bool) -> str:
    """The status of a scored episode.

    score 1 -> success; FAIL as the last action of a feasible task -> agent_fail; a lower
    score after a last turn whose reply did not parse -> parse_error; otherwise wrong_result.
    """
    if score >= 1.0:
        return "success"
    if last_action_type == "FAIL" and feasible:
        return "agent_fail"
    if last_turn_parse_error:
        return "parse_error"
    return "wrong_result"


def infra_errors() -> tuple[type, ...]:
    """Exception types that mean the infrastructure failed (retried on a fresh VM), not the task."""
    import requests

    from desktop_env.agents.llm import ModelAPIError
    from desktop_env.errors import GuestServerError, HostToolMissing, SnapshotError, VMError, VMLaunchError

    return (VMError, GuestServerError, VMLaunchError, SnapshotError, HostToolMissing, ModelAPIError,
            ConnectionError, requests.RequestException)
