"""Image metrics: a perceptual comparison of images, lists of images and chart exports (JupyterLab, Metabase)."""
from __future__ import annotations

import logging
from typing import Any

import numpy as np
from PIL import Image, ImageFilter, UnidentifiedImageError

from desktop_env.evaluators.metrics.utils import MetricError, as_existing_path
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
    pair = _working_pair(a, b, resize)
    if pair is None:
        return 0.0
    x, y = pair
    if _is_flat(x) != _is_flat(y):
        logger.info("one image is blank or a single colour, the other is not")
        return 0.0
    d = _shift_tolerant_diff(x, y)
    area = _window_means(d, _AREA_WINDOW).max()
    edges = _window_means(np.where(d > _EDGE_LEVEL, d, 0.0), _EDGE_WINDOW).max()
    return float(1.0 - max(area, edges) / 255.0)


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


def ssim(a: Image.Image, b: Image.Image) -> float:
    """Mean structural similarity (SSIM) of the grayscale images at the smaller common size.

    7 x 7 uniform windows, K1 = 0.01, K2 = 0.03, data range 255: the usual SSIM, as the general
    suite's tasks that give ``reference_base_result`` were calibrated with. 0 when exactly one
    image is blank or a single colour.
    """
    common = (min(a.width, b.width), min(a.height, b.height))
    x = np.asarray(_rgb(a).convert("L").resize(common, Image.Resampling.LANCZOS), dtype=np.float64)
    y = np.asarray(_rgb(b).convert("L").resize(common, Image.Resampling.LANCZOS), dtype=np.float64)
    if (x.std() < _FLAT_STD) != (y.std() < _FLAT_STD):
        return 0.0
    k = min(7, *x.shape)
    n = k * k
    cov_norm = n / (n - 1) if n > 1 else 1.0
    mx, my = _window_means(x, k), _window_means(y, k)
    vx = cov_norm * (_window_means(x * x, k) - mx * mx)
    vy = cov_norm * (_window_means(y * y, k) - my * my)
    vxy = cov_norm * (_window_means(x * y, k) - mx * my)
    c1, c2 = (0.01 * 255) ** 2, (0.03 * 255) ** 2
    s = ((2 * mx * my + c1) * (2 * vxy + c2)) / ((mx * mx + my * my + c1) * (vx + vy + c2))
    return float(s.mean())


@METRICS.register()
def compare_images(result: Any, expected: Any, threshold: float = DEFAULT_THRESHOLD, resize: bool = False,
                   reference_base_result: float | None = None) -> float:
    """1 when two images look alike (:func:`image_similarity` >= ``threshold``), else 0.

    Tolerates encoding noise (a JPEG of a PNG) and anti-aliasing; a changed, moved, mirrored,
    recoloured or brightened element fails, and so does a blank image.

    Args:
        threshold: pass mark in (0, 1]; 1 demands the same pixels (up to blur-level noise).
        resize: compare images of different sizes (a chart saved at another scale) by scaling
            both to the smaller one; otherwise a size mismatch scores 0.
        reference_base_result: the general suite's graded scoring instead: mean grayscale SSIM
            ``s`` at the smaller size scores ``(s - base) / (1 - base)`` when ``s >= base + 0.01``,
            else 0 (``threshold`` and ``resize`` are then not used).

    Raises:
        MetricError: ``threshold`` or ``reference_base_result`` out of range.
    """
    threshold = _check_threshold(threshold, "compare_images")
    if reference_base_result is not None:
        base = reference_base_result
        if isinstance(base, bool) or not isinstance(base, (int, float)) or not 0 <= base < 1:
            raise MetricError(f"compare_images: reference_base_result must be a number in [0, 1), got {base!r}")
    a, b = open_image(result), open_image(expected)
    if a is None or b is None:
        return 0.0
    if reference_base_result is not None:
        s = ssim(a, b)
        logger.debug("SSIM %.4f (reference_base_result %.4f)", s, reference_base_result)
        return (s - reference_base_result) / (1 - reference_base_result) if s >= reference_base_result + 0.01 else 0.0
    return float(images_match(a, b, threshold, resize))


@METRICS.register()
def compare_image_list(result: Any, expected: Any, threshold: float = DEFAULT_THRESHOLD, resize: bool = False) -> float:
    """1 when the images match pairwise (``compare_images`` with ``threshold`` and ``resize``).

    Either side may be one path instead of a list (a one-element list); both must have the same,
    non-zero length.
    """
    result = result if isinstance(result, (list, tuple)) else [result]
    expected = expected if isinstance(expected, (list, tuple)) else [expected]
    if not result or len(result) != len(expected):
        logger.info("%d result images for %d expected", len(result), len(expected))
        return 0.0
    return float(all(compare_images(r, e, threshold=threshold, resize=resize) for r, e in zip(result, expected)))


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
