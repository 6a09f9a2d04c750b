"""Accessibility tree for models: element table, whole-line trimming, set-of-marks boxes on a real screenshot.

The data are a real screenshot and accessibility tree taken from the base image's guest
(a terminal open on the Xfce desktop; tests/agents/data/).
"""
import io
from pathlib import Path

import numpy as np
from PIL import Image

from desktop_env.agents.a11y import (CHARS_PER_TOKEN, HEADER, a11y_text, draw_marks, estimate_tokens,
                                     parse_elements, trim_lines)
from desktop_env.agents.parsing import ScreenMapping

DATA = Path(__file__).parent / "data"
XML = (DATA / "desktop_a11y.xml").read_text()
SCREEN = (1920, 1080)


def test_elements_are_the_visible_ones_with_geometry():
    elements = parse_elements(XML, SCREEN)
    names = [(e.tag, e.name) for e in elements]
    assert ("toggle-button", "Applications") in names and ("terminal", "Terminal") in names
    # the hidden "Xfce Terminal" button (no showing/visible state) and the off-screen window are left out
    assert ("toggle-button", "Xfce Terminal") not in names
    assert all(e.w > 0 and e.h > 0 and e.x < SCREEN[0] and e.y < SCREEN[1] for e in elements)
    terminal = next(e for e in elements if e.tag == "terminal")
    assert "user@desktop" in terminal.text
    assert parse_elements("", SCREEN) == [] and parse_elements("<not xml", SCREEN) == []


def test_trim_keeps_whole_lines_within_the_budget():
    lines = [f"line {i} " + "x" * 30 for i in range(100)]
    out = trim_lines(lines, 50, HEADER)
    kept = out.splitlines()
    assert kept[0] == HEADER and kept[1:-1] == lines[:len(kept) - 2] and len(kept) > 3
    assert kept[-1] == f"[... {100 - (len(kept) - 2)} more elements trimmed to fit 50 tokens]"
    assert estimate_tokens("\n".join(kept[:-1] + [lines[len(kept) - 2]])) > 50  # one more line would not fit
    assert estimate_tokens("\n".join(kept[:-1])) <= 50
    assert estimate_tokens("abcd" * 10) == 40 // CHARS_PER_TOKEN
    assert trim_lines(lines[:2], 1000) == "\n".join(lines[:2])


def test_a11y_text_positions_in_model_space():
    full = a11y_text(XML, SCREEN, 100000)
    scaled = a11y_text(XML, SCREEN, 100000, ScreenMapping((1280, 720), SCREEN))
    assert "toggle-button\tApplications\t\t(0, 0)\t(102, 26)" in full.splitlines()
    assert "toggle-button\tApplications\t\t(0, 0)\t(68, 17)" in scaled.splitlines()


def test_som_boxes_drawn_on_the_real_screenshot():
    shot = Image.open(DATA / "desktop.png")
    mapping = ScreenMapping((1280, 720), SCREEN)
    marks = draw_marks(shot, XML, mapping, 10000)
    image = Image.open(io.BytesIO(marks.png)).convert("RGB")
    assert image.size == (1280, 720)
    pixels = np.asarray(image)
    original = np.asarray(shot.convert("RGB").resize((1280, 720)))
    red = (pixels == [255, 0, 0]).all(axis=2)
    assert red.sum() > 2000 and (original == [255, 0, 0]).all(axis=2).sum() < red.sum() / 10
    table = marks.table.splitlines()
    assert table[0] == "index\ttag\tname\ttext"
    numbered = {int(line.split("\t")[0]): line.split("\t")[2] for line in table[1:]}
    assert set(numbered) == set(marks.centres)
    n = next(k for k, name in numbered.items() if name == "Applications")
    cx, cy = marks.centres[n]
    # the box of element n is drawn around its centre: red pixels on the box's left edge row
    assert red[cy, :cx].any() and 0 <= cx < 1280 and 0 <= cy < 720
    # the label of each element is a red filled square at the box's top-left
    terminal = next(k for k, name in numbered.items() if name == "Terminal")
    tx, ty = marks.centres[terminal]
    assert red[ty - 5:ty + 5, :tx].any()
