"""The ``desktop-env docs`` subcommand: build and query the documentation index."""
from __future__ import annotations

import json
from pathlib import Path


def _parse_add(values: list[str] | None):
    from desktop_env.rag.index import DocSource, DocsError

    out = []
    for v in values or []:
        name, sep, path = v.partition("=")
        if not sep or not path:
            raise DocsError(f"--add {v!r}: expected NAME=DIR (a folder of HTML pages)")
        if not Path(path).expanduser().is_dir():
            raise DocsError(f"--add {v!r}: {path} is not a folder")
        out.append(DocSource(name=name, path=Path(path).expanduser().resolve()))
    return out


def cmd_docs_build(args) -> int:
    from desktop_env.rag.index import DEFAULT_SOURCES, build_index, default_index_path, load_sources

    sources = [] if args.no_defaults else load_sources(args.sources or DEFAULT_SOURCES)
    sources += _parse_add(args.add)
    if args.max_files:
        for s in sources:
            s.max_files = args.max_files
    out = Path(args.index) if args.index else default_index_path(args.cache_dir)
    stats = build_index(sources, out)
    print(f"{'source':<14} {'pages':>6} {'chunks':>7}")
    for name in stats.pages:
        print(f"{name:<14} {stats.pages[name]:>6} {stats.chunks[name]:>7}")
    for name in stats.missing:
        print(f"{name:<14} missing (see the warning above)")
    print(f"\nindex: {out} ({stats.seconds:.0f} s)")
    return 0


def cmd_docs_query(args) -> int:
    from desktop_env.rag.index import DocIndex, default_index_path

    with DocIndex(args.index or default_index_path(args.cache_dir)) as index:
        hits = index.query(" ".join(args.text), args.k, sources=args.source)
    if args.json:
        print(json.dumps([h.__dict__ for h in hits], indent=1, ensure_ascii=False))
        return 0
    if not hits:
        print("no match")
    for i, h in enumerate(hits, 1):
        print(f"[{i}] {h.source}  bm25 {h.score:.2f}  {h.title}" + (f" / {h.heading}" if h.heading else ""))
        print(f"    {h.file}")
        snippet = " ".join(h.text.split())
        print(f"    {snippet[:300]}{'...' if len(snippet) > 300 else ''}\n")
    return 0


def register(subparsers) -> None:
    """Add ``docs build`` and ``docs query`` to the CLI."""
    docs = subparsers.add_parser("docs", help="the offline documentation index (retrieval for agents)")
    dsub = docs.add_subparsers(dest="docs_command", required=True)
    common = [("--index", dict(help="index file (default: <cache dir>/docs/index.sqlite)")),
              ("--cache-dir", dict(type=Path, default=None, help="cache directory"))]
    b = dsub.add_parser("build", help="collect, clean, chunk and index the documentation folders")
    for flag, kw in common:
        b.add_argument(flag, **kw)
    b.add_argument("--sources", default=None,
                   help="sources file (default: evaluation_examples/documents/sources.json)")
    b.add_argument("--add", action="append", metavar="NAME=DIR", help="also index this HTML folder (repeatable)")
    b.add_argument("--no-defaults", action="store_true", help="index only the --add folders")
    b.add_argument("--max-files", type=int, default=None, help="at most this many pages per source (quick builds)")
    b.set_defaults(func=cmd_docs_build)
    q = dsub.add_parser("query", help="the best-matching chunks for some text (BM25)")
    for flag, kw in common:
        q.add_argument(flag, **kw)
    q.add_argument("text", nargs="+")
    q.add_argument("-k", type=int, default=5, help="how many chunks (default 5)")
    q.add_argument("--source", action="append", help="only this source (repeatable)")
    q.add_argument("--json", action="store_true")
    q.set_defaults(func=cmd_docs_query)
