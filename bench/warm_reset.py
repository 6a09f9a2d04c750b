"""Per warm state: the time from reset until the tool does real work, cold and warm, and their ratio.

Cold: restore ``init_state`` (nothing running), run the state's own recipe (start the tool, open
its page or window) as a task's setup would, then the work. Warm: restore the built warm state,
then the same work. Each time starts at the restore and ends when the work is done:

- airflow: a run of the sample DAG ``shop_etl`` triggered through the REST API is running or done;
- dagster: a run of ``revenue_job`` launched through GraphQL has started (or finished);
- superset: a chart data query (count of ``public.orders``) answers through ``/api/v1/chart/data``;
- jupyter: a cell (``print(6*7)``) executes in a new kernel of the running JupyterLab server;
- calc: a spreadsheet opened after reset (``libreoffice --calc FILE``) shows its window;
- chromium: a page opened after reset (over the DevTools protocol) has loaded.

States that are not built yet are built first (not timed here; ``image list`` shows build times).
Prints a table: seconds cold, seconds warm, cold/warm.

Usage: python bench/warm_reset.py [--image data] [--states airflow,dagster,...] [--runs 1]
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

from _common import run_main, summary  # noqa: E402
from _warm_work import do_work  # noqa: E402
from desktop_env.controllers.python import PythonController  # noqa: E402
from desktop_env.envs.warm import ensure_state, recipe_task  # noqa: E402
from desktop_env.image.states import recipe_for, state_recipes  # noqa: E402
from desktop_env.image.store import resolve_image  # noqa: E402
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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--image", default="data")
    parser.add_argument("--states", default=None, help="comma-separated (default: every state of the image)")
    parser.add_argument("--runs", type=int, default=1)
    args = parser.parse_args()
    image = resolve_image(args.image)
    names = args.states.split(",") if args.states else sorted(state_recipes(image.profile))
    print(f"image {image.name} ({image.meta['ready_state']['accel']}), states: {', '.join(names)}", flush=True)
    rows = []
    with QemuProvider(image=image) as vm:
        for name in names:
            print(f"{name}: building the state if needed", flush=True)
            state = ensure_state(vm, name)
            colds, warms = [], []
            for i in range(args.runs):
                warms.append(warm(vm, name))
                print(f"  {name} warm run {i + 1}: {warms[-1]:.1f} s", flush=True)
                colds.append(cold(vm, name))
                print(f"  {name} cold run {i + 1}: {colds[-1]:.1f} s", flush=True)
            sizes = state.sizes()
            rows.append((name, summary(colds)["median"], summary(warms)["median"], sizes))
    print("\nTime from reset until the tool does real work (median seconds)\n")
    print(f"| {'state':<9} | {'cold':>8} | {'warm':>8} | {'cold/warm':>9} | {'RAM file':>9} | {'disk layer':>10} |")
    print(f"|{'-' * 11}|{'-' * 10}|{'-' * 10}|{'-' * 11}|{'-' * 11}|{'-' * 12}|")
    for name, c, w, sizes in rows:
        print(f"| {name:<9} | {c:7.1f}s | {w:7.1f}s | {c / w:8.1f}x | {sizes['ram'] / 2**20:6.0f} MiB | "
              f"{sizes['disk'] / 2**20:7.1f} MiB |")
    return 0


if __name__ == "__main__":
    run_main(main)
