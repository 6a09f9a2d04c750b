"""Cloud-account getters: BigQuery, Snowflake and dbt Cloud through their APIs; web-UI-only getters refuse."""
from __future__ import annotations

import logging
from pathlib import Path, PurePosixPath

from desktop_env.cloud.base import CloudNotFound
from desktop_env.cloud.accounts import (DOCS, VENDORS, WORKARENA_MISSING, bigquery_for, dbt_cloud_for,
                                        drive_for, snowflake_for)
from desktop_env.session import NotSupportedError, SetupContext, SetupError, ToolNotInImage
from desktop_env.registry import ACCOUNT, GETTERS, UNAVAILABLE

logger = logging.getLogger(__name__)


def account_note(vendor: str) -> str:
    """Why a name of ``vendor`` is unavailable without an account (the registry's note)."""
    return f"needs a {VENDORS[vendor][0]} account ({VENDORS[vendor][1]})"


def _gcp(config_file, settings_file, project_name, project_index) -> dict:
    return {"config_file": config_file, "settings_file": settings_file, "project_name": project_name,
            "project_index": project_index}


# -- BigQuery ------------------------------------------------------------------------------------
@GETTERS.register(status=ACCOUNT, note=account_note("bigquery"))
def get_bigquery_table_to_csv(ctx: SetupContext, dataset_id: str, table_id: str, dest: str, schema: list | None = None,
                              config_file: str | None = None, settings_file: str | None = None,
                              project_name: str | None = None, project_index: int | None = None) -> str | None:
    """The columns ``schema`` (default all) of a BigQuery table as a headerless CSV in the cache.

    Returns:
        the local CSV path, or None when the dataset, the table or a column does not exist.
    """
    from desktop_env.cloud.base import write_csv
    from desktop_env.cloud.bigquery import quote_table
    name = "bigquery_table_to_csv"
    with bigquery_for(ctx, _gcp(config_file, settings_file, project_name, project_index), name) as bq:
        try:
            bq.table_exists(dataset_id, table_id)
            columns = ", ".join(schema) if schema else "*"
            rows = bq.query_rows(f"SELECT {columns} FROM {quote_table(bq.project.project_id, dataset_id, table_id)}")
        except Exception as exc:
            if not bq.is_missing(exc):
                raise
            logger.info("%s: %s.%s not readable (scored as missing): %s", name, dataset_id, table_id, exc)
            return None
    return Path(write_csv(rows, ctx.cache_path(dest)))


@GETTERS.register(status=ACCOUNT, note=account_note("bigquery"), host_paths=("sql",))
def get_bigquery_sql_result_to_csv(ctx: SetupContext, sql: str, dest: str, config_file: str | None = None,
                                   settings_file: str | None = None, project_name: str | None = None,
                                   project_index: int | None = None) -> str | None:
    """Run the SQL file ``sql`` (``{}`` or ``{0}`` stand for the project id) and save its rows as a
    headerless CSV in the cache.

    Returns:
        the local CSV path, or None when the query names something missing or does not fit the data.
    """
    from desktop_env.cloud.base import write_csv
    name = "bigquery_sql_result_to_csv"
    with bigquery_for(ctx, _gcp(config_file, settings_file, project_name, project_index), name) as bq:
        text = ctx.resolve(sql).read_text(encoding="utf-8")
        try:
            query = text.format(bq.project.project_id)
        except (IndexError, KeyError, ValueError) as exc:
            raise SetupError(f"{sql}: braces other than '{{}}'/'{{0}}' (the project id) must be doubled: {exc}",
                             step=name) from exc
        try:
            rows = bq.query_rows(query)
        except Exception as exc:
            if not bq.is_missing(exc):
                raise
            logger.info("%s: query failed (scored as missing): %s", name, exc)
            return None
    return Path(write_csv(rows, ctx.cache_path(dest)))


@GETTERS.register(status=ACCOUNT, note=account_note("bigquery"))
def get_bigquery_datasets(ctx: SetupContext, config_file: str | None = None, settings_file: str | None = None,
                          project_name: str | None = None, project_index: int | None = None) -> list[str]:
    """The dataset ids of the project."""
    with bigquery_for(ctx, _gcp(config_file, settings_file, project_name, project_index), "bigquery_datasets") as bq:
        return bq.dataset_ids()


@GETTERS.register(status=ACCOUNT, note=account_note("bigquery"))
def get_bigquery_connections(ctx: SetupContext, config_file: str | None = None, settings_file: str | None = None,
                             project_name: str | None = None, project_index: int | None = None) -> list[str]:
    """The ids of the project's BigQuery connections (external data sources) in its location (default ``us``)."""
    with bigquery_for(ctx, _gcp(config_file, settings_file, project_name, project_index),
                      "bigquery_connections") as bq:
        return bq.connection_ids()


# -- Snowflake -----------------------------------------------------------------------------------
def _snowflake_query(ctx, settings_file, name, fn, **overrides):
    """Run ``fn(sf)`` on a connection; a failed statement (missing object, bad SQL) gives None."""
    sf, _ = snowflake_for(ctx, {"settings_file": settings_file}, name, **overrides)
    with sf:
        try:
            return fn(sf)
        except (SetupError, ValueError):
            raise
        except Exception as exc:  # snowflake.connector.errors.ProgrammingError and kin
            logger.info("%s: statement failed (scored as missing): %s", name, exc)
            return None


@GETTERS.register(status=ACCOUNT, note=account_note("snowflake"))
def get_snowflake_table_to_csv(ctx: SetupContext, database: str, table: str, schema: str = "PUBLIC",
                               dest: str | None = None, include_header: bool = True,
                               settings_file: str | None = None) -> str | None:
    """``SELECT *`` of a table as CSV in the cache (header row by default); None when it does not exist."""
    from desktop_env.cloud.base import write_csv
    from desktop_env.cloud.snowflake import identifier
    name = "snowflake_table_to_csv"
    tb = identifier(table, "table")

    def run(sf):
        header, rows = sf.execute(f"SELECT * FROM {tb}")
        return Path(write_csv(rows, ctx.cache_path(dest or f"{table}.csv"), header if include_header else None))
    return _snowflake_query(ctx, settings_file, name, run, database=database, schema=schema)


@GETTERS.register(status=ACCOUNT, note=account_note("snowflake"), host_paths=("sql_script",))
def get_snowflake_execution_result(ctx: SetupContext, sql_command: str | None = None, sql_script: str | None = None,
                                   include_header: bool = True, return_string: bool = True, dest: str | None = None,
                                   settings_file: str | None = None):
    """Run one statement (``sql_command``, or the file ``sql_script``).

    Returns:
        with ``dest``: the local CSV path; else the rows as ``"a,b\\nc,d"`` text (header first when
        ``include_header``), or their ``str()`` of a list when not ``return_string``; None when the
        statement failed.
    """
    from desktop_env.cloud.base import write_csv
    from desktop_env.cloud.snowflake import rows_as_text
    name = "snowflake_execution_result"
    if bool(sql_command) == bool(sql_script):
        raise SetupError("give exactly one of 'sql_command' and 'sql_script'", step=name)
    sql = sql_command or ctx.resolve(sql_script).read_text(encoding="utf-8")

    def run(sf):
        header, rows = sf.execute(sql)
        header = header if include_header else []
        if dest:
            return Path(write_csv(rows, ctx.cache_path(dest), header))
        if return_string:
            return rows_as_text(header, rows)
        return str(([tuple(header)] if header else []) + rows)
    return _snowflake_query(ctx, settings_file, name, run)


@GETTERS.register(status=ACCOUNT, note=account_note("snowflake"))
def get_snowflake_user_info(ctx: SetupContext, username: str, settings_file: str | None = None) -> dict | None:
    """``DESC USER`` as ``{PROPERTY: value}`` (password left out) plus ``ROLE``: the granted roles."""
    from desktop_env.cloud.snowflake import user_info
    return _snowflake_query(ctx, settings_file, "snowflake_user_info", lambda sf: user_info(sf, username))


@GETTERS.register(status=ACCOUNT, note=account_note("snowflake"))
def get_snowflake_function_result(ctx: SetupContext, database: str, table: str, function: str,
                                  schema: str = "PUBLIC", settings_file: str | None = None):
    """The value of ``SELECT function()`` with the account's event table set to ``database.public.table``."""
    from desktop_env.cloud.snowflake import function_result
    return _snowflake_query(ctx, settings_file, "snowflake_function_result",
                            lambda sf: function_result(sf, database, table, function), database=database,
                            schema=schema)


@GETTERS.register(status=ACCOUNT, note=account_note("snowflake"))
def get_snowflake_log_message(ctx: SetupContext, database: str, table: str, logger: str, schema: str = "PUBLIC",
                              settings_file: str | None = None, wait_s: float = 180.0) -> dict | None:
    """``{"severity", "message"}`` of the first LOG record of the logger ``logger`` in the event table."""
    from desktop_env.cloud.snowflake import log_message
    return _snowflake_query(ctx, settings_file, "snowflake_log_message",
                            lambda sf: log_message(sf, database, table, logger, wait_s=wait_s), database=database,
                            schema=schema)


@GETTERS.register(status=ACCOUNT, note=account_note("snowflake"))
def get_snowflake_warehouse_info(ctx: SetupContext, warehouse: str, settings_file: str | None = None) -> dict | None:
    """The ``SHOW WAREHOUSES LIKE`` row of ``warehouse`` as ``{column: value}`` (size, auto_suspend, ...)."""
    from desktop_env.cloud.snowflake import warehouse_info
    return _snowflake_query(ctx, settings_file, "snowflake_warehouse_info", lambda sf: warehouse_info(sf, warehouse))


@GETTERS.register(status=ACCOUNT, note=account_note("snowflake"), aliases=("snowflake_database_schema_info",))
def get_snowflake_database_schema_to_csv(ctx: SetupContext, database, dest: str, schema="PUBLIC",
                                         include_type: bool = False, settings_file: str | None = None) -> str | None:
    """``database, schema, table, column[, type]`` rows of one or several databases as CSV in the cache.

    Args:
        database: a name or a list of names.
        schema: the schema of each (a name, or a list parallel to ``database``).
    """
    from desktop_env.cloud.base import write_csv
    from desktop_env.cloud.snowflake import schema_columns
    dbs = [database] if isinstance(database, str) else list(database)
    schemas = list(schema) if isinstance(schema, list) else [schema] * len(dbs)
    if len(schemas) != len(dbs):
        raise SetupError("'schema' as a list must be parallel to 'database'", step="snowflake_database_schema_to_csv")
    header = ["database", "schema", "table", "column"] + (["type"] if include_type else [])
    return _snowflake_query(ctx, settings_file, "snowflake_database_schema_to_csv",
                            lambda sf: str(write_csv(schema_columns(sf, dbs, schemas, include_type),
                                                     ctx.cache_path(dest), header)))


# -- dbt Cloud -----------------------------------------------------------------------------------
def _dbt(ctx, settings_file, name, fn):
    with dbt_cloud_for(ctx, {"settings_file": settings_file}, name) as client:
        try:
            return fn(client)
        except CloudNotFound as exc:
            logger.info("%s: %s (scored as missing)", name, exc)
            return "None"


@GETTERS.register(status=ACCOUNT, note=account_note("dbt_cloud"))
def get_dbt_project_info(ctx: SetupContext, fields: list | None = None, settings_file: str | None = None) -> str:
    """The first project's ``fields`` as ``"v1 v2 "`` (``connection_type`` too); ``"None"`` without a project."""
    from desktop_env.cloud.dbt_cloud import project_info
    return _dbt(ctx, settings_file, "dbt_project_info", lambda c: project_info(c, fields or []))


@GETTERS.register(status=ACCOUNT, note=account_note("dbt_cloud"))
def get_dbt_environment_info(ctx: SetupContext, name: str = "New Environment", fields: list | None = None,
                             settings_file: str | None = None) -> str:
    """The ``fields`` of the first project's environment ``name`` as ``"v1 v2 "``; ``"None"`` when absent."""
    from desktop_env.cloud.dbt_cloud import environment_info
    return _dbt(ctx, settings_file, "dbt_environment_info", lambda c: environment_info(c, name, fields or []))


@GETTERS.register(status=ACCOUNT, note=account_note("dbt_cloud"))
def get_dbt_job_info(ctx: SetupContext, name: str = "New Job", fields: list | None = None, prev_name: str = "New Job",
                     settings_file: str | None = None) -> str:
    """The ``fields`` of the first project's job ``name`` as ``"v1 v2 "`` (``time_<k>`` and
    ``job_completion_trigger_condition`` as in :func:`desktop_env.cloud.dbt_cloud.job_info`)."""
    from desktop_env.cloud.dbt_cloud import job_info
    return _dbt(ctx, settings_file, "dbt_job_info", lambda c: job_info(c, name, fields or [], prev_name))


@GETTERS.register()
def get_dbt_profiles(ctx: SetupContext, dirs: list, dest: str) -> Path | None:
    """The first ``profiles.yml`` found in the VM folders ``dirs`` (``$VAR`` is expanded by the
    VM's login shell), copied into the cache; None when there is none. No account needed."""
    from desktop_env.evaluators.getters.file import get_vm_file
    for folder in dirs:
        if folder.startswith("$"):
            reply = ctx.controller.execute(["bash", "-lc", f'echo "{folder}"'], shell=False)
            folder = (reply.get("output") or "").strip()
            if not folder:
                continue
        path = get_vm_file(ctx, path=str(PurePosixPath(folder) / "profiles.yml"), dest=dest)
        if path is not None:
            return path
    return None


# -- Google Drive ---------------------------------------------------------------------------------
@GETTERS.register(status=ACCOUNT, note=account_note("googledrive"))
def get_googlesheet_active_file(ctx: SetupContext, dest: str, settings_file: str | None = None) -> str | None:
    """The Google Sheet open in the VM browser's active tab, exported as xlsx (Drive API) into the cache.

    Returns:
        the local xlsx path, or None when the active tab is not a Google Sheet or the sheet is gone.
    """
    import re

    from desktop_env.cloud.googledrive import XLSX
    from desktop_env.evaluators.getters.browser import get_active_url_from_access_tree
    name = "googlesheet_active_file"
    with drive_for(ctx, {"settings_file": settings_file}, name) as drive:
        url = get_active_url_from_access_tree(ctx, goto_prefix="https://")
        hit = re.search(r"docs\.google\.com/spreadsheets/d/([\w-]+)", url or "")
        if hit is None:
            logger.info("%s: the active tab (%s) is not a Google Sheet (scored as missing)", name, url)
            return None
        try:
            data = drive.export(hit.group(1), XLSX)
        except CloudNotFound as exc:
            logger.info("%s: %s (scored as missing)", name, exc)
            return None
    target = ctx.cache_path(dest)
    target.write_bytes(data)
    return target


# -- not available -------------------------------------------------------------------------------
#: getter name -> why it cannot run
UNAVAILABLE_GETTERS: dict[str, str] = {
    "snowflake_worksheet_sql": "it reads the SQL typed in a Snowsight worksheet from the VM's browser page, and "
                               "this project does not automate vendor websites",
    "snowflake_worksheet_sql_result": "it reads a Snowsight worksheet's SQL and selected database from the VM's "
                                      "browser page, and this project does not automate vendor websites",
    "snowflake_worksheet_names_in_folder": "Snowsight worksheets and folders exist only in the Snowsight website "
                                           "(no public API), and this project does not automate vendor websites",
    "workarena_task_result": WORKARENA_MISSING,
}


def _make_unavailable(name: str, why: str):
    def getter(ctx, **fields):
        raise NotSupportedError(f"getter '{name}' cannot run: {why}; see {DOCS}", step=name)
    getter.__name__ = getter.__qualname__ = f"get_{name}"
    getter.__doc__ = f"'{name}': registered so tasks load; cannot run ({why})."
    return getter


for _name, _why in UNAVAILABLE_GETTERS.items():
    GETTERS.register(_name, status=UNAVAILABLE, note=_why)(_make_unavailable(_name, _why))


@GETTERS.register(status=UNAVAILABLE, note="Metabase is not in any image of this project")
def get_metabase_question_sql(ctx, **fields):
    """Metabase question getter: the tool is not in any image."""
    raise ToolNotInImage("Metabase", step="metabase_question_sql")
