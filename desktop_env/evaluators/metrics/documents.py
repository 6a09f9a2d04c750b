"""Document content metrics: the text, tables and images of Writer documents, a reference list, deduplicated
records, an epub's text, and Writer's default font in LibreOffice's ``registrymodifications.xcu``.

How documents are read (paragraphs, formats, what an unreadable file scores): ``document_files``.
"""
from __future__ import annotations

import difflib
import io
import logging
import posixpath
import zipfile
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from lxml import etree
from PIL import Image, UnidentifiedImageError

from desktop_env.evaluators.metrics.differences import missing_file, plural
from desktop_env.evaluators.metrics.document_diffs import table_difference, text_difference
from desktop_env.evaluators.metrics.document_files import (
    A_NS, R_NS, Docx, Unreadable, collapse, is_bool, is_number, is_text, open_document, open_pair, options_check,
    paragraph_texts, read_member, rule_field, safe_xml, similarity, table_grids)
from desktop_env.evaluators.metrics.utils import MetricError, as_existing_path
from desktop_env.evaluators.reasons import (
    MISSING_RESULT, RULE_FAILED, STRUCTURE_MISMATCH, THRESHOLD_NOT_MET, UNREADABLE_RESULT, VALUE_MISMATCH, fail,
    shown)
from desktop_env.registry import METRICS

logger = logging.getLogger(__name__)

_OOR = "http://openoffice.org/2001/registry"
_DC = "http://purl.org/dc/elements/1.1/"
_FLAGS = ("ignore_blanks", "ignore_case", "ignore_order", "content_only", "fuzzy_match", "delete_empty_lines")


# =========================================================================== text comparisons
def _compare_paragraph_lists(a: list[str], b: list[str], *, ignore_blanks: bool, ignore_case: bool,
                             ignore_order: bool, content_only: bool, fuzzy_match: bool,
                             fuzzy_match_threshold: float | None, delete_empty_lines: bool) -> float:
    """The score of ``compare_docx_files`` for two paragraph lists (result, expected), explained below 1."""
    # how the paragraphs compared are counted, for the reason: after sorting or dropping blank ones
    counted = " ".join(w for w, on in (("sorted", ignore_order), ("non-blank", delete_empty_lines)) if on)
    if ignore_case:
        a, b = [p.lower() for p in a], [p.lower() for p in b]
    if ignore_order:
        a, b = sorted(a), sorted(b)
    if delete_empty_lines:
        a, b = [p for p in a if p.strip()], [p for p in b if p.strip()]
    if content_only or ignore_blanks:
        text_a, text_b = collapse(a), collapse(b)
        if content_only or fuzzy_match:
            score = similarity(text_a, text_b)
            logger.info("document text similarity %.4f", score)
            if fuzzy_match and not content_only and fuzzy_match_threshold is not None:
                if score >= fuzzy_match_threshold:
                    return 1.0
                return fail(THRESHOLD_NOT_MET, f"text similarity {score:.4f} is below fuzzy_match_threshold "
                                               f"{fuzzy_match_threshold:g}; first difference: {text_difference(a, b)}")
            if score < 1:
                return fail(VALUE_MISMATCH, f"text similarity {score:.4f}; first difference: {text_difference(a, b)}",
                            score)
            return score
        where = text_difference(a, b)
        if where:
            logger.info("document texts differ: %s", where)
            return fail(VALUE_MISMATCH, f"the text differs: {where}")
        return 1.0
    if len(a) != len(b):
        logger.info("paragraph counts differ: %d vs %d", len(a), len(b))
        return fail(STRUCTURE_MISMATCH, f"{plural(len(a), (counted + ' ' if counted else '') + 'paragraph')}, "
                                        f"expected {len(b)}")
    if not a:
        return 1.0
    label = f"{counted} paragraph" if counted else "paragraph"
    if fuzzy_match:
        similar = [similarity(x, y) for x, y in zip(a, b)]
        scores = similar if fuzzy_match_threshold is None else [float(s >= fuzzy_match_threshold) for s in similar]
        score = sum(scores) / len(scores)
        i = next((k for k, s in enumerate(scores) if s < 1), None)
        if i is not None:
            if fuzzy_match_threshold is not None:
                return fail(THRESHOLD_NOT_MET, f"{label} {i + 1}: similarity {similar[i]:.4f} is below "
                                               f"fuzzy_match_threshold {fuzzy_match_threshold:g}: expected "
                                               f"{shown(b[i])}, got {shown(a[i])}", score)
            return fail(VALUE_MISMATCH, f"{label} {i + 1}: similarity {similar[i]:.4f}: expected {shown(b[i])}, "
                                        f"got {shown(a[i])}", score)
        return score
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            logger.info("paragraph %d differs: %r vs %r", i, x[:200], y[:200])
            return fail(VALUE_MISMATCH, f"{label} {i + 1}: expected {shown(y)}, got {shown(x)}")
    return 1.0


@METRICS.register(check=options_check(**{k: is_bool for k in _FLAGS},
                                       fuzzy_match_threshold=is_number(0, 1, none_ok=True)))
def compare_docx_files(result: Any, expected: Any, ignore_blanks: bool = True, ignore_case: bool = False,
                       ignore_order: bool = False, content_only: bool = False, fuzzy_match: bool = False,
                       fuzzy_match_threshold: float | None = None, delete_empty_lines: bool = False) -> float:
    """The text of two Writer documents (docx or odt), paragraph by paragraph or as a whole.

    Args:
        ignore_blanks: compare the whole text with every run of whitespace (paragraph ends included) made one
            space; off, the paragraphs must match one for one (their number too).
        ignore_case: compare lower-cased.
        ignore_order: compare the paragraphs sorted.
        delete_empty_lines: leave out paragraphs that are empty or blank.
        content_only: score the similarity (0..1) of the whole texts, whitespace runs collapsed, instead of
            requiring equality.
        fuzzy_match: score by similarity instead of equality: of the whole text with ``ignore_blanks``, else
            the mean over the paragraphs.
        fuzzy_match_threshold: with ``fuzzy_match``, a similarity (0..1) counts 1 when it reaches this and 0
            otherwise (for the whole text, or for each paragraph before the mean).
    """
    result_doc, gold_doc = open_pair(result, expected)
    if result_doc is None:
        return 0.0
    return _compare_paragraph_lists(
        paragraph_texts(result_doc), paragraph_texts(gold_doc), ignore_blanks=ignore_blanks,
        ignore_case=ignore_case, ignore_order=ignore_order, content_only=content_only, fuzzy_match=fuzzy_match,
        fuzzy_match_threshold=fuzzy_match_threshold, delete_empty_lines=delete_empty_lines)


@METRICS.register(check=options_check(ignore_blanks=is_bool))
def compare_docx_files_and_ignore_new_lines(result: Any, expected: Any, ignore_blanks: bool = True) -> float:
    """1 when two documents hold the same text once empty paragraphs are dropped from both.

    Args:
        ignore_blanks: compare the whole texts with whitespace runs made one space; off, the remaining
            paragraphs must be equal one for one.
    """
    result_doc, gold_doc = open_pair(result, expected)
    if result_doc is None:
        return 0.0
    a = [t for t in paragraph_texts(result_doc) if t != ""]
    b = [t for t in paragraph_texts(gold_doc) if t != ""]
    return _compare_paragraph_lists(a, b, ignore_blanks=ignore_blanks, ignore_case=False, ignore_order=False,
                                    content_only=False, fuzzy_match=False, fuzzy_match_threshold=None,
                                    delete_empty_lines=False)


# =========================================================================== tables and images
@METRICS.register()
def compare_docx_tables(result: Any, expected: Any) -> float:
    """1 when the two docx files have the same tables: as many, each of the same size, each cell holding the
    same text (leading and trailing whitespace aside)."""
    result_doc, gold_doc = open_pair(result, expected, ("docx",))
    if result_doc is None:
        return 0.0
    difference = table_difference(table_grids(result_doc), table_grids(gold_doc))
    if difference:
        logger.info("tables differ: %s", difference[1])
        return fail(*difference)
    return 1.0


def _image_keys(doc: Docx) -> list[tuple]:
    """The images embedded in the document body, in the order they are first shown, each as its decoded
    size and RGBA pixels (raw bytes for a format Pillow cannot decode)."""
    keys, seen = [], set()
    body = doc.body
    for blip in body.iter(f"{{{A_NS}}}blip"):
        rid = blip.get(f"{{{R_NS}}}embed")
        if not rid or rid in seen or rid not in doc.doc.part.rels:
            continue
        seen.add(rid)
        rel = doc.doc.part.rels[rid]
        if rel.is_external:
            continue
        blob = rel.target_part.blob
        try:
            with Image.open(io.BytesIO(blob)) as im:
                im.load()
                keys.append(("pixels", im.size, im.convert("RGBA").tobytes()))
        except (UnidentifiedImageError, OSError, ValueError):
            keys.append(("raw", blob))
    return keys


@METRICS.register()
def compare_docx_images(result: Any, expected: Any) -> float:
    """1 when the two docx files embed the same images in the same order: the same pixels (a re-encoded
    or re-palettised copy of an image is the same image), as many of them."""
    result_doc, gold_doc = open_pair(result, expected, ("docx",))
    if result_doc is None:
        return 0.0
    got, want = _image_keys(result_doc), _image_keys(gold_doc)
    if len(got) != len(want):
        logger.info("image counts differ: %d vs %d", len(got), len(want))
        return fail(STRUCTURE_MISMATCH, f"{plural(len(got), 'image')} in the body, expected {len(want)}")
    for i, (g, w) in enumerate(zip(got, want)):
        if g != w:
            logger.info("image %d differs", i + 1)
            return fail(VALUE_MISMATCH, f"image {i + 1}: {_image_text(g)}, expected {_image_text(w)} "
                                        f"({'other pixels' if g[:2] == w[:2] else 'another image'})")
    return 1.0


def _image_text(key: tuple) -> str:
    """An image key of ``_image_keys`` for a reason: its size in pixels, or its byte count when undecodable."""
    return f"{key[1][0]} x {key[1][1]} pixels" if key[0] == "pixels" else f"{len(key[1])} undecoded bytes"


# =========================================================================== references and records
@METRICS.register(check=options_check(reference_indicator=is_text,
                                       reference_base_result=is_number(0, 1, high_open=True),
                                       content_only=is_bool))
def compare_references(result: Any, expected: Any, reference_indicator: str = "References",
                       reference_base_result: float = 0.5, content_only: bool = False) -> float:
    """How close the result's reference list is to the expected one, 0..1.

    The list is the non-blank paragraphs after the first paragraph reading ``reference_indicator``. Neither
    document having one scores 1, only one having it 0, lists of different lengths 0. Otherwise the mean
    similarity ``s`` of paired entries is rescaled: ``(s - base) / (1 - base)`` when ``s`` reaches
    ``base + 0.01``, else 0, with ``base`` the ``reference_base_result``.

    Args:
        reference_indicator: the heading paragraph that starts the list (surrounding whitespace aside).
        reference_base_result: the similarity that scores 0.
        content_only: accepted as the suite's task files give it; entries are always compared by their text.
    """
    result_doc, gold_doc = open_pair(result, expected)
    if result_doc is None:
        return 0.0

    def entries(doc) -> list[str] | None:
        texts = paragraph_texts(doc)
        at = next((i for i, t in enumerate(texts) if t.strip() == reference_indicator.strip()), None)
        return None if at is None else [t for t in texts[at + 1:] if t.strip()]
    got, want = entries(result_doc), entries(gold_doc)
    if got is None and want is None:
        return 1.0
    if got is None or want is None or len(got) != len(want):
        logger.info("reference lists: %s vs %s entries", None if got is None else len(got),
                    None if want is None else len(want))
        if got is None:
            return fail(STRUCTURE_MISMATCH, f"no paragraph {shown(reference_indicator.strip())} starts a reference "
                                            f"list in the result; the expected document lists {len(want)} entries")
        if want is None:
            return fail(STRUCTURE_MISMATCH, f"the result has a reference list ({len(got)} entries after "
                                            f"{shown(reference_indicator.strip())}), the expected document none")
        return fail(STRUCTURE_MISMATCH, f"{plural(len(got), 'reference')} after "
                                        f"{shown(reference_indicator.strip())}, expected {len(want)}")
    if not got:
        return 1.0
    similar = [similarity(a, b) for a, b in zip(got, want)]
    mean = sum(similar) / len(got)
    logger.info("reference similarity %.4f (base %.2f)", mean, reference_base_result)
    worst = min(range(len(similar)), key=similar.__getitem__)
    entry = (f"the least alike is reference {worst + 1} ({similar[worst]:.4f}): expected {shown(want[worst])}, "
             f"got {shown(got[worst])}")
    if mean >= reference_base_result + 0.01:
        score = (mean - reference_base_result) / (1 - reference_base_result)
        if score < 1:
            return fail(VALUE_MISMATCH, f"mean reference similarity {mean:.4f} (0 at {reference_base_result:g}); "
                                        f"{entry}", score)
        return score
    return fail(THRESHOLD_NOT_MET, f"mean reference similarity {mean:.4f} does not reach "
                                   f"{reference_base_result + 0.01:g} (reference_base_result + 0.01); {entry}")


def _train_records(doc) -> tuple[list[str], list[str]]:
    """The non-blank lines (stripped) and the train ids (2nd field of lines with exactly 4 comma fields)."""
    lines = [t.strip() for t in paragraph_texts(doc) if t.strip()]
    ids = [line.split(",")[1].strip() for line in lines if len(line.split(",")) == 4]
    return lines, ids


@METRICS.register()
def compare_unique_train_records(result: Any, expected: Any) -> float:
    """1 when the result keeps one record per train: ``expected`` is ``[gold, initial]`` (two documents of
    ``time, train_id, station_id, platform_no`` lines).

    Every result line must be a line of the initial document, no train id may repeat, the ids must be the
    gold's, and there must be as many lines as in the gold.
    """
    if not isinstance(expected, (list, tuple)) or len(expected) < 2:
        raise MetricError(f"compare_unique_train_records needs expected [gold, initial], got {expected!r}")
    gold_doc, initial_doc = open_document(expected[0], "expected"), open_document(expected[1], "expected")
    doc = open_document(result, "result")
    if doc is None:
        return 0.0
    lines, ids = _train_records(doc)
    gold_lines, gold_ids = _train_records(gold_doc)
    initial_lines = set(_train_records(initial_doc)[0])
    extra = [line for line in lines if line not in initial_lines]
    if extra:
        logger.info("lines not in the initial document: %s", extra[:5])
        return fail(RULE_FAILED, f"line {lines.index(extra[0]) + 1} {shown(extra[0])} is not a line of the "
                                 f"initial document ({plural(len(extra), 'such line')})")
    if len(ids) != len(set(ids)):
        repeated = sorted({i for i in ids if ids.count(i) > 1})
        logger.info("repeated train ids: %s", repeated[:10])
        return fail(RULE_FAILED, f"train id {shown(repeated[0])} is kept {ids.count(repeated[0])} times "
                                 f"(repeated ids: {shown(repeated)})")
    if set(ids) != set(gold_ids):
        extra_ids, missing_ids = sorted(set(ids) - set(gold_ids)), sorted(set(gold_ids) - set(ids))
        logger.info("train ids differ: %d extra, %d missing", len(extra_ids), len(missing_ids))
        return fail(VALUE_MISMATCH, f"the train ids differ from the gold's: missing {shown(missing_ids)}, "
                                    f"extra {shown(extra_ids)}")
    if len(lines) != len(gold_lines):
        logger.info("line counts differ: %d vs %d", len(lines), len(gold_lines))
        return fail(STRUCTURE_MISMATCH, f"{len(lines)} record lines, expected {len(gold_lines)}")
    return 1.0


# =========================================================================== LibreOffice settings
def _xcu_values(path: Path, item_path: str, prop: str) -> list[str | None]:
    """Every value of ``prop`` under ``item_path`` in a registrymodifications.xcu, in file order."""
    try:
        root = safe_xml(path.read_bytes())
    except (OSError, etree.XMLSyntaxError) as exc:
        raise Unreadable(str(exc)) from exc
    name, path_attr = f"{{{_OOR}}}name", f"{{{_OOR}}}path"
    values = []
    for item in root.iter("item"):
        base = item.get(path_attr, "").rstrip("/")
        for p in item.iter("prop"):
            nodes = [a.get(name, "") for a in p.iterancestors("node")][::-1]
            if "/".join([base, *nodes]) != item_path.rstrip("/") or p.get(name) != prop:
                continue
            value = p.find("value")
            nil = value is not None and value.get("{http://www.w3.org/2001/XMLSchema-instance}nil") == "true"
            values.append(None if value is None or nil else (value.text or ""))
    return values


@METRICS.register()
def find_default_font(result: Any, expected: Any) -> float:
    """1 when Writer's default Western font (Tools > Options > Writer > Basic Fonts, "Default") is
    ``expected["font_name"]``, read from the result ``registrymodifications.xcu`` (the last setting wins)."""
    want = rule_field(expected, "font_name", "find_default_font")
    path = as_existing_path(result)
    if path is None:
        logger.info("no registrymodifications.xcu to read (scored 0)")
        return fail(MISSING_RESULT, missing_file(result, "registrymodifications.xcu"))
    try:
        values = _xcu_values(path, "/org.openoffice.Office.Writer/DefaultFont", "Standard")
    except Unreadable as exc:
        logger.info("registrymodifications.xcu unreadable (scored 0): %s", exc)
        return fail(UNREADABLE_RESULT, f"{path} is not readable XML: {exc}")
    font = values[-1].strip() if values and values[-1] is not None else None
    logger.info("Writer's default font: %r (expected %r)", font, want)
    if font is None or font != str(want).strip():
        return fail(VALUE_MISMATCH, f"Writer's default font (/org.openoffice.Office.Writer/DefaultFont Standard): "
                                    f"expected {shown(str(want).strip())}, got "
                                    f"{'none set' if font is None else shown(font)}")
    return 1.0


# =========================================================================== epub
_BLOCKS = {"address", "article", "aside", "blockquote", "body", "caption", "dd", "div", "dl", "dt",
           "figcaption", "figure", "footer", "h1", "h2", "h3", "h4", "h5", "h6", "header", "hr", "li", "nav",
           "ol", "p", "pre", "section", "table", "td", "th", "tr", "ul"}
_NO_TEXT = {"script", "style", "head", "title"}
_CONTENT_TYPES = ("application/xhtml+xml", "text/html", "application/x-dtbook+xml")


def _local(tag: Any) -> str:
    return etree.QName(tag).localname.lower() if isinstance(tag, str) else ""


def _html_lines(data: bytes) -> list[str]:
    """The text of an (x)html content document, one line per block (paragraph, heading, list item...)."""
    try:
        root = safe_xml(data, recover=True)
    except etree.XMLSyntaxError:
        root = None
    if root is None:
        import lxml.html
        try:
            root = lxml.html.fromstring(data)
        except (etree.ParserError, ValueError):
            return []
    body = next((el for el in root.iter() if _local(el.tag) == "body"), root)
    parts: list[str] = []

    def walk(el):
        name = _local(el.tag)
        if name in _NO_TEXT:
            return
        block = name in _BLOCKS
        if block:
            parts.append("\n")
        if name == "br":
            parts.append("\n")
        if el.text and name:
            parts.append(el.text)
        for child in el:
            walk(child)
            if child.tail:
                parts.append(child.tail)
        if block:
            parts.append("\n")
    walk(body)
    return [" ".join(line.split()) for line in "".join(parts).split("\n") if line.strip()]


def _package(z: zipfile.ZipFile, names: set[str]) -> tuple[str | None, etree._Element | None]:
    """The package document (OPF) that META-INF/container.xml names (else the first .opf), parsed."""
    opf_name = None
    if "META-INF/container.xml" in names:
        try:
            container = safe_xml(read_member(z, "META-INF/container.xml"), recover=True)
        except etree.XMLSyntaxError:
            container = None
        rootfile = next((el for el in container.iter() if _local(el.tag) == "rootfile"), None) \
            if container is not None else None
        opf_name = rootfile.get("full-path") if rootfile is not None else None
    if opf_name is None or opf_name not in names:
        opf_name = next((n for n in sorted(names) if n.lower().endswith(".opf")), None)
    if opf_name is None:
        return None, None
    try:
        return opf_name, safe_xml(read_member(z, opf_name), recover=True)
    except etree.XMLSyntaxError:
        return opf_name, None


def _spine(opf: etree._Element, opf_name: str, names: set[str]) -> list[str]:
    """The members of the spine's content documents in reading order, the navigation document left out."""
    manifest = {el.get("id"): el for el in opf.iter() if _local(el.tag) == "item"}
    folder, docs = posixpath.dirname(opf_name), []
    for ref in (el for el in opf.iter() if _local(el.tag) == "itemref"):
        item = manifest.get(ref.get("idref"))
        if item is None or "nav" in (item.get("properties") or "").split():
            continue
        if (item.get("media-type") or "") in _CONTENT_TYPES:
            member = posixpath.normpath(posixpath.join(folder, unquote(item.get("href") or "")))
            if member in names:
                docs.append(member)
    return docs


def _epub_lines(path: Path) -> list[str]:
    """An epub's title and authors, then the text of its content documents in reading order.

    The reading order is the package's spine; an epub without a readable package gives its (x)html members
    in name order.
    """
    try:
        z = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError) as exc:
        raise Unreadable(f"not a zip archive: {exc}") from exc
    with z:
        names = set(z.namelist())
        opf_name, opf = _package(z, names)
        lines, docs = [], []
        if opf is not None:
            for el in opf.iter():
                dc = isinstance(el.tag, str) and etree.QName(el.tag).namespace == _DC
                if dc and _local(el.tag) in ("title", "creator") and (el.text or "").strip():
                    lines.append(f"{_local(el.tag)}: {' '.join(el.text.split())}")
            docs = _spine(opf, opf_name, names)
        if not docs:
            docs = sorted(n for n in names if n.lower().endswith((".xhtml", ".html", ".htm")))
        if not docs:
            raise Unreadable("no content documents")
        for member in docs:
            lines.extend(_html_lines(read_member(z, member)))
        return lines


@METRICS.register()
def compare_epub(result: Any, expected: Any) -> float:
    """How close two epub books are, 0..1: the line similarity (difflib ratio) of their title and authors
    followed by the text of their content documents in reading order, one line per paragraph or heading.

    Markup, file names, the split into chapter files, identifiers and dates do not count.
    """
    gold_path = as_existing_path(expected)
    if gold_path is None:
        raise MetricError(f"expected epub {expected!r} does not exist")
    try:
        want = _epub_lines(gold_path)
    except Unreadable as exc:
        raise MetricError(f"expected epub {gold_path}: {exc}") from None
    path = as_existing_path(result)
    if path is None:
        logger.info("no result epub (scored 0)")
        return fail(MISSING_RESULT, missing_file(result, "result epub"))
    try:
        got = _epub_lines(path)
    except Unreadable as exc:
        logger.info("result epub unreadable (scored 0): %s", exc)
        return fail(UNREADABLE_RESULT, f"the result epub {path} is unreadable: {exc}")
    matcher = difflib.SequenceMatcher(a=got, b=want, autojunk=False)
    score = matcher.ratio() if got or want else 1.0
    logger.info("epub text similarity %.4f (%d vs %d lines)", score, len(got), len(want))
    if score < 1:
        _, i, _, j, _ = next(op for op in matcher.get_opcodes() if op[0] != "equal")
        mine = shown(got[i]) if i < len(got) else "the end of the book"
        theirs = shown(want[j]) if j < len(want) else "the end of the book"
        return fail(VALUE_MISMATCH, f"line similarity {score:.4f} ({len(got)} lines, expected {len(want)}); first "
                                    f"difference at line {i + 1}: expected {theirs}, got {mine}", score)
    return score
