"""Cells as a spreadsheet displays them: a cached value rendered through its number format.

An xlsx stores numbers; what a user sees is the number through the cell's number format
("0000000" pads an id, '0.0,, "M"' shows millions). :func:`display_text` renders a value the way
Calc does for the formats tasks use: sections and conditions, ``0 # ?``, thousands and scaling
commas, ``%``, ``E+``, literals, currency tags, ``@``, dates and times, elapsed ``[h]``.
:func:`printed_lines` reads a whole sheet as displayed, for ``compare_table``'s ``sheet_print`` rule.
"""
from __future__ import annotations

import csv
import datetime
import io
import math
import re
from decimal import ROUND_HALF_UP, Context, Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Any

from openpyxl.utils.datetime import from_excel, to_excel

if TYPE_CHECKING:
    from desktop_env.evaluators.metrics.table import Book


def _split_sections(fmt: str) -> list[str]:
    """The ``;``-separated sections of a number format (ignoring ``;`` inside quotes or brackets)."""
    sections, cur, quoted, bracket, escaped = [], [], False, False, False
    for ch in fmt:
        if escaped:
            escaped = False
        elif ch == "\\" and not quoted:
            escaped = True
        elif ch == '"':
            quoted = not quoted
        elif not quoted and ch == "[":
            bracket = True
        elif not quoted and ch == "]":
            bracket = False
        elif ch == ";" and not quoted and not bracket:
            sections.append("".join(cur))
            cur = []
            continue
        cur.append(ch)
    sections.append("".join(cur))
    return sections


_ELAPSED = re.compile(r"^\[(h+|m+|s+)\]$", re.I)
_CONDITION = re.compile(r"^\[(<=|>=|<>|<|>|=)(-?\d+(?:\.\d*)?)\]$")
_DATE_TOKEN = re.compile(r"(?i)yyyy|yyy|yy|y|mmmmm|mmmm|mmm|mm|m|dddd|ddd|dd|d|hh|h|ss|s|am/pm|a/p")


def _tokens(section: str) -> list[tuple[str, str]]:
    """``(kind, text)`` tokens of one format section.

    Kinds: ``lit`` (literal text), ``digit`` (0 # ?), ``point``, ``comma``, ``percent``, ``exp`` (E+ / E-),
    ``at`` (the text), ``general``, ``elapsed`` ([h] [mm] [ss]), ``cond`` ([>100]), ``date`` (y m d h s AM/PM),
    ``frac`` (/ in a fraction).
    """
    out, i, n = [], 0, len(section)
    while i < n:
        ch = section[i]
        if ch == '"':
            j = section.find('"', i + 1)
            j = n if j < 0 else j
            out.append(("lit", section[i + 1:j]))
            i = j + 1
        elif ch == "\\" and i + 1 < n:
            out.append(("lit", section[i + 1]))
            i += 2
        elif ch == "_" and i + 1 < n:
            out.append(("lit", " "))  # a space as wide as the next character
            i += 2
        elif ch == "*" and i + 1 < n:
            i += 2  # repeat to fill the column: nothing in a text export
        elif ch == "[":
            j = section.find("]", i)
            j = n - 1 if j < 0 else j
            inner = section[i:j + 1]
            if _ELAPSED.match(inner):
                out.append(("elapsed", inner[1:-1].lower()))
            elif _CONDITION.match(inner):
                out.append(("cond", inner))
            elif inner.startswith("[$"):
                out.append(("lit", inner[2:-1].split("-", 1)[0]))  # [$€-407] shows the symbol
            i = j + 1  # colours ([Red]) and locales show nothing
        elif section[i:i + 7].lower() == "general":
            out.append(("general", "General"))
            i += 7
        elif ch in "0#?":
            out.append(("digit", ch))
            i += 1
        elif ch == ".":
            out.append(("point", "."))
            i += 1
        elif ch == ",":
            out.append(("comma", ","))
            i += 1
        elif ch == "%":
            out.append(("percent", "%"))
            i += 1
        elif ch in "Ee" and i + 1 < n and section[i + 1] in "+-":
            out.append(("exp", section[i + 1]))
            i += 2
        elif ch == "@":
            out.append(("at", "@"))
            i += 1
        elif ch == "/" and any(k == "digit" for k, _ in out):
            out.append(("frac", "/"))
            i += 1
        else:
            m = _DATE_TOKEN.match(section, i)
            if m:
                out.append(("date", m.group(0)))
                i = m.end()
            else:
                out.append(("lit", ch))
                i += 1
    return out


def _is_date_section(tokens) -> bool:
    return any(k in ("date", "elapsed") for k, _ in tokens)


def _general(x: float) -> str:
    """A number in the General format: integers without a point, others to 15 significant digits."""
    if x == int(x) and abs(x) < 1e15:
        return str(int(x))
    text = format(x, ".15g")
    if "e" in text:
        mantissa, exp = text.split("e")
        text = f"{mantissa}E{exp[0]}{exp[1:].zfill(2)}"
    return text


_WIDE = Context(prec=400)  # room for any double written out in full


def _round_half_up(x: float, places: int) -> Decimal:
    # 15 significant digits first, as a spreadsheet does, so 2.675 rounds to 2.68
    return Decimal(format(x, ".15g")).quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP, context=_WIDE)


def _render_number(x: float, tokens: list) -> str:
    """``x`` (>= 0; the caller shows the sign) through number tokens."""
    if any(k == "frac" for k, _ in tokens):
        return _general(x)  # fractions (# ?/?) are not rendered: shown as General
    digits_at = [i for i, (k, _) in enumerate(tokens) if k == "digit"]
    if not digits_at and not any(k == "general" for k, _ in tokens):
        return "".join(t for k, t in tokens if k in ("lit", "percent"))
    point = next((i for i, (k, _) in enumerate(tokens) if k == "point"), None)
    exp_at = next((i for i, (k, _) in enumerate(tokens) if k == "exp"), None)
    int_end = min(i for i in (point, exp_at, len(tokens)) if i is not None)
    int_digits = [i for i in digits_at if i < int_end]
    frac_end = exp_at if exp_at is not None else len(tokens)
    frac_digits = [i for i in digits_at if point is not None and point < i < frac_end]
    exp_digits = [i for i in digits_at if exp_at is not None and i > exp_at]
    grouping, scale = False, 0
    for i, (k, _) in enumerate(tokens):
        if k != "comma":
            continue
        if any(d < i for d in int_digits) and any(i < d for d in int_digits):
            grouping = True
        elif any(d < i for d in digits_at):
            scale += 1  # a comma right of the digits divides by a thousand
    x = x * 100 ** sum(1 for k, _ in tokens if k == "percent") / 1000 ** scale
    if any(k == "general" for k, _ in tokens):
        shown = {"general": _general(x)}
        return "".join(shown.get(k, t) for k, t in tokens if k in ("lit", "general", "percent"))
    exponent = 0
    if exp_at is not None and x != 0:
        width = max(len(int_digits), 1)
        magnitude = math.floor(math.log10(abs(x)))
        if width > 1 and any(tokens[i][1] == "#" for i in int_digits):
            exponent = (magnitude // width) * width  # engineering notation: ##0.0E+0
        else:
            exponent = magnitude - (width - 1)
        x = x / 10 ** exponent
        if abs(_round_half_up(x, len(frac_digits))) >= 10 ** width:
            exponent += 1
            x /= 10
    rounded = _round_half_up(x, len(frac_digits))
    int_text, _, frac_text = f"{rounded:f}".partition(".")
    frac_text = frac_text.ljust(len(frac_digits), "0")
    if int_text == "0" and not any(tokens[i][1] == "0" for i in int_digits):
        int_text = ""
    placed: dict[int, str] = {}
    if grouping:
        zeros = sum(1 for i in int_digits if tokens[i][1] == "0")
        padded = int_text.zfill(zeros) if int_text or zeros else ""
        placed = {i: "" for i in int_digits}
        placed[int_digits[0]] = _group_digits(padded) if padded else ""
    else:
        remaining = int_text
        for n_from_right, i in enumerate(reversed(int_digits)):
            is_leftmost = n_from_right == len(int_digits) - 1
            if remaining:
                placed[i] = remaining if is_leftmost else remaining[-1]
                remaining = "" if is_leftmost else remaining[:-1]
            else:
                placed[i] = {"0": "0", "?": " ", "#": ""}[tokens[i][1]]
    shown_frac = list(frac_text)
    for pos in range(len(frac_digits) - 1, -1, -1):
        kind = tokens[frac_digits[pos]][1]
        if shown_frac[pos] != "0" or kind == "0":
            break
        shown_frac[pos] = " " if kind == "?" else ""
    for pos, i in enumerate(frac_digits):
        placed[i] = shown_frac[pos]
    if exp_at is not None:
        exp_text = str(abs(exponent)).zfill(sum(1 for i in exp_digits if tokens[i][1] == "0"))
        exp_sign = "-" if exponent < 0 else ("+" if tokens[exp_at][1] == "+" else "")
        placed[exp_at] = f"E{exp_sign}{exp_text}"
        for i in exp_digits:
            placed[i] = ""
    out = []
    for i, (k, t) in enumerate(tokens):
        if i in placed:
            out.append(placed[i])
        elif k in ("lit", "point", "percent"):
            out.append(t)
    return "".join(out)


def _group_digits(digits: str) -> str:
    """``0001234`` -> ``0,001,234``: thousands separators over a digit string, leading zeros kept."""
    head = len(digits) % 3 or 3
    return ",".join([digits[:head]] + [digits[i:i + 3] for i in range(head, len(digits), 3)])


_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September",
           "October", "November", "December")
_DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")


def _render_date(value: Any, tokens: list) -> str:
    """A date/time value (or its serial number) through date tokens (y m d h s AM/PM [h] .00)."""
    if isinstance(value, (datetime.datetime, datetime.date, datetime.time, datetime.timedelta)):
        serial = float(to_excel(value))
    else:
        serial = float(value)
    sub_digits = 0
    for i, (k, t) in enumerate(tokens):  # ss.00: fractions of a second
        if k == "point" and i > 0 and tokens[i - 1][0] == "date" and tokens[i - 1][1].lower().startswith("s"):
            sub_digits = sum(1 for k2, t2 in tokens[i + 1:i + 4] if k2 == "digit")
    day = math.floor(serial)
    seconds = round((serial - day) * 86400, sub_digits)
    if seconds >= 86400:
        day, seconds = day + 1, seconds - 86400
    total_seconds = day * 86400 + seconds
    try:
        date = from_excel(day) if day >= 1 else datetime.datetime(1899, 12, 30)
    except (ValueError, OverflowError):
        return _general(serial)
    date = date.date() if isinstance(date, datetime.datetime) else date
    hour, minute, second = int(seconds // 3600), int(seconds % 3600 // 60), seconds % 60
    twelve = any(k == "date" and t.lower() in ("am/pm", "a/p") for k, t in tokens)
    out, skip_digits = [], False
    date_tokens = [(i, t.lower()) for i, (k, t) in enumerate(tokens) if k == "date"]
    for i, (k, t) in enumerate(tokens):
        if skip_digits and k == "digit":
            continue  # the 00 of ss.00, already written
        skip_digits = False
        low = t.lower()
        if k == "elapsed":
            unit = low[0]
            amount = {"h": total_seconds // 3600, "m": total_seconds // 60, "s": total_seconds}[unit]
            out.append(str(int(amount)).zfill(len(low)))
        elif k == "date":
            position = next(n for n, (j, _) in enumerate(date_tokens) if j == i)
            before = date_tokens[position - 1][1] if position > 0 else ""
            after = date_tokens[position + 1][1] if position + 1 < len(date_tokens) else ""
            is_minute = low in ("m", "mm") and (before.startswith("h") or after.startswith("s")
                                                 or any(k2 == "elapsed" and t2[0] == "h" for k2, t2 in tokens[:i]))
            if low.startswith("y"):
                out.append(str(date.year) if len(low) > 2 else f"{date.year % 100:02d}")
            elif is_minute:
                out.append(f"{minute:02d}" if low == "mm" else str(minute))
            elif low.startswith("m"):
                name = _MONTHS[date.month - 1]
                out.append({1: str(date.month), 2: f"{date.month:02d}", 3: name[:3], 4: name}.get(len(low), name[0]))
            elif low.startswith("d"):
                name = _DAYS[date.weekday()]
                out.append({1: str(date.day), 2: f"{date.day:02d}", 3: name[:3]}.get(len(low), name))
            elif low.startswith("h"):
                shown = (hour % 12 or 12) if twelve else hour
                out.append(f"{shown:02d}" if low == "hh" else str(shown))
            elif low.startswith("s"):
                out.append(f"{int(second):02d}" if low == "ss" else str(int(second)))
            elif low == "am/pm":
                out.append("AM" if hour < 12 else "PM")
            elif low == "a/p":
                out.append("A" if hour < 12 else "P")
            else:
                out.append(t)
        elif k == "point" and sub_digits and i > 0 and tokens[i - 1][1].lower().startswith("s"):
            fraction = f"{second - int(second):.{sub_digits}f}"[2:]
            out.append("." + fraction)
            skip_digits = True
        elif k in ("lit", "point", "comma", "percent"):
            out.append(t)
        elif k == "digit":
            out.append(t)
    return "".join(out)


def display_text(value: Any, number_format: str | None) -> str:
    """The text a spreadsheet shows for ``value`` formatted by ``number_format``.

    Covers the format language's sections (positive;negative;zero;text), literals (quoted, escaped,
    ``[$€-407]``), digit placeholders ``0 # ?``, thousands separators and scaling commas, ``%``,
    scientific ``E+``, ``@`` and dates/times (y m d h s AM/PM, elapsed ``[h]``, ``ss.00``).
    Colours, column fill (``*``) and locales show nothing.
    """
    if value is None:
        return ""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    fmt = number_format or "General"
    sections = _split_sections(fmt)
    if isinstance(value, str):
        text_section = sections[3] if len(sections) >= 4 else next((s for s in sections if "@" in s), None)
        if text_section is None:
            return value
        return "".join(value if k == "at" else t for k, t in _tokens(text_section) if k in ("lit", "at"))
    if isinstance(value, (datetime.datetime, datetime.date, datetime.time, datetime.timedelta)):
        tokens = _tokens(sections[0])
        return _render_date(value, tokens) if _is_date_section(tokens) else _general(float(to_excel(value)))
    if not isinstance(value, (int, float)) or isinstance(value, float) and not math.isfinite(value):
        return str(value)
    x = float(value)
    parsed = [_tokens(s) for s in sections]
    conditions = [next((t for k, t in toks if k == "cond"), None) for toks in parsed]
    if any(conditions):
        chosen = next((n for n, c in enumerate(conditions) if c and _condition_holds(x, c)), None)
        if chosen is None:
            chosen = next((n for n, c in enumerate(conditions) if c is None), len(parsed) - 1)
        tokens, signed = parsed[chosen], True
    elif len(parsed) == 1 or (x >= 0 and (len(parsed) < 3 or x != 0)):
        tokens, signed = parsed[0], len(parsed) == 1
    elif x < 0:
        tokens, signed = parsed[1], False
    else:
        tokens, signed = parsed[2], False
    if _is_date_section(tokens):
        return _render_date(x, tokens)
    if any(k == "at" for k, _ in tokens):
        return "".join(_general(x) if k == "at" else t for k, t in tokens if k in ("lit", "at"))
    shown = _render_number(abs(x), tokens)
    if signed and x < 0 and any(c in "123456789" for c in shown):
        shown = "-" + shown  # -0.00 shows as 0.00
    return shown


def _condition_holds(x: float, cond: str) -> bool:
    m = _CONDITION.match(cond)
    op, ref = m.group(1), float(m.group(2))
    return {"<": x < ref, ">": x > ref, "=": x == ref, "<=": x <= ref, ">=": x >= ref, "<>": x != ref}[op]


# --------------------------------------------------------------------------- sheets as displayed
# Cells as displayed: LibreOffice's CSV exports beside both books when they exist, else each sheet
# rendered through its number formats (display_text).

def _csv_line(cells: list[str]) -> str:
    out = io.StringIO()
    csv.writer(out, lineterminator="").writerow(cells)
    return out.getvalue()


def export_path(book: Book, sheet: str) -> Path:
    """Where the suite's postconfig puts LibreOffice's CSV export of a sheet: ``<book>-<sheet>.csv``."""
    return book.path.with_name(f"{book.path.stem}-{sheet}.csv")


def printed_lines(book: Book, sheet: str, use_export: bool = True) -> list[str]:
    """The sheet as it displays, one CSV line per row (stripped; trailing blank lines dropped).

    With ``use_export`` and a ``<book>-<sheet>.csv`` beside the book, that export is read; otherwise the
    sheet is rendered from its cached values and number formats, from A1 to the last cell with a value.
    """
    export = export_path(book, sheet)
    if use_export and export.is_file():
        lines = export.read_text(encoding="utf-8-sig", errors="replace").splitlines()
    else:
        ws = book.values[sheet]
        filled = [(c.row, c.column) for row in ws.iter_rows() for c in row if c.value is not None]
        last_row = max((r for r, _ in filled), default=0)
        last_col = max((c for _, c in filled), default=0)
        lines = [_csv_line([display_text(ws.cell(r, c).value, ws.cell(r, c).number_format)
                            for c in range(1, last_col + 1)]) for r in range(1, last_row + 1)]
    lines = [line.strip() for line in lines]
    while lines and not lines[-1]:
        lines.pop()
    return lines
