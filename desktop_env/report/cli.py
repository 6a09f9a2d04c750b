"""The ``desktop-env report`` subcommand."""
from __future__ import annotations

from pathlib import Path


def cmd_report(args) -> int:
    from desktop_env.report import build_report
    from desktop_env.report.tables import overall_rows

    dirs = [args.result_dir, *(args.compare or [])]
    out = Path(args.out) if args.out else Path(args.result_dir) / "report"
    report = build_report(dirs, out, tasks_root=args.tasks)
    print(f"{'run':<40} {'tasks':>5} {'success':>8} {'rate':>6}")
    for row in overall_rows(report.results):
        print(f"{row['run']:<40} {row['tasks']:>5} {row['successes']:>8} {row['success_rate']:>6.1%}")
    print(f"\nreport: {report.index.resolve().as_uri()}")
    print(f"CSV:    {(out / 'csv').resolve()}")
    return 0


def register(subparsers) -> None:
    """Add ``report RESULT_DIR [--out DIR] [--compare DIR ...] [--tasks SUITE]`` to the CLI."""
    p = subparsers.add_parser("report", help="CSV summaries, plots and an HTML report of a run's results")
    p.add_argument("result_dir", help="the --result_dir of a run (or any folder below it)")
    p.add_argument("--out", help="output folder (default: RESULT_DIR/report)")
    p.add_argument("--compare", nargs="+", metavar="RESULT_DIR", help="more runs, shown side by side")
    p.add_argument("--tasks", metavar="SUITE",
                   help="suite root (e.g. evaluation_examples) for tags, categories and instructions "
                        "when the results lack them")
    p.set_defaults(func=cmd_report)
