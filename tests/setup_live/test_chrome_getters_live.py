"""The Chromium getters against a real Chromium (Debian's, the images' browser) run through the in-VM
server under Xvfb, with its default profile in the server's home (``~/.config/chromium``), as in the VM.

Settings are changed the way a user changes them: on Chromium's own settings pages (the select a user
picks from, or the ``chrome.settingsPrivate`` / ``chrome.send`` calls those pages make), bookmarks on the
bookmark manager's page, history and cookies by visiting pages. Chromium is then closed (over DevTools,
so that it writes its files as on any exit) and the getters read what it wrote, through the server, and
the suite's metrics score it both ways.
"""
from __future__ import annotations

import contextlib
import os
import shutil
import time
import urllib.parse
import urllib.request
import uuid
from dataclasses import replace
from pathlib import Path

import pytest
from vmsrv_harness import free_port, wait_until

from desktop_env.evaluators.evaluator import run_getter
from desktop_env.evaluators.getters import chrome_pages
from desktop_env.evaluators.metrics.browser import (check_font_size, check_history_deleted, is_added_to_steam_cart,
                                                    is_cookie_deleted, is_expected_bookmarks,
                                                    is_expected_installed_extensions, is_expected_tabs)
from desktop_env.evaluators.metrics.files import check_direct_json_object, is_in_list
from desktop_env.evaluators.metrics.files_documents import _pdf_text
from desktop_env.evaluators.metrics.general import exact_match, is_expected_url_pattern_match
from desktop_env.evaluators.values import GuestText
from desktop_env.errors import DesktopEnvError
from desktop_env.session import NotSupportedError
from desktop_env.tasks import GetterSpec

pytestmark = pytest.mark.xvfb

CHROMIUM = "/usr/bin/chromium"
#: Flags for a Chromium started by root on a test host (the VM's runs as a user, sandboxed).
HOST_FLAGS = ["--no-sandbox", "--no-first-run", "--no-default-browser-check", "--disable-gpu",
              "--disable-dev-shm-usage", "--password-store=basic", "--window-position=0,0", "--window-size=1000,700"]


def _get(ctx, side: str = "result", **spec):
    return run_getter(ctx, GetterSpec.from_json(spec), side)


class LiveChromium:
    """Chromium started through the in-VM server, its default profile under the server's home."""

    def __init__(self, apps, profile: Path):
        self.apps = apps
        self.profile = profile
        self.port = free_port()

    @property
    def cdp(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def answers(self) -> bool:
        try:
            urllib.request.urlopen(f"{self.cdp}/json/version", timeout=2).read()
            return True
        except OSError:
            return False

    def start(self, *flags: str) -> "LiveChromium":
        self.apps.launch([CHROMIUM, *HOST_FLAGS, f"--remote-debugging-port={self.port}", *flags, "about:blank"])
        wait_until(self.answers, 90, f"Chromium's DevTools endpoint {self.cdp}", interval_s=0.5)
        return self

    @contextlib.contextmanager
    def page(self, url: str):
        """A Playwright page on ``url`` (a chrome:// settings page, ...), closed afterwards."""
        from playwright.sync_api import sync_playwright

        with sync_playwright() as pw:
            browser = pw.chromium.connect_over_cdp(self.cdp, timeout=60_000)
            page = browser.contexts[0].new_page()
            page.goto(url, wait_until="load")
            try:
                yield page
            finally:
                page.close()

    def send(self, method: str, params: dict | None = None) -> dict:
        """A browser-wide DevTools command."""
        from playwright.sync_api import sync_playwright

        with sync_playwright() as pw:
            browser = pw.chromium.connect_over_cdp(self.cdp, timeout=60_000)
            return browser.new_browser_cdp_session().send(method, params or {})

    def open_tab(self, url: str) -> None:
        req = urllib.request.Request(f"{self.cdp}/json/new?{urllib.parse.quote(url, safe=':/')}", method="PUT")
        urllib.request.urlopen(req, timeout=10).read()

    def browser_pids(self) -> list[int]:
        """The browser process listening on this DevTools port (its helpers carry ``--type=``; Chromium
        rewrites its command line into one string, so it is searched as bytes)."""
        flag = f"--remote-debugging-port={self.port}".encode()
        pids = []
        for entry in Path("/proc").iterdir():
            with contextlib.suppress(OSError):
                args = (entry / "cmdline").read_bytes().replace(b"\0", b" ") + b" "
                if flag + b" " in args and b"--type=" not in args:
                    pids.append(int(entry.name))
        return pids

    def close(self) -> None:
        """Quit Chromium as a user would, and wait until its process has exited (its files are written
        on the way out, after its DevTools endpoint and its profile lock are gone)."""
        pids = self.browser_pids()
        if self.answers():
            with contextlib.suppress(Exception):  # the connection drops as the browser goes
                self.send("Browser.close")
        wait_until(lambda: not any(Path(f"/proc/{pid}").exists() for pid in pids), 60, "Chromium to exit",
                   interval_s=0.2)


@pytest.fixture
def profile(xsession):
    """``~/.config/chromium`` of the server's home, fresh for the test (anything there is set aside)."""
    config = xsession.home / ".config"
    aside = {}
    for name in ("chromium", "google-chrome"):
        if (config / name).exists():
            aside[name] = config / f"{name}.aside-{uuid.uuid4().hex[:6]}"
            (config / name).rename(aside[name])
    try:
        yield config / "chromium"
    finally:
        for name in ("chromium", "google-chrome"):
            shutil.rmtree(config / name, ignore_errors=True)
        for name, path in aside.items():
            path.rename(config / name)


@pytest.fixture
def chromium(apps, profile):
    live = LiveChromium(apps, profile)
    try:
        yield live
    finally:
        live.close()


@pytest.fixture
def ctx(suite, context, chromium):
    task = suite("chrome", {"id": str(uuid.uuid4()), "instruction": "check Chromium", "config": [],
                            "evaluator": {"func": "infeasible"}})
    return replace(context(task), cdp_port_host=chromium.port)


def _set_prefs(page, prefs: dict) -> None:
    """Change settings through ``chrome.settingsPrivate``, as Chromium's settings page does."""
    for name, value in prefs.items():
        ok = page.evaluate("([n, v]) => new Promise(r => chrome.settingsPrivate.setPref(n, v, '', r))", [name, value])
        assert ok, f"the settings page refused {name}={value!r}"


SETTING_GETTERS = ("default_search_engine", "enable_do_not_track", "enable_safe_browsing", "new_startup_page",
                   "data_delete_automacally", "profile_name", "chrome_appearance_mode_ui")


def _settings(ctx) -> dict:
    return {name: _get(ctx, type=name) for name in SETTING_GETTERS}


# --------------------------------------------------------------------------- Preferences
def test_settings_read_back_as_chromium_wrote_them(ctx, chromium):
    chromium.start().close()
    fresh = _settings(ctx)
    assert fresh == {"default_search_engine": None, "enable_do_not_track": "false", "enable_safe_browsing": "true",
                     "new_startup_page": "true", "data_delete_automacally": "false",
                     "profile_name": fresh["profile_name"], "chrome_appearance_mode_ui": "system"}
    assert all(isinstance(v, GuestText) for v in fresh.values() if v is not None)
    assert _get(ctx, type="chrome_font_size")["default_font_size"] == 16

    chromium.start()
    with chromium.page("chrome://settings/") as page:
        _set_prefs(page, {"enable_do_not_track": True, "safebrowsing.enabled": False,
                          "session.restore_on_startup": 1, "webkit.webprefs.default_font_size": 20,
                          "generated.cookie_default_content_setting": "session_only"})
        page.evaluate("() => chrome.send('setProfileName', ['Thomas'])")
    with chromium.page("chrome://settings/search") as page:  # the search engines list the page shows
        bing = page.evaluate("""async () => { const cr = await import('chrome://resources/js/cr.js');
            const list = await cr.sendWithPromise('getSearchEnginesList');
            const bing = list.defaults.find(e => e.name.includes('Bing'));
            chrome.send('setDefaultSearchEngine', [bing.id, 1, null]); return bing.name; }""")
    with chromium.page("chrome://settings/appearance") as page:  # the Mode select: Device, Light, Dark
        page.locator("#colorSchemeModeSelect").select_option("2")
    with chromium.page("chrome://settings/appearance") as page:  # shown again: the browser holds the choice
        assert page.locator("#colorSchemeModeSelect").input_value() == "2"
    chromium.close()

    changed = _settings(ctx)
    assert changed == {"default_search_engine": bing, "enable_do_not_track": "true", "enable_safe_browsing": "false",
                       "new_startup_page": "false", "data_delete_automacally": "true", "profile_name": "Thomas",
                       "chrome_appearance_mode_ui": "dark"}
    assert bing == "Microsoft Bing"
    rule = {"expected": "true"}
    assert exact_match(changed["enable_do_not_track"], rule) == 1.0 and exact_match(fresh["enable_do_not_track"], rule) == 0.0
    assert exact_match(changed["data_delete_automacally"], rule) == 1.0
    assert exact_match(fresh["new_startup_page"], rule) == 1.0 and exact_match(changed["new_startup_page"], rule) == 0.0
    fonts = _get(ctx, type="chrome_font_size")
    assert check_font_size(fonts, {"type": "value", "value": 20}) == 1.0
    assert check_font_size(fonts, {"type": "range", "min": 16, "max": 20}) == 0.0

    chromium.start()  # turning it on again: standard protection, then enhanced
    with chromium.page("chrome://settings/") as page:
        _set_prefs(page, {"safebrowsing.enabled": True, "safebrowsing.enhanced": True})
    chromium.close()
    assert _get(ctx, type="enable_safe_browsing") == "true"


def test_without_a_profile_the_getters_find_nothing(ctx, profile):
    assert not profile.exists()
    for name in (*SETTING_GETTERS, "chrome_font_size", "bookmarks", "history", "cookie_data",
                 "find_unpacked_extension_path", "find_installed_extension_name"):
        assert _get(ctx, type=name) is None, name


def test_the_profile_written_last_is_read(ctx, chromium, profile):
    """A task's setup may prepare ``google-chrome``'s profile; the one Chromium wrote after it is read."""
    stale = profile.parent / "google-chrome" / "Default"
    stale.mkdir(parents=True)
    (stale / "Preferences").write_text('{"enable_do_not_track": true}')
    os.utime(stale / "Preferences", (time.time() - 3600,) * 2)
    chromium.start().close()
    assert _get(ctx, type="enable_do_not_track") == "false"
    os.utime(stale / "Preferences", (time.time() + 60,) * 2)
    assert _get(ctx, type="enable_do_not_track") == "true"


# --------------------------------------------------------------------------- extensions
def test_extensions_loaded_unpacked(ctx, chromium, guest):
    ext = guest / "tab-saver"
    (ext / "_locales" / "en").mkdir(parents=True)
    (ext / "manifest.json").write_text('{"manifest_version": 3, "name": "__MSG_extName__", "version": "1.0", '
                                       '"default_locale": "en", "action": {}}')
    (ext / "_locales" / "en" / "messages.json").write_text('{"extName": {"message": "Tab Saver"}}')
    chromium.start(f"--load-extension={ext}", "--enable-unsafe-extension-debugging",
                   "--disable-features=DisableLoadExtensionCommandLineSwitch").close()

    paths = _get(ctx, type="find_unpacked_extension_path")
    assert paths == [str(ext)]
    assert is_in_list(paths, {"expected": str(ext)}) == 1.0
    assert is_in_list(paths, {"expected": str(guest / "other")}) == 0.0
    names = _get(ctx, type="find_installed_extension_name")
    assert "Tab Saver" in names
    assert is_expected_installed_extensions(names, {"expected": ["Tab Saver"]}) == 1.0
    assert is_expected_installed_extensions(names, {"expected": ["Tab Saver", "Dark Reader"]}) == 0.0


# --------------------------------------------------------------------------- bookmarks, history, cookies
def test_bookmarks_history_and_cookies(ctx, chromium, http_root):
    root, base = http_root
    other = base.replace("127.0.0.1", "localhost")
    (root / "news.html").write_text("<title>News</title><script>document.cookie = 'seen=1; max-age=86400'</script>")
    (root / "shop.html").write_text("<title>Shop</title><script>document.cookie = 'cart=3; max-age=86400'</script>")
    chromium.start()
    for url in (f"{base}/news.html", f"{other}/shop.html"):
        with chromium.page(url) as page:
            assert page.evaluate("document.cookie")
    with chromium.page("chrome://bookmarks/") as page:
        page.evaluate("""async ([a, b]) => {
            const folder = await chrome.bookmarks.create({parentId: '1', title: 'Liked Authors'});
            await chrome.bookmarks.create({parentId: folder.id, title: 'News', url: a});
            await chrome.bookmarks.create({parentId: '1', title: 'Shop', url: b}); }""",
                      [f"{base}/news.html", f"{other}/shop.html"])
    chromium.close()

    roots = _get(ctx, type="bookmarks")
    assert is_expected_bookmarks(roots, {"type": "bookmark_bar_folders_names", "names": ["Liked Authors"]}) == 1.0
    assert is_expected_bookmarks(roots, {"type": "bookmark_bar_websites_urls", "urls": [f"{other}/shop.html"]}) == 1.0
    assert is_expected_bookmarks(roots, {"type": "liked_authors_websites_urls",
                                         "urls": [[f"{base}/news.html", "https://example.org"]]}) == 1.0
    assert is_expected_bookmarks(roots, {"type": "bookmark_bar_folders_names", "names": ["Other"]}) == 0.0

    history = _get(ctx, type="history", dest="fetched/History")
    assert ctx.cache_path("fetched/History").is_file()
    assert {(u, t) for u, t, _ in history} >= {(f"{base}/news.html", "News"), (f"{other}/shop.html", "Shop")}
    assert all(isinstance(when, int) and when > 0 for _, _, when in history)
    assert check_history_deleted(history, {"type": "keywords", "keywords": ["shop.html"]}) == 0.0

    cookies = _get(ctx, type="cookie_data")
    assert {(row[1], row[3]) for row in cookies} >= {("127.0.0.1", "seen"), ("localhost", "cart")}
    assert is_cookie_deleted(cookies, {"type": "domains", "domains": ["localhost"]}) == 0.0

    assert check_history_deleted(history, {"type": "keywords", "keywords": ["never-visited"]}) == 1.0

    chromium.start()  # the user deletes one site's cookies (what its page info's "Delete data" does)
    with chromium.page(f"{other}/shop.html") as page:
        page.context.new_cdp_session(page).send("Network.deleteCookies", {"name": "cart", "domain": "localhost"})
    chromium.close()

    cookies = _get(ctx, type="cookie_data")
    assert is_cookie_deleted(cookies, {"type": "domains", "domains": ["localhost"]}) == 1.0
    assert is_cookie_deleted(cookies, {"type": "domains", "domains": ["127.0.0.1"]}) == 0.0


# --------------------------------------------------------------------------- pages
SHOP = ("/shop/mens-clothing/mens-shirts/Men_regular_size_t,Price_discount_range,Sleeve_length/"
        "L,50_PERCENT_%20off%20%26%20more,Short%20Sleeve?id=20627")


def test_tabs_and_the_active_tabs_url(ctx, chromium, http_root):
    root, base = http_root
    (root / "a.html").write_text("<title>A</title>")
    chromium.start()
    chromium.open_tab(f"{base}/a.html")
    chromium.open_tab(f"{base}/search.html?q=red+shoes&size=9,10&sort=price")
    tabs = _get(ctx, type="open_tabs_info")
    assert tabs[0]["url"] == f"{base}/search.html?q=red+shoes&size=9,10&sort=price"  # the active tab first
    assert is_expected_tabs(tabs, {"type": "url", "urls": ["about:blank", f"{base}/a.html", tabs[0]["url"]]}) == 1.0
    assert is_expected_tabs(tabs, {"type": "url", "urls": [f"{base}/a.html"]}) == 0.0

    parsed = _get(ctx, type="active_tab_url_parse", parse_keys=["q", "size"], replace={"q": "query"})
    assert parsed == {"size": "9,10", "query": "red shoes"}
    assert _get(ctx, type="active_tab_url_parse", parse_keys=["size"], split_list=True) == {"size": ["9", "10"]}
    assert _get(ctx, type="url_dashPart", partIndex=3, needDeleteId=True, returnType="string") == "search.html"
    assert _get(ctx, type="url_dashPart", partIndex=-1, returnType="json", key="page") == {
        "page": "search.html?q=red+shoes&size=9,10&sort=price"}

    chromium.open_tab(base + SHOP)
    got = _get(ctx, type="url_path_parse", goto_prefix="https://www.",
               parse_keys=["mens_clothing", "shirts", "Men_regular_size_t", "Price_discount_range", "short_sleeve"])
    assert check_direct_json_object(got, {"expected": {
        "Men_regular_size_t": "L", "Price_discount_range": "50_PERCENT_ off & more", "mens_clothing": True,
        "shirts": True, "short_sleeve": True}}) == 1.0
    assert check_direct_json_object(got, {"expected": {"Men_regular_size_t": "XL"}}) == 0.0


FLIGHTS = """<title>Flights</title>
<div class="route">SEA<span class="sep"></span>NYC</div>
<ul><li class="price">$120</li><li class="price">$95</li></ul>
<div class="card"><h3>Nonstop</h3><p>5h</p></div><div class="card"><p>no heading</p></div>
<span class="tag">Wifi</span><span class="tag">Meals</span>
<label>Departure 10:30</label>
<h1 id="t">  Cheapest flights </h1>
<input id="city" value=" Seattle ">
<div id="late"></div>
<script>setTimeout(() => { document.getElementById('late').className = 'loaded'; document.getElementById('late')
  .textContent = 'filled in'; }, 300)</script>"""


def test_active_tab_html_parse_reads_the_active_page(ctx, chromium, http_root):
    root, base = http_root
    (root / "flights.html").write_text(FLIGHTS)
    (root / "other.html").write_text("<title>Other</title><li class='price'>$1</li>")
    chromium.start()
    chromium.open_tab(f"{base}/other.html")
    chromium.open_tab(f"{base}/flights.html?from=SEA")

    got = _get(ctx, type="active_tab_html_parse", goto_prefix="http://", category="class",
               class_singleObject={"loaded": "late"},
               class_multiObject={"price": {"0": "first", "1": "second"}},
               class_multiObject_child={"route": {"0": "from", "1": "to"}},
               class_multiObject_only_child={"card": {"0": "heading"}},
               class_multiObject_search_exist={"tag": ["Wifi", "Bar", "is_other_exist"]})
    assert got == {"late": "filled in", "first": "$120", "second": "$95", "from": "SEA", "to": "NYC",
                   "heading": "Nonstop", "Wifi": True, "Bar": False, "is_other_exist": True}
    assert check_direct_json_object(got, {"expected": {"first": "$120", "from": "SEA"}}) == 1.0
    assert _get(ctx, type="active_tab_html_parse", category="label", labelObject={"Departure": "dep"}) == {
        "dep": "Departure 10:30"}
    assert _get(ctx, type="active_tab_html_parse", category="xpath",
                xpathObject={"//h1[@id='t']": "title", "//h2": "none"}) == {"title": "Cheapest flights", "none": ""}
    assert _get(ctx, type="active_tab_html_parse", category="input", inputObject={"//input[@id='city']": "city"}) == {
        "city": "Seattle"}
    assert _get(ctx, type="active_tab_html_parse", category="class&url", class_multiObject={"tag": ["wifi", "meals"]},
                url_include_expected=["from=sea", "to=nyc"]) == {
        "wifi": True, "meals": True, "is_other_exist": False, "from=sea": True, "to=nyc": False}


def test_page_info_pdf_and_info_from_website_open_their_own_tab(ctx, chromium, http_root, monkeypatch):
    root, base = http_root
    (root / "cart.html").write_text("<title>Your cart</title><ul><li>Dota 2</li><li>Portal 2</li></ul>")
    (root / "report.html").write_text("<title>Report</title><h1>Quarterly report</h1><p>Revenue grew by 12 percent.</p>")
    (root / "index.html").write_text("<title>Home</title><h1>Welcome home</h1><a id='next' href='detail.html'>more</a>"
                                     "<img id='logo' src='logo.png' alt='logo'>")
    (root / "detail.html").write_text("<title>Detail</title><h2>Opening hours</h2><img src='hours.png'>")
    monkeypatch.setattr(chrome_pages, "SELECTOR_WAIT_S", 2.0)
    chromium.start()
    chromium.open_tab(f"{base}/cart.html")
    tabs_before = len(_get(ctx, type="open_tabs_info"))

    info = _get(ctx, type="page_info", url=f"{base}/cart.html")
    assert info["title"] == "Your cart" and info["url"] == f"{base}/cart.html" and "<li>Portal 2</li>" in info["content"]
    assert is_added_to_steam_cart(info, {"items": ["Dota 2", "Portal 2"]}) == 1.0
    assert is_added_to_steam_cart(info, {"items": ["Half-Life"]}) == 0.0
    assert _get(ctx, type="page_info", url="http://127.0.0.1:9/unreachable") is None

    pdf = _get(ctx, "expected", type="pdf_from_url", path=f"{base}/report.html", dest="report.pdf")
    assert pdf == ctx.cache_path("report.pdf") and pdf.read_bytes().startswith(b"%PDF")
    text = _pdf_text(pdf)
    assert "Quarterly report" in text and "Revenue grew by 12 percent." in text

    values = _get(ctx, "expected", type="info_from_website", url=f"{base}/index.html", infos=[
        {"action": "inner_text", "selector": "h1"},
        {"action": "attribute", "selector": "#logo", "attribute": "src"},
        {"action": "click_and_inner_text", "selector": ["#next", "h2"]},
        {"action": "click_and_attribute", "selector": ["#next", "img"], "attribute": "src"},
        {"selector": "title"}])
    assert values == ["Welcome home", "logo.png", "Opening hours", "hours.png", "Home"]
    backups = ["Welcome home", "x"]
    assert _get(ctx, "expected", type="info_from_website", url=f"{base}/index.html", backups=backups,
                infos=[{"action": "inner_text", "selector": "#missing"}]) == backups
    with pytest.raises(DesktopEnvError, match="could not be read"):
        _get(ctx, "expected", type="info_from_website", url=f"{base}/index.html",
             infos=[{"action": "inner_text", "selector": "#missing"}])
    assert len(_get(ctx, type="open_tabs_info")) == tabs_before, "the getters' own tabs should be closed"
    assert is_expected_url_pattern_match(_get(ctx, type="active_tab_info"), {"expected": ["cart\\.html$"]}) == 1.0


def test_a_page_getter_starts_chromium_again_when_it_was_closed(ctx, chromium, http_root, tmp_path, monkeypatch):
    """The agent may close the browser; the expected side (a gold PDF, a website's values) still needs one."""
    from desktop_env.configs import browser as browser_step

    root, base = http_root
    (root / "report.html").write_text("<title>Report</title><p>Printed after a restart.</p>")
    wrapper = tmp_path / "chromium-as-root"  # the VM's browser runs as a user; on a test host root needs this
    wrapper.write_text(f"#!/bin/sh\nexec {CHROMIUM} {' '.join(HOST_FLAGS)} \"$@\"\n")
    wrapper.chmod(0o755)
    monkeypatch.setattr(browser_step, "CHROMIUM_COMMAND", str(wrapper))
    ctx.state["chromium"] = {"debugging_port": chromium.port, "listening_port": chromium.port}
    assert not chromium.answers()
    pdf = _get(ctx, "expected", type="pdf_from_url", path=f"{base}/report.html", dest="again.pdf")
    assert "Printed after a restart." in _pdf_text(pdf)
    assert chromium.answers()


def test_the_recreation_gov_getter_is_not_runnable_here(ctx):
    with pytest.raises(NotSupportedError, match="recreation.gov"):
        _get(ctx, "expected", type="gotoRecreationPage_and_get_html_content", selector="class", **{"class": "x"})
