"""Name checks of a task: every setup step, getter and metric it names exists in its registry, with
the fields it needs, option values its ``check`` accepts, and the task files it names on disk."""
from __future__ import annotations

from typing import TYPE_CHECKING

from desktop_env.errors import DesktopEnvError
from desktop_env.tasks.common import (SPELLING_FUNC, is_remote_url, runtime_cache_part, task_error,
                                      values_at)

if TYPE_CHECKING:
    from desktop_env.tasks.spec import StepSpec, TaskSpec


def check_names(task: "TaskSpec") -> None:
    """Resolve every setup step, getter and metric name and check their fields.

    Raises:
        TaskConfigError: an unknown name (with did-you-mean), a missing required field, or
            a task file named by relative path that does not exist.
    """
    from desktop_env import registry as reg

    for i, step in enumerate(task.config):
        _check_step(task, step, f"config[{i}]")
    if task.evaluator is not None:
        ev = task.evaluator
        for i, step in enumerate(ev.postconfig):
            _check_step(task, step, f"evaluator.postconfig[{i}]")
        for i, name in enumerate(ev.funcs):
            where = f"[{i}]" if ev.listed else ""
            entry = reg.METRICS.get(name, path=task.path, field=f"evaluator.func{where}")
            _check_fields(task, entry, ev.options[i], f"evaluator.options{where}", "option", strict=True)
            _check_values(task, entry, ev.options[i], f"evaluator.options{where}")
            for key, getters in (("result", ev.results), ("expected", ev.expecteds)):
                g = getters[i]
                if g is None:
                    continue
                gentry = reg.GETTERS.get(g.type, path=task.path, field=f"evaluator.{key}{where}.type")
                _check_fields(task, gentry, g.fields, f"evaluator.{key}{where}", "field")
                _check_values(task, gentry, g.fields, f"evaluator.{key}{where}")
                _check_host_paths(task, gentry, g.fields, f"evaluator.{key}{where}")
    if task.evaluation is not None:
        entry = reg.EVAL_DISPATCH.get(task.evaluation.name, path=task.path, field="evaluation.func")
        _check_fields(task, entry, task.evaluation.params, "evaluation.arguments", "argument")
        _check_values(task, entry, task.evaluation.params, "evaluation.arguments")
        _check_host_paths(task, entry, task.evaluation.params, "evaluation.arguments")


def _check_step(task: "TaskSpec", step: "StepSpec", where: str) -> None:
    from desktop_env import registry as reg

    if step.spelling == SPELLING_FUNC:
        entry = reg.CONFIG_DISPATCH.get(step.name, path=task.path, field=f"{where}.func")
        key = "arguments"
    else:
        entry = reg.SETUP_STEPS.get(step.name, path=task.path, field=f"{where}.type")
        key = "parameters"
    _check_fields(task, entry, step.params, f"{where}.{key}", "parameter")
    _check_values(task, entry, step.params, f"{where}.{key}")
    _check_host_paths(task, entry, step.params, f"{where}.{key}")


def _check_fields(task: "TaskSpec", entry, fields: dict, where: str, what: str, strict: bool = False) -> None:
    """Required fields present; unknown ones warn, or (``strict``, metric options) fail: an
    option the metric does not take would silently change what it scores."""
    missing = entry.missing_fields(fields)
    if missing:
        raise task_error(f"{entry.name!r} needs {what} {missing[0]!r}", task.path, f"{where}.{missing[0]}")
    for name, close in entry.unknown_fields(fields):
        hint = f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
        if strict:
            raise task_error(f"{entry.name!r} does not take {what} {name!r}{hint} (it takes: "
                       f"{', '.join(entry.accepted) or 'none'})", task.path, f"{where}.{name}")
        task._warn(f"{entry.name!r} does not take {what} {name!r}, it will be ignored{hint}",
                   f"{where}.{name}")


def _check_values(task: "TaskSpec", entry, fields: dict, where: str) -> None:
    """Run the entry's own value check (e.g. every ``compare_table`` rule and match method)."""
    if entry.check is None:
        return
    try:
        entry.check(fields)
    except (ValueError, TypeError, DesktopEnvError) as exc:
        sub = getattr(exc, "field", None)
        message = str(exc)
        if sub and message.startswith(f"{sub}: "):
            message = message[len(sub) + 2:]
        raise task_error(f"{entry.name!r}: {message}", task.path, f"{where}.{sub}" if sub else where) from exc


def _check_host_paths(task: "TaskSpec", entry, fields: dict, where: str) -> None:
    for spec in entry.host_paths:
        for value, dotted in values_at(fields, spec, where):
            if not isinstance(value, str) or is_remote_url(value) or runtime_cache_part(value) is not None:
                continue  # URLs are fetched, cache/ files are made during the run
            if task.settings_template(value) is not None:  # the user's account settings, from its template
                if value not in task.settings_needed:
                    task.settings_needed.append(value)
                continue
            task.resolve_path(value, field_=dotted)
