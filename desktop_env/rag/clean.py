"""HTML documentation pages to plain text (standard-library html.parser): title, headings and body text."""
from __future__ import annotations

import re
from dataclasses import dataclass
from html.parser import HTMLParser

# elements whose content is never documentation text
_SKIP_TAGS = {"script", "style", "noscript", "nav", "header", "footer", "aside", "svg", "button",
              "select", "template"}
# navigation blocks the doc generators mark by class (DocBook, Sphinx, LibreOffice help)
_SKIP_CLASSES = {"navheader", "navfooter", "related", "sphinxsidebar", "footer", "relatedtopics",
                 "toc", "breadcrumb", "headerlink"}
_BLOCK_TAGS = {"p", "div", "br", "li", "ul", "ol", "dl", "dt", "dd", "tr", "table", "pre", "h1", "h2", "h3",
               "h4", "h5", "h6", "section", "article", "blockquote", "hr", "td", "th"}
_HEADINGS = {"h1", "h2", "h3"}
_VOID = {"br", "hr", "img", "input", "meta", "link", "area", "base", "col", "embed", "param", "source",
         "track", "wbr"}


@dataclass
class Page:
    """A cleaned page: its title and text (paragraphs separated by blank lines; headings
    start with ``# `` so the chunker can keep them with their section)."""

    title: str
    text: str


class _Extractor(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.out: list[str] = []
        self.title: list[str] = []
        self.skip_tag: str | None = None
        self.skip_depth = 0
        self.in_title = False
        self.heading: str | None = None

    def handle_starttag(self, tag, attrs):
        if self.skip_tag is not None:
            if tag == self.skip_tag:
                self.skip_depth += 1
            return
        if tag == "title":
            self.in_title = True
            return
        classes = set((dict(attrs).get("class") or "").split())
        if (tag in _SKIP_TAGS or classes & _SKIP_CLASSES) and tag not in _VOID:
            self.skip_tag, self.skip_depth = tag, 1
            return
        if tag in _BLOCK_TAGS:
            self.out.append("\n\n")
        if tag in _HEADINGS:
            self.out.append("# ")
            self.heading = tag

    def handle_endtag(self, tag):
        if self.skip_tag is not None:
            if tag == self.skip_tag:
                self.skip_depth -= 1
                if self.skip_depth == 0:
                    self.skip_tag = None
            return
        if tag == "title":
            self.in_title = False
        elif tag in _BLOCK_TAGS:
            self.out.append("\n\n")

    def handle_data(self, data):
        if self.in_title:
            self.title.append(data)
        elif self.skip_tag is None:
            self.out.append(data)


def html_to_text(markup: str) -> Page:
    """Clean one HTML page: drops scripts, styles and navigation, keeps headings and text.

    The ``<title>`` element becomes the page title, not part of the text.
    """
    p = _Extractor()
    p.feed(markup)
    p.close()
    raw = "".join(p.out)
    paragraphs = []
    for block in re.split(r"\n\s*\n", raw):
        block = re.sub(r"\s+", " ", block).strip()
        if block and block != "#":
            paragraphs.append(block)
    title = re.sub(r"\s+", " ", "".join(p.title)).strip()
    if not title:
        title = next((b[2:] for b in paragraphs if b.startswith("# ")), "")
    return Page(title=title, text="\n\n".join(paragraphs))
