"""Sample Dagster code location: shop CSVs -> DuckDB tables -> a daily revenue summary."""
from pathlib import Path

import dagster as dg
import duckdb
import pandas as pd

DATA_DIR = Path("/home/user/projects/data")
WAREHOUSE = Path("/home/user/projects/dagster_project/warehouse.duckdb")


@dg.asset(description="Orders loaded from raw_orders.csv")
def orders() -> pd.DataFrame:
    return pd.read_csv(DATA_DIR / "raw_orders.csv", parse_dates=["order_date"])


@dg.asset(description="Order lines loaded from raw_order_items.csv")
def order_items() -> pd.DataFrame:
    return pd.read_csv(DATA_DIR / "raw_order_items.csv")


@dg.asset(description="Revenue per day over completed and shipped orders, written to DuckDB")
def daily_revenue(orders: pd.DataFrame, order_items: pd.DataFrame) -> pd.DataFrame:
    done = orders[orders["status"].isin(["completed", "shipped"])]
    lines = order_items.assign(line_total=order_items["quantity"] * order_items["unit_price"])
    merged = done.merge(lines, left_on="id", right_on="order_id")
    daily = merged.groupby("order_date", as_index=False)["line_total"].sum().rename(columns={"line_total": "revenue"})
    with duckdb.connect(str(WAREHOUSE)) as con:
        con.execute("CREATE OR REPLACE TABLE daily_revenue AS SELECT * FROM daily")
    return daily


revenue_job = dg.define_asset_job("revenue_job", selection=["orders", "order_items", "daily_revenue"])

defs = dg.Definitions(
    assets=[orders, order_items, daily_revenue],
    jobs=[revenue_job],
    schedules=[dg.ScheduleDefinition(job=revenue_job, cron_schedule="0 6 * * *")],
)
