"""Prove a suite again and again on a loaded host: `tasks verify` with busy processes running beside the VMs.

Each pass proves the suite from scratch (fresh result folders: oracle, then noop) while
``stress-ng --cpu N`` keeps the host's cores busy, as on a shared 2-core machine. Prints one
row per pass (wall time, oracle and noop time, tasks proven) and the slowest tasks, so the
time limits (desktop_env/limits.py) can be checked against what the loaded host needs.

With ``--sample N --seed S`` each pass replays the same seeded sample of N tasks of the suite
instead: those the image can run (their ``snapshot`` names its profile, or none), spread evenly
over the suite's domains (``--interface gui`` keeps only tasks with that tag). ``--oracle-only``
replays the oracle alone and a pass succeeds when every replay scores 1.0 (the GUI suite's
robustness check: the reference solutions hold on a loaded host).

Usage: python bench/verify_under_load.py --suite evaluation_examples/test_smoke.json [--passes 3]
       [--num_envs 2] [--stress 2] [--path_to_vm base] [--out DIR]
       [--sample 10 --seed 1 --interface gui --oracle_only] [--plan]
"""
from __future__ import annotations

import argparse
import json
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from desktop_env.verify import MODELS, verify  # noqa: E402
from _common import common_flags, plan_image, run_main  # noqa: E402


def sample_suite(suite: Path, n: int, seed: int, profile: str, interface: str | None = None) -> dict[str, list[str]]:
    """A seeded sample of ``n`` tasks of ``suite`` that an image of ``profile`` runs, taken in turn from
    each domain (so every domain is covered when ``n`` allows); domains and ids in the suite's order."""
    from desktop_env.image.states import parse_snapshot
    from desktop_env.tasks import load_index, load_task, task_file_for
    from desktop_env.tasks.solution import interface_of

    rng = random.Random(seed)
    pools: dict[str, list[str]] = {}
    for domain, ids in load_index(suite).items():
        for task_id in ids:
            task = load_task(task_file_for(suite.parent / "examples", domain, task_id))
            wanted = parse_snapshot(task.snapshot)[0]
            if wanted in (None, profile) and (interface is None or interface_of(task) == interface):
                pools.setdefault(domain, []).append(task_id)
    for ids in pools.values():
        rng.shuffle(ids)
    picked: dict[str, list[str]] = {d: [] for d in pools}
    while sum(map(len, picked.values())) < n and any(pools.values()):
        for domain in pools:
            if pools[domain] and sum(map(len, picked.values())) < n:
                picked[domain].append(pools[domain].pop())
    order = {task_id: i for ids in load_index(suite).values() for i, task_id in enumerate(ids)}
    return {d: sorted(ids, key=order.get) for d, ids in picked.items() if ids}


def _slowest(result_dir: Path, model: str, n: int = 3) -> list[tuple[float, str]]:
    rows = []
    for status in result_dir.glob(f"{model}/**/status.json"):
        data = json.loads(status.read_text())
        rows.append((float(data.get("duration_s") or 0), f"{data.get('domain')}/{str(data.get('task_id'))[:8]}"))
    return sorted(rows, reverse=True)[:n]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--suite", required=True)
    parser.add_argument("--passes", type=int, default=3)
    parser.add_argument("--num_envs", type=int, default=2)
    parser.add_argument("--stress", type=int, default=2, help="stress-ng CPU workers beside the VMs (0: none)")
    parser.add_argument("--path_to_vm", default=None)
    parser.add_argument("--out", default=None, help="keep each pass's results here (default: a temporary folder)")
    parser.add_argument("--sample", type=int, default=0, help="replay a seeded sample of this many tasks (0: all)")
    parser.add_argument("--seed", type=int, default=1, help="the sample's seed (default 1)")
    parser.add_argument("--interface", choices=("gui", "cli+gui", "cli"), default=None,
                        help="sample only tasks with this interface tag")
    parser.add_argument("--oracle-only", action="store_true",
                        help="replay the oracle alone; a pass succeeds when every replay scores 1.0")
    common_flags(parser)
    args = parser.parse_args()
    suite = Path(args.suite).resolve()
    models = ("oracle",) if args.oracle_only else MODELS
    if args.plan:
        from desktop_env.tasks import load_index

        _image, profile, line = plan_image(args.path_to_vm or "base")
        picked = (sample_suite(suite, args.sample, args.seed, profile, args.interface) if args.sample
                  else load_index(suite))
        print(line)
        print(f"{args.passes} pass(es) of {sum(map(len, picked.values()))} task(s) of {suite.name} "
              f"({', '.join(f'{d} {len(v)}' for d, v in picked.items())}), models {', '.join(models)}, "
              f"{args.num_envs} environment(s), {args.stress} stress-ng CPU worker(s)")
        return 0
    out = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="verify-load-"))
    out.mkdir(parents=True, exist_ok=True)
    examples_base = suite.parent
    if args.sample:
        from desktop_env.errors import DesktopEnvError
        from desktop_env.image.store import resolve_image

        try:
            profile = resolve_image(args.path_to_vm or "base").profile
        except DesktopEnvError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        picked = sample_suite(suite, args.sample, args.seed, profile, args.interface)
        if not picked:
            print(f"error: {suite.name} has no task an image of profile {profile!r} runs"
                  + (f" tagged {args.interface}" if args.interface else ""), file=sys.stderr)
            return 2
        sample = out / f"{suite.stem}-{profile}-sample{args.sample}-seed{args.seed}.json"
        sample.write_text(json.dumps(picked, indent=1) + "\n")
        print(f"sample of {sum(map(len, picked.values()))} tasks ({', '.join(f'{d} {len(v)}' for d, v in picked.items())})"
              f" written to {sample}", flush=True)
        suite = sample
    if args.stress and shutil.which("stress-ng") is None:
        print("error: stress-ng is missing: apt-get install stress-ng", file=sys.stderr)
        return 2
    stress = (subprocess.Popen(["stress-ng", "--cpu", str(args.stress), "--quiet"], stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, start_new_session=True) if args.stress else None)
    rows, ok = [], True
    try:
        for n in range(1, args.passes + 1):
            result_dir = out / f"pass{n}"
            shutil.rmtree(result_dir, ignore_errors=True)
            times = {}
            for model in models:
                t0 = time.monotonic()
                table = verify(suite, result_dir, args.num_envs, args.path_to_vm, models=(model,),
                               examples_base=examples_base)
                times[model] = time.monotonic() - t0
            if args.oracle_only:
                proven = sum(r.oracle.score == 1.0 for r in table.rows)
                passed = proven == len(table.rows)
            else:
                proven = sum(r.verdict in ("proven", "infeasible ok") for r in table.rows)
                passed = table.all_proven
            ok &= passed
            slow = ", ".join(f"{name} {secs:.0f} s" for secs, name in _slowest(result_dir, "oracle"))
            rows.append((n, sum(times.values()), times.get("oracle", 0), times.get("noop", 0), proven,
                         len(table.rows), slow))
            print(f"pass {n}: {proven}/{len(table.rows)} {'scored 1.0' if args.oracle_only else 'proven'} in "
                  f"{sum(times.values()) / 60:.1f} min", flush=True)
            if not passed:
                print(table.to_text(), flush=True)
    finally:
        if stress is not None:
            stress.terminate()
            stress.wait(30)
    print(f"\n{suite.name}, --num_envs {args.num_envs}, stress-ng --cpu {args.stress} beside the VMs; results in {out}")
    print(f"{'pass':>4}  {'wall':>9}  {'oracle':>9}  {'noop':>9}  {'1.0' if args.oracle_only else 'proven':>7}  "
          "slowest oracle tasks")
    for n, wall, oracle, noop, proven, total, slow in rows:
        print(f"{n:>4}  {wall / 60:7.1f} m  {oracle / 60:7.1f} m  {noop / 60:7.1f} m  {proven:>3}/{total:<3}  {slow}")
    return 0 if ok else 1


if __name__ == "__main__":
    run_main(main)
