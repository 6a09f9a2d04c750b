"""compare_csv and compare_table on real CSV and xlsx files (data, pivot tables, charts, styles, cells)."""
from __future__ import annotations

import pytest

from desktop_env.evaluators.metrics.csv_files import compare_csv
from desktop_env.evaluators.metrics.table import compare_table
from desktop_env.evaluators.metrics.utils import MetricError


def _csv(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(text)
    return str(p)


class TestCompareCsv:
    def test_same_rows_pass(self, tmp_path):
        a = _csv(tmp_path, "a.csv", "name,total\na,1\nb,2\n")
        b = _csv(tmp_path, "b.csv", "name,total\na,1\nb,2\n")
        assert compare_csv(a, b) == 1.0

    def test_different_value_fails(self, tmp_path):
        a = _csv(tmp_path, "a.csv", "name,total\na,1\nb,3\n")
        b = _csv(tmp_path, "b.csv", "name,total\na,1\nb,2\n")
        assert compare_csv(a, b) == 0.0

    def test_missing_result_scores_zero(self, tmp_path):
        b = _csv(tmp_path, "b.csv", "x\n")
        assert compare_csv(None, b) == 0.0
        assert compare_csv(str(tmp_path / "absent.csv"), b) == 0.0

    def test_ignore_order_and_case(self, tmp_path):
        a = _csv(tmp_path, "a.csv", "Name,Total\nB,2\nA,1\n")
        b = _csv(tmp_path, "b.csv", "name,total\na,1\nb,2\n")
        assert compare_csv(a, b) == 0.0
        assert compare_csv(a, b, ignore_order=True, ignore_case=True) == 1.0

    def test_not_strict_strips_cells_and_blank_lines(self, tmp_path):
        a = _csv(tmp_path, "a.csv", "name, total\n a,1\n\n")
        b = _csv(tmp_path, "b.csv", "name,total\na,1\n")
        assert compare_csv(a, b) == 0.0
        assert compare_csv(a, b, strict=False) == 1.0

    def test_tolerance(self, tmp_path):
        a = _csv(tmp_path, "a.csv", "v\n1.0001\n")
        b = _csv(tmp_path, "b.csv", "v\n1.0\n")
        assert compare_csv(a, b) == 0.0
        assert compare_csv(a, b, tolerance=0.001) == 1.0


def _data_rule(i0=0, i1="EI0", **kw):
    return {"type": "sheet_data", "sheet_idx0": i0, "sheet_idx1": i1, **kw}


class TestSheetData:
    def test_equal_books_pass(self, make_xlsx):
        r, e = make_xlsx("r.xlsx"), make_xlsx("e.xlsx")
        assert compare_table(str(r), str(e), rules=[_data_rule()]) == 1.0

    def test_changed_cell_fails(self, make_xlsx, rows):
        rows[2][2] = 21
        r, e = make_xlsx("r.xlsx", rows=rows), make_xlsx("e.xlsx")
        assert compare_table(str(r), str(e), rules=[_data_rule()]) == 0.0

    def test_precision(self, make_xlsx, rows):
        rows[4][2] = 7.25004
        r, e = make_xlsx("r.xlsx", rows=rows), make_xlsx("e.xlsx")
        assert compare_table(str(r), str(e), rules=[_data_rule(precision=4)]) == 1.0
        assert compare_table(str(r), str(e), rules=[_data_rule(precision=6)]) == 0.0

    @pytest.mark.parametrize("ref0,ref1", [(0, "EI0"), ("RI0", "EI0"), ("RNData", "ENData"), ("RNData", "EI0")])
    def test_sheet_reference_forms(self, make_xlsx, ref0, ref1):
        r, e = make_xlsx("r.xlsx"), make_xlsx("e.xlsx")
        assert compare_table(str(r), str(e), rules=[_data_rule(ref0, ref1)]) == 1.0

    def test_missing_sheet_fails(self, make_xlsx):
        r, e = make_xlsx("r.xlsx"), make_xlsx("e.xlsx")
        assert compare_table(str(r), str(e), rules=[_data_rule("RNNope", "EI0")]) == 0.0
        assert compare_table(str(r), str(e), rules=[_data_rule("RI5", "EI0")]) == 0.0

    def test_result_against_itself_without_expected(self, make_xlsx):
        r = make_xlsx("r.xlsx", extra_sheet="Copy")
        assert compare_table(str(r), None, rules=[_data_rule("RI0", "RNData")]) == 1.0
        assert compare_table(str(r), None, rules=[_data_rule("RI0", "RNCopy")]) == 0.0

    def test_bad_reference_is_an_error(self, make_xlsx):
        r, e = make_xlsx("r.xlsx"), make_xlsx("e.xlsx")
        with pytest.raises(MetricError, match="bad sheet reference"):
            compare_table(str(r), str(e), rules=[_data_rule("XX0", "EI0")])

    def test_sheet_name_rule(self, make_xlsx):
        r, e = make_xlsx("r.xlsx", extra_sheet="Notes"), make_xlsx("e.xlsx")
        assert compare_table(str(r), str(e), rules=[{"type": "sheet_name"}]) == 0.0
        assert compare_table(str(e), str(e), rules=[{"type": "sheet_name"}]) == 1.0

    def test_missing_or_corrupt_result_scores_zero(self, make_xlsx, tmp_path):
        e = make_xlsx("e.xlsx")
        bad = tmp_path / "bad.xlsx"
        bad.write_bytes(b"PK\x03\x04 not really a zip")
        assert compare_table(str(tmp_path / "none.xlsx"), str(e), rules=[_data_rule()]) == 0.0
        assert compare_table(str(bad), str(e), rules=[_data_rule()]) == 0.0

    def test_unknown_rule_type_is_an_error(self, make_xlsx):
        r = make_xlsx("r.xlsx")
        with pytest.raises(MetricError, match="unknown compare_table rule type"):
            compare_table(str(r), str(r), rules=[{"type": "sheet_dataa", "sheet_idx0": 0, "sheet_idx1": "EI0"}])


PIVOT_PROPS = ["name", "location", "row_fields", "data_fields", "show_total", "selection"]


class TestPivotTable:
    def _rule(self, props=PIVOT_PROPS):
        return [{"type": "pivot_table", "sheet_idx0": "RNPivot", "sheet_idx1": "ENPivot", "pivot_props": props}]

    def test_fixture_holds_a_real_pivot(self, make_xlsx):
        import openpyxl
        path = make_xlsx("r.xlsx", pivot={})
        pivots = openpyxl.load_workbook(path)["Pivot"]._pivots
        assert len(pivots) == 1 and pivots[0].cache.cacheSource.worksheetSource.ref == "A1:C5"

    def test_same_pivot_passes(self, make_xlsx):
        r, e = make_xlsx("r.xlsx", pivot={}), make_xlsx("e.xlsx", pivot={})
        assert compare_table(str(r), str(e), rules=self._rule()) == 1.0

    def test_other_row_field_fails(self, make_xlsx):
        r, e = make_xlsx("r.xlsx", pivot={"row_field": 1}), make_xlsx("e.xlsx", pivot={})
        assert compare_table(str(r), str(e), rules=self._rule()) == 0.0

    def test_other_aggregation_fails(self, make_xlsx):
        r, e = make_xlsx("r.xlsx", pivot={"agg": "average"}), make_xlsx("e.xlsx", pivot={})
        assert compare_table(str(r), str(e), rules=self._rule()) == 0.0

    def test_missing_pivot_fails(self, make_xlsx):
        r, e = make_xlsx("r.xlsx", extra_sheet="Pivot"), make_xlsx("e.xlsx", pivot={})
        assert compare_table(str(r), str(e), rules=self._rule()) == 0.0

    def test_name_only_compared_when_asked(self, make_xlsx):
        r, e = make_xlsx("r.xlsx", pivot={"name": "Other"}), make_xlsx("e.xlsx", pivot={})
        assert compare_table(str(r), str(e), rules=self._rule(["row_fields", "data_fields"])) == 1.0
        assert compare_table(str(r), str(e), rules=self._rule(["name"])) == 0.0


class TestChart:
    def _rule(self, props=("type", "title")):
        return [{"type": "chart", "sheet_idx0": 0, "sheet_idx1": "EI0", "chart_props": list(props)}]

    def test_same_chart_passes(self, make_xlsx):
        r, e = make_xlsx("r.xlsx", chart={}), make_xlsx("e.xlsx", chart={})
        assert compare_table(str(r), str(e), rules=self._rule()) == 1.0

    def test_other_chart_type_fails(self, make_xlsx):
        r, e = make_xlsx("r.xlsx", chart={"kind": "line"}), make_xlsx("e.xlsx", chart={})
        assert compare_table(str(r), str(e), rules=self._rule()) == 0.0

    def test_other_title_fails(self, make_xlsx):
        r, e = make_xlsx("r.xlsx", chart={"title": "Oops"}), make_xlsx("e.xlsx", chart={})
        assert compare_table(str(r), str(e), rules=self._rule()) == 0.0

    def test_no_chart_fails(self, make_xlsx):
        r, e = make_xlsx("r.xlsx"), make_xlsx("e.xlsx", chart={})
        assert compare_table(str(r), str(e), rules=self._rule()) == 0.0


class TestStyle:
    def test_same_style_passes(self, make_xlsx):
        r, e = make_xlsx("r.xlsx", fill="FFFF0000"), make_xlsx("e.xlsx", fill="FFFF0000")
        rule = {"type": "style", "sheet_idx0": 0, "sheet_idx1": "EI0", "props": ["font_bold", "fgcolor"]}
        assert compare_table(str(r), str(e), rules=[rule]) == 1.0

    def test_missing_bold_fails(self, make_xlsx):
        r, e = make_xlsx("r.xlsx", bold_header=False), make_xlsx("e.xlsx")
        rule = {"type": "style", "sheet_idx0": 0, "sheet_idx1": "EI0", "props": ["font_bold"]}
        assert compare_table(str(r), str(e), rules=[rule]) == 0.0

    def test_other_fill_fails(self, make_xlsx):
        r, e = make_xlsx("r.xlsx", fill="FF00FF00"), make_xlsx("e.xlsx", fill="FFFF0000")
        rule = {"type": "style", "sheet_idx0": 0, "sheet_idx1": "EI0", "props": ["fgcolor"]}
        assert compare_table(str(r), str(e), rules=[rule]) == 0.0


class TestCheckCell:
    def _rule(self, coordinate, props, sheet="RI0"):
        return [{"type": "check_cell", "sheet_idx": sheet, "coordinate": coordinate, "props": props}]

    def test_value_and_style_pass(self, make_xlsx):
        r = make_xlsx("r.xlsx")
        props = {"value": {"method": "eq", "ref": "Region"}, "font_bold": {"method": "eq", "ref": True}}
        assert compare_table(str(r), rules=self._rule("A1", props)) == 1.0

    def test_value_mismatch_fails(self, make_xlsx):
        r = make_xlsx("r.xlsx")
        assert compare_table(str(r), rules=self._rule("C3", {"value": {"method": "gt", "ref": 20}})) == 0.0
        assert compare_table(str(r), rules=self._rule("C3", {"value": {"method": "ge", "ref": 20}})) == 1.0

    def test_approx_and_regex_methods(self, make_xlsx):
        r = make_xlsx("r.xlsx")
        assert compare_table(str(r), rules=self._rule("C5", {"value": {"method": "approx:0.01", "ref": 7.249}})) == 1.0
        assert compare_table(str(r), rules=self._rule("B2", {"value": {"method": "re", "ref": "^[AB]$"}})) == 1.0
        assert compare_table(str(r), rules=self._rule("A2", {"value": {"method": "re", "ref": "^W"}})) == 0.0

    def test_formula(self, make_xlsx):
        r = make_xlsx("r.xlsx", formula=True)
        assert compare_table(str(r), rules=self._rule("C6", {"formula": {"method": "eq", "ref": "=SUM(C2:C5)"}})) == 1.0
        assert compare_table(str(r), rules=self._rule("C6", {"formula": {"method": "eq", "ref": "=SUM(C2:C4)"}})) == 0.0

    def test_expected_sheet_reference(self, make_xlsx):
        r, e = make_xlsx("r.xlsx"), make_xlsx("e.xlsx")
        assert compare_table(str(r), str(e), rules=self._rule("A2", {"value": {"method": "eq", "ref": "East"}}, "EN" + "Data")) == 1.0


def test_rules_run_in_order_and_all_must_pass(make_xlsx):
    r, e = make_xlsx("r.xlsx", pivot={}, chart={}), make_xlsx("e.xlsx", pivot={}, chart={})
    rules = [_data_rule(), {"type": "pivot_table", "sheet_idx0": "RNPivot", "sheet_idx1": "ENPivot",
                            "pivot_props": PIVOT_PROPS},
             {"type": "chart", "sheet_idx0": 0, "sheet_idx1": "EI0", "chart_props": ["type"]}]
    assert compare_table(str(r), str(e), rules=rules) == 1.0
    rules.append({"type": "check_cell", "sheet_idx": 0, "coordinate": "A1", "props": {"value": {"method": "eq", "ref": "Nope"}}})
    assert compare_table(str(r), str(e), rules=rules) == 0.0
