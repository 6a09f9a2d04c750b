"""Retrieval on the real index of the Debian documentation packages (see conftest.py for the subset)."""
import pytest

from desktop_env.rag import DocIndex, context_for

pytestmark = pytest.mark.slow


def test_postgresql_window_functions_query_returns_postgresql_docs(real_index):
    with DocIndex(real_index) as ix:
        hits = ix.query("How do window functions work in PostgreSQL?", k=3)
    assert "postgresql" in [h.source for h in hits], [(h.source, h.title) for h in hits]
    pg = next(h for h in hits if h.source == "postgresql")
    assert "window" in (pg.title + pg.heading + pg.text).lower()


def test_calc_function_query_returns_libreoffice_help(real_index):
    with DocIndex(real_index) as ix:
        hits = ix.query("Use VLOOKUP in Calc to find a value in a table", k=3)
        assert "libreoffice" in [h.source for h in hits], [(h.source, h.title) for h in hits]
        top = ix.query("VLOOKUP", k=1)[0]
    assert top.source == "libreoffice" and top.heading == "VLOOKUP"
    assert top.file.endswith("scalc/01/04060109.html")


def test_sqlite_query_prefers_sqlite_docs(real_index):
    with DocIndex(real_index) as ix:
        hits = ix.query("enable foreign key constraints in sqlite", k=3)
    assert hits[0].source == "sqlite" and "Foreign Key" in hits[0].title


def test_context_for_a_task_instruction(real_index):
    ctx = context_for("In LibreOffice Calc, add a column with the SUMIF of the sales per region", k=2,
                      index_path=real_index)
    assert "\n[1] " in ctx and "\n[2] " in ctx and "\n[3] " not in ctx and ctx.startswith("Documentation that may help")
    assert "libreoffice:" in ctx
