"""A Gymnasium vector environment over an :class:`~desktop_env.distributed.pool.EnvPool`.

Gymnasium's ``VectorEnv`` is synchronous by design: ``step`` sends one action to each environment and returns when
every one has answered. Trainers that want each result as soon as it is ready use the pool itself.

Each episode needs a task, so the environments never reset by themselves (``AutoresetMode.DISABLED``): ``reset``
takes the tasks in ``options={"tasks": [...]}`` (one per environment, or one per ``True`` of ``reset_mask``).
"""
from __future__ import annotations

import gymnasium as gym
import numpy as np
from gymnasium.vector import AutoresetMode
from gymnasium.vector.utils import batch_space, concatenate, create_empty_array

from desktop_env.distributed.pool import EnvPool, PoolError, batched


class DesktopVectorEnv(gym.vector.VectorEnv):
    """``num_envs`` desktops on a Ray cluster as one Gymnasium vector environment.

    Observations are the single environment's dict (screenshot, accessibility_tree, terminal, instruction, error)
    batched by Gymnasium's rules: ``screenshot`` is an array ``(num_envs, H, W, 3)``, the texts are tuples. An
    environment whose call failed (its actor died, its task could not be set up) gives an empty observation, reward
    0, ``truncated`` True and ``infos["status"]`` saying why; reset it with another task.

    Args:
        num_envs: environments.
        screen_size: the image's (width, height) (observations' shape).
        pool: an existing pool to use (its ``auto_reset`` must be off); otherwise one is made from ``pool_kwargs``
            (:class:`EnvPool`'s arguments: ``address``, ``path_to_vm``, ``max_steps``, ...).
        timeout_s: how long ``reset`` and ``step`` wait for all environments (None: their own time limits).
    """

    metadata = {"autoreset_mode": AutoresetMode.DISABLED}

    def __init__(self, num_envs: int, screen_size: tuple[int, int] = (1920, 1080), pool: EnvPool | None = None,
                 timeout_s: float | None = None, **pool_kwargs):
        from desktop_env.actions import PyAutoGUISpace
        from desktop_env.envs.desktop_env import observation_space

        self.pool = pool or EnvPool(num_envs, auto_reset=False, **pool_kwargs)
        if self.pool.auto_reset:
            raise PoolError("DesktopVectorEnv needs a pool with auto_reset=False (it resets with the tasks given)")
        if len(self.pool) != num_envs:
            raise PoolError(f"num_envs={num_envs} but the pool has {len(self.pool)} environments")
        self.num_envs = num_envs
        self.timeout_s = timeout_s
        self.single_observation_space = observation_space(screen_size)
        self.single_action_space = PyAutoGUISpace(1_000_000)
        self.observation_space = batch_space(self.single_observation_space, num_envs)
        self.action_space = batch_space(self.single_action_space, num_envs)
        self._live = np.zeros(num_envs, dtype=bool)

    def _batch(self, results: dict) -> tuple:
        observations = []
        rewards = np.zeros(self.num_envs, dtype=np.float64)
        terminated = np.zeros(self.num_envs, dtype=bool)
        truncated = np.zeros(self.num_envs, dtype=bool)
        infos: dict = {"status": np.full(self.num_envs, "", dtype=object), "error": np.full(self.num_envs, None,
                                                                                            dtype=object)}
        empty = {key: (np.zeros(space.shape, space.dtype) if isinstance(space, gym.spaces.Box) else "")
                 for key, space in self.single_observation_space.items()}
        for i in range(self.num_envs):
            r = results.get(i)
            obs = dict(empty)
            if r is not None:
                if r.observation is not None:
                    obs.update({k: v for k, v in r.observation.items() if k in obs and v is not None})
                rewards[i], terminated[i] = r.reward, r.terminated
                truncated[i] = r.truncated or not r.ok
                infos["status"][i], infos["error"][i] = r.status, r.error
                self._live[i] = r.ok and not (r.terminated or r.truncated)
            observations.append(obs)
        out = create_empty_array(self.single_observation_space, self.num_envs)
        return concatenate(self.single_observation_space, observations, out), rewards, terminated, truncated, infos

    def reset(self, *, seed: int | list[int] | None = None, options: dict | None = None):
        """Start an episode on each environment: ``options={"tasks": [...]}`` (one task per environment, or one per
        ``True`` in ``options["reset_mask"]``)."""
        options = options or {}
        mask = np.asarray(options.get("reset_mask", np.ones(self.num_envs, dtype=bool)), dtype=bool)
        tasks = list(options.get("tasks") or [])
        ids = [i for i in range(self.num_envs) if mask[i]]
        if len(tasks) != len(ids):
            raise PoolError(f"reset needs one task per environment reset: {len(ids)} environment(s), "
                            f"{len(tasks)} task(s) in options['tasks']")
        seeds = seed if isinstance(seed, list) else [None if seed is None else seed + i for i in range(self.num_envs)]
        for i, task in zip(ids, tasks):
            self.pool.reset(i, task, seeds[i])
        obs, _, _, _, infos = self._batch(batched(self.pool, ids, self.timeout_s))
        return obs, infos

    def step(self, actions):
        """One action per environment (``WAIT`` for the ones whose episode is over, which are not stepped)."""
        live = [i for i in range(self.num_envs) if self._live[i]]
        self.pool.step({i: actions[i] for i in live})
        return self._batch(batched(self.pool, live, self.timeout_s))

    def close_extras(self, **kwargs) -> None:
        self.pool.close()
