"""The evaluator driver: postconfig, getters, metrics and their combination into one score in [0, 1] with its reason."""
from __future__ import annotations

import logging
import math
import traceback
from pathlib import Path
from typing import Any, Callable

from desktop_env.session import NotSupportedError, SetupContext, SetupError
from desktop_env.configs.dispatch import run_postconfig
from desktop_env.errors import DesktopEnvError, EvaluatorError, TaskConfigError
from desktop_env.limits import TimeLimitExceeded
from desktop_env.evaluators.metrics.utils import MetricError
from desktop_env.evaluators.reasons import (GAVE_UP, INFEASIBLE, MISSING_RESULT, PASSED, UNEXPLAINED, Reason,
                                            collecting, explain, first_failure)
from desktop_env.registry import EVAL_DISPATCH, GETTERS, METRICS, Entry
from desktop_env.tasks import EvaluatorSpec, GetterSpec, TaskSpec

logger = logging.getLogger(__name__)


class Verdict(float):
    """A score in [0, 1] (it is the float) with the reason that decided it (``.reason``).

    ``evaluate`` returns one, so callers that want a number keep using it as a float; the reason
    never rides inside a float through the evaluator, which carries both explicitly.
    ``postconfig_errors`` lists the evaluator's postconfig steps that failed before scoring (each
    recorded, none stopping the scoring).
    """

    reason: Reason
    postconfig_errors: list[str]

    def __new__(cls, score: float, reason: Reason, postconfig_errors: list[str] | None = None):
        self = super().__new__(cls, score)
        self.reason = reason
        self.postconfig_errors = list(postconfig_errors or [])
        return self

    @property
    def score(self) -> float:
        return float(self)

    def __repr__(self) -> str:
        return f"Verdict({float(self)!r}, {self.reason!r})"

    def to_json(self) -> dict:
        """``{"score", "reason": {...}}``."""
        return {"score": float(self), "reason": self.reason.to_json()}


def verdict_of(name: str, score: float, noted: list[Reason], index: int | None = None) -> Verdict:
    """The verdict of one metric that scored ``score`` with the reasons ``noted`` while it ran.

    A score of 1 is ``passed`` (with the metric's own PASSED note when it made one); a lower score
    takes the first failure noted, or ``unexplained`` when the metric said nothing.
    """
    if score >= 1.0:
        note = next((r for r in noted if r.kind == PASSED), None)
        return Verdict(score, (note or Reason(PASSED, "every check held")).about(name, index))
    reason = first_failure(noted) or Reason(UNEXPLAINED, f"scored {score:g} and gave no reason")
    return Verdict(score, reason.about(name, index))


def judge(name: str, func: Callable, /, *args, **kwargs) -> Verdict:
    """Call a grader (a metric, or any function that returns a score) and return its verdict.

    The one way a score and its reason are read together outside the evaluator: tests and scripts
    call ``judge("compare_table", compare_table, result, expected, rules=...)``.
    """
    with collecting() as noted:
        score = clamp_score(func(*args, **kwargs))
    return verdict_of(name, score, noted)


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
    return float(combine_verdicts([Verdict(s, Reason(PASSED if s >= 1 else UNEXPLAINED, "-")) for s in scores], conj))


def combine_verdicts(verdicts: list[Verdict], conj: str = "and") -> Verdict:
    """The scores combined as :func:`combine` says, with the reason of the metric that decided.

    ``and``: a 0 decides (the first one); else the mean, explained by the lowest-scoring metric
    (every metric's pass when all scored 1). ``or``: a 1 decides (the first one); else the max,
    explained by the best-scoring metric, whose text says that no alternative held.
    """
    if not verdicts:
        return Verdict(0.0, Reason(UNEXPLAINED, "the evaluator has no metric"))
    if len(verdicts) == 1:
        return verdicts[0]
    if conj == "or":
        won = next((v for v in verdicts if v >= 1.0), None)
        if won is not None:
            return Verdict(1.0, won.reason)
        best = max(verdicts, key=float)
        return Verdict(float(best), Reason(best.reason.kind, f"none of the {len(verdicts)} alternatives held; the "
                                                             f"closest: {best.reason}"))
    zero = next((v for v in verdicts if v <= 0.0), None)
    if zero is not None:
        return Verdict(0.0, zero.reason)
    mean = sum(map(float, verdicts)) / len(verdicts)
    if mean >= 1.0:
        return Verdict(mean, Reason(PASSED, f"all {len(verdicts)} metrics held"))
    return Verdict(mean, min(verdicts, key=float).reason)


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
    metrics score 0, and the log says why; a named time limit expiring (the guest or its Chromium did
    not answer in time) says nothing of the result, so it is not scored (EvaluatorError). On the
    expected side such a failure propagates (it is the task's fault, not the agent's). A getter that
    cannot run at all (account, tool not in image, a task file that is missing) always propagates.

    Raises:
        EvaluatorError: the getter raised something other than a fetch failure (a bug in it), or ran past
            a named time limit.
    """
    if spec is None:
        return None
    entry = GETTERS.get(spec.type)
    try:
        return entry.func(ctx, **_kwargs(entry, spec.fields))
    except (NotSupportedError, TaskConfigError, SetupError):
        raise
    except TimeLimitExceeded as exc:  # the guest did not answer in time: nothing is known of the result
        raise EvaluatorError(f"getter {spec.type} ({side})", exc, _traceback_tail()) from exc
    except (OSError, DesktopEnvError) as exc:  # the thing to fetch is missing or unreadable
        if side == "expected":
            raise
        logger.warning("result getter %s failed (scored as missing): %s", spec.type, exc)
        explain(MISSING_RESULT, f"the result getter {spec.type} could not fetch it: {exc}")
        return None
    except Exception as exc:
        raise EvaluatorError(f"getter {spec.type} ({side})", exc, _traceback_tail()) from exc


def _call_metric(name: str, entry: Entry, where: str, spec: TaskSpec, /, *args, **kwargs) -> float:
    """Call a metric (or a whole evaluator) and clamp its score; its errors become task or evaluator errors.

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
    where = spec.fields.get("path") or spec.fields.get("file") or spec.fields.get("dest")
    if result is None:
        return f"the result getter {spec.type} found nothing" + (f" at {where}" if isinstance(where, str) else "")
    if isinstance(result, Path) and not result.is_file():
        return f"the result {result} is {'a folder' if result.is_dir() else 'missing'}, not a file"
    return None


def _preview(value: Any, limit: int = 300) -> str:
    """A short one-line view of a getter's result for the log (text results are what tasks print)."""
    text = value if isinstance(value, str) else str(value) if isinstance(value, Path) else repr(value)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit] + "..."


def _evaluate_metrics(ev: EvaluatorSpec, ctx: SetupContext) -> Verdict:
    verdicts = []
    for i, name in enumerate(ev.funcs):
        entry = METRICS.get(name)
        where = f"evaluator.options[{i}]" if ev.listed else "evaluator.options"
        with collecting() as noted:  # the getters' reasons (a missing file) and the metric's
            result = run_getter(ctx, ev.results[i], "result")
            expected = run_getter(ctx, ev.expecteds[i], "expected")
            missing = _missing_result(ev.results[i], result)
            if missing:
                logger.warning("metric %s: %s; it scores 0", name, missing)
                explain(MISSING_RESULT, missing)
            score = _call_metric(name, entry, where, ctx.task, result, expected, **_kwargs(entry, ev.options[i]))
        verdict = verdict_of(name, score, noted, i if len(ev.funcs) > 1 else None)
        logger.info("metric %s -> %.3f (%s; result: %s)", name, score, verdict.reason, _preview(result))
        verdicts.append(verdict)
        # short-circuit as the format defines: a 0 under "and" or a 1 under "or" decides
        if ev.conj == "and" and score <= 0.0:
            return verdict
        if ev.conj == "or" and score >= 1.0:
            return verdict
    return combine_verdicts(verdicts, ev.conj)


def evaluate(task: TaskSpec, ctx: SetupContext, last_action: Any = None) -> Verdict:
    """Score the state the agent left in the VM, and say why.

    Infeasible tasks score 1 only when the last action was FAIL. A feasible task whose agent
    ended with FAIL scores 0 without running anything. Otherwise the evaluator's
    ``postconfig`` runs through the setup dispatcher, then each metric scores its getters'
    results, combined by ``conj``; the func/arguments spelling calls its EVAL_DISPATCH entry.

    Args:
        task: the task.
        ctx: the session context (VM controller, cache folder).
        last_action: the agent's last action (a string or a ``{"action_type": ...}`` dict).

    Returns:
        a :class:`Verdict`: the score in [0, 1] (a float) and ``.reason``, the reason of the
        metric that decided it (see :mod:`desktop_env.evaluators.reasons`).

    Raises:
        SetupError: a postconfig step or a getter cannot run here (account, missing tool); a postconfig
            step that fails otherwise is recorded in the verdict's ``postconfig_errors`` and scoring goes on.
        TaskConfigError: the expected side names a task file that is missing, or a metric
            rejected its options or the expected file.
        EvaluatorError: a metric or getter raised anything else (a grader bug: the harness
            records ``evaluator_error``, not a score).
    """
    failed = is_fail(last_action)
    if task.infeasible:
        if failed:
            return Verdict(1.0, Reason(PASSED, "the task is infeasible and the agent answered FAIL"))
        return Verdict(0.0, Reason(INFEASIBLE, f"the task is infeasible, and the agent's last action was "
                                               f"{_action_name(last_action)}, not FAIL"))
    if failed:
        return Verdict(0.0, Reason(GAVE_UP, "the agent answered FAIL, but the task can be done"))
    if task.evaluation is not None:
        name = task.evaluation.name
        entry = EVAL_DISPATCH.get(name)
        with collecting() as noted:
            score = _call_metric(name, entry, "evaluation.arguments", task, task=task, agent=ctx,
                                 **_kwargs(entry, task.evaluation.params))
        verdict = verdict_of(name, score, noted)
        logger.info("evaluation %s -> %.3f (%s)", name, score, verdict.reason)
        return verdict
    ev = task.evaluator
    failed_steps = run_postconfig(ctx, ev.postconfig) if ev.postconfig else []
    verdict = _evaluate_metrics(ev, ctx)
    return Verdict(float(verdict), verdict.reason, failed_steps) if failed_steps else verdict


def _action_name(action: Any) -> str:
    """A last action for a reason: its type, or None when the agent never acted."""
    if action is None:
        return "none (the agent never acted)"
    if isinstance(action, dict):
        return str(action.get("action_type") or "an action")
    text = " ".join(str(action).split())
    return repr(text if len(text) <= 60 else text[:57] + "...")
