"""Image metrics on real charts drawn with matplotlib (Agg) and edited with Pillow, in both directions."""
from __future__ import annotations

from pathlib import Path

import matplotlib
import pytest
from PIL import Image, ImageEnhance, ImageOps

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (after choosing the backend)

from desktop_env.evaluators.metrics.images import (  # noqa: E402
    DEFAULT_THRESHOLD, compare_image_list, compare_images, compare_jupyterlab_images, compare_metabase_images,
    image_similarity, ssim,
)
from desktop_env.evaluators.metrics.utils import MetricError  # noqa: E402

SALES = (23, 45, 56, 78, 33)


def chart(path, kind="bar", values=SALES, dpi=100, size=(6.4, 4.8)):
    """Save a labelled chart of ``values`` (bar, line or pie) as ``path``; return the path as str."""
    fig, ax = plt.subplots(figsize=size)
    if kind == "bar":
        ax.bar(["East", "North", "South", "West", "Other"], values)
        ax.grid(axis="y")
    elif kind == "line":
        ax.plot(range(len(values)), values, marker="o")
    elif kind == "pie":
        ax.pie(values, labels=["East", "North", "South", "West", "Other"])
    ax.set_title("Sales by region")
    fig.savefig(path, dpi=dpi)
    plt.close(fig)
    return str(path)


def edited(src, path, edit, **save):
    """Save ``edit(image)`` of the image at ``src`` as ``path``."""
    with Image.open(src) as im:
        edit(im.convert("RGB")).save(path, **save)
    return str(path)


def score(a, b, resize=False):
    with Image.open(a) as ia, Image.open(b) as ib:
        return image_similarity(ia, ib, resize=resize)


@pytest.fixture
def gold(tmp_path):
    return chart(tmp_path / "gold.png")


def test_jpeg_of_the_same_chart_passes(tmp_path, gold):
    jpeg = edited(gold, tmp_path / "chart.jpg", lambda im: im, quality=90)
    assert score(jpeg, gold) > 0.98
    assert compare_images(jpeg, gold) == 1.0
    assert compare_images(chart(tmp_path / "again.png"), gold) == 1.0  # drawn again: the same pixels
    assert compare_images(jpeg, gold, threshold=1.0) == 0.0  # 1.0 asks for the same pixels


def test_one_bar_ten_percent_taller_fails(tmp_path, gold):
    values = list(SALES)
    values[1] *= 1.10  # North, not the tallest: the axis keeps its scale and one bar moves ~20 px
    changed = chart(tmp_path / "changed.png", values=values)
    assert score(changed, gold) < 0.5
    assert compare_images(changed, gold) == 0.0
    assert compare_jupyterlab_images(changed, gold) == 0.0
    # the whole-image SSIM hardly sees it: why the measure looks at the worst region instead
    with Image.open(changed) as a, Image.open(gold) as b:
        assert ssim(a, b) > 0.99


def test_mirrored_chart_fails(tmp_path, gold):
    mirrored = edited(gold, tmp_path / "mirrored.png", ImageOps.mirror)
    assert score(mirrored, gold) < 0.5
    assert compare_images(mirrored, gold) == 0.0


def test_brighter_chart_fails(tmp_path, gold):
    brighter = edited(gold, tmp_path / "brighter.png", lambda im: ImageEnhance.Brightness(im).enhance(1.10))
    assert score(brighter, gold) < DEFAULT_THRESHOLD - 0.01
    assert compare_images(brighter, gold) == 0.0
    assert compare_images(brighter, gold, threshold=0.9) == 1.0  # a looser threshold lets it through


@pytest.mark.parametrize("colour", ["white", "black", (31, 119, 180)])
def test_blank_or_single_colour_image_never_matches_a_chart(tmp_path, gold, colour):
    with Image.open(gold) as im:
        size = im.size
    blank = tmp_path / "blank.png"
    Image.new("RGB", size, colour).save(blank)
    assert score(blank, gold) == 0.0
    for threshold in (1e-9, 0.5, DEFAULT_THRESHOLD):
        assert compare_images(str(blank), gold, threshold=threshold) == 0.0
        assert compare_images(gold, str(blank), threshold=threshold) == 0.0
        assert compare_jupyterlab_images(str(blank), gold, threshold=threshold) == 0.0
        assert compare_metabase_images(str(blank), gold, threshold=threshold) == 0.0
    assert compare_images(gold, gold, reference_base_result=0.0) == 1.0
    assert compare_images(str(blank), gold, reference_base_result=0.0) == 0.0
    assert compare_images(str(blank), str(blank)) == 1.0  # two blanks of one colour do match


def test_twice_the_scale_passes_unless_resize_is_off(tmp_path, gold):
    big = chart(tmp_path / "big.png", dpi=200)
    assert compare_images(big, gold, resize=False) == 0.0  # sizes differ and must match
    assert score(big, gold, resize=True) > DEFAULT_THRESHOLD + 0.01
    assert compare_images(big, gold) == 1.0  # resized by default, as the public suites' graders do
    assert compare_images(big, gold, resize=True) == 1.0
    values = list(SALES)
    values[1] *= 1.10
    big_changed = chart(tmp_path / "big_changed.png", values=values, dpi=200)
    assert compare_images(big_changed, gold) == 0.0


def test_threshold_out_of_range_is_an_error(gold):
    for bad in (0, -0.5, 1.5, "high", True):
        with pytest.raises(MetricError, match="threshold"):
            compare_images(gold, gold, threshold=bad)
    with pytest.raises(MetricError, match="reference_base_result"):
        compare_images(gold, gold, reference_base_result=1.0)


def test_reference_base_result_grades_like_the_general_suite(tmp_path, gold):
    """The general suite's tasks give ``reference_base_result`` and expect a graded SSIM score."""
    assert compare_images(gold, gold, reference_base_result=0.5) == pytest.approx(1.0)
    big = chart(tmp_path / "big.png", dpi=200)
    graded = compare_images(big, gold, reference_base_result=0.5)  # always across scale
    assert 0.5 < graded < 1.0
    pie = chart(tmp_path / "pie.png", kind="pie")
    assert compare_images(pie, gold, reference_base_result=0.9) == 0.0


def test_compare_image_list_takes_a_single_path_on_either_side(tmp_path, gold):
    same = edited(gold, tmp_path / "same.jpg", lambda im: im, quality=90)
    pie = chart(tmp_path / "pie.png", kind="pie")
    assert compare_image_list(same, gold) == 1.0
    assert compare_image_list([same], gold) == 1.0
    assert compare_image_list(same, [gold]) == 1.0
    assert compare_image_list(Path(same), Path(gold)) == 1.0  # file getters hand over Path objects
    assert compare_image_list(pie, gold) == 0.0
    assert compare_image_list([same, pie], [gold, pie]) == 1.0
    assert compare_image_list([pie, same], [gold, pie]) == 0.0  # order matters
    assert compare_image_list([same], [gold, pie]) == 0.0  # lengths differ
    assert compare_image_list(None, gold) == 0.0
    assert compare_image_list([], []) == 0.0  # nothing to compare is no match
    big = chart(tmp_path / "big.png", dpi=200)
    assert compare_image_list(big, gold, resize=False) == 0.0
    assert compare_image_list(big, gold) == 1.0


def test_chart_comparisons_tell_charts_apart(tmp_path):
    """The histogram comparison these replace scored 1 for a blank image against a bar chart and
    for a pie chart against a line chart."""
    bar, line, pie = (chart(tmp_path / f"{k}.png", kind=k) for k in ("bar", "line", "pie"))
    blank = tmp_path / "blank.png"
    Image.new("RGB", (640, 480), "white").save(blank)
    assert compare_jupyterlab_images(str(blank), bar) == 0.0
    assert compare_metabase_images(pie, line) == 0.0
    assert compare_jupyterlab_images(pie, line) == 0.0
    assert compare_metabase_images(bar, line) == 0.0
    # another export of the same chart at another scale (exports differ in size) passes
    for metric in (compare_jupyterlab_images, compare_metabase_images):
        assert metric(chart(tmp_path / "line_big.png", kind="line", dpi=200), line) == 1.0
        assert metric(chart(tmp_path / "pie_small.png", kind="pie", dpi=75), pie) == 1.0
    values = list(SALES)
    values[2] *= 0.9
    assert compare_jupyterlab_images(chart(tmp_path / "line_other.png", kind="line", values=values), line) == 0.0
    assert compare_jupyterlab_images(None, line) == 0.0
    assert compare_metabase_images(line, str(tmp_path / "missing.png")) == 0.0


def test_transparent_export_compares_as_shown_on_white(tmp_path, gold):
    """A chart saved with a transparent background looks like the same chart on white."""
    fig, ax = plt.subplots(figsize=(6.4, 4.8))
    ax.bar(["East", "North", "South", "West", "Other"], SALES)
    ax.grid(axis="y")
    ax.set_title("Sales by region")
    transparent = tmp_path / "transparent.png"
    fig.savefig(transparent, dpi=100, transparent=True)
    plt.close(fig)
    with Image.open(transparent) as im:
        assert im.mode == "RGBA"
    assert compare_images(str(transparent), gold) == 1.0


def test_not_an_image_scores_zero(tmp_path, gold):
    text = tmp_path / "chart.png"
    text.write_text("not a png")
    assert compare_images(str(text), gold) == 0.0
    assert compare_images(gold, None) == 0.0
