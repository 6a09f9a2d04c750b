"""Synthetic data shared by the task generators, each drawn from a fixed seed.

``samples()`` rebuilds the image's own sample data (the ``analytics`` shop and the ``hr``
database, docs/image.md) with the image build's generator, so that evaluators can compare
against the right end state of an update; the other builders draw the data a task brings
along (a service desk, a CRM export, new hires, new customers, country names). The SQL
comments naming ``data_batch1.py`` / ``data_batch2.py`` (the scripts of the time) are
generated data, kept so that regenerating leaves the committed files byte-identical.
"""
from __future__ import annotations

import hashlib
import importlib.util
import random

from .common import REPO, csv_text

PROFILE_FILES = REPO / "desktop_env/image/profiles/data/files"
#: The desktop user's home as the data image ships it (sample projects and databases).
SAMPLE_HOME = PROFILE_FILES / "usr/local/share/desktop-env/data/home"

#: Customers and regions of the base-image and cloud-account tasks' data.
CUSTOMERS = ["Acme Corp", "Birch & Co", "Cobalt Labs", "Dune Foods", "Elm Street Bakery", "Fjord Shipping"]
REGIONS = ["North", "South", "East", "West"]


def samples() -> dict:
    """The image's sample data, drawn exactly as the image build draws it."""
    path = PROFILE_FILES / "usr/local/lib/desktop-env/data/make_samples.py"
    spec = importlib.util.spec_from_file_location("make_samples", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.build(random.Random(mod.SEED))


# --------------------------------------------------------------------------- service desk (PostgreSQL)

AGENTS = [("ana.ruiz", "Ana Ruiz", "platform", False), ("ben.okafor", "Ben Okafor", "platform", True),
          ("chloe.martin", "Chloe Martin", "platform", False), ("dev.patel", "Dev Patel", "data", False),
          ("emma.schulz", "Emma Schulz", "data", False), ("farid.haddad", "Farid Haddad", "network", False),
          ("grace.lee", "Grace Lee", "network", False)]

TICKET_TITLES = {
    "database": ["Nightly load into warehouse failed", "Replica lag above 5 minutes", "Disk usage on db host at 90%",
                 "Slow query on orders report", "Connection pool exhausted"],
    "pipeline": ["Airflow DAG shop_etl stuck in queued", "dbt test not_null_stg_orders failed",
                 "Dagster schedule skipped last run", "Duplicate rows in daily_revenue"],
    "access": ["Grant read access to analytics schema", "Reset password for BI user", "New analyst onboarding",
               "Revoke access for departed contractor"],
    "network": ["VPN drops every hour", "DNS resolution slow in office", "Firewall rule for port 5432"],
    "hardware": ["Laptop battery swelling", "Monitor flickering", "Docking station not detected"],
}


def servicedesk() -> tuple[str, str, str, list[int]]:
    """SQL of the ``servicedesk`` database, the digests before/after the right fix, the ids to change."""
    rng = random.Random(20261123)
    tickets = []
    start = 1_732_000_000
    for tid in range(1, 161):
        category = rng.choice(sorted(TICKET_TITLES))
        title = rng.choice(TICKET_TITLES[category])
        priority = rng.choices(["P1", "P2", "P3", "P4"], weights=[1, 3, 4, 2])[0]
        status = rng.choices(["open", "in_progress", "resolved", "closed"], weights=[3, 2, 3, 3])[0]
        assignee = None if rng.random() < 0.3 else rng.choice(AGENTS)[0]
        opened = start + tid * 5400 + rng.randrange(0, 3600)
        tickets.append([tid, title, category, priority, status, assignee, opened])
    # make sure the task has work to do and traps to leave alone
    for tid, status, priority, assignee in [(7, "open", "P1", None), (23, "open", "P1", None),
                                            (58, "open", "P1", None), (91, "open", "P1", None),
                                            (12, "open", "P1", "grace.lee"), (40, "resolved", "P1", None),
                                            (77, "open", "P2", None), (130, "in_progress", "P1", None)]:
        t = tickets[tid - 1]
        t[4], t[3], t[5] = status, priority, assignee
    oncall = next(a[0] for a in AGENTS if a[3])
    targets = [t[0] for t in tickets if t[4] == "open" and t[3] == "P1" and t[5] is None]

    def digest(rows) -> str:
        text = ",".join(f"{t[0]}|{t[4]}|{t[5] or ''}" for t in rows)
        return hashlib.md5(text.encode()).hexdigest()

    before = digest(tickets)
    after = digest([[*t[:4], "in_progress", oncall, t[6]] if t[0] in targets else t for t in tickets])

    def q(v):
        return "NULL" if v is None else "'" + str(v).replace("'", "''") + "'"
    lines = ["-- servicedesk: agents and tickets of the data team's service desk (synthetic, data_batch1.py)",
             "CREATE TABLE agents (username text PRIMARY KEY, full_name text NOT NULL, team text NOT NULL, "
             "on_call boolean NOT NULL DEFAULT false);",
             "CREATE TABLE tickets (id integer PRIMARY KEY, title text NOT NULL, category text NOT NULL, "
             "priority text NOT NULL CHECK (priority IN ('P1','P2','P3','P4')), status text NOT NULL "
             "CHECK (status IN ('open','in_progress','resolved','closed')), assignee text REFERENCES agents, "
             "opened_at timestamptz NOT NULL);",
             "INSERT INTO agents VALUES"]
    lines.append(",\n".join(f"  ({q(u)}, {q(n)}, {q(team)}, {str(on).lower()})" for u, n, team, on in AGENTS) + ";")
    lines.append("INSERT INTO tickets VALUES")
    lines.append(",\n".join(f"  ({t[0]}, {q(t[1])}, {q(t[2])}, {q(t[3])}, {q(t[4])}, {q(t[5])}, "
                            f"to_timestamp({t[6]}))" for t in tickets) + ";")
    return "\n".join(lines) + "\n", before, after, targets


# --------------------------------------------------------------------------- CRM export (SQLite)

def crm() -> tuple[str, str]:
    """contacts.sql (with case-variant duplicate e-mails) and the ids left after de-duplication."""
    rng = random.Random(4242)
    first = ["Ada", "Bruno", "Carla", "Deniz", "Eli", "Fatima", "Goran", "Hana", "Igor", "Jana", "Karim", "Lea"]
    last = ["Arnold", "Baker", "Castro", "Diaz", "Evans", "Fischer", "Gomez", "Horvat", "Ito", "Jensen"]
    companies = ["Northwind", "Contoso", "Fabrikam", "Tailspin", "Litware", "Adatum"]
    people = []
    for _ in range(90):
        f, la = rng.choice(first), rng.choice(last)
        people.append((f, la, f"{f}.{la}{rng.randrange(10, 99)}@{rng.choice(companies).lower()}.example".lower(),
                       rng.choice(companies)))
    rows, seen = [], set()
    for f, la, email, company in people:
        if email in seen:
            continue
        seen.add(email)
        rows.append([f, la, email, company])
        if rng.random() < 0.2:   # the same person entered again by another import, e-mail case changed
            variant = email.upper() if rng.random() < 0.5 else email.capitalize()
            rows.append([f, la, variant, company])
    rng.shuffle(rows)
    keep, first_seen = [], set()
    lines = ["-- contacts exported from two CRM imports (synthetic, data_batch2.py)",
             "CREATE TABLE contacts (id INTEGER PRIMARY KEY, first_name TEXT NOT NULL, last_name TEXT NOT NULL, "
             "email TEXT NOT NULL, company TEXT NOT NULL);"]
    for i, (f, la, email, company) in enumerate(rows, 1):
        lines.append(f"INSERT INTO contacts VALUES ({i}, '{f}', '{la}', '{email}', '{company}');")
        if email.lower() not in first_seen:
            first_seen.add(email.lower())
            keep.append(i)
    return "\n".join(lines) + "\n", ",".join(map(str, keep))


# --------------------------------------------------------------------------- new hires (MariaDB)

def new_hires() -> tuple[str, str]:
    """new_hires.csv (10 employees, ids 121-130) and the digest MariaDB's query must give after loading it."""
    d = samples()
    rng = random.Random(130)
    titles = {"Engineering": "Software Engineer", "Sales": "Account Executive", "Marketing": "Content Lead",
              "Finance": "Financial Analyst", "Human Resources": "Recruiter", "Support": "Support Agent",
              "Data": "Data Engineer"}
    first = ["Aiko", "Bram", "Cleo", "Dario", "Esme", "Femi", "Greta", "Hiro", "Isla", "Jonas"]
    last = ["Achebe", "Brandt", "Cruz", "Dahl", "Eriksen", "Forde", "Grant", "Holm", "Iqbal", "Jovic"]
    rows = []
    for i, eid in enumerate(range(121, 131)):
        dept_id, dept, _loc = rng.choice(d["departments"])
        hire = f"2025-0{rng.randint(2, 6)}-{rng.randint(1, 28):02d}"
        rows.append([eid, first[i], last[i], f"{first[i][0]}.{last[i]}{eid}@corp.example".lower(), dept_id,
                     titles[dept], hire, dept_id])
    digest = hashlib.md5(",".join("|".join(map(str, r)) for r in rows).encode()).hexdigest()
    header = ["id", "first_name", "last_name", "email", "department_id", "title", "hire_date", "manager_id"]
    return csv_text(rows, header), digest


# --------------------------------------------------------------------------- countries, new customers

COUNTRY_NAMES = {"BR": "Brazil", "CA": "Canada", "DE": "Germany", "ES": "Spain", "FR": "France",
                 "GB": "United Kingdom", "IN": "India", "IT": "Italy", "JP": "Japan", "NL": "Netherlands",
                 "PL": "Poland", "US": "United States"}


def country_csv() -> str:
    """country_names.csv: ``code,name`` of the countries the sample customers live in."""
    return "code,name\n" + "".join(f"{c},{n}\n" for c, n in sorted(COUNTRY_NAMES.items()))


def new_customers() -> list[list]:
    """Fifteen customers (ids 201-215) in the columns of the analytics database's customers table."""
    rng = random.Random(215)
    first = ["Noor", "Oskar", "Paula", "Quentin", "Rosa", "Sami", "Tara", "Umar", "Vera", "Wim", "Xenia", "Yusuf",
             "Zoe", "Alma", "Bodhi"]
    last = ["Aalto", "Borg", "Conti", "Duarte", "Ekstrom", "Ferrari", "Gallo", "Haas", "Ibsen", "Jung", "Keller",
            "Lund", "Marino", "Nagy", "Ortiz"]
    countries = sorted(COUNTRY_NAMES)
    return [[cid, first[i], last[i], f"{first[i]}.{last[i]}{cid}@example.com".lower(), rng.choice(countries),
             f"2025-0{rng.randint(1, 9)}-{rng.randint(1, 28):02d}"] for i, cid in enumerate(range(201, 216))]


def new_customers_csv() -> str:
    """new_customers.csv: ``new_customers()`` with a header line."""
    return csv_text(new_customers(), ["id", "first_name", "last_name", "email", "country", "signup_date"])


def new_customers_digest() -> str:
    """The digest PostgreSQL's query of the appended customers must give."""
    return hashlib.md5(",".join("|".join(map(str, r)) for r in new_customers()).encode()).hexdigest()
