"""Scaling on one host: N environments at once, each running reset + 10 steps repeatedly.

For each N (default 1, 2, 4) the script starts N environments (one thread each, one VM
each), runs ``--rounds`` rounds of reset + ``--steps`` steps on every one of them, and
prints: aggregate steps per second (steps of all envs / wall time of the rounds), p50 and
p95 step latency (``env.step`` with its host-side screenshot observation), p50 and p95
reset latency, RSS per environment (its QEMU process, sampled at the end of the rounds),
disk per environment (its overlay and runtime folder, blocks actually used), and the
scaling efficiency: throughput at N / (N x throughput at 1).

A step is a real action: a mouse move to a random point, a click on the desktop
background, or a short key press, cycling; every 10th step writes and checks a guest file.

Usage: python bench/parallel.py [--path_to_vm base] [--n 1 2 4] [--rounds 3] [--steps 10]
"""
from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from _common import common_flags, plan_image, run_main  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def _pct(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def _rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def _disk_mib(path: Path) -> float:
    out = subprocess.run(["du", "-sk", str(path)], capture_output=True, text=True)
    return int(out.stdout.split()[0]) / 1024 if out.returncode == 0 else float("nan")


def _actions(screen: tuple[int, int], rng: random.Random):
    w, h = screen
    i = 0
    while True:
        i += 1
        if i % 10 == 0:
            yield "check", f"open('/tmp/bench.txt', 'w').write('step-{i}')"
        elif i % 3 == 0:
            yield "key", "pyautogui.press('shift')"
        elif i % 3 == 1:
            yield "move", f"pyautogui.moveTo({rng.randrange(w)}, {rng.randrange(h)})"
        else:
            yield "click", f"pyautogui.click({rng.randrange(w // 4, w // 2)}, {rng.randrange(h // 4, h // 2)})"


def run_n(image: str, n: int, rounds: int, steps: int, seed: int) -> dict:
    """Start ``n`` envs, run the rounds on all at once, return the figures."""
    from desktop_env.envs import DesktopEnv

    envs = [DesktopEnv(path_to_vm=image, require_a11y_tree=False, max_steps=steps + 5) for _ in range(n)]
    step_s: list[float] = []
    reset_s: list[float] = []
    errors: list[str] = []
    lock = threading.Lock()
    samples: dict[int, tuple[float, float]] = {}

    def worker(k: int) -> None:
        env = envs[k]
        rng = random.Random(seed + k)
        actions = _actions(env.screen, rng)
        for _ in range(rounds):
            t0 = time.perf_counter()
            env.reset()
            with lock:
                reset_s.append(time.perf_counter() - t0)
            for _ in range(steps):
                kind, code = next(actions)
                t0 = time.perf_counter()
                _, _, _, _, info = env.step(code)
                elapsed = time.perf_counter() - t0
                with lock:
                    step_s.append(elapsed)
                    if "error" in info:
                        errors.append(f"env{k} {kind}: {info['error']}")
                if kind == "check":
                    got = env.controller.execute(["cat", "/tmp/bench.txt"])["output"]
                    if not code.endswith(f"'{got}')"):
                        with lock:
                            errors.append(f"env{k}: guest file holds {got!r} after {code}")
        samples[k] = (_rss_mib(env.provider.machine.pid), _disk_mib(env.provider.dir))

    try:
        for env in envs:  # start (boot from init_state) outside the timed part
            env.reset()
        threads = [threading.Thread(target=worker, args=(k,)) for k in range(n)]
        t0 = time.perf_counter()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        wall = time.perf_counter() - t0
    finally:
        for env in envs:
            env.close()
    return {
        "n": n, "wall_s": wall, "steps": len(step_s), "steps_per_s": len(step_s) / wall,
        "step_p50": statistics.median(step_s), "step_p95": _pct(step_s, 0.95),
        "reset_p50": statistics.median(reset_s), "reset_p95": _pct(reset_s, 0.95),
        "rss_mib": statistics.mean(s[0] for s in samples.values()) if samples else float("nan"),
        "disk_mib": statistics.mean(s[1] for s in samples.values()) if samples else float("nan"),
        "errors": errors,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--image", default="base", help="image name or profile (default base)")
    parser.add_argument("--n", type=int, nargs="+", default=[1, 2, 4], help="environment counts (default 1 2 4)")
    parser.add_argument("--rounds", type=int, default=3, help="reset + steps rounds per environment (default 3)")
    parser.add_argument("--steps", type=int, default=10, help="steps per round (default 10)")
    parser.add_argument("--seed", type=int, default=0)
    common_flags(parser)
    args = parser.parse_args()
    if args.plan:
        print(plan_image(args.image)[2])
        for n in args.n:
            print(f"N={n}: {n} environment(s), {args.rounds} round(s) of reset + {args.steps} steps each")
        return 0
    os.environ.setdefault("DESKTOP_ENV_RUNTIME_DIR", tempfile.mkdtemp(prefix="desktop-env-parallel-"))
    from desktop_env.image.store import resolve_image

    image = resolve_image(args.image)
    mem_gib = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2 ** 30
    print(f"image {image.name} ({image.meta['screen']}, {image.meta['cpus']} vCPUs, {image.meta['memory_mb']} MiB "
          f"guest RAM, accel {image.meta['ready_state']['accel']}); host {os.cpu_count()} cores, {mem_gib:.0f} GiB")
    results = []
    for n in args.n:
        print(f"running N={n} ({args.rounds} rounds x (reset + {args.steps} steps) per env)...", flush=True)
        results.append(run_n(image.name, n, args.rounds, args.steps, args.seed))
    base = next((r["steps_per_s"] for r in results if r["n"] == 1), None)
    print("\n| N | steps | wall | steps/s (all envs) | step p50 | step p95 | reset p50 | reset p95 | "
          "RSS per env | disk per env | efficiency |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in results:
        eff = f"{r['steps_per_s'] / (r['n'] * base):.0%}" if base else "n/a"
        print(f"| {r['n']} | {r['steps']} | {r['wall_s']:.0f} s | {r['steps_per_s']:.2f} | {r['step_p50']:.2f} s | "
              f"{r['step_p95']:.2f} s | {r['reset_p50']:.2f} s | {r['reset_p95']:.2f} s | {r['rss_mib']:.0f} MiB | "
              f"{r['disk_mib']:.0f} MiB | {eff} |")
    failed = [e for r in results for e in r["errors"]]
    for line in failed[:20]:
        print("  step error:", line)
    print(f"\nefficiency = steps/s at N / (N x steps/s at N=1); {len(failed)} step errors")
    return 1 if failed else 0


if __name__ == "__main__":
    run_main(main)
