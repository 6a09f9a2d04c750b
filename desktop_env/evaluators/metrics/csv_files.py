"""``compare_csv``: two CSV files hold the same rows (exactly, or stripped, case-folded, unordered, within
a numeric tolerance)."""
from __future__ import annotations

import csv
import io
import math
from typing import Any

from desktop_env.evaluators.metrics.files import missing_file
from desktop_env.evaluators.metrics.utils import as_existing_path
from desktop_env.evaluators.reasons import MISSING_RESULT, STRUCTURE_MISMATCH, VALUE_MISMATCH, fail, shown
from desktop_env.registry import METRICS


def _csv_rows(path, strict: bool, ignore_case: bool) -> list[tuple[int, list[str]]]:
    """The rows of a CSV file as compared, each with its row number in the file (1 for the first)."""
    text = path.read_text(encoding="utf-8-sig", errors="replace")
    rows = list(csv.reader(io.StringIO(text)))
    out = []
    for number, row in enumerate(rows, start=1):
        cells = [c if strict else c.strip() for c in row]
        if ignore_case:
            cells = [c.lower() for c in cells]
        if not strict and not any(cells):
            continue  # blank lines
        out.append((number, cells))
    return out


def _cells_equal(a: str, b: str, tolerance: float | None) -> bool:
    if a == b:
        return True
    if tolerance is None:
        return False
    try:
        return math.isclose(float(a), float(b), rel_tol=0, abs_tol=tolerance)
    except ValueError:
        return False


@METRICS.register()
def compare_csv(result: Any, expected: Any, strict: bool = True, ignore_case: bool = False,
                ignore_order: bool = False, tolerance: float | None = None) -> float:
    """1 when two CSV files hold the same rows.

    Args:
        strict: compare cells exactly; False strips cells and drops blank lines.
        ignore_case: compare lower-cased.
        ignore_order: compare the data rows as a multiset (the header row stays first).
        tolerance: numeric cells within this absolute tolerance are equal.
    """
    pa, pb = as_existing_path(result), as_existing_path(expected)
    if pa is None:
        return fail(MISSING_RESULT, missing_file(result, "result CSV file"))
    if pb is None:
        return fail(MISSING_RESULT, f"the expected CSV file does not exist: {shown(expected)}")
    a, b = _csv_rows(pa, strict, ignore_case), _csv_rows(pb, strict, ignore_case)
    if ignore_order:
        a = a[:1] + sorted(a[1:], key=lambda row: row[1])
        b = b[:1] + sorted(b[1:], key=lambda row: row[1])
    differing = next((i for i, ((_, ra), (_, rb)) in enumerate(zip(a, b))
                      if len(ra) != len(rb) or not all(_cells_equal(x, y, tolerance) for x, y in zip(ra, rb))), None)
    if len(a) != len(b):
        if differing is not None:
            first = _row_difference(a, b, differing, ignore_order, tolerance)[1]
        elif len(a) > len(b):
            first = f"an extra row {a[len(b)][0]}: {shown(a[len(b)][1])}"
        else:
            first = f"row {b[len(a)][0]} is missing: expected {shown(b[len(a)][1])}"
        return fail(STRUCTURE_MISMATCH, f"{pa.name}: {len(a)} rows, expected {len(b)}; first difference: {first}")
    if differing is not None:
        kind, text = _row_difference(a, b, differing, ignore_order, tolerance)
        return fail(kind, f"{pa.name}: {text}")
    return 1.0


def _row_difference(a: list, b: list, i: int, ignore_order: bool, tolerance: float | None) -> tuple[str, str]:
    """``(kind, text)`` of the ``i``-th compared rows of the result ``a`` and the expected ``b``: the row number,
    the first differing column, and both rows."""
    (na, ra), (nb, rb) = a[i], b[i]
    if ignore_order and i > 0:
        where = f"data row {i} in sorted order (result row {na}, expected row {nb})"
    else:  # rows are numbered in the file, blank lines included: they differ when strict=False drops one
        where = f"row {na}" if na == nb else f"result row {na} (expected row {nb})"
    both = f"expected {shown(rb)}, got {shown(ra)}"
    if len(ra) != len(rb):
        return STRUCTURE_MISMATCH, f"{where} has {len(ra)} cells, expected {len(rb)}: {both}"
    j = next(j for j, (x, y) in enumerate(zip(ra, rb)) if not _cells_equal(x, y, tolerance))
    header = b[0][1][j] if i > 0 and j < len(b[0][1]) else None
    column = f"column {j + 1}" + (f" ({header!r})" if header else "")
    return VALUE_MISMATCH, f"{where}, {column}: expected {shown(rb[j])}, got {shown(ra[j])}; rows: {both}"
