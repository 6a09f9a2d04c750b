"""What ``compare_table`` reads from a sheet besides its cells: charts, pivot tables, cell styles (as
shown, conditional formats included), sparklines, rows and columns, and the autofilter.

Each ``load_*`` takes an open book (``table.Book``: formulas and styles in ``wb``, cached values in
``values``) and a sheet name, and returns plain data that two sheets can be compared by.
"""
from __future__ import annotations

import logging
import zipfile
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Any, Callable
from xml.etree import ElementTree

from openpyxl.cell.cell import MergedCell
from openpyxl.utils.cell import column_index_from_string, get_column_letter
from openpyxl.worksheet.dimensions import ColumnDimension, RowDimension

from desktop_env.evaluators.metrics.conditional import conditional_overlay
from desktop_env.evaluators.metrics.utils import MetricError
from desktop_env.evaluators.reasons import UNREADABLE_RESULT, explain

if TYPE_CHECKING:
    from desktop_env.evaluators.metrics.table import Book

logger = logging.getLogger(__name__)


# --------------------------------------------------------------------------- charts
def _title_text(title) -> str | None:
    try:
        return "".join(r.t for p in title.tx.rich.p for r in (p.r or []))
    except AttributeError:
        return None


def _axis_title(chart, axis: str) -> str | None:
    ax = getattr(chart, axis, None)
    return _title_text(ax.title) if ax is not None and ax.title is not None else None


def _anchor(chart):
    marker = getattr(chart.anchor, "_from", None)
    return (marker.col, marker.row) if marker is not None else str(chart.anchor)


#: chart property -> its reader; the one list of chart_props names
CHART_READERS: dict[str, Callable[[Any], Any]] = {
    "type": lambda ch: ch.tagname,
    "title": lambda ch: _title_text(ch.title) if ch.title is not None else None,
    "legend": lambda ch: ch.legend.position if ch.legend is not None else None,
    "xtitle": lambda ch: _axis_title(ch, "x_axis"),
    "ytitle": lambda ch: _axis_title(ch, "y_axis"),
    "ztitle": lambda ch: _axis_title(ch, "z_axis"),
    "direction": lambda ch: getattr(ch, "barDir", None),
    "anchor": _anchor,
    "width": lambda ch: ch.width,
    "height": lambda ch: ch.height,
    "n_series": lambda ch: len(ch.series),
}


def _ref_of(data) -> str:
    if data is None:
        return ""
    for attr in ("numRef", "strRef"):
        ref = getattr(data, attr, None)
        if ref is not None and getattr(ref, "f", None):
            return ref.f
    return ""


def load_charts(book: Book, sheet: str, chart_props=()) -> dict[str, dict]:
    """Charts of a sheet keyed by their series references, with the asked properties (:data:`CHART_READERS`).

    Raises:
        MetricError: an unknown property.
    """
    unknown = [p for p in chart_props if p not in CHART_READERS]
    if unknown:
        raise MetricError(f"unknown chart property {unknown[0]!r}; expected one of {list(CHART_READERS)}")
    out = {}
    for ch in book.wb[sheet]._charts:
        key = ";".join(f"{_ref_of(s.val)},{_ref_of(s.cat)}" for s in ch.series)
        out[key] = {prop: CHART_READERS[prop](ch) for prop in chart_props}
    return out


# --------------------------------------------------------------------------- pivot tables
def _pivot_selection(pvt, ordered: bool) -> list:
    lists = [[i.x for i in (pf.items or []) if i.x is not None and not i.h] for pf in pvt.pivotFields]
    return lists if ordered else [sorted(x) for x in lists]


#: pivot property -> reader(pivot, field name of an index, the asked properties); the one list of pivot_props
PIVOT_READERS: dict[str, Callable[[Any, Callable, set], Any] | None] = {
    "name": lambda p, fname, props: p.name,
    "location": lambda p, fname, props: p.location.ref,
    "show_total": lambda p, fname, props: (bool(p.rowGrandTotals), bool(p.colGrandTotals)),
    "show_empty_row": lambda p, fname, props: bool(p.showEmptyRow),
    "show_empty_col": lambda p, fname, props: bool(p.showEmptyCol),
    "show_headers": lambda p, fname, props: bool(p.showHeaders),
    "row_fields": lambda p, fname, props: [fname(f.x) for f in p.rowFields],
    # -2 is the "Values" pseudo-field
    "col_fields": lambda p, fname, props: [fname(f.x) for f in p.colFields if f.x >= 0],
    "filter": lambda p, fname, props: sorted(str(fname(f.fld)) for f in p.pageFields),
    "data_fields": lambda p, fname, props: [(fname(f.fld), f.subtotal, f.name if "data_fields_name" in props else None)
                                            for f in p.dataFields],
    "selection": lambda p, fname, props: _pivot_selection(p, "ordered" in props),
    "data_fields_name": None,  # modifies data_fields
    "ordered": None,           # modifies selection
}


def load_pivots(book: Book, sheet: str, pivot_props=()) -> dict[str, dict]:
    """Pivot tables of a sheet keyed by their source (sheet and range), with the asked properties.

    Properties (:data:`PIVOT_READERS`): ``name``, ``location``, ``show_total`` (grand totals on rows
    and cols), ``show_empty_row``, ``show_empty_col``, ``show_headers``, ``row_fields``, ``col_fields``,
    ``filter`` (page fields), ``data_fields`` (field and aggregation; with ``data_fields_name`` also the
    caption), ``selection`` (visible items per field; in file order with ``ordered``).

    Raises:
        MetricError: an unknown property.
    """
    unknown = [p for p in pivot_props if p not in PIVOT_READERS]
    if unknown:
        raise MetricError(f"unknown pivot property {unknown[0]!r}; expected one of {list(PIVOT_READERS)}")
    props = set(pivot_props)
    out = {}
    for pvt in book.wb[sheet]._pivots:
        src = pvt.cache.cacheSource.worksheetSource
        key = f"{src.sheet}!{src.ref}" if src is not None else str(pvt.cacheId)
        names = [f.name for f in pvt.cache.cacheFields]

        def fname(i, names=names):
            return names[i] if 0 <= i < len(names) else i
        out[key] = {prop: PIVOT_READERS[prop](pvt, fname, props) for prop in pivot_props if PIVOT_READERS[prop]}
    return out


# --------------------------------------------------------------------------- cell styles
def _font(prop: str):
    return lambda cell: None if cell.value is None else getattr(cell.font, prop)


def _fill_color(which: str):
    def read(cell):
        if not cell.fill.fill_type:
            return None
        return getattr(getattr(cell.fill, which), "rgb", None)
    return read


#: style property -> reader(cell); the one list of style property names (style rules, check_cell props)
STYLE_READERS: dict[str, Callable[[Any], Any]] = {
    "number_format": lambda cell: None if cell.value is None else cell.number_format,
    "font_name": _font("name"),
    "font_family": _font("family"),
    "font_size": _font("size"),
    "font_bold": lambda cell: None if cell.value is None else bool(cell.font.bold),
    "font_italic": lambda cell: None if cell.value is None else bool(cell.font.italic),
    "font_underline": _font("underline"),
    "font_color": lambda cell: None if cell.value is None or cell.font.color is None
    else getattr(cell.font.color, "rgb", None),
    "fill_type": lambda cell: cell.fill.fill_type,
    "bgcolor": _fill_color("bgColor"),
    "fgcolor": _fill_color("fgColor"),
    "alignment": lambda cell: None if cell.value is None else cell.alignment.horizontal,
    "hyperlink": lambda cell: cell.hyperlink.target if getattr(cell, "hyperlink", None) is not None else None,
    # a cell covered by a merge (not its top-left cell)
    "merge": lambda cell: isinstance(cell, MergedCell),
}


def read_style(prop: str, cell) -> Any:
    """One style property of a cell (None for an empty cell, except fills, hyperlinks and merges).

    Raises:
        MetricError: an unknown property.
    """
    if prop not in STYLE_READERS:
        raise MetricError(f"unknown style property {prop!r}; expected one of {list(STYLE_READERS)}")
    return STYLE_READERS[prop](cell)


def shown_style(prop: str, cell, conditional: dict[str, Any] | None) -> Any:
    """A style property as the cell shows it: set by an applying conditional rule (``conditional``, from
    :func:`conditional_overlay`), else the cell's own. Font properties of an empty cell stay None."""
    if conditional and prop in conditional:
        return None if cell.value is None and prop.startswith("font_") else conditional[prop]
    return read_style(prop, cell)


def load_styles(book: Book, sheet: str, props=()) -> dict[str, list]:
    """coordinate -> [style values as shown] for every cell of the sheet that has a value, a fill or a
    conditional format that applies to it.

    Raises:
        UnsupportedConditionalFormat: a conditional rule of the sheet that cannot be evaluated.
    """
    overlay = conditional_overlay(book.wb[sheet], book.values[sheet])
    out = {}
    for row in book.wb[sheet].iter_rows():
        for c in row:
            conditional = overlay.get(c.coordinate)
            if c.value is None and not c.fill.fill_type and not conditional:
                continue
            out[c.coordinate] = [shown_style(p, c, conditional) for p in props]
    return out


# --------------------------------------------------------------------------- sparklines
# openpyxl drops the x14 extension that holds sparklines, so they are read from the sheet's XML.
_NS = {
    "main": "http://schemas.openxmlformats.org/spreadsheetml/2006/main",
    "rel": "http://schemas.openxmlformats.org/officeDocument/2006/relationships",
    "pkg": "http://schemas.openxmlformats.org/package/2006/relationships",
    "x14": "http://schemas.microsoft.com/office/spreadsheetml/2009/9/main",
    "xm": "http://schemas.microsoft.com/office/excel/2006/main",
}


def _sheet_xml_path(z: zipfile.ZipFile, sheet: str) -> str | None:
    """The zip member holding ``sheet``, through workbook.xml and its relationships."""
    workbook = ElementTree.fromstring(z.read("xl/workbook.xml"))
    rel_id = next((s.get(f"{{{_NS['rel']}}}id") for s in workbook.iterfind("main:sheets/main:sheet", _NS)
                   if s.get("name") == sheet), None)
    rels = ElementTree.fromstring(z.read("xl/_rels/workbook.xml.rels"))
    target = next((r.get("Target") for r in rels.iterfind("pkg:Relationship", _NS) if r.get("Id") == rel_id), None)
    if target is None:
        return None
    return target.lstrip("/") if target.startswith("/") else str(PurePosixPath("xl") / target)


def load_sparklines(book: Book, sheet: str) -> dict[str, str]:
    """Sparklines of a sheet: the cell(s) each is drawn in (``F3``) -> its data range (``Sheet1!C3:E3``)."""
    try:
        with zipfile.ZipFile(book.path) as z:
            member = _sheet_xml_path(z, sheet)
            root = ElementTree.fromstring(z.read(member)) if member else None
    except (zipfile.BadZipFile, KeyError, ElementTree.ParseError) as exc:
        # read as no sparklines; the reason, should that decide the rule, is that the XML is unreadable
        logger.info("cannot read the sheet XML of %s in %s: %s", sheet, book.path.name, exc)
        explain(UNREADABLE_RESULT, f"the XML of sheet {sheet!r} in {book.path.name} cannot be read for its "
                                   f"sparklines: {exc}")
        return {}
    out = {}
    for line in (root.iter(f"{{{_NS['x14']}}}sparkline") if root is not None else []):
        where, data = line.findtext("xm:sqref", "", _NS), line.findtext("xm:f", "", _NS)
        out[where.strip()] = data.strip()
    return out


# --------------------------------------------------------------------------- data validation
#: the data validation attributes dv_props may test (``ranges``/``cells`` are aliases of ``sqref``)
DV_ATTRIBUTES = ("ranges", "sqref", "cells", "type", "formula1", "formula2", "operator", "allowBlank",
                 "showDropDown", "showInputMessage", "showErrorMessage", "error", "errorTitle", "errorStyle",
                 "prompt", "promptTitle", "imeMode")


# --------------------------------------------------------------------------- rows and columns
ROW_PROPS = ("hidden", "height", "collapsed", "outline_level", "outlineLevel", "customHeight")
COL_PROPS = ("hidden", "width", "collapsed", "outline_level", "outlineLevel", "customWidth", "bestFit",
             "auto_size", "min", "max")


def dimension_defaults(obj: str, props=()) -> dict[str, Any]:
    """The asked properties of a row (``obj`` "row") or a column ("column") no file mentions."""
    fresh = RowDimension(None, index=1) if obj == "row" else ColumnDimension(None, index="A")
    return {p: getattr(fresh, p) for p in props}


def load_rows_or_cols(book: Book, sheet: str, obj: str, props=()) -> dict[Any, dict]:
    """Row numbers (``obj`` "row") or column letters ("column") -> the asked properties.

    Column groups (``<col min=2 max=5>``) are spread to each column, and rows or columns whose
    properties are all at their defaults (:func:`dimension_defaults`) are left out, so two books that
    show the same rows and columns compare equal however their files group or list them.
    """
    ws = book.wb[sheet]
    default = dimension_defaults(obj, props)
    out = {}
    for key, dim in getattr(ws, f"{obj}_dimensions").items():
        info = {p: getattr(dim, p) for p in props}
        if info == default:
            continue
        if obj == "row":
            out[key] = info
        else:
            first = dim.min or column_index_from_string(key)
            for index in range(first, max(dim.max or first, first) + 1):
                out[get_column_letter(index)] = info
    return out


# --------------------------------------------------------------------------- autofilter
def load_filters(book: Book, sheet: str) -> dict[str, Any]:
    """The sheet's autofilter: its range, each filtered column's criteria, and its sort state."""
    auto = book.wb[sheet].auto_filter
    columns = []
    for col in auto.filterColumn:
        info: dict[str, Any] = {"col_id": col.colId, "hidden_button": col.hiddenButton,
                                "show_button": col.showButton}
        if col.filters is not None:
            info["filters_blank"] = col.filters.blank
            info["filters"] = set(col.filters.filter)
        if col.customFilters is not None:
            info["custom_filters_and"] = col.customFilters._and
            info["custom_filters"] = {(f.operator, f.val) for f in col.customFilters.customFilter}
        columns.append(info)
    out: dict[str, Any] = {"ref": auto.ref, "filter_column": sorted(columns, key=lambda d: d["col_id"])}
    sort = auto.sortState
    if sort is not None:
        out["sort_state"] = {
            "sort": sort.columnSort, "case": sort.caseSensitive, "method": sort.sortMethod, "ref": sort.ref,
            "condition": [{"descending": c.descending, "key": c.sortBy, "ref": c.ref, "custom_list": c.customList,
                           "dxf_id": c.dxfId, "icon": c.iconSet, "iconid": c.iconId} for c in sort.sortCondition]}
    return out
