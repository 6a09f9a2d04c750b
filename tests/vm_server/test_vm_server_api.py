"""The in-VM server's HTTP API against a real server process: auth, errors, commands, code, files."""
from __future__ import annotations

import hashlib
import json
import http.server
import os
import subprocess
import threading
import time
from functools import partial

import pytest
import requests

from desktop_env.controllers import PythonController
from desktop_env.errors import GuestServerError
from desktop_env.paths import repo_root

from vmsrv_harness import ServerProcess, XSession, wait_until

pytestmark = pytest.mark.xvfb

#: Every endpoint but /health, with the method old clients use.
PROTECTED = [
    ("POST", "/execute"), ("POST", "/setup/execute"), ("POST", "/setup/launch"), ("GET", "/screenshot"),
    ("GET", "/accessibility"), ("GET", "/terminal"), ("POST", "/screen_size"), ("POST", "/window_size"),
    ("POST", "/desktop_path"), ("POST", "/wallpaper"), ("GET", "/platform"), ("GET", "/cursor_position"),
    ("POST", "/list_directory"), ("POST", "/file"), ("POST", "/setup/upload"), ("POST", "/setup/download_file"),
    ("POST", "/setup/open_file"), ("POST", "/setup/activate_window"), ("POST", "/setup/close_window"),
    ("POST", "/setup/change_wallpaper"), ("POST", "/start_recording"), ("POST", "/end_recording"),
    ("POST", "/run_python"), ("POST", "/run_bash_script"), ("POST", "/pyautogui"), ("POST", "/setup/set_clock"),
]


def _assert_error(response: requests.Response, status: int) -> dict:
    assert response.status_code == status, response.text
    body = response.json()
    assert body["status"] == "error" and isinstance(body["message"], str) and body["message"], body
    return body


# -- auth ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("method,path", PROTECTED, ids=[p for _, p in PROTECTED])
def test_endpoint_refuses_missing_and_wrong_token(server, method, path):
    url = server.url + path
    _assert_error(requests.request(method, url, json={}, timeout=10), 401)
    _assert_error(requests.request(method, url, json={}, timeout=10,
                                   headers={"Authorization": "Bearer not-the-token"}), 401)
    _assert_error(requests.request(method, url, json={}, timeout=10,
                                   headers={"Authorization": server.token}), 401)  # scheme missing


def test_health_needs_no_token(server):
    reply = requests.get(server.url + "/health", timeout=10).json()
    assert reply["status"] == "ok" and reply["display"] is True and reply["version"]


def test_right_token_is_accepted(server):
    reply = requests.post(server.url + "/execute", json={"command": ["true"]}, timeout=30,
                          headers={"Authorization": f"Bearer {server.token}"})
    assert reply.status_code == 200 and reply.json()["returncode"] == 0


def test_no_auth_server_accepts_requests_without_token(server_python, xsession, tmp_path):
    srv = ServerProcess(server_python, xsession, tmp_path, auth=True, cli=["--no-auth"],
                        extra_config={"token": "ignored"})
    try:
        assert requests.get(srv.url + "/health", timeout=10).json()["auth"] is False
        reply = requests.post(srv.url + "/execute", json={"command": "echo old-client", "shell": True}, timeout=30)
        assert reply.status_code == 200 and reply.json()["output"] == "old-client\n"
        assert requests.get(srv.url + "/platform", timeout=10).text == "Linux"
    finally:
        srv.stop()


def test_server_without_display_answers_503_and_keeps_serving(server_python, xsession, tmp_path):
    srv = ServerProcess(server_python, xsession, tmp_path, display=":250", extra_config={"display_wait_s": 0.5})
    try:
        assert srv.client.health()["display"] is False
        with pytest.raises(GuestServerError) as err:
            srv.client.screenshot()
        assert err.value.status == 503 and "display" in err.value.body["message"]
        with pytest.raises(GuestServerError) as err:
            srv.client.run_pyautogui("pyautogui.position()")
        assert err.value.status == 503
        assert srv.client.execute(["echo", "still-here"])["output"] == "still-here\n"
    finally:
        srv.stop()


# -- error shapes -------------------------------------------------------------------------------

@pytest.mark.parametrize("method,path,kwargs,status", [
    ("POST", "/execute", {"json": {}}, 400),
    ("POST", "/execute", {"json": {"command": 42}}, 400),
    ("POST", "/execute", {"json": {"command": ["true"], "timeout": -1}}, 400),
    ("POST", "/execute", {"data": "{not json", "headers": {"Content-Type": "application/json"}}, 400),
    ("POST", "/execute", {"json": ["a", "list"]}, 400),
    ("POST", "/pyautogui", {"json": {}}, 400),
    ("POST", "/run_python", {"json": {"code": ""}}, 400),
    ("POST", "/run_bash_script", {"json": {"script": "true", "working_dir": "/no/such/dir"}}, 400),
    ("POST", "/file", {"data": {}}, 400),
    ("POST", "/file", {"data": {"file_path": "/no/such/file"}}, 404),
    ("POST", "/file", {"data": {"file_path": "/tmp"}}, 400),
    ("POST", "/list_directory", {"json": {}}, 400),
    ("POST", "/list_directory", {"json": {"path": "/no/such/dir"}}, 404),
    ("POST", "/setup/upload", {"data": {"file_path": "/tmp/x"}}, 400),
    ("POST", "/setup/upload", {"files": {"file_data": ("x", b"1")}}, 400),
    ("POST", "/setup/download_file", {"json": {"url": "http://127.0.0.1:9/x"}}, 400),
    ("POST", "/setup/download_file", {"json": {"url": "gopher://x", "path": "/tmp/x"}}, 400),
    ("POST", "/setup/open_file", {"json": {"path": "/no/such/file"}}, 404),
    ("POST", "/setup/change_wallpaper", {"json": {"path": "/no/such/image.png"}}, 404),
    ("POST", "/setup/activate_window", {"json": {}}, 400),
    ("POST", "/setup/set_clock", {"json": {"epoch": "soon"}}, 400),
    ("POST", "/setup/set_clock", {"json": {}}, 400),
    ("POST", "/window_size", {"data": {}}, 400),
    ("POST", "/end_recording", {"json": {"recording_id": "no-such-id"}}, 404),
    ("GET", "/accessibility?max_depth=zero", {}, 400),
    ("GET", "/no/such/endpoint", {}, 404),
    ("GET", "/execute", {}, 405),
])
def test_bad_requests_get_json_errors(server, method, path, kwargs, status):
    headers = {"Authorization": f"Bearer {server.token}", **kwargs.pop("headers", {})}
    _assert_error(requests.request(method, server.url + path, headers=headers, timeout=30, **kwargs), status)


def test_client_raises_guest_server_error_with_status_and_body(client):
    with pytest.raises(GuestServerError) as err:
        client.get_file("/no/such/file")
    assert err.value.status == 404 and err.value.body["status"] == "error"


def test_client_reports_unreachable_server():
    with pytest.raises(GuestServerError) as err:
        PythonController("127.0.0.1", 9, timeout_s=2).health()
    assert err.value.status is None


def test_wait_ready_says_what_it_waited_for():
    started = time.monotonic()
    with pytest.raises(GuestServerError, match="waited for /health"):
        PythonController("127.0.0.1", 9).wait_ready(timeout_s=1)
    assert time.monotonic() - started < 10


# -- execute ------------------------------------------------------------------------------------

def test_execute_list_and_shell(client, tmp_path):
    reply = client.execute(["sh", "-c", "echo out; echo err >&2; exit 3"])
    assert reply == {"status": "success", "output": "out\n", "error": "err\n", "returncode": 3}
    assert client.execute("echo $((6*7)) | tr 4 X", shell=True)["output"] == "X2\n"
    assert client.execute("echo '$HOME' \"a b\"")["output"] == "$HOME a b\n"  # string, no shell: split only
    home = client.execute(["sh", "-c", "echo $HOME"])["output"].strip()
    assert client.execute(["echo", "~/x"])["output"].strip() == f"{home}/x"


def test_execute_unknown_program_is_400(client):
    with pytest.raises(GuestServerError) as err:
        client.execute(["/no/such/program"])
    assert err.value.status == 400 and err.value.body["returncode"] == -1


def test_execute_returns_promptly_when_background_process_holds_output(client):
    started = time.monotonic()
    reply = client.execute("echo before; sleep 100 & echo $! >&2; echo after", shell=True, timeout_s=20)
    assert time.monotonic() - started < 5
    assert reply["output"] == "before\nafter\n" and reply["returncode"] == 0
    client.execute(["kill", reply["error"].strip()])
    # the same with an inherited stderr and the list form
    started = time.monotonic()
    reply = client.execute(["bash", "-c", "sleep 100 >&2 & echo $!"], timeout_s=20)
    assert time.monotonic() - started < 5 and reply["returncode"] == 0
    background = int(reply["output"])
    assert client.execute(["kill", "-0", str(background)])["returncode"] == 0, "background process should live on"
    client.execute(["kill", str(background)])


def test_execute_timeout_kills_the_whole_group(client):
    marker = f"{time.time() % 1000:.3f}7"
    started = time.monotonic()
    with pytest.raises(GuestServerError) as err:
        client.execute(f"echo started; sleep {marker}1 & sleep {marker}2", shell=True, timeout_s=1)
    assert time.monotonic() - started < 10
    assert err.value.status == 504 and "1 s" in err.value.body["message"]
    assert err.value.body["output"] == "started\n" and err.value.body["returncode"] == -9
    ps = subprocess.run(["pgrep", "-f", f"sleep {marker}"], capture_output=True, text=True)
    assert ps.stdout == "", "the background sleep survived the timeout"


def test_launch_does_not_wait(client, tmp_path):
    flag = tmp_path / "launched"
    started = time.monotonic()
    reply = client.launch(["sh", "-c", f"sleep 1; touch {flag}"])
    assert time.monotonic() - started < 1 and reply["pid"] > 0
    wait_until(flag.exists, 10, "the launched program to finish")


def test_run_bash_script(client, tmp_path):
    reply = client.run_bash_script("echo one; echo two >&2; pwd; exit 4", working_dir=str(tmp_path))
    assert reply["status"] == "error" and reply["returncode"] == 4
    assert reply["output"] == f"one\ntwo\n{tmp_path}\n"
    with pytest.raises(GuestServerError) as err:
        client.run_bash_script("sleep 30", timeout_s=1)
    assert err.value.status == 504


# -- the persistent executor --------------------------------------------------------------------

def test_executor_is_persistent_and_pyautogui_ready(client, server):
    first = client.run_pyautogui("import os; print(os.getpid()); print(pyautogui.FAILSAFE)")
    second = client.run_pyautogui("import os; print(os.getpid()); print(pyautogui.size())")
    assert first["returncode"] == 0, first
    pid = first["executor_pid"]
    assert first["output"].split() == [str(pid), "False"]
    assert second["executor_pid"] == pid and second["output"].startswith(f"{pid}\nSize(width=1280, height=800)")
    assert pid != server.proc.pid


def test_executor_is_started_before_the_first_action(server_python, xsession, tmp_path):
    srv = ServerProcess(server_python, xsession, tmp_path)
    try:
        pid = wait_until(lambda: srv.client.health()["executor_pid"], 30, "the executor to be pre-started")
        assert srv.client.run_pyautogui("pass")["executor_pid"] == pid
    finally:
        srv.stop()


def test_old_python_dash_c_pattern_goes_to_the_executor(client):
    pid = client.run_pyautogui("pass")["executor_pid"]
    old = "import pyautogui; import time; pyautogui.FAILSAFE = False; import os; print(os.getpid())"
    for command, shell in ((["python", "-c", old], False), (["python3", "-c", old], False),
                           (f"python3 -c '{old}'", True)):
        reply = client.execute(command, shell=shell)
        assert reply["output"].strip() == str(pid) and reply["status"] == "success", (command, reply)
    # code that does not import pyautogui still runs as a separate process
    other = client.execute(["python3", "-c", "import os; print(os.getpid())"])
    assert other["output"].strip() != str(pid)


def test_executor_reports_errors_and_exit_codes(client):
    reply = client.run_pyautogui("print('partial'); raise ValueError('boom')")
    assert reply["returncode"] == 1 and reply["output"] == "partial\n"
    assert "ValueError: boom" in reply["error"] and "executor_worker" not in reply["error"]
    assert client.run_pyautogui("import sys; sys.exit(3)")["returncode"] == 3
    assert client.run_pyautogui("import sys; print('x', file=sys.stderr)")["error"] == "x\n"
    assert client.run_pyautogui("import subprocess; subprocess.run(['echo', 'from-child'])")["output"] == "from-child\n"


def test_run_python_uses_fresh_globals(client):
    first = client.run_python("leak = 1\nprint('set')")
    second = client.run_python("print('leak' in globals(), 'pyautogui' in globals())")
    assert first["status"] == "success" and first["output"] == "set\n"
    assert second["output"] == "False False\n" and second["executor_pid"] == first["executor_pid"]
    failed = client.run_python("1/0")
    assert failed["status"] == "error" and failed["return_code"] == 1 and "ZeroDivisionError" in failed["message"]


def test_executor_timeout_restarts_it(client):
    before = client.run_pyautogui("pass")["executor_pid"]
    started = time.monotonic()
    with pytest.raises(GuestServerError) as err:
        client.run_pyautogui("print('going to sleep', flush=True); time.sleep(60)", timeout_s=1)
    assert time.monotonic() - started < 10
    assert err.value.status == 504 and "restarted" in err.value.body["message"]
    assert err.value.body["output"] == "going to sleep\n"
    after = client.run_pyautogui("import os; print(os.getpid())")
    assert after["returncode"] == 0 and after["executor_pid"] != before
    assert after["output"].strip() == str(after["executor_pid"])


def test_executor_survives_code_that_kills_it(client):
    with pytest.raises(GuestServerError) as err:
        client.run_pyautogui("import os; os._exit(5)")
    assert err.value.status == 500 and err.value.body["returncode"] == 5
    assert client.run_pyautogui("print(1 + 1)")["output"] == "2\n"


def test_executor_is_replaced_when_x_restarts(server_python, tmp_path):
    (tmp_path / "x").mkdir()
    session = XSession(tmp_path / "x").start()
    try:
        srv = ServerProcess(server_python, session, tmp_path)
        try:
            before = srv.client.run_pyautogui("pyautogui.moveTo(10, 10)")
            assert before["returncode"] == 0
            session.restart_x()
            srv.client.wait_ready(30)
            lost = srv.client.run_pyautogui("pyautogui.moveTo(20, 20)")
            assert lost["returncode"] == 1 and "Connection" in lost["error"], lost
            after = srv.client.run_pyautogui("pyautogui.moveTo(30, 30)")
            assert after["returncode"] == 0 and after["executor_pid"] != before["executor_pid"], after
            assert srv.client.cursor_position() == (30, 30)
        finally:
            srv.stop()
    finally:
        session.stop()


# -- files ----------------------------------------------------------------------------------------

def test_upload_download_round_trip(client, tmp_path):
    guest = tmp_path / "guest" / "sub" / "small.bin"
    reply = client.upload_file(b"\x00hello\xff", str(guest))
    assert reply["size"] == 7 and guest.read_bytes() == b"\x00hello\xff"
    assert client.get_file(str(guest)) == b"\x00hello\xff"


def test_large_file_round_trip(client, tmp_path):
    local = tmp_path / "big.bin"
    with open(local, "wb") as fh:
        for _ in range(50):
            fh.write(os.urandom(1024 * 1024))
    digest = hashlib.sha256(local.read_bytes()).hexdigest()
    guest = tmp_path / "guest-big.bin"
    assert client.upload_file(local, str(guest))["size"] == 50 * 1024 * 1024
    back = client.download_file_to(str(guest), tmp_path / "back" / "big.bin")
    assert hashlib.sha256(back.read_bytes()).hexdigest() == digest
    assert not [p for p in tmp_path.iterdir() if ".part-" in p.name]


def test_list_directory(client, tmp_path):
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "inner.txt").write_text("x")
    (tmp_path / "a.txt").write_text("y")
    tree = client.list_directory(str(tmp_path))
    assert tree == {"type": "directory", "name": tmp_path.name, "children": [
        {"type": "file", "name": "a.txt"},
        {"type": "directory", "name": "b", "children": [{"type": "file", "name": "inner.txt"}]}]}
    with pytest.raises(GuestServerError) as err:
        client.list_directory(str(tmp_path / "a.txt"))
    assert err.value.status == 400


def test_download_url_into_guest(client, tmp_path):
    served = tmp_path / "served"
    served.mkdir()
    (served / "data.csv").write_text("a,b\n1,2\n")
    handler = partial(http.server.SimpleHTTPRequestHandler, directory=str(served))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{httpd.server_address[1]}"
        dest = tmp_path / "fetched" / "data.csv"
        assert client.download_url(f"{url}/data.csv", str(dest))["size"] == 8
        assert dest.read_text() == "a,b\n1,2\n"
        with pytest.raises(GuestServerError) as err:
            client.download_url(f"{url}/missing.csv", str(dest))
        assert err.value.status == 404
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_desktop_path_and_open_file(client, xsession, tmp_path):
    desktop = xsession.home / "Desktop"
    desktop.mkdir(exist_ok=True)
    assert client.desktop_path() == str(desktop)
    # The session's default for plain text is a handler that records what it was given: a real
    # application (LibreOffice, installed for the metric tests) would outlive the test and take the
    # focus from later ones when its window finally maps under load.
    opened = tmp_path / "opened-with"
    handler = xsession.home / ".local" / "share" / "applications" / "record-open.desktop"
    mimeapps = xsession.home / ".config" / "mimeapps.list"
    handler.parent.mkdir(parents=True, exist_ok=True)
    mimeapps.parent.mkdir(parents=True, exist_ok=True)
    recorder = tmp_path / "record-open"  # xdg-open splits Exec on spaces: no quoting there
    recorder.write_text(f'#!/bin/sh\necho "$1" > {opened}\n')
    recorder.chmod(0o755)
    handler.write_text("[Desktop Entry]\nType=Application\nName=Record open\nMimeType=text/plain;\n"
                       f"Exec={recorder} %f\n")
    mimeapps.write_text("[Default Applications]\ntext/plain=record-open.desktop\n")
    try:
        doc = tmp_path / "doc.txt"
        doc.write_text("hi")
        assert client.open_file(str(doc))["status"] == "success"
        wait_until(lambda: opened.exists() and opened.read_text() == f"{doc}\n", 30, "the default application")
    finally:
        mimeapps.unlink()
        handler.unlink()


# -- clock, health, misc ------------------------------------------------------------------------

def test_set_clock_runs_the_configured_command(client, server):
    client.set_clock(1234567890.25)
    assert server.clock_log.read_text().splitlines()[-1] == "1234567890.250000"
    before = time.time()
    client.set_clock()
    assert abs(float(server.clock_log.read_text().splitlines()[-1]) - before) < 5
    with pytest.raises(GuestServerError) as err:
        client.set_clock(666.0)
    assert err.value.status == 500 and "refusing that time" in err.value.body["message"]


def test_platform_screen_size_cursor(client):
    assert client.platform() == "Linux"
    assert client.screen_size() == (1280, 800)
    client.run_pyautogui("pyautogui.moveTo(123, 321)")
    assert client.cursor_position() == (123, 321)


@pytest.mark.parametrize("config,expected", [
    ({"port": 5999, "tokn": "typo"}, "unknown key(s) ['tokn']"),
    ({"port": 5999}, "auth is on but no token"),
    ({"port": 5999, "token": "t", "command_timeout_s": 0}, "command_timeout_s must be a positive number"),
])
def test_bad_config_is_refused_at_start(server_python, tmp_path, config, expected):
    path = tmp_path / "server.json"
    path.write_text(json.dumps(config))
    proc = subprocess.run([server_python, "-m", "vm_server", "--config", str(path)], cwd=str(repo_root()),
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and expected in proc.stderr, proc.stderr
