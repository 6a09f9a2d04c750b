"""Action round trip: persistent executor vs a new Python process per action; host-side vs in-guest screenshots.

Usage: python bench/step.py [--path_to_vm base] [--n 20]
"""
from __future__ import annotations

import argparse
import shlex
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import common_flags, plan_image, print_table, run_main, summary  # noqa: E402
from desktop_env.controllers.python import PythonController  # noqa: E402
from desktop_env.providers.qemu.provider import QemuProvider  # noqa: E402

GUEST_PYTHON = "/opt/desktop-env/venv/bin/python"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--image", default="base")
    parser.add_argument("--n", type=int, default=20, help="samples per measurement")
    common_flags(parser)
    args = parser.parse_args()
    if args.plan:
        print(plan_image(args.image)[2])
        print(f"{args.n} samples each: a click through the persistent executor and through a new process, a "
              "trivial command, a host-side and an in-guest screenshot")
        return 0
    with QemuProvider(image=args.image) as vm:
        guest = PythonController(vm.server.host, vm.server.port, token=vm.token)
        w, h = vm.image.screen
        code = f"import pyautogui; pyautogui.click({w // 2}, {h - 5})"
        persistent, per_process, host_shot, guest_shot, trivial = [], [], [], [], []
        guest.run_pyautogui(code)  # warm the executor
        for i in range(args.n):
            t0 = time.perf_counter()
            reply = guest.run_pyautogui(code)
            persistent.append(time.perf_counter() - t0)
            assert reply["returncode"] == 0, reply
            # /bin/sh -c keeps the server from routing it to the executor: a fresh interpreter per action.
            t0 = time.perf_counter()
            reply = guest.execute(["/bin/sh", "-c", f"exec {GUEST_PYTHON} -c {shlex.quote(code)}"])
            per_process.append(time.perf_counter() - t0)
            assert reply["returncode"] == 0, reply
            t0 = time.perf_counter()
            guest.execute(["true"])
            trivial.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            vm.screenshot()
            host_shot.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            guest.screenshot()
            guest_shot.append(time.perf_counter() - t0)
    p, q = summary(persistent), summary(per_process)
    print(f"image {vm.image.name} ({vm.image.meta['screen']}, accel {vm.image.meta['ready_state']['accel']})")
    print_table("Action round trip (a click)", [
        ("persistent executor (/pyautogui)", p),
        ("new Python process per action (/execute)", q),
        ("trivial command through the server (true)", summary(trivial)),
    ], unit="ms")
    print(f"\nratio process-per-action / persistent executor (medians): {q['median'] / p['median']:.1f}x")
    hs, gs = summary(host_shot), summary(guest_shot)
    print_table("Screenshot latency", [
        ("host-side (QMP screendump)", hs),
        ("in-guest server (/screenshot)", gs),
    ], unit="ms")
    print(f"\nratio in-guest / host-side (medians): {gs['median'] / hs['median']:.1f}x")
    return 0


if __name__ == "__main__":
    run_main(main)
