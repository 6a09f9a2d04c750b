"""Every table metric says why it scores below 1: compare_table (each rule type), compare_csv, check_csv,
run_sqlite3 and compare_conference_city_in_order, read with ``judge`` on real files."""
from __future__ import annotations

import sqlite3
from pathlib import Path

import openpyxl
import pytest
from openpyxl.styles import Font
from openpyxl.worksheet.datavalidation import DataValidation

from desktop_env.evaluators.evaluator import judge
from desktop_env.evaluators.metrics import csv_files, files_tables, table
from desktop_env.evaluators.metrics.csv_files import compare_csv
from desktop_env.evaluators.metrics.files_tables import check_csv, compare_conference_city_in_order, run_sqlite3
from desktop_env.evaluators.metrics.table import compare_table
from desktop_env.evaluators.reasons import (MISSING_RESULT, PASSED, RULE_FAILED, STRUCTURE_MISMATCH,
                                            THRESHOLD_NOT_MET, UNREADABLE_RESULT, VALUE_MISMATCH)
from desktop_env.registry import METRICS
from tests.metrics.conftest import add_sparklines

CONDITIONAL = Path(__file__).resolve().parent.parent / "data" / "conditional"

#: the metrics registered by the table modules, each tested below (compare_table in the TestCompareTable* classes)
COVERED = {"compare_table", "compare_csv", "check_csv", "run_sqlite3", "compare_conference_city_in_order"}


def test_every_table_metric_is_covered():
    modules = {m.__name__ for m in (table, csv_files, files_tables)} | {
        "desktop_env.evaluators.metrics.sheet_parts", "desktop_env.evaluators.metrics.formula",
        "desktop_env.evaluators.metrics.number_format", "desktop_env.evaluators.metrics.conditional",
        "desktop_env.evaluators.metrics.fuzzy"}
    registered = {name for name, entry in METRICS.entries.items() if entry.func.__module__ in modules}
    assert registered == COVERED


def failed(verdict, kind: str, *parts: str, score: float = 0.0) -> None:
    """The verdict scores ``score`` with a reason of ``kind`` whose text holds every one of ``parts``."""
    assert float(verdict) == score, verdict
    assert verdict.reason.kind == kind, verdict.reason
    for part in parts:
        assert part in verdict.reason.text, (part, verdict.reason.text)


def passed(verdict) -> None:
    assert float(verdict) == 1.0 and verdict.reason.kind == PASSED, verdict


# --------------------------------------------------------------------------- workbooks
def book(tmp_path, name, rows=(("Item", "Qty"), ("Tea", 5), ("Cake", 12)), edit=None, title="Sheet1") -> str:
    """An xlsx with ``rows`` on sheet ``title``, A1 bold; ``edit(ws)`` changes the sheet before it is saved."""
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = title
    for row in rows:
        ws.append(list(row))
    ws["A1"].font = Font(bold=True)
    if edit is not None:
        edit(ws)
    path = tmp_path / name
    wb.save(path)
    return str(path)


def pair(kind, **options) -> list[dict]:
    return [{"type": kind, "sheet_idx0": "RNSheet1", "sheet_idx1": "ENSheet1", **options}]


def table_verdict(result, expected, rules):
    return judge("compare_table", compare_table, result, expected, rules=rules)


class TestCompareTableFiles:
    def test_same_book_passes_every_pair_rule(self, tmp_path):
        r, e = book(tmp_path, "r.xlsx"), book(tmp_path, "e.xlsx")
        rules = [{"type": "sheet_name"}, *pair("sheet_data"), *pair("sheet_print"), *pair("freeze"),
                 *pair("style", props=["font_bold"]), *pair("filter"), *pair("chart"), *pair("pivot_table"),
                 *pair("sparkline"), *pair("row_props", props=["hidden"]), *pair("col_props", props=["width"]),
                 *pair("sheet_fuzzy", rules=[{"range": "A1:B3", "type": "exact_match"}])]
        passed(table_verdict(r, e, rules))

    @pytest.mark.parametrize("missing,named", [(None, "no result workbook"),
                                               ("absent.xlsx", "absent.xlsx does not exist")])
    def test_missing_result(self, tmp_path, missing, named):
        e = book(tmp_path, "e.xlsx")
        result = None if missing is None else str(tmp_path / missing)
        failed(table_verdict(result, e, pair("sheet_data")), MISSING_RESULT, named)

    def test_unreadable_result(self, tmp_path):
        bad = tmp_path / "bad.xlsx"
        bad.write_bytes(b"PK\x03\x04 not really a zip")
        failed(table_verdict(str(bad), book(tmp_path, "e.xlsx"), pair("sheet_data")), UNREADABLE_RESULT,
               "bad.xlsx cannot be opened as a workbook")

    @pytest.mark.parametrize("ref,named", [("RNTotals", "no sheet 'Totals' in r.xlsx"),
                                           ("RI3", "no sheet at index 3 in r.xlsx")])
    def test_missing_sheet(self, tmp_path, ref, named):
        r, e = book(tmp_path, "r.xlsx"), book(tmp_path, "e.xlsx")
        rules = [{"type": "sheet_data", "sheet_idx0": ref, "sheet_idx1": "EI0"}]
        failed(table_verdict(r, e, rules), STRUCTURE_MISMATCH, "rules[0] (sheet_data)", named, "['Sheet1']")

    def test_the_first_failing_rule_is_named_by_its_index(self, tmp_path):
        r, e = book(tmp_path, "r.xlsx"), book(tmp_path, "e.xlsx")
        rules = [*pair("sheet_data"), {"type": "check_cell", "sheet_idx": 0, "coordinate": "B2",
                                       "props": {"value": {"method": "eq", "ref": 6}}}, *pair("freeze")]
        failed(table_verdict(r, e, rules), VALUE_MISMATCH,
               "rules[1] (check_cell): Sheet1!B2 value: expected eq 6, got 5")


class TestCompareTableSheets:
    def test_sheet_name(self, tmp_path):
        r = book(tmp_path, "r.xlsx", edit=lambda ws: ws.parent.create_sheet("Notes"))
        e = book(tmp_path, "e.xlsx")
        failed(table_verdict(r, e, [{"type": "sheet_name"}]), STRUCTURE_MISMATCH,
               "sheet 2: expected no sheet, got 'Notes'", "expected ['Sheet1'], got ['Sheet1', 'Notes']")

    def test_sheet_name_without_an_expected_book(self, tmp_path):
        failed(table_verdict(book(tmp_path, "r.xlsx"), None, [{"type": "sheet_name"}]), RULE_FAILED,
               "the task gives none")

    @pytest.mark.parametrize("rows,kind,parts", [
        ((("Item", "Qty"), ("Tea", 5), ("Cake", 13)), VALUE_MISMATCH,
         ["sheet 'Sheet1' vs expected 'Sheet1': B3: expected 12, got 13"]),
        ((("Item", "Count"), ("Tea", 5), ("Cake", 12)), VALUE_MISMATCH, ["B1 (header): expected 'Qty', got 'Count'"]),
        ((("Item", "Qty"), ("Tea", 5)), STRUCTURE_MISMATCH, ["1 rows of data below the header, expected 2"]),
        ((("Item", "Qty", "Note"), ("Tea", 5), ("Cake", 12)), STRUCTURE_MISMATCH, ["3 columns, expected 2"]),
    ])
    def test_sheet_data(self, tmp_path, rows, kind, parts):
        r, e = book(tmp_path, "r.xlsx", rows), book(tmp_path, "e.xlsx")
        failed(table_verdict(r, e, pair("sheet_data")), kind, "rules[0] (sheet_data)", *parts)

    def test_sheet_data_against_another_result_sheet(self, tmp_path):
        def copy(ws):
            other = ws.parent.create_sheet("Copy")
            for row in (("Item", "Qty"), ("Tea", 5), ("Cake", 12.5)):
                other.append(row)
        r = book(tmp_path, "r.xlsx", edit=copy)
        rules = [{"type": "sheet_data", "sheet_idx0": "RI0", "sheet_idx1": "RNCopy"}]
        failed(table_verdict(r, None, rules), VALUE_MISMATCH,
               "sheet 'Sheet1' vs sheet 'Copy': B3: expected 12.5, got 12")

    def test_sheet_print(self, tmp_path):
        def two_decimals(ws):
            ws["B2"].number_format = "0.00"
        r, e = book(tmp_path, "r.xlsx", edit=two_decimals), book(tmp_path, "e.xlsx")
        failed(table_verdict(r, e, pair("sheet_print")), VALUE_MISMATCH, "as displayed",
               "row 2 expected 'Tea,5', got 'Tea,5.00'")

    def test_sheet_print_row_count(self, tmp_path):
        r, e = book(tmp_path, "r.xlsx", (("Item", "Qty"), ("Tea", 5))), book(tmp_path, "e.xlsx")
        failed(table_verdict(r, e, pair("sheet_print")), STRUCTURE_MISMATCH, "2 rows, expected 3",
               "row 3 missing: expected 'Cake,12'")

    @pytest.mark.parametrize("spec,cell,kind,parts", [
        ({"type": "exact_match"}, "Tea ", VALUE_MISMATCH, ["A2: expected 'Tea', got 'Tea '"]),
        ({"type": "fuzzy_match", "threshold": 90}, "Teas", THRESHOLD_NOT_MET,
         ["A2: similarity 85.7 below the threshold 90", "expected 'Tea', got 'Teas'"]),
        ({"type": "includes"}, "T", RULE_FAILED, ["A2: 'T' does not include the expected 'Tea'"]),
        ({"type": "included_by"}, "Green Teas", RULE_FAILED,
         ["A2: 'Green Teas' is not included in the expected 'Tea'"]),
    ])
    def test_sheet_fuzzy(self, tmp_path, spec, cell, kind, parts):
        r = book(tmp_path, "r.xlsx", (("Item", "Qty"), (cell, 5), ("Cake", 12)))
        e = book(tmp_path, "e.xlsx")
        failed(table_verdict(r, e, pair("sheet_fuzzy", rules=[{"range": "A1:B3", **spec}])), kind,
               "sheet 'Sheet1' vs expected 'Sheet1'", *parts)

    def test_freeze(self, tmp_path):
        def frozen(ws):
            ws.freeze_panes = "B2"
        r, e = book(tmp_path, "r.xlsx"), book(tmp_path, "e.xlsx", edit=frozen)
        failed(table_verdict(r, e, pair("freeze")), VALUE_MISMATCH, "frozen panes", "expected 'B2', got None")

    def test_zoom(self, tmp_path):
        def zoomed(ws):
            ws.sheet_view.zoomScale = 80
        r = book(tmp_path, "r.xlsx", edit=zoomed)
        passed(table_verdict(r, None, [{"type": "zoom", "sheet_idx": 0, "method": "eq", "ref": 80}]))
        failed(table_verdict(r, None, [{"type": "zoom", "sheet_idx": 0, "method": "range.te", "ref": [80, 100]}]),
               RULE_FAILED, "sheet 'Sheet1' zoom (percent): expected range.te [80, 100], got 80")


class TestCompareTableCells:
    def cell(self, tmp_path, coordinate, props, **kw):
        r = book(tmp_path, "r.xlsx", **kw)
        return table_verdict(r, None, [{"type": "check_cell", "sheet_idx": 0, "coordinate": coordinate,
                                        "props": props}])

    def test_matching_cell_passes(self, tmp_path):
        passed(self.cell(tmp_path, "A1", {"value": {"ref": "Item"}, "font_bold": {"method": "eq", "ref": True}}))

    @pytest.mark.parametrize("props,kind,text", [
        ({"value": {"method": "eq", "ref": 12}}, VALUE_MISMATCH, "Sheet1!B2 value: expected eq 12, got 5"),
        ({"value": {"method": "approx:0.5", "ref": 6}}, VALUE_MISMATCH,
         "Sheet1!B2 value: expected approx:0.5 6, got 5"),
        ({"value": {"method": "gt", "ref": 5}}, RULE_FAILED, "Sheet1!B2 value: expected gt 5, got 5"),
        ({"value": {"method": "none"}}, RULE_FAILED, "Sheet1!B2 value: expected none, got 5"),
        ({"font_bold": {"method": "eq", "ref": True}}, VALUE_MISMATCH,
         "Sheet1!B2 font_bold: expected eq True, got False"),
        ({"value": {"ref": 5}, "formula": {"method": "re", "ref": "^=SUM"}}, RULE_FAILED,
         "Sheet1!B2 formula: expected re '^=SUM', got 5"),
    ])
    def test_check_cell(self, tmp_path, props, kind, text):
        failed(self.cell(tmp_path, "B2", props), kind, "rules[0] (check_cell)", text)

    def test_check_cell_reads_the_conditional_fill(self):
        rule = [{"type": "check_cell", "sheet_idx": 0, "coordinate": "B3",
                 "props": {"bgcolor": {"method": "eq", "ref": "FFFF0000"}}}]
        passed(table_verdict(CONDITIONAL / "gold.xlsx", None, rule))
        failed(table_verdict(CONDITIONAL / "none.xlsx", None, rule), VALUE_MISMATCH,
               "Scores!B3 bgcolor: expected eq 'FFFF0000', got None")  # 70 is over 50, but nothing paints it

    def test_style(self, tmp_path):
        r = book(tmp_path, "r.xlsx", edit=lambda ws: setattr(ws["A1"], "font", Font(bold=False)))
        e = book(tmp_path, "e.xlsx")
        failed(table_verdict(r, e, pair("style", props=["font_name", "font_bold"])), VALUE_MISMATCH,
               "sheet 'Sheet1' vs expected 'Sheet1': A1 font_bold: expected True, got False")

    def test_style_of_a_conditional_format(self):
        rules = [{"type": "style", "sheet_idx0": 0, "sheet_idx1": "EI0", "props": ["font_bold", "fgcolor"]}]
        failed(table_verdict(CONDITIONAL / "other_threshold.xlsx", CONDITIONAL / "gold.xlsx", rules), VALUE_MISMATCH,
               "sheet 'Scores' vs expected 'Scores': B4 font_bold: expected True, got False")  # 55, over gold's 50

    def test_style_of_a_cell_one_sheet_leaves_bare(self, tmp_path):
        def extra(ws):
            ws["D5"] = "note"
        r, e = book(tmp_path, "r.xlsx", edit=extra), book(tmp_path, "e.xlsx")
        failed(table_verdict(r, e, pair("style", props=["font_bold"])), VALUE_MISMATCH,
               "D5: expected a cell with no value, fill or conditional format, got {'font_bold': False}")


def validated(tmp_path, name, formula='"Pass,Fail,Held"', sqref="B2:B29"):
    def edit(ws):
        dv = DataValidation(type="list", formula1=formula, allow_blank=True)
        dv.add(sqref)
        ws.add_data_validation(dv)
    return book(tmp_path, name, edit=edit)


class TestCompareTableParts:
    DV = {"type": {"method": "eq", "ref": "list"},
          "formula1": {"method": "str_set_eq", "ref": ["Pass", "Fail", "Held"]},
          "ranges": {"method": "spreadsheet_range", "ref": ["B2:B29", "B:B"]}}

    def dv(self, path):
        return table_verdict(path, None, [{"type": "data_validation", "sheet_idx": 0, "dv_props": [self.DV]}])

    def test_data_validation(self, tmp_path):
        passed(self.dv(validated(tmp_path, "r.xlsx")))
        failed(self.dv(validated(tmp_path, "items.xlsx", formula='"Pass,Fail"')), RULE_FAILED,
               "the data validation on B2:B29 (type 'list') matches no dv_props entry",
               "dv_props[0], has formula1: expected str_set_eq ['Pass', 'Fail', 'Held'], got '\"Pass,Fail\"'")
        failed(self.dv(validated(tmp_path, "small.xlsx", sqref="B2:B10")), RULE_FAILED,
               "ranges: expected spreadsheet_range ['B2:B29', 'B:B'], got 'B2:B10'")
        failed(self.dv(book(tmp_path, "none.xlsx")), STRUCTURE_MISMATCH,
               "sheet 'Sheet1' has 0 data validations, expected at least 1")

    def test_chart(self, tmp_path, make_xlsx):
        rule = [{"type": "chart", "sheet_idx0": 0, "sheet_idx1": "EI0", "chart_props": ["type", "title"]}]
        e = str(make_xlsx("e.xlsx", chart={}))
        passed(table_verdict(str(make_xlsx("r.xlsx", chart={})), e, rule))
        failed(table_verdict(str(make_xlsx("line.xlsx", chart={"kind": "line"})), e, rule), VALUE_MISMATCH,
               "sheet 'Data' vs expected 'Data': chart over series", "type: expected 'barChart', got 'lineChart'")
        failed(table_verdict(str(make_xlsx("title.xlsx", chart={"title": "Oops"})), e, rule), VALUE_MISMATCH,
               "title: expected 'Sales by region', got 'Oops'")
        failed(table_verdict(str(make_xlsx("none.xlsx")), e, rule), STRUCTURE_MISMATCH,
               "no chart over series \"'Data'!$C$2:$C$5,'Data'!$A$2:$A$5\"", "found []")

    def test_pivot_table(self, make_xlsx):
        rule = [{"type": "pivot_table", "sheet_idx0": "RNPivot", "sheet_idx1": "ENPivot",
                 "pivot_props": ["row_fields", "data_fields"]}]
        e = str(make_xlsx("e.xlsx", pivot={}))
        passed(table_verdict(str(make_xlsx("r.xlsx", pivot={})), e, rule))
        failed(table_verdict(str(make_xlsx("rows.xlsx", pivot={"row_field": 1})), e, rule), VALUE_MISMATCH,
               "pivot table over 'Data!A1:C5' row_fields[0]: expected 'Region', got 'Product'")
        failed(table_verdict(str(make_xlsx("agg.xlsx", pivot={"agg": "average"})), e, rule), VALUE_MISMATCH,
               "pivot table over 'Data!A1:C5' data_fields[0][1]: expected 'sum', got 'average'")
        failed(table_verdict(str(make_xlsx("none.xlsx", extra_sheet="Pivot")), e, rule), STRUCTURE_MISMATCH,
               "no pivot table over 'Data!A1:C5'")

    def test_sparkline(self, tmp_path):
        def sparked(name, lines):
            path = book(tmp_path, name)
            add_sparklines(path, "xl/worksheets/sheet1.xml", lines)
            return path
        e = sparked("e.xlsx", {"C2": "Sheet1!B2:B3"})
        passed(table_verdict(sparked("r.xlsx", {"C2": "Sheet1!B2:B3"}), e, pair("sparkline")))
        failed(table_verdict(sparked("other.xlsx", {"C2": "Sheet1!B2:B2"}), e, pair("sparkline")), VALUE_MISMATCH,
               "sparkline in C2: expected data 'Sheet1!B2:B3', got 'Sheet1!B2:B2'")
        failed(table_verdict(book(tmp_path, "none.xlsx"), e, pair("sparkline")), STRUCTURE_MISMATCH,
               "no sparkline in C2 (expected one over 'Sheet1!B2:B3')")

    def test_row_props(self, tmp_path):
        def hide(row):
            return lambda ws: setattr(ws.row_dimensions[row], "hidden", True)
        e = book(tmp_path, "e.xlsx", edit=hide(3))
        passed(table_verdict(book(tmp_path, "r.xlsx", edit=hide(3)), e, pair("row_props", props=["hidden"])))
        failed(table_verdict(book(tmp_path, "w.xlsx", edit=hide(2)), e, pair("row_props", props=["hidden"])),
               VALUE_MISMATCH, "row 2 hidden: expected False, got True")

    def test_col_props(self, tmp_path):
        def wide(ws):
            ws.column_dimensions["B"].width = 30
        e = book(tmp_path, "e.xlsx", edit=wide)
        failed(table_verdict(book(tmp_path, "r.xlsx"), e, pair("col_props", props=["width"])), VALUE_MISMATCH,
               "column B width: expected 30.0, got 13.0")

    def test_filter(self, tmp_path):
        def filtered(values):
            def edit(ws):
                ws.auto_filter.ref = "A1:B3"
                ws.auto_filter.add_filter_column(0, list(values))
            return edit
        e = book(tmp_path, "e.xlsx", edit=filtered(["Tea"]))
        passed(table_verdict(book(tmp_path, "r.xlsx", edit=filtered(["Tea"])), e, pair("filter")))
        failed(table_verdict(book(tmp_path, "cake.xlsx", edit=filtered(["Cake"])), e, pair("filter")), VALUE_MISMATCH,
               "autofilter filter_column[0].filters: expected ['Tea'], got ['Cake']")
        failed(table_verdict(book(tmp_path, "none.xlsx"), e, pair("filter")), STRUCTURE_MISMATCH,
               "no autofilter (expected one on 'A1:B3')")


# --------------------------------------------------------------------------- compare_csv
def write(tmp_path, name, text) -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


class TestCompareCsv:
    GOLD = "name,total\na,1\nb,2\n"

    def verdict(self, tmp_path, text, gold=GOLD, **options):
        return judge("compare_csv", compare_csv, write(tmp_path, "r.csv", text), write(tmp_path, "e.csv", gold),
                     **options)

    def test_same_rows_pass(self, tmp_path):
        passed(self.verdict(tmp_path, self.GOLD))
        passed(self.verdict(tmp_path, "name,total\nb,2\na,1\n", ignore_order=True))

    @pytest.mark.parametrize("text,options,kind,parts", [
        ("name,total\na,1\nb,3\n", {}, VALUE_MISMATCH,
         ["r.csv: row 3, column 2 ('total'): expected '2', got '3'", "rows: expected ['b', '2'], got ['b', '3']"]),
        ("name,total\na,1\n", {}, STRUCTURE_MISMATCH, ["2 rows, expected 3", "row 3 is missing: expected ['b', '2']"]),
        ("name,total\na,1\nb,2\nc,3\n", {}, STRUCTURE_MISMATCH, ["4 rows, expected 3", "an extra row 4: ['c', '3']"]),
        ("name,total\na,1,x\nb,2\n", {}, STRUCTURE_MISMATCH, ["row 2 has 3 cells, expected 2"]),
        ("name,total\nb,2\na,3\n", {"ignore_order": True}, VALUE_MISMATCH,
         ["data row 1 in sorted order (result row 3, expected row 2), column 2 ('total'): expected '1', got '3'"]),
        ("name,total\n\na,1\nb,9\n", {"strict": False}, VALUE_MISMATCH,
         ["result row 4 (expected row 3), column 2 ('total'): expected '2', got '9'"]),
        ("name,total\na,1.01\nb,2\n", {"tolerance": 0.001}, VALUE_MISMATCH, ["row 2, column 2"]),
    ])
    def test_differences(self, tmp_path, text, options, kind, parts):
        failed(self.verdict(tmp_path, text, **options), kind, *parts)

    def test_missing_result(self, tmp_path):
        gold = write(tmp_path, "e.csv", self.GOLD)
        failed(judge("compare_csv", compare_csv, None, gold), MISSING_RESULT, "no result CSV file")
        failed(judge("compare_csv", compare_csv, str(tmp_path / "out.csv"), gold), MISSING_RESULT,
               "out.csv does not exist")
        failed(judge("compare_csv", compare_csv, gold, str(tmp_path / "gold.csv")), MISSING_RESULT,
               "the expected CSV file does not exist", "gold.csv")


# --------------------------------------------------------------------------- files_tables
class TestCheckCsv:
    RULES = {"expect": [{"user": "alice@x.org", "url": "imap://x.org"}], "unexpect": [{"user": "bob@y.org"}]}
    ROWS = "url,user,password\nimap://x.org,alice@x.org,pw\nsmtp://x.org,carol@x.org,pw\n"

    def test_pass(self, tmp_path):
        passed(judge("check_csv", check_csv, write(tmp_path, "a.csv", self.ROWS), self.RULES))

    @pytest.mark.parametrize("text,parts", [
        (ROWS + "imap://y.org,bob@y.org,pw\n", ["a.csv: line 4 matches the unwanted record {'user': 'bob@y.org'}"]),
        ("url,user\nimap://x.org,alice@x.org2\n",
         ["no record matches the expected {'user': 'alice@x.org', 'url': 'imap://x.org'}",
          "the closest, line 2, has user 'alice@x.org2'"]),
        ("url,login\nimap://x.org,alice@x.org\n", ["there is no column 'user'"]),
        ("url,user\n", ["the file has no records"]),
    ])
    def test_rule_failed(self, tmp_path, text, parts):
        failed(judge("check_csv", check_csv, write(tmp_path, "a.csv", text), self.RULES), RULE_FAILED, *parts)

    def test_missing_result(self, tmp_path):
        failed(judge("check_csv", check_csv, None, self.RULES), MISSING_RESULT, "no result file")
        failed(judge("check_csv", check_csv, tmp_path / "accounts.csv", self.RULES), MISSING_RESULT,
               "accounts.csv does not exist")


class TestRunSqlite3:
    SQL = "SELECT (SELECT COUNT(*) FROM starred) = (SELECT COUNT(*) FROM messages)"

    @staticmethod
    def db(path: Path, starred: int) -> Path:
        with sqlite3.connect(path) as conn:
            conn.execute("CREATE TABLE messages (id INTEGER)")
            conn.execute("CREATE TABLE starred (id INTEGER)")
            conn.executemany("INSERT INTO messages VALUES (?)", [(i,) for i in range(3)])
            conn.executemany("INSERT INTO starred VALUES (?)", [(i,) for i in range(starred)])
        conn.close()
        return path

    def verdict(self, result, sql=SQL):
        return judge("run_sqlite3", run_sqlite3, result, {"sql": sql})

    def test_pass(self, tmp_path):
        passed(self.verdict(self.db(tmp_path / "all.sqlite", 3)))

    def test_the_query_gives_no_truth(self, tmp_path):
        db = self.db(tmp_path / "some.sqlite", 2)
        failed(self.verdict(db), RULE_FAILED, "the query 'SELECT (SELECT COUNT(*) FROM starred)",
               "on some.sqlite gave 0, not 1")
        failed(self.verdict(db, "SELECT 0.5"), RULE_FAILED, "gave 0.5, not 1", score=0.5)
        failed(self.verdict(db, "SELECT NULL"), RULE_FAILED, "gave NULL, not 1")
        failed(self.verdict(db, "SELECT id FROM messages WHERE id > 10"), RULE_FAILED, "gave no row, not 1")
        failed(self.verdict(db, "SELECT 'yes'"), RULE_FAILED, "gave 'yes', not a number")

    def test_wrong_database(self, tmp_path):
        empty = tmp_path / "empty.sqlite"
        sqlite3.connect(empty).close()
        failed(self.verdict(empty), STRUCTURE_MISMATCH, "the query fails on empty.sqlite: no such table: starred")
        junk = Path(write(tmp_path, "junk.sqlite", "not a database" * 20))
        failed(self.verdict(junk), UNREADABLE_RESULT, "junk.sqlite is not a readable SQLite database")

    def test_missing_result(self, tmp_path):
        failed(self.verdict(None), MISSING_RESULT, "no result file")
        failed(self.verdict(tmp_path / "global-messages-db.sqlite"), MISSING_RESULT,
               "global-messages-db.sqlite does not exist")


class TestConferenceCities:
    EXPECTED = {"expected": ["Paris", ["Zurich", "Zürich"], "Tokyo"]}

    def cities(self, tmp_path, name, cities):
        return Path(book(tmp_path, name, [("Conference", "Year", "City"), *[("X", 2024, c) for c in cities]]))

    def verdict(self, result):
        return judge("compare_conference_city_in_order", compare_conference_city_in_order, result, self.EXPECTED)

    def test_pass(self, tmp_path):
        passed(self.verdict(self.cities(tmp_path, "r.xlsx", ["Paris, France", "ZÜRICH", "Tokyo"])))

    def test_wrong_city(self, tmp_path):
        failed(self.verdict(self.cities(tmp_path, "r.xlsx", ["Paris", "Tokyo", "Zurich"])), VALUE_MISMATCH,
               "r.xlsx Sheet1!C3: expected one of ['Zurich', 'Zürich'], got 'Tokyo'")
        failed(self.verdict(self.cities(tmp_path, "s.xlsx", ["Paris", "Zurich"])), VALUE_MISMATCH,
               "s.xlsx Sheet1!C4: expected 'Tokyo', got None")

    def test_missing_or_unreadable(self, tmp_path):
        failed(self.verdict(None), MISSING_RESULT, "no result file")
        failed(self.verdict(tmp_path / "cities.xlsx"), MISSING_RESULT, "cities.xlsx does not exist")
        bad = Path(write(tmp_path, "bad.xlsx", "not a zip"))
        failed(self.verdict(bad), UNREADABLE_RESULT, "bad.xlsx is not a readable workbook")
