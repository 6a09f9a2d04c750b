"""Every document and presentation metric says why it scores below 1, read with ``judge`` on real files.

Each case builds a result and an expected side in ``tmp_path`` and names the metric, the reason kind
and the parts of the reason's text that locate the difference (the paragraph, run, cell, slide, file,
measured value...). Every metric also has a passing case, and a missing result (None, or a path that
does not exist) must give ``missing_result`` naming the path.
"""
from __future__ import annotations

from pathlib import Path

import pytest
from docx.enum.text import WD_ALIGN_PARAGRAPH, WD_BREAK, WD_TAB_ALIGNMENT
from pptx.dml.color import RGBColor
from pptx.enum.text import PP_ALIGN
from pptx.util import Inches, Pt

from desktop_env.evaluators.evaluator import judge
from desktop_env.evaluators.metrics import document_format, documents, files_documents, presentations, slides
from desktop_env.evaluators.reasons import (
    MISSING_RESULT, PASSED, RULE_FAILED, STRUCTURE_MISMATCH, THRESHOLD_NOT_MET, UNREADABLE_RESULT, VALUE_MISMATCH,
)
from desktop_env.evaluators.values import GuestText
from desktop_env.registry import METRICS
from tests.metrics.test_documents import (
    BOOK, RECORDS, REFS, colored, default_font_item, docx_file, epub, footer, fonts, h2o, italics,
    odt_file, png, spacing, struck, table_doc, tabbed,
)
from tests.metrics.test_documents import xcu as writer_xcu
from tests.metrics.test_files_metrics import make_image_pdf, make_pdf, make_tar, make_zip, pdf_bytes
from tests.metrics.test_presentations import (
    SAVE, START, H, W, add_transition, blank_deck, body_run, deck_file, draw_picture, number_colour, pin, shape,
    text_image, tree,
)
from tests.metrics.test_presentations import xcu as impress_xcu

MODULES = (documents, document_format, files_documents, presentations, slides)

#: (metric, make, kind, parts, score): ``make(tmp_path) -> (result, expected, options)``; the tests that run
#: them are at the end of the file, after every case is registered
CASES: list = []


def case(metric: str, kind: str = PASSED, *parts: str, score: float | tuple[float, float] | None = None,
         name: str | None = None):
    """Register the decorated ``make(tmp_path) -> (result, expected, options)`` as a case of ``metric``.

    Args:
        kind: the reason kind the verdict must have (``passed`` for a right answer).
        parts: texts the reason's text must hold.
        score: the score (1 for ``passed``, 0 by default otherwise), or ``(low, high)`` for a partial one.
        name: the case's id (default: the function's name).
    """
    def deco(make):
        CASES.append(pytest.param(metric, make, kind, parts, score, id=f"{metric}-{name or make.__name__}"))
        return make
    return deco


# =========================================================================== documents: text
@case("compare_docx_files")
def same_paragraphs(t):
    return (docx_file(t / "r.docx", "One paragraph.", "Two paragraphs."),
            docx_file(t / "gold.docx", "One paragraph.", "Two paragraphs."), {})


@case("compare_docx_files", VALUE_MISMATCH, "paragraph 2: expected 'Two paragraphs.', got 'Two paragraph.'")
def a_word_differs(t):
    return (docx_file(t / "r.docx", "One paragraph.", "Two paragraph."),
            docx_file(t / "gold.docx", "One paragraph.", "Two paragraphs."), {})


@case("compare_docx_files", VALUE_MISMATCH, "paragraph 3 (expected paragraph 1)", "got 'Two sentence.'")
def split_text_differs(t):
    return (docx_file(t / "r.docx", "One sentence.", "", "Two  sentence."),
            docx_file(t / "gold.docx", "One sentence. Two sentences."), {})


@case("compare_docx_files", STRUCTURE_MISMATCH, "3 paragraphs, expected 1")
def paragraph_count(t):
    return (docx_file(t / "r.docx", "One sentence.", "", "Two sentences."),
            docx_file(t / "gold.docx", "One sentence. Two sentences."), {"ignore_blanks": False})


@case("compare_docx_files", STRUCTURE_MISMATCH, "3 non-blank paragraphs, expected 2")
def non_blank_paragraph_count(t):
    return (docx_file(t / "r.docx", "Alpha", "", "Beta", "Gamma"), docx_file(t / "gold.docx", "Alpha", "Beta"),
            {"ignore_blanks": False, "delete_empty_lines": True})


@case("compare_docx_files", VALUE_MISMATCH, "paragraph 2: expected 'Beta', got 'Beat'")
def one_paragraph_differs(t):
    return (docx_file(t / "r.docx", "Alpha", "Beat"), docx_file(t / "gold.docx", "Alpha", "Beta"),
            {"ignore_blanks": False})


@case("compare_docx_files", VALUE_MISMATCH, "text similarity 0.9", "paragraph 2", "'jumps over the lazy dog'",
      "'jumps over the lazy cat'", score=(0.9, 1.0))
def content_only_similarity(t):
    return (docx_file(t / "r.docx", "The quick brown fox", "jumps over the lazy cat"),
            docx_file(t / "gold.docx", "The quick brown fox", "jumps over the lazy dog"), {"content_only": True})


@case("compare_docx_files", THRESHOLD_NOT_MET, "below fuzzy_match_threshold 0.99", "paragraph 2")
def fuzzy_threshold(t):
    return (docx_file(t / "r.docx", "The quick brown fox", "jumps over the lazy cat"),
            docx_file(t / "gold.docx", "The quick brown fox", "jumps over the lazy dog"),
            {"fuzzy_match": True, "fuzzy_match_threshold": 0.99})


@case("compare_docx_files", THRESHOLD_NOT_MET, "paragraph 2: similarity 0.8", "fuzzy_match_threshold 0.99",
      "'jumps over the lazy cat'", score=0.5)
def fuzzy_threshold_per_paragraph(t):
    return (docx_file(t / "r.docx", "The quick brown fox", "jumps over the lazy cat"),
            docx_file(t / "gold.docx", "The quick brown fox", "jumps over the lazy dog"),
            {"ignore_blanks": False, "fuzzy_match": True, "fuzzy_match_threshold": 0.99})


@case("compare_docx_files", VALUE_MISMATCH, "paragraph 3: expected 'Second line.', got 'Second lines.'")
def odt_text_differs(t):
    return (odt_file(t / "r.odt", "First line.", "Second lines."), odt_file(t / "gold.odt", "First line.",
                                                                         "Second line."), {})


@case("compare_docx_files", UNREADABLE_RESULT, "notes.docx", "not a docx or odt document")
def text_file_named_docx(t):
    (t / "notes.docx").write_text("One paragraph.")
    return t / "notes.docx", docx_file(t / "gold.docx", "One paragraph."), {}


@case("compare_docx_files_and_ignore_new_lines")
def empty_lines_dropped(t):
    return (docx_file(t / "r.docx", "", "First.", "", "Second.", ""), docx_file(t / "gold.docx", "First.",
                                                                                "Second."), {})


@case("compare_docx_files_and_ignore_new_lines", VALUE_MISMATCH, "paragraph 2: expected 'Second.', got 'Third.'")
def other_second_line(t):
    return (docx_file(t / "r.docx", "First.", "", "Third."), docx_file(t / "gold.docx", "First.", "Second."), {})


@case("compare_docx_files_and_ignore_new_lines", STRUCTURE_MISMATCH, "1 paragraph, expected 2")
def joined_lines(t):
    return (docx_file(t / "r.docx", "First. Second."), docx_file(t / "gold.docx", "First.", "Second."),
            {"ignore_blanks": False})


# =========================================================================== documents: tables, images
@case("compare_docx_tables")
def same_tables(t):
    return (docx_file(t / "r.docx", "Changed", build=table_doc([["a ", "b"], ["c", " d"]])),
            docx_file(t / "gold.docx", "Before", build=table_doc([["a", "b"], ["c", "d"]])), {})


@case("compare_docx_tables", VALUE_MISMATCH, "table 1, row 2, column 2: expected 'd', got 'e'")
def cell_differs(t):
    return (docx_file(t / "r.docx", build=table_doc([["a", "b"], ["c", "e"]])),
            docx_file(t / "gold.docx", build=table_doc([["a", "b"], ["c", "d"]])), {})


@case("compare_docx_tables", STRUCTURE_MISMATCH, "table 1: 2 rows x 3 columns, expected 2 rows x 2 columns")
def table_wider(t):
    return (docx_file(t / "r.docx", build=table_doc([["a", "b", ""], ["c", "d", ""]])),
            docx_file(t / "gold.docx", build=table_doc([["a", "b"], ["c", "d"]])), {})


@case("compare_docx_tables", STRUCTURE_MISMATCH, "0 tables, expected 1")
def no_table(t):
    return (docx_file(t / "r.docx", "no table"), docx_file(t / "gold.docx", build=table_doc([["a", "b"]])), {})


def pictures_of(*colors):
    return lambda d: [d.add_picture(png(c)) for c in colors]


@case("compare_docx_images")
def same_images(t):
    return (docx_file(t / "r.docx", "Text", build=pictures_of((200, 10, 10), (10, 10, 200))),
            docx_file(t / "gold.docx", "Text", build=pictures_of((200, 10, 10), (10, 10, 200))), {})


@case("compare_docx_images", VALUE_MISMATCH, "image 1: 8 x 6 pixels, expected 8 x 6 pixels (other pixels)")
def images_swapped(t):
    return (docx_file(t / "r.docx", "Text", build=pictures_of((10, 10, 200), (200, 10, 10))),
            docx_file(t / "gold.docx", "Text", build=pictures_of((200, 10, 10), (10, 10, 200))), {})


@case("compare_docx_images", STRUCTURE_MISMATCH, "1 image in the body, expected 2")
def an_image_missing(t):
    return (docx_file(t / "r.docx", "Text", build=pictures_of((200, 10, 10))),
            docx_file(t / "gold.docx", "Text", build=pictures_of((200, 10, 10), (10, 10, 200))), {})


# =========================================================================== documents: references, records
@case("compare_references")
def same_references(t):
    return (docx_file(t / "r.docx", "Other text.", "References", "", *REFS),
            docx_file(t / "gold.docx", "Essay text.", "References", *REFS), {"reference_base_result": 0.93})


@case("compare_references", VALUE_MISMATCH, "mean reference similarity 0.99", "reference 2 (0.99",
      "got 'Doe, A., & Roe, B. (2019). Another title. Publishers.'", score=(0.9, 1.0))
def near_references(t):
    return (docx_file(t / "r.docx", "References", REFS[0], REFS[1].replace("Publisher", "Publishers")),
            docx_file(t / "gold.docx", "References", *REFS), {"reference_base_result": 0.5})


@case("compare_references", THRESHOLD_NOT_MET, "does not reach 1.005", "reference 2")
def references_below_base(t):
    return (docx_file(t / "r.docx", "References", REFS[0], REFS[1].replace("Publisher", "Publishers")),
            docx_file(t / "gold.docx", "References", *REFS), {"reference_base_result": 0.995})


@case("compare_references", STRUCTURE_MISMATCH, "no paragraph 'References'", "lists 2 entries")
def no_reference_heading(t):
    return docx_file(t / "r.docx", "Bibliography", *REFS), docx_file(t / "gold.docx", "References", *REFS), {}


@case("compare_references", STRUCTURE_MISMATCH, "1 reference after 'References', expected 2")
def a_reference_missing(t):
    return docx_file(t / "r.docx", "References", REFS[0]), docx_file(t / "gold.docx", "References", *REFS), {}


def train_docs(t, *lines):
    return (docx_file(t / "r.docx", *lines), [docx_file(t / "gold.docx", RECORDS[0], RECORDS[1], RECORDS[3]),
                                              docx_file(t / "initial.docx", *RECORDS)], {})


@case("compare_unique_train_records")
def one_record_per_train(t):
    return train_docs(t, RECORDS[1], "", RECORDS[2], RECORDS[3])


@case("compare_unique_train_records", RULE_FAILED, "train id 'T1' is kept 2 times")
def a_train_twice(t):
    return train_docs(t, *RECORDS)


@case("compare_unique_train_records", RULE_FAILED, "line 3 '06:20:00, T3, S9, 2' is not a line of the initial")
def an_edited_record(t):
    return train_docs(t, RECORDS[0], RECORDS[1], "06:20:00, T3, S9, 2")


@case("compare_unique_train_records", VALUE_MISMATCH, "missing ['T3'], extra []")
def a_train_dropped(t):
    return train_docs(t, RECORDS[0], RECORDS[1])


# =========================================================================== documents: settings, epub
FONT_RULE = {"font_name": "Times New Roman"}


@case("find_default_font")
def default_font_set(t):
    return writer_xcu(t / "r.xcu", default_font_item("Times New Roman")), FONT_RULE, {}


@case("find_default_font", VALUE_MISMATCH, "Writer's default font", "expected 'Times New Roman', got "
                                                                    "'Liberation Serif'")
def other_default_font(t):
    return writer_xcu(t / "r.xcu", default_font_item("Liberation Serif")), FONT_RULE, {}


@case("find_default_font", VALUE_MISMATCH, "expected 'Times New Roman', got none set")
def default_font_unset(t):
    return writer_xcu(t / "r.xcu"), FONT_RULE, {}


@case("find_default_font", UNREADABLE_RESULT, "bad.xcu is not readable XML")
def broken_xcu(t):
    (t / "bad.xcu").write_text("<oor:items")
    return t / "bad.xcu", FONT_RULE, {}


@case("compare_epub")
def same_book_other_layout(t):
    return epub(t / "r.epub", BOOK, layout="b"), epub(t / "gold.epub", BOOK), {}


@case("compare_epub", VALUE_MISMATCH, "line similarity 0.8", "line 7: expected 'Morning came.', got "
                                                            "'Evening came.'", score=(0.5, 1.0))
def changed_line(t):
    return epub(t / "r.epub", [BOOK[0], ["Chapter Two", "Evening came."]]), epub(t / "gold.epub", BOOK), {}


@case("compare_epub", UNREADABLE_RESULT, "r.epub", "not a zip archive")
def epub_not_a_zip(t):
    (t / "r.epub").write_text("not a zip")
    return t / "r.epub", epub(t / "gold.epub", BOOK), {}


# =========================================================================== document formatting
TEXT = ("Intro.", "Body.", "End.")


@case("compare_line_spacing")
def same_spacing(t):
    return (docx_file(t / "r.docx", *TEXT, build=spacing([2.0, 2.0, None])),
            docx_file(t / "gold.docx", *TEXT, build=spacing([2.0, 2.0, None])), {})


@case("compare_line_spacing", VALUE_MISMATCH, "paragraph 2 ('Body.'): line spacing expected 2 lines (480/240), "
                                              "got 1.5 lines (360/240)")
def other_spacing(t):
    return (docx_file(t / "r.docx", *TEXT, build=spacing([2.0, 1.5, None])),
            docx_file(t / "gold.docx", *TEXT, build=spacing([2.0, 2.0, None])), {})


@case("compare_line_spacing", VALUE_MISMATCH, "the text differs from the expected document's: paragraph 1: "
                                              "expected 'Intro.', got 'Intro!'")
def spacing_on_other_text(t):
    return (docx_file(t / "r.docx", "Intro!", "Body.", "End.", build=spacing([2.0, 2.0, None])),
            docx_file(t / "gold.docx", *TEXT, build=spacing([2.0, 2.0, None])), {})


def centred(d):
    d.paragraphs[0].alignment = WD_ALIGN_PARAGRAPH.CENTER


@case("is_first_line_centered")
def first_line_centred(t):
    return docx_file(t / "r.docx", "Heading", "Body", build=centred), None, {}


@case("is_first_line_centered", VALUE_MISMATCH, "paragraph 1 ('Heading')", "alignment expected 'center', got 'left'")
def first_line_left(t):
    return docx_file(t / "r.docx", "Heading", "Body"), None, {}


@case("is_first_line_centered", RULE_FAILED, "no paragraph with text")
def no_first_line(t):
    return docx_file(t / "r.docx", "", "  "), None, {}


@case("check_tabstops")
def same_tab_stops(t):
    return (docx_file(t / "r.docx", build=tabbed()), docx_file(t / "gold.docx", build=tabbed()),
            {"word_number_split_by_tabstop": 3, "index": 0})


@case("check_tabstops", VALUE_MISMATCH, "tab stops off by 0.0", "paragraph 1 ('Three words here\\tthe rest')",
      "expected right at 6000 twips, got right at 6400 twips", score=(0.9, 1.0))
def shifted_tab_stops(t):
    return docx_file(t / "r.docx", build=tabbed(320)), docx_file(t / "gold.docx", build=tabbed(300)), {}


@case("check_tabstops", VALUE_MISMATCH, "paragraph 1", "tab stops expected right at 6000 twips, got center at 6000")
def centred_tab_stops(t):
    return (docx_file(t / "r.docx", build=tabbed(align=WD_TAB_ALIGNMENT.CENTER)),
            docx_file(t / "gold.docx", build=tabbed()), {})


@case("check_tabstops", THRESHOLD_NOT_MET, "paragraph 1 ('Four words are here\\tthe rest'): part 0",
      "holds 4 words, expected 3")
def four_words_before_the_tab(t):
    four = tabbed(texts=("Four words are here\tthe rest", "And three more\tand the rest"))
    return (docx_file(t / "r.docx", build=four), docx_file(t / "gold.docx", build=tabbed()),
            {"word_number_split_by_tabstop": 3})


@case("check_tabstops", STRUCTURE_MISMATCH, "3 paragraphs with text, expected 2")
def an_extra_tabbed_line(t):
    return (docx_file(t / "r.docx", "Extra", build=tabbed()), docx_file(t / "gold.docx", build=tabbed()), {})


@case("compare_font_names")
def every_run_in_the_font(t):
    return docx_file(t / "r.docx", build=fonts("Times New Roman")), FONT_RULE, {}


@case("compare_font_names", VALUE_MISMATCH, "paragraph 1, run 'two': font expected 'Times New Roman', got 'Arial'")
def one_run_in_arial(t):
    return docx_file(t / "r.docx", build=fonts("Times New Roman", odd="Arial")), FONT_RULE, {}


@case("compare_subscript_contains")
def same_subscript(t):
    return docx_file(t / "r.docx", build=h2o(1)), docx_file(t / "gold.docx", build=h2o(1)), {}


@case("compare_subscript_contains", VALUE_MISMATCH, "paragraph 1, character 11 ('2' in 'H2O.')",
      "expected subscript", "got 'baseline'")
def subscript_elsewhere(t):
    return docx_file(t / "r.docx", build=h2o(2)), docx_file(t / "gold.docx", build=h2o(1)), {}


@case("compare_subscript_contains", RULE_FAILED, "the expected document has no subscript")
def gold_without_subscript(t):
    return docx_file(t / "r.docx", build=h2o(1)), docx_file(t / "gold.docx", build=h2o(None)), {}


@case("check_italic_font_size_14")
def italics_at_14(t):
    return docx_file(t / "r.docx", build=italics(14)), docx_file(t / "gold.docx", build=italics(14)), {}


@case("check_italic_font_size_14", VALUE_MISMATCH, "paragraph 1, italic run 'slanted words': size expected 14 pt, "
                                                   "got 12 pt")
def italics_at_12(t):
    return docx_file(t / "r.docx", build=italics(12)), docx_file(t / "gold.docx", build=italics(14)), {}


@case("check_italic_font_size_14", VALUE_MISMATCH, "paragraph 1, character 11 ('s' in 'slanted')",
      "italic expected on, got off")
def italics_dropped(t):
    return (docx_file(t / "r.docx", build=italics(14, italic=False)), docx_file(t / "gold.docx", build=italics(14)),
            {})


@case("evaluate_strike_through_last_paragraph")
def last_paragraph_struck(t):
    return docx_file(t / "r.docx", build=struck("sds", True)), docx_file(t / "gold.docx", build=struck("sss")), {}


@case("evaluate_strike_through_last_paragraph", VALUE_MISMATCH, "paragraph 2 (the last with text), run ' word1': "
                                                                "strike-through expected on, got off")
def a_word_not_struck(t):
    return docx_file(t / "r.docx", build=struck("s-s")), docx_file(t / "gold.docx", build=struck("sss")), {}


@case("has_page_numbers_in_footers")
def page_field_in_footer(t):
    return docx_file(t / "r.docx", build=footer("field", sections=2)), None, {}


@case("has_page_numbers_in_footers", RULE_FAILED, "the default footer of section 1 holds no PAGE field",
      "'Printed 2024'")
def digits_in_footer(t):
    return docx_file(t / "r.docx", build=footer("digits")), None, {}


@case("has_page_numbers_in_footers", RULE_FAILED, "the first-page footer of section 1 holds no PAGE field",
      "'Cover'")
def first_page_footer_without(t):
    return docx_file(t / "r.docx", build=footer("field", first_page_without=True)), None, {}


def paragraphs_with_break(at):
    def build(d):
        for text in ("Intro", "Middle", "Outlook", "Closing"):
            p = d.add_paragraph(text)
            if text == at:
                p.add_run().add_break(WD_BREAK.PAGE)
    return build


BREAK_RULE = {"page_break_count": 1, "before_text": "Outlook"}


@case("contains_page_break")
def break_before_outlook(t):
    return docx_file(t / "r.docx", build=paragraphs_with_break("Middle")), BREAK_RULE, {}


@case("contains_page_break", RULE_FAILED, "the paragraph 'Outlook' does not start a page")
def break_after_outlook(t):
    return docx_file(t / "r.docx", build=paragraphs_with_break("Outlook")), BREAK_RULE, {}


@case("contains_page_break", RULE_FAILED, "no paragraph with text reads 'Outlook'")
def no_outlook(t):
    return docx_file(t / "r.docx", "Intro", build=lambda d: d.add_paragraph().add_run().add_break(WD_BREAK.PAGE)), \
        BREAK_RULE, {}


@case("contains_page_break", THRESHOLD_NOT_MET, "1 page break in the body, expected 2 (page_break_count)")
def one_break_of_two(t):
    return docx_file(t / "r.docx", build=paragraphs_with_break("Middle")), {"page_break_count": 2}, {}


@case("contains_page_break", RULE_FAILED, "the body has no page break")
def no_break(t):
    return docx_file(t / "r.docx", "Just text"), None, {}


RED, BLUE = (255, 0, 0), (0, 0, 255)
GOOD_COLOURS = {"apple": RED, "ball": BLUE, "egg": RED, "cat": BLUE, "dog": BLUE}


@case("evaluate_colored_words_in_tables")
def words_coloured(t):
    return (docx_file(t / "r.docx", build=colored(GOOD_COLOURS)),
            docx_file(t / "gold.docx", build=colored(GOOD_COLOURS)), {})


@case("evaluate_colored_words_in_tables", VALUE_MISMATCH, "table 1, row 2, column 1: word 'egg': 'e' expected red, "
                                                          "got #0000FF (CIEDE2000 difference")
def egg_in_blue(t):
    return (docx_file(t / "r.docx", build=colored(dict(GOOD_COLOURS, egg=BLUE))),
            docx_file(t / "gold.docx", build=colored(GOOD_COLOURS)), {})


@case("evaluate_colored_words_in_tables", VALUE_MISMATCH, "table 1, row 2, column 2: word 'dog'",
      "expected blue, got automatic")
def dog_uncoloured(t):
    return (docx_file(t / "r.docx", build=colored({k: v for k, v in GOOD_COLOURS.items() if k != "dog"})),
            docx_file(t / "gold.docx", build=colored(GOOD_COLOURS)), {})


@case("evaluate_colored_words_in_tables", VALUE_MISMATCH, "the tables' text differs",
      "table 1, row 1, column 1: expected 'apple', got 'apples'")
def table_text_changed(t):
    return (docx_file(t / "r.docx", build=colored(GOOD_COLOURS, words=("apples", "ball", "egg", "cat dog"))),
            docx_file(t / "gold.docx", build=colored(GOOD_COLOURS)), {})


HIGHLIGHTED = [("Please fix ", None), ("this word", "#ffff00"), (" now.", None)]


@case("check_highlighted_words")
def highlight_removed(t):
    return (odt_file(t / "r.odt", [("Please fix ", None), ("this word", "transparent"), (" now.", None)]),
            odt_file(t / "gold.odt", "Please fix this word now."), {})


@case("check_highlighted_words", VALUE_MISMATCH, "paragraph 2, character 12 ('t' in 'this')",
      "highlighted expected no, got yes", "8 characters highlighted too many")
def highlight_left(t):
    return odt_file(t / "r.odt", HIGHLIGHTED), odt_file(t / "gold.odt", "Please fix this word now."), {}


@case("check_highlighted_words", VALUE_MISMATCH, "paragraph 1, character 5 ('t' in 'this')",
      "highlighted expected no, got yes")
def docx_highlight_left(t):
    def marked(d):
        p = d.add_paragraph("Fix ")
        p.add_run("this word").font.highlight_color = 7  # yellow
        p.add_run(".")
    return docx_file(t / "r.docx", build=marked), docx_file(t / "gold.docx", "Fix this word."), {}


# =========================================================================== files: Word words, archives
PLACES = {"expected": ["Paris", "London", "Tokyo"]}


@case("fuzzy_place_math")
def three_places(t):
    return docx_file(t / "r.docx", "Paris", "London", "Tokyo"), PLACES, {}


@case("fuzzy_place_math", THRESHOLD_NOT_MET, "holds 2 words ['Paris', 'London'], expected 3 (word_count)")
def two_places(t):
    return docx_file(t / "r.docx", "Paris", "London"), PLACES, {}


@case("fuzzy_place_math", VALUE_MISMATCH, "word 3 'Tokio' is only 0.8", "'Tokyo'", score=(0.9, 1.0))
def misspelt_place(t):
    return docx_file(t / "r.docx", "Paris London", "Tokio"), PLACES, {}


@case("fuzzy_place_math", UNREADABLE_RESULT, "c.docx is not a readable .docx")
def places_not_a_docx(t):
    (t / "c.docx").write_text("not a zip")
    return t / "c.docx", PLACES, {}


MEMBERS = {"a.txt": "alpha\n", "sub/b.txt": "beta\n"}


@case("compare_archive")
def zip_like_tar(t):
    return make_zip(t, "r.zip", MEMBERS), make_tar(t, "gold.tar.gz", MEMBERS), {}


@case("compare_archive", VALUE_MISMATCH, "sub/b.txt (compare_text_file, scored 0)", score=0.5)
def a_member_differs(t):
    return make_zip(t, "r.zip", {"a.txt": "alpha\n", "sub/b.txt": "gamma\n"}), make_zip(t, "gold.zip", MEMBERS), {}


@case("compare_archive", STRUCTURE_MISMATCH, "missing ['sub/b.txt'], extra ['b.txt']")
def a_member_moved(t):
    return make_zip(t, "r.zip", {"a.txt": "alpha\n", "b.txt": "beta\n"}), make_zip(t, "gold.zip", MEMBERS), {}


@case("compare_archive", UNREADABLE_RESULT, "r.zip is not a zip or tar archive")
def not_an_archive(t):
    (t / "r.zip").write_text("not an archive")
    return t / "r.zip", make_zip(t, "gold.zip", MEMBERS), {}


ZIPPED = {"notes.txt": "a\nb\n", "paper.pdf": pdf_bytes(["Same text"], "gold"), "logo.bin": b"\x00\x01"}


@case("compare_zip_files")
def same_zip_other_bytes(t):
    mine = {"notes.txt": "a\r\nb\r\n", "paper.pdf": pdf_bytes(["Same text"], "mine"), "logo.bin": b"\x00\x01"}
    return make_zip(t, "r.zip", mine), make_zip(t, "gold.zip", ZIPPED), {}


@case("compare_zip_files", VALUE_MISMATCH, "notes.txt, line 2: expected 'b', got 'c'", "(1 of 3 files differ)")
def zipped_line_differs(t):
    return make_zip(t, "r.zip", dict(ZIPPED, **{"notes.txt": "a\nc\n"})), make_zip(t, "gold.zip", ZIPPED), {}


@case("compare_zip_files", THRESHOLD_NOT_MET, "paper.pdf: PDF text similarity", "below 0.95")
def zipped_pdf_differs(t):
    mine = dict(ZIPPED, **{"paper.pdf": pdf_bytes(["Totally different words"])})
    return make_zip(t, "r.zip", mine), make_zip(t, "gold.zip", ZIPPED), {}


@case("compare_zip_files", VALUE_MISMATCH, "logo.bin: the bytes differ (3 bytes, expected 2)")
def zipped_bytes_differ(t):
    return (make_zip(t, "r.zip", dict(ZIPPED, **{"logo.bin": b"\xff\xfe\x00"})), make_zip(t, "gold.zip", ZIPPED),
            {})


@case("compare_zip_files", STRUCTURE_MISMATCH, "missing ['logo.bin', 'paper.pdf'], extra []")
def zipped_files_missing(t):
    return make_zip(t, "r.zip", {"notes.txt": "a\nb\n"}), make_zip(t, "gold.zip", ZIPPED), {}


HTML = ('<!DOCTYPE html>\n<html><body>\n<table><tr><td sdnum="1033;0;0.00" align="right">1.50</td>\n'
        '<td>Total  price</td></tr></table></body></html>')


def html(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


@case("compare_htmls")
def same_html_laid_out_otherwise(t):
    return html(t / "r.html", HTML.replace("\n", "").replace("  ", " ")), html(t / "gold.html", HTML), {}


@case("compare_htmls", VALUE_MISMATCH, "line 3 (line 3 of the gold): expected text '1.50', got text '1.5'")
def html_text_differs(t):
    return html(t / "r.html", HTML.replace("1.50", "1.5")), html(t / "gold.html", HTML), {}


@case("compare_htmls", STRUCTURE_MISMATCH, "line 3", "align=\"right\"", "align=\"left\"")
def html_attribute_differs(t):
    return html(t / "r.html", HTML.replace("right", "left")), html(t / "gold.html", HTML), {}


@case("compare_pdfs")
def same_pdf_text(t):
    return make_pdf(t, "r.pdf", ["Hello world"], "mine"), make_pdf(t, "gold.pdf", ["Hello world"], "gold"), {}


@case("compare_pdfs", VALUE_MISMATCH, "r.pdf: text similarity 0.636", "first difference at character 7: "
                                      "expected 'world', got 'there'", score=(0.3, 1.0))
def pdf_text_differs(t):
    return make_pdf(t, "r.pdf", ["Hello there"]), make_pdf(t, "gold.pdf", ["Hello world"]), {}


@case("compare_pdfs", UNREADABLE_RESULT, "r.pdf is not a readable PDF")
def not_a_pdf(t):
    (t / "r.pdf").write_text("not a pdf")
    return t / "r.pdf", make_pdf(t, "gold.pdf", ["Hello world"]), {}


@case("compare_pdfs", MISSING_RESULT, "absent.pdf", score=0.5)
def second_pdf_missing(t):
    golds = [make_pdf(t, "g1.pdf", ["One"]), make_pdf(t, "g2.pdf", ["Two"])]
    return [make_pdf(t, "r1.pdf", ["One"]), t / "absent.pdf"], golds, {}


ONE_PAGE = {"relation": "eq", "ref_value": 1}


@case("check_pdf_pages")
def one_page(t):
    return make_pdf(t, "r.pdf", ["Only page"]), ONE_PAGE, {}


@case("check_pdf_pages", THRESHOLD_NOT_MET, "r.pdf has 2 pages; expected a page count eq 1")
def two_pages(t):
    return make_pdf(t, "r.pdf", ["One", "Two"]), ONE_PAGE, {}


@case("compare_pdf_images")
def same_pdf_images(t):
    return make_image_pdf(t, "r.pdf", ["disc", "bar"]), make_image_pdf(t, "gold.pdf", ["disc", "bar"]), {}


@case("compare_pdf_images", STRUCTURE_MISMATCH, "r.pdf embeds 1 image, the gold PDF 2")
def an_image_fewer(t):
    return make_image_pdf(t, "r.pdf", ["disc"]), make_image_pdf(t, "gold.pdf", ["disc", "bar"]), {}


@case("compare_pdf_images", THRESHOLD_NOT_MET, "image 2 of 2: similarity", "below the threshold 0.95", score=0.5)
def another_second_image(t):
    return make_image_pdf(t, "r.pdf", ["disc", "disc"]), make_image_pdf(t, "gold.pdf", ["disc", "bar"]), {}


# =========================================================================== presentations
def deck(t: Path, name: str, edit=None, picture: str = "own") -> Path:
    kinds = {"own": {}, "other": {"fill": (30, 160, 60), "mark": (250, 250, 0)}}
    image = draw_picture(t / f"{picture}.png", **kinds[picture])
    return deck_file(t / name, image, edit)


def decks(edit=None, picture="own", **options):
    """A case maker: the result deck edited by ``edit``, against the plain gold deck."""
    def make(t):
        return deck(t, "r.pptx", edit, picture), deck(t, "gold.pptx"), options
    return make


case("compare_pptx_files", name="same_deck")(decks())
# (case name, edit of the result deck, kind, parts of the reason's text, options)
for _name, _edit, _kind, _parts, _options in [
    ("extra_slide", lambda prs: prs.slides.add_slide(prs.slide_layouts[6]), STRUCTURE_MISMATCH,
     ("3 slides, expected 2",), {}),
    ("bigger_font", lambda prs: setattr(body_run(prs).font, "size", Pt(40)), VALUE_MISMATCH,
     ("slide 2, shape 2 ('Body'), paragraph 1, run 'Revenue grew': size expected 24 pt, got 40 pt",), {}),
    ("other_font", lambda prs: setattr(body_run(prs).font, "name", "Courier"),
     VALUE_MISMATCH, ("run 'Revenue grew': font expected 'Arial', got 'Courier'",), {}),
    ("other_colour", lambda prs: setattr(body_run(prs).font.color, "rgb", RGBColor(0, 0, 0xFF)), VALUE_MISMATCH,
     ("color expected #202020, got #0000FF",), {}),
    ("other_text", lambda prs: setattr(body_run(prs), "text", "Revenue fell"), VALUE_MISMATCH,
     ("slide 2, shape 2 ('Body'): text expected 'Revenue grew\\nCosts fell', got 'Revenue fell\\nCosts fell'",), {}),
    ("other_cell", lambda prs: setattr(shape(prs, 2, "Table").table.cell(1, 1), "text", "99"), VALUE_MISMATCH,
     ("shape 4 ('Table'), cell (2, 2): text expected '10', got '99'",), {}),
    ("background", lambda prs: (prs.slides[0].background.fill.solid(),
                                setattr(prs.slides[0].background.fill.fore_color, "rgb", RGBColor(0xFF, 0xFF, 0))),
     VALUE_MISMATCH, ("slide 1: background expected solid #FFFFFF, got solid #FFFF00",), {}),
    ("notes", lambda prs: setattr(prs.slides[1].notes_slide.notes_text_frame, "text", "Skip it"), VALUE_MISMATCH,
     ("slide 2: notes expected 'Mention the margin', got 'Skip it'",), {}),
    ("moved_body", lambda prs: setattr(shape(prs, 2, "Body"), "left", shape(prs, 2, "Body").left + Inches(1)),
     VALUE_MISMATCH, ("shape 2 ('Body'): expected at (left=914400,", "got (left=1828800,"), {}),
    ("extra_box", lambda prs: prs.slides[1].shapes.add_textbox(0, 0, Inches(1), Inches(1)), STRUCTURE_MISMATCH,
     ("slide 2: 5 shapes, expected 4",), {}),
    ("title_not_moved", None, RULE_FAILED, ("no title was moved to the bottom of its slide",),
     {"examine_shape": False, "examine_title_bottom_position": True}),
    ("title_moved_up", lambda prs: setattr(pin(prs.slides[1].shapes.title), "top", 0), RULE_FAILED,
     ("slide 2, shape 1", "the title moved but not to the bottom"),
     {"examine_shape": False, "examine_title_bottom_position": True}),
    ("alignment", lambda prs: setattr(shape(prs, 2, "Body").text_frame.paragraphs[0], "alignment", PP_ALIGN.CENTER),
     VALUE_MISMATCH, ("paragraph 1: alignment expected 'l', got 'ctr'",), {}),
]:
    case("compare_pptx_files", _kind, *_parts, name=_name)(decks(_edit, **_options))


@case("compare_pptx_files", VALUE_MISMATCH, "slide 2, shape 3 ('Photo'): another picture than the expected one")
def other_picture(t):
    return decks(picture="other")(t)


@case("compare_pptx_files", STRUCTURE_MISMATCH, "paragraph 1: 2 text runs ['Revenue ', 'grew'], expected 1")
def split_run(t):
    def edit(prs):
        body_run(prs).text = "Revenue "
        paragraph = shape(prs, 2, "Body").text_frame.paragraphs[0]
        run = paragraph.add_run()
        run.text = "grew"
        run.font.name, run.font.size = "Arial", Pt(24)
    return decks(edit)(t)


@case("compare_pptx_files", UNREADABLE_RESULT, "notes.pptx is not a readable .pptx")
def text_file_named_pptx(t):
    (t / "notes.pptx").write_text("just text")
    return t / "notes.pptx", deck(t, "gold.pptx"), {}


# =========================================================================== single-deck checks
@case("check_slide_orientation_Portrait")
def portrait(t):
    return blank_deck(t / "p.pptx", width=H, height=W), None, {}


@case("check_slide_orientation_Portrait", VALUE_MISMATCH, "expected portrait, got landscape",
      f"{W} x {H} EMU")
def landscape(t):
    return blank_deck(t / "l.pptx"), None, {}


SMALL = (Inches(1), Inches(1), Inches(2), Inches(1.5))


def picture_decks(t, picture, box):
    own = draw_picture(t / "own.png")
    image = own if picture == "own" else draw_picture(t / "other.png", fill=(30, 160, 60), mark=(250, 250, 0))
    return blank_deck(t / "r.pptx", picture=image, box=box), blank_deck(t / "original.pptx", picture=own, box=SMALL)


@case("check_image_stretch_and_center")
def picture_fills_the_slide(t):
    return (*picture_decks(t, "own", (0, 0, W, H)), {})


@case("check_image_stretch_and_center", THRESHOLD_NOT_MET, "slide 1: the picture at (left=914400,",
      "its width is off by 8.00 in, more than the 0.5 in allowed")
def picture_still_small(t):
    return (*picture_decks(t, "own", SMALL), {})


@case("check_image_stretch_and_center", STRUCTURE_MISMATCH, "slide 1: no picture shows the original's image")
def another_picture_fills(t):
    return (*picture_decks(t, "other", (0, 0, W, H)), {})


FILL_RULE = {"rgb": [0, 0, 255], "original_rgb": [255, 255, 255]}


def blue_everywhere(prs):
    c_sld = prs.slides[0].element.find("{http://schemas.openxmlformats.org/presentationml/2006/main}cSld")
    c_sld.remove(c_sld[0])  # slide 1 gives up its own white background
    prs.slide_masters[0].background.fill.solid()
    prs.slide_masters[0].background.fill.fore_color.rgb = RGBColor(0, 0, 0xFF)


@case("evaluate_presentation_fill_to_rgb_distance")
def all_slides_blue(t):
    return deck(t, "r.pptx", blue_everywhere), FILL_RULE, {}


@case("evaluate_presentation_fill_to_rgb_distance", VALUE_MISMATCH, "mean normalized RGB distance 1.000 over 2 "
      "slides", "slide 1: the background is still the original #FFFFFF")
def nothing_recoloured(t):
    return deck(t, "r.pptx"), FILL_RULE, {}


@case("evaluate_presentation_fill_to_rgb_distance", VALUE_MISMATCH, "slide 1: background #000080 is 0.288 from the "
      "expected #0000FF", score=(0.5, 1.0))
def navy_instead_of_blue(t):
    def edit(prs):
        prs.slide_masters[0].background.fill.solid()
        prs.slide_masters[0].background.fill.fore_color.rgb = RGBColor(0, 0, 0xFF)
        prs.slides[0].background.fill.solid()
        prs.slides[0].background.fill.fore_color.rgb = RGBColor(0, 0, 0x80)
    return deck(t, "r.pptx", edit), FILL_RULE, {}


DISSOLVE = {"slide_idx": 0, "transition_type": "dissolve"}


@case("check_transition")
def dissolve_on_slide_1(t):
    return deck(t, "r.pptx", add_transition("dissolve", wrapped=True)), DISSOLVE, {}


@case("check_transition", VALUE_MISMATCH, "slide 1 (slide_idx 0): transition expected 'dissolve', got ['fade']")
def fade_on_slide_1(t):
    return deck(t, "r.pptx", add_transition("fade")), DISSOLVE, {}


@case("check_transition", VALUE_MISMATCH, "slide 2 (slide_idx 1): transition expected 'dissolve', got none")
def no_transition_on_slide_2(t):
    return deck(t, "r.pptx", add_transition("dissolve")), {"slide_idx": 1, "transition_type": "dissolve"}, {}


@case("check_transition", STRUCTURE_MISMATCH, "the deck has 2 slides, no slide_idx 7")
def no_slide_8(t):
    return deck(t, "r.pptx"), {"slide_idx": 7, "transition_type": "dissolve"}, {}


@case("check_page_number_colors")
def red_numbers(t):
    return deck(t, "r.pptx", number_colour("E01010")), {"color": "red"}, {}


@case("check_page_number_colors", VALUE_MISMATCH, "the slide number of /ppt/slideMasters/slideMaster1.xml: colour "
                                                  "expected red, got #1020D0")
def blue_numbers(t):
    return deck(t, "r.pptx", number_colour("1020D0")), {"color": "red"}, {}


@case("check_page_number_colors", STRUCTURE_MISMATCH, "no slide master the slides use (1 master) has a "
                                                      "slide-number placeholder")
def no_number_placeholder(t):
    def drop(prs):
        master = prs.slide_masters[0].element
        for sp in list(master.iter("{http://schemas.openxmlformats.org/presentationml/2006/main}sp")):
            if 'type="sldNum"' in str(sp.xml):
                sp.getparent().remove(sp)
    return deck(t, "r.pptx", drop), {"color": "red"}, {}


# =========================================================================== LibreOffice profile and panes
@case("check_presenter_console_disable")
def console_off(t):
    return impress_xcu(t / "r.xcu", (START, "EnablePresenterScreen", "false")), None, {}


@case("check_presenter_console_disable", VALUE_MISMATCH, "EnablePresenterScreen: expected false, got 'true'")
def console_on(t):
    return impress_xcu(t / "r.xcu", (START, "EnablePresenterScreen", "true")), None, {}


@case("check_presenter_console_disable", VALUE_MISMATCH, "expected false, got unset (the default, on)")
def console_unset(t):
    return impress_xcu(t / "r.xcu", (SAVE, "AutoSave", "true")), None, {}


@case("check_presenter_console_disable", UNREADABLE_RESULT, "not a LibreOffice registrymodifications.xcu: its root "
                                                            "is <settings>")
def not_a_profile(t):
    (t / "other.xml").write_text("<settings><EnablePresenterScreen>false</EnablePresenterScreen></settings>")
    return t / "other.xml", None, {}


@case("check_presenter_console_disable", UNREADABLE_RESULT, "broken.xcu is not readable XML")
def broken_profile(t):
    (t / "broken.xcu").write_text("<oor:items")
    return t / "broken.xcu", None, {}


@case("check_auto_saving_time")
def autosave_every_3(t):
    return impress_xcu(t / "r.xcu", (SAVE, "AutoSaveTimeIntervall", "3")), {"minutes": 3}, {}


@case("check_auto_saving_time", VALUE_MISMATCH, "autosave interval expected 5 minutes",
      "/org.openoffice.Office.Common/Save/Document AutoSaveTimeIntervall is 3")
def autosave_every_3_not_5(t):
    return impress_xcu(t / "r.xcu", (SAVE, "AutoSaveTimeIntervall", "3")), {"minutes": 5}, {}


@case("check_auto_saving_time", VALUE_MISMATCH, "AutoSaveTimeIntervall is 3, but AutoSave is false (autosave off)")
def autosave_switched_off(t):
    return (impress_xcu(t / "r.xcu", (SAVE, "AutoSaveTimeIntervall", "3"), (SAVE, "AutoSave", "false")),
            {"minutes": 3}, {})


@case("check_auto_saving_time", VALUE_MISMATCH, "AutoSaveTimeIntervall is 10 (unset: the default)")
def autosave_unset(t):
    return impress_xcu(t / "r.xcu", (START, "EnablePresenterScreen", "true")), {"minutes": 3}, {}


PANE = "/org.openoffice.Office.Impress/MultiPaneGUI/SlideSorterBar/Visible"


@case("check_left_panel")
def pane_showing(t):
    return GuestText(tree("Slides View")), None, {}


@case("check_left_panel", RULE_FAILED, "no element named 'Slides View' or 'スライドモード' (the slide pane)")
def no_pane(t):
    return GuestText(tree()), None, {}


@case("check_left_panel", RULE_FAILED, "the slide pane 'Slides View' is in the accessibility tree but not showing")
def pane_hidden(t):
    return GuestText(tree("Slides View", showing=False)), None, {}


@case("check_left_panel", VALUE_MISMATCH, "ImpressView: expected true (the slide pane open), got 'false'")
def pane_closed_in_profile(t):
    return impress_xcu(t / "closed.xcu", (PANE, "ImpressView", "false")), None, {}


@case("check_left_panel", UNREADABLE_RESULT, "the result text is not readable XML")
def tree_cut_short(t):
    return GuestText("<desktop-frame"), None, {}


@case("check_textbox_on_leftside")
def text_at_the_left(t):
    return text_image(t / "left.png", 4), None, {}


@case("check_textbox_on_leftside", THRESHOLD_NOT_MET, "the text starts at x=151 of 400 pixels (37.8%), not within "
                                                      "the leftmost 5%")
def text_in_the_middle(t):
    return text_image(t / "middle.png", 150), None, {}


@case("check_textbox_on_leftside", RULE_FAILED, "no pixel darker than grey 128")
def no_text(t):
    return text_image(t / "blank.png", None), None, {}


@case("check_textbox_on_leftside", UNREADABLE_RESULT, "notes.png is not a readable image")
def not_an_image(t):
    (t / "notes.png").write_text("not an image")
    return t / "notes.png", None, {}


# =========================================================================== the checks, over every case above
@pytest.mark.parametrize("metric, make, kind, parts, score", CASES)
def test_reason(metric, make, kind, parts, score, tmp_path):
    result, expected, options = make(tmp_path)
    verdict = judge(metric, METRICS.get(metric).func, result, expected, **options)
    want = (1.0 if kind == PASSED else 0.0) if score is None else score
    if isinstance(want, tuple):
        assert want[0] < float(verdict) < want[1], verdict
    else:
        assert float(verdict) == want, verdict
    assert verdict.reason.kind == kind, verdict.reason
    assert verdict.reason.metric == metric
    for part in parts:
        assert part in verdict.reason.text, (part, verdict.reason.text)


def _passing(metric: str):
    return next(p.values[1] for p in CASES if p.values[0] == metric and p.values[2] == PASSED)


def _registered() -> set[str]:
    modules = {m.__name__ for m in MODULES}
    return {name for name, entry in METRICS.entries.items() if entry.func.__module__ in modules}


def test_every_metric_of_these_modules_has_a_passing_and_a_failing_case():
    METRICS.names()  # loads every module
    kinds: dict[str, set[str]] = {}
    for p in CASES:
        kinds.setdefault(p.values[0], set()).add(p.values[2])
    assert set(kinds) == _registered()
    for metric, seen in kinds.items():
        assert PASSED in seen and seen - {PASSED}, (metric, seen)


@pytest.mark.parametrize("missing", ["none", "absent"])
@pytest.mark.parametrize("metric", sorted({p.values[0] for p in CASES}))
def test_a_missing_result_is_named(metric, missing, tmp_path):
    _, expected, options = _passing(metric)(tmp_path)
    result = None if missing == "none" else tmp_path / f"absent-{metric}.file"
    verdict = judge(metric, METRICS.get(metric).func, result, expected, **options)
    assert float(verdict) == 0.0 and verdict.reason.kind == MISSING_RESULT, verdict
    if missing == "absent":
        assert f"absent-{metric}.file" in verdict.reason.text, verdict.reason.text
