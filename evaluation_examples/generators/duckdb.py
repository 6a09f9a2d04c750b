"""DuckDB task pairs (``examples/duckdb``) on the ``data`` image.

A copy of PostgreSQL tables into DuckDB through CSV, a Hive-partitioned Parquet export, and
a CSV export from the dbt project's warehouse.

Regenerate with ``python3 -m evaluation_examples.generators duckdb`` from the repository
root (see the package docstring).
"""
from __future__ import annotations

from .common import START_POSTGRES, clean, cmd, write_pairs

PG_PRODUCTS_FP = ("SELECT count(*), sum(round(unit_price * 100))::bigint, md5(string_agg(concat_ws(':', id, name, "
                  "category), ',' ORDER BY id)) FROM products")

DUCK_PRODUCTS_FP = ("SELECT count(*), CAST(sum(round(unit_price * 100)) AS BIGINT), md5(string_agg(concat_ws(':', "
                    "id, name, category), ',' ORDER BY id)) FROM products")

PG_ITEMS_FP = ("SELECT count(*), sum(quantity)::bigint, sum(round(unit_price * 100))::bigint, md5(string_agg("
               "concat_ws(':', order_id, product_id, quantity), ',' ORDER BY order_id, product_id)) FROM order_items")

DUCK_ITEMS_FP = ("SELECT count(*), CAST(sum(quantity) AS BIGINT), CAST(sum(round(unit_price * 100)) AS BIGINT), "
                 "md5(string_agg(concat_ws(':', order_id, product_id, quantity), ',' ORDER BY order_id, "
                 "product_id)) FROM order_items")

PARQUET_EVAL = """/opt/venvs/jupyter/bin/python - <<'PY'
import csv, collections, os, duckdb
root = "/home/user/lake/orders"
with open("/home/user/projects/data/raw_orders.csv", newline="") as f:
    want = collections.Counter(r["status"] for r in csv.DictReader(f))
if not os.path.isdir(root):
    print(f"EVAL_FAIL: {root} does not exist"); raise SystemExit
dirs = sorted(os.listdir(root))
if dirs != sorted(f"status={s}" for s in want):
    print(f"EVAL_FAIL: partition folders are {dirs}"); raise SystemExit
try:
    rows = duckdb.sql(f"SELECT status, count(*) FROM read_parquet('{root}/*/*.parquet', hive_partitioning = true) "
                      "GROUP BY status").fetchall()
except Exception as e:
    print(f"EVAL_FAIL: cannot read the Parquet files: {e}"); raise SystemExit
got = {s: n for s, n in rows}
print("EVAL_OK" if got == dict(want) else f"EVAL_FAIL: rows per status are {got}, expected {dict(want)}")
PY
"""

MONTHLY_EXPORT = ("/opt/venvs/jupyter/bin/python -c \"import duckdb; con = duckdb.connect("
                  "'/home/user/projects/dbt_duckdb/warehouse.duckdb', read_only=True); con.sql(\\\"COPY (SELECT "
                  "strftime(month, '%Y-%m-%d') AS month, round(revenue, 2) AS revenue, orders FROM monthly_revenue "
                  "ORDER BY 1) TO '/home/user/reports/monthly_revenue.csv' (HEADER)\\\")\"")


def pairs() -> list[dict]:
    """The task pairs of this module (``common`` describes their keys)."""
    return [
        {
            "name": "postgres_to_duckdb_copy",
            "id_seed": "data_batch1",
            "app": "duckdb",
            "category": "data_ingestion_and_integration",
            "interface": "cli",
            "action_number": 4,
            "related_apps": ["duckdb", "postgresql", "terminal"],
            "source": ["https://www.postgresql.org/docs/15/app-psql.html#APP-PSQL-META-COMMANDS-COPY",
                       "https://duckdb.org/docs/data/csv/overview"],
            "abstract": "Copy the tables products and order_items of the PostgreSQL database analytics into a new "
                        "DuckDB database /home/user/warehouse/shop.duckdb, as tables of the same names holding "
                        "exactly the same rows and columns. DuckDB's postgres extension cannot be downloaded here. "
                        "The PostgreSQL server is running.",
            "verbose": "Copy two PostgreSQL tables into DuckDB through CSV files:\n"
                       "1. Open a terminal. Export each table with psql's client-side copy, e.g. "
                       "`psql -d analytics -c \"\\copy products TO '/tmp/products.csv' CSV HEADER\"`, and the same "
                       "for order_items.\n"
                       "2. Create the folder /home/user/warehouse.\n"
                       "3. Load both files into /home/user/warehouse/shop.duckdb with the duckdb command line: "
                       "`CREATE TABLE products AS SELECT * FROM read_csv('/tmp/products.csv', header = true)` and "
                       "the same for order_items.\n"
                       "4. Compare `SELECT count(*) FROM order_items` in both databases.",
            "config": [START_POSTGRES, clean("/home/user/warehouse/shop.duckdb", "/home/user/warehouse/shop.duckdb.wal")],
            "eval": f"""start-postgres >/dev/null 2>&1
db=/home/user/warehouse/shop.duckdb
[ -f "$db" ] || fail "$db does not exist"
for pair in "products|{PG_PRODUCTS_FP}|{DUCK_PRODUCTS_FP}" "order_items|{PG_ITEMS_FP}|{DUCK_ITEMS_FP}"; do
  IFS='|' read -r table pgq dq <<< "$pair"
  want=$(psql -AtX -c "$pgq" 2>&1)
  got=$(duck "$db" "$dq" 2>&1)
  [ "$want" = "$got" ] || fail "$table differs: postgres '$want', duckdb '$got'"
done
echo EVAL_OK
""",
            "solution": [cmd("psql -X -d analytics -c \"\\copy products TO '/tmp/products.csv' CSV HEADER\" && "
                             "psql -X -d analytics -c \"\\copy order_items TO '/tmp/order_items.csv' CSV HEADER\" && "
                             "mkdir -p /home/user/warehouse && duckdb /home/user/warehouse/shop.duckdb "
                             "\"CREATE TABLE products AS SELECT * FROM read_csv('/tmp/products.csv', header = true); "
                             "CREATE TABLE order_items AS SELECT * FROM read_csv('/tmp/order_items.csv', header = true);\"")],
        },
        {
            "name": "duckdb_parquet_partitioned",
            "id_seed": "data_batch4",
            "app": "duckdb",
            "category": "data_warehousing",
            "interface": "cli",
            "action_number": 2,
            "related_apps": ["duckdb", "terminal"],
            "source": ["https://duckdb.org/docs/data/partitioning/partitioned_writes",
                       "https://duckdb.org/docs/data/parquet/overview"],
            "abstract": "Turn /home/user/projects/data/raw_orders.csv into a Hive-partitioned Parquet data set under "
                        "/home/user/lake/orders, partitioned by status (one folder status=<value> per status, "
                        "holding that status's orders as Parquet files).",
            "verbose": "Write a partitioned Parquet data set with DuckDB:\n"
                       "1. Open a terminal and start `duckdb` (an in-memory session is enough).\n"
                       "2. COPY (SELECT * FROM read_csv_auto('/home/user/projects/data/raw_orders.csv')) TO "
                       "'/home/user/lake/orders' (FORMAT parquet, PARTITION_BY (status));\n"
                       "3. Check with `ls /home/user/lake/orders`: one folder per status, such as "
                       "status=shipped.",
            "config": [clean("/home/user/lake")],
            "eval": PARQUET_EVAL,
            "solution": [cmd("mkdir -p /home/user/lake && duckdb -c \"COPY (SELECT * FROM read_csv_auto("
                             "'/home/user/projects/data/raw_orders.csv')) TO '/home/user/lake/orders' "
                             "(FORMAT parquet, PARTITION_BY (status))\"")],
        },
        {
            "name": "duckdb_export_monthly_revenue",
            "id_seed": "data_batch5",
            "app": "duckdb",
            "category": "data_analysis_and_visualization",
            "interface": "cli",
            "action_number": 3,
            "related_apps": ["duckdb", "dbt", "terminal"],
            "source": ["https://duckdb.org/docs/sql/statements/copy", "https://duckdb.org/docs/api/python/overview"],
            "abstract": "Export the monthly_revenue table of the dbt project's DuckDB warehouse "
                        "(/home/user/projects/dbt_duckdb/warehouse.duckdb) to /home/user/reports/monthly_revenue.csv "
                        "with the header month,revenue,orders: month as YYYY-MM-DD, revenue rounded to 2 decimals, "
                        "oldest month first.",
            "verbose": "Export a DuckDB table to CSV:\n"
                       "1. Open a Python with DuckDB (the `duckdb` command would do as well): "
                       "`/opt/venvs/jupyter/bin/python`.\n"
                       "2. In it: import duckdb; con = duckdb.connect('/home/user/projects/dbt_duckdb/"
                       "warehouse.duckdb', read_only=True)\n"
                       "3. con.sql(\"COPY (SELECT strftime(month, '%Y-%m-%d') AS month, round(revenue, 2) AS "
                       "revenue, orders FROM monthly_revenue ORDER BY 1) TO '/home/user/reports/monthly_revenue.csv' "
                       "(HEADER)\") after creating /home/user/reports.",
            "config": [clean("/home/user/reports/monthly_revenue.csv")],
            "eval": """out=/home/user/reports/monthly_revenue.csv
[ -f "$out" ] || fail "$out does not exist"
{ echo month,revenue,orders; duck /home/user/projects/dbt_duckdb/warehouse.duckdb "SELECT strftime(month, '%Y-%m-%d'), round(revenue, 2), orders FROM monthly_revenue ORDER BY 1" | tr '|' ','; } > /tmp/desktop_env_eval/ref.csv
why=$(same_csv "$out" /tmp/desktop_env_eval/ref.csv ordered 2>&1) || fail "$why"
echo EVAL_OK
""",
            "solution": [cmd("mkdir -p /home/user/reports && " + MONTHLY_EXPORT)],
        },
    ]


def main() -> None:
    """Write this module's tasks and index them."""
    write_pairs(pairs())
