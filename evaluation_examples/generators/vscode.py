"""Editor task pairs (``examples/vscode``) on the ``office`` image: the VS Code-compatible editor
(code-server, started as ``code``), solved in its own window with GUI steps found in the
accessibility tree (the editor is a web page in a Chromium app window; its Settings editor names
each setting's field by the setting's id, such as ``editor.fontSize``).

Each pair opens a project folder in the editor with a user settings file of two settings; the
evaluators read the settings file the editor writes. Regenerate with
``python3 -m evaluation_examples.generators vscode`` from the repository root (see the package
docstring).
"""
from __future__ import annotations

import json
import re
from pathlib import Path

from .common import open_in_app, write_pairs

SETTINGS = "/home/user/.config/Code/User/settings.json"  # VS Code's place, which `code` keeps
PROJECT = "/home/user/project"
TITLE = "Visual Studio Code"
#: The user settings the task starts with (a user who has set up the editor a little).
START = {"editor.minimap.enabled": False, "files.trimTrailingWhitespace": True}
PALETTE = {"role": "entry", "name": "Type the name of a command to run."}
OPEN_SETTINGS = "Preferences: Open User Settings"


def write_project(folder: Path) -> None:
    """``settings.json`` (the user settings as the task starts) and ``orders.py`` (the project's file)."""
    (folder / "settings.json").write_text(json.dumps(START, indent=4) + "\n")
    (folder / "orders.py").write_text('"""Daily order totals."""\n\n\ndef total(orders):\n'
                                      '    return sum(o["amount"] for o in orders)\n')


def result() -> dict:
    """The evaluator's result side: the editor's user settings."""
    return {"type": "vm_file", "path": SETTINGS, "dest": "settings.json"}


def open_editor() -> list[dict]:
    """Setup: the project and the start settings fresh in the guest, the project opened with ``code``."""
    return open_in_app(f"rm -rf {PROJECT} {SETTINGS} && mkdir -p {PROJECT} {Path(SETTINGS).parent}",
                       {SETTINGS: "{folder}/settings.json", f"{PROJECT}/orders.py": "{folder}/orders.py"},
                       ["code", PROJECT], TITLE, minutes=10,  # code-server, then Chromium: over 5 min beside a CI run
                       maximize=False, activate=False)


def open_settings() -> list[dict]:
    """Solution head: the Settings editor, through the Command Palette opened from the Manage menu (the
    gear at the bottom of the activity bar). Not a key: until the page has the keyboard focus, F1
    reaches Chromium (its help page) instead of the editor. Not the menu's Settings item either: it
    opens the settings over the workbench with an animation, and a field located while it moves is
    clicked where it was."""
    return [
        {"gui": "wait", "for": {"window": re.escape(TITLE)}},
        {"gui": "click", "target": {"role": "push-button", "name": "Manage"}},
        {"gui": "click", "target": {"role": "menu-item", "name_contains": "Command Palette"}},
        # the palette's entry takes the keyboard only once the editor has drawn it: text typed before that
        # is lost and the entry keeps only its '>'
        {"gui": "wait", "for": {"idle": True}},
        {"gui": "type", "text": OPEN_SETTINGS, "target": PALETTE},
        # under load the page takes the typed keys long after they were sent, and the list filters as each
        # arrives: a click on the command while it is still filtering hits whatever moves under it
        {"gui": "wait", "for": {**PALETTE, "text_contains": OPEN_SETTINGS}},
        {"gui": "click", "target": {"role": "list-item", "name": OPEN_SETTINGS}},
        {"gui": "wait", "for": {"role": "page-tab", "name": "User", "state": "selected"}},
    ]


def saved(key: str, value) -> dict:
    """Solution tail: wait until the settings file holds ``key`` set to ``value`` (as the editor writes it)."""
    return {"gui": "wait", "for": {"file": SETTINGS, "contains": f"{json.dumps(key)}: {json.dumps(value)}"}}


def setting(key: str, value) -> dict:
    """An evaluator: the user settings hold ``key`` with ``value`` and still hold the start settings."""
    return {"func": "check_json_settings", "result": result(),
            "expected": {"type": "rule", "rules": {"expected": {**START, key: value}}}}


COMMON = {"id_seed": "office_suite", "app": "vscode", "snapshot": "office", "interface": "gui",
          "related_apps": ["vscode"], "category": "editor", "files": {}, "gen": write_project,
          "config": open_editor()}
OPEN_STEP = ("In the Visual Studio Code window showing the project, open the Command Palette (the Manage "
             f"gear at the bottom left > Command Palette, or Ctrl+Shift+P) and run \"{OPEN_SETTINGS}\"")


def pairs() -> list[dict]:
    """The task pairs of this module (``common`` describes their keys)."""
    return [
        {
            **COMMON,
            "name": "vscode_format_on_save",
            "action_number": 6,
            "source": ["https://code.visualstudio.com/docs/getstarted/settings"],
            "abstract": "Make the code editor (Visual Studio Code) format every file when it is saved, for all "
                        "projects, keeping the settings already made.",
            "verbose": "Turn on Format On Save in Visual Studio Code:\n"
                       f"1. {OPEN_STEP}.\n"
                       "2. On the User tab, under Commonly Used, tick Editor: Format On Save. The editor saves "
                       "the setting at once.",
            "evaluator": setting("editor.formatOnSave", True),
            "solution": [
                *open_settings(),
                {"gui": "click", "target": {"role": "check-box", "name": "editor.formatOnSave"}},
                {"gui": "wait", "for": {"role": "check-box", "name": "editor.formatOnSave", "state": "checked"}},
                saved("editor.formatOnSave", True),
            ],
        },
        {
            **COMMON,
            "name": "vscode_font_size_16",
            "action_number": 6,
            "source": ["https://code.visualstudio.com/docs/getstarted/settings"],
            "abstract": "The code editor (Visual Studio Code) shows text too small. Make its editor font size 16 "
                        "for all projects, keeping the settings already made.",
            "verbose": "Set the editor font size in Visual Studio Code:\n"
                       f"1. {OPEN_STEP}.\n"
                       "2. On the User tab, under Commonly Used, replace the value of Editor: Font Size with "
                       "16. The editor saves the setting at once.",
            "evaluator": setting("editor.fontSize", 16),
            "solution": [
                *open_settings(),
                # not a triple-click: under load its clicks come too far apart to select the field's text
                {"gui": "click", "target": {"role": "spin-button", "name": "editor.fontSize"}},
                {"gui": "key", "keys": "ctrl+a"},
                {"gui": "type", "text": "16"},
                saved("editor.fontSize", 16),
            ],
        },
    ]


def main() -> None:
    """Write this module's tasks and index them."""
    write_pairs(pairs())
