"""The Ray pool against local environments: throughput of N environments stepping one fixed action script, and the
pool's own cost per step.

For each N (``--n``, default 1 2), the same work runs twice:

- ``local``: N :class:`DesktopEnv` in this process, one thread each;
- ``pool``: an :class:`EnvPool` of N environments on a local cluster (a head and one worker node, each a separate
  ``ray start`` on loopback; ``desktop_env.distributed.local``), placed one per node.

Each environment resets with the task ``--task`` (its setup is one command) and then takes ``--steps`` steps of a
fixed script (small pointer moves, no DONE), timed from the first step to the last; resets are not counted. The table
gives steps per minute, and the pool's overhead per step: the caller's latency minus the time inside the actor's
environment call (serialization, Ray's scheduling, the observation's transfer).

Usage: python bench/pool.py [--path_to_vm base] [--n 1 2] [--steps 30]
"""
from __future__ import annotations

import argparse
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import common_flags, plan_image, print_table, run_main, summary  # noqa: E402

TASK = "evaluation_examples/examples/os/3f6c2a10-5b7e-4c1d-9a8e-0d2b6c4e7f11/3f6c2a10-5b7e-4c1d-9a8e-0d2b6c4e7f11.json"


def script(steps: int) -> list[str]:
    """The fixed action script: pointer moves along the screen's top edge (nothing that ends the episode)."""
    return [f"pyautogui.moveTo({200 + 10 * (i % 50)}, 300)" for i in range(steps)]


def run_local(n: int, image: str, task: Path, actions: list[str]) -> dict:
    """N DesktopEnv in threads; returns the wall time of the steps and each step's time."""
    from desktop_env.envs import DesktopEnv

    envs = [DesktopEnv(path_to_vm=image, max_steps=len(actions) + 1) for _ in range(n)]
    times: list[float] = []
    try:
        for env in envs:
            env.reset(options={"task_config": task})
        barrier = threading.Barrier(n + 1)

        def work(env):
            barrier.wait()
            for action in actions:
                t0 = time.perf_counter()
                env.step(action)
                times.append(time.perf_counter() - t0)

        threads = [threading.Thread(target=work, args=(env,)) for env in envs]
        for thread in threads:
            thread.start()
        barrier.wait()
        t0 = time.perf_counter()
        for thread in threads:
            thread.join()
        return {"wall": time.perf_counter() - t0, "steps": times}
    finally:
        for env in envs:
            env.close()


def run_pool(n: int, image: str, task: Path, actions: list[str]) -> dict:
    """An EnvPool of N on the running local cluster; each environment steps as soon as its last step answered."""
    from desktop_env.distributed import EnvPool

    latency, overhead = [], []
    with EnvPool(n, tasks=[task] * n, path_to_vm=image, max_steps=len(actions) + 1, auto_reset=False) as pool:
        ready = []
        while len(ready) < n:
            got = pool.results(timeout=1800)
            if not got:
                raise RuntimeError("the environments did not reset within 1800 s")
            ready += got
        bad = [r for r in ready if not r.ok]
        if bad:
            raise RuntimeError(f"resets failed: {[(r.env_id, r.status, r.error) for r in bad]}")
        done = {r.env_id: 0 for r in ready}
        t0 = time.perf_counter()
        for env_id in done:
            pool.submit(env_id, actions[0])
        while any(k < len(actions) for k in done.values()):
            for r in pool.results(timeout=600):
                if not r.ok:
                    raise RuntimeError(f"environment {r.env_id}: {r.status} {r.error}")
                latency.append(r.latency_s)
                overhead.append(r.overhead_s)
                done[r.env_id] += 1
                if done[r.env_id] < len(actions):
                    pool.submit(r.env_id, actions[done[r.env_id]])
        wall = time.perf_counter() - t0
    return {"wall": wall, "steps": latency, "overhead": overhead}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--path_to_vm", default="base", help="image (default: the newest base)")
    parser.add_argument("--n", type=int, nargs="+", default=[1, 2], help="environments at once (default 1 2)")
    parser.add_argument("--steps", type=int, default=30, help="steps per environment (default 30)")
    parser.add_argument("--task", default=TASK, help="the task each environment resets with")
    common_flags(parser)
    args = parser.parse_args()
    task = (ROOT / args.task).resolve()
    if args.plan:
        print(plan_image(args.path_to_vm)[2])
        print(f"N = {', '.join(map(str, args.n))}: local DesktopEnv threads, then an EnvPool on a local cluster "
              f"(head + 1 worker node); {args.steps} steps each after a reset with {task.name}")
        return 0
    from desktop_env.distributed.local import LocalCluster

    actions = script(args.steps)
    rows, table = [], []
    for n in args.n:
        local = run_local(n, args.path_to_vm, task, actions)
        slots = (n + 1) // 2
        with LocalCluster(head_slots=slots, worker_slots=(n - slots,) if n > 1 else ()) as cluster:
            print(f"local cluster at {cluster.address}: {[(node.name, node.slots) for node in cluster.nodes]}",
                  flush=True)
            pool = run_pool(n, args.path_to_vm, task, actions)
        for name, res in (("local", local), ("pool", pool)):
            rate = n * args.steps / res["wall"] * 60
            table.append((name, n, rate, res))
            rows.append((f"{name} N={n}: step latency", summary(res["steps"])))
        rows.append((f"pool N={n}: overhead per step", summary(pool["overhead"])))
    print("\nThroughput (steps per minute, all environments together)\n")
    print("| N | local | pool | pool / local |")
    print("|---|---|---|---|")
    for n in args.n:
        local_rate = next(r for name, k, r, _ in table if name == "local" and k == n)
        pool_rate = next(r for name, k, r, _ in table if name == "pool" and k == n)
        print(f"| {n} | {local_rate:.1f} | {pool_rate:.1f} | {pool_rate / local_rate:.2f} |")
    print_table("Per step", rows, unit="ms")
    return 0


if __name__ == "__main__":
    run_main(main)
