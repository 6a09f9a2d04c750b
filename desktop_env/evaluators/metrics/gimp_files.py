"""GIMP metrics of the general suite that read sizes, GIMP's own configuration files and text (OCR).

The structure and tone checks are in :mod:`desktop_env.evaluators.metrics.gimp`, whose image
loading these share.
"""
from __future__ import annotations

import logging
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from PIL import Image

from desktop_env.evaluators.metrics.gimp import flatten, result_image, visible_content
from desktop_env.evaluators.metrics.utils import MetricError, as_existing_path, text_of
from desktop_env.evaluators.reasons import (MISSING_RESULT, RULE_FAILED, THRESHOLD_NOT_MET, UNREADABLE_RESULT,
                                            VALUE_MISMATCH, explain, fail, shown)
from desktop_env.registry import METRICS

logger = logging.getLogger(__name__)

_OCR_TIMEOUT = 120  # seconds
_OCR_MIN_HEIGHT = 600  # pixels: smaller images are scaled up before OCR (tesseract reads ~30 px letters best)


# --------------------------------------------------------------------------- size

def _rule(expected: Any, metric: str, example: str) -> dict:
    if not isinstance(expected, dict):
        raise MetricError(f"{metric}: expected must be a rule object {example}, got {expected!r}")
    return expected


def _positive_int(value: Any, name: str, metric: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0 or value != int(value):
        raise MetricError(f"{metric}: {name} must be a positive whole number of pixels, got {value!r}")
    return int(value)


@METRICS.register()
def check_image_size(result: Any, expected: Any) -> float:
    """1 when the result image has the width and/or height the rule gives.

    ``result``: the image; ``expected``: a rule ``{"width": W, "height": H, "ignore_transparent": bool}``
    (W or H may be left out, not both). With ``ignore_transparent`` the size measured is that of
    the non-transparent content (a fully transparent image measures 0 x 0).

    Raises:
        MetricError: no width/height, or one that is not a positive whole number.
    """
    metric = "check_image_size"
    rule = _rule(expected, metric, '{"width": W, "height": H, "ignore_transparent": false}')
    want = {k: _positive_int(rule[k], k, metric) for k in ("width", "height") if rule.get(k) is not None}
    if not want:
        raise MetricError(f"{metric}: the rule needs 'width' and/or 'height', got {rule!r}")
    im = result_image(result, metric)
    if im is None:
        return 0.0
    size = im.size
    if rule.get("ignore_transparent"):
        content = visible_content(im)
        size = (0, 0) if content is None else content.size
    got = {"width": size[0], "height": size[1]}
    logger.info("%s: measured %dx%d (ignore_transparent=%s), want %s", metric, size[0], size[1],
                bool(rule.get("ignore_transparent")), want)
    for k, v in want.items():
        if got[k] != v:
            measured = "of its non-transparent content" if rule.get("ignore_transparent") else "of the image"
            return fail(VALUE_MISMATCH, f"{k} {measured}: expected {v} px, got {got[k]} px "
                                        f"(measured {size[0]}x{size[1]})")
    return 1.0


@METRICS.register()
def check_image_file_size(result: Any, expected: Any) -> float:
    """1 when the result is an image file smaller than the rule's ``max_size`` bytes.

    ``result``: the image file; ``expected``: ``{"max_size": BYTES}``. A file that is not a
    readable image scores 0, however small.

    Raises:
        MetricError: ``max_size`` missing or not a positive number.
    """
    metric = "check_image_file_size"
    rule = _rule(expected, metric, '{"max_size": 500000}')
    max_size = rule.get("max_size")
    if isinstance(max_size, str) and max_size.strip().isdigit():
        max_size = int(max_size)
    if isinstance(max_size, bool) or not isinstance(max_size, (int, float)) or max_size <= 0:
        raise MetricError(f"{metric}: max_size must be a positive number of bytes, got {max_size!r}")
    im = result_image(result, metric)
    if im is None:
        return 0.0
    path = as_existing_path(result)
    size = path.stat().st_size
    logger.info("%s: %d bytes (must be under %s)", metric, size, max_size)
    if size >= max_size:
        return fail(THRESHOLD_NOT_MET, f"the file {path.name} is {size} bytes, not under max_size {max_size}")
    return 1.0


# --------------------------------------------------------------------------- GIMP configuration

# a token of a GIMP config line: a quoted string (kept with its quotes) or a bare word; parentheses separate
_CONFIG_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[^\s()"]+')


def _unquote(text: str) -> str:
    return text[1:-1] if len(text) >= 2 and text[0] == text[-1] == '"' else text


@METRICS.register()
def check_config_status(result: Any, expected: Any) -> float:
    """1 when a GIMP config file (gimprc, sessionrc...) has a line setting the key to the value.

    ``result``: the config file; ``expected``: ``{"key": K, "value": V}``, K a name (``undo-levels``)
    or a list of the first names of the line (``["default-view", "show-menubar"]``). A line
    ``(undo-levels 100)`` or ``    (theme "Light")`` matches when its first words are K and its
    last word is V; quotes around V are optional on either side. ``#`` comment lines are skipped.

    Raises:
        MetricError: the rule has no key or value.
    """
    metric = "check_config_status"
    rule = _rule(expected, metric, '{"key": "undo-levels", "value": "100"}')
    key, value = rule.get("key"), rule.get("value")
    keys = [key] if isinstance(key, str) else key
    if not isinstance(keys, list) or not keys or not all(isinstance(k, str) and k for k in keys):
        raise MetricError(f"{metric}: 'key' must be a name or a non-empty list of names, got {key!r}")
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise MetricError(f"{metric}: 'value' must be a string or a number, got {value!r}")
    text = text_of(result)
    if text is None:
        logger.info("%s: no config file; it scores 0", metric)
        if isinstance(result, os.PathLike) and Path(result).exists():
            return fail(UNREADABLE_RESULT, f"the config file {Path(result).name} cannot be read")
        return fail(MISSING_RESULT, "there is no config file (None)" if result is None
                    else f"the config file {result} does not exist")
    want = _unquote(str(value))
    found = None  # the first line setting the key, to another value
    for number, line in enumerate(text.splitlines(), 1):
        if line.lstrip().startswith("#"):
            continue
        tokens = _CONFIG_TOKEN.findall(line)
        if len(tokens) > len(keys) and tokens[:len(keys)] == keys:
            if _unquote(tokens[-1]) == want:
                logger.info("%s: found %r", metric, line.strip())
                return 1.0
            found = found or f"line {number} is {shown(line.strip())}"
    logger.info("%s: no line sets %s to %r", metric, " ".join(keys), value)
    return fail(RULE_FAILED, f"no line sets {' '.join(keys)} to {shown(value)}; "
                             + (found or "it is not set, or only in comments"))


# --------------------------------------------------------------------------- OCR

def _ocr(im: Image.Image, metric: str) -> str | None:
    """The text tesseract reads in ``im``, or None (logged) when it fails.

    Raises:
        MetricError: the ``tesseract`` command is not installed.
    """
    exe = shutil.which("tesseract")
    if exe is None:
        raise MetricError(f"{metric}: the 'tesseract' command is not installed; install it on the host "
                          f"(Debian/Ubuntu: apt-get install tesseract-ocr tesseract-ocr-eng)")
    gray = flatten(im).convert("L")
    if gray.height < _OCR_MIN_HEIGHT:
        factor = _OCR_MIN_HEIGHT / gray.height
        gray = gray.resize((max(1, round(gray.width * factor)), _OCR_MIN_HEIGHT), Image.Resampling.LANCZOS)
    with tempfile.TemporaryDirectory(prefix="ocr-") as tmp:
        page = os.path.join(tmp, "page.png")
        gray.save(page)
        try:
            done = subprocess.run([exe, page, "stdout", "-l", "eng"], capture_output=True, text=True,
                                  timeout=_OCR_TIMEOUT, check=False)
        except subprocess.TimeoutExpired:
            logger.info("%s: tesseract took longer than %d s", metric, _OCR_TIMEOUT)
            explain(UNREADABLE_RESULT, f"OCR (tesseract) of the result image took longer than {_OCR_TIMEOUT} s")
            return None
    if done.returncode != 0:
        logger.info("%s: tesseract failed (exit %d): %s", metric, done.returncode, done.stderr.strip()[-500:])
        explain(UNREADABLE_RESULT, f"OCR (tesseract) of the result image failed (exit {done.returncode}): "
                                   f"{done.stderr.strip()[-200:]}")
        return None
    return done.stdout


@METRICS.register()
def compare_image_text(result: Any, expected: Any) -> float:
    """1 when the text OCR reads in the result image contains the rule's text.

    ``result``: the image; ``expected``: ``{"type": "text", "text": T}``. The image is read with
    the ``tesseract`` command (English); runs of whitespace (line breaks) count as one space on
    both sides, and the match is case-sensitive.

    Raises:
        MetricError: a rule type other than ``text``, no ``text``, or tesseract not installed.
    """
    metric = "compare_image_text"
    rule = _rule(expected, metric, '{"type": "text", "text": "..."}')
    if rule.get("type", "text") != "text":
        raise MetricError(f"{metric}: unsupported rule type {rule.get('type')!r}; the only type is 'text'")
    want = rule.get("text")
    if not isinstance(want, str) or not want.strip():
        raise MetricError(f"{metric}: the rule needs a non-empty 'text', got {want!r}")
    im = result_image(result, metric)
    if im is None:
        return 0.0
    read = _ocr(im, metric)
    if read is None:
        return 0.0
    found, wanted = " ".join(read.split()), " ".join(want.split())
    logger.info("%s: OCR read %r", metric, found[:300])
    if wanted not in found:
        return fail(RULE_FAILED, f"the text OCR read in the image does not contain {shown(wanted)}; "
                                 f"it read {shown(found, 200)}")
    return 1.0
