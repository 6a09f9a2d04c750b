"""compare_sql with sqlglot on real SQL files (the image metrics are tested in test_images_compare.py)."""
from __future__ import annotations

from desktop_env.evaluators.metrics.sql import compare_sql


def test_compare_sql_ignores_formatting_and_case(tmp_path):
    gold = tmp_path / "gold.sql"
    gold.write_text("SELECT name, SUM(amount) AS total FROM orders GROUP BY name;")
    agent = "select  Name,\n  sum(Amount) as TOTAL  -- the total\nfrom Orders group by name"
    # file getters hand files over as Path objects; a str is always the SQL text itself
    assert compare_sql(agent, gold) == 1.0
    assert compare_sql("SELECT name FROM orders", gold) == 0.0
    assert compare_sql("SELEC name FROMM", gold) == 0.0
    assert compare_sql(None, gold) == 0.0
    assert compare_sql("SELECT 1", {"expected": "select 1"}) == 1.0


def test_compare_sql_dialect(tmp_path):
    assert compare_sql("SELECT a::INT FROM t", "SELECT CAST(a AS INT) FROM t", dialect="duckdb") == 1.0
