"""Soak: many reset + step cycles on one environment and on several at once, every cycle checked, host figures tracked.

Each cycle: ``reset()`` (revert to init_state), check that the previous cycle's file is
gone, one pyautogui step that writes a per-cycle token into a guest file, check the
token through the in-VM server, check the observation's shape. Host figures (this
process's RSS and open fds; QEMU processes, overlays, sockets and port locks of this
run) are printed after the first and the last cycle and every ``--report-every``.

The run uses a private runtime folder (``DESKTOP_ENV_RUNTIME_DIR``) so the counts are
this run's only, while images come from the shared cache.

Usage: python bench/soak.py [--path_to_vm base] [--cycles 300] [--parallel_cycles 100] [--envs 2]
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import threading
import time
from pathlib import Path
from _common import common_flags, plan_image, run_main  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

FIELDS = ("rss_mib", "fds", "qemu", "overlays", "sockets", "port_locks")


def host_figures(run_dir: Path) -> dict:
    """This process's RSS and fds; QEMU processes, overlays and sockets under ``run_dir``; its port locks."""
    rss_kib = next(int(line.split()[1]) for line in Path("/proc/self/status").read_text().splitlines()
                   if line.startswith("VmRSS:"))
    qemu = 0
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                cmdline = (proc / "cmdline").read_bytes().decode(errors="replace")
            except OSError:
                continue
            qemu += "qemu-system" in cmdline and str(run_dir) in cmdline
    return {
        "rss_mib": rss_kib / 1024,
        "fds": len(os.listdir("/proc/self/fd")),
        "qemu": qemu,
        "overlays": len(list(run_dir.glob("vms/*/*.qcow2"))),
        "sockets": len([p for p in run_dir.rglob("*") if p.is_socket()]),
        "port_locks": _my_port_locks(),
    }


def _my_port_locks() -> int:
    """Port lock files (shared folder) that name this process as their holder."""
    from desktop_env.paths import ports_dir

    mine = 0
    for lock in ports_dir().glob("*.lock"):
        try:
            mine += lock.read_text().strip() == str(os.getpid())
        except OSError:
            continue
    return mine


def cycle(env, i: int, tag: str) -> None:
    """One checked reset + step; raises AssertionError when anything is off."""
    obs, _ = env.reset()
    assert obs["screenshot"].shape == (env.screen[1], env.screen[0], 3), obs["screenshot"].shape
    gone = env.controller.execute(["test", "-e", "/tmp/soak.txt"])["returncode"]
    assert gone != 0, f"{tag} cycle {i}: the previous cycle's file survived reset()"
    token = f"{tag}-{i}"
    _, _, terminated, _, info = env.step(f"open('/tmp/soak.txt', 'w').write({token!r})")
    assert "error" not in info and not terminated, f"{tag} cycle {i}: {info}"
    got = env.controller.execute(["cat", "/tmp/soak.txt"])["output"]
    assert got == token, f"{tag} cycle {i}: file holds {got!r}, expected {token!r}"


def soak(envs: list, cycles: int, run_dir: Path, report_every: int) -> tuple[list[dict], int, list[str], float]:
    """Run ``cycles`` cycles on each env (one thread per env). Returns (figures rows, ok cycles, errors, seconds)."""
    rows, errors, ok = [], [], [0]
    lock = threading.Lock()
    progress = [0] * len(envs)
    stop = threading.Event()

    def record(label: str) -> None:
        rows.append({"when": label, **host_figures(run_dir)})
        print(f"  {label:<18} " + "  ".join(f"{k}={v:.0f}" for k, v in rows[-1].items() if k != "when"),
              flush=True)

    def worker(k: int) -> None:
        for i in range(cycles):
            if stop.is_set():
                return
            try:
                cycle(envs[k], i, f"env{k}")
                with lock:
                    ok[0] += 1
            except Exception as exc:  # counted and listed: a soak reports, it does not stop
                with lock:
                    errors.append(f"env{k} cycle {i}: {type(exc).__name__}: {exc}")
            progress[k] = i + 1

    t0 = time.monotonic()
    # The first cycle of each env runs alone so "first" is measured with everything started.
    for k in range(len(envs)):
        cycle(envs[k], -1, f"env{k}")
    record("first (warm)")
    threads = [threading.Thread(target=worker, args=(k,), daemon=True) for k in range(len(envs))]
    for thread in threads:
        thread.start()
    next_report = report_every
    try:
        while any(t.is_alive() for t in threads):
            time.sleep(1)
            if min(progress) >= next_report:
                record(f"after {min(progress)} cycles")
                next_report += report_every
    except KeyboardInterrupt:
        print("interrupted: finishing the cycles in flight", flush=True)
        stop.set()
        for thread in threads:
            thread.join()
        cycles = min(progress)
    record(f"last ({cycles} cycles)")
    return rows, ok[0], errors, time.monotonic() - t0


def run_phase(image: str, n_envs: int, cycles: int, report_every: int) -> bool:
    from desktop_env.envs import DesktopEnv
    from desktop_env.paths import runtime_dir

    run_dir = runtime_dir()
    print(f"\n== {n_envs} environment(s) x {cycles} reset+step cycles ==", flush=True)
    envs = [DesktopEnv(path_to_vm=image, require_a11y_tree=False) for _ in range(n_envs)]
    try:
        rows, ok, errors, seconds = soak(envs, cycles, run_dir, report_every)
    finally:
        for env in envs:
            env.close()
    after = host_figures(run_dir)
    total = cycles * n_envs
    print(f"\n{ok}/{total} cycles correct in {seconds / 60:.1f} min ({seconds / max(total, 1):.2f} s per cycle "
          f"per env; {total / seconds:.2f} cycles/s together)")
    for line in errors[:20]:
        print("  FAILED", line)
    first, last = rows[0], rows[-1]
    print(f"\n| figure | first | last | change |\n|---|---|---|---|")
    for key in FIELDS:
        print(f"| {key} | {first[key]:.1f} | {last[key]:.1f} | {last[key] - first[key]:+.1f} |")
    print(f"after close: " + ", ".join(f"{k}={after[k]:.0f}" for k in FIELDS if k not in ("rss_mib", "fds")))
    return not errors and all(after[k] == 0 for k in ("qemu", "overlays", "sockets", "port_locks"))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--image", default="base", help="image name or profile (default base)")
    parser.add_argument("--cycles", type=int, default=300, help="cycles on one environment (0 skips)")
    parser.add_argument("--parallel-cycles", type=int, default=100, help="cycles on each of --envs at once (0 skips)")
    parser.add_argument("--envs", type=int, default=2, help="environments of the parallel phase")
    parser.add_argument("--report-every", type=int, default=50, help="print host figures every N cycles")
    common_flags(parser)
    args = parser.parse_args()
    if args.plan:
        print(plan_image(args.image)[2])
        print(f"{args.cycles} cycle(s) on one environment, then {args.parallel_cycles} cycle(s) on each of "
              f"{args.envs} at once; host figures every {args.report_every} cycles")
        return 0
    os.environ.setdefault("DESKTOP_ENV_RUNTIME_DIR", tempfile.mkdtemp(prefix="desktop-env-soak-"))
    from desktop_env.image.store import resolve_image

    image = resolve_image(args.image)
    print(f"image {image.name}; runtime folder {os.environ['DESKTOP_ENV_RUNTIME_DIR']}; "
          f"host: {os.cpu_count()} cores, accel {image.meta['ready_state']['accel']}")
    good = True
    if args.cycles:
        good &= run_phase(image.name, 1, args.cycles, args.report_every)
    if args.parallel_cycles:
        good &= run_phase(image.name, args.envs, args.parallel_cycles, args.report_every)
    print("\nsoak " + ("passed" if good else "FAILED"))
    return 0 if good else 1


if __name__ == "__main__":
    run_main(main)
