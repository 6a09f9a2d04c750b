"""check_local_database on real sqlite3 and duckdb files."""
from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import duckdb
import pytest

from desktop_env.errors import TaskConfigError
from desktop_env.evaluators.metrics.database import check_database_options, check_local_database
from desktop_env.evaluators.metrics.utils import MetricError, OptionError
from desktop_env.registry import METRICS
from desktop_env.tasks import load_task

TASK_ID = "d8b0c1a2-0000-4000-8000-00000000db01"

SCHEMA = ["CREATE TABLE customers (id INTEGER, name VARCHAR)",
          "CREATE TABLE orders (id INTEGER, customer_id INTEGER, amount DOUBLE)",
          "CREATE VIEW big_orders AS SELECT * FROM orders WHERE amount > 10"]
ROWS = ["INSERT INTO customers VALUES (1, 'ann'), (2, 'bob')",
        "INSERT INTO orders VALUES (1, 1, 5.0), (2, 2, 20.0)"]


def make_db(path, kind, statements):
    if kind == "sqlite3":
        con = sqlite3.connect(path)
        for s in statements:
            con.execute(s)
        con.commit()
        con.close()
    else:
        con = duckdb.connect(str(path))
        for s in statements:
            con.execute(s)
        con.close()
    return str(path)


@pytest.mark.parametrize("kind", ["sqlite3", "duckdb"])
class TestCheckLocalDatabase:
    def test_identical_pass_every_check(self, tmp_path, kind):
        a = make_db(tmp_path / "a.db", kind, SCHEMA + ROWS)
        b = make_db(tmp_path / "b.db", kind, SCHEMA + list(reversed(ROWS)))
        checks = ["table-schema-content", "view-schema-content"]
        assert check_local_database(a, b, db_type=kind, check_type=checks) == 1.0

    def test_missing_table_fails(self, tmp_path, kind):
        a = make_db(tmp_path / "a.db", kind, SCHEMA[:1])
        b = make_db(tmp_path / "b.db", kind, SCHEMA)
        assert check_local_database(a, b, db_type=kind, check_type=["table"]) == 0.0

    def test_other_column_type_fails_schema_check(self, tmp_path, kind):
        a = make_db(tmp_path / "a.db", kind, ["CREATE TABLE customers (id INTEGER, name INTEGER)"])
        b = make_db(tmp_path / "b.db", kind, ["CREATE TABLE customers (id INTEGER, name VARCHAR)"])
        assert check_local_database(a, b, db_type=kind, check_type=["table"]) == 1.0
        assert check_local_database(a, b, db_type=kind, check_type=["table-schema"]) == 0.0

    def test_other_rows_fail_content_check(self, tmp_path, kind):
        a = make_db(tmp_path / "a.db", kind, SCHEMA + ROWS + ["INSERT INTO orders VALUES (3, 1, 1.0)"])
        b = make_db(tmp_path / "b.db", kind, SCHEMA + ROWS)
        assert check_local_database(a, b, db_type=kind, check_type=["table-schema"]) == 1.0
        assert check_local_database(a, b, db_type=kind, check_type=["table-schema-content"]) == 0.0
        assert check_local_database(a, b, db_type=kind, check_type=["table-schema-content"],
                                    table_targets=["customers"]) == 1.0

    def test_missing_view_fails(self, tmp_path, kind):
        a = make_db(tmp_path / "a.db", kind, SCHEMA[:2] + ROWS)
        b = make_db(tmp_path / "b.db", kind, SCHEMA + ROWS)
        assert check_local_database(a, b, db_type=kind, check_type=["table-schema-content"]) == 1.0
        assert check_local_database(a, b, db_type=kind, check_type=["view"]) == 0.0

    def test_missing_result_scores_zero(self, tmp_path, kind):
        b = make_db(tmp_path / "b.db", kind, SCHEMA)
        assert check_local_database(str(tmp_path / "none.db"), b, db_type=kind) == 0.0


def test_unknown_check_type_and_db_type(tmp_path):
    b = make_db(tmp_path / "b.db", "sqlite3", SCHEMA)
    with pytest.raises(MetricError, match="check_type"):
        check_local_database(b, b, db_type="sqlite3", check_type=["tables"])
    with pytest.raises(MetricError, match="unsupported db_type"):
        check_local_database(b, b, db_type="oracle")


def test_server_databases_need_their_client():
    try:
        import psycopg  # noqa: F401
        pytest.skip("psycopg is installed; the missing-client message cannot be shown")
    except ImportError:
        pass
    with pytest.raises(MetricError, match="pip install"):
        check_local_database("postgresql://localhost/x", "postgresql://localhost/y", db_type="postgresql")


# -- DuckDB catalogs and schemas --------------------------------------------------------------
def make_duckdb_in(folder, name, statements):
    """A DuckDB file ``folder/name``; statements use the catalog name ``name`` less its extension."""
    folder.mkdir(parents=True, exist_ok=True)
    return make_db(folder / name, "duckdb", statements)


EMAIL = ["CREATE SCHEMA email_address.email_address",
         "CREATE TABLE email_address.email_address.dim_customers (id INTEGER, email VARCHAR, valid BOOLEAN)",
         "INSERT INTO email_address.email_address.dim_customers VALUES (1, 'a@b.com', true), (2, 'x@y', false)"]
EMAIL_OPTIONS = {"db_type": "duckdb", "check_type": ["table-schema-content"], "table_targets": ["dim_customers"],
                 "schema_name": "email_address"}


def test_duckdb_catalog_named_like_its_schema(tmp_path):
    # the dbt tasks' layout: email_address.duckdb holding schema email_address, where "email_address"."t"
    # is ambiguous (catalog or schema) to DuckDB
    gold = make_duckdb_in(tmp_path / "gold", "email_address.duckdb", EMAIL)
    same = make_duckdb_in(tmp_path / "agent", "email_address.duckdb", EMAIL)
    one_row = "INSERT INTO email_address.email_address.dim_customers VALUES (1, 'a@b.com', true)"
    other = make_duckdb_in(tmp_path / "wrong", "email_address.duckdb", EMAIL[:2] + [one_row])
    assert check_local_database(gold, gold, **EMAIL_OPTIONS) == 1.0
    assert check_local_database(same, gold, **EMAIL_OPTIONS) == 1.0
    assert check_local_database(other, gold, **EMAIL_OPTIONS) == 0.0


def test_duckdb_gold_file_renamed(tmp_path):
    # expected files are stored as <name>.gold.duckdb; the catalog name then differs from the result's
    renamed = tmp_path / "email_address.gold.duckdb"
    Path(make_duckdb_in(tmp_path / "gold", "email_address.duckdb", EMAIL)).rename(renamed)
    agent = make_duckdb_in(tmp_path / "agent", "email_address.duckdb", EMAIL)
    assert check_local_database(agent, str(renamed), **EMAIL_OPTIONS) == 1.0


STG = ["CREATE TABLE customers (id INTEGER, name VARCHAR)", "INSERT INTO customers VALUES (1, 'ann')",
       "CREATE SCHEMA stg", "CREATE TABLE stg.stg_orders (id INTEGER, customer_id INTEGER)",
       "INSERT INTO stg.stg_orders VALUES (1, 1)", "CREATE VIEW stg.v_orders AS SELECT * FROM stg.stg_orders"]


def test_every_schema_compared_without_schema_name(tmp_path):
    gold = make_db(tmp_path / "gold.duckdb", "duckdb", STG)
    only_main = make_db(tmp_path / "a.duckdb", "duckdb", STG[:2])
    wrong_schema = make_db(tmp_path / "b.duckdb", "duckdb", STG[:2] + [
        "CREATE TABLE stg_orders (id INTEGER, customer_id INTEGER)", "INSERT INTO stg_orders VALUES (1, 1)",
        "CREATE VIEW v_orders AS SELECT * FROM stg_orders"])
    no_view = make_db(tmp_path / "c.duckdb", "duckdb", STG[:5])
    full = make_db(tmp_path / "d.duckdb", "duckdb", STG)
    content = ["table-schema-content", "view-schema-content"]
    assert check_local_database(full, gold, check_type=content) == 1.0
    assert check_local_database(only_main, gold, check_type=["table"]) == 0.0
    assert check_local_database(wrong_schema, gold, check_type=["table"]) == 0.0
    assert check_local_database(no_view, gold) == 0.0  # default check_type: table and view names
    # a named schema limits the comparison to it; targets may be qualified
    assert check_local_database(only_main, gold, check_type=content, schema_name="main") == 1.0
    assert check_local_database(only_main, gold, check_type=["table"], table_targets=["main.customers"]) == 1.0
    assert check_local_database(only_main, gold, check_type=["table"], table_targets=["stg.stg_orders"]) == 0.0
    assert check_local_database(wrong_schema, gold, check_type=["table"], schema_name="stg") == 0.0


def test_schema_missing_from_result_or_expected(tmp_path):
    gold = make_db(tmp_path / "gold.duckdb", "duckdb", STG)
    only_main = make_db(tmp_path / "a.duckdb", "duckdb", STG[:2])
    assert check_local_database(only_main, gold, check_type=["table"], schema_name="stg") == 0.0
    with pytest.raises(MetricError, match="schema 'nope' is not in the expected database"):
        check_local_database(gold, gold, check_type=["table"], schema_name="nope")


def test_unreadable_expected_is_an_error_unreadable_result_scores_zero(tmp_path):
    broken = ["CREATE TABLE t (x INTEGER)", "CREATE VIEW v AS SELECT x FROM t", "DROP TABLE t",
              "CREATE TABLE t (y INTEGER)"]  # the view no longer binds
    bad = make_db(tmp_path / "bad.duckdb", "duckdb", broken)
    good = make_db(tmp_path / "good.duckdb", "duckdb", ["CREATE TABLE t (y INTEGER)",
                                                        "CREATE VIEW v AS SELECT y AS x FROM t"])
    assert check_local_database(bad, good, check_type=["view-schema-content"]) == 0.0
    with pytest.raises(MetricError, match="cannot read the expected database"):
        check_local_database(good, bad, check_type=["view-schema-content"])
    garbage = tmp_path / "garbage.db"
    garbage.write_bytes(b"not a database at all" * 100)
    ok = make_db(tmp_path / "ok.db", "sqlite3", SCHEMA)
    assert check_local_database(str(garbage), ok, db_type="sqlite3") == 0.0
    with pytest.raises(MetricError, match="cannot read the expected database"):
        check_local_database(ok, str(garbage), db_type="sqlite3")


@pytest.mark.parametrize("kind", ["sqlite3", "duckdb"])
def test_column_default_and_primary_key_are_part_of_the_schema(tmp_path, kind):
    base = "CREATE TABLE t (id INTEGER{pk}, n INTEGER DEFAULT {d})"
    gold = make_db(tmp_path / "gold.db", kind, [base.format(pk=" PRIMARY KEY", d=0)])
    same = make_db(tmp_path / "a.db", kind, [base.format(pk=" PRIMARY KEY", d=0)])
    other_default = make_db(tmp_path / "b.db", kind, [base.format(pk=" PRIMARY KEY", d=1)])
    no_pk = make_db(tmp_path / "c.db", kind, [base.format(pk="", d=0)])
    assert check_local_database(same, gold, db_type=kind, check_type=["table-schema"]) == 1.0
    assert check_local_database(other_default, gold, db_type=kind, check_type=["table"]) == 1.0
    assert check_local_database(other_default, gold, db_type=kind, check_type=["table-schema"]) == 0.0
    assert check_local_database(no_pk, gold, db_type=kind, check_type=["table-schema"]) == 0.0


# -- options checked when a task is loaded ------------------------------------------------------
#: every option set the public suite's check_local_database tasks pass
REAL_OPTIONS = [
    {"db_type": "duckdb"},
    {"db_type": "duckdb", "check_type": ["table-schema-content"]},
    {"db_type": "duckdb", "check_type": ["table-schema-content"], "table_targets": ["orders_snapshot"],
     "schema_name": "snapshots"},
    EMAIL_OPTIONS,
    {"db_type": "sqlite3", "check_type": ["table-schema-content"], "table_targets": ["customer_totals"]},
]


@pytest.mark.parametrize("options", REAL_OPTIONS, ids=lambda o: ",".join(sorted(o)))
def test_real_task_options_are_accepted(options):
    entry = METRICS.get("check_local_database")
    assert entry.check is check_database_options
    assert entry.unknown_fields(options) == []
    check_database_options(options)


@pytest.mark.parametrize("options, field", [
    ({"db_type": "oracle"}, "db_type"),
    ({"check_type": ["table", "tables"]}, "check_type[1]"),
    ({"check_type": "table"}, "check_type"),
    ({"table_targets": "customers"}, "table_targets"),
    ({"view_targets": ["v", 3]}, "view_targets[1]"),
    ({"schema_name": ["main"]}, "schema_name"),
    ({"ordered": "yes"}, "ordered"),
])
def test_bad_options_are_rejected_with_their_field(options, field):
    with pytest.raises(OptionError) as info:
        check_database_options(options)
    assert info.value.field == field


def test_bad_option_fails_the_task_load(tmp_path):
    folder = tmp_path / "evaluation_examples" / "examples" / "duckdb" / TASK_ID
    folder.mkdir(parents=True)
    path = folder / f"{TASK_ID}.json"
    task = {"id": TASK_ID, "instruction": "x", "config": [],
            "evaluator": {"func": "check_local_database", "result": {"type": "vm_file", "path": "/a.duckdb",
                                                                     "dest": "a.duckdb"},
                          "expected": {"type": "rule", "rules": {}},
                          "options": {"db_type": "duckdb", "check_type": ["table", "tabel"]}}}
    path.write_text(json.dumps(task))
    with pytest.raises(TaskConfigError, match=r"check_type\[1\].*unknown check_type 'tabel'") as info:
        load_task(path)
    assert info.value.field == "evaluator.options.check_type[1]"
    task["evaluator"]["options"]["check_type"] = ["table-schema-content"]
    path.write_text(json.dumps(task))
    load_task(path)
