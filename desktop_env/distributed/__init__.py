"""Environments on a Ray cluster (the ``ray`` extra): :class:`EnvPool` for trainers (asynchronous batches of
steps), :class:`~desktop_env.distributed.vector.DesktopVectorEnv` (Gymnasium's synchronous vector API over a pool)
and ``run.py --ray`` (:mod:`desktop_env.harness.ray_jobs`). See docs/distributed.md."""
from desktop_env.distributed.pool import SLOT_RESOURCE, EnvPool, PoolError, PoolResult

__all__ = ["EnvPool", "PoolError", "PoolResult", "SLOT_RESOURCE"]
