"""The evaluator driver: postconfig, getters, metrics and their combination into one score in [0, 1]."""
from __future__ import annotations

import logging
import math
import traceback
from pathlib import Path
from typing import Any

from desktop_env.session import NotSupportedError, SetupContext, SetupError
from desktop_env.configs.dispatch import run_steps
from desktop_env.errors import DesktopEnvError, EvaluatorError, TaskConfigError
from desktop_env.evaluators.metrics.utils import MetricError
from desktop_env.registry import EVAL_DISPATCH, GETTERS, METRICS, Entry
from desktop_env.tasks import EvaluatorSpec, GetterSpec, TaskSpec

logger = logging.getLogger(__name__)



def is_fail(action: Any) -> bool:
    """Whether an agent action is FAIL (``"FAIL"`` or ``{"action_type": "FAIL"}``)."""
    if isinstance(action, dict):
        action = action.get("action_type")
    return isinstance(action, str) and action.strip().upper() == "FAIL"


def clamp_score(value: Any) -> float:
    """A metric's return value as a float in [0, 1] (None and NaN give 0)."""
    if value is None:
        return 0.0
    try:
        x = float(value)
    except (TypeError, ValueError):
        logger.warning("metric returned a non-number %r; scored 0", value)
        return 0.0
    if math.isnan(x):
        return 0.0
    return min(1.0, max(0.0, x))


def combine(scores: list[float], conj: str = "and") -> float:
    """``and``: any 0 gives 0, else the mean; ``or``: any 1 gives 1, else the max."""
    if not scores:
        return 0.0
    if conj == "or":
        return 1.0 if any(s >= 1.0 for s in scores) else max(scores)
    return 0.0 if any(s <= 0.0 for s in scores) else sum(scores) / len(scores)


def _kwargs(entry: Entry, fields: dict) -> dict:
    if entry.accepted is None:
        return dict(fields)
    return {k: v for k, v in fields.items() if k in entry.accepted}


def _traceback_tail(limit: int = 25) -> str:
    """The last ``limit`` lines of the exception being handled."""
    return "".join(traceback.format_exc().splitlines(keepends=True)[-limit:])


def run_getter(ctx: SetupContext, spec: GetterSpec | None, side: str = "result") -> Any:
    """Run one getter; None for no getter.

    On the result side a failure to fetch (missing file, VM or cloud error) gives None, which
    metrics score 0, and the log says why. On the expected side such a failure propagates
    (it is the task's fault, not the agent's). A getter that cannot run at all (account,
    tool not in image, a task file that is missing) always propagates.

    Raises:
        EvaluatorError: the getter raised something other than a fetch failure (a bug in it).
    """
    if spec is None:
        return None
    entry = GETTERS.get(spec.type)
    try:
        return entry.func(ctx, **_kwargs(entry, spec.fields))
    except (NotSupportedError, TaskConfigError, SetupError):
        raise
    except (OSError, DesktopEnvError) as exc:  # the thing to fetch is missing or unreadable
        if side == "expected":
            raise
        logger.warning("result getter %s failed (scored as missing): %s", spec.type, exc)
        return None
    except Exception as exc:
        raise EvaluatorError(f"getter {spec.type} ({side})", exc, _traceback_tail()) from exc


def _call_metric(name: str, entry: Entry, where: str, spec: TaskSpec, /, *args, **kwargs) -> float:
    """Call a metric (or a whole evaluator); its errors become task or evaluator errors.

    Raises:
        TaskConfigError: the metric rejected its options or the expected side (``MetricError``).
        EvaluatorError: any other exception (a grader bug).
    """
    try:
        return clamp_score(entry.func(*args, **kwargs))
    except MetricError as exc:
        raise TaskConfigError(f"{name}: {exc}", path=None if spec.path is None else str(spec.path),
                              field=where) from exc
    except (TaskConfigError, SetupError):
        raise
    except Exception as exc:
        raise EvaluatorError(f"metric {name}", exc, _traceback_tail()) from exc


def _missing_result(spec: GetterSpec | None, result: Any) -> str | None:
    """Why a result is missing or unreadable (what the log says about a 0), or None when it is there."""
    if spec is None:
        return None
    if result is None:
        return f"the result getter {spec.type} found nothing"
    if isinstance(result, Path) and not result.is_file():
        return f"the result {result} is {'a folder' if result.is_dir() else 'missing'}, not a file"
    return None


def _preview(value: Any, limit: int = 300) -> str:
    """A short one-line view of a getter's result for the log (text results are what tasks print)."""
    text = value if isinstance(value, str) else str(value) if isinstance(value, Path) else repr(value)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit] + "..."


def _evaluate_metrics(ev: EvaluatorSpec, ctx: SetupContext) -> float:
    scores = []
    for i, name in enumerate(ev.funcs):
        entry = METRICS.get(name)
        result = run_getter(ctx, ev.results[i], "result")
        expected = run_getter(ctx, ev.expecteds[i], "expected")
        where = f"evaluator.options[{i}]" if ev.listed else "evaluator.options"
        missing = _missing_result(ev.results[i], result)
        if missing:
            logger.warning("metric %s: %s; it scores 0", name, missing)
        score = _call_metric(name, entry, where, ctx.task, result, expected, **_kwargs(entry, ev.options[i]))
        logger.info("metric %s -> %.3f (result: %s)", name, score, _preview(result))
        scores.append(score)
        # short-circuit as the format defines: a 0 under "and" or a 1 under "or" decides
        if ev.conj == "and" and score <= 0.0:
            return 0.0
        if ev.conj == "or" and score >= 1.0:
            return 1.0
    return combine(scores, ev.conj)


def evaluate(task: TaskSpec, ctx: SetupContext, last_action: Any = None) -> float:
    """Score the state the agent left in the VM.

    Infeasible tasks score 1 only when the last action was FAIL. A feasible task whose agent
    ended with FAIL scores 0 without running anything. Otherwise the evaluator's
    ``postconfig`` runs through the setup dispatcher, then each metric scores its getters'
    results, combined by ``conj``; the func/arguments spelling calls its EVAL_DISPATCH entry.

    Args:
        task: the task.
        ctx: the session context (VM controller, cache folder).
        last_action: the agent's last action (a string or a ``{"action_type": ...}`` dict).

    Returns:
        a score in [0, 1].

    Raises:
        SetupError: postconfig failed, or a step/getter cannot run here (account, missing tool).
        TaskConfigError: the expected side names a task file that is missing, or a metric
            rejected its options or the expected file.
        EvaluatorError: a metric or getter raised anything else (a grader bug: the harness
            records ``evaluator_error``, not a score).
    """
    failed = is_fail(last_action)
    if task.infeasible:
        return 1.0 if failed else 0.0
    if failed:
        return 0.0
    if task.evaluation is not None:
        name = task.evaluation.name
        entry = EVAL_DISPATCH.get(name)
        return _call_metric(name, entry, "evaluation.arguments", task, task=task, agent=ctx,
                            **_kwargs(entry, task.evaluation.params))
    ev = task.evaluator
    if ev.postconfig:
        run_steps(ctx, ev.postconfig, "evaluator.postconfig")
    return _evaluate_metrics(ev, ctx)
