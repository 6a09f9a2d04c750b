"""Apache Superset task pairs (``examples/superset``) on the ``data`` image.

Register the PostgreSQL ``analytics`` database in Superset (the ``superset`` command), and
create a dataset on its ``orders`` table (Superset's REST API with curl). Both are ``cli``
tasks: their reference solutions are commands; the web UI (http://localhost:8088) would do
as well. Setup starts PostgreSQL and Superset; the evaluators read Superset's metadata
database (``/home/user/.superset/superset.db``, SQLite).

Regenerate with ``python3 -m evaluation_examples.generators superset`` from the repository
root (see the package docstring).
"""
from __future__ import annotations

from .common import START_POSTGRES, bash, cmd, write_pairs

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

DATASET_EVAL = META + """rows=$(meta "SELECT t.id, coalesce(t.schema, '') FROM tables t JOIN dbs d ON d.id = t.database_id WHERE lower(d.database_name) = 'analytics' AND t.table_name = 'orders'")
[ -n "$rows" ] || fail "no dataset on table orders of the analytics database ($(meta 'SELECT table_name FROM tables' | tr '\\n' ' '))"
id=${rows%%|*}
schema=${rows#*|}
[ "$schema" = public ] || [ -z "$schema" ] || fail "the dataset is on schema $schema, not public"
cols=$(meta "SELECT group_concat(column_name, ',') FROM (SELECT column_name FROM table_columns WHERE table_id = $id ORDER BY column_name)")
for c in id customer_id order_date status; do
  case ",$cols," in *",$c,"*) ;; *) fail "the dataset lacks the column $c (has: $cols)";; esac
done
echo EVAL_OK
"""

DATASET_CURL = """B=http://127.0.0.1:8088
TOKEN=$(curl -fsS -H 'Content-Type: application/json' -d '{"username": "admin", "password": "admin", "provider": "db"}' $B/api/v1/security/login | jq -r .access_token)
CSRF=$(curl -fsS -c /tmp/superset.jar -H "Authorization: Bearer $TOKEN" $B/api/v1/security/csrf_token/ | jq -r .result)
DB=$(curl -fsS -H "Authorization: Bearer $TOKEN" "$B/api/v1/database/?q=(filters:!((col:database_name,opr:eq,value:analytics)))" | jq '.result[0].id')
curl -fsS -b /tmp/superset.jar -H "Authorization: Bearer $TOKEN" -H "X-CSRFToken: $CSRF" -H "Referer: $B" -H 'Content-Type: application/json' -d "{\\"database\\": $DB, \\"schema\\": \\"public\\", \\"table_name\\": \\"orders\\"}" $B/api/v1/dataset/"""


def pairs() -> list[dict]:
    """The task pairs of this module (``common`` describes their keys)."""
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


def main() -> None:
    """Write this module's tasks and index them."""
    write_pairs(pairs())
