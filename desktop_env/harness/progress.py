"""What a run reports as its tasks start and end, and the statuses it reads back after its workers stopped: shared
by the local workers' loop (:mod:`desktop_env.harness.suite`) and the Ray cluster's (:mod:`desktop_env.harness.ray_jobs`)."""
from __future__ import annotations

import logging

from desktop_env.harness.config import RunConfig
from desktop_env.harness.jobs import Job
from desktop_env.harness.status import UnreadableStatus, read_status

log = logging.getLogger(__name__)


def progress_line(config: RunConfig, status: dict, finished: int, total: int, wins: int, elapsed: float) -> str:
    """The line a run reports when a task ends: counts, ETA, the task, its status, score and time."""
    s = status
    eta = elapsed / finished * (total - finished)
    score = f"{s['score']:.2f}" if s["score"] is not None else "-"
    trial = f" trial {s['trial']}" if config.trials > 1 else ""
    return (f"[{finished}/{total}] success {wins}/{finished} | ETA {eta / 60:.1f} min | "
            f"{s['domain']}/{s['task_id']}{trial}: {s['status']} {score} ({s['duration_s']:.0f} s)"
            + (f" {s['error'][:200]}" if s["error"] and s["status"] != "success" else ""))


def started_line(config: RunConfig, domain: str, task_id: str, trial: int) -> str:
    """The line a run reports when a task starts."""
    return f"started {domain}/{task_id}" + (f" trial {trial}" if config.trials > 1 else "")


def read_back(todo: list[Job], records: dict) -> None:
    """Add to ``records`` the statuses workers wrote after their last message (an interrupted run's)."""
    for job in todo:
        try:
            status = read_status(job.folder)
        except UnreadableStatus as exc:
            log.warning("%s", exc)
            continue
        if status is not None:
            records[job.key] = {**job.meta(), **status}
