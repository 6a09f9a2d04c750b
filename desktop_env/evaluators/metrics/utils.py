"""Helpers shared by metrics: rule matching (``{"method", "ref"}``) and reading results that may be paths."""
from __future__ import annotations

import logging
import math
import operator
import os
import re
from pathlib import Path
from typing import Any

from desktop_env.errors import DesktopEnvError
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


_COMPARATORS = {
    "eq": operator.eq, "ne": operator.ne, "lt": operator.lt, "le": operator.le,
    "gt": operator.gt, "ge": operator.ge,
}


def match_value_to_rule(value: Any, rule: dict) -> bool:
    """Whether ``value`` satisfies ``{"method": M, "ref": R}``.

    Methods: ``eq ne lt le gt ge`` (Python comparison), ``str_eq`` (as strings),
    ``re`` (regex search in ``str(value)``), ``approx`` or ``approx:TOL`` (numbers within TOL,
    default 1e-6, or ``rule["tolerance"]``), ``in`` (value in ref), ``contains`` (ref in value),
    ``none`` / ``not_none``.

    Raises:
        MetricError: an unknown method.
    """
    method = str(rule.get("method", "eq"))
    ref = rule.get("ref")
    try:
        if method in _COMPARATORS:
            return bool(_COMPARATORS[method](value, ref))
        if method == "str_eq":
            return str(value) == str(ref)
        if method == "re":
            return value is not None and re.search(str(ref), str(value)) is not None
        if method.startswith("approx"):
            tol = float(method.split(":", 1)[1]) if ":" in method else float(rule.get("tolerance", 1e-6))
            return value is not None and math.isclose(float(value), float(ref), rel_tol=0, abs_tol=tol)
        if method == "in":
            return value in ref
        if method == "contains":
            return value is not None and ref in value
        if method == "none":
            return value is None
        if method == "not_none":
            return value is not None
    except (TypeError, ValueError):
        return False
    raise MetricError(f"unknown rule method {method!r}; expected one of "
                      f"{sorted(_COMPARATORS) + ['str_eq', 're', 'approx[:TOL]', 'in', 'contains', 'none', 'not_none']}")


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
