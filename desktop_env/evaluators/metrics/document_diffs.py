"""Where two Writer documents differ, said for the document metrics' reasons: the first paragraph whose
text differs (whitespace runs aside), the first differing table cell, and the text gate of the formatting
metrics (``same_text``)."""
from __future__ import annotations

import logging

from desktop_env.evaluators.metrics.document_files import collapse, paragraph_texts
from desktop_env.evaluators.reasons import STRUCTURE_MISMATCH, VALUE_MISMATCH, explain, shown

logger = logging.getLogger(__name__)


def _paragraph_at(texts: list[str], at: int) -> tuple[int, str, int]:
    """The paragraph (1-based number, collapsed text, offset in it) holding character ``at`` of ``collapse(texts)``.

    The collapsed text is every paragraph's words joined by single spaces, so each non-blank paragraph is
    one span of it; past the end gives the last non-blank paragraph (or paragraph 0, "", 0 when all are blank).
    """
    pos, last = 0, (0, "", 0)
    for number, text in enumerate(texts, 1):
        words = " ".join(text.split())
        if not words:
            continue
        start = pos + 1 if pos else 0
        pos = start + len(words)
        last = (number, words, min(at - start, len(words)) if at >= start else 0)
        if at < pos:
            return last
    return last


def _excerpt(text: str, at: int, width: int = 60) -> str:
    """``text`` around offset ``at``: all of it when short, else ``width`` characters from a little before."""
    if len(text) <= width:
        return text
    start = max(0, min(at - width // 3, len(text) - width))
    return ("..." if start else "") + text[start:start + width] + ("..." if start + width < len(text) else "")


def text_difference(got: list[str], want: list[str]) -> str | None:
    """Where two documents' paragraphs first differ once whitespace runs are collapsed (``collapse``), or None.

    Returns:
        ``paragraph 3: expected 'Second line.', got 'Second lines.'`` (the paragraphs holding the first
        different character, shortened around it; the expected document's paragraph number when it differs).
    """
    a, b = collapse(got), collapse(want)
    if a == b:
        return None
    at = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
    n_got, p_got, k_got = _paragraph_at(got, at)
    n_want, p_want, k_want = _paragraph_at(want, at)
    if not a:
        return f"the result has no text, expected {shown(_excerpt(p_want, k_want))} (paragraph {n_want})"
    if not b:
        return f"paragraph {n_got}: expected no text, got {shown(_excerpt(p_got, k_got))}"
    where = f"paragraph {n_got}" + (f" (expected paragraph {n_want})" if n_want != n_got else "")
    if at >= len(b):
        return f"{where}: the text goes on past the expected end: {shown(_excerpt(p_got, k_got))}"
    if at >= len(a):
        return f"{where}: the text ends early; expected more: {shown(_excerpt(p_want, k_want))}"
    return f"{where}: expected {shown(_excerpt(p_want, k_want))}, got {shown(_excerpt(p_got, k_got))}"


def same_text(result_doc, gold_doc) -> bool:
    """The gate of the formatting metrics: the same text, whitespace runs aside (compare_docx_files' default).

    A different text is explained (``value_mismatch``, the first paragraph that differs)."""
    why = text_difference(paragraph_texts(result_doc), paragraph_texts(gold_doc))
    if why:
        logger.info("the result's text differs from the expected document's: %s", why)
        explain(VALUE_MISMATCH, f"the text differs from the expected document's: {why}")
    return why is None


def _grid_size(grid: list[list[str]]) -> str:
    widths = sorted({len(row) for row in grid})
    return f"{len(grid)} rows x {widths[0] if len(widths) == 1 else '/'.join(map(str, widths))} columns"


def table_difference(got: list[list[list[str]]], want: list[list[list[str]]]) -> tuple[str, str] | None:
    """The first difference between two documents' tables (``table_grids``), or None.

    Returns:
        ``(kind, text)``: ``structure_mismatch`` for the number of tables or a table's size,
        ``value_mismatch`` for a cell (``table 1, row 2, column 2: expected 'd', got 'e'``).
    """
    if len(got) != len(want):
        return STRUCTURE_MISMATCH, f"{len(got)} tables, expected {len(want)}"
    for t, (g, w) in enumerate(zip(got, want), 1):
        if len(g) != len(w) or any(len(rg) != len(rw) for rg, rw in zip(g, w)):
            return STRUCTURE_MISMATCH, f"table {t}: {_grid_size(g)}, expected {_grid_size(w)}"
        for i, (rg, rw) in enumerate(zip(g, w), 1):
            for j, (cg, cw) in enumerate(zip(rg, rw), 1):
                if cg != cw:
                    return VALUE_MISMATCH, f"table {t}, row {i}, column {j}: expected {shown(cw)}, got {shown(cg)}"
    return None
