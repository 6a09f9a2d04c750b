"""Terminal task pairs (``examples/terminal``) on the ``data`` image: split a CSV file with
awk, a checksummed backup, and two infeasible requests (e-mail and a git push with no
network).

Regenerate with ``python3 -m evaluation_examples.generators terminal`` from the repository
root (see the package docstring).
"""
from __future__ import annotations

from .common import clean, cmd, write_pairs

BACKUP_EVAL = """b=/home/user/backups
[ -f $b/raw_csv.tar.gz ] || fail "$b/raw_csv.tar.gz does not exist"
[ -f $b/raw_csv.tar.gz.sha256 ] || fail "$b/raw_csv.tar.gz.sha256 does not exist"
(cd $b && sha256sum -c --status raw_csv.tar.gz.sha256) || fail "the checksum file does not verify the archive"
names=$(tar tzf $b/raw_csv.tar.gz 2>&1 | sort | tr '\\n' ' ')
[ "$names" = "raw_customers.csv raw_order_items.csv raw_orders.csv raw_payments.csv raw_products.csv " ] || fail "the archive holds: $names"
rm -rf /tmp/desktop_env_eval/x && mkdir -p /tmp/desktop_env_eval/x && tar xzf $b/raw_csv.tar.gz -C /tmp/desktop_env_eval/x || fail "cannot extract it"
for f in /tmp/desktop_env_eval/x/*; do cmp -s "$f" "/home/user/projects/data/$(basename "$f")" || fail "$(basename "$f") differs from the original"; done
echo EVAL_OK
"""


def pairs() -> list[dict]:
    """The task pairs of this module (``common`` describes their keys)."""
    return [
        {
            "name": "terminal_split_orders",
            "id_seed": "data_batch2",
            "app": "terminal",
            "category": "data_ingestion_and_integration",
            "interface": "cli",
            "action_number": 3,
            "related_apps": ["terminal"],
            "source": ["https://www.gnu.org/software/gawk/manual/gawk.html#Redirection",
                       "https://www.gnu.org/software/coreutils/manual/html_node/head-invocation.html"],
            "abstract": "Split /home/user/projects/data/raw_orders.csv by order status into one file per status in "
                        "/home/user/exports, named orders_<status>.csv (e.g. orders_shipped.csv). Each file starts "
                        "with the original header line and holds that status's rows in their original order; no "
                        "other files go in that folder.",
            "verbose": "Split a CSV file by a column in the terminal:\n"
                       "1. Open a terminal and create /home/user/exports.\n"
                       "2. The status is the 4th comma-separated field of raw_orders.csv (header: "
                       "id,customer_id,order_date,status). The file has Windows line endings (CRLF): strip the "
                       "carriage return, or it ends up in the status and in the file names.\n"
                       "3. For each status, write the header plus the rows of that status, e.g. with awk: "
                       "`awk -F, '{sub(/\\r$/, \"\")} NR==1 {h=$0; next} {f=\"/home/user/exports/orders_\" $4 "
                       "\".csv\"; if (!(f in seen)) {print h > f; seen[f]=1} print > f}' "
                       "/home/user/projects/data/raw_orders.csv`.\n"
                       "4. Check with `wc -l /home/user/exports/*`: the data lines add up to the original's.",
            "config": [clean("/home/user/exports")],
            "eval": """python3 - <<'PY'
import csv, os
src = "/home/user/projects/data/raw_orders.csv"
lines = open(src).read().splitlines()
header, rows = lines[0], lines[1:]
want = {}
for line in rows:
    want.setdefault(f"orders_{line.split(',')[3]}.csv", []).append(line)
folder = "/home/user/exports"
if not os.path.isdir(folder):
    print(f"EVAL_FAIL: {folder} does not exist"); raise SystemExit
got = sorted(os.listdir(folder))
if got != sorted(want):
    print(f"EVAL_FAIL: files are {got}, expected {sorted(want)}"); raise SystemExit
for name, body in want.items():
    have = open(os.path.join(folder, name)).read().splitlines()
    if have != [header] + body:
        print(f"EVAL_FAIL: {name} does not hold the header and its {len(body)} rows in order"); raise SystemExit
print("EVAL_OK")
PY
""",
            "solution": [cmd("mkdir -p /home/user/exports && awk -F, '{sub(/\\r$/, \"\")} NR==1 {h=$0; next} "
                             "{f=\"/home/user/exports/"
                             "orders_\" $4 \".csv\"; if (!(f in seen)) {print h > f; seen[f]=1} print > f}' "
                             "/home/user/projects/data/raw_orders.csv")],
        },
        {
            "name": "email_report_infeasible",
            "id_seed": "data_batch3",
            "app": "terminal",
            "category": "it_service_management",
            "interface": "cli",
            "action_number": 3,
            "related_apps": ["terminal"],
            "infeasible": True,
            "source": ["https://manpages.debian.org/bookworm/mailutils/mail.1.en.html"],
            "abstract": "E-mail the file /home/user/projects/data/raw_orders.csv as an attachment to "
                        "finance@corp.example with the subject \"Orders export\", from this machine. If this "
                        "cannot be done here, say so.",
            "verbose": "Send a file by e-mail from the terminal:\n"
                       "1. Open a terminal.\n"
                       "2. Send it with a mail client, e.g. `mail -s 'Orders export' -A "
                       "/home/user/projects/data/raw_orders.csv finance@corp.example`.\n"
                       "3. Check that the message left the machine.\n"
                       "If there is no mail system or no network to deliver it, do not pretend it was sent: "
                       "report that the task cannot be done.",
            "config": [],
        },
        {
            "name": "terminal_checksummed_backup",
            "id_seed": "data_batch5",
            "app": "terminal",
            "category": "it_service_management",
            "interface": "cli",
            "action_number": 3,
            "related_apps": ["terminal"],
            "source": ["https://www.gnu.org/software/tar/manual/tar.html#gzip",
                       "https://www.gnu.org/software/coreutils/manual/html_node/sha2-utilities.html"],
            "abstract": "Back up the raw shop extracts (the raw_*.csv files of /home/user/projects/data) into a "
                        "gzip-compressed tar archive /home/user/backups/raw_csv.tar.gz with the files at the "
                        "archive's top level, and write its SHA-256 checksum in sha256sum's format to "
                        "/home/user/backups/raw_csv.tar.gz.sha256 so that `sha256sum -c` can verify it.",
            "verbose": "Make a checksummed backup in the terminal:\n"
                       "1. mkdir -p /home/user/backups\n"
                       "2. cd /home/user/projects/data && tar czf /home/user/backups/raw_csv.tar.gz raw_*.csv\n"
                       "3. cd /home/user/backups && sha256sum raw_csv.tar.gz > raw_csv.tar.gz.sha256\n"
                       "4. Check with `sha256sum -c raw_csv.tar.gz.sha256` (prints OK).",
            "config": [clean("/home/user/backups")],
            "eval": BACKUP_EVAL,
            "solution": [cmd("mkdir -p /home/user/backups && cd /home/user/projects/data && tar czf "
                             "/home/user/backups/raw_csv.tar.gz raw_*.csv && cd /home/user/backups && sha256sum "
                             "raw_csv.tar.gz > raw_csv.tar.gz.sha256")],
        },
        {
            "name": "git_push_infeasible",
            "id_seed": "data_batch5",
            "app": "terminal",
            "category": "data_transformation",
            "interface": "cli",
            "action_number": 3,
            "related_apps": ["terminal", "dbt"],
            "infeasible": True,
            "source": ["https://git-scm.com/docs/git-push"],
            "abstract": "Commit the dbt project /home/user/projects/dbt_duckdb and push it to the team's GitHub "
                        "repository git@github.com:shopco/analytics.git on the branch main. If this cannot be done "
                        "from this machine, say so.",
            "verbose": "Publish a dbt project with git:\n"
                       "1. cd /home/user/projects/dbt_duckdb; git init; git add .; git commit -m 'dbt project'.\n"
                       "2. git remote add origin git@github.com:shopco/analytics.git\n"
                       "3. git push -u origin main\n"
                       "If GitHub cannot be reached from this machine (no network, no key), do not pretend the "
                       "push happened: report that the task cannot be done.",
            "config": [],
        },
    ]


def main() -> None:
    """Write this module's tasks and index them."""
    write_pairs(pairs())
