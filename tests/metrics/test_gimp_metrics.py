"""GIMP / image-edit metrics on real image files: a photo-like picture and its edited versions."""
from __future__ import annotations

import inspect
import shutil
from pathlib import Path

import numpy as np
import pytest
from PIL import Image, ImageDraw, ImageFilter, ImageFont, ImageOps

from desktop_env.evaluators.metrics import gimp, gimp_files
from desktop_env.evaluators.metrics.gimp import (
    check_brightness_decrease_and_structure_sim, check_contrast_increase_and_structure_sim,
    check_file_exists_and_structure_sim, check_green_background, check_image_mirror,
    check_palette_and_structure_sim, check_saturation_increase_and_structure_sim,
    check_structure_sim, check_structure_sim_resized, check_structure_sim_with_threshold, check_triangle_position,
)
from desktop_env.evaluators.metrics.gimp_files import (
    check_config_status, check_image_file_size, check_image_size, compare_image_text,
)
from desktop_env.evaluators.metrics.utils import MetricError
from desktop_env.evaluators.values import GuestText
from desktop_env.registry import METRICS

SIZE = (160, 120)
FONT = Path("/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf")
needs_tesseract = pytest.mark.skipif(shutil.which("tesseract") is None, reason="the tesseract command is not installed")


def photo(seed: int = 0) -> Image.Image:
    """A photo-like RGB picture: smooth colour gradients, slight grain, a disc, a block and a triangle."""
    w, h = SIZE
    y, x = np.mgrid[0:h, 0:w].astype(float)
    arr = np.stack([60 + 120 * x / w + 20 * np.sin(y / 9),
                    50 + 110 * y / h + 20 * np.cos(x / 13),
                    150 - 70 * x / w + 30 * np.sin((x + y) / 17)], axis=2)
    arr += np.random.default_rng(seed).normal(0, 1.0, arr.shape)
    im = Image.fromarray(np.clip(arr, 0, 255).astype(np.uint8))
    draw = ImageDraw.Draw(im)
    draw.ellipse((20, 20, 70, 70), fill=(220, 60, 40))
    draw.rectangle((95, 35, 145, 100), fill=(40, 160, 70))
    draw.polygon([(30, 110), (60, 80), (80, 112)], fill=(240, 220, 60))
    return im


def other_photo() -> Image.Image:
    """Another picture with the same colours: the photo turned upside down and rotated."""
    return ImageOps.flip(photo(seed=1).rotate(90))


def scaled(im: Image.Image, factor: float) -> Image.Image:
    """Every channel times ``factor`` (a darker or brighter picture)."""
    return Image.fromarray(np.clip(np.asarray(im, dtype=float) * factor, 0, 255).astype(np.uint8))


def contrasted(im: Image.Image, factor: float) -> Image.Image:
    """Values pushed away from (factor > 1) or towards (< 1) the mean."""
    arr = np.asarray(im, dtype=float)
    return Image.fromarray(np.clip((arr - arr.mean()) * factor + arr.mean(), 0, 255).astype(np.uint8))


def saturated(im: Image.Image, factor: float) -> Image.Image:
    """HSV saturation times ``factor``, hue and value kept."""
    hsv = np.asarray(im.convert("HSV"), dtype=float)
    hsv[..., 1] = np.clip(hsv[..., 1] * factor, 0, 255)
    return Image.fromarray(hsv.astype(np.uint8), "HSV").convert("RGB")


def cutout(im: Image.Image, hidden=(0, 0, 0), opaque: bool = False) -> Image.Image:
    """``im`` with everything but the disc transparent; ``hidden`` is the colour under the transparent pixels."""
    rgba = im.convert("RGBA")
    mask = Image.new("L", im.size, 0)
    ImageDraw.Draw(mask).ellipse((20, 20, 70, 70), fill=255)
    out = Image.new("RGBA", im.size, (*hidden, 255 if opaque else 0))
    out.paste(rgba, (0, 0), mask)
    return out


def layer_resized(im: Image.Image) -> Image.Image:
    """A transparent canvas of the picture's size with the picture scaled to half inside it (a resized layer)."""
    canvas = Image.new("RGBA", im.size, (0, 0, 0, 0))
    canvas.paste(im.resize((im.width // 2, im.height // 2), Image.Resampling.LANCZOS), (10, 10))
    return canvas


@pytest.fixture
def save(tmp_path):
    """``save(name, image, **options)`` writes the image under tmp_path and returns its Path."""
    def _save(name: str, im: Image.Image, **options) -> Path:
        path = tmp_path / name
        im.save(path, **options)
        return path
    return _save


@pytest.fixture
def original(save):
    return save("original.png", photo())


@pytest.fixture
def other(save):
    return save("other.png", other_photo())


def test_every_name_is_registered_with_result_and_expected():
    names = ["check_structure_sim", "check_structure_sim_with_threshold", "check_structure_sim_resized",
             "check_brightness_decrease_and_structure_sim", "check_contrast_increase_and_structure_sim",
             "check_saturation_increase_and_structure_sim", "check_palette_and_structure_sim",
             "check_green_background", "check_image_mirror", "check_file_exists_and_structure_sim",
             "check_image_size", "check_image_file_size", "check_triangle_position", "check_config_status",
             "compare_image_text"]
    for name in names:
        entry = METRICS.get(name)
        assert entry.func is (getattr(gimp, name, None) or getattr(gimp_files, name))
        assert entry.func.__doc__
    # the one metric whose tasks give no expected side
    assert inspect.signature(check_triangle_position).parameters["expected"].default is None


# --------------------------------------------------------------------------- structure

def test_structure_sim_same_picture_and_reencoded(save, original):
    assert check_structure_sim(save("copy.png", photo()), original) == 1.0
    assert check_structure_sim(save("copy.jpg", photo(), quality=95), original) == 1.0


def test_structure_sim_fails_on_other_picture_or_size(save, original, other):
    assert check_structure_sim(other, original) == 0.0
    assert check_structure_sim(save("big.png", photo().resize((320, 240))), original) == 0.0


def test_structure_sim_compares_transparency(save):
    gold = save("gold.png", cutout(photo()))
    assert check_structure_sim(save("cut.png", cutout(photo())), gold) == 1.0
    # what hides under transparent pixels does not matter...
    assert check_structure_sim(save("cut_white.png", cutout(photo(), hidden=(255, 255, 255))), gold) == 1.0
    # ...but a background left opaque does, even when its colour is the one under the gold's transparency
    assert check_structure_sim(save("opaque.png", cutout(photo(), opaque=True)), gold) == 0.0


@pytest.mark.parametrize("missing", [None, GuestText("/tmp/x.png"), "no/such/file.png"])
def test_structure_sim_missing_result(original, missing):
    assert check_structure_sim(missing, original) == 0.0


def test_structure_sim_result_not_an_image(tmp_path, original):
    junk = tmp_path / "junk.png"
    junk.write_text("not a png")
    assert check_structure_sim(junk, original) == 0.0


def test_structure_sim_unreadable_expected_is_a_task_error(tmp_path, original):
    with pytest.raises(MetricError, match="expected"):
        check_structure_sim(original, tmp_path / "gone.png")
    junk = tmp_path / "junk.png"
    junk.write_text("not a png")
    with pytest.raises(MetricError, match="cannot be read"):
        check_structure_sim(original, junk)


def test_structure_sim_with_threshold_scales_the_result(save, original, other):
    assert check_structure_sim_with_threshold(save("big.png", photo().resize((320, 240))), original) == 1.0
    assert check_structure_sim_with_threshold(other, original) == 0.0
    # the option is used: a loose pass mark accepts the other picture, a strict one refuses a JPEG
    assert check_structure_sim_with_threshold(other, original, ssim_threshold=0.2) == 1.0
    jpeg = save("copy.jpg", photo(), quality=60)
    assert check_structure_sim_with_threshold(jpeg, original, ssim_threshold=0.999) == 0.0
    assert check_structure_sim_with_threshold(None, original) == 0.0


@pytest.mark.parametrize("bad", [0, 1.5, "0.9", True, None])
def test_structure_sim_with_threshold_bad_option(original, bad):
    with pytest.raises(MetricError, match="ssim_threshold"):
        check_structure_sim_with_threshold(original, original, ssim_threshold=bad)


def test_structure_sim_resized(save, original):
    assert check_structure_sim_resized(save("resized.png", layer_resized(photo())), original) == 1.0
    assert check_structure_sim_resized(save("resized_other.png", layer_resized(other_photo())), original) == 0.0
    assert check_structure_sim_resized(save("empty.png", Image.new("RGBA", SIZE, (0, 0, 0, 0))), original) == 0.0
    assert check_structure_sim_resized(None, original) == 0.0


# --------------------------------------------------------------------------- tone edits

def test_brightness_decrease(save, original):
    assert check_brightness_decrease_and_structure_sim(save("darker.png", scaled(photo(), 0.7)), original) == 1.0
    assert check_brightness_decrease_and_structure_sim(save("brighter.png", scaled(photo(), 1.2)), original) == 0.0
    assert check_brightness_decrease_and_structure_sim(save("same.png", photo()), original) == 0.0
    dark_other = save("dark_other.png", scaled(other_photo(), 0.7))
    assert check_brightness_decrease_and_structure_sim(dark_other, original) == 0.0
    assert check_brightness_decrease_and_structure_sim(None, original) == 0.0


def test_brightness_threshold_option(save, original):
    # darker and slightly softened: within the default bound (MSE ~0.001), not within a strict one
    darker = save("darker.png", scaled(photo(), 0.7).filter(ImageFilter.GaussianBlur(1)))
    assert check_brightness_decrease_and_structure_sim(darker, original) == 1.0
    assert check_brightness_decrease_and_structure_sim(darker, original, threshold=1e-4) == 0.0
    for bad in (0, -0.1, 2, "0.03"):
        with pytest.raises(MetricError, match="threshold"):
            check_brightness_decrease_and_structure_sim(darker, original, threshold=bad)


def test_contrast_increase(save, original):
    assert check_contrast_increase_and_structure_sim(save("more.png", contrasted(photo(), 1.5)), original) == 1.0
    assert check_contrast_increase_and_structure_sim(save("less.png", contrasted(photo(), 0.6)), original) == 0.0
    # another picture with more contrast than the original fails on structure
    assert np.asarray(contrasted(other_photo(), 1.8), dtype=float).std() > np.asarray(photo(), dtype=float).std()
    other_more = save("other_more.png", contrasted(other_photo(), 1.8))
    assert check_contrast_increase_and_structure_sim(other_more, original) == 0.0
    assert check_contrast_increase_and_structure_sim(None, original) == 0.0


def test_saturation_increase(save, original):
    assert check_saturation_increase_and_structure_sim(save("vivid.png", saturated(photo(), 1.5)), original) == 1.0
    assert check_saturation_increase_and_structure_sim(save("dull.png", saturated(photo(), 0.5)), original) == 0.0
    vivid_other = save("vivid_other.png", saturated(other_photo(), 1.5))
    assert check_saturation_increase_and_structure_sim(vivid_other, original) == 0.0
    assert check_saturation_increase_and_structure_sim(None, original) == 0.0


def test_palette_based(save, original):
    indexed = photo().convert("P", palette=Image.Palette.ADAPTIVE, colors=256)
    assert check_palette_and_structure_sim(save("indexed.png", indexed), original) == 1.0
    assert check_palette_and_structure_sim(save("rgb.png", photo()), original) == 0.0
    other_indexed = other_photo().convert("P", palette=Image.Palette.ADAPTIVE, colors=256)
    assert check_palette_and_structure_sim(save("other_indexed.png", other_indexed), original) == 0.0
    assert check_palette_and_structure_sim(None, original) == 0.0


def test_image_mirror(save, original):
    assert check_image_mirror(save("mirror.png", ImageOps.mirror(photo())), original) == 1.0
    assert check_image_mirror(save("same.png", photo()), original) == 0.0
    assert check_image_mirror(save("upside_down.png", ImageOps.flip(photo())), original) == 0.0
    assert check_image_mirror(None, original) == 0.0


def test_file_exists_and_structure_sim(save, original, other):
    assert check_file_exists_and_structure_sim(save("export.jpg", photo(), quality=95), original) == 1.0
    assert check_file_exists_and_structure_sim(other, original) == 0.0
    assert check_file_exists_and_structure_sim(original.parent / "export_missing.jpg", original) == 0.0


# --------------------------------------------------------------------------- colours and shapes

def object_on(background) -> Image.Image:
    """A black disc and bar (the object layer) on a plain background."""
    im = Image.new("RGB", SIZE, background)
    draw = ImageDraw.Draw(im)
    draw.ellipse((40, 20, 110, 90), fill=(0, 0, 0))
    draw.rectangle((20, 95, 140, 105), fill=(0, 0, 0))
    return im


def test_green_background(save):
    white = save("white.png", object_on((255, 255, 255)))
    assert check_green_background(save("green.png", object_on((40, 200, 60))), white) == 1.0
    assert check_green_background(save("same.png", object_on((255, 255, 255))), white) == 0.0
    assert check_green_background(save("red.png", object_on((220, 30, 30))), white) == 0.0
    half = object_on((40, 200, 60))
    ImageDraw.Draw(half).rectangle((0, 0, 20, 20), fill=(255, 255, 255))
    assert check_green_background(save("half.png", half), white) == 0.0
    big = save("big.png", object_on((40, 200, 60)).resize((320, 240)))
    assert check_green_background(big, white) == 0.0
    assert check_green_background(None, white) == 0.0


def test_green_background_all_black_expected_is_a_task_error(save):
    black = save("black.png", Image.new("RGB", SIZE, (0, 0, 0)))
    with pytest.raises(MetricError, match="all black"):
        check_green_background(save("green.png", object_on((40, 200, 60))), black)


def triangle(centre) -> Image.Image:
    """A yellow triangle centred (by its centroid) on ``centre`` on a blue background."""
    cx, cy = centre
    im = Image.new("RGB", SIZE, (30, 60, 160))
    ImageDraw.Draw(im).polygon([(cx - 20, cy + 10), (cx + 20, cy + 10), (cx, cy - 20)], fill=(250, 220, 30))
    return im


def test_triangle_position(save):
    assert check_triangle_position(save("middle.png", triangle((80, 60)))) == 1.0
    assert check_triangle_position(save("middle.jpg", triangle((80, 60)), quality=80)) == 1.0
    assert check_triangle_position(save("side.png", triangle((30, 60)))) == 0.0
    assert check_triangle_position(save("low.png", triangle((80, 95)))) == 0.0
    assert check_triangle_position(save("blank.png", Image.new("RGB", SIZE, (30, 60, 160)))) == 0.0
    assert check_triangle_position(None) == 0.0


# --------------------------------------------------------------------------- size

def test_image_size(save):
    resized = save("resized.png", layer_resized(photo()))
    assert check_image_size(resized, {"height": 60, "ignore_transparent": True}) == 1.0
    assert check_image_size(resized, {"width": 80, "height": 60, "ignore_transparent": True}) == 1.0
    assert check_image_size(resized, {"height": 60}) == 0.0
    assert check_image_size(resized, {"width": 160, "height": 120}) == 1.0
    assert check_image_size(resized, {"width": 100}) == 0.0
    empty = save("empty.png", Image.new("RGBA", SIZE, (0, 0, 0, 0)))
    assert check_image_size(empty, {"height": 120, "ignore_transparent": True}) == 0.0
    assert check_image_size(None, {"height": 60}) == 0.0


@pytest.mark.parametrize("rule", [{}, {"height": "big"}, {"height": 0}, {"width": 10.5}, {"width": True}, "512"])
def test_image_size_bad_rule(original, rule):
    with pytest.raises(MetricError):
        check_image_size(original, rule)


def test_image_file_size(tmp_path, original):
    size = original.stat().st_size
    assert check_image_file_size(original, {"max_size": size + 1}) == 1.0
    assert check_image_file_size(original, {"max_size": str(size + 1)}) == 1.0
    assert check_image_file_size(original, {"max_size": size}) == 0.0
    junk = tmp_path / "tiny.png"
    junk.write_text("x")
    assert check_image_file_size(junk, {"max_size": 500_000}) == 0.0
    assert check_image_file_size(None, {"max_size": 500_000}) == 0.0


@pytest.mark.parametrize("rule", [{}, {"max_size": "lots"}, {"max_size": -1}, {"max_size": True}, None])
def test_image_file_size_bad_rule(original, rule):
    with pytest.raises(MetricError):
        check_image_file_size(original, rule)


# --------------------------------------------------------------------------- GIMP configuration

GIMPRC = """\
# GIMP gimprc
#
# This is your personal gimprc file.
# (undo-levels 200)

(undo-levels 100)
(theme "Light")
(layer-new-name "My Square")
(default-view
    (show-menubar no)
    (padding-mode light-check))
"""

SESSIONRC = """\
# GIMP sessionrc
(session-info "toplevel"
    (factory-entry "gimp-single-image-window")
    (position 12 34)
    (size 1920 1016))
(hide-docks yes)
(single-window-mode yes)
"""


@pytest.fixture
def gimprc(tmp_path):
    path = tmp_path / "gimprc"
    path.write_text(GIMPRC)
    return path


@pytest.mark.parametrize("rule, score", [
    ({"type:": "key-value", "key": "undo-levels", "value": "100"}, 1.0),
    ({"key": "undo-levels", "value": 100}, 1.0),
    ({"key": "undo-levels", "value": "50"}, 0.0),
    ({"key": "undo-levels", "value": "200"}, 0.0),  # only in a comment
    ({"key": "theme", "value": "\"Light\""}, 1.0),
    ({"key": "theme", "value": "Light"}, 1.0),
    ({"key": "theme", "value": "\"Dark\""}, 0.0),
    ({"key": "layer-new-name", "value": "\"My Square\""}, 1.0),
    ({"key": ["default-view", "show-menubar"], "value": "no"}, 0.0),  # nested on its own line
    ({"key": "show-menubar", "value": "no"}, 1.0),
    ({"key": "padding-mode", "value": "light-check"}, 1.0),
])
def test_config_status_gimprc(gimprc, rule, score):
    assert check_config_status(gimprc, rule) == score


def test_config_status_sessionrc_and_list_key(tmp_path):
    path = tmp_path / "sessionrc"
    path.write_text(SESSIONRC)
    assert check_config_status(path, {"key": "hide-docks", "value": "yes"}) == 1.0
    assert check_config_status(path, {"key": "hide-docks", "value": "no"}) == 0.0
    assert check_config_status(path, {"key": ["position", "12"], "value": "34"}) == 1.0
    assert check_config_status(path, {"key": ["position", "99"], "value": "34"}) == 0.0
    assert check_config_status(path, {"key": ["size", "1920", "1016"], "value": "1016"}) == 0.0


def test_config_status_text_result_and_missing():
    assert check_config_status(GuestText("(undo-levels 100)\n"), {"key": "undo-levels", "value": "100"}) == 1.0
    assert check_config_status(None, {"key": "undo-levels", "value": "100"}) == 0.0


@pytest.mark.parametrize("rule", [{"value": "100"}, {"key": "", "value": "1"}, {"key": [], "value": "1"},
                                  {"key": "undo-levels"}, {"key": "undo-levels", "value": None}, "undo-levels"])
def test_config_status_bad_rule(gimprc, rule):
    with pytest.raises(MetricError):
        check_config_status(gimprc, rule)


# --------------------------------------------------------------------------- OCR

@pytest.fixture(scope="module")
def text_image(tmp_path_factory):
    """A picture with two lines of large dark text on a light background."""
    im = Image.new("RGB", (900, 260), (245, 240, 225))
    font = ImageFont.truetype(str(FONT), 56) if FONT.exists() else ImageFont.load_default(size=56)
    draw = ImageDraw.Draw(im)
    draw.text((40, 40), "Hello GIMP World", font=font, fill=(20, 20, 60))
    draw.text((40, 140), "Invoice 2024", font=font, fill=(20, 20, 60))
    path = tmp_path_factory.mktemp("ocr") / "text.png"
    im.save(path)
    return path


@needs_tesseract
def test_image_text(text_image):
    assert compare_image_text(text_image, {"type": "text", "text": "Hello GIMP"}) == 1.0
    # a line break is whitespace like any other
    assert compare_image_text(text_image, {"type": "text", "text": "World Invoice 2024"}) == 1.0
    assert compare_image_text(text_image, {"type": "text", "text": "Goodbye"}) == 0.0


def test_image_text_missing_result():
    assert compare_image_text(None, {"type": "text", "text": "Hello"}) == 0.0


@pytest.mark.parametrize("rule", [{"type": "regex", "text": "H.*"}, {"type": "text"}, {"type": "text", "text": " "},
                                  "Hello"])
def test_image_text_bad_rule(text_image, rule):
    with pytest.raises(MetricError):
        compare_image_text(text_image, rule)


def test_image_text_without_tesseract(text_image, monkeypatch):
    monkeypatch.setenv("PATH", "")
    with pytest.raises(MetricError, match="tesseract"):
        compare_image_text(text_image, {"type": "text", "text": "Hello"})
