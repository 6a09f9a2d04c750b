"""GIMP and image-edit metrics of the general suite: edits checked against the original or gold image.

Most take ``result`` (the image the agent exported, copied out of the VM) and ``expected``
(the original the agent started from, or a gold image). "Structure sim" is the mean
structural similarity (SSIM, scikit-image, 7 x 7 windows, data range 255) of the two images at
the same size: it stays high when the picture is the same one, after a global tone or colour
edit or a re-encoding, and drops when the content moved, changed or is another picture.

Transparency counts: when either image has transparent pixels, both are compared as
alpha-premultiplied RGB plus the alpha channel, so a cut-out matches a cut-out and not the same
picture on an opaque background, whatever colour values hide under transparent pixels.
"""
from __future__ import annotations

import logging
from pathlib import Path
from typing import Any, Callable

import numpy as np
from PIL import Image, ImageOps, UnidentifiedImageError

from desktop_env.evaluators.metrics.utils import MetricError, as_existing_path
from desktop_env.evaluators.reasons import (MISSING_RESULT, RULE_FAILED, STRUCTURE_MISMATCH, THRESHOLD_NOT_MET,
                                            UNREADABLE_RESULT, VALUE_MISMATCH, explain, fail)
from desktop_env.registry import METRICS

logger = logging.getLogger(__name__)

#: SSIM pass mark of the suite's structure checks (check_structure_sim and most others)
STRUCTURE_SSIM = 0.9
#: default pass mark of check_structure_sim_with_threshold (its ``ssim_threshold``)
DEFAULT_SSIM_THRESHOLD = 0.85
#: a contrast edit changes local structure more than other tone edits
CONTRAST_SSIM = 0.65
#: a horizontal flip must reproduce the original almost exactly
MIRROR_SSIM = 0.99
#: default bound of check_brightness_decrease_and_structure_sim: mean squared difference (0..1 scale)
#: of the two images after both are brought to the same mean brightness
BRIGHTNESS_MSE = 0.03

_SSIM_WINDOW = 7  # pixels; images smaller than this on a side cannot be compared
_NORMAL_BRIGHTNESS = 128.0  # grey level both images are scaled to before the brightness check's MSE
_BLACK_LEVEL = 8  # levels: a pixel whose channels are all below this is black (the object in check_green_background)
_COLOUR_TOLERANCE = 48  # levels: how far a pixel may be from a colour to count as that colour
_COLOUR_BIN = 8  # levels: colours are counted in bins this wide (absorbs anti-aliasing and encoding noise)
_CENTRE_TOLERANCE = 0.05  # of the image width / height: how far off-centre a centred shape may be


# --------------------------------------------------------------------------- loading

def _load(path: Path) -> Image.Image:
    with Image.open(path) as im:
        im.load()
        return im


def result_image(value: Any, metric: str) -> Image.Image | None:
    """The agent's image, or None (logged and explained) when it is missing or not an image."""
    path = as_existing_path(value)
    if path is None:
        logger.info("%s: no result image (%r); it scores 0", metric, value)
        explain(MISSING_RESULT, "there is no result image (None)" if value is None
                else f"the result image {value} does not exist")
        return None
    try:
        return _load(path)
    except (UnidentifiedImageError, OSError) as exc:
        logger.info("%s: the result %s is not a readable image (%s); it scores 0", metric, path, exc)
        explain(UNREADABLE_RESULT, f"the result file {path.name} is not a readable image ({exc})")
        return None


def _expected_image(value: Any, metric: str) -> Image.Image:
    """The original / gold image.

    Raises:
        MetricError: it is missing or unreadable (a task problem, not the agent's).
    """
    path = as_existing_path(value)
    if path is None:
        raise MetricError(f"{metric}: needs the original or gold image as 'expected' (a vm_file or cloud_file "
                          f"getter), got {value!r}")
    try:
        return _load(path)
    except (UnidentifiedImageError, OSError) as exc:
        raise MetricError(f"{metric}: the expected image {path} cannot be read ({exc}); "
                          f"check the task's expected getter") from exc


def _load_pair(result: Any, expected: Any, metric: str) -> tuple[Image.Image, Image.Image] | None:
    """(result image, expected image), or None when the result is missing.

    The expected side is read first, so a broken task fails even when the agent produced nothing.
    """
    original = _expected_image(expected, metric)
    edited = result_image(result, metric)
    return None if edited is None else (edited, original)


# --------------------------------------------------------------------------- pixels

def _has_alpha(im: Image.Image) -> bool:
    """Whether ``im`` has at least one pixel that is not fully opaque."""
    if im.mode not in ("RGBA", "LA", "PA", "RGBa", "La") and "transparency" not in im.info:
        return False
    return im.convert("RGBA").getextrema()[3][0] < 255


def flatten(im: Image.Image) -> Image.Image:
    """``im`` in RGB as a viewer shows it: transparent parts on white."""
    if _has_alpha(im):
        rgba = im.convert("RGBA")
        return Image.alpha_composite(Image.new("RGBA", rgba.size, (255, 255, 255, 255)), rgba).convert("RGB")
    return im.convert("RGB")


def _rgb_array(im: Image.Image) -> np.ndarray:
    return np.asarray(flatten(im), dtype=np.float64)


def _comparable(im: Image.Image, with_alpha: bool) -> np.ndarray:
    """Pixels for SSIM: RGB, or alpha-premultiplied RGB plus alpha when ``with_alpha``."""
    if not with_alpha:
        return np.asarray(im.convert("RGB"), dtype=np.float64)
    rgba = np.asarray(im.convert("RGBA"), dtype=np.float64)
    alpha = rgba[..., 3:]
    return np.concatenate([rgba[..., :3] * alpha / 255.0, alpha], axis=2)


# --------------------------------------------------------------------------- structure

def _ssim_arrays(x: np.ndarray, y: np.ndarray) -> float:
    """Mean SSIM of two arrays of the same shape (H x W, or H x W x channels)."""
    # scikit-image pulls in scipy (~0.3 s): imported when a metric scores, not when metrics are registered
    try:
        from skimage.metrics import structural_similarity
    except ImportError:
        from desktop_env.extras import package_hint

        raise MetricError(f"structure similarity needs scikit-image ({package_hint('skimage', 'scikit-image')})") \
            from None

    channel_axis = 2 if x.ndim == 3 else None
    return float(structural_similarity(x, y, win_size=_SSIM_WINDOW, data_range=255.0, channel_axis=channel_axis))


def _too_small(*images: Image.Image) -> bool:
    return any(min(im.size) < _SSIM_WINDOW for im in images)


def _size(im: Image.Image) -> str:
    return f"{im.width}x{im.height}"


def _comparable_sizes(a: Image.Image, b: Image.Image, metric: str) -> bool:
    """Whether the result ``a`` and the expected ``b`` have one size, large enough for SSIM (else explained)."""
    if a.size != b.size:
        logger.info("%s: image sizes differ: %s vs %s", metric, a.size, b.size)
        explain(STRUCTURE_MISMATCH, f"image sizes differ: result {_size(a)}, expected {_size(b)}")
        return False
    if _too_small(a, b):
        logger.info("%s: images of %s are too small for SSIM (under %d px a side)", metric, a.size, _SSIM_WINDOW)
        explain(STRUCTURE_MISMATCH, f"the images are {_size(a)}, too small to compare (SSIM needs {_SSIM_WINDOW} px "
                                    f"a side)")
        return False
    return True


def _structure_ssim(a: Image.Image, b: Image.Image, metric: str) -> float | None:
    """SSIM of two images of the same size (transparency-aware), or None (explained) when they cannot be compared."""
    if not _comparable_sizes(a, b, metric):
        return None
    with_alpha = _has_alpha(a) or _has_alpha(b)
    return _ssim_arrays(_comparable(a, with_alpha), _comparable(b, with_alpha))


def _similar(a: Image.Image, b: Image.Image, threshold: float, metric: str, compared: str = "the result") -> bool:
    """Whether the structure SSIM of ``a`` and ``b`` (same size) reaches ``threshold`` (explained when not).

    ``compared`` names ``a`` in the reason ("the result flipped back left-right").
    """
    score = _structure_ssim(a, b, metric)
    if score is None:
        return False
    logger.info("%s: SSIM %.4f (pass mark %.4f)", metric, score, threshold)
    if score < threshold:
        explain(THRESHOLD_NOT_MET, f"structure SSIM of {compared} against the expected image {score:.4f} < "
                                   f"{threshold:g}: not the same picture")
    return score >= threshold


def _check_fraction(value: Any, name: str, metric: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value <= 1:
        raise MetricError(f"{metric}: {name} must be a number in (0, 1], got {value!r}")
    return float(value)


def _score_similar(result: Any, expected: Any, metric: str, threshold: float,
                   transform: Callable[[Image.Image], Image.Image] | None = None,
                   compared: str = "the result") -> float:
    """1 when the result (after ``transform``, which ``compared`` names) and the expected image have the same size
    and SSIM >= threshold."""
    pair = _load_pair(result, expected, metric)
    if pair is None:
        return 0.0
    edited, original = pair
    if transform is not None:
        edited = transform(edited)
    return float(_similar(edited, original, threshold, metric, compared))


@METRICS.register()
def check_structure_sim(result: Any, expected: Any) -> float:
    """1 when the result image is structurally the same picture as the expected one (SSIM >= 0.9).

    ``result``: the exported image; ``expected``: the gold image (e.g. the cut-out the task asks
    for). Both must have the same size; transparency is compared too (a cut-out does not match the
    picture on an opaque background).
    """
    return _score_similar(result, expected, "check_structure_sim", STRUCTURE_SSIM)


@METRICS.register()
def check_structure_sim_with_threshold(result: Any, expected: Any,
                                       ssim_threshold: float = DEFAULT_SSIM_THRESHOLD) -> float:
    """1 when the result image matches the gold one with SSIM >= ``ssim_threshold``.

    Like ``check_structure_sim``, but a result of another size is first scaled (Lanczos) to the
    gold image's size.

    Args:
        ssim_threshold: pass mark in (0, 1] (default 0.85); lower accepts more pixel differences.

    Raises:
        MetricError: ``ssim_threshold`` out of range.
    """
    metric = "check_structure_sim_with_threshold"
    threshold = _check_fraction(ssim_threshold, "ssim_threshold", metric)
    pair = _load_pair(result, expected, metric)
    if pair is None:
        return 0.0
    edited, original = pair
    compared = "the result"
    if edited.size != original.size:
        logger.info("%s: scaling the result from %s to %s", metric, edited.size, original.size)
        compared = f"the result scaled from {_size(edited)} to {_size(original)}"
        edited = edited.convert("RGBA" if _has_alpha(edited) else "RGB").resize(original.size,
                                                                              Image.Resampling.LANCZOS)
    return float(_similar(edited, original, threshold, metric, compared))


def visible_content(im: Image.Image) -> Image.Image | None:
    """``im`` cropped to its non-transparent pixels (the whole image when opaque); None when all transparent."""
    if not _has_alpha(im):
        return im
    box = im.convert("RGBA").getchannel("A").getbbox()
    return None if box is None else im.crop(box)


@METRICS.register()
def check_structure_sim_resized(result: Any, expected: Any) -> float:
    """1 when the result's visible content, scaled to the original's size, is the original (SSIM >= 0.9).

    ``result``: the exported image, in which a layer was resized (transparent canvas around it is
    ignored: the result is cropped to its non-transparent pixels first); ``expected``: the original
    image. Both are compared in RGB, transparent parts on white. A fully transparent result scores 0.
    """
    metric = "check_structure_sim_resized"
    pair = _load_pair(result, expected, metric)
    if pair is None:
        return 0.0
    edited, original = pair
    content = visible_content(edited)
    if content is None:
        logger.info("%s: the result is fully transparent", metric)
        return fail(STRUCTURE_MISMATCH, f"the result image ({_size(edited)}) is fully transparent: no content")
    scaled = flatten(content).resize(original.size, Image.Resampling.LANCZOS)
    return float(_similar(scaled, flatten(original), STRUCTURE_SSIM, metric,
                          f"the result's visible content ({_size(content)}) scaled to {_size(original)}"))


# --------------------------------------------------------------------------- tone edits

def _brightness(im: Image.Image) -> float:
    return float(np.asarray(flatten(im).convert("L"), dtype=np.float64).mean())


def _contrast(im: Image.Image) -> float:
    return float(_rgb_array(im).std())


def _saturation(im: Image.Image) -> float:
    return float(np.asarray(flatten(im).convert("HSV"), dtype=np.float64)[..., 1].mean())


def _edited_and_similar(result: Any, expected: Any, metric: str, quality: str, measure: Callable[[Image.Image], float],
                        increase: bool, similar: Callable[[Image.Image, Image.Image], bool]) -> float:
    """The shared check of the ``*_and_structure_sim`` tone edits.

    1 when ``measure`` of the result moved the asked way from the original's (strictly) and
    ``similar(result, original)`` holds (the picture is still the same one), else 0.
    """
    pair = _load_pair(result, expected, metric)
    if pair is None:
        return 0.0
    edited, original = pair
    before, after = measure(original), measure(edited)
    if not (after > before if increase else after < before):
        logger.info("%s: the %s did not %s (original %.3f, result %.3f)", metric, quality,
                    "increase" if increase else "decrease", before, after)
        return fail(RULE_FAILED, f"the {quality} did not {'increase' if increase else 'decrease'}: "
                                 f"original {before:.3f}, result {after:.3f}")
    if not similar(edited, original):
        logger.info("%s: the %s changed (%.3f -> %.3f) but the picture is not the same", metric, quality,
                    before, after)
        return 0.0
    logger.info("%s: the %s changed %.3f -> %.3f and the picture is the same", metric, quality, before, after)
    return 1.0


def _normalized_brightness(im: Image.Image) -> np.ndarray:
    """RGB scaled so that the mean grey level is 128, as 0..1 floats."""
    rgb = _rgb_array(im)
    mean = _brightness(im)
    if mean > 0:
        rgb = np.clip(rgb * (_NORMAL_BRIGHTNESS / mean), 0, 255)
    return rgb / 255.0


@METRICS.register()
def check_brightness_decrease_and_structure_sim(result: Any, expected: Any, threshold: float = BRIGHTNESS_MSE) -> float:
    """1 when the result is a darker version of the original picture.

    ``result``: the edited image; ``expected``: the original. The result's mean grey level must be
    lower, and after both are scaled to the same mean brightness their mean squared difference
    (0..1 scale; a result of another size is scaled to the original's first) must be below
    ``threshold``.

    Args:
        threshold: the largest mean squared difference, in (0, 1] (default 0.03).

    Raises:
        MetricError: ``threshold`` out of range.
    """
    metric = "check_brightness_decrease_and_structure_sim"
    bound = _check_fraction(threshold, "threshold", metric)

    def same_picture(edited: Image.Image, original: Image.Image) -> bool:
        if edited.size != original.size:
            edited = flatten(edited).resize(original.size, Image.Resampling.LANCZOS)
        mse = float(np.mean((_normalized_brightness(edited) - _normalized_brightness(original)) ** 2))
        logger.info("%s: brightness-normalized MSE %.5f (bound %.5f)", metric, mse, bound)
        if mse >= bound:
            explain(THRESHOLD_NOT_MET, f"brightness-normalized MSE of the result against the original {mse:.5f} >= "
                                       f"{bound:g}: not the same picture")
        return mse < bound

    return _edited_and_similar(result, expected, metric, "brightness", _brightness, False, same_picture)


@METRICS.register()
def check_contrast_increase_and_structure_sim(result: Any, expected: Any) -> float:
    """1 when the result is the original picture with more contrast.

    ``result``: the edited image; ``expected``: the original. The standard deviation of the
    result's RGB values must be higher, and its structure SSIM against the original (same size)
    at least 0.65.
    """
    metric = "check_contrast_increase_and_structure_sim"
    return _edited_and_similar(result, expected, metric, "contrast", _contrast, True,
                               lambda a, b: _similar(flatten(a), flatten(b), CONTRAST_SSIM, metric))


@METRICS.register()
def check_saturation_increase_and_structure_sim(result: Any, expected: Any) -> float:
    """1 when the result is the original picture with more vivid colours.

    ``result``: the edited image; ``expected``: the original. The mean HSV saturation must be
    higher, while the hue and value channels each keep an SSIM of at least 0.9 against the
    original's (same size).
    """
    metric = "check_saturation_increase_and_structure_sim"

    def same_hue_and_value(edited: Image.Image, original: Image.Image) -> bool:
        if not _comparable_sizes(edited, original, metric):
            return False
        a = np.asarray(flatten(edited).convert("HSV"), dtype=np.float64)
        b = np.asarray(flatten(original).convert("HSV"), dtype=np.float64)
        hue, value = _ssim_arrays(a[..., 0], b[..., 0]), _ssim_arrays(a[..., 2], b[..., 2])
        logger.info("%s: SSIM of hue %.4f, of value %.4f (pass mark %.2f)", metric, hue, value, STRUCTURE_SSIM)
        ok = hue >= STRUCTURE_SSIM and value >= STRUCTURE_SSIM
        if not ok:
            explain(THRESHOLD_NOT_MET, f"SSIM against the original of the hue {hue:.4f} and of the value {value:.4f}: "
                                       f"both must be >= {STRUCTURE_SSIM:g} (not the same picture)")
        return ok

    return _edited_and_similar(result, expected, metric, "saturation", _saturation, True, same_hue_and_value)


@METRICS.register()
def check_palette_and_structure_sim(result: Any, expected: Any) -> float:
    """1 when the result is saved palette-based (indexed colour) and is still the original picture.

    ``result``: the exported image, whose mode must be ``P`` (an indexed PNG or GIF);
    ``expected``: the original. Structure SSIM of the two (same size) at least 0.9.
    """
    metric = "check_palette_and_structure_sim"
    pair = _load_pair(result, expected, metric)
    if pair is None:
        return 0.0
    edited, original = pair
    if edited.mode != "P":
        logger.info("%s: the result is in mode %s, not palette-based (P)", metric, edited.mode)
        return fail(VALUE_MISMATCH, f"image mode: expected P (palette-based, indexed), got {edited.mode}")
    return float(_similar(edited, original, STRUCTURE_SSIM, metric))


@METRICS.register()
def check_image_mirror(result: Any, expected: Any) -> float:
    """1 when the result is the original flipped left-right (SSIM of the result flipped back >= 0.99).

    ``result``: the mirrored image; ``expected``: the original. Same size required.
    """
    return _score_similar(result, expected, "check_image_mirror", MIRROR_SSIM, transform=ImageOps.mirror,
                          compared="the result flipped back left-right")


@METRICS.register()
def check_file_exists_and_structure_sim(result: Any, expected: Any) -> float:
    """1 when the result file exists and is the original picture (same size, SSIM >= 0.9).

    ``result``: the exported file (e.g. a copy saved under another name or format); ``expected``:
    the original image. A re-encoded JPEG of the same picture passes.
    """
    return _score_similar(result, expected, "check_file_exists_and_structure_sim", STRUCTURE_SSIM)


# --------------------------------------------------------------------------- colours and shapes

@METRICS.register()
def check_green_background(result: Any, expected: Any) -> float:
    """1 when every background pixel of the result is green (its G above both R and B).

    ``result``: the edited image; ``expected``: the original, where the object is black and
    every pixel that is not black (all channels under 8) is background. Both must have the same
    size; the object's pixels are not checked.

    Raises:
        MetricError: the expected image has no background (it is all black).
    """
    metric = "check_green_background"
    pair = _load_pair(result, expected, metric)
    if pair is None:
        return 0.0
    edited, original = pair
    background = (_rgb_array(original) >= _BLACK_LEVEL).any(axis=2)
    if not background.any():
        raise MetricError(f"{metric}: the expected image {expected} is all black, so it marks no background")
    if edited.size != original.size:
        logger.info("%s: image sizes differ: %s vs %s", metric, edited.size, original.size)
        return fail(STRUCTURE_MISMATCH, f"image sizes differ: result {_size(edited)}, expected {_size(original)}")
    rgb = _rgb_array(edited)
    r, g, b = rgb[..., 0], rgb[..., 1], rgb[..., 2]
    not_green = background & ~((g > r) & (g > b))
    if not_green.any():
        logger.info("%s: %d of %d background pixels are not green", metric, int(not_green.sum()),
                    int(background.sum()))
        y, x = (int(v) for v in np.argwhere(not_green)[0])
        return fail(RULE_FAILED, f"{int(not_green.sum())} of {int(background.sum())} background pixels are not green "
                                 f"(G above R and B); the first at x {x}, y {y} is RGB "
                                 f"{tuple(int(c) for c in rgb[y, x])}")
    return 1.0


def _dominant_colour(rgb: np.ndarray) -> np.ndarray:
    """The most frequent colour of the pixels ``rgb`` (N x 3), counted in bins of ``_COLOUR_BIN`` levels."""
    q = (rgb // _COLOUR_BIN).astype(np.int64)
    keys = (q[:, 0] * 64 + q[:, 1]) * 64 + q[:, 2]
    values, counts = np.unique(keys, return_counts=True)
    return rgb[keys == values[counts.argmax()]].mean(axis=0)


def _near(rgb: np.ndarray, colour: np.ndarray) -> np.ndarray:
    return np.abs(rgb - colour).max(axis=-1) <= _COLOUR_TOLERANCE


@METRICS.register()
def check_triangle_position(result: Any, expected: Any = None) -> float:
    """1 when the shape in the result image (the triangle to move) is centred.

    ``result``: the exported image, a shape of one colour on a plain background; no expected.
    The background is the most frequent colour, the shape the most frequent colour of the other
    pixels; the shape's centroid must lie within 5% of the width and of the height of the image
    centre. An image with no shape scores 0.
    """
    metric = "check_triangle_position"
    im = result_image(result, metric)
    if im is None:
        return 0.0
    rgb = _rgb_array(im)
    background = _dominant_colour(rgb.reshape(-1, 3))
    others = ~_near(rgb, background)
    if not others.any():
        logger.info("%s: the image is one colour, there is no shape", metric)
        return fail(STRUCTURE_MISMATCH, f"the result image ({_size(im)}) is one colour: there is no shape")
    shape = others & _near(rgb, _dominant_colour(rgb[others]))
    rows, cols = np.nonzero(shape)
    height, width = shape.shape
    dy, dx = rows.mean() + 0.5 - height / 2, cols.mean() + 0.5 - width / 2
    centred = abs(dx) <= _CENTRE_TOLERANCE * width and abs(dy) <= _CENTRE_TOLERANCE * height
    logger.info("%s: shape centroid %.1f px right, %.1f px below the centre of %dx%d", metric, dx, dy, width, height)
    if not centred:
        return fail(THRESHOLD_NOT_MET, f"the shape's centroid is {abs(dx):.1f} px {'left' if dx < 0 else 'right'} of "
                                       f"and {abs(dy):.1f} px {'above' if dy < 0 else 'below'} the centre of the "
                                       f"{width}x{height} image; at most {_CENTRE_TOLERANCE * width:.1f} px and "
                                       f"{_CENTRE_TOLERANCE * height:.1f} px ({_CENTRE_TOLERANCE:.0%}) allowed")
    return 1.0
