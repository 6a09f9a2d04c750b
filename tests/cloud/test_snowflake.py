"""Snowflake getters and snowflake_init through snowflake-connector-python, pointed (settings host/port/protocol)
at a local server speaking the connector's REST wire protocol (login-request, query-request, JSON result sets)."""
from __future__ import annotations

import csv
import gzip
import json
import re

import pytest

pytest.importorskip("snowflake.connector")

from desktop_env.cloud.base import CloudAPIError, Settings, SettingsError  # noqa: E402
from desktop_env.cloud.snowflake import connect_args, identifier, split_sql_script  # noqa: E402
from desktop_env.registry import GETTERS, SETUP_STEPS  # noqa: E402

SETTINGS = "evaluation_examples/settings/snowflake/settings.json"
TEXT = {"type": "text", "nullable": True, "length": 16777216, "precision": None, "scale": None,
        "byteLength": 16777216, "collation": None}
FIXED = {"type": "fixed", "nullable": True, "length": None, "precision": 38, "scale": 0, "byteLength": None,
         "collation": None}


class SnowflakeState:
    """An account answering login with a session token, and statements by regex (a fake warehouse)."""

    def __init__(self, api):
        self.password = "secret"
        self.statements: list[str] = []
        self.logins: list[dict] = []
        self.tables = {"POPULATION": (["CITY", "N"], [TEXT, FIXED], [["Lyon", "522000"], ["Nice", None]])}
        self.answers = [
            (r"SELECT \* FROM (\w+)", self.select_all),
            (r"DESC USER (\w+)", lambda m: (["property", "value", "default", "description"], [TEXT] * 4,
                                            [["NAME", m.group(1).upper(), "null", "Name"],
                                             ["PASSWORD", "****", "null", "Password"],
                                             ["DEFAULT_ROLE", "ANALYST", "null", "Primary role"]])),
            (r"SHOW GRANTS TO USER (\w+)", lambda m: (["created_on", "role", "granted_to", "grantee_name"], [TEXT] * 4,
                                                      [["2024-01-01", "ANALYST", "USER", m.group(1).upper()]])),
            (r"SHOW WAREHOUSES LIKE '(\w+)'", lambda m: (["name", "state", "size", "auto_suspend"], [TEXT] * 4,
                                                         [["COMPUTE_WH", "SUSPENDED", "X-Small", "600"]]
                                                         if m.group(1) == "COMPUTE_WH" else [])),
            (r"SHOW DATABASES", lambda m: (["created_on", "name"], [TEXT] * 2,
                                           [["2024-01-01", "SNOWFLAKE"], ["2024-01-01", "SNOWFLAKE_SAMPLE_DATA"],
                                            ["2024-01-01", "OLD_DB"]])),
            (r"(DROP|CREATE|USE|ALTER) .*", lambda m: (["status"], [TEXT], [["Statement executed successfully."]])),
            (r"SELECT COUNT\(\*\) FROM (\w+)", lambda m: (["COUNT(*)"], [FIXED], [["2"]])),
            (r"SELECT (\w+)\(\)", lambda m: ([f"{m.group(1)}()"], [TEXT], [["hello from udf"]])),
            (r"SELECT RECORD\['severity_text'\], VALUE FROM DB\.public\.EVENTS WHERE RECORD_TYPE = 'LOG' "
             r"AND SCOPE\['name'\] = '(\w+)'",
             lambda m: (["RECORD['SEVERITY_TEXT']", "VALUE"], [TEXT, TEXT],
                        [['"INFO"', '"Logging from Python function."']] if m.group(1) == "udf_logger" else [])),
            (r"SELECT TABLE_CATALOG, TABLE_SCHEMA, TABLE_NAME, COLUMN_NAME(, DATA_TYPE)? FROM (\w+)\."
             r"INFORMATION_SCHEMA\.COLUMNS WHERE TABLE_SCHEMA = '(\w+)' ORDER BY .*",
             lambda m: (["TABLE_CATALOG", "TABLE_SCHEMA", "TABLE_NAME", "COLUMN_NAME"] + (["DATA_TYPE"] if m.group(1)
                                                                                          else []), [TEXT] * 5,
                        [[m.group(2), m.group(3), "POPULATION", c] + (["TEXT"] if m.group(1) else [])
                         for c in ("CITY", "N")])),
        ]
        api.route("POST", r"/session/v1/login-request")(self.login)
        api.route("POST", r"/queries/v1/query-request")(self.query)
        api.route("POST", r"/telemetry/send")(lambda req, m: (200, {"success": True, "data": None}))
        api.route("POST", r"/session")(lambda req, m: (200, {"success": True, "data": None, "code": None}))
        self.api = api

    def login(self, req, m):
        data = req.json()["data"]
        self.logins.append({**data, "query": req.query})
        if data["PASSWORD"] != self.password:
            return 200, {"data": {"nextAction": "RETRY_LOGIN", "authnMethod": "USERNAME_PASSWORD"},
                         "code": "390100", "message": "Incorrect username or password was specified.",
                         "success": False, "headers": None}
        return 200, {"data": {"token": "session-token", "masterToken": "master-token", "validityInSeconds": 3600,
                              "masterValidityInSeconds": 14400, "displayUserName": data["LOGIN_NAME"],
                              "serverVersion": "8.40.0", "firstLogin": False, "remMeToken": None,
                              "remMeValidityInSeconds": 0, "healthCheckInterval": 45, "newClientForUpgrade": None,
                              "sessionId": 1172562260498, "parameters": [{"name": "TIMEZONE", "value": "UTC"}],
                              "sessionInfo": {"databaseName": req.query.get("databaseName"),
                                              "schemaName": req.query.get("schemaName"),
                                              "warehouseName": "COMPUTE_WH", "roleName": "ACCOUNTADMIN"},
                              "idToken": None, "idTokenValidityInSeconds": 0, "responseData": None,
                              "mfaToken": None, "mfaTokenValidityInSeconds": 0},
                     "code": None, "message": None, "success": True}

    def select_all(self, m):
        name = m.group(1).upper()
        if name not in self.tables:
            raise LookupError(f"Object '{name}' does not exist or not authorized.")
        return self.tables[name]

    def query(self, req, m):
        assert req.headers["authorization"] == 'Snowflake Token="session-token"'
        body = req.body
        if body[:2] == b"\x1f\x8b":
            body = gzip.decompress(body)
        sql = json.loads(body)["sqlText"].strip().rstrip(";")
        self.statements.append(sql)
        qid = f"01b2c3d4-0000-0000-0000-{len(self.statements):012d}"
        for pattern, answer in self.answers:
            hit = re.fullmatch(pattern, sql, flags=re.DOTALL | re.IGNORECASE)
            if hit:
                try:
                    names, types, rows = answer(hit)
                except LookupError as exc:
                    return 200, {"data": {"internalError": False, "errorCode": "002003", "age": 0, "sqlState": "42S02",
                                          "queryId": qid, "line": -1, "pos": -1, "type": "COMPILATION"},
                                 "code": "002003", "message": f"SQL compilation error:\n{exc}", "success": False,
                                 "headers": None}
                rowtype = [{"name": n, "database": "DB", "schema": "PUBLIC", "table": "T", **t}
                           for n, t in zip(names, types)]
                return 200, {"data": {"parameters": [], "rowtype": rowtype, "rowset": rows, "total": len(rows),
                                      "returned": len(rows), "queryId": qid, "databaseProvider": None,
                                      "finalDatabaseName": "DB", "finalSchemaName": "PUBLIC",
                                      "finalWarehouseName": "COMPUTE_WH", "finalRoleName": "ACCOUNTADMIN",
                                      "numberOfBinds": 0, "arrayBindSupported": False, "statementTypeId": 4096,
                                      "version": 1, "sendResultTime": 1, "queryResultFormat": "json"},
                             "code": None, "message": None, "success": True}
        return 200, {"data": {"errorCode": "001003", "sqlState": "42000", "queryId": qid, "type": "COMPILATION"},
                     "code": "001003", "message": f"SQL compilation error: syntax error in {sql!r}",
                     "success": False, "headers": None}


@pytest.fixture
def sf(fake_api, cloud_ctx):
    state = SnowflakeState(fake_api)
    port = int(fake_api.url.rsplit(":", 1)[1])
    cloud_ctx.write_settings(SETTINGS, {"account": "https://xy12345.snowflakecomputing.com", "user": "tester",
                                        "password": "secret", "host": "127.0.0.1", "port": port, "protocol": "http",
                                        "login_timeout": 20})
    return state, cloud_ctx


def read_csv(path):
    with open(path, newline="") as fh:
        return list(csv.reader(fh))


def test_table_to_csv(sf):
    state, ctx = sf
    out = GETTERS["snowflake_table_to_csv"](ctx, database="DB", table="population")
    assert read_csv(out) == [["CITY", "N"], ["Lyon", "522000"], ["Nice", ""]]
    login = state.logins[0]
    assert login["ACCOUNT_NAME"] == "xy12345" and login["LOGIN_NAME"] == "tester"  # account URL reduced to its id
    assert login["query"]["databaseName"] == "DB" and login["query"]["schemaName"] == "PUBLIC"
    out = GETTERS["snowflake_table_to_csv"](ctx, database="DB", table="population", include_header=False, dest="p.csv")
    assert read_csv(out) == [["Lyon", "522000"], ["Nice", ""]]


def test_missing_table_is_none(sf):
    _, ctx = sf
    assert GETTERS["snowflake_table_to_csv"](ctx, database="DB", table="nope") is None


def test_execution_result(sf):
    _, ctx = sf
    get = GETTERS["snowflake_execution_result"]
    assert get(ctx, sql_command="SELECT * FROM population") == "CITY,N\nLyon,522000\nNice,None"
    assert get(ctx, sql_command="SELECT COUNT(*) FROM population", include_header=False) == "2"
    script = ctx.task.task_dir / "check.sql"
    script.write_text("SELECT * FROM population;")
    out = get(ctx, sql_script=str(script), dest="r.csv")
    assert read_csv(out)[0] == ["CITY", "N"]
    with pytest.raises(Exception, match="exactly one of 'sql_command' and 'sql_script'"):
        get(ctx)


def test_user_and_warehouse_info(sf):
    _, ctx = sf
    info = GETTERS["snowflake_user_info"](ctx, username="alice")
    assert info == {"ROLE": ["PUBLIC", "ANALYST"], "NAME": "ALICE", "DEFAULT_ROLE": "ANALYST"}
    wh = GETTERS["snowflake_warehouse_info"](ctx, warehouse="COMPUTE_WH")
    assert wh["size"] == "X-Small" and wh["auto_suspend"] == "600"
    assert GETTERS["snowflake_warehouse_info"](ctx, warehouse="OTHER_WH") is None


def test_function_log_and_schema(sf):
    state, ctx = sf
    assert GETTERS["snowflake_function_result"](ctx, database="DB", table="EVENTS", function="MYFN") == "hello from udf"
    assert state.statements[:2] == ["ALTER ACCOUNT SET EVENT_TABLE = DB.public.EVENTS", "ALTER SESSION SET LOG_LEVEL = INFO"]
    assert GETTERS["snowflake_log_message"](ctx, database="DB", table="EVENTS", logger="udf_logger") == \
        {"severity": "INFO", "message": "Logging from Python function."}
    assert GETTERS["snowflake_log_message"](ctx, database="DB", table="EVENTS", logger="other", wait_s=0) is None
    out = GETTERS["snowflake_database_schema_to_csv"](ctx, database=["DB", "DW"], schema=["PUBLIC", "RAW"],
                                                      include_type=True, dest="schema.csv")
    assert read_csv(out) == [["database", "schema", "table", "column", "type"],
                             ["DB", "PUBLIC", "POPULATION", "CITY", "TEXT"], ["DB", "PUBLIC", "POPULATION", "N", "TEXT"],
                             ["DW", "RAW", "POPULATION", "CITY", "TEXT"], ["DW", "RAW", "POPULATION", "N", "TEXT"]]
    assert GETTERS["snowflake_database_schema_info"] is GETTERS["snowflake_database_schema_to_csv"]


def test_init_actions(sf):
    state, ctx = sf
    script = ctx.task.task_dir / "init.sql"
    script.write_text("-- set up\nCREATE DATABASE SALES;\n/* two */ USE DATABASE SALES;\n")
    SETUP_STEPS["snowflake_init"](ctx, actions=[
        {"type": "delete_database"},
        {"type": "execute_script", "sql_script": str(script), "query_ids_path": "ids.txt"},
        {"type": "create_table", "database": "SALES", "table": "T1", "sql": "SELECT 1 AS X"},
        {"type": "copy_keyfile"}])
    assert state.statements == ["SHOW DATABASES", "DROP DATABASE IF EXISTS OLD_DB CASCADE", "CREATE DATABASE SALES",
                                "USE DATABASE SALES", "CREATE OR REPLACE TABLE SALES.PUBLIC.T1 AS SELECT 1 AS X"]
    assert len((ctx.cache_dir / "ids.txt").read_text().split()) == 2
    assert json.loads(ctx.controller.uploads["/home/user/keyfile.json"])["user"] == "tester"


def test_failed_statement_in_init_raises(sf):
    _, ctx = sf
    with pytest.raises(Exception, match=r"actions\[0\] \(execute_script\) failed on Snowflake: .*syntax error"):
        SETUP_STEPS["snowflake_init"](ctx, actions=[{"type": "execute_script", "sql_command": "SELEC 1"}])


def test_refused_login_raises_not_scores(sf):
    state, ctx = sf
    state.password = "rotated"
    with pytest.raises(CloudAPIError, match="could not connect to account 'xy12345'.*Incorrect username or password"):
        GETTERS["snowflake_table_to_csv"](ctx, database="DB", table="population")


def test_argument_validation(tmp_path):
    with pytest.raises(ValueError, match="table 'x; DROP TABLE y' is not a Snowflake identifier"):
        identifier("x; DROP TABLE y", "table")
    assert identifier('"my table"', "table") == '"my table"' and identifier("DB.PUBLIC.T", "t") == "DB.PUBLIC.T"
    path = tmp_path / "s.json"
    path.write_text(json.dumps({"account": "xy12345", "user": "u"}))
    with pytest.raises(SettingsError, match="s.json, field 'password': missing or empty"):
        connect_args(Settings.read(path))
    assert split_sql_script("-- c\nA;\n/* x\n */B;;") == ["A", "B"]


def test_identifier_checked_before_connecting(sf):
    state, ctx = sf
    with pytest.raises(ValueError, match="not a Snowflake identifier"):
        GETTERS["snowflake_table_to_csv"](ctx, database="DB", table="t where 1=1")
    assert state.logins == []
