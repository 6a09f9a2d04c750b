"""Document formatting metrics: line spacing, alignment, tab stops, fonts, sub- and superscript, italics,
strike-through, page numbers and breaks, word colours and highlighting in Writer documents.

How documents and their formatting are read (styles, defaults, what an unreadable file scores):
``document_files``.
"""
from __future__ import annotations

import logging
import math
import re
from typing import Any, Callable

from lxml import etree

from desktop_env.evaluators.metrics.differences import plural
from desktop_env.evaluators.metrics.document_diffs import same_text, table_difference
from desktop_env.evaluators.metrics.document_files import (
    DSTRIKE, ITALIC, JC, SIZE, STRIKE, VERT_ALIGN, Docx, color, highlight, is_int, is_number, onoff, open_document,
    open_pair, options_check, rule_field, table_grids, w_tag)
from desktop_env.evaluators.metrics.utils import MetricError
from desktop_env.evaluators.reasons import (
    RULE_FAILED, STRUCTURE_MISMATCH, THRESHOLD_NOT_MET, VALUE_MISMATCH, explain, fail, shown)
from desktop_env.registry import METRICS

logger = logging.getLogger(__name__)


# =========================================================================== paragraph formatting
@METRICS.register()
def compare_line_spacing(result: Any, expected: Any) -> float:
    """1 when the result has the expected text and every paragraph the expected paragraph's line spacing
    (as shown: the paragraph's own, its style's, or the document's default; unset is single)."""
    result_doc, gold_doc = open_pair(result, expected, ("docx",))
    if result_doc is None or not same_text(result_doc, gold_doc):
        return 0.0
    got, want = result_doc.paragraphs(), gold_doc.paragraphs()
    if len(got) != len(want):
        logger.info("paragraph counts differ: %d vs %d", len(got), len(want))
        return fail(STRUCTURE_MISMATCH, f"{plural(len(got), 'paragraph')}, expected {len(want)}")
    for i, (pg, pw) in enumerate(zip(got, want)):
        sg, sw = result_doc.line_spacing(pg), gold_doc.line_spacing(pw)
        if sg != sw:
            logger.info("paragraph %d (%r): line spacing %s vs %s", i, result_doc.text(pg)[:60], sg, sw)
            return fail(VALUE_MISMATCH, f"paragraph {i + 1} ({shown(result_doc.text(pg), 50)}): line spacing "
                                        f"expected {_spacing(sw)}, got {_spacing(sg)}")
    return 1.0


def _spacing(value: tuple[str, int]) -> str:
    """A line spacing of ``Docx.line_spacing`` as Writer's dialog says it."""
    rule, amount = value
    if rule == "auto":
        return f"{amount / 240:g} lines ({amount}/240)"
    return f"{'exactly' if rule == 'exact' else 'at least'} {amount} twips"


@METRICS.register()
def is_first_line_centered(result: Any, expected: Any = None) -> float:
    """1 when the document's first paragraph with text is centred (its own alignment, else its style's)."""
    doc = open_document(result, "result", ("docx",))
    if doc is None:
        return 0.0
    paragraphs = doc.paragraphs()
    first = next((p for p in paragraphs if doc.text(p).strip()), None)
    if first is None:
        logger.info("the document has no text")
        return fail(RULE_FAILED, "the document has no paragraph with text: no first line to centre")
    align = doc.para_prop(first, JC)
    logger.info("first line %r: alignment %s", doc.text(first)[:60], align)
    if align != "center":
        return fail(VALUE_MISMATCH, f"paragraph {paragraphs.index(first) + 1} ({shown(doc.text(first), 50)}), the "
                                    f"first with text: alignment expected 'center', got {shown(align or 'left')}")
    return 1.0


@METRICS.register(check=options_check(word_number_split_by_tabstop=is_int(0, none_ok=True), index=is_int(0)))
def check_tabstops(result: Any, expected: Any, word_number_split_by_tabstop: int | None = None,
                   index: int = 0) -> float:
    """How well the non-blank paragraphs' tab stops match the expected ones, 0..1.

    The two documents must have as many non-blank paragraphs, each pair the same number of stops (left stops
    at 0 aside) with the same alignments, else 0. The score is 1 less the mean over the paragraphs of the
    summed distance between paired stops over the text width (the expected page's width less its margins).

    Args:
        word_number_split_by_tabstop: when set, the ``index``-th tab-separated part of every non-blank
            result paragraph must hold exactly this many words, else 0.
        index: which part (from 0) of each paragraph, cut at its tabs, holds those words.
    """
    result_doc, gold_doc = open_pair(result, expected, ("docx",))
    if result_doc is None:
        return 0.0
    paragraphs = result_doc.paragraphs()
    numbers = {p: n for n, p in enumerate(paragraphs, 1)}  # a paragraph's number, for reasons
    got = [p for p in paragraphs if result_doc.text(p).strip()]
    want = [p for p in gold_doc.paragraphs() if gold_doc.text(p).strip()]
    if len(got) != len(want) or not got:
        logger.info("non-blank paragraph counts: %d vs %d", len(got), len(want))
        return fail(STRUCTURE_MISMATCH, f"{plural(len(got), 'paragraph')} with text, expected {len(want)}"
                                        + ("" if got or want else " (nothing to compare)"))
    if word_number_split_by_tabstop is not None:
        for p in got:
            parts = result_doc.text(p).split("\t")
            words = parts[index].split() if index < len(parts) else []
            if len(words) != word_number_split_by_tabstop:
                logger.info("paragraph %r: part %d has %d words, not %d", result_doc.text(p)[:60], index,
                            len(words), word_number_split_by_tabstop)
                return fail(THRESHOLD_NOT_MET, f"paragraph {numbers[p]} ({shown(result_doc.text(p), 50)}): part "
                                               f"{index} (cut at tabs) holds {plural(len(words), 'word')}, expected "
                                               f"{word_number_split_by_tabstop} (word_number_split_by_tabstop)")
    section = gold_doc.doc.sections[0]
    dims = [section.page_width, section.left_margin, section.right_margin]
    width = dims[0].twips - dims[1].twips - dims[2].twips if all(d is not None for d in dims) else 0
    width = width if width > 0 else 12240 - 2 * 1440  # Letter with 1-inch margins when the page is unset
    missed, worst = 0.0, None  # worst: (distance, paragraph, result stops, expected stops)
    for pg, pw in zip(got, want):
        tg, tw = result_doc.tab_stops(pg), gold_doc.tab_stops(pw)
        if len(tg) != len(tw) or any(a[1] != b[1] for a, b in zip(tg, tw)):
            logger.info("paragraph %r: tab stops %s vs %s", result_doc.text(pg)[:60], tg, tw)
            return fail(VALUE_MISMATCH, f"paragraph {numbers[pg]} ({shown(result_doc.text(pg), 50)}): tab stops "
                                        f"expected {_stops(tw)}, got {_stops(tg)}")
        distance = sum(abs(a[0] - b[0]) for a, b in zip(tg, tw))
        missed += distance / width
        if distance and (worst is None or distance > worst[0]):
            worst = (distance, pg, tg, tw)
    score = max(0.0, 1.0 - missed / len(got))
    if worst is not None:
        distance, pg, tg, tw = worst
        explain(VALUE_MISMATCH, f"tab stops off by {missed / len(got):.4f} of the text width on average; the most "
                                f"in paragraph {numbers[pg]} ({shown(result_doc.text(pg), 50)}): expected "
                                f"{_stops(tw)}, got {_stops(tg)}")
    return score


def _stops(stops: list[tuple[int, str]]) -> str:
    """Tab stops for a reason: ``right at 7200 twips, left at 1440 twips`` (or ``none``)."""
    return ", ".join(f"{align} at {pos} twips" for pos, align in stops) or "none"


# =========================================================================== run formatting
@METRICS.register()
def compare_font_names(result: Any, expected: Any) -> float:
    """1 when every run with text in the body's paragraphs shows in the font ``expected["font_name"]``."""
    want = rule_field(expected, "font_name", "compare_font_names")
    doc = open_document(result, "result", ("docx",))
    if doc is None:
        return 0.0
    for n, p in enumerate(doc.paragraphs(), 1):
        for r in doc.runs(p):
            if not r.text:
                continue
            font = doc.run_prop(p, r, doc.font)
            if font != want:
                logger.info("run %r is in %r, not %r", r.text[:60], font, want)
                return fail(VALUE_MISMATCH, f"paragraph {n}, run {shown(r.text, 50)}: font expected {shown(want)}, "
                                            f"got {'none set' if font is None else shown(font)}")
    return 1.0


def _positions(doc: Docx, test: Callable[[etree._Element, etree._Element], bool],
               skip_blank: bool = False) -> set[tuple[int, int]]:
    """(paragraph index, character offset) of every body character whose run passes ``test(p, r)``."""
    out = set()
    for i, p in enumerate(doc.paragraphs()):
        for j, (ch, r) in enumerate(doc.chars(p)):
            if not (skip_blank and ch.isspace()) and test(p, r):
                out.add((i, j))
    return out


@METRICS.register()
def compare_subscript_contains(result: Any, expected: Any) -> float:
    """1 when some character is subscript in both documents at the same place (same paragraph, same offset)."""
    result_doc, gold_doc = open_pair(result, expected, ("docx",))
    if result_doc is None:
        return 0.0

    def sub(doc):
        return _positions(doc, lambda p, r: doc.run_prop(p, r, VERT_ALIGN) == "subscript")
    got, want = sub(result_doc), sub(gold_doc)
    logger.info("subscript characters: %d in the result, %d expected, %d shared", len(got), len(want),
                len(got & want))
    if got & want:
        return 1.0
    if not want:
        return fail(RULE_FAILED, "the expected document has no subscript character to find in the result")
    i, j = min(want)
    paragraphs = result_doc.paragraphs()
    run = next((r for k, (_, r) in enumerate(result_doc.chars(paragraphs[i])) if k == j), None) \
        if i < len(paragraphs) else None
    shown_as = (result_doc.run_prop(paragraphs[i], run, VERT_ALIGN) if run is not None else None) or "baseline"
    return fail(VALUE_MISMATCH, f"{_char_at(result_doc, i, j)}: vertical alignment expected subscript, got "
                                f"{shown(shown_as)} (no character is subscript where the expected document has one)")


def _char_at(doc, i: int, j: int) -> str:
    """Character ``j`` of paragraph ``i`` (0-based) for a reason: ``paragraph 2, character 3 ('2' in 'H2O')``."""
    paragraphs = doc.paragraphs()
    text = doc.text(paragraphs[i]) if i < len(paragraphs) else ""
    if j >= len(text):
        return f"paragraph {i + 1}, character {j + 1} (past the end of {shown(text, 50)})"
    start = text.rfind(" ", 0, j) + 1
    end = text.find(" ", j)
    word = text[start:end if end >= 0 else len(text)]
    return f"paragraph {i + 1}, character {j + 1} ({shown(text[j])} in {shown(word, 40)})"


@METRICS.register()
def check_italic_font_size_14(result: Any, expected: Any) -> float:
    """1 when the result has the expected text, the same characters in italics (whitespace aside), and every
    italic character is 14 pt."""
    result_doc, gold_doc = open_pair(result, expected, ("docx",))
    if result_doc is None or not same_text(result_doc, gold_doc):
        return 0.0

    def italic(doc):
        return _positions(doc, lambda p, r: bool(doc.run_prop(p, r, ITALIC)), skip_blank=True)
    got, want = italic(result_doc), italic(gold_doc)
    if got != want:
        logger.info("the italic text differs from the expected document's")
        i, j = min(got ^ want)
        return fail(VALUE_MISMATCH, f"{_char_at(result_doc, i, j)}: italic expected "
                                    f"{'on' if (i, j) in want else 'off'}, got {'on' if (i, j) in got else 'off'}")
    for i, p in enumerate(result_doc.paragraphs()):
        for j, (_, r) in enumerate(result_doc.chars(p)):
            if (i, j) in got:
                size = result_doc.run_prop(p, r, SIZE)
                if size != 14:
                    logger.info("italic run %r is %s pt", r.text[:60], size)
                    return fail(VALUE_MISMATCH, f"paragraph {i + 1}, italic run {shown(r.text, 50)}: size expected "
                                                f"14 pt, got {'none set' if size is None else f'{size:g} pt'}")
    return 1.0


@METRICS.register()
def evaluate_strike_through_last_paragraph(result: Any, expected: Any) -> float:
    """1 when the result has the expected text and every word of its last paragraph with text is struck
    through (single or double)."""
    result_doc, gold_doc = open_pair(result, expected, ("docx",))
    if result_doc is None or not same_text(result_doc, gold_doc):
        return 0.0
    paragraphs = result_doc.paragraphs()
    last = next((p for p in reversed(paragraphs) if result_doc.text(p).strip()), None)
    if last is None:
        return fail(RULE_FAILED, "the document has no paragraph with text: no last paragraph to strike through")
    for r in result_doc.runs(last):
        if r.text.strip() and not (result_doc.run_prop(last, r, STRIKE) or result_doc.run_prop(last, r, DSTRIKE)):
            logger.info("run %r of the last paragraph is not struck through", r.text[:60])
            return fail(VALUE_MISMATCH, f"paragraph {paragraphs.index(last) + 1} (the last with text), run "
                                        f"{shown(r.text, 50)}: strike-through expected on, got off")
    return 1.0


@METRICS.register()
def has_page_numbers_in_footers(result: Any, expected: Any = None) -> float:
    """1 when every page shows a page number in its footer: each section's footer (and its first-page and
    even-page footers where the document uses them) holds a PAGE field."""
    doc = open_document(result, "result", ("docx",))
    if doc is None:
        return 0.0
    even_pages = bool(doc.doc.settings.odd_and_even_pages_header_footer)
    for n, section in enumerate(doc.doc.sections):
        footers = [("default", section.footer)]
        if section.different_first_page_header_footer:
            footers.append(("first-page", section.first_page_footer))
        if even_pages:
            footers.append(("even-page", section.even_page_footer))
        for kind, footer in footers:
            # a footer linked to the previous section's shows that one (python-docx follows the link; a
            # document with no such footer at all gets an empty one, in memory only)
            if not _has_page_field(footer.part.element):
                logger.info("the %s footer of section %d shows no page number", kind, n + 1)
                text = " ".join(p.text for p in footer.paragraphs).strip()
                return fail(RULE_FAILED, f"the {kind} footer of section {n + 1} holds no PAGE field (its text: "
                                         f"{shown(text, 50) if text else 'none'})")
    return 1.0


_PAGE_FIELD = re.compile(r"(?<![A-Za-z])PAGE(?![A-Za-z])")


def _has_page_field(footer: etree._Element | None) -> bool:
    if footer is None:
        return False
    if any(_PAGE_FIELD.match(f.get(w_tag("instr"), "").strip()) for f in footer.iter(w_tag("fldSimple"))):
        return True
    return any(_PAGE_FIELD.match((t.text or "").strip()) for t in footer.iter(w_tag("instrText")))


@METRICS.register()
def contains_page_break(result: Any, expected: Any = None) -> float:
    """1 when the body has a page break: a page break character or a paragraph set to start a new page.

    ``expected`` may be the rule ``{"page_break_count": N}``: then there must be exactly N. With
    ``"before_text": T`` as well (our tasks' option), the first paragraph whose text is ``T`` (stripped)
    must start a page: a break comes after the text before it and before its own text, with only blank
    paragraphs between (Writer's Ctrl+Enter at a paragraph's start leaves the break in an empty
    paragraph of its own). Without it, where the break is does not count.

    Raises:
        MetricError: ``page_break_count`` is not a whole number >= 0, or ``before_text`` not a text.
    """
    rule = expected if isinstance(expected, dict) else {}
    want, before = rule.get("page_break_count"), rule.get("before_text")
    if want is not None and (isinstance(want, bool) or not isinstance(want, int) or want < 0):
        raise MetricError(f"contains_page_break: page_break_count must be a whole number >= 0, got {want!r}")
    if before is not None and (not isinstance(before, str) or not before.strip()):
        raise MetricError(f"contains_page_break: before_text must be a paragraph's text, got {before!r}")
    doc = open_document(result, "result", ("docx",))
    if doc is None:
        return 0.0
    count, broken, starts_page = 0, False, None  # broken: a break since the last text
    for p in doc.paragraphs():
        ppr = p.find(w_tag("pPr"))
        if ppr is not None and onoff("pageBreakBefore")(ppr):
            count, broken = count + 1, True
        target = before is not None and starts_page is None and doc.text(p).strip() == before.strip()
        for r in doc.runs(p):
            for child in r.iterchildren():
                if child.tag == w_tag("br") and child.get(w_tag("type")) == "page":
                    count, broken = count + 1, True
                elif child.tag == w_tag("t") and (child.text or "").strip():
                    if target and starts_page is None:
                        starts_page = broken
                    broken = False
    logger.info("page breaks: %d%s%s", count, "" if want is None else f" (expected {want})",
                "" if before is None else f"; paragraph {before!r} starts a page: {starts_page}")
    if before is not None and not starts_page:
        if starts_page is None:
            return fail(RULE_FAILED, f"no paragraph with text reads {shown(before.strip())} (before_text)")
        return fail(RULE_FAILED, f"the paragraph {shown(before.strip())} does not start a page: no page break "
                                 f"between the text before it and its own")
    if want is not None and count != want:
        return fail(THRESHOLD_NOT_MET, f"{plural(count, 'page break')} in the body, expected {want} "
                                       f"(page_break_count)")
    if want is None and count == 0:
        return fail(RULE_FAILED, "the body has no page break (no page break character, no paragraph set to "
                                 "start a new page)")
    return 1.0


# =========================================================================== colours and highlights
def _srgb_to_lab(rgb: tuple[int, int, int]) -> tuple[float, float, float]:
    """CIE L*a*b* (D65, 2-degree observer) of an 8-bit sRGB colour."""
    def linear(c: float) -> float:
        c /= 255.0
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4
    r, g, b = (linear(c) for c in rgb)
    x = (0.412453 * r + 0.357580 * g + 0.180423 * b) / 0.95047
    y = 0.212671 * r + 0.715160 * g + 0.072169 * b
    z = (0.019334 * r + 0.119193 * g + 0.950227 * b) / 1.08883

    def f(t: float) -> float:
        return t ** (1 / 3) if t > 0.008856 else 7.787 * t + 16 / 116
    fx, fy, fz = f(x), f(y), f(z)
    return 116 * fy - 16, 500 * (fx - fy), 200 * (fy - fz)


def delta_e_2000(lab1: tuple[float, float, float], lab2: tuple[float, float, float]) -> float:
    """The CIEDE2000 colour difference of two L*a*b* colours (kL = kC = kH = 1)."""
    l1, a1, b1 = lab1
    l2, a2, b2 = lab2
    c_bar = (math.hypot(a1, b1) + math.hypot(a2, b2)) / 2
    g = 0.5 * (1 - math.sqrt(c_bar ** 7 / (c_bar ** 7 + 25 ** 7)))
    a1p, a2p = (1 + g) * a1, (1 + g) * a2
    c1p, c2p = math.hypot(a1p, b1), math.hypot(a2p, b2)
    h1p = math.degrees(math.atan2(b1, a1p)) % 360 if c1p else 0.0
    h2p = math.degrees(math.atan2(b2, a2p)) % 360 if c2p else 0.0
    dl, dc = l2 - l1, c2p - c1p
    if c1p * c2p == 0:
        dh = 0.0
    elif abs(h2p - h1p) <= 180:
        dh = h2p - h1p
    else:
        dh = h2p - h1p - 360 if h2p > h1p else h2p - h1p + 360
    d_hue = 2 * math.sqrt(c1p * c2p) * math.sin(math.radians(dh / 2))
    l_bar, cp_bar = (l1 + l2) / 2, (c1p + c2p) / 2
    if c1p * c2p == 0:
        h_bar = h1p + h2p
    elif abs(h1p - h2p) <= 180:
        h_bar = (h1p + h2p) / 2
    else:
        h_bar = (h1p + h2p + 360) / 2 if h1p + h2p < 360 else (h1p + h2p - 360) / 2
    t = (1 - 0.17 * math.cos(math.radians(h_bar - 30)) + 0.24 * math.cos(math.radians(2 * h_bar))
         + 0.32 * math.cos(math.radians(3 * h_bar + 6)) - 0.20 * math.cos(math.radians(4 * h_bar - 63)))
    s_l = 1 + 0.015 * (l_bar - 50) ** 2 / math.sqrt(20 + (l_bar - 50) ** 2)
    s_c = 1 + 0.045 * cp_bar
    s_h = 1 + 0.015 * cp_bar * t
    d_theta = 30 * math.exp(-(((h_bar - 275) / 25) ** 2))
    r_t = -2 * math.sqrt(cp_bar ** 7 / (cp_bar ** 7 + 25 ** 7)) * math.sin(math.radians(2 * d_theta))
    return math.sqrt((dl / s_l) ** 2 + (dc / s_c) ** 2 + (d_hue / s_h) ** 2 + r_t * (dc / s_c) * (d_hue / s_h))


def _hex_rgb(value: str | None) -> tuple[int, int, int] | None:
    if not value or not re.fullmatch(r"[0-9A-Fa-f]{6}", value):
        return None
    return int(value[0:2], 16), int(value[2:4], 16), int(value[4:6], 16)


_RED, _BLUE = _srgb_to_lab((255, 0, 0)), _srgb_to_lab((0, 0, 255))


@METRICS.register(check=options_check(threshold=is_number(0, 100)))
def evaluate_colored_words_in_tables(result: Any, expected: Any, threshold: float = 3.5) -> float:
    """1 when the result has the expected text (body and tables) and, in its tables, every word starting with
    a vowel (a e i o u) is red and every other word blue.

    A word is a whitespace-separated piece of a cell's text; its letters and digits must all be in its
    colour, within a CIEDE2000 difference of ``threshold`` (punctuation around it is not checked).
    """
    result_doc, gold_doc = open_pair(result, expected, ("docx",))
    if result_doc is None or not same_text(result_doc, gold_doc):
        return 0.0
    difference = table_difference(table_grids(result_doc), table_grids(gold_doc))
    if difference:
        logger.info("the tables' text differs from the expected document's")
        return fail(difference[0], f"the tables' text differs from the expected document's: {difference[1]}")
    doc = result_doc
    for p in doc.table_cell_paragraphs():
        chars = list(doc.chars(p))
        text = "".join(ch for ch, _ in chars)
        for word in re.finditer(r"\S+", text):
            letters = [k for k in range(word.start(), word.end()) if text[k].isalnum()]
            if not letters:
                continue
            wanted = _RED if text[letters[0]].lower() in "aeiou" else _BLUE
            for k in letters:
                rgb = _hex_rgb(doc.run_prop(p, chars[k][1], color))
                if rgb is None or delta_e_2000(_srgb_to_lab(rgb), wanted) > threshold:
                    logger.info("word %r: %r is coloured %s, wanted %s", word.group(), text[k],
                                "automatic" if rgb is None else "#%02X%02X%02X" % rgb,
                                "red" if wanted is _RED else "blue")
                    got = ("automatic (no colour set)" if rgb is None else "#%02X%02X%02X (CIEDE2000 difference "
                           "%.1f > %g)" % (*rgb, delta_e_2000(_srgb_to_lab(rgb), wanted), threshold))
                    return fail(VALUE_MISMATCH, f"{_cell_label(doc, p)}word {shown(word.group(), 40)}: "
                                                f"{shown(text[k])} expected {'red' if wanted is _RED else 'blue'}, "
                                                f"got {got}")
    return 1.0


def _cell_label(doc: Docx, p: etree._Element) -> str:
    """``table 1, row 2, column 3: `` for a table cell's paragraph ('' when it is not laid out so)."""
    tc = p.getparent()
    tr = tc.getparent() if tc is not None else None
    tbl = tr.getparent() if tr is not None else None
    if tbl is None or tc.tag != w_tag("tc") or tr.tag != w_tag("tr") or tbl.tag != w_tag("tbl"):
        return ""
    tables = list(doc.body.iter(w_tag("tbl")))
    rows, cells = list(tbl.iterchildren(w_tag("tr"))), list(tr.iterchildren(w_tag("tc")))
    return f"table {tables.index(tbl) + 1}, row {rows.index(tr) + 1}, column {cells.index(tc) + 1}: "


def _highlighted_positions(doc) -> set[tuple[int, int]]:
    """(paragraph, offset) of every highlighted character that is not whitespace."""
    if isinstance(doc, Docx):
        return _positions(doc, lambda p, r: bool(doc.run_prop(p, r, highlight)), skip_blank=True)
    out = set()
    for i, p in enumerate(doc.paragraphs()):
        offset = 0
        for piece, spans in doc.segments(p):
            if piece.strip() and doc.highlighted(p, spans):
                out.update((i, offset + k) for k, ch in enumerate(piece) if not ch.isspace())
            offset += len(piece)
    return out


@METRICS.register()
def check_highlighted_words(result: Any, expected: Any) -> float:
    """1 when the result has the expected text and highlights exactly the text the expected document does
    (none, for a task that removes the highlighting): a background colour on characters (odt), a highlight
    or shading on runs (docx)."""
    result_doc, gold_doc = open_pair(result, expected)
    if result_doc is None or not same_text(result_doc, gold_doc):
        return 0.0
    got, want = _highlighted_positions(result_doc), _highlighted_positions(gold_doc)
    if got != want:
        logger.info("highlighted characters: %d in the result, %d expected (%d extra, %d missing)", len(got),
                    len(want), len(got - want), len(want - got))
        i, j = min(got ^ want)
        return fail(VALUE_MISMATCH, f"{_char_at(result_doc, i, j)}: highlighted expected "
                                    f"{'yes' if (i, j) in want else 'no'}, got {'yes' if (i, j) in got else 'no'} "
                                    f"({len(got - want)} characters highlighted too many, {len(want - got)} missing)")
    return 1.0
