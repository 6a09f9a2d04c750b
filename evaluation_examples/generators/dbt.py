"""dbt task pairs (``examples/dbt``) on the ``data`` image.

The image's two sample projects, ``dbt_duckdb`` and ``dbt_postgres``: a new model, a
wrong model to fix, generic and singular tests, a seed, the docs site, a materialization
change, and one infeasible request (an upgrade from PyPI with no network).

Regenerate with ``python3 -m evaluation_examples.generators dbt`` from the repository
root (see the package docstring).
"""
from __future__ import annotations

from .common import START_POSTGRES, bash, clean, cmd, write_pairs
from .datasets import country_csv

TOP_SQL = """-- The ten customers with the highest lifetime value.
select customer_id, first_name, last_name, lifetime_value
from {{ ref('customer_orders') }}
order by lifetime_value desc, customer_id
limit 10
"""

TOP_REF = ("SELECT customer_id, first_name, last_name, lifetime_value FROM customer_orders "
           "ORDER BY lifetime_value DESC, customer_id LIMIT 10")

PRODUCT_SALES_FIXED = """-- Units and revenue per product over completed and shipped orders.
with sold as (
    select i.product_id, i.quantity, i.line_total
    from {{ ref('stg_order_items') }} i
    join {{ ref('stg_orders') }} o on o.order_id = i.order_id
    where o.status in ('completed', 'shipped')
)
select p.id as product_id, p.name, p.category,
       coalesce(sum(s.quantity), 0) as units_sold,
       coalesce(sum(s.line_total), 0) as revenue
from {{ source('shop', 'products') }} p
left join sold s on s.product_id = p.id
group by p.id, p.name, p.category
"""

PRODUCT_SALES_REF = ("SELECT p.id AS product_id, coalesce(sum(i.quantity) FILTER (WHERE o.status IN "
                     "('completed','shipped')), 0)::bigint AS units_sold, coalesce(sum(i.quantity * i.unit_price) "
                     "FILTER (WHERE o.status IN ('completed','shipped')), 0)::numeric(14,2) AS revenue "
                     "FROM products p LEFT JOIN order_items i ON i.product_id = p.id "
                     "LEFT JOIN orders o ON o.id = i.order_id GROUP BY p.id")

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

CUSTOMERS_BY_COUNTRY_SQL = """-- Customers per country, with the country's name from the country_names seed.
select n.name as country_name, count(*) as customers
from {{ ref('stg_customers') }} c
join {{ ref('country_names') }} n on n.code = c.country
group by n.name
"""

STG_ORDERS_TABLE = """{{ config(materialized='table') }}
select id as order_id, customer_id, cast(order_date as date) as order_date, status
from {{ ref('raw_orders') }}
"""

SINGULAR_TEST = """-- product_sales must never report negative units or revenue (a failing row fails the test).
select *
from {{ ref('product_sales') }}
where units_sold < 0 or revenue < 0
"""


def pairs() -> list[dict]:
    """The task pairs of this module (``common`` describes their keys)."""
    return [
        {
            "name": "dbt_duckdb_top_customers",
            "id_seed": "data_batch1",
            "app": "dbt",
            "category": "data_transformation",
            "interface": "cli",
            "action_number": 4,
            "related_apps": ["dbt", "duckdb", "terminal"],
            "source": ["https://docs.getdbt.com/docs/build/sql-models", "https://docs.getdbt.com/reference/dbt-jinja-functions/ref",
                       "https://docs.getdbt.com/reference/commands/build"],
            "abstract": "Add a model top_customers to the dbt project in /home/user/projects/dbt_duckdb: the ten "
                        "customers with the highest lifetime_value taken from the customer_orders model, with the "
                        "columns customer_id, first_name, last_name and lifetime_value. Build it so that the table "
                        "top_customers exists in the project's DuckDB warehouse.",
            "verbose": "Add a dbt model and build it:\n"
                       "1. Open a terminal and cd /home/user/projects/dbt_duckdb (a dbt project on DuckDB; `dbt` is "
                       "on the PATH and the profile is configured).\n"
                       "2. Create the file models/marts/top_customers.sql with a select from "
                       "{{ ref('customer_orders') }} of customer_id, first_name, last_name and lifetime_value, "
                       "ordered by lifetime_value descending (then customer_id), limit 10.\n"
                       "3. Run `dbt build --select top_customers` and check it finishes without errors.\n"
                       "4. The table top_customers now exists in warehouse.duckdb (models under marts are "
                       "materialized as tables).",
            "config": [clean("/home/user/projects/dbt_duckdb/models/marts/top_customers.sql")],
            "eval": f"""wh=/home/user/projects/dbt_duckdb/warehouse.duckdb
f=/home/user/projects/dbt_duckdb/models/marts/top_customers.sql
[ -f "$f" ] || fail "$f does not exist"
grep -q "ref(" "$f" || fail "the model does not ref() another model"
kind=$(duck "$wh" "SELECT table_type FROM information_schema.tables WHERE table_name='top_customers'" 2>&1)
[ "$kind" = "BASE TABLE" ] || fail "top_customers is not a table in $wh (found: $kind)"
res=$(duck "$wh" "WITH t AS (SELECT customer_id, first_name, last_name, CAST(lifetime_value AS DECIMAL(14,2)) v FROM top_customers), r AS (SELECT customer_id, first_name, last_name, CAST(lifetime_value AS DECIMAL(14,2)) v FROM ({TOP_REF})) SELECT (SELECT count(*) FROM t) || ' ' || (SELECT count(*) FROM ((SELECT * FROM t EXCEPT ALL SELECT * FROM r) UNION ALL (SELECT * FROM r EXCEPT ALL SELECT * FROM t)))" 2>&1)
[ "$res" = "10 0" ] || fail "rows/mismatches: $res"
echo EVAL_OK
""",
            "solution": [cmd("cd /home/user/projects/dbt_duckdb && cat > models/marts/top_customers.sql <<'EOF'\n"
                             + TOP_SQL + "EOF\ndbt build --select top_customers")],
        },
        {
            "name": "dbt_postgres_fix_product_sales",
            "id_seed": "data_batch1",
            "app": "dbt",
            "category": "data_transformation",
            "interface": "cli",
            "action_number": 5,
            "related_apps": ["dbt", "postgresql", "terminal"],
            "source": ["https://docs.getdbt.com/docs/build/sql-models", "https://docs.getdbt.com/reference/commands/run",
                       "https://www.postgresql.org/docs/15/queries-table-expressions.html#QUERIES-JOIN"],
            "abstract": "The product_sales model of the dbt project /home/user/projects/dbt_postgres is wrong: its "
                        "units_sold and revenue count the items of every order, but they must count only orders "
                        "whose status is completed or shipped (products without such sales keep 0). Fix the model "
                        "and build the project so that the table dbt.product_sales in the PostgreSQL database "
                        "analytics holds the right figures. The database server is running.",
            "verbose": "Fix a dbt model on PostgreSQL and rebuild it:\n"
                       "1. Open a terminal and cd /home/user/projects/dbt_postgres; open "
                       "models/marts/product_sales.sql in an editor.\n"
                       "2. The model left-joins stg_order_items to products and then left-joins stg_orders with the "
                       "status condition, which filters nothing: items of cancelled, returned and pending orders "
                       "are still summed.\n"
                       "3. Rewrite it so that only items of orders with status 'completed' or 'shipped' are summed, "
                       "for example a CTE that inner-joins stg_order_items to stg_orders with that status filter, "
                       "left-joined to the products source; keep the columns product_id, name, category, "
                       "units_sold, revenue and coalesce the sums to 0.\n"
                       "4. Run `dbt build` (or `dbt run`) in the project folder; it writes the schema dbt of the "
                       "database analytics.\n"
                       "5. Check with `psql -d analytics -c 'SELECT * FROM dbt.product_sales ORDER BY revenue DESC "
                       "LIMIT 5'`.",
            "config": [START_POSTGRES,
                       {"type": "execute", "parameters": {"command": bash(
                           "psql -qX -d analytics -c 'DROP SCHEMA IF EXISTS dbt CASCADE; CREATE SCHEMA dbt'")}}],
            "eval": f"""start-postgres >/dev/null 2>&1
grep -qi "completed" /home/user/projects/dbt_postgres/models/marts/product_sales.sql || fail "the model no longer filters on status"
res=$(psql -AtX -v ON_ERROR_STOP=1 -c "WITH m AS (SELECT product_id, units_sold::bigint, revenue::numeric(14,2) FROM dbt.product_sales), r AS ({PRODUCT_SALES_REF}) SELECT (SELECT count(*) FROM m) || ' ' || (SELECT count(*) FROM ((TABLE m EXCEPT ALL TABLE r) UNION ALL (TABLE r EXCEPT ALL TABLE m)) x)" 2>&1)
[ "$res" = "40 0" ] || fail "rows/mismatches: $res"
echo EVAL_OK
""",
            "solution": [cmd("cd /home/user/projects/dbt_postgres && cat > models/marts/product_sales.sql <<'EOF'\n"
                             + PRODUCT_SALES_FIXED + "EOF\ndbt build")],
        },
        {
            "name": "dbt_duckdb_customer_tests",
            "id_seed": "data_batch2",
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
            "name": "dbt_duckdb_country_seed",
            "id_seed": "data_batch3",
            "app": "dbt",
            "category": "data_transformation",
            "interface": "cli",
            "action_number": 5,
            "related_apps": ["dbt", "terminal"],
            "source": ["https://docs.getdbt.com/docs/build/seeds", "https://docs.getdbt.com/reference/commands/build"],
            "abstract": "Add /home/user/Downloads/country_names.csv (code,name) as a seed named country_names to the "
                        "dbt project /home/user/projects/dbt_duckdb, and a model customers_by_country with the "
                        "columns country_name and customers (number of customers per country, from stg_customers, "
                        "named through the seed). Build both so they exist in the project's DuckDB warehouse.",
            "verbose": "Add a dbt seed and a model that uses it:\n"
                       "1. Copy /home/user/Downloads/country_names.csv into /home/user/projects/dbt_duckdb/seeds/.\n"
                       "2. Create models/marts/customers_by_country.sql: select n.name as country_name, count(*) "
                       "as customers from {{ ref('stg_customers') }} c join {{ ref('country_names') }} n on "
                       "n.code = c.country group by n.name\n"
                       "3. In /home/user/projects/dbt_duckdb run `dbt build --select country_names "
                       "customers_by_country` (seeds load before the models that ref them).\n"
                       "4. Check that both succeed.",
            "files": {"country_names.csv": country_csv()},
            "config": [clean("/home/user/projects/dbt_duckdb/seeds/country_names.csv",
                             "/home/user/projects/dbt_duckdb/models/marts/customers_by_country.sql"),
                       {"type": "copyfile_from_host_to_guest", "parameters": {
                           "src": "{folder}/country_names.csv", "dest": "/home/user/Downloads/country_names.csv"}}],
            "eval": """wh=/home/user/projects/dbt_duckdb/warehouse.duckdb
[ -f /home/user/projects/dbt_duckdb/seeds/country_names.csv ] || fail "no seeds/country_names.csv in the project"
seed=$(duck "$wh" "SELECT count(*) FROM country_names")
[ "$seed" = 12 ] || fail "the seed table country_names is not loaded ($seed)"
res=$(duck "$wh" "WITH a AS (SELECT country_name, CAST(customers AS BIGINT) AS n FROM customers_by_country), b AS (SELECT s.name AS country_name, count(*) AS n FROM read_csv_auto('/home/user/projects/data/raw_customers.csv') c JOIN read_csv_auto('/home/user/Downloads/country_names.csv') s ON s.code = c.country GROUP BY s.name) SELECT (SELECT count(*) FROM a) || ' ' || (SELECT count(*) FROM ((SELECT * FROM a EXCEPT ALL SELECT * FROM b) UNION ALL (SELECT * FROM b EXCEPT ALL SELECT * FROM a)))")
[ "$res" = "12 0" ] || fail "customers_by_country rows/mismatches: $res"
echo EVAL_OK
""",
            "solution": [cmd("cd /home/user/projects/dbt_duckdb && cp /home/user/Downloads/country_names.csv seeds/ && "
                             "cat > models/marts/customers_by_country.sql <<'EOF'\n" + CUSTOMERS_BY_COUNTRY_SQL
                             + "EOF\ndbt build --select country_names customers_by_country")],
        },
        {
            "name": "dbt_duckdb_docs",
            "id_seed": "data_batch3",
            "app": "dbt",
            "category": "data_transformation",
            "interface": "cli",
            "action_number": 2,
            "related_apps": ["dbt", "terminal"],
            "source": ["https://docs.getdbt.com/reference/commands/cmd-docs"],
            "abstract": "Generate the documentation site of the dbt project /home/user/projects/dbt_duckdb (with "
                        "the catalog of the warehouse's tables and columns), so that it can be served with dbt "
                        "docs serve.",
            "verbose": "Generate dbt documentation:\n"
                       "1. Open a terminal and cd /home/user/projects/dbt_duckdb.\n"
                       "2. Run `dbt docs generate`; it writes target/index.html, target/manifest.json and "
                       "target/catalog.json (the catalog lists each table's columns).\n"
                       "3. Check that target/catalog.json exists.",
            "config": [clean("/home/user/projects/dbt_duckdb/target/catalog.json",
                             "/home/user/projects/dbt_duckdb/target/index.html")],
            "eval": """python3 - <<'PY'
import json, os
t = "/home/user/projects/dbt_duckdb/target"
if not os.path.exists(f"{t}/index.html"):
    print("EVAL_FAIL: target/index.html does not exist"); raise SystemExit
try:
    nodes = json.load(open(f"{t}/catalog.json"))["nodes"]
except (OSError, ValueError, KeyError) as e:
    print(f"EVAL_FAIL: no usable catalog.json: {e}"); raise SystemExit
node = nodes.get("model.shop_duckdb.customer_orders", {})
cols = {c.lower() for c in node.get("columns", {})}
if "lifetime_value" not in cols:
    print(f"EVAL_FAIL: the catalog has no columns of customer_orders ({sorted(cols)})"); raise SystemExit
print("EVAL_OK")
PY
""",
            "solution": [cmd("cd /home/user/projects/dbt_duckdb && dbt docs generate")],
        },
        {
            "name": "dbt_stg_orders_as_table",
            "id_seed": "data_batch4",
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
            "id_seed": "data_batch4",
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
            "name": "dbt_upgrade_infeasible",
            "id_seed": "data_batch4",
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
    ]


def main() -> None:
    """Write this module's tasks and index them."""
    write_pairs(pairs())
