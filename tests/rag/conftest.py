"""The real documentation index, built once per session from the installed Debian doc packages.

To keep the build near a minute on 2 cores it indexes a subset of the shipped sources
(evaluation_examples/documents/sources.json): all of PostgreSQL and SQLite, LibreOffice's
Calc and Basic help (not Writer, Impress, ...), and the first 50 Python pages. The full
build (`desktop-env docs build`) takes about 2 minutes here.
"""
from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def real_index(tmp_path_factory):
    from desktop_env.rag import build_index, load_sources

    sources = load_sources()
    for s in sources:
        if s.name == "libreoffice":
            s.include = ["scalc/*.html", "sbasic/*.html"]
        elif s.name == "python":
            s.max_files = 50
    path = tmp_path_factory.mktemp("docs") / "index.sqlite"
    stats = build_index(sources, path)
    if stats.missing:
        pytest.fail(f"doc packages missing for {stats.missing}: install them (listed in .ci/apt-packages.txt)")
    return path
