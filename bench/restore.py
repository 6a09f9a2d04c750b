"""Restore by mapping the saved RAM against restore by copying it: time against the state's size, and memory
per environment.

Part ``time``: for each state (default: ``init_state`` of base, ``data:superset``, ``data:airflow-etl-done``),
each path (``map``: the RAM file mapped copy-on-write; ``copy``: one full stream read and copied, the path
before mapped states) and each page-cache condition (``warm``: the state's files were just read; ``cold``: they
were dropped from the page cache with posix_fadvise first), ``--runs`` restores into one environment. Each is
split into QEMU's part (process start to the guest running), the in-VM server's first answer and the clock,
and followed by "usable": a screenshot plus a shell command answered.

Part ``memory``: N environments (``--n``, default 1 2 4 6) restored at once from one warm state
(``--memory_state``, default data:superset), by each path: the PSS and RSS of each QEMU process
(/proc/PID/smaps_rollup) when idle, and after each has done the state's own work (bench/_warm_work.py: for
superset a chart data query). PSS counts a page shared by k processes as 1/k: the pages of the mapped file
that no environment wrote are shared through the page cache; the private (anonymous) part is what each
environment holds for itself (the pages it wrote, QEMU's heap, the TCG buffer), what desktop_env/image/capacity.py
budgets per environment. A path's N stops at the first N whose
environments do not all restore (reported), so the table shows the largest N that fit.

Prints one table per part. ``--plan`` prints the states, paths and counts and exits without starting a VM.

Usage: python bench/restore.py [--parts time,memory] [--states base,data:superset,data:airflow-etl-done] [--runs 3] [--n 1 2 4 6] [--memory_state data:superset] [--plan]
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import common_flags, plan_image, run_main, summary  # noqa: E402

PATHS = ("map", "copy")
DEFAULT_STATES = "base,data:superset,data:airflow-etl-done"


def parse_state(ref: str) -> tuple[str, str]:
    """``base`` -> (base, init_state); ``data:superset`` -> (data, superset)."""
    image, _, state = ref.partition(":")
    return image, state or "init_state"


def smaps(pid: int) -> dict[str, int]:
    """``Rss`` and ``Pss`` of process ``pid`` in bytes (from /proc/PID/smaps_rollup)."""
    out = {}
    for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("Rss", "Pss", "Pss_Anon", "Pss_File"):
            out[key] = int(value.split()[0]) * 1024
    return out


def drop_from_cache(paths: list[Path]) -> None:
    """Ask the kernel to drop these files' pages from the page cache (clean pages no process maps)."""
    for path in paths:
        fd = os.open(path, os.O_RDONLY)
        try:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)


def read_through(paths: list[Path]) -> None:
    """Read the files once so their pages are in the page cache (the warm condition)."""
    for path in paths:
        with open(path, "rb") as fh:
            while fh.read(8 << 20):
                pass


def state_files(vm, state: str, path: str) -> list[Path]:
    """The files a restore of ``state`` on ``path`` reads (to warm or drop them)."""
    from desktop_env.image.states import load_state
    from desktop_env.vmstate import SavedState, full_copy_path

    if state == "init_state":
        saved, folder = vm.image.saved_state(), vm.image.path
    else:
        built = load_state(vm.image, state)
        saved, folder = SavedState(built.stream_file, built.ram_file), built.path
    if path == "map" or not saved.mapped:
        return [p for p in (saved.stream, saved.ram) if p is not None]
    return [full_copy_path(saved, folder)]


def controller(vm):
    from desktop_env.controllers.python import PythonController

    return PythonController(vm.server.host, vm.server.port, token=vm.token)


def usable(vm) -> float:
    """Seconds for a screenshot plus a shell command answered: the screenshot as an environment's observation takes
    it (DesktopEnv.screenshot_png: QEMU's screendump from the host, no guest CPU spent), the command through the
    in-VM server."""
    t0 = time.perf_counter()
    if not vm.screenshot():
        raise RuntimeError("no screenshot after the restore")
    result = controller(vm).execute("echo usable", shell=True, timeout_s=60)
    if "usable" not in result.get("output", ""):
        raise RuntimeError(f"the shell command after the restore did not answer: {result}")
    return time.perf_counter() - t0


def time_part(states: list[str], runs: int) -> list[tuple]:
    from desktop_env.envs.warm import ensure_state
    from desktop_env.image.current import resolve
    from desktop_env.providers.qemu.provider import QemuProvider
    from desktop_env.paths import allocated

    rows = []
    for ref in states:
        image_ref, state = parse_state(ref)
        image = resolve(image_ref)
        for path in PATHS:
            with QemuProvider(image=image, restore=path) as vm:
                if state != "init_state":
                    ensure_state(vm, state)
                vm.revert_to_snapshot(state)  # makes the full stream once for `copy` (not timed)
                files = state_files(vm, state, path)
                size = sum(allocated(p) for p in files)
                for cache in ("warm", "cold"):
                    parts = {"qemu_s": [], "server_s": [], "clock_s": [], "usable_s": [], "total_s": [],
                             "reset_to_usable_s": []}
                    for i in range(runs):
                        if cache == "warm":
                            read_through(files)
                        else:
                            vm.machine.kill()  # nothing maps the files while they are dropped
                            drop_from_cache(files)
                        t0 = time.perf_counter()
                        vm.revert_to_snapshot(state)
                        total = time.perf_counter() - t0
                        parts["usable_s"].append(usable(vm))
                        parts["total_s"].append(total)
                        parts["reset_to_usable_s"].append(total + parts["usable_s"][-1])
                        for key in ("qemu_s", "server_s", "clock_s"):
                            parts[key].append(vm.last_restore[key])
                        print(f"  {ref} {path} {cache} run {i + 1}: {total:.2f} s "
                              f"({vm.last_restore['ram']}; qemu {vm.last_restore['qemu_s']:.2f} s)", flush=True)
                    rows.append((ref, size, path, cache, {k: summary(v)["median"] for k, v in parts.items()}))
    return rows


def memory_part(ref: str, counts: list[int]) -> list[tuple]:
    from desktop_env.envs.warm import ensure_state
    from desktop_env.image.current import resolve
    from desktop_env.providers.qemu.provider import QemuProvider
    from _warm_work import do_work

    image_ref, state = parse_state(ref)
    image = resolve(image_ref)
    guest_mib = image.meta["memory_mb"]
    rows = []
    if state != "init_state":
        with QemuProvider(image=image) as vm:
            ensure_state(vm, state)
    for path in PATHS:
        for n in counts:
            vms, idle, worked, failure = [], None, None, None
            try:
                for _ in range(n):
                    vms.append(QemuProvider(image=image, restore=path))
                    vms[-1].start()
                    vms[-1].revert_to_snapshot(state)
                    usable(vms[-1])
                idle = [smaps(vm.machine.pid) for vm in vms]
                if state != "init_state":
                    for vm in vms:
                        do_work(state, vm, controller(vm))
                    worked = [smaps(vm.machine.pid) for vm in vms]
            except Exception as exc:  # noqa: BLE001 - where N stops fitting is the measurement
                failure = f"environment {len(vms)} of {n}: {type(exc).__name__}: {str(exc)[:200]}"
            finally:
                for vm in vms:
                    vm.stop()
            if failure:
                print(f"  {path} N={n}: {failure}", flush=True)
                rows.append((path, n, idle, None, guest_mib, failure))
                break
            print(f"  {path} N={n}: idle PSS {summary([m['Pss'] for m in idle])['median'] / 2**20:.0f} MiB", flush=True)
            rows.append((path, n, idle, worked, guest_mib, "all answered"))
    return rows


def print_time(rows: list[tuple]) -> None:
    print("\nRestore time (median seconds): QEMU's part, server's first answer, clock, total; then a screenshot + a "
          "shell command after it, and the reset to usable (total + that)\n")
    print("| state | saved on disk | path | page cache | QEMU | server | clock | total | screenshot + command | "
          "reset to usable |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for ref, size, path, cache, m in rows:
        print(f"| {ref} | {size / 2**20:.0f} MiB | {path} | {cache} | {m['qemu_s']:.2f} | {m['server_s']:.2f} | "
              f"{m['clock_s']:.2f} | {m['total_s']:.2f} | {m['usable_s']:.2f} | {m['reset_to_usable_s']:.2f} |")


def print_memory(ref: str, rows: list[tuple]) -> None:
    print(f"\nMemory per environment restored from {ref} (median over the N QEMU processes)\n")
    print("| path | N | PSS idle | RSS idle | PSS / guest RAM | PSS after its work | RSS after its work | "
          "private (anonymous) after its work | result |")
    print("|---|---|---|---|---|---|---|---|---|")
    for path, n, idle, worked, guest_mib, note in rows:
        if idle is None:
            print(f"| {path} | {n} | - | - | - | - | - | - | {note} |")
            continue
        pss, rss = (summary([m[k] for m in idle])["median"] / 2**20 for k in ("Pss", "Rss"))
        after = (" | ".join(f"{summary([m[k] for m in worked])['median'] / 2**20:.0f} MiB"
                            for k in ("Pss", "Rss", "Pss_Anon"))
                 if worked else "- | - | -")
        print(f"| {path} | {n} | {pss:.0f} MiB | {rss:.0f} MiB | {100 * pss / guest_mib:.0f}% | {after} | {note} |")


def print_fit(ref: str) -> None:
    """What desktop_env.image.capacity says fits now (the cap run.py applies), by each path."""
    from desktop_env.image.capacity import capacity
    from desktop_env.image.current import resolve

    image_ref, state = parse_state(ref)
    image = resolve(image_ref)
    print(f"\nEnvironments of {image.name} restored from {ref} that fit now (desktop_env.image.capacity):\n")
    for path in PATHS:
        print(f"- {path}: {capacity(image, ['init_state', state], restore=path).explain()}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--parts", default="time,memory")
    parser.add_argument("--states", default=DEFAULT_STATES, help="image[:warm state], comma-separated")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--n", type=int, nargs="+", default=[1, 2, 4, 6])
    parser.add_argument("--memory_state", default="data:superset")
    common_flags(parser)
    args = parser.parse_args()
    parts = {p.strip() for p in args.parts.split(",") if p.strip()}
    if parts - {"time", "memory"}:
        raise SystemExit(f"--parts: {', '.join(sorted(parts - {'time', 'memory'}))} unknown (time, memory)")
    states = [s.strip() for s in args.states.split(",") if s.strip()]
    refs = sorted({parse_state(s)[0] for s in states} | {parse_state(args.memory_state)[0]})
    if args.plan:
        for ref in refs:
            print(plan_image(ref)[2])
        if "time" in parts:
            print(f"time: {', '.join(states)}; paths {', '.join(PATHS)}; page cache warm and cold; {args.runs} run(s) each")
        if "memory" in parts:
            print(f"memory: N = {' '.join(map(str, args.n))} environments from {args.memory_state}, paths "
                  f"{', '.join(PATHS)}")
        return 0
    missing = [ref for ref in refs if plan_image(ref)[0] is None]
    if missing:
        print("error: " + "; ".join(plan_image(ref)[2] for ref in missing), file=sys.stderr)
        return 2
    if "time" in parts:
        print_time(time_part(states, args.runs))
    if "memory" in parts:
        print_memory(args.memory_state, memory_part(args.memory_state, args.n))
        print_fit(args.memory_state)
    return 0


if __name__ == "__main__":
    run_main(main)
