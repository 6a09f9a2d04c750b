"""Reading pptx decks for the presentation metrics: files, colours and themes, text runs as stored in the XML."""
from __future__ import annotations

import colorsys
import logging
import os
import zipfile
from dataclasses import dataclass
from typing import Any, Iterator

from lxml import etree
from pptx import Presentation
from pptx.exc import PackageNotFoundError
from pptx.opc.constants import RELATIONSHIP_TYPE as RT

from desktop_env.evaluators.metrics.differences import missing_file
from desktop_env.evaluators.metrics.utils import MetricError, as_existing_path
from desktop_env.evaluators.reasons import MISSING_RESULT, UNREADABLE_RESULT, explain

logger = logging.getLogger(__name__)

_A = "{http://schemas.openxmlformats.org/drawingml/2006/main}"
_P = "{http://schemas.openxmlformats.org/presentationml/2006/main}"
_OOR = "{http://openoffice.org/2001/registry}"

#: What python-pptx raises on a file that is not a readable deck (not a zip, an xlsx, a broken part).
_DECK_ERRORS = (PackageNotFoundError, zipfile.BadZipFile, KeyError, ValueError, OSError, etree.XMLSyntaxError)


# --------------------------------------------------------------------------- reading files
def _result_deck(value: Any, metric: str):
    """The result presentation, or None (logged and explained) when it is missing or not a readable pptx."""
    path = as_existing_path(value)
    if path is None:
        logger.info("%s: no result presentation (%r), scored 0", metric, value)
        explain(MISSING_RESULT, missing_file(value, "result presentation"))
        return None
    try:
        return Presentation(str(path))
    except _DECK_ERRORS as exc:
        logger.info("%s: %s is not a readable .pptx (%s), scored 0", metric, path, exc)
        explain(UNREADABLE_RESULT, f"{path} is not a readable .pptx: {exc}")
        return None


def _gold_deck(value: Any, metric: str):
    """The gold (expected) presentation.

    Raises:
        MetricError: it is not a file or not a readable pptx (the task's fault, not the agent's).
    """
    path = as_existing_path(value)
    if path is None:
        raise MetricError(f"{metric}: the expected presentation {value!r} is not a file; give the gold .pptx "
                          "with a cloud_file or vm_file getter")
    try:
        return Presentation(str(path))
    except _DECK_ERRORS as exc:
        raise MetricError(f"{metric}: the expected file {path} is not a readable .pptx ({exc})") from exc


def _parse_xml(data: bytes) -> etree._Element:
    # No entity expansion and no network: the text comes from the guest.
    parser = etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=False)
    return etree.fromstring(data, parser)


def _result_xml(value: Any, metric: str) -> etree._Element | None:
    """The XML root of a result: a host file (``Path``) or text from the guest; None (logged and explained)
    when it is missing or unreadable."""
    what = "the result text"
    try:
        if isinstance(value, os.PathLike):
            path = as_existing_path(value)
            if path is None:
                logger.info("%s: result file %s is missing, scored 0", metric, value)
                explain(MISSING_RESULT, missing_file(value))
                return None
            what = str(path)
            data = path.read_bytes()
        elif isinstance(value, str):
            data = value.encode("utf-8")
        else:
            logger.info("%s: no result (%r), scored 0", metric, value)
            explain(MISSING_RESULT, missing_file(value, "result"))
            return None
        return _parse_xml(data)
    except (OSError, etree.XMLSyntaxError, ValueError) as exc:
        logger.info("%s: the result is not readable XML (%s), scored 0", metric, exc)
        explain(UNREADABLE_RESULT, f"{what} is not readable XML: {exc}")
        return None


def _local(elem: Any) -> str:
    """The local name of an element's tag ('' for comments and processing instructions)."""
    tag = elem.tag
    return etree.QName(tag).localname if isinstance(tag, str) else ""


def _children(elem: etree._Element) -> Iterator[etree._Element]:
    return (c for c in elem if isinstance(c.tag, str))


# --------------------------------------------------------------------------- rules and colours
def _rule(expected: Any, metric: str, example: str) -> dict:
    if not isinstance(expected, dict):
        raise MetricError(f"{metric}: expected a rule object like {example}, got {expected!r}")
    return expected


def _rgb_triplet(value: Any, key: str, metric: str) -> tuple[int, int, int]:
    if (not isinstance(value, (list, tuple)) or len(value) != 3
            or any(isinstance(v, bool) or not isinstance(v, int) or not 0 <= v <= 255 for v in value)):
        raise MetricError(f"{metric}: {key!r} must be three integers 0..255 like [0, 0, 255], got {value!r}")
    return tuple(value)


def _hex_rgb(text: str | None) -> tuple[int, int, int] | None:
    if not text or len(text) != 6:
        return None
    try:
        return int(text[0:2], 16), int(text[2:4], 16), int(text[4:6], 16)
    except ValueError:
        return None


def _color(parent: etree._Element | None) -> tuple | None:
    """The colour held by ``parent`` (a ``solidFill``, ``bgRef``, ``buClr``...) as a comparable tuple.

    ``("srgb", "FF0000", mods)``, ``("scheme", "accent1", mods)``, ``("sys", "000000", mods)``,
    ``("preset", "red", mods)``; ``mods`` are the colour's modifiers (lumMod...). None: no colour.
    """
    if parent is None:
        return None
    for c in _children(parent):
        kind = _local(c)
        mods = tuple((_local(m), m.get("val")) for m in _children(c))
        if kind == "srgbClr":
            return ("srgb", (c.get("val") or "").upper(), mods)
        if kind == "schemeClr":
            return ("scheme", c.get("val"), mods)
        if kind == "sysClr":
            return ("sys", (c.get("lastClr") or c.get("val") or "").upper(), mods)
        if kind == "prstClr":
            return ("preset", c.get("val"), mods)
        if kind in ("scrgbClr", "hslClr"):
            return (kind, tuple(sorted(c.attrib.items())), mods)
    return None


class _Theme:
    """The colour scheme of a slide master's theme, through the master's colour map (``bg1`` -> ``lt1``)."""

    def __init__(self, master):
        self.scheme: dict[str, str] = {}
        self.mapping: dict[str, str] = {}
        clr_map = master.element.find(f"{_P}clrMap")
        if clr_map is not None:
            self.mapping = dict(clr_map.attrib)
        try:
            theme = _parse_xml(master.part.part_related_by(RT.THEME).blob)
        except (KeyError, etree.XMLSyntaxError, ValueError) as exc:
            logger.debug("slide master without a readable theme: %s", exc)
            return
        scheme = theme.find(f"{_A}themeElements/{_A}clrScheme")
        for slot in (_children(scheme) if scheme is not None else ()):
            color = _color(slot)
            if color and color[0] in ("srgb", "sys"):
                self.scheme[_local(slot)] = color[1]

    def hex(self, color: tuple | None) -> str | None:
        """``RRGGBB`` of a colour tuple (scheme colours resolved, modifiers applied), or None."""
        if color is None:
            return None
        kind, value, mods = color
        if kind == "scheme":
            value = self.scheme.get(self.mapping.get(value, value))
        elif kind not in ("srgb", "sys"):
            return None
        rgb = _hex_rgb(value)
        return None if rgb is None else "%02X%02X%02X" % _modified(rgb, mods)


def _modified(rgb: tuple[int, int, int], mods: tuple) -> tuple[int, int, int]:
    """A colour with its DrawingML modifiers applied (tint, shade, lumMod, lumOff; others ignored)."""
    r, g, b = (c / 255 for c in rgb)
    for name, val in mods:
        try:
            v = int(val) / 100000  # DrawingML percentages are in thousandths of a percent
        except (TypeError, ValueError):
            continue
        if name == "tint":
            r, g, b = (c + (1 - c) * (1 - v) for c in (r, g, b))
        elif name == "shade":
            r, g, b = (c * v for c in (r, g, b))
        elif name in ("lumMod", "lumOff"):
            h, lum, sat = colorsys.rgb_to_hls(r, g, b)
            lum = min(1.0, max(0.0, lum * v if name == "lumMod" else lum + v))
            r, g, b = colorsys.hls_to_rgb(h, lum, sat)
    return tuple(round(min(1.0, max(0.0, c)) * 255) for c in (r, g, b))


def _master_of(slide):
    return slide.slide_layout.slide_master


def _background(slide, theme: _Theme) -> tuple:
    """What fills a slide's background: its own, else its layout's, else its master's.

    ``("solid", "RRGGBB")`` (or the raw colour tuple when a scheme colour cannot be resolved),
    ``("gradFill",)``, ``("blipFill",)``, ``("pattFill",)``, ``("none",)``.
    """
    for owner in (slide, slide.slide_layout, _master_of(slide)):
        bg = owner.element.find(f"{_P}cSld/{_P}bg")
        if bg is None:
            continue
        props = bg.find(f"{_P}bgPr")
        if props is not None:
            for fill in _children(props):
                kind = _local(fill)
                if kind == "solidFill":
                    color = _color(fill)
                    return ("solid", theme.hex(color) or color)
                if kind == "noFill":
                    return ("none",)
                if kind in ("gradFill", "blipFill", "pattFill", "grpFill"):
                    return (kind,)
        ref = bg.find(f"{_P}bgRef")
        if ref is not None:  # a theme background style, drawn in this colour
            color = _color(ref)
            return ("solid", theme.hex(color) or color)
    return ("none",)


# --------------------------------------------------------------------------- text, as stored in the XML
@dataclass(frozen=True)
class _Run:
    """A text run and the formatting compare_pptx_files looks at (None: inherited)."""

    text: str
    font: str | None
    size: str | None
    bold: bool
    italic: bool
    underline: str
    strike: str
    color: tuple | None


@dataclass(frozen=True)
class _Paragraph:
    """A paragraph: its text (line breaks as ``\\v``), alignment, outline level, bullet and runs."""

    text: str
    align: str
    level: int | None
    bullet: tuple
    runs: tuple[_Run, ...]


def _flag(value: str | None) -> bool:
    return value in ("1", "true")


def _run(r: etree._Element) -> _Run:
    rpr = r.find(f"{_A}rPr")
    attrs = rpr.attrib if rpr is not None else {}
    latin = rpr.find(f"{_A}latin") if rpr is not None else None
    return _Run(
        text="".join(t.text or "" for t in r.iter(f"{_A}t")),
        font=latin.get("typeface") if latin is not None else None,
        size=attrs.get("sz"),
        bold=_flag(attrs.get("b")),
        italic=_flag(attrs.get("i")),
        underline=attrs.get("u", "none"),
        strike=attrs.get("strike", "noStrike"),
        color=_color(rpr.find(f"{_A}solidFill")) if rpr is not None else None,
    )


def _bullet(ppr: etree._Element | None) -> tuple:
    """A paragraph's bullet as set on it: ``("char", "•")``, ``("number", "arabicPeriod")``,
    ``("none",)``, ``("picture",)``, or ``("inherited",)``."""
    for child in (_children(ppr) if ppr is not None else ()):
        kind = _local(child)
        if kind == "buNone":
            return ("none",)
        if kind == "buChar":
            return ("char", child.get("char"))
        if kind == "buAutoNum":
            return ("number", child.get("type"), child.get("startAt"))
        if kind == "buBlip":
            return ("picture",)
    return ("inherited",)


def _paragraph(p: etree._Element) -> _Paragraph:
    parts = []
    for child in _children(p):
        kind = _local(child)
        if kind in ("r", "fld"):
            parts.append("".join(t.text or "" for t in child.iter(f"{_A}t")))
        elif kind == "br":
            parts.append("\v")  # a line break inside the paragraph, as python-pptx shows it
    ppr = p.find(f"{_A}pPr")
    level = ppr.get("lvl") if ppr is not None else None
    return _Paragraph(
        text="".join(parts),
        align=(ppr.get("algn") if ppr is not None else None) or "l",  # no alignment is left alignment
        level=int(level) if level and level.isdigit() else None,
        bullet=_bullet(ppr),
        runs=tuple(_run(r) for r in p.findall(f"{_A}r")),
    )


def _paragraphs(tx_body: etree._Element | None) -> list[_Paragraph]:
    return [] if tx_body is None else [_paragraph(p) for p in tx_body.findall(f"{_A}p")]


def _shape_text(shape) -> str:
    if _kind(shape) != "shape":
        return ""
    return "\n".join(p.text for p in _paragraphs(shape.element.find(f"{_P}txBody")))

def _kind(shape) -> str:
    tag = _local(shape.element)
    if tag == "sp":
        return "shape"
    if tag == "pic":
        return "picture"
    if tag == "grpSp":
        return "group"
    if tag == "cxnSp":
        return "connector"
    if tag == "graphicFrame":
        return "table" if shape.has_table else "chart" if shape.has_chart else "graphic frame"
    return tag
