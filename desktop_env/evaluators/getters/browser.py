"""Browser getters: the active tab over the DevTools HTTP endpoint; page content through Playwright over CDP."""
from __future__ import annotations

import logging
from typing import Callable

from desktop_env.session import SetupContext, ToolNotInImage
from desktop_env.configs.cdp import cdp_browser, find_page, page_targets
from desktop_env.evaluators.getters.file import get_vm_script_output
from desktop_env.registry import GETTERS, UNAVAILABLE

logger = logging.getLogger(__name__)

#: Separator of the per-value verdicts of validate_correct_url and html_check (as in the suite they come from).
VERDICT_SEPARATOR = "\uff1b"


def active_page(ctx: SetupContext, name: str) -> dict | None:
    """The DevTools target (``{"id", "url", "title", ...}``) of Chromium's active tab; None when no Chromium
    answers or no page is open (``page_targets``: a slow answer raises instead)."""
    pages = page_targets(ctx, name)
    return pages[0] if pages else None


@GETTERS.register()
def get_active_tab_info(ctx: SetupContext, goto_prefix: str = "https://", **_ignored) -> dict | None:
    """``{"title", "url"}`` of Chromium's active tab, or None when there is no browser."""
    page = active_page(ctx, "active_tab_info")
    return None if page is None else {"title": page.get("title", ""), "url": page.get("url", "")}


@GETTERS.register("active_url_from_accessTree")
def get_active_url_from_access_tree(ctx: SetupContext, goto_prefix: str = "https://", **_ignored) -> str | None:
    """The URL of Chromium's active tab (read over CDP, which is what the accessibility tree's URL bar shows)."""
    page = active_page(ctx, "active_url_from_accessTree")
    if page is None:
        return None
    url = page.get("url", "")
    return url if "://" in url else goto_prefix + url


def _verdicts(values: list[str], found: Callable[[str], bool]) -> str:
    return "".join(f"{v} check {'succeed' if found(v) else 'failed'}{VERDICT_SEPARATOR}" for v in values)


def _expected_values(ctx: SetupContext, src: str, dest: str, shell: bool) -> list[str]:
    output = get_vm_script_output(ctx, src, dest, shell=shell)
    return [v.strip() for v in output.split(",") if v.strip()]


@GETTERS.register(host_paths=("src",))
def get_validate_correct_url(ctx: SetupContext, src: str, dest: str, goto_prefix: str = "https://",
                             shell: bool = False) -> str | None:
    """Check the active tab's URL against the values a script prints.

    Runs ``src`` (copied to ``dest``) in the VM; its stdout is a comma-separated list of
    values (e.g. a DAG id and a run id). Each value, with ``:`` and ``+`` percent-encoded as
    they appear in URLs, is looked for in the URL of Chromium's active tab.

    Returns:
        ``"<value> check succeed；<value> check failed；..."`` (pair it with
        ``check_include_exclude``), or None when no browser tab is open.
    """
    url = get_active_url_from_access_tree(ctx, goto_prefix=goto_prefix)
    if url is None:
        return None
    values = _expected_values(ctx, src, dest, shell)
    logger.info("validate_correct_url: active tab %s, expected values %s", url, values)
    return _verdicts(values, lambda v: v.replace(":", "%3A").replace("+", "%2B") in url)


@GETTERS.register(host_paths=("src",))
def get_html_check(ctx: SetupContext, src: str, dest: str, css_paths: list, shell: bool = False) -> str | None:
    """Check that values a script prints are shown on the active tab's page, inside given elements.

    Runs ``src`` (copied to ``dest``) in the VM; its stdout is a comma-separated list of
    values. The text of every element matching one of ``css_paths`` on the active tab is
    read through Playwright over CDP; each value must occur in one of those texts.

    Returns:
        ``"<value> check succeed；..."`` per value (pair it with ``check_include_exclude``),
        or None when no browser tab is open.
    """
    page_info = active_page(ctx, "html_check")
    if page_info is None:
        return None
    values = _expected_values(ctx, src, dest, shell)
    texts: list[str] = []
    with cdp_browser(ctx, "html_check") as browser:
        page = find_page(browser, page_info.get("url", ""))
        if page is None:
            logger.info("html_check: the active tab %s is not visible to Playwright", page_info.get("url"))
            return None
        page.wait_for_load_state("load")
        for css in css_paths:
            loc = page.locator(css)
            texts.extend(loc.nth(i).inner_text() for i in range(loc.count()))
    logger.info("html_check: %d element(s) under %s, expected values %s", len(texts), css_paths, values)
    return _verdicts(values, lambda v: any(v in t for t in texts))


@GETTERS.register()
def get_superset_localhost_page(ctx: SetupContext, url: str = "http://localhost:8088/superset/welcome",
                                title: str = "superset") -> str:
    """Whether a tab shows Superset's home page: URL under ``url``, ``title`` in its title, the home link visible.

    Returns:
        ``"Find superset home page succeed"`` or ``"Find superset home page failed"``.
    """
    from playwright.sync_api import Error as PlaywrightError

    with cdp_browser(ctx, "superset_localhost_page") as browser:
        prefix = url.replace("://127.0.0.1", "://localhost").rstrip("/")
        for context in browser.contexts:
            for page in context.pages:
                if not page.url.replace("://127.0.0.1", "://localhost").startswith(prefix):
                    continue
                try:
                    page.wait_for_load_state("load")
                    if title.lower() in page.title().lower():
                        page.locator('a[href="/superset/welcome/"]').first.wait_for(state="visible", timeout=10_000)
                        return "Find superset home page succeed"
                except PlaywrightError as exc:
                    logger.info("superset_localhost_page: %s is not the home page: %s", page.url,
                                exc.message.splitlines()[0])
    return "Find superset home page failed"


@GETTERS.register(status=UNAVAILABLE, note="Airbyte is not in any image of this project")
def get_airbyte_localhost_page(ctx: SetupContext, **fields):
    """Airbyte page getter: the tool is not in any image."""
    raise ToolNotInImage("Airbyte", step="airbyte_localhost_page")
