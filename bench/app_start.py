"""Per data tool: cold start to ready through its /usr/local/bin/start-<tool> helper, under this host's emulation.

Each sample reverts the data image's VM to init_state (nothing running) and times the helper
until it returns (it returns once the tool answers: a SQL query, an HTTP health check); `dbt
debug` rows time the command itself. Prints a table (seconds).

Usage: python bench/app_start.py [--path_to_vm data] [--runs 1] [--tools postgres,mariadb,...]
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import common_flags, plan_image, print_table, run_main, summary  # noqa: E402
from desktop_env.controllers.python import PythonController  # noqa: E402
from desktop_env.image.store import resolve_image  # noqa: E402
from desktop_env.providers.qemu.provider import QemuProvider  # noqa: E402

#: name -> (command run as the desktop user in a login shell, limit in seconds)
TOOLS = {
    "postgres": ("start-postgres", 300),
    "mariadb": ("start-mariadb", 300),
    "dbt-duckdb": ("cd ~/projects/dbt_duckdb && dbt debug", 600),
    "dbt-postgres": ("start-postgres >/dev/null && cd ~/projects/dbt_postgres && dbt debug", 600),
    "dagster": ("start-dagster", 900),
    "airflow": ("start-airflow", 1200),
    "superset": ("start-superset", 900),
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--image", default="data")
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--tools", default=",".join(TOOLS), help="comma-separated subset of " + ", ".join(TOOLS))
    common_flags(parser)
    args = parser.parse_args()
    tools = [t.strip() for t in args.tools.split(",") if t.strip()]
    unknown = [t for t in tools if t not in TOOLS]
    if unknown:
        parser.error(f"unknown tools {unknown}; known: {', '.join(TOOLS)}")
    if args.plan:
        print(plan_image(args.image)[2])
        print(f"{args.runs} run(s) of each, from init_state:")
        for tool in tools:
            print(f"  {tool}: `{TOOLS[tool][0]}` (limit {TOOLS[tool][1]} s)")
        return 0
    image = resolve_image(args.image)
    print(f"image {image.name} ({image.meta['memory_mb']} MiB, {image.meta['cpus']} vCPUs, "
          f"{image.meta['ready_state']['accel']})")
    samples: dict[str, list[float]] = {t: [] for t in tools}
    failures = []
    with QemuProvider(image=image) as vm:
        guest = PythonController(vm.server.host, vm.server.port, token=vm.token)
        for run in range(args.runs):
            for tool in tools:
                command, limit_s = TOOLS[tool]
                vm.revert_to_snapshot()
                guest.wait_ready(timeout_s=120, require_display=False)
                t0 = time.perf_counter()
                reply = guest.execute(["bash", "-lc", command], timeout_s=limit_s)
                secs = time.perf_counter() - t0
                if reply["returncode"] != 0:
                    failures.append(f"{tool}: {(reply['output'] + reply['error'])[-800:]}")
                    print(f"  {tool} run {run + 1}: FAILED after {secs:.1f} s", flush=True)
                    continue
                samples[tool].append(secs)
                print(f"  {tool} run {run + 1}: {secs:.1f} s", flush=True)
        guest.close()
    rows = [(f"{tool}: `{TOOLS[tool][0].split(' && ')[-1]}`", summary(s)) for tool, s in samples.items() if s]
    print_table(f"Cold start to ready, {image.name}, from init_state (TCG here)", rows)
    for failure in failures:
        print("\nFAILED " + failure)
    return 1 if failures else 0


if __name__ == "__main__":
    run_main(main)
