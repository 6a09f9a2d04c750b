"""The rule methods of compare_table (check_cell props, zoom, data validation) on real xlsx files:
re.<FLAG>, range.XY, str_list_eq, str_set_eq, spreadsheet_range; each both ways."""
from __future__ import annotations

import openpyxl
import pytest
from openpyxl.worksheet.datavalidation import DataValidation

from desktop_env.evaluators.metrics.table import compare_table
from desktop_env.evaluators.metrics.utils import MATCH_METHODS, OptionError, match_value_to_rule


@pytest.fixture
def book(tmp_path):
    """A sheet with text in A1:A2, a number in B1, a list validation on C2:C20, zoom 80%."""
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "Sheet1"
    ws["A1"], ws["A2"], ws["B1"] = "Total Revenue", "line one\nLine Two", 42.5
    ws["C1"] = "2024,2025"
    dv = DataValidation(type="list", formula1='"2024,2025,2026"')
    dv.add("C2:C20")
    ws.add_data_validation(dv)
    ws.sheet_view.zoomScale = 80
    path = tmp_path / "book.xlsx"
    wb.save(path)
    return str(path)


def cell(book, coordinate, method, ref):
    rule = {"type": "check_cell", "sheet_idx": 0, "coordinate": coordinate,
            "props": {"value": {"method": method, "ref": ref}}}
    return compare_table(book, rules=[rule])


def validation(book, attribute, method, ref):
    rule = {"type": "data_validation", "sheet_idx": "RNSheet1",
            "dv_props": [{attribute: {"method": method, "ref": ref}}]}
    return compare_table(book, rules=[rule])


def zoom(book, method, ref):
    return compare_table(book, rules=[{"type": "zoom", "sheet_idx": 0, "method": method, "ref": ref}])


class TestRegexFlags:
    def test_ignorecase(self, book):
        assert cell(book, "A1", "re", "^total revenue$") == 0.0
        assert cell(book, "A1", "re.I", "^total revenue$") == 1.0
        assert cell(book, "A1", "re.IGNORECASE", "^total revenue$") == 1.0
        assert cell(book, "A1", "re.I", "^total cost$") == 0.0

    def test_flags_combine(self, book):
        assert cell(book, "A2", "re.I", "^line two$") == 0.0
        assert cell(book, "A2", "re.M", "^line two$") == 0.0
        assert cell(book, "A2", "re.I.M", "^line two$") == 1.0
        assert cell(book, "A2", "re.IGNORECASE.MULTILINE", "^line two$") == 1.0
        assert cell(book, "A2", "re.S", "one.Line") == 1.0
        assert cell(book, "A2", "re", "one.Line") == 0.0


class TestRange:
    @pytest.mark.parametrize("method,ref,score", [
        ("range.ee", [42.5, 50], 1.0), ("range.te", [42.5, 50], 0.0), ("range.tt", [40, 45], 1.0),
        ("range.et", [40, 42.5], 0.0), ("range.ee", [40, 42.5], 1.0), ("range.tt", [43, 50], 0.0),
    ])
    def test_cell_value(self, book, method, ref, score):
        assert cell(book, "B1", method, ref) == score

    def test_zoom(self, book):
        assert zoom(book, "range.te", [50, 100]) == 1.0
        assert zoom(book, "range.te", [80, 100]) == 0.0
        assert zoom(book, "range.ee", [80, 100]) == 1.0

    def test_text_against_numbers_does_not_match(self, book):
        assert cell(book, "A1", "range.ee", [0, 100]) == 0.0


class TestStringLists:
    def test_str_list_eq_keeps_order(self, book):
        assert validation(book, "formula1", "str_list_eq", ["2024", "2025", "2026"]) == 1.0
        assert validation(book, "formula1", "str_list_eq", ["2026", "2025", "2024"]) == 0.0
        assert cell(book, "C1", "str_list_eq", ["2024", "2025"]) == 1.0
        assert cell(book, "C1", "str_list_eq", ["2025", "2024"]) == 0.0

    def test_str_set_eq_ignores_order(self, book):
        assert validation(book, "formula1", "str_set_eq", ["2026", "2025", "2024"]) == 1.0
        assert validation(book, "formula1", "str_set_eq", ["2024", "2025"]) == 0.0
        assert validation(book, "formula1", "str_set_eq", [2024, 2025, 2026]) == 1.0


class TestSpreadsheetRange:
    def test_same_cells(self, book):
        assert validation(book, "ranges", "spreadsheet_range", "C2:C20") == 1.0
        assert validation(book, "sqref", "spreadsheet_range", "$C$2:$C$10 C11:C20") == 1.0
        assert validation(book, "ranges", "spreadsheet_range", "C2:C21") == 0.0
        assert validation(book, "ranges", "spreadsheet_range", "C:C") == 0.0

    def test_between_a_smallest_and_a_largest_range(self, book):
        assert validation(book, "ranges", "spreadsheet_range", ["C2:C20", "C:C"]) == 1.0
        assert validation(book, "ranges", "spreadsheet_range", ["C2:C10", "C1:C1048576"]) == 1.0
        assert validation(book, "ranges", "spreadsheet_range", ["C2:C29", "C:C"]) == 0.0
        assert validation(book, "ranges", "spreadsheet_range", ["C2:C10", "C1:C15"]) == 0.0

    def test_a_range_string_in_a_cell(self, book):
        assert cell(book, "C1", "spreadsheet_range", "A1") == 0.0


@pytest.mark.parametrize("value,rule,expected", [
    ("A1:B5", {"method": "spreadsheet_range", "ref": "A1:A5 B1:B5"}, True),
    ("A1:A5,B1:B4", {"method": "spreadsheet_range", "ref": "A1:B5"}, False),
    ("Sheet1!$A$1:$B$5", {"method": "spreadsheet_range", "ref": "A1:B5"}, True),
    (None, {"method": "str_set_eq", "ref": ["a"]}, False),
    (None, {"method": "re.I", "ref": "x"}, False),
    (None, {"method": "range.ee", "ref": [0, 1]}, False),
    ("abc", {"method": "approx:0.1", "ref": 1}, False),
    (1.05, {"method": "approx:0.1", "ref": 1}, True),
    (1.05, {"ref": 1.05}, True),
])
def test_match_value_to_rule_edges(value, rule, expected):
    assert match_value_to_rule(value, rule) is expected


def test_every_method_has_doc_and_spelling():
    for name, spec in MATCH_METHODS.items():
        assert spec.name == name and spec.doc and spec.spelling.startswith(name)


def test_scoring_refuses_an_unknown_method(book):
    with pytest.raises(OptionError, match="did you mean 'approx'"):
        cell(book, "B1", "aprox:0.1", 42)
