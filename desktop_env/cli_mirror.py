"""``desktop-env mirror``: prepare the files a suite downloads, for air-gapped and reproducible runs.

    desktop-env mirror SUITE_DIR_OR_INDEX --out DIR   fetch every URL the suite's tasks fetch into DIR
    desktop-env mirror verify DIR                     hash DIR's files again; list missing and changed ones

Then ``run.py --download_mirror DIR`` serves those URLs from DIR (see desktop_env/configs/mirror.py).
"""
from __future__ import annotations

import sys

from desktop_env.errors import DesktopEnvError


def _fill(source: str, out: str, recheck: bool, accept_changes: bool) -> int:
    from desktop_env.configs.mirror import Mirror
    from desktop_env.tasks.urls import suite_urls

    uses, errors = suite_urls(source)
    for exc in errors:
        print(f"warning: {exc}", file=sys.stderr)
    if not uses:
        print(f"{source}: its tasks fetch no URL on the host; nothing to mirror")
        return 0
    mirror = Mirror(out)
    print(f"{len(uses)} URLs used by the tasks of {source}; mirror {mirror.root}", flush=True)

    def progress(i: int, total: int, url: str, outcome: str) -> None:
        print(f"[{i}/{total}] {url}: {outcome}", flush=True)

    report = mirror.fill(uses, recheck=recheck, accept_changes=accept_changes, progress=progress)
    print(f"\nfetched {len(report.fetched)}, unchanged {len(report.unchanged)}, changed upstream "
          f"{len(report.changed)}, changes accepted {len(report.accepted)}, failed {len(report.failed)}")
    for url in report.changed:
        print(f"changed upstream (the old file is still served; rerun with --accept_changes to switch): {url}")
    for url, why in report.failed.items():
        print(f"FAILED {url}: {why} (used by {', '.join(uses[url])})", file=sys.stderr)
    return 1 if report.failed else 0


def _verify(folder: str) -> int:
    from desktop_env.configs.mirror import MANIFEST, Mirror

    mirror = Mirror.open(folder)
    report = mirror.verify()
    for url in report.missing:
        print(f"missing: {url} ({mirror.root / mirror.entries[url]['path']})")
    for url in report.changed:
        print(f"changed: {url} ({mirror.root / mirror.entries[url]['path']}: its sha256 is not the {MANIFEST}'s)")
    print(f"{len(report.ok)} files ok, {len(report.missing)} missing, {len(report.changed)} changed in {mirror.root}")
    return 1 if report.missing or report.changed else 0


def cmd_mirror(args) -> int:
    """``desktop-env mirror``: fill a mirror folder, or verify one (``mirror verify DIR``)."""
    try:
        if args.what[0] == "verify" and len(args.what) == 2 and args.out is None:
            return _verify(args.what[1])
        if len(args.what) != 1 or args.out is None:
            print("usage: desktop-env mirror SUITE_DIR_OR_INDEX --out DIR | desktop-env mirror verify DIR",
                  file=sys.stderr)
            return 2
        return _fill(args.what[0], args.out, not args.missing_only, args.accept_changes)
    except DesktopEnvError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


def register(subparsers) -> None:
    """Add ``mirror`` to the ``desktop-env`` command line."""
    m = subparsers.add_parser("mirror", help="prepare every file a suite downloads (for runs without internet)",
                              description=__doc__, formatter_class=__import__("argparse").RawDescriptionHelpFormatter)
    m.add_argument("what", nargs="+", metavar="SUITE_DIR_OR_INDEX | verify DIR")
    m.add_argument("--out", default=None, help="the mirror folder to fill (created; a rerun resumes it)")
    m.add_argument("--missing-only", action="store_true",
                   help="fetch only URLs the mirror lacks (default: also fetch the others again and report "
                        "what changed upstream)")
    m.add_argument("--accept_changes", action="store_true",
                   help="serve the new upstream version of a changed file (default: keep serving the old one "
                        "and keep the new one aside as <file>.upstream)")
    m.set_defaults(func=cmd_mirror)
