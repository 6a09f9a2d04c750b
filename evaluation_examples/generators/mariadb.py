"""MariaDB task pairs (``examples/mariadb``) on the ``data`` image, on the sample database ``hr``.

A payroll report, a view, a CSV load, and two updates whose right end state is not
recomputable in the guest (a raise with history, an archive of old salary rows): their
evaluators compare a digest derived here from the image's own sample data
(``datasets.samples``).

Regenerate with ``python3 -m evaluation_examples.generators mariadb`` from the repository
root (see the package docstring).
"""
from __future__ import annotations

import hashlib

from .common import START_MARIADB, bash, clean, cmd, write_pairs
from .datasets import new_hires, samples

PAYROLL_REF = ("SELECT d.name AS department, count(*) AS headcount, sum(s.amount) AS total_salary "
               "FROM departments d JOIN employees e ON e.department_id = d.id "
               "JOIN salaries s ON s.employee_id = e.id AND s.to_date IS NULL "
               "GROUP BY d.id, d.name ORDER BY total_salary DESC, department")

RAISE_DEPT, RAISE_DATE = "Data", "2025-07-01"


def salary_digests() -> tuple[str, str]:
    """The text MariaDB's digest query hashes, before and after the right raise (md5 done in eval)."""
    d = samples()
    dept_id = next(i for i, name, _loc in d["departments"] if name == RAISE_DEPT)
    in_dept = {e[0] for e in d["employees"] if e[4] == dept_id}
    rows = [list(s) for s in d["salaries"]]
    after = []
    for emp, amount, frm, to in rows:
        if emp in in_dept and to is None:
            after.append([emp, amount, frm, RAISE_DATE])
            assert amount % 20 == 0, "amount * 1.05 would need rounding rules"
            after.append([emp, amount + amount // 20, RAISE_DATE, None])
        else:
            after.append([emp, amount, frm, to])

    def digest(rs):
        rs = sorted(rs, key=lambda r: (r[0], r[2]))
        return hashlib.md5(",".join(f"{e}|{a}|{f}|{t or ''}" for e, a, f, t in rs).encode()).hexdigest()
    return digest(rows), digest(after)


def salary_digest_sql(table: str) -> str:
    """MariaDB query printing the md5 of ``table``'s rows (salaries' columns), in a fixed order."""
    return ("SET SESSION group_concat_max_len = 10000000; SELECT MD5(GROUP_CONCAT(CONCAT_WS('|', "
            "employee_id, amount, from_date, IFNULL(to_date, '')) ORDER BY employee_id, from_date "
            f"SEPARATOR ',')) FROM {table}")


RAISE_SQL = (f"START TRANSACTION; CREATE TEMPORARY TABLE cur AS SELECT s.employee_id, s.amount FROM salaries s "
             f"JOIN employees e ON e.id = s.employee_id JOIN departments d ON d.id = e.department_id "
             f"WHERE d.name = '{RAISE_DEPT}' AND s.to_date IS NULL; UPDATE salaries s JOIN cur c ON "
             f"c.employee_id = s.employee_id SET s.to_date = '{RAISE_DATE}' WHERE s.to_date IS NULL; INSERT INTO "
             f"salaries (employee_id, amount, from_date, to_date) SELECT employee_id, ROUND(amount * 1.05), "
             f"'{RAISE_DATE}', NULL FROM cur; COMMIT;")

SALARY_VIEW_REF = ("SELECT e.id, CONCAT(e.first_name, ' ', e.last_name), d.name, s.amount FROM employees e JOIN "
                   "departments d ON d.id = e.department_id JOIN salaries s ON s.employee_id = e.id AND s.to_date "
                   "IS NULL")

SALARY_VIEW_SQL = ("CREATE VIEW current_salaries AS SELECT e.id AS employee_id, CONCAT(e.first_name, ' ', "
                   "e.last_name) AS full_name, d.name AS department, s.amount AS amount FROM employees e JOIN "
                   "departments d ON d.id = e.department_id JOIN salaries s ON s.employee_id = e.id AND s.to_date "
                   "IS NULL")

ARCHIVE_BEFORE = "2020-01-01"


def salary_archive() -> tuple[int, int, str]:
    """(rows left in salaries, rows archived, md5 of the archived rows as MariaDB's query prints them)."""
    rows = samples()["salaries"]
    old = sorted((r for r in rows if r[3] is not None and r[3] < ARCHIVE_BEFORE), key=lambda r: (r[0], r[2]))
    digest = hashlib.md5(",".join(f"{e}|{a}|{f}|{t}" for e, a, f, t in old).encode()).hexdigest()
    return len(rows) - len(old), len(old), digest


ARCHIVE_SQL = (f"START TRANSACTION; CREATE TABLE salaries_archive LIKE salaries; INSERT INTO salaries_archive "
               f"SELECT * FROM salaries WHERE to_date < '{ARCHIVE_BEFORE}'; DELETE FROM salaries WHERE to_date < "
               f"'{ARCHIVE_BEFORE}'; COMMIT;")


def pairs() -> list[dict]:
    """The task pairs of this module (``common`` describes their keys)."""
    before, after = salary_digests()
    hires_csv, hires_digest = new_hires()
    left, archived, digest = salary_archive()
    return [
        {
            "name": "mariadb_department_payroll",
            "id_seed": "data_batch1",
            "app": "mariadb",
            "category": "traditional_data_processing",
            "interface": "cli",
            "action_number": 3,
            "related_apps": ["mariadb", "terminal"],
            "source": ["https://mariadb.com/kb/en/select/", "https://mariadb.com/kb/en/mariadb-command-line-client/"],
            "abstract": "HR wants the current payroll per department from the MariaDB database hr. Write "
                        "/home/user/reports/dept_payroll.csv with the header department,headcount,total_salary: one "
                        "row per department with its number of employees and the sum of their current salaries (the "
                        "salary rows whose to_date is NULL), largest total first (ties by department name). The "
                        "database server is running.",
            "verbose": "Export the current payroll per department from MariaDB:\n"
                       "1. Open a terminal; `mariadb hr` connects you to the database (no password needed).\n"
                       "2. The current salary of an employee is the row of the salaries table whose to_date IS NULL. "
                       "Join departments, employees (employees.department_id = departments.id) and those salary "
                       "rows.\n"
                       "3. Group by department and select department (the department's name), headcount (count of "
                       "employees) and total_salary (sum of the current amounts), ordered by total_salary descending, "
                       "then by name.\n"
                       "4. Save the result as comma-separated values with the header line "
                       "department,headcount,total_salary to /home/user/reports/dept_payroll.csv (create the folder; "
                       "for example run the query with `mariadb -B hr -e \"...\"` and turn the tabs into commas).",
            "config": [START_MARIADB, clean("/home/user/reports/dept_payroll.csv")],
            "eval": f"""start-mariadb >/dev/null 2>&1
out=/home/user/reports/dept_payroll.csv
[ -f "$out" ] || fail "$out does not exist"
mariadb -B hr -e "{PAYROLL_REF}" | tr '\\t' ',' > /tmp/desktop_env_eval/ref.csv || fail "cannot query hr"
why=$(same_csv "$out" /tmp/desktop_env_eval/ref.csv ordered 2>&1) || fail "$why"
echo EVAL_OK
""",
            "solution": [cmd(f"mkdir -p /home/user/reports && mariadb -B hr -e \"{PAYROLL_REF}\" | tr '\\t' ',' > "
                             "/home/user/reports/dept_payroll.csv")],
        },
        {
            "name": "mariadb_data_team_raise",
            "id_seed": "data_batch2",
            "app": "mariadb",
            "category": "traditional_data_processing",
            "interface": "cli",
            "action_number": 4,
            "related_apps": ["mariadb", "terminal"],
            "source": ["https://mariadb.com/kb/en/update/", "https://mariadb.com/kb/en/insert-select/",
                       "https://mariadb.com/kb/en/round/"],
            "abstract": f"Give every employee of the {RAISE_DEPT} department a 5% raise effective {RAISE_DATE} in "
                        f"the MariaDB database hr, keeping the salary history: each of their current salary rows "
                        f"(to_date NULL) ends on {RAISE_DATE}, and a new current row starts on {RAISE_DATE} with "
                        f"the old amount * 1.05 rounded to a whole number. Nobody else's salary changes. The "
                        f"database server is running.",
            "verbose": f"Apply a raise with history in MariaDB:\n"
                       f"1. Open a terminal and connect with `mariadb hr`.\n"
                       f"2. The employees of the department are those with employees.department_id = the id of "
                       f"the department named '{RAISE_DEPT}'; their current salary row has to_date IS NULL.\n"
                       f"3. In one transaction: remember their current rows (e.g. CREATE TEMPORARY TABLE cur AS "
                       f"SELECT employee_id, amount ...), set to_date = '{RAISE_DATE}' on those rows, and INSERT "
                       f"new rows (employee_id, ROUND(amount * 1.05), '{RAISE_DATE}', NULL).\n"
                       f"4. COMMIT and check that each of them has exactly one row with to_date IS NULL.",
            "config": [START_MARIADB,
                       {"type": "execute", "parameters": {"command": bash(
                           "mariadb hr -e 'SELECT 1' >/dev/null"), "until": {"returncode": 0}}}],
            "eval": f"""start-mariadb >/dev/null 2>&1
got=$(mariadb -N -B hr -e "{salary_digest_sql('salaries')}" 2>&1)
[ "$got" = "{after}" ] || fail "salaries are not as expected (digest $got; the untouched start state is {before})"
echo EVAL_OK
""",
            "solution": [cmd(f"mariadb hr -e \"{RAISE_SQL}\"")],
        },
        {
            "name": "mariadb_load_new_hires",
            "id_seed": "data_batch3",
            "app": "mariadb",
            "category": "data_ingestion_and_integration",
            "interface": "cli",
            "action_number": 3,
            "related_apps": ["mariadb", "terminal"],
            "source": ["https://mariadb.com/kb/en/load-data-infile/",
                       "https://mariadb.com/kb/en/mariadb-command-line-client/"],
            "abstract": "HR sent the new hires as /home/user/Downloads/new_hires.csv (with a header line). Load "
                        "them into the employees table of the MariaDB database hr, with the ids and values exactly "
                        "as in the file. The database server is running.",
            "verbose": "Load a CSV file into a MariaDB table:\n"
                       "1. Open a terminal; look at the file with `head /home/user/Downloads/new_hires.csv`: its "
                       "columns are those of the employees table.\n"
                       "2. Run `mariadb --local-infile=1 hr` and then: LOAD DATA LOCAL INFILE "
                       "'/home/user/Downloads/new_hires.csv' INTO TABLE employees FIELDS TERMINATED BY ',' "
                       "LINES TERMINATED BY '\\n' IGNORE 1 LINES;\n"
                       "3. Check: SELECT count(*) FROM employees; gives 130.",
            "files": {"new_hires.csv": hires_csv},
            "config": [START_MARIADB,
                       {"type": "copyfile_from_host_to_guest", "parameters": {
                           "src": "{folder}/new_hires.csv", "dest": "/home/user/Downloads/new_hires.csv"}}],
            "eval": f"""start-mariadb >/dev/null 2>&1
n=$(mariadb -N -B hr -e "SELECT count(*) FROM employees" 2>&1)
[ "$n" = 130 ] || fail "employees has $n rows, expected 130"
got=$(mariadb -N -B hr -e "SET SESSION group_concat_max_len = 1000000; SELECT MD5(GROUP_CONCAT(CONCAT_WS('|', id, first_name, last_name, email, department_id, title, hire_date, IFNULL(manager_id, '')) ORDER BY id SEPARATOR ',')) FROM employees WHERE id > 120" 2>&1)
[ "$got" = "{hires_digest}" ] || fail "the new rows differ from the file (digest $got)"
echo EVAL_OK
""",
            "solution": [cmd("mariadb --local-infile=1 hr -e \"LOAD DATA LOCAL INFILE '/home/user/Downloads/new_hires.csv' "
                             "INTO TABLE employees FIELDS TERMINATED BY ',' LINES TERMINATED BY '\\n' IGNORE 1 LINES\"")],
        },
        {
            "name": "mariadb_current_salaries_view",
            "id_seed": "data_batch4",
            "app": "mariadb",
            "category": "data_warehousing",
            "interface": "cli",
            "action_number": 3,
            "related_apps": ["mariadb", "terminal"],
            "source": ["https://mariadb.com/kb/en/create-view/", "https://mariadb.com/kb/en/concat/"],
            "abstract": "In the MariaDB database hr, create a view current_salaries with one row per employee and "
                        "the columns employee_id, full_name (first name, a space, last name), department (the "
                        "department's name) and amount (the salary row whose to_date is NULL). The database "
                        "server is running.",
            "verbose": "Create a reporting view in MariaDB:\n"
                       "1. Open a terminal and connect with `mariadb hr`.\n"
                       "2. CREATE VIEW current_salaries AS SELECT e.id AS employee_id, CONCAT(e.first_name, ' ', "
                       "e.last_name) AS full_name, d.name AS department, s.amount AS amount FROM employees e JOIN "
                       "departments d ON d.id = e.department_id JOIN salaries s ON s.employee_id = e.id AND "
                       "s.to_date IS NULL;\n"
                       "3. Check: SELECT count(*) FROM current_salaries; gives 120.",
            "config": [START_MARIADB, {"type": "execute", "parameters": {"command": bash(
                "mariadb hr -e 'DROP VIEW IF EXISTS current_salaries'"), "until": {"returncode": 0}}}],
            "eval": f"""start-mariadb >/dev/null 2>&1
kind=$(mariadb -N -B hr -e "SELECT table_type FROM information_schema.tables WHERE table_schema = 'hr' AND table_name = 'current_salaries'" 2>&1)
[ "$kind" = VIEW ] || fail "current_salaries is not a view in hr (found: '$kind')"
cols=$(mariadb -N -B hr -e "SELECT GROUP_CONCAT(column_name ORDER BY ordinal_position) FROM information_schema.columns WHERE table_schema = 'hr' AND table_name = 'current_salaries'" 2>&1)
[ "$cols" = employee_id,full_name,department,amount ] || fail "columns are $cols"
res=$(mariadb -N -B hr -e "SELECT (SELECT COUNT(*) FROM current_salaries), (SELECT COUNT(*) FROM ((SELECT * FROM current_salaries) EXCEPT ALL ({SALARY_VIEW_REF})) a), (SELECT COUNT(*) FROM (({SALARY_VIEW_REF}) EXCEPT ALL (SELECT * FROM current_salaries)) b)" 2>&1)
[ "$res" = "$(printf '120\\t0\\t0')" ] || fail "rows/mismatches: $res"
echo EVAL_OK
""",
            "solution": [cmd(f"mariadb hr -e \"{SALARY_VIEW_SQL}\"")],
        },
        {
            "name": "mariadb_archive_old_salaries",
            "id_seed": "data_batch5",
            "app": "mariadb",
            "category": "traditional_data_processing",
            "interface": "cli",
            "action_number": 4,
            "related_apps": ["mariadb", "terminal"],
            "source": ["https://mariadb.com/kb/en/create-table/#create-table-like",
                       "https://mariadb.com/kb/en/insert-select/", "https://mariadb.com/kb/en/delete/"],
            "abstract": f"In the MariaDB database hr, move the salary history that ended before {ARCHIVE_BEFORE} "
                        f"(rows of salaries whose to_date is earlier than that) into a new table salaries_archive "
                        f"with the same columns, and remove those rows from salaries. No row may be lost or "
                        f"duplicated. The database server is running.",
            "verbose": f"Archive old rows in MariaDB:\n"
                       f"1. Open a terminal and connect with `mariadb hr`.\n"
                       f"2. START TRANSACTION; CREATE TABLE salaries_archive LIKE salaries;\n"
                       f"3. INSERT INTO salaries_archive SELECT * FROM salaries WHERE to_date < '{ARCHIVE_BEFORE}';\n"
                       f"4. DELETE FROM salaries WHERE to_date < '{ARCHIVE_BEFORE}'; COMMIT;\n"
                       f"5. Check that the two tables' row counts add up to the old count of salaries.",
            "config": [START_MARIADB, {"type": "execute", "parameters": {"command": bash(
                "mariadb hr -e 'DROP TABLE IF EXISTS salaries_archive'"), "until": {"returncode": 0}}}],
            "eval": f"""start-mariadb >/dev/null 2>&1
res=$(mariadb -N -B hr -e "SELECT (SELECT COUNT(*) FROM salaries), (SELECT COUNT(*) FROM salaries_archive), (SELECT COUNT(*) FROM salaries WHERE to_date < '{ARCHIVE_BEFORE}')" 2>&1)
[ "$res" = "$(printf '{left}\\t{archived}\\t0')" ] || fail "salaries / archive / old rows left: $res (expected {left} / {archived} / 0)"
got=$(mariadb -N -B hr -e "{salary_digest_sql('salaries_archive')}" 2>&1)
[ "$got" = "{digest}" ] || fail "the archived rows are not the old rows (digest $got)"
echo EVAL_OK
""",
            "solution": [cmd(f"mariadb hr -e \"{ARCHIVE_SQL}\"")],
        },
    ]


def main() -> None:
    """Write this module's tasks and index them."""
    write_pairs(pairs())
