"""Helpers shared by metrics: rule matching (``{"method", "ref"}``) and reading results that may be paths."""
from __future__ import annotations

import difflib
import logging
import math
import operator
import os
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from desktop_env.errors import DesktopEnvError
from desktop_env.evaluators.reasons import RULE_FAILED, VALUE_MISMATCH, shown
from desktop_env.evaluators.values import GuestText

logger = logging.getLogger(__name__)


class MetricError(DesktopEnvError):
    """A metric cannot score because its options are wrong or a needed client is missing.

    A wrong *result* (missing file, unreadable content) is not an error: it scores 0.
    """


class OptionError(MetricError):
    """A metric option the metric would reject when it runs, found when the task is loaded.

    Attributes:
        field: the dotted path of the bad value inside the metric's options
            (``rules[2].props.value.method``), or None for the options as a whole.
    """

    def __init__(self, message: str, field: str | None = None):
        self.field = field
        super().__init__(f"{field}: {message}" if field else message)


# --------------------------------------------------------------------------- rule matching
# ``{"method": M, "ref": R}`` rules (check_cell props, zoom, data validation...) are matched by
# one table, MATCH_METHODS: match_value_to_rule scores with it, check_rule_method validates with
# it when a task is loaded, so the two can never disagree on what a method is.

_COMPARATORS = {
    "eq": operator.eq, "ne": operator.ne, "lt": operator.lt, "le": operator.le,
    "gt": operator.gt, "ge": operator.ge,
}
#: regex flag names accepted after ``re.`` (LOCALE is refused by ``re`` for str patterns)
_RE_FLAGS = ("A", "ASCII", "I", "IGNORECASE", "M", "MULTILINE", "S", "DOTALL", "X", "VERBOSE",
             "U", "UNICODE")
_SHEET_ROWS, _SHEET_COLS = 1048576, 16384  # the size of an xlsx sheet


@dataclass(frozen=True)
class MatchMethod:
    """One rule method: how it is spelled, what its ``ref`` must be, and how it matches.

    Attributes:
        name: the method, or its prefix when it takes an argument (``approx``, ``re``, ``range``).
        spelling: how a task writes it, for messages (``approx[:TOL]``).
        doc: what it means, one line.
        test: ``test(value, ref, arg) -> bool``; may raise TypeError/ValueError, which mean "no match".
        sep: the character between the name and its argument, or None when it takes none.
        parse_arg: ``parse_arg(text, rule)`` turns the argument (None when absent) into ``arg``;
            raises ValueError with what is wrong.
        check_ref: ``check_ref(ref, arg)`` -> what is wrong with ``ref``, or None.
        needs_ref: whether the rule must carry a ``ref``.
    """

    name: str
    spelling: str
    doc: str
    test: Callable[[Any, Any, Any], bool]
    sep: str | None = None
    parse_arg: Callable[[str | None, dict], Any] | None = None
    check_ref: Callable[[Any, Any], str | None] | None = None
    needs_ref: bool = True


def _approx_arg(text: str | None, rule: dict) -> float:
    tol = float(text) if text is not None else float(rule.get("tolerance", 1e-6))
    if not math.isfinite(tol) or tol < 0:
        raise ValueError(f"the tolerance must be a number >= 0, got {tol}")
    return tol


def _approx(value, ref, tol: float) -> bool:
    return value is not None and math.isclose(float(value), float(ref), rel_tol=0, abs_tol=tol)


def _number_ref(ref, arg) -> str | None:
    if isinstance(ref, bool) or not isinstance(ref, (int, float, str)):
        return f"must be a number, got {ref!r}"
    try:
        float(ref)
    except ValueError:
        return f"must be a number, got {ref!r}"
    return None


def _re_arg(text: str | None, rule: dict) -> re.RegexFlag:
    flags = re.RegexFlag(0)
    for name in (text.split(".") if text is not None else []):
        if name not in _RE_FLAGS:
            close = difflib.get_close_matches(name, _RE_FLAGS, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise ValueError(f"unknown regex flag {name!r}{hint} (flags: {', '.join(_RE_FLAGS)})")
        flags |= getattr(re, name)
    return flags


def _re_ref(ref, flags) -> str | None:
    if not isinstance(ref, str):
        return f"must be a regular expression (a string), got {ref!r}"
    try:
        re.compile(ref, flags)
    except re.error as exc:
        return f"is not a valid regular expression: {exc}"
    return None


def _regex(value, ref, flags) -> bool:
    return value is not None and re.search(ref, str(value), flags) is not None


def _range_arg(text: str | None, rule: dict) -> tuple[Callable, Callable]:
    if text is None or len(text) != 2 or any(c not in "te" for c in text):
        raise ValueError("write range.XY with X and Y each 't' (strict, <) or 'e' (inclusive, <=), "
                         "e.g. range.te: ref[0] < value <= ref[1]")
    return tuple(operator.lt if c == "t" else operator.le for c in text)


def _pair_ref(ref, arg) -> str | None:
    if not isinstance(ref, (list, tuple)) or len(ref) != 2:
        return f"must be a pair [low, high], got {ref!r}"
    return None


def _in_range(value, ref, ops) -> bool:
    low_op, high_op = ops
    return value is not None and bool(low_op(ref[0], value)) and bool(high_op(value, ref[1]))


def _str_items(value) -> list[str] | None:
    """A value read as a comma-separated list: ``'"a,b,c"'`` (a list validation's formula1) -> [a, b, c]."""
    if value is None:
        return None
    if isinstance(value, (list, tuple, set, frozenset)):
        return [str(v) for v in value]
    return str(value).strip("\"'").split(",")


def _list_ref(ref, arg) -> str | None:
    if not isinstance(ref, (list, tuple)):
        return f"must be a list of strings, got {ref!r}"
    return None


def _str_list_eq(value, ref, arg) -> bool:
    items = _str_items(value)
    return items is not None and items == [str(r) for r in ref]


def _str_set_eq(value, ref, arg) -> bool:
    items = _str_items(value)
    return items is not None and set(items) == {str(r) for r in ref}


def cell_boxes(value: Any) -> list[tuple[int, int, int, int]]:
    """The cells a range denotes, as boxes ``(min_col, min_row, max_col, max_row)``.

    Accepts what a task or a workbook holds: ``"D2:D29"``, several ranges separated by spaces or
    commas, whole columns/rows (``"D:D"``, ``"2:4"``), ``$`` anchors, a ``Sheet!`` prefix, an
    openpyxl ``CellRange``/``MultiCellRange`` (a data validation's ``sqref``), or a list of those.

    Raises:
        ValueError: something that is not a cell range.
    """
    from openpyxl.utils.cell import range_boundaries  # the xlsx grammar; only range methods need it

    if isinstance(value, (list, tuple, set, frozenset)):
        return [box for item in value for box in cell_boxes(item)]
    text = str(value) if value is not None else ""
    boxes = []
    for part in re.split(r"[\s,]+", text.strip()):
        if not part:
            continue
        ref = part.rsplit("!", 1)[-1].replace("$", "")
        try:
            min_col, min_row, max_col, max_row = range_boundaries(ref.upper())
        except (ValueError, TypeError):
            raise ValueError(f"{part!r} is not a cell range") from None
        boxes.append((min_col or 1, min_row or 1, max_col or _SHEET_COLS, max_row or _SHEET_ROWS))
    if not boxes:
        raise ValueError(f"{value!r} is not a cell range")
    return boxes


def _boxes_within(inner: list, outer: list) -> bool:
    """Whether every cell of the boxes ``inner`` lies in some box of ``outer``.

    Exact for unions of boxes without enumerating cells (a whole column has a million): each inner
    box is cut along every outer box edge, and each piece must sit inside one outer box.
    """
    for c0, r0, c1, r1 in inner:
        cols = sorted({c0, c1 + 1} | {x for b in outer for x in (b[0], b[2] + 1) if c0 < x <= c1})
        rows = sorted({r0, r1 + 1} | {y for b in outer for y in (b[1], b[3] + 1) if r0 < y <= r1})
        for x0, x1 in zip(cols, cols[1:]):
            for y0, y1 in zip(rows, rows[1:]):
                if not any(b[0] <= x0 and x1 - 1 <= b[2] and b[1] <= y0 and y1 - 1 <= b[3] for b in outer):
                    return False
    return True


def _range_ref(ref, arg) -> str | None:
    parts = ref if isinstance(ref, (list, tuple)) and len(ref) == 2 else None
    if parts is None and not isinstance(ref, str):
        return f"must be a range string or a pair [smallest, largest] of range strings, got {ref!r}"
    for part in parts or [ref]:
        try:
            cell_boxes(part)
        except ValueError as exc:
            return str(exc)
    return None


def _spreadsheet_range(value, ref, arg) -> bool:
    try:
        got = cell_boxes(value)
    except ValueError:
        return False
    if isinstance(ref, str):
        want = cell_boxes(ref)
        return _boxes_within(got, want) and _boxes_within(want, got)
    smallest, largest = cell_boxes(ref[0]), cell_boxes(ref[1])
    return _boxes_within(smallest, got) and _boxes_within(got, largest)


def _compare(op):
    return lambda value, ref, arg: bool(op(value, ref))


MATCH_METHODS: dict[str, MatchMethod] = {m.name: m for m in [
    *(MatchMethod(name, name, f"Python comparison: value {name} ref", _compare(op))
      for name, op in _COMPARATORS.items()),
    MatchMethod("str_eq", "str_eq", "str(value) == str(ref)", lambda v, r, a: str(v) == str(r)),
    MatchMethod("re", "re[.FLAG...]",
                "regex search of ref in str(value); flags after dots, combinable: re.I, re.IGNORECASE.MULTILINE",
                _regex, sep=".", parse_arg=_re_arg, check_ref=_re_ref),
    MatchMethod("approx", "approx[:TOL]",
                "numbers within TOL (default rule['tolerance'] or 1e-6)",
                _approx, sep=":", parse_arg=_approx_arg, check_ref=_number_ref),
    MatchMethod("range", "range.XY",
                "ref[0] < or <= value < or <= ref[1]; X, Y each t (strict) or e (inclusive): range.te is "
                "ref[0] < value <= ref[1]",
                _in_range, sep=".", parse_arg=_range_arg, check_ref=_pair_ref),
    MatchMethod("str_list_eq", "str_list_eq",
                "value read as a comma-separated list (outer quotes dropped) equals the list ref",
                _str_list_eq, check_ref=_list_ref),
    MatchMethod("str_set_eq", "str_set_eq",
                "value read as a comma-separated list (outer quotes dropped) has the same items as ref",
                _str_set_eq, check_ref=_list_ref),
    MatchMethod("spreadsheet_range", "spreadsheet_range",
                "value (a range or a data validation's sqref) denotes the same cells as the range ref; with "
                "a pair [smallest, largest] it covers the first and lies within the second",
                _spreadsheet_range, check_ref=_range_ref),
    MatchMethod("in", "in", "value in ref", lambda v, r, a: v in r),
    MatchMethod("contains", "contains", "ref in value", lambda v, r, a: v is not None and r in v),
    MatchMethod("none", "none", "value is None", lambda v, r, a: v is None, needs_ref=False),
    MatchMethod("not_none", "not_none", "value is not None", lambda v, r, a: v is not None, needs_ref=False),
]}


def _resolve_method(rule: dict, field: str | None) -> tuple[MatchMethod, Any]:
    """The method of ``rule`` and its decoded argument, the ref checked.

    Raises:
        OptionError: unknown method, bad argument or bad ref, at ``field.method`` / ``field.ref``.
    """
    at = (lambda key: f"{field}.{key}" if field else key)
    if not isinstance(rule, dict):
        raise OptionError(f"a rule must be an object {{'method': ..., 'ref': ...}}, got {rule!r}", field)
    method = rule.get("method", "eq")
    if not isinstance(method, str):
        raise OptionError(f"the method must be a string, got {method!r}", at("method"))
    spec, text = MATCH_METHODS.get(method), None
    if spec is None:
        for candidate in MATCH_METHODS.values():
            if candidate.sep and method.startswith(candidate.name + candidate.sep):
                spec, text = candidate, method[len(candidate.name) + 1:]
                break
    if spec is None:
        spellings = [m.spelling for m in MATCH_METHODS.values()]
        close = difflib.get_close_matches(method, list(MATCH_METHODS), n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise OptionError(f"unknown rule method {method!r}{hint} (accepted: {', '.join(spellings)})", at("method"))
    try:
        arg = spec.parse_arg(text, rule) if spec.parse_arg else None
    except (ValueError, TypeError) as exc:
        raise OptionError(f"bad method {method!r}: {exc}", at("method")) from None
    if spec.needs_ref:
        if "ref" not in rule:
            raise OptionError(f"method {method!r} needs a 'ref'", at("ref"))
        problem = spec.check_ref(rule["ref"], arg) if spec.check_ref else None
        if problem:
            raise OptionError(f"the ref of {method!r} {problem}", at("ref"))
    return spec, arg


def check_rule_method(rule: Any, field: str | None = None) -> None:
    """Validate a ``{"method": M, "ref": R}`` rule as :func:`match_value_to_rule` will use it.

    A missing method means ``eq``.

    Args:
        rule: the rule.
        field: its dotted path inside the metric's options (``rules[2].props.value``); errors
            point at ``<field>.method`` or ``<field>.ref``.

    Raises:
        OptionError: not an object, an unknown method or flag (with a did-you-mean and the accepted
            spellings), or a ref of the wrong shape (a bad regex, a range that is not a pair...).
    """
    _resolve_method(rule, field)


def match_value_to_rule(value: Any, rule: dict) -> bool:
    """Whether ``value`` satisfies ``{"method": M, "ref": R}`` (M defaults to ``eq``).

    Methods (the table :data:`MATCH_METHODS`): ``eq ne lt le gt ge`` (Python comparison), ``str_eq``,
    ``re`` / ``re.FLAG[.FLAG...]`` (regex search in ``str(value)``), ``approx`` / ``approx:TOL``,
    ``range.XY`` (``ref`` a pair; X, Y ``t`` strict or ``e`` inclusive), ``str_list_eq`` /
    ``str_set_eq`` (value as a comma-separated list vs the list ``ref``), ``spreadsheet_range``
    (same cells as ``ref``, or between a pair of ranges), ``in``, ``contains``, ``none``, ``not_none``.
    A value of the wrong type for the method does not match.

    Raises:
        OptionError: a rule :func:`check_rule_method` rejects.
    """
    spec, arg = _resolve_method(rule, None)
    try:
        return bool(spec.test(value, rule.get("ref"), arg))
    except (TypeError, ValueError, AttributeError):
        return False


# --------------------------------------------------------------------------- reason texts
# What a metric says when it finds a difference (desktop_env.evaluators.reasons): one wording per
# concept, shared by every metric module.

#: Methods of ``{"method", "ref"}`` rules that compare for equality: their failure is a differing value.
EQUALITY_METHODS = ("eq", "str_eq", "approx")


def rule_text(rule: Any) -> str:
    """A ``{"method", "ref"}`` rule as a reason shows it: ``eq 5``, ``re 'dark'``, ``range.te [1, 5]``, ``none``."""
    if not isinstance(rule, dict):
        return shown(rule)
    method = rule.get("method", "eq")
    return str(method) if "ref" not in rule else f"{method} {shown(rule['ref'])}"


def rule_mismatch(value: Any, rule: Any) -> str:
    """Why ``value`` does not satisfy a ``{"method", "ref"}`` rule, for a reason: ``expected eq 5, got 4``."""
    return f"expected {rule_text(rule)}, got {shown(value)}"


def rule_kind(rule: Any) -> str:
    """The reason kind of a rule that did not hold: VALUE_MISMATCH for an equality method, else RULE_FAILED."""
    method = rule.get("method", "eq") if isinstance(rule, dict) else "eq"
    return VALUE_MISMATCH if str(method).split(":")[0] in EQUALITY_METHODS else RULE_FAILED


def items_difference(got: Any, want: Any) -> str:
    """How two collections of items differ as multisets, for a reason: ``missing [...]; unexpected [...]``."""
    g, w = Counter(map(str, got)), Counter(map(str, want))
    missing, extra = sorted((w - g).elements()), sorted((g - w).elements())
    parts = ([f"missing {shown(missing)}"] if missing else []) + ([f"unexpected {shown(extra)}"] if extra else [])
    return "; ".join(parts) or f"the same items in another order: expected {shown(list(want))}, got {shown(list(got))}"


def text_tail(text: str, chars: int = 300) -> str:
    """The end of ``text`` (a command's output) for a reason: its last ``chars`` characters, whitespace collapsed."""
    flat = " ".join(text.split())
    if not flat:
        return "it is empty"
    return "it ends: " + (flat if len(flat) <= chars else "..." + flat[-chars:])


def as_existing_path(value: Any) -> Path | None:
    """``value`` as a Path when it names an existing host file, else None.

    Text that came out of the guest (:class:`~desktop_env.evaluators.values.GuestText`) is
    never a path, whatever it says.
    """
    if value is None or isinstance(value, GuestText) or not isinstance(value, (str, os.PathLike)):
        return None
    try:
        p = Path(value)
        return p if p.is_file() else None
    except (OSError, ValueError):
        return None


def text_of(value: Any) -> str | None:
    """The text of a result: the content of a host file given as a ``Path``, else ``str(value)``.

    A string is always the text itself, never read as a file name: getters hand files over
    as ``Path`` objects, and a guest's output that happens to name a host file (``/etc/passwd``)
    must be scored as the text it is.
    """
    if value is None:
        return None
    if isinstance(value, os.PathLike):
        try:
            return Path(value).read_text(encoding="utf-8", errors="replace")
        except OSError as exc:
            logger.info("result file %s cannot be read (scored as missing): %s", value, exc)
            return None
    return str(value)


def expected_value(expected: Any, key: str = "expected") -> Any:
    """The ``key`` entry of a rule dict, or ``expected`` itself when it is not such a dict."""
    if isinstance(expected, dict) and key in expected:
        return expected[key]
    return expected
