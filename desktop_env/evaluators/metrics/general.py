"""General metrics: text inclusion, exact/literal matches, lists, URLs, JSON/YAML/text files, file existence."""
from __future__ import annotations

import difflib
import json
import logging
import os
import re
from typing import Any

import yaml

from desktop_env.evaluators.metrics.files import first_line_difference, json_difference, missing_file
from desktop_env.evaluators.metrics.utils import (MetricError, as_existing_path, expected_value, items_difference,
                                                  rule_kind, rule_mismatch, rule_text, text_of, text_tail)
from desktop_env.evaluators.reasons import (INFEASIBLE, MISSING_RESULT, RULE_FAILED, STRUCTURE_MISMATCH,
                                            UNREADABLE_RESULT, VALUE_MISMATCH, explain, fail, shown)
from desktop_env.registry import METRICS

logger = logging.getLogger(__name__)
_MISSING = object()


@METRICS.register()
def check_include_exclude(result: Any, expected: dict) -> float:
    """1 when the text ``result`` contains every ``expected["include"]`` string and no ``expected["exclude"]`` one.

    ``result`` is usually eval.sh's output ("EVAL_OK" or "EVAL_FAIL: <why>"), or a path to a text file.
    A failure's reason names the include string missing (or the exclude string present) and shows the
    end of the output, where an eval script prints why its check failed.
    """
    text = text_of(result)
    if text is None:
        what = "output file" if isinstance(result, os.PathLike) else "output"
        return fail(MISSING_RESULT, missing_file(result, what))
    if not isinstance(expected, dict):
        raise MetricError(f"check_include_exclude expects rules {{include, exclude}}, got {expected!r}")
    include = expected.get("include", []) or []
    exclude = expected.get("exclude", []) or []
    absent = next((s for s in include if s not in text), None)
    if absent is not None:
        return fail(RULE_FAILED, f"the output does not contain {shown(absent)}; {text_tail(text)}")
    present = next((s for s in exclude if s in text), None)
    if present is not None:
        return fail(RULE_FAILED, f"the output contains {shown(present)}, which it must not; {text_tail(text)}")
    return 1.0


@METRICS.register()
def exact_match(result: Any, expected: Any) -> float:
    """1 when ``result == expected["expected"]`` (or ``== expected`` when it is not a rule dict)."""
    if result is None:
        return fail(MISSING_RESULT, "no result (the getter gave None)")
    want = expected_value(expected)
    if result != want:
        return fail(VALUE_MISMATCH, f"expected {shown(want)}, got {shown(result)}")
    return 1.0


@METRICS.register()
def literal_match(result: Any, expected: Any, type: str = "str", ignore_case: bool = False,  # noqa: A002
                  ignore_order: bool = False) -> float:
    """Compare as strings (``type="str"``) or element-wise as lists of strings (``type="list"``).

    Args:
        ignore_case: compare lower-cased.
        ignore_order: for lists, compare sorted.
    """
    if result is None:
        return fail(MISSING_RESULT, "no result (the getter gave None)")
    expected = expected_value(expected)

    def norm(x):
        s = str(x)
        return s.lower() if ignore_case else s
    if type == "str":
        if norm(result) != norm(expected):
            return fail(VALUE_MISMATCH, f"expected {shown(str(expected))}, got {shown(str(result))}")
        return 1.0
    if type == "list":
        if not isinstance(result, (list, tuple)) or not isinstance(expected, (list, tuple)):
            what = "result" if not isinstance(result, (list, tuple)) else "expected value"
            return fail(STRUCTURE_MISMATCH, f"the {what} is not a list: expected {shown(expected)}, "
                                            f"got {shown(result)}")
        a, b = [norm(x) for x in result], [norm(x) for x in expected]
        if ignore_order:
            if sorted(a) != sorted(b):
                return fail(VALUE_MISMATCH, f"the items differ: {items_difference(a, b)}")
            return 1.0
        for i, (x, y) in enumerate(zip(a, b)):
            if x != y:
                return fail(VALUE_MISMATCH, f"item {i}: expected {shown(y)}, got {shown(x)}")
        if len(a) != len(b):
            return fail(STRUCTURE_MISMATCH, f"{len(a)} items, expected {len(b)}: {items_difference(a, b)}")
        return 1.0
    raise MetricError(f"literal_match: unknown type {type!r}; expected 'str' or 'list'")


@METRICS.register()
def is_not_in_list(result: Any, expected: Any) -> float:
    """1 when ``expected["exclude"]`` (one value or a list of values) is not in the list ``result``."""
    if result is None:
        return fail(MISSING_RESULT, "no list (the getter gave None)")
    excluded = expected_value(expected, "exclude")
    items = excluded if isinstance(excluded, list) else [excluded]
    present = next((x for x in items if x in result), _MISSING)
    if present is not _MISSING:
        return fail(RULE_FAILED, f"{shown(present)} is in the list, which must not hold it: {shown(result)}")
    return 1.0


@METRICS.register()
def is_expected_url_pattern_match(result: Any, expected: Any) -> float:
    """1 when the URL (``result`` or ``result["url"]``) matches every regex of ``expected["expected"]``."""
    if result is None:
        return fail(MISSING_RESULT, "no URL (the getter gave None)")
    url = result.get("url") if isinstance(result, dict) else str(result)
    if not url:
        return fail(MISSING_RESULT, f"no URL in the result {shown(result)}")
    patterns = expected_value(expected)
    patterns = patterns if isinstance(patterns, list) else [patterns]
    unmatched = next((p for p in patterns if not re.search(str(p), url)), None)
    if unmatched is not None:
        return fail(RULE_FAILED, f"the URL {shown(url)} does not match the pattern {shown(str(unmatched))}")
    return 1.0


@METRICS.register()
def infeasible(result: Any = None, expected: Any = None) -> float:
    """Marker for infeasible tasks: the evaluator scores 1 only when the agent's last action was FAIL."""
    return fail(INFEASIBLE, "the task is infeasible: it scores 1 only when the agent answers FAIL, which the "
                            "evaluator checks before any metric runs")


def _load_json(value, what: str):
    """The JSON in the file ``value``; None (explained, naming the ``what`` file) when it is missing, not JSON
    or JSON ``null`` (which compares with nothing)."""
    p = as_existing_path(value)
    if p is None:
        explain(MISSING_RESULT, missing_file(value, what))
        return None
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        logger.info("not valid JSON: %s (%s)", p, exc)
        explain(UNREADABLE_RESULT, f"the {what} {p.name} is not valid JSON: {exc}")
        return None
    if data is None:
        explain(UNREADABLE_RESULT, f"the {what} {p.name} holds only JSON null")
    return data


#: How check_json compares the value at a key path with a rule's ``ref``.
_JSON_METHODS = {
    "eq": lambda v, ref: v == ref,
    "ne": lambda v, ref: v != ref,
    "lt": lambda v, ref: v < ref,
    "le": lambda v, ref: v <= ref,
    "gt": lambda v, ref: v > ref,
    "ge": lambda v, ref: v >= ref,
    "re": lambda v, ref: isinstance(v, str) and re.search(ref, v) is not None,
}


def _at(data: Any, path: list) -> Any:
    """The value at ``path`` (dict keys, list indexes) in ``data``, or ``_MISSING``."""
    for key in path:
        if isinstance(data, dict) and key in data:
            data = data[key]
        elif isinstance(data, list) and isinstance(key, int) and -len(data) <= key < len(data):
            data = data[key]
        else:
            return _MISSING
    return data


def _rule_value(data: Any, rule: dict) -> tuple[list, Any, bool]:
    """A check_json rule applied to ``data``: its key path, the value there (``_MISSING``), whether it holds."""
    path = rule.get("key")
    path = path if isinstance(path, list) else [path]
    method = rule.get("method", "eq")
    if method not in _JSON_METHODS:
        raise MetricError(f"check_json: unknown method {method!r}; expected one of {', '.join(_JSON_METHODS)}")
    value = _at(data, path)
    if value is _MISSING:
        return path, value, False
    try:
        return path, value, bool(_JSON_METHODS[method](value, rule.get("ref")))
    except TypeError:  # an order comparison between a string and a number: the rule does not hold
        return path, value, False


@METRICS.register()
def check_json(result: Any, expected: Any, is_yaml: bool = False) -> float:
    """1 when the JSON (or YAML, ``is_yaml``) file ``result`` satisfies the rules ``expected``.

    ``expected`` is ``{"expect": [RULE...], "unexpect": [RULE...]}`` (either may be left out), a RULE
    being ``{"key": [path...], "method": "eq"|"ne"|"lt"|"le"|"gt"|"ge"|"re", "ref": value}``: the value at
    the key path (dict keys, list indexes) compared with ``ref``. Every ``expect`` rule must hold (a
    missing key does not) and no ``unexpect`` rule may. A missing or unreadable file scores 0.
    """
    path = as_existing_path(result)
    if path is None:
        return fail(MISSING_RESULT, missing_file(result))
    fmt = "YAML" if is_yaml else "JSON"
    try:
        text = path.read_text(encoding="utf-8")
        data = yaml.safe_load(text) if is_yaml else json.loads(text)
    except (json.JSONDecodeError, yaml.YAMLError, UnicodeDecodeError) as exc:
        logger.info("check_json: %s is not valid %s (%s)", path, fmt, exc)
        return fail(UNREADABLE_RESULT, f"the result file {path.name} is not valid {fmt}: {_first_line(exc)}")
    rules = expected if isinstance(expected, dict) else {}
    if not isinstance(expected, dict) or not set(rules) & {"expect", "unexpect"}:
        raise MetricError(f"check_json expects rules {{expect, unexpect}}, got {expected!r}")
    for i, rule in enumerate(rules.get("expect") or []):
        keys, value, holds = _rule_value(data, rule)
        if value is _MISSING:
            return fail(RULE_FAILED, f"expect[{i}]: the key path {shown(keys)} is not in {path.name}")
        if not holds:
            return fail(rule_kind(rule), f"expect[{i}] at key path {shown(keys)}: {rule_mismatch(value, rule)}")
    for i, rule in enumerate(rules.get("unexpect") or []):
        keys, value, holds = _rule_value(data, rule)
        if holds:
            return fail(RULE_FAILED, f"unexpect[{i}] at key path {shown(keys)}: {shown(value)} is "
                                     f"{rule_text(rule)}, which it must not be")
    return 1.0


def _first_line(exc: Exception) -> str:
    """An exception's message, first line only (YAML errors span several)."""
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__


@METRICS.register()
def compare_json_file(result: Any, expected: Any) -> float:
    """1 when two JSON files decode to equal values."""
    a = _load_json(result, "result file")
    b = _load_json(expected, "expected file") if a is not None else None
    if a is None or b is None:
        return 0.0
    if a != b:
        kind, text = json_difference(a, b) or (VALUE_MISMATCH, f"expected {shown(b)}, got {shown(a)}")
        return fail(kind, text)
    return 1.0


@METRICS.register()
def compare_text_file(result: Any, expected: Any, ignore_blanks: bool = False, ignore_case: bool = False) -> float:
    """1 when two text files are equal.

    Args:
        ignore_blanks: collapse runs of whitespace and ignore leading/trailing blanks.
        ignore_case: compare lower-cased.
    """
    pa, pb = _text_files(result, expected)
    if pa is None or pb is None:
        return 0.0
    a = pa.read_text(encoding="utf-8", errors="replace")
    b = pb.read_text(encoding="utf-8", errors="replace")
    if ignore_blanks:
        a, b = re.sub(r"\s+", " ", a).strip(), re.sub(r"\s+", " ", b).strip()
    if ignore_case:
        a, b = a.lower(), b.lower()
    if a != b:
        return fail(VALUE_MISMATCH, f"{pa.name} vs {pb.name}: {first_line_difference(a, b)}")
    return 1.0


def _text_files(result: Any, expected: Any) -> tuple:
    """The result and expected files as host paths; a missing one is None, explained (the result first)."""
    pa, pb = as_existing_path(result), as_existing_path(expected)
    if pa is None:
        explain(MISSING_RESULT, missing_file(result))
    elif pb is None:
        explain(MISSING_RESULT, missing_file(expected, "expected file"))
    return pa, pb


@METRICS.register()
def diff_text_file(result: Any, expected: Any) -> float:
    """Line-level similarity of two text files (difflib ratio, 0..1)."""
    pa, pb = _text_files(result, expected)
    if pa is None or pb is None:
        return 0.0
    a = pa.read_text(encoding="utf-8", errors="replace")
    b = pb.read_text(encoding="utf-8", errors="replace")
    ratio = float(difflib.SequenceMatcher(a=a.splitlines(), b=b.splitlines()).ratio())
    if ratio < 1.0:
        return fail(VALUE_MISMATCH, f"{pa.name} vs {pb.name}: line similarity {ratio:.3f}; first difference at "
                                    f"{first_line_difference(a, b)}", ratio)
    return ratio


@METRICS.register()
def check_file_existence(result: Any, expected: Any = None) -> float:
    """1 when the result getter found a file (a path that exists on the host)."""
    if isinstance(result, list) and not result:
        return fail(MISSING_RESULT, "no file (the getter gave an empty list)")
    absent = next((r for r in (result if isinstance(result, list) else [result]) if as_existing_path(r) is None),
                  _MISSING)
    if absent is not _MISSING:
        return fail(MISSING_RESULT, missing_file(absent, "file"))
    return 1.0


def _walk_key_path(value: Any, key_path: list) -> Any:
    for key in key_path:
        if isinstance(value, dict):
            value = value[key]
        elif isinstance(value, list):
            if isinstance(key, int) or (isinstance(key, str) and key.lstrip("-").isdigit()):
                value = value[int(key)]
            elif isinstance(key, (list, tuple)) and len(key) == 2:
                k, v = key  # choose the list item whose field k equals v
                value = next(item for item in value if isinstance(item, dict) and item.get(k) == v)
            else:
                raise KeyError(key)
        else:
            raise KeyError(key)
    return value


@METRICS.register()
def check_yaml_file(result: Any, expected: Any) -> float:
    """1 when a YAML file satisfies every rule ``[match_type, key_path, expected_value]``.

    ``match_type``: ``match`` (equal), ``in`` (value in expected_value), ``contain``
    (expected_value in value), ``not_null`` (truthy). ``key_path`` walks dicts by key and lists
    by index or by a ``[field, value]`` pair selecting the item whose field equals value.
    """
    p = as_existing_path(result)
    if p is None:
        return fail(MISSING_RESULT, missing_file(result))
    try:
        doc = yaml.safe_load(p.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        logger.info("not valid YAML: %s (%s)", p, exc)
        return fail(UNREADABLE_RESULT, f"the result file {p.name} is not valid YAML: {_first_line(exc)}")
    rules = expected_value(expected, "rules")
    if not isinstance(rules, list):
        raise MetricError(f"check_yaml_file expects a list of [match_type, key_path, value] rules, got {rules!r}")
    for i, rule in enumerate(rules):
        if not isinstance(rule, (list, tuple)) or len(rule) != 3:
            raise MetricError(f"check_yaml_file: a rule is [match_type, key_path, value], got {rule!r}")
        match_type, key_path, want = rule
        try:
            value = _walk_key_path(doc, list(key_path))
        except (KeyError, IndexError, StopIteration, TypeError):
            return fail(RULE_FAILED, f"rule {i} ({match_type}): {_unwalkable(doc, list(key_path))} in {p.name}")
        if match_type == "match":
            ok, kind, text = value == want, VALUE_MISMATCH, f"expected {shown(want)}"
        elif match_type == "in":
            ok, kind, text = value in want, RULE_FAILED, f"expected one of {shown(want)}"
        elif match_type == "contain":
            ok, kind, text = value is not None and want in value, RULE_FAILED, f"expected to contain {shown(want)}"
        elif match_type == "not_null":
            ok, kind, text = bool(value), RULE_FAILED, "expected a value that is not empty"
        else:
            raise MetricError(f"check_yaml_file: unknown match type {match_type!r}")
        if not ok:
            return fail(kind, f"rule {i} ({match_type}) at key path {shown(list(key_path))}: {text}, "
                              f"got {shown(value)}")
    return 1.0


def _unwalkable(doc: Any, key_path: list) -> str:
    """Where ``key_path`` stops in ``doc``, for a reason: the first key that is not there, after the ones found."""
    for depth in range(len(key_path)):
        try:
            _walk_key_path(doc, key_path[:depth + 1])
        except (KeyError, IndexError, StopIteration, TypeError):
            where = f" under {shown(key_path[:depth])}" if depth else ""
            return f"the key path {shown(key_path)} is not there (no {shown(key_path[depth])}{where})"
    return f"the key path {shown(key_path)} is not there"
