"""HTML cleaning and chunking."""
import pytest

from desktop_env.rag.chunk import MIN_SECTION_WORDS, chunk_text
from desktop_env.rag.clean import html_to_text

PAGE = """<!DOCTYPE html><html><head><title>3.5. Window  Functions</title>
<style>body{color:red}</style><script>var x = "not text";</script></head>
<body><div class="navheader"><a href="prev.html">Prev</a> Up Home</div>
<nav>Contents Index</nav>
<h1>Window Functions</h1><p>A window function performs a calculation
across a set of table rows.</p><ul><li>rank()</li><li>row_number()</li></ul>
<div class="navfooter">Next: Inheritance</div></body></html>"""


def test_cleaning_keeps_title_headings_and_text_and_drops_navigation():
    page = html_to_text(PAGE)
    assert page.title == "3.5. Window Functions"
    assert page.text.splitlines()[0] == "# Window Functions"
    assert "A window function performs a calculation across a set of table rows." in page.text
    assert "rank()" in page.text and "row_number()" in page.text
    for junk in ("color:red", "not text", "Prev", "Contents Index", "Inheritance"):
        assert junk not in page.text


def test_unclosed_tags_do_not_swallow_the_rest():
    page = html_to_text("<p>one<p>two<div class='related'><div>nested</div>skipped</div><p>three")
    assert page.text.split("\n\n") == ["one", "two", "three"]


def _words(n, prefix):
    return " ".join(f"{prefix}{i}" for i in range(n))


def test_long_sections_become_overlapping_windows():
    text = "# Intro\n\n" + _words(500, "w")
    chunks = chunk_text(text, max_words=100, overlap=20)
    assert all(c.heading == "Intro" for c in chunks)
    bodies = [c.text.split() for c in chunks]
    assert all(len(b) <= 100 for b in bodies)
    for a, b in zip(bodies, bodies[1:]):
        assert a[-20:] == b[:20]  # the overlap
    covered = {w for b in bodies for w in b}
    assert {f"w{i}" for i in range(500)} <= covered


def test_chunks_do_not_cross_headings_and_tiny_sections_join_the_next():
    text = "\n\n".join(["# A", _words(60, "a"), "# Tiny", "just a few words", "# B", _words(60, "b")])
    chunks = chunk_text(text, max_words=100, overlap=10)
    assert [c.heading for c in chunks] == ["A", "Tiny / B"]
    assert not any(w.startswith("b") for w in chunks[0].text.split())
    assert "just a few words" in chunks[1].text
    assert MIN_SECTION_WORDS > 4


def test_overlap_must_be_smaller_than_the_window():
    with pytest.raises(ValueError, match="overlap"):
        chunk_text("x", max_words=10, overlap=10)
