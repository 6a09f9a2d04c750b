"""Shared helpers of the benchmark scripts: running main, the ``--plan`` mode, timing statistics and tables."""
from __future__ import annotations

import argparse
import signal
import statistics
import time
from typing import Callable, NoReturn


def run_main(main: Callable[[], int | None]) -> NoReturn:
    """Run a script's ``main`` and exit with its code; SIGTERM exits the same way as Ctrl+C does,
    through the script's ``finally`` blocks, so the VMs it started are closed (a plain SIGTERM left
    QEMU running, reparented to init)."""
    def _exit(signum, _frame):
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, _exit)
    raise SystemExit(main())


def common_flags(parser: argparse.ArgumentParser) -> None:
    """The last step before parsing, in every bench script: the ``--plan`` flag (parse the arguments, print what
    would run, start no VM), and the project's one flag convention (``--path_to_vm``, underscores; the older
    ``--image`` and hyphen spellings still parse: desktop_env/cli_flags.py)."""
    from desktop_env.cli_flags import underscore_flags

    parser.add_argument("--plan", action="store_true",
                        help="print what this run would measure (image, states, counts) and exit; no VM starts")
    underscore_flags(parser, hidden={"--image": "--path_to_vm"})


def plan_image(ref: str) -> tuple[object | None, str, str]:
    """``(image or None, profile, one line)`` for ``--path_to_vm REF`` in a plan: the built image when the cache
    has it, else the profile it names and the command that builds it (a plan never builds or boots)."""
    from desktop_env.errors import DesktopEnvError
    from desktop_env.image.current import resolve

    profile = ref.rsplit("/", 1)[-1].split("-")[0]
    try:
        image = resolve(ref)
    except DesktopEnvError:
        return None, profile, (f"image {ref}: not built in this cache (a run would stop here; build it with: "
                               f"desktop-env image build --profile {profile})")
    return image, image.profile, f"image {image.name} (profile {image.profile}, {image.meta['ready_state']['accel']})"


def timed(fn, *args, **kwargs) -> tuple[float, object]:
    t0 = time.perf_counter()
    out = fn(*args, **kwargs)
    return time.perf_counter() - t0, out


def summary(samples: list[float]) -> dict:
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, int(round(0.95 * (len(ordered) - 1))))]
    return {"n": len(samples), "median": statistics.median(samples), "p95": p95, "min": ordered[0],
            "max": ordered[-1]}


def print_table(title: str, rows: list[tuple[str, dict]], unit: str = "s") -> None:
    print(f"\n{title}\n")
    print(f"| {'what':<46} | {'n':>3} | {'median':>9} | {'p95':>9} | {'min':>9} | {'max':>9} |")
    print(f"|{'-' * 48}|{'-' * 5}|{'-' * 11}|{'-' * 11}|{'-' * 11}|{'-' * 11}|")
    for name, s in rows:
        fmt = (lambda v: f"{v * 1000:8.1f}ms") if unit == "ms" else (lambda v: f"{v:8.2f} s")
        print(f"| {name:<46} | {s['n']:>3} | {fmt(s['median']):>9} | {fmt(s['p95']):>9} | {fmt(s['min']):>9} | "
              f"{fmt(s['max']):>9} |")
