"""General metrics: text inclusion, exact/literal matches, lists, URLs, JSON/YAML/text files, file existence."""
from __future__ import annotations

import difflib
import json
import logging
import re
from typing import Any

import yaml

from desktop_env.evaluators.metrics.utils import MetricError, as_existing_path, expected_value, text_of
from desktop_env.registry import METRICS

logger = logging.getLogger(__name__)


@METRICS.register()
def check_include_exclude(result: Any, expected: dict) -> float:
    """1 when the text ``result`` contains every ``expected["include"]`` string and no ``expected["exclude"]`` one.

    ``result`` is usually eval.sh's output ("succeed"/"failed"), or a path to a text file.
    """
    text = text_of(result)
    if text is None:
        return 0.0
    if not isinstance(expected, dict):
        raise MetricError(f"check_include_exclude expects rules {{include, exclude}}, got {expected!r}")
    include = expected.get("include", []) or []
    exclude = expected.get("exclude", []) or []
    ok = all(s in text for s in include) and not any(s in text for s in exclude)
    logger.debug("check_include_exclude: include=%s exclude=%s -> %s", include, exclude, ok)
    return float(ok)


@METRICS.register()
def exact_match(result: Any, expected: Any) -> float:
    """1 when ``result == expected["expected"]`` (or ``== expected`` when it is not a rule dict)."""
    return float(result is not None and result == expected_value(expected))


@METRICS.register()
def literal_match(result: Any, expected: Any, type: str = "str", ignore_case: bool = False,  # noqa: A002
                  ignore_order: bool = False) -> float:
    """Compare as strings (``type="str"``) or element-wise as lists of strings (``type="list"``).

    Args:
        ignore_case: compare lower-cased.
        ignore_order: for lists, compare sorted.
    """
    if result is None:
        return 0.0
    expected = expected_value(expected)

    def norm(x):
        s = str(x)
        return s.lower() if ignore_case else s
    if type == "str":
        return float(norm(result) == norm(expected))
    if type == "list":
        if not isinstance(result, (list, tuple)) or not isinstance(expected, (list, tuple)):
            return 0.0
        a, b = [norm(x) for x in result], [norm(x) for x in expected]
        if ignore_order:
            a, b = sorted(a), sorted(b)
        return float(a == b)
    raise MetricError(f"literal_match: unknown type {type!r}; expected 'str' or 'list'")


@METRICS.register()
def is_not_in_list(result: Any, expected: Any) -> float:
    """1 when ``expected["exclude"]`` (one value or a list of values) is not in the list ``result``."""
    if result is None:
        return 0.0
    excluded = expected_value(expected, "exclude")
    items = excluded if isinstance(excluded, list) else [excluded]
    return float(not any(x in result for x in items))


@METRICS.register()
def is_expected_url_pattern_match(result: Any, expected: Any) -> float:
    """1 when the URL (``result`` or ``result["url"]``) matches every regex of ``expected["expected"]``."""
    if result is None:
        return 0.0
    url = result.get("url") if isinstance(result, dict) else str(result)
    if not url:
        return 0.0
    patterns = expected_value(expected)
    patterns = patterns if isinstance(patterns, list) else [patterns]
    return float(all(re.search(str(p), url) for p in patterns))


@METRICS.register()
def infeasible(result: Any = None, expected: Any = None) -> float:
    """Marker for infeasible tasks: the evaluator scores 1 only when the agent's last action was FAIL."""
    return 0.0


def _load_json(value):
    p = as_existing_path(value)
    if p is None:
        return None
    try:
        return json.loads(p.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        logger.info("not valid JSON: %s (%s)", p, exc)
        return None


_MISSING = object()

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


def _rule_holds(data: Any, rule: dict) -> bool:
    path = rule.get("key")
    path = path if isinstance(path, list) else [path]
    method = rule.get("method", "eq")
    if method not in _JSON_METHODS:
        raise MetricError(f"check_json: unknown method {method!r}; expected one of {', '.join(_JSON_METHODS)}")
    value = _at(data, path)
    if value is _MISSING:
        return False
    try:
        return bool(_JSON_METHODS[method](value, rule.get("ref")))
    except TypeError:  # an order comparison between a string and a number: the rule does not hold
        return False


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
        return 0.0
    try:
        text = path.read_text(encoding="utf-8")
        data = yaml.safe_load(text) if is_yaml else json.loads(text)
    except (json.JSONDecodeError, yaml.YAMLError, UnicodeDecodeError) as exc:
        logger.info("check_json: %s is not valid %s (%s)", path, "YAML" if is_yaml else "JSON", exc)
        return 0.0
    rules = expected if isinstance(expected, dict) else {}
    if not isinstance(expected, dict) or not set(rules) & {"expect", "unexpect"}:
        raise MetricError(f"check_json expects rules {{expect, unexpect}}, got {expected!r}")
    ok = (all(_rule_holds(data, r) for r in rules.get("expect") or [])
          and not any(_rule_holds(data, r) for r in rules.get("unexpect") or []))
    logger.debug("check_json %s: %s", path, ok)
    return float(ok)


@METRICS.register()
def compare_json_file(result: Any, expected: Any) -> float:
    """1 when two JSON files decode to equal values."""
    a, b = _load_json(result), _load_json(expected)
    if a is None or b is None:
        return 0.0
    return float(a == b)


@METRICS.register()
def compare_text_file(result: Any, expected: Any, ignore_blanks: bool = False, ignore_case: bool = False) -> float:
    """1 when two text files are equal.

    Args:
        ignore_blanks: collapse runs of whitespace and ignore leading/trailing blanks.
        ignore_case: compare lower-cased.
    """
    pa, pb = as_existing_path(result), as_existing_path(expected)
    if pa is None or pb is None:
        return 0.0
    a = pa.read_text(encoding="utf-8", errors="replace")
    b = pb.read_text(encoding="utf-8", errors="replace")
    if ignore_blanks:
        a, b = re.sub(r"\s+", " ", a).strip(), re.sub(r"\s+", " ", b).strip()
    if ignore_case:
        a, b = a.lower(), b.lower()
    return float(a == b)


@METRICS.register()
def diff_text_file(result: Any, expected: Any) -> float:
    """Line-level similarity of two text files (difflib ratio, 0..1)."""
    pa, pb = as_existing_path(result), as_existing_path(expected)
    if pa is None or pb is None:
        return 0.0
    a = pa.read_text(encoding="utf-8", errors="replace").splitlines()
    b = pb.read_text(encoding="utf-8", errors="replace").splitlines()
    return float(difflib.SequenceMatcher(a=a, b=b).ratio())


@METRICS.register()
def check_file_existence(result: Any, expected: Any = None) -> float:
    """1 when the result getter found a file (a path that exists on the host)."""
    if isinstance(result, list):
        return float(bool(result) and all(as_existing_path(r) is not None for r in result))
    return float(as_existing_path(result) is not None)


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
        return 0.0
    try:
        doc = yaml.safe_load(p.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        logger.info("not valid YAML: %s (%s)", p, exc)
        return 0.0
    rules = expected_value(expected, "rules")
    if not isinstance(rules, list):
        raise MetricError(f"check_yaml_file expects a list of [match_type, key_path, value] rules, got {rules!r}")
    for rule in rules:
        if not isinstance(rule, (list, tuple)) or len(rule) != 3:
            raise MetricError(f"check_yaml_file: a rule is [match_type, key_path, value], got {rule!r}")
        match_type, key_path, want = rule
        try:
            value = _walk_key_path(doc, list(key_path))
        except (KeyError, IndexError, StopIteration, TypeError):
            return 0.0
        if match_type == "match":
            ok = value == want
        elif match_type == "in":
            ok = value in want
        elif match_type == "contain":
            ok = value is not None and want in value
        elif match_type == "not_null":
            ok = bool(value)
        else:
            raise MetricError(f"check_yaml_file: unknown match type {match_type!r}")
        if not ok:
            return 0.0
    return 1.0
