"""libvirt provider timings: start (restore + init_state snapshot), revert to init_state, screenshot.

Usage: python bench/libvirt_provider.py [--path_to_vm base] [--uri qemu:///system] [--starts 2] [--reverts 5] [--shots 20]
(needs a running libvirtd: sudo bash .ci/start-libvirtd; the first start uploads the image to the pool)
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import common_flags, plan_image, print_table, run_main, summary  # noqa: E402
from desktop_env.image.store import resolve_image  # noqa: E402
from desktop_env.providers.libvirt import LibvirtProvider  # noqa: E402


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--image", default="base")
    p.add_argument("--uri", default="qemu:///system")
    p.add_argument("--starts", type=int, default=2)
    p.add_argument("--reverts", type=int, default=5)
    p.add_argument("--shots", type=int, default=20)
    common_flags(p)
    args = p.parse_args()
    if args.plan:
        print(plan_image(args.image)[2])
        print(f"libvirt at {args.uri}: {args.starts} start(s); on the first, {args.reverts} revert(s) and "
              f"{args.shots} screenshot(s)")
        return 0
    image = resolve_image(args.image)
    starts, reverts, shots = [], [], []
    for i in range(args.starts):
        provider = LibvirtProvider(image=image, uri=args.uri)
        t0 = time.perf_counter()
        provider.start()
        starts.append(time.perf_counter() - t0)
        try:
            if i == 0:
                for _ in range(args.reverts):
                    reverts.append(provider.revert_to_snapshot())
                for _ in range(args.shots):
                    t0 = time.perf_counter()
                    provider.screenshot()
                    shots.append(time.perf_counter() - t0)
        finally:
            provider.stop()
    print_table(f"libvirt provider on {args.uri}, image {image.name} (accel {image.meta['ready_state']['accel']})", [
        ("start: restore ready state + init_state snapshot", summary(starts)),
        ("revertToSnapshot(init_state) until server answers", summary(reverts)),
    ])
    print_table("host-side screenshot (virDomainScreenshot stream)", [("screenshot", summary(shots))], unit="ms")


if __name__ == "__main__":
    run_main(main)
