"""The public data-science suite's own task files, run unchanged: which run here, whether they set up, and a noop's score.

Reads the suite's index (``test_dev.json`` of its development split, or any of its ``test_*.json``), keeps the
apps asked for, and runs ``--model noop`` over them on one image with run.py's harness (resumable: the result
folder keeps finished tasks). Prints one row per task (app, task, runs here or why not, the status, the setup
step that failed, the noop's score) and the counts the acceptance of issue 56 asks for: of the tasks that need
neither the internet nor Docker, how many set up with no failed step and score 0.0.

Usage: python bench/public_suite.py [--suite DIR] [--apps excel,dbt,dagster,jupyter] [--path_to_vm spider2v]
       [--num_envs 2] [--out DIR] [--plan]
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import common_flags, plan_image, run_main  # noqa: E402

DEFAULT_SUITE = os.environ.get("DESKTOP_ENV_PUBLIC_SUITE_DEV") or "/work/shared/public-suite-dev"


def select(suite: Path, apps: list[str]) -> tuple[Path, dict[str, list[str]]]:
    """The suite's examples folder and its index, less the apps not asked for."""
    root = suite / "evaluation_examples"
    index_file = next(iter(sorted(root.glob("test_*.json"))), None)
    if index_file is None:
        raise SystemExit(f"error: no test_*.json index in {root}: give --suite the folder holding evaluation_examples/")
    index = json.loads(index_file.read_text())
    return root, {app: ids for app, ids in index.items() if app in apps}


def answers(root: Path, index: dict[str, list[str]]) -> dict[tuple[str, str], str]:
    """(app, task) -> "runs on image X" / "not runnable here: why" / "does not load: why"."""
    from desktop_env.errors import TaskConfigError
    from desktop_env.tasks import load_task, task_file_for
    from desktop_env.tasks.offline import ACCOUNT, image_needed, offline_blockers, runs_here_text

    out = {}
    for app, ids in index.items():
        for tid in ids:
            path = task_file_for(root / "examples", app, tid)
            try:
                task = load_task(path)
                # what run.py leaves out: an account alone is the user's to give, as in its plan
                blockers = [b for b in offline_blockers(task) if b.kind != ACCOUNT]
                out[(app, tid)] = runs_here_text(image_needed(task), blockers)
            except TaskConfigError as exc:
                out[(app, tid)] = f"does not load: {exc}"
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--suite", default=DEFAULT_SUITE, help="the folder holding evaluation_examples/ "
                        "(default: $DESKTOP_ENV_PUBLIC_SUITE_DEV, else /work/shared/public-suite-dev)")
    parser.add_argument("--apps", default="excel,dbt,dagster,jupyter")
    parser.add_argument("--path_to_vm", default="spider2v")
    parser.add_argument("--num_envs", type=int, default=2)
    parser.add_argument("--out", default=None, help="results folder (default: a new temporary folder)")
    common_flags(parser)
    args = parser.parse_args()
    apps = [a.strip() for a in args.apps.split(",") if a.strip()]
    suite = Path(args.suite)
    image, _profile, line = plan_image(args.path_to_vm)
    if not (suite / "evaluation_examples").is_dir():
        print(f"{line}\nthe suite's folder {suite} is not here: nothing to run (give --suite)")
        return 0 if args.plan else 2
    root, index = select(suite, apps)
    said = answers(root, index)
    if args.plan:
        print(line)
        runnable = Counter(app for (app, _), text in said.items() if text.startswith("runs on"))
        print(f"noop over {sum(map(len, index.values()))} tasks of {', '.join(index)} "
              f"({', '.join(f'{a} {runnable[a]}/{len(ids)} runnable' for a, ids in index.items())}), "
              f"{args.num_envs} environment(s)")
        return 0
    if image is None:
        print(f"error: {line}", file=sys.stderr)
        return 2
    from desktop_env.harness.config import RunConfig, RunConfigError
    from desktop_env.harness.jobs import model_folder
    from desktop_env.harness.status import read_status
    from desktop_env.harness.suite import run_suite

    out = Path(args.out or tempfile.mkdtemp(prefix="public-suite-noop-"))
    out.mkdir(parents=True, exist_ok=True)
    index_file = out / "index.json"
    index_file.write_text(json.dumps(index, indent=1) + "\n")
    try:
        run = RunConfig(model="noop", test_all_meta_path=index_file, test_config_base_dir=root, result_dir=out,
                        path_to_vm=args.path_to_vm, num_envs=args.num_envs)
    except RunConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    outcome = run_suite(run, report=lambda text, error=False: print(text, flush=True))
    folder = model_folder(run)
    print("\n| app | task | runs here | status | noop | failed setup step |\n|---|---|---|---|---|---|")
    counts = Counter()
    for (app, tid), text in sorted(said.items()):
        status = read_status(folder / app / tid) if text.startswith("runs on") else None
        st = (status or {}).get("status", "-")
        score = (status or {}).get("score")
        error = ((status or {}).get("error") or "") if st == "task_error" else ""
        print(f"| {app} | `{tid[:8]}` | {text[:90]} | {st} | {'-' if score is None else f'{score:g}'} | "
              f"{' '.join(error.split())[:160]} |")
        if text.startswith("runs on"):
            counts["runnable"] += 1
            counts["set up, noop 0.0"] += st in ("wrong_result", "agent_fail") and score == 0.0
            counts["failed setups"] += st == "task_error"
    print(f"\n{counts['runnable']} of {len(said)} runnable here; of them {counts['set up, noop 0.0']} set up with "
          f"no failed step and scored 0.0 with noop, {counts['failed setups']} failed in their setup "
          f"(results in {folder})")
    return outcome.exit_code


if __name__ == "__main__":
    run_main(main)
