"""Thunderbird task pairs (``examples/thunderbird``) on the ``office`` image, solved in Thunderbird's
own Settings tab with GUI steps found in the accessibility tree (Thunderbird's pages report their
categories, fields and check boxes by name).

Each pair starts Thunderbird on a new profile at a known place (only its settings file, ``prefs.js``), which the task's setup makes
the profile Thunderbird opens: ``profiles.ini`` lists it, and ``installs.ini`` (with the same
section in ``profiles.ini``) makes it the default of the installation in ``/usr/lib/thunderbird``,
Debian's, whose section name is a hash of that folder (so an agent that closes Thunderbird and starts
it again from the menu finds the same profile). Without that, Thunderbird makes a profile of its own
under a random name. The image's defaults (``/etc/thunderbird/pref/desktop-env.js``) keep the
account setup and the start page away. The evaluators read the ``prefs.js`` Thunderbird writes
about a second after a setting changes. Regenerate with
``python3 -m evaluation_examples.generators thunderbird`` from the repository root (see the package
docstring).
"""
from __future__ import annotations

import re
from pathlib import Path

from .common import open_in_app, write_pairs

HOME = "/home/user/.thunderbird"
PROFILE = f"{HOME}/desktop-env.default"
PREFS_JS = f"{PROFILE}/prefs.js"
#: Thunderbird's section for an installation in /usr/lib/thunderbird (a hash of that path).
INSTALL = "FDC34C9F024745EB"
TITLE = "Mozilla Thunderbird"
SETTINGS_TAB = "Settings - Mozilla Thunderbird"


#: The profile's settings as the task starts (a user who has told Thunderbird a few things).
START_PREFS = {"mail.shell.checkDefaultClient": "false", "mailnews.start_page.enabled": "false",
               "mail.pane_config.dynamic": "0"}


def write_profile(folder: Path) -> None:
    """``profiles.ini`` and ``installs.ini`` (one profile, desktop-env.default, the installation's
    default) and the profile's start ``prefs.js``."""
    (folder / "prefs.js").write_text("// Mozilla User Preferences\n\n" + "".join(
        f'user_pref("{name}", {value});\n' for name, value in START_PREFS.items()))
    default = f"Default={Path(PROFILE).name}\nLocked=1\n"
    (folder / "profiles.ini").write_text(f"[Profile0]\nName=default\nIsRelative=1\nPath={Path(PROFILE).name}\n"
                                         f"Default=1\n\n[General]\nStartWithLastProfile=1\nVersion=2\n\n"
                                         f"[Install{INSTALL}]\n{default}")
    (folder / "installs.ini").write_text(f"[{INSTALL}]\n{default}")


def open_thunderbird() -> list[dict]:
    """Setup: a profile at PROFILE holding only the start prefs.js, made Thunderbird's default, and
    Thunderbird started on it, maximized and idle."""
    return open_in_app(f"rm -rf {HOME} && mkdir -p {PROFILE}",
                       {f"{HOME}/profiles.ini": "{folder}/profiles.ini", f"{HOME}/installs.ini": "{folder}/installs.ini",
                        PREFS_JS: "{folder}/prefs.js"},
                       ["thunderbird"], TITLE, minutes=10,  # a new profile's first start: minutes under load
                       quiet_process="^thunderbird$")


def open_settings(category: str | None = None) -> list[dict]:
    """Solution head: the Settings tab (the gear at the bottom of the spaces toolbar), then ``category``."""
    steps = [
        {"gui": "wait", "for": {"window": re.escape(TITLE)}},
        {"gui": "click", "target": {"role": "push-button", "name": "Settings"}},
        {"gui": "wait", "for": {"window": re.escape(SETTINGS_TAB)}},
    ]
    if category:
        steps.append({"gui": "click", "target": {"role": "list-item", "name": category}})
    return steps


def preference(name: str, value: bool) -> dict:
    """An evaluator: Thunderbird's prefs.js sets ``name`` to ``value``."""
    return {"func": "check_thunderbird_prefs", "result": {"type": "vm_file", "path": PREFS_JS, "dest": "prefs.js"},
            "expected": {"type": "rule", "rules": {"expect": {name: {"method": "eq", "ref": value}}}}}


def saved(name: str, value: bool) -> dict:
    """Solution tail: wait until prefs.js holds ``name`` set to ``value`` (Thunderbird writes it soon after)."""
    return {"gui": "wait", "for": {"file": PREFS_JS, "contains": f'user_pref("{name}", {str(value).lower()});'}}


COMMON = {"id_seed": "office_suite", "app": "thunderbird", "snapshot": "office", "interface": "gui",
          "related_apps": ["thunderbird"], "category": "mail", "files": {}, "gen": write_profile,
          "config": open_thunderbird()}
OPEN_STEP = "In Thunderbird, open Settings (the gear at the bottom of the bar on the left)"
MARK_READ = "Automatically mark messages as read"
SPELL_CHECK = "Check spelling before sending"


def pairs() -> list[dict]:
    """The task pairs of this module (``common`` describes their keys)."""
    return [
        {
            **COMMON,
            "name": "thunderbird_keep_messages_unread",
            "action_number": 4,
            "source": ["https://support.mozilla.org/kb/thunderbird-settings-general"],
            "abstract": "Thunderbird marks a message as read as soon as it is shown. Make it leave messages unread "
                        "until they are marked as read by hand.",
            "verbose": "Stop Thunderbird marking messages as read when they are shown:\n"
                       f"1. {OPEN_STEP}.\n"
                       "2. Type \"mark messages as read\" into Find in Settings (or scroll the General category "
                       "down to Reading & Display).\n"
                       f"3. Clear \"{MARK_READ}\". Thunderbird keeps the setting at once.",
            "evaluator": preference("mailnews.mark_message_read.auto", False),
            "solution": [
                *open_settings(),
                {"gui": "type", "text": "mark messages as read", "target": {"role": "entry", "name": "Find in Settings"}},
                {"gui": "click", "target": {"role": "check-box", "name": MARK_READ, "state": "checked"}},
                {"gui": "wait", "for": {"gone": {"role": "check-box", "name": MARK_READ, "state": "checked"}}},
                saved("mailnews.mark_message_read.auto", False),
            ],
        },
        {
            **COMMON,
            "name": "thunderbird_spell_check_before_sending",
            "action_number": 3,
            "source": ["https://support.mozilla.org/kb/thunderbird-settings-composition"],
            "abstract": "Make Thunderbird check the spelling of every message before it is sent.",
            "verbose": "Make Thunderbird check spelling before sending:\n"
                       f"1. {OPEN_STEP}, and choose the Composition category.\n"
                       f"2. Under Spelling, tick \"{SPELL_CHECK}\". Thunderbird keeps the setting at once.",
            "evaluator": preference("mail.SpellCheckBeforeSend", True),
            "solution": [
                *open_settings("Composition"),
                {"gui": "click", "target": {"role": "check-box", "name": SPELL_CHECK}},
                {"gui": "wait", "for": {"role": "check-box", "name": SPELL_CHECK, "state": "checked"}},
                saved("mail.SpellCheckBeforeSend", True),
            ],
        },
    ]


def main() -> None:
    """Write this module's tasks and index them."""
    write_pairs(pairs())
