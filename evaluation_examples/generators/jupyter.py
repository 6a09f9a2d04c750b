"""Jupyter task pairs (``examples/jupyter``) on the ``data`` image: write and run a notebook,
fix and run a broken one.

Regenerate with ``python3 -m evaluation_examples.generators jupyter`` from the repository
root (see the package docstring).
"""
from __future__ import annotations

import json

from .common import clean, cmd, write_pairs

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


def pairs() -> list[dict]:
    """The task pairs of this module (``common`` describes their keys)."""
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
