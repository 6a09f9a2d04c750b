"""Accessibility trees for models: the XML as a trimmed element table, and set-of-marks boxes drawn on screenshots."""
from __future__ import annotations

import io
import logging
import math
from dataclasses import dataclass

from PIL import Image, ImageDraw, ImageFont

from desktop_env.a11y_tree import INTERACTIVE_ROLES, Element, parse_elements
from desktop_env.agents.parsing import ScreenMapping

log = logging.getLogger(__name__)

#: Characters per token in the estimate: about 4 for English text and XML-like
#: tables with the common BPE tokenizers; no tokenizer is loaded (no download, any model).
CHARS_PER_TOKEN = 4
HEADER = "tag\tname\ttext\tposition (top-left x&y)\tsize (w&h)"
SOM_HEADER = "index\ttag\tname\ttext"


def estimate_tokens(text: str) -> int:
    """Token estimate used for ``--a11y_tree_max_tokens``: ``ceil(len(text) / CHARS_PER_TOKEN)``."""
    return math.ceil(len(text) / CHARS_PER_TOKEN)


def _cell(value: str, limit: int = 120) -> str:
    value = value.replace("\t", " ").replace("\n", " ")
    return value if len(value) <= limit else value[:limit - 1] + "…"


def linearize(elements: list[Element], mapping: ScreenMapping | None = None) -> list[str]:
    """Table lines (``HEADER`` columns), positions in model space when ``mapping`` is given."""
    lines = []
    for e in elements:
        x, y, w, h = e.x, e.y, e.w, e.h
        if mapping is not None:
            x, y = mapping.to_model(x, y)
            w, h = mapping.to_model(w, h)
        lines.append(f"{e.tag}\t{_cell(e.name)}\t{_cell(e.text)}\t({x}, {y})\t({w}, {h})")
    return lines


def trim_lines(lines: list[str], max_tokens: int, header: str = "") -> str:
    """Join ``lines`` under ``header``, keeping whole lines while the estimate stays within ``max_tokens``.

    When lines are dropped, a last line says how many (so the model knows the table is cut).
    """
    kept = [header] if header else []
    chars = len(header)
    for i, line in enumerate(lines):
        more = len(line) + (1 if kept else 0)
        if math.ceil((chars + more) / CHARS_PER_TOKEN) > max_tokens:
            kept.append(f"[... {len(lines) - i} more elements trimmed to fit {max_tokens} tokens]")
            break
        kept.append(line)
        chars += more
    return "\n".join(kept)


def a11y_text(xml: str, screen: tuple[int, int], max_tokens: int, mapping: ScreenMapping | None = None) -> str:
    """The accessibility tree as the text a model reads: a table trimmed to ``max_tokens``."""
    return trim_lines(linearize(parse_elements(xml, screen), mapping), max_tokens, HEADER)


@dataclass
class Marks:
    """A set-of-marks observation: the annotated screenshot (model size), its table, tag centres.

    Attributes:
        png: the screenshot at model size with numbered boxes drawn.
        table: ``SOM_HEADER`` table lines (``index`` is the number drawn), trimmed.
        centres: number -> element centre in model space (what ``tag_N`` stands for).
    """

    png: bytes
    table: str
    centres: dict[int, tuple[int, int]]


def _font(size: int):
    try:
        return ImageFont.load_default(size=size)
    except TypeError:  # Pillow < 10.1 has no sized default font
        return ImageFont.load_default()


def draw_marks(screenshot: Image.Image, xml: str, mapping: ScreenMapping, max_tokens: int) -> Marks:
    """Number the interactive elements of ``xml`` and draw their boxes on ``screenshot``.

    Args:
        screenshot: the real-size screen image.
        xml: the accessibility tree of the same moment.
        mapping: real screen -> model size (the image is resized to ``mapping.model``).
        max_tokens: budget for the element table (whole lines are kept).
    """
    elements = [e for e in parse_elements(xml, mapping.screen) if e.tag in INTERACTIVE_ROLES or e.name]
    image = screenshot.convert("RGB")
    if tuple(image.size) != tuple(mapping.model):
        image = image.resize(tuple(mapping.model), Image.LANCZOS)
    draw = ImageDraw.Draw(image)
    font = _font(max(10, mapping.model[1] // 60))
    lines, centres = [], {}
    for n, e in enumerate(elements, start=1):
        x0, y0 = mapping.to_model(e.x, e.y)
        x1, y1 = mapping.to_model(e.x + e.w, e.y + e.h)
        x0, y0 = max(x0, 0), max(y0, 0)
        x1, y1 = min(x1, mapping.model[0] - 1), min(y1, mapping.model[1] - 1)
        if x1 <= x0 or y1 <= y0:
            continue
        draw.rectangle([x0, y0, x1, y1], outline=(255, 0, 0), width=2)
        label = str(n)
        box = draw.textbbox((x0, y0), label, font=font)
        draw.rectangle([box[0] - 1, box[1] - 1, box[2] + 1, box[3] + 1], fill=(255, 0, 0))
        draw.text((x0, y0), label, fill=(255, 255, 255), font=font)
        centres[n] = ((x0 + x1) // 2, (y0 + y1) // 2)
        lines.append(f"{n}\t{e.tag}\t{_cell(e.name)}\t{_cell(e.text)}")
    buf = io.BytesIO()
    image.save(buf, format="PNG")
    return Marks(buf.getvalue(), trim_lines(lines, max_tokens, SOM_HEADER), centres)
