"""Every metric of our own suites that compares a result file with a gold file, fed the real files:
the gold file against itself scores 1.0, the task's start file (or no file) against the gold 0.0."""
from __future__ import annotations

from pathlib import Path

import pytest

from desktop_env.registry import METRICS
from desktop_env.tasks import load_tasks_from_index

ROOT = Path(__file__).resolve().parents[2]
INDEX = ROOT / "evaluation_examples/test_all.json"


def _file_comparisons():
    """(id, metric, gold path, start path or None, options) for each metric whose expected side is a task file."""
    out = []
    for task in load_tasks_from_index(INDEX):
        ev = task.evaluator
        if ev is None:
            continue
        copies = {s.params.get("dest"): s.params.get("src") for s in task.config
                  if s.name == "copyfile_from_host_to_guest"}
        for i, name in enumerate(ev.funcs):
            expected, result = ev.expecteds[i], ev.results[i]
            if expected is None or expected.type != "local_file":
                continue
            start = copies.get(result.fields.get("path")) if result is not None else None
            gold = task.resolve_path(expected.fields["path"])
            out.append(pytest.param(name, gold, None if start is None else task.resolve_path(start), ev.options[i],
                                    id=f"{task.id[:8]}-{i}-{name}"))
    return out


COMPARISONS = _file_comparisons()


def test_our_suites_have_file_comparisons():
    assert len(COMPARISONS) >= 10


@pytest.mark.parametrize("metric,gold,start,options", COMPARISONS)
def test_gold_scores_one_against_itself_and_the_start_state_zero(metric, gold, start, options):
    func = METRICS[metric]
    assert func(gold, gold, **options) == 1.0, f"{metric}: the gold file {gold} does not match itself"
    assert func(start, gold, **options) == 0.0, f"{metric}: the start state {start} already passes"
