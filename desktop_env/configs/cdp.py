"""Playwright attached to the VM's Chromium over CDP: the page driver of the web-UI steps and page getters.

The host never launches or downloads a browser: ``connect_over_cdp`` attaches to the
Chromium that ``google_chrome_browser`` started in the VM, through the host port the
provider forwards to the VM's DevTools listener (``SetupContext.cdp_port_host``). URLs
such as ``http://localhost:3000`` are therefore opened *inside* the VM, where the tools run.
"""
from __future__ import annotations

import contextlib
import json
import logging
import re
import time
import urllib.parse
import urllib.request
from typing import TYPE_CHECKING, Iterator

from desktop_env.errors import DesktopEnvError
from desktop_env.session import NotSupportedError, SetupContext, SetupError
from desktop_env.limits import TimeLimitExceeded, limit

if TYPE_CHECKING:  # pragma: no cover
    from playwright.sync_api import Browser, Page

logger = logging.getLogger(__name__)

#: Seconds between the tries of loading a web UI's first page while the tool is still starting (refused connections).
GOTO_RETRY_S = 3.0


def cdp_base_url(ctx: SetupContext, step: str) -> str:
    """``http://host:port`` of the VM's Chromium DevTools endpoint as seen from the host.

    Raises:
        SetupError: no host port is forwarded to it.
    """
    if not ctx.cdp_port_host:
        raise SetupError("no host port is forwarded to the VM's Chromium remote-debugging listener "
                         "(SetupContext.cdp_port_host is None); start the VM with the CDP port forwarded "
                         "and run google_chrome_browser first", step=step)
    return f"http://{ctx.vm_host}:{int(ctx.cdp_port_host)}"


def cdp_http(url: str, method: str = "GET", timeout_s: float = 10.0):
    """Call Chromium's DevTools HTTP endpoint (``/json/list``, ``/json/new?...``): its JSON reply, or text."""
    req = urllib.request.Request(url, method=method)
    with urllib.request.urlopen(req, timeout=timeout_s) as resp:  # noqa: S310 - local DevTools endpoint
        body = resp.read()
    try:
        return json.loads(body)
    except json.JSONDecodeError:
        return body.decode("utf-8", "replace")


def timed_out(exc: OSError) -> bool:
    """Whether ``exc`` (raised by ``cdp_http``) is a timeout: the endpoint is there but slow (a busy guest),
    unlike a refused or dropped connection (no Chromium listening: the port forward closes it at once)."""
    return isinstance(exc, TimeoutError) or isinstance(getattr(exc, "reason", None), TimeoutError)


def page_targets(ctx: SetupContext, name: str) -> list[dict] | None:
    """The DevTools targets of Chromium's open tabs (``{"id", "url", "title", ...}``), the most recently
    activated first (the order of ``/json/list``); None when no Chromium answers (the agent may have closed it).

    Raises:
        TimeLimitExceeded: the endpoint took the connection but did not answer within ``evaluator.cdp`` (a
            busy guest, not the agent's outcome: the grader reports it rather than reading it as no browser).
    """
    base = cdp_base_url(ctx, name)
    seconds = limit("evaluator.cdp")
    try:
        targets = cdp_http(f"{base}/json/list", timeout_s=seconds)
    except OSError as exc:
        if timed_out(exc):
            raise TimeLimitExceeded("evaluator.cdp", seconds, f"{name}: Chromium's DevTools endpoint {base} "
                                    "listing the open tabs") from exc
        logger.info("%s: DevTools endpoint %s did not answer: %s", name, base, exc)
        return None
    return [t for t in targets if t.get("type") == "page"]


def same_host(url: str) -> str:
    """``url`` with ``127.0.0.1`` written as ``localhost``, so both spellings compare equal."""
    return url.replace("://127.0.0.1", "://localhost")


@contextlib.contextmanager
def cdp_browser(ctx: SetupContext, step: str) -> Iterator["Browser"]:
    """Playwright's ``Browser`` attached to the VM's Chromium for the duration of the block.

    Raises:
        NotSupportedError: the ``playwright`` package is not installed on the host.
        SetupError: no CDP port is forwarded, or Chromium's DevTools endpoint does not answer.
    """
    base = cdp_base_url(ctx, step)
    try:
        from playwright.sync_api import Error as PlaywrightError
        from playwright.sync_api import sync_playwright
    except ImportError as exc:
        raise NotSupportedError("needs the `playwright` Python package on the host (pip install playwright; "
                                "no browser download: it attaches to the VM's Chromium)", step=step) from exc
    with sync_playwright() as pw:
        try:
            browser = pw.chromium.connect_over_cdp(base, timeout=limit("setup.cdp_connect") * 1000)
        except PlaywrightError as exc:
            raise SetupError(f"could not attach to Chromium's DevTools endpoint at {base} ({exc.message}); "
                             "start Chromium with the google_chrome_browser step first", step=step) from exc
        logger.debug("%s: attached to Chromium %s at %s", step, browser.version, base)
        yield browser
        # Leaving sync_playwright() disconnects; the VM's browser and its tabs stay open.


def find_page(browser: "Browser", url_prefix: str) -> "Page | None":
    """The most recently opened tab whose URL starts with ``url_prefix`` (localhost == 127.0.0.1)."""
    prefix = same_host(url_prefix).rstrip("/")
    for context in reversed(browser.contexts):
        for page in reversed(context.pages):
            if same_host(page.url).startswith(prefix):
                return page
    return None


def open_page(browser: "Browser", url: str, step: str) -> "Page":
    """The tab showing ``url`` (or a page under it); opened in a new tab when none shows it.

    While the web UI does not answer yet (connection refused: a tool still starting, which under emulation
    and beside the editor windows a suite's script opened takes minutes: Dagster 70-400 s), the load is tried
    again every ``GOTO_RETRY_S`` until the time limit ``setup.service_start``. A load that starts is given
    ``setup.page_load`` to reach its load event, and fails at once when it does not.

    Raises:
        SetupError: the browser has no context, ``url`` never answered within ``setup.service_start``, or its
            load did not finish within ``setup.page_load``.
    """
    from playwright.sync_api import Error as PlaywrightError

    page = find_page(browser, url)
    if page is not None:
        return page
    if not browser.contexts:
        raise SetupError("Chromium has no browsing context to open a tab in", step=step)
    page = browser.contexts[0].new_page()
    last = None
    start_s, load_s = limit("setup.service_start"), limit("setup.page_load")
    deadline = time.monotonic() + start_s
    attempt = 0
    while True:
        attempt += 1
        try:
            # One patient load: under emulation a web UI's scripts take minutes, and a retry would restart them.
            page.goto(url, wait_until="load", timeout=load_s * 1000)
            return page
        except PlaywrightError as exc:
            last = exc
            if "Timeout" in exc.message:
                raise SetupError(f"{url} did not finish loading in the VM's Chromium within the time limit "
                                 f"setup.page_load ({load_s:g} s)", step=step) from exc
            if time.monotonic() + GOTO_RETRY_S >= deadline:
                break
            logger.info("%s: %s did not load (attempt %d): %s", step, url, attempt, exc.message.splitlines()[0])
            time.sleep(GOTO_RETRY_S)
    raise SetupError(f"{url} did not answer in the VM's Chromium within the time limit setup.service_start "
                     f"({start_s:g} s, {attempt} attempts; {last.message.splitlines()[0] if last else 'no reply'}); "
                     "is the tool started?", step=step)


#: The page's text once its document has loaded (0 before): what "rendered" is judged by.
_RENDERED_TEXT = ("() => document.readyState === 'complete' && document.body "
                  "? document.body.innerText.trim().length : 0")
#: A page has rendered when its text has stayed the same length this long (a web UI fills in in bursts).
RENDER_STABLE_S = 2.0
RENDER_POLL_S = 0.5


def wait_rendered(ctx: SetupContext, urls: list, step: str) -> None:
    """Wait until the tab of each web page in ``urls`` shows its content: its document has loaded, its
    body holds text, and that text has stopped changing for ``RENDER_STABLE_S``.

    Under emulation a web UI's page stayed blank 40-70 s after its load event; a task whose setup
    ended there showed the agent an empty page. Waiting is bounded by the time limit
    ``setup.page_render`` over all of ``urls``; a page that shows no text by then (a PDF, a download,
    a page meant to be blank) is logged, not an error, and so is a Chromium the host cannot attach to.
    """
    pages = [u for u in urls or [] if isinstance(u, str) and re.match(r"^(https?|file)://", u, re.IGNORECASE)]
    if not pages or not ctx.cdp_port_host:
        return
    for url, why in unreachable_from_guest(ctx, pages).items():
        logger.warning("%s: %s cannot be reached from the VM (%s; the VM is offline): not waited for, the task "
                       "starts without it", step, url, why)
        ctx.state.setdefault("unreachable_pages", []).append(url)
        pages.remove(url)
    if not pages:
        return
    try:
        from playwright.sync_api import Error as PlaywrightError
    except ImportError:
        logger.warning("%s: cannot check that the pages rendered without the `playwright` package", step)
        return
    started = time.monotonic()
    deadline = started + limit("setup.page_render")
    try:
        with cdp_browser(ctx, step) as browser:
            for url in pages:
                if _wait_page(browser, url, deadline, PlaywrightError):
                    logger.info("%s: %s rendered after %.1f s", step, url, time.monotonic() - started)
                else:
                    logger.warning("%s: %s showed no stable text within the time limit setup.page_render "
                                   "(%g s); the task starts anyway", step, url, limit("setup.page_render"))
    except SetupError as exc:  # includes NotSupportedError: no playwright, no CDP forward
        logger.warning("%s: could not check that the pages rendered: %s", step, exc)


#: Guest-side Python: the URLs of argv[1] (JSON) whose host cannot be connected to, with why (3 s each at most).
_REACH_SRC = r"""
import json, socket, sys, urllib.parse
out = {}
for url in json.loads(sys.argv[1]):
    u = urllib.parse.urlsplit(url)
    try:
        socket.create_connection((u.hostname, u.port or (443 if u.scheme == "https" else 80)), timeout=3).close()
    except OSError as exc:
        out[url] = str(exc) or type(exc).__name__
print(json.dumps(out))
"""
_LOCAL_HOSTS = ("localhost", "127.0.0.1", "::1", "0.0.0.0")


def unreachable_from_guest(ctx: SetupContext, urls: list[str]) -> dict[str, str]:
    """The web pages among ``urls`` on a host other than the VM itself that the VM cannot connect to, with why:
    offline, a page on the internet fails in seconds instead of being waited for. Pages on the VM's own
    services are never judged here (a tool still starting refuses connections for minutes)."""
    remote = [u for u in urls if re.match(r"^https?://", u, re.IGNORECASE)
              and (urllib.parse.urlsplit(u).hostname or "localhost") not in _LOCAL_HOSTS
              and not (urllib.parse.urlsplit(u).hostname or "").startswith("127.")]
    if not remote or ctx.controller is None:
        return {}
    try:
        reply = ctx.controller.execute(["python3", "-c", _REACH_SRC, json.dumps(remote)], timeout_s=60)
        return dict(json.loads(reply.get("output") or "{}"))
    except (DesktopEnvError, ValueError) as exc:
        logger.info("could not check which pages the VM reaches: %s", exc)
        return {}


def _wait_page(browser, url: str, deadline: float, error) -> bool:
    last, since = -1, time.monotonic()
    while time.monotonic() < deadline:
        page = find_page(browser, url)
        try:
            length = page.evaluate(_RENDERED_TEXT) if page is not None else 0
        except error:  # navigating meanwhile (a redirect, a login page)
            length = 0
        if length != last:
            last, since = length, time.monotonic()
        elif length and time.monotonic() - since >= RENDER_STABLE_S:
            return True
        time.sleep(RENDER_POLL_S)
    return False
