"""Table metrics: ``compare_csv`` and ``compare_table`` (xlsx data, display, charts, pivots, styles, validation...)."""
from __future__ import annotations

import csv
import datetime
import difflib
import io
import logging
import math
import re
import warnings
import zipfile
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Context, Decimal
from pathlib import Path, PurePosixPath
from typing import Any, Callable
from xml.etree import ElementTree

import openpyxl
import pandas as pd
from openpyxl.cell.cell import MergedCell
from openpyxl.utils.cell import column_index_from_string, coordinate_from_string, get_column_letter
from openpyxl.utils.datetime import from_excel, to_excel
from openpyxl.utils.exceptions import CellCoordinatesException
from openpyxl.workbook.workbook import Workbook
from openpyxl.worksheet.dimensions import ColumnDimension, RowDimension

from desktop_env.evaluators.metrics.conditional import conditional_overlay
from desktop_env.evaluators.metrics.utils import (MetricError, OptionError, as_existing_path, cell_boxes,
                                                  check_rule_method, match_value_to_rule)
from desktop_env.registry import METRICS

logger = logging.getLogger(__name__)


# --------------------------------------------------------------------------- compare_csv
def _csv_rows(path, strict: bool, ignore_case: bool) -> list[list[str]]:
    text = path.read_text(encoding="utf-8-sig", errors="replace")
    rows = list(csv.reader(io.StringIO(text)))
    out = []
    for row in rows:
        cells = [c if strict else c.strip() for c in row]
        if ignore_case:
            cells = [c.lower() for c in cells]
        if not strict and not any(cells):
            continue  # blank lines
        out.append(cells)
    return out


def _cells_equal(a: str, b: str, tolerance: float | None) -> bool:
    if a == b:
        return True
    if tolerance is None:
        return False
    try:
        return math.isclose(float(a), float(b), rel_tol=0, abs_tol=tolerance)
    except ValueError:
        return False


@METRICS.register()
def compare_csv(result: Any, expected: Any, strict: bool = True, ignore_case: bool = False,
                ignore_order: bool = False, tolerance: float | None = None) -> float:
    """1 when two CSV files hold the same rows.

    Args:
        strict: compare cells exactly; False strips cells and drops blank lines.
        ignore_case: compare lower-cased.
        ignore_order: compare the data rows as a multiset (the header row stays first).
        tolerance: numeric cells within this absolute tolerance are equal.
    """
    pa, pb = as_existing_path(result), as_existing_path(expected)
    if pa is None or pb is None:
        return 0.0
    a, b = _csv_rows(pa, strict, ignore_case), _csv_rows(pb, strict, ignore_case)
    if ignore_order:
        a = a[:1] + sorted(a[1:])
        b = b[:1] + sorted(b[1:])
    if len(a) != len(b):
        return 0.0
    for ra, rb in zip(a, b):
        if len(ra) != len(rb) or not all(_cells_equal(x, y, tolerance) for x, y in zip(ra, rb)):
            return 0.0
    return 1.0


# --------------------------------------------------------------------------- compare_table: books and sheets
@dataclass
class _Book:
    path: Path
    wb: Workbook           # formulas and styles
    values: Workbook       # cached values (data_only)

    @property
    def names(self) -> list[str]:
        return self.wb.sheetnames


def _open_book(path) -> _Book | None:
    try:
        with warnings.catch_warnings():
            # openpyxl drops extensions it cannot keep (sparklines, x14 validations); rules read those from the XML
            warnings.filterwarnings("ignore", message=".*extension is not supported", category=UserWarning)
            return _Book(Path(path), openpyxl.load_workbook(path), openpyxl.load_workbook(path, data_only=True))
    except Exception as exc:  # openpyxl raises many types on a bad file (zip, xml, key errors)
        logger.info("cannot open workbook %s: %s", path, exc)
        return None


_SHEET_REF_FORMS = "an int (a result sheet index), 'RI<i>', 'RN<name>', 'EI<i>' or 'EN<name>'"


def _sheet_ref_parts(ref: Any) -> tuple[str, str, Any]:
    """``(book, kind, key)`` of a sheet reference: book ``R``/``E``, kind ``I`` (int key) or ``N`` (name).

    Raises:
        ValueError: a reference of none of the forms.
    """
    if isinstance(ref, bool) or not isinstance(ref, (int, str)):
        raise ValueError(f"bad sheet reference {ref!r}: use {_SHEET_REF_FORMS}")
    if isinstance(ref, int):
        return "R", "I", ref
    if len(ref) < 3 or ref[0] not in "RE" or ref[1] not in "IN":
        raise ValueError(f"bad sheet reference {ref!r}: use {_SHEET_REF_FORMS}")
    if ref[1] == "I":
        try:
            return ref[0], "I", int(ref[2:])
        except ValueError:
            raise ValueError(f"bad sheet index in {ref!r}: use {_SHEET_REF_FORMS}") from None
    return ref[0], "N", ref[2:]


def parse_sheet_ref(ref: Any, result: _Book | None, expected: _Book | None) -> tuple[_Book | None, str | None]:
    """Resolve a sheet reference to (book, sheet name); the name is None when the sheet does not exist.

    An int is the result's sheet index; ``RI<i>``/``RN<name>`` a result sheet by index/name;
    ``EI<i>``/``EN<name>`` an expected sheet by index/name.

    Raises:
        MetricError: a reference of none of these forms.
    """
    try:
        side, kind, key = _sheet_ref_parts(ref)
    except ValueError as exc:
        raise MetricError(str(exc)) from None
    book = result if side == "R" else expected
    if book is None:
        return None, None
    if kind == "I":
        return (book, book.names[key]) if -len(book.names) <= key < len(book.names) else (book, None)
    return (book, key) if key in book.names else (book, None)


@dataclass
class _Books:
    """The two workbooks a rule may refer to."""

    result: _Book
    expected: _Book | None

    def sheet(self, rule: dict, key: str) -> tuple[_Book, str] | None:
        """The book and sheet named by ``rule[key]``; None (logged) when the sheet does not exist.

        Raises:
            MetricError: the reference points at the expected book and the task gives none.
        """
        book, name = parse_sheet_ref(rule[key], self.result, self.expected)
        if book is None:
            raise MetricError(f"rule {rule['type']!r} refers to the expected book ({key}={rule[key]!r}), "
                              f"but the task gives none")
        if name is None:
            logger.info("compare_table %s: sheet %r not found in %s", rule["type"], rule[key], book.path.name)
            return None
        return book, name

    def pair(self, rule: dict) -> tuple[tuple[_Book, str], tuple[_Book, str]] | None:
        """The sheets ``sheet_idx0`` and ``sheet_idx1``; None when either does not exist."""
        first, second = self.sheet(rule, "sheet_idx0"), self.sheet(rule, "sheet_idx1")
        return (first, second) if first is not None and second is not None else None


def _compare_pair(rule: dict, books: _Books, load: Callable[[_Book, str], Any]) -> bool:
    """Whether ``load`` gives the same for sheets ``sheet_idx0`` and ``sheet_idx1``."""
    pair = books.pair(rule)
    if pair is None:
        return False
    first, second = load(*pair[0]), load(*pair[1])
    if first != second:
        logger.info("compare_table %s: %r differs from %r:\n  %.300r\n  %.300r", rule["type"], rule["sheet_idx0"],
                    rule["sheet_idx1"], first, second)
    return first == second


# --------------------------------------------------------------------------- sheet_data
def _frame(book: _Book, sheet: str) -> pd.DataFrame:
    return pd.read_excel(book.path, sheet_name=sheet, engine="openpyxl")


def _norm_cell(v, precision: int):
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return None
    if isinstance(v, bool):
        return v
    if isinstance(v, (int, float)):
        return round(float(v), precision)
    if hasattr(v, "isoformat"):
        return v.isoformat()
    return str(v)


def frames_equal(a: pd.DataFrame, b: pd.DataFrame, precision: int = 4) -> bool:
    """Same shape, same header, and cells equal after rounding numbers to ``precision`` decimals."""
    if a.shape != b.shape:
        return False
    if [str(c) for c in a.columns] != [str(c) for c in b.columns]:
        return False
    for ra, rb in zip(a.itertuples(index=False), b.itertuples(index=False)):
        if [_norm_cell(x, precision) for x in ra] != [_norm_cell(y, precision) for y in rb]:
            return False
    return True


def _rule_sheet_data(rule: dict, books: _Books) -> bool:
    pair = books.pair(rule)
    if pair is None:
        return False
    (b0, s0), (b1, s1) = pair
    return frames_equal(_frame(b0, s0), _frame(b1, s1), int(rule.get("precision", 4)))


# --------------------------------------------------------------------------- sheet_print: displayed text
# An xlsx stores numbers; what a user sees is the number through the cell's number format
# ("0000000" pads an id, '0.0,, "M"' shows millions). The suite's tasks export each sheet with
# LibreOffice ("save cell contents as shown") to <book>-<sheet>.csv beside the book; when both
# books have that export it is compared, otherwise both sheets are rendered here the same way.

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


def _csv_line(cells: list[str]) -> str:
    out = io.StringIO()
    csv.writer(out, lineterminator="").writerow(cells)
    return out.getvalue()


def _export_path(book: _Book, sheet: str) -> Path:
    """Where the suite's postconfig puts LibreOffice's CSV export of a sheet: ``<book>-<sheet>.csv``."""
    return book.path.with_name(f"{book.path.stem}-{sheet}.csv")


def printed_lines(book: _Book, sheet: str, use_export: bool = True) -> list[str]:
    """The sheet as it displays, one CSV line per row (stripped; trailing blank lines dropped).

    With ``use_export`` and a ``<book>-<sheet>.csv`` beside the book, that export is read; otherwise the
    sheet is rendered from its cached values and number formats, from A1 to the last cell with a value.
    """
    export = _export_path(book, sheet)
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


def _rule_sheet_print(rule: dict, books: _Books) -> bool:
    pair = books.pair(rule)
    if pair is None:
        return False
    (b0, s0), (b1, s1) = pair
    use_export = _export_path(b0, s0).is_file() and _export_path(b1, s1).is_file()
    if not use_export:
        logger.info("sheet_print: no CSV export beside both books, rendering %r and %r from their number formats",
                    s0, s1)
    first, second = printed_lines(b0, s0, use_export), printed_lines(b1, s1, use_export)
    if rule.get("ignore_case", False):
        first, second = [x.lower() for x in first], [x.lower() for x in second]
    if first != second:
        diff = next((n for n, (x, y) in enumerate(zip(first, second)) if x != y), min(len(first), len(second)))
        logger.info("sheet_print: line %d differs: %r vs %r", diff + 1, first[diff:diff + 1], second[diff:diff + 1])
    return first == second


# --------------------------------------------------------------------------- sheet_fuzzy
FUZZY_TYPES = ("exact_match", "fuzzy_match", "includes", "included_by")


def _fuzzy_text(value: Any) -> str:
    """A cell's cached value as sheet_fuzzy compares it: numbers (and dates, as serials) as floats
    (``10.0``), an empty cell as ``None``, as the suite's reference checker reads them."""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, (datetime.datetime, datetime.date, datetime.time, datetime.timedelta)):
        return str(float(to_excel(value)))
    if isinstance(value, (int, float)):
        return str(float(value))
    return str(value)


def _lcs_length(a: str, b: str) -> int:
    """Length of the longest common subsequence (bit-parallel, one pass over ``b``)."""
    if not a or not b:
        return 0
    masks: dict[str, int] = {}
    for i, ch in enumerate(a):
        masks[ch] = masks.get(ch, 0) | (1 << i)
    full = (1 << len(a)) - 1
    v = full
    for ch in b:
        u = v & masks.get(ch, 0)
        v = ((v + u) | (v - u)) & full
    return len(a) - bin(v).count("1")


def fuzzy_ratio(a: str, b: str) -> float:
    """Similarity 0..100: ``200 * LCS / (len(a) + len(b))`` (the Indel ratio; 100 for two empty strings)."""
    if not a and not b:
        return 100.0
    return 200.0 * _lcs_length(a, b) / (len(a) + len(b))


def _fuzzy_normalize(text: str, spec: dict) -> str:
    for old, new in spec.get("normalization", []):
        text = text.replace(old, new)
    if "trim_leadings" in spec:
        text = text.lstrip(spec["trim_leadings"])
    if "trim_trailings" in spec:
        text = text.rstrip(spec["trim_trailings"])
    if "ignore_chars" in spec:
        text = "".join(ch for ch in text if ch not in set(spec["ignore_chars"]))
    if spec.get("ignore_case", False):
        text = text.lower()
    return text


def _fuzzy_cells_match(first: str, second: str, spec: dict) -> bool:
    kind = spec["type"]
    if kind == "exact_match":
        return first == second
    if kind == "includes":
        return second in first
    if kind == "included_by":
        return first in second
    return fuzzy_ratio(first, second) >= float(spec.get("threshold", 85.0))


def _rule_sheet_fuzzy(rule: dict, books: _Books) -> bool:
    pair = books.pair(rule)
    if pair is None:
        return False
    (b0, s0), (b1, s1) = pair
    ws0, ws1 = b0.values[s0], b1.values[s1]
    # beyond both sheets' used area the two cells are empty, hence equal under every match type
    last_row, last_col = max(ws0.max_row, ws1.max_row), max(ws0.max_column, ws1.max_column)
    for spec in rule["rules"]:
        for box in cell_boxes(spec["range"]):
            for row in range(box[1], min(box[3], last_row) + 1):
                for col in range(box[0], min(box[2], last_col) + 1):
                    first = _fuzzy_normalize(_fuzzy_text(ws0.cell(row, col).value), spec)
                    second = _fuzzy_normalize(_fuzzy_text(ws1.cell(row, col).value), spec)
                    if not _fuzzy_cells_match(first, second, spec):
                        logger.info("sheet_fuzzy %s: %s%d %r vs %r fails %s", s0, get_column_letter(col), row,
                                    first, second, spec["type"])
                        return False
    return True


# --------------------------------------------------------------------------- charts
def _title_text(title) -> str | None:
    try:
        return "".join(r.t for p in title.tx.rich.p for r in (p.r or []))
    except AttributeError:
        return None


def _axis_title(chart, axis: str) -> str | None:
    ax = getattr(chart, axis, None)
    return _title_text(ax.title) if ax is not None and ax.title is not None else None


def _anchor(chart):
    marker = getattr(chart.anchor, "_from", None)
    return (marker.col, marker.row) if marker is not None else str(chart.anchor)


#: chart property -> its reader; the one list of chart_props names
CHART_READERS: dict[str, Callable[[Any], Any]] = {
    "type": lambda ch: ch.tagname,
    "title": lambda ch: _title_text(ch.title) if ch.title is not None else None,
    "legend": lambda ch: ch.legend.position if ch.legend is not None else None,
    "xtitle": lambda ch: _axis_title(ch, "x_axis"),
    "ytitle": lambda ch: _axis_title(ch, "y_axis"),
    "ztitle": lambda ch: _axis_title(ch, "z_axis"),
    "direction": lambda ch: getattr(ch, "barDir", None),
    "anchor": _anchor,
    "width": lambda ch: ch.width,
    "height": lambda ch: ch.height,
    "n_series": lambda ch: len(ch.series),
}


def _ref_of(data) -> str:
    if data is None:
        return ""
    for attr in ("numRef", "strRef"):
        ref = getattr(data, attr, None)
        if ref is not None and getattr(ref, "f", None):
            return ref.f
    return ""


def load_charts(book: _Book, sheet: str, chart_props=()) -> dict[str, dict]:
    """Charts of a sheet keyed by their series references, with the asked properties (:data:`CHART_READERS`).

    Raises:
        MetricError: an unknown property.
    """
    unknown = [p for p in chart_props if p not in CHART_READERS]
    if unknown:
        raise MetricError(f"unknown chart property {unknown[0]!r}; expected one of {list(CHART_READERS)}")
    out = {}
    for ch in book.wb[sheet]._charts:
        key = ";".join(f"{_ref_of(s.val)},{_ref_of(s.cat)}" for s in ch.series)
        out[key] = {prop: CHART_READERS[prop](ch) for prop in chart_props}
    return out


# --------------------------------------------------------------------------- pivot tables
def _pivot_selection(pvt, ordered: bool) -> list:
    lists = [[i.x for i in (pf.items or []) if i.x is not None and not i.h] for pf in pvt.pivotFields]
    return lists if ordered else [sorted(x) for x in lists]


#: pivot property -> reader(pivot, field name of an index, the asked properties); the one list of pivot_props
PIVOT_READERS: dict[str, Callable[[Any, Callable, set], Any] | None] = {
    "name": lambda p, fname, props: p.name,
    "location": lambda p, fname, props: p.location.ref,
    "show_total": lambda p, fname, props: (bool(p.rowGrandTotals), bool(p.colGrandTotals)),
    "show_empty_row": lambda p, fname, props: bool(p.showEmptyRow),
    "show_empty_col": lambda p, fname, props: bool(p.showEmptyCol),
    "show_headers": lambda p, fname, props: bool(p.showHeaders),
    "row_fields": lambda p, fname, props: [fname(f.x) for f in p.rowFields],
    # -2 is the "Values" pseudo-field
    "col_fields": lambda p, fname, props: [fname(f.x) for f in p.colFields if f.x >= 0],
    "filter": lambda p, fname, props: sorted(str(fname(f.fld)) for f in p.pageFields),
    "data_fields": lambda p, fname, props: [(fname(f.fld), f.subtotal, f.name if "data_fields_name" in props else None)
                                            for f in p.dataFields],
    "selection": lambda p, fname, props: _pivot_selection(p, "ordered" in props),
    "data_fields_name": None,  # modifies data_fields
    "ordered": None,           # modifies selection
}


def load_pivots(book: _Book, sheet: str, pivot_props=()) -> dict[str, dict]:
    """Pivot tables of a sheet keyed by their source (sheet and range), with the asked properties.

    Properties (:data:`PIVOT_READERS`): ``name``, ``location``, ``show_total`` (grand totals on rows
    and cols), ``show_empty_row``, ``show_empty_col``, ``show_headers``, ``row_fields``, ``col_fields``,
    ``filter`` (page fields), ``data_fields`` (field and aggregation; with ``data_fields_name`` also the
    caption), ``selection`` (visible items per field; in file order with ``ordered``).

    Raises:
        MetricError: an unknown property.
    """
    unknown = [p for p in pivot_props if p not in PIVOT_READERS]
    if unknown:
        raise MetricError(f"unknown pivot property {unknown[0]!r}; expected one of {list(PIVOT_READERS)}")
    props = set(pivot_props)
    out = {}
    for pvt in book.wb[sheet]._pivots:
        src = pvt.cache.cacheSource.worksheetSource
        key = f"{src.sheet}!{src.ref}" if src is not None else str(pvt.cacheId)
        names = [f.name for f in pvt.cache.cacheFields]

        def fname(i, names=names):
            return names[i] if 0 <= i < len(names) else i
        out[key] = {prop: PIVOT_READERS[prop](pvt, fname, props) for prop in pivot_props if PIVOT_READERS[prop]}
    return out


# --------------------------------------------------------------------------- cell styles
def _font(prop: str):
    return lambda cell: None if cell.value is None else getattr(cell.font, prop)


def _fill_color(which: str):
    def read(cell):
        if not cell.fill.fill_type:
            return None
        return getattr(getattr(cell.fill, which), "rgb", None)
    return read


#: style property -> reader(cell); the one list of style property names (style rules, check_cell props)
STYLE_READERS: dict[str, Callable[[Any], Any]] = {
    "number_format": lambda cell: None if cell.value is None else cell.number_format,
    "font_name": _font("name"),
    "font_family": _font("family"),
    "font_size": _font("size"),
    "font_bold": lambda cell: None if cell.value is None else bool(cell.font.bold),
    "font_italic": lambda cell: None if cell.value is None else bool(cell.font.italic),
    "font_underline": _font("underline"),
    "font_color": lambda cell: None if cell.value is None or cell.font.color is None
    else getattr(cell.font.color, "rgb", None),
    "fill_type": lambda cell: cell.fill.fill_type,
    "bgcolor": _fill_color("bgColor"),
    "fgcolor": _fill_color("fgColor"),
    "alignment": lambda cell: None if cell.value is None else cell.alignment.horizontal,
    "hyperlink": lambda cell: cell.hyperlink.target if getattr(cell, "hyperlink", None) is not None else None,
    # a cell covered by a merge (not its top-left cell)
    "merge": lambda cell: isinstance(cell, MergedCell),
}


def read_style(prop: str, cell) -> Any:
    """One style property of a cell (None for an empty cell, except fills, hyperlinks and merges).

    Raises:
        MetricError: an unknown property.
    """
    if prop not in STYLE_READERS:
        raise MetricError(f"unknown style property {prop!r}; expected one of {list(STYLE_READERS)}")
    return STYLE_READERS[prop](cell)


def shown_style(prop: str, cell, conditional: dict[str, Any] | None) -> Any:
    """A style property as the cell shows it: set by an applying conditional rule (``conditional``, from
    :func:`conditional_overlay`), else the cell's own. Font properties of an empty cell stay None."""
    if conditional and prop in conditional:
        return None if cell.value is None and prop.startswith("font_") else conditional[prop]
    return read_style(prop, cell)


def load_styles(book: _Book, sheet: str, props=()) -> dict[str, list]:
    """coordinate -> [style values as shown] for every cell of the sheet that has a value, a fill or a
    conditional format that applies to it.

    Raises:
        UnsupportedConditionalFormat: a conditional rule of the sheet that cannot be evaluated.
    """
    overlay = conditional_overlay(book.wb[sheet], book.values[sheet])
    out = {}
    for row in book.wb[sheet].iter_rows():
        for c in row:
            conditional = overlay.get(c.coordinate)
            if c.value is None and not c.fill.fill_type and not conditional:
                continue
            out[c.coordinate] = [shown_style(p, c, conditional) for p in props]
    return out


# --------------------------------------------------------------------------- sparklines
# openpyxl drops the x14 extension that holds sparklines, so they are read from the sheet's XML.
_NS = {
    "main": "http://schemas.openxmlformats.org/spreadsheetml/2006/main",
    "rel": "http://schemas.openxmlformats.org/officeDocument/2006/relationships",
    "pkg": "http://schemas.openxmlformats.org/package/2006/relationships",
    "x14": "http://schemas.microsoft.com/office/spreadsheetml/2009/9/main",
    "xm": "http://schemas.microsoft.com/office/excel/2006/main",
}


def _sheet_xml_path(z: zipfile.ZipFile, sheet: str) -> str | None:
    """The zip member holding ``sheet``, through workbook.xml and its relationships."""
    workbook = ElementTree.fromstring(z.read("xl/workbook.xml"))
    rel_id = next((s.get(f"{{{_NS['rel']}}}id") for s in workbook.iterfind("main:sheets/main:sheet", _NS)
                   if s.get("name") == sheet), None)
    rels = ElementTree.fromstring(z.read("xl/_rels/workbook.xml.rels"))
    target = next((r.get("Target") for r in rels.iterfind("pkg:Relationship", _NS) if r.get("Id") == rel_id), None)
    if target is None:
        return None
    return target.lstrip("/") if target.startswith("/") else str(PurePosixPath("xl") / target)


def load_sparklines(book: _Book, sheet: str) -> dict[str, str]:
    """Sparklines of a sheet: the cell(s) each is drawn in (``F3``) -> its data range (``Sheet1!C3:E3``)."""
    try:
        with zipfile.ZipFile(book.path) as z:
            member = _sheet_xml_path(z, sheet)
            root = ElementTree.fromstring(z.read(member)) if member else None
    except (zipfile.BadZipFile, KeyError, ElementTree.ParseError) as exc:
        logger.info("cannot read the sheet XML of %s in %s: %s", sheet, book.path.name, exc)
        return {}
    out = {}
    for line in (root.iter(f"{{{_NS['x14']}}}sparkline") if root is not None else []):
        where, data = line.findtext("xm:sqref", "", _NS), line.findtext("xm:f", "", _NS)
        out[where.strip()] = data.strip()
    return out


# --------------------------------------------------------------------------- data validation
#: the data validation attributes dv_props may test (``ranges``/``cells`` are aliases of ``sqref``)
DV_ATTRIBUTES = ("ranges", "sqref", "cells", "type", "formula1", "formula2", "operator", "allowBlank",
                 "showDropDown", "showInputMessage", "showErrorMessage", "error", "errorTitle", "errorStyle",
                 "prompt", "promptTitle", "imeMode")


def _rule_data_validation(rule: dict, books: _Books) -> bool:
    """At least as many validations as ``dv_props`` entries, and each validation matches one entry."""
    found = books.sheet(rule, "sheet_idx")
    if found is None:
        return False
    book, sheet = found
    validations = book.wb[sheet].data_validations.dataValidation
    wanted = rule["dv_props"]
    if len(validations) < len(wanted):
        logger.info("data_validation %s: %d validations, %d expected", sheet, len(validations), len(wanted))
        return False
    for dv in validations:
        if not any(all(match_value_to_rule(getattr(dv, attr), check) for attr, check in props.items())
                   for props in wanted):
            logger.info("data_validation %s: %s (type %s, formula1 %r) matches no dv_props entry", sheet,
                        dv.sqref, dv.type, dv.formula1)
            return False
    return True


# --------------------------------------------------------------------------- rows and columns
ROW_PROPS = ("hidden", "height", "collapsed", "outline_level", "outlineLevel", "customHeight")
COL_PROPS = ("hidden", "width", "collapsed", "outline_level", "outlineLevel", "customWidth", "bestFit",
             "auto_size", "min", "max")


def load_rows_or_cols(book: _Book, sheet: str, obj: str, props=()) -> dict[Any, dict]:
    """Row numbers (``obj`` "row") or column letters ("column") -> the asked properties.

    Column groups (``<col min=2 max=5>``) are spread to each column, and rows or columns whose
    properties are all at their defaults are left out, so two books that show the same rows and
    columns compare equal however their files group or list them.
    """
    ws = book.wb[sheet]
    fresh = RowDimension(ws, index=1) if obj == "row" else ColumnDimension(ws, index="A")
    default = {p: getattr(fresh, p) for p in props}
    out = {}
    for key, dim in getattr(ws, f"{obj}_dimensions").items():
        info = {p: getattr(dim, p) for p in props}
        if info == default:
            continue
        if obj == "row":
            out[key] = info
        else:
            first = dim.min or column_index_from_string(key)
            for index in range(first, max(dim.max or first, first) + 1):
                out[get_column_letter(index)] = info
    return out


# --------------------------------------------------------------------------- autofilter
def load_filters(book: _Book, sheet: str) -> dict[str, Any]:
    """The sheet's autofilter: its range, each filtered column's criteria, and its sort state."""
    auto = book.wb[sheet].auto_filter
    columns = []
    for col in auto.filterColumn:
        info: dict[str, Any] = {"col_id": col.colId, "hidden_button": col.hiddenButton,
                                "show_button": col.showButton}
        if col.filters is not None:
            info["filters_blank"] = col.filters.blank
            info["filters"] = set(col.filters.filter)
        if col.customFilters is not None:
            info["custom_filters_and"] = col.customFilters._and
            info["custom_filters"] = {(f.operator, f.val) for f in col.customFilters.customFilter}
        columns.append(info)
    out: dict[str, Any] = {"ref": auto.ref, "filter_column": sorted(columns, key=lambda d: d["col_id"])}
    sort = auto.sortState
    if sort is not None:
        out["sort_state"] = {
            "sort": sort.columnSort, "case": sort.caseSensitive, "method": sort.sortMethod, "ref": sort.ref,
            "condition": [{"descending": c.descending, "key": c.sortBy, "ref": c.ref, "custom_list": c.customList,
                           "dxf_id": c.dxfId, "icon": c.iconSet, "iconid": c.iconId} for c in sort.sortCondition]}
    return out


# --------------------------------------------------------------------------- single-sheet rules
def _rule_zoom(rule: dict, books: _Books) -> bool:
    found = books.sheet(rule, "sheet_idx")
    if found is None:
        return False
    book, sheet = found
    return match_value_to_rule(book.wb[sheet].sheet_view.zoomScale or 100, rule)


CELL_PROPS = ("value", "formula", *STYLE_READERS)


def _rule_check_cell(rule: dict, books: _Books) -> bool:
    found = books.sheet(rule, "sheet_idx")
    if found is None:
        return False
    book, sheet = found
    coordinate = rule["coordinate"]
    for prop, check in rule["props"].items():
        if prop == "value":
            value = book.values[sheet][coordinate].value
        elif prop == "formula":
            value = book.wb[sheet][coordinate].value
        else:
            overlay = conditional_overlay(book.wb[sheet], book.values[sheet])
            value = shown_style(prop, book.wb[sheet][coordinate], overlay.get(coordinate.replace("$", "").upper()))
        if not match_value_to_rule(value, check):
            logger.info("check_cell %s!%s %s=%r fails %r", sheet, coordinate, prop, value, check)
            return False
    return True


# --------------------------------------------------------------------------- validation of rules
def _closest(name: str, names) -> str:
    close = difflib.get_close_matches(str(name), list(names), n=1)
    return f"; did you mean {close[0]!r}?" if close else ""


def _check_names(rule: dict, key: str, field: str, known, what: str, required: bool = False) -> None:
    """``rule[key]`` is a list of names from ``known``."""
    if key not in rule:
        return
    names = rule[key]
    if not isinstance(names, list) or (required and not names):
        raise OptionError(f"must be a {'non-empty ' if required else ''}list of {what} names, got {names!r}",
                          f"{field}.{key}")
    for i, name in enumerate(names):
        if name not in known:
            raise OptionError(f"unknown {what} {name!r}{_closest(name, known)} (accepted: {', '.join(known)})",
                              f"{field}.{key}[{i}]")


def _check_sheet_data(rule: dict, field: str) -> None:
    precision = rule.get("precision", 4)
    if isinstance(precision, bool) or not isinstance(precision, int) or precision < 0:
        raise OptionError(f"must be a whole number of decimals >= 0, got {precision!r}", f"{field}.precision")


def _check_bool(rule: dict, key: str, field: str) -> None:
    if key in rule and not isinstance(rule[key], bool):
        raise OptionError(f"must be true or false, got {rule[key]!r}", f"{field}.{key}")


def _check_sheet_print(rule: dict, field: str) -> None:
    _check_bool(rule, "ignore_case", field)


def _check_range(value: Any, field: str) -> None:
    if not isinstance(value, (str, list)) or not value:
        raise OptionError(f"must be a cell range or a list of them (\"A1:B6\"), got {value!r}", field)
    try:
        cell_boxes(value)
    except ValueError as exc:
        raise OptionError(str(exc), field) from None


def _check_sheet_fuzzy(rule: dict, field: str) -> None:
    specs = rule["rules"]
    if not isinstance(specs, list) or not specs:
        raise OptionError(f"must be a non-empty list of {{range, type, ...}} objects, got {specs!r}",
                          f"{field}.rules")
    for i, spec in enumerate(specs):
        at = f"{field}.rules[{i}]"
        if not isinstance(spec, dict):
            raise OptionError(f"must be an object {{range, type, ...}}, got {spec!r}", at)
        for key in ("range", "type"):
            if key not in spec:
                raise OptionError(f"a sheet_fuzzy rule needs {key!r}", f"{at}.{key}")
        _check_range(spec["range"], f"{at}.range")
        if spec["type"] not in FUZZY_TYPES:
            raise OptionError(f"unknown match type {spec['type']!r}{_closest(spec['type'], FUZZY_TYPES)} "
                              f"(accepted: {', '.join(FUZZY_TYPES)})", f"{at}.type")
        threshold = spec.get("threshold", 85)
        if isinstance(threshold, bool) or not isinstance(threshold, (int, float)) or not 0 <= threshold <= 100:
            raise OptionError(f"must be a number from 0 to 100, got {threshold!r}", f"{at}.threshold")
        for key in ("ignore_chars", "trim_leadings", "trim_trailings"):
            if key in spec and not isinstance(spec[key], str):
                raise OptionError(f"must be a string of characters, got {spec[key]!r}", f"{at}.{key}")
        _check_bool(spec, "ignore_case", at)
        pairs = spec.get("normalization", [])
        if not isinstance(pairs, list) or not all(
                isinstance(p, (list, tuple)) and len(p) == 2 and all(isinstance(x, str) for x in p) for p in pairs):
            raise OptionError(f"must be a list of [from, to] string pairs, got {pairs!r}", f"{at}.normalization")


def _check_check_cell(rule: dict, field: str) -> None:
    coordinate = rule["coordinate"]
    try:
        coordinate_from_string(coordinate if isinstance(coordinate, str) else "")
    except (CellCoordinatesException, ValueError):
        raise OptionError(f"must be a cell coordinate like 'E3', got {coordinate!r}", f"{field}.coordinate") from None
    props = rule["props"]
    if not isinstance(props, dict) or not props:
        raise OptionError(f"must be a non-empty object {{property: {{method, ref}}}}, got {props!r}",
                          f"{field}.props")
    for prop, check in props.items():
        if prop not in CELL_PROPS:
            raise OptionError(f"unknown cell property {prop!r}{_closest(prop, CELL_PROPS)} "
                              f"(accepted: {', '.join(CELL_PROPS)})", f"{field}.props.{prop}")
        check_rule_method(check, f"{field}.props.{prop}")


def _check_zoom(rule: dict, field: str) -> None:
    check_rule_method(rule, field)


def _check_data_validation(rule: dict, field: str) -> None:
    wanted = rule["dv_props"]
    if not isinstance(wanted, list) or not wanted:
        raise OptionError(f"must be a non-empty list of {{attribute: {{method, ref}}}} objects, got {wanted!r}",
                          f"{field}.dv_props")
    for i, props in enumerate(wanted):
        at = f"{field}.dv_props[{i}]"
        if not isinstance(props, dict) or not props:
            raise OptionError(f"must be a non-empty object {{attribute: {{method, ref}}}}, got {props!r}", at)
        for attr, check in props.items():
            if attr not in DV_ATTRIBUTES:
                raise OptionError(f"unknown data validation attribute {attr!r}{_closest(attr, DV_ATTRIBUTES)} "
                                  f"(accepted: {', '.join(DV_ATTRIBUTES)})", f"{at}.{attr}")
            check_rule_method(check, f"{at}.{attr}")


@dataclass(frozen=True)
class RuleType:
    """One compare_table rule type: the fields it needs, how it is checked at load time, how it scores."""

    doc: str
    run: Callable[[dict, _Books], bool]
    required: tuple[str, ...] = ()
    check: Callable[[dict, str], None] | None = None


_PAIR = ("sheet_idx0", "sheet_idx1")


def _pair_rule(load: Callable[[dict], Callable[[_Book, str], Any]]) -> Callable[[dict, _Books], bool]:
    return lambda rule, books: _compare_pair(rule, books, load(rule))


#: every compare_table rule type; the one list that dispatches and validates them
RULE_TYPES: dict[str, RuleType] = {
    "sheet_name": RuleType(
        "the two books have the same sheet names in the same order",
        lambda rule, books: books.expected is not None and books.result.names == books.expected.names),
    "sheet_data": RuleType(
        "cell values equal, numbers rounded to `precision` decimals (default 4)",
        _rule_sheet_data, _PAIR, _check_sheet_data),
    "sheet_print": RuleType(
        "the sheets read the same as displayed (number formats applied); `ignore_case`",
        _rule_sheet_print, _PAIR, _check_sheet_print),
    "sheet_fuzzy": RuleType(
        "cells of `rules[].range` compared as text: `type` exact_match/fuzzy_match (`threshold`)/includes/"
        "included_by after `normalization`, `trim_leadings`, `trim_trailings`, `ignore_chars`, `ignore_case`",
        _rule_sheet_fuzzy, (*_PAIR, "rules"), _check_sheet_fuzzy),
    "sparkline": RuleType(
        "the same sparklines (cell -> data range)",
        _pair_rule(lambda rule: load_sparklines), _PAIR),
    "chart": RuleType(
        "the same charts (by series) with the same `chart_props`",
        _pair_rule(lambda rule: lambda b, s: load_charts(b, s, rule.get("chart_props", []))), _PAIR,
        lambda rule, field: _check_names(rule, "chart_props", field, list(CHART_READERS), "chart property")),
    "pivot_table": RuleType(
        "the same pivot tables (by source) with the same `pivot_props`",
        _pair_rule(lambda rule: lambda b, s: load_pivots(b, s, rule.get("pivot_props", []))), _PAIR,
        lambda rule, field: _check_names(rule, "pivot_props", field, list(PIVOT_READERS), "pivot property")),
    "style": RuleType(
        "every cell with a value, a fill or an applying conditional format shows the same style `props`",
        _pair_rule(lambda rule: lambda b, s: load_styles(b, s, rule.get("props", []))), _PAIR,
        lambda rule, field: _check_names(rule, "props", field, list(STYLE_READERS), "style property")),
    "freeze": RuleType(
        "the same frozen panes",
        _pair_rule(lambda rule: lambda b, s: b.wb[s].freeze_panes), _PAIR),
    "row_props": RuleType(
        "rows have the same `props` (hidden, height...)",
        _pair_rule(lambda rule: lambda b, s: load_rows_or_cols(b, s, "row", rule["props"])), (*_PAIR, "props"),
        lambda rule, field: _check_names(rule, "props", field, ROW_PROPS, "row property", required=True)),
    "col_props": RuleType(
        "columns have the same `props` (hidden, width...)",
        _pair_rule(lambda rule: lambda b, s: load_rows_or_cols(b, s, "column", rule["props"])), (*_PAIR, "props"),
        lambda rule, field: _check_names(rule, "props", field, COL_PROPS, "column property", required=True)),
    "filter": RuleType(
        "the same autofilter (range, column criteria, sort state)",
        _pair_rule(lambda rule: load_filters), _PAIR),
    "zoom": RuleType(
        "the sheet's zoom (percent, 100 when unset) matches `method`/`ref`",
        _rule_zoom, ("sheet_idx",), _check_zoom),
    "data_validation": RuleType(
        "each data validation of the sheet matches one `dv_props` entry ({attribute: {method, ref}}), "
        "and there are at least as many",
        _rule_data_validation, ("sheet_idx", "dv_props"), _check_data_validation),
    "check_cell": RuleType(
        "the cell `coordinate` matches `props` ({value|formula|style property: {method, ref}})",
        _rule_check_cell, ("sheet_idx", "coordinate", "props"), _check_check_cell),
}


def check_table_options(options: dict) -> None:
    """Validate compare_table's options as the metric will use them, so a task fails when it is loaded.

    Every rule is an object of a known type with its required fields, sheet references of a valid
    form, known chart/pivot/style/row/column/cell properties and data validation attributes, and
    every ``{method, ref}`` rule a known method with a ref of the right shape.

    Raises:
        OptionError: with ``field`` the dotted path inside the options (``rules[2].props.value.method``).
    """
    if not isinstance(options, dict):
        raise OptionError(f"the options must be an object, got {options!r}")
    rules = options.get("rules")
    if not isinstance(rules, list) or not rules:
        raise OptionError(f"compare_table needs rules, a non-empty list of rule objects; got {rules!r}", "rules")
    for i, rule in enumerate(rules):
        field = f"rules[{i}]"
        if not isinstance(rule, dict):
            raise OptionError(f"a rule must be an object with a 'type', got {rule!r}", field)
        kind = rule.get("type")
        if not isinstance(kind, str) or kind not in RULE_TYPES:
            what = "missing rule type" if kind is None else f"unknown compare_table rule type {kind!r}"
            raise OptionError(f"{what}{_closest(kind, RULE_TYPES) if kind is not None else ''} "
                              f"(accepted: {', '.join(RULE_TYPES)})", f"{field}.type")
        spec = RULE_TYPES[kind]
        for key in spec.required:
            if key not in rule:
                raise OptionError(f"rule {kind!r} needs {key!r}", f"{field}.{key}")
        for key in ("sheet_idx", "sheet_idx0", "sheet_idx1"):
            if key in spec.required:
                try:
                    _, kind_of_key, name = _sheet_ref_parts(rule[key])
                except ValueError as exc:
                    raise OptionError(str(exc), f"{field}.{key}") from None
                if kind_of_key == "N" and not name:
                    raise OptionError(f"bad sheet reference {rule[key]!r}: the sheet name is empty", f"{field}.{key}")
        if spec.check is not None:
            spec.check(rule, field)


@METRICS.register(check=check_table_options)
def compare_table(result: Any, expected: Any = None, rules: list | None = None) -> float:
    """1 when the xlsx ``result`` passes every rule (in order), comparing with ``expected`` where asked.

    Rule types (:data:`RULE_TYPES`): ``sheet_name``; ``sheet_data`` (``precision``); ``sheet_print``
    (``ignore_case``); ``sheet_fuzzy`` (``rules``); ``sparkline``; ``chart`` (``chart_props``);
    ``pivot_table`` (``pivot_props``); ``style`` (``props``); ``freeze``; ``row_props`` / ``col_props``
    (``props``); ``filter``; ``zoom`` (``sheet_idx``, ``method``, ``ref``); ``data_validation``
    (``sheet_idx``, ``dv_props``); ``check_cell`` (``sheet_idx``, ``coordinate``, ``props``). Pair rules
    take ``sheet_idx0`` and ``sheet_idx1``. Sheet references: an int (result index), ``RI<i>``,
    ``RN<name>``, ``EI<i>``, ``EN<name>``. A missing sheet fails the rule.

    Raises:
        MetricError: options :func:`check_table_options` rejects (an :class:`OptionError`), a rule on the
            expected book when there is none, or an expected book that is missing or unreadable.
    """
    check_table_options({"rules": rules})
    pr = as_existing_path(result)
    if pr is None:
        return 0.0
    res = _open_book(pr)
    if res is None:
        return 0.0
    exp = None
    if expected is not None:
        pe = as_existing_path(expected)
        if pe is None:
            raise MetricError(f"expected workbook {expected!r} does not exist")
        exp = _open_book(pe)
        if exp is None:
            raise MetricError(f"expected workbook {expected!r} cannot be opened")
    books = _Books(res, exp)
    for i, rule in enumerate(rules):
        if not RULE_TYPES[rule["type"]].run(rule, books):
            logger.info("compare_table: rule %d (%s) failed", i, rule["type"])
            return 0.0
    return 1.0
