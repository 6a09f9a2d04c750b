"""The documentation index: build (collect, clean, chunk, SQLite FTS5) and BM25 queries."""
from __future__ import annotations

import datetime
import fnmatch
import json
import logging
import multiprocessing
import os
import re
import sqlite3
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from desktop_env.errors import DesktopEnvError
from desktop_env.paths import cache_dir, repo_root
from desktop_env.rag.chunk import CHUNK_WORDS, OVERLAP_WORDS, chunk_text
from desktop_env.rag.clean import html_to_text

logger = logging.getLogger(__name__)

#: The source list the builder reads by default (Debian doc packages).
DEFAULT_SOURCES = repo_root() / "evaluation_examples" / "documents" / "sources.json"
SCHEMA_VERSION = 1
_STOPWORDS = frozenset("""a about above after again all also an and any are as at be because been before being
below between both but by can could did do does doing down during each few for from further had has have having
he her here hers him his how i if in into is it its itself just me more most my no nor not of off on once only or
other our out over own same she should so some such than that the their them then there these they this those
through to too under until up very was we were what when where which while who whom why will with would you your
please using use make named new one""".split())


class DocsError(DesktopEnvError):
    """The documentation index cannot be built or read (no sources, missing index, bad source file)."""


@dataclass
class DocSource:
    """One folder of HTML documentation.

    Attributes:
        name: short id stored with every chunk (e.g. ``postgresql``).
        path: the folder; relative paths are read from the sources file's folder.
        include: glob patterns (relative to ``path``) of the pages to index.
        exclude: glob patterns of pages to leave out (indexes, changelogs).
        package: the Debian package that ships ``path``, named in the hint when it is missing.
        max_files: index at most this many pages (sorted by path); None for all.
        aliases: words that name this tool in an instruction (besides ``name``); a query
            that mentions one ranks this source's chunks higher.
    """

    name: str
    path: Path
    include: list[str] = field(default_factory=lambda: ["*.html", "*.htm"])
    exclude: list[str] = field(default_factory=list)
    package: str | None = None
    max_files: int | None = None
    aliases: list[str] = field(default_factory=list)

    def __post_init__(self):
        if not re.fullmatch(r"[A-Za-z0-9_.-]+", self.name or ""):
            raise DocsError(f"source name {self.name!r} must be letters, digits, '_', '.' or '-'")
        self.path = Path(self.path)

    def files(self) -> list[Path]:
        """The pages of this source, sorted; a missing folder gives none."""
        if not self.path.is_dir():
            return []
        out = []
        for dirpath, dirnames, filenames in os.walk(self.path, followlinks=True):
            dirnames.sort()
            for fn in sorted(filenames):
                rel = os.path.relpath(os.path.join(dirpath, fn), self.path)
                if any(fnmatch.fnmatch(fn, pat) or fnmatch.fnmatch(rel, pat) for pat in self.include) and not any(
                        fnmatch.fnmatch(rel, pat) or fnmatch.fnmatch(fn, pat) for pat in self.exclude):
                    out.append(Path(dirpath) / fn)
        return out[: self.max_files] if self.max_files else out


def load_sources(path: str | os.PathLike = DEFAULT_SOURCES) -> list[DocSource]:
    """Read a sources file: ``{"sources": [{"name", "path", "include"?, "exclude"?, "package"?}]}``.

    Raises:
        DocsError: the file is missing or malformed (naming the entry and field).
    """
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise DocsError(f"sources file {path} does not exist") from None
    except json.JSONDecodeError as exc:
        raise DocsError(f"{path}: malformed JSON at line {exc.lineno} column {exc.colno}: {exc.msg}") from exc
    entries = data.get("sources") if isinstance(data, dict) else None
    if not isinstance(entries, list):
        raise DocsError(f"{path}: expected {{\"sources\": [...]}}")
    out = []
    allowed = {"name", "path", "include", "exclude", "package", "max_files", "aliases", "comment"}
    for i, e in enumerate(entries):
        if not isinstance(e, dict) or "name" not in e or "path" not in e:
            raise DocsError(f"{path}: sources[{i}] needs at least \"name\" and \"path\"")
        unknown = set(e) - allowed
        if unknown:
            raise DocsError(f"{path}: sources[{i}] has unknown field(s) {', '.join(sorted(unknown))}; "
                            f"allowed: {', '.join(sorted(allowed))}")
        folder = Path(e["path"]).expanduser()
        if not folder.is_absolute():
            folder = path.parent / folder
        kw = {k: e[k] for k in ("include", "exclude", "package", "max_files", "aliases") if k in e}
        out.append(DocSource(name=e["name"], path=folder, **kw))
    return out


def default_index_path(cache: str | os.PathLike | None = None) -> Path:
    """Where the built index lives: ``<cache dir>/docs/index.sqlite``."""
    return cache_dir(cache) / "docs" / "index.sqlite"


def _process(job: tuple[str, str, str, int, int]) -> tuple[str, str, str, list[tuple[int, str, str]]]:
    """Worker: clean and chunk one page -> (source, rel path, title, [(ordinal, heading, text)])."""
    source, path, rel, max_words, overlap = job
    try:
        raw = Path(path).read_bytes().decode("utf-8", errors="replace")
    except OSError as exc:
        logger.warning("cannot read %s: %s", path, exc)
        return source, rel, "", []
    page = html_to_text(raw)
    return source, rel, page.title, [(c.ordinal, c.heading, c.text) for c in chunk_text(page.text, max_words, overlap)]


@dataclass
class BuildStats:
    """What a build indexed: pages and chunks per source, sources skipped, seconds taken."""

    path: Path
    pages: dict[str, int] = field(default_factory=dict)
    chunks: dict[str, int] = field(default_factory=dict)
    missing: list[str] = field(default_factory=list)
    seconds: float = 0.0


def build_index(sources: list[DocSource], out: str | os.PathLike | None = None,
                max_words: int = CHUNK_WORDS, overlap: int = OVERLAP_WORDS, workers: int | None = None) -> BuildStats:
    """Collect, clean, chunk and index every page of ``sources`` into a new SQLite FTS5 file.

    The index is written beside ``out`` and renamed into place at the end, so a reader
    never sees half an index. Sources whose folder is missing are skipped with a warning
    that names the package to install.

    Raises:
        DocsError: no source has any page.
    """
    t0 = time.monotonic()
    out = Path(out) if out else default_index_path()
    out.parent.mkdir(parents=True, exist_ok=True)
    stats = BuildStats(path=out)
    jobs = []
    for src in sources:
        files = src.files()
        if not files:
            hint = f"; install it with: apt-get install {src.package}" if src.package else ""
            logger.warning("source %s: no pages under %s%s", src.name, src.path, hint)
            stats.missing.append(src.name)
            continue
        logger.info("source %s: %d pages under %s", src.name, len(files), src.path)
        jobs += [(src.name, str(f), os.path.relpath(f, src.path), max_words, overlap) for f in files]
    if not jobs:
        raise DocsError("no documentation pages found in any source ("
                        + ", ".join(f"{s.name}: {s.path}" for s in sources)
                        + "); install the doc packages (.ci/apt-packages.txt) or add a folder with --add NAME=DIR")
    tmp = out.with_name(out.name + f".tmp{os.getpid()}")
    tmp.unlink(missing_ok=True)
    db = sqlite3.connect(tmp)
    try:
        db.executescript("""
            CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT);
            CREATE TABLE pages(id INTEGER PRIMARY KEY, source TEXT, path TEXT, root TEXT, title TEXT);
            CREATE VIRTUAL TABLE chunks USING fts5(
                title, heading, text, source UNINDEXED, page UNINDEXED, ordinal UNINDEXED,
                tokenize = 'porter unicode61');
        """)
        roots = {s.name: str(s.path) for s in sources}
        n_workers = workers or max(1, min(os.cpu_count() or 1, 8))
        ctx = multiprocessing.get_context("fork" if hasattr(os, "fork") else "spawn")
        done = 0
        with ctx.Pool(n_workers) as pool:
            for source, rel, title, chunks in pool.imap_unordered(_process, jobs, chunksize=16):
                cur = db.execute("INSERT INTO pages(source, path, root, title) VALUES (?, ?, ?, ?)",
                                 (source, rel, roots[source], title))
                db.executemany("INSERT INTO chunks(title, heading, text, source, page, ordinal) "
                               "VALUES (?, ?, ?, ?, ?, ?)",
                               [(title, h, t, source, cur.lastrowid, o) for o, h, t in chunks])
                stats.pages[source] = stats.pages.get(source, 0) + 1
                stats.chunks[source] = stats.chunks.get(source, 0) + len(chunks)
                done += 1
                if done % 500 == 0:
                    logger.info("indexed %d/%d pages (%.0f s)", done, len(jobs), time.monotonic() - t0)
        db.execute("INSERT INTO chunks(chunks) VALUES ('optimize')")
        stats.seconds = round(time.monotonic() - t0, 1)
        meta = {"schema": SCHEMA_VERSION, "built": datetime.datetime.now(datetime.timezone.utc).isoformat(),
                "max_words": max_words, "overlap": overlap, "pages": stats.pages, "chunks": stats.chunks,
                "sources": [asdict(s) | {"path": str(s.path)} for s in sources], "missing": stats.missing}
        db.executemany("INSERT INTO meta VALUES (?, ?)", [(k, json.dumps(v)) for k, v in meta.items()])
        db.commit()
    except BaseException:
        db.close()
        tmp.unlink(missing_ok=True)
        raise
    db.close()
    os.replace(tmp, out)
    logger.info("index %s: %d pages, %d chunks in %.1f s", out, sum(stats.pages.values()),
                sum(stats.chunks.values()), stats.seconds)
    return stats


@dataclass
class Hit:
    """One retrieved chunk; ``score`` is FTS5 bm25 (lower is better)."""

    source: str
    title: str
    heading: str
    text: str
    file: str
    score: float


def fts_query(text: str, max_terms: int = 32, drop: frozenset[str] = frozenset()) -> str:
    """An FTS5 MATCH expression for free text: its distinct non-stopword terms and each pair
    of adjacent terms as a phrase (so "window functions" counts more than either word), ORed.
    Words in ``drop`` are left out, unless nothing else remains."""
    tokens = [t for t in re.findall(r"[A-Za-z0-9_]+", text.lower()) if t not in _STOPWORDS and len(t) > 1]
    tokens = [t for t in tokens if t not in drop] or tokens
    terms: list[str] = []
    for tok in tokens:
        if tok not in terms:
            terms.append(tok)
    phrases = [f"{a} {b}" for a, b in zip(tokens, tokens[1:]) if a != b]
    picked = terms[:max_terms] + [p for i, p in enumerate(phrases) if p not in phrases[:i]][:max_terms]
    return " OR ".join(f'"{t}"' for t in picked)


class DocIndex:
    """A built documentation index, opened read-only; use as a context manager.

    Raises:
        DocsError: the file does not exist or is not an index built by this module.
    """

    SOURCE_POOL = 200  # bm25 candidates re-ranked
    MENTION_BOOST = 1.5  # score factor for chunks of a source the query names
    PER_PAGE = 2  # chunks of one page in a result, at most

    def __init__(self, path: str | os.PathLike | None = None):
        self.path = Path(path) if path else default_index_path()
        if not self.path.is_file():
            raise DocsError(f"no documentation index at {self.path}; build it with: desktop-env docs build")
        self.db = sqlite3.connect(f"file:{self.path}?mode=ro", uri=True, check_same_thread=False)
        try:
            self.meta = {k: json.loads(v) for k, v in self.db.execute("SELECT key, value FROM meta")}
        except sqlite3.DatabaseError as exc:
            self.db.close()
            raise DocsError(f"{self.path} is not a documentation index ({exc}); rebuild it with: "
                            "desktop-env docs build") from exc

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> "DocIndex":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def source_words(self) -> dict[str, set[str]]:
        """Source name -> the words that name it (its name and aliases, lower case)."""
        return {s["name"]: {w.lower() for w in [s["name"], *s.get("aliases", [])]}
                for s in self.meta.get("sources", [])}

    def mentioned_sources(self, text: str) -> set[str]:
        """Sources whose name or an alias occurs as a word in ``text``."""
        words = set(re.findall(r"[a-z0-9_]+", text.lower()))
        return {name for name, names in self.source_words().items() if words & names}

    def query(self, text: str, k: int = 5, sources: list[str] | None = None) -> list[Hit]:
        """The ``k`` chunks that best match ``text``.

        Ranking: FTS5 ``bm25`` (titles and headings weigh more than body text) over the
        best ``SOURCE_POOL`` candidates, then the scores of chunks from a source the text
        names (``postgresql``, an alias such as ``calc``) are multiplied by
        ``MENTION_BOOST`` (the naming words select a source rather than match text: they
        are left out of the match unless nothing else remains), and at most ``PER_PAGE``
        chunks of one page are kept, so the result covers several pages.

        Args:
            text: free text (an instruction, a question); stopwords and punctuation are dropped.
            k: how many chunks.
            sources: only chunks from these source names.
        """
        naming = frozenset(w for names in self.source_words().values() for w in names)
        match = fts_query(text, drop=naming)
        if not match or k <= 0:
            return []
        where, params = "chunks MATCH ?", [match]
        if sources:
            where += f" AND chunks.source IN ({','.join('?' * len(sources))})"
            params += list(sources)
        rows = self.db.execute(
            f"SELECT chunks.source, chunks.title, heading, text, pages.root, pages.path, chunks.page, "
            f"bm25(chunks, 4.0, 6.0, 1.0) AS score FROM chunks JOIN pages ON pages.id = chunks.page "
            f"WHERE {where} ORDER BY score LIMIT ?", (*params, max(k * 10, self.SOURCE_POOL))).fetchall()
        named = self.mentioned_sources(text)
        ranked = sorted(rows, key=lambda r: r[7] * (self.MENTION_BOOST if r[0] in named else 1.0))
        out, per_page = [], {}
        for s, t, h, x, root, p, page, sc in ranked:
            if per_page.get(page, 0) >= self.PER_PAGE:
                continue
            per_page[page] = per_page.get(page, 0) + 1
            boost = self.MENTION_BOOST if s in named else 1.0
            out.append(Hit(source=s, title=t, heading=h, text=x, file=str(Path(root) / p), score=round(sc * boost, 3)))
            if len(out) == k:
                break
        return out


def format_context(hits: list[Hit], max_chars: int = 1500) -> str:
    """Hits as a prompt section: numbered, each with its source, title and text."""
    if not hits:
        return ""
    out = ["Documentation that may help (retrieved from the local docs index):"]
    for i, h in enumerate(hits, 1):
        where = h.title + (f" / {h.heading}" if h.heading and h.heading != h.title else "")
        body = h.text if len(h.text) <= max_chars else h.text[:max_chars] + " ..."
        out.append(f"[{i}] {h.source}: {where}\n{body}")
    return "\n\n".join(out)
