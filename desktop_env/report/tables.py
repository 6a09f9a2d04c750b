"""Summary tables of task results (per task, app, category, guidance, failure kind) and their CSV files."""
from __future__ import annotations

import csv
import statistics
from collections import OrderedDict
from pathlib import Path
from typing import Callable

from desktop_env.report.results import FAILURE_KINDS, TaskResult

TASK_COLUMNS = ["run", "model", "action_space", "observation_type", "domain", "task_id", "trial", "category",
                "guidance", "interface", "status", "score", "reason_kind", "reason", "steps", "duration_s", "attempts",
                "failure_kind", "error"]
GROUP_COLUMNS = ["run", "{group}", "tasks", "successes", "success_rate", "mean_score", "mean_steps",
                 "mean_duration_s"] + [f"n_{k}" for k in FAILURE_KINDS]
FAILURE_COLUMNS = ["run", "failure_kind", "count", "share", "example_tasks"]


def _mean(values: list) -> float | None:
    values = [v for v in values if v is not None]
    return round(statistics.fmean(values), 4) if values else None


def task_rows(results: list[TaskResult]) -> list[dict]:
    """One row per task result (per trial)."""
    rows = []
    for r in results:
        rows.append({"run": r.run, "model": r.model, "action_space": r.action_space,
                     "observation_type": r.observation_type, "domain": r.domain, "task_id": r.task_id,
                     "trial": r.trial, "category": r.category, "guidance": r.guidance, "interface": r.interface,
                     "status": r.status, "score": r.score, "reason_kind": r.reason.kind if r.reason else "",
                     "reason": str(r.reason) if r.reason else "", "steps": r.steps, "duration_s": r.duration_s,
                     "attempts": r.attempts, "failure_kind": r.failure_kind, "error": r.error or ""})
    return rows


def group_rows(results: list[TaskResult], group: str, key: Callable[[TaskResult], str]) -> list[dict]:
    """Aggregates per (run, key(result)): counts, success rate (successes / tasks), mean
    score, steps and duration, and the count of each failure kind."""
    buckets: "OrderedDict[tuple, list[TaskResult]]" = OrderedDict()
    for r in sorted(results, key=lambda r: (r.run, key(r))):
        buckets.setdefault((r.run, key(r)), []).append(r)
    rows = []
    for (run, value), rs in buckets.items():
        n_ok = sum(r.success for r in rs)
        row = {"run": run, group: value, "tasks": len(rs), "successes": n_ok,
               "success_rate": round(n_ok / len(rs), 4), "mean_score": _mean([r.score for r in rs]),
               "mean_steps": _mean([r.steps for r in rs]), "mean_duration_s": _mean([r.duration_s for r in rs])}
        for kind in FAILURE_KINDS:
            row[f"n_{kind}"] = sum(r.status == kind for r in rs)
        rows.append(row)
    return rows


def failure_rows(results: list[TaskResult], examples: int = 3) -> list[dict]:
    """Per run and failure kind: the count, its share of the run's tasks and a few example tasks."""
    rows = []
    runs = sorted({r.run for r in results})
    for run in runs:
        rs = [r for r in results if r.run == run]
        for kind in FAILURE_KINDS:
            hit = [r for r in rs if r.status == kind]
            if not hit:
                continue
            rows.append({"run": run, "failure_kind": kind, "count": len(hit), "share": round(len(hit) / len(rs), 4),
                         "example_tasks": " ".join(f"{r.domain}/{r.task_id}" for r in hit[:examples])})
    return rows


def overall_rows(results: list[TaskResult]) -> list[dict]:
    """One row per run: the whole run's aggregates."""
    return group_rows(results, "scope", lambda r: "all")


def all_tables(results: list[TaskResult]) -> dict[str, tuple[list[str], list[dict]]]:
    """Every table the report writes: file stem -> (columns, rows)."""
    def cols(group):
        return [c.format(group=group) for c in GROUP_COLUMNS]

    return {
        "tasks": (TASK_COLUMNS, task_rows(results)),
        "overall": (cols("scope"), overall_rows(results)),
        "by_app": (cols("app"), group_rows(results, "app", lambda r: r.domain)),
        "by_category": (cols("category"), group_rows(results, "category", lambda r: r.category)),
        "by_guidance": (cols("guidance"), group_rows(results, "guidance", lambda r: r.guidance)),
        "failures": (FAILURE_COLUMNS, failure_rows(results)),
    }


def write_csv(path: Path, columns: list[str], rows: list[dict]) -> Path:
    """Write ``rows`` with a header; None becomes an empty cell."""
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=columns, extrasaction="ignore")
        w.writeheader()
        for row in rows:
            w.writerow({k: ("" if v is None else v) for k, v in row.items()})
    return path
