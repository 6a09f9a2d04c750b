"""Building warm states: restore ``init_state``, run the state's recipe, wait until the desktop has
settled, save. The storage side (recipes, locks, commit) is :mod:`desktop_env.image.states`."""
from __future__ import annotations

import logging
import shutil
import tempfile
import time
from pathlib import Path

from desktop_env.errors import DesktopEnvError, SnapshotError
from desktop_env.envs.settle import SETTLE_PIXELS, changed_pixels, guest_busy, screen_pixels
from desktop_env.image.states import (StateRecipe, WarmState, commit_state, current_state, parse_snapshot,
                                      partial_dir, recipe_for, state_lock, state_recipes)

log = logging.getLogger(__name__)


def _classify(task, recipes: dict[str, StateRecipe]) -> tuple[str, str | None]:
    """How a task's ``snapshot`` resolves against an image's declared ``recipes``:
    ("init", None) names no state; ("state", name) a state the image has; ("bare-missing", name) a
    bare name it lacks (falls back to ``init_state``); ("strict-missing", name) a ``profile:state``
    it lacks (an error)."""
    profile, state = parse_snapshot(getattr(task, "snapshot", None))
    if state is None:
        return "init", None
    if state in recipes:
        return "state", state
    return ("bare-missing" if profile is None else "strict-missing"), state


def state_for_task(task, image) -> StateRecipe | None:
    """The recipe of the warm state a task's ``snapshot`` names in ``image``, or None (``init_state``).

    ``data:airflow`` names the state ``airflow`` (the task loader has checked that the profile
    declares it); a bare name such as ``airflow`` is a state when the image's profile declares
    one of that name, and otherwise falls back to ``init_state`` with a warning (suites written for
    other images name snapshots of their own).

    Raises:
        DesktopEnvError: a ``profile:state`` the image does not declare (the message lists its states).
    """
    recipes = state_recipes(image.profile)
    kind, state = _classify(task, recipes)
    if kind == "state":
        return recipes[state]
    if kind == "bare-missing":
        log.warning("task %s names the snapshot %r, which image %s (profile %s) does not have as a warm state "
                    "(it has: %s); starting from init_state", getattr(task, "id", "?"), state, image.name,
                    image.profile, ", ".join(sorted(recipes)) or "none")
    elif kind == "strict-missing":
        raise DesktopEnvError(f"task {getattr(task, 'id', '?')} needs the warm state {task.snapshot} and image "
                              f"{image.name} (profile {image.profile}) has none of that name; its states: "
                              f"{', '.join(sorted(recipes)) or 'none'}")
    return None


def check_without_warm_states(tasks, provider_name: str) -> list:
    """For a provider that cannot restore warm states: the tasks whose bare ``snapshot`` name only
    falls back to ``init_state`` there.

    Raises:
        DesktopEnvError: some task names a ``profile:state`` (it cannot run as written there); the
            message names the states and the provider to use.
    """
    named = [t for t in tasks if getattr(t, "warm_state", None)]
    strict = [t for t in named if ":" in t.snapshot]
    if strict:
        raise DesktopEnvError(f"{len(strict)} tasks start from a warm state "
                              f"({', '.join(sorted({t.snapshot for t in strict}))}) and the {provider_name} provider "
                              "cannot restore warm states (only the qemu provider can: a warm state is a saved RAM "
                              "file and disk layer of a local image); run them with the qemu provider")
    return named


def ensure_state(provider, name: str, recipe: StateRecipe | None = None, force: bool = False) -> WarmState:
    """The built, current warm state ``name`` of the provider's image, building it first when it is
    missing or stale (its recipe or image changed), or when ``force``.

    Building uses the provider's VM (it is restored to ``init_state`` first and is left at the new
    state; after a failed build, restore what you need) and takes as long as the recipe's tool needs to
    start. Concurrent callers, in any process, build a state once: the others wait for the lock and
    then use it. An interrupted or failed build leaves nothing behind.

    Args:
        provider: a started or startable provider with warm-state support (the qemu provider).
        recipe: the recipe to use (default: the one the image's profile declares).

    Raises:
        StateNotFound: the image's profile declares no state ``name``.
        SetupError: a step of the recipe failed (the message names the step).
        SnapshotError: the provider cannot save warm states.
    """
    image = provider.image
    recipe = recipe or recipe_for(image, name)
    if not provider.warm_states:
        raise SnapshotError(f"the {provider.name} provider cannot build or restore warm states (only the qemu "
                            f"provider can); state {name!r} is not available there")
    if not force:
        state = current_state(image, recipe)
        if state is not None:
            return state
    with state_lock(image, recipe.name):
        if not force:
            state = current_state(image, recipe)
            if state is not None:  # built by another process while this one waited
                return state
        return build_state(provider, recipe)


def build_state(provider, recipe: StateRecipe) -> WarmState:
    """Build ``recipe`` in the provider's VM now (no lock, no freshness check: see :func:`ensure_state`)."""
    from desktop_env.configs.dispatch import run_steps
    from desktop_env.controllers.python import PythonController
    from desktop_env.session import SetupContext

    image = provider.image
    task = recipe_task(recipe)
    log.info("building warm state %s of %s (%d setup steps, then the desktop must settle)", recipe.name, image.name,
             len(task.config))
    t0 = time.monotonic()
    if provider.is_running() or getattr(provider, "machine", None) is not None:
        provider.revert_to_snapshot("init_state")  # a started VM (running, or stopped by a capture)
    else:
        provider.start()
    controller = PythonController(provider.server.host, provider.server.port, token=provider.token)
    scratch = Path(tempfile.mkdtemp(prefix=f"desktop-env-state-{recipe.name}-"))
    try:
        cdp = provider.cdp
        ctx = SetupContext(controller=controller, task=task, cache_dir=scratch,
                           cdp_port_host=cdp.port if cdp else None, vm_host=provider.server.host)
        run_steps(ctx, task.config, f"state {recipe.name}: config")
        steps_s = time.monotonic() - t0
        settled = wait_settled(provider, controller, recipe)
        work = partial_dir(image, recipe.name)
        try:
            info = provider.capture_state(work)
            state = commit_state(image, recipe, work, time.monotonic() - t0,
                                 {**info, **settled, "steps_s": round(steps_s, 1)})
        except BaseException:
            shutil.rmtree(work, ignore_errors=True)
            raise
        provider.restore_state(state)  # the capture stopped the VM; it goes on at the new state
        return state
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def recipe_task(recipe: StateRecipe):
    """The recipe as a task with only setup steps (so its steps are checked like a task's).

    Raises:
        TaskConfigError: a malformed step or an unknown step name, naming the recipe file.
    """
    from desktop_env.tasks import TaskSpec

    return TaskSpec.from_json({"id": f"warm-state-{recipe.name}", "instruction": recipe.description or recipe.name,
                               "config": recipe.config, "evaluator": {"func": "infeasible"}},
                              path=recipe.path)


def wait_settled(provider, controller, recipe: StateRecipe) -> dict:
    """Wait until the screen stays the same (at most :data:`SETTLE_PIXELS` pixels change) and the
    guest's CPU is mostly idle for ``stable_n`` checks in a row (the recipe's ``settle`` limits). Never a fixed sleep; after ``timeout_s`` it goes on and
    records ``settled: False``."""
    timeout_s = recipe.settle_value("timeout_s")
    stable_n = int(recipe.settle_value("stable_n"))
    interval_s = recipe.settle_value("interval_s")
    busy_below = recipe.settle_value("busy_below")
    t0 = time.monotonic()
    previous, stable, busy, changes = None, 0, 1.0, 0
    while time.monotonic() - t0 < timeout_s:
        busy = guest_busy(controller, interval_s)
        shot = screen_pixels(provider.screenshot())
        same = previous is not None and shot is not None and changed_pixels(previous, shot) <= SETTLE_PIXELS
        changes += not same
        stable = stable + 1 if same and busy < busy_below else 0
        previous = shot
        if stable >= stable_n:
            return {"settled": True, "settle_s": round(time.monotonic() - t0, 1), "busy": round(busy, 2)}
    log.warning("warm state %s: the desktop did not settle within %.0f s (the screen changed %d times; last CPU use "
                "%.0f%%, settled means below %.0f%%); saving it anyway", recipe.name, timeout_s, changes, busy * 100,
                busy_below * 100)
    return {"settled": False, "settle_s": round(time.monotonic() - t0, 1), "busy": round(busy, 2)}


def states_needed(tasks, image) -> tuple[dict[str, int], dict[str, int]]:
    """({state: number of tasks that restore it}, {bare snapshot name the image lacks: number of tasks})
    for ``tasks`` run on ``image`` (the second kind start from ``init_state``)."""
    recipes = state_recipes(image.profile)
    used: dict[str, int] = {}
    missing: dict[str, int] = {}
    for task in tasks:
        kind, state = _classify(task, recipes)
        if kind == "state":
            used[state] = used.get(state, 0) + 1
        elif kind == "bare-missing":
            missing[state] = missing.get(state, 0) + 1
    return used, missing


def build_missing_states(image, names: list[str], report, force: bool = False, cache_dir=None,
                         accel: str = "auto", provider_name: str = "qemu") -> dict[str, dict]:
    """Build those of the states ``names`` of ``image`` that are missing or stale (all of them when
    ``force``), one after another in one VM started for the purpose, saying each step through
    ``report`` (a callable taking a line). Returns ``{name: {"reused": bool, "build_s": float,
    "state": WarmState}}`` for every name.

    The VM is ``provider_name``'s, a provider with the ``warm_states`` capability.

    Raises:
        StateNotFound: a name the image's profile does not declare (before any VM starts).
        SetupError: a recipe step failed (the message names the state and step).
        DesktopEnvError: the provider cannot build warm states.
    """
    from desktop_env.providers.base import create_provider
    from desktop_env.registry import PROVIDERS

    if not PROVIDERS[provider_name].warm_states:
        raise DesktopEnvError(f"the {provider_name} provider has no warm states to build")

    recipes = {name: recipe_for(image, name) for name in names}  # unknown names fail here, listing the known ones
    out: dict[str, dict] = {}
    todo = []
    for name in names:
        state = None if force else current_state(image, recipes[name])
        out[name] = {"reused": state is not None, "build_s": 0.0, "state": state}
        if state is None:
            todo.append(name)
    if not todo:
        return out
    vm = create_provider(provider_name, image=image, cache_dir=cache_dir, accel=accel)
    try:
        for i, name in enumerate(todo, 1):
            report(f"[{i}/{len(todo)}] building warm state {name} of {image.name} (starts its tool: minutes "
                   "under emulation)")
            t0 = time.monotonic()
            state = ensure_state(vm, name, recipes[name], force=force)
            out[name].update(build_s=round(time.monotonic() - t0, 1), state=state)
            sizes = state.sizes()
            report(f"warm state {name}: built in {out[name]['build_s']:.0f} s (RAM {sizes['ram'] / 2**20:.0f} MiB, "
                   f"disk layer {sizes['disk'] / 2**20:.1f} MiB"
                   f"{'' if state.meta.get('settled') else ', the desktop never settled'})")
    finally:
        vm.stop()
    return out
