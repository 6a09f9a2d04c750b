"""App and desktop getters of the general computer-use suite: app config files (VLC, GIMP, the code editor),
VLC's playing state, a slide's audio and background picture, a value from a guest file, desktop shortcuts,
the default video player, rules with dates relative to today, a Google Drive file.

Config files are looked up in the guest user's config folder: ``$XDG_CONFIG_HOME``, else ``~/.config``.
"""
from __future__ import annotations

import copy
import csv
import io
import logging
import mimetypes
import posixpath
import re
import zipfile
from datetime import date, datetime, timedelta
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import unquote, urlparse

from desktop_env.errors import GuestServerError, TaskConfigError
from desktop_env.evaluators.getters.cloud import account_note
from desktop_env.evaluators.getters.file import fetch_vm_file
from desktop_env.evaluators.values import GuestText
from desktop_env.limits import execute_limited
from desktop_env.registry import ACCOUNT, GETTERS
from desktop_env.session import SetupContext

logger = logging.getLogger(__name__)

_CONFIG_HOME_SH = 'printf "%s" "${XDG_CONFIG_HOME:-$HOME/.config}"'


def _run(ctx: SetupContext, command: list[str], what: str) -> dict:
    return execute_limited(ctx.controller, command, name="evaluator.command", what=what)


def _guest_config_file(ctx: SetupContext, *parts: str) -> str:
    """The guest path of ``parts`` under the guest user's config folder."""
    home = (_run(ctx, ["sh", "-c", _CONFIG_HOME_SH], "the guest's config folder").get("output") or "").strip()
    return posixpath.join(home or "~/.config", *parts)


def _relative_name(value: Any, field: str, getter: str) -> tuple[str, ...]:
    """``value`` as the parts of a relative path that stays in its folder; else a TaskConfigError on ``field``."""
    parts = PurePosixPath(value).parts if isinstance(value, str) and value.strip() else ()
    if not parts or parts[0] == "/" or ".." in parts:
        raise TaskConfigError(f"{getter}: {field!r} must be a file name relative to the config folder, "
                              f"got {value!r}", field=field)
    return parts


# --------------------------------------------------------------------------- config files

@GETTERS.register()
def get_vlc_config(ctx: SetupContext, dest: str = "vlcrc") -> Path | None:
    """VLC's settings file ``vlc/vlcrc`` in the guest's config folder, copied into the cache as ``dest``;
    None when VLC has written none (it does when its preferences are saved)."""
    return fetch_vm_file(ctx, _guest_config_file(ctx, "vlc", "vlcrc"), dest)


def check_gimp_config_file(fields: dict) -> None:
    """Load-time check of gimp_config_file: ``file_name`` stays inside GIMP's config folder."""
    _relative_name(fields.get("file_name"), "file_name", "gimp_config_file")


@GETTERS.register(check=check_gimp_config_file)
def get_gimp_config_file(ctx: SetupContext, file_name: str, dest: str) -> Path | None:
    """The file ``file_name`` (``gimprc``, ``sessionrc``, ...) of GIMP 2.10's config folder (``GIMP/2.10/`` in
    the guest's config folder), copied into the cache as ``dest``; None when GIMP has not written it."""
    parts = _relative_name(file_name, "file_name", "gimp_config_file")
    return fetch_vm_file(ctx, _guest_config_file(ctx, "GIMP", "2.10", *parts), dest)


@GETTERS.register()
def get_vscode_config(ctx: SetupContext, path: str, dest: str, vscode_extension_command: str | None = None
                      ) -> Path | None:
    """The code editor's settings or keybindings JSON (or another file it wrote) at the guest path ``path``,
    copied into the cache as ``dest``; None when it does not exist.

    In the suite, ``vscode_extension_command`` is a VS Code command of an evaluation extension that writes
    ``path`` first. VS Code is not in this project's images: the command is not run, the file is read as is.
    """
    if vscode_extension_command:
        logger.info("vscode_config: the editor command %r is not run (VS Code is not in the images); reading %s "
                    "as it is", vscode_extension_command, path)
    return fetch_vm_file(ctx, path, dest)


# --------------------------------------------------------------------------- VLC's state, the default player

@GETTERS.register()
def get_vlc_playing_info(ctx: SetupContext, dest: str = "status.xml", port: int = 8080,
                         password: str = "password") -> Path | None:
    """What VLC is playing: the status XML of VLC's HTTP interface, fetched inside the VM with curl from
    ``http://localhost:<port>/requests/status.xml`` (basic auth, empty user name), saved in the cache as ``dest``.

    VLC serves it while its web interface runs (``--extraintf http``, or ``extraintf=http`` in vlcrc,
    with ``http-password``); the suite's images use port 8080 and the password ``password``.

    Returns:
        the local path, or None when nothing answers (VLC not running, its web interface off) or the
        password is refused.
    """
    if isinstance(port, bool) or not isinstance(port, int) or not 0 < port < 65536:
        raise TaskConfigError(f"vlc_playing_info: 'port' must be a TCP port number, got {port!r}", field="port")
    url = f"http://localhost:{port}/requests/status.xml"
    reply = _run(ctx, ["curl", "--silent", "--show-error", "--fail", "--max-time", "10", "--retry", "2",
                       "--retry-connrefused", "--retry-delay", "1", "--user", f":{password}", url],
                 f"vlc_playing_info {url}")
    if reply.get("returncode") != 0:
        logger.info("vlc_playing_info: %s gave no status (curl exit %s: %s; scored as missing)", url,
                    reply.get("returncode"), (reply.get("error") or "").strip()[-300:])
        return None
    target = ctx.cache_path(dest)
    target.write_text(reply.get("output") or "", encoding="utf-8")
    return target


@GETTERS.register()
def get_default_video_player(ctx: SetupContext, mime_type: str = "video/mp4") -> GuestText | None:
    """The desktop entry (``vlc.desktop``) of the guest's default application for ``mime_type``
    (``xdg-mime query default``); None when no application is the default."""
    reply = _run(ctx, ["xdg-mime", "query", "default", mime_type], f"default_video_player {mime_type}")
    app = (reply.get("output") or "").strip()
    if reply.get("returncode") != 0 or not app:
        logger.info("default_video_player: no default application for %s (exit %s: %s)", mime_type,
                    reply.get("returncode"), (reply.get("error") or "").strip()[-300:])
        return None
    return GuestText(app)


# --------------------------------------------------------------------------- desktop shortcuts

@GETTERS.register()
def get_shortcuts_on_desktop(ctx: SetupContext) -> dict[str, GuestText] | None:
    """The desktop's shortcuts: each ``*.desktop`` file (or link to one) directly in the guest user's desktop
    folder (``xdg-user-dir DESKTOP``, else ``~/Desktop``) as ``{guest path: content}`` (``{}`` when there is
    none); None when there is no desktop folder."""
    try:
        folder = ctx.controller.desktop_path()
    except GuestServerError as exc:
        if exc.status != 404:
            raise
        logger.info("shortcuts_on_desktop: the guest has no desktop folder (scored as missing): %s", exc)
        return None
    listing = _run(ctx, ["find", folder, "-mindepth", "1", "-maxdepth", "1", "-name", "*.desktop", "-xtype", "f"],
                   "shortcuts_on_desktop")
    shortcuts: dict[str, GuestText] = {}
    for path in sorted(filter(None, (listing.get("output") or "").splitlines())):
        try:
            data = ctx.controller.get_file(path)
        except GuestServerError as exc:
            if exc.status != 404:
                raise
            logger.info("shortcuts_on_desktop: %s went away: %s", path, exc)
            continue
        shortcuts[path] = GuestText(data.decode("utf-8", errors="replace"))
    logger.info("shortcuts_on_desktop: %d in %s: %s", len(shortcuts), folder, sorted(shortcuts))
    return shortcuts


# --------------------------------------------------------------------------- a value from a guest file

#: file_type -> the named ``file_content`` values it takes; tables ("xlsx", "csv") also take a cell ("B2")
FILE_CONTENTS: dict[str, tuple[str, ...]] = {"xlsx": ("last_row",), "csv": ("last_row", "last_line"),
                                             "text": ("last_line", "content"), "txt": ("last_line", "content")}
_CELL = re.compile(r"([A-Z]{1,3})([1-9][0-9]*)")


def check_content_fields(fields: dict) -> None:
    """Load-time check of content_from_vm_file: a known ``file_type`` and a ``file_content`` it takes."""
    kind, what = fields.get("file_type"), fields.get("file_content")
    if kind not in FILE_CONTENTS:
        raise TaskConfigError(f"content_from_vm_file: unknown file_type {kind!r} (accepted: "
                              f"{', '.join(FILE_CONTENTS)})", field="file_type")
    table = kind in ("xlsx", "csv")
    if what not in FILE_CONTENTS[kind] and not (table and isinstance(what, str) and _CELL.fullmatch(what.upper())):
        cell = " or a cell such as 'B2'" if table else ""
        raise TaskConfigError(f"content_from_vm_file: file_content {what!r} does not fit a {kind} file (accepted: "
                              f"{', '.join(FILE_CONTENTS[kind])}{cell})", field="file_content")


def _cell_text(value: Any) -> str:
    """A spreadsheet value as text: empty for an empty cell, whole floats without ``.0``."""
    if value is None:
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def table_rows(data: bytes, file_type: str, sheet: str | None = None) -> list[list[str]]:
    """The rows of an xlsx sheet (``sheet``, default the active one) or a CSV file, cells as text."""
    if file_type == "xlsx":
        from openpyxl import load_workbook
        book = load_workbook(io.BytesIO(data), read_only=True, data_only=True)
        try:
            ws = book[sheet] if sheet else book.active
            return [[_cell_text(v) for v in row] for row in ws.iter_rows(values_only=True)]
        finally:
            book.close()
    text = data.decode("utf-8-sig", errors="replace")
    return [list(row) for row in csv.reader(io.StringIO(text, newline=""))]


def pick_content(data: bytes, file_type: str, file_content: str, sheet: str | None = None):
    """What ``file_content`` names in a file's bytes: ``last_row`` (list of cell texts), ``last_line``,
    ``content`` (the whole text) or a cell (``"B2"``); blank rows and lines are skipped. None when there is
    no such row or line."""
    if file_content in ("last_line", "content"):
        text = data.decode("utf-8-sig", errors="replace")
        if file_content == "content":
            return text
        lines = [line for line in text.splitlines() if line.strip()]
        return lines[-1] if lines else None
    rows = table_rows(data, file_type, sheet)
    if file_content == "last_row":
        filled = [row for row in rows if any(cell.strip() for cell in row)]
        return filled[-1] if filled else None
    from openpyxl.utils.cell import column_index_from_string
    letters, number = _CELL.fullmatch(file_content.upper()).groups()
    col, row = column_index_from_string(letters), rows[int(number) - 1] if int(number) <= len(rows) else []
    return row[col - 1] if col <= len(row) else ""


@GETTERS.register(check=check_content_fields)
def get_content_from_vm_file(ctx: SetupContext, path: str, file_type: str, file_content: str,
                             sheet: str | None = None, dest: str | None = None):
    """A value read from the guest file ``path`` (copied into the cache as ``dest``, default its name).

    Args:
        file_type: ``xlsx``, ``csv`` or ``text`` (``txt``).
        file_content: ``last_row`` (tables: the last non-blank row, a list of cell texts), ``last_line``
            (csv, text: the last non-blank line), ``content`` (text: all of it), or a table's cell such
            as ``"B2"`` (its text; empty when the table does not reach it).
        sheet: the xlsx sheet (default the active one).

    Returns:
        the value (guest text), or None when the file is missing, unreadable as ``file_type`` or has no
        such row or line.
    """
    check_content_fields({"file_type": file_type, "file_content": file_content})
    local = fetch_vm_file(ctx, path, dest or PurePosixPath(path).name)
    if local is None:
        return None
    from openpyxl.utils.exceptions import InvalidFileException
    try:
        value = pick_content(local.read_bytes(), file_type, file_content, sheet)
    except (OSError, ValueError, KeyError, csv.Error, zipfile.BadZipFile, InvalidFileException) as exc:
        logger.info("content_from_vm_file: %s is not a readable %s file (scored as missing): %s", path, file_type, exc)
        return None
    if value is None:
        logger.info("content_from_vm_file: %s has no %s (scored as missing)", path, file_content)
        return None
    logger.info("content_from_vm_file: %s of %s is %r", file_content, path, value)
    return [GuestText(v) for v in value] if isinstance(value, list) else GuestText(value)


# --------------------------------------------------------------------------- media in slides

_AUDIO_REL = "/relationships/audio"   # PowerPoint and LibreOffice link a slide's sound this way
_MEDIA_REL = "/relationships/media"   # ... and again as media (p14:media), with the file's type
_BLIP = "./p:cSld/p:bg/p:bgPr/a:blipFill/a:blip"
_R_NS = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}"


def _is_audio(rel) -> bool:
    if rel.reltype.endswith(_AUDIO_REL):
        return True
    if not rel.reltype.endswith(_MEDIA_REL):
        return False
    kind = mimetypes.guess_type(rel.target_ref)[0] if rel.is_external else rel.target_part.content_type
    return bool(kind) and kind.startswith("audio/")


def slide_audio(slide):
    """The first sound of a slide (python-pptx ``Slide``), audio links before media links: its relationship,
    or None when the slide has no sound."""
    rels = sorted((r for r in slide.part.rels.values() if _is_audio(r)),
                  key=lambda r: (not r.reltype.endswith(_AUDIO_REL), int(re.sub(r"\D", "", r.rId) or 0)))
    return rels[0] if rels else None


def slide_background_picture(slide):
    """The relationship of the picture filling a slide's background, the slide's own background first, then
    (when it sets none) its layout's, then its master's: what the slide shows. None when that background is
    not a picture."""
    for owner in (slide, slide.slide_layout, slide.slide_layout.slide_master):
        if not owner.element.xpath("./p:cSld/p:bg"):
            continue
        for blip in owner.element.xpath(_BLIP):
            rid = blip.get(f"{_R_NS}embed") or blip.get(f"{_R_NS}link")
            if rid and rid in owner.part.rels:
                return owner.part.rels[rid]
        return None
    return None


def _linked_guest_path(target: str, ppt_file_path: str) -> str:
    """The guest path of a file a presentation links to (``file://`` URL, absolute or relative path)."""
    if target.startswith("file:"):
        return unquote(urlparse(target).path)
    return posixpath.normpath(posixpath.join(posixpath.dirname(ppt_file_path), unquote(target)))


def _slide_media(ctx: SetupContext, getter: str, ppt_file_path: str, slide_index, dest: str, find) -> Path | None:
    """Copy the presentation out of the VM, find a file of slide ``slide_index`` (0-based) with ``find(slide)``
    and save it in the cache as ``dest``: from inside the file, or from the VM when it is linked."""
    if isinstance(slide_index, str) and slide_index.strip().isdigit():
        slide_index = int(slide_index)
    if isinstance(slide_index, bool) or not isinstance(slide_index, int) or slide_index < 0:
        raise TaskConfigError(f"{getter}: 'slide_index' must be a slide number from 0, got {slide_index!r}",
                              field="slide_index")
    local = fetch_vm_file(ctx, ppt_file_path, PurePosixPath(ppt_file_path).name)
    if local is None:
        return None
    from pptx import Presentation
    from pptx.exc import PackageNotFoundError
    try:
        slides = Presentation(str(local)).slides
    except (PackageNotFoundError, zipfile.BadZipFile, KeyError, ValueError) as exc:
        logger.info("%s: %s is not a readable presentation (scored as missing): %s", getter, ppt_file_path, exc)
        return None
    if slide_index >= len(slides):
        logger.info("%s: %s has %d slides, no slide %d (scored as missing)", getter, ppt_file_path, len(slides),
                    slide_index)
        return None
    rel = find(slides[slide_index])
    if rel is None:
        logger.info("%s: slide %d of %s has none (scored as missing)", getter, slide_index, ppt_file_path)
        return None
    if rel.is_external:
        linked = _linked_guest_path(rel.target_ref, ppt_file_path)
        logger.info("%s: slide %d links to %s", getter, slide_index, linked)
        return fetch_vm_file(ctx, linked, dest)
    target = ctx.cache_path(dest)
    target.write_bytes(rel.target_part.blob)
    logger.info("%s: slide %d holds %s (%s)", getter, slide_index, rel.target_part.partname,
                rel.target_part.content_type)
    return target


@GETTERS.register()
def get_audio_in_slide(ctx: SetupContext, ppt_file_path: str, slide_index: int, dest: str) -> Path | None:
    """The sound on slide ``slide_index`` (from 0, in the show's order) of the guest's pptx ``ppt_file_path``,
    saved in the cache as ``dest`` (from inside the pptx, or the guest file it links to); None when the
    presentation, the slide or a sound on it is missing."""
    return _slide_media(ctx, "audio_in_slide", ppt_file_path, slide_index, dest, slide_audio)


@GETTERS.register()
def get_background_image_in_slide(ctx: SetupContext, ppt_file_path: str, slide_index: int, dest: str
                                  ) -> Path | None:
    """The picture filling the background of slide ``slide_index`` (from 0, in the show's order) of the
    guest's pptx ``ppt_file_path``, saved in the cache as ``dest``: the slide's own background, else the one
    it shows from its layout or master. None when the presentation or slide is missing or the background
    is not a picture."""
    return _slide_media(ctx, "background_image_in_slide", ppt_file_path, slide_index, dest,
                        slide_background_picture)


# --------------------------------------------------------------------------- rules with relative dates

_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_MONTHS = "January February March April May June July August September October November December".split()
_COUNTS = {w: i for i, w in enumerate("one two three four five six seven eight nine ten eleven twelve".split(), 1)}
_DAY = "(" + "|".join(_WEEKDAYS) + ")"
#: (pattern, kind) of the relative times a rule may name (a trailing " split" is ignored here)
_PHRASES = (
    (re.compile(r"today|this month"), "today"),
    (re.compile(r"tomorrow"), "tomorrow"),
    (re.compile(r"(\d{1,2})(?:st|nd|rd|th) next month"), "day_next_month"),
    (re.compile(rf"this {_DAY}"), "this"),
    (re.compile(rf"next week {_DAY}"), "next_week"),
    (re.compile(rf"next {_DAY}"), "next"),
    (re.compile(rf"first {_DAY} (\d+|{'|'.join(_COUNTS)}) months? later"), "first_in_month"),
)


def parse_relative_time(phrase: Any) -> tuple[str, tuple]:
    """``"next Monday"`` -> ``("next", ("monday",))``; a ValueError for a phrase this getter does not know."""
    text = " ".join(phrase.lower().split()).removesuffix(" split") if isinstance(phrase, str) else ""
    for pattern, kind in _PHRASES:
        hit = pattern.fullmatch(text)
        if hit:
            if kind == "day_next_month" and not 1 <= int(hit.group(1)) <= 31:
                break
            return kind, hit.groups()
    raise ValueError(f"unknown relative time {phrase!r} (known: today, tomorrow, this month, Nth next month, "
                     "this/next <weekday>, next week <weekday>, first <weekday> N months later)")


def _add_months(day: date, months: int) -> tuple[int, int]:
    index = day.year * 12 + day.month - 1 + months
    return index // 12, index % 12 + 1


def relative_day(phrase: str, today: date, start: date | None = None) -> date:
    """The date ``phrase`` names, seen from ``today`` (a ValueError for an unknown phrase or a day the month
    does not have). ``this <weekday>`` is that day of the current week (Monday to Sunday); ``next <weekday>``
    the first such day after today or, ending a range, the first on or after its ``start`` (so "from next
    Monday to next Friday" is one working week); ``next week <weekday>`` is that day of next week."""
    kind, args = parse_relative_time(phrase)
    if kind == "today":
        return today
    if kind == "tomorrow":
        return today + timedelta(days=1)
    if kind == "day_next_month":  # the day may be one the month does not have: ValueError
        year, month = _add_months(today, 1)
        return date(year, month, int(args[0]))
    weekday = _WEEKDAYS.index(args[0])
    if kind == "this":
        return today + timedelta(days=weekday - today.weekday())
    if kind == "next_week":
        return today + timedelta(days=7 - today.weekday() + weekday)
    if kind == "next":
        if start is not None:
            return start + timedelta(days=(weekday - start.weekday()) % 7)
        return today + timedelta(days=(weekday - today.weekday() - 1) % 7 + 1)
    months = int(args[1]) if args[1].isdigit() else _COUNTS[args[1]]
    year, month = _add_months(today, months)
    first = date(year, month, 1)
    return first + timedelta(days=(weekday - first.weekday()) % 7)


def format_day(template: str, day: date) -> str:
    """``template`` with ``{DoW}`` (Mon), ``{Month}`` (Jan), ``{MonthFull}`` (January), ``{month}`` (january),
    ``{MonthD}`` (1), ``{Month0D}`` (01), ``{DayD}`` (5), ``{Day0D}`` (05) and ``{Year}`` filled in for ``day``."""
    name = _MONTHS[day.month - 1]
    values = {"DoW": _WEEKDAYS[day.weekday()][:3].title(), "Month": name[:3], "MonthFull": name, "month": name.lower(),
              "MonthD": str(day.month), "Month0D": f"{day.month:02d}", "DayD": str(day.day),
              "Day0D": f"{day.day:02d}", "Year": str(day.year)}
    return re.sub(r"\{(\w+)\}", lambda m: values.get(m.group(1), m.group(0)), template)


def _range_keys(phrase: str, split_keys: tuple[str, ...], plain: str) -> tuple[str, ...]:
    return split_keys if phrase.strip().lower().endswith(" split") else (plain,)


def _date_keys(relative: dict) -> list[tuple[str, tuple[str, ...]]]:
    """(phrase, the ``expected`` keys its date fills) for the rule's ``from`` and, in a range, ``to``."""
    if "to" not in relative:
        return [(relative["from"], ("time",))]
    return [(relative["from"], _range_keys(relative["from"], ("puDay", "puMonth", "puYear"), "from")),
            (relative["to"], _range_keys(relative["to"], ("doDay", "doMonth", "doYear"), "to"))]


def check_relative_rules(fields: dict) -> None:
    """Check rule_relativeTime's ``rules``: a ``relativeTime`` ``{"from", "to"?}`` of known phrases, the
    ``expected`` templates they fill, a known ``timezone``; else a TaskConfigError naming the field."""
    rules = fields.get("rules")
    relative = rules.get("relativeTime") if isinstance(rules, dict) else None
    if not isinstance(relative, dict) or not isinstance(relative.get("from"), str):
        raise TaskConfigError("rule_relativeTime: rules.relativeTime must be {'from': PHRASE} or "
                              f"{{'from': PHRASE, 'to': PHRASE}}, got {relative!r}", field="rules.relativeTime")
    for key in ("from", "to"):
        if key in relative:
            try:
                parse_relative_time(relative[key])
            except ValueError as exc:
                raise TaskConfigError(f"rule_relativeTime: {exc}", field=f"rules.relativeTime.{key}") from exc
    expected = rules.get("expected")
    for _, keys in _date_keys(relative):
        for key in keys:
            template = expected.get(key) if isinstance(expected, dict) else None
            if not (isinstance(template, str) or (isinstance(template, list) and template
                                                  and all(isinstance(t, str) for t in template))):
                raise TaskConfigError(f"rule_relativeTime: rules.expected.{key} must be a date template such as "
                                      "'{Year}-{Month0D}-{Day0D}', or a list of them (any one may match)",
                                      field=f"rules.expected.{key}")
    _today(rules.get("timezone"))


def _today(timezone: Any) -> date:
    """Today on the host, in ``timezone`` (an IANA name) or the host's own."""
    if timezone is None:
        return datetime.now().astimezone().date()
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError
    try:
        return datetime.now(ZoneInfo(timezone)).date()
    except (ZoneInfoNotFoundError, ValueError, TypeError) as exc:
        raise TaskConfigError(f"rule_relativeTime: unknown timezone {timezone!r}", field="rules.timezone") from exc


def resolve_relative_rules(rules: dict, today: date) -> dict:
    """A copy of ``rules`` whose ``expected`` date templates are filled in with the dates ``relativeTime``
    names, seen from ``today``: ``time`` for one date; ``from`` and ``to`` for a range, or, for a
    ``... split`` phrase, ``puDay``/``puMonth``/``puYear`` (start) and ``doDay``/``doMonth``/``doYear`` (end).
    A list of templates (the date in any of several forms) gives the list of their dates."""
    out = copy.deepcopy(rules)
    start = None
    for (phrase, keys), field in zip(_date_keys(rules["relativeTime"]), ("from", "to")):
        try:
            day = relative_day(phrase, today, start)
        except ValueError as exc:
            raise TaskConfigError(f"rule_relativeTime: {phrase!r} seen from {today}: {exc}",
                                  field=f"rules.relativeTime.{field}") from exc
        start = start or day
        for key in keys:
            template = rules["expected"][key]
            out["expected"][key] = ([format_day(t, day) for t in template] if isinstance(template, list)
                                    else format_day(template, day))
    return out


@GETTERS.register("rule_relativeTime", check=check_relative_rules)
def get_rule_relative_time(ctx: SetupContext, rules: dict) -> dict:
    """The ``rules`` with their expected dates computed from today's date (on the host; the guest's clock is
    set from it), as :func:`resolve_relative_rules` says.

    ``rules``: ``{"relativeTime": {"from": "next Monday", "to": "next Friday"}, "expected": {...templates},
    "timezone": "Europe/Zurich"}`` (``to`` and ``timezone`` optional; other keys are kept as they are).
    """
    check_relative_rules({"rules": rules})
    today = _today(rules.get("timezone"))
    resolved = resolve_relative_rules(rules, today)
    logger.info("rule_relativeTime: %s seen from %s -> %s", rules["relativeTime"], today, resolved["expected"])
    return resolved


# --------------------------------------------------------------------------- Google Drive

_V2_TITLE = re.compile(r"\btitle\b")
#: Google Docs files have no bytes of their own: they are downloaded as the matching OOXML file
_EXPORTS = {f"application/vnd.google-apps.{kind}": f"application/vnd.openxmlformats-officedocument.{ooxml}"
            for kind, ooxml in (("document", "wordprocessingml.document"), ("spreadsheet", "spreadsheetml.sheet"),
                                ("presentation", "presentationml.presentation"))}


def _drive_item(drive, steps: list[str], by_query: bool) -> dict | None:
    """Walk from the Drive's root: each step a query (API v2's ``title`` read as ``name``) or a name
    (folders, then the file), searched among the children of the previous hit; the last hit, or None."""
    parent, item = "root", None
    for i, step in enumerate(steps):
        if by_query:
            hits = drive.list(f"({_V2_TITLE.sub('name', step)}) and '{parent}' in parents")
        else:
            hits = drive.children(parent, step, folders=True if i < len(steps) - 1 else None)
        if not hits:
            logger.info("googledrive_file: nothing matches %r under %s (scored as missing)", step, parent)
            return None
        item, parent = hits[0], hits[0]["id"]
    return item


def _drive_download(ctx: SetupContext, drive, steps: list[str], by_query: bool, dest: str) -> Path | None:
    from desktop_env.cloud.base import CloudNotFound
    try:
        item = _drive_item(drive, steps, by_query)
        if item is None:
            return None
        export = _EXPORTS.get(item.get("mimeType", ""))
        if export:
            data = drive.export(item["id"], export)
        else:  # the Drive client has no download method yet: its request helper gives the same errors
            data = drive._call("GET", f"/drive/v3/files/{item['id']}", params={"alt": "media"}).content
    except CloudNotFound as exc:
        logger.info("googledrive_file: %s (scored as missing)", exc)
        return None
    target = ctx.cache_path(dest)
    target.write_bytes(data)
    return target


@GETTERS.register(status=ACCOUNT, note=account_note("googledrive"))
def get_googledrive_file(ctx: SetupContext, dest, settings_file: str | None = None, query=None, path=None,
                         query_list=None, path_list=None):
    """A file of the Google Drive account of the Drive settings file (default
    ``evaluation_examples/settings/googledrive/settings.yml``), downloaded into the cache as ``dest``
    (Google Docs files as docx, xlsx or pptx). Give one of:

        query: Drive search queries, one per level from the root, each searched among the children of the
            previous hit (the first hit is taken; API v2's ``title`` is read as ``name``).
        path: the names of the folders and of the file, from the root (``["reports", "q1.xlsx"]``).
        query_list / path_list: a list of those, with ``dest`` a parallel list.

    Returns:
        the local path (None when nothing matches), or a list of them for the ``*_list`` forms.
    """
    from desktop_env.cloud.accounts import drive_for
    given = {k: v for k, v in (("query", query), ("path", path), ("query_list", query_list),
                               ("path_list", path_list)) if v is not None}
    if len(given) != 1:
        raise TaskConfigError("googledrive_file needs exactly one of 'query', 'path', 'query_list', 'path_list' "
                              f"(got {', '.join(given) or 'none'})", field=next(iter(given), "path"))
    [(field, value)] = given.items()
    many = field.endswith("_list")
    if many and (not isinstance(value, list) or not isinstance(dest, list) or len(value) != len(dest)):
        raise TaskConfigError(f"googledrive_file with {field!r} needs it and 'dest' as parallel lists",
                              field="dest" if isinstance(value, list) else field)
    jobs = list(zip(value, dest)) if many else [(value, dest)]
    for i, (steps, _) in enumerate(jobs):
        if not isinstance(steps, list) or not steps or not all(isinstance(s, str) and s for s in steps):
            raise TaskConfigError(f"googledrive_file: {field!r} must hold non-empty lists of strings, got {steps!r}",
                                  field=f"{field}[{i}]" if many else field)
    with drive_for(ctx, {"settings_file": settings_file}, "googledrive_file") as drive:
        found = [_drive_download(ctx, drive, steps, field.startswith("query"), d) for steps, d in jobs]
    return found if many else found[0]
