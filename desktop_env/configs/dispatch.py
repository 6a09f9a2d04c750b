"""The setup dispatcher: runs ``config``/``postconfig`` steps of either spelling; fills CONFIG_DISPATCH."""
from __future__ import annotations

import inspect
import logging
import time

import desktop_env.configs.accounts  # noqa: F401  (the four imports fill SETUP_STEPS before it is mirrored below)
import desktop_env.configs.browser  # noqa: F401
import desktop_env.configs.steps  # noqa: F401
import desktop_env.configs.webui  # noqa: F401
from desktop_env.errors import GuestServerError
from desktop_env.session import AccountRequired, NotSupportedError, SetupContext, SetupError
from desktop_env.registry import CONFIG_DISPATCH, SETUP_STEPS, Entry
from desktop_env.tasks import SPELLING_FUNC, StepSpec

logger = logging.getLogger(__name__)


def _adapter(entry: Entry):
    """A CONFIG_DISPATCH function ``f(task=, agent=, **arguments)`` calling the setup step ``step(agent, **arguments)``.

    ``agent`` is the :class:`SetupContext` (the VM handle); ``task`` is the TaskSpec.
    """
    step = entry.func

    def adapter(task, agent: SetupContext, **arguments):
        return step(agent, **arguments)
    params = list(inspect.signature(step).parameters.values())[1:]
    kw = inspect.Parameter.KEYWORD_ONLY
    adapter.__signature__ = inspect.Signature(
        [inspect.Parameter("task", kw), inspect.Parameter("agent", kw)]
        + [p.replace(kind=kw) if p.kind in (p.POSITIONAL_OR_KEYWORD, p.POSITIONAL_ONLY) else p for p in params])
    adapter.__name__ = entry.name
    adapter.__qualname__ = f"config_dispatch.{entry.name}"
    adapter.__doc__ = f"func/arguments form of the setup step {entry.name!r}: {step.__doc__ or ''}".strip()
    return adapter


# Every setup step is also reachable from the func/arguments spelling, through one thin adapter each.
for _name, _entry in sorted(SETUP_STEPS.entries.items()):
    CONFIG_DISPATCH.register(_name, status=_entry.status, note=_entry.note,
                             host_paths=_entry.host_paths)(_adapter(_entry))


def _accepted(entry: Entry, params: dict, name: str) -> dict:
    if entry.accepted is None:
        return dict(params)
    dropped = [k for k in params if k not in entry.accepted]
    if dropped:
        logger.warning("%s: ignoring parameters it does not take: %s", name, dropped)
    return {k: v for k, v in params.items() if k in entry.accepted}


def run_step(ctx: SetupContext, step: StepSpec):
    """Run one setup step (either spelling) and return what it returns.

    Raises:
        SetupError: the step failed (its subclasses say why: account, tool not in image, ...).
        desktop_env.registry.UnknownNameError: an unknown name (only for tasks built unvalidated).
    """
    started = time.monotonic()
    if step.spelling == SPELLING_FUNC:
        entry = CONFIG_DISPATCH.get(step.name)
        out = entry.func(task=ctx.task, agent=ctx, **_accepted(entry, step.params, step.name))
    else:
        entry = SETUP_STEPS.get(step.name)
        out = entry.func(ctx, **_accepted(entry, step.params, step.name))
    logger.info("setup step %s done in %.1f s", step.name, time.monotonic() - started)
    return out


def run_steps(ctx: SetupContext, steps: list[StepSpec], phase: str = "config") -> None:
    """Run steps in order; the first failure stops the sequence.

    Raises:
        SetupError: the failing step's error, with ``where`` set to ``phase[i]`` (other
            exceptions are wrapped in a SetupError chained to them).
    """
    for i, step in enumerate(steps):
        where = f"{phase}[{i}]"
        ctx.state["step_where"] = where  # for steps whose failure shows later (a launched program that dies)
        try:
            run_step(ctx, step)
        except SetupError as exc:
            exc.where = where  # keep the subclass (AccountRequired, ToolNotInImage, ...) for the caller
            exc.add_note(f"in {where} ({step.name}) of task {ctx.task.id}")
            raise
        except Exception as exc:
            err = SetupError(f"{where} failed: {exc}", step=step.name)
            err.where = where
            raise err from exc


def run_postconfig(ctx: SetupContext, steps: list[StepSpec], phase: str = "evaluator.postconfig") -> list[str]:
    """Run an evaluator's postconfig steps as the suites' harnesses do: a step that fails is recorded and the
    next one runs, so the state the agent left is still scored (an agent that saved its file and closed the
    application scores on the saved file although the postconfig's ``activate_window`` finds no window).

    Returns:
        one line per failed step (``evaluator.postconfig[0] (activate_window): ...``), empty when all ran.

    Raises:
        NotSupportedError, AccountRequired: a step that cannot run here at all (a tool not in the image, an
            account), as in ``config``.
        GuestServerError: the in-VM server did not answer (an infrastructure failure, not the step's).
    """
    failures = []
    for i, step in enumerate(steps):
        where = f"{phase}[{i}]"
        try:
            run_step(ctx, step)
        except (NotSupportedError, AccountRequired):
            raise
        except GuestServerError as exc:
            if exc.status is None:
                raise
            failures.append(f"{where} ({step.name}): {exc}")
        except SetupError as exc:
            failures.append(f"{where} ({step.name}): {exc}")
        else:
            continue
        logger.warning("task %s: %s failed; scoring goes on: %s", ctx.task.id, where, failures[-1])
    return failures


def run_config(ctx: SetupContext) -> None:
    """Run the task's ``config`` steps (the episode's setup), then check that no program they launched has
    died (:func:`desktop_env.configs.setup_watch.check_launched`).

    Raises:
        SetupError: a step failed, or a launched program exited with an error during the setup.
    """
    from desktop_env.configs.setup_watch import check_launched

    run_steps(ctx, ctx.task.config, "config")
    try:
        check_launched(ctx)
    except SetupError as exc:
        exc.add_note(f"in {exc.where} (launch) of task {ctx.task.id}")
        raise
