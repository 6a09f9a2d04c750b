"""LibreOffice Writer task pairs (``examples/writer``) on the ``office`` image, solved in Writer's
own window with GUI steps: keys, and menus and dialogs found in the accessibility tree.

Each pair opens a report (a docx this module writes) in Writer; the evaluators read the saved
docx with python-docx. Regenerate with ``python3 -m evaluation_examples.generators writer``
from the repository root (see the package docstring).
"""
from __future__ import annotations

import random
import re
from pathlib import Path

from .calc import menu, open_in_libreoffice, save_in_libreoffice
from .common import write_pairs
from .office_files import save_stable

DOCS = "/home/user/Documents"
OLD, NEW = "Project Falcon", "Project Osprey"
_SITES = ["Leeds", "Porto", "Gdansk", "Tartu", "Lyon", "Ghent"]
_METRICS = ["order volume", "on-time delivery", "returns", "warehouse utilisation", "overtime hours"]


def report_paragraphs() -> list[tuple[str, str]]:
    """The report (seeded): (style, text) per paragraph; its title comes first and its closing
    note last, and it names the programme ``Project Falcon`` several times."""
    rng = random.Random(20261128)
    paras = [("Title", "Operations Report, Third Quarter"),
             ("Normal", f"This report summarises the quarter at our {len(_SITES)} sites and the progress of "
                        f"{OLD}, the warehouse automation programme.")]
    for site in _SITES:
        metric = rng.choice(_METRICS)
        change = rng.randint(3, 19)
        paras.append(("Heading 1", f"{site}"))
        paras.append(("Normal", f"{site} reported {metric} {rng.choice(['up', 'down'])} {change}% on the "
                                f"previous quarter. " + (f"{OLD} pilots started in August." if rng.random() < 0.5
                                                         else "No change to staffing is planned.")))
    paras.append(("Heading 1", "Outlook"))
    paras.append(("Normal", f"{OLD} moves to its second phase in the first quarter of next year."))
    paras.append(("Normal", "Draft figures: superseded by the finance team's numbers of 14 October."))
    return paras


def _write(folder: Path, name: str, paras: list[tuple[str, str]], strike_last: bool = False) -> None:
    import docx

    doc = docx.Document()
    for style, text in paras:
        doc.add_paragraph(text, style=style)
    if strike_last:
        for run in doc.paragraphs[-1].runs:
            run.font.strike = True
    save_stable(doc, folder / name)


def write_report(folder: Path) -> None:
    """``report.docx`` as the task starts, ``report_gold.docx`` (the same text with the programme's new
    name) and ``report_struck_gold.docx`` (its last paragraph struck through)."""
    _write(folder, "report.docx", report_paragraphs())
    _write(folder, "report_gold.docx", [(s, t.replace(OLD, NEW)) for s, t in report_paragraphs()])
    _write(folder, "report_struck_gold.docx", report_paragraphs(), strike_last=True)


def result() -> dict:
    """The evaluator's result side: the saved report from ~/Documents."""
    return {"type": "vm_file", "path": f"{DOCS}/report.docx", "dest": "report.docx"}


def expected(name: str = "report.docx") -> dict:
    """The evaluator's expected side: a document beside the task."""
    return {"type": "local_file", "path": f"{{folder}}/{name}"}


def same_text_and(func: str, **extra) -> dict:
    """An evaluator: ``func`` on the saved report and its text unchanged (compare_docx_files with the
    start document), both required."""
    return {"func": [func, "compare_docx_files"], "conj": "and",
            "result": [result(), result()], "expected": [extra.get("expected", {"type": "rule", "rules": {}}),
                                                         expected()]}


def save(contains: str) -> list[dict]:
    """Solution tail: save report.docx and wait until it holds ``contains``, text of its XML that no part
    of the start document has (the start's styles already say ``w:val="center"``)."""
    return save_in_libreoffice(f"{DOCS}/report.docx", contains=contains)


def mnemonics(*keys: tuple[str, dict | None]) -> list[dict]:
    """Through Writer's menus with their access keys: each key, then a wait until the item the next key
    opens is showing (``None`` after the last). Clicks are not used here: two submenus hold items of
    the same name (Header's and Footer's Default Page Style; Insert's and Field's Page Number), and a
    ``within`` test cannot tell them apart, since it compares boxes and a submenu lies beside its item,
    not inside it. The keys are the ones the accessibility tree gives each item (``act:click_kb``,
    e.g. Alt+I, A, R, D)."""
    steps = []
    for key, next_item in keys:
        steps.append({"gui": "key", "keys": key})
        if next_item:
            steps.append({"gui": "wait", "for": next_item})
    return steps


FIND_REPLACE = {"role": "dialog", "name": "Find and Replace"}
CHARACTER = {"role": "dialog", "name": "Character"}
SERIF = "Liberation Serif"  # in the image (fonts-liberation2)
COMMON = {"id_seed": "office_suite", "app": "writer", "snapshot": "office", "interface": "gui",
          "related_apps": ["writer"], "category": "documents", "files": {}, "gen": write_report,
          "config": open_in_libreoffice(DOCS, "report.docx", "writer")}
OPEN_STEP = "In the LibreOffice Writer window showing report.docx"
SAVE_STEP = "Save with Ctrl+S, keeping the Word format."


def pairs() -> list[dict]:
    """The task pairs of this module (``common`` describes their keys)."""
    return [
        {
            **COMMON,
            "name": "writer_center_title",
            "action_number": 3,
            "source": ["https://help.libreoffice.org/latest/en-US/text/swriter/04/01020000.html"],
            "abstract": "The report open in LibreOffice Writer has its title, the first line, aligned left. "
                        "Center that line, change nothing else, and save the document in its Word format.",
            "verbose": "Center the title of a Writer document:\n"
                       f"1. {OPEN_STEP}, press Ctrl+Home to put the cursor in the first line (the title).\n"
                       "2. Press Ctrl+E (Format > Align Text > Centered).\n"
                       f"3. {SAVE_STEP}",
            "evaluator": same_text_and("is_first_line_centered"),
            "solution": [
                {"gui": "wait", "for": {"window": re.escape("report.docx")}},
                {"gui": "key", "keys": "ctrl+home"},
                {"gui": "wait", "for": {"idle": True}},
                {"gui": "key", "keys": "ctrl+e"},
                *save("LibreOffice"),
            ],
        },
        {
            **COMMON,
            "name": "writer_strike_through_last_paragraph",
            "action_number": 4,
            "source": ["https://help.libreoffice.org/latest/en-US/text/shared/01/05110300.html"],
            "abstract": "The last paragraph of the report open in LibreOffice Writer is an outdated note. Strike "
                        "its text through (do not delete it), change nothing else, and save the document in "
                        "its Word format.",
            "verbose": "Strike through the last paragraph in Writer:\n"
                       f"1. {OPEN_STEP}, press Ctrl+End to go to the end of the last paragraph.\n"
                       "2. Press Ctrl+Shift+Up to select that paragraph back to its start.\n"
                       "3. Choose Format > Text > Strikethrough.\n"
                       f"4. {SAVE_STEP}",
            "evaluator": {"func": "evaluate_strike_through_last_paragraph", "result": result(),
                          "expected": expected("report_struck_gold.docx")},
            "solution": [
                {"gui": "wait", "for": {"window": re.escape("report.docx")}},
                {"gui": "key", "keys": "ctrl+end"},
                {"gui": "wait", "for": {"idle": True}},
                {"gui": "key", "keys": "ctrl+shift+up"},
                {"gui": "wait", "for": {"idle": True}},
                *menu("Format", "Text", "Strikethrough", role="check-menu-item"),
                *save("w:strike"),
            ],
        },
        {
            **COMMON,
            "name": "writer_replace_programme_name",
            "action_number": 6,
            "source": ["https://help.libreoffice.org/latest/en-US/text/shared/01/02100000.html"],
            "abstract": f"The warehouse automation programme has been renamed from \"{OLD}\" to \"{NEW}\". "
                        "Update every mention of it in the report open in LibreOffice Writer, change nothing "
                        "else, and save the document in its Word format.",
            "verbose": "Rename a term everywhere in Writer:\n"
                       f"1. {OPEN_STEP}, press Ctrl+H (Edit > Find and Replace).\n"
                       f"2. Type {OLD} in the Find field and {NEW} in the Replace field.\n"
                       "3. Click Replace All, then close the dialog.\n"
                       f"4. {SAVE_STEP}",
            "evaluator": {"func": "compare_docx_files", "result": result(), "expected": expected("report_gold.docx"),
                          "options": {"ignore_blanks": False}},
            "solution": [
                {"gui": "wait", "for": {"window": re.escape("report.docx")}},
                {"gui": "wait", "for": {"idle": True}},
                {"gui": "key", "keys": "ctrl+h"},
                {"gui": "wait", "for": FIND_REPLACE},
                {"gui": "type", "target": {"role": "text", "within": FIND_REPLACE, "index": 0}, "text": OLD,
                 "note": "the Find field"},
                {"gui": "type", "target": {"role": "text", "within": FIND_REPLACE, "index": 1}, "text": NEW,
                 "note": "the Replace field"},
                {"gui": "click", "target": {"role": "push-button", "name": "Replace All", "within": FIND_REPLACE}},
                {"gui": "wait", "for": {"idle": True}},
                {"gui": "click", "target": {"role": "push-button", "name": "Close", "within": FIND_REPLACE}},
                {"gui": "wait", "for": {"gone": FIND_REPLACE}},
                *save(NEW),
            ],
        },
        {
            **COMMON,
            "name": "writer_page_numbers_in_footer",
            "action_number": 6,
            "source": ["https://help.libreoffice.org/latest/en-US/text/swriter/guide/pagenumbers.html"],
            "abstract": "Add page numbers to the report open in LibreOffice Writer: every page should show its "
                        "number in the footer. Change nothing else in the text, and save the document in its "
                        "Word format.",
            "verbose": "Number the pages in the footer in Writer:\n"
                       f"1. {OPEN_STEP}, choose Insert > Header and Footer > Footer > Default Page Style: "
                       "a footer appears and the cursor is in it.\n"
                       "2. Choose Insert > Field > Page Number.\n"
                       f"3. {SAVE_STEP}",
            "evaluator": same_text_and("has_page_numbers_in_footers"),
            "solution": [
                {"gui": "wait", "for": {"window": re.escape("report.docx")}},
                {"gui": "wait", "for": {"idle": True}},
                *mnemonics(("alt+i", {"role": "menu", "name": "Header and Footer"}),
                           ("a", {"role": "menu", "name": "Footer"}),
                           ("r", {"role": "check-menu-item", "name": "Default Page Style"}),
                           ("d", None)),
                {"gui": "wait", "for": {"idle": True}},
                *mnemonics(("alt+i", {"role": "menu", "name": "Field"}),
                           ("d", {"role": "menu-item", "name": "Page Number", "index": 1}),
                           ("p", None)),
                *save("PAGE"),
            ],
        },
        {
            **COMMON,
            "name": "writer_page_break_before_outlook",
            "action_number": 9,
            "source": ["https://help.libreoffice.org/latest/en-US/text/swriter/guide/pagebreaks.html"],
            "abstract": "In the report open in LibreOffice Writer, the Outlook section should begin on a new "
                        "page. Insert a page break so that its heading \"Outlook\" starts a page, change nothing "
                        "else, and save the document in its Word format.",
            "verbose": "Start a section on a new page in Writer:\n"
                       f"1. {OPEN_STEP}, press Ctrl+H, type Outlook in the Find field, click Find Next, then "
                       "close the dialog: the heading Outlook is selected.\n"
                       "2. Press Home to put the cursor at the start of the heading.\n"
                       "3. Press Ctrl+Enter (Insert > Page Break).\n"
                       f"4. {SAVE_STEP}",
            "evaluator": same_text_and("contains_page_break", expected={
                "type": "rule", "rules": {"page_break_count": 1, "before_text": "Outlook"}}),
            "solution": [
                {"gui": "wait", "for": {"window": re.escape("report.docx")}},
                {"gui": "wait", "for": {"idle": True}},
                {"gui": "key", "keys": "ctrl+h"},
                {"gui": "wait", "for": FIND_REPLACE},
                {"gui": "type", "target": {"role": "text", "within": FIND_REPLACE, "index": 0}, "text": "Outlook",
                 "note": "the Find field"},
                {"gui": "click", "target": {"role": "push-button", "name": "Find Next", "within": FIND_REPLACE}},
                {"gui": "wait", "for": {"idle": True}},
                {"gui": "click", "target": {"role": "push-button", "name": "Close", "within": FIND_REPLACE}},
                {"gui": "wait", "for": {"gone": FIND_REPLACE}},
                {"gui": "key", "keys": "home"},
                {"gui": "key", "keys": "ctrl+enter"},
                *save('w:type="page"'),
            ],
        },
        {
            **COMMON,
            "name": "writer_font_liberation_serif",
            "action_number": 8,
            "source": ["https://help.libreoffice.org/latest/en-US/text/shared/01/05020100.html"],
            "abstract": "The report open in LibreOffice Writer mixes fonts. Set all of its text, headings "
                        f"included, in the {SERIF} font, change nothing else, and save the document in its "
                        "Word format.",
            "verbose": f"Set a whole document in one font in Writer:\n"
                       f"1. {OPEN_STEP}, press Ctrl+A to select all the text.\n"
                       "2. Choose Format > Character.\n"
                       f"3. On the Font tab, replace the Family with {SERIF}, then click OK.\n"
                       f"4. {SAVE_STEP}",
            "evaluator": same_text_and("compare_font_names", expected={"type": "rule",
                                                                       "rules": {"font_name": SERIF}}),
            "solution": [
                {"gui": "wait", "for": {"window": re.escape("report.docx")}},
                {"gui": "wait", "for": {"idle": True}},
                {"gui": "key", "keys": "ctrl+a"},
                *menu("Format", "Character..."),
                {"gui": "wait", "for": CHARACTER},
                {"gui": "click", "target": {"role": "text", "within": CHARACTER, "index": 3},
                 "note": "the Family field: the Font tab's fields are Language, Size, Style, Family in the tree"},
                {"gui": "key", "keys": "ctrl+a"},
                {"gui": "type", "text": SERIF},
                {"gui": "click", "target": {"role": "push-button", "name": "OK", "within": CHARACTER}},
                {"gui": "wait", "for": {"gone": CHARACTER}},
                *save(SERIF),
            ],
        },
    ]


def main() -> None:
    """Write this module's tasks and index them."""
    write_pairs(pairs())
