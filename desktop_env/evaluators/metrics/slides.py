"""Single-deck presentation checks (orientation, picture placement, fills, transitions, slide numbers), Impress
settings in LibreOffice's profile (xcu) and panes, and the text-box position in an image."""
from __future__ import annotations

import logging
import math
from typing import Any

import numpy as np
from lxml import etree
from pptx.util import Inches

from desktop_env.evaluators.metrics.differences import missing_file, plural
from desktop_env.evaluators.metrics.images import open_image
from desktop_env.evaluators.metrics.pptx_parts import (
    _A, _OOR, _P, _Theme, _background, _children, _color, _gold_deck, _hex_rgb, _kind, _local, _master_of,
    _result_deck, _result_xml, _rgb_triplet, _rule,
)
from desktop_env.evaluators.metrics.presentations import picture_blob, same_image, shape_box
from desktop_env.evaluators.metrics.utils import MetricError, as_existing_path, expected_value
from desktop_env.evaluators.reasons import (
    MISSING_RESULT, RULE_FAILED, STRUCTURE_MISMATCH, THRESHOLD_NOT_MET, UNREADABLE_RESULT, VALUE_MISMATCH, explain,
    fail, shown,
)
from desktop_env.registry import METRICS

logger = logging.getLogger(__name__)


# --------------------------------------------------------------------------- single-deck checks
@METRICS.register()
def check_slide_orientation_Portrait(result: Any, expected: Any = None) -> float:  # noqa: N802 - the suite's name
    """1 when the slides of the pptx ``result`` are portrait (narrower than tall); ``expected`` is unused."""
    deck = _result_deck(result, "check_slide_orientation_Portrait")
    if deck is None:
        return 0.0
    logger.debug("slide size %s x %s", deck.slide_width, deck.slide_height)
    if deck.slide_width < deck.slide_height:
        return 1.0
    return fail(VALUE_MISMATCH, f"slide orientation expected portrait, got "
                                f"{'landscape' if deck.slide_width > deck.slide_height else 'square'} (slides "
                                f"{deck.slide_width} x {deck.slide_height} EMU, width x height)")


_STRETCH_TOLERANCE = Inches(0.5)


@METRICS.register()
def check_image_stretch_and_center(result: Any, expected: Any) -> float:
    """1 when the first picture of the first slide of the original deck fills the result's first slide.

    ``expected`` is the original .pptx; its first picture on slide 1 is looked up on slide 1 of the
    ``result`` (the same image); some copy of it must be as wide and as tall as the slide and centred
    on it, each within half an inch.

    Raises:
        MetricError: the original is unreadable or has no picture on its first slide.
    """
    metric = "check_image_stretch_and_center"
    original = _gold_deck(expected, metric)
    pictures = [s for s in original.slides[0].shapes if _kind(s) == "picture"] if len(original.slides) else []
    if not pictures:
        raise MetricError(f"{metric}: the original deck has no picture on its first slide")
    deck = _result_deck(result, metric)
    if deck is None:
        return 0.0
    if not len(deck.slides):
        return fail(STRUCTURE_MISMATCH, "the result deck has no slide")
    width, height, tol = deck.slide_width, deck.slide_height, _STRETCH_TOLERANCE
    blob = picture_blob(pictures[0])
    copies = [s for s in deck.slides[0].shapes if _kind(s) == "picture" and same_image(blob, picture_blob(s))]
    if not copies:
        logger.info("%s: the picture is no longer on the first slide", metric)
        others = sum(_kind(s) == "picture" for s in deck.slides[0].shapes)
        return fail(STRUCTURE_MISMATCH, f"slide 1: no picture shows the original's image "
                                        f"({shown(pictures[0].name)}); the slide has {plural(others, 'other picture')}")
    offsets = []  # (the largest of a copy's four deviations from filling the slide, what deviates), per copy
    for pic in copies:
        logger.debug("%s: picture at %s on a %s x %s slide", metric, shape_box(pic), width, height)
        deviations = {"width": abs(pic.width - width), "height": abs(pic.height - height),
                      "horizontal centre": abs(pic.left - (width - pic.width) / 2),
                      "vertical centre": abs(pic.top - (height - pic.height) / 2)}
        if all(d <= tol for d in deviations.values()):
            return 1.0
        offsets.append(max((d, k) for k, d in deviations.items()))
    logger.info("%s: the picture does not fill the slide: %s on a %s x %s slide", metric,
                shape_box(copies[0]), width, height)
    off, what = min(offsets)
    return fail(THRESHOLD_NOT_MET, f"slide 1: the picture at {shape_box(copies[offsets.index((off, what))])} does not "
                                   f"fill the {width} x {height} slide: its {what} is off by "
                                   f"{off / Inches(1):.2f} in, more than the {tol / Inches(1):g} in allowed")


def _slide_rgb(slide) -> tuple[int, int, int] | None:
    kind, *rest = _background(slide, _Theme(_master_of(slide)))
    return _hex_rgb(rest[0]) if kind == "solid" and isinstance(rest[0], str) else None


_MAX_RGB_DISTANCE = math.sqrt(3 * 255 ** 2)


@METRICS.register()
def evaluate_presentation_fill_to_rgb_distance(result: Any, expected: Any) -> float:
    """How close every slide's background is to a colour: 1 - the mean normalized RGB distance.

    ``expected`` is ``{"rgb": [R, G, B], "original_rgb": [R, G, B]}`` (``original_rgb`` optional). Each
    slide's background (its own, else its layout's or master's) counts its Euclidean RGB distance to
    ``rgb`` divided by the largest possible distance; a slide whose background is not a solid colour,
    or still ``original_rgb``, counts 1. A graded score in [0, 1]; 0 for a missing deck.

    Raises:
        MetricError: ``rgb`` or ``original_rgb`` is not three integers 0..255.
    """
    metric = "evaluate_presentation_fill_to_rgb_distance"
    rule = _rule(expected, metric, '{"rgb": [0, 0, 255], "original_rgb": [255, 255, 255]}')
    target = _rgb_triplet(rule.get("rgb"), "rgb", metric)
    original = rule.get("original_rgb")
    original = _rgb_triplet(original, "original_rgb", metric) if original is not None else None
    deck = _result_deck(result, metric)
    if deck is None:
        return 0.0
    if not len(deck.slides):
        return fail(STRUCTURE_MISMATCH, "the result deck has no slide")
    distances, why = [], None  # why: the first slide that is not the colour, for the reason
    for n, slide in enumerate(deck.slides, 1):
        rgb = _slide_rgb(slide)
        if rgb is None or rgb == original:
            distances.append(1.0)
            fill = _background(slide, _Theme(_master_of(slide)))
            why = why or (f"slide {n}: the background is not a solid colour ({fill[0]}), counted 1" if rgb is None
                          else f"slide {n}: the background is still the original #%02X%02X%02X, counted 1" % rgb)
        else:
            distances.append(math.dist(rgb, target) / _MAX_RGB_DISTANCE)
            if distances[-1] > 0:
                why = why or (f"slide {n}: background #%02X%02X%02X is {distances[-1]:.3f} from the expected "
                              f"#%02X%02X%02X (normalized RGB distance)" % (*rgb, *target))
    logger.debug("%s: distances %s", metric, [round(d, 3) for d in distances])
    score = 1.0 - sum(distances) / len(distances)
    if why:
        return fail(VALUE_MISMATCH, f"mean normalized RGB distance {1 - score:.3f} over {len(distances)} slides; "
                                    f"{why}", score)
    return score


@METRICS.register()
def check_transition(result: Any, expected: Any) -> float:
    """1 when a slide of the pptx ``result`` has the named transition.

    ``expected`` is ``{"slide_idx": 0, "transition_type": "dissolve"}``: the slide's 0-based position
    in the deck, and the transition's element name in the file (``dissolve``, ``fade``, ``wipe``,
    ``push``, ``randomBar``...; PowerPoint 2010 ones such as ``vortex`` too), case-insensitive.

    Raises:
        MetricError: ``slide_idx`` is not an integer >= 0 or ``transition_type`` is not a name.
    """
    metric = "check_transition"
    rule = _rule(expected, metric, '{"slide_idx": 0, "transition_type": "dissolve"}')
    index, name = rule.get("slide_idx"), rule.get("transition_type")
    if isinstance(index, bool) or not isinstance(index, int) or index < 0:
        raise MetricError(f"{metric}: slide_idx must be a 0-based slide index, got {index!r}")
    if not isinstance(name, str) or not name.strip():
        raise MetricError(f"{metric}: transition_type must be a transition name such as 'dissolve', got {name!r}")
    deck = _result_deck(result, metric)
    if deck is None:
        return 0.0
    if index >= len(deck.slides):
        logger.info("%s: the deck has %d slides, no slide %d", metric, len(deck.slides), index)
        return fail(STRUCTURE_MISMATCH, f"the deck has {len(deck.slides)} slides, no slide_idx {index} "
                                        f"(slide {index + 1})")
    found = {_local(effect).casefold()
             for transition in deck.slides[index].element.iter(f"{_P}transition")
             for effect in _children(transition)}
    logger.debug("%s: slide %d transitions %s", metric, index, sorted(found))
    if name.strip().casefold() in found:
        return 1.0
    return fail(VALUE_MISMATCH, f"slide {index + 1} (slide_idx {index}): transition expected {shown(name.strip())}, "
                                f"got {shown(sorted(found)) if found else 'none'}")


#: thresholds of the colour names check_page_number_colors accepts (levels 0..255)
_COLOR_NAMES = {
    "red": lambda r, g, b: r > g + 50 and r > b + 50,
    "green": lambda r, g, b: g > r + 50 and g > b + 50,
    "blue": lambda r, g, b: b > r + 50 and b > g + 50,
    "black": lambda r, g, b: r < 50 and g < 50 and b < 50,
}


def _slide_number_color(master, theme: _Theme) -> tuple[bool, str | None]:
    """Whether a master has a slide-number placeholder, and the ``RRGGBB`` colour of its number."""
    for sp in master.element.iter(f"{_P}sp"):
        ph = sp.find(f"{_P}nvSpPr/{_P}nvPr/{_P}ph")
        if ph is None or ph.get("type") != "sldNum":
            continue
        body = sp.find(f"{_P}txBody")
        if body is None:
            return True, None
        # where the number's colour is set, most specific first: the number field, a run, the list style
        for path in (f".//{_A}fld[@type='slidenum']/{_A}rPr/{_A}solidFill", f".//{_A}fld/{_A}rPr/{_A}solidFill",
                     f".//{_A}r/{_A}rPr/{_A}solidFill", f"{_A}lstStyle/{_A}lvl1pPr/{_A}defRPr/{_A}solidFill",
                     f".//{_A}endParaRPr/{_A}solidFill"):
            fill = body.find(path)
            if fill is not None:
                return True, theme.hex(_color(fill))
        return True, None
    return False, None


@METRICS.register()
def check_page_number_colors(result: Any, expected: Any) -> float:
    """1 when the slide numbers of the pptx ``result`` are in the named colour.

    ``expected`` is ``{"color": "red"}`` (``red``, ``green``, ``blue`` or ``black``: the channel leads
    the other two by more than 50 levels, or all three are under 50). The colour is read from the
    slide-number placeholder of every slide master the slides use (the number field's own colour,
    else its text's, else the placeholder's list style; theme colours resolved, tints and shades
    applied); each must have it, and a master whose number has no colour set fails.

    Raises:
        MetricError: an unknown colour name.
    """
    metric = "check_page_number_colors"
    name = expected_value(expected, "color")
    if not isinstance(name, str) or name.lower() not in _COLOR_NAMES:
        raise MetricError(f"{metric}: color must be one of {', '.join(_COLOR_NAMES)}, got {name!r}")
    test = _COLOR_NAMES[name.lower()]
    deck = _result_deck(result, metric)
    if deck is None:
        return 0.0
    masters = {}
    for slide in deck.slides:
        master = _master_of(slide)
        masters.setdefault(master.part.partname, master)
    found = []
    for partname, master in masters.items():
        has_number, hex_color = _slide_number_color(master, _Theme(master))
        if has_number:
            found.append((partname, hex_color))
    if not found:
        logger.info("%s: no slide master with a slide number", metric)
        return fail(STRUCTURE_MISMATCH, f"no slide master the slides use ({plural(len(masters), 'master')}) has a "
                                        f"slide-number placeholder")
    for partname, hex_color in found:
        rgb = _hex_rgb(hex_color)
        if rgb is None or not test(*rgb):
            logger.info("%s: the slide number of %s is %s, not %s", metric, partname, hex_color or "unset", name)
            return fail(VALUE_MISMATCH, f"the slide number of {partname}: colour expected {name.lower()}, got "
                                        f"{'#' + hex_color if hex_color else 'none set'}")
    return 1.0


# --------------------------------------------------------------------------- LibreOffice settings and panes
_IMPRESS_START = "/org.openoffice.Office.Impress/Misc/Start"
_SLIDE_PANE = "/org.openoffice.Office.Impress/MultiPaneGUI/SlideSorterBar/Visible"
#: where LibreOffice keeps the autosave interval (minutes) and its on/off flag, older versions first
_AUTOSAVE_KEYS = (
    ("/org.openoffice.Office.Common/Save/Document", "AutoSaveTimeIntervall", "AutoSave"),
    ("/org.openoffice.Office.Recovery/AutoSave", "TimeIntervall", "Enabled"),
)
_AUTOSAVE_DEFAULT_MINUTES = 10  # LibreOffice's default when the profile does not set it


def _xcu_settings(root: etree._Element) -> dict[tuple[str, str], str | None]:
    """The settings of a ``registrymodifications.xcu``: ``(group path, property) -> value text``.

    An ``item``'s path names the group; ``node`` elements inside it extend the path. A nil value is None.
    """
    settings: dict[tuple[str, str], str | None] = {}

    def walk(elem: etree._Element, path: str) -> None:
        for child in _children(elem):
            kind = _local(child)
            if kind == "node":
                walk(child, f"{path}/{child.get(f'{_OOR}name')}")
            elif kind == "prop":
                value = next((v for v in _children(child) if _local(v) == "value"), None)
                settings[(path, child.get(f"{_OOR}name"))] = None if value is None else (value.text or "")

    for item in _children(root):
        if _local(item) == "item":
            walk(item, item.get(f"{_OOR}path", ""))
    return settings


def _xcu(result: Any, metric: str) -> dict[tuple[str, str], str | None] | None:
    root = _result_xml(result, metric)
    if root is None:
        return None
    if _local(root) != "items":
        logger.info("%s: the result is not a LibreOffice registrymodifications.xcu (root <%s>)", metric, _local(root))
        explain(UNREADABLE_RESULT, f"the result is not a LibreOffice registrymodifications.xcu: its root is "
                                   f"<{_local(root)}>, not <oor:items>")
        return None
    return _xcu_settings(root)


@METRICS.register()
def check_presenter_console_disable(result: Any, expected: Any = None) -> float:
    """1 when LibreOffice's profile turns the Impress presenter console off.

    ``result`` is the user's ``registrymodifications.xcu``: ``EnablePresenterScreen`` under
    ``/org.openoffice.Office.Impress/Misc/Start`` must be false (unset means the default, on).
    ``expected`` is unused.
    """
    settings = _xcu(result, "check_presenter_console_disable")
    if settings is None:
        return 0.0
    value = settings.get((_IMPRESS_START, "EnablePresenterScreen"))
    logger.debug("EnablePresenterScreen = %r", value)
    if value is not None and value.strip().lower() == "false":
        return 1.0
    return fail(VALUE_MISMATCH, f"{_IMPRESS_START} EnablePresenterScreen: expected false, got "
                                f"{'unset (the default, on)' if value is None else shown(value)}")


@METRICS.register()
def check_auto_saving_time(result: Any, expected: Any) -> float:
    """1 when LibreOffice's profile saves AutoRecovery information every ``minutes`` minutes.

    ``result`` is the user's ``registrymodifications.xcu``; ``expected`` is ``{"minutes": 3}`` (or the
    number). The interval is ``AutoSaveTimeIntervall`` under ``/org.openoffice.Office.Common/Save/Document``
    (``TimeIntervall`` under ``/org.openoffice.Office.Recovery/AutoSave`` in newer versions; unset means
    10); the autosave switch beside it must not be off.

    Raises:
        MetricError: ``minutes`` is not a whole number > 0.
    """
    metric = "check_auto_saving_time"
    minutes = expected_value(expected, "minutes")
    if isinstance(minutes, bool) or not isinstance(minutes, int) or minutes <= 0:
        raise MetricError(f"{metric}: minutes must be a whole number of minutes > 0, got {minutes!r}")
    settings = _xcu(result, metric)
    if settings is None:
        return 0.0
    present = [(path, interval, switch) for path, interval, switch in _AUTOSAVE_KEYS if (path, interval) in settings]
    found = []  # what each place says, for the reason
    for path, interval, switch in present or _AUTOSAVE_KEYS[:1]:
        value = settings.get((path, interval))
        enabled = (settings.get((path, switch)) or "true").strip().lower() != "false"
        try:
            got = int(value) if value is not None else _AUTOSAVE_DEFAULT_MINUTES
        except ValueError:
            logger.info("%s: %s/%s is %r, not a number", metric, path, interval, value)
            found.append(f"{path} {interval} is {shown(value)}, not a number")
            continue
        logger.debug("%s: %s/%s = %s, enabled %s", metric, path, interval, got, enabled)
        if got == minutes and enabled:
            return 1.0
        found.append(f"{path} {interval} is {got}" + (" (unset: the default)" if value is None else "")
                     + ("" if enabled else f", but {switch} is false (autosave off)"))
    logger.info("%s: autosave is not every %d minutes", metric, minutes)
    return fail(VALUE_MISMATCH, f"autosave interval expected {minutes} minutes, switched on; got: {'; '.join(found)}")


#: the accessible name of Impress's slide pane (English, and the name the suite also accepts)
_SLIDE_PANE_NAMES = ("Slides View", "スライドモード")


def _showing(elem: etree._Element) -> bool:
    """Whether an accessibility-tree element is on screen: its ``showing`` state, when it reports states."""
    states = {etree.QName(k).localname: v for k, v in elem.attrib.items()
              if k.startswith("{") and "state" in etree.QName(k).namespace}
    if not states:
        return True  # a tree without states: being listed is all we know
    return str(states.get("showing", "")).lower() == "true"


@METRICS.register()
def check_left_panel(result: Any, expected: Any = None) -> float:
    """1 when Impress's slide pane (the left panel) is open.

    ``result`` is the accessibility tree (XML text, the ``accessibility_tree`` getter): some element
    named "Slides View" (a document frame) must be there and showing. A ``registrymodifications.xcu``
    is read too: its ``ImpressView`` flag under ``.../MultiPaneGUI/SlideSorterBar/Visible`` must not be
    false (unset means the default, open). ``expected`` is unused.
    """
    metric = "check_left_panel"
    root = _result_xml(result, metric)
    if root is None:
        return 0.0
    if _local(root) == "items":
        value = _xcu_settings(root).get((_SLIDE_PANE, "ImpressView"))
        if value is None or value.strip().lower() != "false":
            return 1.0
        return fail(VALUE_MISMATCH, f"{_SLIDE_PANE} ImpressView: expected true (the slide pane open), got "
                                    f"{shown(value)}")
    panes = [elem for elem in root.iter() if isinstance(elem.tag, str) and elem.get("name") in _SLIDE_PANE_NAMES]
    if any(_showing(elem) for elem in panes):
        return 1.0
    logger.info("%s: no slide pane showing in the accessibility tree", metric)
    if panes:
        return fail(RULE_FAILED, f"the slide pane {shown(panes[0].get('name'))} is in the accessibility tree but not "
                                 f"showing")
    return fail(RULE_FAILED, f"no element named {' or '.join(map(repr, _SLIDE_PANE_NAMES))} (the slide pane) in the "
                             f"accessibility tree")


# --------------------------------------------------------------------------- an image (GIMP)
_DARK = 128  # grey level under which a pixel counts as text
_LEFT_BAND = 0.05  # "on the left side": the text starts within the leftmost 5% of the image


@METRICS.register()
def check_textbox_on_leftside(result: Any, expected: Any = None) -> float:
    """1 when the dark text of the image ``result`` starts at its left edge.

    The leftmost pixel darker than grey 128 (transparent parts count as white) must lie within the
    leftmost 5% of the image's width; an image without dark pixels scores 0. ``expected`` is unused.
    """
    path = as_existing_path(result)
    image = None if path is None else open_image(path)
    if image is None:
        logger.info("check_textbox_on_leftside: no readable image (%r)", result)
        if path is None:
            return fail(MISSING_RESULT, missing_file(result, "result image"))
        return fail(UNREADABLE_RESULT, f"{path} is not a readable image")
    dark_columns = np.flatnonzero((np.asarray(image.convert("L")) < _DARK).any(axis=0))
    if dark_columns.size == 0:
        logger.info("check_textbox_on_leftside: no dark pixels")
        return fail(RULE_FAILED, f"the image has no pixel darker than grey {_DARK}: no text to place")
    leftmost = int(dark_columns[0])
    logger.debug("check_textbox_on_leftside: text starts at x=%d of %d", leftmost, image.width)
    if leftmost < _LEFT_BAND * image.width:
        return 1.0
    return fail(THRESHOLD_NOT_MET, f"the text starts at x={leftmost} of {image.width} pixels "
                                   f"({leftmost / image.width:.1%}), not within the leftmost {_LEFT_BAND:.0%}")
