"""File-manager task pairs (``examples/thunar``) on the ``base`` image, solved in Thunar, the
desktop's file manager, with GUI steps that find the files in its accessibility tree (its
detailed list view: one ``table-cell`` per file name).

Regenerate with ``python3 -m evaluation_examples.generators file_manager`` from the repository
root (see the package docstring).
"""
from __future__ import annotations

from .common import csv_text, wait_for_window, write_pairs

REPORTS = "/home/user/reports"
#: The quarterly reports in the folder: the 2023 ones go into a folder of their own.
QUARTERS = {"q3_2023.csv": ("q3", 18250.4), "q4_2023.csv": ("q4", 21904.75), "q1_2024.csv": ("q1", 19877.1)}
TITLE = "reports - Thunar"

#: Setup: the reports folder fresh and Thunar showing it (it maps its window in seconds, minutes under load).
CONFIG = [
    {"type": "execute", "parameters": {"command": ["bash", "-c", f"pkill -x thunar; rm -rf {REPORTS}; true"]}},
    *({"type": "copyfile_from_host_to_guest", "parameters": {"src": f"{{folder}}/{name}",
                                                             "dest": f"{REPORTS}/{name}"}} for name in QUARTERS),
    {"type": "launch", "parameters": {"command": ["thunar", REPORTS]}},
    wait_for_window(TITLE),
    {"type": "activate_window", "parameters": {"window_name": TITLE}},
]


def quarter_csv(name: str) -> str:
    """One quarterly report."""
    quarter, revenue = QUARTERS[name]
    return csv_text([[quarter, revenue]], ["quarter", "revenue"])


def pairs() -> list[dict]:
    """The task pairs of this module (``common`` describes their keys)."""
    moved = [n for n in QUARTERS if n.endswith("_2023.csv")]
    checks = "".join(f"""[ -f {REPORTS}/2023/{n} ] || fail "{REPORTS}/2023/{n} does not exist"
[ ! -e {REPORTS}/{n} ] || fail "{n} is still in {REPORTS} (move it, do not copy it)"
cmp -s {REPORTS}/2023/{n} "$HERE/{n}" || fail "{n} changed on the way"
""" for n in moved)
    return [
        {
            "name": "thunar_move_into_new_folder",
            "id_seed": "gui_suite",
            "app": "thunar",
            "snapshot": "base",
            "gui_suite": True,
            "category": "traditional_data_processing",
            "interface": "gui",
            "action_number": 6,
            "related_apps": ["thunar"],
            "source": ["https://docs.xfce.org/xfce/thunar/the-file-manager-window",
                       "https://docs.xfce.org/xfce/thunar/using-thunar"],
            "abstract": f"In the file manager window showing {REPORTS}, create a folder named 2023 there and move "
                        f"the two 2023 reports (q3_2023.csv and q4_2023.csv) into it; q1_2024.csv stays where it is.",
            "verbose": "File reports into a new folder with the file manager (Thunar):\n"
                       f"1. In the Thunar window showing {REPORTS}, choose File > Create Folder (Ctrl+Shift+N), "
                       "name it 2023 and click Create.\n"
                       "2. Select q3_2023.csv and q4_2023.csv (View > Detailed List helps), and choose Edit > Cut "
                       "(Ctrl+X).\n"
                       "3. Open the folder 2023 (double-click it) and choose Edit > Paste (Ctrl+V).",
            "files": {name: quarter_csv(name) for name in QUARTERS},
            "config": CONFIG,
            "eval": f"""HERE=/tmp/desktop_env_eval/originals
mkdir -p "$HERE"
""" + "".join(f"printf '%s\\n' quarter,revenue {q},{r} > \"$HERE/{n}\"\n" for n, (q, r) in QUARTERS.items())
                    + checks + f"""[ -f {REPORTS}/q1_2024.csv ] || fail "q1_2024.csv left {REPORTS}"
extra=$(ls -A {REPORTS}/2023 | grep -vx -e q3_2023.csv -e q4_2023.csv)
[ -z "$extra" ] || fail "{REPORTS}/2023 holds more than the two 2023 reports: $extra"
echo EVAL_OK
""",
            "solution": [
                {"gui": "wait", "for": {"window": "^reports - Thunar"}},
                {"gui": "click", "target": {"role": "frame", "name": TITLE}, "at": [0.7, 0.85],
                 "note": "an empty part of the folder view"},
                {"gui": "key", "keys": "ctrl+2", "note": "View > Detailed List: the files become table cells"},
                {"gui": "wait", "for": {"role": "table-cell", "name": "q3_2023.csv"}},
                {"gui": "key", "keys": "ctrl+shift+n"},
                {"gui": "wait", "for": {"window": "New Folder"}},
                {"gui": "type", "text": "2023\n", "note": "the dialog's name field starts selected"},
                {"gui": "wait", "for": {"file": f"{REPORTS}/2023"}},
                {"gui": "click", "target": {"role": "table-cell", "name": "q3_2023.csv"}},
                {"gui": "key", "keys": ["shift+down", "ctrl+x"], "note": "q4_2023.csv is the next row"},
                {"gui": "click", "target": {"role": "table-cell", "name": "2023"}},
                {"gui": "key", "keys": "enter", "note": "opens the folder (a double-click can stall apart under load)"},
                {"gui": "wait", "for": {"window": "^2023 - Thunar"}},
                {"gui": "key", "keys": "ctrl+v"},
                {"gui": "wait", "for": {"file": f"{REPORTS}/2023/q4_2023.csv"}},
                {"gui": "wait", "for": {"file": f"{REPORTS}/2023/q3_2023.csv"}},
            ],
        },
    ]


def main() -> None:
    """Write this module's tasks and index them."""
    write_pairs(pairs())
