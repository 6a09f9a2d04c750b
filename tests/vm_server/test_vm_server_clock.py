"""/setup/set_clock in the server's own process (clock_settime), and the capability it needs kept to the server.

The system call itself is replaced here (the tests run as root in CI: a real one would move the host's
clock); the VM tests check the real one in the image.
"""
import os
import pwd
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from vm_server import routes_exec
from vm_server.app import create_app
from vm_server.config import ServerConfig

ROOT = Path(__file__).resolve().parents[2]
CAP_SYS_TIME = 25


def _client(tmp_path, settime: bool):
    log = tmp_path / "clock-args.txt"
    script = tmp_path / "set-clock.sh"
    script.write_text(f"#!/bin/sh\necho \"$@\" >> '{log}'\n")
    script.chmod(0o755)
    app = create_app(ServerConfig(auth=False, clock_command=[str(script)], clock_settime=settime))
    return app.test_client(), log


def test_settime_sets_the_clock_in_the_server_without_the_command(tmp_path, monkeypatch):
    calls = []
    monkeypatch.setattr(routes_exec.time, "clock_settime", lambda clock, epoch: calls.append((clock, epoch)))
    client, log = _client(tmp_path, settime=True)
    reply = client.post("/setup/set_clock", json={"epoch": 1234567890.25})
    assert reply.status_code == 200 and reply.get_json()["method"] == "settime"
    assert calls == [(routes_exec.time.CLOCK_REALTIME, 1234567890.25)]
    assert not log.exists()


def test_a_refused_settime_falls_back_to_the_command(tmp_path, monkeypatch):
    def refused(clock, epoch):
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr(routes_exec.time, "clock_settime", refused)
    client, log = _client(tmp_path, settime=True)
    reply = client.post("/setup/set_clock", json={"epoch": 666.5})
    assert reply.status_code == 200 and reply.get_json()["method"] == "command"
    assert log.read_text().split() == ["666.500000"]


def test_without_settime_the_command_runs(tmp_path, monkeypatch):
    monkeypatch.setattr(routes_exec.time, "clock_settime", lambda *a: pytest.fail("settime is off"))
    client, log = _client(tmp_path, settime=False)
    assert client.post("/setup/set_clock", json={"epoch": 7}).get_json()["method"] == "command"
    assert log.read_text().split() == ["7.000000"]


PROBE = r"""
import subprocess, sys
sys.path.insert(0, sys.argv[1])
from vm_server import procs

def caps(status):
    return {k: int(v, 16) for k, v in (l.split(":\t") for l in status.splitlines() if l.startswith("Cap"))}

before = caps(open("/proc/self/status").read())
cleared = procs.clear_ambient_capabilities()
after = caps(open("/proc/self/status").read())
child = caps(subprocess.run(["cat", "/proc/self/status"], capture_output=True, text=True).stdout)
print(before["CapAmb"], after["CapAmb"], after["CapEff"], child["CapEff"], child["CapAmb"], cleared)
"""


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("setpriv"), reason="needs root and setpriv")
def test_the_server_keeps_its_ambient_capability_and_its_children_get_none():
    """As the image's unit starts it: a non-root user with CAP_SYS_TIME ambient."""
    try:
        user = pwd.getpwnam("nobody")
    except KeyError:
        pytest.skip("no user 'nobody'")
    out = subprocess.run(["setpriv", f"--reuid={user.pw_uid}", f"--regid={user.pw_gid}", "--clear-groups",
                          "--inh-caps=+sys_time", "--ambient-caps=+sys_time", sys.executable, "-c", PROBE, str(ROOT)],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    amb_before, amb_after, eff_after, child_eff, child_amb, cleared = out.stdout.split()
    bit = 1 << CAP_SYS_TIME
    assert int(amb_before) & bit, "the probe did not start with the ambient capability"
    assert cleared == "True" and int(amb_after) == 0
    assert int(eff_after) & bit, "the server lost CAP_SYS_TIME itself"
    assert int(child_eff) == 0 and int(child_amb) == 0, "a program the server starts inherited a capability"
