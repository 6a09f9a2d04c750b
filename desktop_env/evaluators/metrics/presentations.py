"""compare_pptx_files: a pptx deck against a gold deck, slide by slide, with the suite's examine_* options."""
from __future__ import annotations

import difflib
import hashlib
import io
import logging
from dataclasses import dataclass, fields
from typing import Any

from lxml import etree
from PIL import Image, UnidentifiedImageError
from pptx.enum.shapes import MSO_SHAPE_TYPE, PP_PLACEHOLDER

from desktop_env.evaluators.metrics.differences import plural
from desktop_env.evaluators.metrics.images import images_match
from desktop_env.evaluators.metrics.pptx_parts import (
    _A, _P, _Paragraph, _Run, _Theme, _background, _gold_deck, _kind, _master_of, _paragraphs, _result_deck,
    _shape_text,
)
from desktop_env.evaluators.metrics.utils import OptionError
from desktop_env.evaluators.reasons import RULE_FAILED, STRUCTURE_MISMATCH, VALUE_MISMATCH, fail, shown
from desktop_env.registry import METRICS

logger = logging.getLogger(__name__)


# --------------------------------------------------------------------------- compare_pptx_files options
@dataclass(frozen=True)
class PptxOptions:
    """The options of :func:`compare_pptx_files` (the suite's names less ``examine_``), with their defaults."""

    number_of_slides: bool = True
    shape: bool = True
    text: bool = True
    indent: bool = True
    font_name: bool = True
    font_size: bool = True
    font_bold: bool = True
    font_italic: bool = True
    color_rgb: bool = True
    font_underline: bool = True
    strike_through: bool = True
    alignment: bool = True
    run_count: bool = True
    bullets: bool = True
    background_color: bool = True
    note: bool = True
    image: bool = True
    title_bottom_position: bool = False
    table_bottom_position: bool = False
    right_position: bool = False
    top_position: bool = False
    shape_for_shift_size: bool = False
    shape_lenient_height: bool = False
    image_size: bool = False
    modify_height: bool = False
    approximately_tolerance: float = 0.005


_FLAG_OPTIONS = {f"examine_{f.name}": f.name for f in fields(PptxOptions) if f.type in ("bool", bool)}
_ALL_OPTIONS = sorted([*_FLAG_OPTIONS, "approximately_tolerance"])


def check_pptx_options(options: dict) -> PptxOptions:
    """Validate compare_pptx_files' options (keys starting with ``_`` are comments) and return them.

    Raises:
        OptionError: an unknown option (with a did-you-mean), a flag that is not true/false, or a
            tolerance that is not a number in [0, 1).
    """
    values: dict[str, Any] = {}
    for key, value in options.items():
        if key.startswith("_"):
            continue  # "_note" and the like: comments the suite's task files carry
        if key == "approximately_tolerance":
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value < 1:
                raise OptionError(f"must be a relative tolerance in [0, 1) such as 0.005, got {value!r}", key)
            values["approximately_tolerance"] = float(value)
        elif key in _FLAG_OPTIONS:
            if not isinstance(value, bool):
                raise OptionError(f"must be true or false, got {value!r}", key)
            values[_FLAG_OPTIONS[key]] = value
        else:
            close = difflib.get_close_matches(key, _ALL_OPTIONS, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise OptionError(f"unknown option{hint} (options: {', '.join(_ALL_OPTIONS)})", key)
    return PptxOptions(**values)


# --------------------------------------------------------------------------- compare_pptx_files
_BOX = ("left", "top", "width", "height")
_EDGE_BAND = 0.25  # a shape moved "to the bottom" has its bottom edge in the slide's last quarter, etc.
_TITLE_TYPES = (PP_PLACEHOLDER.TITLE, PP_PLACEHOLDER.CENTER_TITLE)


def _close(a: int | None, b: int | None, tol: float) -> bool:
    """Whether two lengths agree within the relative tolerance ``tol`` (0 only matches 0)."""
    if a is None or b is None:
        return a == b
    return a == b or abs(a - b) <= tol * max(abs(a), abs(b))


def _same_box(a, b, tol: float, keys: tuple[str, ...] = _BOX) -> bool:
    return all(_close(getattr(a, k), getattr(b, k), tol) for k in keys)


def shape_box(shape) -> str:
    """A shape's position and size, as a message shows it."""
    return "(" + ", ".join(f"{k}={getattr(shape, k)}" for k in _BOX) + ")"


def _is_title(shape) -> bool:
    try:
        return shape.is_placeholder and shape.placeholder_format.type in _TITLE_TYPES
    except ValueError:  # a placeholder python-pptx cannot type
        return False


def _is_freeform(shape) -> bool:
    try:
        return shape.shape_type == MSO_SHAPE_TYPE.FREEFORM
    except NotImplementedError:
        return False


@dataclass(frozen=True)
class _Move:
    """One "move X to the Y of the slide" option: which shapes it is about and where they must go."""

    option: str
    what: str
    side: str  # bottom | top | right

    def targets(self, shape, kind: str) -> bool:
        if self.option == "title_bottom_position":
            return _is_title(shape)
        if self.option == "table_bottom_position":
            return kind == "table"
        return kind == "picture"

    def reached(self, moved, original, width: int, height: int) -> bool:
        """Whether ``moved`` went towards the side and its edge on that side is in the slide's outer band."""
        if None in (moved.left, moved.top, moved.width, moved.height, original.left, original.top):
            return False
        if self.side == "bottom":
            return moved.top > original.top and moved.top + moved.height >= (1 - _EDGE_BAND) * height
        if self.side == "top":
            return moved.top < original.top and moved.top <= _EDGE_BAND * height
        return moved.left > original.left and moved.left + moved.width >= (1 - _EDGE_BAND) * width


_MOVES = (
    _Move("title_bottom_position", "title", "bottom"),
    _Move("table_bottom_position", "table", "bottom"),
    _Move("right_position", "picture", "right"),
    _Move("top_position", "picture", "top"),
)
#: moves whose other shapes must keep their place and size (the suite checks them for these two)
_PINNING_MOVES = ("title_bottom_position", "table_bottom_position")


#: why two decks differ: ``(reason kind, text)``
Difference = tuple[str, str]


class _Comparison:
    """One comparison of a result deck with a gold deck; each check returns why they differ
    (a :data:`Difference`), or None."""

    def __init__(self, result, gold, opts: PptxOptions):
        self.result, self.gold, self.opts = result, gold, opts
        self.tol = opts.approximately_tolerance
        self.moves = [m for m in _MOVES if getattr(opts, m.option)]
        self.pinned = any(m.option in _PINNING_MOVES for m in self.moves)
        self.moved: set[str] = set()
        self.theme1 = self.theme2 = None  # the current slides' themes (scheme colours of runs)

    def run(self) -> Difference | None:
        n1, n2 = len(self.result.slides), len(self.gold.slides)
        if self.opts.number_of_slides and n1 != n2:
            return STRUCTURE_MISMATCH, f"{plural(n1, 'slide')}, expected {n2}"
        for i, (s1, s2) in enumerate(zip(self.result.slides, self.gold.slides), 1):
            why = self.slide(s1, s2, f"slide {i}")
            if why:
                return why
        for move in self.moves:
            if move.option not in self.moved:
                return RULE_FAILED, f"no {move.what} was moved to the {move.side} of its slide (examine_{move.option})"
        return None

    def slide(self, s1, s2, where: str) -> Difference | None:
        self.theme1, self.theme2 = _Theme(_master_of(s1)), _Theme(_master_of(s2))
        if self.opts.background_color:
            b1, b2 = _background(s1, self.theme1), _background(s2, self.theme2)
            if b1 != b2:
                return VALUE_MISMATCH, f"{where}: background expected {_fill(b2)}, got {_fill(b1)}"
        if self.opts.note and _notes(s1) != _notes(s2):
            return VALUE_MISMATCH, f"{where}: notes expected {shown(_notes(s2))}, got {shown(_notes(s1))}"
        return self.shapes(list(s1.shapes), list(s2.shapes), where)

    def shapes(self, shapes1: list, shapes2: list, where: str) -> Difference | None:
        if len(shapes1) != len(shapes2):
            return STRUCTURE_MISMATCH, f"{where}: {plural(len(shapes1), 'shape')}, expected {len(shapes2)}"
        for j, (a, b) in enumerate(zip(shapes1, shapes2), 1):
            why = self.shape(a, b, f"{where}, shape {j} ({b.name!r})")
            if why:
                return why
        return None

    def shape(self, a, b, where: str) -> Difference | None:
        kind = _kind(b)
        if _kind(a) != kind:
            return STRUCTURE_MISMATCH, f"{where}: a {_kind(a)}, expected a {kind}"
        why = self.geometry(a, b, kind, where)
        if why:
            return why
        if kind == "group":
            return self.shapes(list(a.shapes), list(b.shapes), where)
        if kind == "picture":
            if self.opts.image and not _same_picture(a, b):
                return VALUE_MISMATCH, f"{where}: another picture than the expected one ({_picture_text(a)}, " \
                                       f"expected {_picture_text(b)})"
            return None
        if kind == "table":
            return self.table(a, b, where)
        if kind == "shape":
            return self.text(a.element.find(f"{_P}txBody"), b.element.find(f"{_P}txBody"), where)
        return None

    def geometry(self, a, b, kind: str, where: str) -> Difference | None:
        opts, tol = self.opts, self.tol
        differs = VALUE_MISMATCH, f"{where}: expected at {shape_box(b)}, got {shape_box(a)}"
        moves = [m for m in self.moves if m.targets(b, kind)]
        if moves:
            if not _same_box(a, b, tol):  # a target that moved must have gone where every such option says
                for move in moves:
                    if not move.reached(a, b, self.result.slide_width, self.result.slide_height):
                        return (RULE_FAILED, f"{where}: the {move.what} moved but not to the {move.side} "
                                             f"(at {shape_box(a)}, was {shape_box(b)}; examine_{move.option})")
                    self.moved.add(move.option)
        elif self.pinned and not _same_box(a, b, tol):
            return differs
        # shapes without text (pictures, lines, empty boxes) are left to the options below: LibreOffice
        # moves decorative shapes by small amounts between saves
        with_text = bool(_shape_text(a).strip() or _shape_text(b).strip())
        if opts.shape and with_text and not _same_box(a, b, tol):
            return differs
        if opts.shape_lenient_height and with_text and not _same_box(a, b, tol, ("left", "top", "width")):
            return differs[0], differs[1] + " (height not compared)"
        if opts.shape_for_shift_size and not _same_box(a, b, tol):
            return differs
        if opts.image_size:
            keys = ("width", "height") if kind == "picture" else _BOX
            if not _same_box(a, b, tol, keys):
                return differs
        if opts.modify_height:
            height_only = kind != "shape" or (_is_freeform(a) and _is_freeform(b))
            if not _same_box(a, b, tol, ("height",) if height_only else _BOX):
                return differs
        return None

    def table(self, a, b, where: str) -> Difference | None:
        rows1, rows2 = _table_rows(a), _table_rows(b)
        if [len(r) for r in rows1] != [len(r) for r in rows2]:
            return STRUCTURE_MISMATCH, f"{where}: a table of {_table_size(rows1)}, expected {_table_size(rows2)}"
        for i, (r1, r2) in enumerate(zip(rows1, rows2), 1):
            for j, (c1, c2) in enumerate(zip(r1, r2), 1):
                why = self.text(c1.find(f"{_A}txBody"), c2.find(f"{_A}txBody"), f"{where}, cell ({i}, {j})")
                if why:
                    return why
        return None

    def text(self, body1: etree._Element | None, body2: etree._Element | None, where: str) -> Difference | None:
        opts = self.opts
        paras1, paras2 = _paragraphs(body1), _paragraphs(body2)
        text1, text2 = "\n".join(p.text for p in paras1), "\n".join(p.text for p in paras2)
        if opts.text and text1.strip() != text2.strip():
            return VALUE_MISMATCH, f"{where}: text expected {shown(text2.strip())}, got {shown(text1.strip())}"
        if len(paras1) != len(paras2):
            return STRUCTURE_MISMATCH, f"{where}: {plural(len(paras1), 'paragraph')}, expected {len(paras2)}"
        for k, (p1, p2) in enumerate(zip(paras1, paras2), 1):
            at = f"{where}, paragraph {k}"
            if opts.alignment and p1.align != p2.align:
                return VALUE_MISMATCH, f"{at}: alignment expected {p2.align!r}, got {p1.align!r}"
            if opts.text and p1.text != p2.text:
                return VALUE_MISMATCH, f"{at}: text expected {shown(p2.text)}, got {shown(p1.text)}"
            if opts.indent and not _same_level(p1.level, p2.level):
                return VALUE_MISMATCH, f"{at}: outline level expected {p2.level}, got {p1.level}"
            if opts.bullets and (p1.text.strip() or p2.text.strip()):
                if (p1.level or 0, p1.bullet) != (p2.level or 0, p2.bullet):
                    return (VALUE_MISMATCH, f"{at}: bullet expected {p2.bullet} at level {p2.level or 0}, "
                                            f"got {p1.bullet} at level {p1.level or 0}")
            why = self.runs(p1, p2, at)
            if why:
                return why
        return None

    def runs(self, p1: _Paragraph, p2: _Paragraph, where: str) -> Difference | None:
        runs1, runs2 = p1.runs, p2.runs
        if not p1.text.strip() and not p2.text.strip():
            return None  # an empty paragraph: its formatting shows nowhere
        if len(runs1) != len(runs2):
            if self.opts.run_count:
                return STRUCTURE_MISMATCH, (f"{where}: {plural(len(runs1), 'text run')} "
                                            f"{shown([r.text for r in runs1])}, expected {len(runs2)} "
                                            f"{shown([r.text for r in runs2])}")
            if len(_chars(runs1)) == len(_chars(runs2)):
                # the same text split differently: compare the formatting character by character
                runs1, runs2 = _chars(runs1), _chars(runs2)
        for r1, r2 in zip(runs1, runs2):
            prop = self.font_difference(r1, r2)
            if prop:
                return VALUE_MISMATCH, (f"{where}, run {shown(r2.text, 40)}: {prop} expected "
                                        f"{_prop_text(r2, prop)}, got {_prop_text(r1, prop)}")
        return None

    def font_difference(self, r1: _Run, r2: _Run) -> str | None:
        """The first examined font property that differs between two runs, or None."""
        opts = self.opts
        checks = (
            ("font", opts.font_name, r1.font == r2.font),
            ("size", opts.font_size, r1.size == r2.size),
            ("bold", opts.font_bold, r1.bold == r2.bold),
            ("italic", opts.font_italic, r1.italic == r2.italic),
            ("color", opts.color_rgb, self.same_color(r1.color, r2.color)),
            ("underline", opts.font_underline, r1.underline == r2.underline),
            ("strike", opts.strike_through, r1.strike == r2.strike),
        )
        return next((name for name, examined, same in checks if examined and not same), None)

    def same_color(self, c1: tuple | None, c2: tuple | None) -> bool:
        """Whether two run colours agree, scheme colours resolved through each slide's theme.

        A run without a colour of its own takes it from its styles, which are not resolved here: as in
        the suite, colours are compared only when both runs set one.
        """
        if c1 is None or c2 is None or c1 == c2:
            return True
        h1 = self.theme1.hex(c1)
        return h1 is not None and h1 == self.theme2.hex(c2)


def _prop_text(run: _Run, prop: str) -> str:
    """A run property of ``font_difference`` for a reason (the size in points, unset spelled out)."""
    value = getattr(run, prop)
    if value is None:
        return "inherited"
    if prop == "size" and value.isdigit():
        return f"{int(value) / 100:g} pt"
    if prop == "color":
        kind, name, mods = value
        return (f"#{name}" if kind in ("srgb", "sys") else f"{kind} {name}") + (f" {shown(mods)}" if mods else "")
    return shown(value)


def _fill(fill: tuple) -> str:
    """A background of ``_background`` for a reason: ``solid #FFFFFF``, ``gradFill``, ``none``."""
    if fill[0] == "solid":
        return f"solid #{fill[1]}" if isinstance(fill[1], str) else f"solid {shown(fill[1])}"
    return fill[0]


def _picture_text(picture) -> str:
    """A picture for a reason: its image's pixel size and byte count, or that it has no image of its own."""
    blob = picture_blob(picture)
    if blob is None:
        return "no embedded image"
    image = _decode(blob)
    return f"{len(blob)} bytes" if image is None else f"{image.width} x {image.height} pixels, {len(blob)} bytes"


def _notes(slide) -> str:
    if not slide.has_notes_slide:
        return ""
    frame = slide.notes_slide.notes_text_frame
    return frame.text.strip() if frame is not None else ""


def _table_rows(frame) -> list[list[etree._Element]]:
    tbl = frame.element.find(f".//{_A}tbl")
    return [] if tbl is None else [r.findall(f"{_A}tc") for r in tbl.findall(f"{_A}tr")]


def _table_size(rows: list[list]) -> str:
    return f"{len(rows)} x {max((len(r) for r in rows), default=0)}"


def _same_level(a: int | None, b: int | None) -> bool:
    # As in the suite: levels 0 and 1 (and no level) count as the first level.
    return a == b or ((a or 0) in (0, 1) and (b or 0) in (0, 1))


def _chars(runs: tuple[_Run, ...]) -> tuple[_Run, ...]:
    """The runs cut into one-character runs (to compare formatting across different run splits)."""
    return tuple(_Run(ch, *[getattr(r, f.name) for f in fields(_Run)][1:]) for r in runs for ch in r.text)


def picture_blob(picture) -> bytes | None:
    """A picture shape's image bytes, or None for a linked picture or one without an image part."""
    try:
        return picture.image.blob
    except (AttributeError, KeyError, ValueError):  # a linked picture, or no image part
        return None


def _decode(blob: bytes) -> Image.Image | None:
    try:
        with Image.open(io.BytesIO(blob)) as im:
            im.load()
            return im.copy()
    except (UnidentifiedImageError, OSError, ValueError, Image.DecompressionBombError):
        return None


def same_image(blob1: bytes | None, blob2: bytes | None) -> bool:
    """Same bytes, or pictures that look alike (a re-encoded copy of the same image, at any scale)."""
    if blob1 is None or blob2 is None:
        return False
    if hashlib.sha256(blob1).digest() == hashlib.sha256(blob2).digest():
        return True
    im1, im2 = _decode(blob1), _decode(blob2)
    return im1 is not None and im2 is not None and images_match(im1, im2, resize=True)


def _same_picture(a, b) -> bool:
    return same_image(picture_blob(a), picture_blob(b))


@METRICS.register(check=check_pptx_options)
def compare_pptx_files(result: Any, expected: Any, **options: Any) -> float:
    """1 when the pptx ``result`` matches the gold deck ``expected`` slide by slide, shape by shape.

    Compared, each part switched by an ``examine_*`` option (default in brackets):

    - ``number_of_slides`` [true]: the slide count (off: the slides both decks have).
    - ``background_color`` [true]: what fills each slide's background (its own, its layout's or its
      master's: a solid colour, scheme colours resolved, or the kind of fill).
    - ``note`` [true]: each slide's speaker notes (stripped).
    - always: the number of shapes on each slide (and in each group) and their kind (text shape,
      picture, table, chart, group, connector).
    - ``shape`` [true]: position and size of every shape that holds text, within
      ``approximately_tolerance`` (relative, default 0.005). Shapes without text (pictures, lines,
      empty boxes) are left to the options below.
    - ``shape_lenient_height`` [false]: left, top and width of shapes that hold text, not their
      height (LibreOffice refits a text box's height to its text).
    - ``shape_for_shift_size`` [false]: position and size of every shape, with text or not.
    - ``image_size`` [false]: width and height of pictures; position and size of other shapes.
    - ``modify_height`` [false]: the height of shapes without a text frame (pictures, tables,
      charts, groups, connectors) and of freeform shapes; position and size of the others.
    - ``title_bottom_position`` / ``table_bottom_position`` [false]: a title / table was moved down
      so that its bottom edge lies in the slide's lowest quarter; titles / tables either keep their
      place or moved so, at least one moved, and every other shape keeps its place and size.
    - ``right_position`` / ``top_position`` [false]: a picture was moved right (its right edge in the
      slide's rightmost quarter) / up (its top edge in the top quarter); pictures either keep their
      place or moved so, and at least one moved.
    - ``image`` [true]: each picture shows the same image (same bytes, or alike once decoded).
    - ``text`` [true]: each shape's and table cell's text (stripped) and each paragraph's text.
      The number of paragraphs is always compared.
    - ``alignment`` [true]: each paragraph's alignment (none set is left).
    - ``indent`` [true]: each paragraph's outline level (levels 0 and 1 count as the same, as in the suite).
    - ``bullets`` [true]: the bullet set on each non-empty paragraph (character, numbering, none,
      inherited) and its level.
    - ``run_count`` [true]: the number of text runs in each non-empty paragraph; off, runs split
      differently over the same text are compared character by character.
    - per run of a non-empty paragraph: ``font_name`` (latin typeface), ``font_size``,
      ``font_bold``, ``font_italic`` (not set = off), ``color_rgb`` (compared when both runs set a
      colour; scheme colours resolved through the theme), ``font_underline`` (kind, not set = none),
      ``strike_through`` [all true].

    Keys starting with ``_`` (``"_note"``) are comments and are ignored.

    Args:
        result: the agent's .pptx (a host path), or None when it is missing.
        expected: the gold .pptx (for the ``*_position`` options: the original deck, before the move).

    Returns:
        1.0 when everything examined matches, else 0.0 (the first difference is its reason).

    Raises:
        MetricError: an unknown option, a flag that is not true/false, a bad tolerance, or an
            unreadable gold file.
    """
    opts = check_pptx_options(options)
    gold = _gold_deck(expected, "compare_pptx_files")
    deck = _result_deck(result, "compare_pptx_files")
    if deck is None:
        return 0.0
    why = _Comparison(deck, gold, opts).run()
    if why:
        logger.info("compare_pptx_files: %s", why[1])
        return fail(*why)
    return 1.0
