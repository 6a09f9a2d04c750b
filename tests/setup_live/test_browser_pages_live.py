"""Page getters and web-UI initialisers through Playwright over CDP, against a real Chromium.

Chromium (Debian's) runs on the host with remote debugging, standing for the VM's browser;
scripts run through the in-VM server on Xvfb. The Dagster initialiser is driven against a
real ``dagster dev`` (its own cached venv) and checked through Dagster's GraphQL API.
"""
from __future__ import annotations

import json
import os
import subprocess
import time
import urllib.parse
import urllib.request
import uuid
from dataclasses import replace
from pathlib import Path

import pytest

from desktop_env.session import NotSupportedError, SetupError
from desktop_env.configs.dispatch import run_step
from desktop_env.evaluators.evaluator import run_getter
from desktop_env.tasks import GetterSpec, StepSpec
from live_procs import dagster_venv_bin, free_port, stop, wait_http

pytestmark = pytest.mark.xvfb

APP = "chromium"
CHROMIUM = "/usr/bin/chromium"


@pytest.fixture(scope="module")
def chromium(tmp_path_factory):
    """CDP port of a headless Chromium on the host (the stand-in for the VM's browser)."""
    if not os.path.exists(CHROMIUM):
        pytest.fail("chromium is missing: apt-get install chromium (see .ci/apt-packages.txt)")
    port = free_port()
    profile = tmp_path_factory.mktemp("chromium-profile")
    proc = subprocess.Popen([CHROMIUM, "--headless=new", "--no-sandbox", f"--remote-debugging-port={port}",
                             f"--user-data-dir={profile}", "--no-first-run", "--no-default-browser-check",
                             "--window-size=1600,1000", "about:blank"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        wait_http(f"http://127.0.0.1:{port}/json/version", 60, proc, "chromium")
        yield port
    finally:
        stop(proc)


@pytest.fixture
def page_ctx(suite, context, chromium):
    """``page_ctx(files)`` -> a SetupContext whose CDP port is the host Chromium's."""
    def make(files: dict | None = None):
        tid = str(uuid.uuid4())
        task = suite(APP, {"id": tid, "instruction": "check the page", "config": [],
                           "evaluator": {"func": "infeasible"}}, files=files)
        return replace(context(task), cdp_port_host=chromium)
    return make


def _open_tab(port: int, url: str) -> None:
    req = urllib.request.Request(f"http://127.0.0.1:{port}/json/new?{urllib.parse.quote(url, safe=':/')}",
                                 method="PUT")
    urllib.request.urlopen(req, timeout=10).read()
    time.sleep(1.0)


def test_chrome_open_tabs_keeps_query_strings_and_escapes(page_ctx, http_root):
    """The URL reaches Chromium whole: `&`, `#` and percent-escapes survive DevTools' /json/new."""
    root, base = http_root
    # Text in the body: chrome_open_tabs waits (up to setup.page_render) for a page to show text.
    (root / "q.html").write_text("<title>q</title><p>query page</p>")
    url = f"{base}/q.html?a=1&run=manual__2024%3A00%2B00#frag"
    ctx = page_ctx()
    run_step(ctx, _step({"type": "chrome_open_tabs", "parameters": {"urls_to_open": [url]}}))
    assert _get(ctx, type="active_tab_info")["url"] == url


def _get(ctx, **spec):
    return run_getter(ctx, GetterSpec.from_json(spec), "result")


# -- validate_correct_url / html_check / superset_localhost_page ----------------------------------

def test_validate_correct_url_checks_each_value_in_the_active_tab(page_ctx, chromium, http_root, guest):
    root, base = http_root
    (root / "grid.html").write_text("<title>grid</title><p>dag grid</p>")
    _open_tab(chromium, f"{base}/grid.html?dag_id=etl_daily&dag_run_id=manual__2024-01-01T00%3A00%3A00%2B00%3A00")
    ctx = page_ctx({"eval.sh": "echo 'etl_daily,manual__2024-01-01T00:00:00+00:00,etl_weekly'\n"})
    out = _get(ctx, type="validate_correct_url", src="eval.sh", dest=str(guest / "eval.sh"), goto_prefix="http://")
    assert out == ("etl_daily check succeed\uff1b"
                   "manual__2024-01-01T00:00:00+00:00 check succeed\uff1b"
                   "etl_weekly check failed\uff1b")


def test_html_check_reads_elements_of_the_active_page(page_ctx, chromium, http_root, guest):
    root, base = http_root
    (root / "report.html").write_text("<title>report</title><div class='kpi'><span>Total orders: 1284</span></div>"
                                      "<div class='kpi'><span>Top region: EMEA</span></div><p>Other: 77</p>")
    _open_tab(chromium, f"{base}/report.html")
    ctx = page_ctx({"eval.sh": "echo '1284,EMEA,77'\n"})
    out = _get(ctx, type="html_check", src="eval.sh", dest=str(guest / "eval.sh"), css_paths=[".kpi span"])
    # 77 is on the page, but not inside the elements named by css_paths.
    assert out == "1284 check succeed\uff1bEMEA check succeed\uff1b77 check failed\uff1b"


def test_superset_localhost_page_needs_url_title_and_home_link(page_ctx, chromium, http_root):
    root, base = http_root
    ctx = page_ctx()
    spec = dict(type="superset_localhost_page", url=f"{base}/superset/welcome", title="superset")
    assert _get(ctx, **spec) == "Find superset home page failed"
    (root / "superset" / "welcome").mkdir(parents=True)
    (root / "superset" / "welcome" / "index.html").write_text(
        "<title>Superset</title><nav><a href='/superset/welcome/'>Home</a></nav>")
    (root / "other.html").write_text("<title>Superset</title><p>no home link</p>")
    _open_tab(chromium, f"{base}/other.html")
    assert _get(ctx, **spec) == "Find superset home page failed"
    _open_tab(chromium, f"{base}/superset/welcome/")
    assert _get(ctx, **spec) == "Find superset home page succeed"


def test_page_getters_report_a_missing_browser_clearly(page_ctx, guest):
    ctx = replace(page_ctx({"eval.sh": "echo x\n"}), cdp_port_host=free_port())
    # No DevTools endpoint: the URL getter finds no tab; the page driver fails naming the endpoint.
    assert _get(ctx, type="validate_correct_url", src="eval.sh", dest=str(guest / "e.sh")) is None
    with pytest.raises(SetupError, match="could not attach to Chromium's DevTools endpoint"):
        _get(ctx, type="superset_localhost_page")


# -- dagster_webui_init against a real Dagster ------------------------------------------------------

@pytest.fixture(scope="module")
def dagster_bin() -> Path:
    """bin/ of a cached venv with the Dagster web UI (built once per version, shared by runs)."""
    return dagster_venv_bin()


DEFS = '''
import dagster as dg

@dg.asset
def raw_orders():
    return [120, 80, 45]

@dg.asset
def order_totals(raw_orders):
    return sum(raw_orders)

@dg.asset
def untouched():
    return 0

defs = dg.Definitions(assets=[raw_orders, order_totals, untouched])
'''


@pytest.fixture(scope="module")
def dagster(dagster_bin, tmp_path_factory):
    """Base URL of a running ``dagster dev`` (webserver + daemon) on a fresh instance."""
    work = tmp_path_factory.mktemp("dagster")
    home = work / "home"
    home.mkdir()
    (home / "dagster.yaml").write_text("telemetry:\n  enabled: false\n")
    (work / "defs.py").write_text(DEFS)
    port = free_port()
    env = dict(os.environ, DAGSTER_HOME=str(home))
    log = open(work / "dagster.log", "wb")
    proc = subprocess.Popen([str(dagster_bin / "dagster"), "dev", "-f", "defs.py", "-h", "127.0.0.1", "-p", str(port)],
                            cwd=work, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        wait_http(f"http://127.0.0.1:{port}/server_info", 180, proc, "dagster dev")
        yield f"http://127.0.0.1:{port}"
    finally:
        stop(proc)
        log.close()


def _materialized(base: str) -> dict[str, bool]:
    query = "{ assetNodes { assetKey { path } assetMaterializations(limit: 1) { timestamp } } }"
    req = urllib.request.Request(f"{base}/graphql", data=json.dumps({"query": query}).encode(),
                                 headers={"Content-Type": "application/json"})
    nodes = json.loads(urllib.request.urlopen(req, timeout=30).read())["data"]["assetNodes"]
    return {"/".join(n["assetKey"]["path"]): bool(n["assetMaterializations"]) for n in nodes}


@pytest.mark.slow
def test_dagster_webui_init_materializes_the_named_assets(page_ctx, dagster):
    ctx = page_ctx()
    assert _materialized(dagster) == {"raw_orders": False, "order_totals": False, "untouched": False}
    step = {"type": "dagster_webui_init", "parameters": {"url": dagster, "listening_port": 9222, "actions": [
        {"type": "close_popups"}, {"type": "materialize_assets", "assets": ["raw_orders", "order_totals"]}]}}
    run_step(ctx, _step(step))
    assert _materialized(dagster) == {"raw_orders": True, "order_totals": True, "untouched": False}


@pytest.mark.slow
def test_dagster_webui_init_refuses_unknown_assets_and_actions(page_ctx, dagster):
    ctx = page_ctx()
    bad_asset = {"type": "dagster_webui_init", "parameters": {"url": dagster, "actions": [
        {"type": "materialize_assets", "assets": ["no_such_asset"]}]}}
    with pytest.raises(SetupError, match=r"no asset 'no_such_asset' in the Dagster catalog .*raw_orders"):
        run_step(ctx, _step(bad_asset))
    bad_action = {"type": "dagster_webui_init", "parameters": {"url": dagster, "actions": [{"type": "materialise"}]}}
    with pytest.raises(SetupError, match=r"unknown action type 'materialise' .*materialize_assets"):
        run_step(ctx, _step(bad_action))
    cloud = {"type": "dagster_webui_init", "parameters": {"url": dagster, "actions": [
        {"type": "delete_environment_variables"}]}}
    with pytest.raises(NotSupportedError, match="Dagster\\+"):
        run_step(ctx, _step(cloud))


def _step(raw: dict) -> StepSpec:
    return StepSpec.from_json(raw)


def test_a_start_page_the_offline_vm_cannot_reach_costs_seconds_not_the_render_limit(page_ctx, http_root):
    """The public suite opens https://www.bing.com/ as a start page; offline it never renders. It is not
    waited for (setup.page_render is 300 s), while a page the VM serves itself still is."""
    root, base = http_root
    (root / "local.html").write_text("<title>local</title><p>a page served in the VM</p>")
    ctx = page_ctx()
    t0 = time.monotonic()
    run_step(ctx, _step({"type": "chrome_open_tabs", "parameters": {
        "urls_to_open": ["https://start.example.invalid/", f"{base}/local.html"]}}))
    assert time.monotonic() - t0 < 30
    assert ctx.state["unreachable_pages"] == ["https://start.example.invalid/"]
    assert _get(ctx, type="active_tab_info")["url"] == f"{base}/local.html"


def test_a_web_ui_still_starting_is_waited_for_until_setup_service_start(page_ctx, monkeypatch, tmp_path):
    """Under emulation Dagster answers 70-260 s after the suite's script started it (and its own 20 s wait gave
    up): refused connections are tried again until the time limit, not a fixed ten times."""
    import functools
    import http.server
    import threading

    from desktop_env.configs.cdp import cdp_browser, open_page
    from desktop_env.session import SetupError

    (tmp_path / "index.html").write_text("<title>late</title><p>a tool that took its time</p>")
    port = free_port()
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(tmp_path))
    servers = []

    def start_late():
        time.sleep(45)  # longer than the ten tries 3 s apart (about 30 s) that were given before
        servers.append(http.server.ThreadingHTTPServer(("127.0.0.1", port), handler))
        servers[0].serve_forever()

    t0 = time.monotonic()
    threading.Thread(target=start_late, daemon=True).start()
    ctx = page_ctx()
    try:
        with cdp_browser(ctx, "test") as browser:
            page = open_page(browser, f"http://127.0.0.1:{port}/", "test")
            assert page.title() == "late" and time.monotonic() - t0 >= 45
    finally:
        if servers:
            servers[0].shutdown()
    monkeypatch.setenv("DESKTOP_ENV_TIME_SCALE", "0.025")  # setup.service_start: 600 s -> 15 s
    with cdp_browser(ctx, "test") as browser:
        with pytest.raises(SetupError, match=r"did not answer .*within the time limit setup.service_start \(15 s"):
            open_page(browser, f"http://127.0.0.1:{free_port()}/", "test")
