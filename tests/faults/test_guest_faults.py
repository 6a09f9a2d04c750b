"""Faults inside a running guest: a hung action or command, the in-VM server stopped, and who can reach it."""
import threading
import time
from pathlib import Path

import pytest
import requests

from desktop_env.errors import GuestServerError

pytestmark = [pytest.mark.vm, pytest.mark.slow]

#: The module's environment (see conftest.env): pyautogui actions are killed after 5 s.
ENV_KWARGS = {"action_space": "pyautogui", "action_timeout_s": 5}


def _bounded(call, limit_s: float):
    """Run ``call`` in a thread; fail the test if it does not return within ``limit_s`` (a hang)."""
    box = {}

    def target():
        try:
            box["value"] = call()
        except BaseException as exc:  # handed back to the test below
            box["error"] = exc

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(limit_s)
    assert not thread.is_alive(), f"{call} did not return within {limit_s} s"
    if "error" in box:
        raise box["error"]
    return box["value"]


def _works(env) -> None:
    """The env still acts and observes."""
    obs, _, terminated, _, info = env.step("pyautogui.moveTo(200, 200)")
    assert "error" not in info and not terminated, info
    assert env.controller.execute(["echo", "still-usable"])["output"].strip() == "still-usable"
    assert obs["screenshot"].shape[:2] == (env.screen[1], env.screen[0])


def test_hung_action_is_killed_and_env_stays_usable(env):
    obs, _, terminated, _, info = _bounded(lambda: env.step("time.sleep(1000)"), 120)
    assert not terminated
    assert "longer than 5 s" in info["error"] and info["error"] == obs["error"]
    _works(env)


def test_hung_command_times_out_and_env_stays_usable(env):
    with pytest.raises(GuestServerError) as err:
        _bounded(lambda: env.controller.execute("sleep 1000", shell=True, timeout_s=3), 120)
    assert err.value.status == 504 and "killed" in str(err.value)
    assert env.controller.execute("pgrep -x sleep || echo none", shell=True)["output"].strip() == "none"
    _works(env)


def test_server_stopped_in_guest_is_detected_and_reset_recovers(env):
    env.controller.execute("(sleep 1; echo password | sudo -S systemctl stop desktop-env-server) >/dev/null 2>&1 &",
                           shell=True)
    deadline = time.monotonic() + 60
    while env.server_healthy(timeout_s=5):
        assert time.monotonic() < deadline, "the in-VM server kept answering after systemctl stop"
        time.sleep(0.5)
    # A step reports the dead server (bounded: a health probe, not a hang) instead of raising.
    obs, _, terminated, _, info = _bounded(lambda: env.step("pyautogui.moveTo(300, 300)"), 120)
    assert not terminated and info["server_healthy"] is False
    assert "health check does not answer" in info["error"] and info["error"] == obs["error"]
    # reset() reverts to init_state, where the server runs again.
    _bounded(env.reset, 180)
    assert env.server_healthy()
    _works(env)


def _listening(proc_net_text: str) -> set[tuple[str, int, str]]:
    """(address, port, socket inode) of the LISTEN sockets in the text of /proc/net/tcp and/or tcp6."""
    import ipaddress

    out = set()
    for line in proc_net_text.splitlines():
        fields = line.split()
        if len(fields) < 10 or fields[3] != "0A" or ":" not in fields[1]:  # 0A = TCP_LISTEN
            continue
        addr_hex, port_hex = fields[1].split(":")
        raw = bytes.fromhex(addr_hex)
        # The kernel prints each 32-bit word in host (little-endian) order.
        raw = b"".join(raw[i:i + 4][::-1] for i in range(0, len(raw), 4))
        address = ipaddress.ip_address(raw)
        if address.version == 6 and address.ipv4_mapped:
            address = address.ipv4_mapped
        out.add((str(address), int(port_hex, 16), fields[9]))
    return out


def _socket_inodes(pid: int) -> set[str]:
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = str(fd.readlink())
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[len("socket:["):-1])
    return inodes


def _host_listening(pid: int) -> set[tuple[str, int]]:
    """(address, port) of the TCP sockets process ``pid`` listens on, from the host's socket table."""
    mine = _socket_inodes(pid)
    text = Path("/proc/net/tcp").read_text() + Path("/proc/net/tcp6").read_text()
    return {(addr, port) for addr, port, inode in _listening(text) if inode in mine}


def test_host_ports_bind_loopback_only(env, tmp_path):
    """Every TCP port the VM's QEMU listens on (server and CDP forwards, VNC) is on 127.0.0.1, and so
    is the human agent's noVNC (websockify) in front of the VNC port."""
    listening = _host_listening(env.provider.machine.pid)
    ports = {port for _, port in listening}
    assert {env.provider.server.port, env.provider.cdp.port, env.provider.vnc.port} <= ports, listening
    assert {addr for addr, _ in listening} == {"127.0.0.1"}, listening

    import shutil

    from desktop_env.agents.human import NOVNC_WEB, NoVNC

    if not shutil.which("websockify") or not NOVNC_WEB.exists():
        pytest.skip("websockify/novnc not installed (apt-get install websockify novnc)")
    vnc = env.provider.vnc
    novnc = NoVNC(vnc.host, vnc.port, tmp_path / "websockify.log")
    try:
        deadline = time.monotonic() + 30
        while not (listening := _host_listening(novnc.proc.pid)):
            assert novnc.proc.poll() is None, (tmp_path / "websockify.log").read_text()
            assert time.monotonic() < deadline, "websockify never listened"
            time.sleep(0.2)
        assert listening == {("127.0.0.1", novnc.port)}, listening
        # And it is the noVNC server, answering on that address.
        assert "noVNC" in requests.get(novnc.url.split("?")[0], timeout=10).text
    finally:
        novnc.stop()


def test_guest_listens_only_on_forwarded_ports(env):
    """Inside the guest, nothing but the forwarded ports (server, CDP) listens beyond loopback."""
    meta = env.provider.image.meta
    text = env.controller.execute("cat /proc/net/tcp /proc/net/tcp6", shell=True)["output"]
    listening = _listening(text)
    exposed = {(addr, port) for addr, port, _ in listening if not (addr.startswith("127.") or addr == "::1")}
    assert meta["server_port"] in {port for _, port in exposed}, listening
    assert {port for _, port in exposed} <= {meta["server_port"], meta["cdp_port"]}, exposed


def test_every_route_refuses_missing_wrong_and_malformed_tokens(env):
    """All routes the server defines (read from its blueprints, so a new route is covered too) answer 401."""
    from flask import Flask

    from vm_server import routes_exec, routes_files, routes_screen

    app = Flask("route-lister")
    for module in (routes_exec, routes_files, routes_screen):
        app.register_blueprint(module.bp)
    routes = sorted({(method, rule.rule) for rule in app.url_map.iter_rules() if rule.endpoint != "static"
                     for method in rule.methods - {"HEAD", "OPTIONS"}})
    assert len(routes) >= 25, routes
    routes.append(("GET", "/no-such-route"))  # unknown paths do not reveal themselves either
    token = env.provider.token
    bad_headers = [{}, {"Authorization": "Bearer wrong-token"}, {"Authorization": f"Bearer {token[:-1]}"},
                   {"Authorization": f"Bearer {token}x"}, {"Authorization": f"Basic {token}"},
                   {"Authorization": token}, {"X-Token": token}]
    base = env.provider.server.url
    for method, path in routes:
        path = path.replace("<", "").replace(">", "")
        for headers in bad_headers:
            reply = requests.request(method, base + path, headers=headers, json={}, timeout=30)
            assert reply.status_code == 401, (method, path, headers, reply.status_code)
    health = requests.get(base + "/health", timeout=30)
    assert health.ok and health.json()["auth"] is True
