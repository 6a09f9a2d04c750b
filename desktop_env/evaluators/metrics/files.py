"""File, text, list and config metrics of the general computer-use suite (the helpers its file metrics share
are in files_common, the words for differences in differences)."""
from __future__ import annotations

import ast
import json
import logging
import re
from collections import Counter
from pathlib import Path
from typing import Any

from desktop_env.evaluators.metrics.differences import first_line_difference, json_difference, line_difference, plural
from desktop_env.evaluators.metrics.files_common import gold_text, result_text, rule_dict, string_list
# re-exported: metric modules import these from here (files_common and differences own them)
from desktop_env.evaluators.metrics.differences import missing_file  # noqa: F401 pylint: disable=unused-import
from desktop_env.evaluators.metrics.files_common import (  # noqa: F401 pylint: disable=unused-import
    as_list, did_you_mean, fuzzy_ratio, gold_file, read_text, require_package, result_file)
from desktop_env.evaluators.metrics.utils import MetricError, OptionError, expected_value, text_of
from desktop_env.evaluators.reasons import (MISSING_RESULT, RULE_FAILED, STRUCTURE_MISMATCH, THRESHOLD_NOT_MET,
                                            UNREADABLE_RESULT, VALUE_MISMATCH, explain, fail, shown)
from desktop_env.registry import METRICS

logger = logging.getLogger(__name__)


# --------------------------------------------------------------------------- JSON and lists

_JSON_STRING = r'"(?:[^"\\]|\\.)*"'
_JSONC_COMMENTS = re.compile(_JSON_STRING + r"|//[^\n]*|/\*.*?\*/", re.S)
_JSONC_TRAILING_COMMAS = re.compile(_JSON_STRING + r"|,(?=\s*[}\]])")


def _keep_strings(match: re.Match) -> str:
    token = match.group(0)
    return token if token.startswith('"') else ""


def _parse_jsonc(text: str) -> Any:
    """JSON that may hold comments and trailing commas, as VS Code's settings and keybindings do.

    Raises:
        ValueError: it is not such JSON (the message says where).
    """
    # strings are matched first by both patterns, so a "//" or ",}" inside a string is kept
    plain = _JSONC_TRAILING_COMMAS.sub(_keep_strings, _JSONC_COMMENTS.sub(_keep_strings, text))
    try:
        return json.loads(plain)
    except RecursionError:
        raise ValueError("nested too deeply") from None


def _as_object(result: Any) -> Any:
    """A result that is a dict/list already, or text (or a file) holding JSON or a Python literal."""
    if isinstance(result, (dict, list)):
        return result
    text = text_of(result)
    if text is None:
        return None
    text = text.strip()
    # a guest script may print JSON, a Python dict (single quotes), or JSON written with single quotes
    for parse in (json.loads, ast.literal_eval, lambda t: json.loads(t.replace("'", '"'))):
        try:
            return parse(text)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            continue
    logger.info("result is not a JSON object: %.200s", text)
    return None


def _sort_key(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str)


def _same_value(actual: Any, want: Any, ignore_list_order: bool) -> bool:
    if ignore_list_order and isinstance(actual, list) and isinstance(want, list):
        return sorted(actual, key=_sort_key) == sorted(want, key=_sort_key)
    return actual == want


def _value_in_result(actual: Any, want: Any) -> bool:
    """``expect_in_result``: a list of candidates, one of which the result holds or is; a string the
    result contains (as a substring or a list item); any other value the result equals."""
    if isinstance(want, list):
        if isinstance(actual, list):
            return any(candidate in actual for candidate in want)
        return isinstance(actual, str) and actual in want
    if isinstance(want, str):
        return isinstance(actual, (str, list)) and want in actual
    return actual == want


#: the expected value a getter writes when it could not compute the gold answer
_EVALUATION_FAILED = "__EVALUATION_FAILED__"


@METRICS.register()
def check_direct_json_object(result: Any, expected: Any) -> float:
    """1 when the object ``result`` has the key/values of ``expected["expected"]``.

    ``result`` is a dict (from a page or URL getter) or text holding one (a command's output: JSON,
    a Python dict literal, or JSON written with single quotes). ``expected`` is the rule dict
    ``{"expected": {key: value}, "expect_in_result": bool, "ignore_list_order": bool,
    "result_not_list": bool}``:

    - by default every key's value must equal the expected one (a missing key is ``None``);
      ``ignore_list_order`` (at the top of the rules or inside ``expected``) compares lists
      in any order;
    - with ``expect_in_result``, an expected list is a set of candidates (the result's list holds one
      of them, or the result's string is one of them: ``result_not_list`` says the result is a
      string); an expected string must be in the result's string or list; any other value must equal.

    An expected value ``"__EVALUATION_FAILED__"`` (the gold could not be computed) scores 0.

    Raises:
        MetricError: ``expected`` is not such a rule dict.
    """
    rules = rule_dict(expected, "check_direct_json_object", '{"expected": {key: value}, ...}')
    want = rules.get("expected")
    if not isinstance(want, dict):
        raise MetricError(f"check_direct_json_object: 'expected' must be an object {{key: value}}, got {want!r}")
    ignore_order = bool(rules.get("ignore_list_order") or want.get("ignore_list_order") is True)
    want = {k: v for k, v in want.items() if not (k == "ignore_list_order" and isinstance(v, bool))}
    failed_gold = [k for k, v in want.items() if v == _EVALUATION_FAILED]
    if failed_gold:
        logger.info("check_direct_json_object: the expected side could not be computed; it scores 0")
        return fail(MISSING_RESULT, f"the expected value of key {failed_gold[0]!r} could not be computed "
                                    f"({_EVALUATION_FAILED})")
    data = _as_object(result)
    if not isinstance(data, dict):
        logger.info("check_direct_json_object: the result is not an object: %r", result)
        if result is None:
            return fail(MISSING_RESULT, "no result object (the getter gave None)")
        if data is None:
            return fail(UNREADABLE_RESULT, f"the result is not JSON or a Python literal: {shown(text_of(result))}")
        return fail(STRUCTURE_MISMATCH, f"the result is a {type(data).__name__}, not an object: {shown(data)}")
    in_result = bool(rules.get("expect_in_result"))
    if in_result:
        failed = [k for k, v in want.items() if not _value_in_result(data.get(k), v)]
    else:
        failed = [k for k, v in want.items() if not _same_value(data.get(k), v, ignore_order)]
    for key in failed:
        logger.info("check_direct_json_object: key %r is %r, expected %r", key, data.get(key), want[key])
    if failed:
        kind, text = _key_difference(failed[0], data, want[failed[0]], in_result, ignore_order)
        more = f" ({len(failed) - 1} more keys differ)" if len(failed) > 1 else ""
        return fail(kind, text + more)
    return 1.0


def _key_difference(key: str, data: dict, want: Any, in_result: bool, ignore_order: bool) -> tuple[str, str]:
    """``(kind, text)`` of a key of ``check_direct_json_object`` that did not hold."""
    if key not in data:
        return STRUCTURE_MISMATCH, f"key {key!r} is missing (expected {shown(want)})"
    got = shown(data[key])
    if in_result and isinstance(want, list):
        return RULE_FAILED, f"key {key!r}: expected one of {shown(want)}, got {got}"
    if in_result and isinstance(want, str):
        return RULE_FAILED, f"key {key!r}: expected to contain {shown(want)}, got {got}"
    order = " in any order" if ignore_order and isinstance(want, list) else ""
    return VALUE_MISMATCH, f"key {key!r}: expected {shown(want)}{order}, got {got}"


def _compile_patterns(value: Any, metric: str, field: str) -> list[re.Pattern]:
    patterns = [] if value is None else string_list(value, metric, field)
    compiled = []
    for pattern in patterns:
        try:
            compiled.append(re.compile(pattern))
        except re.error as exc:
            raise MetricError(f"{metric}: {field} pattern {pattern!r} is not a valid regular expression: "
                              f"{exc}") from None
    return compiled


@METRICS.register()
def check_list(result: Any, expected: Any) -> float:
    """1 when the lines of the text file ``result`` match the regex rules ``expected``.

    ``expected`` is ``{"expect": [regex...], "unexpect": [regex...]}`` (either may be left out): every
    ``expect`` pattern must be found (``re.search``) in some line, and no ``unexpect`` pattern in any.
    The file is typically a listing (``ls -R`` output saved by a postconfig step) or a playlist.

    Raises:
        MetricError: rules without ``expect`` or ``unexpect``, or an invalid regex.
    """
    rules = rule_dict(expected, "check_list", '{"expect": [regex], "unexpect": [regex]}')
    if not {"expect", "unexpect"} & set(rules):
        raise MetricError(f"check_list expects rules {{expect, unexpect}}, got {rules!r}")
    expect = _compile_patterns(rules.get("expect"), "check_list", "expect")
    unexpect = _compile_patterns(rules.get("unexpect"), "check_list", "unexpect")
    text = result_text(result, "check_list")
    if text is None:
        return 0.0
    lines = text.splitlines()
    missing = [p.pattern for p in expect if not any(p.search(line) for line in lines)]
    present = [p for p in unexpect if any(p.search(line) for line in lines)]
    if missing or present:
        logger.info("check_list: patterns not found %s, unwanted patterns found %s", missing,
                    [p.pattern for p in present])
    if missing:
        return fail(RULE_FAILED, f"expect pattern {missing[0]!r} matches no line of the {len(lines)} lines")
    if present:
        number, line = next((n, line) for n, line in enumerate(lines, 1) if present[0].search(line))
        return fail(RULE_FAILED, f"unexpect pattern {present[0].pattern!r} matches line {number}: {shown(line)}")
    return 1.0


@METRICS.register()
def match_in_list(result: Any, expected: Any) -> float:
    """1 when ``result`` (a value, e.g. the default search engine's name) is one of ``expected["expected"]``.

    ``expected["expected"]`` is the list of accepted values; a single value is a one-item list.
    """
    candidates = expected_value(expected)
    candidates = candidates if isinstance(candidates, (list, tuple, set)) else [candidates]
    if result is None:
        return fail(MISSING_RESULT, "no result value (the getter gave None)")
    ok = result in candidates
    if not ok:
        logger.info("match_in_list: %r is not one of %r", result, candidates)
        return fail(VALUE_MISMATCH, f"expected one of {shown(list(candidates))}, got {shown(result)}")
    return 1.0


@METRICS.register()
def is_in_list(result: Any, expected: Any) -> float:
    """1 when ``expected["expected"]`` is an item of the list ``result`` (a substring when ``result`` is text).

    Used with getters that list things, e.g. the paths of Chromium's unpacked extensions.
    """
    want = expected_value(expected)
    if result is None:
        return fail(MISSING_RESULT, "no result list (the getter gave None)")
    if isinstance(result, (list, tuple, set)):
        ok = want in result
        where = f"the {len(result)} items {shown(result)}"
    elif isinstance(result, str):
        ok = isinstance(want, str) and want in result
        where = f"the text {shown(result)}"
    else:
        logger.info("is_in_list: the result is neither a list nor text: %r", result)
        return fail(UNREADABLE_RESULT, f"the result is neither a list nor text: {shown(result)}")
    if not ok:
        logger.info("is_in_list: %r is not in %r", want, result)
        return fail(RULE_FAILED, f"{shown(want)} is not in {where}")
    return 1.0


def _jsonc_result(result: Any, metric: str, kind: type, what: str):
    """The JSON-with-comments file ``result`` loaded, or None (logged and explained) when it is missing,
    unreadable or does not hold ``what`` (a ``kind``)."""
    text = result_text(result, metric)
    if text is None:
        return None
    name = Path(result).name
    try:
        data = _parse_jsonc(text)
    except ValueError as exc:
        logger.info("%s: %s is not valid JSON: %s", metric, result, exc)
        explain(UNREADABLE_RESULT, f"the result file {name} is not valid JSON: {exc}")
        return None
    if isinstance(data, kind):
        return data
    logger.info("%s: %s does not hold %s", metric, result, what)
    explain(STRUCTURE_MISMATCH, f"the result file {name} holds {shown(data)}, not {what}")
    return None


@METRICS.register()
def check_json_settings(result: Any, expected: Any) -> float:
    """1 when the JSON settings file ``result`` (e.g. VS Code's ``settings.json``) holds every setting of
    ``expected["expected"]`` (``{key: value}``) with that value. Comments and trailing commas are allowed.

    Raises:
        MetricError: ``expected["expected"]`` is not an object.
    """
    want = expected_value(expected)
    if not isinstance(want, dict):
        raise MetricError(f"check_json_settings: 'expected' must be an object {{setting: value}}, got {want!r}")
    data = _jsonc_result(result, "check_json_settings", dict, "an object")
    if data is None:
        return 0.0
    wrong = {k: data.get(k, "<missing>") for k, v in want.items() if k not in data or data[k] != v}
    if wrong:
        logger.info("check_json_settings: settings differ from %r: %r", want, wrong)
        key = next(iter(wrong))
        more = f" ({len(wrong) - 1} more settings differ)" if len(wrong) > 1 else ""
        if key not in data:
            return fail(STRUCTURE_MISMATCH, f"setting {key!r} is not set (expected {shown(want[key])}){more}")
        return fail(VALUE_MISMATCH, f"setting {key!r}: expected {shown(want[key])}, got {shown(data[key])}{more}")
    return 1.0


@METRICS.register()
def check_json_keybindings(result: Any, expected: Any) -> float:
    """1 when the keybindings file ``result`` (VS Code's ``keybindings.json``: a list of bindings, often
    after a comment line) holds the binding ``expected["expected"]`` (``{"key", "command", "when"...}``),
    equal in every field.

    Raises:
        MetricError: ``expected["expected"]`` is not an object.
    """
    want = expected_value(expected)
    if not isinstance(want, dict):
        raise MetricError(f"check_json_keybindings: 'expected' must be a binding object, got {want!r}")
    data = _jsonc_result(result, "check_json_keybindings", list, "a list")
    if data is None:
        return 0.0
    ok = want in data
    if not ok:
        logger.info("check_json_keybindings: %r not among %d bindings", want, len(data))
        return fail(*_closest_binding(data, want))
    return 1.0


def _closest_binding(bindings: list, want: dict) -> tuple[str, str]:
    """``(kind, text)`` of a missing keybinding: the first differing field of a binding of the same
    command (or key), else that no binding is alike."""
    for field in ("command", "key"):
        alike = [b for b in bindings if isinstance(b, dict) and field in want and b.get(field) == want[field]]
        if alike:
            near, which = alike[0], f"the binding with {field} {shown(want[field])}"
            absent = next((f for f in want if f not in near), None)
            if absent is not None:
                return STRUCTURE_MISMATCH, f"{which} has no {absent!r} (expected {shown(want[absent])})"
            other = next((f for f in want if near[f] != want[f]), None)
            if other is not None:
                return VALUE_MISMATCH, f"{which}: {other!r} expected {shown(want[other])}, got {shown(near[other])}"
            extra = next(f for f in near if f not in want)  # it differs from want, so it has more fields
            return STRUCTURE_MISMATCH, f"{which} also has {extra!r}: {shown(near[extra])}"
    return RULE_FAILED, f"no binding {shown(want)} among the {len(bindings)} bindings"


def check_config_options(options: dict) -> None:
    """Validate ``compare_config`` options when a task is loaded.

    Raises:
        OptionError: ``containment_ok`` is not true or false.
    """
    if not isinstance(options.get("containment_ok", False), bool):
        raise OptionError(f"must be true or false, got {options['containment_ok']!r}", "containment_ok")


@METRICS.register(check=check_config_options)
def compare_config(result: Any, expected: Any, containment_ok: bool = False) -> float:
    """1 when the text of the file ``result`` equals ``expected["expected"]`` exactly.

    Args:
        containment_ok: instead, 1 when the file holds the expected text: when both are JSON (the
            file may hold comments and trailing commas, as VS Code's ``settings.json`` does), every
            key of the expected object must be in the file's with a value that agrees the same way
            (lists and other values equal), other keys allowed; when either is not JSON, the expected
            text (less surrounding blanks) must occur in the file. The general suite's settings tasks
            use it, so that settings the agent (or VS Code) left beside the expected ones do not fail.

    Raises:
        MetricError: ``expected["expected"]`` is not a string, or ``containment_ok`` not a bool.
    """
    check_config_options({"containment_ok": containment_ok})
    want = expected_value(expected)
    if not isinstance(want, str):
        raise MetricError(f"compare_config: 'expected' must be the file's whole text (a string), got {want!r}")
    text = result_text(result, "compare_config")
    if text is None:
        return 0.0
    if containment_ok:
        return _config_contains(text, want)
    if text != want:
        return fail(VALUE_MISMATCH, f"the file differs from the expected text: {first_line_difference(text, want)}")
    return 1.0


def _config_contains(text: str, want: str) -> float:
    """``compare_config`` with ``containment_ok``: 1 when ``text`` holds ``want`` (see there)."""
    parsed = []
    for side in (text, want):
        try:
            parsed.append(_parse_jsonc(side))
        except ValueError:  # not both JSON: compared as text
            if want.strip() in text:
                return 1.0
            which = "the expected text is not JSON" if parsed else "the file is not JSON"
            return fail(RULE_FAILED, f"{which}, so it was looked for as text: the file does not contain "
                                     f"{shown(want.strip())}")
    found = json_difference(*parsed, subset=True)
    if found:
        return fail(*found)
    return 1.0


# --------------------------------------------------------------------------- text files

@METRICS.register()
def file_contains(result: Any, expected: Any) -> float:
    """1 when the text file ``result`` contains every string of ``expected["expected"]`` (one string or a list).

    Raises:
        MetricError: ``expected["expected"]`` is not a string or a list of strings.
    """
    wanted = string_list(expected_value(expected), "file_contains", "'expected'")
    text = result_text(result, "file_contains")
    if text is None:
        return 0.0
    missing = [s for s in wanted if s not in text]
    if missing:
        logger.info("file_contains: not found: %r", missing)
        more = f" ({len(missing)} of the {len(wanted)} strings are missing)" if len(missing) > 1 else ""
        return fail(RULE_FAILED, f"the file does not contain {shown(missing[0])}{more}")
    return 1.0


_CODING_LINE = re.compile(r"#!|#.*coding[:=]")


def _pure_python_lines(text: str) -> list[tuple[int, str]]:
    """Source lines, each with its line number (from 1), less a leading shebang/coding header (first 3
    lines), blank lines and trailing blanks; tabs expanded to 4 columns. Anything else (a stray
    Markdown fence) is kept, so it still counts."""
    lines = text.splitlines()
    start = 0
    while start < min(3, len(lines)) and _CODING_LINE.match(lines[start].strip()):
        start += 1
    return [(n, line.expandtabs(4).rstrip()) for n, line in enumerate(lines[start:], start + 1) if line.strip()]


@METRICS.register()
def compare_python_pure_text(result: Any, expected: Any) -> float:
    """1 when the Python file ``result`` has the same code as the gold file ``expected``.

    Both are compared line by line after dropping blank lines, trailing blanks and a leading shebang
    or coding line; tabs count as 4 spaces.

    Raises:
        MetricError: the gold file is missing or unreadable.
    """
    gold = _pure_python_lines(gold_text(expected, "compare_python_pure_text"))
    text = result_text(result, "compare_python_pure_text")
    if text is None:
        return 0.0
    mine = _pure_python_lines(text)
    for (n, line), (gold_n, gold_line) in zip(mine, gold):
        if line != gold_line:
            return fail(VALUE_MISMATCH, line_difference(f"line {n} (gold line {gold_n})", line, gold_line))
    if len(mine) < len(gold):
        return fail(VALUE_MISMATCH, f"the code ends after {len(mine)} non-blank lines; expected gold line "
                                    f"{gold[len(mine)][0]}: {shown(gold[len(mine)][1])}")
    if len(mine) > len(gold):
        n, line = mine[len(gold)]
        return fail(VALUE_MISMATCH, f"line {n}: expected the end of the code ({len(gold)} non-blank lines), "
                                    f"got {shown(line)}")
    return 1.0


_TIME_OF_DAY = re.compile(r"([01]\d|2[0-3]):[0-5]\d:([0-5]\d|60)")


@METRICS.register()
def check_line_number(result: Any, expected: Any) -> float:
    """1 when exactly ``expected["expected"]`` lines of the text file ``result`` hold a time of day
    ``HH:MM:SS`` (e.g. a log filtered to some entries).

    Raises:
        MetricError: ``expected["expected"]`` is not a whole number.
    """
    want = expected_value(expected)
    try:
        count = int(want)
    except (TypeError, ValueError):
        raise MetricError(f"check_line_number: 'expected' must be a number of lines, got {want!r}") from None
    if isinstance(want, bool) or (isinstance(want, float) and not want.is_integer()):
        raise MetricError(f"check_line_number: 'expected' must be a whole number of lines, got {want!r}")
    text = result_text(result, "check_line_number")
    if text is None:
        return 0.0
    found = sum(1 for line in text.splitlines() if _TIME_OF_DAY.search(line))
    if found != count:
        logger.info("check_line_number: %d lines hold a time, expected %d", found, count)
        return fail(THRESHOLD_NOT_MET, f"{plural(found, 'line')} with a time of day HH:MM:SS, expected exactly "
                                       f"{count}")
    return 1.0


def _as_number(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


@METRICS.register()
def compare_result_files(result: Any, expected: Any) -> float:
    """1 when the answer file ``result`` gives the gold file's answer.

    When the gold text is a number, the result passes if it contains that text (an answer written
    with words around it) or is a number within 1e-4 of it; otherwise the stripped texts must be equal.

    Raises:
        MetricError: the gold file is missing or unreadable.
    """
    gold = gold_text(expected, "compare_result_files").strip()
    text = result_text(result, "compare_result_files")
    if text is None:
        return 0.0
    text = text.strip()
    gold_number = _as_number(gold)
    if gold_number is None:
        if text != gold:
            return fail(VALUE_MISMATCH, f"the answer differs from the gold file's: {first_line_difference(text, gold)}")
        return 1.0
    if gold in text:
        return 1.0
    number = _as_number(text)
    ok = number is not None and abs(number - gold_number) < 1e-4
    if not ok:
        logger.info("compare_result_files: %.200r does not give %s", text, gold)
        return fail(VALUE_MISMATCH, f"expected the answer {gold} (in the text, or a number within 1e-4 of it), "
                                    f"got {shown(text)}")
    return 1.0

# --------------------------------------------------------------------------- desktop state

@METRICS.register()
def check_moved_jpgs(result: Any, expected: Any) -> float:
    """1 when the folder listing ``result`` (the ``list_directory`` tree) directly holds exactly the
    entries named in ``expected["expected"]``, in any order.

    Raises:
        MetricError: ``expected["expected"]`` is not a list of names.
    """
    want = string_list(expected_value(expected), "check_moved_jpgs", "'expected'")
    children = result.get("children") if isinstance(result, dict) else None
    if not isinstance(children, list):
        logger.info("check_moved_jpgs: the result is not a folder listing: %r", result)
        if result is None:
            return fail(MISSING_RESULT, "no folder listing (the getter gave None)")
        return fail(UNREADABLE_RESULT, f"the result is not a folder listing with children: {shown(result)}")
    names = sorted(map(str, (c.get("name") for c in children if isinstance(c, dict))))
    ok = names == sorted(want)
    if not ok:
        logger.info("check_moved_jpgs: the folder holds %s, expected %s", names, sorted(want))
        missing, extra = Counter(want) - Counter(names), Counter(names) - Counter(want)
        return fail(STRUCTURE_MISMATCH, f"the folder {result.get('name', '')!r} lacks {sorted(missing)} and holds "
                                        f"unexpected {sorted(extra)} (it holds {shown(names)})")
    return 1.0


_TIME_ZONE_LINE = re.compile(r"Time zone:.*\(([^()]*?),?\s*([+-]\d{4})\)")


@METRICS.register()
def is_utc_0(result: Any, expected: Any = None) -> float:
    """1 when ``timedatectl status`` output ``result`` shows a time zone at UTC+0 (offset ``+0000``).

    Takes no expected value.
    """
    text = text_of(result)
    if text is None:
        return fail(MISSING_RESULT, "no timedatectl output (the getter gave None)")
    match = _TIME_ZONE_LINE.search(text)
    if match is None:
        logger.info("is_utc_0: no 'Time zone: ... (NAME, +HHMM)' line in %.300r", text)
        return fail(UNREADABLE_RESULT, f"no 'Time zone: ... (NAME, +HHMM)' line in the output {shown(text)}")
    ok = match.group(2) in ("+0000", "-0000")
    if not ok:
        logger.info("is_utc_0: the time zone offset is %s", match.group(2))
        return fail(VALUE_MISMATCH, f"{match.group(0).strip()!r}: expected the offset +0000, got {match.group(2)}")
    return 1.0
