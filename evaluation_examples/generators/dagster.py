"""Dagster task pairs (``examples/dagster``) on the ``data`` image.

The sample project ``dagster_project``: materialize its assets, add an asset, run its job,
move its schedule (``cli_pairs``); and the same kind of work in Dagster's own web UI from the
``dagster`` warm state (``gui_pairs``, the GUI suite). Evaluators check the warehouse, the runs
recorded in the desktop user's Dagster instance (``dagster_run_check``) and what Dagster's
GraphQL API reports (``dagster_gql``: schedules, materializations, runs and their tags).

Regenerate with ``python3 -m evaluation_examples.generators dagster`` from the repository
root (see the package docstring).
"""
from __future__ import annotations

import textwrap

from .common import bash, clean, cmd, page_target, python_check, start_helper, write_pairs
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
    return cli_pairs() + gui_pairs() + cli_gui_pairs()


def cli_pairs() -> list[dict]:
    """The command-line pairs (data batches 1-5)."""
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


DAGSTER = "http://localhost:3000"


def ui(css: str, text: str | None = None, url: str = DAGSTER) -> dict:
    """A GUI-step target in Dagster's web UI (the page's DOM; ``text`` narrows by visible text)."""
    return page_target(css, text, url)


def asset_box(name: str) -> dict:
    """The catalog's tick box of asset ``name`` (its label: the input itself has no size)."""
    return ui(f'label:has(input[data-testid="checkbox-{name}"])', url=DAGSTER + "/assets")


#: How long a GUI solution waits for a run it launched: its worker process takes minutes to start under
#: emulation, more on a loaded host.
RUN_WAIT_S = 900

#: A run's page once the run succeeded: its event log holds the RUN_SUCCESS event (a tag; "Success" alone would
#: also match STEP_SUCCESS events while the run goes on).
RUN_SUCCEEDED = ui('[class*="BaseTag_baseTag"]', "RUN_SUCCESS", url=DAGSTER + "/runs/")
#: The same from the run's status in the page header, which kept updating on a loaded host when the event log below
#: stopped at RUN_ENQUEUED (the pairs written since use it).
RUN_HEADER_SUCCESS = ui('[class*="PageHeader_container"] [class*="BaseTag_baseTag"]', "Success", url=DAGSTER + "/runs/")

#: The GUI step opening the asset catalog.
CATALOG = {"gui": "click", "target": ui('a[href="/assets"]'), "note": "Catalog in the navigation bar"}

#: Setup of the GUI tasks: from the ``dagster`` warm state Dagster runs and its UI is open in Chromium;
#: ``start-dagster`` returns at once then (and starts it on an image without the state).
GUI_CONFIG = start_helper("start-dagster")


#: The keys every Dagster GUI-suite pair shares (a cli+gui pair adds the terminal).
GUI_COMMON = {"id_seed": "gui_suite", "app": "dagster", "snapshot": "data:dagster", "gui_suite": True,
              "related_apps": ["dagster", "chromium"], "category": "data_orchestration", "interface": "gui",
              "config": GUI_CONFIG}

def dagster_gql(query: str, check: str, settle: str | None = None) -> str:
    """eval.sh lines: ask Dagster's GraphQL API (the running web server) ``query`` into ``data`` and fail
    with what was found unless the Python expression ``check`` holds on it. With ``settle`` (an expression
    on ``data``), ask again for up to 4 minutes while it holds: a run the task launched may still be going."""
    return python_check(f"""import json, time, urllib.request
def ask():
    req = urllib.request.Request("http://127.0.0.1:3000/graphql", method="POST",
                                 headers={{"Content-Type": "application/json"}},
                                 data=json.dumps({{"query": {query!r}}}).encode())
    try:
        with urllib.request.urlopen(req, timeout=240) as r:
            return json.load(r)["data"]
    except Exception as exc:
        raise SystemExit(f"Dagster's GraphQL API did not answer: {{exc}}")
data, deadline = ask(), time.monotonic() + 240
while ({settle or "False"}) and time.monotonic() < deadline:
    time.sleep(5)
    data = ask()
if not ({check}):
    print(f"found {{json.dumps(data)[:800]}}")
""")


#: Asset name -> whether it has a materialization.
MATERIALIZED = "{'/'.join(n['assetKey']['path']): bool(n['assetMaterializations']) for n in data['assetNodes']}"
ASSETS_QUERY = "{ assetNodes { assetKey { path } assetMaterializations(limit: 1) { runId } } }"
RUNS_QUERY = "{ runsOrError { ... on Runs { results { runId jobName status tags { key value } } } } }"
#: The runs of revenue_job, from RUNS_QUERY's ``data``.
REVENUE_RUNS = "[r for r in data['runsOrError']['results'] if r['jobName'] == 'revenue_job']"
UNFINISHED = ("QUEUED", "NOT_STARTED", "STARTING", "STARTED", "MANAGED")
#: The run tag the Launchpad pair asks for.
RUN_TAG = ("requested_by", "finance_review")
#: The run configuration the Launchpad run-config pair asks for: all steps in one process.
IN_PROCESS_CONFIG = "execution: {config: {in_process: {}}}"
RUN_CONFIG_QUERY = "{ runsOrError { ... on Runs { results { runId jobName status runConfig } } } }"
#: The description of the materialization the report pair asks for, and the query reading every asset's last one
#: (a reported materialization has no run: its runId is empty) and the runs (there must be none).
REPORT_DESCRIPTION = "Rebuilt by the finance team outside Dagster"
REPORTED_QUERY = ("{ assetNodes { assetKey { path } assetMaterializations(limit: 1) { runId description } } "
                  "runsOrError { ... on Runs { results { runId } } } }")


def revenue_run_py(fail: bool) -> str:
    """Setup (guest python3): launch revenue_job through the GraphQL API and wait until the run has ended as wanted
    (its worker takes minutes to start under emulation): failed (``fail``: raw_orders.csv is hidden meanwhile, then
    put back) or succeeded."""
    launch = """    launched = gql("mutation($p: ExecutionParams!) { launchRun(executionParams: $p) { __typename "
                   "... on LaunchRunSuccess { run { runId } } ... on PythonError { message } } }",
                   {"p": {"selector": {"repositoryLocationName": repo["location"]["name"],
                                       "repositoryName": repo["name"], "jobName": "revenue_job"},
                          "runConfigData": {}}})["launchRun"]
    if "run" not in launched:
        sys.exit(f"launching revenue_job: {launched}")
    run_id, status, deadline = launched["run"]["runId"], "", time.monotonic() + 1200
    while status not in ("FAILURE", "SUCCESS", "CANCELED") and time.monotonic() < deadline:
        time.sleep(3)
        status = gql("query($id: ID!) { runOrError(runId: $id) { ... on Run { status } } }",
                     {"id": run_id})["runOrError"]["status"]
"""
    body = (f"""data = "/home/user/projects/data/raw_orders.csv"
os.rename(data, data + ".hidden")
try:
{launch}    if status != "FAILURE":
        sys.exit(f"the run {{run_id}} of revenue_job ended {{status or 'not'}} (FAILURE expected)")
    print("failed run", run_id)
finally:
    os.rename(data + ".hidden", data)
""" if fail else textwrap.dedent(launch) + """if status != "SUCCESS":
    sys.exit(f"the run {run_id} of revenue_job ended {status or 'not'} (SUCCESS expected)")
print("successful run", run_id)
""")
    return """import json, os, sys, time, urllib.request
def gql(query, variables=None):
    req = urllib.request.Request("http://127.0.0.1:3000/graphql", method="POST",
                                 headers={"Content-Type": "application/json"},
                                 data=json.dumps({"query": query, "variables": variables or {}}).encode())
    with urllib.request.urlopen(req, timeout=600) as r:
        return json.load(r)["data"]
repo = gql("{ repositoriesOrError { ... on RepositoryConnection { nodes { name location { name } } } } }")
repo = repo["repositoriesOrError"]["nodes"][0]
""" + body


#: Setup of the re-execution pair: a failed run of revenue_job.
FAILED_RUN_PY = revenue_run_py(fail=True)

#: The runs of revenue_job with their parents (for the re-execution pair).
LINEAGE_QUERY = ("{ runsOrError { ... on Runs { results { runId jobName status parentRunId "
                 "tags { key value } } } } }")


#: GUI steps opening revenue_job's Launchpad: Jobs, revenue_job, the arrow beside Materialize all, Open launchpad.
OPEN_LAUNCHPAD = [
    {"gui": "click", "target": ui('a[href="/jobs"]'), "note": "Jobs in the navigation bar"},
    {"gui": "click", "target": ui("a", "revenue_job", url=DAGSTER + "/jobs")},
    {"gui": "click", "target": ui('span:has(button[class*="Button_primary"]) + [aria-haspopup] button',
                                  url=DAGSTER + "/locations/"),
     "note": "the arrow beside Materialize all"},
    {"gui": "click", "target": ui("button", "Open launchpad", url=DAGSTER + "/locations/")},
]


def asset_menu(name: str, item: str) -> list[dict]:
    """GUI steps choosing ``item`` in the menu beside Materialize on asset ``name``'s page (Catalog, the asset,
    the arrow beside Materialize)."""
    page = DAGSTER + f"/assets/{name}"
    return [
        CATALOG,
        {"gui": "click", "target": ui(f'a[href="/assets/{name}"]', url=DAGSTER + "/assets")},
        {"gui": "click", "target": ui('button:has([aria-label="arrow_drop_down"])', url=page),
         "note": "the arrow beside Materialize"},
        {"gui": "click", "target": ui("[role=menuitem]", item, url=page)},
    ]


def materialize_selected(names: list[str], essential: bool = False) -> list[dict]:
    """GUI steps on the catalog (Catalog in the navigation bar): tick ``names``, click Materialize selected and
    wait until each row shows Materialized (``essential``: the click, for cli+gui)."""
    steps = [{"gui": "click", "target": asset_box(n)} for n in names]
    steps += [
        {"gui": "wait", "for": ui("button", f"Materialize selected ({len(names)})", url=DAGSTER + "/assets")},
        {"gui": "click", "target": ui("button", "Materialize selected", url=DAGSTER + "/assets"),
         **({"essential": True} if essential else {})},
    ]
    steps += [{"gui": "wait", "for": ui(f'div[class*="rowGrid"]:has(input[data-testid="checkbox-{n}"]) '
                                        '[aria-label="check_passed"]', url=DAGSTER + "/assets"),
               "timeout_s": RUN_WAIT_S, "note": f"{n}'s row shows Materialized (a green tick)"} for n in names]
    return steps


def gui_pairs() -> list[dict]:
    """GUI pairs: work in Dagster's own web UI in Chromium (the GUI suite)."""
    common = GUI_COMMON
    return [
        {
            **common,
            "name": "dagster_gui_schedule_on",
            "action_number": 2,
            "source": ["https://docs.dagster.io/guides/automate/schedules"],
            "abstract": "In Dagster's web UI (open in Chromium), turn on the schedule of revenue_job so that the "
                        "Dagster daemon starts running it every day.",
            "verbose": "Turn a schedule on in Dagster's web UI:\n"
                       "1. In the Dagster tab in Chromium, click Automation in the left-hand navigation bar.\n"
                       "2. In the row of revenue_job_schedule, click the switch on the right so that it turns on.\n"
                       "3. Nothing else is needed: the schedule is running.",
            "eval": dagster_gql("{ repositoriesOrError { ... on RepositoryConnection { nodes { schedules "
                                "{ name scheduleState { status } } } } } }",
                                "[(s['name'], s['scheduleState']['status']) for n in data['repositoriesOrError']"
                                "['nodes'] for s in n['schedules']] == [('revenue_job_schedule', 'RUNNING')]")
                    + "echo EVAL_OK\n",
            "solution": [
                {"gui": "click", "target": ui('a[href="/automation"]'), "note": "Automation in the navigation bar"},
                {"gui": "wait", "for": ui('label[class*="formatSwitch"]:has(input:not(:disabled))',
                                          url=DAGSTER + "/automation"),
                 "note": "the page first draws a disabled switch that ignores clicks, then the live one"},
                {"gui": "click", "target": ui('label[class*="formatSwitch"]', url=DAGSTER + "/automation"),
                 "note": "the schedule's on/off switch (the input itself has no size)"},
                {"gui": "wait", "for": ui('label[class*="formatSwitch"]:has(input:checked)',
                                          url=DAGSTER + "/automation")},
            ],
        },
        {
            **common,
            "name": "dagster_gui_materialize_selected",
            "action_number": 4,
            "source": ["https://docs.dagster.io/guides/build/assets/materializing-assets"],
            "abstract": "In Dagster's web UI (open in Chromium), materialize only the assets orders and order_items "
                        "(not daily_revenue), in one run, and wait until both are materialized.",
            "verbose": "Materialize two assets from Dagster's asset catalog:\n"
                       "1. In the Dagster tab in Chromium, click Catalog in the left-hand navigation bar.\n"
                       "2. Tick the boxes of orders and order_items (leave daily_revenue unticked).\n"
                       "3. Click Materialize selected (2) at the top right.\n"
                       "4. Wait until both rows show Materialized instead of Never materialized.",
            "eval": dagster_gql(ASSETS_QUERY, f"{MATERIALIZED} == "
                                "{'orders': True, 'order_items': True, 'daily_revenue': False}")
                    + "echo EVAL_OK\n",
            "solution": [CATALOG, *materialize_selected(["orders", "order_items"])],
        },
        {
            **common,
            "name": "dagster_gui_launch_with_tag",
            "action_number": 8,
            "source": ["https://docs.dagster.io/guides/operate/webserver#launchpad",
                       "https://docs.dagster.io/guides/build/jobs/job-execution"],
            "abstract": f"In Dagster's web UI (open in Chromium), launch one run of the job revenue_job from its "
                        f"Launchpad with the run tag {RUN_TAG[0]}={RUN_TAG[1]}, and let it finish successfully.",
            "verbose": "Launch a job with a run tag from Dagster's Launchpad:\n"
                       "1. In the Dagster tab in Chromium, click Jobs in the left-hand navigation bar, then "
                       "revenue_job.\n"
                       "2. Click the arrow beside Materialize all and choose Open launchpad.\n"
                       f"3. Click Edit tags; type {RUN_TAG[0]} as the tag key and {RUN_TAG[1]} as its value; click "
                       "Apply.\n"
                       "4. Click Materialize, and wait until the run's page shows that it succeeded.",
            "eval": dagster_gql(RUNS_QUERY, f"any(r['status'] == 'SUCCESS' and {{'key': {RUN_TAG[0]!r}, 'value': "
                                            f"{RUN_TAG[1]!r}}} in r['tags'] for r in {REVENUE_RUNS})",
                                settle=f"any(r['status'] in {UNFINISHED} for r in {REVENUE_RUNS})")
                    + "echo EVAL_OK\n",
            "solution": [
                *OPEN_LAUNCHPAD,
                {"gui": "click", "target": ui("[role=dialog] button", "Edit tags", url=DAGSTER + "/locations/")},
                {"gui": "type", "target": ui('input[placeholder="Tag Key"]', url=DAGSTER + "/locations/"),
                 "text": RUN_TAG[0]},
                {"gui": "type", "target": ui('input[placeholder="Tag Value"]', url=DAGSTER + "/locations/"),
                 "text": RUN_TAG[1]},
                {"gui": "click", "target": ui("button", "Apply", url=DAGSTER + "/locations/")},
                {"gui": "wait", "for": {"gone": ui('input[placeholder="Tag Key"]', url=DAGSTER + "/locations/")}},
                {"gui": "click", "target": ui("[role=dialog] button", "Materialize", url=DAGSTER + "/locations/")},
                {"gui": "wait", "for": {"url_is": DAGSTER + "/runs/"}, "note": "the launch opens the run's page"},
                {"gui": "wait", "for": RUN_SUCCEEDED, "timeout_s": RUN_WAIT_S,
                 "note": "the run's page says it succeeded (minutes under emulation)"},
            ],
        },
        {
            **common,
            "name": "dagster_gui_launchpad_run_config",
            "action_number": 8,
            "source": ["https://docs.dagster.io/guides/operate/webserver#launchpad",
                       "https://docs.dagster.io/guides/operate/run-executors"],
            "abstract": "In Dagster's web UI (open in Chromium), launch one run of the job revenue_job from its "
                        f"Launchpad with the run configuration `{IN_PROCESS_CONFIG}`, so that all its steps run in "
                        "one process, and let it finish successfully.",
            "verbose": "Launch a job with run configuration from Dagster's Launchpad:\n"
                       "1. In the Dagster tab in Chromium, click Jobs in the left-hand navigation bar, then "
                       "revenue_job.\n"
                       "2. Click the arrow beside Materialize all and choose Open launchpad.\n"
                       f"3. In the configuration editor, replace the text with `{IN_PROCESS_CONFIG}`; the panel "
                       "below says No errors.\n"
                       "4. Click Materialize, and wait until the run's page shows that it succeeded.",
            "eval": dagster_gql(RUN_CONFIG_QUERY, f"any(r['status'] == 'SUCCESS' and 'in_process' in "
                                                  f"(((r['runConfig'] or {{}}).get('execution') or {{}}).get('config') "
                                                  f"or {{}}) for r in {REVENUE_RUNS})",
                                settle=f"any(r['status'] in {UNFINISHED} for r in {REVENUE_RUNS})")
                    + "echo EVAL_OK\n",
            "solution": [
                *OPEN_LAUNCHPAD,
                {"gui": "click", "target": ui("[role=dialog] .CodeMirror-lines", url=DAGSTER + "/locations/"),
                 "note": "the run configuration editor (it holds {})"},
                {"gui": "key", "keys": "ctrl+a"},
                {"gui": "type", "text": IN_PROCESS_CONFIG},
                {"gui": "key", "keys": "shift+ctrl+end", "note": "drop what the editor may have added after the "
                                                                 "cursor (closing brackets)"},
                {"gui": "key", "keys": "delete"},
                {"gui": "wait", "for": ui("[role=dialog]", "No errors", url=DAGSTER + "/locations/"),
                 "note": "the launchpad checked the configuration"},
                {"gui": "click", "target": ui("[role=dialog] button", "Materialize", url=DAGSTER + "/locations/")},
                {"gui": "wait", "for": {"url_is": DAGSTER + "/runs/"}, "note": "the launch opens the run's page"},
                {"gui": "wait", "for": RUN_HEADER_SUCCESS, "timeout_s": RUN_WAIT_S,
                 "note": "the run's status in the page header is Success (minutes under emulation)"},
            ],
        },
        {
            **common,
            "name": "dagster_gui_report_materialization",
            "action_number": 5,
            "source": ["https://docs.dagster.io/guides/build/assets/external-assets",
                       "https://docs.dagster.io/guides/operate/webserver"],
            "abstract": "The table daily_revenue was rebuilt outside Dagster. Without running anything, record that "
                        "in Dagster's web UI (open in Chromium): report a materialization event for the asset "
                        f"daily_revenue with the description \"{REPORT_DESCRIPTION}\".",
            "verbose": "Report a materialization of an asset by hand in Dagster's web UI:\n"
                       "1. In the Dagster tab in Chromium, click Catalog in the left-hand navigation bar, then "
                       "daily_revenue.\n"
                       "2. Click the arrow beside Materialize at the top right and choose Report materialization "
                       "event.\n"
                       f"3. Type the description {REPORT_DESCRIPTION} and click Report event.\n"
                       "4. Do not launch a run: the asset shows a materialization without one.",
            "eval": dagster_gql(REPORTED_QUERY, "[(m['runId'], m['description']) for n in data['assetNodes'] "
                                                "if n['assetKey']['path'] == ['daily_revenue'] for m in "
                                                f"n['assetMaterializations']] == [('', {REPORT_DESCRIPTION!r})] "
                                                "and data['runsOrError']['results'] == []")
                    + "echo EVAL_OK\n",
            "solution": [
                *asset_menu("daily_revenue", "Report materialization event"),
                {"gui": "type", "target": ui('[role=dialog] input[placeholder="Add a description"]',
                                             url=DAGSTER + "/assets/daily_revenue"), "text": REPORT_DESCRIPTION},
                {"gui": "click", "target": ui("[role=dialog] button", "Report event",
                                              url=DAGSTER + "/assets/daily_revenue")},
                {"gui": "wait", "for": {"gone": ui("[role=dialog]", url=DAGSTER + "/assets/daily_revenue")}},
            ],
        },
        {
            **common,
            "name": "dagster_gui_wipe_materializations",
            "action_number": 7,
            "source": ["https://docs.dagster.io/guides/build/assets/materializing-assets",
                       "https://docs.dagster.io/guides/operate/webserver"],
            "abstract": "The last materialization of the asset daily_revenue in Dagster was computed from a bad input. "
                        "In Dagster's web UI (open in Chromium), wipe the materializations of daily_revenue only, so "
                        "that it shows as never materialized; orders and order_items keep theirs.",
            "verbose": "Wipe one asset's materializations in Dagster's web UI:\n"
                       "1. In the Dagster tab in Chromium, click Catalog in the left-hand navigation bar, then "
                       "daily_revenue.\n"
                       "2. Click the arrow beside Materialize at the top right and choose Wipe materializations.\n"
                       "3. The dialog names daily_revenue: click Wipe, then Done.\n"
                       "4. Do not wipe orders or order_items.",
            "config": [*GUI_CONFIG, {"type": "execute", "parameters": {
                "command": bash(f"python3 - <<'PY'\n{revenue_run_py(fail=False)}PY"), "timeout_s": 1500}}],
            "eval": dagster_gql(ASSETS_QUERY, f"{MATERIALIZED} == "
                                "{'orders': True, 'order_items': True, 'daily_revenue': False}")
                    + "echo EVAL_OK\n",
            "solution": [
                *asset_menu("daily_revenue", "Wipe materializations"),
                {"gui": "click", "target": ui('[role=dialog] button[class*="Button_danger"]', "Wipe",
                                              url=DAGSTER + "/assets/daily_revenue"),
                 "note": "the dialog's red Wipe button (the menu item says Wipe too)"},
                {"gui": "click", "target": ui("[role=dialog] button", "Done", url=DAGSTER + "/assets/daily_revenue"),
                 "note": "the dialog then says 1 Wiped"},
                {"gui": "wait", "for": {"gone": ui("[role=dialog]", url=DAGSTER + "/assets/daily_revenue")}},
            ],
        },
        {
            **common,
            "name": "dagster_gui_reexecute_from_failure",
            "action_number": 4,
            "source": ["https://docs.dagster.io/guides/operate/run-executors#re-execution",
                       "https://docs.dagster.io/guides/operate/webserver"],
            "abstract": "The last run of revenue_job in Dagster failed because raw_orders.csv was missing at the time; "
                        "the file is back. In Dagster's web UI (open in Chromium), re-execute that run from its "
                        "failure and let the re-execution finish successfully.",
            "verbose": "Re-execute a failed run from the failure in Dagster's web UI:\n"
                       "1. In the Dagster tab in Chromium, click Runs in the left-hand navigation bar.\n"
                       "2. In the row of the failed run of revenue_job, click View.\n"
                       "3. Click the arrow beside Re-execute all (top right) and choose From failure.\n"
                       "4. The new run's page opens: wait until it shows that the run succeeded.",
            "config": [*GUI_CONFIG, {"type": "execute", "parameters": {
                "command": bash(f"python3 - <<'PY'\n{FAILED_RUN_PY}PY"), "timeout_s": 1500}}],
            "eval": dagster_gql(LINEAGE_QUERY,
                                f"any(r['status'] == 'SUCCESS' and r['parentRunId'] in [f['runId'] for f in "
                                f"{REVENUE_RUNS} if f['status'] == 'FAILURE'] and {{'key': 'dagster/is_resume_retry', "
                                f"'value': 'true'}} in r['tags'] for r in {REVENUE_RUNS})",
                                settle=f"any(r['status'] in {UNFINISHED} for r in {REVENUE_RUNS})")
                    + "echo EVAL_OK\n",
            "solution": [
                {"gui": "click", "target": ui('a[href="/runs"]'), "note": "Runs in the navigation bar"},
                {"gui": "click", "target": ui('a[href^="/runs/"]', "View", url=DAGSTER + "/runs"),
                 "note": "the failed run, the only one"},
                {"gui": "click", "target": ui('button[class*="LaunchButton_dropdownArrow"]', url=DAGSTER + "/runs/"),
                 "note": "the arrow beside Re-execute all"},
                {"gui": "click", "target": ui("[role=menuitem]", "From failure", url=DAGSTER + "/runs/")},
                {"gui": "wait", "for": RUN_SUCCEEDED, "timeout_s": RUN_WAIT_S,
                 "note": "the re-execution's page says it succeeded (minutes under emulation)"},
            ],
        },
        {
            **common,
            "name": "dagster_gui_backfill_infeasible",
            "action_number": 4,
            "infeasible": True,
            "source": ["https://docs.dagster.io/guides/build/partitions-and-backfills/backfilling-data"],
            "abstract": "In Dagster's web UI, launch a backfill of the asset daily_revenue for its daily partitions "
                        "from 2024-03-01 to 2024-03-31. If this cannot be done here, say so.",
            "verbose": "Backfill a partitioned asset in Dagster's web UI:\n"
                       "1. Open Catalog, then daily_revenue, and click Materialize.\n"
                       "2. In the partition selection dialog, choose 2024-03-01 to 2024-03-31 and launch the "
                       "backfill.\n"
                       "If daily_revenue has no partitions, there is nothing to backfill: do not materialize it "
                       "instead, report that the task cannot be done.",
        },
    ]


def cli_gui_pairs() -> list[dict]:
    """cli+gui pairs: an edit in the terminal, then Dagster's web UI (the GUI suite); the essential GUI item
    is the materialization launched in the UI, without which the task scores 0."""
    common = {**GUI_COMMON, "related_apps": [*GUI_COMMON["related_apps"], "terminal"], "interface": "cli+gui"}
    definitions = "/home/user/projects/dagster_project/dagster_project/definitions.py"
    return [
        {
            **common,
            "name": "dagster_edit_then_materialize_in_ui",
            "action_number": 6,
            "source": ["https://docs.dagster.io/guides/build/assets/defining-assets",
                       "https://docs.dagster.io/guides/build/assets/materializing-assets"],
            "abstract": "Add an asset orders_by_status to the Dagster project in /home/user/projects/dagster_project "
                        "(in dagster_project/definitions.py: it depends on orders and writes the table "
                        "orders_by_status, columns status and orders, the number of orders per status, to the "
                        "project's DuckDB warehouse dagster_project/warehouse.duckdb, like daily_revenue does) "
                        "and register it. Then, in Dagster's web UI (open in Chromium), load the new definitions "
                        "and materialize orders and orders_by_status there.",
            "verbose": "Add an asset in the editor or the terminal, then materialize it from Dagster's web UI:\n"
                       f"1. In {definitions}, add below daily_revenue `@dg.asset def orders_by_status(orders: "
                       "pd.DataFrame) -> pd.DataFrame:` that counts orders per status into a column orders, "
                       "writes it with `CREATE OR REPLACE TABLE orders_by_status AS SELECT * FROM counts` through "
                       "duckdb.connect(str(WAREHOUSE)) and returns it; add orders_by_status to the assets list of "
                       "dg.Definitions.\n"
                       "2. In the Dagster tab in Chromium, click Catalog, then Reload definitions at the top "
                       "right; orders_by_status appears in the list.\n"
                       "3. Tick orders and orders_by_status, click Materialize selected (2) and wait until both "
                       "are materialized.",
            "eval": f"""wh=/home/user/projects/dagster_project/warehouse.duckdb
res=$(duck "$wh" "SELECT count(*) = (SELECT count(DISTINCT status) FROM read_csv_auto('/home/user/projects/data/raw_orders.csv')) AND sum(orders) = (SELECT count(*) FROM read_csv_auto('/home/user/projects/data/raw_orders.csv')) FROM orders_by_status" 2>&1)
[ "$res" = True ] || fail "orders_by_status in $wh does not count the orders per status: $res"
""" + dagster_gql(ASSETS_QUERY, f"{MATERIALIZED}.get('orders_by_status') is True") + "echo EVAL_OK\n",
            "solution": [
                cmd(f"cat > {definitions} <<'EOF'\n" + dagster_definitions_with_asset() + "EOF"),
                CATALOG,
                {"gui": "click", "target": ui("button", "Reload definitions", url=DAGSTER + "/assets")},
                {"gui": "wait", "for": asset_box("orders_by_status"), "timeout_s": 900,
                 "note": "the catalog lists the new asset once the code server has reloaded (a new process "
                         "importing Dagster and the project: over 300 s with two VMs on two cores)"},
                *materialize_selected(["orders", "orders_by_status"], essential=True),
            ],
        },
    ]


def main() -> None:
    """Write this module's tasks and index them."""
    write_pairs(pairs())
