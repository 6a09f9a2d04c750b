"""One environment of a pool: a :class:`~desktop_env.envs.DesktopEnv` in a Ray actor's worker process.

:class:`EnvWorker` is a plain class (importable without Ray); :mod:`desktop_env.distributed.pool` makes it a
Ray actor. Ray runs a synchronous actor's methods one at a time in the main thread of a worker process of
its own, which is what the environment needs there:

- the VM's QEMU is started with Linux's parent-death signal (``die_with_owner``), tied to the thread that
  started it; the main thread lives as long as the process, so when the actor's process dies (its node's
  raylet killed, ``ray.kill``), its QEMU gets SIGKILL instead of running on;
- ``signal.signal`` and ``signal.setitimer`` (the harness's task time limit) only work in the main thread.
"""
from __future__ import annotations

import logging
import os
import socket
import time

log = logging.getLogger(__name__)


class EnvWorker:
    """An environment that a pool drives: ``reset`` with a task, ``step`` with actions, ``close``.

    Every call returns plain data (observations hold numpy arrays, which Ray passes without copying them into
    pickles) and the seconds spent inside the environment (``env_s``), so the pool can tell its own overhead
    from the environment's time.

    Args:
        env_kwargs: keyword arguments of :class:`~desktop_env.envs.DesktopEnv` (``path_to_vm``,
            ``action_space``, ``max_steps``, ...). The VM starts on the first ``reset``.
        image: the driver's image; the first ``reset`` checks that this node holds that build of it
            (:func:`~desktop_env.distributed.images.check_node_image`). None: not checked.
    """

    def __init__(self, env_kwargs: dict, image=None):
        self.env_kwargs = {**env_kwargs, "die_with_owner": True}
        self.image = image
        self.env = None

    def where(self) -> dict:
        """The node and process this environment runs in."""
        node_id = None
        try:
            import ray

            node_id = ray.get_runtime_context().get_node_id()
        except Exception:  # not in a Ray worker (a test calling the class directly)
            pass
        return {"node_id": node_id, "hostname": socket.gethostname(), "pid": os.getpid(),
                "vm_pid": self._vm_pid()}

    def _vm_pid(self) -> int | None:
        machine = getattr(getattr(self.env, "provider", None), "machine", None)
        process = getattr(machine, "process", None)
        return getattr(process, "pid", None)

    def reset(self, task, seed: int | None = None) -> dict:
        """Restore the environment and set ``task`` up (a TaskSpec, a task dict or a task file's path).

        Returns ``{"observation", "info", "env_s", "where"}``.

        Raises:
            NodeImageError: this node lacks the driver's image or holds another build of it.
        """
        from desktop_env.envs import DesktopEnv

        t0 = time.monotonic()
        if self.env is None:
            from desktop_env.distributed.images import check_node_image

            check_node_image(self.image, self.env_kwargs.get("cache_dir"))
            self.env = DesktopEnv(**self.env_kwargs)
        observation, info = self.env.reset(seed=seed, options={"task_config": task})
        return {"observation": observation, "info": info, "env_s": time.monotonic() - t0, "where": self.where()}

    def step(self, action) -> dict:
        """One action; returns ``{"observation", "reward", "terminated", "truncated", "info", "env_s"}``."""
        if self.env is None:
            from desktop_env.errors import DesktopEnvError

            raise DesktopEnvError("step() before reset(): the pool resets an environment with a task first")
        t0 = time.monotonic()
        observation, reward, terminated, truncated, info = self.env.step(action)
        return {"observation": observation, "reward": float(reward), "terminated": bool(terminated),
                "truncated": bool(truncated), "info": info, "env_s": time.monotonic() - t0}

    def close(self) -> None:
        """Stop the VM (the actor process stays until the pool kills it)."""
        env, self.env = self.env, None
        if env is not None:
            env.close()
