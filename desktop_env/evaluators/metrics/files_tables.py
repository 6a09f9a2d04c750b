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
from typing import Any

from desktop_env.evaluators.metrics.files import require_package, result_file, result_text, rule_dict, string_list
from desktop_env.evaluators.metrics.utils import MetricError, expected_value
from desktop_env.registry import METRICS

logger = logging.getLogger(__name__)


def _record_matches(pattern: dict, row: dict) -> bool:
    return all(key in row and row[key] == (value if isinstance(value, str) else str(value))
               for key, value in pattern.items())


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
    text = result_text(result, "check_csv")
    if text is None:
        return 0.0
    try:
        rows = list(csv.DictReader(io.StringIO(text)))
    except csv.Error as exc:
        logger.info("check_csv: not a readable CSV: %s", exc)
        return 0.0
    missing = [p for p in expect if not any(_record_matches(p, row) for row in rows)]
    present = [p for p in unexpect if any(_record_matches(p, row) for row in rows)]
    if missing or present:
        logger.info("check_csv: records not found %s, unwanted records found %s", missing, present)
    return float(not missing and not present)


_SQL_TIMEOUT_S = 30.0  # seconds a query may run on a guest-made database
#: sqlite errors that are the query's fault (the task's), not the database's
_SQL_TASK_ERRORS = ("syntax error", "incomplete input", "readonly", "read-only", "unrecognized token")


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
    path = result_file(result, "run_sqlite3")
    if path is None:
        return 0.0
    deadline = time.monotonic() + _SQL_TIMEOUT_S
    try:
        with closing(sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro&immutable=1", uri=True)) as conn:
            conn.set_progress_handler(lambda: int(time.monotonic() > deadline), 10_000)
            conn.execute("PRAGMA trusted_schema = OFF")
            row = conn.execute(sql).fetchone()
    except sqlite3.OperationalError as exc:
        if any(s in str(exc).lower() for s in _SQL_TASK_ERRORS):
            raise MetricError(f"run_sqlite3: the query fails: {exc}; fix 'sql' in the task") from None
        logger.info("run_sqlite3: the query fails on %s: %s", path, exc)
        return 0.0
    except sqlite3.DatabaseError as exc:
        logger.info("run_sqlite3: %s is not a readable SQLite database: %s", path, exc)
        return 0.0
    value = row[0] if row else None
    try:
        score = float(value or 0)
    except (TypeError, ValueError):
        logger.info("run_sqlite3: the query gave %r, not a number", value)
        return 0.0
    return 0.0 if math.isnan(score) else min(1.0, max(0.0, score))


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
    path = result_file(result, "compare_conference_city_in_order")
    if path is None:
        return 0.0
    openpyxl = require_package("openpyxl", "openpyxl", "compare_conference_city_in_order")
    try:
        wb = openpyxl.load_workbook(path, read_only=True, data_only=True)
    except (OSError, ValueError, KeyError, zipfile.BadZipFile) as exc:
        logger.info("compare_conference_city_in_order: %s is not a readable workbook: %s", path, exc)
        return 0.0
    try:
        cells = [row[0] for row in wb.active.iter_rows(min_row=2, max_row=1 + len(want), min_col=3, max_col=3,
                                                        values_only=True)]
    finally:
        wb.close()
    cells += [None] * (len(want) - len(cells))
    for row, (cell, names) in enumerate(zip(cells, candidates), start=2):
        if cell is None or not any(_plain_words(name) in _plain_words(cell) for name in names):
            logger.info("compare_conference_city_in_order: C%d is %r, expected one of %r", row, cell, names)
            return 0.0
    return 1.0
