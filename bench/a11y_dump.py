"""Accessibility-tree dump time and size: the desktop, a Calc sheet and a long web page, per image.

A base image is reset three ways (its ``init_state`` desktop; the ``calc`` warm state with a workbook
open and maximized, as the Calc GUI tasks start; the ``chromium`` warm state showing a long page); a
data image four ways (its desktop, and the ``superset``, ``airflow`` and ``dagster`` warm states, each
tool's page rendered in Chromium, as the GUI tasks on them start). The in-VM server's tree is read
``--n`` times in each. Give two images of a profile (the one before a change and the one after) to
get the ratios.

Usage: python bench/a11y_dump.py [--images base-OLD base] [--n 3]
       python bench/a11y_dump.py --images data
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import print_table, summary  # noqa: E402
from desktop_env.agents.a11y import parse_elements  # noqa: E402
from desktop_env.envs.desktop_env import DesktopEnv  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
#: A Calc GUI task (sort by revenue): its setup opens team_sales.xlsx maximized in Calc's warm state.
CALC_TASK = (REPO / "evaluation_examples/examples/calc/b45048fe-cd66-5c13-80ff-9ba8da48a69a"
             / "b45048fe-cd66-5c13-80ff-9ba8da48a69a.json")
PAGE = "/tmp/a11y-bench.html"
HTML = "<!doctype html><title>A long page</title>" + "".join(
    f"<h2>Section {i}</h2><p>Paragraph {i} with <a href='#s{i}'>a link</a> and <button>Button {i}</button></p>"
    "<table>" + "".join(f"<tr><td>row {r}</td><td>{r * i}</td></tr>" for r in range(8)) + "</table>"
    for i in range(60))


def scenes(profile: str) -> list[tuple[str, dict]]:
    """(label, task config) of each start state measured on an image of ``profile``."""
    desktop = ("desktop", {"id": "a11y-desktop", "snapshot": profile, "instruction": "-", "config": []})
    if profile == "data":
        return [desktop] + [(f"{tool.capitalize()} page", {"id": f"a11y-{tool}", "snapshot": f"data:{tool}",
                                                             "instruction": "-", "config": []})
                            for tool in ("superset", "airflow", "dagster")]
    calc = json.loads(CALC_TASK.read_text())
    return [
        desktop,
        ("Calc sheet", {**calc, "id": "a11y-calc"}),
        ("web page", {"id": "a11y-web", "snapshot": "base:chromium", "instruction": "-", "config": [
            {"type": "execute", "parameters": {"command": ["python3", "-c",
                                                           f"open({PAGE!r}, 'w').write({HTML!r})"]}},
            {"type": "chrome_open_tabs", "parameters": {"urls_to_open": [f"file://{PAGE}"]}},
            {"type": "execute", "parameters": {"command": ["sleep", "20"]}}]}),
    ]


def measure(image: str, n: int) -> dict[str, dict]:
    """Dump times (s), sizes (KB) and on-screen element counts per scene on ``image``."""
    out = {}
    env = DesktopEnv(path_to_vm=image, require_a11y_tree=False)
    try:
        for label, task in scenes(env.provider.image.profile):
            env.reset(options={"task_config": {**task, "evaluator": {"func": "infeasible"}}})
            env.controller.accessibility_tree()  # the first read turns toolkit accessibility on
            times, sizes, counts = [], [], []
            for _ in range(n):
                t0 = time.perf_counter()
                xml = env.controller.accessibility_tree() or ""
                times.append(time.perf_counter() - t0)
                sizes.append(len(xml) / 1024)
                counts.append(len(parse_elements(xml, env.screen)))
            out[label] = {"time": summary(times), "kb": sum(sizes) / n, "elements": sum(counts) / n,
                          "image": env.provider.image.name}
            print(f"{image}: {label}: median {out[label]['time']['median']:.1f} s, {out[label]['kb']:.0f} KB, "
                  f"{out[label]['elements']:.0f} on-screen elements", flush=True)
    finally:
        env.close()
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--images", nargs="+", default=["base"], help="image names or profiles, oldest first")
    parser.add_argument("--n", type=int, default=3, help="dumps per scene")
    args = parser.parse_args()
    results = {image: measure(image, args.n) for image in args.images}
    for image, rows in results.items():
        name = next(iter(rows.values()))["image"]
        print_table(f"Accessibility dump on {name}", [(label, r["time"]) for label, r in rows.items()], unit="s")
        for label, r in rows.items():
            print(f"  {label}: {r['kb']:.0f} KB, {r['elements']:.0f} on-screen elements")
    if len(args.images) >= 2:
        first, last = results[args.images[0]], results[args.images[-1]]
        print(f"\n{'scene':12s} {'time ratio':>11s} {'size ratio':>11s}  (first image / last image, medians)")
        for label in first:
            t = first[label]["time"]["median"] / max(last[label]["time"]["median"], 1e-9)
            s = first[label]["kb"] / max(last[label]["kb"], 1e-9)
            print(f"{label:12s} {t:10.1f}x {s:10.1f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
