"""Build the documentation index for retrieval: `python evaluation_examples/documents/build.py [desktop-env docs build options]`.

Same as `desktop-env docs build`: reads sources.json beside this file (plus any
--add NAME=DIR), writes <cache dir>/docs/index.sqlite. See README.md here.
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from desktop_env.cli import main  # noqa: E402

if __name__ == "__main__":
    raise SystemExit(main(["docs", "build", *sys.argv[1:]]))
