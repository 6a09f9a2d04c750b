"""Environments on a Ray cluster behind one Python API: create N, reset them with tasks from the caller's queue,
step them with batches of actions, and take each result as soon as it is ready (no barrier between them).

Each environment is a Ray actor (:class:`~desktop_env.distributed.actor.EnvWorker`) in a worker process of its own,
on a node that advertises free environment slots: the custom resource :data:`SLOT_RESOURCE`, which a node gets from
``ray start --resources '{"desktop_env_slot": N}'`` (``desktop-env image fit`` says how many of an image's
environments its memory holds; set it by hand when several nodes share one host). Actors are spread over the nodes.

Faults:

- An actor whose process or node died (or that did not answer within its named time limit: ``pool.reset``,
  ``pool.step``, see :mod:`desktop_env.limits`) gives a result with ``status="infra_error"``; its episode's task
  goes back to the front of the queue (up to ``retries`` more times) and a new actor takes its place, on whichever
  node has a free slot, except nodes whose raylet no longer accepts a connection (:func:`unreachable_nodes`: Ray
  notices a dead node only after its health checks fail, and an actor placed there meanwhile would die too). A
  killed actor's VM dies with it (it was started with the parent-death signal).
- An exception the environment raised (a task that cannot be set up, a scorer that failed) ends that episode with
  the harness's status for it (``task_error``, ``evaluator_error``; ``infra_error`` for a VM that failed, retried
  on a fresh actor) and the environment goes on with the next task.
- A node that lacks the driver's image, or holds another build of it, makes :meth:`EnvPool.results` raise
  :class:`~desktop_env.distributed.images.NodeImageError` naming the node and how to copy the image there
  (:mod:`desktop_env.distributed.images`): another node would not fix it, and its scores would not be the image's.
- :meth:`EnvPool.close` (also on Ctrl-C, through ``with``) stops every VM and kills every actor.
"""
from __future__ import annotations

import collections
import logging
import os
import queue
import socket
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Iterator, Mapping

from desktop_env.distributed.actor import EnvWorker
from desktop_env.errors import DesktopEnvError

log = logging.getLogger(__name__)

#: The custom Ray resource a node advertises, one unit per environment it can hold.
SLOT_RESOURCE = "desktop_env_slot"
#: Seconds ``close`` gives each environment to stop its VM before its actor is killed.
CLOSE_GRACE_S = 60.0
#: The label Ray gives every node, its id: new actors avoid dead nodes through it.
NODE_ID_LABEL = "ray.io/node-id"


class PoolError(DesktopEnvError):
    """The pool was used wrongly (an unknown environment, a step while one is still running, ...)."""


@dataclass
class PoolResult:
    """What one call on one environment gave.

    Attributes:
        env_id: the environment (0..N-1; stays the same when the actor behind it is replaced).
        kind: ``reset`` or ``step``.
        task_id: the id of the episode's task.
        status: ``ok``, or why the call failed: ``infra_error`` (the actor, its node or its VM failed; the task is
            retried when ``will_retry``), ``task_error`` (the task could not be set up), ``evaluator_error``
            (scoring failed; no reward).
        observation, reward, terminated, truncated, info: as :class:`~desktop_env.envs.DesktopEnv` gives them
            (observation None when the call failed).
        error: the failure's message.
        will_retry: the task goes back to the queue for another attempt.
        attempt: the attempt this was (1 for the task's first).
        latency_s: seconds from the call's submission to its result reaching the pool.
        env_s: seconds spent inside the environment's call.
        where: node id, host name and pids of the actor (reset results only).
    """

    env_id: int
    kind: str
    task_id: str | None
    status: str = "ok"
    observation: dict | None = None
    reward: float = 0.0
    terminated: bool = False
    truncated: bool = False
    info: dict = field(default_factory=dict)
    error: str | None = None
    will_retry: bool = False
    attempt: int = 1
    latency_s: float = 0.0
    env_s: float = 0.0
    where: dict | None = None

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    @property
    def episode_over(self) -> bool:
        """The episode ended: terminated, truncated, or failed."""
        return self.terminated or self.truncated or not self.ok

    @property
    def overhead_s(self) -> float:
        """The pool's part of the latency: the caller's wait minus the time inside the environment."""
        return max(0.0, self.latency_s - self.env_s)


def _deadline(slot: "_Slot") -> float:
    """When the call in flight on ``slot`` is overdue: its submission plus its named limit (read now, so a time scale
    set meanwhile counts)."""
    from desktop_env.limits import limit

    return slot.submitted + limit(f"pool.{slot.kind}")


@dataclass
class _Slot:
    env_id: int
    actor: Any
    task: Any = None
    attempt: int = 0
    ref: Any = None  # the call in flight
    kind: str = ""
    submitted: float = 0.0
    where: dict | None = None


def task_id_of(task) -> str | None:
    """The id of a task given as a TaskSpec, a task dict or a task file's path."""
    if isinstance(task, Mapping):
        return task.get("id")
    found = getattr(task, "id", None)
    if found is not None:
        return found
    return Path(str(task)).stem if task is not None else None


def portable(task):
    """A task file's path made absolute here (nodes read it at the same path: each node has the project and the
    suite at the paths the driver has); a TaskSpec or a task dict as it is."""
    if isinstance(task, (str, os.PathLike)):
        return str(Path(task).resolve())
    return task


class _TaskSource:
    """The caller's tasks, read lazily (an iterable, or a ``queue.Queue`` the caller may keep filling), with the
    tasks to retry first."""

    def __init__(self, tasks):
        self._queue = tasks if isinstance(tasks, queue.Queue) else None
        self._iter: Iterator | None = None if self._queue is not None or tasks is None else iter(tasks)
        self.retry: collections.deque = collections.deque()

    def next(self) -> tuple[Any, int] | None:
        """``(task, attempt)`` or None when there is nothing to run now."""
        if self.retry:
            return self.retry.popleft()
        if self._queue is not None:
            try:
                return self._queue.get_nowait(), 1
            except queue.Empty:
                return None
        if self._iter is not None:
            for task in self._iter:
                return task, 1
            self._iter = None
        return None


class EnvPool:
    """N environments on a Ray cluster, stepped asynchronously.

    Usage (a rollout loop)::

        with EnvPool(4, tasks=task_paths, path_to_vm="base", address="auto") as pool:
            while pool.busy():
                for r in pool.results(timeout=60):
                    if r.episode_over:
                        trainer.add(r.task_id, r.reward, r.status)   # the env takes the next task by itself
                    else:
                        pool.submit(r.env_id, policy(r.observation))

    Args:
        num_envs: environments (Ray actors), each needing one :data:`SLOT_RESOURCE` on some node.
        tasks: what the environments run: an iterable of tasks (TaskSpec, task dict or task file path) read as
            environments become free, or a ``queue.Queue`` the caller may keep filling (an empty queue leaves an
            environment idle until :meth:`feed` or the next :meth:`results`). None: the caller resets by hand.
        address: the Ray cluster (``auto``, ``ray://host:10001``, ...); None starts or joins as ``ray.init`` does.
            Ignored when Ray is already initialized.
        retries: how many more times a task whose attempt ended in ``infra_error`` is run (on a new actor).
        auto_reset: an environment whose episode ended resets with the next task by itself.
        slot_resource: the custom resource each environment takes one unit of.
        ray_init: more keyword arguments for ``ray.init``.
        **env_kwargs: :class:`~desktop_env.envs.DesktopEnv`'s arguments (``path_to_vm``, ``max_steps``, ...). When
            this machine holds the image ``path_to_vm`` names, every environment runs that image, by its exact
            name, and checks that its node holds the same build of it.
    """

    def __init__(self, num_envs: int, tasks: Iterable | queue.Queue | None = None, *, address: str | None = None,
                 retries: int = 1, auto_reset: bool = True, slot_resource: str = SLOT_RESOURCE,
                 ray_init: dict | None = None, **env_kwargs):
        import ray

        if num_envs < 1:
            raise PoolError(f"num_envs={num_envs}: a pool needs at least one environment")
        if retries < 0:
            raise PoolError(f"retries={retries} must be 0 or more")
        self._ray = ray
        if not ray.is_initialized():
            ray.init(address=address, **(ray_init or {}))
        self.retries = retries
        self.auto_reset = auto_reset
        self.env_kwargs = dict(env_kwargs)
        self.image = self._driver_image()
        self._remote = ray.remote(EnvWorker)
        self._slot_resource = slot_resource
        self._excluded: set[str] = set()  # nodes found dead: no new actor goes there
        self._source = _TaskSource(tasks)
        self._slots = {i: _Slot(i, self._new_actor()) for i in range(num_envs)}
        self._ready: list[PoolResult] = []
        self._closed = False
        self.feed()

    def _driver_image(self):
        """This machine's image of ``path_to_vm`` (pinned by name for the nodes), or None when it holds none."""
        from desktop_env.distributed.images import driver_image

        ref = self.env_kwargs.get("path_to_vm") or self.env_kwargs.get("image_profile") or "base"
        try:
            image = driver_image(ref, self.env_kwargs.get("cache_dir"))
        except DesktopEnvError as exc:  # a trainer's machine may hold no image: the nodes pick theirs
            log.warning("the nodes' images are not checked against the driver's: %s", exc)
            return None
        if image is not None:
            self.env_kwargs["path_to_vm"] = image.name
        return image

    # -- calls ------------------------------------------------------------------------------------------------
    def _new_actor(self):
        options = actor_options(self._excluded, self._slot_resource)
        return self._remote.options(**options).remote(self.env_kwargs, self.image)

    def _call(self, slot: _Slot, kind: str, *args) -> None:
        if kind == "reset":
            args = (portable(args[0]), *args[1:])

        slot.kind = kind
        slot.ref = getattr(slot.actor, kind).remote(*args)
        slot.submitted = time.monotonic()

    def reset(self, env_id: int, task, seed: int | None = None) -> None:
        """Start an episode of ``task`` on ``env_id`` now (its result comes through :meth:`results`)."""
        slot = self._idle_slot(env_id)
        slot.task, slot.attempt = task, 1
        self._call(slot, "reset", task, seed)

    def submit(self, env_id: int, action) -> None:
        """Send one action to ``env_id`` (its result comes through :meth:`results`)."""
        slot = self._idle_slot(env_id)
        if slot.task is None:
            raise PoolError(f"environment {env_id} has no episode: reset it with a task first")
        self._call(slot, "step", action)

    def step(self, actions: Mapping[int, Any]) -> None:
        """Send a batch of actions, ``{env_id: action}``; each result comes as soon as it is ready."""
        for env_id in actions:
            self._idle_slot(env_id)  # refuse the whole batch before sending any of it
        for env_id, action in actions.items():
            self.submit(env_id, action)

    def _idle_slot(self, env_id: int) -> _Slot:
        if self._closed:
            raise PoolError("the pool is closed")
        slot = self._slots.get(env_id)
        if slot is None:
            raise PoolError(f"no environment {env_id}: this pool has 0..{len(self._slots) - 1}")
        if slot.ref is not None:
            raise PoolError(f"environment {env_id} is still running its {slot.kind}: wait for its result")
        return slot

    def feed(self) -> int:
        """Give the next tasks to environments without an episode; returns how many started."""
        started = 0
        for slot in self._slots.values():
            if slot.ref is None and slot.task is None:
                nxt = self._source.next()
                if nxt is None:
                    break
                slot.task, slot.attempt = nxt
                self._call(slot, "reset", slot.task, None)
                started += 1
        return started

    # -- results ----------------------------------------------------------------------------------------------
    def busy(self) -> bool:
        """Some call is in flight or a result waits to be taken."""
        return bool(self._ready) or any(slot.ref is not None for slot in self._slots.values())

    def results(self, timeout: float | None = None, max_results: int | None = None) -> list[PoolResult]:
        """The results that are ready, waiting up to ``timeout`` seconds (None: until one is) for the first one.

        Each environment's result comes alone, as soon as its call ends; an empty list means none ended in time.

        Raises:
            NodeImageError: an environment's node lacks the driver's image or holds another build of it.
        """
        self.feed()
        end = None if timeout is None else time.monotonic() + timeout
        while not self._ready:
            pending = {slot.ref: slot for slot in self._slots.values() if slot.ref is not None}
            if not pending:
                break
            now = time.monotonic()
            wait = min(_deadline(slot) for slot in pending.values()) - now
            if end is not None:
                wait = min(wait, end - now)
            done, rest = self._ray.wait(list(pending), num_returns=1, timeout=max(0.0, wait))
            if done and rest:  # whatever else is ready by now comes in the same batch
                more, _ = self._ray.wait(rest, num_returns=len(rest), timeout=0)
                done += more
            for ref in done:
                self._collect(pending[ref])
            self._stop_overdue()
            if end is not None and time.monotonic() >= end:
                break
        out, self._ready = self._ready, []
        if max_results is not None and len(out) > max_results:
            out, self._ready = out[:max_results], out[max_results:]
        return out

    def _collect(self, slot: _Slot) -> None:
        ref, kind, task = slot.ref, slot.kind, slot.task
        slot.ref = None
        latency = time.monotonic() - slot.submitted
        base = dict(env_id=slot.env_id, kind=kind, task_id=task_id_of(task), attempt=slot.attempt,
                    latency_s=latency)
        try:
            reply = self._ray.get(ref)
        except self._ray.exceptions.RayTaskError as exc:
            self._task_failure(slot, base, exc)
            return
        except self._ray.exceptions.RayError as exc:  # the actor, its process or its node is gone
            self._excluded.update(unreachable_nodes(self._ray))  # its replacement avoids a node that died
            self._infra_failure(slot, base, f"the environment's actor died ({type(exc).__name__}): "
                                            f"{first_line(exc)}")
            return
        result = PoolResult(**base, observation=reply["observation"], info=reply["info"], env_s=reply["env_s"],
                            reward=reply.get("reward", 0.0), terminated=reply.get("terminated", False),
                            truncated=reply.get("truncated", False), where=reply.get("where"))
        if kind == "reset":
            slot.where = reply.get("where")
        self._ready.append(result)
        if result.episode_over:
            self._episode_ended(slot)

    def _task_failure(self, slot: _Slot, base: dict, exc: BaseException) -> None:
        """The environment raised: a VM that failed is retried on a new actor; a task that could not be set up or
        scored ends its episode, and the environment goes on."""
        from desktop_env.distributed.images import NodeImageError
        from desktop_env.errors import EvaluatorError, infra_error_types

        cause = getattr(exc, "cause", None) or exc
        if isinstance(cause, NodeImageError):
            slot.task = None  # not run: the task is not lost, the caller may run it again once the node is fixed
            raise NodeImageError(str(cause)) from None
        error = f"{type(cause).__name__}: {cause}"
        if isinstance(cause, infra_error_types()):
            self._infra_failure(slot, base, error)
            return
        status = "evaluator_error" if isinstance(cause, EvaluatorError) else "task_error"
        log.warning("environment %d (%s): %s in %s: %s", slot.env_id, base["task_id"], status, base["kind"], error)
        self._ready.append(PoolResult(**base, status=status, error=error))
        self._episode_ended(slot)

    def _episode_ended(self, slot: _Slot) -> None:
        slot.task, slot.attempt = None, 0
        if self.auto_reset:
            self.feed()

    def _infra_failure(self, slot: _Slot, base: dict, error: str) -> None:
        """The actor (or its VM) failed: report it, queue the task again if it has attempts left, and replace the
        actor (the new one starts wherever a slot is free)."""
        retry = slot.task is not None and slot.attempt <= self.retries
        log.warning("environment %d (%s) failed in %s: %s%s", slot.env_id, base["task_id"], base["kind"], error,
                    "; its task is retried" if retry else "")
        self._ready.append(PoolResult(**base, status="infra_error", error=error, will_retry=retry))
        if retry:
            self._source.retry.appendleft((slot.task, slot.attempt + 1))
        self._replace(slot)
        slot.task, slot.attempt = None, 0
        self.feed()

    def _replace(self, slot: _Slot) -> None:
        try:
            self._ray.kill(slot.actor, no_restart=True)
        except Exception:  # already gone with its node
            log.debug("killing the actor of environment %d", slot.env_id, exc_info=True)
        slot.actor, slot.ref, slot.where = self._new_actor(), None, None

    def _stop_overdue(self) -> None:
        from desktop_env.limits import limit

        now = time.monotonic()
        for slot in self._slots.values():
            if slot.ref is not None and now >= _deadline(slot):
                seconds = limit(f"pool.{slot.kind}")
                base = dict(env_id=slot.env_id, kind=slot.kind, task_id=task_id_of(slot.task), attempt=slot.attempt,
                            latency_s=now - slot.submitted)
                self._infra_failure(slot, base, f"no answer within the time limit pool.{slot.kind} ({seconds:g} s): "
                                                "the environment was stopped")

    # -- placement and lifetime ---------------------------------------------------------------------------------
    def where(self) -> dict[int, dict | None]:
        """Each environment's node and pids, as its last reset reported them (None before one)."""
        return {env_id: slot.where for env_id, slot in self._slots.items()}

    def close(self) -> None:
        """Stop every environment's VM, then kill every actor (also what is still running)."""
        if self._closed:
            return
        self._closed = True
        idle = {slot.env_id: slot.actor.close.remote() for slot in self._slots.values() if slot.ref is None}
        if idle:
            self._ray.wait(list(idle.values()), num_returns=len(idle), timeout=CLOSE_GRACE_S)
        for slot in self._slots.values():
            try:
                self._ray.kill(slot.actor, no_restart=True)
            except Exception:
                log.debug("killing the actor of environment %d", slot.env_id, exc_info=True)
            slot.ref = None

    def __enter__(self) -> "EnvPool":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __len__(self) -> int:
        return len(self._slots)


def unreachable_nodes(ray, timeout_s: float = 3.0) -> set[str]:
    """Ids of the nodes the cluster still counts as alive whose raylet accepts no connection from here: dead ones
    the cluster has not noticed yet. Empty when no node answers (a driver that cannot reach the nodes' ports, such
    as a Ray Client, tells nothing) or when the nodes lack Ray's node-id label (a Ray too old to avoid them)."""
    alive = [node for node in ray.nodes() if node.get("Alive")]
    if not all(NODE_ID_LABEL in (node.get("Labels") or {}) for node in alive):
        log.warning("the cluster's nodes have no %r label: a retried job's actor may be placed on a dead node",
                    NODE_ID_LABEL)
        return set()
    dead = set()
    for node in alive:
        try:
            with socket.create_connection((node["NodeManagerAddress"], node["NodeManagerPort"]), timeout=timeout_s):
                pass
        except OSError as exc:
            log.warning("node %s (%s) does not answer (%s): no new environment is placed there", node["NodeID"],
                        node["NodeManagerAddress"], exc)
            dead.add(node["NodeID"])
    return set() if len(dead) == len(alive) else dead


def actor_options(excluded: set[str], slot_resource: str = SLOT_RESOURCE) -> dict:
    """Ray options of an environment's actor: one ``slot_resource``, spread over the nodes, never on ``excluded``
    (node ids, from :func:`unreachable_nodes`)."""
    options = dict(num_cpus=0, resources={slot_resource: 1}, max_restarts=0, max_task_retries=0)
    if not excluded:
        return {**options, "scheduling_strategy": "SPREAD"}
    from ray.util.scheduling_strategies import NodeLabelSchedulingStrategy, NotIn

    return {**options,
            "scheduling_strategy": NodeLabelSchedulingStrategy(hard={NODE_ID_LABEL: NotIn(*sorted(excluded))})}


def first_line(exc: BaseException) -> str:
    """The first non-empty line of an exception's message (Ray's carry pages of context), at most 300 characters."""
    text = str(exc).strip()
    return next((line for line in text.splitlines() if line.strip()), type(exc).__name__)[:300]


def batched(pool: EnvPool, env_ids: Iterable[int], timeout: float | None = None) -> dict[int, PoolResult]:
    """Wait for one result of each of ``env_ids`` (the synchronous use: the vector env's step); results of other
    environments stay in the pool for its next :meth:`EnvPool.results`."""
    wanted = set(env_ids)
    got: dict[int, PoolResult] = {}
    others: list[PoolResult] = []
    end = None if timeout is None else time.monotonic() + timeout
    try:
        while not wanted <= set(got):
            left = None if end is None else end - time.monotonic()
            if (left is not None and left <= 0) or not pool.busy():
                missing = sorted(wanted - set(got))
                raise PoolError(f"no result from environment(s) {missing}"
                                + (f" within {timeout:g} s" if left is not None and left <= 0 else
                                   ": nothing is running there"))
            for result in pool.results(timeout=left):
                if result.env_id in wanted and result.env_id not in got:
                    got[result.env_id] = result
                else:
                    others.append(result)
    finally:
        pool._ready[:0] = others
    return got
