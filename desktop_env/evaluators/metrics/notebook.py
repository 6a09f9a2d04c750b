"""Jupyter notebook metrics: outputs, cells, whole files, executed and cleared cells."""
from __future__ import annotations

import base64
import io
import json
import logging
import re
from typing import Any

import nbformat
from PIL import Image, UnidentifiedImageError

from desktop_env.evaluators.metrics.differences import first_line_difference, json_difference, missing_file, one_line
from desktop_env.evaluators.metrics.images import DEFAULT_THRESHOLD, image_similarity, images_match
from desktop_env.evaluators.metrics.utils import MetricError, as_existing_path, expected_value
from desktop_env.evaluators.reasons import (MISSING_RESULT, RULE_FAILED, STRUCTURE_MISMATCH, UNREADABLE_RESULT,
                                            VALUE_MISMATCH, explain, fail, shown)
from desktop_env.registry import METRICS

logger = logging.getLogger(__name__)


def read_notebook(value: Any, as_version: int = 4, what: str = "result notebook"):
    """The notebook at a path, or None (explained, naming ``what`` and the file) when it is missing or
    not a notebook."""
    p = as_existing_path(value)
    if p is None:
        explain(MISSING_RESULT, missing_file(value, what))
        return None
    try:
        return nbformat.read(str(p), as_version=as_version)
    except Exception as exc:  # nbformat raises json, validation and key errors on bad files
        logger.info("not a readable notebook: %s (%s)", p, exc)
        explain(UNREADABLE_RESULT, f"the {what} {p.name} is not a readable notebook: {_error(exc)}")
        return None


def _error(exc: Exception) -> str:
    """An exception in one short line, with its type."""
    return f"{type(exc).__name__}: {one_line(exc, 150)}"


def _source(cell) -> str:
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else src


# pip's chatter when a cell installs a package that a rerun finds already installed
_PIP_NOISE = re.compile(r"^[ \t]*(Requirement already satisfied|Successfully installed|Collecting|Downloading"
                        r"|Using cached|Installing collected packages)\b.*(\n|$)", re.M)
_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")  # <matplotlib.axes.Axes at 0x7f...>: differs on every run
_TEXT_REPRS = ("text/plain", "text/html", "text/markdown", "text/latex")  # preferred first
# a default repr (<...Styler at 0x7f...>, <IPython.core.display.HTML object>): says nothing of the content
_OBJECT_REPR = re.compile(r"<[^<>]*( at 0x[0-9a-fA-F]+| object)>")
_RASTER = ("image/png", "image/jpeg", "image/gif", "image/webp", "image/bmp")


def _text(value: Any) -> str:
    return "".join(value) if isinstance(value, list) else (value or "")


def normalise_html(html: str) -> str:
    """HTML output without what differs between runs of the same code.

    Drops comments, ``<style>`` and ``<script>`` blocks, every tag attribute (pandas Styler
    ids like ``T_95826_row0_col0``, classes, inline styles, ``border``), memory addresses and
    whitespace between tags; tags and text stay.
    """
    html = re.sub(r"<!--.*?-->", "", html, flags=re.S)
    html = re.sub(r"<(style|script)\b[^>]*>.*?</\1\s*>", "", html, flags=re.S | re.I)
    html = re.sub(r"<\s*(/?)\s*([A-Za-z][\w:-]*)[^>]*>", lambda m: f"<{m.group(1)}{m.group(2).lower()}>", html)
    html = _ADDRESS.sub(" at 0x", html)
    html = re.sub(r"\s*(<[^>]*>)\s*", r"\1", html)
    return re.sub(r"\s+", " ", html).strip()


def _comparable_outputs(outputs: list, ignore_stderr: bool, kept_types) -> list[dict]:
    """A code cell's outputs as the items compared: streams, errors and rich data.

    Streams: stderr dropped when ``ignore_stderr``, pip install chatter dropped, consecutive
    chunks of one stream merged (a kernel may deliver one ``print`` as several messages, and a
    dropped stderr warning may sit between them). Errors: only the exception name. Rich data
    (``execute_result``, ``display_data``; one kind, as ``df`` and ``display(df)`` show the
    same): only the MIME types ``kept_types(mime)`` keeps; an output left with none is dropped.
    """
    items: list[dict] = []
    for out in outputs:
        kind = out.get("output_type")
        if kind == "stream":
            name = out.get("name", "stdout")
            text = _PIP_NOISE.sub("", _text(out.get("text")))
            if (name == "stderr" and ignore_stderr) or not text:
                continue
            if items and items[-1]["kind"] == "stream" and items[-1]["name"] == name:
                items[-1]["text"] += text
            else:
                items.append({"kind": "stream", "name": name, "text": text})
        elif kind == "error":
            items.append({"kind": "error", "ename": out.get("ename")})
        elif kind in ("execute_result", "display_data", "update_display_data"):
            data = {mime: value for mime, value in out.get("data", {}).items() if kept_types(mime)}
            if data:
                items.append({"kind": "data", "data": data})
    return items


def _decode_image(value: Any):
    try:
        with Image.open(io.BytesIO(base64.b64decode(_text(value)))) as im:
            im.load()
            return im.copy()
    except (ValueError, UnidentifiedImageError, OSError):
        return None


def _same_value(mime: str, a: Any, b: Any) -> bool:
    if mime == "text/plain":
        return _ADDRESS.sub(" at 0x", _text(a)) == _ADDRESS.sub(" at 0x", _text(b))
    if mime == "text/html":
        return normalise_html(_text(a)) == normalise_html(_text(b))
    if mime in _RASTER:
        ia, ib = _decode_image(a), _decode_image(b)
        if ia is not None and ib is not None:
            return images_match(ia, ib, resize=True)  # a re-rendered plot: same look, maybe a few pixels wider
    if isinstance(a, (str, list)) and isinstance(b, (str, list)):
        return _text(a) == _text(b)
    return a == b  # application/json and the like


def _value_difference(mime: str, a: Any, b: Any) -> str:
    """How two values of one MIME type differ (``a`` the result's), for a reason: ``"differs at line 3: ..."``."""
    if mime in _RASTER:
        ia, ib = _decode_image(a), _decode_image(b)
        if ia is not None and ib is not None:
            return (f"looks different: similarity {image_similarity(ia, ib, resize=True):.4f} < threshold "
                    f"{DEFAULT_THRESHOLD:g}")
    if isinstance(a, (str, list)) and isinstance(b, (str, list)):
        x, y = _text(a), _text(b)
        if mime == "text/html":
            x, y = normalise_html(x), normalise_html(y)
        elif mime == "text/plain":
            x, y = _ADDRESS.sub(" at 0x", x), _ADDRESS.sub(" at 0x", y)
        return f"differs at {first_line_difference(x, y)}"
    return f"differs: expected {shown(b)}, got {shown(a)}"


def _data_difference(a: dict, b: dict, mime_types: list[str] | None, with_images: bool) -> str | None:
    """How two rich outputs differ (see :func:`_same_data`), or None when they show the same thing."""
    if mime_types is None:
        placeholder = any(_OBJECT_REPR.fullmatch(_text(x.get("text/plain")).strip()) for x in (a, b))
        order = (*_TEXT_REPRS[1:], _TEXT_REPRS[0]) if placeholder else _TEXT_REPRS
        common = next((t for t in order if t in a and t in b), None)
        if common is None and any(t in a or t in b for t in _TEXT_REPRS):
            return f"no text representation on both sides: expected {sorted(b)}, got {sorted(a)}"
        checks = [common] if common else []
    else:
        checks = list(mime_types)
    if with_images:
        checks += sorted({t for t in (*a, *b) if t.startswith("image/") and t not in checks})
    for t in checks:
        if (t in a) != (t in b):
            return f"{t} is missing" if t in b else f"{t} is not expected"
        if t in a and not _same_value(t, a[t], b[t]):
            return f"{t} {_value_difference(t, a[t], b[t])}"
    return None


def _same_data(a: dict, b: dict, mime_types: list[str] | None, with_images: bool) -> bool:
    """Whether two rich outputs show the same thing.

    With ``mime_types`` None, the first text representation both carry is compared, text/plain
    first (both must carry one when either carries text); text/plain comes last when it is only
    an object's default repr (a pandas Styler's ``<...Styler at 0x7f...>``, IPython's
    ``<IPython.core.display.HTML object>``). Otherwise every listed type must be on both sides
    or neither, and equal. Images (when compared) must be on both sides and look alike.
    """
    return _data_difference(a, b, mime_types, with_images) is None


def _described(item: dict) -> str:
    """One compared output item in a few words."""
    if item["kind"] == "stream":
        return f"{item['name']} {shown(item['text'])}"
    if item["kind"] == "error":
        return f"an error {item['ename']}"
    return f"a result or display ({', '.join(item['data'])})"


def _item_difference(a: dict, b: dict, mime_types: list[str] | None, with_images: bool) -> str | None:
    """How two compared output items differ (``a`` the result's), or None when they are the same."""
    if a["kind"] != b["kind"] or (a["kind"] == "stream" and a["name"] != b["name"]):
        return f"expected {_described(b)}, got {_described(a)}"
    if a["kind"] == "data":
        return _data_difference(a["data"], b["data"], mime_types, with_images)
    if a == b:
        return None
    if a["kind"] == "stream":
        return f"{a['name']} differs at {first_line_difference(a['text'], b['text'])}"
    return f"expected an error {b['ename']}, got an error {a['ename']}"


def _same_item(a: dict, b: dict, mime_types: list[str] | None, with_images: bool) -> bool:
    return _item_difference(a, b, mime_types, with_images) is None


def _outputs_difference(oa: list[dict], ob: list[dict], mime_types: list[str] | None, with_images: bool) -> str:
    """Where the compared outputs of a code cell first differ (``oa`` the result's): the output, and how."""
    for n, (x, y) in enumerate(zip(oa, ob)):
        found = _item_difference(x, y, mime_types, with_images)
        if found:
            return f"output {n}: {found}"
    if len(oa) < len(ob):
        return f"{len(oa)} outputs, expected {len(ob)}: output {len(oa)} should be {_described(ob[len(oa)])}"
    return f"{len(oa)} outputs, expected {len(ob)}: output {len(ob)} is {_described(oa[len(ob)])}"


def _pairs(result, expected):
    a, b = read_notebook(result), read_notebook(expected, what="expected notebook")
    if a is None or b is None:
        return None
    if len(a.cells) != len(b.cells):
        logger.info("notebooks have %d and %d cells", len(a.cells), len(b.cells))
        explain(STRUCTURE_MISMATCH, f"the notebook has {len(a.cells)} cells, expected {len(b.cells)}")
        return None
    return list(zip(a.cells, b.cells))


@METRICS.register()
def compare_notebook_outputs(result: Any, expected: Any, ignore_stderr: bool = True, ignore_images: bool = True,
                             mime_types: list[str] | None = None) -> float:
    """1 when both notebooks have the same cells (count and types) and every code cell shows the same outputs.

    What a rerun of a correct notebook reproduces is compared; what changes between runs is not:

    - stdout streams, exactly (consecutive chunks merged, pip's "Requirement already satisfied"
      chatter dropped); stderr streams (warnings) are ignored;
    - results and displays (``execute_result`` / ``display_data``): their ``text/plain``, or
      their ``text/html`` (then markdown, latex) when one side has no ``text/plain`` or it is
      only a default repr (``<... at 0x7f...>``, ``<... object>``), after removing what varies
      between runs (memory addresses; html ids, classes, styles and scripts; see
      :func:`normalise_html`); images are ignored;
    - errors: an error where the gold has none (or none where it has one) fails, and the
      exception name must match; tracebacks are not compared.

    Execution counts, sources and metadata are ignored.

    Args:
        ignore_stderr: False compares stderr streams too.
        ignore_images: False also compares images (``image/*``): both sides must have them and
            they must look alike (:func:`~desktop_env.evaluators.metrics.images.image_similarity`
            at its default threshold, across scale).
        mime_types: compare exactly these MIME types of results and displays (each on both sides
            or neither, and equal after the same normalisation) instead of the default.

    Raises:
        MetricError: ``mime_types`` is not a list of MIME type strings.
    """
    if mime_types is not None and (isinstance(mime_types, str) or not isinstance(mime_types, (list, tuple))
                                   or not all(isinstance(t, str) for t in mime_types)):
        raise MetricError(f"compare_notebook_outputs: mime_types must be a list of MIME types, got {mime_types!r}")
    pairs = _pairs(result, expected)
    if pairs is None:
        return 0.0
    wanted = set(_TEXT_REPRS if mime_types is None else mime_types)

    def kept(mime: str) -> bool:
        return mime in wanted or (not ignore_images and mime.startswith("image/"))

    for index, (ca, cb) in enumerate(pairs):
        if ca.cell_type != cb.cell_type:
            logger.info("cell %d is %s in the result, %s in the gold", index, ca.cell_type, cb.cell_type)
            return fail(STRUCTURE_MISMATCH, f"cells[{index}] is a {ca.cell_type} cell, expected a {cb.cell_type} cell")
        if ca.cell_type != "code":
            continue
        oa = _comparable_outputs(ca.get("outputs", []), ignore_stderr, kept)
        ob = _comparable_outputs(cb.get("outputs", []), ignore_stderr, kept)
        if len(oa) != len(ob) or not all(_same_item(x, y, mime_types, not ignore_images) for x, y in zip(oa, ob)):
            logger.info("cell %d outputs differ: %.500r vs gold %.500r", index, oa, ob)
            return fail(VALUE_MISMATCH, f"cells[{index}] outputs: "
                                        f"{_outputs_difference(oa, ob, mime_types, not ignore_images)}")
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
    for index, (ca, cb) in enumerate(pairs):
        sa, sb = _source(ca), _source(cb)
        if ignore_blanks:
            sa, sb = sa.strip(), sb.strip()
        if ca.cell_type != cb.cell_type:
            return fail(STRUCTURE_MISMATCH, f"cells[{index}] is a {ca.cell_type} cell, expected a {cb.cell_type} cell")
        if sa != sb:
            return fail(VALUE_MISMATCH, f"cells[{index}] source differs at {first_line_difference(sa, sb)}")
    return 1.0


@METRICS.register()
def compare_ipynb_files(result: Any, expected: Any) -> float:
    """1 when two .ipynb files are equal as JSON, ignoring notebook-level and cell-level metadata."""
    pa, pb = as_existing_path(result), as_existing_path(expected)
    if pa is None or pb is None:
        missing = (result, "result notebook") if pa is None else (expected, "expected notebook")
        return fail(MISSING_RESULT, missing_file(*missing))
    loaded = []
    for path, what in ((pa, "result notebook"), (pb, "expected notebook")):
        try:
            loaded.append(json.loads(path.read_text(encoding="utf-8")))
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            return fail(UNREADABLE_RESULT, f"the {what} {path.name} is not JSON: {_error(exc)}")
    a, b = loaded

    def strip(nb):
        nb = {k: v for k, v in nb.items() if k != "metadata"}
        nb["cells"] = [{k: v for k, v in c.items() if k not in ("metadata", "id")} for c in nb.get("cells", [])]
        for c in nb["cells"]:
            if isinstance(c.get("source"), list):
                c["source"] = "".join(c["source"])
        return nb
    sa, sb = strip(a), strip(b)
    if sa != sb:
        kind, text = json_difference(sa, sb) or (VALUE_MISMATCH, "the notebooks differ")
        return fail(kind, f"{text} (metadata and cell ids ignored)")
    return 1.0


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
    want = list(want if want is not None else [])
    if unexecuted != want:
        return fail(RULE_FAILED, _cells_difference(nb, unexecuted, want, cell_type, "not executed"))
    return 1.0


@METRICS.register()
def are_jupyter_outputs_cleared(result: Any, expected: Any = None, cell_type: str = "code",
                                version: int = 4) -> float:
    """1 when the indices of cells still holding outputs (or an execution count) equal ``expected["expected"]``
    (default ``[]``: every output cleared)."""
    nb = read_notebook(result, version)
    if nb is None:
        return 0.0
    with_output = [i for i, c in _code_cells(nb, cell_type) if c.get("outputs") or c.get("execution_count")]
    want = list((expected_value(expected) if expected is not None else []) or [])
    if with_output != want:
        return fail(RULE_FAILED, _cells_difference(nb, with_output, want, cell_type, "holding outputs"))
    return 1.0


def _cells_difference(nb, found: list[int], want: list, cell_type: str, state: str) -> str:
    """The reason text of ``found`` (the indices of the ``cell_type`` cells in ``state``) not being ``want``:
    the first cell that should not be in that state, or that should, with what it holds."""
    summary = f"the {cell_type} cells {state} are {found}, expected {want}"
    for i in found:
        if i not in want:
            cell = nb.cells[i]
            return (f"cells[{i}] is {state} ({len(cell.get('outputs') or [])} outputs, execution count "
                    f"{cell.get('execution_count')}); {summary}")
    for i in want:
        if i not in found:
            return f"cells[{i}] should be {state} but is not; {summary}"
    return summary
