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


# -- the dashboard evaluator, on the metadata the dashboard pair's reference solution left -------------------------

DASHBOARD = ROOT / "tests/data/superset/sales_dashboard.sql"
CHARTS = ["Orders by status", "Products per category"]


@pytest.fixture()
def dash(tmp_path):
    path = tmp_path / "superset.db"
    con = sqlite3.connect(path)
    con.executescript(DASHBOARD.read_text())
    con.commit()
    yield path, con
    con.close()


def dash_check(path: Path, title: str = "Sales overview", charts: list = CHARTS) -> str:
    code = superset.DASHBOARD_PY.replace("/home/user/.superset/superset.db", str(path))
    out = subprocess.run([sys.executable, "-c", code, title, json.dumps(charts)], capture_output=True, text=True)
    return (out.stderr.strip().splitlines() or [""])[-1]


def test_the_dashboard_the_reference_solution_saved_passes(dash):
    assert dash_check(dash[0]) == ""


def test_a_dashboard_missing_a_chart_or_its_title_fails(dash):
    path, con = dash
    layout = json.loads(con.execute("SELECT position_json FROM dashboards").fetchone()[0])
    kept = {k: v for k, v in layout.items()
            if not (isinstance(v, dict) and v.get("meta", {}).get("sliceName") == "Products per category")}
    con.execute("UPDATE dashboards SET position_json = ?", (json.dumps(kept),))
    con.commit()
    assert "lacks the chart(s) ['Products per category']" in dash_check(path)
    con.execute("UPDATE dashboards SET position_json = ?, dashboard_title = '[ untitled dashboard ]'",
                (json.dumps(layout),))
    con.commit()
    assert "0 dashboards are titled 'Sales overview'" in dash_check(path)


def test_a_chart_laid_out_but_not_listed_fails(dash):
    path, con = dash
    con.execute("DELETE FROM dashboard_slices WHERE slice_id = (SELECT id FROM slices WHERE "
                "slice_name = 'Orders by status')")
    con.commit()
    assert "lacks the chart(s) ['Orders by status']" in dash_check(path)


# -- the annotation evaluator, on what the annotation pair's reference solution left -------------------------------

ANNOTATION = ROOT / "tests/data/superset/annotation.sql"


def note_check(path: Path, args=("Promotions", "Spring sale", "2024-03-01", "2024-03-15")) -> str:
    code = superset.ANNOTATION_PY.replace("/home/user/.superset/superset.db", str(path))
    out = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True)
    return (out.stderr.strip().splitlines() or [""])[-1]


@pytest.mark.parametrize("change, why", [
    ("", ""),
    ("UPDATE annotation SET end_dttm = '2024-03-16 00:00:00.000000'", "not one annotation 'Spring sale' from"),
    ("UPDATE annotation SET short_descr = 'Sale'", "holds [('Sale', '2024-03-01', '2024-03-15')]"),
    ("UPDATE annotation_layer SET name = 'Campaigns'", "0 annotation layers are named 'Promotions'"),
    ("INSERT INTO annotation SELECT id + 1, layer_id, short_descr, start_dttm, end_dttm FROM annotation",
     "not one annotation"),
])
def test_the_annotation_evaluator(tmp_path, change, why):
    path = tmp_path / "superset.db"
    with sqlite3.connect(path) as con:
        con.executescript(ANNOTATION.read_text() + change + ";")
    got = note_check(path)
    assert (why in got) if why else got == "", got


def test_a_line_chart_needs_its_time_grain(meta):
    path, con = meta
    con.execute("UPDATE slices SET viz_type = 'echarts_timeseries_line'")
    change(con, x_axis="order_date", groupby=[], metric=None, metrics=["count"], time_grain_sqla="P1D")
    spec = {"viz": ["echarts_timeseries_line"], "table": "orders", "columns": ["order_date"],
            "metrics": ["COUNT(*)"], "grain": "P1M"}
    assert "its time grain is P1D, not P1M" in check(path, spec=spec)
    change(con, time_grain_sqla="P1M")
    assert check(path, spec=spec) == ""
