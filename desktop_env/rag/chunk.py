"""Splitting cleaned pages into section-aligned, overlapping word windows that remember their heading."""
from __future__ import annotations

from dataclasses import dataclass

#: Default chunk size and overlap, in words; sections shorter than MIN_SECTION_WORDS join the next one.
CHUNK_WORDS = 180
OVERLAP_WORDS = 40
MIN_SECTION_WORDS = 30


@dataclass
class Chunk:
    """A piece of a page: its section heading and text."""

    ordinal: int
    heading: str
    text: str


def _sections(text: str) -> list[tuple[str, list[str]]]:
    """(heading, paragraphs) per section; a heading paragraph starts with ``# ``."""
    out: list[tuple[str, list[str]]] = [("", [])]
    for para in text.split("\n\n"):
        if para.startswith("# "):
            out.append((para[2:].strip(), [para]))
        elif para.strip():
            out[-1][1].append(para)
    return [s for s in out if s[1]]


def chunk_text(text: str, max_words: int = CHUNK_WORDS, overlap: int = OVERLAP_WORDS) -> list[Chunk]:
    """Split ``text`` (paragraphs separated by blank lines, headings starting ``# ``) into chunks.

    Chunks follow sections: a chunk never spans two headings, except that a section of
    fewer than MIN_SECTION_WORDS words joins the next one (their headings are joined with
    `` / ``). A long section becomes windows of at most ``max_words`` words, each
    repeating the last ``overlap`` words of the one before, so a sentence cut at a border
    is whole in one of the two.

    Raises:
        ValueError: ``overlap`` is not smaller than ``max_words``.
    """
    if not 0 <= overlap < max_words:
        raise ValueError(f"overlap ({overlap}) must be >= 0 and smaller than max_words ({max_words})")
    merged: list[tuple[str, list[str]]] = []
    pending_heads: list[str] = []
    pending: list[str] = []
    for heading, paras in _sections(text):
        heads = pending_heads + ([heading] if heading else [])
        words = pending + [w for p in paras for w in (p.split() + ["\n"])]
        if sum(w != "\n" for w in words) < MIN_SECTION_WORDS:
            pending_heads, pending = heads, words
            continue
        merged.append((" / ".join(heads), words))
        pending_heads, pending = [], []
    if pending:
        merged.append((" / ".join(pending_heads), pending))
    chunks: list[Chunk] = []
    step = max_words - overlap
    for heading, words in merged:
        start = 0
        while start < len(words):
            body = " ".join(words[start:start + max_words]).replace(" \n ", "\n").replace("\n ", "\n").strip()
            if body:
                chunks.append(Chunk(ordinal=len(chunks), heading=heading, text=body))
            if start + max_words >= len(words):
                break
            start += step
    return chunks
