"""Accessibility-tree dump time and size: the desktop, a Calc sheet and a long web page, per image.

A base image is reset three ways (its ``init_state`` desktop; the ``calc`` warm state with a workbook
open and maximized, as the Calc GUI tasks start; the ``chromium`` warm state showing a long page); a
data image four ways (its desktop, and the ``superset``, ``airflow`` and ``dagster`` warm states, each
tool's page rendered in Chromium, as the GUI tasks on them start). The in-VM server's tree is read
``--n`` times in each. Give two images of a profile (the one before a change and the one after) to
get the ratios.

Each scene is read both ways the server offers (``--web atspi devtools``, the default): walking
Chromium's pages over AT-SPI, and reading them over DevTools (what the server does by default when
Chromium has a remote-debugging port); the last table gives their ratio per scene.

Usage: python bench/a11y_dump.py [--images base-OLD base] [--n 3] [--web atspi devtools]
       python bench/a11y_dump.py --images data [--scenes airflow dagster]
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import common_flags, plan_image, print_table, run_main, summary  # noqa: E402
from desktop_env.a11y_tree import parse_elements  # noqa: E402
from desktop_env.envs.desktop_env import DesktopEnv  # noqa: E402
from desktop_env.image.current import resolve  # noqa: E402

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


def measure(image: str, n: int, webs: list[str], only: list[str] | None = None) -> dict[str, dict]:
    """Dump times (s), sizes (KB) and on-screen element counts per scene and page reader on ``image``
    (``only``: the scenes whose label contains one of these words, any case; None: every scene).

    Keys are ``"scene"`` for the first of ``webs`` and ``"scene (web)"`` for the others; the reads
    of the readers alternate, so that a slower moment of the guest falls on both.
    """
    out = {}
    env = DesktopEnv(path_to_vm=image, require_a11y_tree=False)
    try:
        for label, task in scenes(env.provider.image.profile):
            if only and not any(word.lower() in label.lower() for word in only):
                continue
            env.reset(options={"task_config": {**task, "evaluator": {"func": "infeasible"}}})
            env.controller.accessibility_tree()  # the first read turns toolkit accessibility on
            got = {web: ([], [], [], []) for web in webs}
            for _ in range(n):
                for web in webs:
                    times, sizes, counts, pages = got[web]
                    t0 = time.perf_counter()
                    xml, stats = env.controller.accessibility_tree_with_stats(web=web)
                    times.append(time.perf_counter() - t0)
                    sizes.append(len(xml or "") / 1024)
                    counts.append(len(parse_elements(xml or "", env.screen)))
                    pages.append(stats.get("pages", 0))
            for i, web in enumerate(webs):
                times, sizes, counts, pages = got[web]
                key = label if i == 0 else f"{label} ({web})"
                out[key] = {"time": summary(times), "kb": sum(sizes) / n, "elements": sum(counts) / n,
                            "pages": max(pages), "image": env.provider.image.name, "scene": label, "web": web}
                print(f"{image}: {key} [{web}]: median {out[key]['time']['median']:.2f} s, {out[key]['kb']:.0f} KB, "
                      f"{out[key]['elements']:.0f} on-screen elements, {out[key]['pages']} page(s) over DevTools",
                      flush=True)
    finally:
        env.close()
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--images", nargs="+", default=["base"], help="image names or profiles, oldest first")
    parser.add_argument("--n", type=int, default=3, help="dumps per scene")
    parser.add_argument("--web", nargs="+", default=["atspi", "devtools"], choices=["atspi", "devtools"],
                        help="how the server reads Chromium's pages (the first one is compared across images)")
    parser.add_argument("--scenes", nargs="+", metavar="WORD",
                        help="only the scenes whose label holds one of these words (e.g. airflow dagster)")
    common_flags(parser)
    args = parser.parse_args()
    if args.plan:
        for ref in args.images:
            image, profile, line = plan_image(ref)
            labels = [label for label, _ in scenes(profile)
                      if not args.scenes or any(w.lower() in label.lower() for w in args.scenes)]
            print(f"{line}: {args.n} dump(s) per scene and reader ({', '.join(args.web)}) of: {', '.join(labels)}")
        return 0
    if args.scenes:  # checked before any VM boots: the scenes follow from each image's profile
        for image in args.images:
            labels = [label for label, _ in scenes(resolve(image).profile)]
            if not any(word.lower() in label.lower() for word in args.scenes for label in labels):
                parser.error(f"no scene of {image} matches --scenes {' '.join(args.scenes)}; "
                             f"its scenes: {', '.join(labels)}")
    results = {image: measure(image, args.n, args.web, args.scenes) for image in args.images}
    for image, rows in results.items():
        name = next(iter(rows.values()))["image"]
        print_table(f"Accessibility dump on {name}", [(label, r["time"]) for label, r in rows.items()], unit="s")
        for label, r in rows.items():
            print(f"  {label}: {r['kb']:.0f} KB, {r['elements']:.0f} on-screen elements, "
                  f"{r['pages']} page(s) read over DevTools")
        if len(args.web) == 2:
            first, second = args.web
            print(f"\n{'scene':28s} {first:>9s} {second:>9s} {'ratio':>7s} {'size ratio':>11s}  ({name}, medians)")
            for label, r in rows.items():
                if r["web"] != first:
                    continue
                o = rows[f"{label} ({second})"]
                print(f"{label:28s} {r['time']['median']:8.2f}s {o['time']['median']:8.2f}s "
                      f"{r['time']['median'] / max(o['time']['median'], 1e-9):6.1f}x {r['kb'] / max(o['kb'], 1e-9):10.1f}x")
    if len(args.images) >= 2:
        first, last = results[args.images[0]], results[args.images[-1]]
        print(f"\n{'scene':12s} {'time ratio':>11s} {'size ratio':>11s}  (first image / last image, medians)")
        for label in (k for k, r in first.items() if r["web"] == args.web[0]):
            t = first[label]["time"]["median"] / max(last[label]["time"]["median"], 1e-9)
            s = first[label]["kb"] / max(last[label]["kb"], 1e-9)
            print(f"{label:12s} {t:10.1f}x {s:10.1f}x")
    return 0


if __name__ == "__main__":
    run_main(main)
