"""Per warm state: the time from reset until the tool does real work, cold and warm, and their ratio.

Cold: restore ``init_state`` (nothing running), run the state's own recipe (start the tool, open
its page or window) as a task's setup would, then the work. Warm: restore the built warm state,
then the same work. Each time starts at the restore and ends when the work is done:

- airflow: a run of the sample DAG ``shop_etl`` triggered through the REST API is running or done;
- dagster: a run of ``revenue_job`` launched through GraphQL has started (or finished);
- superset: a chart data query (count of ``public.orders``) answers through ``/api/v1/chart/data``;
- jupyter: a cell (``print(6*7)``) executes in a new kernel of the running JupyterLab server;
- calc: a spreadsheet opened after reset (``libreoffice --calc FILE``) shows its window;
- chromium: a page opened after reset (over the DevTools protocol) has loaded;
- airflow-etl-done / airflow-etl-failed: the run of ``shop_etl`` the state holds (successful / failed) is
  read through the REST API, its task instances as the tasks starting there read them.

By default every warm state of the image's profile (and of the profiles it extends); a state with no
work defined (``bench/_warm_work.py``'s ``NO_WORK``) is named and skipped, and the table is printed
either way. States that are not built yet are built first (not timed here; ``image list`` shows
build times). Prints a table: seconds cold, seconds warm, cold/warm. ``--plan`` prints the states and
their work and exits without starting a VM.

Usage: python bench/warm_reset.py [--path_to_vm data] [--states airflow,dagster,...] [--runs 1] [--plan]
"""
from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import common_flags, plan_image, run_main, summary  # noqa: E402
from _warm_work import NO_WORK, WORK, do_work  # noqa: E402
from desktop_env.controllers.python import PythonController  # noqa: E402
from desktop_env.envs.warm import ensure_state, recipe_task  # noqa: E402
from desktop_env.image.states import recipe_for, state_recipes  # noqa: E402
from desktop_env.providers.qemu.provider import QemuProvider  # noqa: E402


def cold(vm: QemuProvider, name: str) -> float:
    """init_state, then the state's recipe as a task setup would run it, then the work."""
    from desktop_env.configs.dispatch import run_steps
    from desktop_env.session import SetupContext

    task = recipe_task(recipe_for(vm.image, name))
    t0 = time.perf_counter()
    vm.revert_to_snapshot("init_state")
    guest = PythonController(vm.server.host, vm.server.port, token=vm.token)
    scratch = Path(tempfile.mkdtemp(prefix="bench-warm-"))
    try:
        ctx = SetupContext(controller=guest, task=task, cache_dir=scratch, cdp_port_host=vm.cdp.port,
                           vm_host=vm.server.host)
        run_steps(ctx, task.config, f"cold start of {name}")
        do_work(name, vm, guest)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return time.perf_counter() - t0


def warm(vm: QemuProvider, name: str) -> float:
    """The warm state restored, then the work."""
    state = ensure_state(vm, name)
    t0 = time.perf_counter()
    vm.restore_state(state)
    guest = PythonController(vm.server.host, vm.server.port, token=vm.token)
    do_work(name, vm, guest)
    return time.perf_counter() - t0


def plan_states(profile: str, asked: str | None) -> list[tuple[str, str | None]]:
    """``(state, what its work is)`` for each state to measure, the work None for a state skipped on purpose.

    Raises:
        SystemExit: ``asked`` names a state the profile does not declare, or one with no work at all.
    """
    declared = sorted(state_recipes(profile))
    names = [n.strip() for n in asked.split(",") if n.strip()] if asked else declared
    unknown = [n for n in names if n not in declared]
    if unknown:
        raise SystemExit(f"--states: {', '.join(unknown)} not warm states of profile {profile} "
                         f"(its states: {', '.join(declared) or 'none'})")
    undefined = [n for n in names if n not in WORK and n not in NO_WORK]
    if undefined:
        raise SystemExit(f"no work defined for state(s) {', '.join(undefined)}: add it to WORK (or the reason to "
                         f"NO_WORK) in bench/_warm_work.py")
    return [(n, WORK[n][0] if n in WORK else None) for n in names]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--image", default="data")
    parser.add_argument("--states", default=None, help="comma-separated (default: every state of the image)")
    parser.add_argument("--runs", type=int, default=1)
    common_flags(parser)
    args = parser.parse_args()
    image, profile, line = plan_image(args.image)
    plan = plan_states(profile, args.states)
    if args.plan:
        print(line)
        print(f"{args.runs} cold and {args.runs} warm run(s) of each state:")
        for name, work in plan:
            print(f"  {name}: {work}" if work else f"  {name}: skipped, no work defined ({NO_WORK[name]})")
        return 0
    if image is None:
        print(f"error: {line}", file=sys.stderr)
        return 2
    print(f"{line}, states: {', '.join(name for name, _ in plan)}", flush=True)
    rows = []
    with QemuProvider(image=image) as vm:
        for name, work in plan:
            if work is None:
                print(f"{name}: skipped, no work defined ({NO_WORK[name]})", flush=True)
                rows.append((name, None, None, None))
                continue
            print(f"{name}: building the state if needed", flush=True)
            state = ensure_state(vm, name)
            colds, warms = [], []
            for i in range(args.runs):
                warms.append(warm(vm, name))
                print(f"  {name} warm run {i + 1}: {warms[-1]:.1f} s", flush=True)
                colds.append(cold(vm, name))
                print(f"  {name} cold run {i + 1}: {colds[-1]:.1f} s", flush=True)
            rows.append((name, summary(colds)["median"], summary(warms)["median"], state.sizes()))
    print("\nTime from reset until the tool does real work (median seconds)\n")
    width = max(9, *(len(name) for name, *_ in rows))
    print(f"| {'state':<{width}} | {'cold':>8} | {'warm':>8} | {'cold/warm':>9} | {'RAM file':>9} | {'disk layer':>10} |")
    print(f"|{'-' * (width + 2)}|{'-' * 10}|{'-' * 10}|{'-' * 11}|{'-' * 11}|{'-' * 12}|")
    for name, c, w, sizes in rows:
        if c is None:
            print(f"| {name:<{width}} | {'skipped: no work defined':<57} |")
            continue
        print(f"| {name:<{width}} | {c:7.1f}s | {w:7.1f}s | {c / w:8.1f}x | {sizes['ram'] / 2**20:6.0f} MiB | "
              f"{sizes['disk'] / 2**20:7.1f} MiB |")
    return 0


if __name__ == "__main__":
    run_main(main)
