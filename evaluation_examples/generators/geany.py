"""Geany task pair (``examples/geany``) on the ``data`` image: edit an INI file open in the
Geany editor (a GUI task).

Regenerate with ``python3 -m evaluation_examples.generators geany`` from the repository
root (see the package docstring).
"""
from __future__ import annotations

from .common import bash, write_pairs

LOAD_INI = """; Settings of the nightly load into the shop warehouse.
[source]
path = /home/user/projects/data
pattern = raw_*.csv

[target]
database = /home/user/projects/dbt_duckdb/warehouse.duckdb
schema = main

[load]
mode = append
"""

GEANY_TITLE = "load.ini"


def pairs() -> list[dict]:
    """The task pairs of this module (``common`` describes their keys)."""
    return [
        {
            "name": "geany_batch_size",
            "id_seed": "data_batch1",
            "app": "geany",
            "category": "data_ingestion_and_integration",
            "interface": "gui",
            "action_number": 4,
            "related_apps": ["geany"],
            "source": ["https://www.geany.org/manual/current/index.html#editing",
                       "https://docs.python.org/3/library/configparser.html#supported-ini-file-structure"],
            "abstract": "The nightly load should commit in batches of 500 rows. In the settings file open in the "
                        "Geany editor (/home/user/projects/etl/load.ini), add that setting to the [load] section "
                        "under the key batch_size, keep everything else as it is, and save the file.",
            "verbose": "Edit an INI file in the Geany editor:\n"
                       "1. Click into the Geany window that shows load.ini.\n"
                       "2. Press Ctrl+End to go to the end of the file, which is the end of the [load] section.\n"
                       "3. Type the line `batch_size = 500` on its own line.\n"
                       "4. Press Ctrl+S to save.",
            "files": {"load.ini": LOAD_INI},
            "config": [
                {"type": "execute", "parameters": {"command": bash("pkill -x geany; mkdir -p /home/user/projects/etl; true")}},
                {"type": "copyfile_from_host_to_guest", "parameters": {"src": "{folder}/load.ini",
                                                                         "dest": "/home/user/projects/etl/load.ini"}},
                {"type": "launch", "parameters": {"command": ["geany", "/home/user/projects/etl/load.ini"]}},
                {"type": "execute", "parameters": {
                    "command": f"for i in $(seq 600); do wmctrl -l | grep -q '{GEANY_TITLE}' && exit 0; sleep 0.5; "
                               f"done; echo 'no window {GEANY_TITLE}' >&2; exit 1",
                    "shell": True, "timeout_s": 330}},
                {"type": "activate_window", "parameters": {"window_name": GEANY_TITLE}},
                {"type": "sleep", "parameters": {"seconds": 3}},
            ],
            "eval": """python3 - <<'PY' || fail "see above"
import configparser, sys
c = configparser.ConfigParser()
try:
    with open("/home/user/projects/etl/load.ini") as f:
        c.read_file(f)
except (OSError, configparser.Error) as e:
    print(f"EVAL_FAIL: cannot read load.ini: {e}")
    sys.exit(0)
want = {"source": {"path": "/home/user/projects/data", "pattern": "raw_*.csv"},
        "target": {"database": "/home/user/projects/dbt_duckdb/warehouse.duckdb", "schema": "main"},
        "load": {"mode": "append", "batch_size": "500"}}
got = {s: dict(c[s]) for s in c.sections()}
print("EVAL_OK" if got == want else f"EVAL_FAIL: sections are {got}")
PY
""",
            "solution": [
                {"gui": "wait", "for": {"window": "load\\.ini"}},
                {"gui": "click", "target": {"role": "text", "text_contains": "[load]"}, "note": "the editor"},
                {"gui": "key", "keys": "ctrl+end"},
                {"gui": "type", "text": "batch_size = 500\n"},
                {"gui": "key", "keys": "ctrl+s"},
                {"gui": "wait", "for": {"file": "/home/user/projects/etl/load.ini", "contains": "batch_size"}},
            ],
        },
    ]


def main() -> None:
    """Write this module's tasks and index them."""
    write_pairs(pairs())
