"""A small interpreter of Excel formulas, as conditional formats and validations store them in xlsx.

Values are what openpyxl reads from cached cells (numbers, text, booleans, None for empty) plus Excel
errors (:class:`XLError`). Semantics follow Excel where conditional formats depend on them: an empty
cell is 0, "" or FALSE beside the other operand; text compares without case; numbers sort before text
before booleans; errors propagate and never make a condition true. :class:`Formula` compiles a formula
once; calling it with a :class:`Scope` evaluates it at one cell, relative references moved by the
cell's offset from the anchor the formula was written at. The functions it knows are
:data:`FUNCTIONS`; anything else raises :class:`UnsupportedFormula` when the formula is compiled.
"""
from __future__ import annotations

import math
import re
from typing import Any, Callable, Iterator

from openpyxl.utils.cell import column_index_from_string

ERROR_CODES = ("#NULL!", "#DIV/0!", "#VALUE!", "#REF!", "#NAME?", "#NUM!", "#N/A")


class UnsupportedFormula(Exception):
    """A formula this interpreter cannot evaluate: an unknown function, another sheet, bad syntax."""


class XLError(str):
    """An Excel error value (``#DIV/0!``...): it propagates through operators and makes a condition false."""


def is_error(value: Any) -> bool:
    return isinstance(value, XLError) or (isinstance(value, str) and value in ERROR_CODES)


# --------------------------------------------------------------------------- values
def _number(value: Any) -> float | XLError:
    """Excel's coercion to a number for arithmetic: empty is 0, TRUE is 1, numeric text is its number."""
    if is_error(value):
        return XLError(value)
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
            return XLError("#VALUE!")
    return XLError("#VALUE!")  # dates and times are compared as cached serial numbers elsewhere


def as_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def truth(value: Any) -> bool | XLError:
    if is_error(value):
        return XLError(value)
    if value is None:
        return False
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)):
        return value != 0
    if isinstance(value, str) and value.upper() in ("TRUE", "FALSE"):
        return value.upper() == "TRUE"
    return XLError("#VALUE!")


def _rank(value: Any) -> int:
    """Excel orders numbers before text before booleans."""
    return 2 if isinstance(value, bool) else 1 if isinstance(value, str) else 0


def compare(a: Any, b: Any) -> int | XLError:
    """-1, 0 or 1 as Excel compares two values: an empty cell is 0, "" or FALSE beside the other side;
    text compares without case."""
    for v in (a, b):
        if is_error(v):
            return XLError(v)
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


class Scope:
    """What a formula sees: the sheet's cached values, the evaluated cell and its offset from the anchor."""

    def __init__(self, values: Callable[[int, int], Any], row: int, col: int, dr: int, dc: int):
        self.values, self.row, self.col, self.dr, self.dc = values, row, col, dr, dc


Node = Callable[[Scope], Any]


class Formula:
    """An Excel formula (as stored in xlsx: ``,`` between arguments, no leading ``=``) compiled to a closure.

    Raises:
        UnsupportedFormula: a function outside :data:`FUNCTIONS`, another sheet, bad syntax.
    """

    def __init__(self, text: str):
        self.text = text
        self.tokens = self._tokenize(text)
        self.pos = 0
        self.node = self._expression(0)
        if self.pos != len(self.tokens):
            raise UnsupportedFormula(f"cannot read the formula {text!r} near {self.tokens[self.pos][1]!r}")

    def __call__(self, scope: Scope) -> Any:
        return self.node(scope)

    def _tokenize(self, text: str) -> list[tuple[str, str]]:
        out, pos = [], 0
        while pos < len(text):
            m = _TOKEN.match(text, pos)
            if m is None:
                raise UnsupportedFormula(f"cannot read the formula {text!r} at {text[pos:pos + 10]!r}")
            pos = m.end()
            if m.lastgroup == "sheet":
                raise UnsupportedFormula(f"the formula {text!r} refers to another sheet ({m.group()!r})")
            if m.lastgroup != "space":
                out.append((m.lastgroup, m.group()))
        return out

    def _peek(self) -> tuple[str, str] | None:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def _take(self, want: str | None = None) -> tuple[str, str]:
        token = self._peek()
        if token is None or (want is not None and token[1] != want):
            raise UnsupportedFormula(f"cannot read the formula {self.text!r}: expected {want or 'more'}")
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
            value = XLError(text.upper())
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
                raise UnsupportedFormula(
                    f"the formula {self.text!r} uses {name}, which the formula interpreter does not know "
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
        raise UnsupportedFormula(f"cannot read the formula {self.text!r} at {text!r}")


class _RangeValue:
    """A rectangular range, read lazily by the function that receives it."""

    def __init__(self, scope: Scope, first: _Ref, second: _Ref):
        (r1, c1), (r2, c2) = first.at(scope.dr, scope.dc), second.at(scope.dr, scope.dc)
        self.scope = scope
        self.rows = range(min(r1, r2), max(r1, r2) + 1)
        self.cols = range(min(c1, c2), max(c1, c2) + 1)

    def cells(self) -> Iterator[Any]:
        for r in self.rows:
            for c in self.cols:
                yield self.scope.values(r, c)


def scalar(value: Any) -> Any:
    if isinstance(value, _RangeValue):  # a range where one value is wanted: its first cell
        return next(value.cells(), None)
    return value


def _arith(op: Callable[[float, float], float], a: Any, b: Any) -> Any:
    x, y = _number(scalar(a)), _number(scalar(b))
    if isinstance(x, XLError):
        return x
    if isinstance(y, XLError):
        return y
    try:
        result = op(x, y)
    except ZeroDivisionError:
        return XLError("#DIV/0!")
    except (OverflowError, ValueError):
        return XLError("#NUM!")
    return XLError("#NUM!") if isinstance(result, complex) or math.isnan(result) else result


_COMPARISONS: dict[str, Callable[[int], bool]] = {
    "=": lambda c: c == 0, "<>": lambda c: c != 0, "<": lambda c: c < 0,
    ">": lambda c: c > 0, "<=": lambda c: c <= 0, ">=": lambda c: c >= 0,
}


def _binary(op: str, left: Node, right: Node) -> Node:
    if op in _COMPARISONS:
        test = _COMPARISONS[op]

        def node(s):
            c = compare(scalar(left(s)), scalar(right(s)))
            return c if isinstance(c, XLError) else test(c)
        return node
    if op == "&":
        def concat(s):
            a, b = scalar(left(s)), scalar(right(s))
            for v in (a, b):
                if is_error(v):
                    return XLError(v)
            return as_text(a) + as_text(b)
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


def _numbers(args) -> list[float] | XLError:
    """The numbers of the arguments as SUM sees them: in ranges only numeric cells, literals coerced."""
    out = []
    for a in args:
        if isinstance(a, _RangeValue):
            for v in a.cells():
                if is_error(v):
                    return XLError(v)
                if isinstance(v, (int, float)) and not isinstance(v, bool):
                    out.append(float(v))
        else:
            n = _number(a)
            if isinstance(n, XLError):
                return n
            out.append(n)
    return out


def _aggregate(reduce: Callable[[list[float]], float]) -> Callable:
    def func(scope, *args):
        nums = _numbers(args)
        if isinstance(nums, XLError):
            return nums
        try:
            return reduce(nums)
        except ZeroDivisionError:
            return XLError("#DIV/0!")
    return func


def _logical(reduce: Callable[[list[bool]], bool]) -> Callable:
    def func(scope, *args):
        values = [truth(v) for v in _flat(args) if not (isinstance(v, str) and not is_error(v)
                                                           and v.upper() not in ("TRUE", "FALSE"))]
        for v in values:
            if isinstance(v, XLError):
                return v
        return reduce(values)
    return func


def _text_func(op: Callable[..., Any]) -> Callable:
    def func(scope, *args):
        args = [scalar(a) for a in args]
        for a in args:
            if is_error(a):
                return XLError(a)
        try:
            return op(*args)
        except (TypeError, ValueError):
            return XLError("#VALUE!")
    return func


def _find(case: bool) -> Callable:
    def op(needle, haystack, start=1):
        n, h, start = as_text(needle), as_text(haystack), int(_number(start))
        if not case:
            n, h = n.lower(), h.lower()
        i = h.find(n, start - 1) if start >= 1 else -1
        return XLError("#VALUE!") if i < 0 else float(i + 1)
    return _text_func(op)


def _countif(scope, rng, criterion):
    criterion = scalar(criterion)
    cells = list(rng.cells()) if isinstance(rng, _RangeValue) else [rng]
    m = re.match(r"^(<>|<=|>=|=|<|>)?(.*)$", criterion, re.S) if isinstance(criterion, str) else None
    if m is None:
        return float(sum(1 for v in cells if v is not None and compare(v, criterion) == 0))
    op, operand = m.group(1) or "=", m.group(2)
    num = _number(operand)
    target = operand if isinstance(num, XLError) else num
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
        count += not isinstance(c, XLError) and test(c)
    return float(count)


def _if(scope, cond, then=True, otherwise=False):
    t = truth(scalar(cond))
    return t if isinstance(t, XLError) else (then if t else otherwise)


def _is(test: Callable[[Any], bool]) -> Callable:
    return lambda scope, value: test(scalar(value))


#: the functions conditional formulas may use; each takes the scope then its evaluated arguments
FUNCTIONS: dict[str, Callable] = {
    "AND": _logical(all), "OR": _logical(any),
    "NOT": lambda s, v: (lambda t: t if isinstance(t, XLError) else not t)(truth(scalar(v))),
    "IF": _if, "TRUE": lambda s: True, "FALSE": lambda s: False,
    "ISBLANK": _is(lambda v: v is None), "ISNUMBER": _is(lambda v: isinstance(v, (int, float)) and not
                                                        isinstance(v, bool)),
    "ISTEXT": _is(lambda v: isinstance(v, str) and not is_error(v)),
    "ISERROR": _is(is_error), "ISERR": _is(lambda v: is_error(v) and v != "#N/A"),
    "ISNA": _is(lambda v: v == "#N/A"), "ISLOGICAL": _is(lambda v: isinstance(v, bool)),
    "ISEVEN": _text_func(lambda v: int(_number(v)) % 2 == 0), "ISODD": _text_func(lambda v: int(_number(v)) % 2 == 1),
    "ROW": lambda s, ref=None: float(ref.rows[0] if isinstance(ref, _RangeValue) else s.row),
    "COLUMN": lambda s, ref=None: float(ref.cols[0] if isinstance(ref, _RangeValue) else s.col),
    "LEN": _text_func(lambda v: float(len(as_text(v)))),
    "LEFT": _text_func(lambda v, n=1: as_text(v)[:int(_number(n))]),
    "RIGHT": _text_func(lambda v, n=1: as_text(v)[len(as_text(v)) - int(_number(n)):] if int(_number(n)) else ""),
    "MID": _text_func(lambda v, start, n: as_text(v)[int(_number(start)) - 1:int(_number(start)) - 1 + int(_number(n))]),
    "UPPER": _text_func(lambda v: as_text(v).upper()), "LOWER": _text_func(lambda v: as_text(v).lower()),
    "TRIM": _text_func(lambda v: re.sub(" +", " ", as_text(v)).strip(" ")),
    "EXACT": _text_func(lambda a, b: as_text(a) == as_text(b)),
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
