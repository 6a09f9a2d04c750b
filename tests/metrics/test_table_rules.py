"""compare_table's sheet-feature rules on real xlsx files: sheet_print, sheet_fuzzy, sparkline,
data_validation, row_props, col_props, filter (a matching pair scores 1, a differing one 0)."""
from __future__ import annotations

import openpyxl
import pytest
from openpyxl.worksheet.datavalidation import DataValidation

from desktop_env.evaluators.metrics.fuzzy import fuzzy_ratio
from desktop_env.evaluators.metrics.number_format import display_text
from desktop_env.evaluators.metrics.table import compare_table
from tests.metrics.conftest import add_sparklines


def _book(tmp_path, name, rows, formats=None, edit=None, title="Sheet1"):
    """An xlsx with ``rows`` on sheet ``title``; ``formats`` maps a coordinate to a number format;
    ``edit(ws)`` changes the sheet before it is saved."""
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = title
    for row in rows:
        ws.append(list(row))
    for coordinate, fmt in (formats or {}).items():
        ws[coordinate].number_format = fmt
    if edit is not None:
        edit(ws)
    path = tmp_path / name
    wb.save(path)
    return str(path)


def _pair_rule(kind, **kw):
    return [{"type": kind, "sheet_idx0": "RNSheet1", "sheet_idx1": "ENSheet1", **kw}]


# --------------------------------------------------------------------------- sheet_print
class TestSheetPrint:
    ROWS = [("Item", "Spent"), ("Tea", 7.251), ("Cake", 12.5)]

    def test_same_display_passes_though_values_differ(self, tmp_path):
        # 7.251 and 7.254 both show as 7.25 with two decimals: sheet_print compares what is shown
        r = _book(tmp_path, "r.xlsx", self.ROWS, {"B2": "0.00", "B3": "0.00"})
        e = _book(tmp_path, "e.xlsx", [("Item", "Spent"), ("Tea", 7.254), ("Cake", 12.5)], {"B2": "0.00", "B3": "0.00"})
        assert compare_table(r, e, rules=_pair_rule("sheet_print")) == 1.0
        assert compare_table(r, e, rules=_pair_rule("sheet_data", precision=4)) == 0.0

    def test_other_number_format_fails(self, tmp_path):
        r = _book(tmp_path, "r.xlsx", self.ROWS, {"B2": "0.0", "B3": "0.0"})
        e = _book(tmp_path, "e.xlsx", self.ROWS, {"B2": "0.00", "B3": "0.00"})
        assert compare_table(r, e, rules=_pair_rule("sheet_print")) == 0.0

    def test_padding_with_a_format_equals_padded_text(self, tmp_path):
        r = _book(tmp_path, "r.xlsx", [("Id",), (42,)], {"A2": "0000000"})
        e = _book(tmp_path, "e.xlsx", [("Id",), ("0000042",)])
        wrong = _book(tmp_path, "w.xlsx", [("Id",), (42,)])
        assert compare_table(r, e, rules=_pair_rule("sheet_print")) == 1.0
        assert compare_table(wrong, e, rules=_pair_rule("sheet_print")) == 0.0

    def test_millions_format(self, tmp_path):
        r = _book(tmp_path, "r.xlsx", [(1234567890,)], {"A1": '0.0,, "M"'})
        e = _book(tmp_path, "e.xlsx", [("1234.6 M",)])
        assert compare_table(r, e, rules=_pair_rule("sheet_print")) == 1.0
        assert compare_table(r, e, rules=_pair_rule("sheet_data")) == 0.0

    def test_ignore_case(self, tmp_path):
        r = _book(tmp_path, "r.xlsx", [("TEA",)])
        e = _book(tmp_path, "e.xlsx", [("tea",)])
        assert compare_table(r, e, rules=_pair_rule("sheet_print")) == 0.0
        assert compare_table(r, e, rules=_pair_rule("sheet_print", ignore_case=True)) == 1.0

    def test_reads_the_csv_exports_beside_both_books(self, tmp_path):
        # the suite's postconfig exports each sheet with LibreOffice to <book>-<sheet>.csv
        r = _book(tmp_path, "r.xlsx", [("x",)])
        e = _book(tmp_path, "e.xlsx", [("y",)])
        (tmp_path / "r-Sheet1.csv").write_text("Item,Spent\nTea,7.25\n\n")
        (tmp_path / "e-Sheet1.csv").write_text("Item,Spent\nTea,7.25\n")
        assert compare_table(r, e, rules=_pair_rule("sheet_print")) == 1.0
        (tmp_path / "r-Sheet1.csv").write_text("Item,Spent\nTea,7.3\n")
        assert compare_table(r, e, rules=_pair_rule("sheet_print")) == 0.0

    def test_missing_sheet_fails(self, tmp_path):
        r = _book(tmp_path, "r.xlsx", self.ROWS, title="Other")
        e = _book(tmp_path, "e.xlsx", self.ROWS)
        assert compare_table(r, e, rules=_pair_rule("sheet_print")) == 0.0


@pytest.mark.parametrize("value,fmt,shown", [
    (1234567.891, "#,##0.00", "1,234,567.89"), (2.675, "0.00", "2.68"), (-2.5, "0", "-3"),
    (0.25678, "0.00%", "25.68%"), (12345.678, "0.00E+00", "1.23E+04"), (123456789, "000-00-0000", "123-45-6789"),
    (-1234.5, '"$"#,##0.00', "-$1,234.50"), (-1234.5, "#,##0.00;(#,##0.00)", "(1,234.50)"),
    (0, '#,##0.00;(#,##0.00);"zero"', "zero"), (0.5, "#.##", ".5"), (5, "0.0#", "5.0"),
    (1234.5, "[$€-407] #,##0.00", "€ 1,234.50"), (-0.004, "0.00", "0.00"), ("hi", '0;0;0;"T:"@', "T:hi"),
    (1 / 3, "General", "0.333333333333333"), (12.0, "General", "12"), (True, "General", "TRUE"),
])
def test_display_text(value, fmt, shown):
    assert display_text(value, fmt) == shown


def test_display_text_dates():
    import datetime
    moment = datetime.datetime(2024, 3, 5, 14, 7, 9)
    assert display_text(moment, "yyyy-mm-dd") == "2024-03-05"
    assert display_text(moment, "dd/mm/yyyy hh:mm:ss") == "05/03/2024 14:07:09"
    assert display_text(moment, "mmm d, yyyy h:mm AM/PM") == "Mar 5, 2024 2:07 PM"
    assert display_text(datetime.timedelta(hours=30, minutes=5), "[h]:mm") == "30:05"


# --------------------------------------------------------------------------- sheet_fuzzy
class TestSheetFuzzy:
    def _rule(self, **spec):
        return _pair_rule("sheet_fuzzy", rules=[{"range": ["A1:A2"], **spec}])

    def test_exact_match_with_trims(self, tmp_path):
        r = _book(tmp_path, "r.xlsx", [("  Ann ",), ("Bob",)])
        e = _book(tmp_path, "e.xlsx", [("Ann",), ("Bob",)])
        assert compare_table(r, e, rules=self._rule(type="exact_match")) == 0.0
        assert compare_table(r, e, rules=self._rule(type="exact_match", trim_leadings=" ", trim_trailings=" ")) == 1.0

    def test_fuzzy_match_with_normalization_and_case(self, tmp_path):
        r = _book(tmp_path, "r.xlsx", [("12 Main Rd.",), ("5 high St.",)])
        e = _book(tmp_path, "e.xlsx", [("12 Main Road",), ("5 High Street",)])
        norm = [["Rd.", "Road"], ["St.", "Street"]]
        assert compare_table(r, e, rules=self._rule(type="exact_match", normalization=norm, ignore_case=True)) == 1.0
        assert compare_table(r, e, rules=self._rule(type="fuzzy_match", threshold=95)) == 0.0
        assert compare_table(r, e, rules=self._rule(type="fuzzy_match", threshold=95, normalization=norm,
                                                    ignore_case=True)) == 1.0

    def test_includes_and_ignore_chars(self, tmp_path):
        r = _book(tmp_path, "r.xlsx", [("+1 (555) 123-4567",), ("Call 5550000",)])
        e = _book(tmp_path, "e.xlsx", [("5551234567",), ("5550000",)])
        assert compare_table(r, e, rules=self._rule(type="includes")) == 0.0
        assert compare_table(r, e, rules=self._rule(type="includes", ignore_chars=" ()-+")) == 1.0
        assert compare_table(r, e, rules=self._rule(type="included_by", ignore_chars=" ()-+")) == 0.0

    def test_whole_columns(self, tmp_path):
        r = _book(tmp_path, "r.xlsx", [("Ann", 1), ("Bob", 2)])
        e = _book(tmp_path, "e.xlsx", [("ann", 1), ("bob", 2)])
        rule = _pair_rule("sheet_fuzzy", rules=[{"range": "A:B", "type": "exact_match", "ignore_case": True}])
        assert compare_table(r, e, rules=rule) == 1.0
        rule[0]["rules"][0]["ignore_case"] = False
        assert compare_table(r, e, rules=rule) == 0.0

    def test_numbers_read_as_floats(self, tmp_path):
        r = _book(tmp_path, "r.xlsx", [(10,), ("x",)])
        e = _book(tmp_path, "e.xlsx", [(10.0,), ("x",)])
        other = _book(tmp_path, "o.xlsx", [(11,), ("x",)])
        assert compare_table(r, e, rules=self._rule(type="exact_match")) == 1.0
        assert compare_table(other, e, rules=self._rule(type="exact_match")) == 0.0


@pytest.mark.parametrize("a,b", [("", ""), ("kitten", "sitting"), ("abc", "xyz"), ("12 Main Rd", "12 Main Road"),
                                 ("aaaa", "aa"), ("abcdefgh", "hgfedcba")])
def test_fuzzy_ratio_is_the_lcs_ratio(a, b):
    def lcs(x, y):  # the textbook dynamic programme
        table = [[0] * (len(y) + 1) for _ in range(len(x) + 1)]
        for i, cx in enumerate(x):
            for j, cy in enumerate(y):
                table[i + 1][j + 1] = table[i][j] + 1 if cx == cy else max(table[i][j + 1], table[i + 1][j])
        return table[-1][-1]
    expected = 100.0 if not a and not b else 200.0 * lcs(a, b) / (len(a) + len(b))
    assert fuzzy_ratio(a, b) == pytest.approx(expected)


# --------------------------------------------------------------------------- sparkline
class TestSparkline:
    ROWS = [("Id", "Jan", "Feb", "Mar", "Chart"), (1, 3, 5, 2, None), (2, 4, 1, 6, None)]

    def _book(self, tmp_path, name, lines):
        # two sheets, the sparklines on the second, so the sheet is found through the workbook's relations
        def edit(ws):
            ws.parent.create_sheet("Notes", 0)
        path = _book(tmp_path, name, self.ROWS, edit=edit)
        add_sparklines(path, "xl/worksheets/sheet2.xml", lines)
        return path

    def test_fixture_holds_real_sparklines_and_opens(self, tmp_path):
        import zipfile
        path = self._book(tmp_path, "r.xlsx", {"E2": "Sheet1!B2:D2"})
        with pytest.warns(UserWarning, match="Sparkline Group extension"):  # openpyxl sees them, and drops them
            assert openpyxl.load_workbook(path).sheetnames == ["Notes", "Sheet1"]
        with zipfile.ZipFile(path) as z:
            assert b"<x14:sparkline><xm:f>Sheet1!B2:D2</xm:f>" in z.read("xl/worksheets/sheet2.xml")

    def test_same_sparklines_pass(self, tmp_path):
        lines = {"E2": "Sheet1!B2:D2", "E3": "Sheet1!B3:D3"}
        r, e = self._book(tmp_path, "r.xlsx", lines), self._book(tmp_path, "e.xlsx", lines)
        assert compare_table(r, e, rules=_pair_rule("sparkline")) == 1.0

    def test_other_data_range_fails(self, tmp_path):
        r = self._book(tmp_path, "r.xlsx", {"E2": "Sheet1!B2:C2", "E3": "Sheet1!B3:D3"})
        e = self._book(tmp_path, "e.xlsx", {"E2": "Sheet1!B2:D2", "E3": "Sheet1!B3:D3"})
        assert compare_table(r, e, rules=_pair_rule("sparkline")) == 0.0

    def test_no_sparklines_fails(self, tmp_path):
        r = _book(tmp_path, "r.xlsx", self.ROWS)
        e = self._book(tmp_path, "e.xlsx", {"E2": "Sheet1!B2:D2"})
        assert compare_table(r, e, rules=_pair_rule("sparkline")) == 0.0


# --------------------------------------------------------------------------- data_validation
def _validated(tmp_path, name, formula, sqref, kind="list"):
    def edit(ws):
        dv = DataValidation(type=kind, formula1=formula, allow_blank=True)
        dv.add(sqref)
        ws.add_data_validation(dv)
    return _book(tmp_path, name, [("Id", "Result"), (1, "Pass")], edit=edit)


PASS_FAIL = {"type": {"method": "eq", "ref": "list"},
             "formula1": {"method": "str_set_eq", "ref": ["Pass", "Fail", "Held"]},
             "ranges": {"method": "spreadsheet_range", "ref": ["B2:B29", "B1:B1048576"]}}


class TestDataValidation:
    def _rule(self, dv_props):
        return [{"type": "data_validation", "sheet_idx": 0, "dv_props": dv_props}]

    def test_matching_validation_passes(self, tmp_path):
        r = _validated(tmp_path, "r.xlsx", '"Held,Pass,Fail"', "B2:B29")
        assert compare_table(r, rules=self._rule([PASS_FAIL])) == 1.0

    def test_whole_column_is_within_the_largest_range(self, tmp_path):
        r = _validated(tmp_path, "r.xlsx", '"Pass,Fail,Held"', "B1:B1048576")
        assert compare_table(r, rules=self._rule([PASS_FAIL])) == 1.0

    def test_other_items_fail(self, tmp_path):
        r = _validated(tmp_path, "r.xlsx", '"Pass,Fail"', "B2:B29")
        assert compare_table(r, rules=self._rule([PASS_FAIL])) == 0.0

    def test_range_too_small_or_too_large_fails(self, tmp_path):
        small = _validated(tmp_path, "s.xlsx", '"Pass,Fail,Held"', "B2:B10")
        wide = _validated(tmp_path, "w.xlsx", '"Pass,Fail,Held"', "B2:C29")
        assert compare_table(small, rules=self._rule([PASS_FAIL])) == 0.0
        assert compare_table(wide, rules=self._rule([PASS_FAIL])) == 0.0

    def test_no_validation_fails(self, tmp_path):
        r = _book(tmp_path, "r.xlsx", [("Id", "Result")])
        assert compare_table(r, rules=self._rule([PASS_FAIL])) == 0.0


# --------------------------------------------------------------------------- row_props / col_props
class TestRowColProps:
    ROWS = [("Date", "Budget"), ("Jan", 10), ("Feb", "N/A"), ("Mar", 12)]

    def _hidden_row(self, tmp_path, name, row):
        def edit(ws):
            ws.row_dimensions[row].hidden = True
        return _book(tmp_path, name, self.ROWS, edit=edit)

    def test_same_hidden_rows_pass(self, tmp_path):
        r, e = self._hidden_row(tmp_path, "r.xlsx", 3), self._hidden_row(tmp_path, "e.xlsx", 3)
        assert compare_table(r, e, rules=_pair_rule("row_props", props=["hidden"])) == 1.0

    def test_other_hidden_row_fails(self, tmp_path):
        r, e = self._hidden_row(tmp_path, "r.xlsx", 4), self._hidden_row(tmp_path, "e.xlsx", 3)
        assert compare_table(r, e, rules=_pair_rule("row_props", props=["hidden"])) == 0.0
        plain = _book(tmp_path, "p.xlsx", self.ROWS)
        assert compare_table(plain, e, rules=_pair_rule("row_props", props=["hidden"])) == 0.0

    def test_rows_listed_with_default_values_equal_rows_not_listed(self, tmp_path):
        def listed(ws):
            ws.row_dimensions[3].hidden = True
            for n in (1, 2, 4, 5, 6):
                ws.row_dimensions[n].hidden = False
        r = _book(tmp_path, "r.xlsx", self.ROWS, edit=listed)
        e = self._hidden_row(tmp_path, "e.xlsx", 3)
        assert compare_table(r, e, rules=_pair_rule("row_props", props=["hidden"])) == 1.0

    def test_column_width_and_hidden(self, tmp_path):
        def wide(ws):
            ws.column_dimensions["B"].width = 30
            ws.column_dimensions["C"].hidden = True
        r, e = _book(tmp_path, "r.xlsx", self.ROWS, edit=wide), _book(tmp_path, "e.xlsx", self.ROWS, edit=wide)
        narrow = _book(tmp_path, "n.xlsx", self.ROWS)
        rule = _pair_rule("col_props", props=["width", "hidden"])
        assert compare_table(r, e, rules=rule) == 1.0
        assert compare_table(narrow, e, rules=rule) == 0.0

    def test_column_groups_compare_per_column(self, tmp_path):
        def grouped(ws):
            ws.column_dimensions.group("B", "D", hidden=True)
        def single(ws):
            for letter in "BCD":
                ws.column_dimensions[letter].hidden = True
        r, e = _book(tmp_path, "r.xlsx", self.ROWS, edit=grouped), _book(tmp_path, "e.xlsx", self.ROWS, edit=single)
        assert compare_table(r, e, rules=_pair_rule("col_props", props=["hidden"])) == 1.0


# --------------------------------------------------------------------------- filter
class TestFilter:
    ROWS = [("Name", "Dept"), ("Ann", "Ops"), ("Bob", "IT"), ("Cy", "Ops")]

    def _filtered(self, tmp_path, name, values=("Ops",), ref="A1:B4", sort=None):
        def edit(ws):
            ws.auto_filter.ref = ref
            if values is not None:
                ws.auto_filter.add_filter_column(1, list(values))
            if sort is not None:
                ws.auto_filter.add_sort_condition(sort, descending=True)
        return _book(tmp_path, name, self.ROWS, edit=edit)

    def test_same_filter_passes(self, tmp_path):
        r, e = self._filtered(tmp_path, "r.xlsx"), self._filtered(tmp_path, "e.xlsx")
        assert compare_table(r, e, rules=_pair_rule("filter")) == 1.0

    def test_other_criteria_fail(self, tmp_path):
        e = self._filtered(tmp_path, "e.xlsx")
        assert compare_table(self._filtered(tmp_path, "a.xlsx", values=("IT",)), e, rules=_pair_rule("filter")) == 0.0
        assert compare_table(self._filtered(tmp_path, "b.xlsx", ref="A1:B3"), e, rules=_pair_rule("filter")) == 0.0
        assert compare_table(_book(tmp_path, "c.xlsx", self.ROWS), e, rules=_pair_rule("filter")) == 0.0

    def test_sort_state_compared(self, tmp_path):
        r = self._filtered(tmp_path, "r.xlsx", sort="B2:B4")
        e = self._filtered(tmp_path, "e.xlsx", sort="B2:B4")
        unsorted = self._filtered(tmp_path, "u.xlsx")
        assert compare_table(r, e, rules=_pair_rule("filter")) == 1.0
        assert compare_table(unsorted, e, rules=_pair_rule("filter")) == 0.0
