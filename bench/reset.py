"""Cold boot to ready vs revert to init_state to ready, side by side, with their ratio.

Usage: python bench/reset.py [--path_to_vm base] [--boots 2] [--reverts 10]
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import requests  # noqa: E402

from _common import common_flags, plan_image, print_table, run_main, summary  # noqa: E402
from desktop_env.image.recipe import Recipe  # noqa: E402
from desktop_env.image.store import resolve_image  # noqa: E402
from desktop_env.paths import runtime_dir  # noqa: E402
from desktop_env.ports import PortLease  # noqa: E402
from desktop_env.machine import QemuMachine, create_overlay  # noqa: E402
from desktop_env.providers.qemu.provider import QemuProvider  # noqa: E402


def cold_boot(image, accel: str) -> float:
    """Boot the frozen disk from scratch (new overlay) until the desktop is up: the server
    reports a display and the profile's ready check (XFCE panel and desktop) passes, the
    same condition the image's init_state was saved at."""
    meta = image.meta
    headers = {"Authorization": f"Bearer {image.token}", "Connection": "close"} if image.token else {}
    ready_check = Recipe.load(image.profile).ready_check
    with tempfile.TemporaryDirectory(prefix="bench-cold-") as tmp, \
            PortLease(runtime_dir() / "ports", 1) as ports:
        overlay = create_overlay(image.file("disk"), Path(tmp) / "overlay.qcow2")
        spec = image.vm_spec(overlay, accel=accel, forwards={meta["server_port"]: ports.ports[0]})
        machine = QemuMachine(spec, Path(tmp) / "run")
        t0 = time.perf_counter()
        machine.start()
        try:
            while True:
                try:
                    base = f"http://127.0.0.1:{ports.ports[0]}"
                    reply = requests.get(base + "/health", timeout=2)
                    if reply.ok and reply.json().get("display"):
                        check = requests.post(base + "/execute", timeout=30, headers=headers,
                                              json={"command": ready_check, "shell": True})
                        if check.ok and check.json().get("returncode") == 0:
                            return time.perf_counter() - t0
                except requests.RequestException:
                    pass
                if time.perf_counter() - t0 > 900:
                    raise RuntimeError("cold boot did not reach a ready server in 900 s")
                time.sleep(0.2)
        finally:
            machine.kill()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--image", default="base")
    parser.add_argument("--boots", type=int, default=2)
    parser.add_argument("--reverts", type=int, default=10)
    common_flags(parser)
    args = parser.parse_args()
    if args.plan:
        print(plan_image(args.image)[2])
        print(f"{args.boots} cold boot(s) to the desktop, then {args.reverts} revert(s) to init_state")
        return 0
    image = resolve_image(args.image)
    accel = image.meta["ready_state"]["accel"]
    print(f"image {image.name} ({image.meta['screen']}, {image.meta['memory_mb']} MiB, {accel})")

    boots = []
    for i in range(args.boots):
        secs = cold_boot(image, accel)
        boots.append(secs)
        print(f"  cold boot {i + 1}: {secs:.2f} s", flush=True)

    reverts, first = [], None
    with QemuProvider(image=image) as vm:
        for i in range(args.reverts):
            t0 = time.perf_counter()
            vm.revert_to_snapshot("init_state")
            reverts.append(time.perf_counter() - t0)
        overlay_kib = (vm.dir / "overlay.qcow2").stat().st_size // 1024
    print(f"  {args.reverts} reverts done; overlay after revert: {overlay_kib} KiB")

    cold, warm = summary(boots), summary(reverts)
    print_table("Reset latency (to the in-VM server answering)", [
        ("cold boot to desktop ready (no saved state)", cold),
        ("revert to init_state to ready (-incoming)", warm),
    ])
    print(f"\nratio cold boot / revert (medians): {cold['median'] / warm['median']:.1f}x")
    return 0


if __name__ == "__main__":
    run_main(main)
