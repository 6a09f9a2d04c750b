"""Airflow task pairs (``examples/airflow``) on the ``data`` image.

The sample DAG ``shop_etl``: run it, write a new DAG, add a connection and a Variable,
schedule it, and one infeasible request (a load into Snowflake with no provider and no
network). Evaluators read Airflow's metadata database (``airflow_run_check``).

Regenerate with ``python3 -m evaluation_examples.generators airflow`` from the repository
root (see the package docstring).
"""
from __future__ import annotations

from .common import checked, clean, cmd, page_target, python_check, start_helper, write_pairs

#: After Trigger, Airflow's dialog stays until the page has fetched its data again (its trigger waits for the
#: DAG's runs, grid and details to be refetched; the run is created before that). With two or three VMs on
#: two cores the dialog was still open 5 minutes after the click while the run it had created was running.
TRIGGER_DIALOG_S = 900
TRIGGER_DIALOG_NOTE = "the dialog closes once the page has fetched its data again: minutes under load"


def airflow_run_check(dag_id: str) -> str:
    """eval.sh lines failing unless Airflow's metadata database records a successful run of ``dag_id``."""
    return f"""state=$(python3 -c "
import sqlite3
con = sqlite3.connect('file:/home/user/airflow/airflow.db?mode=ro', uri=True)
print(con.execute(\\"SELECT count(*) FROM dag_run WHERE dag_id = '{dag_id}' AND state = 'success'\\").fetchone()[0])
" 2>&1)
[ "$state" -ge 1 ] 2>/dev/null || fail "no successful {dag_id} run in airflow.db ($state)"
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

#: eval.sh lines: payment_methods.csv holds the payments per method of raw_payments.csv (the payments DAG's output).
PAYMENTS_CSV_EVAL = """out=/home/user/projects/data/payment_methods.csv
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
"""

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


AIRFLOW = "http://localhost:8080"


def ui(css: str, text: str | None = None, url: str = AIRFLOW) -> dict:
    """A GUI-step target in Airflow's web UI (the page's DOM; ``text`` narrows by visible text)."""
    return page_target(css, text, url)


#: Setup of the GUI tasks: from the ``airflow`` warm state Airflow is running and its home page is
#: open in Chromium; ``start-airflow`` returns at once then (and starts it on an image without the state).
GUI_CONFIG = start_helper("start-airflow")

#: The keys every Airflow GUI-suite pair shares (a cli+gui pair adds the terminal).
GUI_COMMON = {"id_seed": "gui_suite", "app": "airflow", "snapshot": "data:airflow", "gui_suite": True,
              "related_apps": ["airflow", "chromium"], "category": "data_orchestration", "interface": "gui"}


def airflow_db(sql: str, check: str) -> str:
    """eval.sh lines: run ``sql`` on Airflow's metadata database (read-only) into ``rows`` and fail with
    the printed reason unless the Python expression ``check`` holds on them."""
    return python_check(f"""import json, sqlite3
con = sqlite3.connect("file:/home/user/airflow/airflow.db?mode=ro", uri=True)
rows = con.execute({sql!r}).fetchall()
if not ({check}):
    print(f"found {{rows}}")
""", prefix=f"{sql}: ")


#: The run configuration the trigger pair asks for.
TRIGGER_CONF = '{"region": "emea", "full_refresh": true}'
TRIGGER_RUN_ID = "emea_full_refresh"
VARIABLE = ("report_recipients", "data-team@example.com", "Who gets the daily order report")


#: Warm states holding a run of shop_etl (profiles/data/states/): the clear-and-rerun pair starts after a
#: failed run, the XCom pair after a successful one. Run in the task's setup, that run took up to 13 min
#: under load, most of the XCom pair's time limit.
FAILED_RUN_STATE = "data:airflow-etl-failed"
DONE_RUN_STATE = "data:airflow-etl-done"

#: Evaluator of the clear-and-rerun pair: the one run of shop_etl succeeded, its count_orders ran twice (asked again for
#: up to 10 minutes while the run is queued or running).
CLEARED_RUN_EVAL = checked("""import sqlite3, sys, time
def look():
    con = sqlite3.connect("file:/home/user/airflow/airflow.db?mode=ro", uri=True)
    try:
        return (con.execute("SELECT run_id, state FROM dag_run WHERE dag_id = 'shop_etl'").fetchall(),
                con.execute("SELECT task_id, state, try_number FROM task_instance WHERE dag_id = 'shop_etl'").fetchall())
    finally:
        con.close()
runs, tries = look()
deadline = time.monotonic() + 600
while any(state in ("queued", "running") for _, state in runs) and time.monotonic() < deadline:
    time.sleep(5)
    runs, tries = look()
if len(runs) != 1:
    sys.exit(f"shop_etl has {len(runs)} runs ({runs}): its failed run was to be cleared, not a new one triggered")
if runs[0][1] != "success":
    sys.exit(f"the run {runs[0][0]} is {runs[0][1]}, not success")
tasks = {task: (state, n) for task, state, n in tries}
if tasks.get("count_orders", (None, 0))[1] < 2:
    sys.exit(f"count_orders was not run again (task instances: {tasks})")
""")


#: The XCom the XCom pair reads (count_orders pushes one per order status) and the Variable it is kept in.
XCOM_KEY = "cancelled"
XCOM_VARIABLE = "cancelled_orders"
#: The pool the pool pair asks for: name, slots, description.
POOL = ("warehouse_load", 3, "Loads into the analytics warehouse")


#: The connection the GUI connection pair asks for (a Generic one: the image has no PostgreSQL provider).
CONNECTION = {"conn_id": "warehouse_db", "conn_type": "generic", "host": "127.0.0.1", "port": "5432", "login": "user",
              "password": "password", "schema": "analytics"}


def gui_pairs() -> list[dict]:
    """GUI pairs: the same work through Airflow's own web UI in Chromium (the GUI suite)."""
    key, value, description = VARIABLE
    common = GUI_COMMON
    return [
        {
            **common,
            "name": "airflow_gui_unpause",
            "action_number": 2,
            "source": ["https://airflow.apache.org/docs/apache-airflow/stable/ui.html#dags-view"],
            "abstract": "In Airflow's web UI (open in Chromium), unpause the DAG shop_etl so that the scheduler "
                        "may run it.",
            "verbose": "Unpause a DAG in Airflow's web UI:\n"
                       "1. In the Airflow tab in Chromium, click Dags in the left-hand navigation bar.\n"
                       "2. In the shop_etl card, click the pause switch (left of the play button) so that it "
                       "turns on.\n"
                       "3. The DAG is active now; nothing else is needed.",
            "config": GUI_CONFIG,
            "eval": airflow_db("SELECT is_paused FROM dag WHERE dag_id = 'shop_etl'", "rows == [(0,)]")
                    + "echo EVAL_OK\n",
            "solution": [
                {"gui": "click", "target": ui('a[href="/dags"]'), "note": "the navigation bar's Dags link"},
                {"gui": "click", "target": ui("[data-testid=toggle-pause]", url=AIRFLOW + "/dags")},
                {"gui": "wait", "for": ui("[data-testid=toggle-pause][data-state=checked]", url=AIRFLOW + "/dags")},
            ],
        },
        {
            **common,
            "name": "airflow_gui_variable",
            "action_number": 6,
            "source": ["https://airflow.apache.org/docs/apache-airflow/stable/howto/variable.html"],
            "abstract": f"Using Airflow's web UI in Chromium (not the command line), create the Airflow Variable "
                        f"{key} with the value {value} and the description \"{description}\".",
            "verbose": "Create an Airflow Variable through the web UI:\n"
                       "1. In the Airflow tab in Chromium, open Admin in the left-hand bar and choose Variables.\n"
                       "2. Click Add Variable.\n"
                       f"3. Key: {key}; Value: {value}; Description: {description}.\n"
                       "4. Click Save.",
            "config": GUI_CONFIG,
            "eval": f"""got=$(airflow variables get {key} 2>/dev/null | tail -n 1)
[ "$got" = {value} ] || fail "Variable {key} is '$got'"
""" + airflow_db(f"SELECT description FROM variable WHERE key = '{key}'", f"rows == [({description!r},)]")
                    + "echo EVAL_OK\n",
            "solution": [
                {"gui": "click", "target": ui('button[aria-label="Admin"]')},
                {"gui": "click", "target": ui("[role=menuitem]", "Variables")},
                {"gui": "click", "target": ui("button", "Add Variable", url=AIRFLOW + "/variables")},
                {"gui": "type", "target": ui("[role=dialog] input[name=key]"), "text": key},
                {"gui": "type", "target": ui("[role=dialog] textarea[name=value]"), "text": value},
                {"gui": "type", "target": ui("[role=dialog] textarea[name=description]"), "text": description},
                {"gui": "click", "target": ui("[role=dialog] footer button", "Save")},
                {"gui": "wait", "for": {"gone": ui("[role=dialog]")}},
            ],
        },
        {
            **common,
            "name": "airflow_gui_trigger_with_config",
            "action_number": 7,
            "source": ["https://airflow.apache.org/docs/apache-airflow/stable/core-concepts/params.html",
                       "https://airflow.apache.org/docs/apache-airflow/stable/ui.html"],
            "abstract": f"From Airflow's web UI in Chromium, trigger one run of the DAG shop_etl with the run ID "
                        f"{TRIGGER_RUN_ID} and the run configuration {TRIGGER_CONF}.",
            "verbose": "Trigger a DAG run with a configuration in Airflow's web UI:\n"
                       "1. In the Airflow tab in Chromium, click Dags in the left-hand bar.\n"
                       "2. In the shop_etl card, click the Trigger Dag (play) button.\n"
                       f"3. Open Advanced Options; type {TRIGGER_RUN_ID} as the Run ID.\n"
                       f"4. Replace the Configuration JSON with {TRIGGER_CONF}.\n"
                       "5. Click Trigger.",
            "config": GUI_CONFIG,
            "eval": airflow_db("SELECT run_id, run_type, conf FROM dag_run WHERE dag_id = 'shop_etl'",
                               f"[(r[0], r[1], json.loads(r[2] or 'null')) for r in rows] == "
                               f"[({TRIGGER_RUN_ID!r}, 'manual', {TRIGGER_CONF.replace('true', 'True')})]")
                    + "echo EVAL_OK\n",
            "solution": [
                {"gui": "click", "target": ui('a[href="/dags"]')},
                {"gui": "click", "target": ui("[data-testid=trigger-dag-button]", url=AIRFLOW + "/dags")},
                {"gui": "click", "target": ui("[role=dialog] button", "Advanced Options")},
                {"gui": "type", "target": ui("[role=dialog] input[name=dagRunId]"), "text": TRIGGER_RUN_ID},
                {"gui": "click", "target": ui("[role=dialog] .monaco-editor .view-lines"),
                 "note": "the Configuration JSON editor"},
                {"gui": "key", "keys": "ctrl+a"},
                {"gui": "type", "text": TRIGGER_CONF},
                {"gui": "key", "keys": "shift+ctrl+end", "note": "the editor closes brackets and quotes as they "
                                                                 "are typed: drop what it added after the cursor"},
                {"gui": "key", "keys": "delete"},
                {"gui": "click", "target": ui("[role=dialog] input[name=dagRunId]"),
                 "note": "leaving the editor reformats the JSON over four lines and the dialog grows"},
                {"gui": "wait", "for": {**ui("[role=dialog] .monaco-editor .view-line"), "index": 3},
                 "note": "a click while the dialog still grew was lost: wait for the fourth line of the JSON"},
                {"gui": "click", "target": ui("[data-testid=trigger-dag-submit]")},
                {"gui": "wait", "for": {"gone": ui("[role=dialog]")}, "timeout_s": TRIGGER_DIALOG_S,
                 "note": TRIGGER_DIALOG_NOTE},
            ],
        },
        {
            **common,
            "name": "airflow_gui_connection",
            "action_number": 10,
            "source": ["https://airflow.apache.org/docs/apache-airflow/stable/howto/connection.html"],
            "abstract": f"Using Airflow's web UI in Chromium (not the command line), create the Airflow connection "
                        f"{CONNECTION['conn_id']} of type Generic for this machine's PostgreSQL database: host "
                        f"{CONNECTION['host']}, port {CONNECTION['port']}, login {CONNECTION['login']}, password "
                        f"{CONNECTION['password']}, schema {CONNECTION['schema']}.",
            "verbose": "Create an Airflow connection through the web UI:\n"
                       "1. In the Airflow tab in Chromium, open Admin in the left-hand bar and choose Connections.\n"
                       "2. Click Add Connection.\n"
                       f"3. Connection ID: {CONNECTION['conn_id']}; Connection Type: Generic (type it in the list "
                       "to find it).\n"
                       f"4. Under Standard Fields: Host {CONNECTION['host']}, Login {CONNECTION['login']}, Password "
                       f"{CONNECTION['password']}, Port {CONNECTION['port']}, Schema {CONNECTION['schema']}.\n"
                       "5. Click Save.",
            "config": GUI_CONFIG,
            "eval": f"""got=$(airflow connections get {CONNECTION['conn_id']} -o json 2>/dev/null)
""" + checked(f"""import json, sys
want = {CONNECTION!r}
try:
    got = json.loads(sys.argv[1])[0]
except Exception:
    sys.exit("Airflow has no connection {CONNECTION['conn_id']}")
wrong = [f"{{k}} is {{got.get(k)!r}}, not {{v!r}}" for k, v in want.items()
         if str(got.get(k) or "") != v and not (k == "host" and got.get(k) == "localhost")]
if wrong:
    sys.exit("the connection {CONNECTION['conn_id']}: " + "; ".join(wrong))
""", '"$got"'),
            "solution": [
                {"gui": "click", "target": ui('button[aria-label="Admin"]')},
                {"gui": "click", "target": ui("[role=menuitem]", "Connections")},
                {"gui": "click", "target": ui("button", "Add Connection", url=AIRFLOW + "/connections")},
                {"gui": "type", "target": ui("[role=dialog] input.chakra-input", url=AIRFLOW + "/connections"),
                 "text": CONNECTION["conn_id"]},
                {"gui": "type", "target": ui("[role=dialog] input[role=combobox]", url=AIRFLOW + "/connections"),
                 "text": "Generic"},
                {"gui": "click", "target": ui("[role=option]", "Generic", url=AIRFLOW + "/connections")},
                *[{"gui": "type", "target": {**ui("[role=dialog] input.chakra-input", url=AIRFLOW + "/connections"),
                                             "index": i}, "text": CONNECTION[key],
                   "note": "the form's inputs in order: Connection ID, Host, Login, Password, Port, Schema"}
                  for i, key in enumerate(("host", "login", "password", "port", "schema"), 1)],
                {"gui": "click", "target": ui("[role=dialog] button", "Save", url=AIRFLOW + "/connections")},
                {"gui": "wait", "for": {"gone": ui("[role=dialog]", url=AIRFLOW + "/connections")}},
            ],
        },
        {
            **common,
            "name": "airflow_gui_clear_failed_task",
            "action_number": 5,
            "source": ["https://airflow.apache.org/docs/apache-airflow/stable/ui.html",
                       "https://airflow.apache.org/docs/apache-airflow/stable/core-concepts/tasks.html"],
            "abstract": "The last run of the DAG shop_etl failed in its task count_orders because raw_orders.csv was "
                        "missing at the time; the file is back. In Airflow's web UI (open in Chromium), clear the failed "
                        "task so that Airflow runs it again with what follows it, in the same run (do not trigger a "
                        "new run), and let the run succeed.",
            "verbose": "Clear and rerun a failed task in Airflow's web UI:\n"
                       "1. In the Airflow tab in Chromium, click Dags in the left-hand bar, then shop_etl.\n"
                       "2. The Overview shows the failed task count_orders and its log; click the Clear Task Instance "
                       "button beside Show Logs.\n"
                       "3. Keep Downstream selected and click Confirm.\n"
                       "4. Airflow runs count_orders and write_summary again; the Failed Runs count drops to 0 and "
                       "the run succeeds within minutes.",
            "snapshot": FAILED_RUN_STATE,
            "config": GUI_CONFIG,
            "eval": CLEARED_RUN_EVAL,
            "solution": [
                {"gui": "click", "target": ui('a[href="/dags"]'), "note": "the navigation bar's Dags link"},
                {"gui": "click", "target": ui('a[href="/dags/shop_etl"]', url=AIRFLOW + "/dags")},
                {"gui": "click", "target": ui('button[aria-label="Clear Task Instance"]', url=AIRFLOW + "/dags/shop_etl"),
                 "note": "beside Show Logs, in the failed task's panel"},
                {"gui": "click", "target": ui("[role=dialog] button", "Confirm", url=AIRFLOW + "/dags/shop_etl")},
                {"gui": "wait", "for": {"gone": ui("[role=dialog]", url=AIRFLOW + "/dags/shop_etl")}},
                {"gui": "wait", "for": ui('a[href="/dags/shop_etl/runs?state=failed"]', "0 Failed Runs",
                                          url=AIRFLOW + "/dags/shop_etl"),
                 "note": "the run is no longer failed (the evaluator waits for it to finish)"},
            ],
        },
        {
            **common,
            "name": "airflow_gui_xcom_to_variable",
            "action_number": 9,
            "source": ["https://airflow.apache.org/docs/apache-airflow/stable/core-concepts/xcoms.html",
                       "https://airflow.apache.org/docs/apache-airflow/stable/howto/variable.html"],
            "abstract": "The last run of the DAG shop_etl counted the shop's orders per status: its task count_orders "
                        "pushed each count as an XCom whose key is the status. In Airflow's web UI (open in "
                        f"Chromium), look up the number of {XCOM_KEY} orders among the XComs and store it, the "
                        f"number alone, in a new Airflow Variable {XCOM_VARIABLE}.",
            "verbose": "Read an XCom in Airflow's web UI and keep it in a Variable:\n"
                       "1. In the Airflow tab in Chromium, open Browse in the left-hand bar and choose XComs.\n"
                       f"2. Click Filter, choose Key and type {XCOM_KEY}: one row of count_orders is left.\n"
                       "3. Copy its value (the copy button beside it).\n"
                       "4. Open Admin > Variables and click Add Variable.\n"
                       f"5. Key: {XCOM_VARIABLE}; Value: the number you copied. Click Save.",
            "snapshot": DONE_RUN_STATE,
            "config": GUI_CONFIG,
            "eval": f"""got=$(airflow variables get {XCOM_VARIABLE} 2>/dev/null | tail -n 1)
""" + checked(f"""import json, sqlite3, sys
con = sqlite3.connect("file:/home/user/airflow/airflow.db?mode=ro", uri=True)
rows = con.execute("SELECT value FROM xcom WHERE dag_id = 'shop_etl' AND task_id = 'count_orders' "
                   "AND key = '{XCOM_KEY}'").fetchall()
if len(rows) != 1:
    sys.exit(f"count_orders has {{len(rows)}} XComs {XCOM_KEY} ({{rows}}); the start state's run made one")
value = rows[0][0]
want = str(json.loads(value) if isinstance(value, (str, bytes)) else value)
if sys.argv[1].strip() != want:
    sys.exit(f"the Variable {XCOM_VARIABLE} is {{sys.argv[1]!r}}, not the XCom's {{want!r}}")
""", '"$got"'),
            "solution": [
                {"gui": "click", "target": ui('button[aria-label="Browse"]')},
                {"gui": "click", "target": ui("[role=menuitem]", "XComs")},
                {"gui": "click", "target": ui("[data-testid=add-filter-button]", url=AIRFLOW + "/xcoms")},
                {"gui": "click", "target": ui("[role=menuitem]", "Key", url=AIRFLOW + "/xcoms")},
                {"gui": "type", "target": ui("input.chakra-input", url=AIRFLOW + "/xcoms"), "text": XCOM_KEY,
                 "note": "the Key filter's input"},
                {"gui": "wait", "for": {"gone": ui("[data-testid=table-cell-key]", "completed", url=AIRFLOW + "/xcoms")},
                 "note": "the list is down to the one row"},
                {"gui": "click", "target": ui('[data-testid=table-cell-Value] button[aria-label="Copy to clipboard"]',
                                              url=AIRFLOW + "/xcoms")},
                {"gui": "click", "target": ui('button[aria-label="Admin"]')},
                {"gui": "click", "target": ui("[role=menuitem]", "Variables")},
                {"gui": "click", "target": ui("button", "Add Variable", url=AIRFLOW + "/variables")},
                {"gui": "type", "target": ui("[role=dialog] input[name=key]"), "text": XCOM_VARIABLE},
                {"gui": "click", "target": ui("[role=dialog] textarea[name=value]")},
                {"gui": "key", "keys": "ctrl+v", "note": "paste the copied count"},
                {"gui": "wait", "for": ui("[role=dialog] textarea[name=value]:valid"),
                 "note": "the required Value field holds the pasted count (empty if the copy did not happen)"},
                {"gui": "click", "target": ui("[role=dialog] footer button:not([disabled])", "Save")},
                {"gui": "wait", "for": {"gone": ui("[role=dialog]")}},
            ],
        },
        {
            **common,
            "name": "airflow_gui_pool",
            "action_number": 6,
            "source": ["https://airflow.apache.org/docs/apache-airflow/stable/administration-and-deployment/pools.html"],
            "abstract": f"Using Airflow's web UI in Chromium (not the command line), create the pool {POOL[0]} with "
                        f"{POOL[1]} slots and the description \"{POOL[2]}\", so that at most {POOL[1]} tasks "
                        "assigned to it run at once.",
            "verbose": "Create an Airflow pool through the web UI:\n"
                       "1. In the Airflow tab in Chromium, open Admin in the left-hand bar and choose Pools.\n"
                       "2. Click Add Pool.\n"
                       f"3. Name: {POOL[0]}; Slots: {POOL[1]} (replace the 0); Description: {POOL[2]}.\n"
                       "4. Click Save.",
            "config": GUI_CONFIG,
            "eval": airflow_db(f"SELECT slots, description FROM slot_pool WHERE pool = '{POOL[0]}'",
                               f"rows == [({POOL[1]}, {POOL[2]!r})]") + "echo EVAL_OK\n",
            "solution": [
                {"gui": "click", "target": ui('button[aria-label="Admin"]')},
                {"gui": "click", "target": ui("[role=menuitem]", "Pools")},
                {"gui": "click", "target": ui("button", "Add Pool", url=AIRFLOW + "/pools")},
                {"gui": "type", "target": ui("[role=dialog] input.chakra-input", url=AIRFLOW + "/pools"),
                 "text": POOL[0], "note": "Name"},
                {"gui": "click", "target": {**ui("[role=dialog] input.chakra-input", url=AIRFLOW + "/pools"),
                                            "index": 1}, "note": "Slots (it holds 0)"},
                {"gui": "key", "keys": "ctrl+a"},
                {"gui": "type", "text": str(POOL[1])},
                {"gui": "type", "target": ui("[role=dialog] textarea", url=AIRFLOW + "/pools"), "text": POOL[2],
                 "note": "Description"},
                {"gui": "click", "target": ui("[role=dialog] button", "Save", url=AIRFLOW + "/pools")},
                {"gui": "wait", "for": {"gone": ui("[role=dialog]", url=AIRFLOW + "/pools")}},
            ],
        },
        {
            **common,
            "name": "airflow_gui_slack_infeasible",
            "action_number": 5,
            "infeasible": True,
            "source": ["https://airflow.apache.org/docs/apache-airflow-providers-slack/stable/connections/slack.html"],
            "abstract": "In Airflow's web UI, add a Slack connection named slack_alerts for the team's Slack "
                        "workspace (connection type Slack API) and send a test message to #data-alerts from the "
                        "connection form's Test button. If this cannot be done here, say so.",
            "verbose": "Connect Airflow to Slack through the web UI:\n"
                       "1. Open Admin > Connections and click Add Connection.\n"
                       "2. Connection ID slack_alerts, Connection Type Slack API, and the workspace's bot token.\n"
                       "3. Click Test, and check that the message reached #data-alerts.\n"
                       "If the Slack connection type, the token or network access to Slack is missing, do not "
                       "fake the result: report that the task cannot be done.",
            "config": GUI_CONFIG,
        },
    ]


def cli_gui_pairs() -> list[dict]:
    """cli+gui pairs: a DAG written in the terminal, then triggered from Airflow's web UI (the GUI suite); the
    essential GUI item is the trigger, without which there is no run and the task scores 0."""
    return [
        {
            **GUI_COMMON, "related_apps": [*GUI_COMMON["related_apps"], "terminal"], "interface": "cli+gui",
            "name": "airflow_cligui_write_then_trigger",
            "action_number": 6,
            "source": ["https://airflow.apache.org/docs/apache-airflow/stable/tutorial/taskflow.html",
                       "https://airflow.apache.org/docs/apache-airflow/stable/ui.html"],
            "abstract": "Write a new Airflow DAG with the id payments_summary (in the DAG folder "
                        "/home/user/airflow/dags) that reads /home/user/projects/data/raw_payments.csv and writes "
                        "/home/user/projects/data/payment_methods.csv with the header method,payments,amount: one "
                        "row per payment method in alphabetical order, its number of payments and their total "
                        "amount with 2 decimals. Then trigger one run of it from Airflow's web UI (open in "
                        "Chromium), not from the command line, and let the run succeed.",
            "verbose": "Write a DAG in the terminal, then run it from Airflow's web UI:\n"
                       "1. Create /home/user/airflow/dags/payments_summary.py with the TaskFlow API like shop_etl.py "
                       "in that folder (`from airflow.sdk import dag, task`; @dag(dag_id=\"payments_summary\", "
                       "schedule=None, start_date=datetime(2024, 1, 1), catchup=False)); one @task reads "
                       "raw_payments.csv with csv.DictReader, counts the payments and sums amount per method, and "
                       "writes payment_methods.csv with the header method,payments,amount, methods sorted, amounts "
                       "with 2 decimals.\n"
                       "2. In a terminal run `airflow dags reserialize` so that Airflow lists the new DAG now (it "
                       "would otherwise within about a minute).\n"
                       "3. In the Airflow tab in Chromium, click Dags in the left-hand bar, then payments_summary.\n"
                       "4. Click Trigger (top right); keep Unpause payments_summary on trigger ticked and click "
                       "Trigger in the dialog.\n"
                       "5. The run's page opens: wait until its state is Success.",
            "config": [*GUI_CONFIG, clean("/home/user/airflow/dags/payments_summary.py",
                                          "/home/user/projects/data/payment_methods.csv")],
            "eval": PAYMENTS_CSV_EVAL + airflow_db("SELECT state, triggered_by FROM dag_run WHERE dag_id = "
                                                   "'payments_summary'", "('success', 'UI') in rows")
                    + "echo EVAL_OK\n",
            "solution": [
                cmd("cat > /home/user/airflow/dags/payments_summary.py <<'EOF'\n" + PAYMENTS_DAG
                    # the DAG processor may insert the new DAG at the same moment (a UNIQUE-constraint error
                    # of `dag_id` in reserialize, seen under load): ask again, it then finds the DAG there
                    + "EOF\nfor i in 1 2 3; do airflow dags reserialize >/dev/null && exit 0; sleep 5; done; exit 1"),
                {"gui": "click", "target": ui('a[href="/dags"]'), "note": "the navigation bar's Dags link"},
                {"gui": "click", "target": ui('a[href="/dags/payments_summary"]', url=AIRFLOW + "/dags")},
                {"gui": "wait", "for": ui("[data-testid=grid-view-button]", url=AIRFLOW + "/dags/payments_summary"),
                 "note": "the DAG's page has replaced the list (the URL changes first: a trigger button of the list "
                         "took the click)"},
                {"gui": "click", "target": ui("[data-testid=trigger-dag-button]", url=AIRFLOW + "/dags/payments_summary")},
                {"gui": "click", "target": ui("[data-testid=trigger-dag-submit]", url=AIRFLOW + "/dags/payments_summary"),
                 "essential": True, "note": "Unpause payments_summary on trigger is ticked already"},
                {"gui": "wait", "for": {"gone": ui("[role=dialog]", url=AIRFLOW + "/dags/payments_summary")},
                 "timeout_s": TRIGGER_DIALOG_S, "note": TRIGGER_DIALOG_NOTE},
                {"gui": "wait", "for": ui("[data-testid=header-card] [data-testid=state-badge]", "Success",
                                          url=AIRFLOW + "/dags/payments_summary/runs/"),
                 "timeout_s": 900, "note": "the run's page opens; its task takes minutes to start under emulation"},
            ],
        },
    ]


def pairs() -> list[dict]:
    """The task pairs of this module (``common`` describes their keys)."""
    return cli_pairs() + gui_pairs() + cli_gui_pairs()


def cli_pairs() -> list[dict]:
    """The command-line pairs (data batches 1-5)."""
    return [
        {
            "name": "airflow_run_shop_etl",
            "id_seed": "data_batch1",
            "app": "airflow",
            "category": "data_orchestration",
            "interface": "cli",
            "action_number": 2,
            "related_apps": ["airflow", "terminal"],
            "source": ["https://airflow.apache.org/docs/apache-airflow/stable/cli-and-env-variables-ref.html#test",
                       "https://airflow.apache.org/docs/apache-airflow/stable/core-concepts/dag-run.html"],
            "abstract": "Run the Airflow DAG shop_etl once, for the logical date 2025-01-15, so that it writes its "
                        "order status summary (/home/user/projects/data/order_status_summary.csv) and the run is "
                        "recorded as successful in Airflow's metadata database (AIRFLOW_HOME=/home/user/airflow).",
            "verbose": "Run an Airflow DAG once from the command line:\n"
                       "1. Open a terminal (AIRFLOW_HOME and the DAG folder are set in login shells).\n"
                       "2. Run `airflow dags test shop_etl 2025-01-15`: it runs the DAG's tasks count_orders and "
                       "write_summary in this process, without a scheduler, and records the run.\n"
                       "3. Wait until it ends with the run's state success.\n"
                       "4. Check that /home/user/projects/data/order_status_summary.csv exists with the header "
                       "status,orders.",
            "config": [clean("/home/user/projects/data/order_status_summary.csv")],
            "eval": """out=/home/user/projects/data/order_status_summary.csv
[ -f "$out" ] || fail "$out does not exist"
python3 - <<'PY' > /tmp/desktop_env_eval/ref.csv
import csv, collections
with open("/home/user/projects/data/raw_orders.csv") as f:
    n = collections.Counter(r["status"] for r in csv.DictReader(f))
print("status,orders")
for s in sorted(n):
    print(f"{s},{n[s]}")
PY
why=$(same_csv "$out" /tmp/desktop_env_eval/ref.csv ordered 2>&1) || fail "$why"
""" + airflow_run_check("shop_etl") + "echo EVAL_OK\n",
            "solution": [cmd("airflow dags test shop_etl 2025-01-15")],
        },
        {
            "name": "airflow_payments_dag",
            "id_seed": "data_batch2",
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
            "eval": PAYMENTS_CSV_EVAL + airflow_run_check("payments_summary") + "echo EVAL_OK\n",
            "solution": [cmd("cat > /home/user/airflow/dags/payments_summary.py <<'EOF'\n" + PAYMENTS_DAG
                             + "EOF\nairflow dags test payments_summary 2025-01-15")],
        },
        {
            "name": "airflow_snowflake_infeasible",
            "id_seed": "data_batch2",
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
        {
            "name": "airflow_postgres_connection",
            "id_seed": "data_batch3",
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
            "name": "airflow_warehouse_variable",
            "id_seed": "data_batch4",
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
            "name": "airflow_schedule_shop_etl",
            "id_seed": "data_batch5",
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
    ]


def main() -> None:
    """Write this module's tasks and index them."""
    write_pairs(pairs())
