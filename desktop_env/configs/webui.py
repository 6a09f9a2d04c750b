"""Web-UI initialisers: Dagster and Superset driven through Playwright over CDP; airbyte, metabase, astro absent.

Each initialiser attaches to the VM's Chromium (``desktop_env.configs.cdp``), finds or opens
the tool's page at ``url`` (a URL inside the VM) and runs its ``actions`` in order, each
``{"type": <name>, ...fields}``. An unknown action type is an error naming the known ones.
``listening_port`` is the VM-side CDP port the task started Chromium with; the host reaches
it through the environment's forwarded port, so the value is informational here.
"""
from __future__ import annotations

import json
import logging
import re
import time
from typing import Callable

from desktop_env.session import NotSupportedError, SetupContext, SetupError, ToolNotInImage
from desktop_env.configs.cdp import cdp_browser, open_page
from desktop_env.registry import SETUP_STEPS, UNAVAILABLE

logger = logging.getLogger(__name__)

#: Popup buttons the Dagster UI shows on a fresh profile (community sign-up, what's-new, ...).
DAGSTER_POPUP_BUTTONS = ("Skip", "Dismiss", "Close")
#: How long one popup button is waited for (most runs show none).
POPUP_WAIT_MS = 3_000


def _run_actions(ctx: SetupContext, page, actions, table: dict[str, Callable], step: str, base_url: str) -> None:
    for i, action in enumerate(actions or []):
        if not isinstance(action, dict) or not isinstance(action.get("type"), str):
            raise SetupError(f"actions[{i}] must be an object with a string `type`, got {action!r}", step=step)
        fields = {k: v for k, v in action.items() if k != "type"}
        func = table.get(action["type"])
        if func is None:
            raise SetupError(f"actions[{i}]: unknown action type {action['type']!r} "
                             f"(this step knows: {', '.join(sorted(table))})", step=step)
        logger.info("%s: action %s %s", step, action["type"], fields or "")
        try:
            func(ctx, page, base_url, **fields)
        except TypeError as exc:
            raise SetupError(f"actions[{i}] ({action['type']}): {exc}", step=step) from exc


def _execute_js(ctx: SetupContext, page, base_url: str, script_path: str) -> None:
    """Evaluate the JavaScript file ``script_path`` (a task file on the host) in the page."""
    page.evaluate(ctx.resolve(script_path).read_text().strip())


def _click_if_shown(page, label: str, wait_ms: int = POPUP_WAIT_MS) -> bool:
    from playwright.sync_api import Error as PlaywrightError

    button = page.locator("button").filter(has_text=label).first
    try:
        button.wait_for(state="visible", timeout=wait_ms)
        button.click()
        return True
    except PlaywrightError:
        return False


# -- Dagster ----------------------------------------------------------------------------------------

def _dagster_close_popups(ctx: SetupContext, page, base_url: str, wait_s: float = POPUP_WAIT_MS / 1000) -> None:
    """Dismiss the first-visit popups (community sign-up and the like) if they are shown; ``wait_s``:
    how long the first one is waited for (under emulation it shows once the UI has rendered, minutes later)."""
    from playwright.sync_api import Error as PlaywrightError

    labels = "|".join(DAGSTER_POPUP_BUTTONS)
    try:
        page.locator("button").filter(has_text=re.compile(f"^({labels})$")).first.wait_for(
            state="visible", timeout=wait_s * 1000)
    except PlaywrightError:
        return
    for label in DAGSTER_POPUP_BUTTONS:
        if _click_if_shown(page, label):
            logger.info("dagster_webui_init: closed a popup with %r", label)


_LATEST_MATERIALIZATIONS = """async () => {
  const r = await fetch('/graphql', {method: 'POST', headers: {'Content-Type': 'application/json'},
    body: JSON.stringify({query: '{ assetNodes { assetKey { path } assetMaterializations(limit: 1) { timestamp } } }'})});
  return await r.json();
}"""


def _dagster_latest(page) -> dict[str, float]:
    """Asset key ("a/b") -> timestamp (s) of its latest materialization, read through the UI's GraphQL endpoint."""
    reply = page.evaluate(_LATEST_MATERIALIZATIONS)
    if "data" not in reply:
        raise SetupError(f"Dagster's GraphQL endpoint answered {json.dumps(reply)[:300]}", step="dagster_webui_init")
    out = {}
    for node in reply["data"]["assetNodes"]:
        mats = node["assetMaterializations"]
        out["/".join(node["assetKey"]["path"])] = float(mats[0]["timestamp"]) / 1000 if mats else 0.0
    return out


def _dagster_materialize_assets(ctx: SetupContext, page, base_url: str, assets: list | None = None,
                                timeout: int = 120_000) -> None:
    """Materialize ``assets`` (names as listed in the catalog; all when omitted) from the Assets page.

    Reloads the definitions first, ticks the assets, clicks "Materialize selected" and waits
    (``timeout`` ms) until every ticked asset has a materialization newer than the click.
    """
    step = "dagster_webui_init"
    page.goto(base_url.rstrip("/") + "/assets", wait_until="load")
    _dagster_close_popups(ctx, page, base_url)
    reload = page.locator("button").filter(has_text="Reload definitions").first
    reload.wait_for(state="visible", timeout=timeout)
    reload.click()
    page.wait_for_function("b => !b.disabled", arg=reload.element_handle(), timeout=timeout)
    boxes = page.locator('input[type="checkbox"][data-testid^="checkbox-"]')
    boxes.first.wait_for(state="attached", timeout=timeout)
    listed = {boxes.nth(i).get_attribute("data-testid")[len("checkbox-"):]: boxes.nth(i)
              for i in range(boxes.count())}
    wanted = list(listed) if assets is None else [str(a) for a in assets]
    missing = [a for a in wanted if a not in listed]
    if missing:
        raise SetupError(f"materialize_assets: no asset {', '.join(map(repr, missing))} in the Dagster catalog "
                         f"(listed: {', '.join(sorted(listed)) or 'none'})", step=step)
    for name in wanted:
        if not listed[name].is_checked():
            page.locator(f'label:has(input[data-testid="checkbox-{name}"])').click()
    started = time.time()
    page.locator("button").filter(has_text="Materialize selected").first.click()
    deadline = time.monotonic() + timeout / 1000
    while True:
        latest = _dagster_latest(page)
        # The catalog shows the last path element of an asset key; match on it.
        pending = [a for a in wanted
                   if not any(k.split("/")[-1] == a and t >= started - 1 for k, t in latest.items())]
        if not pending:
            break
        if time.monotonic() > deadline:
            raise SetupError(f"materialize_assets: {', '.join(pending)} not materialized within {timeout / 1000:.0f} s "
                             "(see the run in the Dagster UI)", step=step)
        time.sleep(2)
    page.reload(wait_until="load")
    logger.info("dagster_webui_init: materialized %s in %.1f s", ", ".join(wanted), time.time() - started)


def _dagster_plus_only(ctx: SetupContext, page, base_url: str, **_fields) -> None:
    raise NotSupportedError("delete_environment_variables drives Dagster+ (the hosted service), which needs "
                            "an account; the local Dagster UI has no environment-variables page",
                            step="dagster_webui_init")


DAGSTER_ACTIONS: dict[str, Callable] = {
    "execute_js": _execute_js,
    "close_popups": _dagster_close_popups,
    "materialize_assets": _dagster_materialize_assets,
    "delete_environment_variables": _dagster_plus_only,
}


@SETUP_STEPS.register(host_paths=("actions[].script_path",))
def dagster_webui_init(ctx: SetupContext, url: str = "http://localhost:3000", listening_port: int = 9222,
                       actions: list | None = None) -> None:
    """Open the Dagster web UI in the VM's Chromium and bring it to a known state.

    Actions: ``close_popups``, ``materialize_assets`` (``assets``: names, default all;
    ``timeout`` ms), ``execute_js`` (``script_path``: a task file), and
    ``delete_environment_variables`` (Dagster+ only: fails, needs an account).
    """
    step = "dagster_webui_init"
    with cdp_browser(ctx, step) as browser:
        page = open_page(browser, url, step)
        _run_actions(ctx, page, actions, DAGSTER_ACTIONS, step, url)


# -- Superset ---------------------------------------------------------------------------------------

def _superset_login(ctx: SetupContext, page, base_url: str, username: str = "admin", password: str = "admin",
                    timeout: int = 60_000) -> None:
    """Sign in on Superset's login form (when it is shown) and wait until the app has rendered after it."""
    step = "superset_webui_init"
    user = page.locator('input#username, input[name="username"]').first
    if user.count() == 0:
        page.goto(base_url.rstrip("/") + "/login/", wait_until="load")
    if user.count() == 0:
        logger.info("superset_webui_init: no login form at %s, already signed in", page.url)
        return
    user.fill(username)
    page.locator('input#password, input[name="password"]').first.fill(password)
    page.locator('input[type="submit"], button[type="submit"]').first.click()
    try:
        # Off the login page, then the app rendered (its menu shows "Dashboards"); Superset 6 has no
        # link to /superset/welcome/ any more, so the URL and the text are what is waited for.
        page.wait_for_url(lambda url: "/login" not in url, timeout=timeout)
        page.wait_for_function("() => document.body && document.body.innerText.includes('Dashboards')",
                               timeout=timeout)
    except Exception as exc:  # playwright's TimeoutError
        raise SetupError(f"signing in to Superset as {username!r} did not reach the welcome page within "
                         f"{timeout / 1000:.0f} s (now at {page.url})", step=step) from exc


SUPERSET_ACTIONS: dict[str, Callable] = {
    "execute_js": _execute_js,
    "login": _superset_login,
}


@SETUP_STEPS.register(host_paths=("actions[].script_path",))
def superset_webui_init(ctx: SetupContext, url: str = "http://localhost:8088", listening_port: int = 9222,
                        username: str = "admin", password: str = "admin", actions: list | None = None,
                        login_timeout_s: float = 60) -> None:
    """Open Superset in the VM's Chromium, sign in (``username``/``password``; the welcome page must
    show within ``login_timeout_s``), then run ``actions``.

    Actions: ``login`` (``username``, ``password``) and ``execute_js`` (``script_path``).
    """
    step = "superset_webui_init"
    with cdp_browser(ctx, step) as browser:
        page = open_page(browser, url, step)
        _superset_login(ctx, page, url, username=username, password=password, timeout=int(login_timeout_s * 1000))
        _run_actions(ctx, page, actions, SUPERSET_ACTIONS, step, url)


@SETUP_STEPS.register(status=UNAVAILABLE, note="Airbyte is not in any image of this project")
def airbyte_webui_init(ctx: SetupContext, **params) -> None:
    """Airbyte web UI setup: the tool is not in any image, so this always fails clearly."""
    raise ToolNotInImage("Airbyte", step="airbyte_webui_init")


@SETUP_STEPS.register(status=UNAVAILABLE, note="Metabase is not in any image of this project")
def metabase_webui_init(ctx: SetupContext, **params) -> None:
    """Metabase web UI setup: the tool is not in any image, so this always fails clearly."""
    raise ToolNotInImage("Metabase", step="metabase_webui_init")


@SETUP_STEPS.register(status=UNAVAILABLE, note="Astro (Astronomer) is not in any image of this project")
def astro_webui_init(ctx: SetupContext, **params) -> None:
    """Astro web UI setup: the tool is not in any image, so this always fails clearly."""
    raise ToolNotInImage("Astro (Astronomer CLI/Airflow)", step="astro_webui_init")


@SETUP_STEPS.register(status=UNAVAILABLE, note="refreshes the Astro (Astronomer) web UI, which is not in any image "
                                               "of this project")
def astro_refresh_page(ctx: SetupContext, **params) -> None:
    """Reload the Astro web UI's page (a postconfig step): the tool is not in any image, so this always fails clearly."""
    raise ToolNotInImage("Astro (Astronomer CLI/Airflow)", step="astro_refresh_page")
