"""Actions drawn on screenshots: the pixels at the click point, along the drag and in the text box change."""
from PIL import Image

from desktop_env.report.annotate import CLICK_COLOUR, DRAG_COLOUR, TEXT_BG, annotate


def _base():
    return Image.new("RGB", (1920, 1080), (0, 0, 0))


def test_click_ring_is_drawn_around_the_point():
    img = annotate(_base(), [{"type": "CLICK", "x": 500, "y": 400}])
    assert img.getpixel((500 + 18, 400)) == CLICK_COLOUR or img.getpixel((500 + 17, 400)) == CLICK_COLOUR
    assert img.getpixel((1500, 900)) == (0, 0, 0)


def test_drag_path_is_drawn_between_its_ends():
    img = annotate(_base(), [{"type": "DRAG_TO", "x": 1100, "y": 500, "path": [[100, 500], [1100, 500]]}])
    assert img.getpixel((600, 500)) == DRAG_COLOUR
    assert img.getpixel((600, 700)) == (0, 0, 0)


def test_typed_text_gets_a_box_near_the_pointer():
    img = annotate(_base(), [{"type": "CLICK", "x": 300, "y": 300}, {"type": "TYPING", "text": "hello"}])
    box = [img.getpixel((x, y)) for x in range(318, 600) for y in range(318, 380)]
    assert TEXT_BG in box


def test_keys_and_done_are_labelled_top_left_and_nothing_else_changes():
    img = annotate(_base(), [{"type": "HOTKEY", "keys": ["ctrl", "s"]}])
    assert TEXT_BG in [img.getpixel((x, 25)) for x in range(10, 120)]
    assert img.getpixel((960, 540)) == (0, 0, 0)
    plain = annotate(_base(), [{"type": "WAIT"}])
    assert plain.getpixel((960, 540)) == (0, 0, 0)


def test_the_source_image_is_not_modified():
    src = _base()
    annotate(src, [{"type": "CLICK", "x": 10, "y": 10}])
    assert src.getpixel((10 + 18, 10)) == (0, 0, 0)
