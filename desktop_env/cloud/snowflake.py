"""Snowflake through the official ``snowflake-connector-python`` client."""
from __future__ import annotations

import logging
import re
import time
from typing import Any

from desktop_env.cloud.base import CloudAPIError, Settings, missing_client

logger = logging.getLogger(__name__)

VENDOR = "Snowflake"
PIP_PACKAGE = "snowflake-connector-python"
#: settings keys passed to ``snowflake.connector.connect`` (host/port/protocol point it at another endpoint)
CONNECT_KEYS = ("account", "user", "password", "role", "warehouse", "database", "schema", "authenticator",
                "host", "port", "protocol", "login_timeout", "network_timeout", "private_key_file",
                "private_key_file_pwd")
PRESERVED_DATABASES = ("SNOWFLAKE", "SNOWFLAKE_SAMPLE_DATA")
PRESERVED_WAREHOUSES = ("COMPUTE_WH",)
_IDENT = re.compile(r'^(?:[A-Za-z_][A-Za-z0-9_$]*|"(?:[^"]|"")+")(?:\.(?:[A-Za-z_][A-Za-z0-9_$]*|"(?:[^"]|"")+")){0,2}$')


def identifier(value: Any, field_: str) -> str:
    """``value`` if it is a (possibly qualified, possibly quoted) Snowflake identifier.

    Raises:
        ValueError: naming ``field_``, for anything else (names are spliced into SQL text).
    """
    if not isinstance(value, str) or not _IDENT.match(value):
        raise ValueError(f"{field_} {value!r} is not a Snowflake identifier (letters, digits, _ and $, "
                         "or a double-quoted name)")
    return value


def connect_args(settings: Settings, **overrides) -> dict:
    """Keyword arguments for ``snowflake.connector.connect`` from the settings file.

    ``account`` may be written as the account URL (``https://<account>.snowflakecomputing.com``).

    Raises:
        SettingsError: ``account``, ``user`` or ``password`` is missing.
    """
    args = {k: settings.data[k] for k in CONNECT_KEYS if isinstance(settings.data, dict)
            and settings.data.get(k) not in (None, "")}
    for key in ("account", "user", "password"):
        settings.require(key)
    matched = re.search(r"https?://(.*?)\.snowflakecomputing\.com", str(args["account"]))
    if matched:
        args["account"] = matched.group(1)
    args.update({k: v for k, v in overrides.items() if v is not None})
    return args


def split_sql_script(text: str) -> list[str]:
    """The statements of a SQL script, comments removed, split on ``;``."""
    text = re.sub(r"--.*?$", "", text, flags=re.MULTILINE)
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.DOTALL)
    return [s.strip() for s in text.split(";") if s.strip()]


class Snowflake:
    """One connection to a Snowflake account, with the operations the task format needs.

    Args:
        args: ``connect`` keyword arguments (see :func:`connect_args`).
    """

    def __init__(self, args: dict, step: str | None = None):
        try:
            import snowflake.connector
        except ImportError as exc:
            raise missing_client(PIP_PACKAGE, VENDOR, step) from exc
        self.step = step
        account = args.get("account")
        try:
            self.conn = snowflake.connector.connect(**args)
        except snowflake.connector.errors.Error as exc:
            raise CloudAPIError(VENDOR, f"could not connect to account {account!r} as {args.get('user')!r}: {exc}",
                                step=step) from exc

    def execute(self, sql: str, fetch: bool = True) -> tuple[list[str], list[tuple]]:
        """Run one statement; return ``(column names, rows)`` (empty when ``fetch`` is False)."""
        logger.debug("Snowflake: %s", sql)
        with self.conn.cursor() as cur:
            cur.execute(sql)
            if not fetch or cur.description is None:
                return [], []
            return [c.name for c in cur.description], list(cur.fetchall())

    def execute_many(self, statements: list[str]) -> list[str]:
        """Run statements in order; return their query ids."""
        ids = []
        with self.conn.cursor() as cur:
            for s in statements:
                cur.execute(s)
                ids.append(cur.sfqid)
        return ids

    def close(self) -> None:
        """Close the connection."""
        self.conn.close()

    def __enter__(self) -> "Snowflake":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


# -- setup actions of snowflake_init ------------------------------------------------------------
def delete_users(sf: Snowflake, username=None) -> None:
    """Drop ``username`` (a name or list), or every user but the current one and ``SNOWFLAKE``."""
    if username is None:
        current = sf.execute("SELECT CURRENT_USER()")[1][0][0]
        names = [row[0] for row in sf.execute("SHOW USERS")[1] if row[0] not in ("SNOWFLAKE", current)]
    else:
        names = [username] if isinstance(username, str) else list(username)
    for name in names:
        sf.execute(f"DROP USER IF EXISTS {identifier(name, 'username')}", fetch=False)


def delete_databases(sf: Snowflake, database=None) -> None:
    """Drop ``database`` (a name or list), or every database but the system ones."""
    if database is None:
        names = [row[1] for row in sf.execute("SHOW DATABASES")[1] if row[1] not in PRESERVED_DATABASES]
    else:
        names = [database] if isinstance(database, str) else list(database)
    for name in names:
        sf.execute(f"DROP DATABASE IF EXISTS {identifier(name, 'database')} CASCADE", fetch=False)


def delete_warehouses(sf: Snowflake, warehouse=None) -> None:
    """Drop ``warehouse`` (a name or list), or every warehouse but ``COMPUTE_WH``."""
    if warehouse is None:
        names = [row[0] for row in sf.execute("SHOW WAREHOUSES")[1] if row[0] not in PRESERVED_WAREHOUSES]
    else:
        names = [warehouse] if isinstance(warehouse, str) else list(warehouse)
    for name in names:
        sf.execute(f"DROP WAREHOUSE IF EXISTS {identifier(name, 'warehouse')}", fetch=False)


def create_database(sf: Snowflake, database: str, schema: str | None = None, delete_first: bool = True) -> None:
    """Create ``database`` (dropped first by default) and optionally ``schema`` in it."""
    db = identifier(database, "database")
    if delete_first:
        delete_databases(sf, db)
    sf.execute(f"CREATE DATABASE IF NOT EXISTS {db}", fetch=False)
    if schema:
        sf.execute(f"CREATE SCHEMA IF NOT EXISTS {db}.{identifier(schema, 'schema')}", fetch=False)


def create_table(sf: Snowflake, database: str, table: str, sql: str, schema: str = "PUBLIC") -> None:
    """``CREATE OR REPLACE TABLE database.schema.table AS <sql>``."""
    name = ".".join(identifier(v, f) for v, f in ((database, "database"), (schema, "schema"), (table, "table")))
    sf.execute(f"CREATE OR REPLACE TABLE {name} AS {sql}", fetch=False)


# -- getters --------------------------------------------------------------------------------------
def user_info(sf: Snowflake, username: str) -> dict:
    """``DESC USER`` as ``{PROPERTY: value}`` (no password) plus ``ROLE``: ``["PUBLIC", granted roles...]``."""
    name = identifier(username, "username")
    out: dict[str, Any] = {"ROLE": ["PUBLIC"]}
    for row in sf.execute(f"DESC USER {name}")[1]:
        if str(row[0]).upper() != "PASSWORD":
            out[str(row[0]).upper()] = str(row[1])
    out["ROLE"] += [str(row[1]) for row in sf.execute(f"SHOW GRANTS TO USER {name}")[1]]
    return out


def warehouse_info(sf: Snowflake, warehouse: str) -> dict | None:
    """The ``SHOW WAREHOUSES LIKE`` row of ``warehouse`` as ``{column: value}``; None when absent."""
    pattern = identifier(warehouse, "warehouse").strip('"').replace("'", "''")
    cols, rows = sf.execute(f"SHOW WAREHOUSES LIKE '{pattern}'")
    return None if not rows else {c: (None if v is None else str(v)) for c, v in zip(cols, rows[0])}


def schema_columns(sf: Snowflake, databases: list[str], schemas: list[str], include_type: bool
                   ) -> list[tuple]:
    """``(database, schema, table, column[, type])`` rows from each database's INFORMATION_SCHEMA."""
    rows: list[tuple] = []
    extra = ", DATA_TYPE" if include_type else ""
    for db, schema in zip(databases, schemas):
        db = identifier(db, "database")
        sch = str(schema).replace("'", "''")
        rows += sf.execute(f"SELECT TABLE_CATALOG, TABLE_SCHEMA, TABLE_NAME, COLUMN_NAME{extra} FROM "
                           f"{db}.INFORMATION_SCHEMA.COLUMNS WHERE TABLE_SCHEMA = '{sch}' "
                           "ORDER BY TABLE_CATALOG, TABLE_SCHEMA, TABLE_NAME, COLUMN_NAME")[1]
    return rows


def function_result(sf: Snowflake, database: str, table: str, function: str) -> Any:
    """Point the account's event table at ``database.public.table``, log at INFO, call ``function()``."""
    db, tb = identifier(database, "database"), identifier(table, "table")
    sf.execute(f"ALTER ACCOUNT SET EVENT_TABLE = {db}.public.{tb}", fetch=False)
    sf.execute("ALTER SESSION SET LOG_LEVEL = INFO", fetch=False)
    rows = sf.execute(f"SELECT {identifier(function, 'function')}()")[1]
    return rows[0][0] if rows else None


def log_message(sf: Snowflake, database: str, table: str, logger_name: str, wait_s: float = 180.0,
                poll_s: float = 20.0) -> dict | None:
    """The first LOG record of ``logger_name`` in the event table, polled until ``wait_s`` (event
    tables fill asynchronously): ``{"severity", "message"}``, or None when none arrived."""
    db, tb = identifier(database, "database"), identifier(table, "table")
    name = str(logger_name).replace("'", "''")
    deadline = time.monotonic() + wait_s
    while True:
        rows = sf.execute(f"SELECT RECORD['severity_text'], VALUE FROM {db}.public.{tb} WHERE RECORD_TYPE = 'LOG' "
                          f"AND SCOPE['name'] = '{name}'")[1]
        if rows:
            return {"severity": str(rows[0][0]).strip('"'), "message": str(rows[0][1]).strip('"')}
        if time.monotonic() >= deadline:
            logger.info("Snowflake: no log record of %s in %s.public.%s after %.0f s", name, db, tb, wait_s)
            return None
        time.sleep(poll_s)


def rows_as_text(header: list[str], rows: list[tuple]) -> str:
    """Rows (header first when given) as ``a,b\\nc,d``."""
    lines = ([header] if header else []) + [list(r) for r in rows]
    return "\n".join(",".join(str(c) for c in row) for row in lines)
