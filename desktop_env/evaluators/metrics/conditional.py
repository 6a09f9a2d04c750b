"""Conditional formatting as a spreadsheet shows it: the style each cell gets from the sheet's rules.

openpyxl reads the style stored on a cell. A cell that Calc or Excel paints red through a conditional
rule ("scores over 50") stores none, so without this module a sheet highlighted correctly and a sheet
not highlighted at all read the same. :func:`conditional_overlay` evaluates the rules of a sheet
against its cached cell values and returns, per cell, the style properties the applying rules set
(the names of :data:`desktop_env.evaluators.metrics.table.STYLE_READERS`).

Rules apply in priority order (lowest number first); a property set by an earlier rule wins, and
``stopIfTrue`` ends the list for that cell (ECMA-376, 18.3.1.10). Rule types evaluated: ``cellIs``,
``expression``, ``containsText``/``notContainsText``/``beginsWith``/``endsWith``,
``containsBlanks``/``notContainsBlanks``, ``containsErrors``/``notContainsErrors``,
``duplicateValues``/``uniqueValues``, ``top10`` and ``aboveAverage``. Colour scales, data bars and icon
sets set no cell style and are skipped. Formulas are evaluated by a small Excel-formula interpreter
(:class:`_Formula`); a function it does not know, a reference to another sheet or a ``timePeriod`` rule
raises :class:`UnsupportedConditionalFormat`, which the harness records as an evaluator error (no score)
rather than guess.

Only cells inside the sheet's used range are evaluated (a rule on a whole column does not visit a
million empty cells), and aggregates (duplicates, top N, average) are taken over those cells.
"""
from __future__ import annotations

import math
import re
from typing import Any, Callable, Iterator

from openpyxl.styles import PatternFill
from openpyxl.utils.cell import column_index_from_string, get_column_letter, range_boundaries

ERROR_CODES = ("#NULL!", "#DIV/0!", "#VALUE!", "#REF!", "#NAME?", "#NUM!", "#N/A")


class UnsupportedConditionalFormat(Exception):
    """A conditional rule this module cannot evaluate (an unknown function, another sheet, a time period).

    Not a task error: the sheet is one a user may make. The harness records it as an evaluator error.
    """


class _Error(str):
    """An Excel error value (``#DIV/0!``...): it propagates through operators and makes a condition false."""


def _is_error(value: Any) -> bool:
    return isinstance(value, _Error) or (isinstance(value, str) and value in ERROR_CODES)


# --------------------------------------------------------------------------- values
def _number(value: Any) -> float | _Error:
    """Excel's coercion to a number for arithmetic: empty is 0, TRUE is 1, numeric text is its number."""
    if _is_error(value):
        return _Error(value)
    if value is None:
        return 0.0
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value.strip())
        except ValueError:
            return _Error("#VALUE!")
    return _Error("#VALUE!")  # dates and times are compared as cached serial numbers elsewhere


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _truth(value: Any) -> bool | _Error:
    if _is_error(value):
        return _Error(value)
    if value is None:
        return False
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)):
        return value != 0
    if isinstance(value, str) and value.upper() in ("TRUE", "FALSE"):
        return value.upper() == "TRUE"
    return _Error("#VALUE!")


def _rank(value: Any) -> int:
    """Excel orders numbers before text before booleans."""
    return 2 if isinstance(value, bool) else 1 if isinstance(value, str) else 0


def compare(a: Any, b: Any) -> int | _Error:
    """-1, 0 or 1 as Excel compares two values: an empty cell is 0, "" or FALSE beside the other side;
    text compares without case."""
    for v in (a, b):
        if _is_error(v):
            return _Error(v)
    if a is None and b is None:
        return 0
    if a is None:
        a = False if isinstance(b, bool) else "" if isinstance(b, str) else 0.0
    if b is None:
        b = False if isinstance(a, bool) else "" if isinstance(a, str) else 0.0
    ra, rb = _rank(a), _rank(b)
    if ra != rb:
        return -1 if ra < rb else 1
    if ra == 1:
        a, b = a.lower(), b.lower()
    return (a > b) - (a < b)


# --------------------------------------------------------------------------- formulas
_TOKEN = re.compile(r"""
    (?P<space>\s+)
  | (?P<string>"(?:[^"]|"")*")
  | (?P<error>\#(?:NULL!|DIV/0!|VALUE!|REF!|NAME\?|NUM!|N/A))
  | (?P<sheet>(?:'(?:[^']|'')+'|[A-Za-z_][\w.]*)!)
  | (?P<range>\$?[A-Za-z]{1,3}\$?\d+:\$?[A-Za-z]{1,3}\$?\d+)
  | (?P<cell>\$?[A-Za-z]{1,3}\$?\d+(?![\w(]))
  | (?P<number>(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)
  | (?P<func>[A-Za-z_][\w.]*(?=\s*\())
  | (?P<bool>(?:TRUE|FALSE)(?![\w(]))
  | (?P<op><>|<=|>=|[-+*/^&=<>%(),;])
""", re.VERBOSE | re.IGNORECASE)

_CELL = re.compile(r"(\$?)([A-Za-z]{1,3})(\$?)(\d+)")

#: binary operators: precedence (higher binds tighter)
_BINARY = {"=": 1, "<>": 1, "<": 1, ">": 1, "<=": 1, ">=": 1, "&": 2, "+": 3, "-": 3, "*": 4, "/": 4, "^": 5}


class _Ref:
    """A cell reference as written at the rule's anchor cell; relative parts move with the evaluated cell."""

    def __init__(self, text: str):
        col_abs, col, row_abs, row = _CELL.fullmatch(text).groups()
        self.col, self.row = column_index_from_string(col.upper()), int(row)
        self.col_abs, self.row_abs = bool(col_abs), bool(row_abs)

    def at(self, dr: int, dc: int) -> tuple[int, int]:
        return self.row + (0 if self.row_abs else dr), self.col + (0 if self.col_abs else dc)


class _Scope:
    """What a formula sees: the sheet's cached values, the evaluated cell and its offset from the anchor."""

    def __init__(self, values: Callable[[int, int], Any], row: int, col: int, dr: int, dc: int):
        self.values, self.row, self.col, self.dr, self.dc = values, row, col, dr, dc


Node = Callable[[_Scope], Any]


class _Formula:
    """An Excel formula (as stored in xlsx: ``,`` between arguments, no leading ``=``) compiled to a closure.

    Raises:
        UnsupportedConditionalFormat: a function outside :data:`FUNCTIONS`, another sheet, bad syntax.
    """

    def __init__(self, text: str):
        self.text = text
        self.tokens = self._tokenize(text)
        self.pos = 0
        self.node = self._expression(0)
        if self.pos != len(self.tokens):
            raise UnsupportedConditionalFormat(f"cannot read the formula {text!r} near {self.tokens[self.pos][1]!r}")

    def __call__(self, scope: _Scope) -> Any:
        return self.node(scope)

    def _tokenize(self, text: str) -> list[tuple[str, str]]:
        out, pos = [], 0
        while pos < len(text):
            m = _TOKEN.match(text, pos)
            if m is None:
                raise UnsupportedConditionalFormat(f"cannot read the formula {text!r} at {text[pos:pos + 10]!r}")
            pos = m.end()
            if m.lastgroup == "sheet":
                raise UnsupportedConditionalFormat(f"the formula {text!r} refers to another sheet ({m.group()!r})")
            if m.lastgroup != "space":
                out.append((m.lastgroup, m.group()))
        return out

    def _peek(self) -> tuple[str, str] | None:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def _take(self, want: str | None = None) -> tuple[str, str]:
        token = self._peek()
        if token is None or (want is not None and token[1] != want):
            raise UnsupportedConditionalFormat(f"cannot read the formula {self.text!r}: expected {want or 'more'}")
        self.pos += 1
        return token

    def _expression(self, min_prec: int) -> Node:
        left = self._unary()
        while (token := self._peek()) is not None and token[0] == "op" and token[1] in _BINARY \
                and _BINARY[token[1]] >= min_prec:
            op = self._take()[1]
            prec = _BINARY[op]
            right = self._expression(prec + 1)  # all left-associative, ^ too: 2^3^2 is 64
            left = _binary(op, left, right)
        return left

    def _unary(self) -> Node:
        token = self._peek()
        if token is not None and token[1] in ("-", "+"):
            self._take()
            inner = self._unary()
            if token[1] == "+":
                return inner
            return lambda s: _arith(lambda x, _: -x, inner(s), 0.0)
        node = self._primary()
        while (token := self._peek()) is not None and token[1] == "%":
            self._take()
            node = (lambda inner: lambda s: _arith(lambda x, _: x / 100, inner(s), 0.0))(node)
        return node

    def _primary(self) -> Node:
        kind, text = self._take()
        if kind == "number":
            value = float(text)
            return lambda s: value
        if kind == "string":
            value = text[1:-1].replace('""', '"')
            return lambda s: value
        if kind == "bool":
            value = text.upper() == "TRUE"
            return lambda s: value
        if kind == "error":
            value = _Error(text.upper())
            return lambda s: value
        if kind == "cell":
            ref = _Ref(text)
            return lambda s: s.values(*ref.at(s.dr, s.dc))
        if kind == "range":
            first, second = (_Ref(part) for part in text.split(":"))
            return lambda s: _RangeValue(s, first, second)
        if kind == "func":
            name = text.upper().removeprefix("_XLFN.")
            if name not in FUNCTIONS:
                raise UnsupportedConditionalFormat(
                    f"the formula {self.text!r} uses {name}, which the conditional-format evaluator does not know "
                    f"(known: {', '.join(sorted(FUNCTIONS))})")
            self._take("(")
            args: list[Node] = []
            if self._peek() is not None and self._peek()[1] != ")":
                args.append(self._expression(0))
                while self._peek() is not None and self._peek()[1] in (",", ";"):
                    self._take()
                    args.append(self._expression(0))
            self._take(")")
            func = FUNCTIONS[name]
            return lambda s: func(s, *[a(s) for a in args])
        if text == "(":
            node = self._expression(0)
            self._take(")")
            return node
        raise UnsupportedConditionalFormat(f"cannot read the formula {self.text!r} at {text!r}")


class _RangeValue:
    """A rectangular range, read lazily by the function that receives it."""

    def __init__(self, scope: _Scope, first: _Ref, second: _Ref):
        (r1, c1), (r2, c2) = first.at(scope.dr, scope.dc), second.at(scope.dr, scope.dc)
        self.scope = scope
        self.rows = range(min(r1, r2), max(r1, r2) + 1)
        self.cols = range(min(c1, c2), max(c1, c2) + 1)

    def cells(self) -> Iterator[Any]:
        for r in self.rows:
            for c in self.cols:
                yield self.scope.values(r, c)


def _scalar(value: Any) -> Any:
    if isinstance(value, _RangeValue):  # a range where one value is wanted: its first cell
        return next(value.cells(), None)
    return value


def _arith(op: Callable[[float, float], float], a: Any, b: Any) -> Any:
    x, y = _number(_scalar(a)), _number(_scalar(b))
    if isinstance(x, _Error):
        return x
    if isinstance(y, _Error):
        return y
    try:
        result = op(x, y)
    except ZeroDivisionError:
        return _Error("#DIV/0!")
    except (OverflowError, ValueError):
        return _Error("#NUM!")
    return _Error("#NUM!") if isinstance(result, complex) or math.isnan(result) else result


_COMPARISONS: dict[str, Callable[[int], bool]] = {
    "=": lambda c: c == 0, "<>": lambda c: c != 0, "<": lambda c: c < 0,
    ">": lambda c: c > 0, "<=": lambda c: c <= 0, ">=": lambda c: c >= 0,
}


def _binary(op: str, left: Node, right: Node) -> Node:
    if op in _COMPARISONS:
        test = _COMPARISONS[op]

        def node(s):
            c = compare(_scalar(left(s)), _scalar(right(s)))
            return c if isinstance(c, _Error) else test(c)
        return node
    if op == "&":
        def concat(s):
            a, b = _scalar(left(s)), _scalar(right(s))
            for v in (a, b):
                if _is_error(v):
                    return _Error(v)
            return _text(a) + _text(b)
        return concat
    ops = {"+": lambda x, y: x + y, "-": lambda x, y: x - y, "*": lambda x, y: x * y,
           "/": lambda x, y: x / y, "^": lambda x, y: x ** y}
    return lambda s: _arith(ops[op], left(s), right(s))


# --------------------------------------------------------------------------- functions
def _flat(args) -> Iterator[Any]:
    for a in args:
        if isinstance(a, _RangeValue):
            yield from a.cells()
        else:
            yield a


def _numbers(args) -> list[float] | _Error:
    """The numbers of the arguments as SUM sees them: in ranges only numeric cells, literals coerced."""
    out = []
    for a in args:
        if isinstance(a, _RangeValue):
            for v in a.cells():
                if _is_error(v):
                    return _Error(v)
                if isinstance(v, (int, float)) and not isinstance(v, bool):
                    out.append(float(v))
        else:
            n = _number(a)
            if isinstance(n, _Error):
                return n
            out.append(n)
    return out


def _aggregate(reduce: Callable[[list[float]], float]) -> Callable:
    def func(scope, *args):
        nums = _numbers(args)
        if isinstance(nums, _Error):
            return nums
        try:
            return reduce(nums)
        except ZeroDivisionError:
            return _Error("#DIV/0!")
    return func


def _logical(reduce: Callable[[list[bool]], bool]) -> Callable:
    def func(scope, *args):
        values = [_truth(v) for v in _flat(args) if not (isinstance(v, str) and not _is_error(v)
                                                           and v.upper() not in ("TRUE", "FALSE"))]
        for v in values:
            if isinstance(v, _Error):
                return v
        return reduce(values)
    return func


def _text_func(op: Callable[..., Any]) -> Callable:
    def func(scope, *args):
        args = [_scalar(a) for a in args]
        for a in args:
            if _is_error(a):
                return _Error(a)
        try:
            return op(*args)
        except (TypeError, ValueError):
            return _Error("#VALUE!")
    return func


def _find(case: bool) -> Callable:
    def op(needle, haystack, start=1):
        n, h, start = _text(needle), _text(haystack), int(_number(start))
        if not case:
            n, h = n.lower(), h.lower()
        i = h.find(n, start - 1) if start >= 1 else -1
        return _Error("#VALUE!") if i < 0 else float(i + 1)
    return _text_func(op)


def _countif(scope, rng, criterion):
    criterion = _scalar(criterion)
    cells = list(rng.cells()) if isinstance(rng, _RangeValue) else [rng]
    m = re.match(r"^(<>|<=|>=|=|<|>)?(.*)$", criterion, re.S) if isinstance(criterion, str) else None
    if m is None:
        return float(sum(1 for v in cells if v is not None and compare(v, criterion) == 0))
    op, operand = m.group(1) or "=", m.group(2)
    num = _number(operand)
    target = operand if isinstance(num, _Error) else num
    if op == "=" and isinstance(target, str) and ("*" in target or "?" in target):
        pattern = re.compile(re.escape(target).replace(r"\*", ".*").replace(r"\?", "."), re.I | re.S)
        return float(sum(1 for v in cells if isinstance(v, str) and pattern.fullmatch(v)))
    test = _COMPARISONS[op]
    count = 0
    for v in cells:
        if v is None and not (op == "=" and target == "") and op != "<>":
            continue
        if op not in ("=", "<>") and _rank(v) != _rank(target):
            continue
        c = compare(v, target)
        count += not isinstance(c, _Error) and test(c)
    return float(count)


def _if(scope, cond, then=True, otherwise=False):
    t = _truth(_scalar(cond))
    return t if isinstance(t, _Error) else (then if t else otherwise)


def _is(test: Callable[[Any], bool]) -> Callable:
    return lambda scope, value: test(_scalar(value))


#: the functions conditional formulas may use; each takes the scope then its evaluated arguments
FUNCTIONS: dict[str, Callable] = {
    "AND": _logical(all), "OR": _logical(any),
    "NOT": lambda s, v: (lambda t: t if isinstance(t, _Error) else not t)(_truth(_scalar(v))),
    "IF": _if, "TRUE": lambda s: True, "FALSE": lambda s: False,
    "ISBLANK": _is(lambda v: v is None), "ISNUMBER": _is(lambda v: isinstance(v, (int, float)) and not
                                                        isinstance(v, bool)),
    "ISTEXT": _is(lambda v: isinstance(v, str) and not _is_error(v)),
    "ISERROR": _is(_is_error), "ISERR": _is(lambda v: _is_error(v) and v != "#N/A"),
    "ISNA": _is(lambda v: v == "#N/A"), "ISLOGICAL": _is(lambda v: isinstance(v, bool)),
    "ISEVEN": _text_func(lambda v: int(_number(v)) % 2 == 0), "ISODD": _text_func(lambda v: int(_number(v)) % 2 == 1),
    "ROW": lambda s, ref=None: float(ref.rows[0] if isinstance(ref, _RangeValue) else s.row),
    "COLUMN": lambda s, ref=None: float(ref.cols[0] if isinstance(ref, _RangeValue) else s.col),
    "LEN": _text_func(lambda v: float(len(_text(v)))),
    "LEFT": _text_func(lambda v, n=1: _text(v)[:int(_number(n))]),
    "RIGHT": _text_func(lambda v, n=1: _text(v)[len(_text(v)) - int(_number(n)):] if int(_number(n)) else ""),
    "MID": _text_func(lambda v, start, n: _text(v)[int(_number(start)) - 1:int(_number(start)) - 1 + int(_number(n))]),
    "UPPER": _text_func(lambda v: _text(v).upper()), "LOWER": _text_func(lambda v: _text(v).lower()),
    "TRIM": _text_func(lambda v: re.sub(" +", " ", _text(v)).strip(" ")),
    "EXACT": _text_func(lambda a, b: _text(a) == _text(b)),
    "SEARCH": _find(case=False), "FIND": _find(case=True),
    "VALUE": _text_func(lambda v: _number(v)),
    "MOD": lambda s, a, b: _arith(lambda x, y: x - y * math.floor(x / y), a, b),
    "ABS": lambda s, a: _arith(lambda x, _: abs(x), a, 0.0),
    "INT": lambda s, a: _arith(lambda x, _: float(math.floor(x)), a, 0.0),
    "ROUND": lambda s, a, n=0.0: _arith(lambda x, d: float(round(x, int(d))), a, n),
    "SUM": _aggregate(sum), "MIN": _aggregate(lambda n: min(n) if n else 0.0),
    "MAX": _aggregate(lambda n: max(n) if n else 0.0),
    "AVERAGE": _aggregate(lambda n: sum(n) / len(n)),
    "COUNT": _aggregate(lambda n: float(len(n))),
    "COUNTA": lambda s, *args: float(sum(1 for v in _flat(args) if v is not None)),
    "COUNTBLANK": lambda s, *args: float(sum(1 for v in _flat(args) if v is None or v == "")),
    "COUNTIF": _countif,
}


# --------------------------------------------------------------------------- rules
_CELL_IS: dict[str, Callable[[Any, list], bool]] = {
    "equal": lambda v, o: compare(v, o[0]) == 0,
    "notEqual": lambda v, o: _holds(compare(v, o[0]), lambda c: c != 0),
    "greaterThan": lambda v, o: _holds(compare(v, o[0]), lambda c: c > 0),
    "lessThan": lambda v, o: _holds(compare(v, o[0]), lambda c: c < 0),
    "greaterThanOrEqual": lambda v, o: _holds(compare(v, o[0]), lambda c: c >= 0),
    "lessThanOrEqual": lambda v, o: _holds(compare(v, o[0]), lambda c: c <= 0),
    "between": lambda v, o: _between(v, o),
    "notBetween": lambda v, o: len(o) == 2 and not _between(v, o) and not _is_error(v),
}


def _holds(c, test) -> bool:
    return not isinstance(c, _Error) and test(c)


def _between(v, operands) -> bool:
    if len(operands) != 2:
        return False
    low, high = operands
    if _holds(compare(low, high), lambda c: c > 0):
        low, high = high, low
    return _holds(compare(v, low), lambda c: c >= 0) and _holds(compare(v, high), lambda c: c <= 0)


def _fill_props(fill) -> dict[str, Any]:
    """A differential fill as the style readers name it. Calc writes a solid conditional fill as a bare
    ``bgColor`` (no pattern type), openpyxl as ``solid`` with ``fgColor``: both read as fill_type solid with
    fgcolor and bgcolor the colour shown."""
    def rgb(color):
        value = getattr(color, "rgb", None)
        return value if isinstance(value, str) and value != "00000000" else None
    fg, bg = rgb(fill.fgColor), rgb(fill.bgColor)
    kind = fill.fill_type
    if kind not in (None, "solid"):
        return {"fill_type": kind, "fgcolor": fg, "bgcolor": bg}
    shown = fg if kind == "solid" and fg else bg or fg
    return {"fill_type": "solid", "fgcolor": shown, "bgcolor": shown} if shown else {}


def dxf_props(dxf) -> dict[str, Any]:
    """The style properties a differential style (a conditional rule's format) sets."""
    out: dict[str, Any] = {}
    if dxf is None:
        return out
    font = dxf.font
    if font is not None:
        for prop, value in (("font_name", font.name), ("font_size", font.sz), ("font_underline", font.u)):
            if value is not None:
                out[prop] = value
        for prop, value in (("font_bold", font.b), ("font_italic", font.i)):
            if value:  # openpyxl reads an absent <b/> as False: only a set flag is the rule's
                out[prop] = True
        if font.color is not None and isinstance(getattr(font.color, "rgb", None), str):
            out["font_color"] = font.color.rgb
    if isinstance(dxf.fill, PatternFill):
        out.update(_fill_props(dxf.fill))
    if dxf.numFmt is not None and dxf.numFmt.formatCode:
        out["number_format"] = dxf.numFmt.formatCode
    return out


class _RuleEval:
    """One conditional rule over the cells of its range: ``applies(row, col)``."""

    def __init__(self, rule, cells: list[tuple[int, int]], anchor: tuple[int, int], values, where: str):
        self.rule, self.cells, self.anchor, self.values, self.where = rule, cells, anchor, values, where
        kind = rule.type
        self.formulas = [_Formula(f) for f in (rule.formula or [])]
        if kind == "timePeriod":
            raise UnsupportedConditionalFormat(f"{where}: a 'timePeriod' rule depends on today's date; not evaluated")
        if kind == "cellIs" and rule.operator not in _CELL_IS:
            raise UnsupportedConditionalFormat(f"{where}: unknown cellIs operator {rule.operator!r}")
        if kind == "expression" and not self.formulas:
            raise UnsupportedConditionalFormat(f"{where}: an expression rule without a formula")
        self._range_values = None

    def _scope(self, row: int, col: int) -> _Scope:
        return _Scope(self.values, row, col, row - self.anchor[0], col - self.anchor[1])

    def _in_range(self) -> list[Any]:
        if self._range_values is None:
            self._range_values = [self.values(r, c) for r, c in self.cells]
        return self._range_values

    def applies(self, row: int, col: int) -> bool:
        rule, value = self.rule, self.values(row, col)
        kind = rule.type
        if kind == "cellIs":
            operands = [_scalar(f(self._scope(row, col))) for f in self.formulas]
            return not _is_error(value) and _CELL_IS[rule.operator](value, operands)
        if kind == "expression":
            t = _truth(_scalar(self.formulas[0](self._scope(row, col))))
            return t is True
        if kind in ("containsText", "notContainsText", "beginsWith", "endsWith"):
            if rule.text is None or rule.text == "":
                if not self.formulas:
                    return False
                return _truth(_scalar(self.formulas[0](self._scope(row, col)))) is True
            if _is_error(value):
                return False
            text, needle = _text(value).lower(), rule.text.lower()
            return {"containsText": needle in text, "notContainsText": needle not in text,
                    "beginsWith": text.startswith(needle), "endsWith": text.endswith(needle)}[kind]
        if kind in ("containsBlanks", "notContainsBlanks"):
            blank = value is None or (isinstance(value, str) and not value.strip())
            return blank == (kind == "containsBlanks")
        if kind in ("containsErrors", "notContainsErrors"):
            return _is_error(value) == (kind == "containsErrors")
        if kind in ("duplicateValues", "uniqueValues"):
            if value is None:
                return False
            same = sum(1 for v in self._in_range() if v is not None and compare(v, value) == 0)
            return (same > 1) == (kind == "duplicateValues")
        if kind == "top10":
            return self._top(value)
        if kind == "aboveAverage":
            return self._average(value)
        return False  # colorScale, dataBar, iconSet: no cell style

    def _numbers(self) -> list[float]:
        return [float(v) for v in self._in_range() if isinstance(v, (int, float)) and not isinstance(v, bool)]

    def _top(self, value) -> bool:
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            return False
        nums = sorted(self._numbers(), reverse=not self.rule.bottom)
        rank = self.rule.rank or 10
        count = max(1, int(len(nums) * rank / 100)) if self.rule.percent else rank
        if not nums:
            return False
        edge = nums[min(count, len(nums)) - 1]
        return value <= edge if self.rule.bottom else value >= edge

    def _average(self, value) -> bool:
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            return False
        nums = self._numbers()
        if not nums:
            return False
        mean = sum(nums) / len(nums)
        above = self.rule.aboveAverage is not False
        if self.rule.stdDev:
            sd = math.sqrt(sum((x - mean) ** 2 for x in nums) / len(nums))
            edge = mean + self.rule.stdDev * sd if above else mean - self.rule.stdDev * sd
        else:
            edge = mean
        if self.rule.equalAverage and value == edge:
            return True
        return value > edge if above else value < edge


def conditional_overlay(styles_ws, values_ws) -> dict[str, dict[str, Any]]:
    """coordinate -> {style property: value} that the conditional rules of a sheet set on that cell.

    Args:
        styles_ws: the sheet as read with formulas and styles (holds the rules).
        values_ws: the same sheet read with cached values (``data_only``), which the rules test.

    Raises:
        UnsupportedConditionalFormat: a rule that cannot be evaluated here.
    """
    max_row, max_col = values_ws.max_row, values_ws.max_column

    def values(row: int, col: int) -> Any:
        if row < 1 or col < 1:
            return _Error("#REF!")
        if row > max_row or col > max_col:
            return None
        return values_ws.cell(row=row, column=col).value

    evaluated = []
    for cf in styles_ws.conditional_formatting:
        ranges = list(cf.sqref.ranges)
        if not ranges:
            continue
        min_col, min_row, _, _ = range_boundaries(ranges[0].coord)
        min_col, min_row = min_col or 1, min_row or 1  # whole rows or columns (A:A) have open ends
        cells = []
        for rng in ranges:
            c1, r1, c2, r2 = range_boundaries(rng.coord)
            c1, r1, c2, r2 = c1 or 1, r1 or 1, c2 or max_col, r2 or max_row
            cells += [(r, c) for r in range(r1, min(r2, max_row) + 1) for c in range(c1, min(c2, max_col) + 1)]
        for rule in cf.rules:
            props = dxf_props(getattr(rule, "dxf", None))
            if not props and not rule.stopIfTrue:
                continue
            where = f"conditional format on {cf.sqref} ({rule.type})"
            evaluated.append((rule.priority or 0, _RuleEval(rule, cells, (min_row, min_col), values, where),
                              props, bool(rule.stopIfTrue)))
    evaluated.sort(key=lambda item: item[0])
    out: dict[str, dict[str, Any]] = {}
    stopped: set[tuple[int, int]] = set()
    for _, ev, props, stop in evaluated:
        for row, col in ev.cells:
            if (row, col) in stopped or not ev.applies(row, col):
                continue
            coordinate = f"{get_column_letter(col)}{row}"
            cell_props = out.setdefault(coordinate, {})
            for prop, value in props.items():
                cell_props.setdefault(prop, value)
            if stop:
                stopped.add((row, col))
    return {k: v for k, v in out.items() if v}
