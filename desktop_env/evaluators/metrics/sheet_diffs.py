"""How two sheets differ, said for ``compare_table``'s reasons: the first differing cell of two sheets'
data, and the first difference of what a pair rule loads from each (charts, pivot tables, sparklines,
styles, rows and columns, the autofilter), as ``(kind, text)``."""
from __future__ import annotations

import math
from typing import Any, Callable

import pandas as pd
from openpyxl.utils.cell import column_index_from_string, coordinate_from_string, get_column_letter

from desktop_env.evaluators.metrics.sheet_parts import dimension_defaults
from desktop_env.evaluators.reasons import STRUCTURE_MISMATCH, VALUE_MISMATCH, shown

#: ``describe(rule, got, expected) -> (kind, text)``: the first difference of what a pair rule loaded
Describe = Callable[[dict, Any, Any], tuple[str, str]]


def plain_value(value: Any) -> Any:
    """A cell value as a reason shows it: numpy scalars as Python values, dates in ISO form, NaN as None."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    if hasattr(value, "isoformat"):
        return value.isoformat()
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):
        try:
            return value.item()
        except (TypeError, ValueError):
            return value
    return value


def first_difference(got: Any, want: Any, path: str = "") -> tuple[str, Any, Any] | None:
    """Where two nested values a sheet part loader gives first differ: ``(path, got, want)``; None when equal.

    The path is dotted keys and ``[i]`` indices (``filter_column[0].filters``); a key or item that one
    side lacks reads as None there. Sets are compared whole and shown sorted.
    """
    if got == want:
        return None
    if isinstance(got, dict) and isinstance(want, dict):
        for key in [*want, *(k for k in got if k not in want)]:
            found = first_difference(got.get(key), want.get(key), f"{path}.{key}" if path else str(key))
            if found is not None:
                return found
    if isinstance(got, (list, tuple)) and isinstance(want, (list, tuple)):
        for i in range(max(len(got), len(want))):
            found = first_difference(got[i] if i < len(got) else None, want[i] if i < len(want) else None,
                                     f"{path}[{i}]")
            if found is not None:
                return found
    sort = (lambda v: sorted(v, key=repr) if isinstance(v, (set, frozenset)) else v)
    return path, sort(got), sort(want)


def keyed_difference(got: dict, want: dict, noun: str) -> tuple[str, str]:
    """The first difference of two sheets' parts keyed by what identifies them (a chart's series, a pivot's
    source): a part one sheet lacks, else the first property that differs."""
    for key in want:
        if key not in got:
            return STRUCTURE_MISMATCH, f"no {noun} {key!r} (expected one; found {shown(list(got))})"
    for key in got:
        if key not in want:
            return STRUCTURE_MISMATCH, f"an unexpected {noun} {key!r} (expected only {shown(list(want))})"
    for key in want:
        found = first_difference(got[key], want[key])
        if found is not None:
            path, a, b = found
            return VALUE_MISMATCH, f"{noun} {key!r} {path}: expected {shown(b)}, got {shown(a)}"
    return VALUE_MISMATCH, f"the {noun} parts differ"  # unreachable: got != want


def describe_sparklines(rule: dict, got: dict, want: dict) -> tuple[str, str]:
    """The first cell whose sparkline is missing, unexpected or over other data."""
    for cell in [*want, *(c for c in got if c not in want)]:
        if got.get(cell) != want.get(cell):
            if cell not in got:
                return STRUCTURE_MISMATCH, f"no sparkline in {cell} (expected one over {want[cell]!r})"
            if cell not in want:
                return STRUCTURE_MISMATCH, f"an unexpected sparkline in {cell} (over {got[cell]!r})"
            return VALUE_MISMATCH, f"sparkline in {cell}: expected data {want[cell]!r}, got {got[cell]!r}"
    return VALUE_MISMATCH, "the sparklines differ"  # unreachable: got != want


def _row_major(coordinate: str) -> tuple[int, int]:
    letters, row = coordinate_from_string(coordinate)
    return row, column_index_from_string(letters)


def describe_styles(rule: dict, got: dict, want: dict) -> tuple[str, str]:
    """The first cell (row by row) whose shown style differs, and the property."""
    props = rule.get("props", [])
    bare = "a cell with no value, fill or conditional format"
    for cell in sorted({*got, *want}, key=_row_major):
        a, b = got.get(cell), want.get(cell)
        if a == b:
            continue
        if a is None:
            return VALUE_MISMATCH, f"{cell}: expected {shown(dict(zip(props, b)))}, got {bare}"
        if b is None:
            return VALUE_MISMATCH, f"{cell}: expected {bare}, got {shown(dict(zip(props, a)))}"
        prop, x, y = next((p, x, y) for p, x, y in zip(props, a, b) if x != y)
        return VALUE_MISMATCH, f"{cell} {prop}: expected {shown(y)}, got {shown(x)}"
    return VALUE_MISMATCH, "the styles differ"  # unreachable: got != want


def describe_dimensions(obj: str) -> Describe:
    """How rows (``obj`` "row") or columns differ; one the loader left out has the default properties."""
    def describe(rule: dict, got: dict, want: dict) -> tuple[str, str]:
        default = dimension_defaults(obj, rule["props"])
        keys = sorted({*got, *want}, key=lambda k: (len(str(k)), str(k)) if obj == "column" else k)
        for key in keys:
            a, b = got.get(key, default), want.get(key, default)
            prop = next((p for p in rule["props"] if a[p] != b[p]), None)
            if prop is not None:
                return VALUE_MISMATCH, f"{obj} {key} {prop}: expected {shown(b[prop])}, got {shown(a[prop])}"
        return VALUE_MISMATCH, f"the {obj}s differ"  # unreachable: got != want
    return describe


def describe_filters(rule: dict, got: dict, want: dict) -> tuple[str, str]:
    """A missing or unexpected autofilter, else the first of its range, criteria or sort state that differs."""
    if got["ref"] is None:
        return STRUCTURE_MISMATCH, f"no autofilter (expected one on {want['ref']!r})"
    if want["ref"] is None:
        return STRUCTURE_MISMATCH, f"an autofilter on {got['ref']!r}, expected none"
    path, a, b = first_difference(got, want) or ("", got, want)
    return VALUE_MISMATCH, f"autofilter {path}: expected {shown(b)}, got {shown(a)}"


def describe_value(what: str) -> Describe:
    """How two values of one sheet setting (``what``, e.g. the frozen panes) differ."""
    def describe(rule: dict, got: Any, want: Any) -> tuple[str, str]:
        return VALUE_MISMATCH, f"{what}: expected {shown(plain_value(want))}, got {shown(plain_value(got))}"
    return describe


# --------------------------------------------------------------------------- sheet data
def _norm_cell(v, precision: int):
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return None
    if isinstance(v, bool):
        return v
    if isinstance(v, (int, float)):
        return round(float(v), precision)
    if hasattr(v, "isoformat"):
        return v.isoformat()
    return str(v)


def frame_difference(a: pd.DataFrame, b: pd.DataFrame, precision: int = 4) -> tuple[str, str] | None:
    """``(kind, text)`` of the first difference of sheet ``a`` from the expected ``b`` (read with row 1 as the
    header): the number of columns or rows, a header cell, or a cell (``C3: expected 20, got 21``); None when
    they have the same shape, the same header, and cells equal after rounding numbers to ``precision`` decimals.
    """
    header_a, header_b = [str(c) for c in a.columns], [str(c) for c in b.columns]
    if len(header_a) != len(header_b):
        return STRUCTURE_MISMATCH, (f"{len(header_a)} columns, expected {len(header_b)} (header {shown(header_a)}, "
                                    f"expected {shown(header_b)})")
    for j, (x, y) in enumerate(zip(header_a, header_b)):
        if x != y:
            return VALUE_MISMATCH, f"{get_column_letter(j + 1)}1 (header): expected {shown(y)}, got {shown(x)}"
    if a.shape[0] != b.shape[0]:
        return STRUCTURE_MISMATCH, f"{a.shape[0]} rows of data below the header, expected {b.shape[0]}"
    for i, (ra, rb) in enumerate(zip(a.itertuples(index=False), b.itertuples(index=False))):
        for j, (x, y) in enumerate(zip(ra, rb)):
            if _norm_cell(x, precision) != _norm_cell(y, precision):
                return VALUE_MISMATCH, (f"{get_column_letter(j + 1)}{i + 2}: expected {shown(plain_value(y))}, "
                                        f"got {shown(plain_value(x))}")
    return None


def frames_equal(a: pd.DataFrame, b: pd.DataFrame, precision: int = 4) -> bool:
    """Same shape, same header, and cells equal after rounding numbers to ``precision`` decimals."""
    return frame_difference(a, b, precision) is None
