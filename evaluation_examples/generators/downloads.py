"""Chromium download task pairs (``examples/chromium``) on the ``base`` image: a page of the
guest's file system exports a CSV through the browser's own download, found and clicked through
the page's DOM (GUI steps over the DevTools protocol); and Chromium's own download setting, turned
on in its settings page (found in the accessibility tree; its Preferences file is checked). They
start from the ``base:chromium`` warm state (Chromium already running).

Regenerate with ``python3 -m evaluation_examples.generators downloads`` from the repository root
(see the package docstring).
"""
from __future__ import annotations

import json
import random

from .common import csv_text, write_pairs

PAGE = "/home/user/site/export.html"
PAGE_URL = f"file://{PAGE}"
DOWNLOADS = "/home/user/Downloads"
PREFERENCES = "/home/user/.config/chromium/Default/Preferences"
ASK_TOGGLE = "Ask where to save each file before downloading"
REGIONS = ["North", "South", "East", "West"]
HEADER = ["order_id", "order_date", "region", "product", "quantity", "amount"]
_PRODUCTS = [("Desk lamp", 34.5), ("Office chair", 189.0), ("Monitor arm", 72.25), ("Keyboard", 49.9),
             ("Notebook pack", 12.75), ("Standing mat", 41.0)]


def orders() -> list[list]:
    """Forty orders (seeded) over the four regions."""
    rng = random.Random(4242)
    rows = []
    for i in range(40):
        product, price = rng.choice(_PRODUCTS)
        qty = rng.randint(1, 6)
        rows.append([f"SO-{1001 + i}", f"2026-10-{rng.randint(1, 31):02d}", rng.choice(REGIONS), product, qty,
                     f"{qty * price:.2f}"])
    return rows


def page_html() -> str:
    """The export page: the orders in a table, a region choice (radio buttons) and an Export CSV
    button that downloads ``orders_<region>.csv`` (that region's rows, in the table's order)."""
    data = json.dumps(orders())
    radios = "\n".join(f'    <label><input type="radio" name="region" value="{r}"{" checked" if r == "North" else ""}>'
                       f' {r}</label>' for r in REGIONS)
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Order export</title>
<style>body {{ font-family: sans-serif; margin: 2em; }} table {{ border-collapse: collapse; margin-top: 1em; }}
td, th {{ border: 1px solid #bbb; padding: 2px 8px; }} fieldset {{ display: inline-block; }}
button {{ font-size: 1.1em; margin-left: 1em; padding: 4px 12px; }}</style></head>
<body>
<h1>Order export</h1>
<p>Choose a region and export its orders as a CSV file.</p>
<form onsubmit="return false">
  <fieldset><legend>Region</legend>
{radios}
  </fieldset>
  <button id="export" type="button">Export CSV</button>
</form>
<table id="orders"><thead><tr>{"".join(f"<th>{h}</th>" for h in HEADER)}</tr></thead><tbody></tbody></table>
<script>
const HEADER = {json.dumps(HEADER)};
const ROWS = {data};
const body = document.querySelector('#orders tbody');
for (const r of ROWS) {{
  const tr = document.createElement('tr');
  for (const v of r) {{ const td = document.createElement('td'); td.textContent = v; tr.appendChild(td); }}
  body.appendChild(tr);
}}
document.getElementById('export').addEventListener('click', () => {{
  const region = document.querySelector('input[name=region]:checked').value;
  const lines = [HEADER.join(',')].concat(ROWS.filter(r => r[2] === region).map(r => r.join(',')));
  const blob = new Blob([lines.join('\\n') + '\\n'], {{type: 'text/csv'}});
  const a = document.createElement('a');
  a.href = URL.createObjectURL(blob);
  a.download = 'orders_' + region.toLowerCase() + '.csv';
  document.body.appendChild(a);
  a.click();
  a.remove();
}});
</script>
</body></html>
"""


def gold(region: str) -> str:
    """The CSV the page exports for ``region``."""
    return csv_text([r for r in orders() if r[2] == region], HEADER)


CONFIG = [
    {"type": "execute", "parameters": {"command": ["bash", "-c", f"mkdir -p /home/user/site {DOWNLOADS}; "
                                                                 f"rm -f {DOWNLOADS}/orders_*"]}},
    {"type": "copyfile_from_host_to_guest", "parameters": {"src": "{folder}/export.html", "dest": PAGE}},
    {"type": "chrome_open_tabs", "parameters": {"urls_to_open": [PAGE_URL]}},
]


def pairs() -> list[dict]:
    """The task pairs of this module (``common`` describes their keys)."""
    return [
        {
            "name": "chromium_export_download",
            "id_seed": "gui_suite",
            "app": "chromium",
            "snapshot": "base:chromium",
            "gui_suite": True,
            "smoke": "abstract",
            "category": "data_ingestion_and_integration",
            "interface": "gui",
            "action_number": 2,
            "related_apps": ["chromium"],
            "source": ["https://support.google.com/chrome/answer/95759"],
            "abstract": "The Order export page is open in Chromium. Download the West region's orders as a CSV file "
                        "with the page's own export, into the Downloads folder under the name the page gives it.",
            "verbose": "Export one region's orders from a web page in Chromium:\n"
                       "1. In the Order export tab, choose the region West.\n"
                       "2. Click Export CSV.\n"
                       f"3. Chromium saves orders_west.csv in {DOWNLOADS}; nothing else is needed.",
            "files": {"export.html": page_html(), "orders_west_gold.csv": gold("West")},
            "config": CONFIG,
            "evaluator": {
                "func": "compare_csv",
                "result": {"type": "vm_file", "path": f"{DOWNLOADS}/orders_west.csv", "dest": "orders_west.csv"},
                "expected": {"type": "local_file", "path": "{folder}/orders_west_gold.csv"},
            },
            "solution": [
                {"gui": "click", "target": {"css": "label", "text": "West", "url": PAGE_URL}},
                {"gui": "click", "target": {"css": "button#export", "url": PAGE_URL}},
                {"gui": "wait", "for": {"file": f"{DOWNLOADS}/orders_west.csv"}},
            ],
        },
        {
            "name": "chromium_ask_where_to_save",
            "id_seed": "gui_suite",
            "app": "chromium",
            "snapshot": "base:chromium",
            "gui_suite": True,
            "category": "data_ingestion_and_integration",
            "interface": "gui",
            "action_number": 3,
            "related_apps": ["chromium"],
            "source": ["https://support.google.com/chrome/answer/95759"],
            "abstract": "Make Chromium ask where to save each file before downloading it, instead of saving "
                        "downloads straight into the Downloads folder.",
            "verbose": "Change Chromium's download setting:\n"
                       "1. In Chromium, open Settings > Downloads (or type chrome://settings/downloads in the address "
                       "bar and press Enter).\n"
                       "2. Turn on \"Ask where to save each file before downloading\".\n"
                       "3. Chromium saves the setting by itself; nothing else is needed.",
            "config": [],
            "evaluator": {
                "func": "check_json",
                "result": {"type": "vm_file", "path": PREFERENCES, "dest": "Preferences"},
                "expected": {"type": "rule", "rules": {"expect": [
                    {"key": ["download", "prompt_for_download"], "method": "eq", "ref": True}]}},
            },
            "solution": [
                {"gui": "key", "keys": "ctrl+l", "note": "the address bar"},
                {"gui": "type", "text": "chrome://settings/downloads\n"},
                {"gui": "click", "target": {"role": "toggle-button", "name": ASK_TOGGLE}},
                {"gui": "wait", "for": {"file": PREFERENCES, "contains": '"prompt_for_download":true'},
                 "note": "Chromium writes its Preferences file some seconds after a change"},
            ],
        },
    ]


def main() -> None:
    """Write this module's tasks and index them."""
    write_pairs(pairs())
