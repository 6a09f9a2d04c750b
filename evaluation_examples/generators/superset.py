"""Apache Superset task pairs (``examples/superset``) on the ``data`` image.

Register the PostgreSQL ``analytics`` database in Superset (the ``superset`` command), and
create a dataset on its ``orders`` table (Superset's REST API with curl). Both are ``cli``
tasks: their reference solutions are commands; the web UI (http://localhost:8088) would do
as well. Setup starts PostgreSQL and Superset; the evaluators read Superset's metadata
database (``/home/user/.superset/superset.db``, SQLite).

The GUI pairs (the GUI suite) do the same kind of work in Superset's own web UI, in Chromium,
from the ``superset`` warm state: register a dataset, build charts, save a query in SQL Lab.
Their setups prepare what each needs through the REST API; their evaluators read the metadata
database too (a saved query's SQL is also run, read-only, on ``analytics``).

Regenerate with ``python3 -m evaluation_examples.generators superset`` from the repository
root (see the package docstring).
"""
from __future__ import annotations

import json

from .common import START_POSTGRES, bash, checked, cmd, page_target, write_pairs

SUPERSET = "http://localhost:8088"

ANALYTICS_URI = "postgresql://user:password@127.0.0.1:5432/analytics"

START_SUPERSET = {"type": "execute", "parameters": {"command": ["start-superset"], "until": {"returncode": 0},
                                                    "timeout_s": 900}}


#: A small Superset REST client for the guest's python3: ``api(method, path, body)`` as admin.
API_PY = f"""import http.cookiejar, json, sys, urllib.error, urllib.request
BASE = "{SUPERSET.replace('localhost', '127.0.0.1')}"
opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))
headers = {{"Content-Type": "application/json", "Referer": BASE}}
def api(method, path, body=None):
    req = urllib.request.Request(BASE + path, method=method, headers=headers,
                                 data=None if body is None else json.dumps(body).encode())
    try:
        with opener.open(req, timeout=300) as r:
            return json.load(r)
    except urllib.error.HTTPError as e:
        sys.exit(f"{{method}} {{path}}: HTTP {{e.code}} {{e.read()[:500]!r}}")
token = api("POST", "/api/v1/security/login",
            {{"username": "admin", "password": "admin", "provider": "db", "refresh": True}})["access_token"]
headers["Authorization"] = "Bearer " + token
headers["X-CSRFToken"] = api("GET", "/api/v1/security/csrf_token/")["result"]
"""

FIND_ANALYTICS = '/api/v1/database/?q=(filters:!((col:database_name,opr:eq,value:analytics)))'


#: Idempotent (a setup step may retry it): registers the connection only when it is missing.
REGISTER_PY = API_PY + f"""found = api("GET", "{FIND_ANALYTICS}")["result"]
db = found[0] if found else api("POST", "/api/v1/database/", {{"database_name": "analytics",
                                                               "sqlalchemy_uri": "{ANALYTICS_URI}"}})
print("database", db["id"])
"""


def python_heredoc(code: str) -> str:
    """A shell command running ``code`` with the guest's python3."""
    return f"python3 - <<'PY'\n{code}PY"


#: Evaluator prelude: ``meta SQL`` runs SQL on Superset's metadata (read-only), rows as a|b.
META = """meta() {
  python3 - "$1" <<'PY'
import sqlite3, sys
try:
    con = sqlite3.connect("file:/home/user/.superset/superset.db?mode=ro", uri=True)
    for row in con.execute(sys.argv[1]).fetchall():
        print("|".join("" if v is None else str(v) for v in row))
except Exception as e:
    print(f"{type(e).__name__}: {e}")
PY
}
"""

REGISTER_EVAL = META + """rows=$(meta "SELECT sqlalchemy_uri FROM dbs WHERE lower(database_name) = 'analytics'")
[ -n "$rows" ] || fail "Superset has no database connection named analytics ($(meta 'SELECT database_name FROM dbs' | tr '\\n' ' '))"
[ "$(printf '%s\\n' "$rows" | wc -l)" = 1 ] || fail "more than one connection is named analytics"
why=$(python3 - "$rows" <<'PY'
import sys
from urllib.parse import urlsplit
u = urlsplit(sys.argv[1])
problems = []
if not u.scheme.startswith("postgresql"):
    problems.append(f"the driver is {u.scheme}, not postgresql")
if u.hostname not in ("127.0.0.1", "localhost"):
    problems.append(f"the host is {u.hostname}, not this machine")
if (u.port or 5432) != 5432:
    problems.append(f"the port is {u.port}, not 5432")
if u.path.strip("/") != "analytics":
    problems.append(f"the database is {u.path.strip('/') or 'missing'}, not analytics")
if u.username != "user":
    problems.append(f"the user is {u.username}, not user")
print("; ".join(problems))
PY
)
[ -z "$why" ] || fail "$why"
echo EVAL_OK
"""

def dataset_eval(table: str, columns: list[str], done: bool = True, schema: str = "public") -> str:
    """eval.sh body: a dataset on ``analytics``'s table ``schema``.``table`` with (at least) ``columns`` (``done``:
    and then the verdict EVAL_OK; without it, more checks may follow)."""
    on_schema = ('[ "$schema" = public ] || [ -z "$schema" ]' if schema == "public" else f'[ "$schema" = {schema} ]')
    return META + f"""rows=$(meta "SELECT t.id, coalesce(t.schema, '') FROM tables t JOIN dbs d ON d.id = t.database_id WHERE lower(d.database_name) = 'analytics' AND t.table_name = '{table}'")
[ -n "$rows" ] || fail "no dataset on table {table} of the analytics database ($(meta 'SELECT table_name FROM tables' | tr '\\n' ' '))"
id=${{rows%%|*}}
schema=${{rows#*|}}
{on_schema} || fail "the dataset is on schema $schema, not {schema}"
cols=$(meta "SELECT group_concat(column_name, ',') FROM (SELECT column_name FROM table_columns WHERE table_id = $id ORDER BY column_name)")
for c in {' '.join(columns)}; do
  case ",$cols," in *",$c,"*) ;; *) fail "the dataset lacks the column $c (has: $cols)";; esac
done
""" + ("echo EVAL_OK\n" if done else "")


DATASET_EVAL = dataset_eval("orders", ["id", "customer_id", "order_date", "status"])

DATASET_CURL = """B=http://127.0.0.1:8088
TOKEN=$(curl -fsS -H 'Content-Type: application/json' -d '{"username": "admin", "password": "admin", "provider": "db"}' $B/api/v1/security/login | jq -r .access_token)
CSRF=$(curl -fsS -c /tmp/superset.jar -H "Authorization: Bearer $TOKEN" $B/api/v1/security/csrf_token/ | jq -r .result)
DB=$(curl -fsS -H "Authorization: Bearer $TOKEN" "$B/api/v1/database/?q=(filters:!((col:database_name,opr:eq,value:analytics)))" | jq '.result[0].id')
curl -fsS -b /tmp/superset.jar -H "Authorization: Bearer $TOKEN" -H "X-CSRFToken: $CSRF" -H "Referer: $B" -H 'Content-Type: application/json' -d "{\\"database\\": $DB, \\"schema\\": \\"public\\", \\"table_name\\": \\"orders\\"}" $B/api/v1/dataset/"""


def pairs() -> list[dict]:
    """The task pairs of this module (``common`` describes their keys)."""
    return cli_pairs() + gui_pairs() + cli_gui_pairs()


def cli_pairs() -> list[dict]:
    """cli pairs: a command or the REST API from the terminal."""
    return [
        {
            "name": "superset_register_analytics_database",
            "id_seed": "data_batch6",
            "app": "superset",
            "snapshot": "data:superset",  # Superset already running and signed in (a warm state)
            "category": "data_analysis_and_visualization",
            "interface": "cli",
            "action_number": 3,
            "related_apps": ["superset", "terminal", "postgresql"],
            "source": ["https://superset.apache.org/docs/configuration/databases",
                       "https://superset.apache.org/docs/installation/superset-cli"],
            "abstract": "Register this machine's PostgreSQL database analytics (127.0.0.1:5432, user user, password "
                        "password) in its Apache Superset (http://localhost:8088, admin / admin) as a database "
                        "connection named analytics.",
            "verbose": "Register a database in Superset from the terminal:\n"
                       "1. Open a terminal (login shells have SUPERSET_CONFIG_PATH set for the `superset` "
                       "command).\n"
                       f"2. Run: superset set-database-uri -d analytics -u {ANALYTICS_URI}\n"
                       "   (it loads Superset first, which takes a minute under emulation).\n"
                       "3. The connection now appears under Settings > Database Connections at "
                       "http://localhost:8088 (admin / admin).",
            "config": [START_POSTGRES, START_SUPERSET],
            "eval": REGISTER_EVAL,
            "solution": [cmd(f"superset set-database-uri -d analytics -u {ANALYTICS_URI}")],
        },
        {
            "name": "superset_orders_dataset",
            "id_seed": "data_batch6",
            "app": "superset",
            "snapshot": "data:superset",  # Superset already running and signed in (a warm state)
            "category": "data_analysis_and_visualization",
            "interface": "cli",
            "action_number": 4,
            "related_apps": ["superset", "terminal", "postgresql"],
            "source": ["https://superset.apache.org/docs/api",
                       "https://superset.apache.org/docs/using-superset/creating-your-first-dashboard"],
            "abstract": "In this machine's Apache Superset (http://localhost:8088, admin / admin) the PostgreSQL "
                        "database analytics is already connected. Create a Superset dataset on its table "
                        "public.orders so the orders can be charted.",
            "verbose": "Create a Superset dataset through its REST API (curl and jq are installed):\n"
                       "1. B=http://127.0.0.1:8088; log in: TOKEN=$(curl -fsS -H 'Content-Type: application/json' "
                       "-d '{\"username\": \"admin\", \"password\": \"admin\", \"provider\": \"db\"}' "
                       "$B/api/v1/security/login | jq -r .access_token)\n"
                       "2. Get a CSRF token, keeping the session cookie: CSRF=$(curl -fsS -c /tmp/superset.jar "
                       "-H \"Authorization: Bearer $TOKEN\" $B/api/v1/security/csrf_token/ | jq -r .result)\n"
                       "3. Find the id of the database analytics: GET "
                       "$B/api/v1/database/?q=(filters:!((col:database_name,opr:eq,value:analytics))) with the "
                       "same Authorization header; the id is .result[0].id.\n"
                       "4. POST {\"database\": <id>, \"schema\": \"public\", \"table_name\": \"orders\"} as JSON to "
                       "$B/api/v1/dataset/ with -b /tmp/superset.jar and the headers Authorization, "
                       "X-CSRFToken: $CSRF and Referer: $B. Superset answers with the new dataset's id.\n"
                       "(The web UI's Datasets > + Dataset does the same.)",
            "config": [START_POSTGRES, START_SUPERSET,
                       {"type": "execute", "parameters": {"command": bash(python_heredoc(REGISTER_PY)),
                                                          "until": {"returncode": 0}, "timeout_s": 600}}],
            "eval": DATASET_EVAL,
            "solution": [cmd(DATASET_CURL)],
        },
    ]


# -- GUI pairs: Superset's web UI in Chromium (the GUI suite) ----------------------------------------------------


def ui(css: str, text: str | None = None, path: str = "") -> dict:
    """A GUI-step target in Superset's web UI (the page's DOM; ``text`` narrows by visible text) on the page
    whose URL starts with ``path``."""
    return page_target(css, text, SUPERSET + path)


def prepare(datasets: list[str], charts: dict[str, tuple[str, str, dict]] | None = None) -> list[dict]:
    """Setup of a GUI task: PostgreSQL and Superset (already running in the ``superset`` warm state), the
    ``analytics`` connection, a dataset on each of ``datasets`` (its tables in public) and the saved ``charts``
    (name -> dataset, viz_type, form data), through the REST API; idempotent, so that a retried step does no
    harm."""
    code = REGISTER_PY + f"""ids = {{}}
for table in {datasets!r}:
    found = api("GET", "/api/v1/dataset/?q=(filters:!((col:table_name,opr:eq,value:" + table + ")))")["result"]
    ids[table] = found[0]["id"] if found else api("POST", "/api/v1/dataset/", {{
        "database": db["id"], "schema": "public", "table_name": table}})["id"]
    print("dataset", table, ids[table])
for name, (table, viz, form) in {charts or {}!r}.items():
    if not api("GET", "/api/v1/chart/?q=(filters:!((col:slice_name,opr:eq,value:'" + name.replace(" ", "%20") + "')))")["result"]:
        form = {{**form, "datasource": f"{{ids[table]}}__table", "viz_type": viz}}
        api("POST", "/api/v1/chart/", {{"slice_name": name, "viz_type": viz, "datasource_id": ids[table],
                                        "datasource_type": "table", "params": json.dumps(form)}})
    print("chart", name)
"""
    return [START_POSTGRES, START_SUPERSET,
            {"type": "execute", "parameters": {"command": bash(python_heredoc(code)), "until": {"returncode": 0},
                                               "timeout_s": 600}}]


#: Evaluator helper (python3): the saved chart named argv[1] must have the properties of the JSON spec argv[2]:
#: ``viz`` (accepted viz_type values), ``table`` (its dataset's table in analytics), ``columns`` (the columns it
#: groups by, in the form data's ``x_axis`` and ``groupby``), ``metrics`` (each as AGG(column) or COUNT(*)) and,
#: optionally, ``grain`` (the time grain of a temporal x-axis: P1D, P1W, P1M...) and ``metrics_also`` (other metric
#: lists that chart the same numbers).
CHART_PY = r"""import json, re, sqlite3, sys
name, spec = sys.argv[1], json.loads(sys.argv[2])
con = sqlite3.connect("file:/home/user/.superset/superset.db?mode=ro", uri=True)
rows = con.execute("SELECT s.slice_name, s.viz_type, s.params, t.table_name, d.database_name FROM slices s "
                   "LEFT JOIN tables t ON t.id = s.datasource_id AND s.datasource_type = 'table' "
                   "LEFT JOIN dbs d ON d.id = t.database_id").fetchall()
mine = [r for r in rows if (r[0] or "").strip().lower() == name.lower()]
if len(mine) != 1:
    sys.exit(f"{len(mine)} saved charts are named {name!r}, one wanted (charts: {[r[0] for r in rows]})")
_, viz, params, table, database = mine[0]
form = json.loads(params or "{}")
def column(c):
    if isinstance(c, dict):
        c = c.get("column_name") or c.get("sqlExpression") or c.get("label") or ""
    return str(c).strip().strip('"').lower()
def metric(m):
    if isinstance(m, str):
        return "COUNT(*)" if m == "count" else m.upper()
    if m.get("expressionType") == "SQL":
        text = re.sub(r"\s+", "", m.get("sqlExpression") or "").upper()
    else:
        col = (m.get("column") or {}).get("column_name") or "*"
        text = f"{m.get('aggregate') or ''}({col})".upper()
    return "COUNT(*)" if text in ("COUNT(1)", "COUNT(ID)") else text.replace('"', "")
problems = []
if viz not in spec["viz"]:
    problems.append(f"it is a {viz} chart, not {spec['viz'][0]}")
if (database, table) != ("analytics", spec["table"]):
    problems.append(f"it charts the dataset {table} of {database}, not {spec['table']} of analytics")
grouped = [column(c) for c in [form.get("x_axis"), *(form.get("groupby") or [])] if c]
if sorted(grouped) != sorted(spec["columns"]):
    problems.append(f"it groups by {grouped or 'nothing'}, not {spec['columns']}")
metrics = [metric(m) for m in ([form["metric"]] if form.get("metric") else form.get("metrics") or [])]
if metrics != spec["metrics"] and metrics not in spec.get("metrics_also", []):
    problems.append(f"its metrics are {metrics or 'none'}, not {spec['metrics']}")
if "grain" in spec and form.get("time_grain_sqla") != spec["grain"]:
    problems.append(f"its time grain is {form.get('time_grain_sqla')}, not {spec['grain']}")
if problems:
    sys.exit(f"the chart {name!r}: " + "; ".join(problems))
"""


def chart_eval(name: str, spec: dict) -> str:
    """eval.sh body: Superset has one saved chart ``name`` as ``spec`` says (see :data:`CHART_PY`)."""
    return checked(CHART_PY, f"{name!r} '{json.dumps(spec)}'")


#: Evaluator helper (python3): the saved query labelled argv[1] on analytics, whose SQL (run read-only as the
#: desktop user) returns the same rows, in the same order, as the reference SQL argv[2].
SAVED_QUERY_PY = r"""import sqlite3, subprocess, sys
label, reference = sys.argv[1], sys.argv[2]
con = sqlite3.connect("file:/home/user/.superset/superset.db?mode=ro", uri=True)
rows = con.execute("SELECT q.label, q.sql, d.database_name FROM saved_query q LEFT JOIN dbs d ON d.id = q.db_id").fetchall()
mine = [r for r in rows if (r[0] or "").strip().lower() == label.lower()]
if len(mine) != 1:
    sys.exit(f"{len(mine)} saved queries are named {label!r}, one wanted (saved: {[r[0] for r in rows]})")
_, sql, database = mine[0]
if database != "analytics":
    sys.exit(f"the saved query {label!r} runs on {database}, not analytics")
def run(text):
    out = subprocess.run(["psql", "-X", "-A", "-t", "-F", "|", "-v", "ON_ERROR_STOP=1", "-d", "analytics"],
                         input="SET default_transaction_read_only = on;\n" + text.strip().rstrip(";") + ";\n",
                         capture_output=True, text=True, timeout=120)
    if out.returncode:
        sys.exit(f"the saved query {label!r} fails: {out.stderr.strip()[:300]}")
    return [line for line in out.stdout.splitlines() if line and line != "SET"]
got, want = run(sql), run(reference)
if got != want:
    sys.exit(f"the saved query {label!r} returns {got[:8]}, not {want[:8]}")
"""


def saved_query_eval(label: str, reference: str) -> str:
    """eval.sh body: Superset has one saved query ``label`` whose rows are those of ``reference``."""
    return checked(SAVED_QUERY_PY, f"{label!r} {reference!r}")


#: Evaluator helper (python3): one dashboard titled argv[1] that holds (in its layout and its chart list) the saved
#: charts named in the JSON list argv[2].
DASHBOARD_PY = r"""import json, sqlite3, sys
title, wanted = sys.argv[1], json.loads(sys.argv[2])
con = sqlite3.connect("file:/home/user/.superset/superset.db?mode=ro", uri=True)
rows = con.execute("SELECT id, dashboard_title, position_json FROM dashboards").fetchall()
mine = [r for r in rows if (r[1] or "").strip().lower() == title.lower()]
if len(mine) != 1:
    sys.exit(f"{len(mine)} dashboards are titled {title!r}, one wanted (dashboards: {[r[1] for r in rows]})")
dash_id, _, position = mine[0]
listed = {name for (name,) in con.execute("SELECT s.slice_name FROM dashboard_slices ds JOIN slices s "
                                          "ON s.id = ds.slice_id WHERE ds.dashboard_id = ?", (dash_id,))}
names = {s_id: name for s_id, name in con.execute("SELECT id, slice_name FROM slices")}
laid_out = {names.get(v.get("meta", {}).get("chartId")) for v in json.loads(position or "{}").values()
            if isinstance(v, dict) and v.get("type") == "CHART"}
missing = [w for w in wanted if w not in listed or w not in laid_out]
if missing:
    sys.exit(f"the dashboard {title!r} lacks the chart(s) {missing} (it shows: {sorted(n for n in laid_out if n)})")
"""


def dashboard_eval(title: str, charts: list[str]) -> str:
    """eval.sh body: Superset has one dashboard ``title`` showing each of ``charts`` (saved charts' names)."""
    return checked(DASHBOARD_PY, f"{title!r} '{json.dumps(charts)}'")


#: Evaluator helper (python3): one annotation layer named argv[1] holding an annotation named argv[2] from the
#: date argv[3] to the date argv[4] (YYYY-MM-DD; the times of day are not compared).
ANNOTATION_PY = r"""import sqlite3, sys
layer, name, start, end = sys.argv[1:5]
con = sqlite3.connect("file:/home/user/.superset/superset.db?mode=ro", uri=True)
layers = con.execute("SELECT id, name FROM annotation_layer").fetchall()
mine = [i for i, n in layers if (n or "").strip().lower() == layer.lower()]
if len(mine) != 1:
    sys.exit(f"{len(mine)} annotation layers are named {layer!r}, one wanted (layers: {[n for _, n in layers]})")
notes = con.execute("SELECT short_descr, start_dttm, end_dttm FROM annotation WHERE layer_id = ?", mine).fetchall()
found = [(str(a)[:10], str(b)[:10]) for n, a, b in notes if (n or "").strip().lower() == name.lower()]
if found != [(start, end)]:
    sys.exit(f"the layer {layer!r} holds {[(n, str(a)[:10], str(b)[:10]) for n, a, b in notes]}, "
             f"not one annotation {name!r} from {start} to {end}")
"""


def annotation_eval(layer: str, name: str, start: str, end: str) -> str:
    """eval.sh body: Superset has one annotation layer ``layer`` with the annotation ``name`` from ``start`` to
    ``end`` (dates)."""
    return checked(ANNOTATION_PY, f"{layer!r} {name!r} {start} {end}")


#: The keys every Superset GUI-suite pair shares.
GUI_COMMON = {"id_seed": "gui_suite", "app": "superset", "snapshot": "data:superset", "gui_suite": True,
              "related_apps": ["superset", "chromium", "postgresql"], "category": "data_analysis_and_visualization",
              "interface": "gui"}

#: Navigation bar links of Superset's pages.
NAV_DATASETS = {"gui": "click", "target": ui('a[href="/tablemodelview/list/"]'), "note": "Datasets in the top bar"}
NAV_CHARTS = {"gui": "click", "target": ui('a[href="/chart/list/"]'), "note": "Charts in the top bar"}


def pick(select_css: str, option: str, path: str, search: bool = False) -> list[dict]:
    """GUI steps choosing ``option`` in the drop-down ``select_css`` (Ant Design: its options are drawn in a
    list of their own when it opens; ``search``: type the option's name first, for a long list that draws
    only the options in view)."""
    return [{"gui": "click", "target": ui(select_css, path=path)},
            *([{"gui": "type", "text": option}] if search else []),
            {"gui": "click", "target": ui(".ant-select-item-option", option, path=path)}]


def chart_type(viz: str) -> list[dict]:
    """GUI steps on the new-chart page, its dataset chosen: the chart type, Create new chart, the editor."""
    return [{"gui": "click", "target": ui("[data-test=viztype-selector-container]", viz, path="/chart/add")},
            {"gui": "click", "target": ui("button:not([disabled])", "Create new chart", path="/chart/add")},
            {"gui": "wait", "for": {"url_is": SUPERSET + "/explore/"}}]


def new_chart(dataset: str, viz: str) -> list[dict]:
    """GUI steps from any page to the chart editor: Charts, + Chart, the dataset, the chart type, Create new chart."""
    return [NAV_CHARTS,
            {"gui": "click", "target": ui("button.ant-btn-primary", "Chart", path="/chart/list/")},
            *pick("[data-test=Dataset]", dataset, "/chart/add"), *chart_type(viz)]


def add_dataset(schema: str, table: str, search_schema: bool = False, search_table: bool = False,
                essential: bool = False) -> list[dict]:
    """GUI steps from any page registering ``schema``.``table`` of analytics as a dataset (Datasets, + Dataset,
    the three lists, Create and explore dataset) until the new-chart page opens with it; ``search_*``: type the
    name to find it in its list; ``essential``: the creating click is the task's point (cli+gui)."""
    return [
        NAV_DATASETS,
        {"gui": "click", "target": ui("button.ant-btn-primary", "Dataset", path="/tablemodelview/list/")},
        *pick("[data-test=select-database]", "analytics", "/dataset/add/"),
        *pick('[data-test="Select schema"]', schema, "/dataset/add/", search=search_schema),
        *pick('[data-test="Select table or type to search tables"]', table, "/dataset/add/", search=search_table),
        {"gui": "key", "keys": "escape", "note": "the table list stays open after the choice"},
        {"gui": "click", "target": ui("button.ant-btn-primary:not([disabled])", "Create and explore dataset",
                                      path="/dataset/add/"),
         **({"essential": True, "note": "enabled once the table's columns are read"} if essential else {})},
        {"gui": "wait", "for": {"url_is": SUPERSET + "/chart/add"}, "note": "the dataset is created"},
    ]


def column_metric(column: str, control: str, aggregate: str | None = None) -> list[dict]:
    """GUI steps making a metric of ``column`` in the ``control`` box (``metric`` or ``metrics``): drop the column
    there (the metric editor opens, set to SUM), choose ``aggregate`` if another, Save, until the box shows it."""
    box = "Metrics" if control == "metrics" else "Metric"
    return [{"gui": "drag", "target": ui("[data-test=DatasourcePanelDragOption]", column, path="/explore/"),
             "to": ui(f"[data-test={control}] [data-test=dnd-labels-container]", path="/explore/"),
             "note": f"a column dropped on {box} opens the metric editor, set to SUM"},
            *(pick('[data-test="Select aggregate options"]', aggregate, "/explore/") if aggregate else []),
            {"gui": "click", "target": ui('[data-test="AdhocMetricEdit#save"]', path="/explore/")},
            {"gui": "wait", "for": ui(f"[data-test={control}] [data-test=control-label]",
                                      f"{aggregate or 'SUM'}({column})", path="/explore/")}]


def drop(field: str, control: str) -> list[dict]:
    """GUI steps dragging ``field`` (a column or metric of the editor's left panel) onto the ``control`` box
    (``groupby``, ``metric``...) and waiting until the box shows it."""
    return [{"gui": "drag", "target": ui("[data-test=DatasourcePanelDragOption]", field, path="/explore/"),
             "to": ui(f"[data-test={control}] [data-test=dnd-labels-container]", path="/explore/")},
            {"gui": "wait", "for": ui(f"[data-test={control}] [data-test=control-label]", field, path="/explore/")}]


#: The pointer moved off a top-bar menu (onto the Dashboards link, which opens none) once its item was clicked:
#: the menu's list stays open over the page while the pointer is on it, and covered what came next (load).
OFF_MENU = {"gui": "move", "target": ui("a", "Dashboards"),
            "note": "off the menu: its list stays open over the page while the pointer is on it"}


def dialog_settled(field: dict) -> list[dict]:
    """GUI steps waiting until a dialog that opened shows ``field`` (a target) and the desktop is idle: a click on
    its field during the opening animation once closed the dialog (load)."""
    return [{"gui": "wait", "for": field},
            {"gui": "wait", "for": {"idle": True}, "note": "the dialog's opening animation ends"}]


def save_chart(name: str) -> list[dict]:
    """GUI steps drawing the chart (Create chart), then Save: its name, Save, until the dialog is gone. Both
    buttons stay disabled a while (until the controls are valid; until the chart's query answered)."""
    return [{"gui": "click", "target": ui("[data-test=run-query-button]:not([disabled])", path="/explore/")},
            {"gui": "click", "target": ui("[data-test=query-save-button]:not([disabled])", path="/explore/")},
            *dialog_settled(ui("[data-test=new-chart-name]", path="/explore/")),
            {"gui": "type", "target": ui("[data-test=new-chart-name]", path="/explore/"), "text": name},
            {"gui": "click", "target": ui("[data-test=btn-modal-save]", path="/explore/"), "essential": True},
            {"gui": "wait", "for": {"gone": ui("[data-test=save-modal-body]", path="/explore/")}}]


STATUS_SQL = "SELECT status, count(*) AS orders FROM orders GROUP BY status ORDER BY orders DESC, status"


def gui_pairs() -> list[dict]:
    """GUI pairs: work in Superset's own web UI in Chromium (the GUI suite)."""
    common = GUI_COMMON
    return [
        {
            **common,
            "name": "superset_gui_customers_dataset",
            "action_number": 8,
            "source": ["https://superset.apache.org/docs/using-superset/creating-your-first-dashboard"],
            "abstract": "In Superset (open in Chromium, signed in as admin), the PostgreSQL database analytics is "
                        "connected but its table customers cannot be charted yet. Register the table public.customers "
                        "as a Superset dataset.",
            "verbose": "Register a table as a dataset in Superset's web UI:\n"
                       "1. In the Superset tab in Chromium, click Datasets in the top bar, then + Dataset at the top "
                       "right.\n"
                       "2. In the left-hand panel choose the database analytics, the schema public and the table "
                       "customers.\n"
                       "3. When the columns of customers are shown, click Create and explore dataset at the bottom "
                       "right (the chart-type page that opens next can be left as it is).",
            "config": prepare([]),
            "eval": dataset_eval("customers", ["id", "first_name", "last_name", "email"]),
            "solution": add_dataset("public", "customers", essential=True),
        },
        {
            **common,
            "name": "superset_gui_orders_status_pie",
            "action_number": 10,
            "source": ["https://superset.apache.org/docs/using-superset/exploring-data"],
            "abstract": "In Superset (open in Chromium, signed in as admin), build a pie chart of how many orders have "
                        "each status, from the dataset orders, and save it as a chart named Orders by status.",
            "verbose": "Build and save a pie chart in Superset's chart editor:\n"
                       "1. In the Superset tab in Chromium, click Charts in the top bar, then + Chart.\n"
                       "2. Choose the dataset orders and the chart type Pie Chart; click Create new chart.\n"
                       "3. Drag the column status from the left-hand panel onto Dimensions, and the metric COUNT(*) "
                       "onto Metric.\n"
                       "4. Click Create chart to draw it, then Save at the top right; name the chart Orders by "
                       "status and click Save.",
            "config": prepare(["orders"]),
            "eval": chart_eval("Orders by status", {"viz": ["pie"], "table": "orders", "columns": ["status"],
                                                    "metrics": ["COUNT(*)"]}),
            "solution": [*new_chart("orders", "Pie Chart"), *drop("status", "groupby"), *drop("COUNT(*)", "metric"),
                         *save_chart("Orders by status")],
        },
        {
            **common,
            "name": "superset_gui_saved_query",
            "action_number": 9,
            "source": ["https://superset.apache.org/docs/using-superset/exploring-data#sql-lab"],
            "abstract": "In Superset's SQL Lab (Superset is open in Chromium, signed in as admin), write a query on the "
                        "analytics database that counts the orders of each status (columns status and orders, most "
                        "orders first, ties by status), run it, and save it as a query named Orders per status.",
            "verbose": "Write, run and save a query in Superset's SQL Lab:\n"
                       "1. In the Superset tab in Chromium, open SQL > SQL Lab in the top bar (or go to "
                       "http://localhost:8088/sqllab/); if no query tab is open, click Add a new tab.\n"
                       "2. With the database analytics chosen on the left, replace the editor's text with:\n"
                       f"   {STATUS_SQL}\n"
                       "3. Run it (Run, or Ctrl+Enter) and check the five statuses in the results.\n"
                       "4. Click the Save button beside Limit; name the query Orders per status and click Save.",
            "config": prepare([]),
            "eval": saved_query_eval("Orders per status", STATUS_SQL),
            "solution": [
                {"gui": "click", "target": ui(".ant-menu-submenu-title", "SQL"), "note": "SQL in the top bar"},
                {"gui": "click", "target": ui("a", "SQL Lab")},
                {"gui": "wait", "for": {"url_is": SUPERSET + "/sqllab"}},
                OFF_MENU,
                {"gui": "click", "target": ui("[role=tab]", "Add a new tab", path="/sqllab")},
                {"gui": "click", "target": ui(".ace_editor .ace_content", path="/sqllab")},
                {"gui": "key", "keys": "ctrl+a", "note": "replace the editor's placeholder text"},
                {"gui": "type", "text": STATUS_SQL},
                {"gui": "key", "keys": "ctrl+enter"},
                {"gui": "wait", "for": ui("[data-test=south-pane] [role=grid]", path="/sqllab")},
                {"gui": "click", "target": ui("button[aria-label=Save]", path="/sqllab")},
                *dialog_settled(ui("[role=dialog] input", path="/sqllab")),
                {"gui": "click", "target": ui("[role=dialog] input", path="/sqllab")},
                {"gui": "key", "keys": "ctrl+a", "note": "the name field holds Untitled Query 1"},
                {"gui": "type", "text": "Orders per status"},
                {"gui": "click", "target": ui("[role=dialog] button.ant-btn-primary", "Save", path="/sqllab"),
                 "essential": True},
                {"gui": "wait", "for": {"gone": ui("[role=dialog]", path="/sqllab")}},
            ],
        },
        {
            **common,
            "name": "superset_gui_price_by_category_bar",
            "action_number": 12,
            "source": ["https://superset.apache.org/docs/using-superset/exploring-data"],
            "abstract": "In Superset (open in Chromium, signed in as admin), build a bar chart of the average unit "
                        "price of the products in each category (one bar per category), from the dataset products, "
                        "and save it as a chart named Average price by category.",
            "verbose": "Build and save a bar chart with an aggregated metric in Superset's chart editor:\n"
                       "1. In the Superset tab in Chromium, click Charts in the top bar, then + Chart.\n"
                       "2. Choose the dataset products and the chart type Bar Chart; click Create new chart.\n"
                       "3. Drag the column category from the left-hand panel onto X-axis.\n"
                       "4. Drag the column unit_price onto Metrics; in the box that opens, set the aggregate to AVG "
                       "and click Save.\n"
                       "5. Click Create chart, then Save at the top right; name the chart Average price by category "
                       "and click Save.",
            "config": prepare(["products"]),
            "eval": chart_eval("Average price by category", {"viz": ["echarts_timeseries_bar"], "table": "products",
                                                             "columns": ["category"], "metrics": ["AVG(UNIT_PRICE)"]}),
            "solution": [
                *new_chart("products", "Bar Chart"), *drop("category", "x_axis"),
                *column_metric("unit_price", "metrics", "AVG"), *save_chart("Average price by category"),
            ],
        },
        {
            **common,
            "name": "superset_gui_sales_dashboard",
            "action_number": 10,
            "source": ["https://superset.apache.org/docs/using-superset/creating-your-first-dashboard"],
            "abstract": "In Superset (open in Chromium, signed in as admin), the charts Orders by status and Products "
                        "per category are saved. Create a dashboard titled Sales overview that shows both of them, "
                        "and save it.",
            "verbose": "Build a dashboard from saved charts in Superset:\n"
                       "1. In the Superset tab in Chromium, click Dashboards in the top bar, then + Dashboard (a new "
                       "dashboard opens in edit mode).\n"
                       "2. Click its title ([ untitled dashboard ]), select it all and type Sales overview, then "
                       "press Enter.\n"
                       "3. From the Charts list on the right, drag Orders by status onto the dashboard's empty area, "
                       "then drag Products per category beside it.\n"
                       "4. Click Save at the top right.",
            "config": prepare(["orders", "products"], {
                "Orders by status": ("orders", "pie", {"groupby": ["status"], "metric": "count"}),
                "Products per category": ("products", "echarts_timeseries_bar",
                                          {"x_axis": "category", "metrics": ["count"], "groupby": []})}),
            "eval": dashboard_eval("Sales overview", ["Orders by status", "Products per category"]),
            "solution": [
                {"gui": "click", "target": ui('a[href="/dashboard/list/"]'), "note": "Dashboards in the top bar"},
                {"gui": "click", "target": ui("button.ant-btn-primary", "Dashboard", path="/dashboard/list/")},
                {"gui": "wait", "for": {"url_is": SUPERSET + "/superset/dashboard/"},
                 "note": "the new dashboard is saved at once, untitled, and opens in edit mode"},
                {"gui": "click", "target": ui("[data-test=editable-title-input]", path="/superset/dashboard/")},
                {"gui": "key", "keys": "ctrl+a"},
                {"gui": "type", "text": "Sales overview"},
                {"gui": "key", "keys": "enter"},
                *[step for chart in ("Orders by status", "Products per category") for step in (
                    {"gui": "drag", "target": ui("[data-test=chart-card]", chart, path="/superset/dashboard/"),
                     "to": ui("[data-test=grid-content]", path="/superset/dashboard/")},
                    {"gui": "wait", "for": ui("[data-test=grid-content] [data-test=textarea-editable-title-input]",
                                              chart, path="/superset/dashboard/")})],
                {"gui": "click", "target": ui("[data-test=header-save-button]", path="/superset/dashboard/"),
                 "essential": True},
                {"gui": "wait", "for": {"gone": ui("[data-test=header-save-button]", path="/superset/dashboard/")},
                 "note": "saved: the dashboard leaves edit mode"},
            ],
        },
        {
            **common,
            "name": "superset_gui_orders_per_month_line",
            "action_number": 12,
            "source": ["https://superset.apache.org/docs/using-superset/exploring-data"],
            "abstract": "In Superset (open in Chromium, signed in as admin), build a line chart of the number of orders "
                        "per month (by order_date) from the dataset orders, and save it as a chart named Orders per "
                        "month.",
            "verbose": "Build and save a monthly line chart in Superset's chart editor:\n"
                       "1. In the Superset tab in Chromium, click Charts in the top bar, then + Chart.\n"
                       "2. Choose the dataset orders and the chart type Line Chart; click Create new chart.\n"
                       "3. Drag the column order_date from the left-hand panel onto X-axis; set Time Grain (which "
                       "appears below it) to Month.\n"
                       "4. Drag the metric COUNT(*) onto Metrics.\n"
                       "5. Click Create chart, then Save at the top right; name the chart Orders per month and click "
                       "Save.",
            "config": prepare(["orders"]),
            "eval": chart_eval("Orders per month", {"viz": ["echarts_timeseries_line"], "table": "orders",
                                                    "columns": ["order_date"], "metrics": ["COUNT(*)"],
                                                    "grain": "P1M"}),
            "solution": [
                *new_chart("orders", "Line Chart"), *drop("order_date", "x_axis"),
                *pick('[data-test="Time Grain"]', "Month", "/explore/", search=True),
                {"gui": "wait", "for": ui('[data-test="Time Grain"]', "Month", path="/explore/")},
                *drop("COUNT(*)", "metrics"), *save_chart("Orders per month"),
            ],
        },
        {
            **common,
            "name": "superset_gui_total_payments_big_number",
            "action_number": 10,
            "source": ["https://superset.apache.org/docs/using-superset/exploring-data"],
            "abstract": "In Superset (open in Chromium, signed in as admin), build a Big Number chart showing the sum "
                        "of all payment amounts, from the dataset payments, and save it as a chart named Total "
                        "payments.",
            "verbose": "Build and save a Big Number chart in Superset's chart editor:\n"
                       "1. In the Superset tab in Chromium, click Charts in the top bar, then + Chart.\n"
                       "2. Choose the dataset payments and the chart type Big Number; click Create new chart.\n"
                       "3. Drag the column amount from the left-hand panel onto Metric; in the box that opens the "
                       "aggregate is SUM: click Save.\n"
                       "4. Click Create chart, then Save at the top right; name the chart Total payments and click "
                       "Save.",
            "config": prepare(["payments"]),
            "eval": chart_eval("Total payments", {"viz": ["big_number_total"], "table": "payments", "columns": [],
                                                  "metrics": ["SUM(AMOUNT)"]}),
            "solution": [
                *new_chart("payments", "Big Number"), *column_metric("amount", "metric"),
                *save_chart("Total payments"),
            ],
        },
        {
            **common,
            "name": "superset_gui_promotions_annotation",
            "action_number": 12,
            "source": ["https://superset.apache.org/docs/using-superset/exploring-data#annotations"],
            "abstract": "In Superset (open in Chromium, signed in as admin), create an annotation layer named "
                        "Promotions holding one annotation, Spring sale, from 2024-03-01 to 2024-03-15, so that "
                        "charts can mark the campaign.",
            "verbose": "Create an annotation layer and an annotation in Superset:\n"
                       "1. In the Superset tab in Chromium, open Settings (top right) > Annotation Layers.\n"
                       "2. Click + Annotation layer; name it Promotions, describe it as you like, and click Add (its "
                       "annotation list opens).\n"
                       "3. Click + Annotation; name it Spring sale; in date, type 2024-03-01 00:00 as the start and "
                       "2024-03-15 00:00 as the end (Enter after each); click Add.",
            "config": prepare([]),
            "eval": annotation_eval("Promotions", "Spring sale", "2024-03-01", "2024-03-15"),
            "solution": [
                {"gui": "click", "target": ui(".ant-menu-submenu-title", "Settings"), "note": "Settings, top right"},
                {"gui": "click", "target": ui("a", "Annotation Layers")},
                OFF_MENU,
                {"gui": "click", "target": ui("button.ant-btn-primary", "Annotation layer",
                                              path="/annotationlayer/list")},
                {"gui": "type", "target": ui("[role=dialog] input", path="/annotationlayer/"), "text": "Promotions"},
                {"gui": "type", "target": ui("[role=dialog] textarea", path="/annotationlayer/"),
                 "text": "Marketing campaigns"},
                {"gui": "click", "target": ui("[data-test=modal-confirm-button]", path="/annotationlayer/")},
                {"gui": "wait", "for": ui("h4, div, span", "Annotation Layer Promotions", path="/annotationlayer/"),
                 "note": "the new layer's annotation list"},
                {"gui": "click", "target": ui("button.ant-btn-primary", "Annotation", path="/annotationlayer/")},
                {"gui": "type", "target": ui("[role=dialog] input.ant-input", path="/annotationlayer/"),
                 "text": "Spring sale"},
                {"gui": "type", "target": ui('[role=dialog] input[placeholder="Start date"]', path="/annotationlayer/"),
                 "text": "2024-03-01 00:00\n"},
                {"gui": "type", "target": ui('[role=dialog] input[placeholder="End date"]', path="/annotationlayer/"),
                 "text": "2024-03-15 00:00\n"},
                {"gui": "click", "target": ui("[data-test=modal-confirm-button]", path="/annotationlayer/"),
                 "essential": True},
                {"gui": "wait", "for": {"gone": ui("[role=dialog]", path="/annotationlayer/")}},
            ],
        },
        {
            **common,
            "name": "superset_gui_email_report_infeasible",
            "action_number": 6,
            "infeasible": True,
            "config": prepare(["orders"], {"Orders by status": ("orders", "pie", {"groupby": ["status"],
                                                                                  "metric": "count"})}),
            "source": ["https://superset.apache.org/docs/configuration/alerts-reports"],
            "abstract": "In Superset (open in Chromium), schedule an email report that sends the chart Orders by status "
                        "to finance@example.com every Monday at 08:00. If this cannot be done here, say so.",
            "verbose": "Schedule an email report in Superset:\n"
                       "1. Open Settings > Alerts & Reports (or a chart's ... menu > Manage email report).\n"
                       "2. Add a report on the chart Orders by status, recipient finance@example.com, schedule "
                       "every Monday at 08:00, and save it.\n"
                       "If this Superset has no Alerts & Reports (the feature is switched off and no mail server is "
                       "configured), do not work around it: report that the task cannot be done.",
        },
    ]


# -- cli+gui pairs: SQL in the terminal, then Superset's web UI ----------------------------------------------------

REVENUE_SQL = ("SELECT p.category, sum(oi.quantity * oi.unit_price) AS revenue FROM order_items oi "
               "JOIN products p ON p.id = oi.product_id GROUP BY p.category")

REVENUE_VIEW_EVAL = f"""kind=$(psql -AtX -c "SELECT table_type FROM information_schema.tables WHERE table_schema = 'public' AND table_name = 'revenue_by_category'")
[ -n "$kind" ] || fail "analytics has no view or table public.revenue_by_category"
cols=$(psql -AtX -c "SELECT string_agg(column_name, ',' ORDER BY ordinal_position) FROM information_schema.columns WHERE table_schema = 'public' AND table_name = 'revenue_by_category'")
[ "$cols" = category,revenue ] || fail "revenue_by_category has the columns $cols, not category,revenue"
diff=$(psql -AtX -v ON_ERROR_STOP=1 -c "WITH v AS (SELECT category::text, revenue::numeric(14,2) FROM revenue_by_category), r AS (SELECT category::text, revenue::numeric(14,2) FROM ({REVENUE_SQL}) x) SELECT count(*) FROM ((TABLE v EXCEPT ALL TABLE r) UNION ALL (TABLE r EXCEPT ALL TABLE v)) d" 2>&1)
[ "$diff" = 0 ] || fail "revenue_by_category's rows are not each category's revenue ($diff rows differ)"
"""


DBT_PROJECT = "/home/user/projects/dbt_postgres"

#: The dbt model the dbt + Superset pair asks for: revenue of completed and shipped orders per product category.
CATEGORY_REVENUE_MODEL = """-- Revenue of completed and shipped orders per product category.
select p.category, sum(i.line_total) as revenue
from {{ ref('stg_order_items') }} i
join {{ ref('stg_orders') }} o on o.order_id = i.order_id and o.status in ('completed', 'shipped')
join {{ source('shop', 'products') }} p on p.id = i.product_id
group by p.category
"""

CATEGORY_REVENUE_REF = ("SELECT p.category::text, sum(i.quantity * i.unit_price)::numeric(14,2) AS revenue "
                        "FROM order_items i JOIN orders o ON o.id = i.order_id AND o.status IN ('completed', 'shipped') "
                        "JOIN products p ON p.id = i.product_id GROUP BY p.category")

CATEGORY_REVENUE_EVAL = f"""[ -f {DBT_PROJECT}/models/marts/category_revenue.sql ] || fail "there is no dbt model models/marts/category_revenue.sql in {DBT_PROJECT}"
kind=$(psql -AtX -c "SELECT table_type FROM information_schema.tables WHERE table_schema = 'dbt' AND table_name = 'category_revenue'")
[ -n "$kind" ] || fail "dbt has not built category_revenue into the schema dbt of analytics"
diff=$(psql -AtX -v ON_ERROR_STOP=1 -c "WITH m AS (SELECT category::text, revenue::numeric(14,2) FROM dbt.category_revenue), r AS ({CATEGORY_REVENUE_REF}) SELECT count(*) FROM ((TABLE m EXCEPT ALL TABLE r) UNION ALL (TABLE r EXCEPT ALL TABLE m)) d" 2>&1)
[ "$diff" = 0 ] || fail "dbt.category_revenue's rows are not each category's revenue of completed and shipped orders ($diff rows differ)"
"""


def cli_gui_pairs() -> list[dict]:
    """cli+gui pairs: a view made in the terminal, then charted in Superset's web UI (the GUI suite); the
    essential GUI item is the chart's Save."""
    common = {**GUI_COMMON, "interface": "cli+gui", "related_apps": [*GUI_COMMON["related_apps"], "terminal"]}
    return [
        {
            **common,
            "name": "superset_cligui_revenue_view_chart",
            "action_number": 16,
            "source": ["https://www.postgresql.org/docs/15/sql-createview.html",
                       "https://superset.apache.org/docs/using-superset/exploring-data"],
            "abstract": "In this machine's PostgreSQL database analytics (psql -d analytics in a terminal), create a "
                        "view public.revenue_by_category with one row per product category: category, and revenue "
                        "(the sum of quantity times unit_price of its order items). Then, in Superset (open in "
                        "Chromium, signed in as admin), register the view as a dataset and save a bar chart of revenue "
                        "per category named Revenue by category.",
            "verbose": "Create a view in the terminal, then chart it in Superset:\n"
                       "1. Open a terminal and run: psql -d analytics -c 'CREATE VIEW revenue_by_category AS "
                       f"{REVENUE_SQL}'\n"
                       "2. In the Superset tab in Chromium, click Datasets, then + Dataset; choose the database "
                       "analytics, the schema public and the table revenue_by_category (type its name to find it); "
                       "click Create and explore dataset.\n"
                       "3. Choose the chart type Bar Chart and click Create new chart.\n"
                       "4. Drag category onto X-axis and revenue onto Metrics (the box that opens says SUM: click "
                       "Save).\n"
                       "5. Click Create chart, then Save; name the chart Revenue by category and click Save.",
            "config": prepare([]),
            "eval": REVENUE_VIEW_EVAL + dataset_eval("revenue_by_category", ["category", "revenue"], done=False)
                    + chart_eval("Revenue by category", {"viz": ["echarts_timeseries_bar"], "table": "revenue_by_category",
                                                         "columns": ["category"], "metrics": ["SUM(REVENUE)"],
                                                         "metrics_also": [["MAX(REVENUE)"], ["MIN(REVENUE)"],
                                                                          ["AVG(REVENUE)"]]}),
            "solution": [
                cmd(f"psql -d analytics -c 'CREATE VIEW revenue_by_category AS {REVENUE_SQL}'"),
                *add_dataset("public", "revenue_by_category", search_table=True), *chart_type("Bar Chart"),
                *drop("category", "x_axis"), *column_metric("revenue", "metrics"), *save_chart("Revenue by category"),
            ],
        },
        {
            **common,
            "name": "superset_cligui_dbt_model_pie",
            "action_number": 16,
            "related_apps": [*common["related_apps"], "dbt"],
            "source": ["https://docs.getdbt.com/docs/build/sql-models",
                       "https://superset.apache.org/docs/using-superset/exploring-data"],
            "abstract": f"In the dbt project {DBT_PROJECT} (PostgreSQL database analytics, schema dbt), add a model "
                        "category_revenue (models/marts/category_revenue.sql) with one row per product category: "
                        "category, and revenue (the line totals of the order items of completed and shipped orders), "
                        "and build it with dbt. Then, in Superset (open in Chromium, signed in as admin), register "
                        "dbt.category_revenue as a dataset and save a pie chart of revenue by category named Revenue "
                        "share by category.",
            "verbose": "Write a dbt model in the terminal, build it, and chart it in Superset:\n"
                       f"1. Open a terminal, cd {DBT_PROJECT} and write models/marts/category_revenue.sql:\n"
                       + "".join(f"   {line}\n" for line in CATEGORY_REVENUE_MODEL.splitlines()) +
                       "2. Build it and what it reads: dbt run --select +category_revenue\n"
                       "3. In the Superset tab in Chromium, click Datasets, then + Dataset; choose the database "
                       "analytics, the schema dbt and the table category_revenue; click Create and explore dataset.\n"
                       "4. Choose the chart type Pie Chart and click Create new chart.\n"
                       "5. Drag category onto Dimensions and revenue onto Metric (the box that opens says SUM: click "
                       "Save).\n"
                       "6. Click Create chart, then Save; name the chart Revenue share by category and click Save.",
            "config": [*prepare([]),
                       {"type": "execute", "parameters": {"command": bash(
                           f"rm -f {DBT_PROJECT}/models/marts/category_revenue.sql && "
                           "psql -qX -d analytics -c 'DROP SCHEMA IF EXISTS dbt CASCADE; CREATE SCHEMA dbt'")}}],
            "eval": CATEGORY_REVENUE_EVAL + dataset_eval("category_revenue", ["category", "revenue"], done=False,
                                                         schema="dbt")
                    + chart_eval("Revenue share by category", {"viz": ["pie"], "table": "category_revenue",
                                                               "columns": ["category"], "metrics": ["SUM(REVENUE)"],
                                                               "metrics_also": [["MAX(REVENUE)"], ["MIN(REVENUE)"],
                                                                                ["AVG(REVENUE)"]]}),
            "solution": [
                cmd(f"cd {DBT_PROJECT} && cat > models/marts/category_revenue.sql <<'EOF'\n"
                    + CATEGORY_REVENUE_MODEL + "EOF\ndbt run --select +category_revenue"),
                *add_dataset("dbt", "category_revenue", search_schema=True, search_table=True),
                *chart_type("Pie Chart"), *drop("category", "groupby"), *column_metric("revenue", "metric"),
                *save_chart("Revenue share by category"),
            ],
        },
    ]


def main() -> None:
    """Write this module's tasks and index them."""
    write_pairs(pairs())
