"""Regenerate the tasks: ``python3 -m evaluation_examples.generators [MODULE ...]`` from the repository root.

With no MODULE, every generator module runs (see the package docstring).
"""
from __future__ import annotations

import argparse
import sys

from . import GENERATORS, run


def main(argv: list[str] | None = None) -> int:
    """Parse the command line and run the chosen generator modules; returns the exit status."""
    parser = argparse.ArgumentParser(prog="python3 -m evaluation_examples.generators",
                                     description="Regenerate the generated tasks, their data and index entries.")
    parser.add_argument("modules", nargs="*", metavar="MODULE",
                        help=f"generator modules to run (default: all): {', '.join(GENERATORS)}")
    args = parser.parse_args(argv)
    try:
        run(args.modules or GENERATORS)
    except ValueError as e:
        parser.error(str(e))
    return 0


if __name__ == "__main__":
    sys.exit(main())
