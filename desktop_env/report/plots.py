"""Report plots (matplotlib, PNG): success by app and category, durations, steps, failure kinds; runs side by side."""
from __future__ import annotations

import logging
from pathlib import Path

from desktop_env.report.results import FAILURE_KINDS, TaskResult

logger = logging.getLogger(__name__)


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")  # files only: no display, no GUI toolkit
    import matplotlib.pyplot as plt

    return plt


def _grouped_bars(path: Path, title: str, ylabel: str, groups: list[str], runs: list[str],
                  values: dict[tuple[str, str], float], ylim: tuple | None = None) -> Path:
    """Bars per group, one colour per run, side by side."""
    plt = _pyplot()
    width = 0.8 / max(1, len(runs))
    fig, ax = plt.subplots(figsize=(max(6.0, 1.1 * len(groups) * max(1, len(runs)) ** 0.5 + 2), 4.2))
    for i, run in enumerate(runs):
        xs = [g + (i - (len(runs) - 1) / 2) * width for g in range(len(groups))]
        ys = [values.get((run, grp), 0.0) for grp in groups]
        bars = ax.bar(xs, ys, width, label=run)
        ax.bar_label(bars, labels=[f"{y:.2g}" for y in ys], fontsize=7, padding=1)
    ax.set_xticks(range(len(groups)), [g.replace("_", " ") for g in groups], rotation=25, ha="right", fontsize=8)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    if ylim:
        ax.set_ylim(*ylim)
    if len(runs) > 1:
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def _success_by(results, attr, path, title):
    runs = sorted({r.run for r in results})
    groups = sorted({getattr(r, attr) for r in results})
    values = {}
    for run in runs:
        for g in groups:
            rs = [r for r in results if r.run == run and getattr(r, attr) == g]
            if rs:
                values[(run, g)] = sum(r.success for r in rs) / len(rs)
    return _grouped_bars(path, title, "success rate", groups, runs, values, ylim=(0, 1.1))


def _distribution(results, attr, path, title, xlabel):
    plt = _pyplot()
    runs = sorted({r.run for r in results})
    data = [[getattr(r, attr) for r in results if r.run == run and getattr(r, attr) is not None] for run in runs]
    fig, ax = plt.subplots(figsize=(6.5, 4.2))
    if any(data):
        ax.hist([d for d in data], bins=min(20, max(3, max(len(d) for d in data))), label=runs)
        if len(runs) > 1:
            ax.legend(fontsize=8)
    else:
        ax.text(0.5, 0.5, "no data", ha="center", va="center", transform=ax.transAxes)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("tasks")
    ax.set_title(title)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def _failures(results, path):
    runs = sorted({r.run for r in results})
    values = {(run, k): float(sum(1 for r in results if r.run == run and r.status == k))
              for run in runs for k in FAILURE_KINDS}
    return _grouped_bars(path, "Failure kinds (task count)", "tasks", list(FAILURE_KINDS), runs, values)


def write_plots(results: list[TaskResult], out_dir: Path) -> dict[str, Path]:
    """Write every plot into ``out_dir``; returns name -> file."""
    out_dir.mkdir(parents=True, exist_ok=True)
    plots = {
        "success_by_app": _success_by(results, "domain", out_dir / "success_by_app.png", "Success rate by app"),
        "success_by_category": _success_by(results, "category", out_dir / "success_by_category.png",
                                           "Success rate by category"),
        "durations": _distribution(results, "duration_s", out_dir / "durations.png", "Task durations",
                                   "duration (s)"),
        "steps": _distribution(results, "steps", out_dir / "steps.png", "Steps per task", "steps"),
        "failures": _failures(results, out_dir / "failures.png"),
    }
    logger.info("wrote %d plots to %s", len(plots), out_dir)
    return plots
