"""``desktop-env tasks check PATH``: load every task under PATH and report the names it uses."""
from __future__ import annotations

import argparse
import json
import sys
from collections import Counter, defaultdict
from pathlib import Path

from desktop_env.errors import TaskConfigError

_STATUS_TEXT = {"supported": "supported", "account": "needs account", "unavailable": "not runnable here",
                "unknown": "UNKNOWN"}


def _index_files(root: Path) -> list[Path]:
    out = []
    for folder in (root, root / "evaluation_examples"):
        if folder.is_dir():
            out += sorted(folder.glob("test_*.json"))
    return out


def _read_index(path: Path) -> dict[str, list[str]] | None:
    """The index (app -> [task id]) if ``path`` is a suite's index file like ``test_all.json``, else None."""
    from desktop_env.tasks import is_task_file, load_index

    if not path.is_file() or path.suffix != ".json" or is_task_file(path):
        return None
    try:
        return load_index(path)
    except TaskConfigError:
        return None


def runs_here_report(tasks: list, download_mirror: bool = False) -> dict:
    """Whether each task runs here and on which image (:mod:`desktop_env.tasks.offline`), with the counts:
    ``{"tasks": [{app, id, path, runs_here, image, answer, reasons: [{kind, text}]}], "runnable",
    "by_image": {profile or "any": n}, "not_runnable", "by_reason": {kind: n}}`` (a task with several
    reasons counts under its first, as run.py's summary counts it)."""
    from desktop_env.tasks.offline import image_needed, offline_blockers, runs_here_text

    rows, by_image, by_reason = [], Counter(), Counter()
    for task in sorted(tasks, key=lambda t: (t.app or "", t.id)):
        blockers, image = offline_blockers(task, download_mirror), image_needed(task)
        rows.append({"app": task.app, "id": task.id, "path": str(task.path), "runs_here": not blockers,
                     "image": image, "answer": runs_here_text(image, blockers),
                     "reasons": [{"kind": b.kind, "text": str(b)} for b in blockers]})
        if blockers:
            by_reason[blockers[0].kind] += 1
        else:
            by_image[image or "any"] += 1
    return {"tasks": rows, "runnable": sum(by_image.values()), "by_image": dict(by_image.most_common()),
            "not_runnable": len(rows) - sum(by_image.values()), "by_reason": dict(by_reason.most_common())}


def _print_runs_here(report: dict, failed_to_load: int, out) -> None:
    from desktop_env.tasks.offline import counts_text

    w = max(len(f"{r['app']}/{r['id']}") for r in report["tasks"]) + 2
    print(f"\n{'TASK':<{w}} RUNS HERE (offline; the rules: docs/tasks.md)", file=out)
    for r in report["tasks"]:
        print(f"{r['app'] + '/' + r['id']:<{w}} {r['answer']}", file=out)
    images = ", ".join(f"{n} on {'any image' if k == 'any' else 'image ' + k}" for k, n in report["by_image"].items())
    reasons = counts_text(report["by_reason"])
    unloaded = f"; {failed_to_load} did not load (errors below)" if failed_to_load else ""
    print(f"runs here: {report['runnable']} of {len(report['tasks'])}" + (f" ({images})" if images else "") +
          f"; not runnable here: {report['not_runnable']}" + (f" ({reasons})" if reasons else "") + unloaded,
          file=out)


def check(path: str | Path, show_warnings: bool = False, as_json: bool = False, out=None,
          download_mirror: bool = False) -> int:
    """Load every task under ``path`` (or listed by ``path``, a suite's index file), print what they
    use, how many are ``gui``, ``cli+gui`` and ``cli``, and whether each runs here (and on which image);
    return the exit status: 1 on any load error, and when ``path`` holds no task at all (a check that
    passes on nothing would be a false green). ``download_mirror``: the URLs the host fetches come from a
    download mirror, so they do not stop a task."""
    from desktop_env import registry as reg
    from desktop_env.tasks import find_task_files, load_index, load_task, task_file_for
    from desktop_env.tasks.solution import interface_of, needs_gui, solution_items

    out = out or sys.stdout
    root = Path(path)
    if not root.exists():
        print(f"error: {root} does not exist", file=sys.stderr)
        return 2
    index = _read_index(root)
    index_file = root if index is not None else None
    if index_file is not None:  # a suite's index (test_*.json): the tasks it lists
        listed = (task_file_for(index_file.parent / "examples", app, tid) for app, ids in index.items() for tid in ids)
        files = [f for f in listed if f is not None]  # the missing ones are reported with the index below
    else:
        files = find_task_files(root)
    tasks, errors, warnings = [], [], []
    gui = 0
    uses: Counter = Counter()
    interfaces: Counter = Counter()
    per_app: dict[str, Counter] = defaultdict(Counter)
    tables = {r.kind: r for r in reg.ALL_REGISTRIES}

    def app_of(p: Path) -> str:
        parent = p.parent.parent if p.parent.name == p.stem else p.parent
        return parent.name or "?"

    for f in files:
        try:
            task = load_task(f)
        except TaskConfigError as exc:
            errors.append(exc)
            per_app[app_of(f)]["errors"] += 1
            try:  # still count the names of a task that failed validation, if it parses
                task = load_task(f, validate=False)
            except TaskConfigError:
                continue
            for kind, name in task.names_used():
                uses[(kind, name)] += 1
            continue
        tasks.append(task)
        warnings.extend(task.warnings)
        interfaces[interface_of(task) or "untagged"] += 1
        gui += needs_gui(task)
        if task.solution_kind is not None:
            try:
                solution_items(task)  # the rules of gui and cli+gui solutions
            except TaskConfigError as exc:
                errors.append(exc)
                per_app[task.app or app_of(f)]["errors"] += 1
        app = task.app or app_of(f)
        per_app[app]["tasks"] += 1
        per_app[app]["account"] += int(task.needs_account)
        per_app[app][task.spelling] += 1
        for kind, name in task.names_used():
            uses[(kind, name)] += 1

    indexes = [index_file] if index_file is not None else _index_files(root if root.is_dir() else root.parent)
    for idx in indexes:
        examples = idx.parent / "examples"
        try:
            index = load_index(idx)
        except TaskConfigError as exc:
            errors.append(exc)
            continue
        for app, ids in index.items():
            for i, tid in enumerate(ids):
                if task_file_for(examples, app, tid) is None:
                    errors.append(TaskConfigError(f"task {tid!r} is listed but has no file under {examples / app}",
                                                  path=str(idx), field=f"{app}[{i}]"))

    if not files and not errors:
        errors.append(TaskConfigError(
            (f"the index lists no task" if index_file is not None else
             "no task file found (a task file is a JSON object with 'id', 'instruction' and 'evaluator' or "
             "'evaluation'; give a task file, a task or app folder, a suite root or its index file)"),
            path=str(root)))

    def status(kind, name):
        table = tables[kind]
        return table.entries[name].status if name in table else "unknown"

    runs_here = runs_here_report(tasks, download_mirror)
    failed_to_load = len(files) - len(tasks)
    if as_json:
        json.dump({
            "tasks": len(tasks), "files": len(files),
            "errors": [{"path": e.path, "field": e.field, "message": str(e)} for e in errors],
            "warnings": warnings,
            "names": [{"kind": k, "name": n, "uses": c, "status": status(k, n)}
                      for (k, n), c in sorted(uses.items())],
            "apps": {a: dict(c) for a, c in sorted(per_app.items())},
            "interfaces": dict(sorted(interfaces.items())), "need_gui": gui,
            "runs_here": runs_here,
        }, out, indent=1)
        out.write("\n")
        return 1 if errors else 0

    where = "listed by" if index_file is not None else "under"
    print(f"{len(files)} task file(s) {where} {root}: {len(tasks)} loaded, {len(errors)} error(s)", file=out)
    if tasks:
        order = ("gui", "cli+gui", "cli", "untagged")
        untagged = (f"; the {interfaces['untagged']} untagged are desktop tasks, as the general suite's are"
                    if interfaces["untagged"] else "")
        print("interface: " + ", ".join(f"{interfaces[k]} {k}" for k in order if interfaces[k]) +
              f" ({gui} of {len(tasks)} need the GUI{untagged})", file=out)
    if uses:
        w = max(len(n) for _, n in uses) + 2
        print(f"\n{'KIND':<16} {'NAME':<{w}} {'USES':>5}  STATUS", file=out)
        for (kind, name), count in sorted(uses.items(), key=lambda kv: (kv[0][0], -kv[1], kv[0][1])):
            st = status(kind, name)
            note = ""
            if st == "unknown":
                close = tables[kind].suggest(name)
                note = f" (did you mean {' or '.join(map(repr, close))}?)" if close else ""
            elif st != "supported" and name in tables[kind]:
                note = f" ({tables[kind].entries[name].note})" if tables[kind].entries[name].note else ""
            print(f"{kind:<16} {name:<{w}} {count:>5}  {_STATUS_TEXT[st]}{note}", file=out)
    if per_app:
        print(f"\n{'APP':<24} {'TASKS':>6} {'ACCOUNT':>8} {'ERRORS':>7}", file=out)
        for app, c in sorted(per_app.items()):
            print(f"{app:<24} {c['tasks']:>6} {c['account']:>8} {c['errors']:>7}", file=out)
    if tasks:
        _print_runs_here(runs_here, failed_to_load, out)
    if warnings:
        if show_warnings:
            print(f"\n{len(warnings)} warning(s):", file=out)
            for wmsg in warnings:
                print(f"  warning: {wmsg}", file=out)
        else:
            print(f"\n{len(warnings)} warning(s) (show them with --warnings)", file=out)
    if errors:
        print(f"\n{len(errors)} error(s):", file=out)
        for e in errors:
            print(f"  error: {e}", file=out)
        return 1
    return 0


def cmd_tasks_check(args) -> int:
    """``tasks check``: see :func:`check`."""
    if args.download_mirror is not None:
        from desktop_env.configs.mirror import MANIFEST

        if not (Path(args.download_mirror) / MANIFEST).is_file():
            print(f"error: --download_mirror {args.download_mirror}: no {MANIFEST} there (fill it with "
                  f"`desktop-env mirror {args.path} --out {args.download_mirror}`)", file=sys.stderr)
            return 2
    return check(args.path, show_warnings=args.warnings, as_json=args.json,
                 download_mirror=args.download_mirror is not None)


def register(subparsers) -> None:
    """Add the ``tasks`` subcommand (``tasks check PATH``, ``tasks verify --suite F``) to the CLI's subparsers."""
    tasks = subparsers.add_parser("tasks", help="check task files (either spelling)")
    tsub = tasks.add_subparsers(dest="tasks_command", required=True)
    c = tsub.add_parser("check", help="load every task under PATH; report names used and errors")
    c.add_argument("path", help="a task file, a task folder, an app folder, examples/, a suite root, "
                                   "or a suite's index file (evaluation_examples/test_*.json: the tasks it lists)")
    c.add_argument("--warnings", action="store_true", help="print every warning (placeholders, unused fields)")
    c.add_argument("--json", action="store_true", help="machine-readable report")
    c.add_argument("--download_mirror", default=None, metavar="DIR",
                   help="the run will serve fetched URLs from this mirror (run.py --download_mirror): a task "
                        "that downloads from the internet then runs here")
    c.set_defaults(func=cmd_tasks_check)
    from desktop_env import verify
    v = tsub.add_parser("verify", help="run oracle and noop over a suite; prove each task (see desktop_env/verify.py)")
    verify.add_arguments(v)
    v.set_defaults(func=verify.cmd_verify)


def main(argv: list[str] | None = None) -> int:
    """Run ``tasks ...`` on its own (``python -m desktop_env.cli_tasks check PATH``)."""
    parser = argparse.ArgumentParser(prog="desktop-env")
    register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["tasks", *(sys.argv[1:] if argv is None else argv)])
    return int(args.func(args) or 0)


if __name__ == "__main__":
    raise SystemExit(main())
