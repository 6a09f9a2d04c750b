"""The base-image tasks: their data files and their step-by-step twins.

The base-image tasks (the smoke suite, ``test_smoke.json``, and its Chromium dashboard task)
were written by hand as goal-only ("abstract") tasks. This module writes their data files:
synthetic but realistic data (a shop's orders, regional sales, product events, an
application log) drawn from fixed seeds, each file in the folder of the task that uses it,
together with the gold file the evaluator compares against (xlsx and sqlite files hold
identical data on every run; an xlsx file is rewritten only when its cells change, since
its bytes carry the save time). Then it gives each task a step-by-step ("verbose")
counterpart: the same setup, evaluator and reference solution, a step-by-step instruction,
its own folder with its own copy of the data files (a task folder stays self-contained), the
two tasks linked through ``counterpart`` and the twins listed in the index files.

Regenerate with ``python3 -m evaluation_examples.generators base_image`` from the repository
root (see the package docstring); rerun after editing a base task or its data.
"""
from __future__ import annotations

import datetime
import json
import random
import shutil
import sqlite3
import uuid
from collections import Counter
from pathlib import Path

from .common import EXAMPLES, csv_text, dump_json, replace_strings, update_index
from .datasets import CUSTOMERS, REGIONS
from .workbooks import save_gold, save_if_changed

#: Namespace of the twins' ids (uuid5 of ``verbose/<app>/<original id>``).
TWIN_NAMESPACE = uuid.UUID("6b1f0c52-3d7e-4a09-9c1e-5e2f7a8b4d10")
TWIN_INDEXES = ("test_all.json", "test_verbose.json", "test_non_account.json")

CALC_TASK = "calc/c41e7a52-2f0b-4d8e-9a61-5b3c7d9e1f20"
JUPYTER_TASK = "jupyter/5d2f8b14-6a3c-4e97-b1d0-8c4e2a6f9b31"
SQLITE_TASKS = ("sqlite3/9b7c3e21-4d5a-4f68-8e2b-1a9c6d3f5e42", "sqlite3/2e8d4a63-7b1c-4a95-9f3e-6c2b8d1a4f53")
DUCKDB_TASK = "duckdb/71f4c9a8-3e2d-4b6a-a5c7-9d8e1f2b3c64"
CHROMIUM_TASK = "chromium/a63b2d95-8c4f-4e1a-b7d2-3f5e9c1a6d75"
TERMINAL_TASK = "terminal/e05a7c36-1b9d-4f2e-8a4c-7d6b3e9f2a86"

PRODUCTS = [("Desk lamp", 24.5), ("USB-C cable", 9.99), ("Notebook A5", 3.75), ("Office chair", 149.0),
            ("Monitor stand", 39.9), ("Wireless mouse", 19.95), ("Keyboard", 44.0), ("Webcam", 59.5),
            ("Headset", 72.25), ("Desk mat", 14.8)]
EVENT_TYPES = ["page_view", "page_view", "page_view", "search", "search", "add_to_cart", "checkout", "signup"]


# --------------------------------------------------------------------------- data files

def calc(folder: Path) -> None:
    """sales.xlsx (Product, Quantity, Unit Price) and the gold with a Total column."""
    import openpyxl

    rng = random.Random(7)
    rows = [(name, rng.randint(1, 12), price) for name, price in PRODUCTS]
    for gold in (False, True):
        wb = openpyxl.Workbook()
        ws = wb.active
        ws.title = "Sales"
        ws.append(["Product", "Quantity", "Unit Price"] + (["Total"] if gold else []))
        for r, (name, qty, price) in enumerate(rows, start=2):
            ws.append([name, qty, price] + ([f"=B{r}*C{r}"] if gold else []))
        if gold:  # the formulas the task asks for, with the values Calc computes for them
            save_gold(wb, folder / "sales_gold.xlsx",
                      {f"D{r}": round(qty * price, 2) for r, (_, qty, price) in enumerate(rows, start=2)})
        else:
            save_if_changed(wb, folder / "sales.xlsx")


def jupyter(folder: Path) -> None:
    """regional_sales.csv, the notebook that summarises it (no outputs) and the gold (with outputs)."""
    import nbformat

    rng = random.Random(11)
    rows = []
    for month in range(1, 13):
        for region in REGIONS:
            rows.append([f"2024-{month:02d}", region, round(rng.uniform(8000, 25000), 2)])
    (folder / "regional_sales.csv").write_text(csv_text(rows, ["month", "region", "revenue"]))
    totals: dict[str, float] = {}
    for _, region, revenue in rows:  # the notebook's own arithmetic, in the same order
        totals[region] = totals.get(region, 0.0) + float(f"{revenue}")
    best = max(totals, key=totals.get)
    cells = [
        ("markdown", "# Regional sales 2024\nTotal revenue per region, and the best region."),
        ("code", "import csv\nwith open('/home/user/regional_sales.csv', newline='') as f:\n"
                 "    rows = list(csv.DictReader(f))\nprint(len(rows), 'rows')",
         f"{len(rows)} rows\n"),
        ("code", "totals = {}\nfor row in rows:\n"
                 "    totals[row['region']] = totals.get(row['region'], 0.0) + float(row['revenue'])\n"
                 "for region in sorted(totals):\n    print(f'{region}: {totals[region]:.2f}')",
         "".join(f"{r}: {totals[r]:.2f}\n" for r in sorted(totals))),
        ("code", "print('best region:', max(totals, key=totals.get))", f"best region: {best}\n"),
    ]
    for gold in (False, True):
        nb = nbformat.v4.new_notebook()
        nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}
        for i, cell in enumerate(cells):
            if cell[0] == "markdown":
                c = nbformat.v4.new_markdown_cell(cell[1])
            else:
                c = nbformat.v4.new_code_cell(cell[1])
                if gold:
                    c.execution_count = i
                    c.outputs = [nbformat.v4.new_output("stream", name="stdout", text=cell[2])]
            c.id = f"cell-{i}"
            nb.cells.append(c)
        nbformat.write(nb, str(folder / ("sales_summary_gold.ipynb" if gold else "sales_summary.ipynb")))


def sqlite(folder: Path) -> None:
    """shop.db (orders) and customer_totals_gold.db (the table the task asks for)."""
    rng = random.Random(3)
    start = datetime.date(2024, 1, 1)
    orders = [(i, rng.choice(CUSTOMERS), (start + datetime.timedelta(days=rng.randint(0, 180))).isoformat(),
               round(rng.uniform(15, 900), 2)) for i in range(1, 81)]
    for name in ("shop.db", "customer_totals_gold.db"):
        (folder / name).unlink(missing_ok=True)
    db = sqlite3.connect(folder / "shop.db")
    db.execute("CREATE TABLE orders (id INTEGER PRIMARY KEY, customer TEXT NOT NULL, order_date TEXT NOT NULL, "
               "amount REAL NOT NULL)")
    db.executemany("INSERT INTO orders VALUES (?, ?, ?, ?)", orders)
    db.commit()
    db.execute("ATTACH DATABASE ? AS gold", (str(folder / "customer_totals_gold.db"),))
    db.execute("CREATE TABLE gold.customer_totals (customer TEXT, order_count INTEGER, total REAL)")
    db.execute("INSERT INTO gold.customer_totals SELECT customer, COUNT(*), ROUND(SUM(amount), 2) FROM orders "
               "GROUP BY customer")
    db.commit()
    db.close()


def duckdb_events(folder: Path) -> None:
    """events.csv (a week of product events) and event_counts_gold.csv."""
    rng = random.Random(5)
    start = datetime.datetime(2024, 3, 4)
    events = []
    for _ in range(240):
        t = start + datetime.timedelta(seconds=rng.randint(0, 7 * 86400 - 1))
        events.append([t.strftime("%Y-%m-%d %H:%M:%S"), f"u{rng.randint(1, 40):03d}", rng.choice(EVENT_TYPES)])
    events.sort()
    (folder / "events.csv").write_text(csv_text(events, ["event_time", "user_id", "event_type"]))
    counts = Counter(e[2] for e in events)
    ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    (folder / "event_counts_gold.csv").write_text(csv_text([list(kv) for kv in ranked], ["event_type", "n"]))


def chromium(folder: Path) -> None:
    """A small intranet dashboard page linking to a quarterly report page."""
    (folder / "index.html").write_text(
        "<!doctype html><html><head><meta charset='utf-8'><title>Team dashboard</title></head><body>\n"
        "<h1>Team dashboard</h1>\n<ul>\n"
        "<li><a href='roadmap.html'>Product roadmap</a></li>\n"
        "<li><a href='report.html'>Quarterly report</a></li>\n"
        "<li><a href='oncall.html'>On-call rota</a></li>\n</ul>\n</body></html>\n")
    (folder / "report.html").write_text(
        "<!doctype html><html><head><meta charset='utf-8'><title>Quarterly report Q1 2024</title></head><body>\n"
        "<h1>Quarterly report Q1 2024</h1><p>Revenue grew 12% over Q4 2023.</p>\n</body></html>\n")


def terminal(folder: Path) -> None:
    """app.log (an application log) and errors_gold.txt (its ERROR lines, in order)."""
    rng = random.Random(13)
    start = datetime.datetime(2024, 5, 2, 8, 0, 0)
    messages = {"INFO": ["request served in {n} ms", "user u{n:03d} logged in", "cache refreshed ({n} keys)"],
                "WARN": ["slow query took {n} ms", "retrying upstream call (attempt {m})"],
                "ERROR": ["database connection lost after {n} ms", "payment service returned 503 (attempt {m})",
                          "failed to parse config line {n}"]}
    lines, t = [], start
    for _ in range(300):
        t += datetime.timedelta(seconds=rng.randint(1, 40))
        level = rng.choices(["INFO", "WARN", "ERROR"], weights=[80, 12, 8])[0]
        msg = rng.choice(messages[level]).format(n=rng.randint(1, 999), m=rng.randint(1, 5))
        lines.append(f"{t:%Y-%m-%d %H:%M:%S} {level} {msg}")
    (folder / "app.log").write_text("\n".join(lines) + "\n")
    (folder / "errors_gold.txt").write_text("".join(ln + "\n" for ln in lines if " ERROR " in ln))


def write_data() -> None:
    """Write the data files of the hand-written base-image tasks."""
    jobs = [(CALC_TASK, calc), (JUPYTER_TASK, jupyter), (DUCKDB_TASK, duckdb_events), (CHROMIUM_TASK, chromium),
            (TERMINAL_TASK, terminal)] + [(t, sqlite) for t in SQLITE_TASKS]
    for task, make in jobs:
        folder = EXAMPLES / task
        folder.mkdir(parents=True, exist_ok=True)
        make(folder)
        data = sorted(p.name for p in folder.iterdir() if p.name != f"{folder.name}.json")
        print(f"wrote {task}: {', '.join(data)}")


# --------------------------------------------------------------------------- verbose twins

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


def make_twin(rel: str, instruction: str, action_number: int) -> tuple[str, str]:
    """Write the verbose twin of the task at ``examples/<rel>`` and link both; returns (app, twin id)."""
    app, tid = rel.split("/")
    src_dir = EXAMPLES / rel
    original = json.loads((src_dir / f"{tid}.json").read_text())
    twin_id = str(uuid.uuid5(TWIN_NAMESPACE, f"verbose/{rel}"))
    twin_dir = EXAMPLES / app / twin_id
    twin_dir.mkdir(parents=True, exist_ok=True)
    for data in sorted(src_dir.iterdir()):
        if data.name != f"{tid}.json":
            shutil.copyfile(data, twin_dir / data.name)
    twin = replace_strings(original, {f"examples/{rel}/": f"examples/{app}/{twin_id}/"})
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


def write_twins() -> None:
    """Write every twin of ``VERBOSE`` and list the twins in the index files."""
    twins = [make_twin(rel, text, n) for rel, (text, n) in VERBOSE.items()]
    by_app: dict[str, list[str]] = {}
    for app, twin_id in twins:
        by_app.setdefault(app, []).append(twin_id)
    for name in TWIN_INDEXES:
        update_index(name, by_app)
    for app, twin_id in twins:
        print(f"wrote {app}/{twin_id}")


def main() -> None:
    """Write the data files, then the twins (which copy them)."""
    write_data()
    write_twins()
