"""The app and desktop getters run through the evaluator's dispatch against the in-VM server on a real X display:
config files in the server's HOME, VLC's status from a local HTTP server speaking its interface, real pptx, xlsx
and ``.desktop`` files, and xdg-mime. Each result is also scored by the metric that consumes it.
"""
from __future__ import annotations

import base64
import http.server
import io
import math
import shutil
import socket
import struct
import threading
import uuid
import wave
from pathlib import Path

import pytest
from openpyxl import Workbook
from PIL import Image
from pptx import Presentation
from pptx.media import Video
from pptx.opc.constants import RELATIONSHIP_TYPE as RT
from pptx.oxml import parse_xml
from pptx.oxml.ns import nsdecls
from pptx.parts.media import MediaPart

# registers the getters until the registry lists the module
import desktop_env.evaluators.getters.apps  # noqa: F401  # pylint: disable=unused-import
from desktop_env.errors import TaskConfigError
from desktop_env.evaluators.evaluator import run_getter
from desktop_env.evaluators.metrics.browser import is_shortcut_on_desktop
from desktop_env.evaluators.metrics.gimp_files import check_config_status
from desktop_env.evaluators.metrics.vlc import check_qt_max_volume, is_vlc_playing
from desktop_env.evaluators.values import GuestText
from desktop_env.tasks import GetterSpec

pytestmark = pytest.mark.xvfb


def _get(ctx, side: str = "result", **spec):
    return run_getter(ctx, GetterSpec.from_json(spec), side)


@pytest.fixture
def ctx(suite, context):
    task = suite("os", {"id": str(uuid.uuid4()), "instruction": "read the VM", "config": [],
                        "evaluator": {"func": "infeasible"}})
    return context(task)


@pytest.fixture
def home(xsession):
    """``home(rel)`` -> a fresh path in the server's HOME: what was there is set aside and put back after."""
    made: list[tuple[Path, Path | None]] = []

    def fresh(rel: str) -> Path:
        path = xsession.home / rel
        aside = None
        if path.exists() or path.is_symlink():
            aside = path.with_name(f"{path.name}.aside-{uuid.uuid4().hex[:6]}")
            path.rename(aside)
        path.parent.mkdir(parents=True, exist_ok=True)
        made.append((path, aside))
        return path

    try:
        yield fresh
    finally:
        for path, aside in reversed(made):
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path)
            elif path.exists() or path.is_symlink():
                path.unlink()
            if aside is not None:
                aside.rename(path)


# -- config files --------------------------------------------------------------------------------

VLCRC = "[qt]\n# qt-bgcone=1\nqt-max-volume=200\n[core]\n#play-and-exit=0\n"


def test_vlc_config(ctx, home):
    config = home(".config/vlc")
    assert _get(ctx, type="vlc_config", dest="vlcrc") is None  # VLC never saved its preferences
    config.mkdir()
    (config / "vlcrc").write_text(VLCRC)
    local = _get(ctx, type="vlc_config", dest="vlcrc")
    assert local == ctx.cache_path("vlcrc") and local.read_text() == VLCRC
    assert check_qt_max_volume(local, {"expected_qt_max_volume": 200}) == 1.0
    assert check_qt_max_volume(local, {"expected_qt_max_volume": 125}) == 0.0


def test_gimp_config_file(ctx, home):
    config = home(".config/GIMP")
    assert _get(ctx, type="gimp_config_file", file_name="gimprc", dest="gimprc") is None
    (config / "2.10").mkdir(parents=True)
    (config / "2.10" / "gimprc").write_text("# GIMP gimprc\n(undo-levels 100)\n(theme \"Light\")\n")
    local = _get(ctx, type="gimp_config_file", file_name="gimprc", dest="gimprc")
    assert check_config_status(local, {"key": "undo-levels", "value": "100"}) == 1.0
    assert check_config_status(local, {"key": "theme", "value": "Dark"}) == 0.0
    assert _get(ctx, type="gimp_config_file", file_name="sessionrc", dest="sessionrc") is None
    with pytest.raises(TaskConfigError, match="file_name"):
        _get(ctx, type="gimp_config_file", file_name="/etc/passwd", dest="x")


def test_vscode_config_reads_the_file_the_task_names(ctx, guest):
    settings = guest / "Code" / "User" / "settings.json"
    spec = {"type": "vscode_config", "vscode_extension_command": "GetEditorSettings", "path": str(settings),
            "dest": "settings.json"}
    assert _get(ctx, **spec) is None
    settings.parent.mkdir(parents=True)
    settings.write_text('{"editor.wordWrap": "on"}')
    assert _get(ctx, **spec).read_text() == '{"editor.wordWrap": "on"}'


# -- VLC's HTTP interface ------------------------------------------------------------------------

STATUS_XML = """<?xml version="1.0" encoding="utf-8" standalone="yes" ?>
<root><fullscreen>false</fullscreen><volume>256</volume><state>playing</state>
<information><category name="meta"><info name='filename'>Never Gonna Give You Up.mp4</info></category></information>
</root>"""


@pytest.fixture
def vlc_http():
    """A local server answering like VLC's web interface (password ``secret``); yields its port."""
    expected = "Basic " + base64.b64encode(b":secret").decode()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 - http.server's naming
            if self.path != "/requests/status.xml":
                self.send_error(404)
            elif self.headers.get("Authorization") != expected:
                self.send_response(401)
                self.send_header("WWW-Authenticate", 'Basic realm="VLC stream"')
                self.send_header("Content-Length", "0")
                self.end_headers()
            else:
                body = STATUS_XML.encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/xml; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        def log_message(self, *args):
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield httpd.server_address[1]
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=10)


def test_vlc_playing_info(ctx, vlc_http):
    local = _get(ctx, type="vlc_playing_info", dest="status.xml", port=vlc_http, password="secret")
    assert local == ctx.cache_path("status.xml") and local.read_text() == STATUS_XML
    assert is_vlc_playing(local, {"type": "file_name", "file_name": "Never Gonna Give You Up.mp4"}) == 1.0
    assert is_vlc_playing(local, {"type": "file_name", "file_name": "other.mp4"}) == 0.0
    assert _get(ctx, type="vlc_playing_info", dest="refused.xml", port=vlc_http, password="password") is None
    with socket.socket() as sock:  # a port nothing listens on: VLC is not running
        sock.bind(("127.0.0.1", 0))
        closed = sock.getsockname()[1]
    assert _get(ctx, type="vlc_playing_info", dest="none.xml", port=closed) is None
    with pytest.raises(TaskConfigError, match="port"):
        _get(ctx, type="vlc_playing_info", dest="x.xml", port="eighty")


# -- default video player, desktop shortcuts -----------------------------------------------------

def test_default_video_player(ctx, home):
    for name in ("vlc", "totem"):  # xdg-mime only names an application whose program exists: ``true`` here
        home(f".local/share/applications/app-getters-{name}.desktop").write_text(
            f"[Desktop Entry]\nType=Application\nName={name}\nExec=true %U\nMimeType=video/mp4;\n")
    mimeapps = home(".config/mimeapps.list")
    for default in ("app-getters-vlc.desktop", "app-getters-totem.desktop"):
        mimeapps.write_text(f"[Default Applications]\nvideo/mp4={default}\n")
        got = _get(ctx, type="default_video_player")
        assert isinstance(got, GuestText) and got == default
    assert _get(ctx, type="default_video_player", mime_type="video/x-app-getters-none") is None


def test_shortcuts_on_desktop(ctx, home, guest):
    desktop = home("Desktop")
    assert _get(ctx, type="shortcuts_on_desktop") is None  # no desktop folder at all
    desktop.mkdir()
    assert _get(ctx, type="shortcuts_on_desktop") == {}
    (desktop / "gimp.desktop").write_text("[Desktop Entry]\nType=Application\nName=GNU Image Manipulation Program\n"
                                          "Exec=gimp-2.10 %U\n")
    target = guest / "vlc.desktop"
    target.write_text("[Desktop Entry]\nType=Application\nName=VLC media player\nExec=/usr/bin/vlc --started-from-file %U\n")
    (desktop / "vlc.desktop").symlink_to(target)  # as a file manager's "link to desktop" makes it
    (desktop / "gone.desktop").symlink_to(guest / "nowhere.desktop")
    (desktop / "folder.desktop").mkdir()
    (desktop / "notes.txt").write_text("Name=not a shortcut")
    got = _get(ctx, type="shortcuts_on_desktop")
    assert sorted(got) == [str(desktop / "gimp.desktop"), str(desktop / "vlc.desktop")]
    assert got[str(desktop / "vlc.desktop")] == target.read_text()
    assert is_shortcut_on_desktop(got, {"type": "name", "name": "VLC media player"}) == 1.0
    assert is_shortcut_on_desktop(got, {"type": "exec", "exec": "gimp-2.10 %U"}) == 1.0
    assert is_shortcut_on_desktop(got, {"type": "name", "name": "Thunderbird Mail"}) == 0.0


# -- a value from a guest file -------------------------------------------------------------------

def test_content_from_vm_file(ctx, guest):
    wb = Workbook()
    for row in (["Date", "Download", "Upload"], ["2024-05-01 10:00", 93.5, 11.0], ["2024-05-02 10:00", 88.25, 12]):
        wb.active.append(row)
    wb.save(guest / "Speed.xlsx")
    (guest / "scores.csv").write_text("name,score\nada,9\nbob,7\n")
    (guest / "log.txt").write_text("started\nfinished in 3 s\n\n")
    (guest / "fake.xlsx").write_text("not a workbook")

    def content(name, file_type, file_content, **more):
        return _get(ctx, type="content_from_vm_file", path=str(guest / name), file_type=file_type,
                    file_content=file_content, **more)
    assert content("Speed.xlsx", "xlsx", "last_row") == ["2024-05-02 10:00", "88.25", "12"]
    assert content("scores.csv", "csv", "B2") == "9"
    assert content("scores.csv", "csv", "last_row") == ["bob", "7"]
    got = content("log.txt", "text", "last_line", dest="logs/log.txt")
    assert got == "finished in 3 s" and isinstance(got, GuestText)
    assert ctx.cache_path("logs/log.txt").read_text() == "started\nfinished in 3 s\n\n"
    assert content("missing.xlsx", "xlsx", "last_row") is None
    assert content("fake.xlsx", "xlsx", "last_row") is None
    with pytest.raises(TaskConfigError, match="file_content"):
        content("log.txt", "text", "last_row")


# -- media in slides -----------------------------------------------------------------------------

def _wav(freq: float) -> bytes:
    buf = io.BytesIO()
    with wave.open(buf, "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(8000)
        out.writeframes(b"".join(struct.pack("<h", int(8000 * math.sin(2 * math.pi * freq * i / 8000)))
                                 for i in range(1600)))
    return buf.getvalue()


def _png(colour) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", (16, 9), colour).save(buf, "PNG")
    return buf.getvalue()


@pytest.fixture
def deck(guest):
    """A pptx in the guest: slide 0 holds a sound and a background picture, slide 1 links to a sound file of
    the guest, slide 2 has neither. Returns (its path, embedded sound, linked sound, picture)."""
    embedded, linked, picture = _wav(440), _wav(660), _png((20, 120, 200))
    (guest / "media").mkdir()
    (guest / "media" / "intro theme.wav").write_bytes(linked)
    prs = Presentation()
    first, second, _ = (prs.slides.add_slide(prs.slide_layouts[6]) for _ in range(3))
    sound = MediaPart.new(first.part.package, Video.from_blob(embedded, "audio/x-wav", "theme.wav"))
    first.part.relate_to(sound, RT.MEDIA)
    first.part.relate_to(sound, RT.AUDIO)
    _, rid = first.part.get_or_add_image_part(io.BytesIO(picture))
    first.element.cSld.insert(0, parse_xml(
        f'<p:bg {nsdecls("p", "a", "r")}><p:bgPr><a:blipFill><a:blip r:embed="{rid}"/><a:stretch><a:fillRect/>'
        "</a:stretch></a:blipFill><a:effectLst/></p:bgPr></p:bg>"))
    second.part.relate_to("media/intro%20theme.wav", RT.AUDIO, is_external=True)  # relative to the pptx
    path = guest / "talk.pptx"
    prs.save(path)
    return path, embedded, linked, picture


def test_audio_in_slide(ctx, deck, guest):
    path, embedded, linked, _ = deck

    def audio(index, dest="sound.wav", ppt=str(path)):
        return _get(ctx, type="audio_in_slide", ppt_file_path=ppt, slide_index=index, dest=dest)
    got = audio(0)
    assert got == ctx.cache_path("sound.wav") and got.read_bytes() == embedded
    assert audio(1, "linked.wav").read_bytes() == linked
    assert audio(2) is None and audio(3) is None
    assert audio(0, ppt=str(guest / "absent.pptx")) is None
    with pytest.raises(TaskConfigError, match="slide_index"):
        audio(-1)


def test_background_image_in_slide(ctx, deck):
    path, _, _, picture = deck
    got = _get(ctx, type="background_image_in_slide", ppt_file_path=str(path), slide_index=0, dest="bg.png")
    assert got.read_bytes() == picture
    with Image.open(got) as im:
        assert im.getpixel((3, 3)) == (20, 120, 200)
    assert _get(ctx, type="background_image_in_slide", ppt_file_path=str(path), slide_index=1, dest="b.png") is None
