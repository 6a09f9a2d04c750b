"""The app getters' pure parts: relative dates (rule_relativeTime), values from table and text files, the media
of a slide, load-time checks; and googledrive_file against a local server speaking Google's OAuth token
endpoint and Drive API v3. The getters that read the VM run live in tests/setup_live/test_app_getters_live.py.
"""
from __future__ import annotations

import io
import json
import re
import threading
import uuid
from datetime import date, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit
from zoneinfo import ZoneInfo

import pytest
from openpyxl import Workbook
from PIL import Image
from pptx import Presentation
from pptx.media import Video
from pptx.opc.constants import RELATIONSHIP_TYPE as RT
from pptx.oxml import parse_xml
from pptx.oxml.ns import nsdecls
from pptx.parts.media import MediaPart

import desktop_env.evaluators.getters.apps as apps  # registers the getters until the registry lists the module
from desktop_env.errors import TaskConfigError
from desktop_env.evaluators.evaluator import run_getter
from desktop_env.evaluators.metrics.files import check_direct_json_object
from desktop_env.registry import ACCOUNT, GETTERS
from desktop_env.session import SetupContext
from desktop_env.tasks import GetterSpec, TaskSpec, load_task

WED = date(2024, 5, 15)  # a Wednesday


# --------------------------------------------------------------------------- relative dates
@pytest.mark.parametrize("phrase,today,start,want", [
    ("tomorrow", WED, None, date(2024, 5, 16)),
    ("this month", WED, None, WED),
    ("this Saturday", WED, None, date(2024, 5, 18)),
    ("this Sunday", WED, None, date(2024, 5, 19)),
    ("this Saturday", date(2024, 5, 19), None, date(2024, 5, 18)),  # Sunday: this week's Saturday was yesterday
    ("next Monday", WED, None, date(2024, 5, 20)),
    ("next Monday", date(2024, 5, 20), None, date(2024, 5, 27)),  # on a Monday: a week later
    ("next Monday split", WED, None, date(2024, 5, 20)),
    ("next Friday", WED, None, date(2024, 5, 17)),
    ("next Friday", date(2024, 5, 17), None, date(2024, 5, 24)),
    ("next Friday", WED, date(2024, 5, 20), date(2024, 5, 24)),  # ending a range that starts next Monday
    ("next Sunday", WED, date(2024, 5, 18), date(2024, 5, 19)),  # the weekend of "next Saturday"
    ("Next  SATURDAY", WED, None, date(2024, 5, 18)),
    ("next week Friday", WED, None, date(2024, 5, 24)),
    ("next week Sunday", date(2024, 5, 19), None, date(2024, 5, 26)),
    ("5th next month", WED, None, date(2024, 6, 5)),
    ("10th next month", date(2024, 12, 31), None, date(2025, 1, 10)),
    ("first monday four months later", WED, None, date(2024, 9, 2)),
    ("first monday four months later", date(2024, 8, 10), None, date(2024, 12, 2)),  # December: no month 0
    ("first monday eight months later", WED, None, date(2025, 1, 6)),
])
def test_relative_day(phrase, today, start, want):
    assert apps.relative_day(phrase, today, start) == want


@pytest.mark.parametrize("phrase", ["yesterday", "next month", "next Moonday", "32nd next month", "", 5, None])
def test_unknown_relative_times_are_refused(phrase):
    with pytest.raises(ValueError, match="unknown relative time"):
        apps.parse_relative_time(phrase)


def test_a_day_the_next_month_does_not_have_is_refused():
    with pytest.raises(ValueError):
        apps.relative_day("31st next month", date(2024, 3, 10))


def test_format_day_fills_every_placeholder():
    day = date(2024, 3, 5)
    assert apps.format_day("{DoW}, {Month} {Day0D}, {Year}", day) == "Tue, Mar 05, 2024"
    assert apps.format_day("{month}-weather", day) == "march-weather"
    assert apps.format_day("{MonthFull} {DayD} ({Month0D}/{MonthD}) {Foo}", day) == "March 5 (03/3) {Foo}"


def test_resolve_fills_one_date_a_range_and_split_parts():
    one = {"expected": {"start": "JFK", "time": "{DoW}, {Month} {Day0D}, {Year}"}, "relativeTime": {"from": "tomorrow"}}
    out = apps.resolve_relative_rules(one, WED)
    assert out["expected"] == {"start": "JFK", "time": "Thu, May 16, 2024"}
    assert one["expected"]["time"] == "{DoW}, {Month} {Day0D}, {Year}", "the task's rules must not be changed"
    weekend = {"expected": {"from": "{Year}-{Month0D}-{Day0D}", "to": "{Year}-{Month0D}-{Day0D}"},
               "relativeTime": {"from": "next Saturday", "to": "next Sunday"}}
    assert apps.resolve_relative_rules(weekend, date(2024, 5, 18))["expected"] == {"from": "2024-05-25",
                                                                                   "to": "2024-05-26"}
    split = {"expected": {k: "{DayD}" if k.endswith("Day") else "{MonthD}" if k.endswith("Month") else "{Year}"
                          for k in ("puDay", "puMonth", "puYear", "doDay", "doMonth", "doYear")},
             "relativeTime": {"from": "next Monday split", "to": "next Friday split"}, "timezone": "Europe/Zurich"}
    got = apps.resolve_relative_rules(split, date(2024, 12, 29))["expected"]
    assert got == {"puDay": "30", "puMonth": "12", "puYear": "2024", "doDay": "3", "doMonth": "1", "doYear": "2025"}
    # what the metric sees: the URL parameters of a car rental search for that week
    assert check_direct_json_object({"puDay": "30", "puMonth": "12", "puYear": "2024", "doDay": "3", "doMonth": "1",
                                     "doYear": "2025"}, {"expected": got}) == 1.0
    assert check_direct_json_object({**got, "doDay": "4"}, {"expected": got}) == 0.0


def test_a_relative_date_may_be_a_list_of_templates_as_the_public_getter_takes():
    """The general suite's flight task (chrome/82bc8d6a in the public fork) lists the date forms it accepts;
    each is filled in, and check_direct_json_object with expect_in_result takes any of them."""
    from desktop_env.tasks import TaskSpec

    rules = {"relativeTime": {"from": "next Monday"}, "expect_in_result": True,
             "expected": {"fromStation": "BOM", "toStation": ["STO", "ARN"],
                          "time": ["{Year}-{Month0D}-{Day0D}", "{DayD}/{MonthD}/{Year}"]}}
    task = TaskSpec.from_json({"id": "82bc8d6a-list", "instruction": "On next Monday, look up a flight.", "config": [],
                               "evaluator": {"func": "check_direct_json_object",
                                             "result": {"type": "active_tab_url_parse", "parse_keys": ["time"]},
                                             "expected": {"type": "rule_relativeTime", "rules": rules}}})
    assert task.evaluator.expecteds[0].type == "rule_relativeTime"  # loads: it was rejected before
    got = apps.resolve_relative_rules(rules, WED)
    assert got["expected"]["time"] == ["2024-05-20", "20/5/2024"]
    url = {"fromStation": "BOM", "toStation": "ARN", "time": "20/5/2024"}
    assert check_direct_json_object(url, got) == 1.0
    assert check_direct_json_object({**url, "time": "2024-05-21"}, got) == 0.0
    with pytest.raises(TaskConfigError, match=r"rules.expected.time"):
        apps.check_relative_rules({"rules": {**rules, "expected": {"time": []}}})


def test_rule_relative_time_counts_from_today_in_the_rules_timezone(tmp_path):
    rules = {"expected": {"time": "{Year}-{Month0D}-{Day0D}"}, "relativeTime": {"from": "tomorrow"},
             "timezone": "Pacific/Kiritimati"}  # UTC+14: often a day ahead of the host
    tz = ZoneInfo("Pacific/Kiritimati")
    before = datetime.now(tz).date()
    got = run_getter(_ctx(tmp_path), GetterSpec.from_json({"type": "rule_relativeTime", "rules": rules}), "expected")
    after = datetime.now(tz).date()
    assert got["expected"]["time"] in {(d + timedelta(days=1)).strftime("%Y-%m-%d") for d in (before, after)}
    assert got["relativeTime"] == {"from": "tomorrow"} and got["timezone"] == "Pacific/Kiritimati"


@pytest.mark.parametrize("rules,field", [
    ({"expected": {"time": "{Year}"}}, "rules.relativeTime"),
    ({"expected": {"time": "{Year}"}, "relativeTime": {"from": "in a fortnight"}}, "rules.relativeTime.from"),
    ({"expected": {"from": "{Year}", "to": "{Year}"}, "relativeTime": {"from": "tomorrow", "to": "someday"}},
     "rules.relativeTime.to"),
    ({"expected": {"date": "{Year}"}, "relativeTime": {"from": "tomorrow"}}, "rules.expected.time"),
    ({"expected": {"from": "{Year}"}, "relativeTime": {"from": "next Monday", "to": "next Friday"}},
     "rules.expected.to"),
    ({"expected": {"from": "{Year}", "to": "{Year}"}, "relativeTime": {"from": "next Monday split",
                                                                       "to": "next Friday"}}, "rules.expected.puDay"),
    ({"expected": {"time": "{Year}"}, "relativeTime": {"from": "tomorrow"}, "timezone": "Mars/Olympus"},
     "rules.timezone"),
])
def test_bad_relative_rules_fail_when_the_task_loads(rules, field):
    with pytest.raises(TaskConfigError) as err:
        TaskSpec.from_json(_task({"type": "rule", "rules": {}}, {"type": "rule_relativeTime", "rules": rules}))
    assert err.value.field == f"evaluator.expected.{field}"


# --------------------------------------------------------------------------- values from files
def _xlsx(rows) -> bytes:
    wb = Workbook()
    for row in rows:
        wb.active.append(row)
    buf = io.BytesIO()
    wb.save(buf)
    return buf.getvalue()


def test_last_row_and_cells_of_a_sheet():
    data = _xlsx([["date", "down", "up"], ["2024-05-01", 93.5, 12], [None, None, None], ["2024-05-02", 88.0, None]])
    assert apps.pick_content(data, "xlsx", "last_row") == ["2024-05-02", "88", ""]
    assert apps.pick_content(data, "xlsx", "B2") == "93.5"
    assert apps.pick_content(data, "xlsx", "c2") == "12"
    assert apps.pick_content(data, "xlsx", "Z99") == ""
    assert apps.pick_content(_xlsx([]), "xlsx", "last_row") is None


def test_csv_and_text_contents():
    data = 'name,city\n"Doe, Jane",Zürich\n\nRoe,Bern\n\n'.encode()
    assert apps.pick_content(data, "csv", "last_row") == ["Roe", "Bern"]
    assert apps.pick_content(data, "csv", "A2") == "Doe, Jane"
    assert apps.pick_content(data, "csv", "last_line") == "Roe,Bern"
    assert apps.pick_content(b"one\ntwo  \n \n", "text", "last_line") == "two  "
    assert apps.pick_content(b"\n\n", "txt", "last_line") is None
    assert apps.pick_content(b"a\nb", "text", "content") == "a\nb"


@pytest.mark.parametrize("result,field", [
    ({"file_type": "docx", "file_content": "last_row"}, "file_type"),
    ({"file_type": "xlsx", "file_content": "last_line"}, "file_content"),
    ({"file_type": "text", "file_content": "B2"}, "file_content"),
    ({"file_type": "csv", "file_content": "row 2"}, "file_content"),
])
def test_bad_content_fields_fail_when_the_task_loads(result, field):
    getter = {"type": "content_from_vm_file", "path": "/home/user/a", **result}
    with pytest.raises(TaskConfigError) as err:
        TaskSpec.from_json(_task(getter))
    assert err.value.field == f"evaluator.result.{field}"


def test_the_suites_fields_load():
    for result in ({"type": "content_from_vm_file", "path": "/home/user/Speed.xlsx", "file_type": "xlsx",
                    "file_content": "last_row"},
                   {"type": "gimp_config_file", "file_name": "gimprc", "dest": "gimprc"},
                   {"type": "vscode_config", "vscode_extension_command": "OpenProject", "path": "/tmp/p.txt",
                    "dest": "p.txt"},
                   {"type": "audio_in_slide", "ppt_file_path": "/home/user/a.pptx", "slide_index": 0, "dest": "a.mp3"},
                   {"type": "googledrive_file", "settings_file": "evaluation_examples/settings/googledrive/settings.yml",
                    "path_list": [["x", "a.docx"], ["b.docx"]], "dest": ["a.docx", "b.docx"]}):
        TaskSpec.from_json(_task(result))
    with pytest.raises(TaskConfigError) as err:
        TaskSpec.from_json(_task({"type": "gimp_config_file", "file_name": "../../.ssh/id_rsa", "dest": "k"}))
    assert err.value.field == "evaluator.result.file_name"
    assert GETTERS.entries["googledrive_file"].status == ACCOUNT and GETTERS.entries["googledrive_file"].note


# --------------------------------------------------------------------------- media of a slide
def _png(colour) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", (8, 6), colour).save(buf, "PNG")
    return buf.getvalue()


def _picture_background(owner, png: bytes) -> None:
    """Give a slide, layout or master a background picture (python-pptx has no API for it)."""
    _, rid = owner.part.get_or_add_image_part(io.BytesIO(png))
    for old in owner.element.cSld.xpath("./p:bg"):
        owner.element.cSld.remove(old)
    owner.element.cSld.insert(0, parse_xml(
        f'<p:bg {nsdecls("p", "a", "r")}><p:bgPr><a:blipFill><a:blip r:embed="{rid}"/><a:stretch><a:fillRect/>'
        "</a:stretch></a:blipFill><a:effectLst/></p:bgPr></p:bg>"))


def test_a_slides_background_is_its_own_else_its_masters():
    prs = Presentation()
    own, inherited, solid = (prs.slides.add_slide(prs.slide_layouts[6]) for _ in range(3))
    assert apps.slide_background_picture(own) is None  # the default master's background is a theme colour
    _picture_background(prs.slide_master, _png("navy"))
    _picture_background(own, _png("red"))
    solid.background.fill.solid()
    assert apps.slide_background_picture(own).target_part.blob == _png("red")
    assert apps.slide_background_picture(inherited).target_part.blob == _png("navy")
    assert apps.slide_background_picture(solid) is None


def test_a_slides_sound_prefers_audio_links_and_skips_video():
    prs = Presentation()
    slide = prs.slides.add_slide(prs.slide_layouts[6])
    assert apps.slide_audio(slide) is None

    def media(blob, mime, name):
        return MediaPart.new(slide.part.package, Video.from_blob(blob, mime, name))
    slide.part.relate_to(media(b"video", "video/mp4", "v.mp4"), RT.MEDIA)
    assert apps.slide_audio(slide) is None
    slide.part.relate_to(media(b"media-mp3", "audio/mpeg", "m.mp3"), RT.MEDIA)
    assert apps.slide_audio(slide).target_part.blob == b"media-mp3"
    slide.part.relate_to(media(b"audio-wav", "audio/x-wav", "a.wav"), RT.AUDIO)
    assert apps.slide_audio(slide).target_part.blob == b"audio-wav"


# --------------------------------------------------------------------------- Google Drive
FILES = {  # id -> (name, parent, mimeType, content)
    "fReports": ("reports", "root", "application/vnd.google-apps.folder", b""),
    "fQ1": ("q1.csv", "fReports", "text/csv", b"quarter,sales\nq1,12\n"),
    "fOld": ("q1.csv", "root", "text/csv", b"not this one"),
    "fDoc": ("notes", "fReports", "application/vnd.google-apps.document", b""),
}
TOKEN = "ya29.app-getters"


class _Drive(BaseHTTPRequestHandler):
    """Google's token endpoint (refresh-token grant) and the Drive v3 calls googledrive_file makes."""

    def _reply(self, status: int, body) -> None:
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self):  # noqa: N802 - http.server's naming
        form = parse_qs(self.rfile.read(int(self.headers["Content-Length"])).decode())
        if form.get("refresh_token") != ["1//refresh"]:
            return self._reply(400, {"error": "invalid_grant"})
        return self._reply(200, {"access_token": TOKEN, "expires_in": 3599, "token_type": "Bearer"})

    def do_GET(self):  # noqa: N802
        url = urlsplit(self.path)
        query = {k: v[0] for k, v in parse_qs(url.query).items()}
        if self.headers.get("Authorization") != f"Bearer {TOKEN}":
            return self._reply(401, {"error": {"code": 401}})
        if url.path == "/drive/v3/files":
            return self._reply(200, {"files": [{"id": i, "name": n, "mimeType": m, "parents": [p]}
                                               for i, (n, p, m, _) in FILES.items() if _matches(query["q"], i)]})
        fid = url.path.rsplit("/", 2)[-2] if url.path.endswith("/export") else url.path.rsplit("/", 1)[-1]
        if fid not in FILES:
            return self._reply(404, {"error": {"code": 404, "message": f"File not found: {fid}."}})
        if url.path.endswith("/export"):
            return self._reply(200, f"exported {fid} as {query['mimeType']}".encode())
        assert query.get("alt") == "media"
        return self._reply(200, FILES[fid][3])

    def log_message(self, *args):
        pass


def _matches(q: str, fid: str) -> bool:
    """The Drive query clauses googledrive_file writes: (name = '...'), mimeType, trashed, '<id>' in parents."""
    name, parent, mime, _ = FILES[fid]
    for clause in re.split(r"\s+and\s+", q.replace("(", "").replace(")", "")):
        if m := re.fullmatch(r"'([\w-]+)' in parents", clause):
            ok = m.group(1) == parent
        elif m := re.fullmatch(r"name = '(.+)'", clause):
            ok = m.group(1) == name
        elif m := re.fullmatch(r"mimeType (!?=) '(.+)'", clause):
            ok = (mime == m.group(2)) == (m.group(1) == "=")
        elif clause == "trashed = false":
            ok = True
        else:
            raise AssertionError(f"query clause the fake does not know: {clause!r}")
        if not ok:
            return False
    return True


@pytest.fixture
def drive_ctx(tmp_path):
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Drive)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{httpd.server_address[1]}"
    settings = tmp_path / "evaluation_examples" / "settings" / "googledrive"
    settings.mkdir(parents=True)
    (settings / "credentials.json").write_text(json.dumps({
        "refresh_token": "1//refresh", "client_id": "cid", "client_secret": "shh", "token_uri": f"{url}/token"}))
    (settings / "settings.yml").write_text("save_credentials_file: evaluation_examples/settings/googledrive/"
                                           f"credentials.json\napi_endpoint: {url}\n")
    try:
        yield _ctx(tmp_path)
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_googledrive_file_by_path_and_query(drive_ctx):
    get = GETTERS["googledrive_file"]
    local = get(drive_ctx, path=["reports", "q1.csv"], dest="q1.csv")
    assert local == drive_ctx.cache_path("q1.csv") and local.read_bytes() == b"quarter,sales\nq1,12\n"
    by_query = get(drive_ctx, dest="q.csv", query=[
        "title = 'reports' and mimeType = 'application/vnd.google-apps.folder' and trashed = false",
        "title = 'q1.csv' and trashed = false"])
    assert by_query.read_bytes() == b"quarter,sales\nq1,12\n"
    both = get(drive_ctx, path_list=[["q1.csv"], ["reports", "notes"], ["reports", "gone.csv"]],
               dest=["root.csv", "notes.docx", "gone.csv"])
    assert both[0].read_bytes() == b"not this one" and both[2] is None
    assert both[1].read_bytes() == (b"exported fDoc as application/vnd.openxmlformats-officedocument."
                                    b"wordprocessingml.document")
    assert get(drive_ctx, path=["nowhere", "q1.csv"], dest="x.csv") is None


@pytest.mark.parametrize("fields,field", [
    ({"dest": "a"}, "path"),
    ({"dest": "a", "path": ["a"], "query": ["name = 'a'"]}, "query"),
    ({"dest": "a", "path_list": [["a"]]}, "dest"),
    ({"dest": ["a"], "path_list": [[]]}, "path_list[0]"),
    ({"dest": "a", "path": "reports/q1.csv"}, "path"),
])
def test_googledrive_file_fields(drive_ctx, fields, field):
    with pytest.raises(TaskConfigError) as err:
        GETTERS["googledrive_file"](drive_ctx, **fields)
    assert err.value.field == field


# --------------------------------------------------------------------------- helpers
def _task(result: dict, expected: dict | None = None) -> dict:
    return {"id": str(uuid.uuid4()), "instruction": "x", "config": [],
            "evaluator": {"func": "exact_match", "result": result,
                          "expected": expected or {"type": "rule", "rules": {"expected": ""}}}}


def _ctx(root) -> SetupContext:
    folder = root / "evaluation_examples" / "examples" / "os" / "t"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "t.json").write_text(json.dumps({"id": "t", "instruction": "x", "config": [],
                                               "evaluator": {"func": "infeasible"}}))
    return SetupContext(controller=None, task=load_task(folder / "t.json"), cache_dir=root / "cache")
