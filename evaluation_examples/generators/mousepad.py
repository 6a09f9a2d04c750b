"""Mousepad task pairs (``examples/mousepad``) on the ``base`` image, solved through Mousepad's own
menus and dialogs with GUI steps that find their targets in the accessibility tree.

Regenerate with ``python3 -m evaluation_examples.generators mousepad`` from the repository root
(see the package docstring).
"""
from __future__ import annotations

import random

from .common import wait_for_window, write_pairs

NOTES_PATH = "/home/user/notes/meeting_notes.txt"
TITLE = "meeting_notes.txt"
TYPO, FIX = "datbase", "database"
DIALOG = {"role": "dialog", "name": "Find and Replace"}

_TOPICS = ["the nightly load", "the staging schema", "the sales dashboard", "the customer table",
           "the backup job", "the reporting replica", "the warehouse migration", "the audit log"]
_VERBS = ["review", "move", "index", "archive", "document", "test", "resize", "clean up"]
_OWNERS = ["Ana", "Bram", "Chen", "Dita", "Emeka", "Farah"]


def meeting_notes() -> str:
    """Meeting notes (seeded) in which the word ``database`` is misspelt ``datbase`` a few times."""
    rng = random.Random(20261126)
    lines = ["Data platform sync, 2026-11-19", "", "Attendees: " + ", ".join(_OWNERS), "", "Action items:"]
    for i in range(12):
        word = TYPO if i % 3 == 0 else FIX
        lines.append(f"- {rng.choice(_OWNERS)} to {rng.choice(_VERBS)} {rng.choice(_TOPICS)} "
                     f"in the {word} by {rng.choice(['Monday', 'Wednesday', 'Friday'])}.")
    lines += ["", f"Next sync: the {TYPO} team presents the new schema.", ""]
    return "\n".join(lines)


def gold_notes() -> str:
    """The notes with every misspelling corrected (and nothing else changed)."""
    return meeting_notes().replace(TYPO, FIX)


#: Setup: the notes file fresh, Mousepad showing it (it maps its window in seconds, minutes under load).
CONFIG = [
    {"type": "execute", "parameters": {"command": ["bash", "-c", "pkill -x mousepad; mkdir -p /home/user/notes; true"]}},
    {"type": "copyfile_from_host_to_guest", "parameters": {"src": "{folder}/meeting_notes.txt", "dest": NOTES_PATH}},
    {"type": "launch", "parameters": {"command": ["mousepad", NOTES_PATH]}},
    wait_for_window(TITLE),
    {"type": "activate_window", "parameters": {"window_name": TITLE}},
]


def pairs() -> list[dict]:
    """The task pairs of this module (``common`` describes their keys)."""
    return [
        {
            "name": "mousepad_replace_all",
            "id_seed": "gui_suite",
            "app": "mousepad",
            "snapshot": "base",
            "gui_suite": True,
            "category": "traditional_data_processing",
            "interface": "gui",
            "action_number": 6,
            "related_apps": ["mousepad"],
            "source": ["https://docs.xfce.org/apps/mousepad/start"],
            "abstract": f"The meeting notes open in Mousepad misspell \"{FIX}\" as \"{TYPO}\" in several places. "
                        f"Correct every occurrence with the editor's find-and-replace, change nothing else, and "
                        f"save the file.",
            "verbose": "Fix a misspelling everywhere in Mousepad:\n"
                       "1. In the Mousepad window showing meeting_notes.txt, open the Search menu and choose "
                       "Find and Replace.\n"
                       f"2. Type {TYPO} in the search field and {FIX} in the replace field.\n"
                       "3. Tick \"Replace all in:\" (Document) and click Replace All, then close the dialog.\n"
                       "4. Save the file (File > Save, or Ctrl+S).",
            "files": {"meeting_notes.txt": meeting_notes(), "meeting_notes_gold.txt": gold_notes()},
            "config": CONFIG,
            "evaluator": {
                "func": "compare_text_file",
                "result": {"type": "vm_file", "path": NOTES_PATH, "dest": "meeting_notes.txt"},
                "expected": {"type": "local_file", "path": "{folder}/meeting_notes_gold.txt"},
            },
            "solution": [
                {"gui": "wait", "for": {"window": "meeting_notes\\.txt"}},
                {"gui": "click", "target": {"role": "menu", "name": "Search"}},
                {"gui": "click", "target": {"role": "menu-item", "name_contains": "Find and Replace"}},
                {"gui": "type", "target": {"role": "text", "within": DIALOG, "index": 0}, "text": TYPO,
                 "note": "the Search for field"},
                {"gui": "type", "target": {"role": "text", "within": DIALOG, "index": 1}, "text": FIX,
                 "note": "the Replace with field"},
                {"gui": "click", "target": {"role": "check-box", "name": "Replace all in:"}},
                {"gui": "click", "target": {"role": "push-button", "name": "Replace All", "within": DIALOG},
                 "note": "the Replace button is named Replace All once the box is ticked"},
                {"gui": "wait", "for": {"window": r"^\*.*meeting_notes\.txt"},
                 "note": "Mousepad marks the title with * once the text has changed"},
                {"gui": "click", "target": {"role": "push-button", "name": "Close", "within": DIALOG}},
                {"gui": "wait", "for": {"gone": DIALOG}},
                {"gui": "click", "target": {"role": "menu", "name": "File"},
                 "note": "the menu rather than Ctrl+S: a key sent while the closing dialog still holds the focus "
                         "is lost"},
                {"gui": "click", "target": {"role": "menu-item", "name": "Save"}},
                {"gui": "wait", "for": {"file": NOTES_PATH, "lacks": TYPO}},
            ],
        },
    ]


def main() -> None:
    """Write this module's tasks and index them."""
    write_pairs(pairs())
