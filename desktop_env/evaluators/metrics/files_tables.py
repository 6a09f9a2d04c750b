"""Table metrics of the general computer-use suite: CSV records, a query on an SQLite file, a workbook column."""
from __future__ import annotations

import csv
import io
import logging
import math
import re
import sqlite3
import time
import unicodedata
import zipfile
from contextlib import closing
from pathlib import Path
from typing import Any

from desktop_env.evaluators.metrics.files import require_package, result_file, result_text, rule_dict, string_list
from desktop_env.evaluators.metrics.utils import MetricError, expected_value
from desktop_env.evaluators.reasons import (RULE_FAILED, STRUCTURE_MISMATCH, UNREADABLE_RESULT, VALUE_MISMATCH, fail,
                                            shown)
from desktop_env.registry import METRICS

logger = logging.getLogger(__name__)


def _field_matches(row: dict, key: str, value: Any) -> bool:
    return key in row and row[key] == (value if isinstance(value, str) else str(value))


def _record_matches(pattern: dict, row: dict) -> bool:
    return all(_field_matches(row, key, value) for key, value in pattern.items())


def _closest_record(pattern: dict, rows: list[tuple[int, dict]]) -> str:
    """The row that matches most of ``pattern``'s columns, and the first column where it differs."""
    if not rows:
        return "the file has no records"
    line, row = max(rows, key=lambda r: sum(_field_matches(r[1], k, v) for k, v in pattern.items()))
    key = next(k for k, v in pattern.items() if not _field_matches(row, k, v))
    if key not in row:
        return f"there is no column {key!r} (columns: {shown(list(row))})"
    return f"the closest, line {line}, has {key} {shown(row[key])}"


@METRICS.register()
def check_csv(result: Any, expected: Any) -> float:
    """1 when the rows of the CSV file ``result`` (a header row, then records) satisfy the rules.

    ``expected`` is ``{"expect": [PATTERN...], "unexpect": [PATTERN...]}``, a PATTERN being
    ``{column: value}``: each ``expect`` pattern must match some row (every column equal, as text)
    and no ``unexpect`` pattern may match any row.

    Raises:
        MetricError: rules without ``expect``/``unexpect``, or a pattern that is not an object.
    """
    rules = rule_dict(expected, "check_csv", '{"expect": [{column: value}], "unexpect": [...]}')
    if not {"expect", "unexpect"} & set(rules):
        raise MetricError(f"check_csv expects rules {{expect, unexpect}}, got {rules!r}")
    expect, unexpect = rules.get("expect") or [], rules.get("unexpect") or []
    for pattern in [*expect, *unexpect]:
        if not isinstance(pattern, dict):
            raise MetricError(f"check_csv: a pattern is an object {{column: value}}, got {pattern!r}")
    text = result_text(result, "check_csv")  # explains a missing or unreadable file
    if text is None:
        return 0.0
    name = Path(result).name  # an existing file: result_text read it
    try:
        reader = csv.DictReader(io.StringIO(text))
        rows = [(reader.line_num, row) for row in reader]  # the line each record ends on
    except csv.Error as exc:
        logger.info("check_csv: not a readable CSV: %s", exc)
        return fail(UNREADABLE_RESULT, f"{name} is not a readable CSV file: {exc}")
    missing = [p for p in expect if not any(_record_matches(p, row) for _, row in rows)]
    present = [p for p in unexpect if any(_record_matches(p, row) for _, row in rows)]
    if missing or present:
        logger.info("check_csv: records not found %s, unwanted records found %s", missing, present)
    if missing:
        return fail(RULE_FAILED, f"{name}: no record matches the expected {shown(missing[0])}; "
                                 f"{_closest_record(missing[0], rows)}")
    if present:
        line = next(n for n, row in rows if _record_matches(present[0], row))
        return fail(RULE_FAILED, f"{name}: line {line} matches the unwanted record {shown(present[0])}")
    return 1.0


_SQL_TIMEOUT_S = 30.0  # seconds a query may run on a guest-made database
#: sqlite errors that are the query's fault (the task's), not the database's
_SQL_TASK_ERRORS = ("syntax error", "incomplete input", "readonly", "read-only", "unrecognized token")


def _sql_value(row: tuple | None) -> str:
    """The first value of a query's first row, as a reason shows it."""
    if row is None:
        return "no row"
    return "NULL" if row[0] is None else shown(row[0])


@METRICS.register()
def run_sqlite3(result: Any, expected: Any) -> float:
    """The first column of the first row of the query ``expected["sql"]`` on the SQLite file ``result``.

    The query usually computes a truth value (1 or 0), e.g. "every message in a folder is starred"
    on Thunderbird's ``global-messages-db.sqlite``; the value is clamped to 0..1, NULL or text gives 0.
    The database is opened read-only and immutable, with the schema untrusted (its views and
    triggers cannot call functions with side effects), and a query is stopped after 30 s.

    Raises:
        MetricError: no ``sql`` string, or a query sqlite rejects as malformed or writing.
    """
    sql = expected_value(expected, "sql")
    if not isinstance(sql, str) or not sql.strip():
        raise MetricError(f"run_sqlite3 expects rules {{\"sql\": \"SELECT ...\"}}, got {expected!r}")
    path = result_file(result, "run_sqlite3")  # explains a missing file
    if path is None:
        return 0.0
    deadline = time.monotonic() + _SQL_TIMEOUT_S
    try:
        with closing(sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro&immutable=1", uri=True)) as conn:
            conn.set_progress_handler(lambda: int(time.monotonic() > deadline), 10_000)
            conn.execute("PRAGMA trusted_schema = OFF")
            row = conn.execute(sql).fetchone()
    except sqlite3.OperationalError as exc:
        message = str(exc).lower()
        if any(s in message for s in _SQL_TASK_ERRORS):
            raise MetricError(f"run_sqlite3: the query fails: {exc}; fix 'sql' in the task") from None
        logger.info("run_sqlite3: the query fails on %s: %s", path, exc)
        if "no such table" in message or "no such column" in message:
            return fail(STRUCTURE_MISMATCH, f"the query fails on {path.name}: {exc}")
        if "interrupted" in message:  # the progress handler stopped it at the deadline
            return fail(UNREADABLE_RESULT, f"the query on {path.name} did not finish in {_SQL_TIMEOUT_S:g} s")
        return fail(UNREADABLE_RESULT, f"the query fails on {path.name}: {exc}")
    except sqlite3.DatabaseError as exc:
        logger.info("run_sqlite3: %s is not a readable SQLite database: %s", path, exc)
        return fail(UNREADABLE_RESULT, f"{path.name} is not a readable SQLite database: {exc}")
    value = row[0] if row else None
    gave = f"the query {shown(' '.join(sql.split()))} on {path.name} gave {_sql_value(row)}"
    try:
        score = float(value or 0)
    except (TypeError, ValueError):
        logger.info("run_sqlite3: the query gave %r, not a number", value)
        return fail(RULE_FAILED, f"{gave}, not a number")
    score = 0.0 if math.isnan(score) else min(1.0, max(0.0, score))
    return score if score >= 1.0 else fail(RULE_FAILED, f"{gave}, not 1", score)


def _plain_words(value: Any) -> str:
    """Lower-cased, accents dropped, punctuation as blanks: how city names are matched."""
    text = unicodedata.normalize("NFKD", "" if value is None else str(value))
    text = "".join(ch for ch in text if not unicodedata.combining(ch)).casefold()
    return " ".join(re.sub(r"[^\w]+", " ", text).split())


@METRICS.register()
def compare_conference_city_in_order(result: Any, expected: Any) -> float:
    """1 when column C of the workbook ``result``'s active sheet, from row 2 down, names the cities of
    ``expected["expected"]`` in order.

    Each expected entry is a city (a string) or a list of accepted spellings; a cell passes when it
    contains one of them, ignoring case, accents and punctuation.

    Raises:
        MetricError: ``expected["expected"]`` is not a list of strings or lists of strings.
    """
    want = expected_value(expected)
    if not isinstance(want, list) or not want:
        raise MetricError(f"compare_conference_city_in_order: 'expected' must be a list of cities, got {want!r}")
    candidates = [string_list(entry, "compare_conference_city_in_order", "each expected city") for entry in want]
    path = result_file(result, "compare_conference_city_in_order")  # explains a missing file
    if path is None:
        return 0.0
    openpyxl = require_package("openpyxl", "openpyxl", "compare_conference_city_in_order")
    try:
        wb = openpyxl.load_workbook(path, read_only=True, data_only=True)
    except (OSError, ValueError, KeyError, zipfile.BadZipFile) as exc:
        logger.info("compare_conference_city_in_order: %s is not a readable workbook: %s", path, exc)
        return fail(UNREADABLE_RESULT, f"{path.name} is not a readable workbook: {exc}")
    try:
        sheet = wb.active.title
        cells = [row[0] for row in wb.active.iter_rows(min_row=2, max_row=1 + len(want), min_col=3, max_col=3,
                                                        values_only=True)]
    finally:
        wb.close()
    cells += [None] * (len(want) - len(cells))
    for row, (cell, names) in enumerate(zip(cells, candidates), start=2):
        if cell is None or not any(_plain_words(name) in _plain_words(cell) for name in names):
            logger.info("compare_conference_city_in_order: C%d is %r, expected one of %r", row, cell, names)
            wanted = shown(names[0]) if len(names) == 1 else f"one of {shown(names)}"
            return fail(VALUE_MISMATCH, f"{path.name} {sheet}!C{row}: expected {wanted}, got {shown(cell)}")
    return 1.0
