"""VLC metrics: the player's settings (vlcrc), its playing state and its window.

The settings metrics read the player's config file ``vlcrc`` (``key=value`` lines; VLC writes
every setting left at its default as a ``#key=value`` comment), so a key that is absent or commented
out has VLC's built-in default. ``is_vlc_playing`` reads the status XML of VLC's HTTP interface
(``/requests/status.xml``).
"""
from __future__ import annotations

import json
import logging
import math
import os
import posixpath
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse
from xml.etree import ElementTree

from desktop_env.evaluators.metrics.utils import MetricError, text_of
from desktop_env.evaluators.reasons import (MISSING_RESULT, RULE_FAILED, UNREADABLE_RESULT, VALUE_MISMATCH, explain,
                                            fail, shown)
from desktop_env.registry import METRICS

logger = logging.getLogger(__name__)


# --------------------------------------------------------------------------- vlcrc settings

def _result_text(result: Any, what: str) -> str | None:
    """The text of the result (``what`` names it in reasons); None when it is missing or unreadable (explained)."""
    text = text_of(result)
    if text is None:
        logger.info("no %s to read (the result is missing)", what)
        if isinstance(result, os.PathLike) and Path(result).exists():
            explain(UNREADABLE_RESULT, f"the {what} {Path(result).name} cannot be read")
        else:
            explain(MISSING_RESULT, f"there is no {what} (None)" if result is None
                    else f"the {what} {result} does not exist")
    return text


def _read_vlcrc(result: Any) -> dict[str, str] | None:
    """The settings a vlcrc sets, ``key -> value`` (stripped); None when the result is missing (explained).

    ``#`` lines are comments (VLC's commented defaults included) and ``[section]`` lines are
    headers; a key set twice keeps its last value, as VLC does.
    """
    text = _result_text(result, "vlcrc")
    if text is None:
        return None
    settings: dict[str, str] = {}
    for line in text.lstrip("\ufeff").splitlines():
        line = line.strip()
        if not line or line.startswith(("#", ";", "[")) or "=" not in line:
            continue
        key, value = line.split("=", 1)
        settings[key.strip()] = value.strip()
    return settings


def _rule_value(metric: str, expected: Any, key: str) -> Any:
    """``expected[key]``: the rule value a vlcrc metric compares with, checked to be a scalar.

    Raises:
        MetricError: the rule is not an object holding ``key`` with a number, boolean or string.
    """
    if not isinstance(expected, dict) or key not in expected:
        raise MetricError(f"{metric}: the expected rule must be an object with {key!r} "
                          f"(e.g. {{{json.dumps(key)}: 1}}), got {expected!r}")
    value = expected[key]
    if value is None or not isinstance(value, (bool, int, float, str)):
        raise MetricError(f"{metric}: {key!r} must be a number, true/false or a string, got {value!r}")
    return value


def _same_setting(actual: str, want: bool | int | float | str) -> bool:
    """Whether the vlcrc text ``actual`` means ``want`` (booleans are 1/0, numbers compare as numbers)."""
    if isinstance(want, bool):
        want = int(want)
    if isinstance(want, (int, float)):
        try:
            return math.isclose(float(actual), float(want))
        except ValueError:
            return False
    return actual.strip() == want.strip()


def _check_vlc_setting(metric: str, result: Any, expected: Any, key: str, rule_key: str, default: str) -> float:
    """1 when the vlcrc ``result`` sets ``key`` (``default`` when it does not) to ``expected[rule_key]``."""
    want = _rule_value(metric, expected, rule_key)
    settings = _read_vlcrc(result)
    if settings is None:
        return 0.0
    actual = settings.get(key, default)
    ok = _same_setting(actual, want)
    logger.info("%s: %s=%r (%s), expected %r -> %s", metric, key, actual,
                "set" if key in settings else "VLC's default", want, ok)
    if not ok:
        return fail(VALUE_MISMATCH, f"vlcrc {key}: expected {shown(want)}, got {shown(actual)}"
                                    + ("" if key in settings else " (not set: VLC's default)"))
    return 1.0


@METRICS.register()
def check_qt_bgcone(result: Any, expected: Any) -> float:
    """1 when VLC's ``qt-bgcone`` (the cone on the splash/background, default 1) is ``expected_qt_bgcone``.

    Args:
        result: the vlcrc file (``vlc_config`` getter).
        expected: ``{"expected_qt_bgcone": 0 | 1}``.
    """
    return _check_vlc_setting("check_qt_bgcone", result, expected, "qt-bgcone", "expected_qt_bgcone", "1")


@METRICS.register()
def check_qt_max_volume(result: Any, expected: Any) -> float:
    """1 when VLC's ``qt-max-volume`` (the volume slider's top, in %, default 125) is ``expected_qt_max_volume``.

    Args:
        result: the vlcrc file.
        expected: ``{"expected_qt_max_volume": 200}`` (compared as numbers).
    """
    return _check_vlc_setting("check_qt_max_volume", result, expected, "qt-max-volume",
                              "expected_qt_max_volume", "125")


@METRICS.register()
def check_qt_minimal_view(result: Any, expected: Any) -> float:
    """1 when VLC's ``qt-minimal-view`` (the minimal interface, default 0) is ``expected_qt_minimal_view``.

    Args:
        result: the vlcrc file.
        expected: ``{"expected_qt_minimal_view": 0 | 1}``.
    """
    return _check_vlc_setting("check_qt_minimal_view", result, expected, "qt-minimal-view",
                              "expected_qt_minimal_view", "0")


@METRICS.register()
def check_one_instance_when_started_from_file(result: Any, expected: Any) -> float:
    """1 when VLC's ``one-instance-when-started-from-file`` (default 1) is the expected value.

    Args:
        result: the vlcrc file.
        expected: ``{"expected_one_instance_when_started_from_file": 0 | 1}``; 0 lets a file opened
            from the file manager start its own VLC instead of joining the running one.
    """
    return _check_vlc_setting("check_one_instance_when_started_from_file", result, expected,
                              "one-instance-when-started-from-file",
                              "expected_one_instance_when_started_from_file", "1")


@METRICS.register()
def check_play_and_exit(result: Any, expected: Any) -> float:
    """1 when VLC's ``play-and-exit`` (quit at the end of the playlist, default 0) is ``expected_play_and_exit``.

    Args:
        result: the vlcrc file.
        expected: ``{"expected_play_and_exit": 0 | 1}``.
    """
    return _check_vlc_setting("check_play_and_exit", result, expected, "play-and-exit",
                              "expected_play_and_exit", "0")


@METRICS.register()
def check_global_key_play_pause(result: Any, expected: Any) -> float:
    """1 when VLC's global (system-wide) play/pause hotkey is set, or unset, as expected.

    Args:
        result: the vlcrc file.
        expected: ``{"expected_global_key_play_pause": 1}``: 1 (or true) when ``global-key-play-pause``
            must hold a key, 0 (or false) when it must be empty or absent; a key name
            (``"Ctrl+Space"``) asks for that key, compared without case.
    """
    metric = "check_global_key_play_pause"
    want = _rule_value(metric, expected, "expected_global_key_play_pause")
    settings = _read_vlcrc(result)
    if settings is None:
        return 0.0
    actual = settings.get("global-key-play-pause", "")
    if isinstance(want, str) and want.strip() not in ("0", "1"):
        ok = actual.lower() == want.strip().lower()
    else:
        try:
            ok = bool(actual) == bool(float(want))
        except ValueError:
            raise MetricError(f"{metric}: expected_global_key_play_pause must be 1, 0 or a key name, "
                              f"got {want!r}") from None
    logger.info("%s: global-key-play-pause=%r, expected %r -> %s", metric, actual, want, ok)
    if not ok:
        wanted = (shown(want) if isinstance(want, str) and want.strip() not in ("0", "1")
                  else "a key" if actual == "" else "no key")
        return fail(VALUE_MISMATCH, f"vlcrc global-key-play-pause: expected {wanted}, got {shown(actual)}"
                                    + ("" if "global-key-play-pause" in settings else " (not set)"))
    return 1.0


#: VLC's default slider colours: four RGB stops, semicolon-separated
_DEFAULT_SLIDER_COLOURS = "153;210;153;20;210;20;255;199;15;245;39;29"
_BLACKISH_BELOW = 100  # every channel of every stop under this is "black-ish"


def _slider_colours(text: str) -> list[tuple[int, ...]] | None:
    """``"r;g;b;r;g;b..."`` as RGB triples, or None when it is not such a list."""
    try:
        values = [int(v) for v in text.replace(" ", "").split(";") if v != ""]
    except ValueError:
        return None
    if not values or len(values) % 3 or any(not 0 <= v <= 255 for v in values):
        return None
    return [tuple(values[i:i + 3]) for i in range(0, len(values), 3)]


@METRICS.register()
def check_qt_slider_colours(result: Any, expected: Any) -> float:
    """1 when VLC's volume slider colours (``qt-slider-colours``) satisfy the rule.

    Args:
        result: the vlcrc file.
        expected: ``{"type": "blackish"}``: every channel of every colour stop is below 100; or
            ``{"type": "match", "expected_qt_slider_colours": "r;g;b;..."}``: the same colour stops.
            An absent setting is VLC's default (green to red).
    """
    metric = "check_qt_slider_colours"
    if not isinstance(expected, dict):
        raise MetricError(f"{metric}: the expected rule must be an object with 'type' "
                          f"('blackish' or 'match'), got {expected!r}")
    kind = expected.get("type", "match" if "expected_qt_slider_colours" in expected else None)
    if kind not in ("blackish", "match"):
        raise MetricError(f"{metric}: rule 'type' must be 'blackish' or 'match', got {kind!r}")
    want = None
    if kind == "match":
        text = _rule_value(metric, expected, "expected_qt_slider_colours")
        want = _slider_colours(str(text))
        if want is None:
            raise MetricError(f"{metric}: expected_qt_slider_colours must be 'r;g;b;...' with values 0-255, "
                              f"got {text!r}")
    settings = _read_vlcrc(result)
    if settings is None:
        return 0.0
    actual = settings.get("qt-slider-colours", _DEFAULT_SLIDER_COLOURS)
    shown_actual = shown(actual) + ("" if "qt-slider-colours" in settings else " (not set: VLC's default)")
    colours = _slider_colours(actual)
    if colours is None:
        logger.info("%s: qt-slider-colours=%r is not a list of RGB stops", metric, actual)
        return fail(VALUE_MISMATCH, f"vlcrc qt-slider-colours: {shown_actual} is not a list of r;g;b colour stops")
    logger.info("%s: qt-slider-colours=%r, rule %s", metric, actual, kind)
    if kind == "match":
        if colours != want:
            return fail(VALUE_MISMATCH, f"vlcrc qt-slider-colours: expected "
                                        f"{shown(expected['expected_qt_slider_colours'])}, got {shown_actual}")
        return 1.0
    bright = next((i for i, stop in enumerate(colours, 1) if any(c >= _BLACKISH_BELOW for c in stop)), None)
    if bright is not None:
        return fail(RULE_FAILED, f"vlcrc qt-slider-colours {shown_actual}: colour stop {bright} "
                                 f"{colours[bright - 1]} is not black-ish (every channel under {_BLACKISH_BELOW})")
    return 1.0


def _norm_dir(path: str) -> str:
    """A directory path without a ``file://`` scheme, URL escapes or trailing slashes."""
    path = path.strip()
    if path.startswith("file://"):
        path = unquote(urlparse(path).path)
    return posixpath.normpath(path) if path else ""


@METRICS.register()
def is_vlc_recordings_folder(result: Any, expected: Any) -> float:
    """1 when VLC records into the expected folder (vlcrc ``input-record-path``).

    Args:
        result: the vlcrc file.
        expected: ``{"recording_file_path": "/home/user/Desktop"}``; compared as normalised paths
            (trailing slashes, ``file://`` URLs). An unset record path fails.
    """
    want = _rule_value("is_vlc_recordings_folder", expected, "recording_file_path")
    settings = _read_vlcrc(result)
    if settings is None:
        return 0.0
    actual = settings.get("input-record-path", "")
    ok = bool(actual) and _norm_dir(actual) == _norm_dir(str(want))
    logger.info("is_vlc_recordings_folder: input-record-path=%r, expected %r -> %s", actual, want, ok)
    if not ok:
        return fail(VALUE_MISMATCH, f"vlcrc input-record-path: expected {shown(want)}, got {shown(actual)}"
                                    + ("" if actual else " (not set)"))
    return 1.0


# --------------------------------------------------------------------------- playing state, window

#: the ``<info name=...>`` entries of the status XML's meta category that can name what is playing
_MEDIA_NAME_INFOS = ("filename", "url", "uri", "location", "name", "title")


def _playing_names(xml_text: str) -> list[str] | None:
    """What VLC's status XML says is playing (file names, URLs, titles), or None (explained) when it is not playing."""
    try:
        root = ElementTree.fromstring(xml_text.strip())
    except ElementTree.ParseError as exc:
        logger.info("the VLC status is not XML: %s", exc)
        explain(UNREADABLE_RESULT, f"the VLC status is not XML ({exc}): {shown(xml_text.strip())}")
        return None
    state = (root.findtext("state") or "").strip()
    if state != "playing":
        logger.info("VLC is not playing (state %r)", state or None)
        explain(VALUE_MISMATCH, f"VLC's state: expected 'playing', got {shown(state or None)}")
        return None
    names: dict[str, list[str]] = {}
    for category in root.iter("category"):
        if (category.get("name") or "").lower() != "meta":
            continue
        for info in category.iter("info"):
            label, text = (info.get("name") or "").lower(), (info.text or "").strip()
            if text:
                names.setdefault(label, []).append(text)
    return [v for label in _MEDIA_NAME_INFOS for v in names.get(label, [])]


def _names_file(name: str, file_name: str) -> bool:
    """Whether ``name`` (a path, file URL or bare name) is the file ``file_name``."""
    path = unquote(urlparse(name).path) if name.startswith("file://") else name
    return name == file_name or posixpath.basename(path) == file_name or path.endswith("/" + file_name)


def _names_url(name: str, url: str) -> bool:
    """Whether ``name`` shows the stream ``url`` (VLC may show the whole URL or only its last path part)."""
    if url in name:
        return True
    want = urlparse(url)
    if name == posixpath.basename(want.path):
        return True
    got = urlparse(name)
    return bool(got.netloc) and got.netloc == want.netloc and want.path in got.path


@METRICS.register()
def is_vlc_playing(result: Any, expected: Any) -> float:
    """1 when VLC is playing the expected file or stream.

    Args:
        result: VLC's HTTP interface status XML (``vlc_playing_info`` getter), a file or its text;
            its ``<state>`` must be ``playing``.
        expected: ``{"type": "file_name", "file_name": "clip.mp4"}``: the playing item's file name
            (or the end of its path) is that name; or ``{"type": "url", "url": "https://..."}``: the
            playing item shows that URL (or the last part of its path, as VLC does for HLS streams).
    """
    if not isinstance(expected, dict) or expected.get("type") not in ("file_name", "url"):
        raise MetricError("is_vlc_playing: the expected rule must be {'type': 'file_name', 'file_name': ...} "
                          f"or {{'type': 'url', 'url': ...}}, got {expected!r}")
    kind = expected["type"]
    want = expected.get(kind)
    if not isinstance(want, str) or not want:
        raise MetricError(f"is_vlc_playing: a {kind!r} rule needs a non-empty string {kind!r}, got {want!r}")
    text = _result_text(result, "VLC status")
    if text is None:
        return 0.0
    names = _playing_names(text)
    if names is None:
        return 0.0
    match = _names_file if kind == "file_name" else _names_url
    ok = any(match(name, want) for name in names)
    logger.info("is_vlc_playing: playing %s, expected %s %r -> %s", names, kind, want, ok)
    if not ok:
        return fail(VALUE_MISMATCH, f"VLC is playing {shown(names) if names else 'an item with no name'}, "
                                    f"not the {kind.replace('_', ' ')} {shown(want)}")
    return 1.0


def _size(value: Any) -> tuple[int, int] | None:
    """A size given as ``{"width", "height"}``, ``[width, height]`` or their JSON text; None otherwise."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return None
    if isinstance(value, dict):
        value = (value.get("width"), value.get("height"))
    if isinstance(value, (list, tuple)) and len(value) == 2:
        try:
            w, h = (int(v) for v in value)
        except (TypeError, ValueError):
            return None
        return w, h
    return None


@METRICS.register()
def is_vlc_fullscreen(result: Any, expected: Any) -> float:
    """1 when VLC's window has exactly the screen's size.

    Args:
        result / expected: the two sizes, in either order (the suite passes the screen size
            (``vm_screen_size``) as the result and VLC's window (``vm_window_size``) as the expected
            side), each ``{"width", "height"}`` or ``[width, height]``; a missing window scores 0.
    """
    a, b = _size(result), _size(expected)
    if a is None or b is None:
        logger.info("is_vlc_fullscreen: a size is missing or unreadable (%r, %r)", result, expected)
        side, value = ("result", result) if a is None else ("expected", expected)
        if value is None:
            return fail(MISSING_RESULT, f"there is no {side} size (a window or screen size; None)")
        return fail(UNREADABLE_RESULT, f"the {side} is not a size {{width, height}}: {shown(value)}")
    logger.info("is_vlc_fullscreen: %s vs %s", a, b)
    if a != b:
        return fail(VALUE_MISMATCH, f"the sizes differ: result {a[0]}x{a[1]}, expected {b[0]}x{b[1]} "
                                    f"(VLC's window must fill the screen)")
    return 1.0
