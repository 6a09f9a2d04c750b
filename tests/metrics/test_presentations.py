"""Presentation metrics on real decks built with python-pptx, profiles (xcu), accessibility trees and images."""
from __future__ import annotations

import copy

import pytest
from lxml import etree
from PIL import Image, ImageDraw
from pptx import Presentation
from pptx.dml.color import RGBColor
from pptx.enum.dml import MSO_THEME_COLOR
from pptx.enum.text import PP_ALIGN
from pptx.oxml.ns import qn
from pptx.util import Inches, Pt

from desktop_env.evaluators.metrics.presentations import check_pptx_options, compare_pptx_files
from desktop_env.evaluators.metrics.slides import (
    check_auto_saving_time, check_image_stretch_and_center, check_left_panel, check_page_number_colors,
    check_presenter_console_disable, check_slide_orientation_Portrait, check_textbox_on_leftside, check_transition,
    evaluate_presentation_fill_to_rgb_distance,
)
from desktop_env.evaluators.metrics.utils import MetricError, OptionError
from desktop_env.evaluators.values import GuestText

W, H = 9144000, 6858000  # python-pptx's default 4:3 slide, EMU


# --------------------------------------------------------------------------- fixtures: images and decks
def draw_picture(path, fill=(200, 40, 40), mark=(20, 20, 160), fmt="PNG"):
    """A 160 x 120 picture: a coloured field with a block in its top-left corner."""
    im = Image.new("RGB", (160, 120), fill)
    ImageDraw.Draw(im).rectangle((10, 10, 70, 60), fill=mark)
    im.save(path, fmt)
    return path


def picture_files(folder):
    """Paths of pictures in ``folder``: the deck's own, the same saved as JPEG, and another one."""
    return {
        "own": draw_picture(folder / "own.png"),
        "jpeg": draw_picture(folder / "own.jpg", fmt="JPEG"),
        "other": draw_picture(folder / "other.png", fill=(30, 160, 60), mark=(250, 250, 0)),
    }


@pytest.fixture
def pictures(tmp_path):
    """Paths of pictures: the deck's own, the same saved as JPEG, and another one."""
    return picture_files(tmp_path)


def shape(prs, slide_no: int, name: str):
    return next(s for s in prs.slides[slide_no - 1].shapes if s.name == name)


def body_run(prs, paragraph: int = 0, run: int = 0):
    return shape(prs, 2, "Body").text_frame.paragraphs[paragraph].runs[run]


def pin(sh):
    """Give a shape that inherits its frame (a placeholder) its own, so it can be moved."""
    left, top, width, height = sh.left, sh.top, sh.width, sh.height
    sh.left, sh.top, sh.width, sh.height = left, top, width, height
    return sh


def deck_file(path, picture, edit=None):
    """A two-slide deck at ``path`` showing the image file ``picture``, ``edit(prs)`` applied before saving.

    Slide 1: title and subtitle on a white background. Slide 2: title "Results", a text box "Body"
    (two formatted paragraphs), a picture "Photo", a 2 x 2 table "Table", speaker notes.
    """
    prs = Presentation()
    s1 = prs.slides.add_slide(prs.slide_layouts[0])
    s1.shapes.title.text = "Quarterly report"
    s1.placeholders[1].text = "2024"
    s1.background.fill.solid()
    s1.background.fill.fore_color.rgb = RGBColor(0xFF, 0xFF, 0xFF)
    s2 = prs.slides.add_slide(prs.slide_layouts[5])
    s2.shapes.title.text = "Results"
    box = s2.shapes.add_textbox(Inches(1), Inches(1.5), Inches(4.5), Inches(2))
    box.name = "Body"
    for text, size in (("Revenue grew", 24), ("Costs fell", 18)):
        para = box.text_frame.paragraphs[0] if text.startswith("Rev") else box.text_frame.add_paragraph()
        run = para.add_run()
        run.text = text
        run.font.name, run.font.size = "Arial", Pt(size)
        run.font.color.rgb = RGBColor(0x20, 0x20, 0x20)
    pic = s2.shapes.add_picture(str(picture), Inches(6), Inches(1.5), Inches(2), Inches(1.5))
    pic.name = "Photo"
    frame = s2.shapes.add_table(2, 2, Inches(1), Inches(4.5), Inches(4), Inches(1))
    frame.name = "Table"
    for (r, c), text in {(0, 0): "Region", (0, 1): "Sales", (1, 0): "East", (1, 1): "10"}.items():
        frame.table.cell(r, c).text = text
    s2.notes_slide.notes_text_frame.text = "Mention the margin"
    if edit is not None:
        edit(prs)
    prs.save(path)
    return path


@pytest.fixture
def build(tmp_path, pictures):
    """build(name, edit=None, picture="own") -> path of a two-slide deck (:func:`deck_file`)."""
    def make(name, edit=None, picture="own"):
        return deck_file(tmp_path / name, pictures[picture], edit)
    return make


# --------------------------------------------------------------------------- compare_pptx_files: basics
def test_identical_decks_match(build):
    assert compare_pptx_files(build("result.pptx"), build("gold.pptx")) == 1.0


def test_missing_or_unreadable_result_scores_zero(build, tmp_path):
    gold = build("gold.pptx")
    not_a_deck = tmp_path / "notes.pptx"
    not_a_deck.write_text("just text")
    assert compare_pptx_files(None, gold) == 0.0
    assert compare_pptx_files(tmp_path / "absent.pptx", gold) == 0.0
    assert compare_pptx_files(not_a_deck, gold) == 0.0
    assert compare_pptx_files(GuestText(str(gold)), gold) == 0.0  # guest text is never a host path


def test_unreadable_gold_raises(build, tmp_path):
    broken = tmp_path / "gold.pptx"
    broken.write_bytes(b"PK\x03\x04 not really a zip")
    with pytest.raises(MetricError, match="expected"):
        compare_pptx_files(build("result.pptx"), broken)
    with pytest.raises(MetricError, match="not a file"):
        compare_pptx_files(build("result.pptx"), tmp_path / "absent.pptx")


@pytest.mark.parametrize("options, field, message", [
    ({"examine_shapes": False}, "examine_shapes", "did you mean 'examine_shape'"),
    ({"examine_text": "no"}, "examine_text", "true or false"),
    ({"approximately_tolerance": 2}, "approximately_tolerance", r"\[0, 1\)"),
    ({"approximately_tolerance": True}, "approximately_tolerance", "tolerance"),
])
def test_bad_options_raise(build, options, field, message):
    with pytest.raises(OptionError, match=message) as info:
        compare_pptx_files(build("result.pptx"), build("gold.pptx"), **options)
    assert info.value.field == field
    with pytest.raises(OptionError):  # the same check runs when a task is loaded
        check_pptx_options(options)


def test_comment_keys_are_ignored(build):
    options = {"_note": "examine_shape=False is required", "examine_shape": False}
    check_pptx_options(options)
    assert compare_pptx_files(build("result.pptx"), build("gold.pptx"), **options) == 1.0


def set_strike(prs):
    shape(prs, 2, "Body").element.find(".//" + qn("a:rPr")).set("strike", "sngStrike")


def add_bullet(prs):
    para = shape(prs, 2, "Body").element.find(".//" + qn("a:p"))
    ppr = para.find(qn("a:pPr"))
    if ppr is None:
        ppr = etree.SubElement(para, qn("a:pPr"))
        para.insert(0, ppr)
    etree.SubElement(ppr, qn("a:buChar"), char="•")


def split_run(prs):
    first = shape(prs, 2, "Body").element.find(f".//{qn('a:r')}")
    first.find(qn("a:t")).text = "Revenue "
    extra = copy.deepcopy(first)
    first.addnext(extra)
    extra.find(qn("a:t")).text = "grew"


def set_attr(obj_of, attr, value):
    def edit(prs):
        setattr(obj_of(prs), attr, value)
    return edit


def background(rgb):
    def edit(prs):
        prs.slides[0].background.fill.solid()
        prs.slides[0].background.fill.fore_color.rgb = RGBColor(*rgb)
    return edit


def move_body(dx):
    def edit(prs):
        shape(prs, 2, "Body").left += dx
    return edit


# (option, edit of the result deck, build arguments, extra options for both runs)
DIFFERENCES = [
    ("examine_number_of_slides", lambda prs: prs.slides.add_slide(prs.slide_layouts[6]), {}, {}),
    ("examine_shape", move_body(Inches(1)), {}, {}),
    ("examine_text", set_attr(body_run, "text", "Revenue fell"), {}, {}),
    ("examine_text", lambda prs: setattr(shape(prs, 2, "Table").table.cell(1, 1), "text", "99"), {}, {}),
    ("examine_indent", lambda prs: setattr(shape(prs, 2, "Body").text_frame.paragraphs[1], "level", 3), {},
     {"examine_bullets": False}),
    ("examine_font_name", set_attr(lambda prs: body_run(prs).font, "name", "Courier New"), {}, {}),
    ("examine_font_size", set_attr(lambda prs: body_run(prs).font, "size", Pt(40)), {}, {}),
    ("examine_font_bold", set_attr(lambda prs: body_run(prs).font, "bold", True), {}, {}),
    ("examine_font_italic", set_attr(lambda prs: body_run(prs).font, "italic", True), {}, {}),
    ("examine_color_rgb", set_attr(lambda prs: body_run(prs).font.color, "rgb", RGBColor(0, 0, 0xFF)), {}, {}),
    ("examine_font_underline", set_attr(lambda prs: body_run(prs).font, "underline", True), {}, {}),
    ("examine_strike_through", set_strike, {}, {}),
    ("examine_alignment", set_attr(lambda prs: shape(prs, 2, "Body").text_frame.paragraphs[0], "alignment",
                                   PP_ALIGN.CENTER), {}, {}),
    ("examine_run_count", split_run, {}, {}),
    ("examine_bullets", add_bullet, {}, {}),
    ("examine_background_color", background((0xFF, 0xFF, 0)), {}, {}),
    ("examine_note", lambda prs: setattr(prs.slides[1].notes_slide.notes_text_frame, "text", "Skip it"), {}, {}),
    ("examine_image", None, {"picture": "other"}, {}),
]


@pytest.mark.parametrize("option, edit, kwargs, base", DIFFERENCES,
                         ids=[f"{d[0]}-{i}" for i, d in enumerate(DIFFERENCES)])
def test_each_examined_difference_fails_unless_switched_off(build, option, edit, kwargs, base):
    gold = build("gold.pptx")
    result = build("result.pptx", edit, **kwargs)
    assert compare_pptx_files(result, gold, **base) == 0.0
    assert compare_pptx_files(result, gold, **base, **{option: False}) == 1.0


def test_split_runs_with_other_formatting_still_fail_without_run_count(build):
    def split_and_bold(prs):
        split_run(prs)
        body_run(prs, 0, 1).font.bold = True
    result = build("result.pptx", split_and_bold)
    assert compare_pptx_files(result, build("gold.pptx"), examine_run_count=False) == 0.0


def test_reencoded_picture_matches_and_other_picture_does_not(build):
    gold = build("gold.pptx")
    assert compare_pptx_files(build("jpeg.pptx", picture="jpeg"), gold) == 1.0
    assert compare_pptx_files(build("other.pptx", picture="other"), gold) == 0.0


def test_shape_count_and_kind_always_compared(build, pictures):
    gold = build("gold.pptx")
    extra = build("extra.pptx", lambda prs: prs.slides[1].shapes.add_textbox(0, 0, Inches(1), Inches(1)))
    assert compare_pptx_files(extra, gold, examine_shape=False, examine_text=False) == 0.0

    def swap(prs):  # the picture becomes a text box at the same place
        pic = shape(prs, 2, "Photo")
        box = prs.slides[1].shapes.add_textbox(pic.left, pic.top, pic.width, pic.height)
        pic.element.addprevious(box.element)
        pic.element.getparent().remove(pic.element)
    assert compare_pptx_files(build("swapped.pptx", swap), gold, examine_shape=False) == 0.0


def test_table_size_always_compared(build):
    def wider(prs):
        frame = shape(prs, 2, "Table")
        tbl = frame.element.find(".//" + qn("a:tbl"))
        for row in tbl.findall(qn("a:tr")):
            row.append(copy.deepcopy(row.find(qn("a:tc"))))
    assert compare_pptx_files(build("result.pptx", wider), build("gold.pptx"), examine_text=False) == 0.0


def group_of(text):
    def edit(prs):
        group = prs.slides[0].shapes.add_group_shape()
        group.name = "Group"
        for i, t in enumerate((text, "fixed")):
            box = group.shapes.add_textbox(Inches(1 + 3 * i), Inches(5), Inches(2), Inches(1))
            box.text_frame.text = t
    return edit


def test_text_inside_groups_is_compared(build):
    gold = build("gold.pptx", group_of("inside"))
    assert compare_pptx_files(build("same.pptx", group_of("inside")), gold) == 1.0
    assert compare_pptx_files(build("other.pptx", group_of("changed")), gold) == 0.0


def test_scheme_colours_are_resolved_through_the_theme(build):
    def gold_accent(prs):  # the default theme's accent 1, written out
        body_run(prs).font.color.rgb = RGBColor(0x4F, 0x81, 0xBD)
    gold = build("gold.pptx", gold_accent)
    accent1 = build("accent1.pptx", set_attr(lambda prs: body_run(prs).font.color, "theme_color",
                                             MSO_THEME_COLOR.ACCENT_1))
    accent2 = build("accent2.pptx", set_attr(lambda prs: body_run(prs).font.color, "theme_color",
                                             MSO_THEME_COLOR.ACCENT_2))
    assert compare_pptx_files(accent1, gold) == 1.0
    assert compare_pptx_files(accent2, gold) == 0.0


def test_run_without_own_colour_is_not_compared(build):
    def no_colour(prs):
        rpr = shape(prs, 2, "Body").element.find(f".//{qn('a:rPr')}")
        rpr.remove(rpr.find(qn("a:solidFill")))
    assert compare_pptx_files(build("result.pptx", no_colour), build("gold.pptx")) == 1.0


def test_tolerance_is_relative(build):
    gold = build("gold.pptx")
    assert compare_pptx_files(build("tiny.pptx", move_body(Inches(1) * 3 // 1000)), gold) == 1.0
    small = build("small.pptx", move_body(Inches(1) * 2 // 100))
    assert compare_pptx_files(small, gold) == 0.0
    assert compare_pptx_files(small, gold, approximately_tolerance=0.05) == 1.0


# --------------------------------------------------------------------------- compare_pptx_files: geometry options
def resize(name, **box):
    def edit(prs):
        sh = pin(shape(prs, 2, name))
        for key, value in box.items():
            setattr(sh, key, value)
    return edit


def test_pictures_and_empty_shapes_are_not_placed_by_examine_shape(build):
    moved = build("moved.pptx", resize("Photo", left=Inches(5)))
    assert compare_pptx_files(moved, build("gold.pptx")) == 1.0
    assert compare_pptx_files(moved, build("gold.pptx"), examine_shape_for_shift_size=True) == 0.0


def test_lenient_height_ignores_only_the_height(build):
    gold, off = build("gold.pptx"), {"examine_shape": False, "examine_shape_lenient_height": True}
    taller = build("taller.pptx", resize("Body", height=Inches(3)))
    wider = build("wider.pptx", resize("Body", width=Inches(3)))
    assert compare_pptx_files(taller, gold) == 0.0
    assert compare_pptx_files(taller, gold, **off) == 1.0
    assert compare_pptx_files(wider, gold, **off) == 0.0
    assert compare_pptx_files(wider, gold, examine_shape=False) == 1.0


def test_image_size_compares_picture_size_not_place(build):
    gold, opts = build("gold.pptx"), {"examine_shape": False, "examine_image_size": True}
    assert compare_pptx_files(build("resized.pptx", resize("Photo", width=Inches(1))), gold, **opts) == 0.0
    assert compare_pptx_files(build("resized2.pptx", resize("Photo", width=Inches(1))), gold,
                              examine_shape=False) == 1.0
    assert compare_pptx_files(build("moved.pptx", resize("Photo", left=Inches(5))), gold, **opts) == 1.0
    assert compare_pptx_files(build("body.pptx", move_body(Inches(1))), gold, **opts) == 0.0


def test_modify_height_compares_picture_height_only(build):
    gold = build("gold.pptx", resize("Photo", height=Inches(3)))
    opts = {"examine_shape": False, "examine_modify_height": True}
    assert compare_pptx_files(build("old.pptx"), gold, **opts) == 0.0
    assert compare_pptx_files(build("old2.pptx"), gold, examine_shape=False) == 1.0
    done = build("done.pptx", resize("Photo", height=Inches(3), width=Inches(4), left=Inches(4)))
    assert compare_pptx_files(done, gold, **opts) == 1.0
    both = build("both.pptx", lambda prs: (resize("Photo", height=Inches(3))(prs), move_body(Inches(1))(prs)))
    assert compare_pptx_files(both, gold, **opts) == 0.0


def move_title(top):
    def edit(prs):
        pin(prs.slides[1].shapes.title).top = top
    return edit


def test_title_bottom_position(build):
    original = build("original.pptx")
    opts = {"examine_shape": False, "examine_title_bottom_position": True}
    title_height = Presentation(original).slides[1].shapes.title.height
    at_bottom = build("bottom.pptx", move_title(H - title_height - Inches(0.2)))
    assert compare_pptx_files(at_bottom, original, **opts) == 1.0
    assert compare_pptx_files(build("same.pptx"), original, **opts) == 0.0  # nothing moved
    assert compare_pptx_files(build("lower.pptx", move_title(Inches(1.5))), original, **opts) == 0.0
    also_body = build("also.pptx", lambda prs: (move_title(H - title_height)(prs), move_body(Inches(1))(prs)))
    assert compare_pptx_files(also_body, original, **opts) == 0.0


def test_table_bottom_position(build):
    original = build("original.pptx")
    opts = {"examine_shape": False, "examine_table_bottom_position": True}
    assert compare_pptx_files(build("bottom.pptx", resize("Table", top=H - Inches(1))), original, **opts) == 1.0
    assert compare_pptx_files(build("same.pptx"), original, **opts) == 0.0
    assert compare_pptx_files(build("up.pptx", resize("Table", top=Inches(4))), original, **opts) == 0.0


def test_right_and_top_position_of_a_picture(build):
    original = build("original.pptx")
    right = {"examine_shape": False, "examine_right_position": True}
    top = {"examine_shape": False, "examine_top_position": True}
    assert compare_pptx_files(build("right.pptx", resize("Photo", left=W - Inches(2))), original, **right) == 1.0
    assert compare_pptx_files(build("left.pptx", resize("Photo", left=Inches(3))), original, **right) == 0.0
    assert compare_pptx_files(build("same.pptx"), original, **right) == 0.0
    assert compare_pptx_files(build("top.pptx", resize("Photo", top=0)), original, **top) == 1.0
    assert compare_pptx_files(build("down.pptx", resize("Photo", top=Inches(5))), original, **top) == 0.0


# --------------------------------------------------------------------------- single-deck checks
def blank_deck(path, width=W, height=H, picture=None, box=None):
    prs = Presentation()
    prs.slide_width, prs.slide_height = width, height
    slide = prs.slides.add_slide(prs.slide_layouts[6])
    if picture is not None:
        slide.shapes.add_picture(str(picture), *box)
    prs.save(path)
    return path


def test_slide_orientation_portrait(tmp_path):
    assert check_slide_orientation_Portrait(blank_deck(tmp_path / "p.pptx", width=H, height=W)) == 1.0
    assert check_slide_orientation_Portrait(blank_deck(tmp_path / "l.pptx")) == 0.0
    assert check_slide_orientation_Portrait(tmp_path / "absent.pptx") == 0.0


def test_image_stretch_and_center(tmp_path, pictures):
    small = (Inches(1), Inches(1), Inches(2), Inches(1.5))
    original = blank_deck(tmp_path / "original.pptx", picture=pictures["own"], box=small)
    filled = blank_deck(tmp_path / "filled.pptx", picture=pictures["own"], box=(0, 0, W, H))
    near = blank_deck(tmp_path / "near.pptx", picture=pictures["own"],
                      box=(Inches(0.2), Inches(0.1), W - Inches(0.4), H - Inches(0.3)))
    other = blank_deck(tmp_path / "other.pptx", picture=pictures["other"], box=(0, 0, W, H))
    assert check_image_stretch_and_center(filled, original) == 1.0
    assert check_image_stretch_and_center(near, original) == 1.0
    assert check_image_stretch_and_center(original, original) == 0.0
    assert check_image_stretch_and_center(other, original) == 0.0
    assert check_image_stretch_and_center(None, original) == 0.0
    with pytest.raises(MetricError, match="no picture"):
        check_image_stretch_and_center(filled, blank_deck(tmp_path / "empty.pptx"))
    with pytest.raises(MetricError, match="not a file"):
        check_image_stretch_and_center(filled, None)


def add_transition(effect: str, wrapped: bool = False):
    def edit(prs):
        sld = prs.slides[0].element
        transition = etree.Element(qn("p:transition"))
        etree.SubElement(transition, qn(f"p:{effect}"))
        if wrapped:  # as PowerPoint and LibreOffice write newer transitions
            mc = "http://schemas.openxmlformats.org/markup-compatibility/2006"
            alt = etree.SubElement(sld, f"{{{mc}}}AlternateContent")
            etree.SubElement(alt, f"{{{mc}}}Fallback").append(transition)
        else:
            sld.find(qn("p:clrMapOvr")).addnext(transition)
    return edit


def test_transition(build):
    rule = {"slide_idx": 0, "transition_type": "dissolve"}
    dissolve = build("dissolve.pptx", add_transition("dissolve"))
    assert check_transition(dissolve, rule) == 1.0
    assert check_transition(build("wrapped.pptx", add_transition("dissolve", wrapped=True)), rule) == 1.0
    assert check_transition(build("fade.pptx", add_transition("fade")), rule) == 0.0
    assert check_transition(build("none.pptx"), rule) == 0.0
    assert check_transition(dissolve, {"slide_idx": 1, "transition_type": "dissolve"}) == 0.0
    assert check_transition(dissolve, {"slide_idx": 7, "transition_type": "dissolve"}) == 0.0
    assert check_transition(None, rule) == 0.0
    with pytest.raises(MetricError, match="slide_idx"):
        check_transition(dissolve, {"slide_idx": "first", "transition_type": "dissolve"})
    with pytest.raises(MetricError, match="transition_type"):
        check_transition(dissolve, {"slide_idx": 0})


def number_colour(rgb):
    def edit(prs):
        master = prs.slide_masters[0].element
        for sp in master.iter(qn("p:sp")):
            ph = sp.find(f"{qn('p:nvSpPr')}/{qn('p:nvPr')}/{qn('p:ph')}")
            if ph is not None and ph.get("type") == "sldNum":
                rpr = sp.find(f".//{qn('a:fld')}/{qn('a:rPr')}")
                etree.SubElement(etree.SubElement(rpr, qn("a:solidFill")), qn("a:srgbClr"), val=rgb)
    return edit


def test_page_number_colors(build):
    red = build("red.pptx", number_colour("E01010"))
    assert check_page_number_colors(red, {"color": "red"}) == 1.0
    assert check_page_number_colors(red, {"color": "blue"}) == 0.0
    assert check_page_number_colors(build("blue.pptx", number_colour("1020D0")), {"color": "red"}) == 0.0
    # the default template's number is tx1 tinted 75%: dark grey, neither red nor black
    assert check_page_number_colors(build("plain.pptx"), {"color": "red"}) == 0.0
    assert check_page_number_colors(build("plain2.pptx"), {"color": "black"}) == 0.0
    assert check_page_number_colors(None, {"color": "red"}) == 0.0
    with pytest.raises(MetricError, match="color must be one of"):
        check_page_number_colors(red, {"color": "crimson"})


def test_fill_to_rgb_distance(build):
    rule = {"rgb": [0, 0, 255], "original_rgb": [255, 255, 255]}

    def master_blue(prs):
        prs.slide_masters[0].background.fill.solid()
        prs.slide_masters[0].background.fill.fore_color.rgb = RGBColor(0, 0, 0xFF)

    def drop_own(prs):  # slide 1 gives up its own white background
        c_sld = prs.slides[0].element.find(qn("p:cSld"))
        c_sld.remove(c_sld.find(qn("p:bg")))
    all_blue = build("blue.pptx", lambda prs: (drop_own(prs), master_blue(prs)))  # both inherit the master's
    assert evaluate_presentation_fill_to_rgb_distance(all_blue, rule) == pytest.approx(1.0)
    # slide 1 is still the original white (1), slide 2 inherits the theme's white (1): nothing done
    assert evaluate_presentation_fill_to_rgb_distance(build("plain.pptx"), rule) == pytest.approx(0.0)
    half = build("half.pptx", background((0, 0, 0xFF)))
    assert evaluate_presentation_fill_to_rgb_distance(half, rule) == pytest.approx(0.5)
    navy = build("navy.pptx", lambda prs: (master_blue(prs), background((0, 0, 0x80))(prs)))
    assert 0.5 < evaluate_presentation_fill_to_rgb_distance(navy, rule) < 1.0
    assert evaluate_presentation_fill_to_rgb_distance(None, rule) == 0.0
    with pytest.raises(MetricError, match="'rgb'"):
        evaluate_presentation_fill_to_rgb_distance(all_blue, {"rgb": "blue"})
    with pytest.raises(MetricError, match="rule object"):
        evaluate_presentation_fill_to_rgb_distance(all_blue, [0, 0, 255])


# --------------------------------------------------------------------------- LibreOffice profile and panes
def xcu(path, *props, nested=None):
    """A registrymodifications.xcu holding ``(group path, property, value)`` settings."""
    items = "".join(f'<item oor:path="{group}"><prop oor:name="{name}" oor:op="fuse"><value>{value}</value>'
                    f'</prop></item>' for group, name, value in props)
    path.write_text('<?xml version="1.0" encoding="UTF-8"?>\n<oor:items xmlns:oor="http://openoffice.org/2001/'
                    'registry" xmlns:xs="http://www.w3.org/2001/XMLSchema" xmlns:xsi="http://www.w3.org/2001/'
                    f'XMLSchema-instance">{items}{nested or ""}</oor:items>', encoding="utf-8")
    return path


START = "/org.openoffice.Office.Impress/Misc/Start"
SAVE = "/org.openoffice.Office.Common/Save/Document"


def test_presenter_console_disable(tmp_path):
    off = xcu(tmp_path / "off.xcu", (START, "EnablePresenterScreen", "false"))
    assert check_presenter_console_disable(off) == 1.0
    assert check_presenter_console_disable(GuestText(off.read_text())) == 1.0  # the profile printed by the guest
    nested = xcu(tmp_path / "nested.xcu", nested='<item oor:path="/org.openoffice.Office.Impress/Misc">'
                 '<node oor:name="Start" oor:op="fuse"><prop oor:name="EnablePresenterScreen" oor:op="fuse">'
                 '<value>false</value></prop></node></item>')
    assert check_presenter_console_disable(nested) == 1.0
    assert check_presenter_console_disable(xcu(tmp_path / "on.xcu", (START, "EnablePresenterScreen", "true"))) == 0.0
    assert check_presenter_console_disable(xcu(tmp_path / "unset.xcu", (SAVE, "AutoSave", "true"))) == 0.0
    not_xcu = tmp_path / "other.xml"
    not_xcu.write_text("<settings><EnablePresenterScreen>false</EnablePresenterScreen></settings>")
    assert check_presenter_console_disable(not_xcu) == 0.0
    broken = tmp_path / "broken.xcu"
    broken.write_text("<oor:items")
    assert check_presenter_console_disable(broken) == 0.0
    assert check_presenter_console_disable(tmp_path / "absent.xcu") == 0.0
    assert check_presenter_console_disable(None) == 0.0


def test_auto_saving_time(tmp_path):
    three = xcu(tmp_path / "three.xcu", (SAVE, "AutoSaveTimeIntervall", "3"))
    assert check_auto_saving_time(three, {"minutes": 3}) == 1.0
    assert check_auto_saving_time(three, 3) == 1.0
    assert check_auto_saving_time(three, {"minutes": 5}) == 0.0
    switched_off = xcu(tmp_path / "off.xcu", (SAVE, "AutoSaveTimeIntervall", "3"), (SAVE, "AutoSave", "false"))
    assert check_auto_saving_time(switched_off, {"minutes": 3}) == 0.0
    recovery = xcu(tmp_path / "recovery.xcu", ("/org.openoffice.Office.Recovery/AutoSave", "TimeIntervall", "3"))
    assert check_auto_saving_time(recovery, {"minutes": 3}) == 1.0
    unset = xcu(tmp_path / "unset.xcu", (START, "EnablePresenterScreen", "true"))
    assert check_auto_saving_time(unset, {"minutes": 3}) == 0.0
    assert check_auto_saving_time(unset, {"minutes": 10}) == 1.0  # LibreOffice's default
    assert check_auto_saving_time(None, {"minutes": 3}) == 0.0
    for bad in ({"minutes": "3"}, {"minutes": 0}, {"minutes": True}, {"mins": 3}):
        with pytest.raises(MetricError, match="minutes"):
            check_auto_saving_time(three, bad)


ST = "https://accessibility.ubuntu.example.org/ns/state"


def tree(pane: str = "", showing: bool = True) -> str:
    state = f' st:showing="true" st:visible="true"' if showing else ' st:visible="true"'
    inner = f'<document-frame name="{pane}"{state}/>' if pane else ""
    return (f'<desktop-frame xmlns:st="{ST}" name="main"><application name="soffice">'
            f'<frame name="Untitled 1 - LibreOffice Impress" st:showing="true"><panel st:showing="true">{inner}'
            '<document-frame name="Presentation" st:showing="true"/></panel></frame></application></desktop-frame>')


def test_left_panel(tmp_path):
    assert check_left_panel(tree("Slides View")) == 1.0
    assert check_left_panel(GuestText(tree("Slides View"))) == 1.0
    assert check_left_panel(tree()) == 0.0
    assert check_left_panel(tree("Slides View", showing=False)) == 0.0
    assert check_left_panel('<desktop-frame><document-frame name="Slides View"/></desktop-frame>') == 1.0
    assert check_left_panel("<desktop-frame") == 0.0
    assert check_left_panel(None) == 0.0
    pane = "/org.openoffice.Office.Impress/MultiPaneGUI/SlideSorterBar/Visible"
    assert check_left_panel(xcu(tmp_path / "closed.xcu", (pane, "ImpressView", "false"))) == 0.0
    assert check_left_panel(xcu(tmp_path / "open.xcu", (pane, "ImpressView", "true"))) == 1.0


# --------------------------------------------------------------------------- an image
def text_image(path, x: int | None, mode="RGB"):
    background = (255, 255, 255, 0) if mode == "RGBA" else (255, 255, 255)
    im = Image.new(mode, (400, 200), background)
    if x is not None:
        ImageDraw.Draw(im).text((x, 80), "Hello world", fill=(0, 0, 0, 255) if mode == "RGBA" else (0, 0, 0))
    im.save(path)
    return path


def test_textbox_on_leftside(tmp_path):
    assert check_textbox_on_leftside(text_image(tmp_path / "left.png", 4)) == 1.0
    assert check_textbox_on_leftside(text_image(tmp_path / "clear.png", 4, mode="RGBA")) == 1.0
    assert check_textbox_on_leftside(text_image(tmp_path / "middle.png", 150)) == 0.0
    assert check_textbox_on_leftside(text_image(tmp_path / "blank.png", None)) == 0.0
    assert check_textbox_on_leftside(tmp_path / "absent.png") == 0.0
    assert check_textbox_on_leftside(GuestText("left.png")) == 0.0
