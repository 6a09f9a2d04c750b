"""LibreOffice Calc task pairs (``examples/calc``): on the ``data`` image, add a SUM row to a
workbook open in Calc (``total_pairs``); on the ``base`` image from the ``calc`` warm state, the GUI
suite's pairs (``gui_pairs``): sort, formulas across sheets, a chart, frozen header and AutoFilter,
a conditional format, a validation list, text to columns, a pivot table.
All are scored by ``compare_table`` against a gold workbook.

Regenerate with ``python3 -m evaluation_examples.generators calc`` from the repository
root (see the package docstring).
"""
from __future__ import annotations

import random
import re
from pathlib import Path

from .common import open_in_app, write_pairs
from .workbooks import save_gold, save_if_changed


def monthly_workbooks(folder: Path) -> None:
    """monthly_revenue.xlsx (2024's revenue per month) and its gold with the Total row, in ``folder``."""
    import openpyxl

    rng = random.Random(99)
    rows = [(f"2024-{m:02d}", round(rng.uniform(18000, 42000), 2)) for m in range(1, 13)]
    for gold in (False, True):
        wb = openpyxl.Workbook()
        ws = wb.active
        ws.title = "Revenue"
        ws.append(["Month", "Revenue"])
        for r in rows:
            ws.append(list(r))
        if gold:  # the formula the task asks for, with the value Calc computes for it
            ws.append(["Total", f"=SUM(B2:B{len(rows) + 1})"])
            save_gold(wb, folder / "monthly_revenue_gold.xlsx",
                      {f"B{len(rows) + 2}": round(sum(r[1] for r in rows), 2)})
        else:
            save_if_changed(wb, folder / "monthly_revenue.xlsx")


CALC_TITLE = "monthly_revenue.xlsx"

CALC_CONFIG = open_in_app(
    "mkdir -p /home/user/reports && rm -f /home/user/reports/monthly_revenue.xlsx "
    "'/home/user/reports/.~lock.monthly_revenue.xlsx#'",
    {"/home/user/reports/monthly_revenue.xlsx": "{folder}/monthly_revenue.xlsx"},
    ["libreoffice", "--calc", "/home/user/reports/monthly_revenue.xlsx"], CALC_TITLE, minutes=7, maximize=False,
    quiet_process="soffice.bin")  # Calc drops keys sent while it is still drawing a freshly opened sheet


def pairs() -> list[dict]:
    """The task pairs of this module (``common`` describes their keys)."""
    return total_pairs() + gui_pairs()


def total_pairs() -> list[dict]:
    """The first Calc pair, on the data image: a SUM row."""
    return [
        {
            "name": "calc_monthly_total",
            "id_seed": "data_batch2",
            "app": "calc",
            "category": "data_analysis_and_visualization",
            "interface": "gui",
            "action_number": 4,
            "related_apps": ["calc"],
            "source": ["https://help.libreoffice.org/latest/en-US/text/scalc/01/func_sum.html",
                       "https://help.libreoffice.org/latest/en-US/text/shared/01/01070001.html"],
            "abstract": "The workbook monthly_revenue.xlsx open in LibreOffice Calc lists 2024's revenue per month. "
                        "Add a total row right below the last month: the label Total in column A and, in column B, "
                        "a formula that sums the twelve months. Save it, keeping the xlsx format.",
            "verbose": "Add a SUM row in LibreOffice Calc:\n"
                       "1. Click into the Calc window showing monthly_revenue.xlsx (months in A2:A13, revenue in "
                       "B2:B13).\n"
                       "2. Click cell A14, right below December (or type A14 in the Name Box and press Enter).\n"
                       "3. Type Total, press Tab, type =SUM(B2:B13) and press Enter.\n"
                       "4. Press Ctrl+S and keep the current (xlsx) format if asked.",
            "gen": monthly_workbooks,
            "config": CALC_CONFIG,
            "evaluator": {
                "func": "compare_table",
                "result": {"type": "vm_file", "path": "/home/user/reports/monthly_revenue.xlsx",
                           "dest": "monthly_revenue.xlsx"},
                "expected": {"type": "local_file", "path": "{folder}/monthly_revenue_gold.xlsx"},
                "options": {"rules": [
                    {"type": "sheet_data", "sheet_idx0": "RI0", "sheet_idx1": "EI0", "precision": 2},
                    {"type": "check_cell", "sheet_idx": "RI0", "coordinate": "B14", "props": {"formula": {
                        "method": "re", "ref": r"(?i)^=\s*SUM\(\s*\$?B\$?2\s*:\s*\$?B\$?13\s*\)\s*$"}}}]},
            },
            "solution": [
                {"gui": "wait", "for": {"window": "monthly_revenue\\.xlsx"}},
                # Click A1, wait until Calc is idle (it has handled the click), then Ctrl+Home, Ctrl+Down (the
                # last month, A13) and Down. Under emulation Calc once handled a click after the keys sent
                # behind it, and keys after the text typed behind them (Total landed over 2024-10); typing
                # now waits until Calc has handled the keys before it. A1, not A14: the server reads a
                # sheet's cells one by one, and under emulation a walk down to row 14 takes minutes.
                {"gui": "click", "target": {"role": "table-cell", "name": "A1"}},
                {"gui": "wait", "for": {"idle": True}},
                {"gui": "key", "keys": ["ctrl+home", "ctrl+down", "down"]},
                {"gui": "type", "text": "Total\t=SUM(B2:B13)\n"},
                {"gui": "key", "keys": "ctrl+s"},
                {"gui": "wait", "for": {"file": "/home/user/reports/monthly_revenue.xlsx", "contains": "SUM("}},
            ],
        },
    ]


# --------------------------------------------------------------------------- the GUI suite's Calc pairs
REPORTS = "/home/user/reports"
_REPS = ["Ana", "Bram", "Chen", "Dita", "Emeka", "Farah", "Goran", "Hana", "Ivo", "Jia", "Kofi", "Lena",
         "Mateo", "Nia", "Omar", "Pia"]
_MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]


def _book(sheets: list[tuple[str, list[list]]]):
    """A new openpyxl workbook holding ``sheets`` (title, rows) in order; the first is active."""
    import openpyxl

    wb = openpyxl.Workbook()
    wb.remove(wb.active)
    for title, rows in sheets:
        ws = wb.create_sheet(title)
        for row in rows:
            ws.append(row)
    return wb


def team_sales_rows() -> list[list]:
    """Sixteen reps' region, units and revenue (seeded, no two revenues equal), header first."""
    rng = random.Random(2611271)
    revenues = rng.sample(range(1_800_000, 9_600_000), len(_REPS))
    rows = [[rep, rng.choice(["North", "South", "East", "West"]), rng.randint(40, 400), rev / 100]
            for rep, rev in zip(_REPS, revenues)]
    return [["Rep", "Region", "Units", "Revenue"]] + rows


def team_sales_workbooks(folder: Path) -> None:
    """team_sales.xlsx (reps in alphabetical order) and its gold, sorted by revenue, largest first."""
    header, *rows = team_sales_rows()
    save_if_changed(_book([("Sales", [header] + rows)]), folder / "team_sales.xlsx")
    ranked = sorted(rows, key=lambda r: r[3], reverse=True)
    save_if_changed(_book([("Sales", [header] + ranked)]), folder / "team_sales_gold.xlsx")


def region_months(seed: int) -> list[list]:
    """A region's 2024 revenue per month (seeded), header first."""
    rng = random.Random(seed)
    return [["Month", "Revenue"]] + [[m, round(rng.uniform(21000, 48000), 2)] for m in _MONTHS]


def region_summary_workbooks(folder: Path) -> None:
    """region_revenue.xlsx (a Summary sheet to fill, then North and South by month) and its gold,
    whose Summary sums the other two sheets with formulas."""
    north, south = region_months(301), region_months(302)
    for gold in (False, True):
        summary = [["Region", "Revenue 2024"], ["North"], ["South"], ["Total"]]
        if gold:
            summary[1].append("=SUM(North!B2:B13)")
            summary[2].append("=SUM(South!B2:B13)")
            summary[3].append("=B2+B3")
        wb = _book([("Summary", summary), ("North", north), ("South", south)])
        if gold:
            n, s = (round(sum(r[1] for r in rows[1:]), 2) for rows in (north, south))
            save_gold(wb, folder / "region_revenue_gold.xlsx", {"B2": n, "B3": s, "B4": round(n + s, 2)})
        else:
            save_if_changed(wb, folder / "region_revenue.xlsx")


def revenue_chart_workbooks(folder: Path) -> None:
    """monthly_sales.xlsx (month, revenue) and its gold with a column chart of the revenue by month,
    its series as LibreOffice writes them (no quotes around the sheet name)."""
    from openpyxl.chart import BarChart, Reference

    rows = region_months(303)
    save_if_changed(_book([("Revenue", rows)]), folder / "monthly_sales.xlsx")
    wb = _book([("Revenue", rows)])
    ws = wb.active
    chart = BarChart()
    chart.type = "col"
    chart.add_data(Reference(ws, min_col=2, min_row=1, max_row=13), titles_from_data=True)
    chart.set_categories(Reference(ws, min_col=1, min_row=2, max_row=13))
    series = chart.series[0]
    series.val.numRef.f = "Revenue!$B$2:$B$13"
    (series.cat.strRef or series.cat.numRef).f = "Revenue!$A$2:$A$13"
    ws.add_chart(chart, "D2")
    save_if_changed(wb, folder / "monthly_sales_gold.xlsx")


def orders_rows() -> list[list]:
    """Forty orders (seeded), header first."""
    rng = random.Random(2611272)
    customers = ["Acme", "Birch & Co", "Cobalt", "Dune Ltd", "Elm Foods", "Fjord", "Granite", "Helix"]
    return [["Order", "Customer", "Region", "Amount"]] + [
        [f"SO-{1001 + i}", rng.choice(customers), rng.choice(["North", "South", "East", "West"]),
         round(rng.uniform(120, 9800), 2)] for i in range(40)]


def orders_workbooks(folder: Path) -> None:
    """orders.xlsx and its gold: the header row frozen and an AutoFilter over the table."""
    save_if_changed(_book([("Orders", orders_rows())]), folder / "orders.xlsx")
    wb = _book([("Orders", orders_rows())])
    wb.active.freeze_panes = "A2"
    wb.active.auto_filter.ref = "A1:D41"
    save_if_changed(wb, folder / "orders_gold.xlsx")


def highlight_workbooks(folder: Path) -> None:
    """team_sales.xlsx and its gold, in which a conditional format paints revenue over 60,000 with
    Calc's Good style (light green, as LibreOffice writes it)."""
    from openpyxl.formatting.rule import CellIsRule
    from openpyxl.styles import Font, PatternFill

    save_if_changed(_book([("Sales", team_sales_rows())]), folder / "team_sales.xlsx")
    wb = _book([("Sales", team_sales_rows())])
    wb.active.conditional_formatting.add("D2:D17", CellIsRule(
        operator="greaterThan", formula=[str(HIGHLIGHT_OVER)], fill=PatternFill(bgColor="FFCCFFCC"),
        font=Font(color="FF006600")))
    save_if_changed(wb, folder / "team_sales_gold.xlsx")


HIGHLIGHT_OVER = 60000
REGIONS = ["North", "South", "East", "West"]


def region_list_workbooks(folder: Path) -> None:
    """orders.xlsx (no validation) and its gold: C2:C41 accept only the four region names (a list)."""
    from openpyxl.worksheet.datavalidation import DataValidation

    save_if_changed(_book([("Orders", orders_rows())]), folder / "orders.xlsx")
    wb = _book([("Orders", orders_rows())])
    dv = DataValidation(type="list", formula1='"' + ",".join(REGIONS) + '"', allow_blank=True)
    dv.add("C2:C41")
    wb.active.add_data_validation(dv)
    save_if_changed(wb, folder / "orders_gold.xlsx")


def export_rows() -> list[list]:
    """Twenty product rows (seeded) of a semicolon-separated export, header first."""
    rng = random.Random(2611273)
    products = ["Desk lamp", "Monitor arm", "Cable tray", "Footrest", "Webcam cover", "Laptop stand",
                "Keyboard", "Headset hook", "Whiteboard", "Chair mat"]
    return [["sku", "product", "units", "unit_price"]] + [
        [f"SKU-{2001 + i}", rng.choice(products), rng.randint(1, 60), rng.randint(300, 9900) / 100] for i in range(20)]


def export_workbooks(folder: Path) -> None:
    """export.xlsx with each record pasted into one cell of column A (fields joined by ``;``) and its
    gold, with the fields in columns A:D (numbers as numbers)."""
    rows = export_rows()
    joined = [[";".join(f"{v:.2f}" if isinstance(v, float) else str(v) for v in row)] for row in rows]
    save_if_changed(_book([("Export", joined)]), folder / "export.xlsx")
    save_if_changed(_book([("Export", rows)]), folder / "export_gold.xlsx")


PIVOT_SHEET = "Pivot Table_Sales_1"


def pivot_workbooks(folder: Path) -> None:
    """team_sales.xlsx and its gold: a second sheet holding a pivot table of team_sales' A1:D17 with
    Region as its row field and the sum of Revenue as its data field (as Calc lays one out)."""
    from openpyxl.pivot.cache import CacheDefinition, CacheField, CacheSource, SharedItems, WorksheetSource
    from openpyxl.pivot.table import DataField, FieldItem, Location, PivotField, RowColField, TableDefinition

    rows = team_sales_rows()
    save_if_changed(_book([("Sales", rows)]), folder / "team_sales.xlsx")
    header = rows[0]
    wb = _book([("Sales", rows), (PIVOT_SHEET, [])])
    fields = [PivotField(showAll=False) for _ in header]
    fields[1] = PivotField(axis="axisRow", showAll=False, items=[FieldItem(t="default")])
    fields[3] = PivotField(dataField=True, showAll=False)
    pivot = TableDefinition(name="DataPilot1", cacheId=1, dataCaption="Data",
                            location=Location(ref="A1:B6", firstHeaderRow=1, firstDataRow=1, firstDataCol=1),
                            pivotFields=fields, rowFields=[RowColField(x=1)],
                            dataFields=[DataField(name="Sum - Revenue", fld=3, subtotal="sum")])
    pivot.cache = CacheDefinition(
        cacheSource=CacheSource(type="worksheet", worksheetSource=WorksheetSource(ref="A1:D17", sheet="Sales")),
        cacheFields=[CacheField(name=h, sharedItems=SharedItems()) for h in header])
    wb[PIVOT_SHEET]._pivots.append(pivot)
    save_if_changed(wb, folder / "team_sales_gold.xlsx")


def open_in_calc(name: str) -> list[dict]:
    """Setup: ``name`` fresh in ~/reports, opened in the Calc of the ``calc`` warm state, maximized, idle."""
    return open_in_libreoffice(REPORTS, name, "calc")


def open_in_libreoffice(folder: str, name: str, app: str) -> list[dict]:
    """Setup: the task's file ``name`` fresh in the guest's ``folder`` (no lock file left), opened in
    LibreOffice's ``app`` (``calc``, ``writer``, ``impress``), maximized and idle."""
    path = f"{folder}/{name}"
    return open_in_app(f"mkdir -p {folder} && rm -f {path} '{folder}/.~lock.{name}#'", {path: f"{{folder}}/{name}"},
                       ["libreoffice", f"--{app}", path], name, quiet_process="soffice.bin")


def gui_result(name: str) -> dict:
    """The evaluator's result side: the saved workbook ``name`` from ~/reports."""
    return {"type": "vm_file", "path": f"{REPORTS}/{name}", "dest": name}


def gui_expected(name: str) -> dict:
    """The evaluator's expected side: the gold workbook beside the task."""
    return {"type": "local_file", "path": f"{{folder}}/{name}"}


def first_cell(name: str, cell: str) -> list[dict]:
    """Solution head: wait for the window, go to ``cell`` through the Name Box (Ctrl+Shift+F5 focuses
    it) and wait until Calc has moved there. Not a click on the cell: LibreOffice 7.4 reports a
    sheet's cells about one row higher than it draws them, so a click aimed at D1 lands on the
    column header and selects the whole column."""
    return [
        {"gui": "wait", "for": {"window": re.escape(name)}},
        {"gui": "key", "keys": "ctrl+shift+f5", "note": "focus the Name Box"},
        {"gui": "type", "text": f"{cell}\n"},
        {"gui": "wait", "for": {"idle": True}},
    ]


def menu(*path: str, role: str = "menu-item") -> list[dict]:
    """Clicks through Calc's menu bar: the menu, any submenus, then the item (a ``check-menu-item``
    for a toggle such as AutoFilter)."""
    *menus, item = path
    return ([{"gui": "click", "target": {"role": "menu", "name": m}} for m in menus]
            + [{"gui": "click", "target": {"role": role, "name": item}}])


def confirm(dialog: dict) -> list[dict]:
    """Click ``dialog``'s OK button and wait until the dialog is gone."""
    return [{"gui": "click", "target": {"role": "push-button", "name": "OK", "within": dialog}},
            {"gui": "wait", "for": {"gone": dialog}}]


def save_in_libreoffice(path: str, **condition: str) -> list[dict]:
    """Solution tail for a file open in LibreOffice (Calc, Writer, Impress): Ctrl+S once the app is idle
    (the image turns off the keep-format question), then wait until the saved file at ``path`` meets
    ``condition``: ``contains=`` text that the save writes and the start file lacks (openpyxl's
    workbook.xml already says ``autoFilterDateGrouping``, hence ``<autoFilter``; ``LibreOffice``, which
    the app writes into the file's properties, says that it saved), or ``lacks=`` text it removed."""
    return [
        {"gui": "wait", "for": {"idle": True}},
        {"gui": "key", "keys": "ctrl+s"},
        {"gui": "wait", "for": {"file": path, **condition}},
    ]


def save_xlsx(name: str, contains: str) -> list[dict]:
    """:func:`save_in_libreoffice` for workbook ``name`` in the guest's reports folder."""
    return save_in_libreoffice(f"{REPORTS}/{name}", contains=contains)


CONDITIONAL = {"role": "dialog", "name_contains": "Conditional Formatting"}
VALIDITY = {"role": "dialog", "name": "Validity"}
TEXT_TO_COLUMNS = {"role": "dialog", "name": "Text to Columns"}
PIVOT_LAYOUT = {"role": "dialog", "name": "Pivot Table Layout"}
SAVE_STEP = "Press Ctrl+S and keep the current (xlsx) format if asked."
GUI_COMMON = {"id_seed": "gui_suite", "app": "calc", "snapshot": "base:calc", "gui_suite": True,
              "interface": "gui", "related_apps": ["calc"]}


def gui_pairs() -> list[dict]:
    """Calc pairs of the GUI suite on the base image, from the ``calc`` warm state: each opens a
    workbook in ~/reports, and the solution works through Calc's menus and cells."""
    return [
        {
            **GUI_COMMON,
            "name": "calc_sort_by_revenue",
            "category": "data_analysis_and_visualization",
            "action_number": 3,
            "source": ["https://help.libreoffice.org/latest/en-US/text/scalc/01/12030000.html"],
            "abstract": "The workbook team_sales.xlsx open in LibreOffice Calc lists each sales rep's region, units "
                        "and revenue. Sort the table by revenue so that the rep with the highest revenue comes "
                        "first, keeping every row together and the header on top. Save it, keeping the xlsx "
                        "format.",
            "verbose": "Sort a table in LibreOffice Calc:\n"
                       "1. In the Calc window showing team_sales.xlsx, click the header cell D1 (Revenue).\n"
                       "2. Open the Data menu and choose Sort Descending: Calc sorts the whole table by that "
                       "column and keeps the header row on top.\n"
                       "3. Check that the largest revenue is now in row 2.\n"
                       f"4. {SAVE_STEP}",
            "gen": team_sales_workbooks,
            "config": open_in_calc("team_sales.xlsx"),
            "evaluator": {
                "func": "compare_table",
                "result": gui_result("team_sales.xlsx"),
                "expected": gui_expected("team_sales_gold.xlsx"),
                "options": {"rules": [{"type": "sheet_data", "sheet_idx0": "RI0", "sheet_idx1": "EI0",
                                       "precision": 2}]},
            },
            "solution": first_cell("team_sales.xlsx", "D1") + menu("Data", "Sort Descending")
            + save_xlsx("team_sales.xlsx", "LibreOffice"),
        },
        {
            **GUI_COMMON,
            "name": "calc_cross_sheet_totals",
            "category": "data_analysis_and_visualization",
            "action_number": 5,
            "source": ["https://help.libreoffice.org/latest/en-US/text/scalc/guide/cellreferences.html"],
            "abstract": "In region_revenue.xlsx (open in LibreOffice Calc), the Summary sheet should show each "
                        "region's 2024 revenue. In B2 and B3 put formulas that add up the monthly revenue on the "
                        "North and South sheets, and in B4 a formula for the total of both. Save it, keeping the "
                        "xlsx format.",
            "verbose": "Fill a summary with formulas that read other sheets in LibreOffice Calc:\n"
                       "1. In the Calc window showing region_revenue.xlsx, stay on the Summary sheet and click "
                       "cell B2.\n"
                       "2. Type =SUM($North.B2:B13) and press Enter (the North sheet's twelve months).\n"
                       "3. In B3 type =SUM($South.B2:B13) and press Enter.\n"
                       "4. In B4 type =B2+B3 and press Enter.\n"
                       f"5. {SAVE_STEP}",
            "gen": region_summary_workbooks,
            "config": open_in_calc("region_revenue.xlsx"),
            "evaluator": {
                "func": "compare_table",
                "result": gui_result("region_revenue.xlsx"),
                "expected": gui_expected("region_revenue_gold.xlsx"),
                "options": {"rules": [
                    {"type": "sheet_data", "sheet_idx0": "RNSummary", "sheet_idx1": "ENSummary", "precision": 2},
                    {"type": "check_cell", "sheet_idx": "RNSummary", "coordinate": "B2", "props": {"formula": {
                        "method": "re", "ref": r"(?i)^=.*\bNorth'?!\$?B\$?2:\$?B\$?13\b"}}},
                    {"type": "check_cell", "sheet_idx": "RNSummary", "coordinate": "B3", "props": {"formula": {
                        "method": "re", "ref": r"(?i)^=.*\bSouth'?!\$?B\$?2:\$?B\$?13\b"}}},
                    {"type": "check_cell", "sheet_idx": "RNSummary", "coordinate": "B4", "props": {"formula": {
                        "method": "re", "ref": r"^="}}}]},
            },
            "solution": first_cell("region_revenue.xlsx", "B2") + [
                {"gui": "type", "text": "=SUM($North.B2:B13)\n=SUM($South.B2:B13)\n=B2+B3\n"},
            ] + save_xlsx("region_revenue.xlsx", "North!"),
        },
        {
            **GUI_COMMON,
            "name": "calc_column_chart",
            "category": "data_analysis_and_visualization",
            "action_number": 4,
            "source": ["https://help.libreoffice.org/latest/en-US/text/schart/01/wiz_chart_type.html"],
            "abstract": "monthly_sales.xlsx is open in LibreOffice Calc with 2024's revenue per month. Add a column "
                        "chart of the revenue with the months along the horizontal axis, on the same sheet. Save "
                        "it, keeping the xlsx format.",
            "verbose": "Insert a column chart in LibreOffice Calc:\n"
                       "1. In the Calc window showing monthly_sales.xlsx, click cell A1 and press Ctrl+Shift+End "
                       "to select the table A1:B13.\n"
                       "2. Open the Insert menu and choose Chart...: the Chart Wizard opens with a column "
                       "chart, the first row as labels and the first column as categories.\n"
                       "3. Click Finish, then press Escape to leave the chart.\n"
                       f"4. {SAVE_STEP}",
            "gen": revenue_chart_workbooks,
            "config": open_in_calc("monthly_sales.xlsx"),
            "evaluator": {
                "func": "compare_table",
                "result": gui_result("monthly_sales.xlsx"),
                "expected": gui_expected("monthly_sales_gold.xlsx"),
                "options": {"rules": [
                    {"type": "sheet_data", "sheet_idx0": "RI0", "sheet_idx1": "EI0", "precision": 2},
                    {"type": "chart", "sheet_idx0": "RI0", "sheet_idx1": "EI0",
                     "chart_props": ["type", "direction", "n_series"]}]},
            },
            "solution": first_cell("monthly_sales.xlsx", "A1") + [
                {"gui": "key", "keys": "ctrl+shift+end"},
                {"gui": "wait", "for": {"idle": True}},
            ] + menu("Insert", "Chart...") + [
                {"gui": "click", "target": {"role": "push-button", "name": "Finish"}},
                {"gui": "wait", "for": {"gone": {"role": "push-button", "name": "Finish"}}},
                {"gui": "wait", "for": {"idle": True}},
                {"gui": "key", "keys": ["escape", "escape"], "note": "leave the chart's edit mode"},
            ] + save_xlsx("monthly_sales.xlsx", "barChart"),
        },
        {
            **GUI_COMMON,
            "name": "calc_freeze_header_autofilter",
            "category": "data_analysis_and_visualization",
            "action_number": 4,
            "source": ["https://help.libreoffice.org/latest/en-US/text/scalc/guide/line_fix.html",
                       "https://help.libreoffice.org/latest/en-US/text/scalc/guide/autofilter.html"],
            "abstract": "orders.xlsx (open in LibreOffice Calc) lists 40 orders. Make its header row stay visible "
                        "while scrolling down, and give the header AutoFilter buttons over the whole table. Change "
                        "no cell. Save it, keeping the xlsx format.",
            "verbose": "Freeze the header and add AutoFilter in LibreOffice Calc:\n"
                       "1. In the Calc window showing orders.xlsx, click cell A1.\n"
                       "2. Open View > Freeze Cells and choose Freeze First Row.\n"
                       "3. Open the Data menu and choose AutoFilter: buttons appear in A1:D1.\n"
                       f"4. {SAVE_STEP}",
            "gen": orders_workbooks,
            "config": open_in_calc("orders.xlsx"),
            "evaluator": {
                "func": "compare_table",
                "result": gui_result("orders.xlsx"),
                "expected": gui_expected("orders_gold.xlsx"),
                "options": {"rules": [
                    {"type": "sheet_data", "sheet_idx0": "RI0", "sheet_idx1": "EI0", "precision": 2},
                    {"type": "freeze", "sheet_idx0": "RI0", "sheet_idx1": "EI0"},
                    {"type": "filter", "sheet_idx0": "RI0", "sheet_idx1": "EI0"}]},
            },
            "solution": first_cell("orders.xlsx", "A1") + menu("View", "Freeze Cells", "Freeze First Row")
            + [{"gui": "wait", "for": {"idle": True}}] + menu("Data", "AutoFilter", role="check-menu-item")
            + save_xlsx("orders.xlsx", "<autoFilter"),
        },
        {
            **GUI_COMMON,
            "name": "calc_highlight_high_revenue",
            "category": "data_analysis_and_visualization",
            "action_number": 8,
            "source": ["https://help.libreoffice.org/latest/en-US/text/scalc/01/05120000.html"],
            "abstract": f"In team_sales.xlsx (open in LibreOffice Calc), make every revenue figure (D2:D17) above "
                        f"{HIGHLIGHT_OVER} show in Calc's built-in Good cell style, through conditional formatting "
                        f"so that it follows the values when they change. Change no value. Save it, keeping the "
                        f"xlsx format.",
            "verbose": "Add a conditional format in LibreOffice Calc:\n"
                       "1. In the Calc window showing team_sales.xlsx, select D2:D17 (type D2:D17 in the Name Box "
                       "left of the formula bar and press Enter).\n"
                       "2. Open Format > Conditional > Condition...\n"
                       f"3. Keep \"Cell value\", choose \"is greater than\" and enter {HIGHLIGHT_OVER} in the value "
                       "field.\n"
                       "4. Under Apply Style choose Good, then click OK.\n"
                       f"5. {SAVE_STEP}",
            "gen": highlight_workbooks,
            "config": open_in_calc("team_sales.xlsx"),
            "evaluator": {
                "func": "compare_table",
                "result": gui_result("team_sales.xlsx"),
                "expected": gui_expected("team_sales_gold.xlsx"),
                "options": {"rules": [
                    {"type": "sheet_data", "sheet_idx0": "RI0", "sheet_idx1": "EI0", "precision": 2},
                    {"type": "style", "sheet_idx0": "RI0", "sheet_idx1": "EI0", "props": ["bgcolor"]}]},
            },
            "solution": first_cell("team_sales.xlsx", "D2:D17") + menu("Format", "Conditional", "Condition...") + [
                {"gui": "click", "target": {"role": "toggle-button", "index": 0, "within": CONDITIONAL},
                 "note": "the condition's operator list (is equal to)"},
                {"gui": "click", "target": {"role": "table-cell", "name": "is greater than"}},
                {"gui": "type", "target": {"role": "text", "index": 0, "within": CONDITIONAL},
                 "text": str(HIGHLIGHT_OVER), "note": "the condition's value field"},
                {"gui": "click", "target": {"role": "toggle-button", "index": 2, "within": CONDITIONAL},
                 "note": "the Apply Style list (Accent)"},
                {"gui": "click", "target": {"role": "table-cell", "name": "Good"}},
                *confirm(CONDITIONAL),
            ] + save_xlsx("team_sales.xlsx", "conditionalFormatting"),
        },
        {
            **GUI_COMMON,
            "name": "calc_region_dropdown",
            "category": "data_analysis_and_visualization",
            "action_number": 7,
            "source": ["https://help.libreoffice.org/latest/en-US/text/scalc/01/12120100.html"],
            "abstract": "orders.xlsx is open in LibreOffice Calc. Make the Region cells C2:C41 accept only North, "
                        "South, East or West, offered as a drop-down list in the cells. Change no value. Save it, "
                        "keeping the xlsx format.",
            "verbose": "Restrict cells to a list in LibreOffice Calc:\n"
                       "1. In the Calc window showing orders.xlsx, select C2:C41 (type C2:C41 in the Name Box left "
                       "of the formula bar and press Enter).\n"
                       "2. Open Data > Validity...\n"
                       "3. On the Criteria tab set Allow to List.\n"
                       "4. In Entries type North, South, East and West, one per line, then click OK.\n"
                       f"5. {SAVE_STEP}",
            "gen": region_list_workbooks,
            "config": open_in_calc("orders.xlsx"),
            "evaluator": {
                "func": "compare_table",
                "result": gui_result("orders.xlsx"),
                "expected": gui_expected("orders_gold.xlsx"),
                "options": {"rules": [
                    {"type": "sheet_data", "sheet_idx0": "RI0", "sheet_idx1": "EI0", "precision": 2},
                    {"type": "data_validation", "sheet_idx": "RI0", "dv_props": [{
                        "type": {"method": "eq", "ref": "list"},
                        "sqref": {"method": "spreadsheet_range", "ref": "C2:C41"},
                        "formula1": {"method": "re", "ref": "^\"(?=.*\\bNorth\\b)(?=.*\\bSouth\\b)(?=.*\\bEast\\b)"
                                                            "(?=.*\\bWest\\b)[A-Za-z]+(,[A-Za-z]+){3}\"$"}}]}]},
            },
            "solution": first_cell("orders.xlsx", "C2:C41") + menu("Data", "Validity...") + [
                {"gui": "click", "target": {"role": "toggle-button", "index": 1, "within": VALIDITY},
                 "note": "the Allow list (All values)"},
                {"gui": "click", "target": {"role": "table-cell", "name": "List"}},
                {"gui": "type", "target": {"role": "text", "index": 0, "within": VALIDITY},
                 "text": "\n".join(REGIONS), "note": "the Entries box"},
                *confirm(VALIDITY),
            ] + save_xlsx("orders.xlsx", "dataValidation"),
        },
        {
            **GUI_COMMON,
            "name": "calc_split_semicolon_column",
            "category": "traditional_data_processing",
            "action_number": 5,
            "source": ["https://help.libreoffice.org/latest/en-US/text/scalc/01/text2columns.html"],
            "abstract": "export.xlsx (open in LibreOffice Calc) came from a semicolon-separated export: each record "
                        "sits in one cell of column A. Split column A so that sku, product, units and unit_price "
                        "are in columns A to D, with units and prices as numbers. Save it, keeping the xlsx "
                        "format.",
            "verbose": "Split a column at semicolons in LibreOffice Calc:\n"
                       "1. In the Calc window showing export.xlsx, select A1:A21 (type A1:A21 in the Name Box left "
                       "of the formula bar and press Enter).\n"
                       "2. Open Data > Text to Columns...\n"
                       "3. Under Separator Options tick Semicolon (keep \"Separated by\"), then click OK.\n"
                       f"4. {SAVE_STEP}",
            "gen": export_workbooks,
            "config": open_in_calc("export.xlsx"),
            "evaluator": {
                "func": "compare_table",
                "result": gui_result("export.xlsx"),
                "expected": gui_expected("export_gold.xlsx"),
                "options": {"rules": [{"type": "sheet_data", "sheet_idx0": "RI0", "sheet_idx1": "EI0",
                                       "precision": 2}]},
            },
            "solution": first_cell("export.xlsx", "A1:A21") + menu("Data", "Text to Columns...") + [
                {"gui": "click", "target": {"role": "check-box", "name": "Semicolon", "within": TEXT_TO_COLUMNS}},
                {"gui": "wait", "for": {"role": "check-box", "name": "Semicolon", "state": "checked"}},
                *confirm(TEXT_TO_COLUMNS),
            ] + save_xlsx("export.xlsx", "LibreOffice"),
        },
        {
            **GUI_COMMON,
            "name": "calc_pivot_revenue_by_region",
            "category": "data_analysis_and_visualization",
            "action_number": 6,
            "source": ["https://help.libreoffice.org/latest/en-US/text/scalc/guide/datapilot_createtable.html"],
            "abstract": "team_sales.xlsx is open in LibreOffice Calc. Summarize the total revenue per region with a "
                        "pivot table built from the whole table (A1:D17), regions as rows, on a new sheet of its "
                        "own placed right after Sales. Save it, keeping the xlsx format.",
            "verbose": "Create a pivot table in LibreOffice Calc:\n"
                       "1. In the Calc window showing team_sales.xlsx, click any cell of the table (or type A1 in "
                       "the Name Box left of the formula bar and press Enter).\n"
                       "2. Open Insert > Pivot Table..., keep \"Current selection\" and click OK.\n"
                       "3. In the Pivot Table Layout dialog drag Region from Available Fields to Row Fields, and "
                       "Revenue to Data Fields (it shows as Sum - Revenue).\n"
                       "4. Click OK: the pivot table opens on a new sheet after Sales.\n"
                       f"5. {SAVE_STEP}",
            "gen": pivot_workbooks,
            "config": open_in_calc("team_sales.xlsx"),
            "evaluator": {
                "func": "compare_table",
                "result": gui_result("team_sales.xlsx"),
                "expected": gui_expected("team_sales_gold.xlsx"),
                "options": {"rules": [
                    {"type": "sheet_data", "sheet_idx0": "RNSales", "sheet_idx1": "ENSales", "precision": 2},
                    {"type": "pivot_table", "sheet_idx0": "RI1", "sheet_idx1": "EI1",
                     "pivot_props": ["row_fields", "col_fields", "data_fields", "filter"]}]},
            },
            "solution": first_cell("team_sales.xlsx", "A1") + menu("Insert", "Pivot Table...") + [
                {"gui": "click", "target": {"role": "push-button", "name": "OK",
                                            "within": {"role": "dialog", "name": "Select Source"}}},
                {"gui": "drag", "target": {"role": "table-cell", "name": "Region", "within": PIVOT_LAYOUT},
                 "to": {"role": "tree-table", "index": 1, "within": PIVOT_LAYOUT},
                 "note": "the layout's lists in order: Filters, Row Fields, Data Fields, Column Fields, Available"},
                {"gui": "drag", "target": {"role": "table-cell", "name": "Revenue", "within": PIVOT_LAYOUT},
                 "to": {"role": "tree-table", "index": 2, "within": PIVOT_LAYOUT}},
                {"gui": "wait", "for": {"role": "table-cell", "name": "Sum - Revenue", "within": PIVOT_LAYOUT}},
                *confirm(PIVOT_LAYOUT),
            ] + save_xlsx("team_sales.xlsx", "pivotTable"),
        },
    ]


def main() -> None:
    """Write this module's tasks and index them."""
    write_pairs(pairs())
