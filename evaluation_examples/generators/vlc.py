"""VLC task pairs (``examples/vlc``) on the ``office`` image, solved in VLC's own windows with GUI
steps found in the accessibility tree (VLC's Qt interface reports its dialogs, tabs, check boxes and
fields by name).

Each pair starts VLC on the image's settings file and asks for a change in Tools > Preferences; the
evaluators read the ``vlcrc`` VLC writes when its preferences are saved. Regenerate with
``python3 -m evaluation_examples.generators vlc`` from the repository root (see the package
docstring).
"""
from __future__ import annotations

import re
from pathlib import Path

from .common import ROOT, open_in_app, write_pairs

VLCRC = "/home/user/.config/vlc/vlcrc"
#: The image's VLC settings (no privacy question, the web interface on): every task starts from them.
SKELETON = ROOT.parent / "desktop_env/image/profiles/office/files/etc/skel/.config/vlc/vlcrc"
MAIN = "VLC media player"
PREFS = {"role": "dialog", "name": "Simple Preferences"}
RECORDINGS = "/home/user/Videos/recordings"


def write_settings(folder: Path) -> None:
    """``vlcrc``: the settings file the task starts VLC with, the image's own."""
    (folder / "vlcrc").write_bytes(SKELETON.read_bytes())


def result() -> dict:
    """The evaluator's result side: VLC's settings file."""
    return {"type": "vlc_config", "dest": "vlcrc"}


def open_vlc() -> list[dict]:
    """Setup: the image's VLC settings fresh in ~/.config/vlc, VLC started with them, and VLC idle."""
    return open_in_app(f"mkdir -p {Path(VLCRC).parent} && rm -f {VLCRC}", {VLCRC: "{folder}/vlcrc"}, ["vlc"], MAIN,
                       maximize=False, quiet_process="^vlc$")


def preferences(tab: str | None = None) -> list[dict]:
    """Solution head: Tools > Preferences (Ctrl+P in VLC's window), then the ``tab`` of the simple view."""
    steps = [
        {"gui": "wait", "for": {"window": re.escape(MAIN)}},
        {"gui": "key", "keys": "ctrl+p", "note": "Tools > Preferences"},
        {"gui": "wait", "for": PREFS},
    ]
    if tab:  # the simple view's tabs are check boxes (a row of tool buttons)
        steps.append({"gui": "click", "target": {"role": "check-box", "name": tab, "within": PREFS}})
    return steps


def save(contains: str) -> list[dict]:
    """Solution tail: click Save and wait until vlcrc holds ``contains`` (VLC writes a setting that
    differs from its default as ``key=value``, the others commented out)."""
    return [
        {"gui": "click", "target": {"role": "push-button", "name": "Save", "within": PREFS}},
        {"gui": "wait", "for": {"gone": PREFS}},
        {"gui": "wait", "for": {"file": VLCRC, "contains": contains}},
    ]


def setting(func: str, rule_key: str, value) -> dict:
    """An evaluator: ``func`` reads vlcrc and wants ``rule_key`` to be ``value``."""
    return {"func": func, "result": result(), "expected": {"type": "rule", "rules": {rule_key: value}}}


COMMON = {"id_seed": "office_suite", "app": "vlc", "snapshot": "office", "interface": "gui",
          "related_apps": ["vlc"], "category": "media", "files": {}, "gen": write_settings,
          "config": open_vlc()}
OPEN_STEP = "In VLC media player, choose Tools > Preferences (the simple view opens)"
SAVE_STEP = "Click Save."
ONE_INSTANCE = "Use only one instance when started from file manager"
MINIMAL = "Start in minimal view mode"


def pairs() -> list[dict]:
    """The task pairs of this module (``common`` describes their keys)."""
    return [
        {
            **COMMON,
            "name": "vlc_recordings_folder",
            "action_number": 6,
            "source": ["https://wiki.videolan.org/Documentation:Modules/record/"],
            "abstract": f"Make VLC media player save its recordings (the Record button) in {RECORDINGS} and keep "
                        "that setting for the next start.",
            "verbose": "Set VLC's recordings folder:\n"
                       f"1. {OPEN_STEP}, and click the Input / Codecs tab.\n"
                       f"2. Type {RECORDINGS} into \"Record directory or filename\".\n"
                       f"3. {SAVE_STEP}",
            "evaluator": {"func": "is_vlc_recordings_folder", "result": result(),
                          "expected": {"type": "rule", "rules": {"recording_file_path": RECORDINGS}}},
            "solution": [
                *preferences("Input / Codecs"),
                {"gui": "type", "text": RECORDINGS,
                 "target": {"role": "text", "name": "Record directory or filename", "within": PREFS}},
                *save(f"input-record-path={RECORDINGS}"),
            ],
        },
        {
            **COMMON,
            "name": "vlc_new_instance_per_file",
            "action_number": 5,
            "source": ["https://wiki.videolan.org/VSG:Interface:Preferences/"],
            "abstract": "When a video is opened from the file manager, VLC media player hands it to the VLC that "
                        "is already running. Make VLC open every such file in a new instance of its own instead, "
                        "and keep that setting for the next start.",
            "verbose": "Let VLC start a new instance for each file opened from the file manager:\n"
                       f"1. {OPEN_STEP}; the Interface tab shows.\n"
                       f"2. Under Playlist and Instances, clear \"{ONE_INSTANCE}\".\n"
                       f"3. {SAVE_STEP}",
            "evaluator": setting("check_one_instance_when_started_from_file",
                                 "expected_one_instance_when_started_from_file", 0),
            "solution": [
                *preferences(),
                {"gui": "click", "target": {"role": "check-box", "name": ONE_INSTANCE, "state": "checked",
                                            "within": PREFS}},
                {"gui": "wait", "for": {"gone": {"role": "check-box", "name": ONE_INSTANCE, "state": "checked",
                                                 "within": PREFS}}},
                *save("\none-instance-when-started-from-file=0"),
            ],
        },
        {
            **COMMON,
            "name": "vlc_start_minimal_view",
            "action_number": 5,
            "source": ["https://wiki.videolan.org/VSG:Interface:Preferences/"],
            "abstract": "Make VLC media player start in its minimal view (no menus, no controls bar) from now "
                        "on.",
            "verbose": "Make VLC start in minimal view:\n"
                       f"1. {OPEN_STEP}; the Interface tab shows.\n"
                       f"2. Under Look and feel, tick \"{MINIMAL}\".\n"
                       f"3. {SAVE_STEP}",
            "evaluator": setting("check_qt_minimal_view", "expected_qt_minimal_view", 1),
            "solution": [
                *preferences(),
                {"gui": "click", "target": {"role": "check-box", "name": MINIMAL, "within": PREFS}},
                {"gui": "wait", "for": {"role": "check-box", "name": MINIMAL, "state": "checked", "within": PREFS}},
                *save("\nqt-minimal-view=1"),
            ],
        },
    ]


def main() -> None:
    """Write this module's tasks and index them."""
    write_pairs(pairs())
