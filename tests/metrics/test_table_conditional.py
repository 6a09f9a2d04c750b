"""compare_table reads styles as shown: conditional formats count (tests/data/conditional, written by Calc).

The fixtures are workbooks LibreOffice Calc saved (tests/data/conditional/make.py): scores in B2:B7
(30, 70, 55, 10, 90, 40) and their doubles in C as cached formula results. ``gold`` paints the scores
over 50 white on red with a cellIs rule; ``by_expression`` does the same with a formula rule.
"""
from pathlib import Path

import openpyxl
import pytest
from openpyxl.formatting.rule import CellIsRule, FormulaRule
from openpyxl.styles import Font, PatternFill

from desktop_env.evaluators.metrics.conditional import UnsupportedConditionalFormat, conditional_overlay
from desktop_env.evaluators.metrics.formula import Formula, Scope, UnsupportedFormula
from desktop_env.evaluators.metrics.table import compare_table

DATA = Path(__file__).resolve().parent.parent / "data" / "conditional"
SHOWN = ["font_bold", "font_color", "fill_type", "fgcolor", "bgcolor"]


def _style_rule(props=SHOWN):
    return [{"type": "style", "sheet_idx0": 0, "sheet_idx1": "EI0", "props": props}]


def _overlay(path):
    return conditional_overlay(openpyxl.load_workbook(path).active, openpyxl.load_workbook(path, data_only=True).active)


class TestStyleRuleSeesConditionalFormats:
    def test_the_gold_book_matches_itself(self):
        assert compare_table(DATA / "gold.xlsx", DATA / "gold.xlsx", rules=_style_rule()) == 1.0

    def test_the_same_look_through_a_formula_rule_passes(self):
        assert compare_table(DATA / "by_expression.xlsx", DATA / "gold.xlsx", rules=_style_rule()) == 1.0

    def test_a_sheet_without_the_formatting_fails(self):
        # before conditional formats were evaluated, both sheets read unstyled and this scored 1
        assert compare_table(DATA / "none.xlsx", DATA / "gold.xlsx", rules=_style_rule()) == 0.0

    def test_another_threshold_fails(self):
        assert compare_table(DATA / "other_threshold.xlsx", DATA / "gold.xlsx", rules=_style_rule()) == 0.0

    def test_another_colour_fails(self):
        assert compare_table(DATA / "other_colour.xlsx", DATA / "gold.xlsx", rules=_style_rule()) == 0.0

    def test_check_cell_reads_the_shown_fill(self):
        def rule(cell, colour):
            return [{"type": "check_cell", "sheet_idx": 0, "coordinate": cell,
                     "props": {"bgcolor": {"method": "eq", "ref": colour}}}]
        assert compare_table(DATA / "gold.xlsx", rules=rule("B3", "FFFF0000")) == 1.0  # 70
        assert compare_table(DATA / "gold.xlsx", rules=rule("B2", "FFFF0000")) == 0.0  # 30
        assert compare_table(DATA / "none.xlsx", rules=rule("B3", "FFFF0000")) == 0.0


def test_each_rule_kind_paints_the_cells_calc_paints():
    shown = _overlay(DATA / "many_rules.xlsx")
    def cells(prop, value):
        return sorted(k for k, v in shown.items() if v.get(prop) == value)
    assert cells("bgcolor", "FF00FF00") == ["A5", "A6"]               # names containing "e": dee, eve
    assert cells("font_italic", True) == ["A3", "A7"]                 # duplicate names: bob twice
    assert cells("bgcolor", "FFFFFF00") == ["B3", "B6"]               # top 2 scores: 70, 90
    assert cells("font_underline", "single") == ["B2", "B3", "B4", "B7"]  # between $B$3 (70) and 30
    assert cells("bgcolor", "FF00FFFF") == ["C3", "C4", "C6"]         # above the average double (98.3)
    assert cells("font_bold", True) == ["C2", "C4", "C6"]             # MOD(ROW(),2)=0


def test_the_first_rule_wins_a_property_and_stop_if_true_ends_the_list(tmp_path):
    wb = openpyxl.Workbook()
    ws = wb.active
    for v in (1, 5, 9):
        ws.append([v])
    red = PatternFill(start_color="FFFF0000", end_color="FFFF0000", fill_type="solid")
    blue = PatternFill(start_color="FF0000FF", end_color="FF0000FF", fill_type="solid")
    ws.conditional_formatting.add("A1:A3", CellIsRule(operator="greaterThan", formula=["8"], fill=red,
                                                      stopIfTrue=True))
    ws.conditional_formatting.add("A1:A3", CellIsRule(operator="greaterThan", formula=["4"], fill=blue,
                                                      font=Font(bold=True)))
    path = tmp_path / "rules.xlsx"
    wb.save(path)
    shown = _overlay(path)
    assert shown["A3"] == {"fill_type": "solid", "fgcolor": "FFFF0000", "bgcolor": "FFFF0000"}  # stopped: not bold
    assert shown["A2"] == {"fill_type": "solid", "fgcolor": "FF0000FF", "bgcolor": "FF0000FF", "font_bold": True}
    assert "A1" not in shown


def test_a_function_the_evaluator_does_not_know_is_not_scored(tmp_path):
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.append([1])
    ws.conditional_formatting.add("A1", FormulaRule(formula=["WEEKDAY(A1)=1"], font=Font(bold=True)))
    path = tmp_path / "weekday.xlsx"
    wb.save(path)
    # not a MetricError (that would blame the task): the harness records an evaluator error, no score
    with pytest.raises(UnsupportedConditionalFormat, match="WEEKDAY"):
        compare_table(path, path, rules=_style_rule())


def test_a_whole_column_rule_visits_only_the_used_range(tmp_path):
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.append([60])
    ws.append([None])
    ws.append([40])
    ws.conditional_formatting.add("A1:A1048576", CellIsRule(operator="lessThan", formula=["50"], font=Font(bold=True)))
    path = tmp_path / "column.xlsx"
    wb.save(path)
    # Excel reads an empty cell as 0 (< 50): A2 is painted; nothing past the used range is visited
    assert sorted(_overlay(path)) == ["A2", "A3"]


# --------------------------------------------------------------------------- the formula interpreter (formula.py)
SHEET = {(1, 1): 10.0, (2, 1): 20.0, (3, 1): "Text", (1, 2): None, (2, 2): 0.0, (3, 2): True}


def _eval(formula, row=1, col=1, anchor=(1, 1)):
    scope = Scope(lambda r, c: SHEET.get((r, c)), row, col, row - anchor[0], col - anchor[1])
    return Formula(formula)(scope)


@pytest.mark.parametrize("formula,value", [
    ("1+2*3", 7.0), ("(1+2)*3", 9.0), ("2^3^2", 64.0), ("-2^2", 4.0), ("50%", 0.5), ("\"a\"&1", "a1"),
    ("A1+A2", 30.0), ("$A$1*2", 20.0), ("A3=\"text\"", True), ("A3>100", True), ("B1=0", True), ("B1=\"\"", True),
    ("ISBLANK(B1)", True), ("ISBLANK(B2)", False), ("AND(A1>5,A2<30)", True), ("OR(A1>50,B3)", True),
    ("NOT(A1=10)", False), ("MOD(ROW(),2)", 1.0), ("COLUMN()", 1.0), ("IF(A1>5,\"big\",\"small\")", "big"),
    ("SUM(A1:A3)", 30.0), ("AVERAGE(A1:A2)", 15.0), ("MAX(A1:B3)", 20.0), ("COUNTA(A1:B3)", 5.0),
    ("COUNTIF(A1:A3,\">15\")", 1.0), ("COUNTIF(A1:A3,\"te*\")", 1.0), ("LEFT(A3,2)", "Te"), ("LEN(A3)", 4.0),
    ("ISNUMBER(SEARCH(\"ex\",A3))", True), ("ISERROR(FIND(\"ex\",\"TEXT\"))", True), ("TRIM(\"  a   b \")", "a b"),
    ("ISERROR(1/0)", True), ("UPPER(A3)=\"TEXT\"", True), ("VALUE(\"3\")+1", 4.0),
])
def test_formula_values(formula, value):
    assert _eval(formula) == value


def test_relative_references_move_with_the_cell_and_absolute_ones_do_not():
    # written at A1 (the anchor); evaluated at A2: A1 reads A2, $A$1 stays, A$1 keeps its row
    assert _eval("A1", row=2) == 20.0
    assert _eval("$A$1", row=2) == 10.0
    assert _eval("B$1", row=3, col=1) is None
    assert _eval("A1", row=1, col=2) is None  # moved to B1 (empty)


def test_an_error_makes_comparisons_errors_not_true():
    assert str(_eval("1/0>0")) == "#DIV/0!"
    assert str(_eval("A3+1")) == "#VALUE!"


@pytest.mark.parametrize("formula", ["Other!A1>0", "A1>", "UNKNOWNFN(A1)"])
def test_formulas_that_cannot_be_read_say_so(formula):
    with pytest.raises(UnsupportedFormula):
        Formula(formula)
