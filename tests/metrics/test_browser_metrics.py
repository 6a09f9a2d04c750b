"""Chromium and desktop metrics on real profile files, a11y dumps and .desktop files: pass and fail cases."""
from __future__ import annotations

import json
import sqlite3
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from desktop_env.evaluators.metrics.browser import (
    A11Y_NAMESPACES, check_accessibility_tree, check_accessibility_tree_options, check_font_size,
    check_gnome_favorite_apps, check_history_deleted, is_added_to_steam_cart, is_cookie_deleted,
    is_expected_active_tab, is_expected_active_tab_approximate, is_expected_bookmarks,
    is_expected_installed_extensions, is_expected_search_query, is_expected_tabs, is_extension_installed,
    is_in_vm_clickboard, is_shortcut_on_desktop, normalize_url,
)
from desktop_env.evaluators.metrics.utils import MetricError, OptionError
from desktop_env.evaluators.values import GuestText
from vm_server.a11y import NAMESPACES as SERVER_NAMESPACES

# ----------------------------------------------------------------------------- fixtures: real files


def chromium_bookmarks(tmp_path: Path, bar_children: list[dict]) -> Path:
    """A Bookmarks file as Chromium writes it in the profile folder."""
    def folder(name, node_id, children):
        return {"children": children, "date_added": "13350000000000000", "date_last_used": "0",
                "date_modified": "13350000000000001", "guid": f"0bc5d13f-2cba-5d74-951f-3f233fe6c90{node_id}",
                "id": str(node_id), "name": name, "type": "folder"}
    data = {"checksum": "6e3a6f2ba4c1f1a1c1b4a5c0f7d2e8b9",
            "roots": {"bookmark_bar": folder("Bookmarks bar", 1, bar_children),
                      "other": folder("Other bookmarks", 2, []),
                      "synced": folder("Mobile bookmarks", 3, [])},
            "version": 1}
    path = tmp_path / "Bookmarks"
    path.write_text(json.dumps(data, indent=3), encoding="utf-8")
    return path


def link(name: str, url: str, node_id: int = 10) -> dict:
    return {"date_added": "13350000000000000", "date_last_used": "0", "guid": f"guid-{node_id}",
            "id": str(node_id), "meta_info": {"power_bookmark_meta": ""}, "name": name, "type": "url", "url": url}


def folder(name: str, children: list[dict], node_id: int = 20) -> dict:
    return {"children": children, "date_added": "13350000000000000", "date_last_used": "0",
            "date_modified": "0", "guid": f"guid-{node_id}", "id": str(node_id), "name": name, "type": "folder"}


def chromium_cookies(tmp_path: Path, hosts: list[str]) -> Path:
    """A Cookies database with Chromium's table layout (host_key is column 1, as SELECT * returns it)."""
    path = tmp_path / "Cookies"
    con = sqlite3.connect(path)
    con.executescript("""
        CREATE TABLE meta(key LONGVARCHAR NOT NULL UNIQUE PRIMARY KEY, value LONGVARCHAR);
        CREATE TABLE cookies(creation_utc INTEGER NOT NULL, host_key TEXT NOT NULL, top_frame_site_key TEXT NOT NULL,
            name TEXT NOT NULL, value TEXT NOT NULL, encrypted_value BLOB NOT NULL, path TEXT NOT NULL,
            expires_utc INTEGER NOT NULL, is_secure INTEGER NOT NULL, is_httponly INTEGER NOT NULL,
            last_access_utc INTEGER NOT NULL, has_expires INTEGER NOT NULL, is_persistent INTEGER NOT NULL,
            priority INTEGER NOT NULL, samesite INTEGER NOT NULL, source_scheme INTEGER NOT NULL,
            source_port INTEGER NOT NULL, last_update_utc INTEGER NOT NULL,
            UNIQUE (host_key, top_frame_site_key, name, path, source_scheme, source_port));
        INSERT INTO meta VALUES ('version', '21');
    """)
    con.executemany("INSERT INTO cookies VALUES (?, ?, '', ?, 'v', x'', '/', 0, 1, 0, 0, 1, 1, 1, -1, 2, 443, 0)",
                    [(13350000000000000 + i, host, f"c{i}") for i, host in enumerate(hosts)])
    con.commit()
    con.close()
    return path


def chromium_history(tmp_path: Path, urls: list[str]) -> Path:
    """A History database with Chromium's urls/visits tables."""
    path = tmp_path / "History"
    con = sqlite3.connect(path)
    con.executescript("""
        CREATE TABLE urls(id INTEGER PRIMARY KEY AUTOINCREMENT, url LONGVARCHAR, title LONGVARCHAR,
            visit_count INTEGER DEFAULT 0 NOT NULL, typed_count INTEGER DEFAULT 0 NOT NULL,
            last_visit_time INTEGER NOT NULL, hidden INTEGER DEFAULT 0 NOT NULL);
        CREATE TABLE visits(id INTEGER PRIMARY KEY, url INTEGER NOT NULL, visit_time INTEGER NOT NULL,
            from_visit INTEGER, transition INTEGER DEFAULT 0 NOT NULL, segment_id INTEGER,
            visit_duration INTEGER DEFAULT 0 NOT NULL);
    """)
    for i, url in enumerate(urls, 1):
        con.execute("INSERT INTO urls(id, url, title, visit_count, last_visit_time) VALUES (?, ?, ?, 1, ?)",
                    (i, url, f"page {i}", 13350000000000000 + i))
        con.execute("INSERT INTO visits(url, visit_time, transition) VALUES (?, ?, 805306368)",
                    (i, 13350000000000000 + i))
    con.commit()
    con.close()
    return path


def rows(path: Path, sql: str) -> list[tuple]:
    """What the suite's getters hand over: the rows of a query."""
    con = sqlite3.connect(path)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def q(prefix: str, name: str) -> str:
    return f"{{{SERVER_NAMESPACES[prefix]}}}{name}"


def a11y_dump(email: str = "anonym-x2024@outlook.com", tab: str = "About Profiles") -> str:
    """An accessibility tree in the in-VM server's shape (vm_server/a11y.py): roles as tags, name
    attributes, namespaced states/attributes/geometry, the text as element text."""
    root = ET.Element("desktop-frame", {"name": "main"})
    xfce = ET.SubElement(root, "application", {"name": "xfce4-panel"})
    ET.SubElement(xfce, "push-button", {"name": "Whisker Menu", q("st", "showing"): "true"})
    app = ET.SubElement(root, "application", {"name": "Thunderbird"})
    frame = ET.SubElement(app, "frame", {"name": "Mozilla Thunderbird", q("st", "active"): "true",
                                         q("cp", "screencoord"): "(0, 0)", q("cp", "size"): "(1920, 1080)"})
    tabs = ET.SubElement(frame, "page-tab-list", {"name": "", q("attr", "id"): "tabmail-tabs"})
    ET.SubElement(tabs, "page-tab", {"name": "Home", q("st", "selectable"): "true"})
    ET.SubElement(tabs, "page-tab", {"name": tab, q("st", "selected"): "true"})
    panel = ET.SubElement(frame, "panel", {"name": "Account Setup"})
    entry = ET.SubElement(panel, "entry", {"name": "Email address", q("st", "focused"): "true",
                                           q("attr", "tag"): "input"})
    entry.text = email
    ET.SubElement(panel, "password-text", {"name": "Password", q("st", "editable"): "true"})
    name = ET.SubElement(panel, "entry", {"name": "Your full name"})
    name.text = "Anonym Tester"
    return ET.tostring(root, encoding="unicode")


# ----------------------------------------------------------------------------- URLs and tabs

def test_url_normalization():
    assert normalize_url("HTTPS://www.Example.com:443/a/") == normalize_url("https://example.com/a")
    assert normalize_url("example.com") == normalize_url("http://example.com/")
    assert normalize_url("https://example.com/a?q=1") != normalize_url("https://example.com/a?q=2")
    assert normalize_url("https://example.com/a?q=1", drop_query=True) == "https://example.com/a"
    assert normalize_url("http://example.com") != normalize_url("https://example.com")


class TestActiveTab:
    RULE = {"type": "url", "url": "https://www.drugs.com/npp/"}

    def test_pass_with_tab_info_and_with_url(self):
        assert is_expected_active_tab({"title": "Natural Products", "url": "https://drugs.com/npp"}, self.RULE) == 1.0
        assert is_expected_active_tab(GuestText("https://www.drugs.com/npp/"), self.RULE) == 1.0

    def test_fail(self):
        assert is_expected_active_tab({"title": "x", "url": "https://www.drugs.com/npc/"}, self.RULE) == 0.0
        assert is_expected_active_tab("https://www.drugs.com/npp/?page=2", self.RULE) == 0.0

    def test_missing(self):
        assert is_expected_active_tab(None, self.RULE) == 0.0
        assert is_expected_active_tab({"title": "no url"}, self.RULE) == 0.0

    def test_bad_rule(self):
        with pytest.raises(MetricError, match="'url'"):
            is_expected_active_tab("https://x", {"type": "urls", "url": "https://x"})
        with pytest.raises(MetricError, match="url"):
            is_expected_active_tab("https://x", {"type": "url"})


class TestActiveTabApproximate:
    RULE = {"type": "url", "url": "chrome://settings/manageProfile"}

    def test_pass_ignores_the_query(self):
        assert is_expected_active_tab_approximate("chrome://settings/manageProfile?search=name", self.RULE) == 1.0
        assert is_expected_active_tab_approximate({"url": "chrome://settings/manageProfile"}, self.RULE) == 1.0

    def test_fail(self):
        assert is_expected_active_tab_approximate("chrome://settings/people", self.RULE) == 0.0

    def test_missing(self):
        assert is_expected_active_tab_approximate(None, self.RULE) == 0.0

    def test_bad_rule(self):
        with pytest.raises(MetricError):
            is_expected_active_tab_approximate("chrome://settings", ["chrome://settings"])


class TestTabs:
    RULE = {"type": "url", "urls": ["https://www.wikipedia.org/", "https://github.com/"]}

    def test_pass_in_any_order(self):
        tabs = [{"title": "GitHub", "url": "https://github.com/"},
                {"title": "Wikipedia", "url": "https://www.wikipedia.org/"}]
        assert is_expected_tabs(tabs, self.RULE) == 1.0

    def test_fail_on_missing_or_extra_tab(self):
        assert is_expected_tabs([{"title": "GitHub", "url": "https://github.com/"}], self.RULE) == 0.0
        tabs = [{"url": "https://github.com/"}, {"url": "https://www.wikipedia.org/"}, {"url": "https://kayak.com/"}]
        assert is_expected_tabs(tabs, self.RULE) == 0.0
        assert is_expected_tabs([{"url": "https://github.com/"}] * 2, self.RULE) == 0.0

    def test_missing(self):
        assert is_expected_tabs(None, self.RULE) == 0.0
        assert is_expected_tabs([], self.RULE) == 0.0

    def test_bad_rule(self):
        with pytest.raises(MetricError, match="urls"):
            is_expected_tabs([], {"type": "url", "urls": "https://github.com/"})


class TestSearchQuery:
    RULE = {"expect": {"pattern": r"https?://(www\.)?google\.com/search\?q=drugs"}}

    def test_pass(self):
        assert is_expected_search_query({"title": "drugs", "url": "https://www.google.com/search?q=drugs&x=1"},
                                        self.RULE) == 1.0

    def test_fail(self):
        assert is_expected_search_query({"url": "https://www.google.com/search?q=cats"}, self.RULE) == 0.0

    def test_missing(self):
        assert is_expected_search_query(None, self.RULE) == 0.0

    def test_bad_rule(self):
        with pytest.raises(MetricError, match="regular expression"):
            is_expected_search_query("https://x", {"expect": {"pattern": "("}})
        with pytest.raises(MetricError, match="expect"):
            is_expected_search_query("https://x", {"pattern": "x"})


class TestSteamCart:
    RULE = {"items": ["The Witcher 3: Wild Hunt", "Stardew Valley"]}

    def test_pass(self):
        page = {"title": "Shopping Cart", "url": "https://store.steampowered.com/cart/",
                "content": "Your Shopping Cart\nStardew Valley $14.99\nThe Witcher 3: Wild Hunt $39.99\n"
                           "Estimated total"}
        assert is_added_to_steam_cart(page, self.RULE) == 1.0

    def test_fail(self):
        assert is_added_to_steam_cart({"content": "Your Shopping Cart\nStardew Valley $14.99"}, self.RULE) == 0.0

    def test_missing(self):
        assert is_added_to_steam_cart(None, self.RULE) == 0.0
        assert is_added_to_steam_cart({"title": "no content"}, self.RULE) == 0.0

    def test_bad_rule(self):
        with pytest.raises(MetricError, match="items"):
            is_added_to_steam_cart({"content": "x"}, {"item": "Stardew Valley"})


# ----------------------------------------------------------------------------- bookmarks

class TestBookmarks:
    def test_folder_names(self, tmp_path):
        path = chromium_bookmarks(tmp_path, [folder("Favorites", []), link("News", "https://news.ycombinator.com/")])
        assert is_expected_bookmarks(path, {"type": "bookmark_bar_folders_names", "names": ["Favorites"]}) == 1.0
        assert is_expected_bookmarks(path, {"type": "bookmark_bar_folders_names", "names": ["Tech News"]}) == 0.0

    def test_website_urls_from_the_file_its_json_or_its_roots(self, tmp_path):
        path = chromium_bookmarks(tmp_path, [link("Transformer", "https://jalammar.github.io/illustrated-transformer/"),
                                             folder("Work", [link("Docs", "https://docs.python.org/3/", 11)])])
        rule = {"type": "bookmark_bar_websites_urls", "urls": ["https://jalammar.github.io/illustrated-transformer/"]}
        data = json.loads(path.read_text())
        assert is_expected_bookmarks(path, rule) == 1.0
        assert is_expected_bookmarks(data, rule) == 1.0
        assert is_expected_bookmarks(data["roots"], rule) == 1.0
        rule_more = {**rule, "urls": rule["urls"] + ["https://docs.python.org/3/"]}  # in a folder, not on the bar
        assert is_expected_bookmarks(path, rule_more) == 0.0

    def test_liked_authors_with_alternatives(self, tmp_path):
        rule = {"type": "liked_authors_websites_urls", "names": ["Liked Authors"],
                "urls": [["https://jimfan.me/", "https://research.nvidia.com/person/linxi-jim-fan"],
                         ["https://ai.stanford.edu/~yukez/", "https://yukezhu.me/"]]}
        good = chromium_bookmarks(tmp_path, [folder("Liked Authors", [
            link("Jim Fan", "https://research.nvidia.com/person/linxi-jim-fan", 11),
            link("Yuke Zhu", "https://yukezhu.me/", 12)])])
        assert is_expected_bookmarks(good, rule) == 1.0
        one_author_twice = chromium_bookmarks(tmp_path, [folder("Liked Authors", [
            link("Jim Fan", "https://jimfan.me/", 11),
            link("Jim Fan 2", "https://research.nvidia.com/person/linxi-jim-fan", 12)])])
        assert is_expected_bookmarks(one_author_twice, rule) == 0.0
        extra = chromium_bookmarks(tmp_path, [folder("Liked Authors", [
            link("Jim Fan", "https://jimfan.me/", 11), link("Yuke Zhu", "https://yukezhu.me/", 12),
            link("Other", "https://example.com/", 13)])])
        assert is_expected_bookmarks(extra, rule) == 0.0
        wrong_folder = chromium_bookmarks(tmp_path, [folder("Authors", [link("Jim Fan", "https://jimfan.me/", 11)])])
        assert is_expected_bookmarks(wrong_folder, rule) == 0.0

    def test_missing_or_not_bookmarks(self, tmp_path):
        rule = {"type": "bookmark_bar_folders_names", "names": ["Favorites"]}
        assert is_expected_bookmarks(None, rule) == 0.0
        assert is_expected_bookmarks(tmp_path / "absent", rule) == 0.0
        broken = tmp_path / "Bookmarks"
        broken.write_text("{not json")
        assert is_expected_bookmarks(broken, rule) == 0.0
        assert is_expected_bookmarks(GuestText(str(chromium_bookmarks(tmp_path, []))), rule) == 0.0

    def test_bad_rule(self, tmp_path):
        path = chromium_bookmarks(tmp_path, [])
        with pytest.raises(MetricError, match="did you mean 'bookmark_bar_folders_names'"):
            is_expected_bookmarks(path, {"type": "bookmark_bar_folder_names", "names": []})
        with pytest.raises(MetricError, match="names"):
            is_expected_bookmarks(path, {"type": "bookmark_bar_folders_names"})


# ----------------------------------------------------------------------------- cookies and history

class TestCookieDeleted:
    RULE = {"type": "domains", "domains": [".amazon.com", ".ebay.com"]}

    def test_pass_from_the_database_and_from_rows(self, tmp_path):
        db = chromium_cookies(tmp_path, [".wikipedia.org", "en.wikipedia.org", ".google.com"])
        assert is_cookie_deleted(db, self.RULE) == 1.0
        assert is_cookie_deleted(rows(db, "SELECT * FROM cookies"), self.RULE) == 1.0

    def test_fail_when_a_cookie_is_left(self, tmp_path):
        db = chromium_cookies(tmp_path, [".wikipedia.org", "www.amazon.com"])
        assert is_cookie_deleted(db, self.RULE) == 0.0
        assert is_cookie_deleted(rows(db, "SELECT * FROM cookies"), self.RULE) == 0.0
        (tmp_path / "sub").mkdir()
        sub = chromium_cookies(tmp_path / "sub", [".signin.ebay.com"])
        assert is_cookie_deleted(sub, self.RULE) == 0.0
        # a bare rule domain is that host only, not its subdomains
        assert is_cookie_deleted(sub, {"type": "domains", "domains": ["ebay.com"]}) == 1.0

    def test_missing_or_not_a_cookie_database(self, tmp_path):
        assert is_cookie_deleted(None, self.RULE) == 0.0
        other = chromium_history(tmp_path, ["https://amazon.com/"])
        assert is_cookie_deleted(other, self.RULE) == 0.0
        junk = tmp_path / "Cookies-junk"
        junk.write_bytes(b"not sqlite at all" * 100)
        assert is_cookie_deleted(junk, self.RULE) == 0.0

    def test_bad_rule(self, tmp_path):
        with pytest.raises(MetricError, match="domains"):
            is_cookie_deleted(chromium_cookies(tmp_path, []), {"type": "domain", "domains": [".amazon.com"]})


class TestHistoryDeleted:
    RULE = {"type": "keywords", "keywords": ["youtube"]}

    def test_pass(self, tmp_path):
        db = chromium_history(tmp_path, ["https://www.nytimes.com/", "https://www.bbc.com/news", "https://cnn.com/"])
        assert check_history_deleted(db, self.RULE) == 1.0
        assert check_history_deleted(rows(db, "SELECT url, title, last_visit_time FROM urls"), self.RULE) == 1.0

    def test_fail(self, tmp_path):
        db = chromium_history(tmp_path, ["https://www.nytimes.com/", "https://www.YouTube.com/watch?v=1"])
        assert check_history_deleted(db, self.RULE) == 0.0
        assert check_history_deleted(rows(db, "SELECT url, title, last_visit_time FROM urls"), self.RULE) == 0.0

    def test_missing(self, tmp_path):
        assert check_history_deleted(None, self.RULE) == 0.0
        assert check_history_deleted(chromium_cookies(tmp_path, []), self.RULE) == 0.0

    def test_bad_rule(self):
        with pytest.raises(MetricError, match="keywords"):
            check_history_deleted([], {"type": "keywords", "keywords": [1]})


# ----------------------------------------------------------------------------- extensions and settings

class TestExtensionInstalled:
    def test_contain(self):
        out = GuestText("ms-python.python\nms-python.vscode-pylance\n")
        assert is_extension_installed(out, {"type": "contain", "expected": "ms-python.python"}) == 1.0
        assert is_extension_installed(out, {"type": "contain", "expected": "ms-toolsai.jupyter"}) == 0.0

    def test_not_contain(self):
        out = GuestText("ms-python.python\n")
        assert is_extension_installed(out, {"type": "not_contain", "expected": "ms-python.python"}) == 0.0
        assert is_extension_installed(GuestText(""), {"type": "not_contain", "expected": "ms-python.python"}) == 1.0

    def test_missing(self):
        assert is_extension_installed(None, {"type": "contain", "expected": "ms-python.python"}) == 0.0

    def test_bad_rule(self):
        with pytest.raises(MetricError, match="did you mean 'contain'"):
            is_extension_installed("x", {"type": "contains", "expected": "x"})


class TestInstalledExtensions:
    RULE = {"expected": ["uBlock Origin", "Dark Reader"]}

    def test_pass(self):
        installed = ["Dark Reader", "uBlock Origin", "Google Docs Offline"]
        assert is_expected_installed_extensions(installed, self.RULE) == 1.0
        assert is_expected_installed_extensions(GuestText("\n".join(installed) + "\n"), self.RULE) == 1.0

    def test_fail(self):
        assert is_expected_installed_extensions(["Dark Reader", "Google Docs Offline"], self.RULE) == 0.0

    def test_missing(self):
        assert is_expected_installed_extensions(None, self.RULE) == 0.0
        assert is_expected_installed_extensions([], self.RULE) == 0.0

    def test_bad_rule(self):
        with pytest.raises(MetricError, match="expected"):
            is_expected_installed_extensions(["x"], {"expected": [1, 2]})


class TestFontSize:
    def test_value_and_range(self):
        assert check_font_size({"default_font_size": 20}, {"type": "value", "value": 20}) == 1.0
        assert check_font_size({"default_font_size": 16}, {"type": "value", "value": 20}) == 0.0
        assert check_font_size({"default_font_size": 20}, {"type": "range", "min": 16, "max": 24}) == 1.0
        assert check_font_size({"default_font_size": 24}, {"type": "range", "min": 16, "max": 24}) == 0.0

    def test_reads_the_preferences_file(self, tmp_path):
        prefs = tmp_path / "Preferences"
        prefs.write_text(json.dumps({"webkit": {"webprefs": {"default_font_size": 24, "minimum_font_size": 6}},
                                     "profile": {"name": "Person 1"}}))
        assert check_font_size(prefs, {"type": "value", "value": 24}) == 1.0
        prefs.write_text(json.dumps({"profile": {"name": "Person 1"}}))  # unset: Chromium's default, 16
        assert check_font_size(prefs, {"type": "value", "value": 16}) == 1.0
        assert check_font_size(prefs, {"type": "range", "min": 16, "max": 100}) == 0.0
        prefs.write_text("{truncated")
        assert check_font_size(prefs, {"type": "value", "value": 16}) == 0.0

    def test_missing(self):
        assert check_font_size(None, {"type": "value", "value": 20}) == 0.0
        assert check_font_size({"other": 1}, {"type": "value", "value": 20}) == 0.0

    def test_bad_rule(self):
        with pytest.raises(MetricError, match="'min', 'max'"):
            check_font_size({"default_font_size": 20}, {"type": "range", "min": 16})
        with pytest.raises(MetricError, match="accepted: value, range"):
            check_font_size({"default_font_size": 20}, {"type": "exact", "value": 20})


# ----------------------------------------------------------------------------- desktop

DESKTOP_ENTRY = """#!/usr/bin/env xdg-open
[Desktop Entry]
Version=1.0
Terminal=false
Type=Application
Name=Wikipedia Quick Access
Exec=/usr/bin/chromium --profile-directory=Default --app-id=jlmkmiaeldbgflcgbpldmbjhlfhbodnk
Icon=chrome-jlmkmiaeldbgflcgbpldmbjhlfhbodnk-Default
StartupWMClass=crx_jlmkmiaeldbgflcgbpldmbjhlfhbodnk

[Desktop Action New]
Name=New Window
"""


class TestShortcutOnDesktop:
    def test_pass_by_name_and_exec(self, tmp_path):
        shortcuts = {"/home/user/Desktop/chrome-jlmk-Default.desktop": DESKTOP_ENTRY,
                     "/home/user/Desktop/terminal.desktop": "[Desktop Entry]\nName=Terminal\nExec=xfce4-terminal\n"}
        assert is_shortcut_on_desktop(shortcuts, {"type": "name", "name": "Wikipedia Quick Access"}) == 1.0
        assert is_shortcut_on_desktop(shortcuts, {"type": "exec", "exec": "xfce4-terminal"}) == 1.0
        path = tmp_path / "wiki.desktop"
        path.write_text(DESKTOP_ENTRY)
        assert is_shortcut_on_desktop(path, {"type": "name", "name": "Wikipedia Quick Access"}) == 1.0

    def test_fail(self):
        shortcuts = {"/home/user/Desktop/x.desktop": DESKTOP_ENTRY}
        assert is_shortcut_on_desktop(shortcuts, {"type": "name", "name": "Wikipedia"}) == 0.0
        # a Name= of another group (a desktop action) is not the shortcut's name
        assert is_shortcut_on_desktop(shortcuts, {"type": "name", "name": "New Window"}) == 0.0
        nameless = "[Desktop Entry]\nType=Application\nExec=chromium\n[Desktop Action New]\nName=Wikipedia\n"
        assert is_shortcut_on_desktop({"/home/user/Desktop/y.desktop": nameless},
                                      {"type": "name", "name": "Wikipedia"}) == 0.0

    def test_missing(self):
        assert is_shortcut_on_desktop(None, {"type": "name", "name": "Wikipedia Quick Access"}) == 0.0
        assert is_shortcut_on_desktop({}, {"type": "name", "name": "Wikipedia Quick Access"}) == 0.0

    def test_bad_rule(self):
        with pytest.raises(MetricError, match="url"):
            is_shortcut_on_desktop({}, {"type": "url", "url": "https://wikipedia.org"})


class TestClipboard:
    def test_pass(self):
        assert is_in_vm_clickboard(GuestText("/home/user/Data3/List3/secret.docx\n"),
                                   {"expected": "/home/user/Data3/List3/secret.docx"}) == 1.0
        assert is_in_vm_clickboard(GuestText("a b c"), {"expected": ["a", "c"]}) == 1.0

    def test_fail(self):
        assert is_in_vm_clickboard(GuestText("/home/user/Data3/secret.docx"),
                                   {"expected": "/home/user/Data3/List3/secret.docx"}) == 0.0

    def test_either_order(self):
        assert is_in_vm_clickboard({"expected": "secret"}, GuestText("the secret")) == 1.0

    def test_missing(self):
        assert is_in_vm_clickboard(None, {"expected": "x"}) == 0.0

    def test_bad_rule(self):
        with pytest.raises(MetricError, match="expected"):
            is_in_vm_clickboard("x", {"expected": 3})


class TestGnomeFavoriteApps:
    RULE = {"expected": ["thunderbird.desktop", "vim.desktop", "google-chrome.desktop"]}

    def test_pass_in_any_order(self):
        out = GuestText("['google-chrome.desktop', 'thunderbird.desktop', 'vim.desktop']\n")
        assert check_gnome_favorite_apps(out, self.RULE) == 1.0
        assert check_gnome_favorite_apps(["vim.desktop", "thunderbird.desktop", "google-chrome.desktop"],
                                         self.RULE) == 1.0

    def test_fail(self):
        out = GuestText("['google-chrome.desktop', 'thunderbird.desktop', 'vim.desktop', 'code.desktop']")
        assert check_gnome_favorite_apps(out, self.RULE) == 0.0
        assert check_gnome_favorite_apps(GuestText("@as []"), self.RULE) == 0.0
        assert check_gnome_favorite_apps(GuestText("@as []"), {"expected": []}) == 1.0

    def test_missing_or_not_a_list(self):
        assert check_gnome_favorite_apps(None, self.RULE) == 0.0
        assert check_gnome_favorite_apps(GuestText("No such schema 'org.gnome.shell'"), self.RULE) == 0.0
        assert check_gnome_favorite_apps(GuestText("__import__('os').system('true')"), self.RULE) == 0.0

    def test_bad_rule(self):
        with pytest.raises(MetricError, match="expected"):
            check_gnome_favorite_apps(["a"], {"expected": {"a": 1}})


# ----------------------------------------------------------------------------- accessibility tree

class TestAccessibilityTree:
    def test_namespaces_are_the_servers(self):
        assert A11Y_NAMESPACES["ubuntu"] == SERVER_NAMESPACES

    def test_xpath_rules_of_the_suite(self):
        rules = [{"xpath": "//application[@name='Thunderbird']//*[contains(text(), 'anonym-x2024@outlook.com') "
                           "or contains(@name, 'anonym-x2024@outlook.com')]"},
                 {"xpath": "//application[@name='Thunderbird']//*[contains(@name, 'password') "
                           "or contains(@name, 'Password')]"}]
        assert check_accessibility_tree(GuestText(a11y_dump()), rules) == 1.0
        assert check_accessibility_tree(GuestText(a11y_dump(email="someone@example.com")), rules) == 0.0

    def test_css_selectors_with_namespaced_attributes(self):
        rules = [{"selectors": ['application[name=Thunderbird] page-tab-list[attr|id="tabmail-tabs"]'
                                '>page-tab[name="About Profiles"]']}]
        assert check_accessibility_tree(a11y_dump(), rules) == 1.0
        assert check_accessibility_tree(a11y_dump(tab="Account Settings"), rules) == 0.0
        focused = [{"selectors": ['entry[st|focused="true"]'], "text": "anonym-x2024@outlook.com"}]
        assert check_accessibility_tree(a11y_dump(), focused) == 1.0

    def test_xpath_with_namespace_prefixes(self):
        rules = [{"xpath": "//page-tab[@st:selected='true']", "text": "", "exact": True}]
        assert check_accessibility_tree(a11y_dump(), {"rules": rules}) == 1.0

    def test_exact_and_fuzzy_text(self):
        selector = ['panel[name="Account Setup"] entry[name="Your full name"]']
        assert check_accessibility_tree(a11y_dump(), [{"selectors": selector, "text": "Anonym Tester"}]) == 1.0
        assert check_accessibility_tree(a11y_dump(), [{"selectors": selector, "text": "Anonym Testers"}]) == 0.0
        fuzzy = check_accessibility_tree(a11y_dump(), [{"selectors": selector, "text": "Anonym Testers",
                                                        "exact": False}])
        assert 0.9 < fuzzy < 1.0
        low = check_accessibility_tree(a11y_dump(), [{"selectors": selector, "text": "zzzz", "exact": False}])
        assert low < 0.2

    def test_reads_a_dump_file(self, tmp_path):
        path = tmp_path / "a11y.xml"
        path.write_text(a11y_dump())
        assert check_accessibility_tree(path, [{"xpath": "//password-text[@name='Password']"}]) == 1.0

    def test_missing_or_not_xml(self):
        rules = [{"xpath": "//entry"}]
        assert check_accessibility_tree(None, rules) == 0.0
        assert check_accessibility_tree(GuestText(""), rules) == 0.0
        assert check_accessibility_tree(GuestText("<desktop-frame><unclosed>"), rules) == 0.0

    def test_entities_of_the_guest_are_not_resolved(self, tmp_path):
        secret = tmp_path / "secret.txt"
        secret.write_text("host secret")
        xml = (f'<!DOCTYPE d [<!ENTITY x SYSTEM "{secret.as_uri()}">]>'
               '<desktop-frame><application name="a"><entry name="e">&x;</entry></application></desktop-frame>')
        assert check_accessibility_tree(GuestText(xml), [{"xpath": "//entry", "text": "host secret"}]) == 0.0

    def test_bad_rules_and_options(self):
        dump = a11y_dump()
        with pytest.raises(MetricError, match="osname"):
            check_accessibility_tree(dump, [{"xpath": "//entry"}], osname="ubunto")
        with pytest.raises(MetricError, match="xpath' or 'selectors"):
            check_accessibility_tree(dump, [{"text": "x"}])
        with pytest.raises(MetricError, match="not valid XPath"):
            check_accessibility_tree(None, [{"xpath": "//entry[@name='x'"}])
        with pytest.raises(MetricError, match="not valid"):
            check_accessibility_tree(dump, [{"selectors": ["entry[name="]}])
        with pytest.raises(MetricError, match="exact"):
            check_accessibility_tree(dump, [{"xpath": "//entry", "text": "x", "exact": "no"}])
        with pytest.raises(MetricError, match="non-empty list"):
            check_accessibility_tree(dump, [])

    def test_options_checked_at_load(self):
        check_accessibility_tree_options({"osname": "windows"})
        with pytest.raises(OptionError) as info:
            check_accessibility_tree_options({"osname": "mac"})
        assert info.value.field == "osname"
