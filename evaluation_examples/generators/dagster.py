"""Dagster task pairs (``examples/dagster``) on the ``data`` image.

The sample project ``dagster_project``: materialize its assets, add an asset, run its job,
move its schedule. Evaluators check the warehouse and the runs recorded in the desktop
user's Dagster instance (``dagster_run_check``).

Regenerate with ``python3 -m evaluation_examples.generators dagster`` from the repository
root (see the package docstring).
"""
from __future__ import annotations

from .common import clean, cmd, write_pairs
from .datasets import SAMPLE_HOME


def dagster_run_check(job: str | None = None) -> str:
    """eval.sh lines failing unless the desktop user's Dagster instance records a successful run (of ``job``)."""
    where = "status = 'SUCCESS'" + (f" AND pipeline_name = '{job}'" if job else "")
    what = f"successful run of {job}" if job else "successful run"
    return f"""runs=$(python3 -c "
import sqlite3
try:
    con = sqlite3.connect('file:/home/user/.dagster/history/runs.db?mode=ro', uri=True)
    print(con.execute(\\"SELECT count(*) FROM runs WHERE {where}\\").fetchone()[0])
except sqlite3.Error as e:
    print('no run storage:', e)
" 2>&1)
[ "$runs" -ge 1 ] 2>/dev/null || fail "no {what} in the Dagster instance ($runs)"
"""


DAILY_REF = ("SELECT CAST(o.order_date AS DATE) AS d, sum(i.quantity * i.unit_price) AS r "
             "FROM read_csv_auto('/home/user/projects/data/raw_orders.csv') o "
             "JOIN read_csv_auto('/home/user/projects/data/raw_order_items.csv') i ON i.order_id = o.id "
             "WHERE o.status IN ('completed', 'shipped') GROUP BY 1")

ORDERS_BY_STATUS_ASSET = '''

@dg.asset(description="Number of orders per status, written to DuckDB")
def orders_by_status(orders: pd.DataFrame) -> pd.DataFrame:
    counts = orders.groupby("status", as_index=False).size().rename(columns={"size": "orders"})
    with duckdb.connect(str(WAREHOUSE)) as con:
        con.execute("CREATE OR REPLACE TABLE orders_by_status AS SELECT * FROM counts")
    return counts
'''


def dagster_definitions_with_asset() -> str:
    """The sample project's definitions.py with the orders_by_status asset added and registered."""
    text = (SAMPLE_HOME / "projects/dagster_project/dagster_project/definitions.py").read_text()
    marker = "\n\nrevenue_job = "
    assert marker in text and "assets=[orders, order_items, daily_revenue]" in text, "definitions.py changed"
    text = text.replace(marker, ORDERS_BY_STATUS_ASSET + marker, 1)
    return text.replace("assets=[orders, order_items, daily_revenue]",
                        "assets=[orders, order_items, daily_revenue, orders_by_status]", 1)


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


def pairs() -> list[dict]:
    """The task pairs of this module (``common`` describes their keys)."""
    return [
        {
            "name": "dagster_materialize_revenue",
            "id_seed": "data_batch1",
            "app": "dagster",
            "category": "data_orchestration",
            "interface": "cli",
            "action_number": 3,
            "related_apps": ["dagster", "duckdb", "terminal"],
            "source": ["https://docs.dagster.io/guides/build/assets/materializing-assets",
                       "https://docs.dagster.io/api/dagster/cli#dagster-asset"],
            "abstract": "Materialize every asset of the Dagster project in /home/user/projects/dagster_project so "
                        "that its DuckDB warehouse (dagster_project/warehouse.duckdb) holds an up-to-date "
                        "daily_revenue table. The run must be recorded as successful in the Dagster instance of "
                        "the desktop user (DAGSTER_HOME=/home/user/.dagster).",
            "verbose": "Run the Dagster assets once:\n"
                       "1. Open a terminal and cd /home/user/projects/dagster_project (the code location is the "
                       "module dagster_project.definitions; DAGSTER_HOME is already set in login shells).\n"
                       "2. Run `dagster asset materialize -m dagster_project.definitions --select '*'` and wait "
                       "until it reports that the run succeeded (it materializes orders, order_items and then "
                       "daily_revenue).\n"
                       "   Alternatively start the web UI with `start-dagster`, open http://localhost:3000 and click "
                       "Materialize all on the asset graph.\n"
                       "3. Check that the run's output ends with RUN_SUCCESS and lists the daily_revenue "
                       "materialization.",
            "config": [clean("/home/user/projects/dagster_project/warehouse.duckdb",
                             "/home/user/projects/dagster_project/warehouse.duckdb.wal")],
            "eval": f"""wh=/home/user/projects/dagster_project/warehouse.duckdb
[ -f "$wh" ] || fail "$wh does not exist"
res=$(duck "$wh" "WITH a AS (SELECT CAST(order_date AS DATE) AS d, revenue AS r FROM daily_revenue), b AS ({DAILY_REF}) SELECT (SELECT count(*) FROM a) = (SELECT count(*) FROM b) AND NOT EXISTS (SELECT 1 FROM b LEFT JOIN a ON a.d = b.d WHERE a.r IS NULL OR abs(a.r - b.r) > 0.01)" 2>&1)
[ "$res" = True ] || fail "daily_revenue does not match the CSVs: $res"
{dagster_run_check()}echo EVAL_OK
""",
            "solution": [cmd("cd /home/user/projects/dagster_project && "
                             "dagster asset materialize -m dagster_project.definitions --select '*'")],
        },
        {
            "name": "dagster_orders_by_status_asset",
            "id_seed": "data_batch2",
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
            "name": "dagster_execute_revenue_job",
            "id_seed": "data_batch4",
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
            "name": "dagster_schedule_0730",
            "id_seed": "data_batch5",
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
    ]


def main() -> None:
    """Write this module's tasks and index them."""
    write_pairs(pairs())
