"""Document metrics of the general computer-use suite: PDFs (text, pages, images), HTML, archives
(zip/tar members) and the words of a Word document."""
from __future__ import annotations

import io
import logging
import lzma
import operator
import re
import tarfile
import tempfile
import xml.etree.ElementTree as ET
import zipfile
import zlib
from html.parser import HTMLParser
from itertools import zip_longest
from pathlib import Path, PurePosixPath
from typing import Any

from desktop_env.errors import TaskConfigError
from desktop_env.evaluators.metrics.differences import plural
from desktop_env.evaluators.metrics.files import (
    as_list, did_you_mean, fuzzy_ratio, gold_file, gold_text, require_package, result_file, result_text, rule_dict,
    string_list,
)
from desktop_env.evaluators.metrics.images import DEFAULT_THRESHOLD, image_similarity
from desktop_env.evaluators.metrics.utils import MetricError, expected_value
from desktop_env.evaluators.reasons import (
    STRUCTURE_MISMATCH, THRESHOLD_NOT_MET, UNREADABLE_RESULT, VALUE_MISMATCH, collecting, explain, fail, first_failure,
    shown,
)
from desktop_env.registry import METRICS

logger = logging.getLogger(__name__)


# --------------------------------------------------------------------------- Word documents

_W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
_RUN_HOLDERS = {f"{_W}hyperlink", f"{_W}ins", f"{_W}smartTag", f"{_W}fldSimple"}
_DOCX_XML_MAX_BYTES = 64 * 2**20


def _docx_paragraphs(path: Path) -> list[str] | None:
    """The text of each body paragraph of a .docx (its runs' text, tabs and breaks), or None when unreadable."""
    try:
        with zipfile.ZipFile(path) as z:
            info = z.getinfo("word/document.xml")
            if info.file_size > _DOCX_XML_MAX_BYTES:
                logger.info("%s: document.xml is too large (%d bytes)", path, info.file_size)
                explain(UNREADABLE_RESULT, f"{path}: word/document.xml is too large ({info.file_size} bytes)")
                return None
            root = ET.fromstring(z.read(info))
    except (KeyError, OSError, EOFError, zipfile.BadZipFile, zlib.error, ET.ParseError, ValueError) as exc:
        logger.info("%s is not a readable .docx: %s", path, exc)
        explain(UNREADABLE_RESULT, f"{path} is not a readable .docx: {exc}")
        return None
    body = root.find(f"{_W}body")
    paragraphs = []
    for p in [] if body is None else body.findall(f"{_W}p"):
        runs = [r for child in p for r in ([child] if child.tag == f"{_W}r" else
                                           child.findall(f"{_W}r") if child.tag in _RUN_HOLDERS else [])]
        parts = []
        for el in (el for run in runs for el in run):
            if el.tag == f"{_W}t":
                parts.append(el.text or "")
            elif el.tag == f"{_W}tab":
                parts.append("\t")
            elif el.tag in (f"{_W}br", f"{_W}cr"):
                parts.append("\n")
        paragraphs.append("".join(parts))
    return paragraphs


@METRICS.register()
def fuzzy_place_math(result: Any, expected: Any, word_count: int = 3) -> float:
    """How well the words of the Word document ``result`` name places from ``expected["expected"]``.

    The body paragraphs' text is split on blanks; there must be exactly ``word_count`` words (else
    0), and each scores its best fuzzy similarity (rapidfuzz ratio, 0..1) to an accepted answer;
    the score is their mean.

    Args:
        word_count: how many words the document must hold (the suite's task asks for 3).

    Raises:
        MetricError: ``expected["expected"]`` is not a list of strings, or a bad ``word_count``.
    """
    answers = string_list(expected_value(expected), "fuzzy_place_math", "'expected'")
    if isinstance(word_count, bool) or not isinstance(word_count, int) or word_count < 1:
        raise MetricError(f"fuzzy_place_math: word_count must be a whole number >= 1, got {word_count!r}")
    if not answers:
        raise MetricError("fuzzy_place_math: 'expected' lists no accepted answer")
    path = result_file(result, "fuzzy_place_math")
    paragraphs = None if path is None else _docx_paragraphs(path)
    if paragraphs is None:
        return 0.0
    words = [w for text in paragraphs for w in text.split()]
    if len(words) != word_count:
        logger.info("fuzzy_place_math: %d words %r, expected %d", len(words), words, word_count)
        return fail(THRESHOLD_NOT_MET, f"the document holds {len(words)} words {shown(words)}, expected "
                                       f"{word_count} (word_count)")
    best = [max((fuzzy_ratio(w, a, "fuzzy_place_math"), a) for a in answers) for w in words]
    score = sum(s for s, _ in best) / len(best)
    if score < 1:
        k = min(range(len(best)), key=lambda i: best[i][0])
        return fail(VALUE_MISMATCH, f"word {k + 1} {shown(words[k])} is only {best[k][0]:.3f} alike its closest "
                                    f"accepted answer {shown(best[k][1])} (mean {score:.3f})", score)
    return score


# --------------------------------------------------------------------------- archives

_ARCHIVE_MAX_MEMBERS = 10_000
_ARCHIVE_MAX_BYTES = 256 * 2**20  # uncompressed, all members together
#: compare_archive's file_type -> the metric that compares one member with its gold counterpart
_ARCHIVE_FILE_TYPES = {
    "text": "compare_text_file", "pdf": "compare_pdfs", "docx": "compare_docx_files",
    "ppt": "compare_pptx_files", "image": "compare_images", "csv": "compare_csv", "table": "compare_table",
    "audio": "compare_audios", "video": "compare_videos",
}
_ARCHIVE_ERRORS = (OSError, EOFError, RuntimeError, ValueError, NotImplementedError, zipfile.BadZipFile,
                   tarfile.TarError, zlib.error, lzma.LZMAError)


def _member_name(name: str) -> str:
    """An archive member's name without ``./``, leading slashes or backslashes: ``./a//b.txt`` -> ``a/b.txt``."""
    return "/".join(part for part in PurePosixPath(name.replace("\\", "/")).parts if part not in ("/", "."))


def _within_limits(path: Path, count: int, size: int) -> bool:
    if count > _ARCHIVE_MAX_MEMBERS or size > _ARCHIVE_MAX_BYTES:
        logger.info("%s holds %d files, %d bytes: over the limits (%d files, %d bytes)", path, count, size,
                    _ARCHIVE_MAX_MEMBERS, _ARCHIVE_MAX_BYTES)
        explain(UNREADABLE_RESULT, f"{path} holds {count} files, {size} bytes: over the limits "
                                   f"({_ARCHIVE_MAX_MEMBERS} files, {_ARCHIVE_MAX_BYTES} bytes)")
        return False
    return True


def _archive_members(path: Path, tar: bool = True) -> dict[str, bytes] | None:
    """The regular files of a zip (or, with ``tar``, a tar/tar.gz/tar.bz2/tar.xz) archive by member name.

    Read into memory, never extracted: a member's name cannot place a file anywhere. Directories,
    links and devices are left out. None (logged, explained as ``unreadable_result``) when the file is
    not such an archive, is damaged, or is larger than the limits.
    """
    try:
        if zipfile.is_zipfile(path):
            with zipfile.ZipFile(path) as z:
                infos = [i for i in z.infolist() if not i.is_dir()]
                if not _within_limits(path, len(infos), sum(i.file_size for i in infos)):
                    return None
                return {_member_name(i.filename): z.read(i) for i in infos}
        if tar and tarfile.is_tarfile(path):
            with tarfile.open(path) as t:
                members = [m for m in t.getmembers() if m.isreg()]
                if not _within_limits(path, len(members), sum(m.size for m in members)):
                    return None
                return {_member_name(m.name): t.extractfile(m).read() for m in members}
    except _ARCHIVE_ERRORS as exc:
        logger.info("%s is not a readable archive: %s", path, exc)
        explain(UNREADABLE_RESULT, f"{path} is not a readable archive: {exc}")
        return None
    logger.info("%s is not a %s archive", path, "zip or tar" if tar else "zip")
    explain(UNREADABLE_RESULT, f"{path} is not a {'zip or tar' if tar else 'zip'} archive")
    return None


def _under(members: dict[str, bytes], folder: str) -> dict[str, bytes]:
    """The members inside ``folder`` (all when it is empty), named relative to it."""
    prefix = _member_name(folder)
    if not prefix:
        return members
    return {name[len(prefix) + 1:]: data for name, data in members.items() if name.startswith(prefix + "/")}


def _same_names(got: dict, gold: dict, metric: str) -> bool:
    if set(got) == set(gold):
        return True
    missing, extra = sorted(set(gold) - set(got)), sorted(set(got) - set(gold))
    logger.info("%s: member names differ; missing %s, extra %s", metric, missing, extra)
    explain(STRUCTURE_MISMATCH, f"the archive's files differ from the gold's: missing {shown(missing)}, "
                                f"extra {shown(extra)}")
    return False


def _write_member(folder: Path, index: int, name: str, data: bytes) -> Path:
    """Write a member's bytes under ``folder/index/`` with its (sanitized) base name, keeping its suffix."""
    target = folder / str(index) / (re.sub(r"[^\w.-]", "_", PurePosixPath(name).name) or "member")
    target.parent.mkdir(parents=True)
    target.write_bytes(data)
    return target


@METRICS.register()
def compare_archive(result: Any, expected: Any, file_type: str = "text", file_path: str = "", **options) -> float:
    """Compare two archives (zip or tar) member by member: the mean score of their files.

    The two must hold files of the same names (under ``file_path`` when given, directories
    ignored), else 0. Each result file is then scored against the gold file of its name by the
    metric of ``file_type``: ``text`` compare_text_file, ``pdf`` compare_pdfs, ``csv`` compare_csv,
    ``table`` compare_table, ``image`` compare_images, ``docx`` compare_docx_files, ``ppt``
    compare_pptx_files, ``audio`` compare_audios, ``video`` compare_videos.

    Args:
        file_type: what the members are (see above).
        file_path: a folder inside the archives; only the files under it are compared.
        options: passed on to the member metric (e.g. ``ignore_blanks`` for text).

    Raises:
        MetricError: an unknown ``file_type`` (or one whose metric is not available here), a gold
            archive that is missing, unreadable or empty under ``file_path``, or options the member
            metric rejects.
    """
    metric_name = _ARCHIVE_FILE_TYPES.get(file_type)
    if metric_name is None:
        raise MetricError(f"compare_archive: unknown file_type {file_type!r}"
                          f"{did_you_mean(file_type, _ARCHIVE_FILE_TYPES)} "
                          f"(accepted: {', '.join(_ARCHIVE_FILE_TYPES)})")
    if not isinstance(file_path, str):
        raise MetricError(f"compare_archive: file_path must be a folder inside the archive (a string), "
                          f"got {file_path!r}")
    gold_path = gold_file(expected, "compare_archive")
    gold = _archive_members(gold_path)
    if gold is None:
        raise MetricError(f"compare_archive: the gold file {gold_path} is not a readable zip or tar archive")
    gold = _under(gold, file_path)
    if not gold:
        raise MetricError(f"compare_archive: the gold archive {gold_path} holds no file under {file_path!r}")
    try:
        compare = METRICS.get(metric_name).func
    except TaskConfigError:
        raise MetricError(f"compare_archive: file_type {file_type!r} needs the metric {metric_name}, "
                          "which is not available here") from None
    path = result_file(result, "compare_archive")
    got = None if path is None else _archive_members(path)
    if got is None:
        return 0.0
    got = _under(got, file_path)
    if not _same_names(got, gold, "compare_archive"):
        return 0.0
    with tempfile.TemporaryDirectory(prefix="compare_archive-") as tmp:
        scores = []
        for i, name in enumerate(sorted(gold)):
            mine = _write_member(Path(tmp, "result"), i, name, got[name])
            theirs = _write_member(Path(tmp, "expected"), i, name, gold[name])
            with collecting() as noted:  # the member metric's reason, told with the member's name below
                score = float(compare(mine, theirs, **options))
            logger.debug("compare_archive: %s scores %.3f", name, score)
            if score < 1 and all(s >= 1 for s in scores):  # the first member below 1 explains the mean
                inner = first_failure(noted)
                explain(inner.kind if inner else VALUE_MISMATCH,
                        f"{name} ({metric_name}, scored {score:.3g}): "
                        + (inner.text if inner else "it differs from the gold archive's"))
            scores.append(score)
    return sum(scores) / len(scores)


def _member_difference(name: str, a: bytes, b: bytes) -> tuple[str, str] | None:
    """How zip member ``a`` differs from the gold's ``b`` as ``(kind, text)``, or None when they hold the same
    thing: PDFs the same text (95% alike), text the same text (any line endings), anything else the same bytes."""
    if a == b:
        return None
    if name.lower().endswith(".pdf"):
        with collecting():  # an unreadable member PDF is told below, with its member name
            ta, tb = (_pdf_text(io.BytesIO(x), name, "compare_zip_files") for x in (a, b))
        if ta is None or tb is None:
            return UNREADABLE_RESULT, f"{name}: {'the gold' if ta is not None else 'the'} PDF is not readable"
        ratio = fuzzy_ratio(ta, tb, "compare_zip_files")
        if ratio >= 0.95:
            return None
        return THRESHOLD_NOT_MET, f"{name}: PDF text similarity {ratio:.3f} is below 0.95"
    try:
        sa, sb = a.decode("utf-8-sig"), b.decode("utf-8-sig")
    except UnicodeDecodeError:
        return VALUE_MISMATCH, f"{name}: the bytes differ ({len(a)} bytes, expected {len(b)})"
    la, lb = sa.replace("\r\n", "\n").replace("\r", "\n"), sb.replace("\r\n", "\n").replace("\r", "\n")
    if la == lb:
        return None
    lines_a, lines_b = la.split("\n"), lb.split("\n")
    k = next((i for i, (x, y) in enumerate(zip(lines_a, lines_b)) if x != y), min(len(lines_a), len(lines_b)))
    mine = shown(lines_a[k]) if k < len(lines_a) else "the end of the file"
    theirs = shown(lines_b[k]) if k < len(lines_b) else "the end of the file"
    return VALUE_MISMATCH, f"{name}, line {k + 1}: expected {theirs}, got {mine}"


@METRICS.register()
def compare_zip_files(result: Any, expected: Any) -> float:
    """1 when two zip files hold files of the same names and contents.

    Text members are compared as text (line endings aside), PDF members by their text (at least 95%
    alike, so a re-rendered PDF passes), other members byte for byte.

    Raises:
        MetricError: the gold zip is missing or unreadable.
    """
    gold_path = gold_file(expected, "compare_zip_files")
    gold = _archive_members(gold_path, tar=False)
    if gold is None:
        raise MetricError(f"compare_zip_files: the gold file {gold_path} is not a readable zip file")
    path = result_file(result, "compare_zip_files")
    got = None if path is None else _archive_members(path, tar=False)
    if got is None or not _same_names(got, gold, "compare_zip_files"):
        return 0.0
    differences = {name: why for name in sorted(gold) if (why := _member_difference(name, got[name], gold[name]))}
    if differences:
        logger.info("compare_zip_files: members differ: %s", list(differences))
        kind, text = next(iter(differences.values()))
        return fail(kind, f"{text} ({len(differences)} of {len(gold)} files differ)")
    return 1.0


# --------------------------------------------------------------------------- HTML

class _HtmlOutline(HTMLParser):
    """A document as its sequence of start tags (with attributes), end tags and text (blanks collapsed)."""

    def __init__(self, ignored_attributes: frozenset[str]):
        super().__init__(convert_charrefs=True)
        self.ignored = ignored_attributes
        self.events: list[tuple] = []
        self.lines: list[int] = []  # the line each event starts on, for reasons

    def _add(self, event: tuple) -> None:
        self.events.append(event)
        self.lines.append(self.getpos()[0])

    def handle_starttag(self, tag, attrs):
        kept = sorted((k, v or "") for k, v in attrs if k not in self.ignored)
        self._add(("start", tag, tuple(kept)))

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)

    def handle_endtag(self, tag):
        self._add(("end", tag))

    def handle_data(self, data):
        text = " ".join(data.split())
        if text:
            self._add(("text", text))


def _html_outline(text: str, ignored: frozenset[str]) -> _HtmlOutline:
    parser = _HtmlOutline(ignored)
    parser.feed(text)
    parser.close()
    return parser


def _html_item(events: list[tuple], at: int) -> str:
    """One item of an HTML outline for a reason: ``<td class='x'>``, ``</td>``, ``text 'Total'``, or the end."""
    if at >= len(events):
        return "the end of the document"
    event = events[at]
    if event[0] == "text":
        return f"text {shown(event[1])}"
    if event[0] == "end":
        return f"</{event[1]}>"
    return shown("<" + " ".join([event[1], *(f'{k}="{v}"' for k, v in event[2])]) + ">")


@METRICS.register()
def compare_htmls(result: Any, expected: Any, ignore_sdnum: bool = False) -> float:
    """1 when two HTML files have the same elements, in the same order, with the same attributes and text.

    Runs of blanks in text count as one space; comments and the doctype are ignored.

    Args:
        ignore_sdnum: ignore the ``sdnum`` attribute (the number format LibreOffice writes on table
            cells when it exports HTML).

    Raises:
        MetricError: ``ignore_sdnum`` is not a boolean, or the gold file is missing or unreadable.
    """
    if not isinstance(ignore_sdnum, bool):
        raise MetricError(f"compare_htmls: ignore_sdnum must be true or false, got {ignore_sdnum!r}")
    ignored = frozenset({"sdnum"} if ignore_sdnum else ())
    gold_outline = _html_outline(gold_text(expected, "compare_htmls"), ignored)
    text = result_text(result, "compare_htmls")
    if text is None:
        return 0.0
    outline = _html_outline(text, ignored)
    mine, gold = outline.events, gold_outline.events
    if mine == gold:
        return 1.0
    at = next((i for i, (a, b) in enumerate(zip(mine, gold)) if a != b), min(len(mine), len(gold)))
    logger.info("compare_htmls: documents differ at item %d: %r vs %r", at,
                mine[at] if at < len(mine) else "<end>", gold[at] if at < len(gold) else "<end>")
    texts = at < len(mine) and at < len(gold) and mine[at][0] == gold[at][0] == "text"
    line = outline.lines[at] if at < len(mine) else (outline.lines[-1] if mine else 1)
    gold_line = gold_outline.lines[at] if at < len(gold) else (gold_outline.lines[-1] if gold else 1)
    return fail(VALUE_MISMATCH if texts else STRUCTURE_MISMATCH,
                f"line {line} (line {gold_line} of the gold): expected {_html_item(gold, at)}, "
                f"got {_html_item(mine, at)}")


# --------------------------------------------------------------------------- PDF

def _pdf_reader(source: Any, what: Any, metric: str) -> Any:
    """A pypdf reader of a PDF file or stream, or None (logged) when it is not a readable PDF."""
    pypdf = require_package("pypdf", "pypdf", metric)
    try:
        return pypdf.PdfReader(source)
    except Exception as exc:  # noqa: BLE001 - pypdf raises many kinds on damaged input; all mean "unreadable"
        logger.info("%s is not a readable PDF: %s", what, exc)
        explain(UNREADABLE_RESULT, f"{what} is not a readable PDF: {exc}")
        return None


def _pdf_text(source: Any, what: Any = None, metric: str = "compare_pdfs") -> str | None:
    """The text of every page of a PDF, joined and stripped, or None when unreadable."""
    reader = _pdf_reader(source, what or source, metric)
    if reader is None:
        return None
    try:
        return "".join(page.extract_text() or "" for page in reader.pages).strip()
    except Exception as exc:  # noqa: BLE001 - as in _pdf_reader
        logger.info("cannot extract the text of %s: %s", what or source, exc)
        explain(UNREADABLE_RESULT, f"cannot extract the text of {what or source}: {exc}")
        return None


@METRICS.register()
def compare_pdfs(result: Any, expected: Any) -> float:
    """How alike the text of the PDF ``result`` is to the gold PDF's (rapidfuzz ratio, 0..1).

    Both sides may be lists of PDFs compared pairwise; the score is the sum over pairs divided by
    the number of gold files (a missing or unreadable result PDF adds 0).

    Raises:
        MetricError: a gold PDF is missing or unreadable.
    """
    golds = as_list(expected)
    if not golds:
        raise MetricError("compare_pdfs: no gold PDF given")
    gold_texts = []
    for gold in golds:
        path = gold_file(gold, "compare_pdfs")
        text = _pdf_text(path, path)
        if text is None:
            raise MetricError(f"compare_pdfs: the gold file {path} is not a readable PDF")
        gold_texts.append(text)
    total = 0.0
    for mine, gold_text in zip_longest(as_list(result)[:len(golds)], gold_texts):
        path = result_file(mine, "compare_pdfs")
        text = None if path is None else _pdf_text(path, path)
        if text is not None:
            score = fuzzy_ratio(text, gold_text, "compare_pdfs")
            logger.info("compare_pdfs: %s text similarity %.3f", path, score)
            if score < 1:
                at = next((i for i, (x, y) in enumerate(zip(text, gold_text)) if x != y),
                          min(len(text), len(gold_text)))
                explain(VALUE_MISMATCH, f"{path}: text similarity {score:.3f} to the gold's; first difference at "
                                        f"character {at + 1}: expected {_text_from(gold_text, at)}, "
                                        f"got {_text_from(text, at)}")
            total += score
    return total / len(golds)


def _text_from(text: str, at: int) -> str:
    """Up to 40 characters of ``text`` from offset ``at``, for a reason (or the end of the text)."""
    return shown(text[at:at + 40]) if at < len(text) else "the end of the text"


_RELATIONS = {name: getattr(operator, name) for name in ("eq", "ne", "lt", "le", "gt", "ge")}


@METRICS.register()
def check_pdf_pages(result: Any, expected: Any) -> float:
    """1 when the PDF ``result``'s page count satisfies ``relation`` to ``ref_value``.

    ``expected`` is ``{"relation": "eq"|"ne"|"lt"|"le"|"gt"|"ge", "ref_value": pages}``, e.g.
    ``{"relation": "eq", "ref_value": 1}`` for a one-page export.

    Raises:
        MetricError: an unknown relation or a ``ref_value`` that is not a number.
    """
    rules = rule_dict(expected, "check_pdf_pages", '{"relation": "eq", "ref_value": N}')
    relation, ref = rules.get("relation"), rules.get("ref_value")
    if relation not in _RELATIONS:
        raise MetricError(f"check_pdf_pages: unknown relation {relation!r}{did_you_mean(relation, _RELATIONS)} "
                          f"(accepted: {', '.join(_RELATIONS)})")
    if isinstance(ref, bool) or not isinstance(ref, (int, float)):
        raise MetricError(f"check_pdf_pages: ref_value must be a number of pages, got {ref!r}")
    path = result_file(result, "check_pdf_pages")
    reader = None if path is None else _pdf_reader(path, path, "check_pdf_pages")
    if reader is None:
        return 0.0
    try:
        pages = len(reader.pages)
    except Exception as exc:  # noqa: BLE001 - as in _pdf_reader
        logger.info("check_pdf_pages: cannot count the pages of %s: %s", path, exc)
        return fail(UNREADABLE_RESULT, f"cannot count the pages of {path}: {exc}")
    ok = bool(_RELATIONS[relation](pages, ref))
    if not ok:
        logger.info("check_pdf_pages: %s has %d pages; expected %s %s", path, pages, relation, ref)
        return fail(THRESHOLD_NOT_MET, f"{path.name} has {plural(pages, 'page')}; expected a page count {relation} "
                                       f"{ref:g}")
    return 1.0


def _pdf_images(path: Path, metric: str) -> list | None:
    """The images embedded in a PDF, page by page (PIL images), or None when it is not readable."""
    reader = _pdf_reader(path, path, metric)
    if reader is None:
        return None
    images = []
    try:
        for number, page in enumerate(reader.pages, start=1):
            for image in page.images:
                images.append(image.image)
                logger.debug("%s: page %d image %s %s", path, number, image.name, image.image.size)
    except Exception as exc:  # noqa: BLE001 - as in _pdf_reader
        logger.info("cannot read the images of %s: %s", path, exc)
        explain(UNREADABLE_RESULT, f"cannot read the images of {path}: {exc}")
        return None
    return images


@METRICS.register()
def compare_pdf_images(result: Any, expected: Any, threshold: float = DEFAULT_THRESHOLD) -> float:
    """The share of the gold PDF's embedded images that the PDF ``result`` holds too, in the same order.

    The images are taken out of both PDFs (not the rendered pages); the counts must be equal,
    else 0, and two PDFs without images score 1. Each pair is compared at a common size with
    :func:`~desktop_env.evaluators.metrics.images.image_similarity`, and matches when it reaches
    ``threshold``.

    Args:
        threshold: pass mark of one image pair, in (0, 1].

    Raises:
        MetricError: a bad threshold, or a gold PDF that is missing or unreadable.
    """
    if isinstance(threshold, bool) or not isinstance(threshold, (int, float)) or not 0 < threshold <= 1:
        raise MetricError(f"compare_pdf_images: threshold must be a number in (0, 1], got {threshold!r}")
    gold_path = gold_file(expected, "compare_pdf_images")
    gold = _pdf_images(gold_path, "compare_pdf_images")
    if gold is None:
        raise MetricError(f"compare_pdf_images: the gold file {gold_path} is not a readable PDF")
    path = result_file(result, "compare_pdf_images")
    mine = None if path is None else _pdf_images(path, "compare_pdf_images")
    if mine is None:
        return 0.0
    if len(mine) != len(gold):
        logger.info("compare_pdf_images: %d images, the gold PDF has %d", len(mine), len(gold))
        return fail(STRUCTURE_MISMATCH, f"{path.name} embeds {plural(len(mine), 'image')}, the gold PDF {len(gold)}")
    if not gold:
        return 1.0
    scores = [image_similarity(a, b, resize=True) for a, b in zip(mine, gold)]
    logger.info("compare_pdf_images: image similarities %s", [round(s, 3) for s in scores])
    score = sum(s >= threshold for s in scores) / len(gold)
    below = [i for i, s in enumerate(scores) if s < threshold]
    if below:
        return fail(THRESHOLD_NOT_MET, f"image {below[0] + 1} of {len(gold)}: similarity {scores[below[0]]:.3f} "
                                       f"to the gold's is below the threshold {threshold:g} "
                                       f"({plural(len(below), 'image')} below)", score)
    return score
