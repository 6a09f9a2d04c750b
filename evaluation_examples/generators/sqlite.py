"""SQLite task pairs (``examples/sqlite3``) on the ``data`` image.

A CRM export the tasks bring along (``datasets.crm``) to de-duplicate and to derive a
column in, and a typed CSV import.

Regenerate with ``python3 -m evaluation_examples.generators sqlite`` from the repository
root (see the package docstring).
"""
from __future__ import annotations

from .common import bash, clean, cmd, write_pairs
from .datasets import crm

# setup of the CRM export /home/user/crm/contacts.db (from contacts.sql beside the task)
CRM_CONFIG = [clean("/home/user/crm/contacts.db"),
              {"type": "copyfile_from_host_to_guest", "parameters": {
                  "src": "{folder}/contacts.sql", "dest": "/tmp/desktop_env_setup/contacts.sql"}},
              {"type": "execute", "parameters": {"command": bash(
                  "mkdir -p /home/user/crm && sqlite3 /home/user/crm/contacts.db "
                  "< /tmp/desktop_env_setup/contacts.sql && rm -f /tmp/desktop_env_setup/contacts.sql"),
                  "until": {"returncode": 0}}}]


def pairs() -> list[dict]:
    """The task pairs of this module (``common`` describes their keys)."""
    crm_sql, crm_keep = crm()
    return [
        {
            "name": "sqlite_dedupe_contacts",
            "id_seed": "data_batch2",
            "app": "sqlite3",
            "category": "traditional_data_processing",
            "interface": "cli",
            "action_number": 3,
            "related_apps": ["sqlite3", "terminal"],
            "source": ["https://www.sqlite.org/lang_delete.html", "https://www.sqlite.org/lang_corefunc.html#lower"],
            "abstract": "The CRM export /home/user/crm/contacts.db (SQLite) holds some contacts twice: the same "
                        "e-mail address typed with different upper/lower case. Delete the duplicates so that each "
                        "e-mail address (compared case-insensitively) is left once, keeping the row with the "
                        "lowest id.",
            "verbose": "De-duplicate a SQLite table:\n"
                       "1. Open a terminal and run `sqlite3 /home/user/crm/contacts.db`.\n"
                       "2. Look at the duplicates: SELECT lower(email), count(*) FROM contacts GROUP BY "
                       "lower(email) HAVING count(*) > 1;\n"
                       "3. Delete every row whose id is not the smallest id of its lower(email) group: DELETE "
                       "FROM contacts WHERE id NOT IN (SELECT min(id) FROM contacts GROUP BY lower(email));\n"
                       "4. Check that the query of step 2 returns nothing.",
            "files": {"contacts.sql": crm_sql},
            "config": CRM_CONFIG,
            "eval": f"""db=/home/user/crm/contacts.db
[ -f "$db" ] || fail "$db does not exist"
got=$(sqlite3 -readonly "$db" "SELECT group_concat(id, ',') FROM (SELECT id FROM contacts ORDER BY id)" 2>&1)
[ "$got" = "{crm_keep}" ] || fail "the ids left are not the first of each e-mail: $got"
echo EVAL_OK
""",
            "solution": [cmd("sqlite3 /home/user/crm/contacts.db \"DELETE FROM contacts WHERE id NOT IN (SELECT "
                             "min(id) FROM contacts GROUP BY lower(email))\"")],
        },
        {
            "name": "sqlite_import_products_typed",
            "id_seed": "data_batch4",
            "app": "sqlite3",
            "category": "data_ingestion_and_integration",
            "interface": "cli",
            "action_number": 3,
            "related_apps": ["sqlite3", "terminal"],
            "source": ["https://www.sqlite.org/cli.html#importing_files_as_csv_or_other_formats",
                       "https://www.sqlite.org/datatype3.html#type_affinity"],
            "abstract": "Load /home/user/projects/data/raw_products.csv into a new SQLite database "
                        "/home/user/shop.db as the table products with the columns id INTEGER PRIMARY KEY, name "
                        "TEXT, category TEXT and unit_price REAL, so that every unit_price is stored as a real "
                        "number (not as text). Do not load the header line as a row.",
            "verbose": "Import a CSV file into a typed SQLite table:\n"
                       "1. Open a terminal and run `sqlite3 /home/user/shop.db`.\n"
                       "2. CREATE TABLE products (id INTEGER PRIMARY KEY, name TEXT NOT NULL, category TEXT NOT "
                       "NULL, unit_price REAL NOT NULL);\n"
                       "3. `.import --csv --skip 1 /home/user/projects/data/raw_products.csv products` (the "
                       "--skip 1 leaves out the header; with the table created first the column types apply).\n"
                       "4. Check: SELECT count(*), typeof(unit_price) FROM products GROUP BY 2; gives 40 real.",
            "config": [clean("/home/user/shop.db")],
            "eval": """db=/home/user/shop.db
[ -f "$db" ] || fail "$db does not exist"
got=$(sqlite3 -readonly "$db" "SELECT count(*) || '|' || sum(typeof(unit_price) = 'real') || '|' || printf('%.2f', sum(unit_price)) || '|' || count(DISTINCT category) FROM products" 2>&1)
want=$(python3 -c "
import csv
rows = list(csv.DictReader(open('/home/user/projects/data/raw_products.csv', newline='')))
print(f\\"{len(rows)}|{len(rows)}|{sum(float(r['unit_price']) for r in rows):.2f}|{len({r['category'] for r in rows})}\\")
")
[ "$got" = "$want" ] || fail "products (count|real prices|sum|categories) is '$got', expected '$want'"
echo EVAL_OK
""",
            "solution": [cmd("sqlite3 /home/user/shop.db \"CREATE TABLE products (id INTEGER PRIMARY KEY, name TEXT "
                             "NOT NULL, category TEXT NOT NULL, unit_price REAL NOT NULL);\" \".import --csv --skip 1 "
                             "/home/user/projects/data/raw_products.csv products\"")],
        },
        {
            "name": "sqlite_contact_domains",
            "id_seed": "data_batch5",
            "app": "sqlite3",
            "category": "traditional_data_processing",
            "interface": "cli",
            "action_number": 3,
            "related_apps": ["sqlite3", "terminal"],
            "source": ["https://www.sqlite.org/lang_altertable.html", "https://www.sqlite.org/lang_corefunc.html#substr"],
            "abstract": "In the SQLite database /home/user/crm/contacts.db, add a column domain to the contacts table "
                        "holding the part of each contact's e-mail address after the @, in lower case, filled in "
                        "for every row.",
            "verbose": "Derive a column in SQLite:\n"
                       "1. Open a terminal and run `sqlite3 /home/user/crm/contacts.db`.\n"
                       "2. ALTER TABLE contacts ADD COLUMN domain TEXT;\n"
                       "3. UPDATE contacts SET domain = lower(substr(email, instr(email, '@') + 1));\n"
                       "4. Check: SELECT domain, count(*) FROM contacts GROUP BY domain;",
            "files": {"contacts.sql": crm_sql},
            "config": CRM_CONFIG,
            "eval": """db=/home/user/crm/contacts.db
[ -f "$db" ] || fail "$db does not exist"
has=$(sqlite3 -readonly "$db" "SELECT count(*) FROM pragma_table_info('contacts') WHERE name = 'domain'" 2>&1)
[ "$has" = 1 ] || fail "contacts has no column domain"
bad=$(sqlite3 -readonly "$db" "SELECT count(*) FROM contacts WHERE domain IS NOT lower(substr(email, instr(email, '@') + 1))" 2>&1)
[ "$bad" = 0 ] || fail "$bad rows have a wrong domain"
echo EVAL_OK
""",
            "solution": [cmd("sqlite3 /home/user/crm/contacts.db \"ALTER TABLE contacts ADD COLUMN domain TEXT; UPDATE "
                             "contacts SET domain = lower(substr(email, instr(email, '@') + 1));\"")],
        },
    ]


def main() -> None:
    """Write this module's tasks and index them."""
    write_pairs(pairs())
