"""Reasons of the general, browser and mail metrics on real files: each metric passes a right answer and says,
for a wrong one, what it compared and where the first difference is (the kind and the text)."""
from __future__ import annotations

import json
import sqlite3
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any, Callable

import pytest

from desktop_env.evaluators.evaluator import evaluate, judge
from desktop_env.evaluators.reasons import (INFEASIBLE, MISSING_RESULT, PASSED, RULE_FAILED, STRUCTURE_MISMATCH,
                                            UNREADABLE_RESULT, VALUE_MISMATCH)
from desktop_env.evaluators.values import GuestText
from desktop_env.registry import METRICS
from desktop_env.session import SetupContext
from desktop_env.tasks import load_task
from vm_server.a11y import NAMESPACES as SERVER_NAMESPACES

MODULES = ("desktop_env.evaluators.metrics.general", "desktop_env.evaluators.metrics.browser",
           "desktop_env.evaluators.metrics.mail")
CHROMIUM_PREFERENCES = Path(__file__).resolve().parents[1] / "data/chromium/Preferences.ask_where_to_save"


# --------------------------------------------------------------------------- real files


def write(tmp: Path, name: str, text: str) -> Path:
    path = tmp / name
    path.write_text(text, encoding="utf-8")
    return path


def bookmarks(tmp: Path, bar: list[dict]) -> Path:
    """Chromium's Bookmarks file with ``bar`` on the bookmarks bar."""
    def node(name, children):
        return {"children": children, "date_added": "13350000000000000", "id": "1", "name": name, "type": "folder"}
    data = {"checksum": "0" * 32, "version": 1,
            "roots": {"bookmark_bar": node("Bookmarks bar", bar), "other": node("Other bookmarks", []),
                      "synced": node("Mobile bookmarks", [])}}
    return write(tmp, "Bookmarks", json.dumps(data, indent=3))


def link(url: str) -> dict:
    return {"date_added": "13350000000000000", "id": "10", "name": url, "type": "url", "url": url}


def folder(name: str, children: list[dict]) -> dict:
    return {"children": children, "date_added": "13350000000000000", "id": "20", "name": name, "type": "folder"}


def cookies(tmp: Path, hosts: list[str]) -> Path:
    """A Cookies database with Chromium's cookies table (the columns the metric reads and their neighbours)."""
    path = tmp / "Cookies"
    with sqlite3.connect(path) as con:
        con.execute("CREATE TABLE cookies(creation_utc INTEGER, host_key TEXT, name TEXT, value TEXT, path TEXT)")
        con.executemany("INSERT INTO cookies VALUES (?, ?, ?, 'v', '/')",
                        [(13350000000000000 + i, h, f"c{i}") for i, h in enumerate(hosts)])
    return path


def history(tmp: Path, urls: list[str]) -> Path:
    """A History database with Chromium's urls table."""
    path = tmp / "History"
    with sqlite3.connect(path) as con:
        con.execute("CREATE TABLE urls(id INTEGER PRIMARY KEY, url LONGVARCHAR, title LONGVARCHAR, "
                    "visit_count INTEGER DEFAULT 0 NOT NULL, last_visit_time INTEGER NOT NULL)")
        con.executemany("INSERT INTO urls(url, title, visit_count, last_visit_time) VALUES (?, ?, 1, 0)",
                        [(u, f"page {i}") for i, u in enumerate(urls)])
    return path


def preferences(tmp: Path, size: int | None) -> Path:
    """Chromium's Preferences file; ``size`` None leaves the font size unset (16)."""
    webkit = {} if size is None else {"webkit": {"webprefs": {"default_font_size": size}}}
    return write(tmp, "Preferences", json.dumps({"profile": {"name": "Person 1"}, **webkit}))


def shortcut(tmp: Path, name: str, command: str) -> Path:
    return write(tmp, f"{name}.desktop", f"[Desktop Entry]\nVersion=1.0\nType=Application\nName={name}\n"
                                         f"Exec={command}\nIcon=utilities-terminal\n\n[Desktop Action new]\n"
                                         f"Name=Other\nExec=other\n")


def a11y(tmp: Path, tab: str = "About Profiles") -> Path:
    """An accessibility tree as the in-VM server writes it (vm_server/a11y.py)."""
    def q(prefix, name):
        return f"{{{SERVER_NAMESPACES[prefix]}}}{name}"
    root = ET.Element("desktop-frame", {"name": "main"})
    app = ET.SubElement(root, "application", {"name": "Thunderbird"})
    frame = ET.SubElement(app, "frame", {"name": "Mozilla Thunderbird", q("st", "active"): "true"})
    tabs = ET.SubElement(frame, "page-tab-list", {"name": "", q("attr", "id"): "tabmail-tabs"})
    ET.SubElement(tabs, "page-tab", {"name": "Home"}).text = "Home"
    ET.SubElement(tabs, "page-tab", {"name": tab, q("st", "selected"): "true"}).text = tab
    return write(tmp, "a11y.xml", ET.tostring(root, encoding="unicode"))


def prefs_js(tmp: Path, *lines: str) -> Path:
    return write(tmp, "prefs.js", '// Mozilla User Preferences\n\nuser_pref("mail.account.account1.server", '
                                  '"server1");\n' + "".join(line + "\n" for line in lines))


FILTER = '''name="Promotions"
enabled="{enabled}"
type="17"
action="Move to folder"
actionValue="mailbox://nobody@Local%20Folders/Promotions"
condition="AND (subject,contains,discount)"
'''


def filters(tmp: Path, *enabled: str) -> Path:
    return write(tmp, "msgFilterRules.dat", 'version="9"\nlogging="no"\n'
                 + "".join(FILTER.format(enabled=e) for e in enabled))


def message(subject: str, status: str = "0001", body: str = "Hello.") -> str:
    return (f"From - Mon Jan 15 10:00:00 2024\nX-Mozilla-Status: {status}\nX-Mozilla-Status2: 00000000\n"
            f"Message-ID: <{subject.replace(' ', '.')}@example.com>\nFrom: Shop <shop@example.com>\n"
            f"To: anonym-x2024@outlook.com\nSubject: {subject}\n\n{body}\n\n")


def mbox(tmp: Path, name: str, *messages: str) -> Path:
    return write(tmp, name, "".join(messages))


# --------------------------------------------------------------------------- the cases
# metric -> [(case id, build(tmp) -> (result, expected, options), score, kind, substrings of the reason's text)]
Build = Callable[[Path], tuple[Any, Any, dict]]
EVAL_RULES = {"include": ["EVAL_OK"], "exclude": ["EVAL_FAIL"]}
YAML = "version: 2\nmodels:\n  - name: customers\n    tests: [unique]\n  - name: orders\n"
ASK = {"key": ["download", "prompt_for_download"], "method": "eq", "ref": True}
TREE_RULE = [{"xpath": "//page-tab[@st:selected='true']", "text": "About Profiles"}]
PROMOTIONS = {"expect": [{"name": "Promotions", "enabled": "yes", "action": "Move to folder"}]}
LONG_OUTPUT = "checking table orders\n" * 40 + "EVAL_FAIL: orders has 3 rows, expected 4\n"

CASES: dict[str, list[tuple[str, Build, float, str, list[str]]]] = {
    "check_include_exclude": [
        ("pass", lambda t: ("rows ok\nEVAL_OK\n", EVAL_RULES, {}), 1.0, PASSED, []),
        ("include_missing_shows_the_tail", lambda t: (LONG_OUTPUT, EVAL_RULES, {}), 0.0, RULE_FAILED,
         ["does not contain 'EVAL_OK'", "EVAL_FAIL: orders has 3 rows, expected 4"]),
        ("exclude_present", lambda t: ("EVAL_OK\nEVAL_FAIL: late\n", EVAL_RULES, {}), 0.0, RULE_FAILED,
         ["contains 'EVAL_FAIL'", "EVAL_FAIL: late"]),
        ("empty_output", lambda t: (GuestText(""), EVAL_RULES, {}), 0.0, RULE_FAILED, ["it is empty"]),
        ("output_file", lambda t: (write(t, "out.txt", "EVAL_FAIL: no table\n"), EVAL_RULES, {}), 0.0, RULE_FAILED,
         ["EVAL_FAIL: no table"]),
        ("none", lambda t: (None, EVAL_RULES, {}), 0.0, MISSING_RESULT, ["no output"]),
        ("missing_file", lambda t: (t / "eval_out.txt", EVAL_RULES, {}), 0.0, MISSING_RESULT, ["eval_out.txt"]),
    ],
    "exact_match": [
        ("pass", lambda t: ("abc", {"expected": "abc"}, {}), 1.0, PASSED, []),
        ("fail", lambda t: ("abd", {"expected": "abc"}, {}), 0.0, VALUE_MISMATCH, ["expected 'abc', got 'abd'"]),
        ("none", lambda t: (None, {"expected": "abc"}, {}), 0.0, MISSING_RESULT, ["no result"]),
    ],
    "literal_match": [
        ("pass", lambda t: (["B", "a"], ["a", "b"], {"type": "list", "ignore_case": True, "ignore_order": True}),
         1.0, PASSED, []),
        ("str", lambda t: ("Abc", "abc", {}), 0.0, VALUE_MISMATCH, ["expected 'abc', got 'Abc'"]),
        ("list_item", lambda t: (["a", "x", "c"], ["a", "b", "c"], {"type": "list"}), 0.0, VALUE_MISMATCH,
         ["item 1: expected 'b', got 'x'"]),
        ("list_length", lambda t: (["a", "b"], ["a", "b", "c"], {"type": "list"}), 0.0, STRUCTURE_MISMATCH,
         ["2 items, expected 3", "missing ['c']"]),
        ("unordered", lambda t: (["b", "d"], ["a", "b"], {"type": "list", "ignore_order": True}), 0.0,
         VALUE_MISMATCH, ["missing ['a']", "unexpected ['d']"]),
        ("not_a_list", lambda t: ("a", ["a"], {"type": "list"}), 0.0, STRUCTURE_MISMATCH, ["result is not a list"]),
        ("none", lambda t: (None, "a", {}), 0.0, MISSING_RESULT, ["no result"]),
    ],
    "is_not_in_list": [
        ("pass", lambda t: (["a", "b"], {"exclude": ["c"]}, {}), 1.0, PASSED, []),
        ("fail", lambda t: (["a", "b"], {"exclude": ["x", "b"]}, {}), 0.0, RULE_FAILED, ["'b' is in the list"]),
        ("none", lambda t: (None, {"exclude": "a"}, {}), 0.0, MISSING_RESULT, ["no list"]),
    ],
    "is_expected_url_pattern_match": [
        ("pass", lambda t: ({"url": "https://docs.getdbt.com/quickstart"}, {"expected": ["getdbt", "quick"]}, {}),
         1.0, PASSED, []),
        ("fail", lambda t: ("https://docs.getdbt.com/other", {"expected": ["getdbt", "quickstart"]}, {}), 0.0,
         RULE_FAILED, ["'https://docs.getdbt.com/other' does not match the pattern 'quickstart'"]),
        ("no_url", lambda t: ({"title": "x"}, {"expected": "x"}, {}), 0.0, MISSING_RESULT, ["no URL"]),
    ],
    "infeasible": [
        ("alone", lambda t: (None, None, {}), 0.0, INFEASIBLE, ["answers FAIL"]),
    ],
    "check_json": [
        ("pass", lambda t: (str(CHROMIUM_PREFERENCES), {"expect": [ASK]}, {}), 1.0, PASSED, []),
        ("value", lambda t: (write(t, "Preferences", json.dumps({"download": {"prompt_for_download": False}})),
                             {"expect": [ASK]}, {}), 0.0, VALUE_MISMATCH,
         ["expect[0]", "['download', 'prompt_for_download']", "expected eq True, got False"]),
        ("key_missing", lambda t: (write(t, "Preferences", "{}"), {"expect": [ASK]}, {}), 0.0, RULE_FAILED,
         ["['download', 'prompt_for_download'] is not in Preferences"]),
        ("unexpect", lambda t: (str(CHROMIUM_PREFERENCES), {"unexpect": [ASK]}, {}), 0.0, RULE_FAILED,
         ["unexpect[0]", "True is eq True"]),
        ("order", lambda t: (write(t, "a.yaml", "server:\n  port: 8080\n"),
                             {"expect": [{"key": ["server", "port"], "method": "lt", "ref": 8000}]},
                             {"is_yaml": True}), 0.0, RULE_FAILED, ["expected lt 8000, got 8080"]),
        ("not_json", lambda t: (write(t, "Preferences", "{"), {"expect": [ASK]}, {}), 0.0, UNREADABLE_RESULT,
         ["Preferences is not valid JSON"]),
        ("missing", lambda t: (t / "Preferences", {"expect": [ASK]}, {}), 0.0, MISSING_RESULT,
         ["Preferences does not exist"]),
    ],
    "compare_json_file": [
        ("pass", lambda t: (write(t, "a.json", '{"x": [1, 2], "y": "z"}'), write(t, "b.json", '{"y":"z","x":[1,2]}'),
                            {}), 1.0, PASSED, []),
        ("value", lambda t: (write(t, "a.json", '{"x": [1, 3]}'), write(t, "b.json", '{"x": [1, 2]}'), {}), 0.0,
         VALUE_MISMATCH, ["key path 'x[1]'", "expected 2, got 3"]),
        ("key", lambda t: (write(t, "a.json", '{"x": 1}'), write(t, "b.json", '{"x": 1, "y": 2}'), {}), 0.0,
         STRUCTURE_MISMATCH, ["'y' is missing"]),
        ("not_json", lambda t: (write(t, "a.json", "{"), write(t, "b.json", "{}"), {}), 0.0, UNREADABLE_RESULT,
         ["a.json is not valid JSON"]),
        ("missing", lambda t: (t / "settings.json", write(t, "b.json", "{}"), {}), 0.0, MISSING_RESULT,
         ["settings.json does not exist"]),
    ],
    "compare_text_file": [
        ("pass", lambda t: (write(t, "a.txt", "hello  world\n"), write(t, "b.txt", "hello world"),
                            {"ignore_blanks": True}), 1.0, PASSED, []),
        ("line", lambda t: (write(t, "a.txt", "a\nc\n"), write(t, "b.txt", "a\nb\n"), {}), 0.0, VALUE_MISMATCH,
         ["a.txt vs b.txt", "line 2: expected 'b', got 'c'"]),
        ("missing", lambda t: (t / "notes.txt", write(t, "b.txt", "a"), {}), 0.0, MISSING_RESULT, ["notes.txt"]),
    ],
    "diff_text_file": [
        ("pass", lambda t: (write(t, "a.txt", "1\n2\n"), write(t, "b.txt", "1\n2\n"), {}), 1.0, PASSED, []),
        ("partial", lambda t: (write(t, "a.txt", "1\n2\n3\n4\n"), write(t, "b.txt", "1\n2\n3\n5\n"), {}), 0.75,
         VALUE_MISMATCH, ["line similarity 0.750", "line 4: expected '5', got '4'"]),
        ("missing", lambda t: (None, write(t, "b.txt", "1"), {}), 0.0, MISSING_RESULT, ["no result file"]),
    ],
    "check_file_existence": [
        ("pass", lambda t: ([write(t, "a.csv", "x"), write(t, "b.csv", "y")], None, {}), 1.0, PASSED, []),
        ("one_missing", lambda t: ([write(t, "a.csv", "x"), t / "b.csv"], None, {}), 0.0, MISSING_RESULT,
         ["b.csv does not exist"]),
        ("folder", lambda t: (t, None, {}), 0.0, MISSING_RESULT, ["is a folder"]),
    ],
    "check_yaml_file": [
        ("pass", lambda t: (write(t, "schema.yml", YAML), [["match", ["version"], 2],
                                                           ["contain", ["models", 0, "tests"], "unique"]], {}),
         1.0, PASSED, []),
        ("match", lambda t: (write(t, "schema.yml", YAML), [["match", ["version"], 3]], {}), 0.0, VALUE_MISMATCH,
         ["rule 0 (match) at key path ['version']: expected 3, got 2"]),
        ("contain", lambda t: (write(t, "schema.yml", YAML), {"rules": [["contain", ["models", 0, "tests"], "x"]]},
                               {}), 0.0, RULE_FAILED, ["expected to contain 'x', got ['unique']"]),
        ("key_path", lambda t: (write(t, "schema.yml", YAML), [["match", ["models", ["name", "nope"], "name"], 1]],
                                {}), 0.0, RULE_FAILED, ["no ['name', 'nope'] under ['models']"]),
        ("not_yaml", lambda t: (write(t, "schema.yml", "a: [1,"), [["match", ["a"], 1]], {}), 0.0,
         UNREADABLE_RESULT, ["schema.yml is not valid YAML"]),
        ("missing", lambda t: (t / "schema.yml", [["match", ["a"], 1]], {}), 0.0, MISSING_RESULT, ["schema.yml"]),
    ],
    # ----------------------------------------------------------------------- browser and desktop
    "is_expected_active_tab": [
        ("pass", lambda t: ({"url": "https://www.example.com/a/"}, {"type": "url", "url": "https://example.com/a"},
                                 {}), 1.0, PASSED, []),
        ("fail", lambda t: ("https://example.com/b", {"type": "url", "url": "https://example.com/a"}, {}), 0.0,
         VALUE_MISMATCH, ["expected 'https://example.com/a', got 'https://example.com/b'"]),
        ("scheme", lambda t: ({"title": "x", "url": "https://WWW.Example.com/a/"},
                              {"type": "url", "url": "http://example.com/a"}, {}), 0.0, VALUE_MISMATCH,
         ["expected 'http://example.com/a', got 'https://WWW.Example.com/a/'"]),
        ("none", lambda t: (None, {"type": "url", "url": "https://example.com/a"}, {}), 0.0, MISSING_RESULT,
         ["no tab URL"]),
    ],
    "is_expected_active_tab_approximate": [
        ("pass", lambda t: ("https://example.com/s?q=1", {"type": "url", "url": "https://example.com/s?q=2"}, {}),
         1.0, PASSED, []),
        ("fail", lambda t: ("https://example.com/t?q=1", {"type": "url", "url": "https://example.com/s"}, {}), 0.0,
         VALUE_MISMATCH, ["got 'https://example.com/t?q=1'", "query strings ignored"]),
    ],
    "is_expected_tabs": [
        ("pass", lambda t: ([{"url": "https://b.com"}, {"url": "https://a.com/"}],
                            {"type": "url", "urls": ["https://a.com", "https://b.com"]}, {}), 1.0, PASSED, []),
        ("fail", lambda t: ([{"url": "https://a.com"}, {"url": "https://c.com"}],
                            {"type": "url", "urls": ["https://a.com", "https://b.com"]}, {}), 0.0, VALUE_MISMATCH,
         ["missing ['https://b.com']", "unexpected ['https://c.com']"]),
        ("none", lambda t: (None, {"type": "url", "urls": ["https://a.com"]}, {}), 0.0, MISSING_RESULT,
         ["no list of tabs"]),
    ],
    "is_expected_search_query": [
        ("pass", lambda t: ({"url": "https://www.google.com/search?q=dbt+docs"}, {"expect": {"pattern": "q=dbt"}},
                            {}), 1.0, PASSED, []),
        ("fail", lambda t: ("https://www.google.com/search?q=airflow", {"expect": {"pattern": "q=dbt"}}, {}), 0.0,
         RULE_FAILED, ["'https://www.google.com/search?q=airflow' does not match the pattern 'q=dbt'"]),
    ],
    "is_added_to_steam_cart": [
        ("pass", lambda t: ({"content": "Your cart: Portal 2, Hades"}, {"items": ["Portal 2"]}, {}), 1.0, PASSED, []),
        ("fail", lambda t: ({"content": "Your cart: Hades"}, {"items": ["Hades", "Portal 2"]}, {}), 0.0, RULE_FAILED,
         ["cart page does not contain 'Portal 2'", "Your cart: Hades"]),
        ("none", lambda t: (None, {"items": ["Hades"]}, {}), 0.0, MISSING_RESULT, ["no cart page text"]),
    ],
    "is_expected_bookmarks": [
        ("pass", lambda t: (bookmarks(t, [folder("Work", []), folder("Home", [])]),
                            {"type": "bookmark_bar_folders_names", "names": ["Home", "Work"]}, {}), 1.0, PASSED, []),
        ("folders", lambda t: (bookmarks(t, [folder("Work", [])]),
                               {"type": "bookmark_bar_folders_names", "names": ["Home", "Work"]}, {}), 0.0,
         VALUE_MISMATCH, ["folders on the bookmarks bar", "missing ['Home']"]),
        ("links", lambda t: (bookmarks(t, [link("https://a.com/")]),
                             {"type": "bookmark_bar_websites_urls", "urls": ["https://b.com"]}, {}), 0.0,
         VALUE_MISMATCH, ["links on the bookmarks bar", "missing ['https://b.com']", "unexpected ['https://a.com']"]),
        ("no_folder", lambda t: (bookmarks(t, [folder("Work", [])]),
                                 {"type": "liked_authors_websites_urls", "urls": ["https://a.com"]}, {}), 0.0,
         STRUCTURE_MISMATCH, ["no folder named 'Liked Authors'", "['Work']"]),
        ("no_link", lambda t: (bookmarks(t, [folder("Liked Authors", [link("https://a.com")])]),
                               {"type": "liked_authors_websites_urls", "urls": ["https://a.com", "https://b.com"]},
                               {}), 0.0, VALUE_MISMATCH, ["'Liked Authors' has no link to 'https://b.com'"]),
        ("not_json", lambda t: (write(t, "Bookmarks", "{"), {"type": "bookmark_bar_folders_names", "names": []},
                                {}), 0.0, UNREADABLE_RESULT, ["Bookmarks file Bookmarks is not readable JSON"]),
        ("missing", lambda t: (t / "Bookmarks", {"type": "bookmark_bar_folders_names", "names": []}, {}), 0.0,
         MISSING_RESULT, ["Bookmarks does not exist"]),
    ],
    "is_cookie_deleted": [
        ("pass", lambda t: (cookies(t, [".google.com"]), {"type": "domains", "domains": [".amazon.com"]}, {}), 1.0,
         PASSED, []),
        ("fail", lambda t: (cookies(t, [".google.com", "www.amazon.com"]),
                            {"type": "domains", "domains": [".amazon.com"]}, {}), 0.0, RULE_FAILED,
         ["cookies are left for ['www.amazon.com']"]),
        ("not_sqlite", lambda t: (write(t, "Cookies", "not sqlite" * 200), {"type": "domains", "domains": ["a.com"]},
                                  {}), 0.0, UNREADABLE_RESULT, ["the database Cookies cannot be queried"]),
        ("missing", lambda t: (t / "Cookies", {"type": "domains", "domains": ["a.com"]}, {}), 0.0, MISSING_RESULT,
         ["Cookies does not exist"]),
    ],
    "check_history_deleted": [
        ("pass", lambda t: (history(t, ["https://bbc.com/"]), {"type": "keywords", "keywords": ["youtube"]}, {}),
         1.0, PASSED, []),
        ("fail", lambda t: (history(t, ["https://bbc.com/", "https://www.YouTube.com/watch?v=1"]),
                            {"type": "keywords", "keywords": ["youtube"]}, {}), 0.0, RULE_FAILED,
         ["still holds 'https://www.YouTube.com/watch?v=1', which contains the keyword 'youtube'"]),
        ("none", lambda t: (None, {"type": "keywords", "keywords": ["youtube"]}, {}), 0.0, MISSING_RESULT,
         ["no Chromium History database"]),
    ],
    "is_extension_installed": [
        ("pass", lambda t: (GuestText("ms-python.python\n"), {"type": "contain", "expected": "ms-python.python"}, {}),
         1.0, PASSED, []),
        ("absent", lambda t: (GuestText("ms-python.python\n"), {"type": "contain", "expected": "ms-toolsai.jupyter"},
                              {}), 0.0, RULE_FAILED, ["does not contain 'ms-toolsai.jupyter'", "ms-python.python"]),
        ("present", lambda t: (GuestText("ms-python.python\n"),
                               {"type": "not_contain", "expected": "ms-python.python"}, {}), 0.0, RULE_FAILED,
         ["contains 'ms-python.python', which it must not"]),
        ("none", lambda t: (None, {"type": "contain", "expected": "x"}, {}), 0.0, MISSING_RESULT, ["command output"]),
    ],
    "is_expected_installed_extensions": [
        ("pass", lambda t: (["Dark Reader", "uBlock Origin"], {"expected": ["uBlock Origin"]}, {}), 1.0, PASSED, []),
        ("fail", lambda t: (GuestText("Dark Reader\n"), {"expected": ["uBlock Origin"]}, {}), 0.0, RULE_FAILED,
         ["['uBlock Origin'] are not installed", "installed: ['Dark Reader']"]),
        ("none", lambda t: (None, {"expected": ["x"]}, {}), 0.0, MISSING_RESULT, ["installed extension list"]),
    ],
    "check_font_size": [
        ("pass", lambda t: (preferences(t, None), {"type": "value", "value": 16}, {}), 1.0, PASSED, []),
        ("value", lambda t: (preferences(t, 16), {"type": "value", "value": 20}, {}), 0.0, VALUE_MISMATCH,
         ["default font size: expected 20, got 16"]),
        ("range", lambda t: ({"default_font_size": 24}, {"type": "range", "min": 16, "max": 24}, {}), 0.0,
         RULE_FAILED, ["24 is not strictly between 16 and 24"]),
        ("not_json", lambda t: (write(t, "Preferences", "{truncated"), {"type": "value", "value": 16}, {}), 0.0,
         UNREADABLE_RESULT, ["Preferences file Preferences is not readable JSON"]),
        ("missing", lambda t: (t / "Preferences", {"type": "value", "value": 16}, {}), 0.0, MISSING_RESULT,
         ["Preferences does not exist"]),
    ],
    "is_shortcut_on_desktop": [
        ("pass", lambda t: ({"a": shortcut(t, "Terminal", "xfce4-terminal")}, {"type": "name", "name": "Terminal"},
                            {}), 1.0, PASSED, []),
        ("fail", lambda t: ([shortcut(t, "Terminal", "xfce4-terminal")], {"type": "exec", "exec": "gnome-terminal"},
                            {}), 0.0, VALUE_MISMATCH, ["no shortcut on the desktop has Exec=gnome-terminal",
                                                       "['xfce4-terminal']"]),
        ("none", lambda t: ({}, {"type": "name", "name": "Terminal"}, {}), 0.0, MISSING_RESULT,
         ["no desktop shortcut"]),
    ],
    "is_in_vm_clickboard": [
        ("pass", lambda t: (GuestText("SELECT 1;\n"), {"expected": "SELECT 1"}, {}), 1.0, PASSED, []),
        ("fail", lambda t: (GuestText("SELECT 2;\n"), {"expected": ["SELECT 1"]}, {}), 0.0, RULE_FAILED,
         ["clipboard does not contain 'SELECT 1'", "it ends: SELECT 2;"]),
    ],
    "check_gnome_favorite_apps": [
        ("pass", lambda t: (GuestText("['vim.desktop', 'firefox.desktop']\n"),
                            {"expected": ["firefox.desktop", "vim.desktop"]}, {}), 1.0, PASSED, []),
        ("fail", lambda t: (GuestText("@as ['firefox.desktop']"), {"expected": ["firefox.desktop", "vim.desktop"]},
                            {}), 0.0, VALUE_MISMATCH, ["favourite apps differ: missing ['vim.desktop']"]),
        ("not_a_list", lambda t: (GuestText("No such key 'favorite-apps'"), {"expected": ["a"]}, {}), 0.0,
         UNREADABLE_RESULT, ["no GSettings string list"]),
    ],
    "check_accessibility_tree": [
        ("pass", lambda t: (a11y(t), TREE_RULE, {}), 1.0, PASSED, []),
        ("text", lambda t: (a11y(t, "Inbox"), TREE_RULE, {}), 0.0, VALUE_MISMATCH,
         ["rule 0: no node selected by", "has the text 'About Profiles'", "['Inbox']"]),
        ("fuzzy", lambda t: (a11y(t, "About Profile"), [{**TREE_RULE[0], "exact": False}], {}),
         pytest.approx(0.96, abs=0.01), VALUE_MISMATCH, ["best fuzzy similarity 0.96"]),
        ("nothing_selected", lambda t: (a11y(t), [{"selectors": ["page-tab[name='Settings']"]}], {}), 0.0,
         STRUCTURE_MISMATCH, ["rule 0:", "selects nothing"]),
        ("not_xml", lambda t: (write(t, "a11y.xml", "<desktop-frame"), TREE_RULE, {}), 0.0, UNREADABLE_RESULT,
         ["not XML"]),
        ("none", lambda t: (None, TREE_RULE, {}), 0.0, MISSING_RESULT, ["accessibility tree"]),
    ],
    # ----------------------------------------------------------------------- Thunderbird
    "check_thunderbird_prefs": [
        ("pass", lambda t: (prefs_js(t, 'user_pref("mail.biff.play_sound", false);'),
                            {"expect": {"mail.biff.play_sound": {"method": "eq", "ref": False}}}, {}), 1.0, PASSED,
         []),
        ("value", lambda t: (prefs_js(t, 'user_pref("mail.biff.play_sound", true);'),
                             {"expect": {"mail.biff.play_sound": {"method": "eq", "ref": False}}}, {}), 0.0,
         VALUE_MISMATCH, ["preference mail.biff.play_sound: expected eq False, got True"]),
        ("regex", lambda t: (prefs_js(t, 'user_pref("extensions.activeThemeID", "default-theme@mozilla.org");'),
                             {"expect": {"extensions.activeThemeID": {"method": "re", "ref": "dark"}}}, {}), 0.0,
         RULE_FAILED, ["expected re 'dark', got 'default-theme@mozilla.org'"]),
        ("unset", lambda t: (prefs_js(t), {"expect": {"mail.biff.play_sound": {"method": "eq", "ref": False}}}, {}),
         0.0, VALUE_MISMATCH, ["mail.biff.play_sound", "not set"]),
        ("unexpect", lambda t: (prefs_js(t, 'user_pref("mail.biff.play_sound", true);'),
                                {"unexpect": {"mail.biff.play_sound": {"method": "eq", "ref": True}}}, {}), 0.0,
         RULE_FAILED, ["mail.biff.play_sound is True, which the unexpect rule eq True forbids"]),
        ("missing", lambda t: (t / "prefs.js", {"expect": {"a": {"method": "eq", "ref": 1}}}, {}), 0.0,
         MISSING_RESULT, ["prefs.js"]),
    ],
    "check_thunderbird_filter": [
        ("pass", lambda t: (filters(t, "no", "yes"), PROMOTIONS, {}), 1.0, PASSED, []),
        ("field", lambda t: (filters(t, "no"), PROMOTIONS, {}), 0.0, VALUE_MISMATCH,
         ["no filter matches expect[0]", "'Promotions'", "enabled: expected 'yes', got 'no'"]),
        ("no_filter", lambda t: (filters(t), PROMOTIONS, {}), 0.0, STRUCTURE_MISMATCH, ["holds no filter"]),
        ("unexpect", lambda t: (filters(t, "yes"), {"unexpect": [{"action": "Move to folder"}]}, {}), 0.0,
         RULE_FAILED, ["the filter 'Promotions' matches unexpect[0]"]),
        ("missing", lambda t: (t / "msgFilterRules.dat", PROMOTIONS, {}), 0.0, MISSING_RESULT,
         ["msgFilterRules.dat does not exist"]),
    ],
    "check_thunderbird_folder": [
        ("pass", lambda t: (mbox(t, "Bills", message("Bill 2"), message("Bill 1")),
                            mbox(t, "gold", message("Bill 1"), message("Bill 2")), {}), 1.0, PASSED, []),
        ("message_missing", lambda t: (mbox(t, "Bills", message("Bill 1")),
                                       mbox(t, "gold", message("Bill 1"), message("Bill 2")), {}), 0.0,
         STRUCTURE_MISMATCH, ["Bills holds 1 message, the gold folder 2", "the message 'Bill 2' of the gold folder"]),
        ("message_extra", lambda t: (mbox(t, "Bills", message("Bill 1"), message("Discount")),
                                     mbox(t, "gold", message("Bill 1")), {}), 0.0, STRUCTURE_MISMATCH,
         ["the message 'Discount' is not in the gold folder"]),
        ("status", lambda t: (mbox(t, "Bills", message("Bill 1", status="0005")), mbox(t, "gold", message("Bill 1")),
                              {}), 0.0, VALUE_MISMATCH,
         ["'Bill 1' differs", "header x-mozilla-status: expected '0001', got '0005'"]),
        ("body", lambda t: (mbox(t, "Bills", message("Bill 1", body="Changed.")), mbox(t, "gold", message("Bill 1")),
                            {}), 0.0, VALUE_MISMATCH, ["body line 1: expected 'Hello.', got 'Changed.'"]),
        ("copies", lambda t: (mbox(t, "Bills", message("Bill 1"), message("Bill 1")),
                              mbox(t, "gold", message("Bill 1")), {"remove_duplicate": False}), 0.0,
         STRUCTURE_MISMATCH, ["'Bill 1' is there 2 times, in the gold folder 1"]),
        ("missing", lambda t: (t / "Bills", mbox(t, "gold", message("Bill 1")), {}), 0.0, MISSING_RESULT,
         ["mail folder file", "Bills does not exist"]),
    ],
}

CASE_PARAMS = [pytest.param(name, *case[1:], id=f"{name}-{case[0]}") for name, cases in CASES.items()
               for case in cases]


@pytest.mark.parametrize("name,build,score,kind,texts", CASE_PARAMS)
def test_score_and_reason(tmp_path, name, build, score, kind, texts):
    result, expected, options = build(tmp_path)
    v = judge(name, METRICS.get(name).func, result, expected, **options)
    assert v == score
    assert v.reason.kind == kind, v.reason
    for text in texts:
        assert text in v.reason.text, v.reason
    if kind != PASSED:
        assert "\n" not in v.reason.text


def test_every_metric_of_these_modules_has_a_right_and_a_wrong_case():
    names = {n for n, e in METRICS.entries.items() if e.func.__module__ in MODULES}
    assert names == set(CASES)
    passing = {n for n, cases in CASES.items() if any(c[3] == PASSED for c in cases)}
    failing = {n for n, cases in CASES.items() if any(c[3] != PASSED for c in cases)}
    assert names - passing == {"infeasible"}  # it passes only through the evaluator: see the test below
    assert failing == names


def test_the_tail_of_a_long_output_is_shown_not_its_head():
    v = judge("check_include_exclude", METRICS.get("check_include_exclude").func, LONG_OUTPUT, EVAL_RULES)
    assert v.reason.text.count("checking table orders") < 40
    assert v.reason.text.endswith("EVAL_FAIL: orders has 3 rows, expected 4")
    assert len(v.reason.text) < 420


def test_the_first_failing_rule_is_the_reason(tmp_path):
    """A later rule that also fails does not hide the first one."""
    path = prefs_js(tmp_path, 'user_pref("a.b", 1);', 'user_pref("c.d", 2);')
    rules = {"expect": {"a.b": {"method": "eq", "ref": 5}, "c.d": {"method": "eq", "ref": 6}}}
    v = judge("check_thunderbird_prefs", METRICS.get("check_thunderbird_prefs").func, path, rules)
    assert "a.b: expected eq 5, got 1" in v.reason.text and "c.d" not in v.reason.text


def test_a_zero_rule_explains_an_a11y_score_before_a_fuzzy_one(tmp_path):
    rules = [{**TREE_RULE[0], "exact": False, "text": "About Profile"},
             {"xpath": "//page-tab[@name='Home']", "text": "Start"}]
    v = judge("check_accessibility_tree", METRICS.get("check_accessibility_tree").func, a11y(tmp_path), rules)
    assert v == 0.0 and v.reason.text.startswith("rule 1:")


# --------------------------------------------------------------------------- through the evaluator


def load(tmp_path: Path, task: dict, files: dict[str, str] | None = None):
    folder = tmp_path / "evaluation_examples" / "examples" / "general" / task["id"]
    folder.mkdir(parents=True)
    for name, text in (files or {}).items():
        (folder / name).write_text(text)
    (folder / f"{task['id']}.json").write_text(json.dumps(task))
    return load_task(folder / f"{task['id']}.json")


TASK_ID = "5e1b2c3d-4f50-4a61-8b72-9c8d7e6f5a41"


def test_an_eval_script_output_reason_reaches_the_verdict(tmp_path):
    task = load(tmp_path, {"id": TASK_ID, "instruction": "x", "config": [], "evaluator": {
        "func": "check_include_exclude", "result": {"type": "local_file", "path": "out.txt"},
        "expected": {"type": "rule", "rules": EVAL_RULES}}},
        files={"out.txt": "checking\nEVAL_FAIL: orders.csv has 3 rows, expected 4\n"})
    v = evaluate(task, SetupContext(controller=None, task=task, cache_dir=tmp_path / "cache"), last_action="DONE")
    assert v == 0.0 and v.reason.kind == RULE_FAILED and v.reason.metric == "check_include_exclude"
    assert "EVAL_FAIL: orders.csv has 3 rows, expected 4" in v.reason.text


@pytest.mark.parametrize("last,score,kind", [("FAIL", 1.0, PASSED), ("DONE", 0.0, INFEASIBLE)])
def test_the_infeasible_marker_is_scored_by_the_last_action(tmp_path, last, score, kind):
    task = load(tmp_path, {"id": TASK_ID, "instruction": "x", "config": [], "evaluator": {"func": "infeasible"}})
    v = evaluate(task, SetupContext(controller=None, task=task, cache_dir=tmp_path / "cache"), last_action=last)
    assert v == score and v.reason.kind == kind

