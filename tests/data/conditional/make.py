"""Make the conditional-formatting fixtures: each workbook is written by openpyxl, then opened and saved
as xlsx by LibreOffice Calc (``soffice --convert-to xlsx``), so the files hold rules, differential styles
and cached values as Calc writes them when a user saves a sheet.

Run from this folder with LibreOffice installed (``apt-get install libreoffice-calc-nogui``):
``python3 make.py``. The tests read the committed .xlsx files; they do not need LibreOffice.
"""
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import openpyxl
from openpyxl.formatting.rule import CellIsRule, FormulaRule, Rule
from openpyxl.styles import Font, PatternFill
from openpyxl.styles.differential import DifferentialStyle

HERE = Path(__file__).resolve().parent
ROWS = [("name", "score", "double"), ("ann", 30), ("bob", 70), ("cy", 55), ("dee", 10), ("eve", 90), ("bob", 40)]
RED = PatternFill(start_color="FFFF0000", end_color="FFFF0000", fill_type="solid")
WHITE_BOLD = Font(bold=True, color="FFFFFFFF")


def scores(ws):
    for i, row in enumerate(ROWS, start=1):
        ws.append(list(row) + ([f"=B{i}*2"] if i > 1 else []))


def gold(ws):  # "make the scores over 50 white on red"
    ws.conditional_formatting.add("B2:B7", CellIsRule(operator="greaterThan", formula=["50"], fill=RED, font=WHITE_BOLD))


def by_expression(ws):  # the same highlighting through a formula rule
    ws.conditional_formatting.add("B2:B7", FormulaRule(formula=["$B2>50"], fill=RED, font=WHITE_BOLD))


def other_threshold(ws):
    ws.conditional_formatting.add("B2:B7", CellIsRule(operator="greaterThan", formula=["60"], fill=RED, font=WHITE_BOLD))


def other_colour(ws):
    blue = PatternFill(start_color="FF0000FF", end_color="FF0000FF", fill_type="solid")
    ws.conditional_formatting.add("B2:B7", CellIsRule(operator="greaterThan", formula=["50"], fill=blue, font=WHITE_BOLD))


def many_rules(ws):
    """One rule of each evaluated kind, on its own column, with a distinct style."""
    def dxf(colour):
        return DifferentialStyle(fill=PatternFill(bgColor=colour))
    ws.conditional_formatting.add("A2:A7", Rule(type="containsText", operator="containsText", text="e",
                                                formula=['NOT(ISERROR(SEARCH("e",A2)))'], dxf=dxf("FF00FF00")))
    ws.conditional_formatting.add("A2:A7", Rule(type="duplicateValues", dxf=DifferentialStyle(font=Font(italic=True))))
    ws.conditional_formatting.add("B2:B7", Rule(type="top10", rank=2, dxf=dxf("FFFFFF00")))
    ws.conditional_formatting.add("C2:C7", Rule(type="aboveAverage", dxf=dxf("FF00FFFF")))
    ws.conditional_formatting.add("C2:C7", FormulaRule(formula=["MOD(ROW(),2)=0"], font=Font(bold=True)))
    ws.conditional_formatting.add("B2:B7", CellIsRule(operator="between", formula=["$B$3", "30"], font=Font(underline="single")))


WORKBOOKS = {"gold": gold, "by_expression": by_expression, "other_threshold": other_threshold,
             "other_colour": other_colour, "none": lambda ws: None, "many_rules": many_rules}


def main():
    soffice = shutil.which("soffice")
    if soffice is None:
        raise SystemExit("soffice is missing: apt-get install libreoffice-calc-nogui")
    with tempfile.TemporaryDirectory() as tmp:
        for name, edit in WORKBOOKS.items():
            wb = openpyxl.Workbook()
            ws = wb.active
            ws.title = "Scores"
            scores(ws)
            edit(ws)
            wb.save(Path(tmp) / f"{name}.xlsx")
            out = Path(tmp) / "out"
            subprocess.run([soffice, "--headless", "--convert-to", "xlsx:Calc MS Excel 2007 XML", "--outdir", str(out),
                            str(Path(tmp) / f"{name}.xlsx")], check=True, env={**os.environ, "HOME": tmp},
                           stdout=subprocess.DEVNULL)
            shutil.copy(out / f"{name}.xlsx", HERE / f"{name}.xlsx")
            print(f"{name}.xlsx")


if __name__ == "__main__":
    main()
