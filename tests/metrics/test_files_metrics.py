"""File, text, list, config, table, archive, HTML, PDF and test-suite metrics of the general suite
(desktop_env.evaluators.metrics.files*) on real files: pass, fail, missing-result and bad-option cases."""
from __future__ import annotations

import io
import json
import socket
import sqlite3
import tarfile
import zipfile
from pathlib import Path

import openpyxl
import pytest
from PIL import Image, ImageDraw

from desktop_env.evaluators.metrics import files, files_documents, files_python, files_tables
from desktop_env.evaluators.metrics.files import (
    check_direct_json_object, check_json_keybindings, check_json_settings, check_line_number, check_list,
    check_moved_jpgs, compare_config, compare_python_pure_text, compare_result_files, file_contains, is_in_list,
    is_utc_0, match_in_list,
)
from desktop_env.evaluators.metrics.files_documents import (
    check_pdf_pages, compare_archive, compare_htmls, compare_pdf_images, compare_pdfs, compare_zip_files,
    fuzzy_place_math,
)
from desktop_env.evaluators.metrics.files_python import check_python_file_by_test_suite
from desktop_env.evaluators.metrics.files_tables import check_csv, compare_conference_city_in_order, run_sqlite3
from desktop_env.evaluators.metrics.utils import MetricError
from desktop_env.evaluators.values import GuestText
from desktop_env.registry import METRICS

NAMES = ("check_direct_json_object check_list match_in_list is_in_list check_json_settings check_json_keybindings "
         "compare_config compare_archive compare_zip_files compare_htmls compare_pdfs check_pdf_pages "
         "compare_pdf_images file_contains compare_python_pure_text check_line_number compare_result_files "
         "run_sqlite3 check_csv fuzzy_place_math compare_conference_city_in_order check_moved_jpgs is_utc_0 "
         "check_python_file_by_test_suite").split()


# --------------------------------------------------------------------------- file builders

def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def pdf_bytes(pages: list[str], title: str = "doc") -> bytes:
    """A minimal PDF: one Helvetica text line per page, and an /Info title (so equal text can differ in bytes)."""
    objs = {1: b"<< /Type /Catalog /Pages 2 0 R >>", 3: b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"}
    kids = []
    for i, text in enumerate(pages):
        content, page = 4 + 2 * i, 5 + 2 * i
        stream = f"BT /F1 12 Tf 72 720 Td ({text}) Tj ET".encode()
        objs[content] = b"<< /Length %d >>\nstream\n%s\nendstream" % (len(stream), stream)
        objs[page] = (f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents {content} 0 R "
                      f"/Resources << /Font << /F1 3 0 R >> >> >>").encode()
        kids.append(f"{page} 0 R")
    objs[2] = f"<< /Type /Pages /Kids [{' '.join(kids)}] /Count {len(pages)} >>".encode()
    info = 4 + 2 * len(pages)
    objs[info] = f"<< /Title ({title}) >>".encode()
    out = bytearray(b"%PDF-1.4\n")
    offsets = {}
    for oid in sorted(objs):
        offsets[oid] = len(out)
        out += b"%d 0 obj\n%s\nendobj\n" % (oid, objs[oid])
    xref, size = len(out), max(objs) + 1
    out += b"xref\n0 %d\n0000000000 65535 f \n" % size
    out += b"".join(b"%010d 00000 n \n" % offsets[oid] for oid in range(1, size))
    out += b"trailer\n<< /Size %d /Root 1 0 R /Info %d 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (size, info, xref)
    return bytes(out)


def make_pdf(folder: Path, name: str, pages: list[str], title: str = "doc") -> Path:
    path = folder / name
    path.write_bytes(pdf_bytes(pages, title))
    return path


def picture(kind: str, size=(120, 90)) -> Image.Image:
    """A distinctive picture: a red disc on white, or a blue bar on yellow."""
    im = Image.new("RGB", size, "white" if kind == "disc" else "yellow")
    draw = ImageDraw.Draw(im)
    if kind == "disc":
        draw.ellipse((20, 10, 90, 80), fill="red")
    else:
        draw.rectangle((10, 30, 110, 60), fill="blue")
    return im


def make_image_pdf(folder: Path, name: str, kinds: list[str]) -> Path:
    path = folder / name
    images = [picture(k) for k in kinds]
    images[0].save(path, "PDF", save_all=True, append_images=images[1:])
    return path


def make_zip(folder: Path, name: str, members: dict[str, bytes | str]) -> Path:
    path = folder / name
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for member, data in members.items():
            z.writestr(member, data)
    return path


def make_tar(folder: Path, name: str, members: dict[str, bytes | str]) -> Path:
    path = folder / name
    with tarfile.open(path, "w:gz") as t:
        for member, data in members.items():
            data = data.encode() if isinstance(data, str) else data
            info = tarfile.TarInfo(member)
            info.size = len(data)
            t.addfile(info, io.BytesIO(data))
    return path


def make_docx(folder: Path, name: str, paragraphs: list[str]) -> Path:
    """A minimal Word document (the parts a reader needs): one paragraph of one run per string."""
    w = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
    body = "".join(f'<w:p><w:r><w:t xml:space="preserve">{p}</w:t></w:r></w:p>' for p in paragraphs)
    path = folder / name
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("[Content_Types].xml",
                   '<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
                   '<Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-'
                   'officedocument.wordprocessingml.document.main+xml"/></Types>')
        z.writestr("word/document.xml", f'<?xml version="1.0"?><w:document xmlns:w="{w}"><w:body>{body}'
                                        f'</w:body></w:document>')
    return path


# --------------------------------------------------------------------------- registration

def test_every_metric_is_registered_from_these_modules():
    modules = {m.__name__ for m in (files, files_documents, files_python, files_tables)}
    for name in NAMES:
        assert METRICS.get(name).func.__module__ in modules, name


# --------------------------------------------------------------------------- JSON and lists

class TestCheckDirectJsonObject:
    def test_dict_result_with_the_expected_values(self):
        rules = {"expected": {"from": "NYC", "to": "LAX"}}
        assert check_direct_json_object({"from": "NYC", "to": "LAX", "extra": 1}, rules) == 1.0
        assert check_direct_json_object({"from": "NYC", "to": "SFO"}, rules) == 0.0

    def test_text_result_printed_by_a_guest_script(self):
        rules = {"expected": {"a": "x", "n": 2}}
        assert check_direct_json_object(GuestText("{'a': 'x', 'n': 2}\n"), rules) == 1.0
        assert check_direct_json_object(GuestText('{"a": "x", "n": 3}'), rules) == 0.0
        assert check_direct_json_object(GuestText("Traceback: no such file"), rules) == 0.0

    def test_expect_in_result_with_candidates(self):
        rules = {"expect_in_result": True, "result_not_list": True,
                 "expected": {"pic1": ["Everest", "Mount Everest"], "pic2": ["Hua", "Huashan"]}}
        assert check_direct_json_object({"pic1": "Mount Everest", "pic2": "Hua"}, rules) == 1.0
        assert check_direct_json_object({"pic1": "Mount Everest", "pic2": "K2"}, rules) == 0.0
        assert check_direct_json_object({"tags": ["a", "b"]}, {"expect_in_result": True,
                                                               "expected": {"tags": ["z", "b"]}}) == 1.0
        assert check_direct_json_object({"q": "best shoes 2024"}, {"expect_in_result": True,
                                                                   "expected": {"q": "shoes"}}) == 1.0

    def test_ignore_list_order_inside_or_beside_expected(self):
        inside = {"expected": {"models": ["a", "b", "c"], "ignore_list_order": True}}
        beside = {"expected": {"models": ["a", "b", "c"]}, "ignore_list_order": True}
        for rules in (inside, beside):
            assert check_direct_json_object({"models": ["c", "a", "b"]}, rules) == 1.0
            assert check_direct_json_object({"models": ["c", "a"]}, rules) == 0.0
        assert check_direct_json_object({"models": ["c", "a", "b"]}, {"expected": {"models": ["a", "b", "c"]}}) == 0.0

    def test_evaluation_failed_marker_and_missing_result(self):
        failed = "__EVALUATION_FAILED__"
        assert check_direct_json_object({"k": failed}, {"expected": {"k": failed}}) == 0.0
        assert check_direct_json_object(None, {"expected": {"k": 1}}) == 0.0

    def test_bad_rules(self):
        with pytest.raises(MetricError):
            check_direct_json_object({"k": 1}, {"k": 1})
        with pytest.raises(MetricError):
            check_direct_json_object({"k": 1}, ["k"])


class TestCheckList:
    RULES = {"expect": [r"^Bills$", r"Receipts"], "unexpect": [r"Junk"]}

    def test_pass_and_fail(self, tmp_path):
        assert check_list(write(tmp_path, "ls.txt", "Inbox\nBills\nOld Receipts\n"), self.RULES) == 1.0
        assert check_list(write(tmp_path, "ls.txt", "Inbox\nBills\nReceipts\nJunk\n"), self.RULES) == 0.0
        assert check_list(write(tmp_path, "ls.txt", "Inbox\nBills 2\nReceipts\n"), self.RULES) == 0.0

    def test_missing_result(self, tmp_path):
        assert check_list(None, self.RULES) == 0.0
        assert check_list(tmp_path / "absent.txt", self.RULES) == 0.0

    def test_bad_rules(self, tmp_path):
        path = write(tmp_path, "ls.txt", "x")
        with pytest.raises(MetricError, match="not a valid regular expression"):
            check_list(path, {"expect": ["(unclosed"]})
        with pytest.raises(MetricError):
            check_list(path, {"include": ["x"]})


class TestLists:
    def test_match_in_list(self):
        rules = {"expected": ["Microsoft Bing", "Bing"]}
        assert match_in_list(GuestText("Bing"), rules) == 1.0
        assert match_in_list("Google", rules) == 0.0
        assert match_in_list(None, rules) == 0.0

    def test_is_in_list(self):
        rules = {"expected": "/home/user/Desktop/helloExtension"}
        assert is_in_list(["/opt/x", "/home/user/Desktop/helloExtension"], rules) == 1.0
        assert is_in_list(["/home/user/Desktop/other"], rules) == 0.0
        assert is_in_list(None, rules) == 0.0


class TestVsCodeJson:
    SETTINGS = ('// user settings\n{\n  "editor.fontSize": 14, /* big */\n'
                '  "http.proxy": "http://proxy:8080",\n  "files.autoSave": "afterDelay",\n}\n')

    def test_settings_with_comments_and_trailing_comma(self, tmp_path):
        path = write(tmp_path, "settings.json", self.SETTINGS)
        assert check_json_settings(path, {"expected": {"editor.fontSize": 14, "files.autoSave": "afterDelay"}}) == 1.0
        assert check_json_settings(path, {"expected": {"http.proxy": "http://proxy:8080"}}) == 1.0
        assert check_json_settings(path, {"expected": {"editor.fontSize": 12}}) == 0.0
        assert check_json_settings(path, {"expected": {"editor.wordWrap": "on"}}) == 0.0

    def test_settings_missing_or_broken(self, tmp_path):
        assert check_json_settings(None, {"expected": {"a": 1}}) == 0.0
        assert check_json_settings(write(tmp_path, "s.json", "{not json"), {"expected": {"a": 1}}) == 0.0
        with pytest.raises(MetricError):
            check_json_settings(write(tmp_path, "s.json", "{}"), {"expected": ["a"]})

    def test_keybindings_after_a_comment_line(self, tmp_path):
        binding = {"key": "ctrl+j", "command": "workbench.action.togglePanel"}
        path = write(tmp_path, "keybindings.json", "// Place your key bindings in this file\n"
                                                   + json.dumps([{"key": "f5", "command": "run"}, binding]))
        assert check_json_keybindings(path, {"expected": binding}) == 1.0
        assert check_json_keybindings(path, {"expected": {**binding, "key": "ctrl+k"}}) == 0.0
        assert check_json_keybindings(None, {"expected": binding}) == 0.0
        assert check_json_keybindings(write(tmp_path, "k.json", '{"key": "x"}'), {"expected": binding}) == 0.0
        with pytest.raises(MetricError):
            check_json_keybindings(path, {"expected": "ctrl+j"})

    def test_compare_config(self, tmp_path):
        text = '{\n  "folders": [{"path": "project"}]\n}'
        assert compare_config(write(tmp_path, "w.code-workspace", text), {"expected": text}) == 1.0
        assert compare_config(write(tmp_path, "w.code-workspace", text + "\n"), {"expected": text}) == 0.0
        assert compare_config(None, {"expected": text}) == 0.0
        with pytest.raises(MetricError):
            compare_config(write(tmp_path, "w", text), {"expected": {"folders": []}})


# --------------------------------------------------------------------------- text files

class TestTextFiles:
    def test_file_contains(self, tmp_path):
        path = write(tmp_path, "report.txt", "access code AX-1234, folder tmp42\n")
        assert file_contains(path, {"expected": ["AX-1234", "tmp42"]}) == 1.0
        assert file_contains(path, {"expected": "AX-1234"}) == 1.0
        assert file_contains(path, {"expected": ["AX-1234", "tmp43"]}) == 0.0
        assert file_contains(None, {"expected": ["AX-1234"]}) == 0.0
        with pytest.raises(MetricError):
            file_contains(path, {"expected": [1234]})

    def test_compare_python_pure_text(self, tmp_path):
        gold = write(tmp_path, "gold.py", "def f(x):\n    return x + 1\n\nprint(f(1))\n")
        same = write(tmp_path, "a.py", "#!/usr/bin/env python3\n# -*- coding: utf-8 -*-\ndef f(x):   \n"
                                       "\treturn x + 1\n\n\n\nprint(f(1))")
        assert compare_python_pure_text(same, gold) == 1.0
        other = write(tmp_path, "b.py", "def f(x):\n    return x + 2\nprint(f(1))\n")
        assert compare_python_pure_text(other, gold) == 0.0
        fenced = write(tmp_path, "c.py", "```python\ndef f(x):\n    return x + 1\nprint(f(1))\n```\n")
        assert compare_python_pure_text(fenced, gold) == 0.0
        assert compare_python_pure_text(None, gold) == 0.0
        with pytest.raises(MetricError):
            compare_python_pure_text(same, tmp_path / "absent.py")

    def test_check_line_number(self, tmp_path):
        path = write(tmp_path, "log.txt", "12:01:33 start\nno time here\n23:59:60 leap\n25:00:00 not a time\n")
        assert check_line_number(path, {"expected": 2}) == 1.0
        assert check_line_number(path, {"expected": "2"}) == 1.0
        assert check_line_number(path, {"expected": 3}) == 0.0
        assert check_line_number(None, {"expected": 2}) == 0.0
        with pytest.raises(MetricError):
            check_line_number(path, {"expected": "two"})

    def test_compare_result_files(self, tmp_path):
        gold = write(tmp_path, "gold.txt", "42.5\n")
        assert compare_result_files(write(tmp_path, "r1.txt", "The median price is 42.5"), gold) == 1.0
        assert compare_result_files(write(tmp_path, "r2.txt", "42.50003"), gold) == 1.0
        assert compare_result_files(write(tmp_path, "r3.txt", "43"), gold) == 0.0
        word_gold = write(tmp_path, "gold2.txt", "Paris")
        assert compare_result_files(write(tmp_path, "r4.txt", " Paris\n"), word_gold) == 1.0
        assert compare_result_files(write(tmp_path, "r5.txt", "Paris, France"), word_gold) == 0.0
        assert compare_result_files(None, gold) == 0.0
        with pytest.raises(MetricError):
            compare_result_files(write(tmp_path, "r6.txt", "1"), None)


# --------------------------------------------------------------------------- tables and documents

class TestCheckCsv:
    RULES = {"expect": [{"user": "alice@x.org", "url": "imap://x.org"}], "unexpect": [{"user": "bob@y.org"}]}

    def test_pass_and_fail(self, tmp_path):
        rows = "url,user,password\nimap://x.org,alice@x.org,pw\nsmtp://x.org,carol@x.org,pw\n"
        assert check_csv(write(tmp_path, "a.csv", rows), self.RULES) == 1.0
        assert check_csv(write(tmp_path, "b.csv", rows + "imap://y.org,bob@y.org,pw\n"), self.RULES) == 0.0
        assert check_csv(write(tmp_path, "c.csv", "url,user\nimap://x.org,alice@x.org2\n"), self.RULES) == 0.0

    def test_missing_result_and_bad_rules(self, tmp_path):
        assert check_csv(None, self.RULES) == 0.0
        with pytest.raises(MetricError):
            check_csv(write(tmp_path, "a.csv", "a\n1\n"), {"expect": ["alice"]})
        with pytest.raises(MetricError):
            check_csv(write(tmp_path, "a.csv", "a\n1\n"), {"rows": []})


class TestRunSqlite3:
    SQL = ("SELECT COALESCE((SELECT COUNT(*) FROM starred WHERE folder = 13), 0) = "
           "(SELECT COUNT(*) FROM messages WHERE folder = 13);")

    @staticmethod
    def make_db(path: Path, starred: int) -> Path:
        with sqlite3.connect(path) as conn:
            conn.execute("CREATE TABLE messages (id INTEGER, folder INTEGER)")
            conn.execute("CREATE TABLE starred (id INTEGER, folder INTEGER)")
            conn.executemany("INSERT INTO messages VALUES (?, 13)", [(i,) for i in range(3)])
            conn.executemany("INSERT INTO starred VALUES (?, 13)", [(i,) for i in range(starred)])
        conn.close()
        return path

    def test_truth_value_of_the_query(self, tmp_path):
        assert run_sqlite3(self.make_db(tmp_path / "all.sqlite", 3), {"sql": self.SQL}) == 1.0
        assert run_sqlite3(self.make_db(tmp_path / "some.sqlite", 2), {"sql": self.SQL}) == 0.0

    def test_wrong_or_missing_database(self, tmp_path):
        assert run_sqlite3(None, {"sql": self.SQL}) == 0.0
        assert run_sqlite3(write(tmp_path, "x.sqlite", "not a database" * 20), {"sql": self.SQL}) == 0.0
        empty = tmp_path / "empty.sqlite"
        sqlite3.connect(empty).close()
        assert run_sqlite3(empty, {"sql": self.SQL}) == 0.0  # no such table: a wrong file, not a task error

    def test_bad_query_is_a_task_error_and_the_file_is_not_changed(self, tmp_path):
        db = self.make_db(tmp_path / "db.sqlite", 3)
        before = db.read_bytes()
        with pytest.raises(MetricError):
            run_sqlite3(db, {"sql": "SELEC 1"})
        with pytest.raises(MetricError):
            run_sqlite3(db, {"sql": "DELETE FROM messages"})
        with pytest.raises(MetricError):
            run_sqlite3(db, {"query": self.SQL})
        assert db.read_bytes() == before


class TestFuzzyPlaceMath:
    RULES = {"expected": ["Paris", "London", "Tokyo", "Beijing"]}

    def test_exact_and_fuzzy(self, tmp_path):
        assert fuzzy_place_math(make_docx(tmp_path, "a.docx", ["Paris", "London", "Tokyo"]), self.RULES) == 1.0
        fuzzy = fuzzy_place_math(make_docx(tmp_path, "b.docx", ["Paris London", "Tokio"]), self.RULES)
        assert 0.8 < fuzzy < 1.0

    def test_fail(self, tmp_path):
        assert fuzzy_place_math(make_docx(tmp_path, "a.docx", ["Paris", "London"]), self.RULES) == 0.0
        assert fuzzy_place_math(make_docx(tmp_path, "b.docx", ["Xq", "Zz", "Ww"]), self.RULES) < 0.3
        assert fuzzy_place_math(None, self.RULES) == 0.0
        assert fuzzy_place_math(write(tmp_path, "c.docx", "not a zip"), self.RULES) == 0.0

    def test_bad_options(self, tmp_path):
        path = make_docx(tmp_path, "a.docx", ["Paris"])
        with pytest.raises(MetricError):
            fuzzy_place_math(path, self.RULES, word_count=0)
        with pytest.raises(MetricError):
            fuzzy_place_math(path, {"expected": "Paris"}, word_count="1")


class TestConferenceCities:
    @staticmethod
    def make_xlsx(path: Path, cities: list) -> Path:
        wb = openpyxl.Workbook()
        ws = wb.active
        ws.append(["Conference", "Year", "City"])
        for c in cities:
            ws.append(["X", 2024, c])
        wb.save(path)
        return path

    def test_pass_and_fail(self, tmp_path):
        rules = {"expected": ["Vienna", ["Montréal", "Montreal"], "Singapore"]}
        good = self.make_xlsx(tmp_path / "a.xlsx", ["Vienna, Austria", "Montreal", "SINGAPORE"])
        assert compare_conference_city_in_order(good, rules) == 1.0
        swapped = self.make_xlsx(tmp_path / "b.xlsx", ["Montreal", "Vienna", "Singapore"])
        assert compare_conference_city_in_order(swapped, rules) == 0.0
        short = self.make_xlsx(tmp_path / "c.xlsx", ["Vienna", "Montreal"])
        assert compare_conference_city_in_order(short, rules) == 0.0

    def test_missing_result_and_bad_rules(self, tmp_path):
        assert compare_conference_city_in_order(None, {"expected": ["Vienna"]}) == 0.0
        with pytest.raises(MetricError):
            compare_conference_city_in_order(None, {"expected": "Vienna"})
        with pytest.raises(MetricError):
            compare_conference_city_in_order(None, {"expected": [1, 2]})


# --------------------------------------------------------------------------- archives

class TestCompareArchive:
    MEMBERS = {"a.txt": "alpha\n", "sub/b.txt": "beta\n"}

    def test_zip_against_tar_with_the_same_files(self, tmp_path):
        gold = make_tar(tmp_path, "gold.tar.gz", {"./" + k: v for k, v in self.MEMBERS.items()})
        assert compare_archive(make_zip(tmp_path, "r.zip", self.MEMBERS), gold) == 1.0

    def test_member_scores_are_averaged(self, tmp_path):
        gold = make_zip(tmp_path, "gold.zip", self.MEMBERS)
        half = make_zip(tmp_path, "r.zip", {"a.txt": "alpha\n", "sub/b.txt": "gamma\n"})
        assert compare_archive(half, gold) == 0.5
        renamed = make_zip(tmp_path, "r2.zip", {"a.txt": "alpha\n", "b.txt": "beta\n"})
        assert compare_archive(renamed, gold) == 0.0

    def test_options(self, tmp_path):
        gold = make_zip(tmp_path, "gold.zip", {"docs/a.txt": "one  two\n", "other.bin": "x"})
        got = make_zip(tmp_path, "r.zip", {"docs/a.txt": "one two", "other.bin": "y"})
        assert compare_archive(got, gold, file_path="docs") == 0.0
        assert compare_archive(got, gold, file_path="docs", ignore_blanks=True) == 1.0

    def test_pdf_members(self, tmp_path):
        gold = make_zip(tmp_path, "gold.zip", {"p.pdf": pdf_bytes(["Hello archive"], title="gold")})
        same = make_zip(tmp_path, "r.zip", {"p.pdf": pdf_bytes(["Hello archive"], title="mine")})
        assert compare_archive(same, gold, file_type="pdf") == 1.0
        other = make_zip(tmp_path, "r2.zip", {"p.pdf": pdf_bytes(["Totally different words"])})
        assert compare_archive(other, gold, file_type="pdf") < 0.5

    def test_missing_or_unreadable_result(self, tmp_path):
        gold = make_zip(tmp_path, "gold.zip", self.MEMBERS)
        assert compare_archive(None, gold) == 0.0
        assert compare_archive(write(tmp_path, "r.zip", "not an archive"), gold) == 0.0

    def test_bad_options_and_gold(self, tmp_path):
        gold = make_zip(tmp_path, "gold.zip", self.MEMBERS)
        with pytest.raises(MetricError, match="did you mean 'text'"):
            compare_archive(gold, gold, file_type="txt")
        with pytest.raises(MetricError, match="no file under"):
            compare_archive(gold, gold, file_path="nowhere")
        with pytest.raises(MetricError, match="not a readable"):
            compare_archive(gold, write(tmp_path, "g.txt", "plain"))


class TestCompareZipFiles:
    def test_text_and_pdf_members(self, tmp_path):
        gold = make_zip(tmp_path, "gold.zip", {"notes.txt": "a\nb\n", "paper.pdf": pdf_bytes(["Same text"], "g"),
                                                "raw.bin": b"\x00\x01"})
        same = make_zip(tmp_path, "r.zip", {"notes.txt": "a\r\nb\r\n", "paper.pdf": pdf_bytes(["Same text"], "r"),
                                             "raw.bin": b"\x00\x01"})
        assert compare_zip_files(same, gold) == 1.0
        changed = make_zip(tmp_path, "r2.zip", {"notes.txt": "a\nc\n", "paper.pdf": pdf_bytes(["Same text"]),
                                                 "raw.bin": b"\x00\x01"})
        assert compare_zip_files(changed, gold) == 0.0
        fewer = make_zip(tmp_path, "r3.zip", {"notes.txt": "a\nb\n"})
        assert compare_zip_files(fewer, gold) == 0.0

    def test_missing_result_and_bad_gold(self, tmp_path):
        gold = make_zip(tmp_path, "gold.zip", {"a.txt": "x"})
        assert compare_zip_files(None, gold) == 0.0
        with pytest.raises(MetricError):
            compare_zip_files(gold, make_tar(tmp_path, "g.tar.gz", {"a.txt": "x"}))


# --------------------------------------------------------------------------- HTML

class TestCompareHtmls:
    GOLD = ('<!DOCTYPE html><html><body><table><tr><td sdnum="1033;0;0.00" align="right">1.50</td>'
            '<td>Total  price</td></tr></table></body></html>')

    def test_same_document_laid_out_differently(self, tmp_path):
        gold = write(tmp_path, "gold.html", self.GOLD)
        spaced = self.GOLD.replace("<tr>", "\n  <tr>\n    ").replace("Total  price", "Total\n price")
        assert compare_htmls(write(tmp_path, "r.html", spaced), gold) == 1.0
        reordered = self.GOLD.replace('sdnum="1033;0;0.00" align="right"', 'align="right" sdnum="1033;0;0.00"')
        assert compare_htmls(write(tmp_path, "r2.html", reordered), gold) == 1.0

    def test_different_text_or_attributes(self, tmp_path):
        gold = write(tmp_path, "gold.html", self.GOLD)
        assert compare_htmls(write(tmp_path, "r.html", self.GOLD.replace("1.50", "1.5")), gold) == 0.0
        assert compare_htmls(write(tmp_path, "r2.html", self.GOLD.replace("right", "left")), gold) == 0.0
        assert compare_htmls(write(tmp_path, "r3.html", self.GOLD.replace("</tr>", "<td>x</td></tr>")), gold) == 0.0

    def test_ignore_sdnum(self, tmp_path):
        gold = write(tmp_path, "gold.html", self.GOLD)
        other_format = write(tmp_path, "r.html", self.GOLD.replace("1033;0;0.00", "1033;0;#,##0.00"))
        assert compare_htmls(other_format, gold) == 0.0
        assert compare_htmls(other_format, gold, ignore_sdnum=True) == 1.0

    def test_missing_result_and_bad_option(self, tmp_path):
        gold = write(tmp_path, "gold.html", self.GOLD)
        assert compare_htmls(None, gold) == 0.0
        with pytest.raises(MetricError):
            compare_htmls(gold, gold, ignore_sdnum="yes")
        with pytest.raises(MetricError):
            compare_htmls(gold, tmp_path / "absent.html")


# --------------------------------------------------------------------------- PDF

class TestComparePdfs:
    def test_text_similarity(self, tmp_path):
        gold = make_pdf(tmp_path, "gold.pdf", ["LLM Powered Autonomous Agents", "Planning and memory"], "gold")
        same = make_pdf(tmp_path, "same.pdf", ["LLM Powered Autonomous Agents", "Planning and memory"], "other")
        assert same.read_bytes() != gold.read_bytes()
        assert compare_pdfs(same, gold) == 1.0
        close = make_pdf(tmp_path, "close.pdf", ["LLM Powered Autonomous Agents", "Planning and memories"])
        assert 0.9 < compare_pdfs(close, gold) < 1.0
        assert compare_pdfs(make_pdf(tmp_path, "other.pdf", ["Quarterly sales report"]), gold) < 0.5

    def test_lists_are_compared_pairwise(self, tmp_path):
        g1, g2 = make_pdf(tmp_path, "g1.pdf", ["first"]), make_pdf(tmp_path, "g2.pdf", ["second"])
        r1 = make_pdf(tmp_path, "r1.pdf", ["first"])
        assert compare_pdfs([r1, make_pdf(tmp_path, "r2.pdf", ["second"])], [g1, g2]) == 1.0
        assert compare_pdfs([r1, None], [g1, g2]) == 0.5

    def test_missing_or_broken(self, tmp_path):
        gold = make_pdf(tmp_path, "gold.pdf", ["text"])
        assert compare_pdfs(None, gold) == 0.0
        assert compare_pdfs(write(tmp_path, "bad.pdf", "not a pdf"), gold) == 0.0
        with pytest.raises(MetricError):
            compare_pdfs(gold, write(tmp_path, "badgold.pdf", "not a pdf"))

    def test_check_pdf_pages(self, tmp_path):
        two = make_pdf(tmp_path, "two.pdf", ["one", "two"])
        assert check_pdf_pages(two, {"relation": "eq", "ref_value": 2}) == 1.0
        assert check_pdf_pages(two, {"relation": "le", "ref_value": 1}) == 0.0
        assert check_pdf_pages(None, {"relation": "eq", "ref_value": 2}) == 0.0
        with pytest.raises(MetricError, match="did you mean 'eq'"):
            check_pdf_pages(two, {"relation": "eqq", "ref_value": 2})
        with pytest.raises(MetricError):
            check_pdf_pages(two, {"relation": "eq", "ref_value": "2"})

    def test_compare_pdf_images(self, tmp_path):
        gold = make_image_pdf(tmp_path, "gold.pdf", ["disc", "bar"])
        assert compare_pdf_images(make_image_pdf(tmp_path, "same.pdf", ["disc", "bar"]), gold) == 1.0
        assert compare_pdf_images(make_image_pdf(tmp_path, "half.pdf", ["disc", "disc"]), gold) == 0.5
        assert compare_pdf_images(make_image_pdf(tmp_path, "one.pdf", ["disc"]), gold) == 0.0
        texts = make_pdf(tmp_path, "t.pdf", ["no images"])
        assert compare_pdf_images(make_pdf(tmp_path, "t2.pdf", ["none either"]), texts) == 1.0
        assert compare_pdf_images(None, gold) == 0.0

    def test_compare_pdf_images_bad_option_and_gold(self, tmp_path):
        gold = make_image_pdf(tmp_path, "gold.pdf", ["disc"])
        with pytest.raises(MetricError):
            compare_pdf_images(gold, gold, threshold=1.5)
        with pytest.raises(MetricError):
            compare_pdf_images(gold, write(tmp_path, "g.pdf", "junk"))


# --------------------------------------------------------------------------- desktop state

class TestDesktopState:
    def test_check_moved_jpgs(self):
        tree = {"type": "directory", "name": "cpjpg", "children": [
            {"type": "file", "name": "a.jpg"}, {"type": "file", "name": "b.jpg"}]}
        assert check_moved_jpgs(tree, {"expected": ["b.jpg", "a.jpg"]}) == 1.0
        assert check_moved_jpgs(tree, {"expected": ["a.jpg"]}) == 0.0
        assert check_moved_jpgs(tree, {"expected": ["a.jpg", "b.jpg", "c.jpg"]}) == 0.0
        assert check_moved_jpgs(None, {"expected": ["a.jpg"]}) == 0.0
        with pytest.raises(MetricError):
            check_moved_jpgs(tree, {"expected": 2})

    @pytest.mark.parametrize("zone, score", [
        ("Atlantic/Faroe (WET, +0000)", 1.0), ("Etc/UTC (UTC, +0000)", 1.0), ("Europe/Paris (CET, +0100)", 0.0),
        ("America/New_York (EST, -0500)", 0.0)])
    def test_is_utc_0(self, zone, score):
        output = ("               Local time: Thu 2024-01-25 12:56:06 WET\n"
                  "           Universal time: Thu 2024-01-25 12:56:06 UTC\n"
                  "                 RTC time: Thu 2024-01-25 12:56:05\n"
                  f"                Time zone: {zone}\n"
                  "System clock synchronized: yes\n")
        assert is_utc_0(GuestText(output), None) == score

    def test_is_utc_0_without_output(self):
        assert is_utc_0(None, None) == 0.0
        assert is_utc_0(GuestText("Failed to connect to bus"), None) == 0.0


# --------------------------------------------------------------------------- running a test suite

GAME = "from settings import WIDTH\n\ndef rotate(cells):\n    return [(y, -x) for x, y in cells]\n"
TEST_SUITE = """\
import os
from game import rotate
from settings import WIDTH

def test():
    return WIDTH == 10 and rotate([(1, 0)]) == [(0, -1)]

def env_is_clean():
    return "FILES_METRIC_SECRET" not in os.environ

def scribble():
    with open("scribble.txt", "w") as f:
        f.write("x")
    return 0.25

def hang():
    import time
    time.sleep(60)

def crash():
    raise RuntimeError("boom")
"""


@pytest.fixture
def program(tmp_path):
    """A guest program fetched into a cache folder (three modules) and a test suite fetched beside it."""
    cache = tmp_path / "cache"
    game = write(cache, "game.py", GAME)
    write(cache, "settings.py", "WIDTH = 10\n")
    test_file = write(cache, "test_suite.py", TEST_SUITE)
    return cache, game, test_file


class TestCheckPythonFileByTestSuite:
    def test_pass_with_the_sibling_modules(self, program):
        cache, game, test_file = program
        assert check_python_file_by_test_suite(game, test_file) == 1.0
        assert check_python_file_by_test_suite([game, cache / "settings.py"], test_file) == 1.0

    def test_fail(self, program):
        cache, game, test_file = program
        (cache / "settings.py").write_text("WIDTH = 12\n")
        assert check_python_file_by_test_suite(game, test_file) == 0.0
        assert check_python_file_by_test_suite(game, test_file, test_function_name="crash") == 0.0
        assert check_python_file_by_test_suite(game, test_file, test_function_name="absent") == 0.0
        (cache / "game.py").write_text("def rotate(:\n")
        assert check_python_file_by_test_suite(game, test_file, test_function_name="env_is_clean") == 0.0

    def test_runs_in_a_scratch_folder_with_a_clean_environment(self, program, monkeypatch):
        cache, game, test_file = program
        monkeypatch.setenv("FILES_METRIC_SECRET", "api-key")
        assert check_python_file_by_test_suite(game, test_file, test_function_name="env_is_clean") == 1.0
        assert check_python_file_by_test_suite(game, test_file, test_function_name="scribble") == 0.25
        assert not (cache / "scribble.txt").exists()

    def test_no_network_where_the_host_allows_it(self, program):
        cache, game, _ = program
        if not files_python._no_network_prefix():
            pytest.skip("this host cannot create a network namespace (unshare --user --net)")
        with socket.socket() as server:
            server.bind(("127.0.0.1", 0))
            server.listen()
            probe = write(cache, "probe_suite.py", (
                "import socket\n\ndef test():\n    try:\n"
                f"        socket.create_connection(('127.0.0.1', {server.getsockname()[1]}), timeout=2).close()\n"
                "    except OSError:\n        return True\n    return False\n"))
            assert check_python_file_by_test_suite(game, probe) == 1.0

    def test_timeout(self, program):
        _, game, test_file = program
        assert check_python_file_by_test_suite(game, test_file, test_function_name="hang", timeout_s=1) == 0.0

    def test_missing_result(self, program, tmp_path):
        _, _, test_file = program
        assert check_python_file_by_test_suite(None, test_file) == 0.0
        assert check_python_file_by_test_suite(tmp_path / "absent.py", test_file) == 0.0

    def test_bad_options(self, program, tmp_path):
        _, game, test_file = program
        with pytest.raises(MetricError):
            check_python_file_by_test_suite(game, test_file, test_function_name="os.system")
        with pytest.raises(MetricError):
            check_python_file_by_test_suite(game, test_file, timeout_s=0)
        with pytest.raises(MetricError):
            check_python_file_by_test_suite(game, tmp_path / "absent_test.py")
