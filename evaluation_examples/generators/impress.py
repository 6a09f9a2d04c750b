"""LibreOffice Impress task pairs (``examples/impress``) on the ``office`` image, solved in Impress's
own window with GUI steps: keys, and menus and dialogs found in the accessibility tree.

Each pair opens a deck (a pptx this module writes) in Impress; the evaluators read the saved
pptx with python-pptx. Regenerate with ``python3 -m evaluation_examples.generators impress``
from the repository root (see the package docstring).
"""
from __future__ import annotations

import re
from pathlib import Path

from .calc import open_in_libreoffice, save_in_libreoffice
from .common import write_pairs
from .office_files import save_stable

DOCS = "/home/user/Documents"
DECK = "review.pptx"
DRAFT_TITLE = "Draft: figures pending"

#: The deck: (title, bullet lines) per slide; the first is the title slide (its subtitle as the one line).
SLIDES = [
    ("Quarterly Review", ["Operations, third quarter"]),
    ("Highlights", ["Order volume up 12%", "On-time delivery at 96%", "Two sites automated"]),
    (DRAFT_TITLE, ["Finance to confirm the margin figures", "Do not present"]),
    ("Risks", ["Supplier lead times", "Peak season staffing"]),
    ("Next Steps", ["Automate Porto and Lyon", "Review returns process"]),
]


def _deck(slides: list[tuple[str, list[str]]]):
    import pptx

    deck = pptx.Presentation()
    for n, (title, lines) in enumerate(slides):
        slide = deck.slides.add_slide(deck.slide_layouts[0 if n == 0 else 1])
        slide.shapes.title.text = title
        body = slide.placeholders[1].text_frame
        body.text = lines[0]
        for line in lines[1:]:
            body.add_paragraph().text = line
    return deck


def write_decks(folder: Path) -> None:
    """``review.pptx`` as the task starts and ``review_gold.pptx``: the deck without its draft slide."""
    save_stable(_deck(SLIDES), folder / DECK)
    save_stable(_deck([s for s in SLIDES if s[0] != DRAFT_TITLE]), folder / "review_gold.pptx")


def result() -> dict:
    """The evaluator's result side: the saved deck from ~/Documents."""
    return {"type": "vm_file", "path": f"{DOCS}/{DECK}", "dest": DECK}


def save(**condition: str) -> list[dict]:
    """Solution tail: save the deck and wait until it meets ``condition`` (``contains=`` or ``lacks=``
    text of its XML)."""
    return save_in_libreoffice(f"{DOCS}/{DECK}", **condition)


#: What compare_pptx_files checks of a deck LibreOffice saved against one python-pptx wrote: the
#: slides and their text, in order. LibreOffice writes its own geometry, fonts and bullets.
TEXT_ONLY = {"examine_shape": False, "examine_alignment": False, "examine_indent": False,
             "examine_bullets": False, "examine_run_count": False, "examine_font_name": False,
             "examine_font_size": False, "examine_font_bold": False, "examine_font_italic": False,
             "examine_color_rgb": False, "examine_font_underline": False, "examine_strike_through": False,
             "examine_background_color": False, "examine_note": False}
SLIDE_SETUP = {"role": "dialog", "name": "Slide Properties"}
COMMON = {"id_seed": "office_suite", "app": "impress", "snapshot": "office", "interface": "gui",
          "related_apps": ["impress"], "category": "presentations", "gen": write_decks,
          "config": open_in_libreoffice(DOCS, DECK, "impress")}
SAVE_STEP = "Save with Ctrl+S, keeping the PowerPoint format."


def pairs() -> list[dict]:
    """The task pairs of this module (``common`` describes their keys)."""
    return [
        {
            **COMMON,
            "name": "impress_delete_draft_slide",
            "action_number": 4,
            "source": ["https://help.libreoffice.org/latest/en-US/text/simpress/01/04130000.html"],
            "abstract": f"The deck open in LibreOffice Impress still holds a slide titled \"{DRAFT_TITLE}\" "
                        "that must not be presented. Delete that slide, keep the others as they are and in "
                        "their order, and save the deck in its PowerPoint format.",
            "verbose": "Delete a slide in Impress:\n"
                       "1. In the Impress window showing review.pptx, click into the slide (not into a text "
                       "box) and press Page Down twice to show slide 3, the draft slide.\n"
                       "2. Choose Slide > Delete Slide.\n"
                       f"3. {SAVE_STEP}",
            "evaluator": {"func": "compare_pptx_files", "result": result(),
                          "expected": {"type": "local_file", "path": "{folder}/review_gold.pptx"},
                          "options": TEXT_ONLY},
            "solution": [
                {"gui": "wait", "for": {"window": re.escape(DECK)}},
                {"gui": "key", "keys": ["pagedown", "pagedown"]},
                {"gui": "wait", "for": {"idle": True}},
                {"gui": "click", "target": {"role": "menu", "name": "Slide"}},
                {"gui": "click", "target": {"role": "menu-item", "name": "Delete Slide"}},
                *save(lacks=DRAFT_TITLE),
            ],
        },
        {
            **COMMON,
            "name": "impress_portrait_orientation",
            "action_number": 5,
            "source": ["https://help.libreoffice.org/latest/en-US/text/simpress/01/01180000.html"],
            "abstract": "The deck open in LibreOffice Impress will be shown on a portrait screen. Make its "
                        "slides portrait (taller than wide) and save the deck in its PowerPoint format.",
            "verbose": "Turn the slides to portrait in Impress:\n"
                       "1. In the Impress window showing review.pptx, choose Slide > Slide Properties.\n"
                       "2. On the Slide tab, under Orientation, choose Portrait, then click OK.\n"
                       f"3. {SAVE_STEP}",
            "evaluator": {"func": "check_slide_orientation_Portrait", "result": result()},
            "solution": [
                {"gui": "wait", "for": {"window": re.escape(DECK)}},
                {"gui": "click", "target": {"role": "menu", "name": "Slide"}},
                {"gui": "click", "target": {"role": "menu-item", "name_contains": "Slide Properties"}},
                {"gui": "click", "target": {"role": "radio-button", "name": "Portrait", "within": SLIDE_SETUP}},
                {"gui": "click", "target": {"role": "push-button", "name": "OK", "within": SLIDE_SETUP}},
                {"gui": "wait", "for": {"gone": SLIDE_SETUP}},
                # the slide size turned (the notes page's size, cy="9144000" alone, is portrait already)
                *save(contains='sldSz cx="6858000" cy="9144000"'),
            ],
        },
        {
            **COMMON,
            "name": "impress_fade_transition",
            # Impress (LibreOffice 7.4) closes in the office image when Fade is chosen after the
            # accessibility tree was read down to the panel's icon list, as the locator does
            # (probed 2026-11-29; a click without that read applies it): not proven, in no index file.
            "unproven": True,
            "action_number": 5,
            "source": ["https://help.libreoffice.org/latest/en-US/text/simpress/01/06040000.html"],
            "abstract": "In the deck open in LibreOffice Impress, the second slide (Highlights) should appear "
                        "with a Fade transition. Give that slide, and only that slide, the Fade transition, keep "
                        "everything else as it is, and save the deck in its PowerPoint format.",
            "verbose": "Give one slide a transition in Impress:\n"
                       "1. In the Impress window showing review.pptx, click into the slide (not into a text "
                       "box) and press Page Down once to show slide 2, Highlights.\n"
                       "2. Choose Slide > Slide Transition: the Slide Transition panel opens in the sidebar.\n"
                       "3. Click Fade in its list of transitions.\n"
                       f"4. {SAVE_STEP}",
            "evaluator": {"func": ["check_transition", "compare_pptx_files"], "conj": "and",
                          "result": [result(), result()],
                          "expected": [{"type": "rule", "rules": {"slide_idx": 1, "transition_type": "fade"}},
                                       {"type": "local_file", "path": f"{{folder}}/{DECK}"}],
                          "options": [{}, TEXT_ONLY]},
            "solution": [
                {"gui": "wait", "for": {"window": re.escape(DECK)}},
                {"gui": "wait", "for": {"idle": True}},
                {"gui": "key", "keys": "pagedown"},
                {"gui": "wait", "for": {"idle": True}},
                {"gui": "click", "target": {"role": "menu", "name": "Slide"}},
                {"gui": "click", "target": {"role": "menu-item", "name": "Slide Transition"}},
                {"gui": "click", "target": {"role": "list-item", "name": "Fade"}},
                *save(contains="<p:fade"),
            ],
        },
    ]


def main() -> None:
    """Write this module's tasks and index them."""
    write_pairs(pairs())
