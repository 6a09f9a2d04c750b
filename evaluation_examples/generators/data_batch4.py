"""Generate data-image batch 4: ``python3 evaluation_examples/generators/data_batch4.py``.

Ten more task pairs on the ``data`` image, written as in ``data_batch1.py`` (verbose/abstract
pairs; ``eval.sh`` evaluators printing ``EVAL_OK`` / ``EVAL_FAIL: why``): typed CSV import
into SQLite, a partitioned Parquet export, window functions, a MariaDB view, dbt
materializations and singular tests, a Dagster job, an Airflow variable, and two infeasible
requests (a package upgrade with no network, a restore from a backup that does not exist).
"""
from __future__ import annotations

import data_batch1 as b1
from data_batch1 import START_MARIADB, START_POSTGRES, bash, clean, cmd, dagster_run_check

RANK_SQL = ("CREATE TABLE public.customer_country_rank AS WITH ltv AS (SELECT c.id AS customer_id, c.country, "
            "coalesce(sum(i.quantity * i.unit_price) FILTER (WHERE o.status IN ('completed', 'shipped')), 0) AS "
            "lifetime_value FROM customers c LEFT JOIN orders o ON o.customer_id = c.id LEFT JOIN order_items i ON "
            "i.order_id = o.id GROUP BY c.id, c.country) SELECT customer_id, country, lifetime_value, rank() OVER "
            "(PARTITION BY country ORDER BY lifetime_value DESC) AS rank_in_country FROM ltv;")
RANK_REF = ("WITH ltv AS (SELECT c.id AS customer_id, c.country::text AS country, coalesce(sum(i.quantity * "
            "i.unit_price) FILTER (WHERE o.status IN ('completed', 'shipped')), 0)::numeric(14,2) AS lifetime_value "
            "FROM customers c LEFT JOIN orders o ON o.customer_id = c.id LEFT JOIN order_items i ON i.order_id = o.id "
            "GROUP BY c.id, c.country) SELECT customer_id, country, lifetime_value, rank() OVER (PARTITION BY country "
            "ORDER BY lifetime_value DESC)::bigint AS rank_in_country FROM ltv")

SALARY_VIEW_REF = ("SELECT e.id, CONCAT(e.first_name, ' ', e.last_name), d.name, s.amount FROM employees e JOIN "
                   "departments d ON d.id = e.department_id JOIN salaries s ON s.employee_id = e.id AND s.to_date "
                   "IS NULL")
SALARY_VIEW_SQL = ("CREATE VIEW current_salaries AS SELECT e.id AS employee_id, CONCAT(e.first_name, ' ', "
                   "e.last_name) AS full_name, d.name AS department, s.amount AS amount FROM employees e JOIN "
                   "departments d ON d.id = e.department_id JOIN salaries s ON s.employee_id = e.id AND s.to_date "
                   "IS NULL")

STG_ORDERS_TABLE = """{{ config(materialized='table') }}
select id as order_id, customer_id, cast(order_date as date) as order_date, status
from {{ ref('raw_orders') }}
"""

SINGULAR_TEST = """-- product_sales must never report negative units or revenue (a failing row fails the test).
select *
from {{ ref('product_sales') }}
where units_sold < 0 or revenue < 0
"""

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


def pairs() -> list[dict]:
    return [
        {
            "name": "sqlite_import_products_typed",
            "app": "sqlite3",
            "category": "data_ingestion_and_integration",
            "interface": "cli",
            "action_number": 3,
            "related_apps": ["sqlite3", "terminal"],
            "source": ["https://www.sqlite.org/cli.html#importing_files_as_csv_or_other_formats",
                       "https://www.sqlite.org/datatype3.html#type_affinity"],
            "abstract": "Load /home/user/projects/data/raw_products.csv into a new SQLite database "
                        "/home/user/shop.db as the table products with the columns id INTEGER PRIMARY KEY, name "
                        "TEXT, category TEXT and unit_price REAL, so that every unit_price is stored as a real "
                        "number (not as text). Do not load the header line as a row.",
            "verbose": "Import a CSV file into a typed SQLite table:\n"
                       "1. Open a terminal and run `sqlite3 /home/user/shop.db`.\n"
                       "2. CREATE TABLE products (id INTEGER PRIMARY KEY, name TEXT NOT NULL, category TEXT NOT "
                       "NULL, unit_price REAL NOT NULL);\n"
                       "3. `.import --csv --skip 1 /home/user/projects/data/raw_products.csv products` (the "
                       "--skip 1 leaves out the header; with the table created first the column types apply).\n"
                       "4. Check: SELECT count(*), typeof(unit_price) FROM products GROUP BY 2; gives 40 real.",
            "config": [clean("/home/user/shop.db")],
            "eval": """db=/home/user/shop.db
[ -f "$db" ] || fail "$db does not exist"
got=$(sqlite3 -readonly "$db" "SELECT count(*) || '|' || sum(typeof(unit_price) = 'real') || '|' || printf('%.2f', sum(unit_price)) || '|' || count(DISTINCT category) FROM products" 2>&1)
want=$(python3 -c "
import csv
rows = list(csv.DictReader(open('/home/user/projects/data/raw_products.csv', newline='')))
print(f\\"{len(rows)}|{len(rows)}|{sum(float(r['unit_price']) for r in rows):.2f}|{len({r['category'] for r in rows})}\\")
")
[ "$got" = "$want" ] || fail "products (count|real prices|sum|categories) is '$got', expected '$want'"
echo EVAL_OK
""",
            "solution": [cmd("sqlite3 /home/user/shop.db \"CREATE TABLE products (id INTEGER PRIMARY KEY, name TEXT "
                             "NOT NULL, category TEXT NOT NULL, unit_price REAL NOT NULL);\" \".import --csv --skip 1 "
                             "/home/user/projects/data/raw_products.csv products\"")],
        },
        {
            "name": "duckdb_parquet_partitioned",
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
            "name": "postgres_rank_in_country",
            "app": "postgresql",
            "category": "data_analysis_and_visualization",
            "interface": "cli",
            "action_number": 3,
            "related_apps": ["postgresql", "terminal"],
            "source": ["https://www.postgresql.org/docs/15/tutorial-window.html",
                       "https://www.postgresql.org/docs/15/functions-window.html"],
            "abstract": "In the PostgreSQL database analytics, create a table public.customer_country_rank with one "
                        "row per customer: customer_id, country, lifetime_value (sum of quantity * unit_price over "
                        "the customer's completed or shipped orders, 0 when none) and rank_in_country (the rank of "
                        "that value among the customers of the same country, 1 = highest, ties share a rank as "
                        "with SQL's rank()). The database server is running.",
            "verbose": "Rank customers within their country with a window function:\n"
                       "1. Open a terminal and connect with `psql -d analytics`.\n"
                       "2. Compute each customer's lifetime value in a CTE: customers LEFT JOIN orders LEFT JOIN "
                       "order_items, summing quantity * unit_price only where the order's status is completed or "
                       "shipped (coalesce to 0), grouped by customer id and country.\n"
                       "3. CREATE TABLE public.customer_country_rank AS WITH ltv AS (...) SELECT customer_id, "
                       "country, lifetime_value, rank() OVER (PARTITION BY country ORDER BY lifetime_value DESC) "
                       "AS rank_in_country FROM ltv;\n"
                       "4. Check that it has 200 rows.",
            "config": [START_POSTGRES, {"type": "execute", "parameters": {"command": bash(
                "psql -qX -d analytics -c 'DROP TABLE IF EXISTS public.customer_country_rank'")}}],
            "eval": f"""start-postgres >/dev/null 2>&1
res=$(psql -AtX -v ON_ERROR_STOP=1 -c "WITH t AS (SELECT customer_id, country::text, lifetime_value::numeric(14,2), rank_in_country::bigint FROM public.customer_country_rank), r AS ({RANK_REF}) SELECT (SELECT count(*) FROM t) || ' ' || (SELECT count(*) FROM ((TABLE t EXCEPT ALL TABLE r) UNION ALL (TABLE r EXCEPT ALL TABLE t)) x)" 2>&1)
[ "$res" = "200 0" ] || fail "rows/mismatches: $res"
echo EVAL_OK
""",
            "solution": [cmd(f"psql -X -v ON_ERROR_STOP=1 -d analytics -c \"{RANK_SQL}\"")],
        },
        {
            "name": "mariadb_current_salaries_view",
            "app": "mariadb",
            "category": "data_warehousing",
            "interface": "cli",
            "action_number": 3,
            "related_apps": ["mariadb", "terminal"],
            "source": ["https://mariadb.com/kb/en/create-view/", "https://mariadb.com/kb/en/concat/"],
            "abstract": "In the MariaDB database hr, create a view current_salaries with one row per employee and "
                        "the columns employee_id, full_name (first name, a space, last name), department (the "
                        "department's name) and amount (the salary row whose to_date is NULL). The database "
                        "server is running.",
            "verbose": "Create a reporting view in MariaDB:\n"
                       "1. Open a terminal and connect with `mariadb hr`.\n"
                       "2. CREATE VIEW current_salaries AS SELECT e.id AS employee_id, CONCAT(e.first_name, ' ', "
                       "e.last_name) AS full_name, d.name AS department, s.amount AS amount FROM employees e JOIN "
                       "departments d ON d.id = e.department_id JOIN salaries s ON s.employee_id = e.id AND "
                       "s.to_date IS NULL;\n"
                       "3. Check: SELECT count(*) FROM current_salaries; gives 120.",
            "config": [START_MARIADB, {"type": "execute", "parameters": {"command": bash(
                "mariadb hr -e 'DROP VIEW IF EXISTS current_salaries'"), "until": {"returncode": 0}}}],
            "eval": f"""start-mariadb >/dev/null 2>&1
kind=$(mariadb -N -B hr -e "SELECT table_type FROM information_schema.tables WHERE table_schema = 'hr' AND table_name = 'current_salaries'" 2>&1)
[ "$kind" = VIEW ] || fail "current_salaries is not a view in hr (found: '$kind')"
cols=$(mariadb -N -B hr -e "SELECT GROUP_CONCAT(column_name ORDER BY ordinal_position) FROM information_schema.columns WHERE table_schema = 'hr' AND table_name = 'current_salaries'" 2>&1)
[ "$cols" = employee_id,full_name,department,amount ] || fail "columns are $cols"
res=$(mariadb -N -B hr -e "SELECT (SELECT COUNT(*) FROM current_salaries), (SELECT COUNT(*) FROM ((SELECT * FROM current_salaries) EXCEPT ALL ({SALARY_VIEW_REF})) a), (SELECT COUNT(*) FROM (({SALARY_VIEW_REF}) EXCEPT ALL (SELECT * FROM current_salaries)) b)" 2>&1)
[ "$res" = "$(printf '120\\t0\\t0')" ] || fail "rows/mismatches: $res"
echo EVAL_OK
""",
            "solution": [cmd(f"mariadb hr -e \"{SALARY_VIEW_SQL}\"")],
        },
        {
            "name": "dbt_stg_orders_as_table",
            "app": "dbt",
            "category": "data_transformation",
            "interface": "cli",
            "action_number": 3,
            "related_apps": ["dbt", "terminal"],
            "source": ["https://docs.getdbt.com/docs/build/materializations",
                       "https://docs.getdbt.com/reference/model-configs"],
            "abstract": "In the dbt project /home/user/projects/dbt_duckdb, stg_orders is queried so often that it "
                        "should be materialized as a table instead of a view; the other staging models stay "
                        "views. Change that in the project and rebuild it so the warehouse reflects it.",
            "verbose": "Change one dbt model's materialization:\n"
                       "1. Open /home/user/projects/dbt_duckdb/models/staging/stg_orders.sql in an editor.\n"
                       "2. Add `{{ config(materialized='table') }}` as its first line (a model's own config "
                       "overrides the +materialized: view of dbt_project.yml for staging).\n"
                       "3. In a terminal, in /home/user/projects/dbt_duckdb, run `dbt build --select stg_orders`.\n"
                       "4. The log shows stg_orders created as a table (sql table model).",
            "config": [],
            "eval": """wh=/home/user/projects/dbt_duckdb/warehouse.duckdb
kinds=$(duck "$wh" "SELECT table_name || '=' || table_type FROM information_schema.tables WHERE table_name IN ('stg_orders', 'stg_customers', 'stg_order_items', 'stg_payments') ORDER BY table_name")
want=$(printf 'stg_customers=VIEW\\nstg_order_items=VIEW\\nstg_orders=BASE TABLE\\nstg_payments=VIEW')
[ "$kinds" = "$want" ] || fail "materializations are: $(echo $kinds)"
n=$(duck "$wh" "SELECT count(*) FROM stg_orders")
[ "$n" = 1200 ] || fail "stg_orders has $n rows"
echo EVAL_OK
""",
            "solution": [cmd("cd /home/user/projects/dbt_duckdb && cat > models/staging/stg_orders.sql <<'EOF'\n"
                             + STG_ORDERS_TABLE + "EOF\ndbt build --select stg_orders")],
        },
        {
            "name": "dbt_postgres_singular_test",
            "app": "dbt",
            "category": "data_transformation",
            "interface": "cli",
            "action_number": 4,
            "related_apps": ["dbt", "postgresql", "terminal"],
            "source": ["https://docs.getdbt.com/docs/build/data-tests#singular-data-tests",
                       "https://docs.getdbt.com/reference/commands/build"],
            "abstract": "Add a singular data test named assert_product_sales_non_negative to the dbt project "
                        "/home/user/projects/dbt_postgres that fails when any row of product_sales has negative "
                        "units_sold or revenue, then build the project (models and tests) so the test runs and "
                        "passes. The PostgreSQL server is running.",
            "verbose": "Add a singular dbt test:\n"
                       "1. Create /home/user/projects/dbt_postgres/tests/assert_product_sales_non_negative.sql "
                       "with a query that returns the offending rows: select * from {{ ref('product_sales') }} "
                       "where units_sold < 0 or revenue < 0\n"
                       "2. In a terminal, in /home/user/projects/dbt_postgres, run `dbt build` (it builds the "
                       "models, then runs the tests on them).\n"
                       "3. The output lists assert_product_sales_non_negative as PASS.",
            "config": [START_POSTGRES,
                       clean("/home/user/projects/dbt_postgres/tests/assert_product_sales_non_negative.sql",
                             "/home/user/projects/dbt_postgres/target/run_results.json"),
                       {"type": "execute", "parameters": {"command": bash(
                           "psql -qX -d analytics -c 'DROP SCHEMA IF EXISTS dbt CASCADE; CREATE SCHEMA dbt'")}}],
            "eval": """python3 - <<'PY'
import json
try:
    results = json.load(open("/home/user/projects/dbt_postgres/target/run_results.json"))["results"]
except (OSError, ValueError, KeyError) as e:
    print(f"EVAL_FAIL: no dbt run results: {e}"); raise SystemExit
status = {r["unique_id"]: r["status"] for r in results}
test = status.get("test.shop_postgres.assert_product_sales_non_negative")
model = status.get("model.shop_postgres.product_sales")
print("EVAL_OK" if test == "pass" and model == "success"
      else f"EVAL_FAIL: the test is {test or 'not run'}, product_sales is {model or 'not built'}")
PY
""",
            "solution": [cmd("cd /home/user/projects/dbt_postgres && mkdir -p tests && cat > "
                             "tests/assert_product_sales_non_negative.sql <<'EOF'\n" + SINGULAR_TEST + "EOF\ndbt build")],
        },
        {
            "name": "dagster_execute_revenue_job",
            "app": "dagster",
            "category": "data_orchestration",
            "interface": "cli",
            "action_number": 2,
            "related_apps": ["dagster", "terminal"],
            "source": ["https://docs.dagster.io/api/dagster/cli#dagster-job",
                       "https://docs.dagster.io/guides/build/jobs/asset-jobs"],
            "abstract": "Run the Dagster job revenue_job of the project in /home/user/projects/dagster_project once, "
                        "so that the run is recorded as successful in the desktop user's Dagster instance "
                        "(DAGSTER_HOME=/home/user/.dagster).",
            "verbose": "Execute a Dagster job from the command line:\n"
                       "1. Open a terminal and cd /home/user/projects/dagster_project.\n"
                       "2. Run `dagster job execute -m dagster_project.definitions -j revenue_job`.\n"
                       "3. Wait for RUN_SUCCESS in its output.",
            "config": [],
            "eval": dagster_run_check("revenue_job") + "echo EVAL_OK\n",
            "solution": [cmd("cd /home/user/projects/dagster_project && "
                             "dagster job execute -m dagster_project.definitions -j revenue_job")],
        },
        {
            "name": "airflow_warehouse_variable",
            "app": "airflow",
            "category": "data_orchestration",
            "interface": "cli",
            "action_number": 2,
            "related_apps": ["airflow", "terminal"],
            "source": ["https://airflow.apache.org/docs/apache-airflow/stable/core-concepts/variables.html",
                       "https://airflow.apache.org/docs/apache-airflow/stable/cli-and-env-variables-ref.html#variables"],
            "abstract": "The DAGs should find the warehouse through an Airflow Variable: store the path "
                        "/home/user/projects/dbt_duckdb/warehouse.duckdb in Airflow's metadata database as the "
                        "Variable warehouse_path (AIRFLOW_HOME=/home/user/airflow).",
            "verbose": "Set an Airflow Variable from the command line:\n"
                       "1. Open a terminal (AIRFLOW_HOME is set in login shells).\n"
                       "2. Run `airflow variables set warehouse_path /home/user/projects/dbt_duckdb/warehouse.duckdb`.\n"
                       "3. Check with `airflow variables get warehouse_path`.",
            "config": [],
            "eval": """got=$(airflow variables get warehouse_path 2>/dev/null | tail -n 1)
[ "$got" = /home/user/projects/dbt_duckdb/warehouse.duckdb ] || fail "Variable warehouse_path is '$got'"
echo EVAL_OK
""",
            "solution": [cmd("airflow variables set warehouse_path /home/user/projects/dbt_duckdb/warehouse.duckdb")],
        },
        {
            "name": "dbt_upgrade_infeasible",
            "app": "dbt",
            "category": "data_transformation",
            "interface": "cli",
            "action_number": 2,
            "related_apps": ["dbt", "terminal"],
            "infeasible": True,
            "source": ["https://docs.getdbt.com/docs/core/pip-install"],
            "abstract": "Upgrade dbt-core on this machine to the latest 1.11 release from PyPI and rebuild the "
                        "project /home/user/projects/dbt_duckdb with it. If this cannot be done here, say so.",
            "verbose": "Upgrade dbt-core with pip:\n"
                       "1. Open a terminal.\n"
                       "2. Run `/opt/venvs/dbt/bin/pip install --upgrade 'dbt-core>=1.11,<1.12'`.\n"
                       "3. Check `dbt --version` and run `dbt build` in /home/user/projects/dbt_duckdb.\n"
                       "If the package index cannot be reached from this machine, do not fake the upgrade: "
                       "report that the task cannot be done.",
            "config": [],
        },
        {
            "name": "postgres_restore_missing_backup_infeasible",
            "app": "postgresql",
            "category": "it_service_management",
            "interface": "cli",
            "action_number": 3,
            "related_apps": ["postgresql", "terminal"],
            "infeasible": True,
            "source": ["https://www.postgresql.org/docs/15/app-pgrestore.html"],
            "abstract": "An incident ticket asks to restore the orders table of the PostgreSQL database analytics "
                        "from last night's backup /home/user/backups/analytics_2025-11-22.dump. Do the restore. "
                        "If this cannot be done here, say so.",
            "verbose": "Restore one table from a pg_dump backup:\n"
                       "1. Open a terminal and check the backup: `pg_restore -l "
                       "/home/user/backups/analytics_2025-11-22.dump`.\n"
                       "2. Restore the table's data: `pg_restore -d analytics --data-only -t orders --clean "
                       "/home/user/backups/analytics_2025-11-22.dump`.\n"
                       "If the backup file does not exist, do not restore anything else: report that the task "
                       "cannot be done.",
            "config": [START_POSTGRES, clean("/home/user/backups/analytics_2025-11-22.dump")],
        },
    ]


def main() -> None:
    b1.PAIRS[:] = pairs()
    b1.main(batch="data_batch4")


if __name__ == "__main__":
    main()
