"""Jupyter notebook metrics: outputs, cells, whole files, executed and cleared cells."""
from __future__ import annotations

import json
import logging
from typing import Any

import nbformat

from desktop_env.evaluators.metrics.utils import as_existing_path, expected_value
from desktop_env.registry import METRICS

logger = logging.getLogger(__name__)


def read_notebook(value: Any, as_version: int = 4):
    """The notebook at a path, or None when it is missing or not a notebook."""
    p = as_existing_path(value)
    if p is None:
        return None
    try:
        return nbformat.read(str(p), as_version=as_version)
    except Exception as exc:  # nbformat raises json, validation and key errors on bad files
        logger.info("not a readable notebook: %s (%s)", p, exc)
        return None


def _source(cell) -> str:
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else src


def _norm_output(out: dict) -> dict:
    """An output without what changes between equivalent runs (execution count, metadata)."""
    kind = out.get("output_type")
    norm: dict[str, Any] = {"output_type": kind}
    if kind == "stream":
        norm["name"] = out.get("name")
        norm["text"] = "".join(out.get("text", "")) if isinstance(out.get("text"), list) else out.get("text", "")
    elif kind in ("execute_result", "display_data"):
        data = out.get("data", {})
        norm["data"] = {k: ("".join(v) if isinstance(v, list) else v) for k, v in data.items()}
    elif kind == "error":
        norm["ename"], norm["evalue"] = out.get("ename"), out.get("evalue")
    return norm


def _norm_outputs(outputs: list) -> list[dict]:
    """Normalized outputs, consecutive stream chunks of the same stream merged.

    A kernel may deliver one ``print`` as several stream messages (timing decides), which
    the notebook stores as separate outputs; Jupyter shows them as one text.
    """
    merged: list[dict] = []
    for out in outputs:
        norm = _norm_output(out)
        last = merged[-1] if merged else None
        if (norm["output_type"] == "stream" and last is not None and last["output_type"] == "stream"
                and last["name"] == norm["name"]):
            last["text"] += norm["text"]
        else:
            merged.append(norm)
    return merged


def _pairs(result, expected):
    a, b = read_notebook(result), read_notebook(expected)
    if a is None or b is None:
        return None
    if len(a.cells) != len(b.cells):
        logger.info("notebooks have %d and %d cells", len(a.cells), len(b.cells))
        return None
    return list(zip(a.cells, b.cells))


@METRICS.register()
def compare_notebook_outputs(result: Any, expected: Any, ignore_images: bool = False) -> float:
    """1 when both notebooks have the same cells (count and types) and every code cell the same outputs.

    Execution counts and output metadata are ignored.

    Args:
        ignore_images: drop ``image/*`` data before comparing (plots differ in pixels between runs).
    """
    pairs = _pairs(result, expected)
    if pairs is None:
        return 0.0
    for ca, cb in pairs:
        if ca.cell_type != cb.cell_type:
            return 0.0
        if ca.cell_type != "code":
            continue
        oa = _norm_outputs(ca.get("outputs", []))
        ob = _norm_outputs(cb.get("outputs", []))
        if ignore_images:
            for o in oa + ob:
                if "data" in o:
                    o["data"] = {k: v for k, v in o["data"].items() if not k.startswith("image/")}
        if oa != ob:
            logger.info("outputs differ: %r vs %r", oa, ob)
            return 0.0
    return 1.0


@METRICS.register()
def compare_notebook_cells(result: Any, expected: Any, ignore_blanks: bool = False) -> float:
    """1 when both notebooks have the same cells: same types and same sources.

    Args:
        ignore_blanks: ignore leading/trailing whitespace of each source.
    """
    pairs = _pairs(result, expected)
    if pairs is None:
        return 0.0
    for ca, cb in pairs:
        sa, sb = _source(ca), _source(cb)
        if ignore_blanks:
            sa, sb = sa.strip(), sb.strip()
        if ca.cell_type != cb.cell_type or sa != sb:
            return 0.0
    return 1.0


@METRICS.register()
def compare_ipynb_files(result: Any, expected: Any) -> float:
    """1 when two .ipynb files are equal as JSON, ignoring notebook-level and cell-level metadata."""
    pa, pb = as_existing_path(result), as_existing_path(expected)
    if pa is None or pb is None:
        return 0.0
    try:
        a, b = json.loads(pa.read_text(encoding="utf-8")), json.loads(pb.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError):
        return 0.0

    def strip(nb):
        nb = {k: v for k, v in nb.items() if k != "metadata"}
        nb["cells"] = [{k: v for k, v in c.items() if k not in ("metadata", "id")} for c in nb.get("cells", [])]
        for c in nb["cells"]:
            if isinstance(c.get("source"), list):
                c["source"] = "".join(c["source"])
        return nb
    return float(strip(a) == strip(b))


def _code_cells(nb, cell_type: str):
    return [(i, c) for i, c in enumerate(nb.cells) if c.cell_type == cell_type]


@METRICS.register()
def is_jupyter_cell_executed(result: Any, expected: Any, cell_type: str = "code", version: int = 4) -> float:
    """1 when the indices of the not-executed ``cell_type`` cells equal ``expected["expected"]`` (usually ``[]``)."""
    nb = read_notebook(result, version)
    if nb is None:
        return 0.0
    unexecuted = [i for i, c in _code_cells(nb, cell_type) if not c.get("execution_count")]
    want = expected_value(expected)
    return float(unexecuted == list(want if want is not None else []))


@METRICS.register()
def are_jupyter_outputs_cleared(result: Any, expected: Any = None, cell_type: str = "code",
                                version: int = 4) -> float:
    """1 when the indices of cells still holding outputs (or an execution count) equal ``expected["expected"]``
    (default ``[]``: every output cleared)."""
    nb = read_notebook(result, version)
    if nb is None:
        return 0.0
    with_output = [i for i, c in _code_cells(nb, cell_type) if c.get("outputs") or c.get("execution_count")]
    want = expected_value(expected) if expected is not None else []
    return float(with_output == list(want or []))
