"""Retrieval over offline tool documentation: HTML folders cleaned, chunked and indexed in SQLite FTS5 (BM25)."""
from __future__ import annotations

import logging
import os

from desktop_env.rag.index import (DEFAULT_SOURCES, DocIndex, DocSource, DocsError, Hit, build_index,
                                   default_index_path, format_context, load_sources)

__all__ = ["DEFAULT_SOURCES", "DocIndex", "DocSource", "DocsError", "Hit", "augment_instruction", "build_index",
           "context_for", "default_index_path", "format_context", "load_sources"]

logger = logging.getLogger(__name__)


def context_for(instruction: str, k: int = 3, index_path: str | os.PathLike | None = None) -> str:
    """The top-``k`` documentation chunks for a task instruction, as a prompt section.

    Args:
        instruction: the task's instruction.
        k: how many chunks (``run.py --rag_topk``).
        index_path: a built index (default: ``<cache dir>/docs/index.sqlite``).

    Returns:
        Text to add to the agent's prompt; empty when nothing matches.

    Raises:
        DocsError: there is no index (build it with ``desktop-env docs build``).
    """
    with DocIndex(index_path) as index:
        hits = index.query(instruction, k)
    logger.debug("rag: %d chunks for %r", len(hits), instruction[:80])
    return format_context(hits)


def augment_instruction(instruction: str, k: int, index_path: str | os.PathLike | None = None) -> str:
    """``instruction`` followed by its top-``k`` documentation chunks (``run.py --rag``).

    The agent sees the result wherever it shows the task (e.g. ``Task: ...`` in the LLM
    agent's prompt). Unchanged when ``k`` is 0 or nothing matches.

    Raises:
        DocsError: there is no index (build it with ``desktop-env docs build``).
    """
    context = context_for(instruction, k, index_path) if k > 0 else ""
    return f"{instruction}\n\n{context}" if context else instruction
