"""Generate the data files of the smoke suite (base image): ``python3 evaluation_examples/generators/smoke_base.py``.

Synthetic but realistic data (a shop's orders, regional sales, product events, an
application log), drawn from fixed seeds so every run writes byte-identical CSV, log,
HTML and notebook files (xlsx and sqlite files hold identical data; their container
bytes may differ with library versions). Each file lands in the folder of the task that
uses it, together with the gold file the evaluator compares against. Rerun after
editing; commit what changes.
"""
from __future__ import annotations

import argparse
import csv
import datetime
import random
import sqlite3
from collections import Counter
from pathlib import Path

from xlsx_gold import save_gold

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"

CALC_TASK = "calc/c41e7a52-2f0b-4d8e-9a61-5b3c7d9e1f20"
JUPYTER_TASK = "jupyter/5d2f8b14-6a3c-4e97-b1d0-8c4e2a6f9b31"
SQLITE_TASKS = ("sqlite3/9b7c3e21-4d5a-4f68-8e2b-1a9c6d3f5e42", "sqlite3/2e8d4a63-7b1c-4a95-9f3e-6c2b8d1a4f53")
DUCKDB_TASK = "duckdb/71f4c9a8-3e2d-4b6a-a5c7-9d8e1f2b3c64"
CHROMIUM_TASK = "chromium/a63b2d95-8c4f-4e1a-b7d2-3f5e9c1a6d75"
TERMINAL_TASK = "terminal/e05a7c36-1b9d-4f2e-8a4c-7d6b3e9f2a86"

PRODUCTS = [("Desk lamp", 24.5), ("USB-C cable", 9.99), ("Notebook A5", 3.75), ("Office chair", 149.0),
            ("Monitor stand", 39.9), ("Wireless mouse", 19.95), ("Keyboard", 44.0), ("Webcam", 59.5),
            ("Headset", 72.25), ("Desk mat", 14.8)]
CUSTOMERS = ["Acme Corp", "Birch & Co", "Cobalt Labs", "Dune Foods", "Elm Street Bakery", "Fjord Shipping"]
REGIONS = ["North", "South", "East", "West"]
EVENT_TYPES = ["page_view", "page_view", "page_view", "search", "search", "add_to_cart", "checkout", "signup"]


def _write_csv(path: Path, header: list[str], rows: list[list]) -> None:
    with open(path, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(header)
        w.writerows(rows)


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
            wb.save(folder / "sales.xlsx")


def jupyter(folder: Path) -> None:
    """regional_sales.csv, the notebook that summarises it (no outputs) and the gold (with outputs)."""
    import nbformat

    rng = random.Random(11)
    rows = []
    for month in range(1, 13):
        for region in REGIONS:
            rows.append([f"2024-{month:02d}", region, round(rng.uniform(8000, 25000), 2)])
    _write_csv(folder / "regional_sales.csv", ["month", "region", "revenue"], rows)
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
    _write_csv(folder / "events.csv", ["event_time", "user_id", "event_type"], events)
    counts = Counter(e[2] for e in events)
    ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    _write_csv(folder / "event_counts_gold.csv", ["event_type", "n"], [list(kv) for kv in ranked])


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--examples", type=Path, default=EXAMPLES, help="the examples/ folder to write into")
    args = parser.parse_args()
    jobs = [(CALC_TASK, calc), (JUPYTER_TASK, jupyter), (DUCKDB_TASK, duckdb_events), (CHROMIUM_TASK, chromium),
            (TERMINAL_TASK, terminal)] + [(t, sqlite) for t in SQLITE_TASKS]
    for task, make in jobs:
        folder = args.examples / task
        folder.mkdir(parents=True, exist_ok=True)
        make(folder)
        data = sorted(p.name for p in folder.iterdir() if p.name != f"{folder.name}.json")
        print(f"wrote {task}: {', '.join(data)}")


if __name__ == "__main__":
    main()
