"""Reading Writer documents for the document metrics: docx through python-docx, odt through odfpy.

What the metrics of ``documents`` and ``document_format`` share:

- A document's *paragraphs* are those of its body in order, headings included, not those inside tables,
  text frames, footnotes or comments (table text is read by the table metrics). A paragraph's text is what
  it shows: runs, hyperlinks, field results (not their codes), tabs as ``\\t``, line breaks as ``\\n``;
  deleted tracked changes are left out. docx or odt is told from the file's content, not its name, and
  either may be compared with the other.
- Formatting is read as Writer shows it: a run's own properties, else its character style, else its
  paragraph's style (and the styles each is based on), else the document defaults.
- A missing or unreadable *result* scores 0 and its reason says why (``missing_result``,
  ``unreadable_result``); a missing or unreadable *expected* file, or a rule without its field, is a
  :class:`MetricError` (a task error).
- Several metrics first require the result's text to equal the expected file's (``compare_docx_files``
  with its defaults), as the suite's checker does: formatting is scored only on the right text
  (``document_diffs.same_text``).
"""
from __future__ import annotations

import logging
import math
import re
import zipfile
from pathlib import Path
from typing import Any, Callable, Iterator

import docx
from docx.oxml.ns import qn
from lxml import etree
from odf import office as odf_office
from odf.element import Node
from odf.opendocument import load as odf_load

from desktop_env.evaluators.metrics.differences import missing_file
from desktop_env.evaluators.metrics.fuzzy import fuzzy_ratio
from desktop_env.evaluators.metrics.utils import MetricError, OptionError, as_existing_path
from desktop_env.evaluators.reasons import MISSING_RESULT, UNREADABLE_RESULT, explain

logger = logging.getLogger(__name__)

# ODF namespaces (odfpy keys attributes and element names by (namespace, local name))
_TEXT = "urn:oasis:names:tc:opendocument:xmlns:text:1.0"
_STYLE = "urn:oasis:names:tc:opendocument:xmlns:style:1.0"
_TABLE = "urn:oasis:names:tc:opendocument:xmlns:table:1.0"
_DRAW = "urn:oasis:names:tc:opendocument:xmlns:drawing:1.0"
_OFFICE = "urn:oasis:names:tc:opendocument:xmlns:office:1.0"
_FO = "urn:oasis:names:tc:opendocument:xmlns:xsl-fo-compatible:1.0"
_MC = "http://schemas.openxmlformats.org/markup-compatibility/2006"
A_NS = "http://schemas.openxmlformats.org/drawingml/2006/main"
R_NS = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"

#: an XML parser for untrusted files: no entities, no network, no huge trees
_SAFE_XML = dict(resolve_entities=False, no_network=True, huge_tree=False)
#: members of an archive larger than this are not read (a zip bomb scores 0 instead of filling memory)
_MAX_MEMBER = 64 * 1024 * 1024


class Unreadable(Exception):
    """A file that is not a readable document of the kind asked for."""


def safe_xml(data: bytes, recover: bool = False) -> etree._Element:
    """Parse untrusted XML (no entity expansion, no network)."""
    return etree.fromstring(data, etree.XMLParser(recover=recover, **_SAFE_XML))


def read_member(z: zipfile.ZipFile, name: str) -> bytes:
    """An archive member's bytes; one larger than 64 MiB uncompressed is :class:`Unreadable`."""
    info = z.getinfo(name)
    if info.file_size > _MAX_MEMBER:
        raise Unreadable(f"{name} is {info.file_size} bytes uncompressed")
    return z.read(info)


# =========================================================================== docx
def w_tag(tag: str) -> str:
    return qn(f"w:{tag}")


W_VAL = w_tag("val")
_OFF = ("0", "false", "off")
#: elements whose runs a paragraph does not show as its own text
_NOT_SHOWN = {w_tag("del"), w_tag("moveFrom"), w_tag("txbxContent"), w_tag("p"), f"{{{_MC}}}Fallback"}


def onoff(tag: str) -> Callable[[etree._Element], bool | None]:
    """An rPr reader for a toggle property (``<w:i/>``, ``<w:i w:val="0"/>``): True, False or None (unset)."""
    def read(rpr: etree._Element) -> bool | None:
        el = rpr.find(w_tag(tag))
        if el is None:
            return None
        return el.get(W_VAL, "1").lower() not in _OFF
    return read


def _attr(tag: str, cast: Callable[[str], Any] = str) -> Callable[[etree._Element], Any]:
    """A reader of one property's ``w:val`` (None when unset or malformed)."""
    def read(props: etree._Element) -> Any:
        el = props.find(w_tag(tag))
        if el is None or el.get(W_VAL) is None:
            return None
        try:
            return cast(el.get(W_VAL))
        except ValueError:
            return None
    return read


ITALIC = onoff("i")
STRIKE = onoff("strike")
DSTRIKE = onoff("dstrike")
VERT_ALIGN = _attr("vertAlign")
SIZE = _attr("sz", lambda v: float(v) / 2)  # half-points -> points
JC = _attr("jc")


def color(rpr: etree._Element) -> str | None:
    """``RRGGBB`` upper-case, ``"auto"``, or None when the level does not set a colour."""
    val = _attr("color")(rpr)
    return None if val is None else val.upper() if val.lower() != "auto" else "auto"


def highlight(rpr: etree._Element) -> bool | None:
    """Whether a level highlights or shades the text (``w:highlight`` other than none, a ``w:shd`` fill)."""
    mark, shd = rpr.find(w_tag("highlight")), rpr.find(w_tag("shd"))
    if mark is not None and mark.get(W_VAL, "none").lower() != "none":
        return True
    if shd is not None and shd.get(w_tag("fill"), "auto").lower() not in ("auto", "none", ""):
        return True
    return False if mark is not None or shd is not None else None


class Docx:
    """A docx opened with python-docx, with the style lookups the metrics need."""

    kind = "docx"

    def __init__(self, path: Path):
        try:
            self.doc = docx.Document(str(path))
        except Exception as exc:  # python-docx raises many types on a bad package (zip, xml, key, value)
            raise Unreadable(f"not a readable docx: {exc}") from exc
        root = self.doc.styles.element
        self._styles = {s.get(w_tag("styleId")): s for s in root.iter(w_tag("style"))}
        self._default_style = {}
        for s in root.iter(w_tag("style")):
            if s.get(w_tag("default"), "0").lower() in ("1", "true", "on"):
                self._default_style.setdefault(s.get(w_tag("type"), "paragraph"), s.get(w_tag("styleId")))
        defaults = root.find(w_tag("docDefaults"))
        self._rpr_default = defaults.find(f"{w_tag('rPrDefault')}/{w_tag('rPr')}") if defaults is not None else None
        self._ppr_default = defaults.find(f"{w_tag('pPrDefault')}/{w_tag('pPr')}") if defaults is not None else None
        self._theme_fonts: dict[str, str] | None = None
        # (run, reader) -> value; the key holds the run element, so its proxy (and id) lives as long as the entry
        self._run_props: dict[tuple, Any] = {}

    # -- structure -------------------------------------------------------------
    @property
    def body(self) -> etree._Element:
        return self.doc.element.body

    def paragraphs(self) -> list[etree._Element]:
        """The body's paragraphs (``w:p`` children of ``w:body``), in order."""
        return list(self.body.iterchildren(w_tag("p")))

    @staticmethod
    def runs(p: etree._Element) -> list[etree._Element]:
        """The runs a paragraph shows, in order: its own, in hyperlinks, fields, insertions and content
        controls; not deleted ones, nor those of text boxes or fallback copies anchored in it."""
        out = []
        for r in p.iter(w_tag("r")):
            up = r.getparent()
            while up is not None and up is not p and up.tag not in _NOT_SHOWN:
                up = up.getparent()
            if up is p:
                out.append(r)
        return out

    def text(self, p: etree._Element) -> str:
        return "".join(r.text for r in self.runs(p))

    def chars(self, p: etree._Element) -> Iterator[tuple[str, etree._Element]]:
        """Each character the paragraph shows with its run."""
        for r in self.runs(p):
            for ch in r.text:
                yield ch, r

    def table_cell_paragraphs(self) -> list[etree._Element]:
        """The paragraphs of every table cell in the body (nested tables included), each once."""
        return [p for tc in self.body.iter(w_tag("tc")) for p in tc.iterchildren(w_tag("p"))]

    # -- styles ----------------------------------------------------------------
    def _chain(self, style_id: str | None) -> list[etree._Element]:
        """A style and those it is based on, most specific first."""
        out, seen = [], set()
        while style_id and style_id not in seen and style_id in self._styles:
            seen.add(style_id)
            style = self._styles[style_id]
            out.append(style)
            based = style.find(w_tag("basedOn"))
            style_id = based.get(W_VAL) if based is not None else None
        return out

    def _paragraph_style(self, p: etree._Element) -> str | None:
        ppr = p.find(w_tag("pPr"))
        ps = ppr.find(w_tag("pStyle")) if ppr is not None else None
        return ps.get(W_VAL) if ps is not None else self._default_style.get("paragraph")

    def _rpr_levels(self, p: etree._Element, r: etree._Element) -> Iterator[etree._Element]:
        rpr = r.find(w_tag("rPr"))
        if rpr is not None:
            yield rpr
            rs = rpr.find(w_tag("rStyle"))
            for style in self._chain(rs.get(W_VAL) if rs is not None else None):
                if style.find(w_tag("rPr")) is not None:
                    yield style.find(w_tag("rPr"))
        for style in self._chain(self._paragraph_style(p)):
            if style.find(w_tag("rPr")) is not None:
                yield style.find(w_tag("rPr"))
        if self._rpr_default is not None:
            yield self._rpr_default

    def _ppr_levels(self, p: etree._Element) -> Iterator[etree._Element]:
        """The paragraph property levels, most specific first: direct, the style chain, the defaults."""
        if p.find(w_tag("pPr")) is not None:
            yield p.find(w_tag("pPr"))
        for style in self._chain(self._paragraph_style(p)):
            if style.find(w_tag("pPr")) is not None:
                yield style.find(w_tag("pPr"))
        if self._ppr_default is not None:
            yield self._ppr_default

    def run_prop(self, p: etree._Element, r: etree._Element, read: Callable[[etree._Element], Any]) -> Any:
        """A run property as shown: the first level that sets it (None when none does)."""
        key = (r, read)
        if key not in self._run_props:
            self._run_props[key] = next((v for v in map(read, self._rpr_levels(p, r)) if v is not None), None)
        return self._run_props[key]

    def para_prop(self, p: etree._Element, read: Callable[[etree._Element], Any]) -> Any:
        for level in self._ppr_levels(p):
            value = read(level)
            if value is not None:
                return value
        return None

    # -- fonts -----------------------------------------------------------------
    def _theme(self) -> dict[str, str]:
        """The theme's ``major`` and ``minor`` Latin typefaces (empty without a theme part)."""
        if self._theme_fonts is None:
            self._theme_fonts = {}
            for rel in self.doc.part.rels.values():
                if rel.is_external or not rel.reltype.endswith("/theme"):
                    continue
                try:
                    theme = safe_xml(rel.target_part.blob)
                except etree.XMLSyntaxError:
                    break
                for kind in ("major", "minor"):
                    latin = theme.find(f".//{{{A_NS}}}{kind}Font/{{{A_NS}}}latin")
                    if latin is not None and latin.get("typeface"):
                        self._theme_fonts[kind] = latin.get("typeface")
                break
        return self._theme_fonts

    def font(self, rpr: etree._Element) -> str | None:
        """The Latin font a level sets (a theme font resolved through the theme part), or None."""
        fonts = rpr.find(w_tag("rFonts"))
        if fonts is None:
            return None
        theme = fonts.get(w_tag("asciiTheme")) or fonts.get(w_tag("hAnsiTheme"))
        if theme:
            return self._theme().get("major" if theme.startswith("major") else "minor")
        return fonts.get(w_tag("ascii")) or fonts.get(w_tag("hAnsi"))

    def line_spacing(self, p: etree._Element) -> tuple[str, int]:
        """``(rule, value)`` as shown: ``auto`` in 240ths of a line (240 single, 480 double), ``exact`` or
        ``atLeast`` in twips; unset everywhere is single spacing."""
        def read(ppr):
            sp = ppr.find(w_tag("spacing"))
            if sp is None or sp.get(w_tag("line")) is None:
                return None
            try:
                return sp.get(w_tag("lineRule"), "auto"), int(float(sp.get(w_tag("line"))))
            except ValueError:
                return None
        return self.para_prop(p, read) or ("auto", 240)

    def tab_stops(self, p: etree._Element) -> list[tuple[int, str]]:
        """The paragraph's tab stops as shown, ``(position in twips, alignment)`` sorted by position: the
        style chain's, then the paragraph's own (a ``clear`` stop removes an inherited one); a left stop at
        position 0 is no stop."""
        layers = list(self._ppr_levels(p))[::-1]  # defaults first, direct last
        stops: dict[int, str] = {}
        for ppr in layers:
            tabs = ppr.find(w_tag("tabs"))
            for tab in tabs.iterchildren(w_tag("tab")) if tabs is not None else ():
                try:
                    pos = int(float(tab.get(w_tag("pos"), "0")))
                except ValueError:
                    continue
                align = {"start": "left", "end": "right"}.get(tab.get(W_VAL, "left"), tab.get(W_VAL, "left"))
                if align == "clear":
                    stops.pop(pos, None)
                else:
                    stops[pos] = align
        return sorted((pos, a) for pos, a in stops.items() if not (a == "left" and pos == 0))


# =========================================================================== odt
def _odf_attr(el, ns: str, name: str) -> str | None:
    return el.attributes.get((ns, name))


#: what a text document's body holds that is not its running text
_ODT_SKIP_BLOCKS = {(_TABLE, "table"), (_TEXT, "tracked-changes"), (_OFFICE, "annotation"), (_TEXT, "note"),
                    (_DRAW, "frame"), (_OFFICE, "forms"), (_TEXT, "variable-decls"), (_TEXT, "sequence-decls"),
                    (_TEXT, "user-field-decls"), (_TEXT, "dde-connection-decls")}
_ODT_SKIP_INLINE = {(_TEXT, "note"), (_OFFICE, "annotation"), (_DRAW, "frame"), (_DRAW, "a"),
                    (_TEXT, "ruby-text"), (_DRAW, "custom-shape")}
_ODT_PARAGRAPHS = {(_TEXT, "p"), (_TEXT, "h")}
_ODF_SPACE = re.compile(r"[ \t\r\n]+")


class Odt:
    """An OpenDocument text opened with odfpy."""

    kind = "odt"

    def __init__(self, path: Path):
        try:
            with zipfile.ZipFile(path) as z:  # odfpy prints a file it fails to parse: check the XML first
                for member in ("content.xml", "styles.xml"):
                    if member in z.namelist():
                        safe_xml(read_member(z, member))
        except (zipfile.BadZipFile, etree.XMLSyntaxError, OSError) as exc:
            raise Unreadable(f"not a readable odt: {exc}") from exc
        try:
            self.doc = odf_load(str(path))
        except Exception as exc:  # odfpy raises many types on a bad package (zip, key, sax, attribute)
            raise Unreadable(f"not a readable odt: {exc}") from exc
        bodies = self.doc.getElementsByType(odf_office.Text)
        if not bodies:
            raise Unreadable("no office:text body")
        self.body = bodies[0]
        self._styles = {}
        for container in (self.doc.styles, self.doc.automaticstyles):  # automatic styles win a name clash
            for s in container.childNodes:
                if s.nodeType == Node.ELEMENT_NODE and s.qname == (_STYLE, "style"):
                    self._styles[(_odf_attr(s, _STYLE, "family"), _odf_attr(s, _STYLE, "name"))] = s

    def paragraphs(self) -> list:
        out = []

        def walk(node):
            for child in node.childNodes:
                if child.nodeType != Node.ELEMENT_NODE or child.qname in _ODT_SKIP_BLOCKS:
                    continue
                if child.qname in _ODT_PARAGRAPHS:
                    out.append(child)
                else:
                    walk(child)
        walk(self.body)
        return out

    def segments(self, p) -> Iterator[tuple[str, list[str]]]:
        """The paragraph's text in pieces, each with its span styles (innermost first)."""
        def walk(node, spans):
            for child in node.childNodes:
                if child.nodeType == Node.TEXT_NODE:
                    yield _ODF_SPACE.sub(" ", child.data), spans
                    continue
                if child.nodeType != Node.ELEMENT_NODE or child.qname in _ODT_SKIP_INLINE:
                    continue
                if child.qname == (_TEXT, "s"):
                    yield " " * int(_odf_attr(child, _TEXT, "c") or 1), spans
                elif child.qname == (_TEXT, "tab"):
                    yield "\t", spans
                elif child.qname == (_TEXT, "line-break"):
                    yield "\n", spans
                elif child.qname == (_TEXT, "span"):
                    yield from walk(child, [_odf_attr(child, _TEXT, "style-name"), *spans])
                else:  # links, fields, bookmarks, metadata: their text is shown
                    yield from walk(child, spans)
        yield from walk(p, [])

    def text(self, p) -> str:
        return "".join(piece for piece, _ in self.segments(p))

    def _text_property(self, family: str, name: str | None, prop: tuple[str, str]) -> str | None:
        seen = set()
        while name and (family, name) not in seen:
            seen.add((family, name))
            style = self._styles.get((family, name))
            if style is None:
                return None
            for child in style.childNodes:
                if child.nodeType == Node.ELEMENT_NODE and child.qname == (_STYLE, "text-properties"):
                    value = child.attributes.get(prop)
                    if value is not None:
                        return value
            name = _odf_attr(style, _STYLE, "parent-style-name")
        return None

    def highlighted(self, p, spans: list[str]) -> bool:
        """Whether text with these span styles in paragraph ``p`` has a background colour."""
        prop = (_FO, "background-color")
        for name in spans:
            value = self._text_property("text", name, prop)
            if value is not None:
                return value.lower() != "transparent"
        value = self._text_property("paragraph", _odf_attr(p, _TEXT, "style-name"), prop)
        return value is not None and value.lower() != "transparent"


# =========================================================================== loading
def _sniff(path: Path) -> str | None:
    """``docx``, ``odt`` or None, from the archive's members."""
    try:
        with zipfile.ZipFile(path) as z:
            names = set(z.namelist())
            if "word/document.xml" in names:
                return "docx"
            if "content.xml" in names:
                mime = z.read("mimetype").decode("ascii", "replace").strip() if "mimetype" in names else ""
                if not mime or mime.startswith("application/vnd.oasis.opendocument.text"):
                    return "odt"
    except (zipfile.BadZipFile, OSError):
        return None
    return None


def open_document(value: Any, side: str, kinds: tuple[str, ...] = ("docx", "odt")) -> Docx | Odt | None:
    """The document at ``value``; None for a missing or unreadable result (explained: ``missing_result``,
    ``unreadable_result``).

    Raises:
        MetricError: the expected side is missing or unreadable.
    """
    path = as_existing_path(value)
    if path is None:
        why, kind = missing_file(value, f"{side} document"), MISSING_RESULT
    else:
        found = _sniff(path)
        if found not in kinds:
            why, kind = f"the {side} document {path} is not a {' or '.join(kinds)} document", UNREADABLE_RESULT
        else:
            try:
                return Docx(path) if found == "docx" else Odt(path)
            except Unreadable as exc:
                why, kind = f"the {side} document {path}: {exc}", UNREADABLE_RESULT
    if side == "expected":
        raise MetricError(why)
    logger.info("result document unreadable (scored 0): %s", why)
    explain(kind, why)
    return None


def open_pair(result: Any, expected: Any, kinds: tuple[str, ...] = ("docx", "odt")):
    """(result document or None, expected document); the expected one is opened first so that a task error
    shows even when the result is missing."""
    gold = open_document(expected, "expected", kinds)
    return open_document(result, "result", kinds), gold


def paragraph_texts(doc) -> list[str]:
    return [doc.text(p) for p in doc.paragraphs()]


def collapse(texts: list[str]) -> str:
    """The paragraphs joined by newlines with every run of whitespace made one space."""
    return re.sub(r"\s+", " ", "\n".join(texts)).strip()


def rule_field(expected: Any, key: str, metric: str) -> Any:
    if not isinstance(expected, dict) or key not in expected:
        raise MetricError(f"{metric} needs the rule {{{key!r}: ...}} as expected, got {expected!r}")
    return expected[key]


def table_grids(doc: Docx) -> list[list[list[str]]]:
    """Each body table as rows of cell texts (stripped; a merged cell repeats in every grid column it spans)."""
    return [[[cell.text.strip() for cell in row.cells] for row in table.rows] for table in doc.doc.tables]


# =========================================================================== option checks
def is_bool(v) -> str | None:
    return None if isinstance(v, bool) else f"must be true or false, got {v!r}"


def is_number(low: float, high: float, *, none_ok: bool = False, high_open: bool = False):
    def test(v) -> str | None:
        if v is None and none_ok:
            return None
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            return f"must be a number, got {v!r}"
        if v < low or v > high or (high_open and v == high):
            return f"must be in [{low}, {high}{')' if high_open else ']'}, got {v!r}"
        return None
    return test


def is_int(low: int, *, none_ok: bool = False):
    def test(v) -> str | None:
        if v is None and none_ok:
            return None
        if isinstance(v, bool) or not isinstance(v, int) or v < low:
            return f"must be a whole number >= {low}, got {v!r}"
        return None
    return test


def is_text(v) -> str | None:
    return None if isinstance(v, str) and v.strip() else f"must be a non-empty string, got {v!r}"


def options_check(**tests: Callable[[Any], str | None]) -> Callable[[dict], None]:
    """A load-time check of option values: each named option, when given, must pass its test."""
    def check(options: dict) -> None:
        for key, test in tests.items():
            if key in options:
                problem = test(options[key])
                if problem:
                    raise OptionError(problem, key)
    return check


def similarity(a: str, b: str) -> float:
    """0..1: the Indel ratio (twice the longest common subsequence over the total length)."""
    return fuzzy_ratio(a, b) / 100.0
