"""The base image's applications are installed, and start without first-run dialogs."""
import re
import time

import pytest

pytestmark = [pytest.mark.vm, pytest.mark.slow]


@pytest.mark.parametrize("command,expected", [
    ("sqlite3 --version", "3."),
    ("duckdb --version", "v1."),
    ("/opt/venvs/jupyter/bin/python -c 'import duckdb, pandas; print(\"duckdb\", duckdb.__version__)'", "duckdb "),
    # not `jupyter lab --version`: starting the CLI imports the whole server (about 90 s under TCG); the smoke
    # suite's JupyterLab task starts it for real
    ("readlink -f $(command -v jupyter-lab) && /opt/venvs/jupyter/bin/python -c "
     "'from importlib.metadata import version; print(\"jupyterlab\", version(\"jupyterlab\"))'",
     "/opt/venvs/jupyter/bin/jupyter-lab\njupyterlab 4."),
    ("chromium --version", "Chromium"),
    ("localc --version", "LibreOffice"),
    ("ffmpeg -version", "ffmpeg version"),
    ("curl --version", "curl"),
    ("python3 --version", "Python 3.11"),
    ("xdotool version", "xdotool"),
    ("sudo -n /usr/local/sbin/desktop-env-set-clock 2>&1 | head -1", "usage"),
    ("echo password | sudo -S -k id -u", "0"),
])
def test_tool_present(guest, command, expected):
    reply = guest.execute(command, shell=True, timeout_s=120)
    assert expected in reply["output"] + reply["error"], reply


def _wait_title(guest, fragment, timeout_s):
    deadline = time.monotonic() + timeout_s
    titles = ""
    while time.monotonic() < deadline:
        titles = guest.execute(["wmctrl", "-l"])["output"]
        if fragment in titles:
            return titles
        time.sleep(1)
    raise AssertionError(f"no window with {fragment!r} after {timeout_s} s; windows:\n{titles}")


def test_calc_opens_a_csv_without_dialogs(vm, guest):
    guest.upload_file(b"name,score\nada,3\nbob,5\n", "/home/user/Documents/scores.csv")
    guest.launch(["localc", "--infilter=CSV:44,34,76,1", "/home/user/Documents/scores.csv"])
    titles = _wait_title(guest, "scores.csv", 120)
    time.sleep(3)
    titles = guest.execute(["wmctrl", "-l"])["output"]
    assert "Tip of the Day" not in titles and "Text Import" not in titles, titles
    tree = guest.accessibility_tree()
    # A dialog, not the Help menu's "Show Tip of the Day" item, which the tree may list too.
    dialogs = re.findall(r'name="((?:Tip of the Day|Text Import)[^"]*)"', tree)
    assert not dialogs, dialogs
    guest.execute(["pkill", "-f", "soffice"])


#: Opens a second tab as soon as it loads, with no click: a pop-up unless its site may open them.
POPUP_PAGE = "<!doctype html><title>Opener</title><script>window.open('/opened.html')</script>"


def _targets(guest, port):
    reply = guest.execute(["python3", "-c", "import urllib.request; print(urllib.request.urlopen("
                           f"'http://127.0.0.1:{port}/json/list', timeout=5).read().decode())"], timeout_s=30)
    return reply["output"]


def test_chromium_starts_without_first_run_prompts_and_allows_pop_ups_of_local_tools(vm, guest):
    """No first-run prompts; the image's policy lets pages on localhost / 127.0.0.1 (the tools'
    web UIs) open tabs without a click (a JupyterLab export opens one after a save that can outlast
    the click's activation under load), while any other site's pop-up is still blocked."""
    guest.upload_file(POPUP_PAGE.encode(), "/tmp/popup-site/opener.html")
    guest.upload_file(b"<!doctype html><title>Opened</title>", "/tmp/popup-site/opened.html")
    guest.launch(["python3", "-m", "http.server", "8765", "--bind", "0.0.0.0", "--directory", "/tmp/popup-site"])
    guest.launch(["chromium", "--user-data-dir=/tmp/fresh-profile", "--remote-debugging-port=9333",
                  "http://127.0.0.2:8765/opener.html"])
    titles = _wait_title(guest, "Chromium", 120)
    time.sleep(3)
    tree = guest.accessibility_tree()
    for prompt in ("default browser", "Sign in to Chromium", "Welcome to Chromium"):
        assert prompt.lower() not in tree.lower(), prompt
    deadline = time.monotonic() + 120
    while "127.0.0.2:8765/opener.html" not in _targets(guest, 9333) and time.monotonic() < deadline:
        time.sleep(2)
    guest.execute(["python3", "-c", "import urllib.request; urllib.request.urlopen(urllib.request.Request("
                   "'http://127.0.0.1:9333/json/new?http://localhost:8765/opener.html', method='PUT'), timeout=30)"],
                  timeout_s=60)
    deadline = time.monotonic() + 120
    while "localhost:8765/opened.html" not in (listed := _targets(guest, 9333)) and time.monotonic() < deadline:
        time.sleep(2)
    guest.execute(["pkill", "-f", "fresh-profile"])
    guest.execute(["pkill", "-f", "http.server 8765"])
    assert "localhost:8765/opened.html" in listed, f"the local page's pop-up did not open:\n{listed}"
    assert "127.0.0.2:8765/opened.html" not in listed, f"another site's pop-up was not blocked:\n{listed}"
