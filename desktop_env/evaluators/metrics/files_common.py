"""Helpers the general suite's file metrics share (files, files_documents, files_tables, files_python):
reading a result or gold file, and saying why a result is missing or unreadable; rule dicts, string
lists, fuzzy ratios, did-you-mean."""
from __future__ import annotations

import difflib
import importlib
import logging
from pathlib import Path
from typing import Any

from desktop_env.evaluators.metrics.differences import missing_file
from desktop_env.evaluators.metrics.utils import MetricError, as_existing_path
from desktop_env.evaluators.reasons import MISSING_RESULT, UNREADABLE_RESULT, explain

logger = logging.getLogger(__name__)


def require_package(module: str, package: str, metric: str) -> Any:
    """Import ``module`` for ``metric``, or say which package to install."""
    try:
        return importlib.import_module(module)
    except ImportError:
        from desktop_env.extras import package_hint

        raise MetricError(f"{metric} needs the Python package {package!r} ({package_hint(module, package)})") from None


def rule_dict(expected: Any, metric: str, shape: str) -> dict:
    """The rule dict ``expected`` (a ``rule`` getter's ``rules``); ``shape`` describes it for the message."""
    if not isinstance(expected, dict):
        raise MetricError(f"{metric} expects rules {shape}, got {expected!r}")
    return expected


def gold_file(expected: Any, metric: str) -> Path:
    """The gold file ``expected`` as a host path.

    Raises:
        MetricError: it is not an existing file (the expected getter gave something else).
    """
    path = as_existing_path(expected)
    if path is None:
        raise MetricError(f"{metric}: the expected side must be a gold file that exists, got {expected!r}")
    return path


def result_file(result: Any, metric: str) -> Path | None:
    """The result file as a host path, or None (logged and explained) when the getter found none."""
    path = as_existing_path(result)
    if path is None:
        logger.info("%s: no result file (%r); it scores 0", metric, result)
        explain(MISSING_RESULT, missing_file(result))
    return path


def read_text(path: Path) -> str | None:
    """A file's text (UTF-8, a BOM dropped, bad bytes replaced), or None when it cannot be read."""
    try:
        return path.read_text(encoding="utf-8-sig", errors="replace")
    except OSError as exc:
        logger.info("cannot read %s: %s", path, exc)
        return None


def result_text(result: Any, metric: str) -> str | None:
    """The text of the result file, or None (logged and explained) when it is missing or unreadable."""
    path = result_file(result, metric)
    if path is None:
        return None
    text = read_text(path)
    if text is None:
        explain(UNREADABLE_RESULT, f"the result file {path} cannot be read")
    return text


def gold_text(expected: Any, metric: str) -> str:
    """The text of the gold file.

    Raises:
        MetricError: no such file, or it cannot be read.
    """
    path = gold_file(expected, metric)
    text = read_text(path)
    if text is None:
        raise MetricError(f"{metric}: the gold file {path} cannot be read")
    return text


def string_list(value: Any, metric: str, what: str) -> list[str]:
    """``value`` as a list of strings (one string is a one-item list)."""
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, (list, tuple)) or not all(isinstance(s, str) for s in items):
        raise MetricError(f"{metric}: {what} must be a string or a list of strings, got {value!r}")
    return list(items)


def fuzzy_ratio(a: str, b: str, metric: str) -> float:
    """Fuzzy similarity of two strings in 0..1 (rapidfuzz's normalized Indel ratio)."""
    fuzz = require_package("rapidfuzz.fuzz", "rapidfuzz", metric)
    return float(fuzz.ratio(a, b)) / 100.0


def did_you_mean(value: Any, choices) -> str:
    """``"; did you mean 'x'?"`` for the choice closest to ``value``, or ``""``."""
    close = difflib.get_close_matches(str(value), list(choices), n=1)
    return f"; did you mean {close[0]!r}?" if close else ""


def as_list(value: Any) -> list:
    """``value`` as a list: a list or tuple as is, anything else as a one-item list."""
    return list(value) if isinstance(value, (list, tuple)) else [value]
