"""The data image: services are off at boot; each tool starts through its helper and answers for real.

Needs a built `data` image in the cache (CI does not build it: this module skips with the
command to run). One VM for the module, reverted to init_state before each tool. Dagster, Airflow and
Superset start cold here only when the image has no current warm state of the tool: a current state's
build started the tool cold, from this image, with the same start-<tool> (2-4 minutes each under
emulation), so the checks then run on the restored state; ``DESKTOP_ENV_COLD_STARTS=1`` always starts
them cold.
"""
import json
import os
import sys
from pathlib import Path

import pytest

from profile_vm import back_to_init_state, cached_image_or_skip, running

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from _warm_work import do_work  # noqa: E402

pytestmark = [pytest.mark.vm, pytest.mark.slow, pytest.mark.data]

SERVICES = ["postgresql@15-main", "mariadb", "desktop-env-dagster-code", "desktop-env-dagster-runs", "desktop-env-dagster",
            "desktop-env-airflow", "desktop-env-superset"]


@pytest.fixture(scope="module")
def data_vm():
    image = cached_image_or_skip("data", "sudo desktop-env image build --profile data (13 min from an empty cache "
                                         "on a quiet 2-core host, see docs/image.md)")
    with running(image) as vm_and_guest:
        yield vm_and_guest


@pytest.fixture
def fresh(data_vm):
    """The guest back at init_state (nothing started), ready for commands."""
    return back_to_init_state(*data_vm)


def sh(guest, command: str, timeout_s: float = 300) -> dict:
    """Run ``command`` as the desktop user through a login shell (sees /etc/profile.d)."""
    return guest.execute(["bash", "-lc", command], timeout_s=timeout_s)


def started(data_vm, tool: str, timeout_s: float):
    """The guest with ``tool`` running: restored from the image's current warm state of it (see the module's
    doc), else started cold from init_state."""
    from desktop_env.image.states import current_state, recipe_for

    provider, guest = data_vm
    state = None if os.environ.get("DESKTOP_ENV_COLD_STARTS") else current_state(provider.image,
                                                                               recipe_for(provider.image, tool))
    if state is None:
        guest = back_to_init_state(provider, guest)
        start(guest, tool, timeout_s)
        return guest
    provider.restore_state(state)
    guest.wait_ready(timeout_s=120, require_display=False)
    return guest


def start(guest, tool: str, timeout_s: float) -> str:
    reply = sh(guest, f"start-{tool}", timeout_s=timeout_s + 60)
    assert reply["returncode"] == 0, f"start-{tool} failed:\n{reply['output']}\n{reply['error']}"
    return reply["output"]


def test_services_are_off_at_boot_and_helpers_installed(fresh):
    states = sh(fresh, "systemctl is-active " + " ".join(SERVICES) + " || true")["output"].split()
    assert states == ["inactive"] * len(SERVICES), states
    found = sh(fresh, "ls /usr/local/bin/start-* && command -v geany dbt psql mariadb")["output"]
    for tool in ["postgres", "mariadb", "dagster", "airflow", "superset"]:
        assert f"/usr/local/bin/start-{tool}" in found
    assert "/usr/bin/geany" in found and "/usr/local/bin/dbt" in found


def test_postgres_answers_sql_and_start_is_idempotent(fresh):
    assert "postgres ready" in start(fresh, "postgres", 180)
    count = sh(fresh, "PGPASSWORD=password psql -h 127.0.0.1 -U user -d analytics -qAtX "
                      "-c 'SELECT count(*) FROM customers'")
    assert count["output"].strip() == "200", count
    peer = sh(fresh, "psql -d analytics -qAtX -c \"SELECT count(*) FROM orders WHERE status = 'completed'\"")
    assert peer["returncode"] == 0 and int(peer["output"]) > 0, peer
    assert "postgres ready" in start(fresh, "postgres", 60)   # already running: no error


def test_mariadb_answers_sql(fresh):
    assert "mariadb ready" in start(fresh, "mariadb", 180)
    reply = sh(fresh, "mariadb -h 127.0.0.1 -u user -ppassword hr -N -e 'SELECT count(*) FROM employees'")
    assert reply["output"].strip() == "120", reply
    socket = sh(fresh, "mariadb hr -N -e 'SELECT name FROM departments ORDER BY id LIMIT 1'")
    assert socket["output"].strip() == "Engineering", socket


def test_dbt_debug_on_both_projects(fresh):
    duck = sh(fresh, "cd ~/projects/dbt_duckdb && dbt debug", timeout_s=600)
    assert duck["returncode"] == 0 and "All checks passed" in duck["output"], duck["output"][-2000:]
    start(fresh, "postgres", 180)
    pg = sh(fresh, "cd ~/projects/dbt_postgres && dbt debug", timeout_s=600)
    assert pg["returncode"] == 0 and "All checks passed" in pg["output"], pg["output"][-2000:]


def test_dagster_web_server_answers_and_forks_its_runs(data_vm):
    fresh = started(data_vm, "dagster", 900)
    info = json.loads(sh(fresh, "curl -fsS http://127.0.0.1:3000/server_info")["output"])
    assert "dagster_webserver_version" in info, info
    query = json.dumps({"query": "{ assetNodes { assetKey { path } } }"})
    reply = sh(fresh, f"curl -fsS -H 'Content-Type: application/json' -d '{query}' http://127.0.0.1:3000/graphql",
               timeout_s=300)
    assert "daily_revenue" in reply["output"], reply
    # a run launched over GraphQL succeeds, its worker forked by desktop-env-dagster-runs (the
    # instance's run launcher: ~/.dagster/dagster.yaml)
    do_work("dagster", None, fresh, finish=True)
    events = fresh.execute(["python3", "-c", LAST_RUN_EVENTS], timeout_s=300)
    assert "Run worker forked by the run-worker server" in events["output"], events


LAST_RUN_EVENTS = r'''
import json, urllib.request
def gql(query, variables=None):
    req = urllib.request.Request("http://127.0.0.1:3000/graphql", headers={"Content-Type": "application/json"},
                                 data=json.dumps({"query": query, "variables": variables or {}}).encode())
    return json.load(urllib.request.urlopen(req, timeout=120))["data"]
run = gql("{ runsOrError(limit: 1) { ... on Runs { results { runId } } } }")["runsOrError"]["results"][0]
events = gql("query($id: ID!) { logsForRun(runId: $id) { ... on EventConnection { events { ... on MessageEvent "
             "{ message } } } } }", {"id": run["runId"]})["logsForRun"]["events"]
print("\n".join(e.get("message") or "" for e in events))
'''


def test_airflow_health_and_login(data_vm):
    fresh = started(data_vm, "airflow", 1200)
    health = json.loads(sh(fresh, "curl -fsS http://127.0.0.1:8080/api/v2/monitor/health")["output"])
    assert health["metadatabase"]["status"] == "healthy", health
    token = sh(fresh, "curl -fsS -H 'Content-Type: application/json' -d '{\"username\":\"admin\",\"password\":\"admin\"}' "
                      "http://127.0.0.1:8080/auth/token")
    assert "access_token" in token["output"], token


def test_superset_login_page_and_api(data_vm):
    fresh = started(data_vm, "superset", 900)
    page = sh(fresh, "curl -fsS -L http://127.0.0.1:8088/login/")
    assert page["returncode"] == 0 and "Superset" in page["output"], page["output"][:500]
    login = sh(fresh, "curl -fsS -H 'Content-Type: application/json' "
                      "-d '{\"username\":\"admin\",\"password\":\"admin\",\"provider\":\"db\"}' "
                      "http://127.0.0.1:8088/api/v1/security/login")
    assert "access_token" in login["output"], login
    # The web form's sign-in (what a person or an agent does) once answered HTTP 500 to every POST
    # (wtforms-json 0.3.4); a full sign-in through the form is what the superset warm state does
    # (tests/vm/test_warm_states_data.py).
    form = sh(fresh, "curl -sS -o /dev/null -w '%{http_code}' -d username=admin -d password=admin "
                     "http://127.0.0.1:8088/login/")
    assert form["output"].strip() in ("200", "302"), form
    cli = sh(fresh, "superset version", timeout_s=600)    # the CLI imports rich and cachetools (pinned in data.toml)
    assert cli["returncode"] == 0, cli["output"][-2000:] + cli["error"][-2000:]


def test_duckdb_command_reads_the_dbt_warehouse(fresh):
    """One DuckDB release: the `duckdb` command opens the file dbt's library wrote at build time."""
    rows = sh(fresh, "duckdb -readonly -noheader -csv ~/projects/dbt_duckdb/warehouse.duckdb "
                     "'SELECT count(*) > 0 FROM monthly_revenue'")
    assert rows["returncode"] == 0 and rows["output"].strip() == "true", rows
