"""Builders of real fixture files for metric tests: xlsx with data, styles, a chart, a pivot table, sparklines."""
from __future__ import annotations

import zipfile

import openpyxl
import pytest
from openpyxl.chart import BarChart, LineChart, Reference
from openpyxl.pivot.cache import CacheDefinition, CacheField, CacheSource, SharedItems, WorksheetSource
from openpyxl.pivot.fields import Text
from openpyxl.pivot.table import DataField, FieldItem, Location, PivotField, RowColField, TableDefinition
from openpyxl.styles import Font, PatternFill

ROWS = [("Region", "Product", "Sales"), ("East", "A", 10), ("West", "A", 20), ("East", "B", 5), ("West", "B", 7.25)]


def add_pivot(wb, sheet_name="Pivot", row_field=0, agg="sum", name="PivotTable1"):
    """Attach a pivot table over Data!A1:C5 (Region/Product/Sales) to a new sheet; openpyxl writes the pivot parts."""
    pv = wb.create_sheet(sheet_name)
    items = {0: ["East", "West"], 1: ["A", "B"]}
    cache = CacheDefinition(
        refreshOnLoad=True, recordCount=4,
        cacheSource=CacheSource(type="worksheet", worksheetSource=WorksheetSource(ref="A1:C5", sheet="Data")),
        cacheFields=[
            CacheField(name="Region", sharedItems=SharedItems(_fields=[Text(v=v) for v in items[0]], count=2)),
            CacheField(name="Product", sharedItems=SharedItems(_fields=[Text(v=v) for v in items[1]], count=2)),
            CacheField(name="Sales", sharedItems=SharedItems(containsSemiMixedTypes=False, containsString=False,
                                                             containsNumber=True, minValue=5, maxValue=20)),
        ])
    fields = []
    for i in range(3):
        if i == row_field:
            fields.append(PivotField(axis="axisRow", showAll=False,
                                     items=[FieldItem(x=j) for j in range(2)] + [FieldItem(t="default")]))
        else:
            fields.append(PivotField(dataField=(i == 2), showAll=False))
    table = TableDefinition(
        name=name, cacheId=1, dataCaption="Values", updatedVersion=6, minRefreshableVersion=3, createdVersion=6,
        location=Location(ref="A3:B6", firstHeaderRow=1, firstDataRow=1, firstDataCol=1),
        pivotFields=fields, rowFields=[RowColField(x=row_field)],
        dataFields=[DataField(name=f"{agg.title()} of Sales", fld=2, subtotal=agg, baseField=0, baseItem=0)])
    table.cache = cache
    pv._pivots.append(table)
    return pv


def add_chart(ws, kind="bar", title="Sales by region"):
    """A chart over the Sales column with Region categories."""
    chart = BarChart() if kind == "bar" else LineChart()
    chart.title = title
    chart.add_data(Reference(ws, min_col=3, min_row=1, max_row=5), titles_from_data=True)
    chart.set_categories(Reference(ws, min_col=1, min_row=2, max_row=5))
    ws.add_chart(chart, "E2")


@pytest.fixture
def rows():
    """A fresh mutable copy of ROWS."""
    return [list(r) for r in ROWS]


@pytest.fixture
def make_xlsx(tmp_path):
    """make_xlsx(name, rows=ROWS, bold_header=True, fill=None, chart=None, pivot=None, extra_sheet=None) -> path."""
    def make(name, rows=ROWS, bold_header=True, fill=None, chart=None, pivot=None, extra_sheet=None, formula=False):
        wb = openpyxl.Workbook()
        ws = wb.active
        ws.title = "Data"
        for r in rows:
            ws.append(r)
        if bold_header:
            for c in ws[1]:
                c.font = Font(bold=True)
        if fill:
            ws["C2"].fill = PatternFill("solid", fgColor=fill)
        if formula:
            ws["C6"] = "=SUM(C2:C5)"
        if chart is not None:
            add_chart(ws, **chart)
        if pivot is not None:
            add_pivot(wb, **pivot)
        if extra_sheet:
            wb.create_sheet(extra_sheet).append(("x",))
        path = tmp_path / name
        wb.save(path)
        return path
    return make


SPARKLINE_EXT = (
    '<extLst><ext uri="{{05C60535-1F16-4fd2-B633-F4F36F0B64E0}}" '
    'xmlns:x14="http://schemas.microsoft.com/office/spreadsheetml/2009/9/main">'
    '<x14:sparklineGroups xmlns:xm="http://schemas.microsoft.com/office/excel/2006/main">'
    '<x14:sparklineGroup displayEmptyCellsAs="gap"><x14:colorSeries rgb="FF376092"/>'
    '<x14:sparklines>{lines}</x14:sparklines></x14:sparklineGroup></x14:sparklineGroups></ext></extLst>')


def add_sparklines(path, sheet_member: str, lines: dict[str, str]) -> None:
    """Write sparklines (cell -> data range) into a saved xlsx, as Excel and LibreOffice store them:
    an x14 extension at the end of the sheet's XML (openpyxl cannot write them)."""
    with zipfile.ZipFile(path) as z:
        members = {info: z.read(info.filename) for info in z.infolist()}
    body = "".join(f"<x14:sparkline><xm:f>{f}</xm:f><xm:sqref>{where}</xm:sqref></x14:sparkline>"
                   for where, f in lines.items())
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for info, data in members.items():
            if info.filename == sheet_member:
                data = data.replace(b"</worksheet>", SPARKLINE_EXT.format(lines=body).encode() + b"</worksheet>")
            z.writestr(info, data)
