"""`desktop-env vm ...` end to end: a detached VM driven from separate CLI invocations."""
import re
import subprocess
import sys
import time

import psutil
import pytest
import requests

pytestmark = [pytest.mark.vm, pytest.mark.slow]


def cli(*args, check=True, timeout=180):
    out = subprocess.run([sys.executable, "-m", "desktop_env", "vm", *args], capture_output=True, text=True,
                         timeout=timeout)
    if check:
        assert out.returncode == 0, out.stdout + out.stderr
    return out


def test_detached_vm_by_hand(base_image, tmp_path):
    name = "pytest-cli"
    cli("start", "--image", base_image.name, "--name", name)
    try:
        status = cli("status", name).stdout
        assert "running    True" in status and "detached   True" in status
        assert cli("shell", "--vm", name, "--", "echo hi-from-guest > /tmp/cli.txt && whoami").stdout.strip() == "user"
        cli("snapshot", "save", "s1", "--vm", name)
        from desktop_env.image.states import list_states

        warm = [state.name for state in list_states(base_image)]  # the image's built warm states come first
        assert cli("snapshot", "list", "--vm", name).stdout.split() == ["init_state", *warm, "s1"]
        cli("shell", "--vm", name, "--", "rm /tmp/cli.txt")
        cli("snapshot", "revert", "s1", "--vm", name)
        assert cli("shell", "--vm", name, "--", "cat /tmp/cli.txt").stdout.strip() == "hi-from-guest"
        cli("snapshot", "delete", "s1", "--vm", name)
        cli("snapshot", "revert", "--vm", name)  # init_state
        assert cli("shell", "--vm", name, "--", "test -e /tmp/cli.txt", check=False).returncode != 0
        shot = tmp_path / "shot.png"
        cli("screenshot", str(shot), "--vm", name)
        assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        vnc_out = cli("vnc", name).stdout
        url = re.search(r"http://\S+", vnc_out).group(0)
        deadline = time.monotonic() + 20
        while True:
            try:
                page = requests.get(url.split("?")[0], timeout=5)
                break
            except requests.ConnectionError:
                assert time.monotonic() < deadline, "websockify never answered"
                time.sleep(0.3)
        assert page.ok and "noVNC" in page.text
        # websockify listens on loopback only, like QEMU's forwards (tests/faults/test_guest_faults.py).
        pid = int(re.search(r"websockify pid (\d+)", vnc_out).group(1))
        listening = {(c.laddr.ip, c.laddr.port) for c in psutil.Process(pid).net_connections(kind="inet")
                     if c.status == psutil.CONN_LISTEN}
        assert listening == {("127.0.0.1", int(re.search(r":(\d+)/vnc.html", url).group(1)))}, listening
    finally:
        cli("stop", name, check=False)
    assert "no VMs" in cli("status").stdout or name not in cli("status").stdout
    out = cli("stop", name, check=False)
    assert out.returncode == 1 and "no VM" in out.stderr
