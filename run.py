"""Run an agent over a task suite: `python run.py --model oracle --test_all_meta_path evaluation_examples/test_smoke.json`.

`python run.py --help` lists the flags. The work is done by the harness (desktop_env/harness/: the job
plan, the episode loop, retries and statuses, workers, the results layout and the summary); this file
parses the flags and prints the run's progress.
"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from desktop_env.harness.options import parse_args  # noqa: E402
from desktop_env.harness.suite import run_suite  # noqa: E402
from desktop_env.harness.workers import configure_logging  # noqa: E402


def print_line(line: str, error: bool = False) -> None:
    """Print one progress line of the run (errors to stderr), at once."""
    print(line, file=sys.stderr if error else sys.stdout, flush=True)


def main(argv: list[str] | None = None) -> int:
    config = parse_args(argv)
    configure_logging(config.log_level)
    return run_suite(config, print_line).exit_code


if __name__ == "__main__":
    raise SystemExit(main())
