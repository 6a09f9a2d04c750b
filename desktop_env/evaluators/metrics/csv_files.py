"""``compare_csv``: two CSV files hold the same rows (exactly, or stripped, case-folded, unordered, within
a numeric tolerance)."""
from __future__ import annotations

import csv
import io
import math
from typing import Any

from desktop_env.evaluators.metrics.utils import as_existing_path
from desktop_env.registry import METRICS


def _csv_rows(path, strict: bool, ignore_case: bool) -> list[list[str]]:
    text = path.read_text(encoding="utf-8-sig", errors="replace")
    rows = list(csv.reader(io.StringIO(text)))
    out = []
    for row in rows:
        cells = [c if strict else c.strip() for c in row]
        if ignore_case:
            cells = [c.lower() for c in cells]
        if not strict and not any(cells):
            continue  # blank lines
        out.append(cells)
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
    if pa is None or pb is None:
        return 0.0
    a, b = _csv_rows(pa, strict, ignore_case), _csv_rows(pb, strict, ignore_case)
    if ignore_order:
        a = a[:1] + sorted(a[1:])
        b = b[:1] + sorted(b[1:])
    if len(a) != len(b):
        return 0.0
    for ra, rb in zip(a, b):
        if len(ra) != len(rb) or not all(_cells_equal(x, y, tolerance) for x, y in zip(ra, rb)):
            return 0.0
    return 1.0
