"""Image metrics: a perceptual comparison of images, lists of images and chart exports (JupyterLab, Metabase)."""
from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

import numpy as np
from PIL import Image, ImageFilter, UnidentifiedImageError

from desktop_env.evaluators.metrics.utils import MetricError, as_existing_path
from desktop_env.evaluators.reasons import (MISSING_RESULT, STRUCTURE_MISMATCH, THRESHOLD_NOT_MET, UNREADABLE_RESULT,
                                            explain, fail)
from desktop_env.registry import METRICS

logger = logging.getLogger(__name__)

#: default pass mark of :func:`image_similarity`: the worst region may differ by 5% of full scale (~13 levels)
DEFAULT_THRESHOLD = 0.95

# The comparison runs on both images reduced (area average) to at most this many pixels on their
# longer side: it averages out encoding noise and sub-pixel rendering differences, while a chart
# element that moved or changed colour still covers whole working pixels.
_WORK_SIZE = 256  # pixels
_BLUR_RADIUS = 1.0  # working pixels; softens JPEG ringing and chroma bleeding at edges
_SHIFT = 1  # working pixels a pixel may be matched away from its place (anti-aliasing, snapping)
# Two views of the difference map, the worse one decides:
_AREA_WINDOW = 16  # working pixels: mean difference over a region (a recoloured or brighter area)
_EDGE_WINDOW = 4  # working pixels: mean of the strong differences only (a moved bar, line or label)
_EDGE_LEVEL = 64  # levels (of 255): below this a difference is noise for the edge view
_FLAT_STD = 2.0  # levels: an image whose colours vary less than this is blank / single-colour


def open_image(value: Any) -> Image.Image | None:
    """The image at ``value`` (a path) in RGB, or None (logged) when it is missing or not an image."""
    p = as_existing_path(value)
    if p is None:
        return None
    try:
        with Image.open(p) as im:
            return _rgb(im)
    except (UnidentifiedImageError, OSError) as exc:
        logger.info("not an image: %s (%s)", p, exc)
        return None


def _rgb(im: Image.Image) -> Image.Image:
    """``im`` in RGB, transparent parts on white (how a viewer shows an exported chart)."""
    if im.mode in ("RGBA", "LA", "PA") or (im.mode == "P" and "transparency" in im.info):
        im = im.convert("RGBA")
        return Image.alpha_composite(Image.new("RGBA", im.size, (255, 255, 255, 255)), im).convert("RGB")
    return im.convert("RGB")


def _working_pair(a: Image.Image, b: Image.Image, resize: bool) -> tuple[np.ndarray, np.ndarray] | None:
    """Both images at a common working size as float RGB arrays, or None when sizes differ and not ``resize``."""
    a, b = _rgb(a), _rgb(b)
    if a.size != b.size:
        if not resize:
            logger.info("image sizes differ: %s vs %s (resize is off)", a.size, b.size)
            return None
        common = (min(a.width, b.width), min(a.height, b.height))
        a, b = a.resize(common, Image.Resampling.BOX), b.resize(common, Image.Resampling.BOX)
    scale = min(1.0, _WORK_SIZE / max(a.size))
    if scale < 1.0:
        work = (max(1, round(a.width * scale)), max(1, round(a.height * scale)))
        a, b = a.resize(work, Image.Resampling.BOX), b.resize(work, Image.Resampling.BOX)
    blur = ImageFilter.GaussianBlur(_BLUR_RADIUS)
    return np.asarray(a.filter(blur), dtype=np.float32), np.asarray(b.filter(blur), dtype=np.float32)


def _is_flat(x: np.ndarray) -> bool:
    return float(x.reshape(-1, 3).std(axis=0).max()) < _FLAT_STD


def _shift_tolerant_diff(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Per pixel, the largest channel difference to the best-matching pixel within ``_SHIFT`` of it, both ways."""
    def one_way(x, y):
        h, w, _ = x.shape
        r = _SHIFT
        padded = np.pad(y, ((r, r), (r, r), (0, 0)), mode="edge")
        best = np.full((h, w), np.inf, dtype=np.float32)
        for dy in range(2 * r + 1):
            for dx in range(2 * r + 1):
                best = np.minimum(best, np.abs(x - padded[dy:dy + h, dx:dx + w]).max(axis=2))
        return best
    return np.maximum(one_way(a, b), one_way(b, a))


def _window_means(d: np.ndarray, k: int) -> np.ndarray:
    """Mean of ``d`` over every k x k window (k clipped to the image)."""
    k = max(1, min(k, *d.shape))
    s = np.pad(d.astype(np.float64).cumsum(0).cumsum(1), ((1, 0), (1, 0)))
    return (s[k:, k:] - s[:-k, k:] - s[k:, :-k] + s[:-k, :-k]) / (k * k)


@dataclass(frozen=True)
class _Measured:
    """A similarity and what decided it, for the reason of a failed comparison.

    Attributes:
        score: the similarity in [0, 1].
        sizes_differ: the sizes differ and ``resize`` is off (the score is 0).
        blank: 0 when the first image is blank or a single colour and the second is not, 1 for the
            reverse (the score is 0); None otherwise.
        region: the most different region, ``(left, top, right, bottom)`` in pixels of the second image.
    """

    score: float
    sizes_differ: bool = False
    blank: int | None = None
    region: tuple[int, int, int, int] | None = None


def _measure(a: Image.Image, b: Image.Image, resize: bool) -> _Measured:
    """:func:`image_similarity` with what decided it."""
    pair = _working_pair(a, b, resize)
    if pair is None:
        return _Measured(0.0, sizes_differ=True)
    x, y = pair
    if _is_flat(x) != _is_flat(y):
        logger.info("one image is blank or a single colour, the other is not")
        return _Measured(0.0, blank=0 if _is_flat(x) else 1)
    d = _shift_tolerant_diff(x, y)
    area = _window_means(d, _AREA_WINDOW)
    edges = _window_means(np.where(d > _EDGE_LEVEL, d, 0.0), _EDGE_WINDOW)
    worst, window = (area, _AREA_WINDOW) if area.max() >= edges.max() else (edges, _EDGE_WINDOW)
    row, col = np.unravel_index(int(worst.argmax()), worst.shape)
    window = max(1, min(window, *d.shape))
    sx, sy = b.width / d.shape[1], b.height / d.shape[0]
    region = (int(col * sx), int(row * sy), min(b.width, round((col + window) * sx)),
              min(b.height, round((row + window) * sy)))
    return _Measured(float(1.0 - max(area.max(), edges.max()) / 255.0), region=region)


def image_similarity(a: Image.Image, b: Image.Image, resize: bool = False) -> float:
    """Perceptual similarity of two images: 1 - (difference of their most different region) / 255.

    Both are reduced to a working size (at most 256 pixels a side) and slightly blurred; each pixel
    is matched to the closest pixel within one working pixel of its place in the other image. The
    worse of two views of those differences decides: the mean over any 16 x 16 region (a region
    recoloured or made brighter) and the mean over any 4 x 4 region of the differences above 64
    levels (a bar, line or label that moved). On a 640 x 480 matplotlib bar chart: a JPEG of it
    (q75 to q90) scores 0.99, the chart saved at twice the scale (with ``resize``) 0.97, the
    chart 10% brighter 0.93, one bar 10% taller or the chart mirrored 0.13. A change smaller
    than about 1% of the image side (one small scatter marker) can go unnoticed.

    Args:
        resize: compare images of different sizes by scaling both to the smaller width and height
            (otherwise a size mismatch scores 0).

    Returns:
        A score in 0..1; 0 when the sizes differ without ``resize``, and when exactly one image
        is blank or a single colour (a blank export never matches a chart).
    """
    return _measure(a, b, resize).score


def _check_threshold(threshold: Any, metric: str) -> float:
    if isinstance(threshold, bool) or not isinstance(threshold, (int, float)) or not 0 < threshold <= 1:
        raise MetricError(f"{metric}: threshold must be a number in (0, 1], got {threshold!r}")
    return float(threshold)


def images_match(a: Image.Image, b: Image.Image, threshold: float = DEFAULT_THRESHOLD,
                 resize: bool = False) -> bool:
    """Whether :func:`image_similarity` of ``a`` and ``b`` reaches ``threshold``."""
    score = image_similarity(a, b, resize=resize)
    logger.debug("image similarity %.4f (threshold %.4f)", score, threshold)
    return score >= threshold


def _ssim(a: Image.Image, b: Image.Image) -> _Measured:
    """:func:`ssim` with what decided it (a blank image)."""
    common = (min(a.width, b.width), min(a.height, b.height))
    x = np.asarray(_rgb(a).convert("L").resize(common, Image.Resampling.LANCZOS), dtype=np.float64)
    y = np.asarray(_rgb(b).convert("L").resize(common, Image.Resampling.LANCZOS), dtype=np.float64)
    if (x.std() < _FLAT_STD) != (y.std() < _FLAT_STD):
        return _Measured(0.0, blank=0 if x.std() < _FLAT_STD else 1)
    k = min(7, *x.shape)
    n = k * k
    cov_norm = n / (n - 1) if n > 1 else 1.0
    mx, my = _window_means(x, k), _window_means(y, k)
    vx = cov_norm * (_window_means(x * x, k) - mx * mx)
    vy = cov_norm * (_window_means(y * y, k) - my * my)
    vxy = cov_norm * (_window_means(x * y, k) - mx * my)
    c1, c2 = (0.01 * 255) ** 2, (0.03 * 255) ** 2
    s = ((2 * mx * my + c1) * (2 * vxy + c2)) / ((mx * mx + my * my + c1) * (vx + vy + c2))
    return _Measured(float(s.mean()))


def ssim(a: Image.Image, b: Image.Image) -> float:
    """Mean structural similarity (SSIM) of the grayscale images at the smaller common size.

    7 x 7 uniform windows, K1 = 0.01, K2 = 0.03, data range 255: the usual SSIM, as the general
    suite's tasks that give ``reference_base_result`` were calibrated with. 0 when exactly one
    image is blank or a single colour.
    """
    return _ssim(a, b).score


# --------------------------------------------------------------------------- the metrics

def _size(im: Image.Image) -> str:
    return f"{im.width}x{im.height}"


def _opened(value: Any, side: str, where: str) -> Image.Image | None:
    """The ``side`` ("result" or "expected") image at ``value``, or None with why explained."""
    im = open_image(value)
    if im is None:
        path = as_existing_path(value)
        if path is None:
            explain(MISSING_RESULT, f"{where}the {side} image {value} does not exist" if value is not None
                    else f"{where}there is no {side} image (None)")
        else:
            explain(UNREADABLE_RESULT, f"{where}the {side} file {path.name} is not a readable image")
    return im


def _why_not_alike(measured: _Measured, a: Image.Image, b: Image.Image, threshold: float, where: str) -> str:
    """The reason text of a similarity below ``threshold`` (``a`` the result, ``b`` the expected image)."""
    if measured.blank is not None:
        blank, other = ("result", "expected") if measured.blank == 0 else ("expected", "result")
        return (f"{where}similarity 0 < threshold {threshold:g}: the {blank} image is blank (a single colour), "
                f"the {other} one is not")
    text = f"{where}similarity {measured.score:.4f} < threshold {threshold:g}"
    if measured.region is not None:
        left, top, right, bottom = measured.region
        text += f"; the most different region: x {left}-{right}, y {top}-{bottom} of the expected {_size(b)} image"
    if a.size != b.size:
        common = f"{min(a.width, b.width)}x{min(a.height, b.height)}"
        text += f" (result {_size(a)}, compared after scaling both to {common})"
    return text


def _score_pair(result: Any, expected: Any, threshold: float, resize: bool, where: str = "") -> float:
    """1 when the result image at ``result`` looks like the one at ``expected``; ``where`` prefixes the reason."""
    a, b = _opened(result, "result", where), _opened(expected, "expected", where)
    if a is None or b is None:
        return 0.0
    measured = _measure(a, b, resize)
    if measured.sizes_differ:
        return fail(STRUCTURE_MISMATCH, f"{where}image sizes differ: result {_size(a)}, expected {_size(b)} "
                                        f"(resize is false)")
    logger.debug("image similarity %.4f (threshold %.4f)", measured.score, threshold)
    if measured.score < threshold:
        return fail(THRESHOLD_NOT_MET, _why_not_alike(measured, a, b, threshold, where))
    return 1.0


@METRICS.register()
def compare_images(result: Any, expected: Any, threshold: float = DEFAULT_THRESHOLD, resize: bool = True,
                   reference_base_result: float | None = None) -> float:
    """1 when two images look alike (:func:`image_similarity` >= ``threshold``), else 0.

    Tolerates encoding noise (a JPEG of a PNG) and anti-aliasing; a changed, moved, mirrored,
    recoloured or brightened element fails, and so does a blank image. Images of different sizes
    (a chart exported from a window of another size) are compared after scaling both to the
    smaller width and height, as the public suites' graders do.

    Args:
        threshold: pass mark in (0, 1]; 1 demands the same pixels (up to blur-level noise).
        resize: true (the default) compares images of different sizes as above; false demands
            the same size (a size mismatch scores 0).
        reference_base_result: the general suite's graded scoring instead: mean grayscale SSIM
            ``s`` at the smaller size scores ``(s - base) / (1 - base)`` when ``s >= base + 0.01``,
            else 0 (``threshold`` and ``resize`` are then not used).

    Raises:
        MetricError: ``threshold`` or ``reference_base_result`` out of range.
    """
    threshold = _check_threshold(threshold, "compare_images")
    if reference_base_result is None:
        return _score_pair(result, expected, threshold, resize)
    base = reference_base_result
    if isinstance(base, bool) or not isinstance(base, (int, float)) or not 0 <= base < 1:
        raise MetricError(f"compare_images: reference_base_result must be a number in [0, 1), got {base!r}")
    a, b = _opened(result, "result", ""), _opened(expected, "expected", "")
    if a is None or b is None:
        return 0.0
    measured = _ssim(a, b)
    s = measured.score
    logger.debug("SSIM %.4f (reference_base_result %.4f)", s, base)
    if s < base + 0.01:
        blank = ("" if measured.blank is None else
                 f": the {('result', 'expected')[measured.blank]} image is blank (a single colour), the other is not")
        return fail(THRESHOLD_NOT_MET, f"grayscale SSIM {s:.4f} < {base + 0.01:.4f} "
                                       f"(reference_base_result {base:g} + 0.01){blank}")
    score = (s - base) / (1 - base)
    if score < 1.0:
        explain(THRESHOLD_NOT_MET, f"grayscale SSIM {s:.4f} with reference_base_result {base:g} grades {score:.4f} "
                                   f"((s - base) / (1 - base): 1 only for the same picture)")
    return score


@METRICS.register()
def compare_image_list(result: Any, expected: Any, threshold: float = DEFAULT_THRESHOLD, resize: bool = True) -> float:
    """1 when the images match pairwise (``compare_images`` with ``threshold`` and ``resize``).

    Either side may be one path instead of a list (a one-element list); both must have the same,
    non-zero length.
    """
    result = result if isinstance(result, (list, tuple)) else [result]
    expected = expected if isinstance(expected, (list, tuple)) else [expected]
    if not result:
        return fail(MISSING_RESULT, f"no result images (an empty list) for {len(expected)} expected")
    if len(result) != len(expected):
        logger.info("%d result images for %d expected", len(result), len(expected))
        return fail(STRUCTURE_MISMATCH, f"{len(result)} result images for {len(expected)} expected")
    threshold = _check_threshold(threshold, "compare_image_list")
    for i, (r, e) in enumerate(zip(result, expected), 1):
        where = f"image {i} of {len(result)}: " if len(result) > 1 else ""
        if not _score_pair(r, e, threshold, resize, where):
            return 0.0
    return 1.0


@METRICS.register()
def compare_jupyterlab_images(result: Any, expected: Any, threshold: float = DEFAULT_THRESHOLD) -> float:
    """1 when a chart image (e.g. a plot saved from a notebook) looks like the gold one, at any scale.

    ``compare_images`` with ``resize`` on: exports of one chart at another size pass; another
    chart (other data, type, colours) or a blank image fails.
    """
    return compare_images(result, expected, threshold=_check_threshold(threshold, "compare_jupyterlab_images"),
                          resize=True)


@METRICS.register()
def compare_metabase_images(result: Any, expected: Any, threshold: float = DEFAULT_THRESHOLD) -> float:
    """Same comparison as ``compare_jupyterlab_images``, for charts downloaded from Metabase."""
    return compare_images(result, expected, threshold=_check_threshold(threshold, "compare_metabase_images"),
                          resize=True)
