"""Generate data-image batch 2: ``python3 evaluation_examples/generators/data_batch2.py``.

Ten more task pairs on the ``data`` image, written the same way as batch 1 (see
``data_batch1.py`` for the conventions: verbose/abstract pairs, ``eval.sh`` evaluators
that recompute the answer in the guest and print ``EVAL_OK`` / ``EVAL_FAIL: why``). Where
the right end state is not recomputable from untouched sources in the guest (a salary
update, a de-duplication), this script derives it from the image's own sample generator
(``make_samples.py``, deterministic) or from the data it draws here, and the evaluator
compares a digest.
"""
from __future__ import annotations

import importlib.util
import random
from pathlib import Path

import data_batch1 as b1
from xlsx_gold import save_gold
from data_batch1 import START_MARIADB, START_POSTGRES, bash, clean, cmd, dagster_run_check

REPO = Path(__file__).resolve().parents[2]
PROFILE_FILES = REPO / "desktop_env/image/profiles/data/files"
SAMPLE_HOME = PROFILE_FILES / "usr/local/share/desktop-env/data/home"


def samples() -> dict:
    """The image's sample data, drawn exactly as the image build draws it."""
    path = PROFILE_FILES / "usr/local/lib/desktop-env/data/make_samples.py"
    spec = importlib.util.spec_from_file_location("make_samples", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.build(random.Random(mod.SEED))


# --------------------------------------------------------------------------- MariaDB raise

RAISE_DEPT, RAISE_DATE = "Data", "2025-07-01"


def salary_digests() -> tuple[str, str]:
    """The text MariaDB's digest query hashes, before and after the right raise (md5 done in eval)."""
    import hashlib
    d = samples()
    dept_id = next(i for i, name, _loc in d["departments"] if name == RAISE_DEPT)
    in_dept = {e[0] for e in d["employees"] if e[4] == dept_id}
    rows = [list(s) for s in d["salaries"]]
    after = []
    for emp, amount, frm, to in rows:
        if emp in in_dept and to is None:
            after.append([emp, amount, frm, RAISE_DATE])
            assert amount % 20 == 0, "amount * 1.05 would need rounding rules"
            after.append([emp, amount + amount // 20, RAISE_DATE, None])
        else:
            after.append([emp, amount, frm, to])

    def digest(rs):
        rs = sorted(rs, key=lambda r: (r[0], r[2]))
        return hashlib.md5(",".join(f"{e}|{a}|{f}|{t or ''}" for e, a, f, t in rs).encode()).hexdigest()
    return digest(rows), digest(after)


def salary_digest_sql(table: str) -> str:
    """MariaDB query printing the md5 of ``table``'s rows (salaries' columns), in a fixed order."""
    return ("SET SESSION group_concat_max_len = 10000000; SELECT MD5(GROUP_CONCAT(CONCAT_WS('|', "
            "employee_id, amount, from_date, IFNULL(to_date, '')) ORDER BY employee_id, from_date "
            f"SEPARATOR ',')) FROM {table}")


RAISE_SQL = (f"START TRANSACTION; CREATE TEMPORARY TABLE cur AS SELECT s.employee_id, s.amount FROM salaries s "
             f"JOIN employees e ON e.id = s.employee_id JOIN departments d ON d.id = e.department_id "
             f"WHERE d.name = '{RAISE_DEPT}' AND s.to_date IS NULL; UPDATE salaries s JOIN cur c ON "
             f"c.employee_id = s.employee_id SET s.to_date = '{RAISE_DATE}' WHERE s.to_date IS NULL; INSERT INTO "
             f"salaries (employee_id, amount, from_date, to_date) SELECT employee_id, ROUND(amount * 1.05), "
             f"'{RAISE_DATE}', NULL FROM cur; COMMIT;")

# --------------------------------------------------------------------------- sqlite CRM export


def crm() -> tuple[str, str]:
    """contacts.sql (with case-variant duplicate e-mails) and the ids left after de-duplication."""
    rng = random.Random(4242)
    first = ["Ada", "Bruno", "Carla", "Deniz", "Eli", "Fatima", "Goran", "Hana", "Igor", "Jana", "Karim", "Lea"]
    last = ["Arnold", "Baker", "Castro", "Diaz", "Evans", "Fischer", "Gomez", "Horvat", "Ito", "Jensen"]
    companies = ["Northwind", "Contoso", "Fabrikam", "Tailspin", "Litware", "Adatum"]
    people = []
    for _ in range(90):
        f, la = rng.choice(first), rng.choice(last)
        people.append((f, la, f"{f}.{la}{rng.randrange(10, 99)}@{rng.choice(companies).lower()}.example".lower(),
                       rng.choice(companies)))
    rows, seen = [], set()
    for f, la, email, company in people:
        if email in seen:
            continue
        seen.add(email)
        rows.append([f, la, email, company])
        if rng.random() < 0.2:   # the same person entered again by another import, e-mail case changed
            variant = email.upper() if rng.random() < 0.5 else email.capitalize()
            rows.append([f, la, variant, company])
    rng.shuffle(rows)
    keep, first_seen = [], set()
    lines = ["-- contacts exported from two CRM imports (synthetic, data_batch2.py)",
             "CREATE TABLE contacts (id INTEGER PRIMARY KEY, first_name TEXT NOT NULL, last_name TEXT NOT NULL, "
             "email TEXT NOT NULL, company TEXT NOT NULL);"]
    for i, (f, la, email, company) in enumerate(rows, 1):
        lines.append(f"INSERT INTO contacts VALUES ({i}, '{f}', '{la}', '{email}', '{company}');")
        if email.lower() not in first_seen:
            first_seen.add(email.lower())
            keep.append(i)
    return "\n".join(lines) + "\n", ",".join(map(str, keep))


# setup of the CRM export /home/user/crm/contacts.db (from contacts.sql beside the task)
CRM_CONFIG = [clean("/home/user/crm/contacts.db"),
              {"type": "copyfile_from_host_to_guest", "parameters": {
                  "src": "{folder}/contacts.sql", "dest": "/tmp/desktop_env_setup/contacts.sql"}},
              {"type": "execute", "parameters": {"command": bash(
                  "mkdir -p /home/user/crm && sqlite3 /home/user/crm/contacts.db "
                  "< /tmp/desktop_env_setup/contacts.sql && rm -f /tmp/desktop_env_setup/contacts.sql"),
                  "until": {"returncode": 0}}}]

# --------------------------------------------------------------------------- Calc workbook

def monthly_workbooks(folder: Path) -> None:
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


def save_if_changed(wb, path: Path) -> None:
    """Save ``wb`` unless ``path`` already holds the same cells (xlsx bytes carry the save time)."""
    import openpyxl

    def cells(book):
        return [(ws.title, [list(r) for r in ws.iter_rows(values_only=True)]) for ws in book.worksheets]
    if path.exists() and cells(openpyxl.load_workbook(path)) == cells(wb):
        return
    wb.save(path)


CALC_TITLE = "monthly_revenue.xlsx"

# --------------------------------------------------------------------------- file contents

MARTS_YML = """version: 2

models:
  - name: customer_orders
    description: One row per customer with order count and lifetime value.
    columns:
      - name: customer_id
        data_tests:
          - unique
          - not_null
"""

PAYMENTS_DAG = '''"""Payments per method from the shop's payments CSV."""
import csv
from collections import defaultdict
from datetime import datetime
from pathlib import Path

from airflow.sdk import dag, task

DATA_DIR = Path("/home/user/projects/data")


@dag(dag_id="payments_summary", schedule=None, start_date=datetime(2024, 1, 1), catchup=False)
def payments_summary():
    @task
    def summarize() -> str:
        count, total = defaultdict(int), defaultdict(float)
        with open(DATA_DIR / "raw_payments.csv") as fh:
            for row in csv.DictReader(fh):
                count[row["method"]] += 1
                total[row["method"]] += float(row["amount"])
        out = DATA_DIR / "payment_methods.csv"
        with open(out, "w", newline="") as fh:
            writer = csv.writer(fh)
            writer.writerow(["method", "payments", "amount"])
            for method in sorted(count):
                writer.writerow([method, count[method], f"{total[method]:.2f}"])
        return str(out)

    summarize()


payments_summary()
'''

ORDERS_BY_STATUS_ASSET = '''

@dg.asset(description="Number of orders per status, written to DuckDB")
def orders_by_status(orders: pd.DataFrame) -> pd.DataFrame:
    counts = orders.groupby("status", as_index=False).size().rename(columns={"size": "orders"})
    with duckdb.connect(str(WAREHOUSE)) as con:
        con.execute("CREATE OR REPLACE TABLE orders_by_status AS SELECT * FROM counts")
    return counts
'''


def dagster_definitions_with_asset() -> str:
    text = (SAMPLE_HOME / "projects/dagster_project/dagster_project/definitions.py").read_text()
    marker = "\n\nrevenue_job = "
    assert marker in text and "assets=[orders, order_items, daily_revenue]" in text, "definitions.py changed"
    text = text.replace(marker, ORDERS_BY_STATUS_ASSET + marker, 1)
    return text.replace("assets=[orders, order_items, daily_revenue]",
                        "assets=[orders, order_items, daily_revenue, orders_by_status]", 1)


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


CALC_SAVED = ("import time, zipfile\n"
              "def saved():\n"
              "    try:\n"
              "        with zipfile.ZipFile('/home/user/reports/monthly_revenue.xlsx') as z:\n"
              "            return any(b'SUM(' in z.read(n) for n in z.namelist() if n.startswith('xl/worksheets'))\n"
              "    except (OSError, zipfile.BadZipFile, KeyError):\n"
              "        return False\n"
              "for _ in range(80):\n"
              "    if saved():\n"
              "        break\n"
              "    time.sleep(0.5)\n")

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

CONSTRAINT_SQL = ("ALTER TABLE orders ADD CONSTRAINT orders_status_check CHECK (status IN ('completed', 'shipped', "
                  "'returned', 'cancelled', 'pending')); CREATE INDEX orders_customer_date_idx ON orders "
                  "(customer_id, order_date);")


def pairs() -> list[dict]:
    before, after = salary_digests()
    crm_sql, crm_keep = crm()
    return [
        {
            "name": "dbt_duckdb_customer_tests",
            "app": "dbt",
            "category": "data_transformation",
            "interface": "cli",
            "action_number": 3,
            "related_apps": ["dbt", "terminal"],
            "source": ["https://docs.getdbt.com/docs/build/data-tests",
                       "https://docs.getdbt.com/reference/resource-properties/data-tests"],
            "abstract": "In the dbt project /home/user/projects/dbt_duckdb, declare that customer_id of the "
                        "customer_orders model is unique and never null (dbt's generic data tests), and run those "
                        "tests with dbt so that they pass.",
            "verbose": "Add generic data tests to a dbt model and run them:\n"
                       "1. Open a terminal and cd /home/user/projects/dbt_duckdb.\n"
                       "2. Create models/marts/marts.yml with `version: 2` and a `models:` entry for "
                       "customer_orders whose column customer_id has `data_tests:` unique and not_null.\n"
                       "3. Run `dbt test --select customer_orders`.\n"
                       "4. The output must show the two tests unique_customer_orders_customer_id and "
                       "not_null_customer_orders_customer_id passing.",
            "config": [clean("/home/user/projects/dbt_duckdb/models/marts/marts.yml",
                             "/home/user/projects/dbt_duckdb/target/run_results.json")],
            "eval": """python3 - <<'PY'
import json
try:
    results = json.load(open("/home/user/projects/dbt_duckdb/target/run_results.json"))["results"]
except (OSError, ValueError, KeyError) as e:
    print(f"EVAL_FAIL: no dbt run results: {e}")
    raise SystemExit
status = {r["unique_id"].split(".")[2]: r["status"] for r in results if r["unique_id"].startswith("test.")}
for name in ("unique_customer_orders_customer_id", "not_null_customer_orders_customer_id"):
    if status.get(name) != "pass":
        print(f"EVAL_FAIL: test {name} is {status.get(name, 'not run')} (tests run: {sorted(status)})")
        raise SystemExit
print("EVAL_OK")
PY
""",
            "solution": [cmd("cd /home/user/projects/dbt_duckdb && cat > models/marts/marts.yml <<'EOF'\n"
                             + MARTS_YML + "EOF\ndbt test --select customer_orders")],
        },
        {
            "name": "airflow_payments_dag",
            "app": "airflow",
            "category": "data_orchestration",
            "interface": "cli",
            "action_number": 4,
            "related_apps": ["airflow", "terminal"],
            "source": ["https://airflow.apache.org/docs/apache-airflow/stable/tutorial/taskflow.html",
                       "https://airflow.apache.org/docs/apache-airflow/stable/cli-and-env-variables-ref.html#test"],
            "abstract": "Write a new Airflow DAG with the id payments_summary (in the DAG folder "
                        "/home/user/airflow/dags) that reads /home/user/projects/data/raw_payments.csv and writes "
                        "/home/user/projects/data/payment_methods.csv with the header method,payments,amount: one "
                        "row per payment method in alphabetical order, its number of payments and their total "
                        "amount with 2 decimals. Run it once so that the file exists and the run is recorded as "
                        "successful in Airflow's metadata database.",
            "verbose": "Add and run an Airflow DAG:\n"
                       "1. Create /home/user/airflow/dags/payments_summary.py. Use the TaskFlow API like the "
                       "existing shop_etl.py in that folder: `from airflow.sdk import dag, task`, "
                       "@dag(dag_id=\"payments_summary\", schedule=None, start_date=datetime(2024, 1, 1), "
                       "catchup=False).\n"
                       "2. One @task reads raw_payments.csv (columns id, order_id, method, amount) with "
                       "csv.DictReader, counts the payments and sums amount per method, and writes "
                       "/home/user/projects/data/payment_methods.csv with the header method,payments,amount, "
                       "methods sorted alphabetically, amounts formatted with 2 decimals.\n"
                       "3. In a terminal run `airflow dags test payments_summary 2025-01-15` and wait for the "
                       "run to end in state success.",
            "config": [clean("/home/user/airflow/dags/payments_summary.py",
                             "/home/user/projects/data/payment_methods.csv")],
            "eval": """out=/home/user/projects/data/payment_methods.csv
[ -f "$out" ] || fail "$out does not exist"
python3 - <<'PY' > /tmp/desktop_env_eval/ref.csv
import csv, collections
n, s = collections.Counter(), collections.defaultdict(float)
with open("/home/user/projects/data/raw_payments.csv") as f:
    for r in csv.DictReader(f):
        n[r["method"]] += 1
        s[r["method"]] += float(r["amount"])
print("method,payments,amount")
for m in sorted(n):
    print(f"{m},{n[m]},{s[m]:.2f}")
PY
why=$(same_csv "$out" /tmp/desktop_env_eval/ref.csv ordered 2>&1) || fail "$why"
""" + b1.airflow_run_check("payments_summary") + "echo EVAL_OK\n",
            "solution": [cmd("cat > /home/user/airflow/dags/payments_summary.py <<'EOF'\n" + PAYMENTS_DAG
                             + "EOF\nairflow dags test payments_summary 2025-01-15")],
        },
        {
            "name": "dagster_orders_by_status_asset",
            "app": "dagster",
            "category": "data_orchestration",
            "interface": "cli",
            "action_number": 4,
            "related_apps": ["dagster", "duckdb", "terminal"],
            "source": ["https://docs.dagster.io/guides/build/assets/defining-assets",
                       "https://docs.dagster.io/api/dagster/cli#dagster-asset"],
            "abstract": "Add an asset orders_by_status to the Dagster project in /home/user/projects/dagster_project: "
                        "it depends on the orders asset and writes a table orders_by_status (columns status, "
                        "orders: the number of orders per status) to the project's DuckDB warehouse "
                        "(dagster_project/warehouse.duckdb), like daily_revenue does. Register it in the "
                        "project's Definitions and materialize it (with its upstream assets) so the run is "
                        "recorded as successful in the Dagster instance (DAGSTER_HOME=/home/user/.dagster).",
            "verbose": "Add a Dagster asset and materialize it:\n"
                       "1. Open /home/user/projects/dagster_project/dagster_project/definitions.py in an editor.\n"
                       "2. Below daily_revenue, add `@dg.asset def orders_by_status(orders: pd.DataFrame) -> "
                       "pd.DataFrame:` that groups orders by status and counts them into a column orders, writes "
                       "the frame to the table orders_by_status with `duckdb.connect(str(WAREHOUSE))` and "
                       "`CREATE OR REPLACE TABLE orders_by_status AS SELECT * FROM <frame>`, and returns it.\n"
                       "3. Add orders_by_status to the assets list of dg.Definitions.\n"
                       "4. In a terminal, cd /home/user/projects/dagster_project and run `dagster asset "
                       "materialize -m dagster_project.definitions --select '+orders_by_status'` (the asset and "
                       "its upstream orders; with '*' daily_revenue runs in a parallel process and the two "
                       "can collide on the DuckDB file's write lock); wait for RUN_SUCCESS.",
            "config": [clean("/home/user/projects/dagster_project/warehouse.duckdb",
                             "/home/user/projects/dagster_project/warehouse.duckdb.wal")],
            "eval": """wh=/home/user/projects/dagster_project/warehouse.duckdb
grep -q orders_by_status /home/user/projects/dagster_project/dagster_project/definitions.py || fail "definitions.py has no orders_by_status"
[ -f "$wh" ] || fail "$wh does not exist"
res=$(duck "$wh" "WITH a AS (SELECT status, CAST(orders AS BIGINT) AS n FROM orders_by_status), b AS (SELECT status, count(*) AS n FROM read_csv_auto('/home/user/projects/data/raw_orders.csv') GROUP BY status) SELECT (SELECT count(*) FROM a) || ' ' || (SELECT count(*) FROM ((SELECT * FROM a EXCEPT ALL SELECT * FROM b) UNION ALL (SELECT * FROM b EXCEPT ALL SELECT * FROM a)))" 2>&1)
[ "$res" = "5 0" ] || fail "orders_by_status rows/mismatches: $res"
""" + dagster_run_check() + """echo EVAL_OK
""",
            "solution": [cmd("cat > /home/user/projects/dagster_project/dagster_project/definitions.py <<'EOF'\n"
                             + dagster_definitions_with_asset() + "EOF\ncd /home/user/projects/dagster_project && "
                             "dagster asset materialize -m dagster_project.definitions --select '+orders_by_status'")],
        },
        {
            "name": "jupyter_customers_by_country",
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
            "name": "sqlite_dedupe_contacts",
            "app": "sqlite3",
            "category": "traditional_data_processing",
            "interface": "cli",
            "action_number": 3,
            "related_apps": ["sqlite3", "terminal"],
            "source": ["https://www.sqlite.org/lang_delete.html", "https://www.sqlite.org/lang_corefunc.html#lower"],
            "abstract": "The CRM export /home/user/crm/contacts.db (SQLite) holds some contacts twice: the same "
                        "e-mail address typed with different upper/lower case. Delete the duplicates so that each "
                        "e-mail address (compared case-insensitively) is left once, keeping the row with the "
                        "lowest id.",
            "verbose": "De-duplicate a SQLite table:\n"
                       "1. Open a terminal and run `sqlite3 /home/user/crm/contacts.db`.\n"
                       "2. Look at the duplicates: SELECT lower(email), count(*) FROM contacts GROUP BY "
                       "lower(email) HAVING count(*) > 1;\n"
                       "3. Delete every row whose id is not the smallest id of its lower(email) group: DELETE "
                       "FROM contacts WHERE id NOT IN (SELECT min(id) FROM contacts GROUP BY lower(email));\n"
                       "4. Check that the query of step 2 returns nothing.",
            "files": {"contacts.sql": crm_sql},
            "config": CRM_CONFIG,
            "eval": f"""db=/home/user/crm/contacts.db
[ -f "$db" ] || fail "$db does not exist"
got=$(sqlite3 -readonly "$db" "SELECT group_concat(id, ',') FROM (SELECT id FROM contacts ORDER BY id)" 2>&1)
[ "$got" = "{crm_keep}" ] || fail "the ids left are not the first of each e-mail: $got"
echo EVAL_OK
""",
            "solution": [cmd("sqlite3 /home/user/crm/contacts.db \"DELETE FROM contacts WHERE id NOT IN (SELECT "
                             "min(id) FROM contacts GROUP BY lower(email))\"")],
        },
        {
            "name": "mariadb_data_team_raise",
            "app": "mariadb",
            "category": "traditional_data_processing",
            "interface": "cli",
            "action_number": 4,
            "related_apps": ["mariadb", "terminal"],
            "source": ["https://mariadb.com/kb/en/update/", "https://mariadb.com/kb/en/insert-select/",
                       "https://mariadb.com/kb/en/round/"],
            "abstract": f"Give every employee of the {RAISE_DEPT} department a 5% raise effective {RAISE_DATE} in "
                        f"the MariaDB database hr, keeping the salary history: each of their current salary rows "
                        f"(to_date NULL) ends on {RAISE_DATE}, and a new current row starts on {RAISE_DATE} with "
                        f"the old amount * 1.05 rounded to a whole number. Nobody else's salary changes. The "
                        f"database server is running.",
            "verbose": f"Apply a raise with history in MariaDB:\n"
                       f"1. Open a terminal and connect with `mariadb hr`.\n"
                       f"2. The employees of the department are those with employees.department_id = the id of "
                       f"the department named '{RAISE_DEPT}'; their current salary row has to_date IS NULL.\n"
                       f"3. In one transaction: remember their current rows (e.g. CREATE TEMPORARY TABLE cur AS "
                       f"SELECT employee_id, amount ...), set to_date = '{RAISE_DATE}' on those rows, and INSERT "
                       f"new rows (employee_id, ROUND(amount * 1.05), '{RAISE_DATE}', NULL).\n"
                       f"4. COMMIT and check that each of them has exactly one row with to_date IS NULL.",
            "config": [START_MARIADB,
                       {"type": "execute", "parameters": {"command": bash(
                           "mariadb hr -e 'SELECT 1' >/dev/null"), "until": {"returncode": 0}}}],
            "eval": f"""start-mariadb >/dev/null 2>&1
got=$(mariadb -N -B hr -e "{salary_digest_sql('salaries')}" 2>&1)
[ "$got" = "{after}" ] || fail "salaries are not as expected (digest $got; the untouched start state is {before})"
echo EVAL_OK
""",
            "solution": [cmd(f"mariadb hr -e \"{RAISE_SQL}\"")],
        },
        {
            "name": "postgres_orders_constraint_index",
            "app": "postgresql",
            "category": "data_warehousing",
            "interface": "cli",
            "action_number": 3,
            "related_apps": ["postgresql", "terminal"],
            "source": ["https://www.postgresql.org/docs/15/ddl-constraints.html#DDL-CONSTRAINTS-CHECK-CONSTRAINTS",
                       "https://www.postgresql.org/docs/15/sql-createindex.html"],
            "abstract": "Harden the orders table of the PostgreSQL database analytics: add a check constraint "
                        "named orders_status_check that only allows the statuses completed, shipped, returned, "
                        "cancelled and pending, and an index named orders_customer_date_idx on (customer_id, "
                        "order_date) for the per-customer timeline queries. The database server is running.",
            "verbose": "Add a constraint and an index in PostgreSQL:\n"
                       "1. Open a terminal and connect with `psql -d analytics`.\n"
                       "2. ALTER TABLE orders ADD CONSTRAINT orders_status_check CHECK (status IN ('completed', "
                       "'shipped', 'returned', 'cancelled', 'pending'));\n"
                       "3. CREATE INDEX orders_customer_date_idx ON orders (customer_id, order_date);\n"
                       "4. Check with \\d orders.",
            "config": [START_POSTGRES,
                       {"type": "execute", "parameters": {"command": bash(
                           "psql -qX -d analytics -c 'ALTER TABLE orders DROP CONSTRAINT IF EXISTS "
                           "orders_status_check; DROP INDEX IF EXISTS orders_customer_date_idx'")}}],
            "eval": """start-postgres >/dev/null 2>&1
idx=$(psql -AtX -c "SELECT indexdef FROM pg_indexes WHERE tablename = 'orders' AND indexname = 'orders_customer_date_idx'")
case "$idx" in *"(customer_id, order_date)"*) ;; *) fail "no index orders_customer_date_idx on (customer_id, order_date): '$idx'";; esac
con=$(psql -AtX -c "SELECT count(*) FROM pg_constraint WHERE conname = 'orders_status_check' AND conrelid = 'orders'::regclass AND contype = 'c' AND convalidated")
[ "$con" = 1 ] || fail "no validated check constraint orders_status_check on orders"
for s in completed shipped returned cancelled pending; do
  out=$(psql -AtX -v ON_ERROR_STOP=1 -c "BEGIN; INSERT INTO orders VALUES (999999, 1, '2025-01-01', '$s'); ROLLBACK;" 2>&1) || fail "status $s is refused: $out"
done
out=$(psql -AtX -v ON_ERROR_STOP=1 -c "BEGIN; INSERT INTO orders VALUES (999999, 1, '2025-01-01', 'lost'); ROLLBACK;" 2>&1) && fail "status 'lost' is accepted"
case "$out" in *orders_status_check*) ;; *) fail "status 'lost' failed for another reason: $out";; esac
echo EVAL_OK
""",
            "solution": [cmd(f"psql -X -v ON_ERROR_STOP=1 -d analytics -c \"{CONSTRAINT_SQL}\"")],
        },
        {
            "name": "terminal_split_orders",
            "app": "terminal",
            "category": "data_ingestion_and_integration",
            "interface": "cli",
            "action_number": 3,
            "related_apps": ["terminal"],
            "source": ["https://www.gnu.org/software/gawk/manual/gawk.html#Redirection",
                       "https://www.gnu.org/software/coreutils/manual/html_node/head-invocation.html"],
            "abstract": "Split /home/user/projects/data/raw_orders.csv by order status into one file per status in "
                        "/home/user/exports, named orders_<status>.csv (e.g. orders_shipped.csv). Each file starts "
                        "with the original header line and holds that status's rows in their original order; no "
                        "other files go in that folder.",
            "verbose": "Split a CSV file by a column in the terminal:\n"
                       "1. Open a terminal and create /home/user/exports.\n"
                       "2. The status is the 4th comma-separated field of raw_orders.csv (header: "
                       "id,customer_id,order_date,status). The file has Windows line endings (CRLF): strip the "
                       "carriage return, or it ends up in the status and in the file names.\n"
                       "3. For each status, write the header plus the rows of that status, e.g. with awk: "
                       "`awk -F, '{sub(/\\r$/, \"\")} NR==1 {h=$0; next} {f=\"/home/user/exports/orders_\" $4 "
                       "\".csv\"; if (!(f in seen)) {print h > f; seen[f]=1} print > f}' "
                       "/home/user/projects/data/raw_orders.csv`.\n"
                       "4. Check with `wc -l /home/user/exports/*`: the data lines add up to the original's.",
            "config": [clean("/home/user/exports")],
            "eval": """python3 - <<'PY'
import csv, os
src = "/home/user/projects/data/raw_orders.csv"
lines = open(src).read().splitlines()
header, rows = lines[0], lines[1:]
want = {}
for line in rows:
    want.setdefault(f"orders_{line.split(',')[3]}.csv", []).append(line)
folder = "/home/user/exports"
if not os.path.isdir(folder):
    print(f"EVAL_FAIL: {folder} does not exist"); raise SystemExit
got = sorted(os.listdir(folder))
if got != sorted(want):
    print(f"EVAL_FAIL: files are {got}, expected {sorted(want)}"); raise SystemExit
for name, body in want.items():
    have = open(os.path.join(folder, name)).read().splitlines()
    if have != [header] + body:
        print(f"EVAL_FAIL: {name} does not hold the header and its {len(body)} rows in order"); raise SystemExit
print("EVAL_OK")
PY
""",
            "solution": [cmd("mkdir -p /home/user/exports && awk -F, '{sub(/\\r$/, \"\")} NR==1 {h=$0; next} "
                             "{f=\"/home/user/exports/"
                             "orders_\" $4 \".csv\"; if (!(f in seen)) {print h > f; seen[f]=1} print > f}' "
                             "/home/user/projects/data/raw_orders.csv")],
        },
        {
            "name": "calc_monthly_total",
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
            "solution": [b1.focus_window(CALC_TITLE),
                         {"action_space": "pyautogui", "action": (
                             # A click, not Ctrl+Home and Down x13: under emulation Calc lags seconds behind
                             # the keys, and navigation keys were once handled after the typed text (Total
                             # landed in A11 over 2024-10).
                             "import time\npyautogui.click(79, 483)  # cell A14\ntime.sleep(3)\n"
                             "pyautogui.write('Total\\t=SUM(B2:B13)\\n', interval=0.05)\n")},
                         {"action_space": "pyautogui", "action": "pyautogui.hotkey('ctrl', 's')\n" + CALC_SAVED},
                         {"action_space": "pyautogui", "action": CALC_SAVED}],
        },
        {
            "name": "airflow_snowflake_infeasible",
            "app": "airflow",
            "category": "data_ingestion_and_integration",
            "interface": "cli",
            "action_number": 3,
            "related_apps": ["airflow", "terminal"],
            "infeasible": True,
            "source": ["https://airflow.apache.org/docs/apache-airflow-providers-snowflake/stable/index.html"],
            "abstract": "Change the Airflow DAG shop_etl so that it also loads its order status summary into the "
                        "Snowflake table ANALYTICS.PUBLIC.ORDER_STATUS through the existing Airflow connection "
                        "snowflake_prod, and run it once so the table is filled. If this cannot be done here, "
                        "say so.",
            "verbose": "Load the DAG's output into Snowflake:\n"
                       "1. Check the connection with `airflow connections get snowflake_prod`.\n"
                       "2. Add a task to /home/user/airflow/dags/shop_etl.py that uses the Snowflake provider's "
                       "SnowflakeHook with that connection to insert the summary rows into "
                       "ANALYTICS.PUBLIC.ORDER_STATUS.\n"
                       "3. Run `airflow dags test shop_etl` and check the table in Snowflake.\n"
                       "If the connection, the provider or network access to Snowflake is missing, do not fake "
                       "the result: report that the task cannot be done.",
            "config": [],
        },
    ]


def main() -> None:
    b1.PAIRS[:] = pairs()
    b1.main(batch="data_batch2")


if __name__ == "__main__":
    main()
