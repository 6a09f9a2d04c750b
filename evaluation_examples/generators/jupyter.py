"""Jupyter task pairs (``examples/jupyter``): on the ``data`` image, write and run a notebook and fix
and run a broken one from the command line; on the ``base`` image, from the ``base:jupyter`` warm
state, the GUI pairs: run, fix, clear, extend and rename notebooks in JupyterLab's own web UI in
Chromium (``gui_pairs``), the evaluators reading the saved ``.ipynb`` files.

Regenerate with ``python3 -m evaluation_examples.generators jupyter`` from the repository
root (see the package docstring).
"""
from __future__ import annotations

import csv
import hashlib
import io
import json
import random

from .common import checked, clean, cmd, csv_text, python_check, write_pairs

NOTEBOOK_SOLUTION = r'''python3 - <<'PY'
import json, os
os.makedirs("/home/user/notebooks", exist_ok=True)
code = [
    "import pandas as pd\n",
    "customers = pd.read_csv('/home/user/projects/data/raw_customers.csv')\n",
    "counts = customers.groupby('country').size().reset_index(name='customers')\n",
    "counts = counts.sort_values(['customers', 'country'], ascending=[False, True])\n",
    "counts.to_csv('/home/user/reports/customers_by_country.csv', index=False)\n",
    "counts.head()\n",
]
nb = {"cells": [{"cell_type": "code", "execution_count": None, "id": "c1", "metadata": {}, "outputs": [],
                 "source": code}],
      "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"}},
      "nbformat": 4, "nbformat_minor": 5}
json.dump(nb, open("/home/user/notebooks/country_report.ipynb", "w"), indent=1)
PY
mkdir -p /home/user/reports && jupyter nbconvert --to notebook --execute --inplace /home/user/notebooks/country_report.ipynb'''


def broken_notebook() -> str:
    """order_report.ipynb: a notebook that fails on a wrong file name (raw_order.csv)."""
    code = ["import pandas as pd\n",
            "orders = pd.read_csv('/home/user/projects/data/raw_order.csv')\n",
            "counts = orders.groupby('status').size().reset_index(name='orders').sort_values('status')\n",
            "counts.to_csv('/home/user/reports/orders_by_status.csv', index=False)\n",
            "counts"]
    nb = {"cells": [{"cell_type": "markdown", "id": "m1", "metadata": {},
                     "source": ["# Orders by status\n", "Counts the shop's orders per status for the weekly report."]},
                    {"cell_type": "code", "execution_count": None, "id": "c1", "metadata": {}, "outputs": [],
                     "source": code}],
          "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
                       "language_info": {"name": "python"}},
          "nbformat": 4, "nbformat_minor": 5}
    return json.dumps(nb, indent=1) + "\n"


NOTEBOOKS = "/home/user/notebooks"
REGIONS = ("north", "south", "east", "west")
PRODUCTS = ("kettle", "toaster", "blender", "grinder")


def sales_csv() -> str:
    """sales.csv of the GUI pairs: units and unit price per region and product (seeded)."""
    rng = random.Random(41)  # every revenue differs: no ties in a top 3
    rows = [[region, product, rng.randint(3, 40), rng.choice((19.5, 24.0, 39.9, 54.25, 79.0))]
            for region in REGIONS for product in PRODUCTS]
    return csv_text(rows, ["region", "product", "units", "unit_price"])


#: The language_info JupyterLab writes into a notebook once the guest's kernel (ipykernel on Debian's
#: Python 3.11.2) has connected. A notebook that already holds it is not changed by being opened.
KERNEL_LANGUAGE_INFO = {"codemirror_mode": {"name": "ipython", "version": 3}, "file_extension": ".py",
                        "mimetype": "text/x-python", "name": "python", "nbconvert_exporter": "python",
                        "pygments_lexer": "ipython3", "version": "3.11.2"}


def notebook(cells: list[tuple], outputs: bool = False, saved_by_lab: bool = False) -> str:
    """An nbformat 4.5 notebook (Python 3 kernel) of ``cells``: ``("markdown", source)`` or
    ``("code", source, stdout)``; with ``outputs`` the code cells carry execution counts and their stdout.
    With ``saved_by_lab`` its language_info is the one JupyterLab writes (:data:`KERNEL_LANGUAGE_INFO`),
    as in a notebook last saved there, so that opening it leaves no unsaved changes."""
    out, n = [], 0
    for i, cell in enumerate(cells):
        source = cell[1].splitlines(keepends=True)
        if cell[0] == "markdown":
            out.append({"cell_type": "markdown", "id": f"cell-{i}", "metadata": {}, "source": source})
            continue
        n += 1
        out.append({"cell_type": "code", "execution_count": n if outputs else None, "id": f"cell-{i}",
                    "metadata": {}, "source": source,
                    "outputs": [{"name": "stdout", "output_type": "stream",
                                 "text": cell[2].splitlines(keepends=True)}] if outputs and cell[2] else []})
    nb = {"cells": out,
          "metadata": {"kernelspec": {"display_name": "Python 3 (ipykernel)", "language": "python",
                                      "name": "python3"},
                       "language_info": KERNEL_LANGUAGE_INFO if saved_by_lab else {"name": "python"}},
          "nbformat": 4, "nbformat_minor": 5}
    return json.dumps(nb, indent=1) + "\n"


#: weekly_sales.ipynb: revenue per region from sales.csv, written beside it, and the total printed.
WEEKLY_SALES = [
    ("markdown", "# Weekly sales\nRevenue per region for the Monday report."),
    ("code", "import pandas as pd\n\nsales = pd.read_csv('sales.csv')\n"
             "sales['revenue'] = sales['units'] * sales['unit_price']", ""),
    ("code", "by_region = sales.groupby('region', as_index=False)['revenue'].sum().sort_values('region')\n"
             "by_region.to_csv('revenue_by_region.csv', index=False)\nby_region", ""),
    ("code", "print(f\"total revenue: {sales['revenue'].sum():.2f}\")", ""),
]


#: margin_report.ipynb: the three best sellers by revenue, with a misspelt column (unit_prise).
MARGIN_REPORT = [
    ("markdown", "# Best sellers\nThe three region and product pairs with the most revenue."),
    ("code", "import pandas as pd\n\nsales = pd.read_csv('sales.csv')", ""),
    ("code", "sales['revenue'] = sales['units'] * sales['unit_prise']\n"
             "top = sales.sort_values('revenue', ascending=False).head(3)\n"
             "top.to_csv('top_products.csv', index=False)", ""),
    ("code", "print('best seller:', top.iloc[0]['product'], 'in the', top.iloc[0]['region'])", ""),
]
BAD_LINE = "sales['revenue'] = sales['units'] * sales['unit_prise']"
GOOD_LINE = "sales['revenue'] = sales['units'] * sales['unit_price']"

#: customer_churn.ipynb, saved with the outputs of a run: active and lost customers per month.
ACTIVE = [1200, 1185, 1172, 1190, 1164, 1150]
LOST = [31, 27, 35, 22, 40, 29]
CUSTOMER_CHURN = [
    ("markdown", "# Customer churn\nMonthly churn of the shop's subscription customers."),
    ("code", f"active = {ACTIVE}\nlost = {LOST}\nprint(len(active), 'months')", f"{len(ACTIVE)} months\n"),
    ("code", "for month, (a, l) in enumerate(zip(active, lost), 1):\n    print(f'month {month}: {l / a:.2%}')",
     "".join(f"month {m}: {l / a:.2%}\n" for m, (a, l) in enumerate(zip(ACTIVE, LOST), 1))),
    ("code", "print('mean churn:', f'{sum(lost) / sum(active):.2%}')", f"mean churn: {sum(LOST) / sum(ACTIVE):.2%}\n"),
]

#: The last line the churn notebook prints (only in its outputs, not in its code).
CHURN_OUTPUT = CUSTOMER_CHURN[-1][2].strip()
DOWNLOADS = "/home/user/Downloads"

#: inventory_check.ipynb, which the heading pair puts a Markdown title on.
INVENTORY_CHECK = [
    ("code", "import pandas as pd\n\nsales = pd.read_csv('sales.csv')", ""),
    ("code", "sales.groupby('product')['units'].sum()", ""),
]
HEADING = "# Inventory check, week 48"

#: Untitled.ipynb, which the rename pair names.
FORECAST = [
    ("code", "import pandas as pd\n\nsales = pd.read_csv('sales.csv')\n"
             "sales.groupby('region')['units'].sum() * 1.05", ""),
]

JUPYTER = "http://localhost:8888/lab"


#: The keys every JupyterLab GUI pair shares (the GUI suite, from the base image's jupyter warm state).
GUI_COMMON = {"id_seed": "gui_suite", "app": "jupyter", "snapshot": "base:jupyter", "gui_suite": True,
              "related_apps": ["jupyter", "chromium"], "category": "data_analysis_and_visualization",
              "interface": "gui"}


def code_of(cells: list[tuple]) -> list[str]:
    """The sources of the code cells among ``cells``."""
    return [c[1] for c in cells if c[0] == "code"]


def run_all(essential: bool = False) -> list[dict]:
    """GUI steps: Run > Run All Cells (``essential``: the item a cli+gui task cannot be solved without)."""
    return [
        {"gui": "click", "target": lab(".lm-MenuBar-itemLabel", "Run")},
        {"gui": "click", "target": lab(".lm-Menu-itemLabel", "Run All Cells"), **({"essential": True} if essential else {})},
    ]


def lab(css: str, text: str | None = None, **more) -> dict:
    """A GUI-step target in JupyterLab's page (its DOM; ``text`` narrows by visible text)."""
    return {"css": css, "url": JUPYTER, **({"text": text} if text else {}), **more}


def copy_in(*names: str) -> list[dict]:
    """Setup steps: a fresh /home/user/notebooks holding the task folder's files ``names``."""
    return [clean(NOTEBOOKS)] + [
        {"type": "copyfile_from_host_to_guest", "parameters": {"src": f"{{folder}}/{name}",
                                                               "dest": f"{NOTEBOOKS}/{name}"}}
        for name in names]


def nb_check(name: str, body: str) -> str:
    """eval.sh lines: load /home/user/notebooks/``name`` as ``nb`` (``code``: its code cells, ``src(c)``:
    a cell's source as one string) and run the Python ``body``, which prints why it fails, if it does."""
    return python_check(f"""import csv, json
try:
    nb = json.load(open({NOTEBOOKS + "/" + name!r}))
except (OSError, ValueError) as exc:
    raise SystemExit(f"cannot read the notebook: {{exc}}")
def src(c):
    return "".join(c["source"]) if isinstance(c["source"], list) else c["source"]
code = [c for c in nb["cells"] if c["cell_type"] == "code"]
{body}
""", prefix=f"{name}: ")


def ran_in_order(sources: list[str], lenient: bool = False) -> str:
    """``nb_check`` body: the code cells are ``sources`` (``lenient``: as many cells as ``sources``, their code
    free), each run once, in order, with no error output."""
    same = f"len(code) != {len(sources)}" if lenient else f"[src(c) for c in code] != {sources!r}"
    return f"""if {same}:
    print("the code cells are not the notebook's own (edited, added or removed)")
elif [c.get("execution_count") for c in code] != list(range(1, len(code) + 1)):
    print("not saved after running all cells once, top to bottom: execution counts "
          f"{{[c.get('execution_count') for c in code]}}")
elif any(o.get("output_type") == "error" for c in code for o in c.get("outputs", [])):
    print("a cell's output is an error")
"""


def stdout_of(cell: str) -> str:
    """Python: the stdout text of the code cell ``cell`` (an expression)."""
    return f"''.join(''.join(o.get('text', '')) for o in {cell}.get('outputs', []) if o.get('name') == 'stdout')"


def open_item(text: str, **extra) -> list[dict]:
    """GUI steps: open the file browser's item ``text`` (a folder or a file): select it with a click, then
    Enter. Not a double-click: under emulation on a loaded host the guest can stall between the two
    clicks for longer than the browser's double-click time, and the folder stays closed."""
    return [{"gui": "click", "target": lab(".jp-DirListing-item .jp-DirListing-itemText", text), **extra},
            {"gui": "key", "keys": "enter"}]


#: Opening a notebook of /home/user/notebooks from JupyterLab's file browser.
def open_notebook(name: str) -> list[dict]:
    """GUI steps: open ``name`` from the file browser (into notebooks/, then the file) and wait for its kernel."""
    return [
        *open_item("notebooks", note="the file browser lists /home/user"),
        *open_item(name),
        {"gui": "wait", "for": lab(".jp-StatusBar-TextItem", "(ipykernel) | Idle"),
         "note": "the kernel started and is connected (a run asked for before that asks for a kernel)"},
    ]


def gui_pairs() -> list[dict]:
    """GUI pairs: notebooks worked on in JupyterLab's own web UI in Chromium (the GUI suite)."""
    common = GUI_COMMON
    margin_fixed = [c.replace(BAD_LINE, GOOD_LINE) for c in code_of(MARGIN_REPORT)]
    return [
        {
            **common,
            "name": "jupyter_gui_run_all",
            "action_number": 4,
            "source": ["https://jupyterlab.readthedocs.io/en/stable/user/notebook.html"],
            "abstract": "In JupyterLab (open in Chromium), run every cell of the notebook "
                        "/home/user/notebooks/weekly_sales.ipynb from the top and save it with its outputs. Do not "
                        "change its code.",
            "verbose": "Run a notebook in JupyterLab's web UI:\n"
                       "1. In the JupyterLab tab in Chromium, double-click the folder notebooks in the file browser "
                       "on the left, then weekly_sales.ipynb.\n"
                       "2. Wait for the kernel (Python 3) to be idle, then choose Run > Run All Cells.\n"
                       "3. When the last cell has printed the total revenue, save with File > Save Notebook "
                       "(Ctrl+S).",
            "files": {"sales.csv": sales_csv(), "weekly_sales.ipynb": notebook(WEEKLY_SALES)},
            "config": copy_in("sales.csv", "weekly_sales.ipynb"),
            "eval": nb_check("weekly_sales.ipynb", ran_in_order(code_of(WEEKLY_SALES)) + f"""else:
    rows = list(csv.DictReader(open({NOTEBOOKS + "/sales.csv"!r})))
    total = sum(int(r["units"]) * float(r["unit_price"]) for r in rows)
    if {stdout_of("code[-1]")}.strip() != f"total revenue: {{total:.2f}}":
        print(f"the last cell's output is {{{stdout_of("code[-1]")}!r}}, expected total revenue: {{total:.2f}}")
""") + """python3 - <<'PY' > /tmp/desktop_env_eval/ref.csv
import csv
rev = {}
for r in csv.DictReader(open("/home/user/notebooks/sales.csv")):
    rev[r["region"]] = rev.get(r["region"], 0.0) + int(r["units"]) * float(r["unit_price"])
print("region,revenue")
for region in sorted(rev):
    print(f"{region},{rev[region]:.2f}")
PY
why=$(same_csv /home/user/notebooks/revenue_by_region.csv /tmp/desktop_env_eval/ref.csv ordered 2>&1) || fail "revenue_by_region.csv: $why"
echo EVAL_OK
""",
            "solution": open_notebook("weekly_sales.ipynb") + run_all() + [
                {"gui": "wait", "for": lab(".jp-OutputArea-output", "total revenue:"),
                 "note": "the last cell printed"},
                {"gui": "key", "keys": "ctrl+s"},
                {"gui": "wait", "for": {"file": f"{NOTEBOOKS}/weekly_sales.ipynb", "contains": '"execution_count": 3'},
                 "note": "saved after the third code cell ran"},
            ],
        },
        {
            **common,
            "name": "jupyter_gui_fix_cell",
            "action_number": 6,
            "source": ["https://jupyterlab.readthedocs.io/en/stable/user/notebook.html",
                       "https://pandas.pydata.org/docs/user_guide/indexing.html"],
            "abstract": "The notebook /home/user/notebooks/margin_report.ipynb stops with an error. Fix its code in "
                        "JupyterLab (open in Chromium; the data in sales.csv is right), then run all of its cells "
                        "and save it, so that it writes top_products.csv beside it.",
            "verbose": "Fix a failing cell in JupyterLab's web UI:\n"
                       "1. In the JupyterLab tab, open the folder notebooks and then margin_report.ipynb.\n"
                       "2. The second code cell refers to a column unit_prise, which sales.csv does not have; "
                       "its column is unit_price. Correct the name in that cell.\n"
                       "3. Choose Run > Run All Cells; the last cell prints the best seller.\n"
                       "4. Save the notebook (Ctrl+S).",
            "files": {"sales.csv": sales_csv(), "margin_report.ipynb": notebook(MARGIN_REPORT)},
            "config": copy_in("sales.csv", "margin_report.ipynb"),
            "eval": f"""echo '{hashlib.sha256(sales_csv().encode()).hexdigest()}  /home/user/notebooks/sales.csv' | sha256sum -c --status || fail "sales.csv was changed (the data is right; the code is not)"
""" + nb_check("margin_report.ipynb", f"""if any("unit_prise" in src(c) for c in code):
    print("a cell still reads the column unit_prise")
el""" + ran_in_order(margin_fixed, lenient=True)) + """python3 - <<'PY' > /tmp/desktop_env_eval/ref.csv
import csv
rows = list(csv.DictReader(open("/home/user/notebooks/sales.csv")))
for r in rows:
    r["revenue"] = int(r["units"]) * float(r["unit_price"])
print("region,product,units,unit_price,revenue")
for r in sorted(rows, key=lambda r: -r["revenue"])[:3]:
    print(",".join(str(r[k]) for k in ("region", "product", "units", "unit_price", "revenue")))
PY
why=$(same_csv /home/user/notebooks/top_products.csv /tmp/desktop_env_eval/ref.csv ordered 2>&1) || fail "top_products.csv: $why"
echo EVAL_OK
""",
            "solution": open_notebook("margin_report.ipynb") + [
                {"gui": "click", "target": lab(".jp-Cell .cm-line", "unit_prise"), "at": [0.98, 0.5],
                 "note": "the end of the failing line"},
                {"gui": "key", "keys": "shift+home"},
                {"gui": "type", "text": GOOD_LINE},
                {"gui": "wait", "for": lab(".jp-Cell .cm-line", "['unit_price']")},
            ] + run_all() + [
                {"gui": "wait", "for": lab(".jp-OutputArea-output", "best seller:")},
                {"gui": "key", "keys": "ctrl+s"},
                {"gui": "wait", "for": {"file": f"{NOTEBOOKS}/margin_report.ipynb", "contains": '"execution_count": 3'},
                 "note": "saved after the third code cell ran"},
            ],
        },
        {
            **common,
            "name": "jupyter_gui_clear_outputs",
            "action_number": 4,
            "source": ["https://jupyterlab.readthedocs.io/en/stable/user/notebook.html"],
            "abstract": "Before /home/user/notebooks/customer_churn.ipynb goes into version control, clear all of "
                        "its outputs in JupyterLab (open in Chromium) and save it. Leave its cells as they are.",
            "verbose": "Clear a notebook's outputs in JupyterLab's web UI:\n"
                       "1. In the JupyterLab tab, open the folder notebooks and then customer_churn.ipynb.\n"
                       "2. Choose Edit > Clear Outputs of All Cells.\n"
                       "3. Save the notebook (Ctrl+S).",
            "files": {"customer_churn.ipynb": notebook(CUSTOMER_CHURN, outputs=True)},
            "config": copy_in("customer_churn.ipynb"),
            "eval": nb_check("customer_churn.ipynb", f"""cells = [(c["cell_type"], src(c)) for c in nb["cells"]]
if cells != {[(c[0], c[1]) for c in CUSTOMER_CHURN]!r}:
    print("the cells are not the notebook's own (edited, added or removed)")
elif any(c.get("outputs") for c in code):
    print(f"{{sum(bool(c.get('outputs')) for c in code)}} code cell(s) still have outputs")
elif any(c.get("execution_count") is not None for c in code):
    print("execution counts are left: clear the outputs without running the cells again")
""") + "echo EVAL_OK\n",
            "solution": open_notebook("customer_churn.ipynb") + [
                {"gui": "click", "target": lab(".lm-MenuBar-itemLabel", "Edit")},
                {"gui": "click", "target": lab(".lm-Menu-itemLabel", "Clear Outputs of All Cells")},
                {"gui": "wait", "for": {"gone": lab(".jp-OutputArea-output")}},
                {"gui": "key", "keys": "ctrl+s"},
                {"gui": "wait", "for": {"file": f"{NOTEBOOKS}/customer_churn.ipynb", "lacks": "output_type"}},
            ],
        },
        {
            **common,
            "name": "jupyter_gui_markdown_heading",
            "action_number": 6,
            "source": ["https://jupyterlab.readthedocs.io/en/stable/user/notebook.html",
                       "https://jupyterlab.readthedocs.io/en/stable/user/commands.html"],
            "abstract": f"In JupyterLab (open in Chromium), give the notebook /home/user/notebooks/inventory_check.ipynb "
                        f"a Markdown cell at the very top reading \"{HEADING}\" (a level-1 heading), and save it. "
                        f"Do not change the other cells.",
            "verbose": "Add a Markdown heading cell in JupyterLab's web UI:\n"
                       "1. In the JupyterLab tab, open the folder notebooks and then inventory_check.ipynb.\n"
                       "2. Click the first cell's prompt area and press Esc (command mode), then A to insert a cell "
                       "above it and M to make it a Markdown cell.\n"
                       f"3. Press Enter to edit it and type: {HEADING}\n"
                       "4. Save the notebook (Ctrl+S).",
            "files": {"sales.csv": sales_csv(), "inventory_check.ipynb": notebook(INVENTORY_CHECK)},
            "config": copy_in("sales.csv", "inventory_check.ipynb"),
            "eval": nb_check("inventory_check.ipynb", f"""cells = [(c["cell_type"], src(c).strip()) for c in nb["cells"]]
if not cells or cells[0] != ("markdown", {HEADING!r}):
    print(f"the first cell is {{cells[0] if cells else None}}, expected the Markdown heading")
elif cells[1:] != {[(c[0], c[1]) for c in INVENTORY_CHECK]!r}:
    print(f"the cells after the heading are not the notebook's own: {{cells[1:]}}")
""") + "echo EVAL_OK\n",
            "solution": open_notebook("inventory_check.ipynb") + [
                {"gui": "click", "target": lab(".jp-Cell .jp-InputPrompt", index=0),
                 "note": "selects the first cell"},
                {"gui": "key", "keys": ["escape", "a", "m", "enter"],
                 "note": "command mode; a new cell above; Markdown; edit it"},
                {"gui": "type", "text": HEADING},
                {"gui": "key", "keys": "ctrl+s"},
                {"gui": "wait", "for": {"file": f"{NOTEBOOKS}/inventory_check.ipynb", "contains": HEADING}},
            ],
        },
        {
            **common,
            "name": "jupyter_gui_rename",
            "action_number": 4,
            "source": ["https://jupyterlab.readthedocs.io/en/stable/user/files.html"],
            "abstract": "Using JupyterLab's file browser (in Chromium), rename the notebook "
                        "/home/user/notebooks/Untitled.ipynb to region_forecast.ipynb in the same folder.",
            "verbose": "Rename a notebook in JupyterLab's web UI:\n"
                       "1. In the JupyterLab tab, double-click the folder notebooks in the file browser.\n"
                       "2. Right-click Untitled.ipynb and choose Rename.\n"
                       "3. Type region_forecast (the .ipynb ending stays) and press Enter.",
            "files": {"sales.csv": sales_csv(), "Untitled.ipynb": notebook(FORECAST)},
            "config": copy_in("sales.csv", "Untitled.ipynb"),
            "eval": """[ ! -e /home/user/notebooks/Untitled.ipynb ] || fail "Untitled.ipynb is still there"
""" + nb_check("region_forecast.ipynb", f"""if [(c["cell_type"], src(c)) for c in nb["cells"]] != {[(c[0], c[1]) for c in FORECAST]!r}:
    print("it is not the notebook that was Untitled.ipynb")
""") + "echo EVAL_OK\n",
            "solution": [
                *open_item("notebooks"),
                {"gui": "right_click", "target": lab(".jp-DirListing-item .jp-DirListing-itemText", "Untitled.ipynb")},
                {"gui": "click", "target": lab(".lm-Menu-itemLabel", "Rename")},
                {"gui": "wait", "for": lab("input.jp-DirListing-editor")},
                {"gui": "key", "keys": "ctrl+a"},
                {"gui": "type", "text": "region_forecast.ipynb\n"},
                {"gui": "wait", "for": {"file": f"{NOTEBOOKS}/region_forecast.ipynb"}},
            ],
        },
        {
            **common,
            "name": "jupyter_gui_export_html",
            "action_number": 5,
            "source": ["https://jupyterlab.readthedocs.io/en/stable/user/export.html"],
            "abstract": "Export the notebook /home/user/notebooks/customer_churn.ipynb, with its outputs, as an HTML "
                        "page through JupyterLab's own export (in Chromium), so that it lands in "
                        "/home/user/Downloads as customer_churn.html.",
            "verbose": "Export a notebook as HTML from JupyterLab's web UI:\n"
                       "1. In the JupyterLab tab, open the folder notebooks and then customer_churn.ipynb.\n"
                       "2. If its tab shows the unsaved-changes dot, save it with Ctrl+S and wait until the dot "
                       "is gone.\n"
                       "3. Choose File > Save and Export Notebook As > HTML.\n"
                       "4. Confirm the Export as HTML dialog with Ok; Chromium downloads customer_churn.html to "
                       "/home/user/Downloads.",
            "files": {"customer_churn.ipynb": notebook(CUSTOMER_CHURN, outputs=True, saved_by_lab=True)},
            "config": copy_in("customer_churn.ipynb") + [clean(f"{DOWNLOADS}/customer_churn.html")],
            "eval": f"""page={DOWNLOADS}/customer_churn.html
[ -f "$page" ] || fail "$page does not exist"
head -c 300 "$page" | grep -qi '<!DOCTYPE html' || fail "$page is not an HTML page"
grep -qF '{CHURN_OUTPUT}' "$page" || fail "$page lacks the notebook's output ({CHURN_OUTPUT})"
echo EVAL_OK
""",
            "solution": open_notebook("customer_churn.ipynb") + [
                # No unsaved changes before the export: with them the export saves first and opens the
                # download in a new tab when the save returns, which under load outlasted the Ok click's
                # user activation, so Chromium blocked the tab as a pop-up; and a Ctrl+S there once met
                # JupyterLab's autosave (every 120 s while the notebook has changes) and stopped at its
                # "File Changed" dialog (robustness passes, 2026-11-28). The notebook holds the kernel's
                # language_info, so opening it changes nothing; were it changed, the autosave clears the
                # dot without a save of ours racing it.
                {"gui": "wait", "for": lab(".lm-TabBar-tab.lm-mod-current:not(.jp-mod-dirty) .lm-TabBar-tabLabel",
                                           "customer_churn.ipynb"), "note": "the notebook's tab shows no changes"},
                {"gui": "click", "target": lab(".lm-MenuBar-itemLabel", "File")},
                {"gui": "click", "target": lab(".lm-Menu-itemLabel", "Save and Export Notebook As")},
                {"gui": "click", "target": lab(".lm-Menu-itemLabel", "HTML")},
                {"gui": "click", "target": lab(".jp-Dialog button", "Ok"), "note": "Export as HTML: sanitized"},
                {"gui": "wait", "for": {"file": f"{DOWNLOADS}/customer_churn.html", "contains": CHURN_OUTPUT}},
            ],
        },
        {
            **common,
            "name": "jupyter_gui_r_kernel_infeasible",
            "action_number": 4,
            "infeasible": True,
            "source": ["https://jupyterlab.readthedocs.io/en/stable/user/notebook.html",
                       "https://irkernel.github.io/"],
            "abstract": "In JupyterLab, switch the notebook /home/user/notebooks/weekly_sales.ipynb to the R kernel "
                        "(IRkernel) and run it there. If this cannot be done here, say so.",
            "verbose": "Run a notebook on the R kernel in JupyterLab's web UI:\n"
                       "1. Open notebooks/weekly_sales.ipynb in the JupyterLab tab.\n"
                       "2. Kernel > Change Kernel..., and choose R.\n"
                       "3. Run all cells.\n"
                       "If no R kernel is installed (and none can be installed without network access), do not "
                       "run it on Python instead: report that the task cannot be done.",
            "files": {"sales.csv": sales_csv(), "weekly_sales.ipynb": notebook(WEEKLY_SALES)},
            "config": copy_in("sales.csv", "weekly_sales.ipynb"),
        },
    ]


#: stock_plan.ipynb: next month's order per product from units_by_product.csv (which the terminal writes).
STOCK_PLAN = [
    ("markdown", "# Stock plan\nNext month's order: this month's units per product plus a fifth."),
    ("code", "import pandas as pd\n\nunits = pd.read_csv('units_by_product.csv')", ""),
    ("code", "for product, n in zip(units['product'], units['units']):\n"
             "    print(f'order {product}: {round(n * 1.2)}')", ""),
]
UNITS_SQL = ("COPY (SELECT product, sum(units) AS units FROM read_csv_auto('/home/user/notebooks/sales.csv') "
             "GROUP BY product ORDER BY product) TO '/home/user/notebooks/units_by_product.csv' (HEADER)")


def cli_gui_pairs() -> list[dict]:
    """cli+gui pairs: the terminal and JupyterLab's web UI in one task (the GUI suite); the essential
    GUI item is the run of the notebook, without which the task scores 0."""
    common = {**GUI_COMMON, "related_apps": [*GUI_COMMON["related_apps"], "terminal"], "interface": "cli+gui"}
    units: dict[str, int] = {}
    for row in csv.DictReader(io.StringIO(sales_csv())):
        units[row["product"]] = units.get(row["product"], 0) + int(row["units"])
    orders = "".join(f"order {p}: {round(units[p] * 1.2)}\n" for p in sorted(units))
    return [
        {
            **common,
            "name": "jupyter_duckdb_then_notebook",
            "action_number": 6,
            "source": ["https://duckdb.org/docs/stable/sql/statements/copy.html",
                       "https://jupyterlab.readthedocs.io/en/stable/user/notebook.html"],
            "abstract": "The notebook /home/user/notebooks/stock_plan.ipynb reads units_by_product.csv, which does "
                        "not exist yet. With the duckdb command in a terminal, write it beside the notebook from "
                        "sales.csv (header product,units: total units per product, by product name), then run "
                        "all of the notebook's cells in JupyterLab (open in Chromium) and save it.",
            "verbose": "Prepare a notebook's input in the terminal, then run the notebook in JupyterLab:\n"
                       "1. Open a terminal and run: duckdb -c \"" + UNITS_SQL.replace("'", "'") + "\"\n"
                       "2. In the JupyterLab tab in Chromium, open the folder notebooks and then stock_plan.ipynb; "
                       "wait for the kernel to be idle.\n"
                       "3. Choose Run > Run All Cells; the last cell prints one order line per product.\n"
                       "4. Save the notebook (Ctrl+S).",
            "files": {"sales.csv": sales_csv(), "stock_plan.ipynb": notebook(STOCK_PLAN)},
            "config": copy_in("sales.csv", "stock_plan.ipynb"),
            "eval": f"""printf '%s\\n' product,units {" ".join(f"{p},{units[p]}" for p in sorted(units))} > /tmp/desktop_env_eval/ref.csv
why=$(same_csv /home/user/notebooks/units_by_product.csv /tmp/desktop_env_eval/ref.csv ordered 2>&1) || fail "units_by_product.csv: $why"
""" + nb_check("stock_plan.ipynb", ran_in_order(code_of(STOCK_PLAN)) + f"""elif {stdout_of("code[-1]")} != {orders!r}:
    print(f"the last cell printed {{{stdout_of("code[-1]")}!r}}")
""") + "echo EVAL_OK\n",
            "solution": [cmd(f'duckdb -c "{UNITS_SQL}"')] + open_notebook("stock_plan.ipynb") + run_all(essential=True) + [
                {"gui": "wait", "for": lab(".jp-OutputArea-output", "order toaster:")},
                {"gui": "key", "keys": "ctrl+s"},
                {"gui": "wait", "for": {"file": f"{NOTEBOOKS}/stock_plan.ipynb", "contains": "order toaster:"}},
            ],
        },
        {
            **common,
            "name": "jupyter_notebook_then_sqlite",
            "action_number": 6,
            "source": ["https://jupyterlab.readthedocs.io/en/stable/user/notebook.html",
                       "https://sqlite.org/cli.html#importing_files_as_csv_or_other_formats"],
            "abstract": "Run all cells of /home/user/notebooks/weekly_sales.ipynb in JupyterLab (open in Chromium; "
                        "it writes revenue_by_region.csv beside it) and save it; then, in a terminal, load that "
                        "CSV into the SQLite database /home/user/notebooks/reports.db as the table "
                        "revenue_by_region (columns region and revenue).",
            "verbose": "Run a notebook in JupyterLab, then load its output into SQLite in the terminal:\n"
                       "1. In the JupyterLab tab in Chromium, open the folder notebooks and then weekly_sales.ipynb; "
                       "wait for the kernel to be idle.\n"
                       "2. Choose Run > Run All Cells and save the notebook (Ctrl+S) once the total revenue is "
                       "printed.\n"
                       "3. In a terminal: cd /home/user/notebooks && sqlite3 reports.db \".import --csv "
                       "revenue_by_region.csv revenue_by_region\"",
            "files": {"sales.csv": sales_csv(), "weekly_sales.ipynb": notebook(WEEKLY_SALES)},
            "config": copy_in("sales.csv", "weekly_sales.ipynb"),
            "eval": nb_check("weekly_sales.ipynb", ran_in_order(code_of(WEEKLY_SALES))) + checked("""import csv, sqlite3
rev = {}
for r in csv.DictReader(open("/home/user/notebooks/sales.csv")):
    rev[r["region"]] = rev.get(r["region"], 0.0) + int(r["units"]) * float(r["unit_price"])
try:
    con = sqlite3.connect("file:/home/user/notebooks/reports.db?mode=ro", uri=True)
    rows = con.execute("SELECT region, revenue FROM revenue_by_region").fetchall()
except sqlite3.Error as exc:
    raise SystemExit(f"reports.db: {exc}")
got = sorted((str(r), float(v)) for r, v in rows)
if [g[0] for g in got] != sorted(rev) or any(abs(v - rev[r]) > 0.01 for r, v in got):
    print(f"the table holds {got}, expected {sorted((r, round(v, 2)) for r, v in rev.items())}")
"""),
            "solution": open_notebook("weekly_sales.ipynb") + run_all(essential=True) + [
                {"gui": "wait", "for": lab(".jp-OutputArea-output", "total revenue:")},
                {"gui": "key", "keys": "ctrl+s"},
                {"gui": "wait", "for": {"file": f"{NOTEBOOKS}/weekly_sales.ipynb", "contains": '"execution_count": 3'}},
                cmd("cd /home/user/notebooks && sqlite3 reports.db '.import --csv revenue_by_region.csv "
                    "revenue_by_region'"),
            ],
        },
    ]


def pairs() -> list[dict]:
    """The task pairs of this module (``common`` describes their keys)."""
    return cli_pairs() + gui_pairs() + cli_gui_pairs()


def cli_pairs() -> list[dict]:
    """The command-line pairs (data batches 2 and 5)."""
    return [
        {
            "name": "jupyter_customers_by_country",
            "id_seed": "data_batch2",
            "app": "jupyter",
            "category": "data_analysis_and_visualization",
            "interface": "cli",
            "action_number": 4,
            "related_apps": ["jupyter", "terminal"],
            "source": ["https://pandas.pydata.org/docs/user_guide/groupby.html",
                       "https://nbconvert.readthedocs.io/en/latest/execute_api.html"],
            "abstract": "Create a Jupyter notebook /home/user/notebooks/country_report.ipynb (Python 3 kernel) that "
                        "reads /home/user/projects/data/raw_customers.csv with pandas and writes "
                        "/home/user/reports/customers_by_country.csv with the header country,customers (number of "
                        "customers per country, most first, ties by country). Execute the notebook so it is saved "
                        "with its outputs.",
            "verbose": "Write and run a small analysis notebook:\n"
                       "1. Create the folders /home/user/notebooks and /home/user/reports.\n"
                       "2. Create country_report.ipynb in /home/user/notebooks (JupyterLab: `jupyter lab` in a "
                       "terminal, then File > New > Notebook with the Python 3 kernel).\n"
                       "3. In a code cell: read raw_customers.csv with pd.read_csv, "
                       "groupby('country').size().reset_index(name='customers'), sort by customers descending "
                       "then country ascending, and to_csv('/home/user/reports/customers_by_country.csv', "
                       "index=False).\n"
                       "4. Run the cell and save the notebook (or run `jupyter nbconvert --to notebook --execute "
                       "--inplace` on it).",
            "config": [clean("/home/user/notebooks/country_report.ipynb",
                             "/home/user/reports/customers_by_country.csv")],
            "eval": """out=/home/user/reports/customers_by_country.csv
nb=/home/user/notebooks/country_report.ipynb
[ -f "$nb" ] || fail "$nb does not exist"
python3 - "$nb" <<'PY' || fail "the notebook was not executed and saved with outputs"
import json, sys
cells = [c for c in json.load(open(sys.argv[1])).get("cells", []) if c.get("cell_type") == "code"]
sys.exit(0 if cells and any(c.get("execution_count") for c in cells) else 1)
PY
[ -f "$out" ] || fail "$out does not exist"
python3 - <<'PY' > /tmp/desktop_env_eval/ref.csv
import csv, collections
with open("/home/user/projects/data/raw_customers.csv") as f:
    n = collections.Counter(r["country"] for r in csv.DictReader(f))
print("country,customers")
for c, k in sorted(n.items(), key=lambda x: (-x[1], x[0])):
    print(f"{c},{k}")
PY
why=$(same_csv "$out" /tmp/desktop_env_eval/ref.csv ordered 2>&1) || fail "$why"
echo EVAL_OK
""",
            "solution": [cmd(NOTEBOOK_SOLUTION)],
        },
        {
            "name": "jupyter_fix_broken_notebook",
            "id_seed": "data_batch5",
            "app": "jupyter",
            "category": "data_analysis_and_visualization",
            "interface": "cli",
            "action_number": 3,
            "related_apps": ["jupyter", "terminal"],
            "source": ["https://pandas.pydata.org/docs/reference/api/pandas.read_csv.html",
                       "https://nbconvert.readthedocs.io/en/latest/usage.html#convert-notebook"],
            "abstract": "The notebook /home/user/notebooks/order_report.ipynb fails when run. Fix it (the data it "
                        "needs is in /home/user/projects/data) and run it so that it is saved with its outputs and "
                        "writes /home/user/reports/orders_by_status.csv.",
            "verbose": "Fix and run a failing notebook:\n"
                       "1. Run it to see the error: `jupyter nbconvert --to notebook --execute --inplace "
                       "/home/user/notebooks/order_report.ipynb` (or open it in JupyterLab).\n"
                       "2. The FileNotFoundError names raw_order.csv; the file in /home/user/projects/data is "
                       "raw_orders.csv. Correct the path in the code cell.\n"
                       "3. Run it again and save it with its outputs; /home/user/reports/orders_by_status.csv now "
                       "exists with the header status,orders.",
            "files": {"order_report.ipynb": broken_notebook()},
            "config": [clean("/home/user/notebooks/order_report.ipynb", "/home/user/reports/orders_by_status.csv"),
                       {"type": "execute", "parameters": {"command": ["mkdir", "-p", "/home/user/reports"]}},
                       {"type": "copyfile_from_host_to_guest", "parameters": {
                           "src": "{folder}/order_report.ipynb", "dest": "/home/user/notebooks/order_report.ipynb"}}],
            "eval": """nb=/home/user/notebooks/order_report.ipynb
out=/home/user/reports/orders_by_status.csv
python3 - "$nb" <<'PY' || fail "the notebook is not saved with outputs from a run without errors"
import json, sys
cells = [c for c in json.load(open(sys.argv[1])).get("cells", []) if c.get("cell_type") == "code"]
ran = cells and all(c.get("execution_count") for c in cells)
errors = any(o.get("output_type") == "error" for c in cells for o in c.get("outputs", []))
sys.exit(0 if ran and not errors else 1)
PY
[ -f "$out" ] || fail "$out does not exist"
python3 - <<'PY' > /tmp/desktop_env_eval/ref.csv
import csv, collections
with open("/home/user/projects/data/raw_orders.csv", newline="") as f:
    n = collections.Counter(r["status"] for r in csv.DictReader(f))
print("status,orders")
for s in sorted(n):
    print(f"{s},{n[s]}")
PY
why=$(same_csv "$out" /tmp/desktop_env_eval/ref.csv ordered 2>&1) || fail "$why"
echo EVAL_OK
""",
            "solution": [cmd("sed -i 's#/raw_order\\.csv#/raw_orders.csv#' /home/user/notebooks/order_report.ipynb && "
                             "jupyter nbconvert --to notebook --execute --inplace /home/user/notebooks/order_report.ipynb")],
        },
    ]


def main() -> None:
    """Write this module's tasks and index them."""
    write_pairs(pairs())
