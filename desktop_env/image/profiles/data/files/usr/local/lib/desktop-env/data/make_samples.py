#!/usr/bin/env python3
"""Writes the data image's synthetic sample data (deterministic): SQL for PostgreSQL and MariaDB, CSV seeds.

Run at image build time by the data profile's assemble.sh; tasks may run it again:
    python3 make_samples.py OUT_DIR
writes OUT_DIR/postgres_analytics.sql, OUT_DIR/mariadb_hr.sql and OUT_DIR/csv/*.csv.
The same seed always gives the same rows, so task checkers can rely on exact values.
"""
from __future__ import annotations

import csv
import datetime as dt
import random
import sys
from pathlib import Path

SEED = 20240601
FIRST = ["Ava", "Liam", "Mia", "Noah", "Emma", "Lucas", "Olivia", "Mateo", "Sofia", "Leo", "Chloe", "Hugo",
         "Ines", "Yuki", "Arjun", "Zara", "Omar", "Lena", "Tomas", "Nora", "Ivan", "Elif", "Kofi", "Maya"]
LAST = ["Smith", "Garcia", "Muller", "Rossi", "Dubois", "Kowalski", "Tanaka", "Patel", "Silva", "Novak",
        "Johnson", "Hansen", "Okafor", "Kim", "Larsen", "Moreau", "Ivanova", "Costa", "Nguyen", "Berg"]
COUNTRIES = ["US", "DE", "FR", "GB", "ES", "IT", "NL", "PL", "JP", "IN", "BR", "CA"]
CATEGORIES = {"Electronics": ["USB-C Hub", "Wireless Mouse", "Mechanical Keyboard", "27in Monitor", "Webcam HD",
                              "Noise-Cancelling Headphones", "Portable SSD 1TB", "Laptop Stand"],
              "Office": ["Notebook A5", "Gel Pens (10)", "Desk Organizer", "Sticky Notes", "Whiteboard Markers",
                         "Paper Shredder", "Desk Lamp", "Ergonomic Chair"],
              "Kitchen": ["Coffee Grinder", "French Press", "Electric Kettle", "Chef Knife", "Cutting Board",
                          "Espresso Cups (4)", "Toaster", "Blender"],
              "Outdoor": ["Camping Tent", "Sleeping Bag", "Hiking Backpack", "Water Bottle", "Headlamp",
                          "Trekking Poles", "Camping Stove", "Rain Jacket"],
              "Books": ["SQL Fundamentals", "Data Pipelines in Practice", "Statistics Primer", "Python for Analysts",
                        "Designing Dashboards", "The Warehouse Toolkit", "Clean Code Habits", "Visualizing Data"]}
STATUSES = ["completed"] * 8 + ["shipped", "returned", "cancelled", "pending"]
DEPARTMENTS = [("Engineering", "Berlin"), ("Sales", "London"), ("Marketing", "Paris"), ("Finance", "New York"),
               ("Human Resources", "Berlin"), ("Support", "Lisbon"), ("Data", "Amsterdam")]
TITLES = {"Engineering": ["Software Engineer", "Senior Software Engineer", "Staff Engineer"],
          "Sales": ["Account Executive", "Sales Manager"], "Marketing": ["Marketing Specialist", "Content Lead"],
          "Finance": ["Accountant", "Financial Analyst"], "Human Resources": ["HR Generalist", "Recruiter"],
          "Support": ["Support Agent", "Support Lead"], "Data": ["Data Analyst", "Data Engineer", "Analytics Engineer"]}
START = dt.date(2023, 1, 1)


def _q(value) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, (int, float)):
        return repr(value)
    return "'" + str(value).replace("'", "''") + "'"


def _inserts(table: str, cols: list[str], rows: list[tuple], batch: int = 200) -> list[str]:
    out = []
    for i in range(0, len(rows), batch):
        values = ",\n".join("(" + ", ".join(_q(v) for v in row) + ")" for row in rows[i:i + batch])
        out.append(f"INSERT INTO {table} ({', '.join(cols)}) VALUES\n{values};")
    return out


def build(rng: random.Random) -> dict:
    customers = []
    for cid in range(1, 201):
        first, last = rng.choice(FIRST), rng.choice(LAST)
        signup = START + dt.timedelta(days=rng.randrange(0, 540))
        customers.append((cid, first, last, f"{first}.{last}{cid}@example.com".lower(), rng.choice(COUNTRIES),
                          signup.isoformat()))
    products, pid = [], 0
    for category, names in CATEGORIES.items():
        for name in names:
            pid += 1
            products.append((pid, name, category, round(rng.uniform(3, 400), 2)))
    orders, items = [], []
    for oid in range(1, 1201):
        cust = rng.choice(customers)
        signup = dt.date.fromisoformat(cust[5])
        day = signup + dt.timedelta(days=rng.randrange(0, 300))
        orders.append((oid, cust[0], day.isoformat(), rng.choice(STATUSES)))
        for product in rng.sample(products, rng.randint(1, 4)):
            items.append((oid, product[0], rng.randint(1, 5), product[3]))
    payments, pay_id = [], 0
    for oid, _cid, _day, status in orders:
        if status in ("cancelled", "pending"):
            continue
        total = round(sum(q * p for o, _pid, q, p in items if o == oid), 2)
        pay_id += 1
        payments.append((pay_id, oid, rng.choice(["credit_card", "credit_card", "paypal", "bank_transfer",
                                                   "gift_card"]), total))
    departments = [(i + 1, name, loc) for i, (name, loc) in enumerate(DEPARTMENTS)]
    employees, salaries = [], []
    for eid in range(1, 121):
        dept = departments[(eid - 1) % len(departments)] if eid <= len(departments) else rng.choice(departments)
        first, last = rng.choice(FIRST), rng.choice(LAST)
        hire = dt.date(2015, 1, 1) + dt.timedelta(days=rng.randrange(0, 3200))
        manager = None if eid <= len(departments) else dept[0]   # the first employee of each department leads it
        employees.append((eid, first, last, f"{first[0]}.{last}{eid}@corp.example".lower(), dept[0],
                          rng.choice(TITLES[dept[1]]), hire.isoformat(), manager))
        amount = rng.randrange(42000, 98000, 500)
        frm = hire
        while frm < dt.date(2025, 1, 1):
            to = min(dt.date(frm.year + 1, frm.month, 1), dt.date(2025, 1, 1))
            salaries.append((eid, amount, frm.isoformat(), None if to >= dt.date(2025, 1, 1) else to.isoformat()))
            amount = int(amount * rng.uniform(1.0, 1.08)) // 100 * 100
            frm = to
    return {"customers": customers, "products": products, "orders": orders, "order_items": items,
            "payments": payments, "departments": departments, "employees": employees, "salaries": salaries}


def postgres_sql(d: dict) -> str:
    parts = ["-- analytics: a small online shop (synthetic, generated by make_samples.py)",
             "CREATE TABLE customers (id integer PRIMARY KEY, first_name text NOT NULL, last_name text NOT NULL, "
             "email text UNIQUE NOT NULL, country char(2) NOT NULL, signup_date date NOT NULL);",
             "CREATE TABLE products (id integer PRIMARY KEY, name text NOT NULL, category text NOT NULL, "
             "unit_price numeric(10,2) NOT NULL);",
             "CREATE TABLE orders (id integer PRIMARY KEY, customer_id integer NOT NULL REFERENCES customers(id), "
             "order_date date NOT NULL, status text NOT NULL);",
             "CREATE TABLE order_items (order_id integer NOT NULL REFERENCES orders(id), product_id integer NOT NULL "
             "REFERENCES products(id), quantity integer NOT NULL, unit_price numeric(10,2) NOT NULL, "
             "PRIMARY KEY (order_id, product_id));",
             "CREATE TABLE payments (id integer PRIMARY KEY, order_id integer NOT NULL REFERENCES orders(id), "
             "method text NOT NULL, amount numeric(12,2) NOT NULL);"]
    parts += _inserts("customers", ["id", "first_name", "last_name", "email", "country", "signup_date"], d["customers"])
    parts += _inserts("products", ["id", "name", "category", "unit_price"], d["products"])
    parts += _inserts("orders", ["id", "customer_id", "order_date", "status"], d["orders"])
    parts += _inserts("order_items", ["order_id", "product_id", "quantity", "unit_price"], d["order_items"])
    parts += _inserts("payments", ["id", "order_id", "method", "amount"], d["payments"])
    return "\n".join(parts) + "\n"


def mariadb_sql(d: dict) -> str:
    parts = ["-- hr: departments, employees and salary history (synthetic, generated by make_samples.py)",
             "CREATE TABLE departments (id INT PRIMARY KEY, name VARCHAR(64) NOT NULL, location VARCHAR(64) NOT NULL);",
             "CREATE TABLE employees (id INT PRIMARY KEY, first_name VARCHAR(64) NOT NULL, last_name VARCHAR(64) "
             "NOT NULL, email VARCHAR(128) NOT NULL UNIQUE, department_id INT NOT NULL, title VARCHAR(64) NOT NULL, "
             "hire_date DATE NOT NULL, manager_id INT NULL, FOREIGN KEY (department_id) REFERENCES departments(id), "
             "FOREIGN KEY (manager_id) REFERENCES employees(id));",
             "CREATE TABLE salaries (employee_id INT NOT NULL, amount INT NOT NULL, from_date DATE NOT NULL, "
             "to_date DATE NULL, PRIMARY KEY (employee_id, from_date), FOREIGN KEY (employee_id) "
             "REFERENCES employees(id));"]
    parts += _inserts("departments", ["id", "name", "location"], d["departments"])
    parts += _inserts("employees", ["id", "first_name", "last_name", "email", "department_id", "title", "hire_date",
                                    "manager_id"], d["employees"])
    parts += _inserts("salaries", ["employee_id", "amount", "from_date", "to_date"], d["salaries"])
    return "\n".join(parts) + "\n"


def write_csv(path: Path, header: list[str], rows: list[tuple]) -> None:
    with open(path, "w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(header)
        writer.writerows(rows)


def main(out: Path) -> None:
    data = build(random.Random(SEED))
    out.mkdir(parents=True, exist_ok=True)
    (out / "postgres_analytics.sql").write_text(postgres_sql(data))
    (out / "mariadb_hr.sql").write_text(mariadb_sql(data))
    csv_dir = out / "csv"
    csv_dir.mkdir(exist_ok=True)
    write_csv(csv_dir / "raw_customers.csv", ["id", "first_name", "last_name", "email", "country", "signup_date"],
              data["customers"])
    write_csv(csv_dir / "raw_products.csv", ["id", "name", "category", "unit_price"], data["products"])
    write_csv(csv_dir / "raw_orders.csv", ["id", "customer_id", "order_date", "status"], data["orders"])
    write_csv(csv_dir / "raw_order_items.csv", ["order_id", "product_id", "quantity", "unit_price"],
              data["order_items"])
    write_csv(csv_dir / "raw_payments.csv", ["id", "order_id", "method", "amount"], data["payments"])


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: make_samples.py OUT_DIR")
    main(Path(sys.argv[1]))
