"""``check_local_database``: compare tables and views (names, schemas, contents) of two databases."""
from __future__ import annotations

import importlib
import logging
import sqlite3
from typing import Any

import duckdb

from desktop_env.evaluators.metrics.differences import missing_file, one_line
from desktop_env.evaluators.metrics.utils import MetricError, OptionError, as_existing_path
from desktop_env.evaluators.reasons import (MISSING_RESULT, STRUCTURE_MISMATCH, UNREADABLE_RESULT, VALUE_MISMATCH,
                                            explain, fail, shown)
from desktop_env.registry import METRICS

logger = logging.getLogger(__name__)

CHECK_TYPES = ("table", "view", "table-schema", "view-schema", "table-schema-content", "view-schema-content")
#: ``db_type`` spellings -> engine
DB_TYPES = {"sqlite": "sqlite3", "sqlite3": "sqlite3", "duckdb": "duckdb",
            "postgresql": "postgresql", "postgres": "postgresql", "mysql": "mysql"}
#: engine -> (client module, pip name) for the engines reached over the network
_CLIENTS = {"postgresql": ("psycopg", "psycopg[binary]"), "mysql": ("pymysql", "pymysql")}
#: schemas that belong to the engine, never compared when no schema is named
_SYSTEM_SCHEMAS = ("information_schema", "pg_catalog", "pg_toast")


def check_database_options(options: dict) -> None:
    """Validate ``check_local_database`` options when a task is loaded.

    Raises:
        OptionError: an unknown ``db_type`` or ``check_type``, or a value of the wrong shape,
            with ``field`` the dotted path inside the options (``check_type[1]``).
    """
    db_type = options.get("db_type", "duckdb")
    if db_type not in DB_TYPES:
        raise OptionError(f"unsupported db_type {db_type!r}; expected one of {', '.join(DB_TYPES)}", "db_type")
    check_type = options.get("check_type", ["table", "view"])
    if not isinstance(check_type, (list, tuple)):
        raise OptionError(f"must be a list of {', '.join(CHECK_TYPES)}, got {check_type!r}", "check_type")
    for i, kind in enumerate(check_type):
        if kind not in CHECK_TYPES:
            raise OptionError(f"unknown check_type {kind!r}; expected one of {', '.join(CHECK_TYPES)}",
                              f"check_type[{i}]")
    for key in ("table_targets", "view_targets"):
        targets = options.get(key)
        if targets is None:
            continue
        if not isinstance(targets, (list, tuple)):
            raise OptionError(f"must be a list of names, got {targets!r}", key)
        for i, name in enumerate(targets):
            if not isinstance(name, str):
                raise OptionError(f"must be a table or view name, got {name!r}", f"{key}[{i}]")
    schema = options.get("schema_name")
    if schema is not None and not isinstance(schema, str):
        raise OptionError(f"must be a schema name, got {schema!r}", "schema_name")
    if not isinstance(options.get("ordered", False), bool):
        raise OptionError(f"must be true or false, got {options['ordered']!r}", "ordered")


class _ResultUnreadable(Exception):
    """A query on the agent's database failed: the result is malformed, which scores 0."""


class _Db:
    """The few queries the comparison needs, for one engine and one side (result or expected).

    Objects are keyed ``schema.name`` when every schema is compared (no ``schema_name`` on a
    schema-aware engine) and by bare name otherwise. DuckDB objects are always addressed as
    ``catalog.schema.name``: a file ``x.duckdb`` holding a schema ``x`` makes ``x.t`` ambiguous.
    """

    def __init__(self, conn, engine: str, schema: str | None, side: str, label: str, errors: tuple):
        self.conn, self.engine, self.schema, self.side, self.label = conn, engine, schema, side, label
        self.errors = errors
        self.catalog = self._query("SELECT current_database()")[0][0] if engine == "duckdb" else None

    # -- what is compared ---------------------------------------------------------------------
    def has_schema(self) -> bool:
        """Whether the named schema exists (always true when none is named)."""
        if self.schema is None:
            return True
        if self.engine == "sqlite3":
            return self.schema == "main"
        sql = "SELECT 1 FROM information_schema.schemata WHERE schema_name = %s"
        params: tuple = (self.schema,)
        if self.engine == "duckdb":
            sql, params = sql + " AND catalog_name = %s", (self.schema, self.catalog)
        return bool(self._query(sql, params))

    def objects(self, kind: str) -> dict[str, tuple[str | None, str]]:
        """``{key: (schema, name)}`` of the tables (``kind="table"``) or views."""
        if self.engine == "sqlite3":
            rows = self._query("SELECT name FROM sqlite_master WHERE type = ? AND name NOT LIKE 'sqlite_%'", (kind,))
            return {r[0]: (None, r[0]) for r in rows}
        ttype = "BASE TABLE" if kind == "table" else "VIEW"
        sql = "SELECT table_schema, table_name FROM information_schema.tables WHERE table_type = %s"
        params: list = [ttype]
        if self.engine == "duckdb":
            sql += " AND table_catalog = %s"
            params.append(self.catalog)
        if self.schema is not None:
            sql += " AND table_schema = %s"
            params.append(self.schema)
        elif self.engine == "mysql":
            sql += " AND table_schema = DATABASE()"
        else:
            sql += " AND table_schema NOT IN (%s, %s, %s)"
            params += list(_SYSTEM_SCHEMAS)
            if self.engine == "postgresql":
                sql += " AND table_schema NOT LIKE 'pg\\_temp\\_%%'"
        rows = self._query(sql, tuple(params))
        keyed = self.schema is None and self.engine != "mysql"
        return {(f"{r[0]}.{r[1]}" if keyed else r[1]): (r[0], r[1]) for r in rows}

    def columns(self, obj: tuple[str | None, str]) -> list[tuple]:
        """Per column in order: name, type, NOT NULL, default, and (SQLite, DuckDB) primary key."""
        if self.engine in ("sqlite3", "duckdb"):
            # PRAGMA table_info: (cid, name, type, notnull, dflt_value, pk)
            # SQLite takes the bare name; DuckDB parses a quoted catalog.schema.name
            target = obj[1] if self.engine == "sqlite3" else self._qualified(obj)
            rows = self._query("SELECT * FROM pragma_table_info(?)", (target,))
            return [(r[1], str(r[2] or "").upper(), bool(r[3]), r[4], int(r[5] or 0)) for r in rows]
        schema, name = obj
        rows = self._query("SELECT column_name, data_type, is_nullable, column_default FROM information_schema.columns "
                           "WHERE table_schema = %s AND table_name = %s ORDER BY ordinal_position", (schema, name))
        return [(r[0], str(r[1]).upper(), str(r[2]).upper() == "NO", r[3]) for r in rows]

    def rows(self, obj: tuple[str | None, str]) -> list[tuple]:
        return [tuple(r) for r in self._query(f"SELECT * FROM {self._qualified(obj)}")]

    # -- plumbing -----------------------------------------------------------------------------
    def _qualified(self, obj: tuple[str | None, str]) -> str:
        schema, name = obj
        if self.engine == "sqlite3":
            return _quote(name)
        if self.engine == "mysql":
            return f"`{schema.replace('`', '``')}`.`{name.replace('`', '``')}`"
        parts = ([self.catalog] if self.engine == "duckdb" else []) + [schema, name]
        return ".".join(_quote(p) for p in parts)

    def _query(self, sql: str, params: tuple = ()) -> list:
        try:
            if self.engine in ("sqlite3", "duckdb"):
                return self.conn.execute(sql.replace("%s", "?").replace("%%", "%"), list(params)).fetchall()
            with self.conn.cursor() as cur:
                cur.execute(sql, params)
                return cur.fetchall()
        except self.errors as exc:
            if self.side == "expected":
                raise MetricError(f"check_local_database: cannot read the expected database {self.label}: "
                                  f"{exc}") from exc
            raise _ResultUnreadable(str(exc)) from exc

    def close(self):
        try:
            self.conn.close()
        except Exception:  # closing a broken connection must not hide the score
            logger.debug("closing %s connection failed", self.engine, exc_info=True)


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _connect(target: Any, engine: str, schema: str | None, side: str) -> _Db | None:
    """A connection to one side; None when the target is missing or not a database of that engine (on the
    result side, explained)."""
    if engine in ("sqlite3", "duckdb"):
        p = as_existing_path(target)
        if p is None:
            if side == "result":
                explain(MISSING_RESULT, missing_file(target, "result database"))
            return None
        if engine == "duckdb":
            try:
                conn = duckdb.connect(str(p), read_only=True)
            except duckdb.Error as exc:
                logger.info("not a duckdb database: %s (%s)", p, exc)
                if side == "result":
                    explain(UNREADABLE_RESULT, f"the result database {p.name} is not a duckdb database: "
                                               f"{one_line(exc)}")
                return None
            errors: tuple = (duckdb.Error,)
        else:
            conn, errors = sqlite3.connect(f"file:{p}?mode=ro", uri=True), (sqlite3.Error,)
        try:
            return _Db(conn, engine, schema, side, str(p), errors)
        except _ResultUnreadable as exc:
            logger.info("result database %s is unreadable: %s", p, exc)
            explain(UNREADABLE_RESULT, f"the result database {p.name} cannot be read as {engine}: {one_line(exc)}")
            conn.close()
            return None
    module, pip_name = _CLIENTS[engine]
    try:
        client = importlib.import_module(module)
    except ImportError:
        raise MetricError(f"check_local_database with db_type={engine!r} needs the Python client "
                          f"{module!r} on the host: pip install '{pip_name}'") from None
    if target is None:
        if side == "result":
            explain(MISSING_RESULT, f"no result {engine} database to connect to (the getter gave None)")
        return None
    if not isinstance(target, (str, dict)):
        raise MetricError(f"{engine} target must be a DSN string or a dict of connection arguments")
    try:
        conn = client.connect(**target) if isinstance(target, dict) else client.connect(target)
    except client.Error as exc:
        if side == "expected":
            raise MetricError(f"check_local_database: cannot connect to the expected database: {exc}") from exc
        logger.info("cannot connect to the result database: %s", exc)
        explain(MISSING_RESULT, f"cannot connect to the result {engine} database: {one_line(exc)}")
        return None
    if engine == "postgresql":
        conn.autocommit = True  # a failed read must not leave the session in an aborted transaction
    return _Db(conn, engine, schema, side, "(server)", (client.Error,))


def _expand(check_type) -> set[str]:
    types = set(check_type)
    for obj in ("table", "view"):
        if f"{obj}-schema-content" in types:
            types |= {f"{obj}-schema", obj}
        if f"{obj}-schema" in types:
            types.add(obj)
    return types


def _targeted(objects: dict[str, tuple], targets: list | None) -> dict[str, tuple]:
    """The objects a target list names, by bare name or by ``schema.name``."""
    if not targets:
        return objects
    return {k: (s, n) for k, (s, n) in objects.items() if n in targets or f"{s}.{n}" in targets}


def _sort_key(row: tuple):
    return tuple((v is None, str(type(v).__name__), str(v)) for v in row)


def _compare(res: _Db, exp: _Db, types: set[str], table_targets, view_targets, ordered: bool) -> float:
    if not exp.has_schema():
        raise MetricError(f"check_local_database: schema {exp.schema!r} is not in the expected database {exp.label}")
    if not res.has_schema():
        logger.info("schema %r is missing from the result database", res.schema)
        return fail(STRUCTURE_MISMATCH, f"schema {res.schema!r} is missing from the result database")
    for obj, targets in (("table", table_targets), ("view", view_targets)):
        if obj not in types:
            continue
        got, want = _targeted(res.objects(obj), targets), _targeted(exp.objects(obj), targets)
        if sorted(got) != sorted(want):
            missing, extra = sorted(set(want) - set(got)), sorted(set(got) - set(want))
            logger.info("%ss differ: missing %s, unexpected %s", obj, missing, extra)
            if missing:
                return fail(STRUCTURE_MISMATCH, f"{obj} {missing[0]!r} is missing from the result database"
                                                f"{_and_more(missing, extra)}")
            return fail(STRUCTURE_MISMATCH, f"{obj} {extra[0]!r} in the result database is not expected"
                                            f"{_and_more(missing, extra)}")
        for key in sorted(want):
            if f"{obj}-schema" in types:
                ca, cb = res.columns(got[key]), exp.columns(want[key])
                if ca != cb:
                    logger.info("%s %s: columns differ: %s vs %s", obj, key, ca, cb)
                    return fail(STRUCTURE_MISMATCH, f"{obj} {key!r}: {_columns_difference(ca, cb)}")
            if f"{obj}-schema-content" in types:
                ra, rb = res.rows(got[key]), exp.rows(want[key])
                if not ordered:
                    ra, rb = sorted(ra, key=_sort_key), sorted(rb, key=_sort_key)
                if ra != rb:
                    logger.info("%s %s: contents differ (%d vs %d rows)", obj, key, len(ra), len(rb))
                    return fail(*_rows_difference(f"{obj} {key!r}", ra, rb, ordered))
    return 1.0


def _and_more(missing: list, extra: list) -> str:
    """The rest of a difference in names, after its first: `` (missing: [...]; unexpected: [...])``."""
    if len(missing) + len(extra) <= 1:
        return ""
    return f" (missing: {shown(missing)}; unexpected: {shown(extra)})"


#: what each item of a column description is (see ``_Db.columns``)
_COLUMN_FIELDS = ("name", "type", "NOT NULL", "default", "primary key")


def _columns_difference(got: list[tuple], want: list[tuple]) -> str:
    """Where two column lists first differ: the column and the attribute with both values."""
    for n, (a, b) in enumerate(zip(got, want), 1):
        if a[0] != b[0]:
            return f"column {n} is {a[0]!r}, expected {b[0]!r}"
        for field, x, y in zip(_COLUMN_FIELDS[1:], a[1:], b[1:]):
            if x != y:
                return f"column {a[0]!r}: {field} expected {shown(y)}, got {shown(x)}"
    if len(got) < len(want):
        return f"{len(got)} columns, expected {len(want)}: column {want[len(got)][0]!r} is missing"
    return f"{len(got)} columns, expected {len(want)}: column {got[len(want)][0]!r} is not expected"


def _rows_difference(where: str, got: list[tuple], want: list[tuple], ordered: bool) -> tuple[str, str]:
    """``(kind, text)`` of two lists of rows that differ: the first differing row with both rows (rows in
    sorted order unless ``ordered``); a different number of rows is a structure mismatch."""
    order = "" if ordered else " (rows sorted: their order is not compared)"
    kind = VALUE_MISMATCH if len(got) == len(want) else STRUCTURE_MISMATCH
    count = "" if len(got) == len(want) else f"{len(got)} rows, expected {len(want)}; "
    for n, (a, b) in enumerate(zip(got, want), 1):
        if a != b:
            return kind, f"{where}: {count}row {n}{order}: expected {shown(b)}, got {shown(a)}"
    n = min(len(got), len(want)) + 1
    if len(got) < len(want):
        return kind, f"{where}: {count}row {n}{order} is missing: expected {shown(want[n - 1])}"
    return kind, f"{where}: {count}row {n}{order} is not expected: got {shown(got[n - 1])}"


@METRICS.register(check=check_database_options)
def check_local_database(result: Any, expected: Any, db_type: str = "duckdb",
                         check_type: list | tuple = ("table", "view"), table_targets: list | None = None,
                         view_targets: list | None = None, schema_name: str | None = None,
                         ordered: bool = False) -> float:
    """1 when two databases agree on the checked objects.

    Args:
        result / expected: database files (sqlite3, duckdb) or DSNs (postgresql, mysql).
        db_type: ``sqlite3``, ``duckdb``, ``postgresql`` or ``mysql`` (the latter two need
            ``psycopg`` / ``pymysql`` installed on the host).
        check_type: any of ``table``, ``view`` (same names), ``table-schema``, ``view-schema``
            (same columns: name, type, NOT NULL, default, and primary key on SQLite/DuckDB),
            ``table-schema-content``, ``view-schema-content`` (same rows); each implies the
            lighter checks.
        table_targets / view_targets: only these objects (default: all), by name or ``schema.name``.
        schema_name: compare only this schema; without it every user schema is compared
            (objects keyed ``schema.name``; MySQL: the connected database; SQLite has one).
        ordered: compare rows in order (default: as multisets).

    Returns:
        1.0 or 0.0; 0.0 also when the result is missing or cannot be read.

    Raises:
        MetricError: a bad option, a missing client library, or an expected database that
            cannot be opened or read (or lacks ``schema_name``): the task's fault, not the agent's.
    """
    check_database_options({"db_type": db_type, "check_type": check_type, "table_targets": table_targets,
                            "view_targets": view_targets, "schema_name": schema_name, "ordered": ordered})
    engine = DB_TYPES[db_type]
    types = _expand(check_type)
    exp = _connect(expected, engine, schema_name, "expected")
    if exp is None:
        raise MetricError(f"check_local_database: expected database {expected!r} cannot be opened as {db_type}")
    try:
        res = _connect(result, engine, schema_name, "result")
        if res is None:
            logger.info("result database %r is missing or not a %s database", result, db_type)
            return 0.0
        try:
            return _compare(res, exp, types, table_targets, view_targets, ordered)
        except _ResultUnreadable as exc:
            logger.info("result database %s cannot be read: %s", res.label, exc)
            return fail(UNREADABLE_RESULT, f"the result database {res.label} cannot be read: {one_line(exc)}")
        finally:
            res.close()
    finally:
        exp.close()
