"""The in-VM server on a real desktop: typing into a terminal, screenshots, AT-SPI, windows, video."""
from __future__ import annotations

import io
import json
import subprocess
import time
import uuid
import xml.etree.ElementTree as ET
from concurrent.futures import ThreadPoolExecutor

import pytest
import requests
from PIL import Image
from vmsrv_harness import SCREEN, ServerProcess, wait_until

from desktop_env.errors import GuestServerError

pytestmark = pytest.mark.xvfb

ST = "https://accessibility.ubuntu.example.org/ns/state"
CP = "https://accessibility.ubuntu.example.org/ns/component"
ACT = "https://accessibility.ubuntu.example.org/ns/action"
ATTR = "https://accessibility.ubuntu.example.org/ns/attributes"


def _png(data: bytes) -> Image.Image:
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    return Image.open(io.BytesIO(data)).convert("RGB")


def _window_geometry(xsession, title: str) -> tuple[int, int, int, int]:
    wid = xsession.run("xdotool", "search", "--name", f"^{title}$").stdout.split()[0]
    out = xsession.run("xdotool", "getwindowgeometry", "--shell", wid).stdout
    geo = dict(line.split("=", 1) for line in out.split())
    return int(geo["X"]), int(geo["Y"]), int(geo["WIDTH"]), int(geo["HEIGHT"])


def _uniform_box(image: Image.Image, size: int = 48):
    """Top-left corner of a ``size`` square of one colour, scanning from the bottom-right."""
    for y in range(image.height - size - 8, 0, -size):
        for x in range(image.width - size - 8, 0, -size):
            if len(set(image.crop((x, y, x + size, y + size)).getdata())) == 1:
                return x, y
    return None


# -- pyautogui in a real terminal ---------------------------------------------------------------

def test_pyautogui_types_into_a_real_terminal(client, apps, xsession, tmp_path):
    title = f"typing-{uuid.uuid4().hex[:8]}"
    ready = tmp_path / "shell-ready"
    apps.terminal(title, shell_command=f"touch {ready}")
    # Type once the terminal's shell runs (under load the window maps well before it), then read
    # where the window manager finally placed it.
    wait_until(ready.exists, 60, "the terminal's shell")
    client.activate_window(title, strict=True)
    x, y, w, h = _window_geometry(xsession, title)
    target = tmp_path / "typed.txt"
    reply = client.run_pyautogui(f"pyautogui.click({x + w // 2}, {y + h // 2})\n"
                                 f"pyautogui.typewrite('echo hello > {target}', interval=0.01)\n"
                                 "pyautogui.press('enter')")
    assert reply["returncode"] == 0, reply
    wait_until(lambda: target.exists() and target.read_text() == "hello\n", 30, "the typed command's file")
    assert client.cursor_position() == (x + w // 2, y + h // 2)


def test_pyautogui_write_types_non_ascii(client, apps, tmp_path):
    """pyautogui alone skips characters missing from its key table and types '<' as '>' (it presses
    Shift on the first keycode with 'less', the ISO key whose shifted level is 'greater'); the
    executor types them all as written."""
    target = tmp_path / "unicode.txt"
    title = f"unicode-{uuid.uuid4().hex[:8]}"
    apps.terminal(title, shell_command=f"cat > {target}")
    client.activate_window(title, strict=True)
    # More distinct missing characters than a keymap has spare keycodes, so they are bound in rounds.
    text = "Grüße, naïve café: 5 € ½ 中文 Ωμέγα; É ü <a|b> " + "".join(chr(0x4E00 + i) for i in range(300)) + " end"
    reply = client.run_pyautogui(f"pyautogui.write({text + chr(10)!r})\npyautogui.hotkey('ctrl', 'd')",
                                 timeout_s=120)
    assert reply["returncode"] == 0, reply
    wait_until(lambda: target.exists() and target.read_text(encoding="utf-8") == text + "\n", 30,
               "the typed non-ASCII line")


def test_computer_13_typing_types_many_non_ascii_characters(client, apps, tmp_path):
    """The computer_13 TYPING code binds missing characters in rounds (more than the spare keycodes)."""
    from desktop_env.actions import typing_code

    target = tmp_path / "typing13.txt"
    title = f"typing13-{uuid.uuid4().hex[:8]}"
    apps.terminal(title, shell_command=f"cat > {target}")
    client.activate_window(title, strict=True)
    text = "Zürich – 5 € <x> " + "".join(chr(0x4E00 + i) for i in range(300)) + " end"
    reply = client.run_pyautogui(typing_code(text + "\n") + "\npyautogui.hotkey('ctrl', 'd')", timeout_s=120)
    assert reply["returncode"] == 0, reply
    wait_until(lambda: target.exists() and target.read_text(encoding="utf-8") == text + "\n", 30,
               "the TYPING action's non-ASCII line")


def test_old_client_action_path_types_too(client, apps, xsession, tmp_path):
    """The old client's ``/execute`` + ``python -c`` pattern drives the same desktop."""
    title = f"oldtyping-{uuid.uuid4().hex[:8]}"
    apps.terminal(title)
    client.activate_window(title, strict=True)
    target = tmp_path / "old.txt"
    prefix = "import pyautogui; import time; pyautogui.FAILSAFE = False; {}"
    for action in (f"pyautogui.typewrite({f'echo old > {target}'!r})", "pyautogui.press('enter')"):
        reply = client.execute(["python", "-c", prefix.format(action)])
        assert reply["returncode"] == 0, reply
    wait_until(lambda: target.exists() and target.read_text() == "old\n", 15, "the typed command's file")


# -- screenshots ----------------------------------------------------------------------------------

def test_screenshot_has_screen_size_and_the_cursor(client, xsession):
    plain = xsession.grab_root()
    corner = _uniform_box(plain)
    assert corner is not None, "no empty area on screen to test the cursor on"
    x, y = corner[0] + 16, corner[1] + 16
    client.run_pyautogui(f"pyautogui.moveTo({x}, {y})")
    shot = _png(client.screenshot())
    assert shot.size == SCREEN
    plain = xsession.grab_root()  # cursor-less: X never includes the pointer in GetImage
    box = (x - 16, y - 16, x + 32, y + 32)
    assert len(set(plain.crop(box).getdata())) == 1
    drawn = shot.crop(box)
    assert len(set(drawn.getdata())) > 1, "the cursor is not drawn in the screenshot"
    # moving the pointer away removes the cursor from that spot
    client.run_pyautogui(f"pyautogui.moveTo({x - 200 if x > 200 else x + 200}, {y})")
    assert len(set(_png(client.screenshot()).crop(box).getdata())) == 1


def test_concurrent_screenshots(client):
    with ThreadPoolExecutor(max_workers=6) as pool:
        shots = list(pool.map(lambda _: client.screenshot(), range(12)))
    for data in shots:
        assert _png(data).size == SCREEN


# -- accessibility --------------------------------------------------------------------------------

def _tree(client, **limits) -> ET.Element:
    return ET.fromstring(client.accessibility_tree(**limits))


def test_accessibility_tree_has_the_terminal(client, apps):
    title = f"a11y-{uuid.uuid4().hex[:8]}"
    apps.terminal(title)

    def frame():
        root = _tree(client)
        return next((f for f in root.iter("frame") if title in f.get("name", "")), None)

    found = wait_until(frame, 30, f"a frame named {title!r} in the accessibility tree", interval_s=0.5)
    assert found.get(f"{{{ST}}}showing") == "true"
    x, y = eval(found.get(f"{{{CP}}}screencoord"))  # "(x, y)", as the original server wrote it
    w, h = eval(found.get(f"{{{CP}}}size"))
    assert w > 100 and h > 100 and 0 <= x < SCREEN[0] and 0 <= y < SCREEN[1]
    assert any(True for _ in found.iter("terminal")), "no terminal widget under the frame"


def test_accessibility_limits(client, server, apps):
    apps.terminal(f"limits-{uuid.uuid4().hex[:8]}")
    shallow = _tree(client, max_depth=1)
    assert shallow.tag == "desktop-frame" and len(shallow) >= 1
    assert all(len(app) == 0 for app in shallow), "max_depth=1 must stop below the applications"
    reply = requests.get(server.url + "/accessibility", params={"max_nodes": 5}, timeout=60,
                         headers={"Authorization": f"Bearer {server.token}"}).json()
    assert reply["nodes"] == 5 and "nodes" in reply["truncated"]
    assert sum(1 for _ in ET.fromstring(reply["AT"]).iter()) == 5
    xml, stats = client.accessibility_tree_with_stats(max_depth=1)
    assert ET.fromstring(xml).tag == "desktop-frame" and "depth" in stats["truncated"] and stats["nodes"] >= 2


def test_terminal_text(client, apps):
    marker = f"marker-{uuid.uuid4().hex[:10]}"
    title = f"text-{uuid.uuid4().hex[:8]}"
    apps.terminal(title, shell_command=f"echo {marker}")
    client.activate_window(title, strict=True)
    text = wait_until(lambda: (lambda t: t if t and marker in t else None)(client.terminal_output()), 30,
                      "the marker in /terminal", interval_s=0.5)
    assert text == text.rstrip()


def test_terminal_is_null_without_terminals(server_python, xsession, tmp_path):
    """A desktop without terminals answers output null (on a fresh display of its own)."""
    from vmsrv_harness import ServerProcess, XSession

    (tmp_path / "x").mkdir()
    empty = XSession(tmp_path / "x").start()
    try:
        srv = ServerProcess(server_python, empty, tmp_path)
        try:
            assert srv.client.terminal_output() is None
        finally:
            srv.stop()
    finally:
        empty.stop()


@pytest.fixture
def chromium_page(client, apps, tmp_path):
    label = f"Quokka-{uuid.uuid4().hex[:6]}"
    page = tmp_path / "page.html"
    page.write_text(f"<!doctype html><title>a11y page</title><button>{label}</button>")
    apps.launch(["chromium", "--no-sandbox", "--force-renderer-accessibility", "--no-first-run",
                 "--disable-background-networking", "--disable-gpu", "--disable-dev-shm-usage",
                 "--password-store=basic", "--window-position=0,0", "--window-size=800,600",
                 f"--user-data-dir={tmp_path / 'profile'}", page.as_uri()])
    return label


def test_accessibility_tree_has_chromium_content(client, chromium_page):
    def button():
        root = _tree(client)
        return next((b for b in root.iter("push-button") if b.get("name") == chromium_page), None)

    found = wait_until(button, 90, f"Chromium's button {chromium_page!r} in the accessibility tree",
                       interval_s=1.0)
    assert found.get(f"{{{ST}}}showing") == "true"


_DEVTOOLS_PAGE = """<!doctype html><title>{title}</title>
<style>body {{ margin: 0; font: 16px sans-serif }} #far {{ margin-top: 4000px }}</style>
<h2>Heading-{mark}</h2>
<label for=who>Who-{mark}</label> <input id=who value="typed-{mark}">
<button onclick="this.textContent = 'Pressed-{mark}'">Press-{mark}</button>
<a href="#x">Link-{mark}</a> <input type=checkbox aria-label="Agree-{mark}" checked>
<a href="#logo"><img alt="Logo-{mark}" width=20 height=20 src="data:image/gif;base64,R0lGODlhAQABAAAAACw="></a>
<a style="cursor:pointer" onclick="void 0">Tab-{mark}</a> <span role=button tabindex=0 aria-pressed=false>Bold-{mark}</span>
<svg width=16 height=16><rect width=16 height=16 fill=blue /></svg>
<div aria-hidden=true><button>Unseen-{mark}</button></div>
<div style="display:none"><button>Hidden-{mark}</button></div>
<div id=far><button>Far-{mark}</button></div>
"""


def _chromium(apps, tmp_path, page, *flags):
    apps.launch(["chromium", "--no-sandbox", "--force-renderer-accessibility", "--no-first-run",
                 "--disable-background-networking", "--disable-gpu", "--disable-dev-shm-usage",
                 "--password-store=basic", "--window-position=0,0", "--window-size=800,600", *flags,
                 f"--user-data-dir={tmp_path / 'profile'}", page.as_uri()])


def _box(elem):
    x, y = (int(v) for v in elem.get(f"{{{CP}}}screencoord").strip("()").split(","))
    w, h = (int(v) for v in elem.get(f"{{{CP}}}size").strip("()").split(","))
    return x, y, w, h


def test_chromium_pages_are_read_over_devtools(client, apps, tmp_path):
    """A Chromium started with a remote-debugging port (port 0: the port it chose, from its
    DevToolsActivePort file) has its page read from the DOM: the same elements, names and boxes as
    the AT-SPI walk of it, nothing that is not on screen, and a box that a click really hits."""
    mark = uuid.uuid4().hex[:6]
    title = f"devtools-{mark}"
    page = tmp_path / "page.html"
    page.write_text(_DEVTOOLS_PAGE.format(title=title, mark=mark))
    _chromium(apps, tmp_path, page, "--remote-debugging-port=0")

    def read(web):
        xml, stats = client.accessibility_tree_with_stats(web=web)
        root = ET.fromstring(xml)
        doc = next((d for d in root.iter("document-web") if d.get("name") == title), None)
        if doc is None or next((b for b in doc.iter("push-button") if b.get("name") == f"Press-{mark}"), None) is None:
            return None
        return doc, stats

    doc, stats = wait_until(lambda: read("devtools"), 90, f"the page {title!r} with its button", interval_s=1.0)
    assert doc.get("reader") == "devtools" and stats["pages"] == 1
    atspi_doc, atspi_stats = read("atspi")
    assert atspi_doc.get("reader") is None and atspi_stats["pages"] == 0

    def find(d, tag, name):  # Chromium adds a hint to images' names ("Logo. To get missing image descriptions, ...")
        return next((e for e in d.iter(tag) if e.get("name") == name or e.get("name", "").startswith(name + ". ")),
                    None)

    for tag, name in (("push-button", f"Press-{mark}"), ("heading", f"Heading-{mark}"), ("link", f"Link-{mark}"),
                      ("entry", f"Who-{mark}"), ("check-box", f"Agree-{mark}"), ("link", f"Logo-{mark}"),
                      ("link", f"Tab-{mark}"), ("toggle-button", f"Bold-{mark}")):
        ours, theirs = find(doc, tag, name), find(atspi_doc, tag, name)
        assert ours is not None, f"{tag} {name!r} missing from the DevTools read"
        assert theirs is not None, f"{tag} {name!r} missing from the AT-SPI walk"
        assert ours.get(f"{{{ST}}}showing") == "true"
        assert all(abs(a - b) <= 2 for a, b in zip(_box(ours), _box(theirs))), (tag, _box(ours), _box(theirs))
    assert find(doc, "entry", f"Who-{mark}").text == f"typed-{mark}"
    assert find(doc, "check-box", f"Agree-{mark}").get(f"{{{ST}}}checked") == "true"
    assert find(doc, "heading", f"Heading-{mark}").get(f"{{{ATTR}}}level") == "2"
    names = {e.get("name") for e in doc.iter()}
    assert f"Hidden-{mark}" not in names and f"Far-{mark}" not in names and f"Unseen-{mark}" not in names
    assert not [e for e in doc.iter("image") if not e.get("name")], "an unnamed drawing is not an image to act on"

    x, y, w, h = _box(find(doc, "push-button", f"Press-{mark}"))
    client.run_pyautogui(f"pyautogui.click({x + w // 2}, {y + h // 2})")
    wait_until(lambda: find(_tree(client), "push-button", f"Pressed-{mark}"), 30,
               "the button pressed at the box the DevTools read gave", interval_s=0.5)


def test_a_page_read_again_is_the_tab_in_front(client, apps, tmp_path):
    """The reader keeps the page target it found for a document (per title and size) and walks it
    directly next time; when another tab of the same title and size comes to the front, the next
    read is of that tab, not of the one kept."""
    mark = uuid.uuid4().hex[:6]
    title = f"same-{mark}"
    pages = []
    for word in ("First", "Second"):
        pages.append(tmp_path / f"{word}.html")
        pages[-1].write_text(f"<!doctype html><title>{title}</title><button>{word}-{mark}</button>")
    apps.launch(["chromium", "--no-sandbox", "--force-renderer-accessibility", "--no-first-run",
                 "--disable-background-networking", "--disable-gpu", "--disable-dev-shm-usage",
                 "--password-store=basic", "--window-position=0,0", "--window-size=800,600",
                 "--remote-debugging-port=0", f"--user-data-dir={tmp_path / 'profile'}",
                 *(page.as_uri() for page in pages)])

    def shown():
        doc = next((d for d in _tree(client).iter("document-web") if d.get("name") == title), None)
        if doc is None or doc.get("reader") != "devtools":
            return None
        words = {b.get("name").split("-")[0] for b in doc.iter("push-button") if b.get("name", "").endswith(mark)}
        return words if len(words) == 1 else None

    (front,) = wait_until(shown, 90, f"one of the two pages titled {title!r}, read over DevTools", interval_s=1.0)
    assert shown() == {front}  # read again through the target kept
    client.run_pyautogui("pyautogui.hotkey('ctrl', 'tab')")
    other = ({"First", "Second"} - {front}).pop()
    wait_until(lambda: shown() == {other}, 30, f"the {other} page after switching tabs", interval_s=0.5)


def test_chromium_without_a_debugging_port_is_walked_over_atspi(client, chromium_page):
    def document():
        root = _tree(client)
        for doc in root.iter("document-web"):
            if any(b.get("name") == chromium_page for b in doc.iter("push-button")):
                return doc
        return None

    doc = wait_until(document, 90, f"Chromium's button {chromium_page!r} in the accessibility tree", interval_s=1.0)
    assert doc.get("reader") is None
    # Chromium's invisible views are written without details (attributes, actions) and without their subtree.
    chromium = [app for app in _tree(client) if app.get("name") == "Chromium"]
    invisible = [e for app in chromium for e in app.iter() if e is not app
                 and e.get(f"{{{ST}}}showing") is None and e.get(f"{{{ST}}}visible") is None]
    assert invisible, "Chromium's window holds invisible elements (its toolbar's hidden buttons)"
    assert not [e for e in invisible if any(k.startswith(f"{{{ACT}}}") for k in e.attrib)]
    assert not [e for e in invisible if len(e)], "an invisible view of Chromium was written with its subtree"


def test_repeated_reads_follow_a_page_s_changes(client, apps, tmp_path):
    """The server keeps roles and actions between reads (A11yReader._role, _actions): a later read
    must still show a changed name, a changed state and the actions that come with it."""
    mark = uuid.uuid4().hex[:6]
    page = tmp_path / "page.html"
    page.write_text(f"<!doctype html><title>changes</title><button onclick=\"this.textContent='Pressed-{mark}'; "
                    f"document.getElementById('c').checked = true\">Press-{mark}</button>"
                    f"<input type=checkbox id=c aria-label='Agree-{mark}'>")
    apps.launch(["chromium", "--no-sandbox", "--force-renderer-accessibility", "--no-first-run",
                 "--disable-background-networking", "--disable-gpu", "--disable-dev-shm-usage",
                 "--password-store=basic", "--window-position=0,0", "--window-size=800,600",
                 f"--user-data-dir={tmp_path / 'profile'}", page.as_uri()])

    def elements(button_name):
        root = _tree(client)
        button = next((b for b in root.iter("push-button") if b.get("name") == button_name), None)
        box = next((b for b in root.iter("check-box") if b.get("name") == f"Agree-{mark}"), None)
        return (button, box) if button is not None and box is not None else None

    button, box = wait_until(lambda: elements(f"Press-{mark}"), 90, "the page's button and check box",
                             interval_s=1.0)
    assert box.get(f"{{{ST}}}checked") is None
    assert box.get(f"{{{ACT}}}check_desc") is not None
    elements(f"Press-{mark}")  # a second read, from what the first one kept
    x, y = (int(v) for v in button.get(f"{{{CP}}}screencoord").strip("()").split(","))
    client.run_pyautogui(f"pyautogui.click({x + 5}, {y + 5})")
    button, box = wait_until(lambda: elements(f"Pressed-{mark}"), 30, "the button's new name", interval_s=0.5)
    assert box.get(f"{{{ST}}}checked") == "true"
    assert box.get(f"{{{ACT}}}uncheck_desc") is not None and box.get(f"{{{ACT}}}check_desc") is None


# -- windows --------------------------------------------------------------------------------------

def test_window_size_activate_close(client, apps, xsession):
    first, second = (f"win-{uuid.uuid4().hex[:8]}" for _ in range(2))
    apps.terminal(first)
    apps.terminal(second)
    width, height = client.window_size("xfce4-terminal")
    assert width > 100 and height > 100
    assert client.window_size("Xfce4-Terminal") == (width, height)  # class match ignores case
    assert client.window_size("no-such-class") is None

    active = lambda: xsession.run("xdotool", "getactivewindow", "getwindowname", check=False).stdout.strip()  # noqa: E731
    client.activate_window(first, strict=True)
    wait_until(lambda: active() == first, 10, f"{first} to become active")
    client.activate_window(second[:8], strict=False)  # a substring is enough without strict
    wait_until(lambda: active() in (first, second), 10, "a terminal to be active")
    with pytest.raises(GuestServerError) as err:
        client.activate_window(first[:8], strict=True)
    assert err.value.status == 404
    client.activate_window("xfce4-terminal", by_class=True)

    client.close_window(first, strict=True)
    wait_until(lambda: first not in xsession.window_titles(), 15, f"{first} to close")
    assert second in xsession.window_titles()
    with pytest.raises(GuestServerError) as err:
        client.close_window(first, strict=True)
    assert err.value.status == 404


# -- wallpaper ------------------------------------------------------------------------------------

def test_change_and_get_wallpaper(client, tmp_path):
    image = tmp_path / "wall.png"
    Image.new("RGB", (64, 48), (10, 200, 30)).save(image)
    reply = client.change_wallpaper(str(image))
    assert "xfconf" in reply["methods"]
    assert client.wallpaper() == image.read_bytes()


# -- recording ------------------------------------------------------------------------------------

def _probe(path) -> dict:
    out = subprocess.run(["ffprobe", "-v", "error", "-print_format", "json", "-show_format", "-show_streams",
                          str(path)], capture_output=True, text=True, check=True).stdout
    return json.loads(out)


def test_two_concurrent_recordings(client, tmp_path):
    first = client.start_recording()
    second = client.start_recording()
    assert first != second
    client.run_pyautogui("for i in range(10):\n    pyautogui.moveTo(100 + 50 * i, 200)\n    time.sleep(0.1)")
    # no id: the most recent one (the old clients' behaviour)
    latest = client.end_recording(tmp_path / "latest.mp4")
    with pytest.raises(GuestServerError) as err:
        client.end_recording(tmp_path / "again.mp4", recording_id=second)
    assert err.value.status == 404, "the id-less stop should have ended the most recent recording"
    older = client.end_recording(tmp_path / "first.mp4", recording_id=first)
    for path in (latest, older):
        info = _probe(path)
        video = info["streams"][0]
        assert video["codec_name"] == "h264" and (video["width"], video["height"]) == SCREEN
        assert float(info["format"]["duration"]) > 0.5
    with pytest.raises(GuestServerError) as err:
        client.end_recording(tmp_path / "none.mp4")
    assert err.value.status == 400


def test_server_turns_toolkit_accessibility_on(server, xsession):
    out = lambda: xsession.run("gdbus", "call", "--session", "--dest", "org.a11y.Bus",  # noqa: E731
                               "--object-path", "/org/a11y/bus", "--method",
                               "org.freedesktop.DBus.Properties.Get", "org.a11y.Status", "IsEnabled").stdout
    wait_until(lambda: "true" in out(), 15, "org.a11y.Status.IsEnabled to be true")


def test_server_puts_the_a11y_bus_address_on_the_root_window(server_python, xsession, tmp_path):
    """Qt 5 applications join the tree only if the root window names the AT-SPI bus (the image's bus
    launcher starts before X and cannot): a server starting with the property gone puts it back."""
    reply = xsession.run("gdbus", "call", "--session", "--dest", "org.a11y.Bus", "--object-path", "/org/a11y/bus",
                         "--method", "org.a11y.Bus.GetAddress").stdout
    address = reply.split("'")[1]
    xsession.run("xprop", "-root", "-remove", "AT_SPI_BUS")
    assert "AT_SPI_BUS(STRING)" not in xsession.xprop_root("AT_SPI_BUS")
    srv = ServerProcess(server_python, xsession, tmp_path)
    try:
        wait_until(lambda: f'"{address}"' in xsession.xprop_root("AT_SPI_BUS"), 30,
                   f"AT_SPI_BUS = {address} on the root window (server log: {srv.log_path})")
    finally:
        srv.stop()
        if "AT_SPI_BUS(STRING)" not in xsession.xprop_root("AT_SPI_BUS"):  # for the tests after this one
            xsession.run("xprop", "-root", "-f", "AT_SPI_BUS", "8s", "-set", "AT_SPI_BUS", address)


def test_accessibility_skips_what_is_not_showing(client, server, apps):
    """A closed menu's entries are listed by role and name but not walked or detailed (the cost of a
    dump was mostly closed menus and scrolled-away page content); what shows is read in full."""
    title = f"menus-{uuid.uuid4().hex[:8]}"
    apps.terminal(title)

    def reply():
        r = requests.get(server.url + "/accessibility", timeout=60,
                         headers={"Authorization": f"Bearer {server.token}"}).json()
        root = ET.fromstring(r["AT"])
        frame = next((f for f in root.iter("frame") if title in f.get("name", "")), None)
        return (r, frame) if frame is not None and any(True for _ in frame.iter("terminal")) else None

    r, frame = wait_until(reply, 30, f"the terminal {title!r} in the accessibility tree", interval_s=0.5)
    assert r["hidden"] > 0
    closed = [e for e in frame.iter() if e.tag in ("menu-item", "check-menu-item", "radio-menu-item")
              and e.get(f"{{{ST}}}showing") != "true"]
    assert closed, "the terminal's menu bar holds closed entries"
    assert all(len(e) == 0 and e.get(f"{{{CP}}}screencoord") is None for e in closed)
    assert all(e.get("name") is not None for e in closed)
    terminal = next(frame.iter("terminal"))
    assert terminal.get(f"{{{CP}}}screencoord") is not None and terminal.get(f"{{{ST}}}showing") == "true"


def test_a_spreadsheet_s_cells_are_read_last_or_left_out(client, server, apps, xsession, tmp_path):
    """LibreOffice Calc's sheet is a huge table whose visible cells the server reads one by one: they
    come after the rest of the tree (a dump that runs out of time loses cells, not a dialog), and
    ``cells=false`` leaves them out (the table says so) for a quick look at the window's controls."""
    import shutil

    import openpyxl

    from desktop_env.paths import repo_root

    if shutil.which("soffice") is None:
        pytest.fail("LibreOffice is missing: apt-get install libreoffice-calc libreoffice-gtk3 (.ci/apt-packages.txt)")
    skel = repo_root() / "desktop_env/image/profiles/base/files/etc/skel/.config/libreoffice"
    shutil.copytree(skel, xsession.home / ".config/libreoffice", dirs_exist_ok=True)  # no first-start dialogs
    book = tmp_path / f"cells-{uuid.uuid4().hex[:6]}.xlsx"
    wb = openpyxl.Workbook()
    wb.active.title = "Numbers"
    wb.active.append(["Marker-cell-42", 7])
    wb.save(book)
    apps.launch(["env", "SAL_USE_VCLPLUGIN=gtk3", "soffice", "--calc", "--norestore", str(book)])

    def full():
        r = requests.get(server.url + "/accessibility", params={"timeout_s": 60}, timeout=120,
                         headers={"Authorization": f"Bearer {server.token}"}).json()
        table = next((t for t in ET.fromstring(r["AT"]).iter("table") if t.get("name") == "Sheet Numbers"), None)
        return (r, table) if table is not None and len(table) else None

    r, table = wait_until(full, 120, "Calc's sheet with its cells in the accessibility tree", interval_s=2)
    assert any(c.get("name") == "A1" and (c.text or "") == "Marker-cell-42" for c in table.iter("table-cell"))
    assert "time" not in r["truncated"]
    without = requests.get(server.url + "/accessibility", params={"cells": "false", "timeout_s": 60}, timeout=120,
                           headers={"Authorization": f"Bearer {server.token}"}).json()
    sheet = next(t for t in ET.fromstring(without["AT"]).iter("table") if t.get("name") == "Sheet Numbers")
    assert sheet.get("cells") == "not-read" and len(sheet) == 0
    assert without["nodes"] < r["nodes"]
    assert any(m.get("name") == "Data" for m in ET.fromstring(without["AT"]).iter("menu")), "the menu bar is read"


# -- GUI-step replay on a page still laying out ---------------------------------------------------

class _ReplayEnv:
    """What the replay of a GUI step needs of an environment: a controller, DevTools, step and perform."""

    action_space_name = "pyautogui"

    def __init__(self, client, cdp_url: str):
        self.controller, self.cdp_url, self.screen = client, cdp_url, SCREEN

    def step(self, code):
        reply = self.controller.run_pyautogui(code)
        return {}, 0.0, False, False, {"error": reply.get("error")} if reply.get("returncode") else {}

    def perform(self, code):
        return self.step(code)[::4]

    def observe(self):
        return {}


def _page_in_chromium(apps, tmp_path, page) -> str:
    """Open the file ``page`` in a Chromium of its own with DevTools on; returns the DevTools URL."""
    from vmsrv_harness import free_port

    port = free_port()
    apps.launch(["chromium", "--no-sandbox", "--no-first-run", "--disable-background-networking", "--disable-gpu",
                 "--disable-dev-shm-usage", "--password-store=basic", "--window-position=0,0",
                 "--window-size=800,600", f"--remote-debugging-port={port}",
                 f"--user-data-dir={tmp_path / 'profile'}", page.as_uri()])
    return f"http://127.0.0.1:{port}"


def _click_go_after_start(client, cdp: str, page_name: str) -> dict:
    """Call the page's ``start()`` once Chromium answers, then replay a click on its #go; returns the step's info."""
    from playwright.sync_api import sync_playwright

    from desktop_env.replay import GuiStep, Replayer

    def started():
        with sync_playwright() as pw:
            browser = pw.chromium.connect_over_cdp(cdp, timeout=5000)
            tab = next(t for c in browser.contexts for t in c.pages if t.url.endswith(page_name))
            tab.evaluate("start()")
            return True

    wait_until(lambda: _quietly(started), 90, "Chromium's DevTools and the page", interval_s=1.0)
    step = GuiStep.from_json({"gui": "click", "target": {"css": "#go"}})
    _, _, _, _, info = Replayer(_ReplayEnv(client, cdp)).run(step, time.monotonic() + 90)
    return info


def test_a_click_waits_until_the_page_stops_moving_its_target(client, apps, xsession, tmp_path):
    """A panel filling in above a button shifts it down for 3 s: the click must land on the button where it
    comes to rest, not where it was first seen (the title records the panel's height at the click)."""
    page = tmp_path / "moving.html"
    page.write_text("<!doctype html><title>moving</title><body style='margin:0'><div id=pad></div>"
                    "<button id=go style='height:40px;width:200px' onclick=\"document.title='clicked at '"
                    "+pad.offsetHeight\">Go</button><script>function start() { let h = 0; const t = setInterval("
                    "() => { h += 4; pad.style.height = h + 'px'; if (h >= 200) clearInterval(t); }, 60); }"
                    "</script>")
    info = _click_go_after_start(client, _page_in_chromium(apps, tmp_path, page), page.name)
    assert "error" not in info, info
    assert info.get("relocated", 0) >= 1, info
    wait_until(lambda: any(t.startswith("clicked at") for t in xsession.window_titles()), 20, "the button's click")
    assert any(t.startswith("clicked at 200") for t in xsession.window_titles()), xsession.window_titles()


def test_a_click_waits_for_an_animation_on_its_container(client, apps, xsession, tmp_path):
    """A dialog about to slide into place (a transition with a delay: its box holds still, then moves): the
    click waits until the animation has ended (the title records whether it had)."""
    page = tmp_path / "sliding.html"
    page.write_text("<!doctype html><title>sliding</title><body style='margin:0'>"
                    "<div id=box style='transform:translateY(300px)'><button id=go style='height:40px;width:200px' "
                    "onclick=\"document.title = 'clicked ' + (window.done ? 'after' : 'during')\">Go</button></div>"
                    "<script>box.addEventListener('transitionend', () => { window.done = true; });"
                    "function start() { box.style.transition = 'transform 1s linear 1.5s'; "
                    "box.style.transform = 'none'; }</script>")
    info = _click_go_after_start(client, _page_in_chromium(apps, tmp_path, page), page.name)
    assert "error" not in info, info
    wait_until(lambda: any(t.startswith("clicked") for t in xsession.window_titles()), 20, "the button's click")
    assert any(t.startswith("clicked after") for t in xsession.window_titles()), xsession.window_titles()


def test_a_click_waits_for_a_paused_animation_to_play(client, apps, xsession, tmp_path):
    """Ant Design holds a dialog at the first frame of its zoom, paused, before it plays: the click waits
    until the animation has played (the title records whether it had)."""
    page = tmp_path / "paused.html"
    page.write_text("<!doctype html><title>paused</title><style>@keyframes up { from { transform: "
                    "translateY(300px) } to { transform: none } }</style><body style='margin:0'>"
                    "<div id=box><button id=go style='height:40px;width:200px' "
                    "onclick=\"document.title = 'clicked ' + (window.done ? 'after' : 'during')\">Go</button></div>"
                    "<script>box.addEventListener('animationend', () => { window.done = true; });"
                    "function start() { box.style.animation = 'up 0.5s linear both paused'; "
                    "setTimeout(() => { box.style.animationPlayState = 'running'; }, 2000); }</script>")
    info = _click_go_after_start(client, _page_in_chromium(apps, tmp_path, page), page.name)
    assert "error" not in info, info
    wait_until(lambda: any(t.startswith("clicked") for t in xsession.window_titles()), 20, "the button's click")
    assert any(t.startswith("clicked after") for t in xsession.window_titles()), xsession.window_titles()


def test_a_page_drag_drops_right_after_the_page_shows(client, apps, xsession, tmp_path):
    """HTML5 drag and drop (react-dnd's backend, Superset's chart editor): the drag starts as soon as the
    page answers, the page is seen starting the drag and dragging over the drop target, and the drop lands."""
    from desktop_env.replay import GuiStep, Replayer

    page = tmp_path / "dnd.html"
    page.write_text("<!doctype html><title>dnd</title><body style='margin:0'>"
                    "<div id=item draggable=true style='width:160px;height:30px;background:#ccc'>status</div>"
                    "<div id=zone style='margin:120px 0 0 200px;width:260px;height:40px;border:1px dashed'>drop</div>"
                    "<script>item.ondragstart = e => e.dataTransfer.setData('text/plain', item.textContent);"
                    "zone.ondragover = e => e.preventDefault();"
                    "zone.ondrop = e => { e.preventDefault(); document.title = 'dropped ' + "
                    "e.dataTransfer.getData('text/plain'); };</script>")
    step = GuiStep.from_json({"gui": "drag", "target": {"css": "#item"}, "to": {"css": "#zone"}})
    _, _, _, _, info = Replayer(_ReplayEnv(client, _page_in_chromium(apps, tmp_path, page))).run(
        step, time.monotonic() + 120)
    assert "error" not in info, info
    assert info.get("drag_started") and info.get("drag_over"), info
    wait_until(lambda: any(t.startswith("dropped status") for t in xsession.window_titles()), 20,
               f"the drop (windows: {xsession.window_titles()})")


def _quietly(look):
    """``look()``, or None when it raises (not ready yet)."""
    try:
        return look()
    except Exception:  # noqa: BLE001 - polled until ready
        return None
