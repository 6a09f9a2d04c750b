"""Write the verbose twin of every base-image task that has none: ``python3 base_counterparts.py``.

The base-image tasks (the smoke suite and its Chromium task) were written by hand as
goal-only ("abstract") tasks; ``smoke_base.py`` writes their data files. This script gives
each one a step-by-step ("verbose") counterpart: the same setup, evaluator and reference
solution, a step-by-step instruction, its own folder with its own copy of the data files
(a task folder stays self-contained), and the two tasks linked through ``counterpart``.
It also lists the new tasks in the index files. Rerun after editing a base task or its
data; the output is byte-identical for the same input.
"""
from __future__ import annotations

import json
import shutil
import uuid
from pathlib import Path

from data_batch1 import update_index

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "evaluation_examples" / "examples"
NAMESPACE = uuid.UUID("6b1f0c52-3d7e-4a09-9c1e-5e2f7a8b4d10")

#: original task -> (verbose instruction, action_number of the step-by-step route)
VERBOSE = {
    "calc/c41e7a52-2f0b-4d8e-9a61-5b3c7d9e1f20": (
        "Add a Total column to the spreadsheet sales.xlsx that is open in LibreOffice Calc. Step by step: "
        "1. Click cell D1 and type Total, then press Enter. "
        "2. In D2 type the formula =B2*C2 and press Enter. "
        "3. Give every product row the same formula for its own row: D3 gets =B3*C3, and so on down to D11 "
        "(or select D2:D11 and press Ctrl+D). "
        "4. Press Ctrl+S and, if Calc asks, choose \"Use Excel 2007-365!\" so the file stays in xlsx format.", 14),
    "chromium/a63b2d95-8c4f-4e1a-b7d2-3f5e9c1a6d75": (
        "Open the quarterly report from the team dashboard in Chromium. Step by step: "
        "1. Switch to the Chromium window titled \"Team dashboard\". "
        "2. In its list of links, click \"Quarterly report\" (the page /home/user/site/report.html). "
        "3. Check that the tab title now reads \"Quarterly report Q1 2024\" and leave that tab open.", 3),
    "chromium/f8c1d247-5e6a-4b3c-9d8f-2a1b7c4e6d97": (
        "Put the quarterly report page into the team's Google Drive. Step by step: "
        "1. Open Chromium and go to https://drive.google.com. "
        "2. Sign in with the team's Google account. "
        "3. Open the folder Finance. "
        "4. Upload /home/user/site/report.html into it (New > File upload) and wait until the upload finishes.", 6),
    "duckdb/71f4c9a8-3e2d-4b6a-a5c7-9d8e1f2b3c64": (
        "Count the product events per type with DuckDB. Step by step: "
        "1. Open a terminal and run duckdb /home/user/warehouse.duckdb (this creates the database file). "
        "2. Load the CSV: CREATE TABLE events AS SELECT * FROM read_csv_auto('/home/user/data/events.csv'); "
        "(240 rows). "
        "3. Export the counts: COPY (SELECT event_type, count(*) AS n FROM events GROUP BY event_type "
        "ORDER BY n DESC, event_type) TO '/home/user/event_counts.csv' (HEADER, DELIMITER ','); "
        "4. Leave DuckDB with .quit and check that /home/user/event_counts.csv starts with the header event_type,n.",
        4),
    "jupyter/5d2f8b14-6a3c-4e97-b1d0-8c4e2a6f9b31": (
        "Refresh the outputs of the notebook /home/user/sales_summary.ipynb. Step by step: "
        "1. Open a terminal and change to /home/user. "
        "2. Execute every cell in order with the Python 3 kernel and write the outputs back into the same file: "
        "/opt/venvs/jupyter/bin/jupyter nbconvert --to notebook --execute --inplace sales_summary.ipynb "
        "(or open it in JupyterLab, choose Run > Run All Cells, and save). "
        "3. Check that the last cell now prints the best region.", 3),
    "os/3f6c2a10-5b7e-4c1d-9a8e-0d2b6c4e7f11": (
        "Leave a hello note on the Desktop. Step by step: "
        "1. Open a terminal. "
        "2. Run: printf 'hello world\\n' > ~/Desktop/hello.txt "
        "3. Check with cat ~/Desktop/hello.txt that the file's only line is hello world.", 3),
    "os/8a1d4e22-7c3b-4f5a-b6d9-1e2f3a4b5c62": (
        "Make a folder for the demo project. Step by step: "
        "1. Click into the terminal window that is open on the desktop. "
        "2. Type mkdir -p ~/projects/demo and press Enter. "
        "3. Run ls ~/projects to check that demo is listed.", 3),
    "terminal/e05a7c36-1b9d-4f2e-8a4c-7d6b3e9f2a86": (
        "Extract the errors from the application log. Step by step: "
        "1. Open a terminal. "
        "2. Keep only the lines whose level is ERROR, unchanged and in order: "
        "grep ' ERROR ' /home/user/logs/app.log > /home/user/errors.txt "
        "3. Check the result with wc -l /home/user/errors.txt and head /home/user/errors.txt.", 3),
}

INDEXES = ("test_all.json", "test_verbose.json", "test_non_account.json")


def dump_json(path: Path, data) -> None:
    """Write a task file in the layout of the committed ones."""
    path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n")


def retarget(value, old: str, new: str):
    """``value`` (JSON: strings, lists, dicts) with ``old`` replaced by ``new`` in every string."""
    if isinstance(value, str):
        return value.replace(old, new)
    if isinstance(value, list):
        return [retarget(v, old, new) for v in value]
    if isinstance(value, dict):
        return {k: retarget(v, old, new) for k, v in value.items()}
    return value


def make_twin(rel: str, instruction: str, action_number: int) -> tuple[str, str]:
    """Write the verbose twin of the task at ``examples/<rel>`` and link both; returns (app, twin id)."""
    app, tid = rel.split("/")
    src_dir = EXAMPLES / rel
    original = json.loads((src_dir / f"{tid}.json").read_text())
    twin_id = str(uuid.uuid5(NAMESPACE, f"verbose/{rel}"))
    twin_dir = EXAMPLES / app / twin_id
    twin_dir.mkdir(parents=True, exist_ok=True)
    for data in sorted(src_dir.iterdir()):
        if data.name != f"{tid}.json":
            shutil.copyfile(data, twin_dir / data.name)
    old, new = f"examples/{rel}/", f"examples/{app}/{twin_id}/"
    twin = retarget(original, old, new)
    twin["id"] = twin_id
    twin["instruction"] = instruction
    twin["tags"] = ["verbose" if t == "abstract" else t for t in original["tags"]]
    twin["action_number"] = action_number
    twin["counterpart"] = tid
    dump_json(twin_dir / f"{twin_id}.json", twin)
    if original.get("counterpart") != twin_id:
        original["counterpart"] = twin_id
        dump_json(src_dir / f"{tid}.json", original)
    return app, twin_id


def main() -> None:
    twins = [make_twin(rel, text, n) for rel, (text, n) in VERBOSE.items()]
    by_app: dict[str, list[str]] = {}
    for app, twin_id in twins:
        by_app.setdefault(app, []).append(twin_id)
    for name in INDEXES:
        update_index(name, by_app)
    for app, twin_id in twins:
        print(f"wrote {app}/{twin_id}")


if __name__ == "__main__":
    main()
