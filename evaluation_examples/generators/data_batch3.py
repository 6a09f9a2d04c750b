"""Generate data-image batch 3: ``python3 evaluation_examples/generators/data_batch3.py``.

Ten more task pairs on the ``data`` image, written as in ``data_batch1.py`` (verbose/abstract
pairs; ``eval.sh`` evaluators printing ``EVAL_OK`` / ``EVAL_FAIL: why``): a materialized
view, a read-only role for an access request, a backup, a CSV load into MariaDB, a dbt
seed and docs, an Airflow connection, and two infeasible requests (Superset is in no image;
the guest has no mail system or network).
"""
from __future__ import annotations

import csv
import hashlib
import io
import random

import data_batch1 as b1
from data_batch1 import START_MARIADB, START_POSTGRES, bash, clean, cmd
from data_batch2 import samples

# --------------------------------------------------------------------------- new hires (MariaDB)


def new_hires() -> tuple[str, str]:
    """new_hires.csv (10 employees, ids 121-130) and the digest MariaDB's query must give after loading it."""
    d = samples()
    rng = random.Random(130)
    titles = {"Engineering": "Software Engineer", "Sales": "Account Executive", "Marketing": "Content Lead",
              "Finance": "Financial Analyst", "Human Resources": "Recruiter", "Support": "Support Agent",
              "Data": "Data Engineer"}
    first = ["Aiko", "Bram", "Cleo", "Dario", "Esme", "Femi", "Greta", "Hiro", "Isla", "Jonas"]
    last = ["Achebe", "Brandt", "Cruz", "Dahl", "Eriksen", "Forde", "Grant", "Holm", "Iqbal", "Jovic"]
    rows = []
    for i, eid in enumerate(range(121, 131)):
        dept_id, dept, _loc = rng.choice(d["departments"])
        hire = f"2025-0{rng.randint(2, 6)}-{rng.randint(1, 28):02d}"
        rows.append([eid, first[i], last[i], f"{first[i][0]}.{last[i]}{eid}@corp.example".lower(), dept_id,
                     titles[dept], hire, dept_id])
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["id", "first_name", "last_name", "email", "department_id", "title", "hire_date", "manager_id"])
    w.writerows(rows)
    digest = hashlib.md5(",".join("|".join(map(str, r)) for r in rows).encode()).hexdigest()
    return buf.getvalue(), digest


# --------------------------------------------------------------------------- dbt seed

COUNTRY_NAMES = {"BR": "Brazil", "CA": "Canada", "DE": "Germany", "ES": "Spain", "FR": "France",
                 "GB": "United Kingdom", "IN": "India", "IT": "Italy", "JP": "Japan", "NL": "Netherlands",
                 "PL": "Poland", "US": "United States"}


def country_csv() -> str:
    return "code,name\n" + "".join(f"{c},{n}\n" for c, n in sorted(COUNTRY_NAMES.items()))


CUSTOMERS_BY_COUNTRY_SQL = """-- Customers per country, with the country's name from the country_names seed.
select n.name as country_name, count(*) as customers
from {{ ref('stg_customers') }} c
join {{ ref('country_names') }} n on n.code = c.country
group by n.name
"""

MATVIEW_SQL = ("CREATE MATERIALIZED VIEW public.monthly_sales AS SELECT date_trunc('month', o.order_date)::date AS "
               "month, sum(i.quantity * i.unit_price) AS revenue FROM orders o JOIN order_items i ON i.order_id = "
               "o.id WHERE o.status IN ('completed', 'shipped') GROUP BY 1; CREATE UNIQUE INDEX monthly_sales_month_idx "
               "ON public.monthly_sales (month);")
MATVIEW_REF = ("SELECT date_trunc('month', o.order_date)::date AS month, sum(i.quantity * i.unit_price)::numeric(14,2) "
               "AS revenue FROM orders o JOIN order_items i ON i.order_id = o.id WHERE o.status IN ('completed', "
               "'shipped') GROUP BY 1")
GRANT_SQL = ("CREATE ROLE bi_reader LOGIN PASSWORD 'bi-pass'; GRANT CONNECT ON DATABASE analytics TO bi_reader; "
             "GRANT USAGE ON SCHEMA public TO bi_reader; GRANT SELECT ON ALL TABLES IN SCHEMA public TO bi_reader;")


def pairs() -> list[dict]:
    hires_csv, hires_digest = new_hires()
    return [
        {
            "name": "postgres_monthly_sales_matview",
            "app": "postgresql",
            "category": "data_warehousing",
            "interface": "cli",
            "action_number": 3,
            "related_apps": ["postgresql", "terminal"],
            "source": ["https://www.postgresql.org/docs/15/sql-creatematerializedview.html",
                       "https://www.postgresql.org/docs/15/sql-refreshmaterializedview.html"],
            "abstract": "In the PostgreSQL database analytics, create a materialized view public.monthly_sales with "
                        "the columns month (the first day of the month, type date) and revenue (sum of quantity * "
                        "unit_price of the items of completed or shipped orders in that month), one row per "
                        "month, and make it possible to refresh it concurrently (without blocking readers). The "
                        "database server is running.",
            "verbose": "Create a materialized view that can be refreshed concurrently:\n"
                       "1. Open a terminal and connect with `psql -d analytics`.\n"
                       "2. CREATE MATERIALIZED VIEW public.monthly_sales AS SELECT date_trunc('month', "
                       "o.order_date)::date AS month, sum(i.quantity * i.unit_price) AS revenue FROM orders o "
                       "JOIN order_items i ON i.order_id = o.id WHERE o.status IN ('completed', 'shipped') GROUP "
                       "BY 1;\n"
                       "3. REFRESH ... CONCURRENTLY needs a unique index on the view: CREATE UNIQUE INDEX "
                       "monthly_sales_month_idx ON public.monthly_sales (month);\n"
                       "4. Test it with REFRESH MATERIALIZED VIEW CONCURRENTLY monthly_sales;",
            "config": [START_POSTGRES, {"type": "execute", "parameters": {"command": bash(
                "psql -qX -d analytics -c 'DROP MATERIALIZED VIEW IF EXISTS public.monthly_sales'")}}],
            "eval": f"""start-postgres >/dev/null 2>&1
n=$(psql -AtX -c "SELECT count(*) FROM pg_matviews WHERE schemaname = 'public' AND matviewname = 'monthly_sales'")
[ "$n" = 1 ] || fail "public.monthly_sales is not a materialized view"
out=$(psql -AtX -v ON_ERROR_STOP=1 -c "REFRESH MATERIALIZED VIEW CONCURRENTLY public.monthly_sales" 2>&1) || fail "cannot refresh it concurrently: $out"
res=$(psql -AtX -v ON_ERROR_STOP=1 -c "WITH m AS (SELECT month::date, revenue::numeric(14,2) FROM public.monthly_sales), r AS ({MATVIEW_REF}) SELECT (SELECT count(*) FROM ((TABLE m EXCEPT ALL TABLE r) UNION ALL (TABLE r EXCEPT ALL TABLE m)) x)" 2>&1)
[ "$res" = 0 ] || fail "monthly_sales differs from the orders: $res"
echo EVAL_OK
""",
            "solution": [cmd(f"psql -X -v ON_ERROR_STOP=1 -d analytics -c \"{MATVIEW_SQL}\"")],
        },
        {
            "name": "postgres_bi_reader_access",
            "app": "postgresql",
            "category": "it_service_management",
            "interface": "cli",
            "action_number": 3,
            "related_apps": ["postgresql", "terminal"],
            "source": ["https://www.postgresql.org/docs/15/sql-createrole.html",
                       "https://www.postgresql.org/docs/15/sql-grant.html"],
            "abstract": "Access request from the BI team: they need a PostgreSQL login bi_reader with the password "
                        "bi-pass that can read (SELECT) every table in the schema public of the database analytics "
                        "over TCP on 127.0.0.1, and must not be able to change any data. Set it up. The database "
                        "server is running.",
            "verbose": "Create a read-only PostgreSQL login:\n"
                       "1. Open a terminal and connect with `psql -d analytics` (you are a superuser).\n"
                       "2. CREATE ROLE bi_reader LOGIN PASSWORD 'bi-pass'; (not a superuser).\n"
                       "3. GRANT CONNECT ON DATABASE analytics TO bi_reader; GRANT USAGE ON SCHEMA public TO "
                       "bi_reader; GRANT SELECT ON ALL TABLES IN SCHEMA public TO bi_reader;\n"
                       "4. Test: `PGPASSWORD=bi-pass psql -h 127.0.0.1 -U bi_reader -d analytics -c 'SELECT "
                       "count(*) FROM orders'` works, and an INSERT is refused.",
            "config": [START_POSTGRES],
            "eval": """start-postgres >/dev/null 2>&1
export PGPASSWORD=bi-pass
as_bi() { psql -AtX -v ON_ERROR_STOP=1 -h 127.0.0.1 -U bi_reader -d analytics -c "$1" 2>&1; }
su=$(PGPASSWORD= psql -AtX -c "SELECT rolsuper FROM pg_roles WHERE rolname = 'bi_reader'")
[ "$su" = f ] || fail "bi_reader does not exist or is a superuser ('$su')"
for t in customers products orders order_items payments; do
  out=$(as_bi "SELECT count(*) FROM $t") || fail "bi_reader cannot read $t: $out"
done
out=$(as_bi "BEGIN; INSERT INTO orders VALUES (999999, 1, '2025-01-01', 'pending'); ROLLBACK;") && fail "bi_reader can insert into orders"
case "$out" in *"permission denied"*) ;; *) fail "the insert failed for another reason: $out";; esac
out=$(as_bi "BEGIN; DELETE FROM payments; ROLLBACK;") && fail "bi_reader can delete payments"
echo EVAL_OK
""",
            "solution": [cmd(f"psql -X -v ON_ERROR_STOP=1 -d analytics -c \"{GRANT_SQL}\"")],
        },
        {
            "name": "postgres_backup_dump",
            "app": "postgresql",
            "category": "it_service_management",
            "interface": "cli",
            "action_number": 2,
            "related_apps": ["postgresql", "terminal"],
            "source": ["https://www.postgresql.org/docs/15/app-pgdump.html",
                       "https://www.postgresql.org/docs/15/app-pgrestore.html"],
            "abstract": "Before tonight's migration, back up the whole PostgreSQL database analytics (schema and "
                        "data) to /home/user/backups/analytics.dump in pg_dump's custom format, so that it can be "
                        "restored selectively with pg_restore. The database server is running.",
            "verbose": "Back up a PostgreSQL database:\n"
                       "1. Open a terminal and create the folder /home/user/backups.\n"
                       "2. Run `pg_dump -Fc -d analytics -f /home/user/backups/analytics.dump` (-Fc is the custom "
                       "format).\n"
                       "3. Check it with `pg_restore -l /home/user/backups/analytics.dump`, which lists the "
                       "tables and their data.",
            "config": [START_POSTGRES, clean("/home/user/backups")],
            "eval": """start-postgres >/dev/null 2>&1
f=/home/user/backups/analytics.dump
[ -f "$f" ] || fail "$f does not exist"
list=$(pg_restore -l "$f" 2>&1) || fail "pg_restore cannot read it (not a custom-format dump?): $list"
for t in customers products orders order_items payments; do
  echo "$list" | grep -q "TABLE DATA public $t " || fail "the dump has no data of table $t"
done
echo EVAL_OK
""",
            "solution": [cmd("mkdir -p /home/user/backups && pg_dump -Fc -d analytics -f /home/user/backups/analytics.dump")],
        },
        {
            "name": "mariadb_load_new_hires",
            "app": "mariadb",
            "category": "data_ingestion_and_integration",
            "interface": "cli",
            "action_number": 3,
            "related_apps": ["mariadb", "terminal"],
            "source": ["https://mariadb.com/kb/en/load-data-infile/",
                       "https://mariadb.com/kb/en/mariadb-command-line-client/"],
            "abstract": "HR sent the new hires as /home/user/Downloads/new_hires.csv (with a header line). Load "
                        "them into the employees table of the MariaDB database hr, with the ids and values exactly "
                        "as in the file. The database server is running.",
            "verbose": "Load a CSV file into a MariaDB table:\n"
                       "1. Open a terminal; look at the file with `head /home/user/Downloads/new_hires.csv`: its "
                       "columns are those of the employees table.\n"
                       "2. Run `mariadb --local-infile=1 hr` and then: LOAD DATA LOCAL INFILE "
                       "'/home/user/Downloads/new_hires.csv' INTO TABLE employees FIELDS TERMINATED BY ',' "
                       "LINES TERMINATED BY '\\n' IGNORE 1 LINES;\n"
                       "3. Check: SELECT count(*) FROM employees; gives 130.",
            "files": {"new_hires.csv": hires_csv},
            "config": [START_MARIADB,
                       {"type": "copyfile_from_host_to_guest", "parameters": {
                           "src": "{folder}/new_hires.csv", "dest": "/home/user/Downloads/new_hires.csv"}}],
            "eval": f"""start-mariadb >/dev/null 2>&1
n=$(mariadb -N -B hr -e "SELECT count(*) FROM employees" 2>&1)
[ "$n" = 130 ] || fail "employees has $n rows, expected 130"
got=$(mariadb -N -B hr -e "SET SESSION group_concat_max_len = 1000000; SELECT MD5(GROUP_CONCAT(CONCAT_WS('|', id, first_name, last_name, email, department_id, title, hire_date, IFNULL(manager_id, '')) ORDER BY id SEPARATOR ',')) FROM employees WHERE id > 120" 2>&1)
[ "$got" = "{hires_digest}" ] || fail "the new rows differ from the file (digest $got)"
echo EVAL_OK
""",
            "solution": [cmd("mariadb --local-infile=1 hr -e \"LOAD DATA LOCAL INFILE '/home/user/Downloads/new_hires.csv' "
                             "INTO TABLE employees FIELDS TERMINATED BY ',' LINES TERMINATED BY '\\n' IGNORE 1 LINES\"")],
        },
        {
            "name": "dbt_duckdb_country_seed",
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
            "name": "airflow_postgres_connection",
            "app": "airflow",
            "category": "data_orchestration",
            "interface": "cli",
            "action_number": 2,
            "related_apps": ["airflow", "terminal"],
            "source": ["https://airflow.apache.org/docs/apache-airflow/stable/howto/connection.html",
                       "https://airflow.apache.org/docs/apache-airflow/stable/cli-and-env-variables-ref.html#connections"],
            "abstract": "Register the shop's PostgreSQL database in Airflow as a connection with the id "
                        "analytics_pg: type postgres, host 127.0.0.1, port 5432, database (schema) analytics, "
                        "login user, password password. It must be stored in Airflow's metadata database "
                        "(AIRFLOW_HOME=/home/user/airflow).",
            "verbose": "Add an Airflow connection from the command line:\n"
                       "1. Open a terminal (AIRFLOW_HOME is set in login shells).\n"
                       "2. Run `airflow connections add analytics_pg --conn-type postgres --conn-host 127.0.0.1 "
                       "--conn-port 5432 --conn-schema analytics --conn-login user --conn-password password`.\n"
                       "3. Check with `airflow connections get analytics_pg` (without the PostgreSQL provider "
                       "package, which this machine does not have, Airflow shows the type as generic; that is "
                       "expected).",
            "config": [],
            "eval": """python3 - <<'PY'
import sqlite3
try:
    con = sqlite3.connect("file:/home/user/airflow/airflow.db?mode=ro", uri=True)
    row = con.execute("SELECT conn_type, host, port, schema, login FROM connection WHERE conn_id = 'analytics_pg'").fetchone()
except sqlite3.Error as e:
    print(f"EVAL_FAIL: cannot read airflow.db: {e}"); raise SystemExit
# Without the PostgreSQL provider package (not in the image) Airflow stores the type as generic.
want = ("postgres", "127.0.0.1", 5432, "analytics", "user")
ok = row is not None and row[0] in ("postgres", "postgresql", "generic") and tuple(row[1:]) == want[1:]
print("EVAL_OK" if ok else f"EVAL_FAIL: connection analytics_pg is {row}, expected {want}")
PY
""",
            "solution": [cmd("airflow connections add analytics_pg --conn-type postgres --conn-host 127.0.0.1 "
                             "--conn-port 5432 --conn-schema analytics --conn-login user --conn-password password")],
        },
        {
            "name": "postgres_append_customers_csv",
            "app": "postgresql",
            "category": "data_ingestion_and_integration",
            "interface": "cli",
            "action_number": 3,
            "related_apps": ["postgresql", "terminal"],
            "source": ["https://www.postgresql.org/docs/15/app-psql.html#APP-PSQL-META-COMMANDS-COPY",
                       "https://www.postgresql.org/docs/15/sql-copy.html"],
            "abstract": "Append the customers of /home/user/Downloads/new_customers.csv (with a header line, same "
                        "columns as the table) to the customers table of the PostgreSQL database analytics, with "
                        "their ids and values exactly as in the file. The database server is running.",
            "verbose": "Append a CSV file to a PostgreSQL table:\n"
                       "1. Open a terminal and look at the file: `head /home/user/Downloads/new_customers.csv` "
                       "(columns id,first_name,last_name,email,country,signup_date).\n"
                       "2. Run `psql -d analytics -c \"\\copy customers FROM '/home/user/Downloads/"
                       "new_customers.csv' CSV HEADER\"` (the client-side copy reads the file as you).\n"
                       "3. Check: SELECT count(*) FROM customers; gives 215.",
            "files": {"new_customers.csv": new_customers_csv()},
            "config": [START_POSTGRES,
                       {"type": "copyfile_from_host_to_guest", "parameters": {
                           "src": "{folder}/new_customers.csv", "dest": "/home/user/Downloads/new_customers.csv"}}],
            "eval": f"""start-postgres >/dev/null 2>&1
n=$(psql -AtX -c "SELECT count(*) FROM customers" 2>&1)
[ "$n" = 215 ] || fail "customers has $n rows, expected 215"
got=$(psql -AtX -c "SELECT md5(string_agg(concat_ws('|', id, first_name, last_name, email, country, signup_date), ',' ORDER BY id)) FROM customers WHERE id > 200" 2>&1)
[ "$got" = "{new_customers_digest()}" ] || fail "the new rows differ from the file (digest $got)"
echo EVAL_OK
""",
            "solution": [cmd("psql -X -v ON_ERROR_STOP=1 -d analytics -c \"\\copy customers FROM "
                             "'/home/user/Downloads/new_customers.csv' CSV HEADER\"")],
        },
        {
            "name": "superset_dashboard_infeasible",
            "app": "chromium",
            "category": "data_analysis_and_visualization",
            "interface": "gui",
            "action_number": 6,
            "related_apps": ["chromium", "superset"],
            "infeasible": True,
            "source": ["https://superset.apache.org/docs/using-superset/creating-your-first-dashboard"],
            "abstract": "Open the Apache Superset instance of this machine in the browser and export the dashboard "
                        "\"Shop KPIs\" as a PDF to /home/user/reports/shop_kpis.pdf. If this cannot be done here, "
                        "say so.",
            "verbose": "Export a Superset dashboard:\n"
                       "1. Start Superset (its helper would be start-superset) and open http://localhost:8088 in "
                       "Chromium; log in.\n"
                       "2. Open Dashboards > Shop KPIs.\n"
                       "3. Use the dashboard's ... menu > Download > Export to PDF and save it as "
                       "/home/user/reports/shop_kpis.pdf.\n"
                       "If Superset or the dashboard does not exist on this machine, do not create a substitute: "
                       "report that the task cannot be done.",
            "config": [],
        },
        {
            "name": "email_report_infeasible",
            "app": "terminal",
            "category": "it_service_management",
            "interface": "cli",
            "action_number": 3,
            "related_apps": ["terminal"],
            "infeasible": True,
            "source": ["https://manpages.debian.org/bookworm/mailutils/mail.1.en.html"],
            "abstract": "E-mail the file /home/user/projects/data/raw_orders.csv as an attachment to "
                        "finance@corp.example with the subject \"Orders export\", from this machine. If this "
                        "cannot be done here, say so.",
            "verbose": "Send a file by e-mail from the terminal:\n"
                       "1. Open a terminal.\n"
                       "2. Send it with a mail client, e.g. `mail -s 'Orders export' -A "
                       "/home/user/projects/data/raw_orders.csv finance@corp.example`.\n"
                       "3. Check that the message left the machine.\n"
                       "If there is no mail system or no network to deliver it, do not pretend it was sent: "
                       "report that the task cannot be done.",
            "config": [],
        },
    ]


def new_customers() -> list[list]:
    rng = random.Random(215)
    first = ["Noor", "Oskar", "Paula", "Quentin", "Rosa", "Sami", "Tara", "Umar", "Vera", "Wim", "Xenia", "Yusuf",
             "Zoe", "Alma", "Bodhi"]
    last = ["Aalto", "Borg", "Conti", "Duarte", "Ekstrom", "Ferrari", "Gallo", "Haas", "Ibsen", "Jung", "Keller",
            "Lund", "Marino", "Nagy", "Ortiz"]
    countries = sorted(COUNTRY_NAMES)
    return [[cid, first[i], last[i], f"{first[i]}.{last[i]}{cid}@example.com".lower(), rng.choice(countries),
             f"2025-0{rng.randint(1, 9)}-{rng.randint(1, 28):02d}"] for i, cid in enumerate(range(201, 216))]


def new_customers_csv() -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["id", "first_name", "last_name", "email", "country", "signup_date"])
    w.writerows(new_customers())
    return buf.getvalue()


def new_customers_digest() -> str:
    return hashlib.md5(",".join("|".join(map(str, r)) for r in new_customers()).encode()).hexdigest()


def main() -> None:
    b1.PAIRS[:] = pairs()
    b1.main(batch="data_batch3")


if __name__ == "__main__":
    main()
