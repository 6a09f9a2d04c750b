"""Chromium and desktop metrics: tabs, bookmarks, cookies, history, extensions, shortcuts, clipboard, a11y tree."""
from __future__ import annotations

import difflib
import importlib
import logging
import os
import re
from typing import Any

from desktop_env.evaluators.metrics.browser_parts import (A11Y_NAMESPACES, a11y_tree, bookmark_roots, children,
                                                          choose_one_each, cookie_of, desktop_key, font_size,
                                                          gsettings_list, normalize_url, nothing, number,
                                                          profile_column, url_of, url_set)
from desktop_env.evaluators.metrics.files import missing_file, string_list
from desktop_env.evaluators.metrics.utils import (MetricError, OptionError, expected_value, items_difference,
                                                  text_of, text_tail)
from desktop_env.evaluators.reasons import (MISSING_RESULT, RULE_FAILED, STRUCTURE_MISMATCH, UNREADABLE_RESULT,
                                            VALUE_MISMATCH, explain, fail, shown)
from desktop_env.registry import METRICS

logger = logging.getLogger(__name__)


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


def _verdict(metric: str, ok: bool, kind: str, text: str) -> float:
    """The score of a check that held (``ok``) or not; a failure is logged and explained (``kind``, ``text``)."""
    if not ok:
        logger.info("%s: %s", metric, text)
        explain(kind, text)
    return float(ok)


def _all_in(metric: str, result: Any, text: Any, items: list[str], where: str) -> float:
    """1 when every item occurs in ``text``, read from ``result`` (0 when ``text`` is no string)."""
    if not isinstance(text, str):
        return _verdict(metric, False, MISSING_RESULT, nothing(result, f"{where} text"))
    absent = [item for item in items if item not in text]
    return _verdict(metric, not absent, RULE_FAILED,
                    f"the {where} does not contain {shown(absent[0]) if absent else ''} ({len(absent)} of "
                    f"{len(items)} expected texts missing); {text_tail(text)}")


# --------------------------------------------------------------------------- URLs and tabs
def _active_tab(result: Any, expected: Any, metric: str, drop_query: bool) -> float:
    rule = _rule(expected, metric, '{"type": "url", "url": "https://..."}', ["url"])
    want = _field(rule, "url", metric, str, "a URL")
    url = url_of(result)
    if url is None:
        return _verdict(metric, False, MISSING_RESULT, f"no tab URL in the result ({shown(result)})")
    ignoring = " (the query strings ignored)" if drop_query else ""
    return _verdict(metric, normalize_url(url, drop_query) == normalize_url(want, drop_query), VALUE_MISMATCH,
                    f"the active tab's URL: expected {shown(want)}, got {shown(url)}{ignoring}")


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
    urls = [url_of(tab) for tab in result] if isinstance(result, (list, tuple)) else [None]
    if None in urls:
        return _verdict(metric, False, MISSING_RESULT, f"no list of tabs with URLs in the result ({shown(result)})")
    got, expected_urls = sorted(map(normalize_url, urls)), sorted(map(normalize_url, want))
    return _verdict(metric, got == expected_urls, VALUE_MISMATCH,
                    f"the open tabs differ: {items_difference(got, expected_urls)} (open: {shown(urls)})")


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
    url = url_of(result)
    if url is None:
        return _verdict(metric, False, MISSING_RESULT, f"no tab URL in the result ({shown(result)})")
    return _verdict(metric, regex.search(url) is not None, RULE_FAILED,
                    f"the active tab's URL {shown(url)} does not match the pattern {shown(pattern)}")


@METRICS.register()
def is_added_to_steam_cart(result: Any, expected: Any) -> float:
    """1 when the cart page's text names every item of the rule.

    ``result``: the cart page, ``{"content": TEXT, ...}`` (page_info) or its text.
    ``expected``: ``{"items": [NAME, ...]}``; each must occur in the page's text.
    """
    metric = "is_added_to_steam_cart"
    items = _str_list(_rule(expected, metric, '{"items": ["Game name"]}').get("items"), metric, "items")
    content = result.get("content") if isinstance(result, dict) else text_of(result)
    return _all_in(metric, result, content, items, "cart page")


# --------------------------------------------------------------------------- bookmarks
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
        want = url_set(_str_list(rule.get("urls"), metric, "urls"))
    else:
        names = _str_list(rule.get("names", ["Liked Authors"]), metric, "names")
        entries = rule.get("urls")
        if not isinstance(entries, list):
            raise MetricError(f"{metric}: 'urls' must be a list of URLs or lists of URLs, got {entries!r}")
        groups = [url_set(_str_list(e, metric, "urls[]")) for e in entries]
    roots = bookmark_roots(result)
    if roots is None:
        return _verdict(metric, False, MISSING_RESULT, nothing(result, "Chromium Bookmarks file"))
    bar = roots["bookmark_bar"]
    if kind == kinds[0]:
        got_names = {f.get("name") for f in children(bar, "folder")}
        return _verdict(metric, got_names == set(names), VALUE_MISMATCH, f"the folders on the bookmarks bar differ: "
                        f"{items_difference(sorted(map(str, got_names)), sorted(set(names)))}")
    if kind == kinds[1]:
        got = url_set(u.get("url") for u in children(bar, "url"))
        return _verdict(metric, got == want, VALUE_MISMATCH,
                        f"the links on the bookmarks bar differ: {items_difference(sorted(got), sorted(want))}")
    folders = [f.get("name") for f in children(bar, "folder")]
    folder = next((f for f in children(bar, "folder") if f.get("name") in names), None)
    if folder is None:
        return _verdict(metric, False, STRUCTURE_MISMATCH, f"no folder named {' or '.join(map(shown, names))} on "
                                                          f"the bookmarks bar (folders: {shown(folders)})")
    got = url_set(u.get("url") for u in children(folder, "url"))
    return _verdict(metric, choose_one_each(groups, got), VALUE_MISMATCH,
                    _liked_links_difference(folder.get("name"), groups, got))


def _liked_links_difference(name: str, groups: list[set[str]], got: set[str]) -> str:
    """Why the links ``got`` of the folder ``name`` do not match one per entry of ``groups``, for a reason."""
    unmatched = next((g for g in groups if not g & got), None)
    if unmatched is not None:
        return (f"the bookmarks folder {name!r} has no link to {' or '.join(map(shown, sorted(unmatched)))} "
                f"(links: {shown(sorted(got))})")
    return (f"the bookmarks folder {name!r} holds {len(got)} links {shown(sorted(got))}, which do not match the "
            f"{len(groups)} expected entries one to one")


# --------------------------------------------------------------------------- cookies and history
@METRICS.register()
def is_cookie_deleted(result: Any, expected: Any) -> float:
    """1 when no cookie of the rule's domains is left.

    ``result``: Chromium's ``Cookies`` SQLite file (a ``Path``; ``cookies.host_key``) or the rows a getter
    read from it (cookie_data: ``SELECT *`` tuples, item 1 being ``host_key``; dicts; host strings).
    ``expected``: ``{"type": "domains", "domains": [DOMAIN, ...]}``, matched as :func:`cookie_of` says.
    """
    metric = "is_cookie_deleted"
    rule = _rule(expected, metric, '{"type": "domains", "domains": [".example.com"]}', ["domains"])
    domains = _str_list(rule.get("domains"), metric, "domains")
    hosts = profile_column(result, "SELECT host_key FROM cookies", 1, "host_key")
    if hosts is None:
        return _verdict(metric, False, MISSING_RESULT, nothing(result, "Chromium Cookies database"))
    left = sorted({h for h in hosts for d in domains if cookie_of(h, d)})
    return _verdict(metric, not left, RULE_FAILED,
                    f"cookies are left for {shown(left)}, which the rule's domains {shown(domains)} cover")


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
    urls = profile_column(result, "SELECT url FROM urls", 0, "url")
    if urls is None:
        return _verdict(metric, False, MISSING_RESULT, nothing(result, "Chromium History database"))
    left = [u for u in urls if any(k in u.lower() for k in keywords)]
    first = left[0] if left else ""
    keyword = next((k for k in keywords if k in first.lower()), "")
    return _verdict(metric, not left, RULE_FAILED, f"the history still holds {shown(first)}, which contains the "
                                                   f"keyword {shown(keyword)} ({len(left)} such URLs in all)")


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
        return _verdict(metric, False, MISSING_RESULT, missing_file(result, "command output"))
    contain = rule["type"] == "contain"
    what = f"does not contain {shown(needle)}" if contain else f"contains {shown(needle)}, which it must not"
    return _verdict(metric, (needle in text) == contain, RULE_FAILED, f"the output {what}; {text_tail(text)}")


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
        return _verdict(metric, False, MISSING_RESULT, nothing(result, "installed extension list"))
    absent = sorted(set(want) - names)
    return _verdict(metric, not absent, RULE_FAILED,
                    f"the extensions {shown(absent)} are not installed (installed: {shown(sorted(names))})")


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
    bounds = [number(rule.get(k)) for k in keys]
    if None in bounds:
        raise MetricError(f"{metric}: a {rule['type']!r} rule needs the numbers {keys}, got {rule!r}")
    size = font_size(result)
    if size is None:
        what = "Chromium Preferences file" if isinstance(result, os.PathLike) else "default font size"
        return _verdict(metric, False, MISSING_RESULT, nothing(result, what))
    if len(bounds) == 1:
        return _verdict(metric, size == bounds[0], VALUE_MISMATCH,
                        f"the default font size: expected {bounds[0]:g}, got {size:g}")
    return _verdict(metric, bounds[0] < size < bounds[1], RULE_FAILED,
                    f"the default font size {size:g} is not strictly between {bounds[0]:g} and {bounds[1]:g}")


# --------------------------------------------------------------------------- desktop
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
        return _verdict(metric, False, MISSING_RESULT, nothing(result, "desktop shortcut"))
    key = "Name" if rule["type"] == "name" else "Exec"
    found = [desktop_key(t, key) for t in texts]
    return _verdict(metric, want in found, VALUE_MISMATCH,
                    f"no shortcut on the desktop has {key}={want}; their {key}= values: {shown(found)}")


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
    return _all_in(metric, result, text_of(result), want, "clipboard")


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
    apps = gsettings_list(result)
    if apps is None:
        kind = UNREADABLE_RESULT if (text_of(result) or "").strip() else MISSING_RESULT
        return _verdict(metric, False, kind, f"no GSettings string list in the result ({shown(result)})")
    return _verdict(metric, sorted(apps) == sorted(want), VALUE_MISMATCH,
                    f"the favourite apps differ: {items_difference(sorted(apps), sorted(want))}")


# --------------------------------------------------------------------------- accessibility tree
def _require(module: str, package: str, metric: str):
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        from desktop_env.extras import package_hint

        raise MetricError(f"{metric} needs the Python package {package!r} ({package_hint(module, package)}; "
                          f"{exc})") from None


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
    tree = a11y_tree(result, etree)
    if tree is None:
        return 0.0
    namespaces = {**A11Y_NAMESPACES[osname], **{p: uri for p, uri in tree.nsmap.items() if p}}
    score = 1.0
    # the reason of the first rule that scored 0, else of the first that scored below 1 (a fuzzy match)
    zero: tuple[str, str] | None = None
    partial: tuple[str, str] | None = None
    for i, rule in enumerate(rules):
        query = rule.get("xpath", rule.get("selectors"))
        try:
            found = _a11y_query(rule, namespaces, metric, i)(tree)
        except etree.XPathError as exc:
            raise MetricError(f"{metric}: rule {i} cannot be evaluated: {exc}") from None
        nodes = found if isinstance(found, list) else ([found] if found else [])
        if not nodes:
            return fail(*(zero or (STRUCTURE_MISMATCH, f"rule {i}: {shown(query)} selects nothing in the "
                                                       f"accessibility tree")))
        if "text" in rule:
            texts = [(n.text or "") if hasattr(n, "tag") else str(n) for n in nodes]
            if rule.get("exact", True):
                rule_score = float(rule["text"] in texts)
            else:
                fuzz = _require("rapidfuzz.fuzz", "rapidfuzz", metric)
                rule_score = max(fuzz.ratio(t, rule["text"]) / 100.0 for t in texts)
            logger.info("%s: rule %d, texts %s vs %r -> %.3f", metric, i, texts[:5], rule["text"], rule_score)
            if rule_score < 1.0:
                match = "" if rule.get("exact", True) else f" (best fuzzy similarity {rule_score:.2f})"
                why = (VALUE_MISMATCH, f"rule {i}: no node selected by {shown(query)} has the text "
                                       f"{shown(rule['text'])}{match}; their texts: {shown(texts[:5])}")
                if rule_score <= 0.0:
                    zero = zero or why
                else:
                    partial = partial or why
            score *= rule_score
    if score < 1.0:
        explain(*(zero or partial))
    return score
