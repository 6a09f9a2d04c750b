"""Writing xlsx files so that regenerating leaves the committed ones alone.

An xlsx file carries its save time, so saving the same workbook twice gives other bytes:
``save_if_changed`` and ``save_gold`` leave a file alone when it already holds the same
cells. Gold workbooks are saved as a spreadsheet app saves them: openpyxl writes a formula
cell with an empty cached value, so a gold file made with it fails its own task's checks
twice (``check_cell`` finds the formula but ``sheet_data`` reads no value). LibreOffice
and Excel store both; ``save_gold`` does the same by filling in each formula cell's value
in the sheet XML.
"""
from __future__ import annotations

import io
import re
import zipfile
from pathlib import Path


def sheet_values(book) -> list:
    """Every sheet of the openpyxl workbook ``book`` as (title, rows of cell values)."""
    return [(ws.title, [list(r) for r in ws.iter_rows(values_only=True)]) for ws in book.worksheets]


def _load_values(path_or_file, data_only: bool = False) -> list:
    """``sheet_values`` of the workbook in ``path_or_file`` (cached values instead of formulas if ``data_only``)."""
    import openpyxl

    return sheet_values(openpyxl.load_workbook(path_or_file, data_only=data_only))


def _ref(data) -> str | None:
    ref = None if data is None else (data.numRef or data.strRef)
    return None if ref is None else ref.f


def _fingerprint(book) -> list:
    """What a task can check of the openpyxl workbook ``book``: per sheet its cells, frozen panes,
    autofilter range, charts (kind, direction, series references), conditional formats, validations and
    pivot tables."""
    return [(ws.title, [list(r) for r in ws.iter_rows(values_only=True)], ws.freeze_panes, ws.auto_filter.ref,
             [(ch.tagname, getattr(ch, "barDir", None), [(_ref(s.val), _ref(s.cat)) for s in ch.series])
              for ch in ws._charts],
             [(str(cf.sqref), [(r.type, r.operator, list(r.formula or []), r.dxfId) for r in cf.rules])
              for cf in ws.conditional_formatting],
             [(str(dv.sqref), dv.type, dv.formula1) for dv in ws.data_validations.dataValidation],
             [(p.location.ref, [f.x for f in p.rowFields], [(f.fld, f.subtotal) for f in p.dataFields])
              for p in ws._pivots])
            for ws in book.worksheets]


def save_if_changed(wb, path: Path) -> None:
    """Save ``wb`` unless ``path`` already holds the same cells and parts (:func:`_fingerprint`)."""
    import openpyxl

    buf = io.BytesIO()
    wb.save(buf)
    if path.exists() and _fingerprint(openpyxl.load_workbook(path)) == _fingerprint(openpyxl.load_workbook(buf)):
        return
    path.write_bytes(buf.getvalue())


def save_gold(wb, path: Path, values: dict[str, float]) -> None:
    """Save ``wb`` to ``path`` with ``values`` (coordinate -> number, first sheet) as the cached
    values of its formula cells; leave ``path`` alone when it already holds the same formulas and values.

    Raises:
        ValueError: a coordinate of ``values`` is not a formula cell of the first sheet.
    """
    buf = io.BytesIO()
    wb.save(buf)
    src = zipfile.ZipFile(io.BytesIO(buf.getvalue()))
    sheet = "xl/worksheets/sheet1.xml"
    xml = src.read(sheet).decode("utf-8")
    for coord, value in values.items():
        # an empty cached value: <v/> from openpyxl's own writer, <v></v> when it writes through lxml
        pattern = re.compile(rf'(<c r="{coord}"[^>]*><f>[^<]*</f>)(?:<v\s*/>|<v>\s*</v>)')
        xml, n = pattern.subn(lambda m: f"{m.group(1)}<v>{value!r}</v>", xml)
        if n != 1:
            raise ValueError(f"{coord} is not a formula cell of the first sheet")
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        for item in src.infolist():
            dst.writestr(item, xml.encode("utf-8") if item.filename == sheet else src.read(item.filename))
    data = out.getvalue()
    if path.exists() and all(_load_values(path, d) == _load_values(io.BytesIO(data), d) for d in (False, True)):
        return
    path.write_bytes(data)
