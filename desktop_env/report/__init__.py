"""Reports of agent runs: CSV summaries, plots, failure profile, annotated screenshots and a static HTML site."""
from __future__ import annotations

import logging
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from desktop_env.report.results import (FAILURE_KINDS, STATUSES, ResultsError, Step, TaskResult, load_results,
                                        load_runs)

__all__ = ["FAILURE_KINDS", "STATUSES", "Report", "ResultsError", "Step", "TaskResult", "build_report",
           "load_results", "load_runs"]

logger = logging.getLogger(__name__)


@dataclass
class Report:
    """What ``build_report`` wrote: the output folder, the index page, CSV and plot files."""

    out_dir: Path
    index: Path
    csv: dict[str, Path] = field(default_factory=dict)
    plots: dict[str, Path] = field(default_factory=dict)
    task_pages: dict[str, Path] = field(default_factory=dict)
    results: list[TaskResult] = field(default_factory=list)


def build_report(result_dirs: list[str | os.PathLike], out_dir: str | os.PathLike,
                 tasks_root: str | os.PathLike | None = None) -> Report:
    """Read one or more results folders and write the whole report into ``out_dir``.

    Layout: ``index.html``, ``assets/`` (CSS, plots), ``csv/`` (tasks, overall, by_app,
    by_category, by_guidance, failures) and ``tasks/<key>.html`` with the annotated
    screenshots and recording of each task in ``tasks/<key>/``. Every link is relative,
    so the folder opens from disk (file://) and can be moved or archived whole.

    Args:
        result_dirs: the ``--result_dir`` of each run; several are compared side by side.
        out_dir: where to write (created; previous report files there are replaced).
        tasks_root: a suite root (e.g. ``evaluation_examples``) to read tags, apps and
            instructions from when the results do not carry them.

    Raises:
        ResultsError: a results folder is missing, empty or holds a malformed status.json.
    """
    from desktop_env.report import html, plots, tables

    out = Path(out_dir)
    results = load_runs(list(result_dirs), tasks_root=tasks_root, exclude=out)
    out.mkdir(parents=True, exist_ok=True)
    for stale in ("tasks", "csv", "assets"):
        shutil.rmtree(out / stale, ignore_errors=True)
    report = Report(out_dir=out, index=out / "index.html", results=results)
    all_tables = tables.all_tables(results)
    (out / "csv").mkdir(parents=True)
    for stem, (cols, rows) in all_tables.items():
        report.csv[stem] = tables.write_csv(out / "csv" / f"{stem}.csv", cols, rows)
    html.write_css(out)
    report.plots = plots.write_plots(results, out / "assets")
    for i, r in enumerate(results, 1):
        report.task_pages[r.key] = html.write_task_page(r, out)
        if i % 20 == 0:
            logger.info("task pages: %d/%d", i, len(results))
    html.write_index(results, all_tables, report.plots, out, [str(d) for d in result_dirs])
    logger.info("report for %d task results written to %s", len(results), report.index)
    return report
