"""Chromium and desktop metrics: tabs, bookmarks, cookies, history, extensions, shortcuts, clipboard, a11y tree."""
from __future__ import annotations

import ast
import difflib
import importlib
import json
import logging
import re
import sqlite3
from contextlib import closing
from typing import Any, Iterable
from urllib.parse import urlsplit, urlunsplit

from desktop_env.evaluators.metrics.files import string_list
from desktop_env.evaluators.metrics.utils import (MetricError, OptionError, as_existing_path, expected_value,
                                                  text_of)
from desktop_env.registry import METRICS

logger = logging.getLogger(__name__)
CHROMIUM_DEFAULT_FONT_SIZE = 16  # px, when the Preferences file does not set one


# --------------------------------------------------------------------------- rules and verdicts
def _rule(expected: Any, metric: str, example: str, types: list[str] | None = None) -> dict:
    """The rule object a task gives as ``expected``; with ``types``, its ``type`` must be one of them."""
    if not isinstance(expected, dict):
        raise MetricError(f"{metric}: expected must be a rule object like {example}, got {expected!r}")
    if types and (kind := expected.get("type")) not in types:
        close = difflib.get_close_matches(str(kind), types, n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise MetricError(f"{metric}: unknown rule type {kind!r}{hint} (accepted: {', '.join(types)})")
    return expected


def _field(rule: dict, key: str, metric: str, kind: type, what: str) -> Any:
    """``rule[key]``, checked to be a ``kind``; else a MetricError saying what it must be."""
    value = rule.get(key)
    if not isinstance(value, kind) or (isinstance(value, bool) and kind is not bool):
        raise MetricError(f"{metric}: the rule's {key!r} must be {what}, got {value!r}")
    return value


def _str_list(value: Any, metric: str, key: str) -> list[str]:
    """A list of strings (one string is a list of one); else a MetricError naming ``key``."""
    return string_list(value, metric, repr(key))


def _number(value: Any) -> float | None:
    try:
        return None if isinstance(value, bool) else float(value)
    except (TypeError, ValueError):
        return None


def _verdict(metric: str, ok: bool, what: str, *args: Any) -> float:
    """Log why ``metric`` scored what it did (``what % args``) and return the score."""
    logger.info("%s: " + what + " -> %s", metric, *args, ok)
    return float(ok)


def _json_file(path, what: str) -> Any:
    """The JSON in ``path``, or None (logged) when it is not readable JSON."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        logger.info("the %s file %s is not readable JSON: %s", what, path, exc)
        return None


def _all_in(metric: str, text: Any, items: list[str], where: str) -> float:
    """1 when every item occurs in ``text`` (0 when ``text`` is no string)."""
    if not isinstance(text, str):
        return _verdict(metric, False, "no %s in the result", where)
    absent = [item for item in items if item not in text]
    return _verdict(metric, not absent, "not in the %s: %s", where, absent)


# --------------------------------------------------------------------------- URLs and tabs
def normalize_url(url: str, drop_query: bool = False) -> str:
    """``url`` with the scheme (``http`` when absent) and host lower-cased, and a leading ``www.``, the
    scheme's default port, a trailing ``/`` (and with ``drop_query`` the query) dropped; the fragment is kept."""
    text = url.strip()
    if not re.match(r"^([A-Za-z][A-Za-z0-9+.-]*://|(about|data|mailto|javascript|blob|view-source):)", text):
        text = "http://" + text
    parts = urlsplit(text)
    scheme, host = parts.scheme.lower(), parts.netloc.lower()
    host = host[4:] if host.startswith("www.") else host
    port = {"http": ":80", "https": ":443"}.get(scheme)
    host = host[: -len(port)] if port and host.endswith(port) else host
    return urlunsplit((scheme, host, parts.path.rstrip("/"), "" if drop_query else parts.query, parts.fragment))


def _url_of(result: Any) -> str | None:
    """The URL of a tab: ``{"url": ...}`` (active_tab_info, open_tabs_info) or the URL itself."""
    url = result.get("url") if isinstance(result, dict) else result
    return url if isinstance(url, str) and url.strip() else None


def _active_tab(result: Any, expected: Any, metric: str, drop_query: bool) -> float:
    rule = _rule(expected, metric, '{"type": "url", "url": "https://..."}', ["url"])
    want = _field(rule, "url", metric, str, "a URL")
    url = _url_of(result)
    if url is None:
        return _verdict(metric, False, "no tab URL in the result")
    return _verdict(metric, normalize_url(url, drop_query) == normalize_url(want, drop_query),
                    "%s vs %s", url, want)


@METRICS.register()
def is_expected_active_tab(result: Any, expected: Any) -> float:
    """1 when the active tab shows the rule's URL.

    ``result``: the active tab, ``{"title", "url"}`` (active_tab_info) or its URL (active_url_from_accessTree).
    ``expected``: ``{"type": "url", "url": URL}``; URLs compare after :func:`normalize_url`.
    """
    return _active_tab(result, expected, "is_expected_active_tab", drop_query=False)


@METRICS.register()
def is_expected_active_tab_approximate(result: Any, expected: Any) -> float:
    """As :func:`is_expected_active_tab`, whatever the query string (``?...``) of either URL."""
    return _active_tab(result, expected, "is_expected_active_tab_approximate", drop_query=True)


@METRICS.register()
def is_expected_tabs(result: Any, expected: Any) -> float:
    """1 when the open tabs are exactly the rule's URLs, in any order.

    ``result``: the open tabs, a list of ``{"title", "url"}`` (open_tabs_info) or of URLs.
    ``expected``: ``{"type": "url", "urls": [URL, ...]}``: each URL open as many times as listed and no
    other tab (URLs compared after :func:`normalize_url`).
    """
    metric = "is_expected_tabs"
    rule = _rule(expected, metric, '{"type": "url", "urls": ["https://...", ...]}', ["url"])
    want = _str_list(_field(rule, "urls", metric, list, "a list of URLs"), metric, "urls")
    urls = [_url_of(tab) for tab in result] if isinstance(result, (list, tuple)) else [None]
    if None in urls:
        return _verdict(metric, False, "no list of tabs in the result")
    return _verdict(metric, sorted(map(normalize_url, urls)) == sorted(map(normalize_url, want)),
                    "open %s, expected %s", urls, want)


@METRICS.register()
def is_expected_search_query(result: Any, expected: Any) -> float:
    """1 when the active tab's URL (``{"url"}`` or the URL) matches the rule's regular expression.

    ``expected``: ``{"expect": {"pattern": REGEX}}``, searched for (``re.search``) in the URL.
    """
    metric = "is_expected_search_query"
    rule = _rule(expected, metric, '{"expect": {"pattern": "REGEX"}}')
    pattern = _field(_field(rule, "expect", metric, dict, 'an object {"pattern": REGEX}'), "pattern", metric, str,
                     "a regular expression")
    try:
        regex = re.compile(pattern)
    except re.error as exc:
        raise MetricError(f"{metric}: the pattern {pattern!r} is not a valid regular expression: {exc}") from None
    url = _url_of(result)
    if url is None:
        return _verdict(metric, False, "no tab URL in the result")
    return _verdict(metric, regex.search(url) is not None, "%s vs /%s/", url, pattern)


@METRICS.register()
def is_added_to_steam_cart(result: Any, expected: Any) -> float:
    """1 when the cart page's text names every item of the rule.

    ``result``: the cart page, ``{"content": TEXT, ...}`` (page_info) or its text.
    ``expected``: ``{"items": [NAME, ...]}``; each must occur in the page's text.
    """
    metric = "is_added_to_steam_cart"
    items = _str_list(_rule(expected, metric, '{"items": ["Game name"]}').get("items"), metric, "items")
    content = result.get("content") if isinstance(result, dict) else text_of(result)
    return _all_in(metric, content, items, "cart page")


# --------------------------------------------------------------------------- bookmarks
def _bookmark_roots(result: Any) -> dict | None:
    """The ``roots`` of Chromium's Bookmarks file, given as the file, its JSON or the roots themselves."""
    path = as_existing_path(result)
    data = result if path is None else _json_file(path, "Bookmarks")
    if isinstance(data, dict) and isinstance(data.get("roots"), dict):
        data = data["roots"]
    return data if isinstance(data, dict) and isinstance(data.get("bookmark_bar"), dict) else None


def _children(node: dict, kind: str) -> list[dict]:
    return [c for c in node.get("children") or [] if isinstance(c, dict) and c.get("type") == kind]


def _url_set(urls: Iterable[Any]) -> set[str]:
    return {normalize_url(u) for u in urls if isinstance(u, str)}


def _choose_one_each(groups: list[set[str]], urls: set[str]) -> bool:
    """Whether one URL can be picked from each group so that the picks are exactly ``urls``: every group
    holds one of them and a matching (augmenting paths) gives each URL a group of its own."""
    if any(not g & urls for g in groups):
        return False
    owner: dict[int, str] = {}

    def place(url: str, seen: set[int]) -> bool:
        for i, group in enumerate(groups):
            if url in group and i not in seen:
                seen.add(i)
                if i not in owner or place(owner[i], seen):
                    owner[i] = url
                    return True
        return False

    return all(place(url, set()) for url in urls)


@METRICS.register()
def is_expected_bookmarks(result: Any, expected: Any) -> float:
    """1 when the bookmarks bar holds what the rule says.

    ``result``: Chromium's Bookmarks file (a ``Path``), its JSON, or its ``roots`` object (bookmarks).
    ``expected``: ``{"type": "bookmark_bar_folders_names", "names": [...]}``: the folders on the bar
    have exactly these names; ``{"type": "bookmark_bar_websites_urls", "urls": [...]}``: the links on
    the bar are exactly these URLs (as sets, URLs after :func:`normalize_url`); or ``{"type":
    "liked_authors_websites_urls", "names": [...], "urls": [URL or [URL, ...], ...]}``: a folder on the
    bar named one of ``names`` (default "Liked Authors") holds exactly one link per entry of ``urls``,
    an entry being a URL or a list of acceptable ones.
    """
    metric = "is_expected_bookmarks"
    kinds = ["bookmark_bar_folders_names", "bookmark_bar_websites_urls", "liked_authors_websites_urls"]
    rule = _rule(expected, metric, '{"type": "bookmark_bar_folders_names", "names": [...]}', kinds)
    kind = rule["type"]
    if kind == kinds[0]:
        names = _str_list(rule.get("names"), metric, "names")
    elif kind == kinds[1]:
        want = _url_set(_str_list(rule.get("urls"), metric, "urls"))
    else:
        names = _str_list(rule.get("names", ["Liked Authors"]), metric, "names")
        entries = rule.get("urls")
        if not isinstance(entries, list):
            raise MetricError(f"{metric}: 'urls' must be a list of URLs or lists of URLs, got {entries!r}")
        groups = [_url_set(_str_list(e, metric, "urls[]")) for e in entries]
    roots = _bookmark_roots(result)
    if roots is None:
        return _verdict(metric, False, "no Chromium bookmarks in the result")
    bar = roots["bookmark_bar"]
    if kind == kinds[0]:
        got_names = {f.get("name") for f in _children(bar, "folder")}
        return _verdict(metric, got_names == set(names), "folders on the bar %s, expected %s", got_names, names)
    if kind == kinds[1]:
        got = _url_set(u.get("url") for u in _children(bar, "url"))
        return _verdict(metric, got == want, "links on the bar %s, expected %s", sorted(got), sorted(want))
    folder = next((f for f in _children(bar, "folder") if f.get("name") in names), None)
    got = _url_set(u.get("url") for u in _children(folder, "url")) if folder is not None else set()
    return _verdict(metric, folder is not None and _choose_one_each(groups, got), "folder %s holds %s",
                    folder and folder.get("name"), sorted(got))


# --------------------------------------------------------------------------- cookies and history
def _profile_column(result: Any, sql: str, index: int, key: str) -> list[str] | None:
    """One text column of a Chromium profile database: read with ``sql`` from the SQLite file (a
    ``Path``), or taken from the rows a getter read (tuples: item ``index``; dicts: ``key``; or strings)."""
    path = as_existing_path(result)
    if path is not None:
        try:
            with closing(sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)) as con:
                return [row[0] for row in con.execute(sql) if isinstance(row[0], str)]
        except sqlite3.Error as exc:
            logger.info("%s cannot be queried with %r: %s", path, sql, exc)
            return None
    if not isinstance(result, (list, tuple)):
        return None
    values = [row if isinstance(row, str) else row.get(key) if isinstance(row, dict)
              else row[index] if isinstance(row, (list, tuple)) and len(row) > index else None for row in result]
    return values if all(isinstance(v, str) for v in values) else None


def _bare_domain(domain: str) -> str:
    d = domain.strip().lower().lstrip(".")
    return d[4:] if d.startswith("www.") else d


def _cookie_of(host_key: str, domain: str) -> bool:
    """Whether a cookie stored for ``host_key`` belongs to ``domain``: the same site give or take a
    leading dot or ``www.``, or a subdomain of a domain written with a leading dot (``.amazon.com``)."""
    host, want = _bare_domain(host_key), _bare_domain(domain)
    return host == want or (domain.strip().startswith(".") and host.endswith("." + want))


@METRICS.register()
def is_cookie_deleted(result: Any, expected: Any) -> float:
    """1 when no cookie of the rule's domains is left.

    ``result``: Chromium's ``Cookies`` SQLite file (a ``Path``; ``cookies.host_key``) or the rows a getter
    read from it (cookie_data: ``SELECT *`` tuples, item 1 being ``host_key``; dicts; host strings).
    ``expected``: ``{"type": "domains", "domains": [DOMAIN, ...]}``, matched as :func:`_cookie_of` says.
    """
    metric = "is_cookie_deleted"
    rule = _rule(expected, metric, '{"type": "domains", "domains": [".example.com"]}', ["domains"])
    domains = _str_list(rule.get("domains"), metric, "domains")
    hosts = _profile_column(result, "SELECT host_key FROM cookies", 1, "host_key")
    if hosts is None:
        return _verdict(metric, False, "no Chromium cookies in the result")
    left = sorted({h for h in hosts for d in domains if _cookie_of(h, d)})
    return _verdict(metric, not left, "cookies left for %s", left)


@METRICS.register()
def check_history_deleted(result: Any, expected: Any) -> float:
    """1 when no URL in the browsing history contains any of the rule's keywords (case-insensitively).

    ``result``: Chromium's ``History`` SQLite file (a ``Path``; ``urls.url``) or the rows a getter read
    from it (history: tuples whose item 0 is the URL; dicts with ``url``; URLs).
    ``expected``: ``{"type": "keywords", "keywords": [WORD, ...]}``.
    """
    metric = "check_history_deleted"
    rule = _rule(expected, metric, '{"type": "keywords", "keywords": ["example"]}', ["keywords"])
    keywords = [k.lower() for k in _str_list(rule.get("keywords"), metric, "keywords")]
    urls = _profile_column(result, "SELECT url FROM urls", 0, "url")
    if urls is None:
        return _verdict(metric, False, "no Chromium history in the result")
    left = [u for u in urls if any(k in u.lower() for k in keywords)]
    return _verdict(metric, not left, "still in the history: %s", left[:10])


# --------------------------------------------------------------------------- extensions and settings
@METRICS.register()
def is_extension_installed(result: Any, expected: Any) -> float:
    """1 when a command's output contains (``contain``) or lacks (``not_contain``) the rule's text.

    ``result``: a command's output (vm_command_line, e.g. ``code --list-extensions``) or a text file.
    ``expected``: ``{"type": "contain" | "not_contain", "expected": TEXT}``, a case-sensitive substring
    (an extension id such as ``ms-python.python``).
    """
    metric = "is_extension_installed"
    rule = _rule(expected, metric, '{"type": "contain", "expected": "publisher.extension"}',
                 ["contain", "not_contain"])
    needle = _field(rule, "expected", metric, str, "the text to look for")
    text = text_of(result)
    if text is None:
        return _verdict(metric, False, "no command output in the result")
    return _verdict(metric, (needle in text) == (rule["type"] == "contain"), "%s %r", rule["type"], needle)


@METRICS.register()
def is_expected_installed_extensions(result: Any, expected: Any) -> float:
    """1 when every expected Chromium extension is installed (others may be too).

    ``result``: the installed extensions' names (find_installed_extension_name), a list or one per line.
    ``expected``: ``{"expected": [NAME, ...]}``.
    """
    metric = "is_expected_installed_extensions"
    want = _str_list(expected_value(_rule(expected, metric, '{"expected": ["name"]}')), metric, "expected")
    if isinstance(result, (list, tuple, set, frozenset)):
        names = {str(x) for x in result}
    else:
        names = {line.strip() for line in (text_of(result) or "").splitlines() if line.strip()}
    if not names:
        return _verdict(metric, False, "no installed extensions in the result")
    absent = sorted(set(want) - names)
    return _verdict(metric, not absent, "not installed: %s (installed: %s)", absent, sorted(names))


def _font_size(result: Any) -> float | None:
    """``{"default_font_size": N}`` (chrome_font_size), a number, or the Preferences file (a ``Path``)."""
    path = as_existing_path(result)
    if path is not None:
        prefs = _json_file(path, "Preferences")
        try:
            result = prefs["webkit"]["webprefs"].get("default_font_size", CHROMIUM_DEFAULT_FONT_SIZE)
        except (TypeError, KeyError, AttributeError):  # no such section: the size was never changed
            result = CHROMIUM_DEFAULT_FONT_SIZE if isinstance(prefs, dict) else None
    elif isinstance(result, dict):
        result = result.get("default_font_size")
    return _number(result)


@METRICS.register()
def check_font_size(result: Any, expected: Any) -> float:
    """1 when Chromium's default font size is the rule's value, or strictly inside its range.

    ``result``: ``{"default_font_size": N}`` (chrome_font_size), the number, or the ``Preferences`` file
    (a ``Path``; ``webkit.webprefs.default_font_size``, 16 when unset).
    ``expected``: ``{"type": "value", "value": N}`` or ``{"type": "range", "min": A, "max": B}`` (A < size < B).
    """
    metric = "check_font_size"
    rule = _rule(expected, metric, '{"type": "value", "value": 20}', ["value", "range"])
    keys = ["value"] if rule["type"] == "value" else ["min", "max"]
    bounds = [_number(rule.get(k)) for k in keys]
    if None in bounds:
        raise MetricError(f"{metric}: a {rule['type']!r} rule needs the numbers {keys}, got {rule!r}")
    size = _font_size(result)
    if size is None:
        return _verdict(metric, False, "no font size in the result")
    ok = size == bounds[0] if len(bounds) == 1 else bounds[0] < size < bounds[1]
    return _verdict(metric, ok, "font size %s, rule %s", size, rule)


# --------------------------------------------------------------------------- desktop
def _desktop_key(text: str, key: str) -> str | None:
    """``key``'s value in a ``.desktop`` file's ``[Desktop Entry]`` group (which comes before any other group)."""
    main = re.split(r"^\s*\[(?!Desktop Entry\]).*\]\s*$", text, maxsplit=1, flags=re.M)[0]
    found = re.search(rf"^\s*{key}\s*=[ \t]*(.*?)\s*$", main, flags=re.M)
    return found.group(1) if found else None


@METRICS.register()
def is_shortcut_on_desktop(result: Any, expected: Any) -> float:
    """1 when a shortcut on the desktop has the rule's name (or command).

    ``result``: the desktop's ``.desktop`` files as ``{path: content}`` (shortcuts_on_desktop), a list of
    contents, or one file (a ``Path``).
    ``expected``: ``{"type": "name", "name": NAME}`` or ``{"type": "exec", "exec": COMMAND}``: the
    ``Name=`` or ``Exec=`` of the ``[Desktop Entry]``, compared exactly.
    """
    metric = "is_shortcut_on_desktop"
    rule = _rule(expected, metric, '{"type": "name", "name": "Shortcut name"}', ["name", "exec"])
    want = _field(rule, rule["type"], metric, str, f"the shortcut's {rule['type']}")
    items = list(result.values()) if isinstance(result, dict) else result if isinstance(result, list) else [result]
    texts = [t for t in map(text_of, items) if t is not None]
    if not texts:
        return _verdict(metric, False, "no desktop shortcut in the result")
    key = "Name" if rule["type"] == "name" else "Exec"
    found = [_desktop_key(t, key) for t in texts]
    return _verdict(metric, want in found, "%s= of the shortcuts %s, expected %r", key, found, want)


@METRICS.register()
def is_in_vm_clickboard(result: Any, expected: Any) -> float:
    """1 when the VM's clipboard holds every expected text.

    ``result``: the clipboard's text (vm_command_line, e.g. ``xsel --clipboard --output``).
    ``expected``: ``{"expected": TEXT or [TEXT, ...]}``; each must occur in the clipboard. The two may
    come in the other order (the suite's own signature takes the rule first).
    """
    metric = "is_in_vm_clickboard"
    if isinstance(result, dict) and not isinstance(expected, dict):
        result, expected = expected, result
    want = _str_list(expected_value(_rule(expected, metric, '{"expected": "text"}')), metric, "expected")
    return _all_in(metric, text_of(result), want, "clipboard")


def _gsettings_list(result: Any) -> list[str] | None:
    """A GSettings string array as ``gsettings get`` prints it (``['a.desktop']``, ``@as []``), or a list."""
    if isinstance(result, (list, tuple)):
        return [str(x) for x in result]
    text = (text_of(result) or "").strip()
    try:  # literal_eval evaluates literals only: the guest's text cannot run anything
        value = ast.literal_eval(text[4:] if text.startswith("@as ") else text)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        value = None
    ok = isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value)
    return list(value) if ok else None


@METRICS.register()
def check_gnome_favorite_apps(result: Any, expected: Any) -> float:
    """1 when the dock's favourite apps are exactly the expected ones, in any order.

    The suite reads them with ``gsettings get org.gnome.shell favorite-apps``. This project's desktop is
    XFCE, which has no such key: that GNOME getter is what is unavailable here. The metric itself only
    compares the list the getter returns, and works on any such list.

    ``result``: the list as ``gsettings get`` prints it (``['firefox.desktop', 'vim.desktop']``) or a list.
    ``expected``: ``{"expected": ["firefox.desktop", ...]}``.
    """
    metric = "check_gnome_favorite_apps"
    want = _str_list(expected_value(_rule(expected, metric, '{"expected": ["a.desktop"]}')), metric, "expected")
    apps = _gsettings_list(result)
    if apps is None:
        return _verdict(metric, False, "no GSettings string list in the result")
    return _verdict(metric, sorted(apps) == sorted(want), "favourites %s, expected %s", apps, want)


# --------------------------------------------------------------------------- accessibility tree
#: Prefix -> namespace of the accessibility tree's attribute groups, per OS. The in-VM server
#: (vm_server/a11y.py) writes the "ubuntu" ones; rules use these prefixes in XPath and selectors.
_A11Y_PATHS = {"st": "state", "attr": "attributes", "cp": "component", "doc": "document", "docattr":
               "document/attributes", "txt": "text", "val": "value", "act": "action", "class": "class", "role": "role"}
A11Y_NAMESPACES = {os_: {p: f"https://accessibility.{os_}.example.org/ns/{_A11Y_PATHS[p]}" for p in prefixes.split()}
                   for os_, prefixes in (("ubuntu", "st attr cp doc docattr txt val act"),
                                         ("windows", "st attr cp doc docattr txt val act class"),
                                         ("macos", "st attr cp doc txt val act role"))}


def _require(module: str, package: str, metric: str):
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise MetricError(f"{metric} needs the Python package {package!r}: pip install {package} ({exc})") from None


def check_accessibility_tree_options(options: dict) -> None:
    """Validate check_accessibility_tree's options when a task is loaded (OptionError: an unknown ``osname``)."""
    osname = options.get("osname", "ubuntu")
    if osname not in A11Y_NAMESPACES:
        close = difflib.get_close_matches(str(osname), list(A11Y_NAMESPACES), n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise OptionError(f"unknown osname {osname!r}{hint} (accepted: {', '.join(A11Y_NAMESPACES)})", "osname")


def _a11y_rules(expected: Any, metric: str) -> list[dict]:
    rules = expected_value(expected, "rules")
    rules = [rules] if isinstance(rules, dict) else rules
    if not isinstance(rules, list) or not rules:
        raise MetricError(f"{metric}: expected must be a non-empty list of rules {{\"xpath\" or \"selectors\", "
                          f"\"text\"?, \"exact\"?}}, got {expected!r}")
    for i, rule in enumerate(rules):
        if not isinstance(rule, dict) or not ("xpath" in rule or "selectors" in rule):
            raise MetricError(f"{metric}: rule {i} needs an 'xpath' or 'selectors', got {rule!r}")
        if "xpath" in rule:
            _field(rule, "xpath", metric, str, "an XPath")
        else:
            _str_list(rule["selectors"], metric, "selectors")
        for key, kind, what in (("text", str, "the expected text"), ("exact", bool, "true or false")):
            if key in rule:
                _field(rule, key, metric, kind, what)
    return rules


def _a11y_query(rule: dict, namespaces: dict, metric: str, index: int):
    """The compiled query of a rule: its XPath (preferred when both are given) or its CSS selectors joined."""
    etree = _require("lxml.etree", "lxml", metric)
    if "xpath" in rule:
        try:
            return etree.XPath(rule["xpath"], namespaces=namespaces)
        except etree.XPathError as exc:
            raise MetricError(f"{metric}: rule {index}'s xpath {rule['xpath']!r} is not valid XPath: {exc}") from None
    _require("cssselect", "cssselect", metric)
    from lxml.cssselect import CSSSelector, SelectorError  # present: cssselect imported just above

    css = ", ".join(_str_list(rule["selectors"], metric, "selectors"))
    try:
        return CSSSelector(css, namespaces=namespaces)
    except (SelectorError, etree.XPathError) as exc:
        raise MetricError(f"{metric}: rule {index}'s selectors {css!r} are not valid: {exc}") from None


def _a11y_tree(result: Any, etree):
    """The parsed tree, or None when the result is missing or not XML."""
    text = text_of(result.get("AT") if isinstance(result, dict) else result)  # a dict: the server's reply
    if not text or not text.strip():
        return None
    # The XML comes from the guest: never resolve its entities nor fetch anything it names.
    parser = etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=True, load_dtd=False)
    try:
        return etree.fromstring(text.encode("utf-8"), parser)
    except (etree.XMLSyntaxError, ValueError) as exc:
        logger.info("the accessibility tree is not XML: %s", exc)
        return None


@METRICS.register(check=check_accessibility_tree_options)
def check_accessibility_tree(result: Any, expected: Any, osname: str = "ubuntu") -> float:
    """Score the accessibility tree against rules that select nodes and check their text.

    ``result``: the tree as the in-VM server returns it (accessibility_tree): XML whose elements are roles
    (``page-tab-list``) with a ``name``, namespaced state/attribute/geometry attributes (``st:focused``,
    ``attr:id``) and the text as element text; or an XML file (a ``Path``).
    ``expected``: rules ``[{"xpath" | "selectors", "text"?, "exact"?}, ...]`` (or ``{"rules": [...]}``). A
    rule selects nodes with an XPath 1.0 (preferred) or CSS selectors (joined with ", "; namespaced
    attributes written ``attr|id``); selecting nothing scores 0. With ``text`` it scores 1 when a node's
    text equals it (``exact``, the default) or else the best rapidfuzz ratio / 100; the product is the score.
    ``osname``: "ubuntu" (default), "windows" or "macos": what the prefixes mean where the tree does not
    declare them. MetricError: an unknown ``osname``, a rule without a query, an invalid XPath or selector.
    """
    metric = "check_accessibility_tree"
    check_accessibility_tree_options({"osname": osname})
    etree = _require("lxml.etree", "lxml", metric)
    rules = _a11y_rules(expected, metric)
    for i, rule in enumerate(rules):  # a bad rule is an error even when there is no tree to score
        _a11y_query(rule, A11Y_NAMESPACES[osname], metric, i)
    tree = _a11y_tree(result, etree)
    if tree is None:
        return _verdict(metric, False, "no accessibility tree (XML) in the result")
    namespaces = {**A11Y_NAMESPACES[osname], **{p: uri for p, uri in tree.nsmap.items() if p}}
    score = 1.0
    for i, rule in enumerate(rules):
        try:
            found = _a11y_query(rule, namespaces, metric, i)(tree)
        except etree.XPathError as exc:
            raise MetricError(f"{metric}: rule {i} cannot be evaluated: {exc}") from None
        nodes = found if isinstance(found, list) else ([found] if found else [])
        if not nodes:
            return _verdict(metric, False, "rule %d selects nothing: %s", i, rule.get("xpath", rule.get("selectors")))
        if "text" in rule:
            texts = [(n.text or "") if hasattr(n, "tag") else str(n) for n in nodes]
            if rule.get("exact", True):
                rule_score = float(rule["text"] in texts)
            else:
                fuzz = _require("rapidfuzz.fuzz", "rapidfuzz", metric)
                rule_score = max(fuzz.ratio(t, rule["text"]) / 100.0 for t in texts)
            logger.info("%s: rule %d, texts %s vs %r -> %.3f", metric, i, texts[:5], rule["text"], rule_score)
            score *= rule_score
    return score
