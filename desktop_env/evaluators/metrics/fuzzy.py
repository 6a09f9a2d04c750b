"""Fuzzy text of cells, as ``compare_table``'s ``sheet_fuzzy`` rule compares them: normalisations, and the
similarity ratio (the longest common subsequence, as a percentage)."""
from __future__ import annotations

import datetime
from typing import Any

from openpyxl.utils.datetime import to_excel

from desktop_env.evaluators.reasons import RULE_FAILED, THRESHOLD_NOT_MET, VALUE_MISMATCH, shown


FUZZY_TYPES = ("exact_match", "fuzzy_match", "includes", "included_by")


def fuzzy_text(value: Any) -> str:
    """A cell's cached value as sheet_fuzzy compares it: numbers (and dates, as serials) as floats
    (``10.0``), an empty cell as ``None``, as the suite's reference checker reads them."""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, (datetime.datetime, datetime.date, datetime.time, datetime.timedelta)):
        return str(float(to_excel(value)))
    if isinstance(value, (int, float)):
        return str(float(value))
    return str(value)


def _lcs_length(a: str, b: str) -> int:
    """Length of the longest common subsequence (bit-parallel, one pass over ``b``)."""
    if not a or not b:
        return 0
    masks: dict[str, int] = {}
    for i, ch in enumerate(a):
        masks[ch] = masks.get(ch, 0) | (1 << i)
    full = (1 << len(a)) - 1
    v = full
    for ch in b:
        u = v & masks.get(ch, 0)
        v = ((v + u) | (v - u)) & full
    return len(a) - bin(v).count("1")


def fuzzy_ratio(a: str, b: str) -> float:
    """Similarity 0..100: ``200 * LCS / (len(a) + len(b))`` (the Indel ratio; 100 for two empty strings)."""
    if not a and not b:
        return 100.0
    return 200.0 * _lcs_length(a, b) / (len(a) + len(b))


def fuzzy_normalize(text: str, spec: dict) -> str:
    for old, new in spec.get("normalization", []):
        text = text.replace(old, new)
    if "trim_leadings" in spec:
        text = text.lstrip(spec["trim_leadings"])
    if "trim_trailings" in spec:
        text = text.rstrip(spec["trim_trailings"])
    if "ignore_chars" in spec:
        text = "".join(ch for ch in text if ch not in set(spec["ignore_chars"]))
    if spec.get("ignore_case", False):
        text = text.lower()
    return text


def fuzzy_cells_match(first: str, second: str, spec: dict) -> bool:
    kind = spec["type"]
    if kind == "exact_match":
        return first == second
    if kind == "includes":
        return second in first
    if kind == "included_by":
        return first in second
    return fuzzy_ratio(first, second) >= float(spec.get("threshold", 85.0))


def fuzzy_mismatch(cell: str, first: str, second: str, spec: dict) -> tuple[str, str]:
    """``(kind, text)`` of a cell whose text ``first`` fails the match ``spec`` against the expected ``second``."""
    kind = spec["type"]
    if kind == "exact_match":
        return VALUE_MISMATCH, f"{cell}: expected {shown(second)}, got {shown(first)} (exact_match)"
    if kind == "includes":
        return RULE_FAILED, f"{cell}: {shown(first)} does not include the expected {shown(second)}"
    if kind == "included_by":
        return RULE_FAILED, f"{cell}: {shown(first)} is not included in the expected {shown(second)}"
    return THRESHOLD_NOT_MET, (f"{cell}: similarity {fuzzy_ratio(first, second):.1f} below the threshold "
                               f"{float(spec.get('threshold', 85.0)):g} (expected {shown(second)}, got {shown(first)})")
