"""Take the README's screenshot of the booted base desktop through the in-VM server.

Usage: python bench/docs_screenshot.py [--path_to_vm base] [--out docs/screenshots/base-desktop.png]
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from desktop_env.controllers.python import PythonController  # noqa: E402
from desktop_env.providers.qemu.provider import QemuProvider  # noqa: E402
from _common import common_flags, plan_image, run_main  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--image", default="base")
    parser.add_argument("--out", default="docs/screenshots/base-desktop.png")
    common_flags(parser)
    args = parser.parse_args()
    if args.plan:
        print(plan_image(args.image)[2])
        print(f"opens Calc (sales.csv), a terminal and Chromium, then writes the screenshot to {args.out}")
        return 0
    with QemuProvider(image=args.image) as vm:
        guest = PythonController(vm.server.host, vm.server.port, token=vm.token)
        guest.upload_file(b"region,sales\nnorth,120\nsouth,95\neast,143\nwest,88\n", "/home/user/Documents/sales.csv")
        page = ("<html><head><title>desktop-env</title></head><body style='font-family:sans-serif'>"
                "<h1>desktop-env</h1><p>A Debian desktop built offline, restored in about a second.</p>"
                "<button>Run task</button></body></html>")
        guest.upload_file(page.encode(), "/home/user/Documents/index.html")
        guest.launch(["localc", "--infilter=CSV:44,34,76,1", "/home/user/Documents/sales.csv"])
        guest.launch(["xfce4-terminal", "--geometry", "90x20+40+620", "--title", "terminal",
                      "--working-directory", "/home/user", "-x", "bash", "-c",
                      "sqlite3 --version; python3 --version; duckdb --version; jupyter lab --version; exec bash"])
        guest.launch(["chromium", "--window-position=1000,560", "--window-size=880,480",
                      "file:///home/user/Documents/index.html"])
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline:
            windows = guest.execute(["wmctrl", "-l"])["output"]
            if "terminal" in windows and "desktop-env" in windows and "sales.csv" in windows:
                break
            time.sleep(1)
        guest.execute(["wmctrl", "-r", "sales.csv", "-b", "remove,maximized_vert,maximized_horz"])
        guest.execute(["wmctrl", "-r", "sales.csv", "-e", "0,40,60,940,520"])
        guest.execute(["wmctrl", "-a", "Chromium"])
        time.sleep(15)  # let every window finish drawing
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_bytes(guest.screenshot())
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    run_main(main)
