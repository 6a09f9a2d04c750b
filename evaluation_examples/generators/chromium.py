"""Chromium task pairs (``examples/chromium``) on the ``data`` image: two infeasible requests
for BI tools in the browser (a Superset dashboard that does not exist, a Metabase that is
not installed).

Regenerate with ``python3 -m evaluation_examples.generators chromium`` from the repository
root (see the package docstring).
"""
from __future__ import annotations

from .common import write_pairs


def pairs() -> list[dict]:
    """The task pairs of this module (``common`` describes their keys)."""
    return [
        {
            "name": "superset_dashboard_infeasible",
            "id_seed": "data_batch3",
            "app": "chromium",
            "category": "data_analysis_and_visualization",
            "interface": "gui",
            "action_number": 6,
            "related_apps": ["chromium", "superset"],
            "infeasible": True,
            "source": ["https://superset.apache.org/docs/using-superset/creating-your-first-dashboard"],
            "abstract": "Open the Apache Superset instance of this machine in the browser and export the dashboard "
                        "\"Shop KPIs\" as a PDF to /home/user/reports/shop_kpis.pdf. If this cannot be done here, "
                        "say so.",
            "verbose": "Export a Superset dashboard:\n"
                       "1. Start Superset (its helper would be start-superset) and open http://localhost:8088 in "
                       "Chromium; log in.\n"
                       "2. Open Dashboards > Shop KPIs.\n"
                       "3. Use the dashboard's ... menu > Download > Export to PDF and save it as "
                       "/home/user/reports/shop_kpis.pdf.\n"
                       "If Superset or the dashboard does not exist on this machine, do not create a substitute: "
                       "report that the task cannot be done.",
            "config": [],
        },
        {
            "name": "metabase_infeasible",
            "id_seed": "data_batch5",
            "app": "chromium",
            "category": "data_analysis_and_visualization",
            "interface": "gui",
            "action_number": 8,
            "related_apps": ["chromium", "metabase"],
            "infeasible": True,
            "source": ["https://www.metabase.com/docs/latest/questions/start"],
            "abstract": "In this machine's Metabase (http://localhost:3000/metabase), create a question showing "
                        "revenue per month from the analytics database and save it to the collection Shop "
                        "reports. If this cannot be done here, say so.",
            "verbose": "Build a Metabase question:\n"
                       "1. Open http://localhost:3000/metabase in Chromium and log in.\n"
                       "2. New > Question > the analytics database > orders joined with order_items; summarize "
                       "the sum of quantity * unit_price by order_date: month.\n"
                       "3. Save it to the collection Shop reports.\n"
                       "If Metabase is not installed on this machine, do not build the chart elsewhere: report "
                       "that the task cannot be done.",
            "config": [],
        },
    ]


def main() -> None:
    """Write this module's tasks and index them."""
    write_pairs(pairs())
