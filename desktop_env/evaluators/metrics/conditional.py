"""Conditional formatting as a spreadsheet shows it: the style each cell gets from the sheet's rules.

openpyxl reads the style stored on a cell. A cell that Calc or Excel paints red through a conditional
rule ("scores over 50") stores none, so without this module a sheet highlighted correctly and a sheet
not highlighted at all read the same. :func:`conditional_overlay` evaluates the rules of a sheet
against its cached cell values and returns, per cell, the style properties the applying rules set
(the names of :data:`desktop_env.evaluators.metrics.table.STYLE_READERS`).

Rules apply in priority order (lowest number first); a property set by an earlier rule wins, and
``stopIfTrue`` ends the list for that cell (ECMA-376, 18.3.1.10). Rule types evaluated: ``cellIs``,
``expression``, ``containsText``/``notContainsText``/``beginsWith``/``endsWith``,
``containsBlanks``/``notContainsBlanks``, ``containsErrors``/``notContainsErrors``,
``duplicateValues``/``uniqueValues``, ``top10`` and ``aboveAverage``. Colour scales, data bars and icon
sets set no cell style and are skipped. Formulas are evaluated by
:mod:`desktop_env.evaluators.metrics.formula`; a function it does not know, a reference to another
sheet or a ``timePeriod`` rule raises :class:`UnsupportedConditionalFormat`, which the harness records
as an evaluator error (no score) rather than guess.

Only cells inside the sheet's used range are evaluated (a rule on a whole column does not visit a
million empty cells), and aggregates (duplicates, top N, average) are taken over those cells.
"""
from __future__ import annotations

import math
from typing import Any, Callable

from openpyxl.styles import PatternFill
from openpyxl.utils.cell import get_column_letter, range_boundaries

from desktop_env.evaluators.metrics.formula import (Formula, Scope, UnsupportedFormula, XLError, as_text, compare,
                                                    is_error, scalar, truth)


class UnsupportedConditionalFormat(Exception):
    """A conditional rule this module cannot evaluate (an unknown function, another sheet, a time period).

    Not a task error: the sheet is one a user may make. The harness records it as an evaluator error.
    """


# --------------------------------------------------------------------------- rules
_CELL_IS: dict[str, Callable[[Any, list], bool]] = {
    "equal": lambda v, o: compare(v, o[0]) == 0,
    "notEqual": lambda v, o: _holds(compare(v, o[0]), lambda c: c != 0),
    "greaterThan": lambda v, o: _holds(compare(v, o[0]), lambda c: c > 0),
    "lessThan": lambda v, o: _holds(compare(v, o[0]), lambda c: c < 0),
    "greaterThanOrEqual": lambda v, o: _holds(compare(v, o[0]), lambda c: c >= 0),
    "lessThanOrEqual": lambda v, o: _holds(compare(v, o[0]), lambda c: c <= 0),
    "between": lambda v, o: _between(v, o),
    "notBetween": lambda v, o: len(o) == 2 and not _between(v, o) and not is_error(v),
}


def _holds(c, test) -> bool:
    return not isinstance(c, XLError) and test(c)


def _between(v, operands) -> bool:
    if len(operands) != 2:
        return False
    low, high = operands
    if _holds(compare(low, high), lambda c: c > 0):
        low, high = high, low
    return _holds(compare(v, low), lambda c: c >= 0) and _holds(compare(v, high), lambda c: c <= 0)


def _fill_props(fill) -> dict[str, Any]:
    """A differential fill as the style readers name it. Calc writes a solid conditional fill as a bare
    ``bgColor`` (no pattern type), openpyxl as ``solid`` with ``fgColor``: both read as fill_type solid with
    fgcolor and bgcolor the colour shown."""
    def rgb(color):
        value = getattr(color, "rgb", None)
        return value if isinstance(value, str) and value != "00000000" else None
    fg, bg = rgb(fill.fgColor), rgb(fill.bgColor)
    kind = fill.fill_type
    if kind not in (None, "solid"):
        return {"fill_type": kind, "fgcolor": fg, "bgcolor": bg}
    shown = fg if kind == "solid" and fg else bg or fg
    return {"fill_type": "solid", "fgcolor": shown, "bgcolor": shown} if shown else {}


def dxf_props(dxf) -> dict[str, Any]:
    """The style properties a differential style (a conditional rule's format) sets."""
    out: dict[str, Any] = {}
    if dxf is None:
        return out
    font = dxf.font
    if font is not None:
        for prop, value in (("font_name", font.name), ("font_size", font.sz), ("font_underline", font.u)):
            if value is not None:
                out[prop] = value
        for prop, value in (("font_bold", font.b), ("font_italic", font.i)):
            if value:  # openpyxl reads an absent <b/> as False: only a set flag is the rule's
                out[prop] = True
        if font.color is not None and isinstance(getattr(font.color, "rgb", None), str):
            out["font_color"] = font.color.rgb
    if isinstance(dxf.fill, PatternFill):
        out.update(_fill_props(dxf.fill))
    if dxf.numFmt is not None and dxf.numFmt.formatCode:
        out["number_format"] = dxf.numFmt.formatCode
    return out


class _RuleEval:
    """One conditional rule over the cells of its range: ``applies(row, col)``."""

    def __init__(self, rule, cells: list[tuple[int, int]], anchor: tuple[int, int], values, where: str):
        self.rule, self.cells, self.anchor, self.values, self.where = rule, cells, anchor, values, where
        kind = rule.type
        try:
            self.formulas = [Formula(f) for f in (rule.formula or [])]
        except UnsupportedFormula as exc:
            raise UnsupportedConditionalFormat(f"{where}: {exc}") from exc
        if kind == "timePeriod":
            raise UnsupportedConditionalFormat(f"{where}: a 'timePeriod' rule depends on today's date; not evaluated")
        if kind == "cellIs" and rule.operator not in _CELL_IS:
            raise UnsupportedConditionalFormat(f"{where}: unknown cellIs operator {rule.operator!r}")
        if kind == "expression" and not self.formulas:
            raise UnsupportedConditionalFormat(f"{where}: an expression rule without a formula")
        self._range_values = None

    def _scope(self, row: int, col: int) -> Scope:
        return Scope(self.values, row, col, row - self.anchor[0], col - self.anchor[1])

    def _in_range(self) -> list[Any]:
        if self._range_values is None:
            self._range_values = [self.values(r, c) for r, c in self.cells]
        return self._range_values

    def applies(self, row: int, col: int) -> bool:
        rule, value = self.rule, self.values(row, col)
        kind = rule.type
        if kind == "cellIs":
            operands = [scalar(f(self._scope(row, col))) for f in self.formulas]
            return not is_error(value) and _CELL_IS[rule.operator](value, operands)
        if kind == "expression":
            t = truth(scalar(self.formulas[0](self._scope(row, col))))
            return t is True
        if kind in ("containsText", "notContainsText", "beginsWith", "endsWith"):
            if rule.text is None or rule.text == "":
                if not self.formulas:
                    return False
                return truth(scalar(self.formulas[0](self._scope(row, col)))) is True
            if is_error(value):
                return False
            text, needle = as_text(value).lower(), rule.text.lower()
            return {"containsText": needle in text, "notContainsText": needle not in text,
                    "beginsWith": text.startswith(needle), "endsWith": text.endswith(needle)}[kind]
        if kind in ("containsBlanks", "notContainsBlanks"):
            blank = value is None or (isinstance(value, str) and not value.strip())
            return blank == (kind == "containsBlanks")
        if kind in ("containsErrors", "notContainsErrors"):
            return is_error(value) == (kind == "containsErrors")
        if kind in ("duplicateValues", "uniqueValues"):
            if value is None:
                return False
            same = sum(1 for v in self._in_range() if v is not None and compare(v, value) == 0)
            return (same > 1) == (kind == "duplicateValues")
        if kind == "top10":
            return self._top(value)
        if kind == "aboveAverage":
            return self._average(value)
        return False  # colorScale, dataBar, iconSet: no cell style

    def _numbers(self) -> list[float]:
        return [float(v) for v in self._in_range() if isinstance(v, (int, float)) and not isinstance(v, bool)]

    def _top(self, value) -> bool:
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            return False
        nums = sorted(self._numbers(), reverse=not self.rule.bottom)
        rank = self.rule.rank or 10
        count = max(1, int(len(nums) * rank / 100)) if self.rule.percent else rank
        if not nums:
            return False
        edge = nums[min(count, len(nums)) - 1]
        return value <= edge if self.rule.bottom else value >= edge

    def _average(self, value) -> bool:
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            return False
        nums = self._numbers()
        if not nums:
            return False
        mean = sum(nums) / len(nums)
        above = self.rule.aboveAverage is not False
        if self.rule.stdDev:
            sd = math.sqrt(sum((x - mean) ** 2 for x in nums) / len(nums))
            edge = mean + self.rule.stdDev * sd if above else mean - self.rule.stdDev * sd
        else:
            edge = mean
        if self.rule.equalAverage and value == edge:
            return True
        return value > edge if above else value < edge


def conditional_overlay(styles_ws, values_ws) -> dict[str, dict[str, Any]]:
    """coordinate -> {style property: value} that the conditional rules of a sheet set on that cell.

    Args:
        styles_ws: the sheet as read with formulas and styles (holds the rules).
        values_ws: the same sheet read with cached values (``data_only``), which the rules test.

    Raises:
        UnsupportedConditionalFormat: a rule that cannot be evaluated here.
    """
    max_row, max_col = values_ws.max_row, values_ws.max_column

    def values(row: int, col: int) -> Any:
        if row < 1 or col < 1:
            return XLError("#REF!")
        if row > max_row or col > max_col:
            return None
        return values_ws.cell(row=row, column=col).value

    evaluated = []
    for cf in styles_ws.conditional_formatting:
        ranges = list(cf.sqref.ranges)
        if not ranges:
            continue
        min_col, min_row, _, _ = range_boundaries(ranges[0].coord)
        min_col, min_row = min_col or 1, min_row or 1  # whole rows or columns (A:A) have open ends
        cells = []
        for rng in ranges:
            c1, r1, c2, r2 = range_boundaries(rng.coord)
            c1, r1, c2, r2 = c1 or 1, r1 or 1, c2 or max_col, r2 or max_row
            cells += [(r, c) for r in range(r1, min(r2, max_row) + 1) for c in range(c1, min(c2, max_col) + 1)]
        for rule in cf.rules:
            props = dxf_props(getattr(rule, "dxf", None))
            if not props and not rule.stopIfTrue:
                continue
            where = f"conditional format on {cf.sqref} ({rule.type})"
            evaluated.append((rule.priority or 0, _RuleEval(rule, cells, (min_row, min_col), values, where),
                              props, bool(rule.stopIfTrue)))
    evaluated.sort(key=lambda item: item[0])
    out: dict[str, dict[str, Any]] = {}
    stopped: set[tuple[int, int]] = set()
    for _, ev, props, stop in evaluated:
        for row, col in ev.cells:
            if (row, col) in stopped or not ev.applies(row, col):
                continue
            coordinate = f"{get_column_letter(col)}{row}"
            cell_props = out.setdefault(coordinate, {})
            for prop, value in props.items():
                cell_props.setdefault(prop, value)
            if stop:
                stopped.add((row, col))
    return {k: v for k, v in out.items() if v}
