"""Generate data-image batch 5: ``python3 evaluation_examples/generators/data_batch5.py``.

Ten more task pairs on the ``data`` image, written as in ``data_batch1.py`` (verbose/abstract
pairs; ``eval.sh`` evaluators printing ``EVAL_OK`` / ``EVAL_FAIL: why``): a generated column,
a salary-history archive, e-mail domains in SQLite, an export from the dbt warehouse, a
broken notebook to fix, schedules in Airflow
and Dagster, a checksummed backup, and one infeasible request (a push with no network).
"""
from __future__ import annotations

import hashlib
import json

import data_batch1 as b1
from data_batch1 import START_MARIADB, START_POSTGRES, bash, clean, cmd
from data_batch2 import CRM_CONFIG, crm, salary_digest_sql, samples

ARCHIVE_BEFORE = "2020-01-01"


def salary_archive() -> tuple[int, int, str]:
    """(rows left in salaries, rows archived, md5 of the archived rows as MariaDB's query prints them)."""
    rows = samples()["salaries"]
    old = sorted((r for r in rows if r[3] is not None and r[3] < ARCHIVE_BEFORE), key=lambda r: (r[0], r[2]))
    digest = hashlib.md5(",".join(f"{e}|{a}|{f}|{t}" for e, a, f, t in old).encode()).hexdigest()
    return len(rows) - len(old), len(old), digest


ARCHIVE_SQL = (f"START TRANSACTION; CREATE TABLE salaries_archive LIKE salaries; INSERT INTO salaries_archive "
               f"SELECT * FROM salaries WHERE to_date < '{ARCHIVE_BEFORE}'; DELETE FROM salaries WHERE to_date < "
               f"'{ARCHIVE_BEFORE}'; COMMIT;")

GENERATED_SQL = ("ALTER TABLE orders ADD COLUMN order_month date GENERATED ALWAYS AS "
                 "(date_trunc('month', order_date::timestamp)::date) STORED;")


def broken_notebook() -> str:
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


MONTHLY_EXPORT = ("/opt/venvs/jupyter/bin/python -c \"import duckdb; con = duckdb.connect("
                  "'/home/user/projects/dbt_duckdb/warehouse.duckdb', read_only=True); con.sql(\\\"COPY (SELECT "
                  "strftime(month, '%Y-%m-%d') AS month, round(revenue, 2) AS revenue, orders FROM monthly_revenue "
                  "ORDER BY 1) TO '/home/user/reports/monthly_revenue.csv' (HEADER)\\\")\"")

AIRFLOW_SCHEDULE_EVAL = """out=$(/opt/venvs/airflow/bin/python - <<'PY' 2>&1
try:
    from airflow.dag_processing.dagbag import DagBag
except ImportError:
    from airflow.models.dagbag import DagBag
bag = DagBag(dag_folder="/home/user/airflow/dags")   # examples are off (AIRFLOW__CORE__LOAD_EXAMPLES)
if bag.import_errors:
    print("EVAL_FAIL: import errors:", dict(bag.import_errors))
    raise SystemExit
dag = bag.get_dag("shop_etl")
if dag is None:
    print("EVAL_FAIL: no DAG shop_etl"); raise SystemExit
seen = {str(getattr(dag, "schedule", None)), str(getattr(getattr(dag, "timetable", None), "summary", None))}
print("EVAL_OK" if "0 6 * * *" in seen else f"EVAL_FAIL: shop_etl's schedule is {seen}")
PY
)
echo "$out" | grep -E "EVAL_(OK|FAIL)" | tail -n 1 | grep . || fail "could not load the DAGs: $(echo "$out" | tail -n 3)"
"""

DAGSTER_SCHEDULE_EVAL = """out=$(cd /home/user/projects/dagster_project && /opt/venvs/dagster/bin/python - <<'PY' 2>&1
from dagster_project.definitions import defs
try:
    schedules = list(defs.schedules or [])
except AttributeError:
    schedules = list(defs.get_repository_def().schedule_defs)
found = [(s.cron_schedule, s.job_name) for s in schedules]
ok = any(c == "30 7 * * *" and j == "revenue_job" for c, j in found)
print("EVAL_OK" if ok and len(found) == 1 else f"EVAL_FAIL: schedules are {found}")
PY
)
echo "$out" | grep -E "EVAL_(OK|FAIL)" | tail -n 1 | grep . || fail "could not load the definitions: $(echo "$out" | tail -n 3)"
"""

BACKUP_EVAL = """b=/home/user/backups
[ -f $b/raw_csv.tar.gz ] || fail "$b/raw_csv.tar.gz does not exist"
[ -f $b/raw_csv.tar.gz.sha256 ] || fail "$b/raw_csv.tar.gz.sha256 does not exist"
(cd $b && sha256sum -c --status raw_csv.tar.gz.sha256) || fail "the checksum file does not verify the archive"
names=$(tar tzf $b/raw_csv.tar.gz 2>&1 | sort | tr '\\n' ' ')
[ "$names" = "raw_customers.csv raw_order_items.csv raw_orders.csv raw_payments.csv raw_products.csv " ] || fail "the archive holds: $names"
rm -rf /tmp/desktop_env_eval/x && mkdir -p /tmp/desktop_env_eval/x && tar xzf $b/raw_csv.tar.gz -C /tmp/desktop_env_eval/x || fail "cannot extract it"
for f in /tmp/desktop_env_eval/x/*; do cmp -s "$f" "/home/user/projects/data/$(basename "$f")" || fail "$(basename "$f") differs from the original"; done
echo EVAL_OK
"""


def pairs() -> list[dict]:
    left, archived, digest = salary_archive()
    crm_sql, _keep = crm()
    return [
        {
            "name": "postgres_generated_order_month",
            "app": "postgresql",
            "category": "data_transformation",
            "interface": "cli",
            "action_number": 2,
            "related_apps": ["postgresql", "terminal"],
            "source": ["https://www.postgresql.org/docs/15/ddl-generated-columns.html",
                       "https://www.postgresql.org/docs/15/functions-datetime.html#FUNCTIONS-DATETIME-TRUNC"],
            "abstract": "Add a column order_month (type date: the first day of the order's month) to the orders "
                        "table of the PostgreSQL database analytics, computed by the database itself from "
                        "order_date for existing and future rows (a stored generated column). The database "
                        "server is running.",
            "verbose": "Add a stored generated column in PostgreSQL:\n"
                       "1. Open a terminal and connect with `psql -d analytics`.\n"
                       "2. ALTER TABLE orders ADD COLUMN order_month date GENERATED ALWAYS AS (date_trunc('month', "
                       "order_date::timestamp)::date) STORED; (the cast to timestamp keeps the expression "
                       "immutable, which generated columns require).\n"
                       "3. Check: SELECT order_date, order_month FROM orders LIMIT 5;",
            "config": [START_POSTGRES, {"type": "execute", "parameters": {"command": bash(
                "psql -qX -d analytics -c 'ALTER TABLE orders DROP COLUMN IF EXISTS order_month'")}}],
            "eval": """start-postgres >/dev/null 2>&1
gen=$(psql -AtX -c "SELECT attgenerated::text || '|' || format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = 'orders'::regclass AND attname = 'order_month' AND NOT attisdropped" 2>&1)
[ "$gen" = "s|date" ] || fail "orders.order_month is not a stored generated date column ('$gen')"
bad=$(psql -AtX -c "SELECT count(*) FROM orders WHERE order_month IS DISTINCT FROM date_trunc('month', order_date::timestamp)::date" 2>&1)
[ "$bad" = 0 ] || fail "$bad rows have a wrong order_month"
echo EVAL_OK
""",
            "solution": [cmd(f"psql -X -v ON_ERROR_STOP=1 -d analytics -c \"{GENERATED_SQL}\"")],
        },
        {
            "name": "mariadb_archive_old_salaries",
            "app": "mariadb",
            "category": "traditional_data_processing",
            "interface": "cli",
            "action_number": 4,
            "related_apps": ["mariadb", "terminal"],
            "source": ["https://mariadb.com/kb/en/create-table/#create-table-like",
                       "https://mariadb.com/kb/en/insert-select/", "https://mariadb.com/kb/en/delete/"],
            "abstract": f"In the MariaDB database hr, move the salary history that ended before {ARCHIVE_BEFORE} "
                        f"(rows of salaries whose to_date is earlier than that) into a new table salaries_archive "
                        f"with the same columns, and remove those rows from salaries. No row may be lost or "
                        f"duplicated. The database server is running.",
            "verbose": f"Archive old rows in MariaDB:\n"
                       f"1. Open a terminal and connect with `mariadb hr`.\n"
                       f"2. START TRANSACTION; CREATE TABLE salaries_archive LIKE salaries;\n"
                       f"3. INSERT INTO salaries_archive SELECT * FROM salaries WHERE to_date < '{ARCHIVE_BEFORE}';\n"
                       f"4. DELETE FROM salaries WHERE to_date < '{ARCHIVE_BEFORE}'; COMMIT;\n"
                       f"5. Check that the two tables' row counts add up to the old count of salaries.",
            "config": [START_MARIADB, {"type": "execute", "parameters": {"command": bash(
                "mariadb hr -e 'DROP TABLE IF EXISTS salaries_archive'"), "until": {"returncode": 0}}}],
            "eval": f"""start-mariadb >/dev/null 2>&1
res=$(mariadb -N -B hr -e "SELECT (SELECT COUNT(*) FROM salaries), (SELECT COUNT(*) FROM salaries_archive), (SELECT COUNT(*) FROM salaries WHERE to_date < '{ARCHIVE_BEFORE}')" 2>&1)
[ "$res" = "$(printf '{left}\\t{archived}\\t0')" ] || fail "salaries / archive / old rows left: $res (expected {left} / {archived} / 0)"
got=$(mariadb -N -B hr -e "{salary_digest_sql('salaries_archive')}" 2>&1)
[ "$got" = "{digest}" ] || fail "the archived rows are not the old rows (digest $got)"
echo EVAL_OK
""",
            "solution": [cmd(f"mariadb hr -e \"{ARCHIVE_SQL}\"")],
        },
        {
            "name": "sqlite_contact_domains",
            "app": "sqlite3",
            "category": "traditional_data_processing",
            "interface": "cli",
            "action_number": 3,
            "related_apps": ["sqlite3", "terminal"],
            "source": ["https://www.sqlite.org/lang_altertable.html", "https://www.sqlite.org/lang_corefunc.html#substr"],
            "abstract": "In the SQLite database /home/user/crm/contacts.db, add a column domain to the contacts table "
                        "holding the part of each contact's e-mail address after the @, in lower case, filled in "
                        "for every row.",
            "verbose": "Derive a column in SQLite:\n"
                       "1. Open a terminal and run `sqlite3 /home/user/crm/contacts.db`.\n"
                       "2. ALTER TABLE contacts ADD COLUMN domain TEXT;\n"
                       "3. UPDATE contacts SET domain = lower(substr(email, instr(email, '@') + 1));\n"
                       "4. Check: SELECT domain, count(*) FROM contacts GROUP BY domain;",
            "files": {"contacts.sql": crm_sql},
            "config": CRM_CONFIG,
            "eval": """db=/home/user/crm/contacts.db
[ -f "$db" ] || fail "$db does not exist"
has=$(sqlite3 -readonly "$db" "SELECT count(*) FROM pragma_table_info('contacts') WHERE name = 'domain'" 2>&1)
[ "$has" = 1 ] || fail "contacts has no column domain"
bad=$(sqlite3 -readonly "$db" "SELECT count(*) FROM contacts WHERE domain IS NOT lower(substr(email, instr(email, '@') + 1))" 2>&1)
[ "$bad" = 0 ] || fail "$bad rows have a wrong domain"
echo EVAL_OK
""",
            "solution": [cmd("sqlite3 /home/user/crm/contacts.db \"ALTER TABLE contacts ADD COLUMN domain TEXT; UPDATE "
                             "contacts SET domain = lower(substr(email, instr(email, '@') + 1));\"")],
        },
        {
            "name": "duckdb_export_monthly_revenue",
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
        {
            "name": "jupyter_fix_broken_notebook",
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
        {
            "name": "airflow_schedule_shop_etl",
            "app": "airflow",
            "category": "data_orchestration",
            "interface": "cli",
            "action_number": 3,
            "related_apps": ["airflow", "terminal"],
            "source": ["https://airflow.apache.org/docs/apache-airflow/stable/authoring-and-scheduling/cron.html",
                       "https://airflow.apache.org/docs/apache-airflow/stable/core-concepts/dags.html"],
            "abstract": "The Airflow DAG shop_etl (/home/user/airflow/dags/shop_etl.py) runs only when triggered. "
                        "Make it run every day at 06:00 with the cron expression 0 6 * * *, keeping its other "
                        "settings, so that the DAG file still imports without errors.",
            "verbose": "Schedule an Airflow DAG:\n"
                       "1. Open /home/user/airflow/dags/shop_etl.py in an editor.\n"
                       "2. In the @dag(...) decorator, change schedule=None to schedule=\"0 6 * * *\".\n"
                       "3. Save, and check in a terminal that `airflow dags list-import-errors` reports no error.",
            "config": [],
            "eval": AIRFLOW_SCHEDULE_EVAL,
            "solution": [cmd("sed -i 's/schedule=None/schedule=\"0 6 * * *\"/' /home/user/airflow/dags/shop_etl.py")],
        },
        {
            "name": "dagster_schedule_0730",
            "app": "dagster",
            "category": "data_orchestration",
            "interface": "cli",
            "action_number": 3,
            "related_apps": ["dagster", "terminal"],
            "source": ["https://docs.dagster.io/guides/automate/schedules",
                       "https://docs.dagster.io/api/dagster/schedules-sensors"],
            "abstract": "The Dagster project in /home/user/projects/dagster_project schedules revenue_job daily at "
                        "06:00. The upstream files now arrive later: move that schedule to 07:30 every day (cron "
                        "30 7 * * *), keeping a single schedule for revenue_job.",
            "verbose": "Change a Dagster schedule:\n"
                       "1. Open /home/user/projects/dagster_project/dagster_project/definitions.py in an editor.\n"
                       "2. In dg.ScheduleDefinition(job=revenue_job, cron_schedule=\"0 6 * * *\"), change the cron "
                       "expression to \"30 7 * * *\".\n"
                       "3. Save, and check that `dagster definitions validate -m dagster_project.definitions` (in "
                       "the project folder) succeeds.",
            "config": [],
            "eval": DAGSTER_SCHEDULE_EVAL,
            "solution": [cmd("sed -i 's/cron_schedule=\"0 6 \\* \\* \\*\"/cron_schedule=\"30 7 * * *\"/' "
                             "/home/user/projects/dagster_project/dagster_project/definitions.py")],
        },
        {
            "name": "terminal_checksummed_backup",
            "app": "terminal",
            "category": "it_service_management",
            "interface": "cli",
            "action_number": 3,
            "related_apps": ["terminal"],
            "source": ["https://www.gnu.org/software/tar/manual/tar.html#gzip",
                       "https://www.gnu.org/software/coreutils/manual/html_node/sha2-utilities.html"],
            "abstract": "Back up the raw shop extracts (the raw_*.csv files of /home/user/projects/data) into a "
                        "gzip-compressed tar archive /home/user/backups/raw_csv.tar.gz with the files at the "
                        "archive's top level, and write its SHA-256 checksum in sha256sum's format to "
                        "/home/user/backups/raw_csv.tar.gz.sha256 so that `sha256sum -c` can verify it.",
            "verbose": "Make a checksummed backup in the terminal:\n"
                       "1. mkdir -p /home/user/backups\n"
                       "2. cd /home/user/projects/data && tar czf /home/user/backups/raw_csv.tar.gz raw_*.csv\n"
                       "3. cd /home/user/backups && sha256sum raw_csv.tar.gz > raw_csv.tar.gz.sha256\n"
                       "4. Check with `sha256sum -c raw_csv.tar.gz.sha256` (prints OK).",
            "config": [clean("/home/user/backups")],
            "eval": BACKUP_EVAL,
            "solution": [cmd("mkdir -p /home/user/backups && cd /home/user/projects/data && tar czf "
                             "/home/user/backups/raw_csv.tar.gz raw_*.csv && cd /home/user/backups && sha256sum "
                             "raw_csv.tar.gz > raw_csv.tar.gz.sha256")],
        },
        {
            "name": "git_push_infeasible",
            "app": "terminal",
            "category": "data_transformation",
            "interface": "cli",
            "action_number": 3,
            "related_apps": ["terminal", "dbt"],
            "infeasible": True,
            "source": ["https://git-scm.com/docs/git-push"],
            "abstract": "Commit the dbt project /home/user/projects/dbt_duckdb and push it to the team's GitHub "
                        "repository git@github.com:shopco/analytics.git on the branch main. If this cannot be done "
                        "from this machine, say so.",
            "verbose": "Publish a dbt project with git:\n"
                       "1. cd /home/user/projects/dbt_duckdb; git init; git add .; git commit -m 'dbt project'.\n"
                       "2. git remote add origin git@github.com:shopco/analytics.git\n"
                       "3. git push -u origin main\n"
                       "If GitHub cannot be reached from this machine (no network, no key), do not pretend the "
                       "push happened: report that the task cannot be done.",
            "config": [],
        },
        {
            "name": "metabase_infeasible",
            "app": "chromium",
            "category": "data_analysis_and_visualization",
            "interface": "gui",
            "action_number": 8,
            "related_apps": ["chromium", "metabase"],
            "infeasible": True,
            "source": ["https://www.metabase.com/docs/latest/questions/start"],
            "abstract": "In this machine's Metabase (http://localhost:3000/metabase), create a question showing "
                        "revenue per month from the analytics database and save it to the collection Shop "
                        "reports. If this cannot be done here, say so.",
            "verbose": "Build a Metabase question:\n"
                       "1. Open http://localhost:3000/metabase in Chromium and log in.\n"
                       "2. New > Question > the analytics database > orders joined with order_items; summarize "
                       "the sum of quantity * unit_price by order_date: month.\n"
                       "3. Save it to the collection Shop reports.\n"
                       "If Metabase is not installed on this machine, do not build the chart elsewhere: report "
                       "that the task cannot be done.",
            "config": [],
        },
    ]


def main() -> None:
    b1.PAIRS[:] = pairs()
    b1.main(batch="data_batch5")


if __name__ == "__main__":
    main()
