"""Chromium page getters: open tabs, the active tab's elements and URL, and pages a getter opens itself
(their content, a PDF print, values read off them), all through the VM's Chromium over CDP.

The active tab is the first page of DevTools' ``/json/list`` (most recently activated first), as for
``active_tab_info``; its elements are read through Playwright attached over CDP
(``desktop_env.configs.cdp``). Getters that open a page of their own (``page_info``, ``pdf_from_url``,
``info_from_website``) open it in a new tab of the user's browser (its cookies and sign-ins apply),
start Chromium again when the agent closed it, and close their tab when done.

The URL parsers are plain functions of the URL, in ``url_parsing``.
"""
from __future__ import annotations

import base64
import contextlib
import logging
import re
from typing import TYPE_CHECKING, Any, Iterator, Protocol
from urllib.parse import unquote

from desktop_env.configs.browser import google_chrome_browser
from desktop_env.configs.cdp import cdp_base_url, cdp_browser, cdp_http, page_targets, timed_out
from desktop_env.errors import DesktopEnvError
from desktop_env.evaluators.getters.browser import active_page, get_active_url_from_access_tree
from desktop_env.evaluators.getters.url_parsing import query_values, url_part, url_path_values
from desktop_env.evaluators.values import GuestText
from desktop_env.limits import TimeLimitExceeded, limit
from desktop_env.registry import GETTERS, UNAVAILABLE
from desktop_env.session import NotSupportedError, SetupContext

if TYPE_CHECKING:  # pragma: no cover
    from playwright.sync_api import Browser, Page

logger = logging.getLogger(__name__)

#: How long info_from_website waits for each selector (the suite's 10 s).
SELECTOR_WAIT_S = 10.0
#: After the load event, how long a getter waits at most for the network to go quiet (pages filled in by scripts).
NETWORK_IDLE_S = 10.0
#: Page.printToPDF parameters giving what Playwright's ``page.pdf()`` gives by default: Letter, no margins,
#: no header or footer, no backgrounds.
PDF_OPTIONS = {"paperWidth": 8.5, "paperHeight": 11, "marginTop": 0, "marginBottom": 0, "marginLeft": 0,
               "marginRight": 0, "printBackground": False, "displayHeaderFooter": False, "preferCSSPageSize": False}


class FieldValueError(ValueError):
    """A getter field the getter would reject when it runs, found when the task is loaded."""

    def __init__(self, message: str, field: str):
        self.field = field
        super().__init__(f"{field}: {message}")


# --------------------------------------------------------------------------- active_tab_html_parse
class PageReader(Protocol):
    """What :func:`parse_page` reads off a page (Playwright's page in the getter, a stand-in in tests):
    ``texts(css)``: the text (``textContent``, stripped) of every element matching ``css``;
    ``direct_texts(css)``: the non-blank text nodes directly under the first match, stripped;
    ``child_texts(css, child, inner)``: for each match holding a ``child``, the first one's text
    (``innerText`` with ``inner``, else ``textContent``), stripped; ``label_text(label)``: the text of the
    first element containing ``label`` (Playwright's ``text=``); ``xpath_text(xpath)`` and
    ``input_value(xpath)``: the text or input value of the first element ``xpath`` selects (None: none)."""

    url: str

    def texts(self, css: str) -> list[str]: ...

    def direct_texts(self, css: str) -> list[str]: ...

    def child_texts(self, css: str, child: str, inner: bool = False) -> list[str]: ...

    def label_text(self, label: str) -> str | None: ...

    def xpath_text(self, xpath: str) -> str | None: ...

    def input_value(self, xpath: str) -> str | None: ...


#: The fields of active_tab_html_parse each category reads.
HTML_PARSE_CATEGORIES = {
    "class": ("class_singleObject", "class_multiObject", "class_multiObject_child", "class_multiObject_only_child",
              "class_multiObject_search_exist"),
    "label": ("labelObject",),
    "xpath": ("xpathObject",),
    "input": ("inputObject",),
    "class&url": ("class_multiObject", "class_multiObject_li", "url_include_expected",
                  "url_include_expected_multichoice"),
}


def _indexed(texts: list[str], by_index: dict, out: dict) -> None:
    """``out[key] = texts[i]`` for each ``{i: key}`` (``""`` past the end)."""
    for index, key in by_index.items():
        i = int(index)
        out[key] = texts[i] if 0 <= i < len(texts) else ""


def _class_fields(page: PageReader, spec: dict, out: dict) -> None:
    for name, by_index in (spec.get("class_multiObject") or {}).items():
        _indexed(page.texts("." + name), by_index, out)
    for name, by_index in (spec.get("class_multiObject_child") or {}).items():
        _indexed(page.direct_texts("." + name), by_index, out)
    for name, by_index in (spec.get("class_multiObject_only_child") or {}).items():
        _indexed(page.child_texts("." + name, "h3"), by_index, out)
    for name, wanted in (spec.get("class_multiObject_search_exist") or {}).items():
        texts = page.texts("." + name)
        for item in wanted:
            if item != "is_other_exist":
                out[item] = item in texts
        if "is_other_exist" in wanted:
            out["is_other_exist"] = any(t not in wanted for t in texts)
    for name, key in (spec.get("class_singleObject") or {}).items():
        texts = page.texts("." + name)
        out[key] = texts[0] if texts else ""


def _names_shown(texts: list[str], wanted: list[str], out: dict) -> None:
    """``out[name] = True`` for each wanted name shown (case-insensitively); ``is_other_exist``: some text
    shown is part of no wanted name."""
    shown = {t.lower() for t in texts}
    for name in wanted:
        if name.lower() in shown:
            out[name.lower()] = True
    if any(all(t.lower() not in w.lower() for w in wanted) for t in texts):
        out["is_other_exist"] = True
    out.setdefault("is_other_exist", False)


def _class_and_url_fields(page: PageReader, spec: dict, out: dict) -> None:
    for name, wanted in (spec.get("class_multiObject") or {}).items():
        _names_shown(page.texts("." + name), list(wanted), out)
    for name, wanted in (spec.get("class_multiObject_li") or {}).items():
        _names_shown(page.child_texts(f".{name} li.catAllProducts", "span", inner=True), list(wanted), out)
    url = page.url.lower()
    for key in spec.get("url_include_expected") or []:
        out.setdefault(key.lower(), key.lower() in url)
    for key, name in (spec.get("url_include_expected_multichoice") or {}).items():
        out.setdefault(name.lower(), key.lower() in url)


def parse_page(page: PageReader, spec: dict) -> dict:
    """The values ``spec`` (active_tab_html_parse's fields) asks for, read off ``page``.

    ``category`` says how elements are found:

    - ``class``: ``class_singleObject`` ``{class: key}`` (the first element's text), ``class_multiObject``
      ``{class: {index: key}}`` (the index-th element's text), ``class_multiObject_child`` (the index-th text
      node directly under the first element), ``class_multiObject_only_child`` (the index-th element's
      ``h3``), ``class_multiObject_search_exist`` ``{class: [text, ..., "is_other_exist"?]}`` (each text:
      whether an element shows exactly it; ``is_other_exist``: whether an element shows another text);
    - ``label``: ``labelObject`` ``{label: key}``: the text of the first element containing the label;
    - ``xpath``: ``xpathObject`` ``{xpath: key}``: the first element's text;
    - ``input``: ``inputObject`` ``{xpath: key}``: the first input's value;
    - ``class&url``: ``class_multiObject`` / ``class_multiObject_li`` ``{class: [name, ...]}`` (each name
      shown, case-insensitively, gives ``name.lower(): True``; ``is_other_exist``: an element shows text that
      is part of no name), then ``url_include_expected`` ``[word]`` (``word.lower()``: whether the page's URL
      holds it) and ``url_include_expected_multichoice`` ``{word: key}``; a key the elements set is kept.

    Texts are stripped; an element not found gives ``""``.
    """
    out: dict[str, Any] = {}
    category = spec.get("category")
    if category == "class":
        _class_fields(page, spec, out)
    elif category == "label":
        for label, key in (spec.get("labelObject") or {}).items():
            out[key] = (page.label_text(label) or "").strip()
    elif category == "xpath":
        for xpath, key in (spec.get("xpathObject") or {}).items():
            out[key] = (page.xpath_text(xpath) or "").strip()
    elif category == "input":
        for xpath, key in (spec.get("inputObject") or {}).items():
            out[key] = (page.input_value(xpath) or "").strip()
    elif category == "class&url":
        _class_and_url_fields(page, spec, out)
    else:
        raise FieldValueError(f"unknown category {category!r} (accepted: {', '.join(HTML_PARSE_CATEGORIES)})",
                              "category")
    return out


def check_html_parse(fields: dict) -> None:
    """Load-time check of active_tab_html_parse: a known ``category``, its fields of the right shape."""
    category = fields.get("category")
    if category not in HTML_PARSE_CATEGORIES:
        raise FieldValueError(f"unknown category {category!r} (accepted: {', '.join(HTML_PARSE_CATEGORIES)})",
                              "category")
    for name in HTML_PARSE_CATEGORIES[category]:
        value = fields.get(name)
        if value is None:
            continue
        kind = list if name == "url_include_expected" else dict
        if not isinstance(value, kind):
            raise FieldValueError(f"must be {'a list' if kind is list else 'an object'}, got {value!r}", name)
        if name in ("class_multiObject", "class_multiObject_child", "class_multiObject_only_child") \
                and category == "class":
            for cls, by_index in value.items():
                if not isinstance(by_index, dict) or not all(re.fullmatch(r"-?\d+", str(i)) for i in by_index):
                    raise FieldValueError(f"must map indices to keys, got {by_index!r}", f"{name}.{cls}")


_DIRECT_TEXT_JS = ("el => Array.from(el.childNodes).filter(n => n.nodeType === Node.TEXT_NODE)"
                   ".map(n => n.textContent.trim()).filter(Boolean)")
_CHILD_TEXT_JS = ("(els, [child, inner]) => els.map(e => e.querySelector(child)).filter(Boolean)"
                  ".map(n => ((inner ? n.innerText : n.textContent) || '').trim())")


class PlaywrightReader:
    """:class:`PageReader` over a Playwright page."""

    def __init__(self, page: "Page"):
        self.page = page

    @property
    def url(self) -> str:
        return self.page.url

    def texts(self, css: str) -> list[str]:
        return [(t or "").strip() for t in self.page.locator(css).all_text_contents()]

    def direct_texts(self, css: str) -> list[str]:
        loc = self.page.locator(css)
        return list(loc.first.evaluate(_DIRECT_TEXT_JS)) if loc.count() else []

    def child_texts(self, css: str, child: str, inner: bool = False) -> list[str]:
        return list(self.page.locator(css).evaluate_all(_CHILD_TEXT_JS, [child, inner]))

    def _first(self, selector: str):
        loc = self.page.locator(selector)
        return loc.first if loc.count() else None

    def label_text(self, label: str) -> str | None:
        found = self._first(f"text={label}")
        return None if found is None else found.text_content()

    def xpath_text(self, xpath: str) -> str | None:
        found = self._first(f"xpath={xpath}")
        return None if found is None else found.text_content()

    def input_value(self, xpath: str) -> str | None:
        found = self._first(f"xpath={xpath}")
        return None if found is None else found.input_value()


# --------------------------------------------------------------------------- pages in the browser
def _same_url(a: str, b: str) -> bool:
    return unquote(a).rstrip("/") == unquote(b).rstrip("/")


def tab_of(browser: "Browser", target: dict) -> "Page | None":
    """Playwright's page for a DevTools target (``{"id", "url"}``): the page showing its URL, told apart
    from others showing the same URL by its target id."""
    pages = [p for c in browser.contexts for p in c.pages if _same_url(p.url, target.get("url", ""))]
    if len(pages) > 1:
        for page in pages:
            session = page.context.new_cdp_session(page)
            try:
                if session.send("Target.getTargetInfo")["targetInfo"]["targetId"] == target.get("id"):
                    return page
            finally:
                session.detach()
    return pages[0] if pages else None


def _settle(page: "Page") -> None:
    """Wait for the page's load event (limit ``evaluator.page_load``), then up to NETWORK_IDLE_S for quiet."""
    from playwright.sync_api import Error as PlaywrightError

    page.wait_for_load_state("load", timeout=limit("evaluator.page_load") * 1000)
    try:
        page.wait_for_load_state("networkidle", timeout=NETWORK_IDLE_S * 1000)
    except PlaywrightError:
        logger.debug("%s: the network did not go quiet within %g s; reading it as it is", page.url, NETWORK_IDLE_S)


def ensure_browser(ctx: SetupContext, name: str) -> None:
    """Start Chromium again (as ``google_chrome_browser`` did, on the same ports) when its DevTools endpoint
    does not answer: the agent may have closed the browser the getter needs."""
    base = cdp_base_url(ctx, name)
    seconds = limit("evaluator.cdp")
    try:
        cdp_http(f"{base}/json/version", timeout_s=seconds)
        return
    except OSError as exc:
        if timed_out(exc):  # it is there, on a busy guest: a second start would not help
            raise TimeLimitExceeded("evaluator.cdp", seconds,
                                    f"{name}: Chromium's DevTools endpoint {base} answering") from exc
        logger.info("%s: Chromium's DevTools endpoint %s does not answer (%s); starting Chromium again", name, base, exc)
    ports = {k: v for k, v in (ctx.state.get("chromium") or {}).items() if k in ("debugging_port", "listening_port")}
    google_chrome_browser(ctx, **ports)


@contextlib.contextmanager
def new_tab(ctx: SetupContext, name: str, url: str) -> Iterator["Page"]:
    """A new tab of the user's browser showing ``url`` once loaded (Chromium is started again if it was
    closed); the tab is closed afterwards. Playwright's errors (the page did not load) propagate."""
    ensure_browser(ctx, name)
    with cdp_browser(ctx, name) as browser:
        context = browser.contexts[0] if browser.contexts else browser.new_context()
        page = context.new_page()
        try:
            page.goto(url, wait_until="load", timeout=limit("evaluator.page_load") * 1000)
            _settle(page)
            yield page
        finally:
            with contextlib.suppress(Exception):  # the page may have gone with its browser
                page.close()


# --------------------------------------------------------------------------- the getters
@GETTERS.register()
def get_open_tabs_info(ctx: SetupContext) -> list[dict] | None:
    """``[{"title", "url"}, ...]`` of Chromium's open tabs, the active one first; None when Chromium's
    DevTools endpoint does not answer (no browser)."""
    targets = page_targets(ctx, "open_tabs_info")
    if targets is None:
        return None
    tabs = [{"title": t.get("title", ""), "url": t.get("url", "")} for t in targets]
    logger.info("open_tabs_info: %s", [t["url"] for t in tabs])
    return tabs


@GETTERS.register(check=check_html_parse)
def get_active_tab_html_parse(ctx: SetupContext, category: str, goto_prefix: str = "https://",
                              class_singleObject: dict | None = None, class_multiObject: dict | None = None,  # noqa: N803
                              class_multiObject_child: dict | None = None,  # noqa: N803
                              class_multiObject_only_child: dict | None = None,  # noqa: N803
                              class_multiObject_search_exist: dict | None = None,  # noqa: N803
                              class_multiObject_li: dict | None = None, labelObject: dict | None = None,  # noqa: N803
                              xpathObject: dict | None = None, inputObject: dict | None = None,  # noqa: N803
                              url_include_expected: list | None = None,
                              url_include_expected_multichoice: dict | None = None) -> dict | None:
    """Values read off the active tab's page, as :func:`parse_page` describes (the field names are the
    suite's); pair it with ``check_direct_json_object``. None when no tab is open or Playwright cannot see it.
    ``goto_prefix`` is accepted for the suite's files and unused (DevTools gives whole URLs)."""
    spec = {k: v for k, v in locals().items() if k not in ("ctx", "goto_prefix") and v is not None}
    target = active_page(ctx, "active_tab_html_parse")
    if target is None:
        return None
    with cdp_browser(ctx, "active_tab_html_parse") as browser:
        page = tab_of(browser, target)
        if page is None:
            logger.info("active_tab_html_parse: the active tab %s is not visible to Playwright", target.get("url"))
            return None
        _settle(page)
        values = parse_page(PlaywrightReader(page), spec)
    logger.info("active_tab_html_parse: %s -> %s", target.get("url"), values)
    return values


def _active_url(ctx: SetupContext, goto_prefix: str) -> str | None:
    url = get_active_url_from_access_tree(ctx, goto_prefix=goto_prefix)
    if url is None:
        logger.info("no active tab: Chromium's DevTools endpoint does not answer or no page is open")
    return url


@GETTERS.register()
def get_active_tab_url_parse(ctx: SetupContext, parse_keys: list, goto_prefix: str = "https://",
                             replace: dict | None = None, split_list: bool = False) -> dict | None:
    """Query parameters of the active tab's URL: ``{key: first value}`` for each of ``parse_keys`` (``""``
    when absent), keys renamed by ``replace`` ``{old: new}``, values split at commas with ``split_list``
    (see :func:`query_values`); None when no tab is open."""
    url = _active_url(ctx, goto_prefix)
    return None if url is None else query_values(url, list(parse_keys), replace, split_list)


def check_url_dash_part(fields: dict) -> None:
    """Load-time check of url_dashPart: an integer ``partIndex``, ``returnType`` string or json (with ``key``)."""
    try:
        int(fields.get("partIndex"))
    except (TypeError, ValueError):
        raise FieldValueError(f"must be an integer, got {fields.get('partIndex')!r}", "partIndex") from None
    kind = fields.get("returnType")
    if kind not in ("string", "json"):
        raise FieldValueError(f"must be 'string' or 'json', got {kind!r}", "returnType")
    if kind == "json" and not isinstance(fields.get("key"), str):
        raise FieldValueError("a 'json' return needs the key to store the part under", "key")


@GETTERS.register(check=check_url_dash_part)
def get_url_dashPart(ctx: SetupContext, partIndex, returnType: str, goto_prefix: str = "https://",  # noqa: N802,N803
                     needDeleteId: bool = False, key: str | None = None):  # noqa: N803
    """One ``/``-separated part of the active tab's URL (:func:`url_part`): the text (``returnType``
    ``"string"``) or ``{key: part}`` (``"json"``); None when no tab is open or the URL is shorter."""
    url = _active_url(ctx, goto_prefix)
    part = None if url is None else url_part(url, int(partIndex), bool(needDeleteId))
    logger.info("url_dashPart: part %s of %s is %r", partIndex, url, part)
    if part is None:
        return None
    return GuestText(part) if returnType == "string" else {key: part}


@GETTERS.register()
def get_url_path_parse(ctx: SetupContext, parse_keys: list, goto_prefix: str = "https://") -> dict | None:
    """The filters the active tab's shop URL selects in its path, as :func:`url_path_values` describes;
    None when no tab is open."""
    url = _active_url(ctx, goto_prefix)
    return None if url is None else url_path_values(url, list(parse_keys))


@GETTERS.register()
def get_page_info(ctx: SetupContext, url: str) -> dict | None:
    """``{"title", "url", "content"}`` of ``url`` opened in a new tab of the VM's browser (``content``: its
    HTML; ``url``: where it ended up); None when it does not load."""
    from playwright.sync_api import Error as PlaywrightError

    try:
        with new_tab(ctx, "page_info", url) as page:
            info = {"title": page.title(), "url": page.url, "content": page.content()}
    except PlaywrightError as exc:
        logger.info("page_info: %s did not load in the VM's Chromium: %s", url, exc.message.splitlines()[0])
        return None
    logger.info("page_info: %s -> %r (%d characters)", url, info["title"], len(info["content"]))
    return info


@GETTERS.register()
def get_pdf_from_url(ctx: SetupContext, path: str, dest: str):
    """``path`` (a URL) printed to PDF by the VM's Chromium (DevTools' ``Page.printToPDF``: Letter, no
    margins, no header or footer), saved in the cache as ``dest``; returns its local path.

    Raises:
        DesktopEnvError: the page did not load or could not be printed.
    """
    from playwright.sync_api import Error as PlaywrightError

    try:
        with new_tab(ctx, "pdf_from_url", path) as page:
            session = page.context.new_cdp_session(page)
            try:
                data = base64.b64decode(session.send("Page.printToPDF", PDF_OPTIONS)["data"])
            finally:
                session.detach()
    except PlaywrightError as exc:
        raise DesktopEnvError(f"pdf_from_url: {path} could not be printed in the VM's Chromium: "
                              f"{exc.message.splitlines()[0]}") from exc
    target = ctx.cache_path(dest)
    target.write_bytes(data)
    logger.info("pdf_from_url: %s printed to %s (%d bytes)", path, target, len(data))
    return target


#: info_from_website's actions: what each needs besides ``selector``.
INFO_ACTIONS = {"inner_text": (), "attribute": ("attribute",), "click_and_inner_text": (),
                "click_and_attribute": ("attribute",)}


def check_info_from_website(fields: dict) -> None:
    """Load-time check of info_from_website: each of ``infos`` has a known action and what it needs."""
    infos = fields.get("infos", [])
    if not isinstance(infos, list):
        raise FieldValueError(f"must be a list of {{action, selector, attribute?}}, got {infos!r}", "infos")
    for i, info in enumerate(infos):
        where = f"infos[{i}]"
        if not isinstance(info, dict):
            raise FieldValueError(f"must be an object {{action, selector, attribute?}}, got {info!r}", where)
        action = info.get("action", "inner_text")
        if action not in INFO_ACTIONS:
            raise FieldValueError(f"unknown action {action!r} (accepted: {', '.join(INFO_ACTIONS)})", where + ".action")
        selector = info.get("selector")
        chain = action.startswith("click_and_")
        if not (isinstance(selector, list) and selector and all(isinstance(s, str) for s in selector)
                if chain else isinstance(selector, str)):
            raise FieldValueError("must be " + ("a non-empty list of CSS selectors (those to click, then the one "
                                                "to read)" if chain else "a CSS selector"), where + ".selector")
        for need in INFO_ACTIONS[action]:
            if not isinstance(info.get(need), str):
                raise FieldValueError(f"the {action} action needs {need!r}", f"{where}.{need}")


def read_infos(page: "Page", url: str, infos: list[dict]) -> list:
    """Run info_from_website's ``infos`` on ``page`` (see :func:`get_info_from_website`)."""
    wait_ms = SELECTOR_WAIT_S * 1000
    values = []
    for info in infos:
        if page.url != url:  # an earlier action navigated away
            page.goto(url, wait_until="load", timeout=limit("evaluator.page_load") * 1000)
        action = info.get("action", "inner_text")
        selectors = info["selector"] if action.startswith("click_and_") else [info["selector"]]
        for css in selectors[:-1]:
            page.wait_for_selector(css, state="attached", timeout=wait_ms).click()
            page.wait_for_load_state("load", timeout=limit("evaluator.page_load") * 1000)
        element = page.wait_for_selector(selectors[-1], state="attached", timeout=wait_ms)
        values.append(element.inner_text() if action.endswith("inner_text") else element.get_attribute(info["attribute"]))
    return values


@GETTERS.register(check=check_info_from_website)
def get_info_from_website(ctx: SetupContext, url: str, infos: list | None = None, backups: Any = None):
    """Values read off ``url``, opened in a new tab of the VM's browser: for each of ``infos``
    ``{"action", "selector", "attribute"?}`` one value, in order. ``inner_text`` / ``attribute`` read the
    element ``selector`` matches (waiting up to 10 s for it); ``click_and_inner_text`` /
    ``click_and_attribute`` click each of the list ``selector`` but the last, then read the last. Each
    action starts from ``url``.

    When the page does not load or an element is missing, ``backups`` (the task's values for a site that
    cannot be read) is returned instead.

    Raises:
        DesktopEnvError: the page could not be read and the task gives no ``backups``.
    """
    from playwright.sync_api import Error as PlaywrightError

    try:
        with new_tab(ctx, "info_from_website", url) as page:
            values = read_infos(page, url, list(infos or []))
    except PlaywrightError as exc:
        reason = exc.message.splitlines()[0]
        if backups is None:
            raise DesktopEnvError(f"info_from_website: {url} could not be read: {reason}") from exc
        logger.info("info_from_website: %s could not be read (%s); using the task's backups %r", url, reason, backups)
        return backups
    logger.info("info_from_website: %s -> %r", url, values)
    return values


@GETTERS.register(status=UNAVAILABLE, note="hard-wired to recreation.gov: it searches that live site for "
                  "'Diamond', opens the first campground and reads its next-available dates; no field makes it "
                  "work on another site, and the VM does not reach third-party sites")
def get_gotoRecreationPage_and_get_html_content(ctx: SetupContext, **fields):  # noqa: N802
    """recreation.gov's campground page, read live: not runnable here (see its note)."""
    raise NotSupportedError("this getter drives the live recreation.gov site (a search for 'Diamond' and its "
                            "campground page), which the VM does not reach", step="gotoRecreationPage_and_get_html_content")
