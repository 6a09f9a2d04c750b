"""The real work of each warm state's tool, shared by bench/warm_reset.py and the warm-state VM tests.

``do_work(name, vm, guest)`` returns once the tool has done it (see bench/warm_reset.py) and raises
RuntimeError when it cannot. :data:`WORK` says what the work of each state is; every warm state an image
profile declares is either in it or in :data:`NO_WORK` with the reason it has none (a host test checks).
"""
from __future__ import annotations

import json
import time
import urllib.parse
import urllib.request

#: Guest-side Python run with the system python3; each exits 0 once the work is done.
#: Airflow's REST API client the Airflow works share: signs in (``token``), calls (``call``) and asks again
#: (``retried``) until the deadline.
AIRFLOW_CLIENT = r'''
import json, sys, time, urllib.error, urllib.parse, urllib.request
B = "http://127.0.0.1:8080"
deadline = time.time() + 1500
def call(method, path, body=None, token=None):
    h = {"Content-Type": "application/json"}
    if token: h["Authorization"] = "Bearer " + token
    req = urllib.request.Request(B + path, method=method, headers=h, data=None if body is None else json.dumps(body).encode())
    with urllib.request.urlopen(req, timeout=120) as r:
        return json.load(r)
def retried(what, fn):
    # a loaded guest's API server can take longer than a request's timeout: ask again until the deadline
    while True:
        try:
            return fn()
        except (OSError, ValueError) as exc:  # timeouts, refused connections, 5xx, a cut reply
            if time.time() > deadline: raise SystemExit(what + ": " + repr(exc))
            print(what + " failed, again:", repr(exc), file=sys.stderr)
            time.sleep(2)
token = retried("signing in", lambda: call("POST", "/auth/token", {"username": "admin", "password": "admin"})["access_token"])
'''

AIRFLOW_WORK = AIRFLOW_CLIENT + r'''
DONE = ("success",) if sys.argv[1:] == ["finish"] else ("running", "success")
retried("unpausing", lambda: call("PATCH", "/api/v2/dags/shop_etl", {"is_paused": False}, token))
RUNS = "/api/v2/dags/shop_etl/dagRuns"
before = {r["dag_run_id"] for r in retried("listing runs", lambda: call("GET", RUNS + "?limit=100", None, token))["dag_runs"]}
def trigger():
    try:
        return call("POST", RUNS, {"logical_date": None}, token)
    except (OSError, ValueError):
        # the run may have been created before the reply was lost: take it rather than start a second one
        new = [r for r in call("GET", RUNS + "?limit=100", None, token)["dag_runs"] if r["dag_run_id"] not in before]
        if new: return new[0]
        raise
run = retried("triggering a run", trigger)
while True:
    state = retried("reading the run", lambda: call("GET", RUNS + "/" + run["dag_run_id"], None, token))["state"]
    if state in DONE: print(state); break
    if state == "failed" or time.time() > deadline: raise SystemExit("run " + state)
    time.sleep(1)
'''

#: Guest-side Python: the finished run of shop_etl a state holds, read through the REST API as the tasks that
#: start there read it (its task instances); argv[1] is the run's state (success or failed), argv[2] the task
#: instance that must have ended in that state.
AIRFLOW_RUN_READ_WORK = AIRFLOW_CLIENT + r'''
WANT, TASK = sys.argv[1], sys.argv[2]
runs = retried("listing runs", lambda: call("GET", "/api/v2/dags/shop_etl/dagRuns?limit=100&state=" + WANT, None, token))["dag_runs"]
if not runs: raise SystemExit("no " + WANT + " run of shop_etl")
run_id = urllib.parse.quote(runs[-1]["dag_run_id"], safe="")
tis = retried("reading its task instances", lambda: call("GET", "/api/v2/dags/shop_etl/dagRuns/" + run_id + "/taskInstances", None, token))["task_instances"]
states = {ti["task_id"]: ti["state"] for ti in tis}
if states.get(TASK) != WANT: raise SystemExit("task instances of the " + WANT + " run: " + json.dumps(states))
print(states)
'''

DAGSTER_WORK = r'''
import json, sqlite3, sys, time, urllib.request
DONE = ("SUCCESS",) if sys.argv[1:] == ["finish"] else ("STARTED", "SUCCESS")
def gql(query, variables=None):
    req = urllib.request.Request("http://127.0.0.1:3000/graphql", method="POST", headers={"Content-Type": "application/json"},
                                 data=json.dumps({"query": query, "variables": variables or {}}).encode())
    with urllib.request.urlopen(req, timeout=120) as r:
        return json.load(r)["data"]
repos = gql("{ repositoriesOrError { ... on RepositoryConnection { nodes { name location { name } } } } }")
if not repos["repositoriesOrError"]["nodes"]:
    raise SystemExit("no repository loaded: " + json.dumps(gql("{ workspaceOrError { ... on Workspace { locationEntries "
                     "{ name loadStatus locationOrLoadError { __typename ... on PythonError { message } } } } } }")))
repo = repos["repositoriesOrError"]["nodes"][0]
launched = gql("""mutation($p: ExecutionParams!) { launchRun(executionParams: $p) {
  __typename ... on LaunchRunSuccess { run { runId } } ... on PythonError { message } } }""",
  {"p": {"selector": {"repositoryLocationName": repo["location"]["name"], "repositoryName": repo["name"],
                      "jobName": "revenue_job"}, "runConfigData": {}}})["launchRun"]
run_id = launched["run"]["runId"]
# The run's status is read from the instance's run storage, where Dagster's run worker writes it (and
# where the tasks' evaluators read it): a GraphQL poll costs the web server a request that competes with
# the launch for the guest's two CPUs, so it could only ask once a second (0.5 s of granularity lost).
runs = sqlite3.connect("file:/home/user/.dagster/history/runs.db?mode=ro", uri=True, timeout=60)
deadline = time.time() + 1500
while True:
    row = runs.execute("SELECT status FROM runs WHERE run_id = ?", (run_id,)).fetchone()
    status = row[0] if row else "NOT_STARTED"
    if status in DONE: print(status); break
    if status in ("FAILURE", "CANCELED") or time.time() > deadline: raise SystemExit("run " + status)
    time.sleep(0.1)
'''

SUPERSET_WORK = r'''
import http.cookiejar, json, urllib.request
B = "http://127.0.0.1:8088"
opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))
h = {"Content-Type": "application/json", "Referer": B}
def api(method, path, body=None):
    req = urllib.request.Request(B + path, method=method, headers=h, data=None if body is None else json.dumps(body).encode())
    with opener.open(req, timeout=300) as r:
        return json.load(r)
h["Authorization"] = "Bearer " + api("POST", "/api/v1/security/login", {"username": "admin", "password": "admin", "provider": "db"})["access_token"]
h["X-CSRFToken"] = api("GET", "/api/v1/security/csrf_token/")["result"]
q = "(filters:!((col:database_name,opr:eq,value:analytics)))"
found = api("GET", "/api/v1/database/?q=" + q)["result"]
db = found[0]["id"] if found else api("POST", "/api/v1/database/", {"database_name": "analytics",
    "sqlalchemy_uri": "postgresql://user:password@127.0.0.1:5432/analytics"})["id"]
q = "(filters:!((col:table_name,opr:eq,value:orders)))"
found = api("GET", "/api/v1/dataset/?q=" + q)["result"]
ds = found[0]["id"] if found else api("POST", "/api/v1/dataset/", {"database": db, "schema": "public", "table_name": "orders"})["id"]
reply = api("POST", "/api/v1/chart/data", {"datasource": {"id": ds, "type": "table"},
    "queries": [{"metrics": ["count"], "columns": [], "row_limit": 10}], "result_format": "json", "result_type": "full"})
print(reply["result"][0]["data"])
'''

JUPYTER_WORK = r'''
import http.cookiejar, json, os, time, urllib.request
from jupyter_client import BlockingKernelClient
from jupyter_core.paths import jupyter_runtime_dir
jar = http.cookiejar.CookieJar()
opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
opener.open("http://127.0.0.1:8888/lab", timeout=300).read()  # sets the _xsrf cookie a POST must echo
xsrf = next((c.value for c in jar if c.name == "_xsrf"), "")
req = urllib.request.Request("http://127.0.0.1:8888/api/kernels", method="POST", data=b"{}",
                             headers={"Content-Type": "application/json", "X-XSRFToken": xsrf})
with opener.open(req, timeout=300) as r:
    kid = json.load(r)["id"]
path = os.path.join(jupyter_runtime_dir(), "kernel-%s.json" % kid)
client = BlockingKernelClient(connection_file=path)
client.load_connection_file()
client.start_channels(hb=False)  # a heartbeat sampled under emulation reads a busy new kernel as dead
client.wait_for_ready(timeout=600)
out = []
client.execute_interactive("print(6*7)", timeout=600, output_hook=lambda m: out.append(m["content"].get("text", "")))
assert "42" in "".join(out), out
print("cell ran")
'''

#: bash script: exit 0 once a window whose title holds $1 is listed, 1 after 900 s.
CALC_WINDOW_WAIT = r'''
coproc SPY { exec xprop -root -spy _NET_CLIENT_LIST _NET_ACTIVE_WINDOW 2>/dev/null; }
trap 'kill $SPY_PID 2>/dev/null' EXIT
while [ "$SECONDS" -lt 900 ]; do
    wmctrl -l | grep -qF -- "$1" && exit 0
    read -r -t 1 -u "${SPY[0]}" _ || sleep 0.2
done
exit 1
'''


def _guest_python(guest, source: str, python: str = "python3", timeout_s: float = 1800, args=(),
                  stdlib_only: bool = True) -> None:
    # -I -S: a client that needs only the standard library skips site's path set-up, about a
    # second of the guest's CPU under emulation that the tool being measured would otherwise share
    flags = ["-I", "-S"] if stdlib_only else []
    reply = guest.execute([python, *flags, "-c", source, *args], timeout_s=timeout_s)
    if reply.get("returncode") != 0:
        raise RuntimeError(f"the work failed: {reply.get('output', '')[-500:]} {reply.get('error', '')[-1500:]}")


def _calc_work(guest) -> None:
    guest.execute("printf 'a,b\\n1,2\\n' > /tmp/bench-sheet.csv", shell=True)
    guest.launch(["libreoffice", "--calc", "/tmp/bench-sheet.csv"])
    # Watched in the guest: a host-side poll (one request per look, about 0.5 s under emulation,
    # plus its pause) added up to a second to a 3 s warm time, and a wmctrl every 0.1 s took CPU
    # from LibreOffice. wmctrl now looks when the window list or the active window changes (xprop
    # -spy prints each change), and at least once a second.
    shown = guest.execute(["bash", "-c", CALC_WINDOW_WAIT, "bash", "bench-sheet.csv"], timeout_s=960)
    if shown.get("returncode") != 0:
        raise RuntimeError("the spreadsheet's window never showed")


def _chromium_work(vm) -> None:
    base = f"http://{vm.cdp.host}:{vm.cdp.port}"
    page = "data:text/html,<title>bench-page</title><h1>loaded</h1>"
    deadline = time.monotonic() + 900
    opened = False
    while time.monotonic() < deadline:
        try:
            if not opened:
                urllib.request.urlopen(urllib.request.Request(f"{base}/json/new?{urllib.parse.quote(page, safe=':/,')}",
                                                              method="PUT"), timeout=30).read()
                opened = True
            targets = json.load(urllib.request.urlopen(f"{base}/json/list", timeout=30))
            if any(t.get("title") == "bench-page" for t in targets):
                return
        except OSError:
            pass
        time.sleep(0.3)
    raise RuntimeError("the page never loaded")


#: What each warm state's work is (bench/warm_reset.py's table; the ``finish`` flag of :func:`do_work` waits for
#: a triggered run to succeed, where there is one): state name -> (one line for the plan, the function).
WORK = {
    "airflow": ("a run of shop_etl triggered through the REST API is running",
                lambda vm, guest, finish: _guest_python(guest, AIRFLOW_WORK, args=["finish"] if finish else [])),
    "airflow-etl-done": ("the successful run of shop_etl read through the REST API (its task instances)",
                         lambda vm, guest, finish: _guest_python(guest, AIRFLOW_RUN_READ_WORK,
                                                                 args=["success", "write_summary"])),
    "airflow-etl-failed": ("the failed run of shop_etl read through the REST API (count_orders failed)",
                           lambda vm, guest, finish: _guest_python(guest, AIRFLOW_RUN_READ_WORK,
                                                                   args=["failed", "count_orders"])),
    "dagster": ("a run of revenue_job launched through GraphQL has started",
                lambda vm, guest, finish: _guest_python(guest, DAGSTER_WORK, args=["finish"] if finish else [])),
    "superset": ("a chart data query answers through /api/v1/chart/data",
                 lambda vm, guest, finish: _guest_python(guest, SUPERSET_WORK)),
    "jupyter": ("a cell runs in a new kernel of the running JupyterLab server",
                lambda vm, guest, finish: _guest_python(guest, JUPYTER_WORK, python="/opt/venvs/jupyter/bin/python",
                                                        stdlib_only=False)),
    "calc": ("a workbook opened after the reset shows its window", lambda vm, guest, finish: _calc_work(guest)),
    "chromium": ("a page opened over DevTools has loaded", lambda vm, guest, finish: _chromium_work(vm)),
}

#: Warm states skipped on purpose by bench/warm_reset.py, each with the reason (none today).
NO_WORK: dict[str, str] = {}


def do_work(name: str, vm, guest, finish: bool = False) -> None:
    """The state's real work (see :data:`WORK`); with ``finish``, a triggered run must also succeed.

    Raises:
        KeyError: the state has no work defined (``NO_WORK`` or a new state).
        RuntimeError: the work failed.
    """
    if name not in WORK:
        raise KeyError(f"no work defined for state {name!r}" + (f": {NO_WORK[name]}" if name in NO_WORK else ""))
    WORK[name][1](vm, guest, finish)
