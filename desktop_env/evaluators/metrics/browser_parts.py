"""Readers for the browser metrics: URLs, Chromium's profile files, .desktop files, GSettings lists, the a11y tree.

Each turns what a getter handed over into plain values, or None; a file that is there but cannot be
read is explained (UNREADABLE_RESULT) where it is found, and the metric explains the other failures.
"""
from __future__ import annotations

import ast
import json
import logging
import os
import re
import sqlite3
from contextlib import closing
from typing import Any, Iterable
from urllib.parse import urlsplit, urlunsplit

from desktop_env.evaluators.metrics.files import missing_file
from desktop_env.evaluators.metrics.utils import as_existing_path, text_of
from desktop_env.evaluators.reasons import MISSING_RESULT, UNREADABLE_RESULT, explain, shown

logger = logging.getLogger(__name__)

CHROMIUM_DEFAULT_FONT_SIZE = 16  # px, when the Preferences file does not set one


def number(value: Any) -> float | None:
    """``value`` as a float; None for a bool or anything that is not a number."""
    try:
        return None if isinstance(value, bool) else float(value)
    except (TypeError, ValueError):
        return None


def nothing(result: Any, what: str) -> str:
    """Why the result holds no ``what``, for a reason: the missing file named, or the result shown."""
    if result is None or isinstance(result, os.PathLike):
        return missing_file(result, what)
    return f"no {what} in the result ({shown(result)})"


def json_file(path, what: str) -> Any:
    """The JSON in ``path``, or None (logged and explained) when it is not readable JSON."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        logger.info("the %s file %s is not readable JSON: %s", what, path, exc)
        explain(UNREADABLE_RESULT, f"the {what} file {path.name} is not readable JSON: {exc}")
        return None


# --------------------------------------------------------------------------- URLs and bookmarks
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


def url_of(result: Any) -> str | None:
    """The URL of a tab: ``{"url": ...}`` (active_tab_info, open_tabs_info) or the URL itself."""
    url = result.get("url") if isinstance(result, dict) else result
    return url if isinstance(url, str) and url.strip() else None


def bookmark_roots(result: Any) -> dict | None:
    """The ``roots`` of Chromium's Bookmarks file, given as the file, its JSON or the roots themselves."""
    path = as_existing_path(result)
    data = result if path is None else json_file(path, "Bookmarks")
    if isinstance(data, dict) and isinstance(data.get("roots"), dict):
        data = data["roots"]
    return data if isinstance(data, dict) and isinstance(data.get("bookmark_bar"), dict) else None


def children(node: dict, kind: str) -> list[dict]:
    """A bookmark folder's children of one type (``folder`` or ``url``)."""
    return [c for c in node.get("children") or [] if isinstance(c, dict) and c.get("type") == kind]


def url_set(urls: Iterable[Any]) -> set[str]:
    """The strings of ``urls``, after :func:`normalize_url`."""
    return {normalize_url(u) for u in urls if isinstance(u, str)}


def choose_one_each(groups: list[set[str]], urls: set[str]) -> bool:
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


# --------------------------------------------------------------------------- profile databases and settings
def profile_column(result: Any, sql: str, index: int, key: str) -> list[str] | None:
    """One text column of a Chromium profile database: read with ``sql`` from the SQLite file (a
    ``Path``), or taken from the rows a getter read (tuples: item ``index``; dicts: ``key``; or strings)."""
    path = as_existing_path(result)
    if path is not None:
        try:
            with closing(sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)) as con:
                return [row[0] for row in con.execute(sql) if isinstance(row[0], str)]
        except sqlite3.Error as exc:
            logger.info("%s cannot be queried with %r: %s", path, sql, exc)
            explain(UNREADABLE_RESULT, f"the database {path.name} cannot be queried with {sql!r}: {exc}")
            return None
    if not isinstance(result, (list, tuple)):
        return None
    values = [row if isinstance(row, str) else row.get(key) if isinstance(row, dict)
              else row[index] if isinstance(row, (list, tuple)) and len(row) > index else None for row in result]
    return values if all(isinstance(v, str) for v in values) else None


def _bare_domain(domain: str) -> str:
    d = domain.strip().lower().lstrip(".")
    return d[4:] if d.startswith("www.") else d


def cookie_of(host_key: str, domain: str) -> bool:
    """Whether a cookie stored for ``host_key`` belongs to ``domain``: the same site give or take a
    leading dot or ``www.``, or a subdomain of a domain written with a leading dot (``.amazon.com``)."""
    host, want = _bare_domain(host_key), _bare_domain(domain)
    return host == want or (domain.strip().startswith(".") and host.endswith("." + want))


def font_size(result: Any) -> float | None:
    """``{"default_font_size": N}`` (chrome_font_size), a number, or the Preferences file (a ``Path``)."""
    path = as_existing_path(result)
    if path is not None:
        prefs = json_file(path, "Preferences")
        try:
            result = prefs["webkit"]["webprefs"].get("default_font_size", CHROMIUM_DEFAULT_FONT_SIZE)
        except (TypeError, KeyError, AttributeError):  # no such section: the size was never changed
            result = CHROMIUM_DEFAULT_FONT_SIZE if isinstance(prefs, dict) else None
    elif isinstance(result, dict):
        result = result.get("default_font_size")
    return number(result)


# --------------------------------------------------------------------------- desktop
def desktop_key(text: str, key: str) -> str | None:
    """``key``'s value in a ``.desktop`` file's ``[Desktop Entry]`` group (which comes before any other group)."""
    main = re.split(r"^\s*\[(?!Desktop Entry\]).*\]\s*$", text, maxsplit=1, flags=re.M)[0]
    found = re.search(rf"^\s*{key}\s*=[ \t]*(.*?)\s*$", main, flags=re.M)
    return found.group(1) if found else None


def gsettings_list(result: Any) -> list[str] | None:
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


# --------------------------------------------------------------------------- accessibility tree
#: Prefix -> namespace of the accessibility tree's attribute groups, per OS. The in-VM server
#: (vm_server/a11y.py) writes the "ubuntu" ones; rules use these prefixes in XPath and selectors.
_A11Y_PATHS = {"st": "state", "attr": "attributes", "cp": "component", "doc": "document", "docattr":
               "document/attributes", "txt": "text", "val": "value", "act": "action", "class": "class", "role": "role"}
A11Y_NAMESPACES = {os_: {p: f"https://accessibility.{os_}.example.org/ns/{_A11Y_PATHS[p]}" for p in prefixes.split()}
                   for os_, prefixes in (("ubuntu", "st attr cp doc docattr txt val act"),
                                         ("windows", "st attr cp doc docattr txt val act class"),
                                         ("macos", "st attr cp doc txt val act role"))}


def a11y_tree(result: Any, etree):
    """The parsed tree, or None (explained) when the result is missing or not XML."""
    text = text_of(result.get("AT") if isinstance(result, dict) else result)  # a dict: the server's reply
    if not text or not text.strip():
        explain(MISSING_RESULT, nothing(result, "accessibility tree"))
        return None
    # The XML comes from the guest: never resolve its entities nor fetch anything it names.
    parser = etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=True, load_dtd=False)
    try:
        return etree.fromstring(text.encode("utf-8"), parser)
    except (etree.XMLSyntaxError, ValueError) as exc:
        logger.info("the accessibility tree is not XML: %s", exc)
        explain(UNREADABLE_RESULT, f"the accessibility tree is not XML: {exc}")
        return None
