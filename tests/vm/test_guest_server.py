"""Every endpoint of the in-VM server, driven against a booted guest, with auth on."""
import io
import json
import time

import pytest
import requests
from PIL import Image

from desktop_env.controllers.python import PythonController
from desktop_env.errors import GuestServerError

pytestmark = [pytest.mark.vm, pytest.mark.slow]

ENDPOINTS = [
    ("POST", "/execute"), ("POST", "/setup/execute"), ("POST", "/setup/launch"), ("GET", "/screenshot"),
    ("GET", "/accessibility"), ("GET", "/terminal"), ("POST", "/screen_size"), ("POST", "/window_size"),
    ("POST", "/desktop_path"), ("POST", "/wallpaper"), ("GET", "/platform"), ("GET", "/cursor_position"),
    ("POST", "/list_directory"), ("POST", "/file"), ("POST", "/setup/upload"), ("POST", "/setup/download_file"),
    ("POST", "/setup/open_file"), ("POST", "/setup/activate_window"), ("POST", "/setup/close_window"),
    ("POST", "/setup/change_wallpaper"), ("POST", "/start_recording"), ("POST", "/end_recording"),
    ("POST", "/run_python"), ("POST", "/run_bash_script"), ("POST", "/pyautogui"), ("POST", "/setup/set_clock"),
]


def _wait_for(predicate, timeout_s=30.0, what="condition"):
    deadline = time.monotonic() + timeout_s
    last = None
    while time.monotonic() < deadline:
        last = predicate()
        if last:
            return last
        time.sleep(0.3)
    raise AssertionError(f"timed out after {timeout_s} s waiting for {what} (last: {last!r})")


def test_auth_required_everywhere_but_health(vm):
    assert vm.token, "the base image is built with auth on"
    base = vm.server.url
    assert requests.get(base + "/health", timeout=10).ok
    for method, path in ENDPOINTS:
        for headers in ({}, {"Authorization": "Bearer wrong-token"}):
            reply = requests.request(method, base + path, headers=headers, json={}, timeout=10)
            assert reply.status_code == 401, f"{method} {path} with {headers or 'no token'}: {reply.status_code}"
            assert reply.json()["status"] == "error"


def test_platform_screen_cursor_desktop(vm, guest):
    assert guest.platform() == "Linux"
    assert guest.screen_size() == vm.image.screen
    x, y = guest.cursor_position()
    assert 0 <= x < vm.image.screen[0] and 0 <= y < vm.image.screen[1]
    assert guest.desktop_path() == "/home/user/Desktop"


def test_screenshots_guest_and_host_agree_on_size(vm, guest):
    guest_png = Image.open(io.BytesIO(guest.screenshot()))
    host_png = Image.open(io.BytesIO(vm.screenshot()))
    assert guest_png.size == host_png.size == vm.image.screen
    # The desktop has drawn: not a single flat colour.
    assert len(set(host_png.convert("RGB").resize((64, 36)).getdata())) > 10


def test_execute_as_user_and_timeouts(guest):
    reply = guest.execute(["id", "-un"])
    assert reply["returncode"] == 0 and reply["output"].strip() == "user"
    reply = guest.execute("echo $((6*7)) >&2; exit 3", shell=True)
    assert reply["returncode"] == 3 and "42" in reply["error"]
    t0 = time.monotonic()
    reply = guest.execute("sleep 300 & echo started", shell=True, timeout_s=20)
    assert "started" in reply["output"] and time.monotonic() - t0 < 15
    with pytest.raises(GuestServerError) as err:
        guest.execute(["sleep", "30"], timeout_s=2)
    assert err.value.status == 504


def test_launched_programs_run_below_the_server_in_cpu(guest):
    """The unit delegates its cgroup; the server splits it: the commands it waits for run in the leaf
    "server" (cpu.weight 10000), what it launches in "apps" (100)."""
    own = guest.execute(["cat", "/proc/self/cgroup"])["output"].strip()
    assert own == "0::/system.slice/desktop-env-server.service/server", own
    pid = guest.launch(["sleep", "120"])["pid"]
    try:
        # the wrapper shell moves itself, then becomes the program (same pid)
        _wait_for(lambda: guest.execute(["cat", f"/proc/{pid}/comm"])["output"].strip() == "sleep", 30,
                  "the launched program")
        launched = guest.execute(["cat", f"/proc/{pid}/cgroup"])["output"].strip()
        assert launched == "0::/system.slice/desktop-env-server.service/apps", launched
        base = "/sys/fs/cgroup/system.slice/desktop-env-server.service"
        weights = guest.execute(f"cat {base}/server/cpu.weight {base}/apps/cpu.weight", shell=True)["output"].split()
        assert weights == ["10000", "100"], weights
    finally:
        guest.execute(["kill", str(pid)])


def test_pyautogui_types_into_a_real_terminal(guest):
    guest.execute(["rm", "-f", "/tmp/typed.txt"])
    guest.launch(["xfce4-terminal", "--title", "pytest-term"])
    _wait_for(lambda: "pytest-term" in guest.execute(["wmctrl", "-l"])["output"], 60, "the terminal window")
    guest.activate_window("pytest-term")
    time.sleep(1.0)
    reply = guest.run_pyautogui("pyautogui.write('echo typed-ok > /tmp/typed.txt', interval=0.01); "
                                "pyautogui.press('enter')")
    assert reply["returncode"] == 0, reply
    _wait_for(lambda: guest.execute(["cat", "/tmp/typed.txt"])["output"].strip() == "typed-ok", 30, "typed file")
    text = _wait_for(lambda: guest.terminal_output(), 30, "terminal text")
    assert "typed-ok" in text
    tree = guest.accessibility_tree()
    assert "terminal" in tree.lower()
    guest.close_window("pytest-term")


def test_accessibility_tree_from_chromium(guest):
    page = "<html><body><button>Unique-Button-4711</button></body></html>"
    guest.upload_file(page.encode(), "/tmp/a11y.html")
    guest.launch(["chromium", "--user-data-dir=/tmp/chromium-a11y", "--force-renderer-accessibility",
                  "file:///tmp/a11y.html"])
    _wait_for(lambda: "Unique-Button-4711" in guest.accessibility_tree(), 120, "Chromium's button in the tree")
    guest.execute(["pkill", "-f", "chromium-a11y"])


def test_files_round_trip_and_listing(guest, tmp_path):
    payload = bytes(range(256)) * 4096  # 1 MiB
    guest.upload_file(payload, "/home/user/Documents/blob.bin")
    assert guest.get_file("/home/user/Documents/blob.bin") == payload
    tree = guest.list_directory("/home/user/Documents")
    assert "blob.bin" in json.dumps(tree)
    with pytest.raises(GuestServerError) as err:
        guest.get_file("/home/user/nope.txt")
    assert err.value.status == 404
    with pytest.raises(GuestServerError) as err:
        guest.get_file("/etc/shadow")
    assert err.value.status in (403, 404)


def test_python_bash_and_clock(guest):
    assert "49" in guest.run_python("print(7*7)")["output"]
    assert "hi" in guest.run_bash_script("echo hi")["output"]
    reply = guest.set_clock(1_900_000_000)
    assert reply["method"] == "settime", reply  # the server's own system call, not sudo
    year = guest.execute(["date", "-u", "+%Y"])["output"].strip()
    assert year == "2030"
    guest.set_clock()
    assert abs(float(guest.execute(["date", "+%s"])["output"]) - time.time()) < 30
    # the capability that takes stays with the server: a command it runs for the agent has none
    caps = guest.execute(["grep", "-E", "^Cap(Eff|Amb):", "/proc/self/status"])["output"].split()
    assert caps == ["CapEff:", "0000000000000000", "CapAmb:", "0000000000000000"], caps
    assert guest.execute(["date", "-u", "-s", "@1900000000"])["returncode"] != 0


def test_recording(guest, tmp_path):
    rid = guest.start_recording()
    time.sleep(3)
    out = guest.end_recording(tmp_path / "rec.mp4", recording_id=rid)
    data = out.read_bytes()
    assert len(data) > 1000 and data[4:8] == b"ftyp"


def test_error_shapes(vm, guest):
    headers = {"Authorization": f"Bearer {vm.token}"}
    reply = requests.post(vm.server.url + "/execute", headers=headers, json={}, timeout=10)
    assert reply.status_code == 400 and reply.json()["status"] == "error" and reply.json()["message"]


def test_no_auth_server_setting_serves_unchanged_clients(base_image):
    """With the compatibility switch (auth off in the server's config) a client sending no token works."""
    from desktop_env.providers.qemu.provider import QemuProvider

    with QemuProvider(image=base_image) as vm:
        guest = PythonController(vm.server.host, vm.server.port, token=vm.token)
        script = ("python3 - <<'EOF'\nimport json\np='/etc/desktop-env/server.json'\nc=json.load(open(p))\n"
                  "c['auth']=False\njson.dump(c,open(p,'w'))\nEOF\n"
                  "(sleep 1; echo password | sudo -S systemctl restart desktop-env-server) >/dev/null 2>&1 &")
        guest.execute(script, shell=True)
        base = vm.server.url

        def answers_without_token():
            try:
                return requests.post(base + "/execute", json={"command": ["echo", "old-client"]}, timeout=5).ok
            except requests.RequestException:
                return False

        deadline = time.monotonic() + 60
        while not answers_without_token():
            assert time.monotonic() < deadline, "the server never came back with auth off"
            time.sleep(0.5)
        reply = requests.post(base + "/execute", json={"command": ["echo", "old-client"], "shell": False}, timeout=10)
        assert reply.json()["output"].strip() == "old-client"
        assert requests.get(base + "/screenshot", timeout=30).content[:8] == b"\x89PNG\r\n\x1a\n"
        # init_state brings the image's setting (auth on) back.
        vm.revert_to_snapshot("init_state")
        assert requests.post(base + "/execute", json={"command": ["true"]}, timeout=10).status_code == 401
