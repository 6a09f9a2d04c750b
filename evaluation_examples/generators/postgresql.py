"""PostgreSQL task pairs (``examples/postgresql``) on the ``data`` image.

Views, a materialized view, constraints, window functions and a generated column on the
sample database ``analytics``; a service-desk triage on a ``servicedesk`` database the task
brings along; a read-only login, a backup, a CSV load; and two infeasible requests (a table
that does not exist, a backup that does not exist).

Regenerate with ``python3 -m evaluation_examples.generators postgresql`` from the repository
root (see the package docstring).
"""
from __future__ import annotations

from .common import START_POSTGRES, bash, clean, cmd, write_pairs
from .datasets import new_customers_csv, new_customers_digest, servicedesk

LTV_REF = ("SELECT c.id AS customer_id, c.email, count(DISTINCT o.id) FILTER (WHERE o.status IN "
           "('completed','shipped'))::bigint AS orders, coalesce(sum(i.quantity * i.unit_price) FILTER (WHERE "
           "o.status IN ('completed','shipped')), 0)::numeric(14,2) AS lifetime_value FROM customers c "
           "LEFT JOIN orders o ON o.customer_id = c.id LEFT JOIN order_items i ON i.order_id = o.id "
           "GROUP BY c.id, c.email")

LTV_VIEW = ("CREATE VIEW public.customer_ltv AS SELECT c.id AS customer_id, c.email, count(DISTINCT o.id) "
            "FILTER (WHERE o.status IN ('completed', 'shipped')) AS orders, coalesce(sum(i.quantity * i.unit_price) "
            "FILTER (WHERE o.status IN ('completed', 'shipped')), 0) AS lifetime_value FROM customers c "
            "LEFT JOIN orders o ON o.customer_id = c.id LEFT JOIN order_items i ON i.order_id = o.id "
            "GROUP BY c.id, c.email;")

CATEGORY_REF = ("SELECT p.category, count(DISTINCT o.id) AS orders, round(sum(i.quantity * i.unit_price), 2) "
                "AS revenue FROM orders o JOIN order_items i ON i.order_id = o.id JOIN products p ON "
                "p.id = i.product_id WHERE o.status IN ('completed', 'shipped') GROUP BY p.category "
                "ORDER BY revenue DESC, p.category")

CONSTRAINT_SQL = ("ALTER TABLE orders ADD CONSTRAINT orders_status_check CHECK (status IN ('completed', 'shipped', "
                  "'returned', 'cancelled', 'pending')); CREATE INDEX orders_customer_date_idx ON orders "
                  "(customer_id, order_date);")

MATVIEW_SQL = ("CREATE MATERIALIZED VIEW public.monthly_sales AS SELECT date_trunc('month', o.order_date)::date AS "
               "month, sum(i.quantity * i.unit_price) AS revenue FROM orders o JOIN order_items i ON i.order_id = "
               "o.id WHERE o.status IN ('completed', 'shipped') GROUP BY 1; CREATE UNIQUE INDEX monthly_sales_month_idx "
               "ON public.monthly_sales (month);")

MATVIEW_REF = ("SELECT date_trunc('month', o.order_date)::date AS month, sum(i.quantity * i.unit_price)::numeric(14,2) "
               "AS revenue FROM orders o JOIN order_items i ON i.order_id = o.id WHERE o.status IN ('completed', "
               "'shipped') GROUP BY 1")

GRANT_SQL = ("CREATE ROLE bi_reader LOGIN PASSWORD 'bi-pass'; GRANT CONNECT ON DATABASE analytics TO bi_reader; "
             "GRANT USAGE ON SCHEMA public TO bi_reader; GRANT SELECT ON ALL TABLES IN SCHEMA public TO bi_reader;")

RANK_SQL = ("CREATE TABLE public.customer_country_rank AS WITH ltv AS (SELECT c.id AS customer_id, c.country, "
            "coalesce(sum(i.quantity * i.unit_price) FILTER (WHERE o.status IN ('completed', 'shipped')), 0) AS "
            "lifetime_value FROM customers c LEFT JOIN orders o ON o.customer_id = c.id LEFT JOIN order_items i ON "
            "i.order_id = o.id GROUP BY c.id, c.country) SELECT customer_id, country, lifetime_value, rank() OVER "
            "(PARTITION BY country ORDER BY lifetime_value DESC) AS rank_in_country FROM ltv;")

RANK_REF = ("WITH ltv AS (SELECT c.id AS customer_id, c.country::text AS country, coalesce(sum(i.quantity * "
            "i.unit_price) FILTER (WHERE o.status IN ('completed', 'shipped')), 0)::numeric(14,2) AS lifetime_value "
            "FROM customers c LEFT JOIN orders o ON o.customer_id = c.id LEFT JOIN order_items i ON i.order_id = o.id "
            "GROUP BY c.id, c.country) SELECT customer_id, country, lifetime_value, rank() OVER (PARTITION BY country "
            "ORDER BY lifetime_value DESC)::bigint AS rank_in_country FROM ltv")

GENERATED_SQL = ("ALTER TABLE orders ADD COLUMN order_month date GENERATED ALWAYS AS "
                 "(date_trunc('month', order_date::timestamp)::date) STORED;")


def pairs() -> list[dict]:
    """The task pairs of this module (``common`` describes their keys)."""
    sd_sql, sd_before, sd_after, _targets = servicedesk()
    return [
        {
            "name": "postgres_customer_ltv",
            "id_seed": "data_batch1",
            "app": "postgresql",
            "category": "data_warehousing",
            "interface": "cli",
            "action_number": 3,
            "related_apps": ["postgresql", "terminal"],
            "source": ["https://www.postgresql.org/docs/15/sql-createview.html",
                       "https://www.postgresql.org/docs/15/sql-expressions.html#SYNTAX-AGGREGATES"],
            "abstract": "In the PostgreSQL database analytics, create a view public.customer_ltv with one row per "
                        "customer and the columns customer_id, email, orders and lifetime_value: orders is the "
                        "number of the customer's orders whose status is completed or shipped, lifetime_value the "
                        "sum of quantity * unit_price over those orders' items (0 when there are none). The database "
                        "server is running.",
            "verbose": "Create a customer lifetime-value view in PostgreSQL:\n"
                       "1. Open a terminal and connect with `psql -d analytics` (the server is running; you are "
                       "allowed in without a password).\n"
                       "2. Run CREATE VIEW public.customer_ltv AS SELECT ... over the tables customers, orders and "
                       "order_items, with the columns customer_id (customers.id), email, orders and "
                       "lifetime_value.\n"
                       "3. orders counts the customer's distinct orders whose status is 'completed' or 'shipped'; "
                       "lifetime_value is the sum of order_items.quantity * order_items.unit_price over those "
                       "orders. Keep every customer: use LEFT JOINs and coalesce the sum to 0.\n"
                       "4. Check it with SELECT * FROM customer_ltv ORDER BY lifetime_value DESC LIMIT 5; "
                       "it must return 200 rows in total.",
            "config": [START_POSTGRES,
                       {"type": "execute", "parameters": {"command": bash(
                           "psql -qX -d analytics -c 'DROP VIEW IF EXISTS public.customer_ltv'")}}],
            "eval": f"""start-postgres >/dev/null 2>&1
kind=$(psql -AtX -c "SELECT table_type FROM information_schema.tables WHERE table_schema='public' AND table_name='customer_ltv'")
[ "$kind" = VIEW ] || fail "public.customer_ltv is not a view (found: '$kind')"
cols=$(psql -AtX -c "SELECT string_agg(column_name, ',' ORDER BY ordinal_position) FROM information_schema.columns WHERE table_schema='public' AND table_name='customer_ltv'")
[ "$cols" = customer_id,email,orders,lifetime_value ] || fail "columns are $cols"
diff=$(psql -AtX -v ON_ERROR_STOP=1 -c "WITH v AS (SELECT customer_id, email, orders::bigint, lifetime_value::numeric(14,2) FROM customer_ltv), r AS ({LTV_REF}) SELECT (SELECT count(*) FROM v) || ' ' || (SELECT count(*) FROM ((TABLE v EXCEPT ALL TABLE r) UNION ALL (TABLE r EXCEPT ALL TABLE v)) x)" 2>&1)
[ "$diff" = "200 0" ] || fail "rows/mismatches: $diff"
echo EVAL_OK
""",
            "solution": [cmd(f"psql -X -v ON_ERROR_STOP=1 -d analytics -c \"{LTV_VIEW}\"")],
        },
        {
            "name": "servicedesk_assign_p1",
            "id_seed": "data_batch1",
            "app": "postgresql",
            "category": "it_service_management",
            "interface": "cli",
            "action_number": 3,
            "related_apps": ["postgresql", "terminal"],
            "source": ["https://www.postgresql.org/docs/15/sql-update.html",
                       "https://www.postgresql.org/docs/15/functions-subquery.html"],
            "abstract": "You are on the data team's service desk, kept in the PostgreSQL database servicedesk. "
                        "Every open P1 ticket that nobody is assigned to must go to the agent who is currently on "
                        "call (table agents) and be marked in_progress. Do not change any other ticket. The "
                        "database server is running.",
            "verbose": "Triage the service desk's unassigned P1 tickets:\n"
                       "1. Open a terminal and connect with `psql -d servicedesk`.\n"
                       "2. Find the on-call agent: SELECT username FROM agents WHERE on_call;\n"
                       "3. Update the tickets whose status is 'open', priority 'P1' and assignee IS NULL: set "
                       "assignee to that username and status to 'in_progress' (one UPDATE statement).\n"
                       "4. Leave every other ticket untouched: P1 tickets that already have an assignee, closed or "
                       "resolved ones, and tickets of other priorities.",
            "files": {"servicedesk.sql": sd_sql},
            "config": [START_POSTGRES,
                       {"type": "copyfile_from_host_to_guest", "parameters": {
                           "src": "{folder}/servicedesk.sql", "dest": "/tmp/desktop_env_setup/servicedesk.sql"}},
                       {"type": "execute", "parameters": {"command": bash(
                           "dropdb --if-exists servicedesk && createdb servicedesk && "
                           "psql -qX -v ON_ERROR_STOP=1 -d servicedesk -f /tmp/desktop_env_setup/servicedesk.sql && "
                           "rm -f /tmp/desktop_env_setup/servicedesk.sql"), "until": {"returncode": 0}}}],
            "eval": f"""start-postgres >/dev/null 2>&1
got=$(psql -AtX -d servicedesk -c "SELECT md5(string_agg(id || '|' || status || '|' || coalesce(assignee, ''), ',' ORDER BY id)) FROM tickets" 2>&1)
[ "$got" = "{sd_after}" ] || fail "tickets are not as expected (digest $got; unchanged start state is {sd_before})"
echo EVAL_OK
""",
            "solution": [cmd("psql -X -v ON_ERROR_STOP=1 -d servicedesk -c \"UPDATE tickets SET assignee = (SELECT "
                             "username FROM agents WHERE on_call), status = 'in_progress' WHERE status = 'open' AND "
                             "priority = 'P1' AND assignee IS NULL\"")],
        },
        {
            "name": "postgres_refunds_infeasible",
            "id_seed": "data_batch1",
            "app": "postgresql",
            "category": "data_analysis_and_visualization",
            "interface": "cli",
            "action_number": 2,
            "related_apps": ["postgresql", "terminal"],
            "infeasible": True,
            "source": ["https://www.postgresql.org/docs/15/app-psql.html"],
            "abstract": "Using the table public.refunds of the PostgreSQL database analytics, write each customer's "
                        "total refunded amount to /home/user/reports/refunds_by_customer.csv (header "
                        "customer_id,refunded). The database server is running. If this cannot be done, say so.",
            "verbose": "Report refunds per customer:\n"
                       "1. Open a terminal and connect with `psql -d analytics`.\n"
                       "2. Join public.refunds to public.customers and sum the refunded amount per customer.\n"
                       "3. Export the result with \\copy to /home/user/reports/refunds_by_customer.csv with the header "
                       "customer_id,refunded.\n"
                       "If a table or column this needs does not exist, do not invent data: report that the task "
                       "cannot be done.",
            "config": [START_POSTGRES],
        },
        {
            "name": "postgres_category_revenue",
            "id_seed": "data_batch1",
            "app": "postgresql",
            "category": "data_analysis_and_visualization",
            "interface": "cli",
            "action_number": 3,
            "related_apps": ["postgresql", "terminal"],
            "source": ["https://www.postgresql.org/docs/15/tutorial-agg.html",
                       "https://www.postgresql.org/docs/15/app-psql.html#APP-PSQL-META-COMMANDS-COPY"],
            "abstract": "From the PostgreSQL database analytics, report revenue per product category over orders "
                        "whose status is completed or shipped: write /home/user/reports/category_revenue.csv with the "
                        "header category,orders,revenue, where orders is the number of distinct orders with at least "
                        "one item of the category and revenue the sum of quantity * unit_price of those items, "
                        "rounded to 2 decimals, highest revenue first. The database server is running.",
            "verbose": "Export revenue per category from PostgreSQL:\n"
                       "1. Open a terminal and connect with `psql -d analytics`.\n"
                       "2. Join orders, order_items (order_items.order_id = orders.id) and products "
                       "(products.id = order_items.product_id), keeping orders with status 'completed' or "
                       "'shipped'.\n"
                       "3. Group by products.category and select category, count(DISTINCT orders.id) AS orders and "
                       "round(sum(quantity * order_items.unit_price), 2) AS revenue, ordered by revenue descending.\n"
                       "4. Write it with `\\copy (SELECT ...) TO '/home/user/reports/category_revenue.csv' CSV HEADER` "
                       "after creating /home/user/reports.",
            "config": [START_POSTGRES, clean("/home/user/reports/category_revenue.csv")],
            "eval": f"""start-postgres >/dev/null 2>&1
out=/home/user/reports/category_revenue.csv
[ -f "$out" ] || fail "$out does not exist"
psql -AtX -c "\\copy ({CATEGORY_REF}) TO '/tmp/desktop_env_eval/ref.csv' CSV HEADER" >/dev/null 2>&1 || fail "cannot query analytics"
why=$(same_csv "$out" /tmp/desktop_env_eval/ref.csv ordered 2>&1) || fail "$why"
echo EVAL_OK
""",
            "solution": [cmd("mkdir -p /home/user/reports && psql -X -d analytics -c \"\\copy (" + CATEGORY_REF
                             + ") TO '/home/user/reports/category_revenue.csv' CSV HEADER\"")],
        },
        {
            "name": "postgres_orders_constraint_index",
            "id_seed": "data_batch2",
            "app": "postgresql",
            "category": "data_warehousing",
            "interface": "cli",
            "action_number": 3,
            "related_apps": ["postgresql", "terminal"],
            "source": ["https://www.postgresql.org/docs/15/ddl-constraints.html#DDL-CONSTRAINTS-CHECK-CONSTRAINTS",
                       "https://www.postgresql.org/docs/15/sql-createindex.html"],
            "abstract": "Harden the orders table of the PostgreSQL database analytics: add a check constraint "
                        "named orders_status_check that only allows the statuses completed, shipped, returned, "
                        "cancelled and pending, and an index named orders_customer_date_idx on (customer_id, "
                        "order_date) for the per-customer timeline queries. The database server is running.",
            "verbose": "Add a constraint and an index in PostgreSQL:\n"
                       "1. Open a terminal and connect with `psql -d analytics`.\n"
                       "2. ALTER TABLE orders ADD CONSTRAINT orders_status_check CHECK (status IN ('completed', "
                       "'shipped', 'returned', 'cancelled', 'pending'));\n"
                       "3. CREATE INDEX orders_customer_date_idx ON orders (customer_id, order_date);\n"
                       "4. Check with \\d orders.",
            "config": [START_POSTGRES,
                       {"type": "execute", "parameters": {"command": bash(
                           "psql -qX -d analytics -c 'ALTER TABLE orders DROP CONSTRAINT IF EXISTS "
                           "orders_status_check; DROP INDEX IF EXISTS orders_customer_date_idx'")}}],
            "eval": """start-postgres >/dev/null 2>&1
idx=$(psql -AtX -c "SELECT indexdef FROM pg_indexes WHERE tablename = 'orders' AND indexname = 'orders_customer_date_idx'")
case "$idx" in *"(customer_id, order_date)"*) ;; *) fail "no index orders_customer_date_idx on (customer_id, order_date): '$idx'";; esac
con=$(psql -AtX -c "SELECT count(*) FROM pg_constraint WHERE conname = 'orders_status_check' AND conrelid = 'orders'::regclass AND contype = 'c' AND convalidated")
[ "$con" = 1 ] || fail "no validated check constraint orders_status_check on orders"
for s in completed shipped returned cancelled pending; do
  out=$(psql -AtX -v ON_ERROR_STOP=1 -c "BEGIN; INSERT INTO orders VALUES (999999, 1, '2025-01-01', '$s'); ROLLBACK;" 2>&1) || fail "status $s is refused: $out"
done
out=$(psql -AtX -v ON_ERROR_STOP=1 -c "BEGIN; INSERT INTO orders VALUES (999999, 1, '2025-01-01', 'lost'); ROLLBACK;" 2>&1) && fail "status 'lost' is accepted"
case "$out" in *orders_status_check*) ;; *) fail "status 'lost' failed for another reason: $out";; esac
echo EVAL_OK
""",
            "solution": [cmd(f"psql -X -v ON_ERROR_STOP=1 -d analytics -c \"{CONSTRAINT_SQL}\"")],
        },
        {
            "name": "postgres_monthly_sales_matview",
            "id_seed": "data_batch3",
            "app": "postgresql",
            "category": "data_warehousing",
            "interface": "cli",
            "action_number": 3,
            "related_apps": ["postgresql", "terminal"],
            "source": ["https://www.postgresql.org/docs/15/sql-creatematerializedview.html",
                       "https://www.postgresql.org/docs/15/sql-refreshmaterializedview.html"],
            "abstract": "In the PostgreSQL database analytics, create a materialized view public.monthly_sales with "
                        "the columns month (the first day of the month, type date) and revenue (sum of quantity * "
                        "unit_price of the items of completed or shipped orders in that month), one row per "
                        "month, and make it possible to refresh it concurrently (without blocking readers). The "
                        "database server is running.",
            "verbose": "Create a materialized view that can be refreshed concurrently:\n"
                       "1. Open a terminal and connect with `psql -d analytics`.\n"
                       "2. CREATE MATERIALIZED VIEW public.monthly_sales AS SELECT date_trunc('month', "
                       "o.order_date)::date AS month, sum(i.quantity * i.unit_price) AS revenue FROM orders o "
                       "JOIN order_items i ON i.order_id = o.id WHERE o.status IN ('completed', 'shipped') GROUP "
                       "BY 1;\n"
                       "3. REFRESH ... CONCURRENTLY needs a unique index on the view: CREATE UNIQUE INDEX "
                       "monthly_sales_month_idx ON public.monthly_sales (month);\n"
                       "4. Test it with REFRESH MATERIALIZED VIEW CONCURRENTLY monthly_sales;",
            "config": [START_POSTGRES, {"type": "execute", "parameters": {"command": bash(
                "psql -qX -d analytics -c 'DROP MATERIALIZED VIEW IF EXISTS public.monthly_sales'")}}],
            "eval": f"""start-postgres >/dev/null 2>&1
n=$(psql -AtX -c "SELECT count(*) FROM pg_matviews WHERE schemaname = 'public' AND matviewname = 'monthly_sales'")
[ "$n" = 1 ] || fail "public.monthly_sales is not a materialized view"
out=$(psql -AtX -v ON_ERROR_STOP=1 -c "REFRESH MATERIALIZED VIEW CONCURRENTLY public.monthly_sales" 2>&1) || fail "cannot refresh it concurrently: $out"
res=$(psql -AtX -v ON_ERROR_STOP=1 -c "WITH m AS (SELECT month::date, revenue::numeric(14,2) FROM public.monthly_sales), r AS ({MATVIEW_REF}) SELECT (SELECT count(*) FROM ((TABLE m EXCEPT ALL TABLE r) UNION ALL (TABLE r EXCEPT ALL TABLE m)) x)" 2>&1)
[ "$res" = 0 ] || fail "monthly_sales differs from the orders: $res"
echo EVAL_OK
""",
            "solution": [cmd(f"psql -X -v ON_ERROR_STOP=1 -d analytics -c \"{MATVIEW_SQL}\"")],
        },
        {
            "name": "postgres_bi_reader_access",
            "id_seed": "data_batch3",
            "app": "postgresql",
            "category": "it_service_management",
            "interface": "cli",
            "action_number": 3,
            "related_apps": ["postgresql", "terminal"],
            "source": ["https://www.postgresql.org/docs/15/sql-createrole.html",
                       "https://www.postgresql.org/docs/15/sql-grant.html"],
            "abstract": "Access request from the BI team: they need a PostgreSQL login bi_reader with the password "
                        "bi-pass that can read (SELECT) every table in the schema public of the database analytics "
                        "over TCP on 127.0.0.1, and must not be able to change any data. Set it up. The database "
                        "server is running.",
            "verbose": "Create a read-only PostgreSQL login:\n"
                       "1. Open a terminal and connect with `psql -d analytics` (you are a superuser).\n"
                       "2. CREATE ROLE bi_reader LOGIN PASSWORD 'bi-pass'; (not a superuser).\n"
                       "3. GRANT CONNECT ON DATABASE analytics TO bi_reader; GRANT USAGE ON SCHEMA public TO "
                       "bi_reader; GRANT SELECT ON ALL TABLES IN SCHEMA public TO bi_reader;\n"
                       "4. Test: `PGPASSWORD=bi-pass psql -h 127.0.0.1 -U bi_reader -d analytics -c 'SELECT "
                       "count(*) FROM orders'` works, and an INSERT is refused.",
            "config": [START_POSTGRES],
            "eval": """start-postgres >/dev/null 2>&1
export PGPASSWORD=bi-pass
as_bi() { psql -AtX -v ON_ERROR_STOP=1 -h 127.0.0.1 -U bi_reader -d analytics -c "$1" 2>&1; }
su=$(PGPASSWORD= psql -AtX -c "SELECT rolsuper FROM pg_roles WHERE rolname = 'bi_reader'")
[ "$su" = f ] || fail "bi_reader does not exist or is a superuser ('$su')"
for t in customers products orders order_items payments; do
  out=$(as_bi "SELECT count(*) FROM $t") || fail "bi_reader cannot read $t: $out"
done
out=$(as_bi "BEGIN; INSERT INTO orders VALUES (999999, 1, '2025-01-01', 'pending'); ROLLBACK;") && fail "bi_reader can insert into orders"
case "$out" in *"permission denied"*) ;; *) fail "the insert failed for another reason: $out";; esac
out=$(as_bi "BEGIN; DELETE FROM payments; ROLLBACK;") && fail "bi_reader can delete payments"
echo EVAL_OK
""",
            "solution": [cmd(f"psql -X -v ON_ERROR_STOP=1 -d analytics -c \"{GRANT_SQL}\"")],
        },
        {
            "name": "postgres_backup_dump",
            "id_seed": "data_batch3",
            "app": "postgresql",
            "category": "it_service_management",
            "interface": "cli",
            "action_number": 2,
            "related_apps": ["postgresql", "terminal"],
            "source": ["https://www.postgresql.org/docs/15/app-pgdump.html",
                       "https://www.postgresql.org/docs/15/app-pgrestore.html"],
            "abstract": "Before tonight's migration, back up the whole PostgreSQL database analytics (schema and "
                        "data) to /home/user/backups/analytics.dump in pg_dump's custom format, so that it can be "
                        "restored selectively with pg_restore. The database server is running.",
            "verbose": "Back up a PostgreSQL database:\n"
                       "1. Open a terminal and create the folder /home/user/backups.\n"
                       "2. Run `pg_dump -Fc -d analytics -f /home/user/backups/analytics.dump` (-Fc is the custom "
                       "format).\n"
                       "3. Check it with `pg_restore -l /home/user/backups/analytics.dump`, which lists the "
                       "tables and their data.",
            "config": [START_POSTGRES, clean("/home/user/backups")],
            "eval": """start-postgres >/dev/null 2>&1
f=/home/user/backups/analytics.dump
[ -f "$f" ] || fail "$f does not exist"
list=$(pg_restore -l "$f" 2>&1) || fail "pg_restore cannot read it (not a custom-format dump?): $list"
for t in customers products orders order_items payments; do
  echo "$list" | grep -q "TABLE DATA public $t " || fail "the dump has no data of table $t"
done
echo EVAL_OK
""",
            "solution": [cmd("mkdir -p /home/user/backups && pg_dump -Fc -d analytics -f /home/user/backups/analytics.dump")],
        },
        {
            "name": "postgres_append_customers_csv",
            "id_seed": "data_batch3",
            "app": "postgresql",
            "category": "data_ingestion_and_integration",
            "interface": "cli",
            "action_number": 3,
            "related_apps": ["postgresql", "terminal"],
            "source": ["https://www.postgresql.org/docs/15/app-psql.html#APP-PSQL-META-COMMANDS-COPY",
                       "https://www.postgresql.org/docs/15/sql-copy.html"],
            "abstract": "Append the customers of /home/user/Downloads/new_customers.csv (with a header line, same "
                        "columns as the table) to the customers table of the PostgreSQL database analytics, with "
                        "their ids and values exactly as in the file. The database server is running.",
            "verbose": "Append a CSV file to a PostgreSQL table:\n"
                       "1. Open a terminal and look at the file: `head /home/user/Downloads/new_customers.csv` "
                       "(columns id,first_name,last_name,email,country,signup_date).\n"
                       "2. Run `psql -d analytics -c \"\\copy customers FROM '/home/user/Downloads/"
                       "new_customers.csv' CSV HEADER\"` (the client-side copy reads the file as you).\n"
                       "3. Check: SELECT count(*) FROM customers; gives 215.",
            "files": {"new_customers.csv": new_customers_csv()},
            "config": [START_POSTGRES,
                       {"type": "copyfile_from_host_to_guest", "parameters": {
                           "src": "{folder}/new_customers.csv", "dest": "/home/user/Downloads/new_customers.csv"}}],
            "eval": f"""start-postgres >/dev/null 2>&1
n=$(psql -AtX -c "SELECT count(*) FROM customers" 2>&1)
[ "$n" = 215 ] || fail "customers has $n rows, expected 215"
got=$(psql -AtX -c "SELECT md5(string_agg(concat_ws('|', id, first_name, last_name, email, country, signup_date), ',' ORDER BY id)) FROM customers WHERE id > 200" 2>&1)
[ "$got" = "{new_customers_digest()}" ] || fail "the new rows differ from the file (digest $got)"
echo EVAL_OK
""",
            "solution": [cmd("psql -X -v ON_ERROR_STOP=1 -d analytics -c \"\\copy customers FROM "
                             "'/home/user/Downloads/new_customers.csv' CSV HEADER\"")],
        },
        {
            "name": "postgres_rank_in_country",
            "id_seed": "data_batch4",
            "app": "postgresql",
            "category": "data_analysis_and_visualization",
            "interface": "cli",
            "action_number": 3,
            "related_apps": ["postgresql", "terminal"],
            "source": ["https://www.postgresql.org/docs/15/tutorial-window.html",
                       "https://www.postgresql.org/docs/15/functions-window.html"],
            "abstract": "In the PostgreSQL database analytics, create a table public.customer_country_rank with one "
                        "row per customer: customer_id, country, lifetime_value (sum of quantity * unit_price over "
                        "the customer's completed or shipped orders, 0 when none) and rank_in_country (the rank of "
                        "that value among the customers of the same country, 1 = highest, ties share a rank as "
                        "with SQL's rank()). The database server is running.",
            "verbose": "Rank customers within their country with a window function:\n"
                       "1. Open a terminal and connect with `psql -d analytics`.\n"
                       "2. Compute each customer's lifetime value in a CTE: customers LEFT JOIN orders LEFT JOIN "
                       "order_items, summing quantity * unit_price only where the order's status is completed or "
                       "shipped (coalesce to 0), grouped by customer id and country.\n"
                       "3. CREATE TABLE public.customer_country_rank AS WITH ltv AS (...) SELECT customer_id, "
                       "country, lifetime_value, rank() OVER (PARTITION BY country ORDER BY lifetime_value DESC) "
                       "AS rank_in_country FROM ltv;\n"
                       "4. Check that it has 200 rows.",
            "config": [START_POSTGRES, {"type": "execute", "parameters": {"command": bash(
                "psql -qX -d analytics -c 'DROP TABLE IF EXISTS public.customer_country_rank'")}}],
            "eval": f"""start-postgres >/dev/null 2>&1
res=$(psql -AtX -v ON_ERROR_STOP=1 -c "WITH t AS (SELECT customer_id, country::text, lifetime_value::numeric(14,2), rank_in_country::bigint FROM public.customer_country_rank), r AS ({RANK_REF}) SELECT (SELECT count(*) FROM t) || ' ' || (SELECT count(*) FROM ((TABLE t EXCEPT ALL TABLE r) UNION ALL (TABLE r EXCEPT ALL TABLE t)) x)" 2>&1)
[ "$res" = "200 0" ] || fail "rows/mismatches: $res"
echo EVAL_OK
""",
            "solution": [cmd(f"psql -X -v ON_ERROR_STOP=1 -d analytics -c \"{RANK_SQL}\"")],
        },
        {
            "name": "postgres_restore_missing_backup_infeasible",
            "id_seed": "data_batch4",
            "app": "postgresql",
            "category": "it_service_management",
            "interface": "cli",
            "action_number": 3,
            "related_apps": ["postgresql", "terminal"],
            "infeasible": True,
            "source": ["https://www.postgresql.org/docs/15/app-pgrestore.html"],
            "abstract": "An incident ticket asks to restore the orders table of the PostgreSQL database analytics "
                        "from last night's backup /home/user/backups/analytics_2025-11-22.dump. Do the restore. "
                        "If this cannot be done here, say so.",
            "verbose": "Restore one table from a pg_dump backup:\n"
                       "1. Open a terminal and check the backup: `pg_restore -l "
                       "/home/user/backups/analytics_2025-11-22.dump`.\n"
                       "2. Restore the table's data: `pg_restore -d analytics --data-only -t orders --clean "
                       "/home/user/backups/analytics_2025-11-22.dump`.\n"
                       "If the backup file does not exist, do not restore anything else: report that the task "
                       "cannot be done.",
            "config": [START_POSTGRES, clean("/home/user/backups/analytics_2025-11-22.dump")],
        },
        {
            "name": "postgres_generated_order_month",
            "id_seed": "data_batch5",
            "app": "postgresql",
            "category": "data_transformation",
            "interface": "cli",
            "action_number": 2,
            "related_apps": ["postgresql", "terminal"],
            "source": ["https://www.postgresql.org/docs/15/ddl-generated-columns.html",
                       "https://www.postgresql.org/docs/15/functions-datetime.html#FUNCTIONS-DATETIME-TRUNC"],
            "abstract": "Add a column order_month (type date: the first day of the order's month) to the orders "
                        "table of the PostgreSQL database analytics, computed by the database itself from "
                        "order_date for existing and future rows (a stored generated column). The database "
                        "server is running.",
            "verbose": "Add a stored generated column in PostgreSQL:\n"
                       "1. Open a terminal and connect with `psql -d analytics`.\n"
                       "2. ALTER TABLE orders ADD COLUMN order_month date GENERATED ALWAYS AS (date_trunc('month', "
                       "order_date::timestamp)::date) STORED; (the cast to timestamp keeps the expression "
                       "immutable, which generated columns require).\n"
                       "3. Check: SELECT order_date, order_month FROM orders LIMIT 5;",
            "config": [START_POSTGRES, {"type": "execute", "parameters": {"command": bash(
                "psql -qX -d analytics -c 'ALTER TABLE orders DROP COLUMN IF EXISTS order_month'")}}],
            "eval": """start-postgres >/dev/null 2>&1
gen=$(psql -AtX -c "SELECT attgenerated::text || '|' || format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = 'orders'::regclass AND attname = 'order_month' AND NOT attisdropped" 2>&1)
[ "$gen" = "s|date" ] || fail "orders.order_month is not a stored generated date column ('$gen')"
bad=$(psql -AtX -c "SELECT count(*) FROM orders WHERE order_month IS DISTINCT FROM date_trunc('month', order_date::timestamp)::date" 2>&1)
[ "$bad" = 0 ] || fail "$bad rows have a wrong order_month"
echo EVAL_OK
""",
            "solution": [cmd(f"psql -X -v ON_ERROR_STOP=1 -d analytics -c \"{GENERATED_SQL}\"")],
        },
    ]


def main() -> None:
    """Write this module's tasks and index them."""
    write_pairs(pairs())
