"""GIMP task pairs (``examples/gimp``) on the ``office`` image, solved in GIMP's own window with GUI
steps.

Each pair opens a picture (a PNG this module draws) in GIMP; the evaluators read the PNG GIMP wrote
back with Pillow. GIMP 2.10 is a GTK 2 program: the accessibility tree shows its windows, dialogs and
menu bar, but not the items of an open menu (GTK 2 reports them neither showing nor placed), so the
solutions reach GIMP's commands through its own command search (the ``/`` key, Help > Search and
Run a Command): type the command's name, click its row, press Enter. Regenerate with
``python3 -m evaluation_examples.generators gimp`` from the repository root (see the package
docstring).
"""
from __future__ import annotations

import re
from pathlib import Path

from .common import open_in_app, write_pairs

PICTURES = "/home/user/Pictures"
PHOTO = "photo.png"
SIZE = (640, 400)
HALF = (SIZE[0] // 2, SIZE[1] // 2)
#: GIMP's title for a PNG it opened, before and after "Overwrite photo.png" wrote it back.
IMPORTED, OVERWRITTEN = "(imported)", "(overwritten)"
SEARCH = {"role": "frame", "name": "Search Actions"}
SCALE = {"role": "dialog", "name": "Scale Image"}


def _photo():
    """The picture: sky, a sun on the left, a mountain on the right, grass; no symmetry, so a mirrored
    or inverted copy is told apart from it."""
    from PIL import Image, ImageDraw

    im = Image.new("RGB", SIZE, (90, 150, 220))
    draw = ImageDraw.Draw(im)
    draw.rectangle([0, 280, SIZE[0], SIZE[1]], fill=(60, 140, 70))
    draw.ellipse([60, 50, 160, 150], fill=(250, 210, 60))
    draw.polygon([(380, 280), (470, 150), (560, 280)], fill=(120, 110, 100))
    draw.rectangle([420, 300, 470, 360], fill=(150, 75, 40))
    return im


def _save_png(im, path: Path) -> None:
    """Save ``im`` as PNG unless ``path`` already holds the same pixels (Pillow's bytes may differ
    between zlib versions; the picture is what matters)."""
    from PIL import Image, ImageChops

    if path.is_file():
        with Image.open(path) as old:
            if old.size == im.size and old.mode == im.mode and ImageChops.difference(old, im).getbbox() is None:
                return
    im.save(path, optimize=False)


def write_pictures(folder: Path) -> None:
    """``photo.png`` as the task starts (also the original the mirror and scale checks compare with)
    and ``photo_inverted_gold.png`` (its colours inverted)."""
    from PIL import ImageOps

    _save_png(_photo(), folder / PHOTO)
    _save_png(ImageOps.invert(_photo()), folder / "photo_inverted_gold.png")


def result() -> dict:
    """The evaluator's result side: the picture GIMP wrote back to ~/Pictures."""
    return {"type": "vm_file", "path": f"{PICTURES}/{PHOTO}", "dest": PHOTO}


def expected(name: str = PHOTO) -> dict:
    """The evaluator's expected side: a picture beside the task."""
    return {"type": "local_file", "path": f"{{folder}}/{name}"}


def open_in_gimp() -> list[dict]:
    """Setup: photo.png fresh in ~/Pictures, opened in GIMP, maximized, and GIMP idle."""
    path = f"{PICTURES}/{PHOTO}"
    return open_in_app(f"mkdir -p {PICTURES} && rm -f {path}", {path: f"{{folder}}/{PHOTO}"}, ["gimp", path], IMPORTED,
                       minutes=10,  # GIMP's first start reads every plug-in: 2-5 min under load
                       quiet_process="^gimp")  # /usr/bin/gimp links to gimp-2.10; a process takes the name it was started by


def command(query: str, row: str) -> list[dict]:
    """Run a GIMP command through its command search: ``/`` opens it, ``query`` is typed into it, the
    row whose text holds ``row`` is clicked (several commands can share a name: Flip Horizontally
    flips the view, the image or the layer; the row's second line says which) and Enter runs it."""
    return [
        {"gui": "key", "keys": "/", "note": "Help > Search and Run a Command"},
        {"gui": "type", "text": query, "target": {"role": "text", "within": SEARCH}},
        {"gui": "click", "target": {"role": "table-cell", "name_contains": row}},
        {"gui": "key", "keys": "enter"},
    ]


def overwrite() -> list[dict]:
    """Solution tail: File > Overwrite photo.png (through the command search), then wait until GIMP's
    title says it wrote the file and the file holds GIMP's metadata (the start file has none)."""
    return [
        *command("overwrite", f"Overwrite {PHOTO}"),
        {"gui": "wait", "for": {"window": re.escape(OVERWRITTEN)}},
        {"gui": "wait", "for": {"file": f"{PICTURES}/{PHOTO}", "contains": "GIMP"}},
    ]


COMMON = {"id_seed": "office_suite", "app": "gimp", "snapshot": "office", "interface": "gui",
          "related_apps": ["gimp"], "category": "images", "files": {}, "gen": write_pictures,
          "config": open_in_gimp()}
OPEN_STEP = "In the GIMP window showing photo.png"
SAVE_STEP = "Choose File > Overwrite photo.png, which writes the picture back to the PNG file."
#: The image is edited once GIMP's title marks it changed (a leading ``*``).
CHANGED = {"gui": "wait", "for": {"window": r"^\*\[photo\]"}}


def pairs() -> list[dict]:
    """The task pairs of this module (``common`` describes their keys)."""
    return [
        {
            **COMMON,
            "name": "gimp_flip_horizontally",
            "action_number": 9,
            "source": ["https://docs.gimp.org/2.10/en/gimp-image-flip-horizontally.html"],
            "abstract": f"The picture {PICTURES}/{PHOTO}, open in GIMP, was scanned the wrong way round. "
                        "Mirror the whole picture left to right and write it back to the same PNG file.",
            "verbose": "Flip a picture horizontally in GIMP:\n"
                       f"1. {OPEN_STEP}, choose Image > Transform > Flip Horizontally.\n"
                       f"2. {SAVE_STEP}",
            "evaluator": {"func": "check_image_mirror", "result": result(), "expected": expected()},
            "solution": [
                {"gui": "wait", "for": {"window": re.escape(IMPORTED)}},
                *command("flip horizontally", "Flip image horizontally"),
                CHANGED,
                *overwrite(),
            ],
        },
        {
            **COMMON,
            "name": "gimp_scale_to_half",
            "action_number": 12,
            "source": ["https://docs.gimp.org/2.10/en/gimp-image-scale.html"],
            "abstract": f"The picture {PICTURES}/{PHOTO}, open in GIMP, is {SIZE[0]}x{SIZE[1]} pixels. Scale the "
                        f"whole picture down to {HALF[0]} pixels wide, keeping its proportions, and write it back "
                        "to the same PNG file.",
            "verbose": "Scale a picture in GIMP:\n"
                       f"1. {OPEN_STEP}, choose Image > Scale Image.\n"
                       f"2. In the Scale Image dialog, type {HALF[0]} into Width and press Tab: with the chain "
                       f"linked, Height becomes {HALF[1]}.\n"
                       "3. Click Scale.\n"
                       f"4. {SAVE_STEP}",
            "evaluator": {"func": ["check_image_size", "check_structure_sim_resized"], "conj": "and",
                          "result": [result(), result()],
                          "expected": [{"type": "rule", "rules": {"width": HALF[0], "height": HALF[1]}},
                                       expected()]},
            "solution": [
                {"gui": "wait", "for": {"window": re.escape(IMPORTED)}},
                *command("scale image", "Change the size of the image content"),
                {"gui": "wait", "for": SCALE},
                {"gui": "key", "keys": "alt+w", "note": "Width's access key: focuses the field, its text selected"},
                {"gui": "type", "text": f"{HALF[0]}\t"},
                {"gui": "wait", "for": {"role": "spin-button", "text_contains": str(HALF[1]), "within": SCALE}},
                {"gui": "click", "target": {"role": "push-button", "name": "Scale", "within": SCALE}},
                {"gui": "wait", "for": {"window": f"{HALF[0]}x{HALF[1]}"}},
                *overwrite(),
            ],
        },
        {
            **COMMON,
            "name": "gimp_invert_colours",
            "action_number": 9,
            "source": ["https://docs.gimp.org/2.10/en/gimp-filter-invert.html"],
            "abstract": f"Turn the picture {PICTURES}/{PHOTO}, open in GIMP, into its negative (every colour "
                        "inverted) and write it back to the same PNG file.",
            "verbose": "Invert the colours of a picture in GIMP:\n"
                       f"1. {OPEN_STEP}, choose Colors > Invert.\n"
                       f"2. {SAVE_STEP}",
            "evaluator": {"func": "compare_images", "result": result(), "expected": expected("photo_inverted_gold.png")},
            "solution": [
                {"gui": "wait", "for": {"window": re.escape(IMPORTED)}},
                *command("invert", "perceptually"),
                CHANGED,
                *overwrite(),
            ],
        },
    ]


def main() -> None:
    """Write this module's tasks and index them."""
    write_pairs(pairs())
