"""Writer document metrics on real files built here: docx (python-docx), odt (odfpy), epub and xcu (zip + XML).

Each metric has a passing and a failing case; formatting is checked both as direct formatting and as it comes
from a style, since Writer shows (and a gold file may store) either.
"""
from __future__ import annotations

import io
import zipfile
from pathlib import Path

import docx
import pytest
from docx.enum.section import WD_SECTION
from docx.enum.style import WD_STYLE_TYPE
from docx.enum.text import WD_ALIGN_PARAGRAPH, WD_BREAK, WD_TAB_ALIGNMENT
from docx.oxml import OxmlElement
from docx.oxml.ns import qn
from docx.shared import Pt, RGBColor
from odf.opendocument import OpenDocumentText
from odf.style import ParagraphProperties, Style, TextProperties
from odf.text import H, P, Span
from PIL import Image

from desktop_env.evaluators.metrics.document_format import delta_e_2000
from desktop_env.evaluators.metrics.utils import MetricError, OptionError
from desktop_env.registry import METRICS, SUPPORTED


class _Registered:
    """The metrics as tasks reach them: by name, through the registry."""

    def __getattr__(self, name):
        return METRICS[name]


D = _Registered()

NAMES = ("compare_docx_files", "compare_docx_files_and_ignore_new_lines", "compare_docx_tables",
         "compare_docx_images", "compare_line_spacing", "compare_font_names", "compare_subscript_contains",
         "has_page_numbers_in_footers", "check_italic_font_size_14", "evaluate_strike_through_last_paragraph",
         "evaluate_colored_words_in_tables", "is_first_line_centered", "find_default_font", "contains_page_break",
         "check_tabstops", "check_highlighted_words", "compare_references", "compare_unique_train_records",
         "compare_epub")


# --------------------------------------------------------------------------- builders
def docx_file(path: Path, *paragraphs: str, build=None) -> Path:
    """A docx at ``path`` with those paragraphs, then ``build(doc)``."""
    d = docx.Document()
    for text in paragraphs:
        d.add_paragraph(text)
    if build is not None:
        build(d)
    d.save(path)
    return path


def odt_file(path: Path, *paragraphs, paragraph_background=None) -> Path:
    """An odt at ``path``: a heading "Title", then the paragraphs; a paragraph is text or a list of
    (text, background or None)."""
    doc = OpenDocumentText()
    styles = {}

    def span_style(color):
        if color not in styles:
            st = Style(name=f"T{len(styles) + 1}", family="text")
            st.addElement(TextProperties(backgroundcolor=color))
            doc.automaticstyles.addElement(st)
            styles[color] = st
        return styles[color]
    pstyle = None
    if paragraph_background:
        pstyle = Style(name="P1", family="paragraph")
        pstyle.addElement(TextProperties(backgroundcolor=paragraph_background))
        doc.automaticstyles.addElement(pstyle)
    doc.text.addElement(H(outlinelevel=1, text="Title"))
    for para in paragraphs:
        p = P(stylename=pstyle) if pstyle is not None else P()
        for text, color in ([(para, None)] if isinstance(para, str) else para):
            if color is None:
                p.addText(text)
            else:
                p.addElement(Span(stylename=span_style(color), text=text))
        doc.text.addElement(p)
    doc.save(str(path))
    return path


@pytest.fixture
def make_docx(tmp_path):
    """make_docx(name, *paragraphs, build=None) -> path: a docx with those paragraphs, then ``build(doc)``."""
    def make(name, *paragraphs, build=None):
        return docx_file(tmp_path / name, *paragraphs, build=build)
    return make


@pytest.fixture
def make_odt(tmp_path):
    """make_odt(name, *paragraphs) -> path; a paragraph is text or a list of (text, background or None)."""
    def make(name, *paragraphs, paragraph_background=None):
        return odt_file(tmp_path / name, *paragraphs, paragraph_background=paragraph_background)
    return make


def add_page_field(paragraph, simple: bool = False):
    """A PAGE field as Writer saves it (a complex field with a cached result), or as a w:fldSimple."""
    if simple:
        fld = OxmlElement("w:fldSimple")
        fld.set(qn("w:instr"), " PAGE ")
        run = OxmlElement("w:r")
        t = OxmlElement("w:t")
        t.text = "1"
        run.append(t)
        fld.append(run)
        paragraph._p.append(fld)
        return
    for kind, instr in (("begin", None), (None, " PAGE "), ("separate", None), (None, None), ("end", None)):
        run = paragraph.add_run()
        if kind:
            el = OxmlElement("w:fldChar")
            el.set(qn("w:fldCharType"), kind)
            run._r.append(el)
        elif instr:
            el = OxmlElement("w:instrText")
            el.text = instr
            run._r.append(el)
        else:
            run.text = "1"


def epub(path: Path, chapters: list[list[str]], title="A Book", author="Ann Author", layout="a") -> Path:
    """An EPUB 3 with one xhtml file per chapter (two package layouts, to show that layout does not count)."""
    folder, prefix = ("OEBPS", "ch") if layout == "a" else ("EPUB/text", "part")
    opf_name = "OEBPS/content.opf" if layout == "a" else "EPUB/package.opf"
    rel = "" if layout == "a" else "text/"
    items, refs = [], []
    with zipfile.ZipFile(path, "w") as z:
        z.writestr(zipfile.ZipInfo("mimetype"), "application/epub+zip")
        z.writestr("META-INF/container.xml",
                   '<?xml version="1.0"?><container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:'
                   f'container"><rootfiles><rootfile full-path="{opf_name}" media-type="application/oebps-package'
                   '+xml"/></rootfiles></container>')
        for i, paragraphs in enumerate(chapters):
            body = "".join(f"<p>{p}</p>" if k else f"<h1>{p}</h1>" for k, p in enumerate(paragraphs))
            z.writestr(f"{folder}/{prefix}{i}.xhtml",
                       '<?xml version="1.0" encoding="utf-8"?><html xmlns="http://www.w3.org/1999/xhtml"><head>'
                       f"<title>{layout}{i}</title><style>p {{ color: red }}</style></head><body>{body}</body></html>")
            items.append(f'<item id="c{i}" href="{rel}{prefix}{i}.xhtml" media-type="application/xhtml+xml"/>')
            refs.append(f'<itemref idref="c{i}"/>')
        z.writestr(f"{folder}/nav.xhtml", '<html xmlns="http://www.w3.org/1999/xhtml"><body><nav>'
                   f"<ol><li>Contents of layout {layout}</li></ol></nav></body></html>")
        items.append(f'<item id="nav" href="{rel}nav.xhtml" properties="nav" media-type="application/xhtml+xml"/>')
        refs.insert(0, '<itemref idref="nav"/>')
        z.writestr(opf_name,
                   '<?xml version="1.0"?><package xmlns="http://www.idpf.org/2007/opf" version="3.0">'
                   '<metadata xmlns:dc="http://purl.org/dc/elements/1.1/">'
                   f"<dc:identifier>urn:uuid:{layout}</dc:identifier><dc:title>{title}</dc:title>"
                   f"<dc:creator>{author}</dc:creator></metadata>"
                   f"<manifest>{''.join(items)}</manifest><spine>{''.join(refs)}</spine></package>")
    return path


XCU_HEAD = ('<?xml version="1.0" encoding="UTF-8"?>\n<oor:items xmlns:oor="http://openoffice.org/2001/registry" '
            'xmlns:xs="http://www.w3.org/2001/XMLSchema" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">\n'
            '<item oor:path="/org.openoffice.Office.Common/Misc"><prop oor:name="FirstRun" oor:op="fuse">'
            '<value>false</value></prop></item>\n')


def xcu(path: Path, *items: str) -> Path:
    path.write_text(XCU_HEAD + "\n".join(items) + "\n</oor:items>\n", encoding="utf-8")
    return path


def default_font_item(font: str) -> str:
    return ('<item oor:path="/org.openoffice.Office.Writer/DefaultFont"><prop oor:name="Standard" oor:op="fuse">'
            f"<value>{font}</value></prop></item>")


# --------------------------------------------------------------------------- registration and option checks
def test_every_name_is_registered_and_supported():
    for name in NAMES:
        assert METRICS.get(name).status == SUPPORTED, name


@pytest.mark.parametrize("name,options,field", [
    ("compare_docx_files", {"fuzzy_match_threshold": 80}, "fuzzy_match_threshold"),
    ("compare_docx_files", {"ignore_blanks": "no"}, "ignore_blanks"),
    ("compare_references", {"reference_base_result": 1}, "reference_base_result"),
    ("compare_references", {"reference_indicator": ""}, "reference_indicator"),
    ("check_tabstops", {"word_number_split_by_tabstop": -1}, "word_number_split_by_tabstop"),
    ("evaluate_colored_words_in_tables", {"threshold": "3.5"}, "threshold"),
])
def test_bad_option_values_fail_the_load(name, options, field):
    with pytest.raises(OptionError) as err:
        METRICS.get(name).check(options)
    assert err.value.field == field


def test_the_suites_options_load():
    """The option sets the suite's task files write are accepted, names and values."""
    for name, options in [
        ("compare_docx_files", {"ignore_blanks": False}),
        ("compare_docx_files", {"ignore_blanks": False, "delete_empty_lines": True, "ignore_case": True,
                                "ignore_order": True, "content_only": False, "fuzzy_match": True,
                                "fuzzy_match_threshold": 0.9}),
        ("compare_references", {"content_only": True, "reference_base_result": 0.93}),
        ("check_tabstops", {"word_number_split_by_tabstop": 3, "index": 0}),
        ("compare_docx_files_and_ignore_new_lines", {"ignore_blanks": False}),
    ]:
        entry = METRICS.get(name)
        assert entry.unknown_fields(options) == []
        entry.check(options)
    [(name, close)] = METRICS.get("compare_docx_files").unknown_fields({"ignore_blank": True})
    assert name == "ignore_blank" and close[0] == "ignore_blanks"


# --------------------------------------------------------------------------- compare_docx_files
class TestCompareDocxFiles:
    def test_same_text_passes_and_other_text_fails(self, make_docx):
        gold = make_docx("gold.docx", "One paragraph.", "Two paragraphs.")
        assert D.compare_docx_files(make_docx("same.docx", "One paragraph.", "Two paragraphs."), gold) == 1.0
        assert D.compare_docx_files(make_docx("other.docx", "One paragraph.", "Two paragraph."), gold) == 0.0

    def test_ignore_blanks(self, make_docx):
        gold = make_docx("gold.docx", "One sentence. Two sentences.")
        split = make_docx("split.docx", "One sentence.", "", "Two  sentences.")
        assert D.compare_docx_files(split, gold) == 1.0  # default: whitespace runs, paragraph ends included
        assert D.compare_docx_files(split, gold, ignore_blanks=False) == 0.0
        spaced = make_docx("spaced.docx", "One sentence.", "", "Two sentences.")
        assert D.compare_docx_files(spaced, split, ignore_blanks=False) == 0.0  # paragraph text differs
        assert D.compare_docx_files(split, split, ignore_blanks=False) == 1.0

    def test_case_order_and_empty_lines(self, make_docx):
        gold = make_docx("gold.docx", "Alpha", "Beta")
        assert D.compare_docx_files(make_docx("c.docx", "ALPHA", "beta"), gold) == 0.0
        assert D.compare_docx_files(make_docx("c.docx", "ALPHA", "beta"), gold, ignore_case=True) == 1.0
        swapped = make_docx("s.docx", "Beta", "Alpha")
        assert D.compare_docx_files(swapped, gold, ignore_blanks=False) == 0.0
        assert D.compare_docx_files(swapped, gold, ignore_blanks=False, ignore_order=True) == 1.0
        gaps = make_docx("g.docx", "Alpha", "", "  ", "Beta")
        assert D.compare_docx_files(gaps, gold, ignore_blanks=False) == 0.0
        assert D.compare_docx_files(gaps, gold, ignore_blanks=False, delete_empty_lines=True) == 1.0

    def test_content_only_and_fuzzy_scores(self, make_docx):
        gold = make_docx("gold.docx", "The quick brown fox", "jumps over the lazy dog")
        near = make_docx("near.docx", "The quick brown fox", "jumps over the lazy cat")
        score = D.compare_docx_files(near, gold, content_only=True)
        assert 0.9 < score < 1.0
        assert D.compare_docx_files(near, gold, fuzzy_match=True) == pytest.approx(score)
        assert D.compare_docx_files(near, gold, fuzzy_match=True, fuzzy_match_threshold=0.9) == 1.0
        assert D.compare_docx_files(near, gold, fuzzy_match=True, fuzzy_match_threshold=0.99) == 0.0
        # per paragraph: the first matches, the second is thresholded away
        assert D.compare_docx_files(near, gold, ignore_blanks=False, fuzzy_match=True,
                                    fuzzy_match_threshold=0.99) == 0.5
        assert D.compare_docx_files(gold, gold, content_only=True) == 1.0

    def test_odt_and_docx(self, make_docx, make_odt):
        gold = make_odt("gold.odt", "First line.", [("Second ", None), ("line.", "#ffff00")])
        assert D.compare_docx_files(make_odt("same.odt", "First line.", "Second line."), gold) == 1.0
        assert D.compare_docx_files(make_odt("other.odt", "First line.", "Second lines."), gold) == 0.0
        # the format is read from the content: a docx with the same text equals it
        assert D.compare_docx_files(make_docx("same.docx", "Title", "First line.", "Second line."), gold) == 1.0

    def test_missing_or_unreadable_result_scores_0(self, make_docx, tmp_path):
        gold = make_docx("gold.docx", "Text")
        (tmp_path / "notes.docx").write_text("Text")
        assert D.compare_docx_files(None, gold) == 0.0
        assert D.compare_docx_files(tmp_path / "missing.docx", gold) == 0.0
        assert D.compare_docx_files(tmp_path / "notes.docx", gold) == 0.0

    def test_unreadable_expected_is_a_task_error(self, make_docx, tmp_path):
        (tmp_path / "gold.docx").write_bytes(b"PK\x03\x04 not really")
        with pytest.raises(MetricError):
            D.compare_docx_files(make_docx("r.docx", "Text"), tmp_path / "gold.docx")
        with pytest.raises(MetricError):
            D.compare_docx_files(make_docx("r.docx", "Text"), tmp_path / "absent.docx")


def test_compare_docx_files_and_ignore_new_lines(make_docx):
    gold = make_docx("gold.docx", "First.", "Second.")
    assert D.compare_docx_files_and_ignore_new_lines(make_docx("r.docx", "", "First.", "", "Second.", ""), gold) == 1.0
    assert D.compare_docx_files_and_ignore_new_lines(make_docx("r.docx", "First.", "", "Second."), gold,
                                                     ignore_blanks=False) == 1.0
    assert D.compare_docx_files_and_ignore_new_lines(make_docx("r.docx", "First. Second."), gold,
                                                     ignore_blanks=False) == 0.0
    assert D.compare_docx_files_and_ignore_new_lines(make_docx("r.docx", "First.", "Third."), gold) == 0.0


# --------------------------------------------------------------------------- tables and images
def table_doc(rows):
    def build(d):
        t = d.add_table(rows=len(rows), cols=len(rows[0]))
        for i, row in enumerate(rows):
            for j, text in enumerate(row):
                t.cell(i, j).text = text
    return build


def test_compare_docx_tables(make_docx):
    gold = make_docx("gold.docx", "Before", build=table_doc([["a", "b"], ["c", "d"]]))
    assert D.compare_docx_tables(make_docx("r.docx", "Changed", build=table_doc([["a ", "b"], ["c", " d"]])),
                                 gold) == 1.0
    assert D.compare_docx_tables(make_docx("r.docx", build=table_doc([["a", "b"], ["c", "e"]])), gold) == 0.0
    assert D.compare_docx_tables(make_docx("r.docx", build=table_doc([["a", "b", ""], ["c", "d", ""]])), gold) == 0.0
    assert D.compare_docx_tables(make_docx("r.docx", "no table"), gold) == 0.0
    empty = make_docx("g.docx", build=table_doc([[""] * 7] * 5))
    assert D.compare_docx_tables(make_docx("r.docx", build=table_doc([[""] * 7] * 5)), empty) == 1.0
    assert D.compare_docx_tables(make_docx("r.docx", build=table_doc([[""] * 5] * 7)), empty) == 0.0


def png(color, mode="RGB", size=(8, 6)) -> io.BytesIO:
    im = Image.new("RGB", size, color)
    out = io.BytesIO()
    (im.convert("P", palette=Image.Palette.ADAPTIVE) if mode == "P" else im).save(out, "PNG")
    out.seek(0)
    return out


def test_compare_docx_images(make_docx):
    def with_images(*images):
        return lambda d: [d.add_picture(im) for im in images]
    gold = make_docx("gold.docx", "Text", build=with_images(png((200, 10, 10)), png((10, 10, 200))))
    # the same pixels stored another way (a palette PNG) are the same image
    same = make_docx("same.docx", "Text", build=with_images(png((200, 10, 10), "P"), png((10, 10, 200))))
    assert D.compare_docx_images(same, gold) == 1.0
    swapped = make_docx("swap.docx", "Text", build=with_images(png((10, 10, 200)), png((200, 10, 10))))
    assert D.compare_docx_images(swapped, gold) == 0.0
    assert D.compare_docx_images(make_docx("one.docx", "Text", build=with_images(png((200, 10, 10)))), gold) == 0.0
    other = make_docx("other.docx", "Text", build=with_images(png((200, 10, 10)), png((10, 10, 201))))
    assert D.compare_docx_images(other, gold) == 0.0


# --------------------------------------------------------------------------- paragraph formatting
def spacing(values):
    """Line spacing per paragraph (None: leave it)."""
    def build(d):
        for p, v in zip(d.paragraphs, values):
            if v is not None:
                p.paragraph_format.line_spacing = v
    return build


class TestCompareLineSpacing:
    TEXT = ("Intro.", "Body.", "End.")

    def test_pass_and_fail(self, make_docx):
        gold = make_docx("gold.docx", *self.TEXT, build=spacing([2.0, 2.0, None]))
        assert D.compare_line_spacing(make_docx("r.docx", *self.TEXT, build=spacing([2.0, 2.0, None])), gold) == 1.0
        assert D.compare_line_spacing(make_docx("r.docx", *self.TEXT, build=spacing([2.0, 1.5, None])), gold) == 0.0
        assert D.compare_line_spacing(make_docx("r.docx", *self.TEXT), gold) == 0.0

    def test_spacing_from_a_style_is_the_spacing_shown(self, make_docx):
        gold = make_docx("gold.docx", *self.TEXT, build=spacing([2.0, 2.0, 2.0]))

        def by_style(d):
            d.styles["Normal"].paragraph_format.line_spacing = 2.0
        assert D.compare_line_spacing(make_docx("r.docx", *self.TEXT, build=by_style), gold) == 1.0

    def test_the_text_must_match(self, make_docx):
        gold = make_docx("gold.docx", *self.TEXT, build=spacing([2.0, 2.0, None]))
        assert D.compare_line_spacing(make_docx("r.docx", "Intro!", "Body.", "End.",
                                                build=spacing([2.0, 2.0, None])), gold) == 0.0


def test_is_first_line_centered(make_docx):
    def center_first(d):
        d.paragraphs[0].alignment = WD_ALIGN_PARAGRAPH.CENTER
    assert D.is_first_line_centered(make_docx("r.docx", "Heading", "Body", build=center_first)) == 1.0
    assert D.is_first_line_centered(make_docx("r.docx", "Heading", "Body")) == 0.0
    # a leading empty paragraph is not the first line
    assert D.is_first_line_centered(make_docx("r.docx", "", "Heading", build=lambda d: setattr(
        d.paragraphs[1], "alignment", WD_ALIGN_PARAGRAPH.CENTER))) == 1.0

    def centred_style(d):  # centred by its style, as a heading style may be
        d.styles["Title"].paragraph_format.alignment = WD_ALIGN_PARAGRAPH.CENTER
        d.add_paragraph("Heading", style="Title")
        d.add_paragraph("Body")
    assert D.is_first_line_centered(make_docx("r.docx", build=centred_style)) == 1.0
    assert D.is_first_line_centered(None) == 0.0


def tabbed(position_pt=300, align=WD_TAB_ALIGNMENT.RIGHT, texts=("Three words here\tthe rest",
                                                                  "And three more\tand the rest")):
    def build(d):
        for text in texts:
            p = d.add_paragraph(text)
            if position_pt is not None:
                p.paragraph_format.tab_stops.add_tab_stop(Pt(position_pt), align)
    return build


class TestCheckTabstops:
    def test_same_stops_pass(self, make_docx):
        gold = make_docx("gold.docx", build=tabbed())
        assert D.check_tabstops(make_docx("r.docx", build=tabbed()), gold,
                                word_number_split_by_tabstop=3, index=0) == 1.0

    def test_a_shifted_stop_scores_by_its_distance(self, make_docx):
        gold = make_docx("gold.docx", build=tabbed(300))
        width = 12240 - 2 * 1800  # python-docx's Letter page with 1.25-inch side margins, in twips
        expected = 1 - (20 * 20) / width  # each paragraph's stop 20 pt (400 twips) away
        assert D.check_tabstops(make_docx("r.docx", build=tabbed(320)), gold) == pytest.approx(expected)

    def test_alignment_count_and_words(self, make_docx):
        gold = make_docx("gold.docx", build=tabbed())
        assert D.check_tabstops(make_docx("r.docx", build=tabbed(align=WD_TAB_ALIGNMENT.CENTER)), gold) == 0.0
        assert D.check_tabstops(make_docx("r.docx", build=tabbed(None)), gold) == 0.0
        four = tabbed(texts=("Four words are here\tthe rest", "And three more\tand the rest"))
        assert D.check_tabstops(make_docx("r.docx", build=four), gold, word_number_split_by_tabstop=3) == 0.0
        assert D.check_tabstops(make_docx("r.docx", build=tabbed()), gold, word_number_split_by_tabstop=3,
                                index=5) == 0.0

    def test_a_stop_from_the_style_counts(self, make_docx):
        gold = make_docx("gold.docx", build=tabbed())

        def styled(d):
            d.styles["Normal"].paragraph_format.tab_stops.add_tab_stop(Pt(300), WD_TAB_ALIGNMENT.RIGHT)
            tabbed(None)(d)
        assert D.check_tabstops(make_docx("r.docx", build=styled), gold) == 1.0


# --------------------------------------------------------------------------- run formatting
def fonts(name=None, odd=None):
    """Every run in ``name``; with ``odd``, one run in that font instead."""
    def build(d):
        d.add_paragraph("One ").add_run("two")
        d.add_paragraph("Three")
        runs = [r for p in d.paragraphs for r in p.runs]
        for r in runs:
            if name:
                r.font.name = name
        if odd:
            runs[1].font.name = odd
    return build


def test_compare_font_names(make_docx):
    rule = {"font_name": "Times New Roman"}
    assert D.compare_font_names(make_docx("r.docx", build=fonts("Times New Roman")), rule) == 1.0
    assert D.compare_font_names(make_docx("r.docx", build=fonts("Times New Roman", odd="Arial")), rule) == 0.0
    assert D.compare_font_names(make_docx("r.docx", build=fonts()), rule) == 0.0

    def by_style(d):
        fonts()(d)
        d.styles["Normal"].font.name = "Times New Roman"
    assert D.compare_font_names(make_docx("r.docx", build=by_style), rule) == 1.0
    # no font anywhere but the theme's body font (python-docx's template: Cambria)
    assert D.compare_font_names(make_docx("r.docx", build=fonts()), {"font_name": "Cambria"}) == 1.0
    with pytest.raises(MetricError):
        D.compare_font_names(make_docx("r.docx", build=fonts()), {"font": "Arial"})


def h2o(where=2):
    """'H2O' with the character at ``where`` subscript (None: no subscript), one run a character."""
    def build(d):
        p = d.add_paragraph("Water is ")
        for k, ch in enumerate("H2O"):
            p.add_run(ch).font.subscript = k == where or None
        p.add_run(".")
    return build


def test_compare_subscript_contains(make_docx):
    gold = make_docx("gold.docx", build=h2o(1))
    assert D.compare_subscript_contains(make_docx("r.docx", build=h2o(1)), gold) == 1.0
    assert D.compare_subscript_contains(make_docx("r.docx", build=h2o(2)), gold) == 0.0
    assert D.compare_subscript_contains(make_docx("r.docx", build=h2o(None)), gold) == 0.0

    def one_run(d):  # the same text in differently cut runs
        p = d.add_paragraph("Water is H")
        p.add_run("2").font.subscript = True
        p.add_run("O.")
    assert D.compare_subscript_contains(make_docx("r.docx", build=one_run), gold) == 1.0


def italics(size=14, italic=True, by_style=False):
    def build(d):
        p = d.add_paragraph("Plain and ")
        run = p.add_run("slanted words")
        if by_style:
            style = d.styles.add_style("Slanted", WD_STYLE_TYPE.CHARACTER)
            style.font.italic = italic
            style.font.size = Pt(size)
            run.style = style
        else:
            run.italic = italic
            run.font.size = Pt(size)
        p.add_run(" end.")
    return build


def test_check_italic_font_size_14(make_docx):
    gold = make_docx("gold.docx", build=italics(14))
    assert D.check_italic_font_size_14(make_docx("r.docx", build=italics(14)), gold) == 1.0
    assert D.check_italic_font_size_14(make_docx("r.docx", build=italics(14, by_style=True)), gold) == 1.0
    assert D.check_italic_font_size_14(make_docx("r.docx", build=italics(12)), gold) == 0.0
    # dropping the italics does not pass
    assert D.check_italic_font_size_14(make_docx("r.docx", build=italics(14, italic=False)), gold) == 0.0
    assert D.check_italic_font_size_14(make_docx("r.docx", "Other", build=italics(14)), gold) == 0.0


def struck(kinds, trailing_empty=False):
    """The last paragraph's runs struck as ``kinds`` ('s' single, 'd' double, '-' none)."""
    def build(d):
        d.add_paragraph("Keep this.")
        p = d.add_paragraph()
        for k, kind in enumerate(kinds):
            run = p.add_run(("" if k == 0 else " ") + f"word{k}")
            if kind == "s":
                run.font.strike = True
            elif kind == "d":
                run.font.double_strike = True
        if trailing_empty:
            d.add_paragraph("")
    return build


def test_evaluate_strike_through_last_paragraph(make_docx):
    gold = make_docx("gold.docx", build=struck("sss"))
    assert D.evaluate_strike_through_last_paragraph(make_docx("r.docx", build=struck("sss")), gold) == 1.0
    assert D.evaluate_strike_through_last_paragraph(make_docx("r.docx", build=struck("sds", True)), gold) == 1.0
    assert D.evaluate_strike_through_last_paragraph(make_docx("r.docx", build=struck("s-s")), gold) == 0.0
    assert D.evaluate_strike_through_last_paragraph(make_docx("r.docx", build=struck("---")), gold) == 0.0


def colored(colors, words=("apple", "ball", "egg", "cat dog")):
    """A 2x2 table of ``words``, each word's run in the colour ``colors[word]`` (absent: automatic)."""
    def build(d):
        d.add_paragraph("Sight words")
        t = d.add_table(rows=2, cols=2)
        for i, cell_text in enumerate(words):
            par = t.cell(i // 2, i % 2).paragraphs[0]
            for k, word in enumerate(cell_text.split()):
                run = par.add_run(("" if k == 0 else " ") + word)
                if word in colors:
                    run.font.color.rgb = RGBColor(*colors[word])
    return build


class TestColoredWords:
    RED, BLUE = (255, 0, 0), (0, 0, 255)
    GOOD = {"apple": RED, "ball": BLUE, "egg": RED, "cat": BLUE, "dog": BLUE}

    def test_pass(self, make_docx):
        gold = make_docx("gold.docx", build=colored(self.GOOD))
        assert D.evaluate_colored_words_in_tables(make_docx("r.docx", build=colored(self.GOOD)), gold) == 1.0
        near = dict(self.GOOD, apple=(250, 0, 0))  # within the CIEDE2000 threshold
        assert D.evaluate_colored_words_in_tables(make_docx("r.docx", build=colored(near)), gold) == 1.0

    def test_fail(self, make_docx):
        gold = make_docx("gold.docx", build=colored(self.GOOD))
        wrong = dict(self.GOOD, egg=self.BLUE)
        assert D.evaluate_colored_words_in_tables(make_docx("r.docx", build=colored(wrong)), gold) == 0.0
        missing = {k: v for k, v in self.GOOD.items() if k != "dog"}
        assert D.evaluate_colored_words_in_tables(make_docx("r.docx", build=colored(missing)), gold) == 0.0
        near = dict(self.GOOD, apple=(250, 0, 0))
        assert D.evaluate_colored_words_in_tables(make_docx("r.docx", build=colored(near)), gold,
                                                  threshold=0.5) == 0.0
        # emptied tables do not pass vacuously
        empty = make_docx("r.docx", build=colored({}, words=("", "", "", "")))
        assert D.evaluate_colored_words_in_tables(empty, gold) == 0.0


def test_delta_e_2000_reference_values():
    """Sharma, Wu and Dalal's CIEDE2000 test data (pairs 1, 7, 17, 25)."""
    for lab1, lab2, want in [((50, 2.6772, -79.7751), (50, 0, -82.7485), 2.0425),
                             ((50, 0, 0), (50, -1, 2), 2.3669),
                             ((50, 2.5, 0), (73, 25, -18), 27.1492),
                             ((60.2574, -34.0099, 36.2677), (60.4626, -34.1751, 39.4387), 1.2644)]:
        assert delta_e_2000(lab1, lab2) == pytest.approx(want, abs=1e-4)
        assert delta_e_2000(lab2, lab1) == pytest.approx(want, abs=1e-4)


# --------------------------------------------------------------------------- footers and breaks
def footer(kind="field", sections=1, first_page_without=False):
    def build(d):
        d.add_paragraph("Page one")
        for _ in range(sections - 1):
            d.add_section(WD_SECTION.NEW_PAGE)
            d.add_paragraph("More")
        f = d.sections[0].footer.paragraphs[0]
        if kind == "field":
            add_page_field(f)
        elif kind == "simple":
            add_page_field(f, simple=True)
        elif kind == "digits":
            f.text = "Printed 2024"
        if first_page_without:
            d.sections[0].different_first_page_header_footer = True
            d.sections[0].first_page_footer.paragraphs[0].text = "Cover"
    return build


def test_has_page_numbers_in_footers(make_docx):
    assert D.has_page_numbers_in_footers(make_docx("r.docx", build=footer("field"))) == 1.0
    assert D.has_page_numbers_in_footers(make_docx("r.docx", build=footer("simple"))) == 1.0
    # later sections linked to the first show its footer
    assert D.has_page_numbers_in_footers(make_docx("r.docx", build=footer("field", sections=3))) == 1.0
    assert D.has_page_numbers_in_footers(make_docx("r.docx", build=footer("digits"))) == 0.0
    assert D.has_page_numbers_in_footers(make_docx("r.docx", build=footer(None))) == 0.0
    assert D.has_page_numbers_in_footers(make_docx("r.docx", build=footer("field", first_page_without=True))) == 0.0

    def own_footer_without(d):  # a second section with its own footer and no number
        footer("field", sections=2)(d)
        d.sections[1].footer.is_linked_to_previous = False
        d.sections[1].footer.paragraphs[0].text = "Appendix"
    assert D.has_page_numbers_in_footers(make_docx("r.docx", build=own_footer_without)) == 0.0


def test_contains_page_break(make_docx):
    def page_break(d):
        d.add_paragraph("Page one").add_run().add_break(WD_BREAK.PAGE)
        d.add_paragraph("Page two")
    assert D.contains_page_break(make_docx("r.docx", build=page_break)) == 1.0
    assert D.contains_page_break(make_docx("r.docx", build=page_break), {"page_break_count": 1}) == 1.0
    assert D.contains_page_break(make_docx("r.docx", build=page_break), {"page_break_count": 2}) == 0.0

    def line_break(d):
        d.add_paragraph("Line one").add_run().add_break(WD_BREAK.LINE)
    assert D.contains_page_break(make_docx("r.docx", build=line_break)) == 0.0
    assert D.contains_page_break(make_docx("r.docx", "Just text")) == 0.0

    def break_before(d):
        d.add_paragraph("Page one")
        d.add_paragraph("Page two").paragraph_format.page_break_before = True
    assert D.contains_page_break(make_docx("r.docx", build=break_before)) == 1.0
    with pytest.raises(MetricError):
        D.contains_page_break(make_docx("r.docx", "x"), {"page_break_count": "one"})


def test_a_page_break_before_a_named_paragraph(make_docx):
    def paras(d, break_at):
        for text in ("Intro", "Middle", "Outlook", "Closing"):
            p = d.add_paragraph(text)
            if text == break_at:
                p.add_run().add_break(WD_BREAK.PAGE)
    rule = {"page_break_count": 1, "before_text": "Outlook"}
    assert D.contains_page_break(make_docx("r.docx", build=lambda d: paras(d, "Middle")), rule) == 1.0
    assert D.contains_page_break(make_docx("r.docx", build=lambda d: paras(d, "Intro")), rule) == 0.0
    assert D.contains_page_break(make_docx("r.docx", build=lambda d: paras(d, "Outlook")), rule) == 0.0  # after it
    assert D.contains_page_break(make_docx("r.docx", build=lambda d: paras(d, None)), rule) == 0.0

    def blank_between(d):  # as Writer saves Ctrl+Enter at a paragraph's start: the break in an empty paragraph
        d.add_paragraph("Middle")
        d.add_paragraph().add_run().add_break(WD_BREAK.PAGE)
        d.add_paragraph("Outlook")
    assert D.contains_page_break(make_docx("r.docx", build=blank_between), rule) == 1.0

    def break_before(d):
        d.add_paragraph("Middle")
        d.add_paragraph("Outlook").paragraph_format.page_break_before = True
    assert D.contains_page_break(make_docx("r.docx", build=break_before), rule) == 1.0
    assert D.contains_page_break(make_docx("r.docx", build=break_before), {"before_text": "Middle"}) == 0.0
    with pytest.raises(MetricError):
        D.contains_page_break(make_docx("r.docx", "x"), {"before_text": 3})


# --------------------------------------------------------------------------- highlights
class TestCheckHighlightedWords:
    def test_removed_highlight_passes(self, make_odt):
        gold = make_odt("gold.odt", "Please fix this word now.")
        assert D.check_highlighted_words(make_odt("r.odt", "Please fix this word now."), gold) == 1.0
        # a span whose background was set to none shows no highlight
        cleared = make_odt("r.odt", [("Please fix ", None), ("this word", "transparent"), (" now.", None)])
        assert D.check_highlighted_words(cleared, gold) == 1.0

    def test_left_highlight_fails(self, make_odt):
        gold = make_odt("gold.odt", "Please fix this word now.")
        left = make_odt("r.odt", [("Please fix ", None), ("this word", "#ffff00"), (" now.", None)])
        assert D.check_highlighted_words(left, gold) == 0.0
        other_colour = make_odt("r.odt", [("Please fix ", None), ("this word", "#00ff00"), (" now.", None)])
        assert D.check_highlighted_words(other_colour, gold) == 0.0
        whole = make_odt("r.odt", "Please fix this word now.", paragraph_background="#ffff00")
        assert D.check_highlighted_words(whole, gold) == 0.0
        assert D.check_highlighted_words(make_odt("r.odt", "Please fix that word now."), gold) == 0.0

    def test_highlight_the_gold_keeps_must_stay(self, make_odt):
        gold = make_odt("gold.odt", [("Keep ", None), ("this", "#c0c0c0"), (" shaded.", None)])
        assert D.check_highlighted_words(make_odt("r.odt", [("Keep ", None), ("this", "#c0c0c0"), (" shaded.", None)]),
                                         gold) == 1.0
        assert D.check_highlighted_words(make_odt("r.odt", "Keep this shaded."), gold) == 0.0

    def test_docx_highlight(self, make_docx):
        gold = make_docx("gold.docx", "Fix this word.")

        def marked(d):
            p = d.add_paragraph("Fix ")
            p.add_run("this word").font.highlight_color = 7  # yellow
            p.add_run(".")
        assert D.check_highlighted_words(make_docx("r.docx", "Fix this word."), gold) == 1.0
        assert D.check_highlighted_words(make_docx("r.docx", build=marked), gold) == 0.0


# --------------------------------------------------------------------------- references and records
REFS = ["Smith, J. (2020). A study of things. Journal of Stuff, 1(2), 3-4.",
        "Doe, A., & Roe, B. (2019). Another title. Publisher."]


class TestCompareReferences:
    def test_identical_lists_score_1(self, make_docx):
        gold = make_docx("gold.docx", "Essay text.", "References", *REFS)
        assert D.compare_references(make_docx("r.docx", "Other text.", "References", "", *REFS), gold,
                                    content_only=True, reference_base_result=0.93) == 1.0

    def test_a_near_list_scores_between(self, make_docx):
        gold = make_docx("gold.docx", "References", *REFS)
        near = make_docx("r.docx", "References", REFS[0], REFS[1].replace("Publisher", "Publishers"))
        score = D.compare_references(near, gold, reference_base_result=0.5)
        assert 0.9 < score < 1.0
        assert D.compare_references(near, gold, reference_base_result=0.995) == 0.0

    def test_missing_or_different_lists(self, make_docx):
        gold = make_docx("gold.docx", "References", *REFS)
        assert D.compare_references(make_docx("r.docx", "Bibliography", *REFS), gold) == 0.0
        assert D.compare_references(make_docx("r.docx", "References", REFS[0]), gold) == 0.0
        assert D.compare_references(make_docx("r.docx", "Bibliography", *REFS), gold,
                                    reference_indicator="Bibliography") == 0.0
        assert D.compare_references(make_docx("r.docx", "No list"), make_docx("g.docx", "None here")) == 1.0


RECORDS = ["06:00:01, T1, S1, 1", "06:05:00, T2, S2, 2", "06:10:00, T1, S3, 1", "06:20:00, T3, S1, 2"]


class TestCompareUniqueTrainRecords:
    def test_pass(self, make_docx):
        initial = make_docx("initial.docx", *RECORDS)
        gold = make_docx("gold.docx", RECORDS[0], RECORDS[1], RECORDS[3])
        # another record of T1 may be kept instead of the gold's
        result = make_docx("r.docx", RECORDS[1], "", RECORDS[2], RECORDS[3])
        assert D.compare_unique_train_records(result, [gold, initial]) == 1.0

    def test_fail(self, make_docx):
        initial = make_docx("initial.docx", *RECORDS)
        gold = make_docx("gold.docx", RECORDS[0], RECORDS[1], RECORDS[3])
        expected = [gold, initial]
        assert D.compare_unique_train_records(make_docx("r.docx", *RECORDS), expected) == 0.0  # T1 twice
        assert D.compare_unique_train_records(make_docx("r.docx", RECORDS[0], RECORDS[1]), expected) == 0.0
        edited = make_docx("r.docx", RECORDS[0], RECORDS[1], "06:20:00, T3, S9, 2")
        assert D.compare_unique_train_records(edited, expected) == 0.0  # not a line of the initial file
        assert D.compare_unique_train_records(None, expected) == 0.0
        with pytest.raises(MetricError):
            D.compare_unique_train_records(make_docx("r.docx", *RECORDS), gold)


# --------------------------------------------------------------------------- LibreOffice's settings
class TestFindDefaultFont:
    RULE = {"font_name": "Times New Roman"}

    def test_pass(self, tmp_path):
        assert D.find_default_font(xcu(tmp_path / "r.xcu", default_font_item("Times New Roman")), self.RULE) == 1.0
        # the later setting wins
        both = xcu(tmp_path / "b.xcu", default_font_item("Arial"), default_font_item("Times New Roman"))
        assert D.find_default_font(both, self.RULE) == 1.0
        nested = xcu(tmp_path / "n.xcu", '<item oor:path="/org.openoffice.Office.Writer"><node oor:name="DefaultFont">'
                     '<prop oor:name="Standard" oor:op="fuse"><value>Times New Roman</value></prop></node></item>')
        assert D.find_default_font(nested, self.RULE) == 1.0

    def test_fail(self, tmp_path):
        assert D.find_default_font(xcu(tmp_path / "r.xcu", default_font_item("Liberation Serif")), self.RULE) == 0.0
        other_prop = ('<item oor:path="/org.openoffice.Office.Writer/DefaultFont"><prop oor:name="Heading" '
                      'oor:op="fuse"><value>Times New Roman</value></prop></item>')
        assert D.find_default_font(xcu(tmp_path / "h.xcu", other_prop), self.RULE) == 0.0
        assert D.find_default_font(xcu(tmp_path / "e.xcu"), self.RULE) == 0.0
        (tmp_path / "bad.xcu").write_text("<oor:items")
        assert D.find_default_font(tmp_path / "bad.xcu", self.RULE) == 0.0
        assert D.find_default_font(None, self.RULE) == 0.0
        with pytest.raises(MetricError):
            D.find_default_font(xcu(tmp_path / "r.xcu"), {"name": "Arial"})


# --------------------------------------------------------------------------- epub
BOOK = [["Chapter One", "It was a dark night.", "The end of one."], ["Chapter Two", "Morning came."]]


class TestCompareEpub:
    def test_same_text_in_another_layout_scores_1(self, tmp_path):
        gold = epub(tmp_path / "gold.epub", BOOK)
        other = epub(tmp_path / "r.epub", [BOOK[0][:2], BOOK[0][2:] + BOOK[1]], layout="b")
        assert D.compare_epub(other, gold) == 1.0  # the chapters cut elsewhere, in other files
        assert D.compare_epub(epub(tmp_path / "same.epub", BOOK, layout="b"), gold) == 1.0

    def test_changed_text_scores_less(self, tmp_path):
        gold = epub(tmp_path / "gold.epub", BOOK)
        changed = epub(tmp_path / "r.epub", [BOOK[0], ["Chapter Two", "Evening came."]])
        score = D.compare_epub(changed, gold)
        assert 0.5 < score < 1.0
        assert D.compare_epub(epub(tmp_path / "t.epub", BOOK, title="Another Book"), gold) < 1.0

    def test_unreadable(self, tmp_path):
        gold = epub(tmp_path / "gold.epub", BOOK)
        (tmp_path / "r.epub").write_text("not a zip")
        assert D.compare_epub(tmp_path / "r.epub", gold) == 0.0
        assert D.compare_epub(None, gold) == 0.0
        with pytest.raises(MetricError):
            D.compare_epub(gold, tmp_path / "missing.epub")


# --------------------------------------------------------------------------- as Writer saves them
WRITER = Path("/usr/lib/libreoffice/program/libswlo.so")


def everything(d, double=True):
    """One document with every feature the metrics read, for a round trip through Writer."""
    d.styles["Normal"].font.name = "Times New Roman"
    d.add_paragraph("The Heading").alignment = WD_ALIGN_PARAGRAPH.CENTER
    h2o(1)(d)
    d.paragraphs[-1].paragraph_format.line_spacing = 2.0 if double else 1.0
    italics(14)(d)
    tabbed(texts=("Three words here\tthe rest",))(d)
    d.add_paragraph("End of page one.").add_run().add_break(WD_BREAK.PAGE)
    colored(TestColoredWords.GOOD)(d)
    d.add_picture(png((200, 10, 10)))
    add_page_field(d.sections[0].footer.paragraphs[0])
    d.add_paragraph("References")
    for ref in REFS:
        d.add_paragraph(ref)
    struck("sss")(d)


@pytest.mark.slow
@pytest.mark.skipif(not WRITER.exists(), reason="LibreOffice Writer is not installed")
def test_files_saved_by_writer_score_like_their_source(make_docx, tmp_path):
    """The gold files of the suite are saved by Writer: its docx and odt must read as the document they came
    from (styles, fields, breaks and colours as Writer writes them)."""
    import os
    import shutil
    import subprocess
    source = make_docx("source.docx", build=everything)
    out = tmp_path / "writer"
    for target in ("docx:MS Word 2007 XML", "odt"):
        subprocess.run([shutil.which("soffice"), f"-env:UserInstallation=file://{tmp_path}/profile", "--headless",
                        "--convert-to", target, "--outdir", str(out), str(source)], check=True, timeout=300,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env={**os.environ, "HOME": str(tmp_path)})
    saved, odt = out / "source.docx", out / "source.odt"
    for name in ("compare_docx_files", "compare_docx_tables", "compare_docx_images", "compare_line_spacing",
                 "compare_subscript_contains", "check_italic_font_size_14", "evaluate_strike_through_last_paragraph",
                 "evaluate_colored_words_in_tables", "check_tabstops", "compare_references", "check_highlighted_words"):
        assert getattr(D, name)(saved, source) == 1.0, name
    assert D.compare_font_names(saved, {"font_name": "Times New Roman"}) == 1.0
    assert D.is_first_line_centered(saved) == 1.0
    assert D.has_page_numbers_in_footers(saved) == 1.0
    assert D.contains_page_break(saved, {"page_break_count": 1}) == 1.0
    assert D.compare_docx_files(odt, saved, ignore_blanks=False) == 1.0
    assert D.check_highlighted_words(odt, saved) == 1.0
    # and a change still shows: the saved file is not the source with single spacing
    single = make_docx("single.docx", build=lambda d: everything(d, double=False))
    assert D.compare_docx_files(saved, single) == 1.0
    assert D.compare_line_spacing(saved, single) == 0.0
