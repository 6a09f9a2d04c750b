"""The cloud-account tasks (``test_account.json``): BigQuery and Snowflake.

These tasks need a real BigQuery or Snowflake account: the setup steps and getters call the
vendor's API from the host with the settings file the user fills in from
``evaluation_examples/settings/<vendor>/*.template``, and the guest must reach the vendor,
which the current images cannot do yet (no default route: see docs/image.md, "allow_internet").
They are never run in CI and cannot be verified offline, so
``docs/task_verification.md`` lists them as unverified. Each exists as a verbose and an
abstract twin with the same setup, evaluator and reference solution (commands: the
``cli`` interface; the solution installs the vendor's Python client into a throwaway
virtual environment in the guest, which is why it needs the internet too).

Data come from fixed seeds. Regenerate with ``python3 -m evaluation_examples.generators
accounts`` from the repository root (see the package docstring).
"""
from __future__ import annotations

import random
import uuid

from .common import EXAMPLES, GUIDANCES, csv_text, dump_json, replace_strings, update_index
from .datasets import CUSTOMERS, REGIONS

#: Namespace of these tasks' ids (uuid5 of ``<app>/<name>/<guidance>``).
ACCOUNT_NAMESPACE = uuid.UUID("0c8f4d3e-2a61-4b7d-9e15-7d3a6c2f8b49")
INDEXES = {"test_all.json": None, "test_account.json": None, "test_verbose.json": "verbose",
           "test_abstract.json": "abstract"}


def orders() -> list[list]:
    """Sixty orders: order_id, customer, order_date, amount (two decimals)."""
    rng = random.Random(41)
    return [[i, rng.choice(CUSTOMERS), f"2024-{rng.randint(1, 6):02d}-{rng.randint(1, 28):02d}",
             f"{rng.uniform(20, 1500):.2f}"] for i in range(1, 61)]


def region_sales() -> list[list]:
    """Eighty sales rows: sale_id, region, revenue (two decimals)."""
    rng = random.Random(43)
    return [[i, rng.choice(REGIONS), f"{rng.uniform(100, 5000):.2f}"] for i in range(1, 81)]


BQ_LOAD = r"""python3 -m venv /tmp/bq && /tmp/bq/bin/pip install -q google-cloud-bigquery && /tmp/bq/bin/python - <<'EOF'
from google.cloud import bigquery
client = bigquery.Client.from_service_account_json('/home/user/keyfile.json')
client.create_dataset('shop', exists_ok=True)
schema = [bigquery.SchemaField('order_id', 'INTEGER'), bigquery.SchemaField('customer', 'STRING'),
          bigquery.SchemaField('order_date', 'DATE'), bigquery.SchemaField('amount', 'NUMERIC')]
config = bigquery.LoadJobConfig(schema=schema, skip_leading_rows=1, source_format=bigquery.SourceFormat.CSV)
with open('/home/user/data/orders.csv', 'rb') as f:
    client.load_table_from_file(f, f'{client.project}.shop.orders', job_config=config).result()
EOF"""

SF_SUMMARY = r"""python3 -m venv /tmp/sf && /tmp/sf/bin/pip install -q snowflake-connector-python && /tmp/sf/bin/python - <<'EOF'
import json
import snowflake.connector
s = json.load(open('/home/user/keyfile.json'))
con = snowflake.connector.connect(account=s['account'], user=s['user'], password=s['password'],
                                  role=s.get('role'), warehouse=s.get('warehouse'),
                                  database='SALES', schema='PUBLIC')
con.cursor().execute('CREATE OR REPLACE TABLE REGION_TOTALS AS SELECT REGION, COUNT(*) AS SALES_COUNT, '
                     'ROUND(SUM(REVENUE), 2) AS REVENUE FROM SALES_2024 GROUP BY REGION')
EOF"""


def bigquery_pair() -> dict:
    rows = orders()
    gold = [[r[0], r[1], r[2], r[3]] for r in rows]
    return {
        "app": "bigquery", "name": "load_orders_csv", "category": "data_ingestion_and_integration",
        "related_apps": ["bigquery", "terminal"], "action_number": (6, 1),
        "source": ["https://cloud.google.com/bigquery/docs/batch-loading-data",
                   "https://cloud.google.com/bigquery/docs/loading-data-cloud-storage-csv"],
        "abstract": "Load /home/user/data/orders.csv into a new BigQuery table shop.orders (dataset shop) in the "
                    "Google Cloud project of the service-account key /home/user/keyfile.json, with the columns "
                    "order_id INTEGER, customer STRING, order_date DATE and amount NUMERIC.",
        "verbose": "Load the orders CSV into BigQuery. Step by step: "
                   "1. Open a terminal. The service-account key of the project is /home/user/keyfile.json. "
                   "2. Create a Python virtual environment (python3 -m venv /tmp/bq) and install the client: "
                   "/tmp/bq/bin/pip install google-cloud-bigquery. "
                   "3. In Python, create the client with bigquery.Client.from_service_account_json("
                   "'/home/user/keyfile.json') and the dataset shop (client.create_dataset('shop', exists_ok=True)). "
                   "4. Load /home/user/data/orders.csv into the table shop.orders with a LoadJobConfig that skips "
                   "the header row and has the schema order_id INTEGER, customer STRING, order_date DATE, "
                   "amount NUMERIC; wait for the job with .result(). "
                   "5. Check in the BigQuery console or with a query that the table holds 60 rows.",
        "files": {"orders.csv": csv_text(rows, ["order_id", "customer", "order_date", "amount"]),
                  "orders_gold.csv": csv_text(gold),
                  "orders.sql": "SELECT order_id, customer, CAST(order_date AS STRING), amount "
                                "FROM `{}.shop.orders` ORDER BY order_id\n"},
        "config": [
            {"type": "execute", "parameters": {"command": "mkdir -p /home/user/data", "shell": True}},
            {"type": "copyfile_from_host_to_guest", "parameters": {"src": "{folder}/orders.csv",
                                                                  "dest": "/home/user/data/orders.csv"}},
            {"type": "bigquery_init", "parameters": {"project_name": "bigquery-project",
                                                     "actions": [{"type": "empty"}, {"type": "copy_keyfile"}]}},
        ],
        "evaluator": {"func": "compare_csv",
                      "result": {"type": "bigquery_sql_result_to_csv", "sql": "{folder}/orders.sql",
                                 "dest": "orders.csv", "project_name": "bigquery-project"},
                      "expected": {"type": "local_file", "path": "{folder}/orders_gold.csv"},
                      "options": {"tolerance": 0.005}},
        "solution": [{"command": BQ_LOAD, "shell": True}],
    }


def snowflake_pair() -> dict:
    rows = region_sales()
    totals: dict[str, list] = {}
    for _, region, revenue in rows:
        t = totals.setdefault(region, [0, 0.0])
        t[0] += 1
        t[1] += float(revenue)
    gold = [[r, totals[r][0], f"{totals[r][1]:.2f}"] for r in sorted(totals)]
    values = ", ".join(f"({i}, '{region}', {revenue})" for i, region, revenue in rows)
    return {
        "app": "snowflake", "name": "region_totals", "category": "data_warehousing",
        "related_apps": ["snowflake", "terminal"], "action_number": (5, 1),
        "source": ["https://docs.snowflake.com/en/sql-reference/sql/create-table#create-table-as-select-also-referred-to-as-ctas",
                   "https://docs.snowflake.com/en/developer-guide/python-connector/python-connector-example"],
        "abstract": "In Snowflake (account settings in /home/user/keyfile.json), create the table "
                    "SALES.PUBLIC.REGION_TOTALS with one row per REGION of SALES.PUBLIC.SALES_2024: REGION, "
                    "SALES_COUNT (the number of sales) and REVENUE (their total revenue rounded to 2 decimals).",
        "verbose": "Summarise the 2024 sales per region in Snowflake. Step by step: "
                   "1. Open a terminal; the account, user, password, role and warehouse are in "
                   "/home/user/keyfile.json. "
                   "2. Create a Python virtual environment (python3 -m venv /tmp/sf) and install "
                   "snowflake-connector-python into it. "
                   "3. Connect with snowflake.connector.connect(...) using those settings, database SALES and "
                   "schema PUBLIC. "
                   "4. Run: CREATE OR REPLACE TABLE REGION_TOTALS AS SELECT REGION, COUNT(*) AS SALES_COUNT, "
                   "ROUND(SUM(REVENUE), 2) AS REVENUE FROM SALES_2024 GROUP BY REGION; "
                   "5. Check with SELECT * FROM REGION_TOTALS that there are four regions.",
        "files": {"region_totals_gold.csv": csv_text(gold, ["REGION", "SALES_COUNT", "REVENUE"])},
        "config": [
            {"type": "snowflake_init", "parameters": {"actions": [
                {"type": "create_database", "database": "SALES", "schema": "PUBLIC", "delete_first": True},
                {"type": "execute_script", "sql_command": [
                    "CREATE OR REPLACE TABLE SALES.PUBLIC.SALES_2024 (SALE_ID INTEGER, REGION VARCHAR, "
                    "REVENUE NUMBER(10, 2))",
                    f"INSERT INTO SALES.PUBLIC.SALES_2024 VALUES {values}"]},
                {"type": "copy_keyfile"}]}},
        ],
        "evaluator": {"func": "compare_csv",
                      "result": {"type": "snowflake_execution_result",
                                 "sql_command": "SELECT REGION, SALES_COUNT, REVENUE FROM SALES.PUBLIC.REGION_TOTALS "
                                                "ORDER BY REGION", "dest": "region_totals.csv"},
                      "expected": {"type": "local_file", "path": "{folder}/region_totals_gold.csv"},
                      "options": {"tolerance": 0.005}},
        "solution": [{"command": SF_SUMMARY, "shell": True}],
    }


def write_account_pair(pair: dict) -> dict[str, str]:
    """Write both twins of ``pair`` (its ``action_number`` is a (verbose, abstract) tuple); returns guidance -> id."""
    ids = {g: str(uuid.uuid5(ACCOUNT_NAMESPACE, f"{pair['app']}/{pair['name']}/{g}")) for g in GUIDANCES}
    for n, guidance in enumerate(GUIDANCES):
        tid, other = ids[guidance], ids["abstract" if guidance == "verbose" else "verbose"]
        folder = EXAMPLES / pair["app"] / tid
        folder.mkdir(parents=True, exist_ok=True)
        for name, text in pair["files"].items():
            (folder / name).write_text(text)
        here = {"{folder}": f"evaluation_examples/examples/{pair['app']}/{tid}"}
        task = {
            "id": tid, "snapshot": "base", "instruction": pair[guidance], "source": pair["source"],
            "related_apps": pair["related_apps"], "tags": ["cli", guidance, pair["category"], "account"],
            "action_number": pair["action_number"][n], "counterpart": other,
            "config": replace_strings(pair["config"], here), "evaluator": replace_strings(pair["evaluator"], here),
            "solution": pair["solution"],
        }
        dump_json(folder / f"{tid}.json", task)
    return ids


def main() -> None:
    """Write both pairs and list them in the index files."""
    written = [(pair["app"], write_account_pair(pair)) for pair in (bigquery_pair(), snowflake_pair())]
    for name, guidance in INDEXES.items():
        entries: dict[str, list[str]] = {}
        for app, ids in written:
            entries.setdefault(app, []).extend(tid for g, tid in ids.items() if guidance in (None, g))
        update_index(name, entries)
    for app, ids in written:
        print(f"wrote {app}: {ids['verbose']} (verbose), {ids['abstract']} (abstract)")
