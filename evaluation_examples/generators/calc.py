"""LibreOffice Calc task pair (``examples/calc``) on the ``data`` image: add a SUM row to a
workbook open in Calc (a GUI task, scored by ``compare_table`` against a gold workbook).

Regenerate with ``python3 -m evaluation_examples.generators calc`` from the repository
root (see the package docstring).
"""
from __future__ import annotations

import random
from pathlib import Path

from .common import write_pairs
from .workbooks import save_gold, save_if_changed


def monthly_workbooks(folder: Path) -> None:
    """monthly_revenue.xlsx (2024's revenue per month) and its gold with the Total row, in ``folder``."""
    import openpyxl

    rng = random.Random(99)
    rows = [(f"2024-{m:02d}", round(rng.uniform(18000, 42000), 2)) for m in range(1, 13)]
    for gold in (False, True):
        wb = openpyxl.Workbook()
        ws = wb.active
        ws.title = "Revenue"
        ws.append(["Month", "Revenue"])
        for r in rows:
            ws.append(list(r))
        if gold:  # the formula the task asks for, with the value Calc computes for it
            ws.append(["Total", f"=SUM(B2:B{len(rows) + 1})"])
            save_gold(wb, folder / "monthly_revenue_gold.xlsx",
                      {f"B{len(rows) + 2}": round(sum(r[1] for r in rows), 2)})
        else:
            save_if_changed(wb, folder / "monthly_revenue.xlsx")


CALC_TITLE = "monthly_revenue.xlsx"

CALC_CONFIG = [
    {"type": "execute", "parameters": {"command": "mkdir -p /home/user/reports && rm -f "
                                       "/home/user/reports/monthly_revenue.xlsx "
                                       "'/home/user/reports/.~lock.monthly_revenue.xlsx#'", "shell": True}},
    {"type": "copyfile_from_host_to_guest", "parameters": {"src": "{folder}/monthly_revenue.xlsx",
                                                             "dest": "/home/user/reports/monthly_revenue.xlsx"}},
    {"type": "launch", "parameters": {"command": ["libreoffice", "--calc", "/home/user/reports/monthly_revenue.xlsx"]}},
    {"type": "execute", "parameters": {
        "command": f"for i in $(seq 840); do wmctrl -l | grep -q '{CALC_TITLE}' && exit 0; sleep 0.5; done; "
                   f"echo 'no window {CALC_TITLE}' >&2; exit 1", "shell": True, "timeout_s": 450}},
    {"type": "activate_window", "parameters": {"window_name": CALC_TITLE}},
    {"type": "execute", "parameters": {"command": ["python3", "-c", (
        "import subprocess, time\n"
        "pid = subprocess.run(['pgrep', '-n', 'soffice.bin'], capture_output=True, text=True).stdout.split()[0]\n"
        "def cpu_ticks():\n"
        "    fields = open(f'/proc/{pid}/stat').read().rsplit(')', 1)[1].split()\n"
        "    return int(fields[11]) + int(fields[12])\n"
        "quiet, last = 0, cpu_ticks()\n"
        "for _ in range(150):\n"
        "    time.sleep(2)\n"
        "    now = cpu_ticks()\n"
        "    quiet = quiet + 1 if now - last < 20 else 0\n"
        "    last = now\n"
        "    if quiet >= 2:\n"
        "        break\n")], "timeout_s": 330}},
]


def pairs() -> list[dict]:
    """The task pairs of this module (``common`` describes their keys)."""
    return [
        {
            "name": "calc_monthly_total",
            "id_seed": "data_batch2",
            "app": "calc",
            "category": "data_analysis_and_visualization",
            "interface": "gui",
            "action_number": 4,
            "related_apps": ["calc"],
            "source": ["https://help.libreoffice.org/latest/en-US/text/scalc/01/func_sum.html",
                       "https://help.libreoffice.org/latest/en-US/text/shared/01/01070001.html"],
            "abstract": "The workbook monthly_revenue.xlsx open in LibreOffice Calc lists 2024's revenue per month. "
                        "Add a total row right below the last month: the label Total in column A and, in column B, "
                        "a formula that sums the twelve months. Save it, keeping the xlsx format.",
            "verbose": "Add a SUM row in LibreOffice Calc:\n"
                       "1. Click into the Calc window showing monthly_revenue.xlsx (months in A2:A13, revenue in "
                       "B2:B13).\n"
                       "2. Click cell A14, right below December (or type A14 in the Name Box and press Enter).\n"
                       "3. Type Total, press Tab, type =SUM(B2:B13) and press Enter.\n"
                       "4. Press Ctrl+S and keep the current (xlsx) format if asked.",
            "gen": monthly_workbooks,
            "config": CALC_CONFIG,
            "evaluator": {
                "func": "compare_table",
                "result": {"type": "vm_file", "path": "/home/user/reports/monthly_revenue.xlsx",
                           "dest": "monthly_revenue.xlsx"},
                "expected": {"type": "local_file", "path": "{folder}/monthly_revenue_gold.xlsx"},
                "options": {"rules": [
                    {"type": "sheet_data", "sheet_idx0": "RI0", "sheet_idx1": "EI0", "precision": 2},
                    {"type": "check_cell", "sheet_idx": "RI0", "coordinate": "B14", "props": {"formula": {
                        "method": "re", "ref": r"(?i)^=\s*SUM\(\s*\$?B\$?2\s*:\s*\$?B\$?13\s*\)\s*$"}}}]},
            },
            "solution": [
                {"gui": "wait", "for": {"window": "monthly_revenue\\.xlsx"}},
                # Click A1, wait until Calc is idle (it has handled the click), then Ctrl+Home, Ctrl+Down (the
                # last month, A13) and Down. Under emulation Calc once handled a click after the keys sent
                # behind it, and keys after the text typed behind them (Total landed over 2024-10); typing
                # now waits until Calc has handled the keys before it. A1, not A14: the server reads a
                # sheet's cells one by one, and under emulation a walk down to row 14 takes minutes.
                {"gui": "click", "target": {"role": "table-cell", "name": "A1"}},
                {"gui": "wait", "for": {"idle": True}},
                {"gui": "key", "keys": ["ctrl+home", "ctrl+down", "down"]},
                {"gui": "type", "text": "Total\t=SUM(B2:B13)\n"},
                {"gui": "key", "keys": "ctrl+s"},
                {"gui": "wait", "for": {"file": "/home/user/reports/monthly_revenue.xlsx", "contains": "SUM("}},
            ],
        },
    ]


def main() -> None:
    """Write this module's tasks and index them."""
    write_pairs(pairs())
