"""Building and querying an index of a small HTML folder (the path of docs crawled elsewhere)."""
import json
import sqlite3
import subprocess
import sys

import pytest

from desktop_env.rag import DocIndex, DocSource, DocsError, build_index, context_for, load_sources
from desktop_env.rag.index import fts_query

PAGES = {
    "dbt/incremental.html": ("Incremental models", "Incremental models in dbt only transform rows that are new "
                             "since the last run. Use the is_incremental() macro in the model's SQL."),
    "dbt/seeds.html": ("Seeds", "Seeds are CSV files in your dbt project that dbt can load into the warehouse "
                       "with the dbt seed command."),
    "airflow/dags.html": ("DAGs", "A DAG collects tasks together, organized with dependencies and relationships "
                          "to say how they should run. Schedule a DAG with the schedule argument."),
    "airflow/_static/search.html": ("Search", "search page incremental seeds dags"),
}


@pytest.fixture(scope="module")
def crawl(tmp_path_factory):
    root = tmp_path_factory.mktemp("crawl")
    for rel, (title, body) in PAGES.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(f"<html><head><title>{title}</title></head><body><nav>menu</nav><h1>{title}</h1>"
                     f"<p>{body}</p></body></html>")
    return root


@pytest.fixture(scope="module")
def small_index(crawl, tmp_path_factory):
    sources = [DocSource("dbt", crawl / "dbt", aliases=["dbt-core"]),
               DocSource("airflow", crawl / "airflow", exclude=["_static/*"]),
               DocSource("absent", crawl / "nope", package="absent-doc")]
    path = tmp_path_factory.mktemp("idx") / "index.sqlite"
    stats = build_index(sources, path, workers=2)
    return path, stats


def test_build_counts_pages_skips_missing_sources_and_excluded_files(small_index):
    path, stats = small_index
    assert stats.pages == {"dbt": 2, "airflow": 1}
    assert stats.missing == ["absent"]
    db = sqlite3.connect(path)
    assert db.execute("SELECT count(*) FROM pages").fetchone()[0] == 3
    assert not list(path.parent.glob("*.tmp*"))  # written beside and renamed into place


def test_query_ranks_the_matching_page_first(small_index):
    path, _ = small_index
    with DocIndex(path) as ix:
        hits = ix.query("How do I schedule a DAG?", k=3)
        assert hits[0].source == "airflow" and hits[0].title == "DAGs"
        assert hits[0].file.endswith("airflow/dags.html")
        assert ix.query("load CSV files with the seed command", k=1)[0].title == "Seeds"
        assert ix.query("seed", k=5, sources=["airflow"]) == []
        assert ix.query("the of and", k=3) == []  # only stopwords


def test_context_for_formats_the_top_chunks(small_index):
    path, _ = small_index
    ctx = context_for("Make the model incremental", k=1, index_path=path)
    assert ctx.startswith("Documentation that may help")
    assert "[1] dbt: Incremental models" in ctx and "is_incremental()" in ctx
    assert context_for("zzzz qqqq", k=2, index_path=path) == ""


def test_fts_query_quotes_terms_and_adds_adjacent_pairs():
    assert fts_query('Use "window functions"; DROP TABLE x') == (
        '"window" OR "functions" OR "drop" OR "table" OR "window functions" OR "functions drop" OR "drop table"')


def test_missing_index_and_bad_sources_are_clear_errors(tmp_path):
    with pytest.raises(DocsError, match="desktop-env docs build"):
        DocIndex(tmp_path / "none.sqlite")
    bad = tmp_path / "sources.json"
    bad.write_text(json.dumps({"sources": [{"name": "x", "path": ".", "globs": ["*.html"]}]}))
    with pytest.raises(DocsError, match=r"sources\[0\] has unknown field\(s\) globs"):
        load_sources(bad)
    with pytest.raises(DocsError, match="no documentation pages"):
        build_index([DocSource("x", tmp_path / "empty")], tmp_path / "i.sqlite")


def test_cli_build_with_add_and_query(crawl, tmp_path):
    index = tmp_path / "cli.sqlite"
    run = lambda *a: subprocess.run([sys.executable, "-m", "desktop_env", "docs", *map(str, a)],  # noqa: E731
                                    capture_output=True, text=True, timeout=300)
    proc = run("build", "--no-defaults", "--add", f"dbt={crawl / 'dbt'}", "--index", index)
    assert proc.returncode == 0, proc.stderr
    assert "dbt" in proc.stdout and index.is_file()
    proc = run("query", "--index", index, "-k", "1", "--json", "incremental", "models")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)[0]["title"] == "Incremental models"
    proc = run("build", "--no-defaults", "--add", "nofolder", "--index", index)
    assert proc.returncode == 1 and "NAME=DIR" in proc.stderr


def test_augment_instruction_appends_context_only_when_something_matches(small_index):
    from desktop_env.rag import augment_instruction

    path, _ = small_index
    out = augment_instruction("Schedule the DAG daily", 2, index_path=path)
    assert out.startswith("Schedule the DAG daily\n\nDocumentation that may help")
    assert "[1] airflow: DAGs" in out
    assert augment_instruction("zzzz qqqq", 2, index_path=path) == "zzzz qqqq"
    assert augment_instruction("Schedule the DAG daily", 0, index_path=path) == "Schedule the DAG daily"


def test_rag_context_reaches_the_model_request(small_index, monkeypatch):
    """What run.py --rag does: the augmented instruction goes out in the LLM agent's request."""
    from pathlib import Path

    import numpy as np

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "agents"))
    from fake_api import FakeModelAPI

    from desktop_env.agents import create_agent
    from desktop_env.rag import augment_instruction

    path, _ = small_index
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with FakeModelAPI(["DONE"]) as api:
        agent = create_agent("gpt-test", base_url=api.openai_url, api_backoff_s=0.01)
        agent.reset(None)
        agent.predict(augment_instruction("Schedule the DAG daily", 1, index_path=path),
                      {"screenshot": np.zeros((1080, 1920, 3), dtype=np.uint8), "accessibility_tree": "", "error": ""})
    text = next(p["text"] for p in api.requests[0]["messages"][-1]["content"] if p["type"] == "text")
    assert "Task: Schedule the DAG daily" in text
    assert "[1] airflow: DAGs" in text and "organized with dependencies" in text
