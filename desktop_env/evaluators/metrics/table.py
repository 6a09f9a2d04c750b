"""Table metrics: ``compare_table`` (xlsx data, display, charts, pivots, styles, validation...), each rule saying
where it failed."""
from __future__ import annotations

import difflib
import logging
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import openpyxl
import pandas as pd
from openpyxl.utils.cell import coordinate_from_string, get_column_letter
from openpyxl.utils.exceptions import CellCoordinatesException
from openpyxl.workbook.workbook import Workbook

from desktop_env.evaluators.metrics.conditional import conditional_overlay
from desktop_env.evaluators.metrics.files import missing_file
from desktop_env.evaluators.metrics.fuzzy import (FUZZY_TYPES, fuzzy_cells_match, fuzzy_mismatch, fuzzy_normalize,
                                                  fuzzy_text)
from desktop_env.evaluators.metrics.number_format import export_path, printed_lines
from desktop_env.evaluators.metrics.sheet_diffs import (Describe, describe_dimensions, describe_filters,
                                                        describe_sparklines, describe_styles, describe_value,
                                                        frame_difference, keyed_difference)
from desktop_env.evaluators.metrics.sheet_parts import (CHART_READERS, COL_PROPS, DV_ATTRIBUTES, PIVOT_READERS,
                                                        ROW_PROPS, STYLE_READERS, load_charts, load_filters,
                                                        load_pivots, load_rows_or_cols, load_sparklines, load_styles,
                                                        shown_style)
from desktop_env.evaluators.metrics.utils import (MetricError, OptionError, as_existing_path, cell_boxes,
                                                  check_rule_method, match_value_to_rule, rule_kind, rule_mismatch)
from desktop_env.evaluators.reasons import (MISSING_RESULT, RULE_FAILED, STRUCTURE_MISMATCH, UNREADABLE_RESULT,
                                            VALUE_MISMATCH, collecting, explain, fail, first_failure, shown)
from desktop_env.registry import METRICS

logger = logging.getLogger(__name__)


# --------------------------------------------------------------------------- compare_table: books and sheets
@dataclass
class Book:
    """A workbook read twice by openpyxl: with formulas and styles (``wb``) and with cached values."""

    path: Path
    wb: Workbook           # formulas and styles
    values: Workbook       # cached values (data_only)

    @property
    def names(self) -> list[str]:
        return self.wb.sheetnames


def _open_book(path) -> tuple[Book | None, str]:
    """The workbook at ``path``, or None and why it cannot be opened."""
    try:
        with warnings.catch_warnings():
            # openpyxl drops extensions it cannot keep (sparklines, x14 validations); rules read those from the XML
            warnings.filterwarnings("ignore", message=".*extension is not supported", category=UserWarning)
            return Book(Path(path), openpyxl.load_workbook(path), openpyxl.load_workbook(path, data_only=True)), ""
    except Exception as exc:  # openpyxl raises many types on a bad file (zip, xml, key errors)
        logger.info("cannot open workbook %s: %s", path, exc)
        return None, f"{type(exc).__name__}: {exc}"


_SHEET_REF_FORMS = "an int (a result sheet index), 'RI<i>', 'RN<name>', 'EI<i>' or 'EN<name>'"


def _sheet_ref_parts(ref: Any) -> tuple[str, str, Any]:
    """``(book, kind, key)`` of a sheet reference: book ``R``/``E``, kind ``I`` (int key) or ``N`` (name).

    Raises:
        ValueError: a reference of none of the forms.
    """
    if isinstance(ref, bool) or not isinstance(ref, (int, str)):
        raise ValueError(f"bad sheet reference {ref!r}: use {_SHEET_REF_FORMS}")
    if isinstance(ref, int):
        return "R", "I", ref
    if len(ref) < 3 or ref[0] not in "RE" or ref[1] not in "IN":
        raise ValueError(f"bad sheet reference {ref!r}: use {_SHEET_REF_FORMS}")
    if ref[1] == "I":
        try:
            return ref[0], "I", int(ref[2:])
        except ValueError:
            raise ValueError(f"bad sheet index in {ref!r}: use {_SHEET_REF_FORMS}") from None
    return ref[0], "N", ref[2:]


def parse_sheet_ref(ref: Any, result: Book | None, expected: Book | None) -> tuple[Book | None, str | None]:
    """Resolve a sheet reference to (book, sheet name); the name is None when the sheet does not exist.

    An int is the result's sheet index; ``RI<i>``/``RN<name>`` a result sheet by index/name;
    ``EI<i>``/``EN<name>`` an expected sheet by index/name.

    Raises:
        MetricError: a reference of none of these forms.
    """
    try:
        side, kind, key = _sheet_ref_parts(ref)
    except ValueError as exc:
        raise MetricError(str(exc)) from None
    book = result if side == "R" else expected
    if book is None:
        return None, None
    if kind == "I":
        return (book, book.names[key]) if -len(book.names) <= key < len(book.names) else (book, None)
    return (book, key) if key in book.names else (book, None)


@dataclass
class _Books:
    """The two workbooks a rule may refer to."""

    result: Book
    expected: Book | None

    def sheet(self, rule: dict, key: str) -> tuple[Book, str] | None:
        """The book and sheet named by ``rule[key]``; None (logged) when the sheet does not exist.

        Raises:
            MetricError: the reference points at the expected book and the task gives none.
        """
        book, name = parse_sheet_ref(rule[key], self.result, self.expected)
        if book is None:
            raise MetricError(f"rule {rule['type']!r} refers to the expected book ({key}={rule[key]!r}), "
                              f"but the task gives none")
        if name is None:
            _, kind, wanted = _sheet_ref_parts(rule[key])
            what = f"no sheet {wanted!r}" if kind == "N" else f"no sheet at index {wanted}"
            explain(STRUCTURE_MISMATCH, f"{what} in {book.path.name} ({key}={rule[key]!r}; its sheets: "
                                        f"{shown(book.names)})")
            return None
        return book, name

    def label(self, pair: tuple[tuple[Book, str], tuple[Book, str]]) -> str:
        """How a reason names two compared sheets: ``sheet 'Data' vs expected 'Data'``."""
        (b0, s0), (b1, s1) = pair
        first = f"sheet {s0!r}" if b0 is self.result else f"expected sheet {s0!r}"
        return f"{first} vs {'expected' if b1 is self.expected else 'sheet'} {s1!r}"

    def pair(self, rule: dict) -> tuple[tuple[Book, str], tuple[Book, str]] | None:
        """The sheets ``sheet_idx0`` and ``sheet_idx1``; None when either does not exist."""
        first, second = self.sheet(rule, "sheet_idx0"), self.sheet(rule, "sheet_idx1")
        return (first, second) if first is not None and second is not None else None


def _compare_pair(rule: dict, books: _Books, load: Callable[[Book, str], Any], describe: Describe) -> bool:
    """Whether ``load`` gives the same for sheets ``sheet_idx0`` and ``sheet_idx1``; ``describe`` says how not."""
    pair = books.pair(rule)
    if pair is None:
        return False
    first, second = load(*pair[0]), load(*pair[1])
    if first != second:
        logger.info("compare_table %s: %r differs from %r:\n  %.300r\n  %.300r", rule["type"], rule["sheet_idx0"],
                    rule["sheet_idx1"], first, second)
        kind, text = describe(rule, first, second)
        explain(kind, f"{books.label(pair)}: {text}")
    return first == second


def _rule_not_held(what: str, value: Any, check: dict) -> None:
    """Explain a value that fails a ``{method, ref}`` rule: ``Sheet1!A1 value: expected eq 5, got 4``."""
    explain(rule_kind(check), f"{what}: {rule_mismatch(value, check)}")


# --------------------------------------------------------------------------- sheet_data
def _frame(book: Book, sheet: str) -> pd.DataFrame:
    return pd.read_excel(book.path, sheet_name=sheet, engine="openpyxl")


def _rule_sheet_data(rule: dict, books: _Books) -> bool:
    pair = books.pair(rule)
    if pair is None:
        return False
    (b0, s0), (b1, s1) = pair
    difference = frame_difference(_frame(b0, s0), _frame(b1, s1), int(rule.get("precision", 4)))
    if difference is not None:
        kind, text = difference
        explain(kind, f"{books.label(pair)}: {text}")
    return difference is None


# --------------------------------------------------------------------------- sheet_print
def _rule_sheet_print(rule: dict, books: _Books) -> bool:
    pair = books.pair(rule)
    if pair is None:
        return False
    (b0, s0), (b1, s1) = pair
    use_export = export_path(b0, s0).is_file() and export_path(b1, s1).is_file()
    if not use_export:
        logger.info("sheet_print: no CSV export beside both books, rendering %r and %r from their number formats",
                    s0, s1)
    first, second = printed_lines(b0, s0, use_export), printed_lines(b1, s1, use_export)
    if rule.get("ignore_case", False):
        first, second = [x.lower() for x in first], [x.lower() for x in second]
    if first != second:
        diff = next((n for n, (x, y) in enumerate(zip(first, second)) if x != y), min(len(first), len(second)))
        how = "CSV exports" if use_export else "rendered through their number formats"
        if diff < min(len(first), len(second)):
            explain(VALUE_MISMATCH, f"{books.label(pair)} as displayed ({how}): row {diff + 1} expected "
                                    f"{shown(second[diff])}, got {shown(first[diff])}")
        else:
            row = (f"an extra row {diff + 1}: {shown(first[diff])}" if len(first) > len(second)
                   else f"row {diff + 1} missing: expected {shown(second[diff])}")
            explain(STRUCTURE_MISMATCH, f"{books.label(pair)} as displayed ({how}): {len(first)} rows, expected "
                                        f"{len(second)}; {row}")
    return first == second


# --------------------------------------------------------------------------- sheet_fuzzy
def _rule_sheet_fuzzy(rule: dict, books: _Books) -> bool:
    pair = books.pair(rule)
    if pair is None:
        return False
    (b0, s0), (b1, s1) = pair
    ws0, ws1 = b0.values[s0], b1.values[s1]
    # beyond both sheets' used area the two cells are empty, hence equal under every match type
    last_row, last_col = max(ws0.max_row, ws1.max_row), max(ws0.max_column, ws1.max_column)
    for spec in rule["rules"]:
        for box in cell_boxes(spec["range"]):
            for row in range(box[1], min(box[3], last_row) + 1):
                for col in range(box[0], min(box[2], last_col) + 1):
                    first = fuzzy_normalize(fuzzy_text(ws0.cell(row, col).value), spec)
                    second = fuzzy_normalize(fuzzy_text(ws1.cell(row, col).value), spec)
                    if not fuzzy_cells_match(first, second, spec):
                        kind, text = fuzzy_mismatch(f"{get_column_letter(col)}{row}", first, second, spec)
                        explain(kind, f"{books.label(pair)}: {text}")
                        return False
    return True


def _rule_data_validation(rule: dict, books: _Books) -> bool:
    """At least as many validations as ``dv_props`` entries, and each validation matches one entry."""
    found = books.sheet(rule, "sheet_idx")
    if found is None:
        return False
    book, sheet = found
    validations = book.wb[sheet].data_validations.dataValidation
    wanted = rule["dv_props"]
    if len(validations) < len(wanted):
        explain(STRUCTURE_MISMATCH, f"sheet {sheet!r} has {len(validations)} data validations, expected at least "
                                    f"{len(wanted)}")
        return False
    for dv in validations:
        failing = [[attr for attr, check in props.items() if not match_value_to_rule(getattr(dv, attr), check)]
                   for props in wanted]
        if all(failing):
            closest = min(range(len(wanted)), key=lambda j: len(failing[j]))
            attr = failing[closest][0]
            value = getattr(dv, attr)
            # a range reads as its text ("C2:C20"), not as openpyxl's MultiCellRange
            text = rule_mismatch(str(value) if attr in ("ranges", "sqref", "cells") else value, wanted[closest][attr])
            explain(rule_kind(wanted[closest][attr]), f"sheet {sheet!r}: the data validation on {dv.sqref} (type "
                                                      f"{dv.type!r}) matches no dv_props entry; the closest, "
                                                      f"dv_props[{closest}], has {attr}: {text}")
            return False
    return True



# --------------------------------------------------------------------------- single-sheet rules
def _rule_sheet_name(rule: dict, books: _Books) -> bool:
    if books.expected is None:
        explain(RULE_FAILED, "sheet_name compares the sheet names with the expected workbook, and the task gives none")
        return False
    got, want = books.result.names, books.expected.names
    if got == want:
        return True
    at = next((i for i, (x, y) in enumerate(zip(got, want)) if x != y), min(len(got), len(want)))
    wanted, found = (shown(names[at]) if at < len(names) else "no sheet" for names in (want, got))
    explain(STRUCTURE_MISMATCH, f"sheet {at + 1}: expected {wanted}, got {found} (sheet names: expected "
                                f"{shown(want)}, got {shown(got)})")
    return False


def _rule_zoom(rule: dict, books: _Books) -> bool:
    found = books.sheet(rule, "sheet_idx")
    if found is None:
        return False
    book, sheet = found
    zoom = book.wb[sheet].sheet_view.zoomScale or 100
    if match_value_to_rule(zoom, rule):
        return True
    _rule_not_held(f"sheet {sheet!r} zoom (percent)", zoom, rule)
    return False


CELL_PROPS = ("value", "formula", *STYLE_READERS)


def _rule_check_cell(rule: dict, books: _Books) -> bool:
    found = books.sheet(rule, "sheet_idx")
    if found is None:
        return False
    book, sheet = found
    coordinate = rule["coordinate"]
    conditional = None  # the sheet's conditional formats at this cell, evaluated once for all style props
    for prop, check in rule["props"].items():
        if prop == "value":
            value = book.values[sheet][coordinate].value
        elif prop == "formula":
            value = book.wb[sheet][coordinate].value
        else:
            if conditional is None:
                overlay = conditional_overlay(book.wb[sheet], book.values[sheet])
                conditional = overlay.get(coordinate.replace("$", "").upper(), {})
            value = shown_style(prop, book.wb[sheet][coordinate], conditional)
        if not match_value_to_rule(value, check):
            _rule_not_held(f"{sheet}!{coordinate} {prop}", value, check)
            return False
    return True


# --------------------------------------------------------------------------- validation of rules
def _closest(name: str, names) -> str:
    close = difflib.get_close_matches(str(name), list(names), n=1)
    return f"; did you mean {close[0]!r}?" if close else ""


def _check_names(rule: dict, key: str, field: str, known, what: str, required: bool = False) -> None:
    """``rule[key]`` is a list of names from ``known``."""
    if key not in rule:
        return
    names = rule[key]
    if not isinstance(names, list) or (required and not names):
        raise OptionError(f"must be a {'non-empty ' if required else ''}list of {what} names, got {names!r}",
                          f"{field}.{key}")
    for i, name in enumerate(names):
        if name not in known:
            raise OptionError(f"unknown {what} {name!r}{_closest(name, known)} (accepted: {', '.join(known)})",
                              f"{field}.{key}[{i}]")


def _check_sheet_data(rule: dict, field: str) -> None:
    precision = rule.get("precision", 4)
    if isinstance(precision, bool) or not isinstance(precision, int) or precision < 0:
        raise OptionError(f"must be a whole number of decimals >= 0, got {precision!r}", f"{field}.precision")


def _check_bool(rule: dict, key: str, field: str) -> None:
    if key in rule and not isinstance(rule[key], bool):
        raise OptionError(f"must be true or false, got {rule[key]!r}", f"{field}.{key}")


def _check_sheet_print(rule: dict, field: str) -> None:
    _check_bool(rule, "ignore_case", field)


def _check_range(value: Any, field: str) -> None:
    if not isinstance(value, (str, list)) or not value:
        raise OptionError(f"must be a cell range or a list of them (\"A1:B6\"), got {value!r}", field)
    try:
        cell_boxes(value)
    except ValueError as exc:
        raise OptionError(str(exc), field) from None


def _check_sheet_fuzzy(rule: dict, field: str) -> None:
    specs = rule["rules"]
    if not isinstance(specs, list) or not specs:
        raise OptionError(f"must be a non-empty list of {{range, type, ...}} objects, got {specs!r}",
                          f"{field}.rules")
    for i, spec in enumerate(specs):
        at = f"{field}.rules[{i}]"
        if not isinstance(spec, dict):
            raise OptionError(f"must be an object {{range, type, ...}}, got {spec!r}", at)
        for key in ("range", "type"):
            if key not in spec:
                raise OptionError(f"a sheet_fuzzy rule needs {key!r}", f"{at}.{key}")
        _check_range(spec["range"], f"{at}.range")
        if spec["type"] not in FUZZY_TYPES:
            raise OptionError(f"unknown match type {spec['type']!r}{_closest(spec['type'], FUZZY_TYPES)} "
                              f"(accepted: {', '.join(FUZZY_TYPES)})", f"{at}.type")
        threshold = spec.get("threshold", 85)
        if isinstance(threshold, bool) or not isinstance(threshold, (int, float)) or not 0 <= threshold <= 100:
            raise OptionError(f"must be a number from 0 to 100, got {threshold!r}", f"{at}.threshold")
        for key in ("ignore_chars", "trim_leadings", "trim_trailings"):
            if key in spec and not isinstance(spec[key], str):
                raise OptionError(f"must be a string of characters, got {spec[key]!r}", f"{at}.{key}")
        _check_bool(spec, "ignore_case", at)
        pairs = spec.get("normalization", [])
        if not isinstance(pairs, list) or not all(
                isinstance(p, (list, tuple)) and len(p) == 2 and all(isinstance(x, str) for x in p) for p in pairs):
            raise OptionError(f"must be a list of [from, to] string pairs, got {pairs!r}", f"{at}.normalization")


def _check_check_cell(rule: dict, field: str) -> None:
    coordinate = rule["coordinate"]
    try:
        coordinate_from_string(coordinate if isinstance(coordinate, str) else "")
    except (CellCoordinatesException, ValueError):
        raise OptionError(f"must be a cell coordinate like 'E3', got {coordinate!r}", f"{field}.coordinate") from None
    props = rule["props"]
    if not isinstance(props, dict) or not props:
        raise OptionError(f"must be a non-empty object {{property: {{method, ref}}}}, got {props!r}",
                          f"{field}.props")
    for prop, check in props.items():
        if prop not in CELL_PROPS:
            raise OptionError(f"unknown cell property {prop!r}{_closest(prop, CELL_PROPS)} "
                              f"(accepted: {', '.join(CELL_PROPS)})", f"{field}.props.{prop}")
        check_rule_method(check, f"{field}.props.{prop}")


def _check_zoom(rule: dict, field: str) -> None:
    check_rule_method(rule, field)


def _check_data_validation(rule: dict, field: str) -> None:
    wanted = rule["dv_props"]
    if not isinstance(wanted, list) or not wanted:
        raise OptionError(f"must be a non-empty list of {{attribute: {{method, ref}}}} objects, got {wanted!r}",
                          f"{field}.dv_props")
    for i, props in enumerate(wanted):
        at = f"{field}.dv_props[{i}]"
        if not isinstance(props, dict) or not props:
            raise OptionError(f"must be a non-empty object {{attribute: {{method, ref}}}}, got {props!r}", at)
        for attr, check in props.items():
            if attr not in DV_ATTRIBUTES:
                raise OptionError(f"unknown data validation attribute {attr!r}{_closest(attr, DV_ATTRIBUTES)} "
                                  f"(accepted: {', '.join(DV_ATTRIBUTES)})", f"{at}.{attr}")
            check_rule_method(check, f"{at}.{attr}")


@dataclass(frozen=True)
class RuleType:
    """One compare_table rule type: the fields it needs, how it is checked at load time, how it scores."""

    doc: str
    run: Callable[[dict, _Books], bool]
    required: tuple[str, ...] = ()
    check: Callable[[dict, str], None] | None = None


_PAIR = ("sheet_idx0", "sheet_idx1")


def _pair_rule(load: Callable[[dict], Callable[[Book, str], Any]],
               describe: Describe) -> Callable[[dict, _Books], bool]:
    return lambda rule, books: _compare_pair(rule, books, load(rule), describe)


#: every compare_table rule type; the one list that dispatches and validates them
RULE_TYPES: dict[str, RuleType] = {
    "sheet_name": RuleType(
        "the two books have the same sheet names in the same order",
        _rule_sheet_name),
    "sheet_data": RuleType(
        "cell values equal, numbers rounded to `precision` decimals (default 4)",
        _rule_sheet_data, _PAIR, _check_sheet_data),
    "sheet_print": RuleType(
        "the sheets read the same as displayed (number formats applied); `ignore_case`",
        _rule_sheet_print, _PAIR, _check_sheet_print),
    "sheet_fuzzy": RuleType(
        "cells of `rules[].range` compared as text: `type` exact_match/fuzzy_match (`threshold`)/includes/"
        "included_by after `normalization`, `trim_leadings`, `trim_trailings`, `ignore_chars`, `ignore_case`",
        _rule_sheet_fuzzy, (*_PAIR, "rules"), _check_sheet_fuzzy),
    "sparkline": RuleType(
        "the same sparklines (cell -> data range)",
        _pair_rule(lambda rule: load_sparklines, describe_sparklines), _PAIR),
    "chart": RuleType(
        "the same charts (by series) with the same `chart_props`",
        _pair_rule(lambda rule: lambda b, s: load_charts(b, s, rule.get("chart_props", [])),
                   lambda rule, got, want: keyed_difference(got, want, "chart over series")), _PAIR,
        lambda rule, field: _check_names(rule, "chart_props", field, list(CHART_READERS), "chart property")),
    "pivot_table": RuleType(
        "the same pivot tables (by source) with the same `pivot_props`",
        _pair_rule(lambda rule: lambda b, s: load_pivots(b, s, rule.get("pivot_props", [])),
                   lambda rule, got, want: keyed_difference(got, want, "pivot table over")), _PAIR,
        lambda rule, field: _check_names(rule, "pivot_props", field, list(PIVOT_READERS), "pivot property")),
    "style": RuleType(
        "every cell with a value, a fill or an applying conditional format shows the same style `props`",
        _pair_rule(lambda rule: lambda b, s: load_styles(b, s, rule.get("props", [])), describe_styles), _PAIR,
        lambda rule, field: _check_names(rule, "props", field, list(STYLE_READERS), "style property")),
    "freeze": RuleType(
        "the same frozen panes",
        _pair_rule(lambda rule: lambda b, s: b.wb[s].freeze_panes,
                   describe_value("frozen panes (the top-left unfrozen cell)")), _PAIR),
    "row_props": RuleType(
        "rows have the same `props` (hidden, height...)",
        _pair_rule(lambda rule: lambda b, s: load_rows_or_cols(b, s, "row", rule["props"]),
                   describe_dimensions("row")), (*_PAIR, "props"),
        lambda rule, field: _check_names(rule, "props", field, ROW_PROPS, "row property", required=True)),
    "col_props": RuleType(
        "columns have the same `props` (hidden, width...)",
        _pair_rule(lambda rule: lambda b, s: load_rows_or_cols(b, s, "column", rule["props"]),
                   describe_dimensions("column")), (*_PAIR, "props"),
        lambda rule, field: _check_names(rule, "props", field, COL_PROPS, "column property", required=True)),
    "filter": RuleType(
        "the same autofilter (range, column criteria, sort state)",
        _pair_rule(lambda rule: load_filters, describe_filters), _PAIR),
    "zoom": RuleType(
        "the sheet's zoom (percent, 100 when unset) matches `method`/`ref`",
        _rule_zoom, ("sheet_idx",), _check_zoom),
    "data_validation": RuleType(
        "each data validation of the sheet matches one `dv_props` entry ({attribute: {method, ref}}), "
        "and there are at least as many",
        _rule_data_validation, ("sheet_idx", "dv_props"), _check_data_validation),
    "check_cell": RuleType(
        "the cell `coordinate` matches `props` ({value|formula|style property: {method, ref}})",
        _rule_check_cell, ("sheet_idx", "coordinate", "props"), _check_check_cell),
}


def check_table_options(options: dict) -> None:
    """Validate compare_table's options as the metric will use them, so a task fails when it is loaded.

    Every rule is an object of a known type with its required fields, sheet references of a valid
    form, known chart/pivot/style/row/column/cell properties and data validation attributes, and
    every ``{method, ref}`` rule a known method with a ref of the right shape.

    Raises:
        OptionError: with ``field`` the dotted path inside the options (``rules[2].props.value.method``).
    """
    if not isinstance(options, dict):
        raise OptionError(f"the options must be an object, got {options!r}")
    rules = options.get("rules")
    if not isinstance(rules, list) or not rules:
        raise OptionError(f"compare_table needs rules, a non-empty list of rule objects; got {rules!r}", "rules")
    for i, rule in enumerate(rules):
        field = f"rules[{i}]"
        if not isinstance(rule, dict):
            raise OptionError(f"a rule must be an object with a 'type', got {rule!r}", field)
        kind = rule.get("type")
        if not isinstance(kind, str) or kind not in RULE_TYPES:
            what = "missing rule type" if kind is None else f"unknown compare_table rule type {kind!r}"
            raise OptionError(f"{what}{_closest(kind, RULE_TYPES) if kind is not None else ''} "
                              f"(accepted: {', '.join(RULE_TYPES)})", f"{field}.type")
        spec = RULE_TYPES[kind]
        for key in spec.required:
            if key not in rule:
                raise OptionError(f"rule {kind!r} needs {key!r}", f"{field}.{key}")
        for key in ("sheet_idx", "sheet_idx0", "sheet_idx1"):
            if key in spec.required:
                try:
                    _, kind_of_key, name = _sheet_ref_parts(rule[key])
                except ValueError as exc:
                    raise OptionError(str(exc), f"{field}.{key}") from None
                if kind_of_key == "N" and not name:
                    raise OptionError(f"bad sheet reference {rule[key]!r}: the sheet name is empty", f"{field}.{key}")
        if spec.check is not None:
            spec.check(rule, field)


@METRICS.register(check=check_table_options)
def compare_table(result: Any, expected: Any = None, rules: list | None = None) -> float:
    """1 when the xlsx ``result`` passes every rule (in order), comparing with ``expected`` where asked.

    Rule types (:data:`RULE_TYPES`): ``sheet_name``; ``sheet_data`` (``precision``); ``sheet_print``
    (``ignore_case``); ``sheet_fuzzy`` (``rules``); ``sparkline``; ``chart`` (``chart_props``);
    ``pivot_table`` (``pivot_props``); ``style`` (``props``); ``freeze``; ``row_props`` / ``col_props``
    (``props``); ``filter``; ``zoom`` (``sheet_idx``, ``method``, ``ref``); ``data_validation``
    (``sheet_idx``, ``dv_props``); ``check_cell`` (``sheet_idx``, ``coordinate``, ``props``). Pair rules
    take ``sheet_idx0`` and ``sheet_idx1``. Sheet references: an int (result index), ``RI<i>``,
    ``RN<name>``, ``EI<i>``, ``EN<name>``. A missing sheet fails the rule.

    The reason of a 0 names the first rule that failed (``rules[2] (check_cell)``) and where: the sheet
    and cell with both values, the missing sheet, chart or pivot table, the property that differs.

    Raises:
        MetricError: options :func:`check_table_options` rejects (an :class:`OptionError`), a rule on the
            expected book when there is none, or an expected book that is missing or unreadable.
    """
    check_table_options({"rules": rules})
    pr = as_existing_path(result)
    if pr is None:
        return fail(MISSING_RESULT, missing_file(result, "result workbook"))
    res, why = _open_book(pr)
    if res is None:
        return fail(UNREADABLE_RESULT, f"{pr.name} cannot be opened as a workbook ({why})")
    exp = None
    if expected is not None:
        pe = as_existing_path(expected)
        if pe is None:
            raise MetricError(f"expected workbook {expected!r} does not exist")
        exp, why = _open_book(pe)
        if exp is None:
            raise MetricError(f"expected workbook {expected!r} cannot be opened ({why})")
    books = _Books(res, exp)
    for i, rule in enumerate(rules):
        with collecting() as noted:  # a rule's own notes, kept only when it fails
            held = RULE_TYPES[rule["type"]].run(rule, books)
        if not held:
            why = first_failure(noted)
            logger.info("compare_table: rule %d (%s) failed: %s", i, rule["type"], why)
            return fail(why.kind if why else RULE_FAILED, f"rules[{i}] ({rule['type']}): "
                                                          f"{why.text if why else 'it did not hold'}")
    return 1.0
