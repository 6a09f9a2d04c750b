"""The Chromium getters' pure parts: Preferences semantics, URL parsers, page parsing, load-time checks, and
copied SQLite databases. Preferences objects are shaped as Chromium 156 (the images' version) writes them.
The getters themselves run against a real Chromium in tests/setup_live/test_chrome_getters_live.py.
"""
from __future__ import annotations

import shutil
import sqlite3
import uuid

import pytest

from desktop_env.errors import TaskConfigError
from desktop_env.evaluators.getters import chrome_pages as pages
from desktop_env.evaluators.getters import chrome_profile as profile
from desktop_env.evaluators.getters import url_parsing as urls
from desktop_env.evaluators.metrics.browser import is_cookie_deleted
from desktop_env.evaluators.metrics.files import check_direct_json_object
from desktop_env.tasks import TaskSpec


# --------------------------------------------------------------------------- locating the profile
def test_newest_picks_the_file_written_last_and_chromium_on_a_tie():
    candidates = profile.profile_candidates("Preferences")
    assert candidates == ["chromium/Default/Preferences", "google-chrome/Default/Preferences"]
    listing = ("1700000000\t/home/user/.config/chromium/Default/Preferences\n"
               "1700000500\t/home/user/.config/google-chrome/Default/Preferences\n")
    assert profile.newest(listing, candidates) == "/home/user/.config/google-chrome/Default/Preferences"
    tie = listing.replace("1700000500", "1700000000")
    assert profile.newest(tie, candidates) == "/home/user/.config/chromium/Default/Preferences"
    assert profile.newest("", candidates) is None
    assert profile.newest("garbage line\n", candidates) is None


def test_secure_preferences_are_laid_over_preferences():
    prefs = {"extensions": {"settings": {"a": {"path": "/x"}}, "alerts": {}}, "profile": {"name": "Person 1"}}
    secure = {"extensions": {"settings": {"b": {"path": "/y"}}}, "protection": {"super_mac": "00"}}
    merged = profile.merge_preferences(prefs, secure)
    assert merged["extensions"]["settings"] == {"a": {"path": "/x"}, "b": {"path": "/y"}}
    assert merged["extensions"]["alerts"] == {} and merged["profile"]["name"] == "Person 1"
    assert merged["protection"] == {"super_mac": "00"}
    assert profile.merge_preferences(prefs, None) == prefs


# --------------------------------------------------------------------------- settings
def test_search_engine_name_reads_the_mirrored_data_of_current_chromium():
    current = {"default_search_provider_data": {"mirrored_template_url_data": {"short_name": "Microsoft Bing",
                                                                               "keyword": "bing.com"}}}
    older = {"default_search_provider_data": {"template_url_data": {"short_name": "Bing"}}}
    assert profile.search_engine_name(current) == "Microsoft Bing"
    assert profile.search_engine_name(older) == "Bing"
    # Never changed: Preferences names no engine (the built-in default differs between builds).
    assert profile.search_engine_name({"default_search_provider_data": None}) is None
    assert profile.search_engine_name({}) is None


def test_flags_use_chromiums_defaults_for_keys_it_did_not_write():
    fresh = {"safebrowsing": {"event_timestamps": {}}, "profile": {"default_content_setting_values": {
        "has_migrated_local_network_access": True}}}
    assert profile.do_not_track(fresh) is False
    assert profile.safe_browsing(fresh) == "standard"         # safebrowsing.enabled is on by default
    assert profile.opens_new_tab_on_startup(fresh) is True     # session.restore_on_startup defaults to 5
    assert profile.deletes_site_data_on_exit(fresh) is False   # other content settings are not the cookie one
    assert profile.color_scheme(fresh) == "system"
    assert profile.font_sizes(fresh)["default_font_size"] == 16


def test_flags_read_what_the_settings_page_writes():
    prefs = {"enable_do_not_track": True, "safebrowsing": {"enabled": True, "enhanced": True},
             "session": {"restore_on_startup": 1, "startup_urls": []},
             "profile": {"default_content_setting_values": {"cookies": 4}, "name": "Thomas"},
             "browser": {"theme": {"color_scheme2": 2}}, "webkit": {"webprefs": {"default_font_size": 20}}}
    assert profile.do_not_track(prefs) is True
    assert profile.safe_browsing(prefs) == "enhanced"
    assert profile.safe_browsing({"safebrowsing": {"enabled": False, "enhanced": False}}) == "off"
    assert profile.opens_new_tab_on_startup(prefs) is False
    assert profile.opens_new_tab_on_startup({"session": {"restore_on_startup": 5}}) is True
    assert profile.opens_new_tab_on_startup({"session": {"startup_urls": ["https://a"]}}) is True
    assert profile.deletes_site_data_on_exit(prefs) is True
    assert profile.deletes_site_data_on_exit({"profile": {"default_content_setting_values": {"cookies": 1}}}) is False
    assert profile.pref(prefs, "profile.name") == "Thomas"
    assert profile.color_scheme(prefs) == "dark"
    assert profile.color_scheme({"browser": {"theme": {"color_scheme": 1}}}) == "light"  # not migrated yet
    assert profile.color_scheme({"browser": {"theme": {"color_scheme2": True}}}) == "system"
    sizes = profile.font_sizes(prefs)
    assert sizes["default_font_size"] == 20 and sizes["default_fixed_font_size"] == 13


def test_unpacked_extension_paths_and_localized_names():
    prefs = {"extensions": {"settings": {
        "cpnj": {"location": 8, "path": "/home/user/ext", "creation_flags": 38},
        "abcd": {"location": 4, "path": "/home/user/Desktop/helloExtension"},
        "mhjf": {"location": 5, "path": "/usr/lib/chromium/resources/pdf", "manifest": {"name": "PDF"}},
        "webs": {"location": 1, "path": "webs/1.0_0"},
        "old1": {"path": "/opt/legacy"},
        "junk": "not an entry"}}}
    assert profile.unpacked_extension_paths(prefs) == ["/home/user/ext", "/home/user/Desktop/helloExtension",
                                                       "/opt/legacy"]
    messages = {"extName": {"message": "Tab Saver"}}
    assert profile.localized("__MSG_EXTNAME__", messages) == "Tab Saver"
    assert profile.localized("__MSG_other__", messages) == "__MSG_other__"
    assert profile.localized("Plain", None) == "Plain"


def test_copied_database_is_read_as_committed_when_a_write_was_under_way(tmp_path):
    """A History copied while Chromium is in the middle of a write comes with its hot journal; reading
    the copy rolls that write back instead of seeing a half-written database."""
    db = tmp_path / "History"
    con = sqlite3.connect(db, isolation_level=None)
    con.execute("PRAGMA journal_mode=DELETE")
    con.execute("CREATE TABLE urls (id INTEGER PRIMARY KEY, url TEXT, title TEXT, last_visit_time INTEGER)")
    con.executemany("INSERT INTO urls (url, title, last_visit_time) VALUES (?, ?, ?)",
                    [(f"https://site{i}.example/{'x' * 500}", f"page {i}", i) for i in range(200)])
    con.execute("PRAGMA cache_size=1")  # spill the uncommitted pages into the file itself
    con.execute("BEGIN")
    con.execute("DELETE FROM urls WHERE id > 10")
    con.execute("UPDATE urls SET title = 'half-written'")
    copy = tmp_path / "copy" / "History"
    copy.parent.mkdir()
    shutil.copyfile(db, copy)
    journal = db.with_name("History-journal")
    assert journal.exists(), "the write should be under way, with its rollback journal"
    shutil.copyfile(journal, copy.with_name("History-journal"))
    rows = profile.query_rows(copy, "SELECT url, title, last_visit_time FROM urls")
    con.execute("ROLLBACK")
    con.close()
    assert len(rows) == 200 and {t for _, t, _ in rows} == {f"page {i}" for i in range(200)}


# --------------------------------------------------------------------------- URL parsers
def test_query_values_renames_and_splits():
    url = "https://www.example.com/search?q=cheap+flights&from=SEA&to=NYC,BOS&empty="
    assert urls.query_values(url, ["q", "from", "missing", "empty"]) == {
        "q": "cheap flights", "from": "SEA", "missing": "", "empty": ""}
    assert urls.query_values(url, ["from", "to"], replace={"from": "origin"}) == {"to": "NYC,BOS", "origin": "SEA"}
    assert urls.query_values(url, ["to"], split_list=True) == {"to": ["NYC", "BOS"]}
    assert urls.query_values(url, ["q"], replace={"absent": "renamed"}) == {"q": "cheap flights", "renamed": ""}


def test_url_part_counts_slash_separated_parts_from_the_scheme():
    url = "https://www.babycenter.com/baby-names/details/liam-2345?id=7"
    assert urls.url_part(url, 0) == "https:" and urls.url_part(url, 2) == "www.babycenter.com"
    assert urls.url_part(url, 5) == "liam-2345?id=7"
    assert urls.url_part(url, 5, need_delete_id=True) == "liam-2345"
    assert urls.url_part(url, -1, need_delete_id=True) == "liam-2345"
    assert urls.url_part(url, 6) is None


MACYS = ("https://www.macys.com/shop/mens-clothing/mens-shirts/Men_regular_size_t,Price_discount_range,"
         "Sleeve_length/L,50_PERCENT_%20off%20%26%20more,Short%20Sleeve?id=20627")
RULE = {"expected": {"mens_clothing": True, "shirts": True, "Men_regular_size_t": "L",
                     "Price_discount_range": "50_PERCENT_ off & more", "short_sleeve": True}}
KEYS = ["mens_clothing", "shirts", "Men_regular_size_t", "Price_discount_range", "short_sleeve"]


def test_path_facets_pair_the_keys_part_with_the_values_part():
    assert urls.path_facets(MACYS) == {"Men_regular_size_t": "L", "Price_discount_range": "50_PERCENT_ off & more",
                                        "Sleeve_length": "Short Sleeve"}
    single = "https://www.macys.com/shop/mens-clothing/mens-shirts/Men_regular_size_t/XL?id=20627"
    assert urls.path_facets(single) == {"Men_regular_size_t": "XL"}
    assert urls.path_facets("https://www.macys.com/shop/mens-clothing/mens-shirts?id=20627") == {}


def test_url_path_values_score_the_suites_macys_task_both_ways():
    got = urls.url_path_values(MACYS, KEYS)
    assert got == {"mens_clothing": True, "shirts": True, "short_sleeve": True, "Men_regular_size_t": "L",
                   "Price_discount_range": "50_PERCENT_ off & more"}
    assert check_direct_json_object(got, RULE) == 1.0
    wider = MACYS.replace("50_PERCENT_%20off%20%26%20more", "30_PERCENT_%20off%20%26%20more|50_PERCENT_%20off%20%26%20more")
    assert urls.url_path_values(wider, KEYS)["Price_discount_range"] == "30_PERCENT_ off & more"
    assert check_direct_json_object(urls.url_path_values(wider, KEYS), RULE) == 0.0
    narrower = MACYS.replace("50_PERCENT_%20off%20%26%20more", "50_PERCENT_%20off%20%26%20more|60_PERCENT_%20off%20%26%20more")
    assert check_direct_json_object(urls.url_path_values(narrower, KEYS), RULE) == 1.0
    women = MACYS.replace("mens-clothing/mens-shirts", "womens-clothing/womens-tops")
    got = urls.url_path_values(women, KEYS)
    assert got["mens_clothing"] is None and got["shirts"] is None and check_direct_json_object(got, RULE) == 0.0
    by_department = ("https://www.macys.com/shop/mens-clothing/Product_department,Sleeve_length/Shirts,Short%20Sleeve")
    got = urls.url_path_values(by_department, KEYS)
    assert got["shirts"] is True and got["short_sleeve"] is True and got["Men_regular_size_t"] is None


def test_discount_choice():
    assert urls.discount_choice(None) is None and urls.discount_choice("") is None
    assert urls.discount_choice("Up to 25%") == "Up to 25%"
    assert urls.discount_choice("60_PERCENT_ off & more|40_PERCENT_ off & more") == "40_PERCENT_ off & more"
    assert urls.discount_choice("Up to 25%|40_PERCENT_ off & more") == "Up to 25%|40_PERCENT_ off & more"


# --------------------------------------------------------------------------- active_tab_html_parse
class FakePage:
    """A page as PageReader sees it: per selector, the texts of the matching elements."""

    def __init__(self, url: str, by_css: dict, direct: dict | None = None, children: dict | None = None,
                 labels: dict | None = None, xpaths: dict | None = None, inputs: dict | None = None):
        self.url, self.by_css, self.direct = url, by_css, direct or {}
        self.children, self.labels, self.xpaths, self.inputs = children or {}, labels or {}, xpaths or {}, inputs or {}

    def texts(self, css):
        return self.by_css.get(css, [])

    def direct_texts(self, css):
        return self.direct.get(css, [])

    def child_texts(self, css, child, inner=False):
        return self.children.get((css, child, inner), [])

    def label_text(self, label):
        return self.labels.get(label)

    def xpath_text(self, xpath):
        return self.xpaths.get(xpath)

    def input_value(self, xpath):
        return self.inputs.get(xpath)


def test_parse_page_class_category():
    page = FakePage("https://x", {".price": ["$10", "$20"], ".title": ["Flight"], ".tag": ["Wifi", "Meals", "Bar"]},
                    direct={".route": ["SEA", "NYC"]}, children={(".card", "h3", False): ["First card"]})
    spec = {"category": "class", "class_singleObject": {"title": "name", "none": "absent"},
            "class_multiObject": {"price": {"0": "low", "1": "high", "5": "past_end"}},
            "class_multiObject_child": {"route": {"0": "from", "1": "to"}},
            "class_multiObject_only_child": {"card": {"0": "card0"}},
            "class_multiObject_search_exist": {"tag": ["Wifi", "Meals", "is_other_exist"]}}
    assert pages.parse_page(page, spec) == {
        "name": "Flight", "absent": "", "low": "$10", "high": "$20", "past_end": "", "from": "SEA", "to": "NYC",
        "card0": "First card", "Wifi": True, "Meals": True, "is_other_exist": True}
    only_wanted = {"category": "class", "class_multiObject_search_exist": {"tag": ["Wifi", "is_other_exist"]}}
    assert pages.parse_page(FakePage("u", {".tag": ["Wifi"]}), only_wanted) == {"Wifi": True, "is_other_exist": False}


def test_parse_page_label_xpath_input_categories():
    page = FakePage("u", {}, labels={"Departure": "  Departure 10:30 "}, xpaths={"//h1": " Title "},
                    inputs={"//input[@id='q']": " query "})
    assert pages.parse_page(page, {"category": "label", "labelObject": {"Departure": "dep", "Gone": "g"}}) == {
        "dep": "Departure 10:30", "g": ""}
    assert pages.parse_page(page, {"category": "xpath", "xpathObject": {"//h1": "t", "//h2": "u"}}) == {"t": "Title", "u": ""}
    assert pages.parse_page(page, {"category": "input", "inputObject": {"//input[@id='q']": "q"}}) == {"q": "query"}


def test_parse_page_class_and_url_category():
    page = FakePage("https://shop.example/list?brand=Nike&color=Red",
                    {".facet": ["Running", "Men"]}, children={(".nav li.catAllProducts", "span", True): ["Shoes"]})
    spec = {"category": "class&url", "class_multiObject": {"facet": ["running", "men", "kids"]},
            "class_multiObject_li": {"nav": ["Shoes"]},
            "url_include_expected": ["nike", "Blue", "running"],
            "url_include_expected_multichoice": {"red": "Red color", "green": "Green color"}}
    assert pages.parse_page(page, spec) == {"running": True, "men": True, "shoes": True, "is_other_exist": False,
                                            "nike": True, "blue": False, "red color": True, "green color": False}
    other = FakePage("u", {".facet": ["Running", "Sale"]})
    assert pages.parse_page(other, {"category": "class&url", "class_multiObject": {"facet": ["running"]}}) == {
        "running": True, "is_other_exist": True}


# --------------------------------------------------------------------------- load-time checks
def _task(result: dict) -> dict:
    return {"id": str(uuid.uuid4()), "instruction": "x", "config": [],
            "evaluator": {"func": "check_direct_json_object", "result": result,
                          "expected": {"type": "rule", "rules": {"expected": {}}}}}


@pytest.mark.parametrize("result,field", [
    ({"type": "active_tab_html_parse", "category": "css"}, "evaluator.result.category"),
    ({"type": "active_tab_html_parse", "category": "class", "class_multiObject": {"p": {"first": "k"}}},
     "evaluator.result.class_multiObject.p"),
    ({"type": "active_tab_html_parse", "category": "class&url", "url_include_expected": "nike"},
     "evaluator.result.url_include_expected"),
    ({"type": "url_dashPart", "partIndex": "last", "returnType": "string"}, "evaluator.result.partIndex"),
    ({"type": "url_dashPart", "partIndex": 3, "returnType": "json"}, "evaluator.result.key"),
    ({"type": "url_dashPart", "partIndex": 3, "returnType": "list"}, "evaluator.result.returnType"),
    ({"type": "info_from_website", "url": "http://x", "infos": [{"action": "text", "selector": "h1"}]},
     "evaluator.result.infos[0].action"),
    ({"type": "info_from_website", "url": "http://x", "infos": [{"action": "click_and_inner_text", "selector": "a"}]},
     "evaluator.result.infos[0].selector"),
    ({"type": "info_from_website", "url": "http://x", "infos": [{"action": "attribute", "selector": "a"}]},
     "evaluator.result.infos[0].attribute"),
])
def test_bad_fields_fail_when_the_task_loads(result, field):
    with pytest.raises(TaskConfigError) as err:
        TaskSpec.from_json(_task(result))
    assert err.value.field == field


def test_the_suites_fields_load():
    for result in ({"type": "active_tab_html_parse", "goto_prefix": "https://www.", "category": "class",
                    "class_multiObject": {"search-date": {"0": "start", "1": "end"}}},
                   {"type": "url_dashPart", "goto_prefix": "https://www.", "partIndex": -1, "needDeleteId": True,
                    "returnType": "json", "key": "name"},
                   {"type": "info_from_website", "url": "https://x", "backups": ["a"],
                    "infos": [{"action": "inner_text", "selector": "h1"},
                              {"action": "click_and_attribute", "selector": ["a.next", "img"], "attribute": "src"}]},
                   {"type": "cookie_data", "dest": "Cookies"}, {"type": "history", "dest": "History"},
                   {"type": "gotoRecreationPage_and_get_html_content", "selector": "class", "class": "x", "order": "1"}):
        TaskSpec.from_json(_task(result))


def test_cookie_rows_as_cookie_data_returns_them_score_is_cookie_deleted():
    # SELECT * of Chromium's cookies table: creation_utc, host_key, top_frame_site_key, name, value, ...
    rows = [(13350000000000000, ".amazon.com", "", "session-id", "", b"v10..."),
            (13350000000000001, "www.example.org", "", "k", "", b"v10...")]
    assert is_cookie_deleted(rows, {"type": "domains", "domains": [".amazon.com"]}) == 0.0
    assert is_cookie_deleted(rows[1:], {"type": "domains", "domains": [".amazon.com"]}) == 1.0
