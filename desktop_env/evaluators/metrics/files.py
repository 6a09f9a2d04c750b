"""File, text, list and config metrics of the general computer-use suite, and the file-reading helpers that
its document, table and test-suite metrics (files_documents, files_tables, files_python) share."""
from __future__ import annotations

import ast
import difflib
import importlib
import json
import logging
import re
from pathlib import Path
from typing import Any

from desktop_env.evaluators.metrics.utils import MetricError, as_existing_path, expected_value, text_of
from desktop_env.registry import METRICS

logger = logging.getLogger(__name__)


# --------------------------------------------------------------------------- shared helpers

def require_package(module: str, package: str, metric: str) -> Any:
    """Import ``module`` for ``metric``, or say which package to install."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise MetricError(f"{metric} needs the Python package {package!r}: pip install {package}") from None


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
    """The result file as a host path, or None (logged) when the getter found none."""
    path = as_existing_path(result)
    if path is None:
        logger.info("%s: no result file (%r); it scores 0", metric, result)
    return path


def read_text(path: Path) -> str | None:
    """A file's text (UTF-8, a BOM dropped, bad bytes replaced), or None when it cannot be read."""
    try:
        return path.read_text(encoding="utf-8-sig", errors="replace")
    except OSError as exc:
        logger.info("cannot read %s: %s", path, exc)
        return None


def result_text(result: Any, metric: str) -> str | None:
    """The text of the result file, or None (logged) when it is missing or unreadable."""
    path = result_file(result, metric)
    return None if path is None else read_text(path)


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


# --------------------------------------------------------------------------- JSON and lists

_UNREADABLE = object()
_JSON_STRING = r'"(?:[^"\\]|\\.)*"'
_JSONC_COMMENTS = re.compile(_JSON_STRING + r"|//[^\n]*|/\*.*?\*/", re.S)
_JSONC_TRAILING_COMMAS = re.compile(_JSON_STRING + r"|,(?=\s*[}\]])")


def _keep_strings(match: re.Match) -> str:
    token = match.group(0)
    return token if token.startswith('"') else ""


def _load_jsonc(path: Path) -> Any:
    """A JSON file that may hold comments and trailing commas, as VS Code's settings and keybindings do.

    Returns:
        the decoded value, or ``_UNREADABLE`` (logged).
    """
    text = read_text(path)
    if text is None:
        return _UNREADABLE
    # strings are matched first by both patterns, so a "//" or ",}" inside a string is kept
    plain = _JSONC_TRAILING_COMMAS.sub(_keep_strings, _JSONC_COMMENTS.sub(_keep_strings, text))
    try:
        return json.loads(plain)
    except (json.JSONDecodeError, RecursionError) as exc:
        logger.info("%s is not valid JSON: %s", path, exc)
        return _UNREADABLE


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
    if any(v == _EVALUATION_FAILED for v in want.values()):
        logger.info("check_direct_json_object: the expected side could not be computed; it scores 0")
        return 0.0
    data = _as_object(result)
    if not isinstance(data, dict):
        logger.info("check_direct_json_object: the result is not an object: %r", result)
        return 0.0
    if rules.get("expect_in_result"):
        failed = [k for k, v in want.items() if not _value_in_result(data.get(k), v)]
    else:
        failed = [k for k, v in want.items() if not _same_value(data.get(k), v, ignore_order)]
    for key in failed:
        logger.info("check_direct_json_object: key %r is %r, expected %r", key, data.get(key), want[key])
    return float(not failed)


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
    present = [p.pattern for p in unexpect if any(p.search(line) for line in lines)]
    if missing or present:
        logger.info("check_list: patterns not found %s, unwanted patterns found %s", missing, present)
    return float(not missing and not present)


@METRICS.register()
def match_in_list(result: Any, expected: Any) -> float:
    """1 when ``result`` (a value, e.g. the default search engine's name) is one of ``expected["expected"]``.

    ``expected["expected"]`` is the list of accepted values; a single value is a one-item list.
    """
    candidates = expected_value(expected)
    candidates = candidates if isinstance(candidates, (list, tuple, set)) else [candidates]
    if result is None:
        return 0.0
    ok = result in candidates
    if not ok:
        logger.info("match_in_list: %r is not one of %r", result, candidates)
    return float(ok)


@METRICS.register()
def is_in_list(result: Any, expected: Any) -> float:
    """1 when ``expected["expected"]`` is an item of the list ``result`` (a substring when ``result`` is text).

    Used with getters that list things, e.g. the paths of Chromium's unpacked extensions.
    """
    want = expected_value(expected)
    if result is None:
        return 0.0
    if isinstance(result, (list, tuple, set)):
        ok = want in result
    elif isinstance(result, str):
        ok = isinstance(want, str) and want in result
    else:
        logger.info("is_in_list: the result is neither a list nor text: %r", result)
        return 0.0
    if not ok:
        logger.info("is_in_list: %r is not in %r", want, result)
    return float(ok)


def _jsonc_result(result: Any, metric: str, kind: type, what: str):
    """The JSON-with-comments file ``result`` loaded, or None (logged) when it is missing, unreadable
    or does not hold ``what`` (a ``kind``)."""
    path = result_file(result, metric)
    data = _UNREADABLE if path is None else _load_jsonc(path)
    if isinstance(data, kind):
        return data
    if data is not _UNREADABLE:
        logger.info("%s: %s does not hold %s", metric, path, what)
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
    return float(not wrong)


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
    return float(ok)


@METRICS.register()
def compare_config(result: Any, expected: Any) -> float:
    """1 when the text of the file ``result`` equals ``expected["expected"]`` exactly.

    Raises:
        MetricError: ``expected["expected"]`` is not a string.
    """
    want = expected_value(expected)
    if not isinstance(want, str):
        raise MetricError(f"compare_config: 'expected' must be the file's whole text (a string), got {want!r}")
    text = result_text(result, "compare_config")
    return float(text is not None and text == want)


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
    return float(not missing)


_CODING_LINE = re.compile(r"#!|#.*coding[:=]")


def _pure_python_lines(text: str) -> list[str]:
    """Source lines less a leading shebang/coding header (first 3 lines), blank lines and trailing blanks;
    tabs expanded to 4 columns. Anything else (a stray Markdown fence) is kept, so it still counts."""
    lines = text.splitlines()
    start = 0
    while start < min(3, len(lines)) and _CODING_LINE.match(lines[start].strip()):
        start += 1
    return [line.expandtabs(4).rstrip() for line in lines[start:] if line.strip()]


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
    return float(_pure_python_lines(text) == gold)


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
    return float(found == count)


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
        return float(text == gold)
    if gold in text:
        return 1.0
    number = _as_number(text)
    ok = number is not None and abs(number - gold_number) < 1e-4
    if not ok:
        logger.info("compare_result_files: %.200r does not give %s", text, gold)
    return float(ok)



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
        return 0.0
    names = [c.get("name") for c in children if isinstance(c, dict)]
    ok = sorted(map(str, names)) == sorted(want)
    if not ok:
        logger.info("check_moved_jpgs: the folder holds %s, expected %s", sorted(map(str, names)), sorted(want))
    return float(ok)


_TIME_ZONE_LINE = re.compile(r"Time zone:.*\(([^()]*?),?\s*([+-]\d{4})\)")


@METRICS.register()
def is_utc_0(result: Any, expected: Any = None) -> float:
    """1 when ``timedatectl status`` output ``result`` shows a time zone at UTC+0 (offset ``+0000``).

    Takes no expected value.
    """
    text = text_of(result)
    match = _TIME_ZONE_LINE.search(text or "")
    if match is None:
        logger.info("is_utc_0: no 'Time zone: ... (NAME, +HHMM)' line in %.300r", text)
        return 0.0
    ok = match.group(2) in ("+0000", "-0000")
    if not ok:
        logger.info("is_utc_0: the time zone offset is %s", match.group(2))
    return float(ok)
