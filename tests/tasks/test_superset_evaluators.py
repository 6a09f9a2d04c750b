"""The Superset GUI pairs' chart evaluator on the metadata Superset 6.1 wrote when the pie-chart pair's
reference solution saved its chart through the web UI (tests/data/superset/pie_chart.sql): it passes as
saved, and fails for each way the chart can be wrong."""
from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from evaluation_examples.generators import superset

ROOT = Path(__file__).resolve().parents[2]
SAVED = ROOT / "tests/data/superset/pie_chart.sql"
PIE = {"viz": ["pie"], "table": "orders", "columns": ["status"], "metrics": ["COUNT(*)"]}


@pytest.fixture()
def meta(tmp_path):
    """A metadata database holding what Superset saved; returns (path, connection)."""
    path = tmp_path / "superset.db"
    con = sqlite3.connect(path)
    con.executescript(SAVED.read_text())
    con.commit()
    yield path, con
    con.close()


def check(path: Path, name: str = "Orders by status", spec: dict = PIE) -> str:
    """What the evaluator's checker says: "" when the chart is right, else why not."""
    code = superset.CHART_PY.replace("/home/user/.superset/superset.db", str(path))
    out = subprocess.run([sys.executable, "-c", code, name, json.dumps(spec)], capture_output=True, text=True)
    return (out.stderr.strip().splitlines() or [""])[-1]


def change(con, **form) -> None:
    params = json.loads(con.execute("SELECT params FROM slices").fetchone()[0])
    con.execute("UPDATE slices SET params = ?", (json.dumps({**params, **form}),))
    con.commit()


def test_the_chart_the_reference_solution_saved_passes(meta):
    assert check(meta[0]) == ""


def test_a_chart_of_another_name_type_or_dataset_fails(meta):
    path, con = meta
    assert "0 saved charts are named 'Orders per status'" in check(path, "Orders per status")
    con.execute("UPDATE slices SET viz_type = 'echarts_timeseries_bar'")
    con.commit()
    assert "it is a echarts_timeseries_bar chart, not pie" in check(path)
    con.execute("UPDATE slices SET viz_type = 'pie', datasource_id = 99")
    con.commit()
    assert "not orders of analytics" in check(path)


@pytest.mark.parametrize("form, why", [
    ({"groupby": ["customer_id"]}, "it groups by ['customer_id'], not ['status']"),
    ({"groupby": []}, "it groups by nothing"),
    ({"metric": {"expressionType": "SIMPLE", "aggregate": "SUM", "column": {"column_name": "id"}}},
     "its metrics are ['SUM(ID)'], not ['COUNT(*)']"),
])
def test_a_chart_grouped_or_measured_otherwise_fails(meta, form, why):
    path, con = meta
    change(con, **form)
    assert why in check(path)


@pytest.mark.parametrize("metric", [
    {"expressionType": "SQL", "sqlExpression": "count( * )"},
    {"expressionType": "SIMPLE", "aggregate": "COUNT", "column": {"column_name": "id"}},
])
def test_the_same_count_written_another_way_passes(meta, metric):
    path, con = meta
    change(con, metric=metric)
    assert check(path) == ""


def test_two_charts_of_that_name_fail(meta):
    path, con = meta
    con.execute("INSERT INTO slices SELECT id + 1, slice_name, viz_type, datasource_id, datasource_type, params "
                "FROM slices")
    con.commit()
    assert "2 saved charts are named" in check(path)
