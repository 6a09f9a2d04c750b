"""Chromium profile getters: settings from ``Preferences``, the ``Bookmarks`` JSON, the ``History`` and
``Cookies`` SQLite databases, and the profile's extensions.

Each reads files of the profile's ``Default`` folder in the VM: ``<config>/chromium/Default`` (Debian's
Chromium, the browser of every image here; ``google-chrome`` in the office image starts it) or
``<config>/google-chrome/Default``, ``<config>`` being ``$XDG_CONFIG_HOME`` or ``~/.config`` in the guest.
When both hold the file, the one written last is read: that is the profile in use.

Chromium stores only the settings that differ from their defaults, so a missing key reads as the
default of Chromium 156 (the images' version), and it writes ``Preferences`` some seconds after a
change (at once when it exits): the suite's tasks restart the browser in ``postconfig`` before
these getters run. ``Secure Preferences`` (where some builds keep the protected settings, such as the
extensions) is read over ``Preferences``, as Chromium merges them.

SQLite files are copied out of the VM with their ``-wal`` and ``-journal`` files and read on the host
(a hot journal of an unfinished write is rolled back on the copy, as SQLite would after a crash).
"""
from __future__ import annotations

import json
import logging
import posixpath
import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

from desktop_env.errors import GuestServerError
from desktop_env.evaluators.values import GuestText
from desktop_env.registry import GETTERS
from desktop_env.session import SetupContext

logger = logging.getLogger(__name__)

#: Browser folders under the guest's config folder, in order of preference when both were written
#: in the same second.
BROWSER_DIRS = ("chromium", "google-chrome")
PROFILE = "Default"

#: Chromium's defaults for the settings these getters read (what a key missing from Preferences means).
DEFAULT_FONT_SIZES = {"default_font_size": 16, "default_fixed_font_size": 13, "minimum_font_size": 0,
                      "minimum_logical_font_size": 6}
RESTORE_ON_STARTUP_NEW_TAB = 5       # session.restore_on_startup: 1 continue, 4 open pages, 5 New Tab page
RESTORE_ON_STARTUP_DEFAULT = RESTORE_ON_STARTUP_NEW_TAB
COOKIES_SESSION_ONLY = 4             # profile.default_content_setting_values.cookies: 1 allow, 2 block, 4 session
COLOR_SCHEMES = {0: "system", 1: "light", 2: "dark"}  # browser.theme.color_scheme2 (ThemeService)
#: extensions.settings.<id>.location of extensions loaded from a folder: UNPACKED and COMMAND_LINE.
UNPACKED_LOCATIONS = (4, 8)

# Prints "<mtime>\t<path>" for each of the candidate files (relative to the config folder) that exists.
_LOCATE_SH = ('c="${XDG_CONFIG_HOME:-$HOME/.config}"; for f in "$@"; do '
              '[ -f "$c/$f" ] && printf "%s\\t%s\\n" "$(stat -c %Y "$c/$f")" "$c/$f"; done; true')


# --------------------------------------------------------------------------- locating and fetching
def profile_candidates(*names: str) -> list[str]:
    """Paths, relative to the guest's config folder, where the profile file(s) ``names`` may be."""
    return [f"{browser}/{PROFILE}/{name}" for browser in BROWSER_DIRS for name in names]


def newest(listing: str, candidates: list[str]) -> str | None:
    """The guest path written last in ``listing`` (lines ``<mtime>\\t<path>``); on a tie, the one whose
    candidate comes first. None when the listing names no file."""
    found = []
    for line in listing.splitlines():
        stamp, _, path = line.partition("\t")
        try:
            found.append((int(stamp), path))
        except ValueError:
            continue
    if not found:
        return None
    rank = {p: i for i, p in enumerate(candidates)}

    def order(item: tuple[int, str]) -> tuple[int, int]:
        stamp, path = item
        return stamp, -next((i for c, i in rank.items() if path.endswith("/" + c)), len(rank))

    return max(found, key=order)[1]


def locate(ctx: SetupContext, *names: str) -> str | None:
    """The guest path of the profile file among ``names`` (e.g. ``"Network/Cookies", "Cookies"``) in the
    browser folders, the one written last; None when there is none."""
    candidates = profile_candidates(*names)
    reply = ctx.controller.execute(["sh", "-c", _LOCATE_SH, "sh", *candidates], shell=False)
    path = newest(reply.get("output") or "", candidates)
    logger.info("Chromium profile file %s: %s", "/".join(names), path or "none in " + ", ".join(BROWSER_DIRS))
    return path


def _fetch(ctx: SetupContext, path: str) -> bytes | None:
    """A guest file's bytes; None when it does not exist (any other server error propagates)."""
    try:
        return ctx.controller.get_file(path)
    except GuestServerError as exc:
        if exc.status == 404:
            return None
        raise


def _profile_file(ctx: SetupContext, *names: str) -> tuple[str, bytes] | None:
    path = locate(ctx, *names)
    data = None if path is None else _fetch(ctx, path)
    return None if data is None else (path, data)


def _json_object(data: bytes, what: str) -> dict | None:
    try:
        value = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        logger.info("Chromium's %s is not JSON: %s", what, exc)
        return None
    return value if isinstance(value, dict) else None


def merge_preferences(prefs: dict, secure: dict | None) -> dict:
    """``Secure Preferences`` laid over ``Preferences`` (nested objects merged key by key), as Chromium reads them."""
    out = dict(prefs)
    for key, value in (secure or {}).items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = merge_preferences(out[key], value)
        else:
            out[key] = value
    return out


def read_preferences(ctx: SetupContext) -> tuple[str, dict] | None:
    """The profile's folder in the VM and its settings (``Preferences`` with ``Secure Preferences`` over
    it); None when the profile has no readable ``Preferences``."""
    found = _profile_file(ctx, "Preferences")
    if found is None:
        return None
    path, data = found
    prefs = _json_object(data, path)
    if prefs is None:
        return None
    folder = posixpath.dirname(path)
    secure = _fetch(ctx, posixpath.join(folder, "Secure Preferences"))
    return folder, merge_preferences(prefs, None if secure is None else _json_object(secure, "Secure Preferences"))


def pref(prefs: dict, dotted: str, default: Any = None) -> Any:
    """The setting ``a.b.c`` of a Preferences object, or ``default`` when it is not stored."""
    node: Any = prefs
    for part in dotted.split("."):
        if not isinstance(node, dict) or part not in node:
            return default
        node = node[part]
    return node


def fetch_sqlite(ctx: SetupContext, names: tuple[str, ...], dest: str) -> Path | None:
    """Copy a profile database (the newest of ``names``) into the cache as ``dest``, with its ``-wal`` and
    ``-journal`` files when the guest has them; None when the profile has no such database."""
    found = _profile_file(ctx, *names)
    if found is None:
        return None
    path, data = found
    target = ctx.cache_path(dest)
    target.write_bytes(data)
    for suffix in ("-wal", "-journal"):
        side = target.with_name(target.name + suffix)
        extra = _fetch(ctx, path + suffix)
        if extra:
            side.write_bytes(extra)
        elif side.exists():  # left by an earlier fetch: it is not the guest's
            side.unlink()
    return target


def query_rows(db: Path, sql: str) -> list[tuple]:
    """All rows of ``sql`` on a copied database (opened read-write so that SQLite can recover it)."""
    with closing(sqlite3.connect(db)) as con:
        return con.execute(sql).fetchall()


def _rows(ctx: SetupContext, names: tuple[str, ...], dest: str, sql: str, what: str) -> list[tuple] | None:
    db = fetch_sqlite(ctx, names, dest)
    if db is None:
        return None
    try:
        return query_rows(db, sql)
    except sqlite3.Error as exc:
        logger.info("Chromium's %s (%s) cannot be read with %r: %s", what, db, sql, exc)
        return None


# --------------------------------------------------------------------------- settings, from Preferences
def search_engine_name(prefs: dict) -> str | None:
    """The default search engine's name: ``default_search_provider_data.mirrored_template_url_data`` (Chromium
    120 and later) or ``template_url_data`` (older); None while the built-in default (DuckDuckGo in Debian's
    build, Google in Google's) was never changed, as Preferences then names none."""
    for key in ("mirrored_template_url_data", "template_url_data"):
        name = pref(prefs, f"default_search_provider_data.{key}.short_name")
        if isinstance(name, str) and name:
            return name
    return None


def do_not_track(prefs: dict) -> bool:
    """Whether "Send a Do Not Track request" is on (``enable_do_not_track``, off by default)."""
    return pref(prefs, "enable_do_not_track", False) is True


def safe_browsing(prefs: dict) -> str:
    """``"enhanced"``, ``"standard"`` or ``"off"`` (``safebrowsing.enabled``, on by default, and
    ``safebrowsing.enhanced``, off by default)."""
    if pref(prefs, "safebrowsing.enabled", True) is not True:
        return "off"
    return "enhanced" if pref(prefs, "safebrowsing.enhanced", False) is True else "standard"


def opens_new_tab_on_startup(prefs: dict) -> bool:
    """Whether Chromium starts on the New Tab page (``session.restore_on_startup`` 5, the default)."""
    return pref(prefs, "session.restore_on_startup", RESTORE_ON_STARTUP_DEFAULT) == RESTORE_ON_STARTUP_NEW_TAB


def deletes_site_data_on_exit(prefs: dict) -> bool:
    """Whether sites' data is deleted when all windows close: cookies allowed for the session only
    (``profile.default_content_setting_values.cookies`` 4)."""
    return pref(prefs, "profile.default_content_setting_values.cookies") == COOKIES_SESSION_ONLY


def color_scheme(prefs: dict) -> str:
    """The browser's mode, ``"system"``, ``"light"`` or ``"dark"`` (``browser.theme.color_scheme2``, or the
    older ``browser.theme.color_scheme`` of profiles not migrated yet; ``"system"`` by default)."""
    for key in ("browser.theme.color_scheme2", "browser.theme.color_scheme"):
        value = pref(prefs, key)
        if isinstance(value, int) and not isinstance(value, bool) and value in COLOR_SCHEMES:
            return COLOR_SCHEMES[value]
    return COLOR_SCHEMES[0]


def font_sizes(prefs: dict) -> dict:
    """``webkit.webprefs`` over Chromium's default font sizes (``default_font_size`` 16, ...)."""
    stored = pref(prefs, "webkit.webprefs", {})
    return {**DEFAULT_FONT_SIZES, **(stored if isinstance(stored, dict) else {})}


def extension_entries(prefs: dict) -> dict[str, dict]:
    """``extensions.settings``: extension id -> its entry (``path``, ``location``, maybe ``manifest``)."""
    entries = pref(prefs, "extensions.settings", {})
    return {k: v for k, v in entries.items() if isinstance(v, dict)} if isinstance(entries, dict) else {}


def unpacked_extension_paths(prefs: dict) -> list[str]:
    """The folders of the extensions loaded unpacked (``Load unpacked`` or ``--load-extension``), in the
    profile's order; an entry without a ``location`` counts when its path is absolute."""
    paths = []
    for entry in extension_entries(prefs).values():
        path, location = entry.get("path"), entry.get("location")
        if isinstance(path, str) and (location in UNPACKED_LOCATIONS or (location is None and path.startswith("/"))):
            paths.append(path)
    return paths


def localized(name: str, messages: dict | None) -> str:
    """A manifest string with its ``__MSG_key__`` replaced from ``_locales/<lang>/messages.json`` (keys
    are case-insensitive); unchanged when there is no such message."""
    if not (name.startswith("__MSG_") and name.endswith("__")) or not isinstance(messages, dict):
        return name
    key = name[len("__MSG_"):-2].lower()
    entry = next((v for k, v in messages.items() if k.lower() == key), None)
    message = entry.get("message") if isinstance(entry, dict) else None
    return message if isinstance(message, str) else name


def _extension_folder(profile_dir: str, path: str) -> str:
    """An entry's ``path``: absolute for unpacked ones, else under the profile's ``Extensions`` folder."""
    return path if path.startswith("/") else posixpath.join(profile_dir, "Extensions", path)


def _manifest_name(ctx: SetupContext, folder: str) -> str | None:
    data = _fetch(ctx, posixpath.join(folder, "manifest.json"))
    manifest = None if data is None else _json_object(data, f"{folder}/manifest.json")
    name = None if manifest is None else manifest.get("name")
    if not isinstance(name, str):
        return None
    if name.startswith("__MSG_"):
        locale = manifest.get("default_locale") if isinstance(manifest.get("default_locale"), str) else "en"
        raw = _fetch(ctx, posixpath.join(folder, "_locales", locale, "messages.json"))
        name = localized(name, None if raw is None else _json_object(raw, "messages.json"))
    return name


def extension_names(ctx: SetupContext, prefs: dict, profile_dir: str) -> list[str]:
    """The names of the profile's extensions: from the manifest Preferences keeps, else (Chromium no longer
    keeps it for most extensions) from ``manifest.json`` in the extension's folder in the VM."""
    names = []
    for ext_id, entry in extension_entries(prefs).items():
        manifest = entry.get("manifest")
        name = manifest.get("name") if isinstance(manifest, dict) else None
        if not isinstance(name, str) or name.startswith("__MSG_"):
            name = None  # not kept, or localized: read it from the extension's folder
        path = entry.get("path")
        if name is None and isinstance(path, str):
            name = _manifest_name(ctx, _extension_folder(profile_dir, path))
        if name is None:
            logger.info("extension %s: no name found (entry %s)", ext_id, sorted(entry))
            continue
        names.append(name)
    return names


def _prefs_value(ctx: SetupContext, getter: str, compute) -> Any:
    found = read_preferences(ctx)
    if found is None:
        logger.info("%s: the Chromium profile has no readable Preferences file", getter)
        return None
    value = compute(found[1])
    logger.info("%s: %r", getter, value)
    return value


def _flag(value: bool) -> GuestText:
    """The suite's spelling of a setting that is on or off: ``"true"`` / ``"false"``."""
    return GuestText("true" if value else "false")


# --------------------------------------------------------------------------- the getters
@GETTERS.register()
def get_default_search_engine(ctx: SetupContext) -> GuestText | None:
    """The default search engine's name as Chromium shows it (``"Microsoft Bing"``), or None when the
    profile is missing or still on the built-in default (see :func:`search_engine_name`)."""
    name = _prefs_value(ctx, "default_search_engine", search_engine_name)
    return None if name is None else GuestText(name)


@GETTERS.register()
def get_enable_do_not_track(ctx: SetupContext) -> GuestText | None:
    """``"true"`` when Chromium sends Do Not Track requests, else ``"false"`` (None: no profile)."""
    on = _prefs_value(ctx, "enable_do_not_track", do_not_track)
    return None if on is None else _flag(on)


@GETTERS.register()
def get_enable_safe_browsing(ctx: SetupContext) -> GuestText | None:
    """``"true"`` when Safe Browsing is on (standard or enhanced protection), ``"false"`` when it is off
    (None: no profile)."""
    mode = _prefs_value(ctx, "enable_safe_browsing", safe_browsing)
    return None if mode is None else _flag(mode != "off")


@GETTERS.register()
def get_new_startup_page(ctx: SetupContext) -> GuestText | None:
    """``"true"`` when Chromium opens the New Tab page on startup (its default), ``"false"`` when it
    continues where it left off or opens given pages (None: no profile)."""
    on = _prefs_value(ctx, "new_startup_page", opens_new_tab_on_startup)
    return None if on is None else _flag(on)


@GETTERS.register()
def get_data_delete_automacally(ctx: SetupContext) -> GuestText | None:
    """``"true"`` when Chromium deletes sites' data once all its windows close (cookies for the session
    only), else ``"false"`` (None: no profile). The name's spelling is the suite's."""
    on = _prefs_value(ctx, "data_delete_automacally", deletes_site_data_on_exit)
    return None if on is None else _flag(on)


@GETTERS.register()
def get_profile_name(ctx: SetupContext) -> GuestText | None:
    """The profile's name (``profile.name``, e.g. ``"Person 1"`` or one the user chose); None when unset."""
    name = _prefs_value(ctx, "profile_name", lambda p: pref(p, "profile.name"))
    return GuestText(name) if isinstance(name, str) else None


@GETTERS.register()
def get_chrome_appearance_mode_ui(ctx: SetupContext) -> GuestText | None:
    """The mode chosen under Settings > Appearance: ``"system"`` (the default), ``"light"`` or ``"dark"``
    (None: no profile)."""
    mode = _prefs_value(ctx, "chrome_appearance_mode_ui", color_scheme)
    return None if mode is None else GuestText(mode)


@GETTERS.register()
def get_chrome_font_size(ctx: SetupContext) -> dict | None:
    """Chromium's font sizes, ``{"default_font_size": 16, "default_fixed_font_size": 13, "minimum_font_size":
    0, ...}`` with what the user changed (None: no profile); ``check_font_size`` reads ``default_font_size``."""
    return _prefs_value(ctx, "chrome_font_size", font_sizes)


@GETTERS.register()
def get_find_unpacked_extension_path(ctx: SetupContext) -> list[str] | None:
    """The folders of the extensions loaded unpacked, as the VM writes them (None: no profile)."""
    return _prefs_value(ctx, "find_unpacked_extension_path", unpacked_extension_paths)


@GETTERS.register()
def get_find_installed_extension_name(ctx: SetupContext) -> list[str] | None:
    """The names of the profile's extensions, built-in ones included (``__MSG_`` names resolved from the
    extension's default locale); None when there is no profile."""
    found = read_preferences(ctx)
    if found is None:
        logger.info("find_installed_extension_name: the Chromium profile has no readable Preferences file")
        return None
    names = extension_names(ctx, found[1], found[0])
    logger.info("find_installed_extension_name: %s", names)
    return names


@GETTERS.register()
def get_bookmarks(ctx: SetupContext) -> dict | None:
    """The ``roots`` of the profile's Bookmarks file (``bookmark_bar``, ``other``, ``synced``); None when
    Chromium has written none (no bookmark was ever made) or it is not JSON."""
    found = _profile_file(ctx, "Bookmarks")
    data = None if found is None else _json_object(found[1], found[0])
    roots = None if data is None else data.get("roots")
    return roots if isinstance(roots, dict) else None


@GETTERS.register()
def get_history(ctx: SetupContext, dest: str = "History") -> list[tuple] | None:
    """The browsing history, ``[(url, title, last_visit_time), ...]`` from the ``urls`` table of the History
    database (copied into the cache as ``dest``); None when the profile has none."""
    return _rows(ctx, ("History",), dest, "SELECT url, title, last_visit_time FROM urls", "History")


@GETTERS.register()
def get_cookie_data(ctx: SetupContext, dest: str = "Cookies") -> list[tuple] | None:
    """Every row of the ``cookies`` table (``SELECT *``: creation_utc, host_key, ...) of the Cookies database,
    ``Network/Cookies`` or, in older profiles, ``Cookies`` (copied into the cache as ``dest``); None when the
    profile has none. Values stay encrypted as Chromium stores them."""
    return _rows(ctx, ("Network/Cookies", "Cookies"), dest, "SELECT * FROM cookies", "Cookies")
