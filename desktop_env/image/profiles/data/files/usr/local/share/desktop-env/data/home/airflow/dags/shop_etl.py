"""Sample Airflow DAG: summarise the shop's orders CSV into a revenue-per-status CSV."""
import csv
from collections import defaultdict
from datetime import datetime
from pathlib import Path

from airflow.sdk import dag, task

DATA_DIR = Path("/home/user/projects/data")


@dag(dag_id="shop_etl", schedule=None, start_date=datetime(2024, 1, 1), catchup=False, tags=["sample"])
def shop_etl():
    @task
    def count_orders() -> dict:
        counts = defaultdict(int)
        with open(DATA_DIR / "raw_orders.csv") as fh:
            for row in csv.DictReader(fh):
                counts[row["status"]] += 1
        return dict(counts)

    @task
    def write_summary(counts: dict) -> str:
        out = DATA_DIR / "order_status_summary.csv"
        with open(out, "w", newline="") as fh:
            writer = csv.writer(fh)
            writer.writerow(["status", "orders"])
            for status, n in sorted(counts.items()):
                writer.writerow([status, n])
        return str(out)

    write_summary(count_orders())


shop_etl()
