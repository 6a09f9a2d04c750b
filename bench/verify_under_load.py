"""Prove a suite again and again on a loaded host: `tasks verify` with busy processes running beside the VMs.

Each pass proves the suite from scratch (fresh result folders: oracle, then noop) while
``stress-ng --cpu N`` keeps the host's cores busy, as on a shared 2-core machine. Prints one
row per pass (wall time, oracle and noop time, tasks proven) and the slowest tasks, so the
time limits (desktop_env/limits.py) can be checked against what the loaded host needs.

Usage: python bench/verify_under_load.py --suite evaluation_examples/test_smoke.json [--passes 3]
       [--num_envs 2] [--stress 2] [--path_to_vm base] [--out DIR]
"""
from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from desktop_env.verify import MODELS, verify  # noqa: E402


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
    args = parser.parse_args()
    suite = Path(args.suite).resolve()
    out = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="verify-load-"))
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
            for model in MODELS:
                t0 = time.monotonic()
                table = verify(suite, result_dir, args.num_envs, args.path_to_vm, models=(model,))
                times[model] = time.monotonic() - t0
            proven = sum(r.verdict in ("proven", "infeasible ok") for r in table.rows)
            ok &= table.all_proven
            slow = ", ".join(f"{name} {secs:.0f} s" for secs, name in _slowest(result_dir, "oracle"))
            rows.append((n, sum(times.values()), times.get("oracle", 0), times.get("noop", 0), proven,
                         len(table.rows), slow))
            print(f"pass {n}: {proven}/{len(table.rows)} proven in {sum(times.values()) / 60:.1f} min", flush=True)
            if not table.all_proven:
                print(table.to_text(), flush=True)
    finally:
        if stress is not None:
            stress.terminate()
            stress.wait(30)
    print(f"\n{suite.name}, --num_envs {args.num_envs}, stress-ng --cpu {args.stress} beside the VMs; results in {out}")
    print(f"{'pass':>4}  {'wall':>9}  {'oracle':>9}  {'noop':>9}  {'proven':>7}  slowest oracle tasks")
    for n, wall, oracle, noop, proven, total, slow in rows:
        print(f"{n:>4}  {wall / 60:7.1f} m  {oracle / 60:7.1f} m  {noop / 60:7.1f} m  {proven:>3}/{total:<3}  {slow}")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
