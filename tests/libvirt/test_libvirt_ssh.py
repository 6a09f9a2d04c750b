"""The libvirt provider on a qemu+ssh host (a private sshd here): the SSH tunnel; forwards it cannot reach."""
import socket

import psutil
import pytest

from desktop_env.envs import DesktopEnv
from desktop_env.providers.libvirt import LibvirtProvider
from desktop_env.providers.libvirt.hosts import HostError

pytestmark = [pytest.mark.libvirt, pytest.mark.vm, pytest.mark.slow]


def _listener(port):
    """Pid of the process listening on 127.0.0.1:port (None when nothing listens)."""
    for conn in psutil.net_connections(kind="tcp4"):
        if conn.status == psutil.CONN_LISTEN and conn.laddr.port == port and conn.laddr.ip in ("127.0.0.1", "0.0.0.0"):
            return conn.pid
    return None


def _domain_leftovers(libvirt_mod, domain):
    conn = libvirt_mod.open("qemu:///system")
    try:
        names = [d.name() for d in conn.listAllDomains(0)]
        vols = conn.storagePoolLookupByName("desktop-env").listVolumes()
        return [n for n in names if n == domain] + [v for v in vols if v.startswith(domain)]
    finally:
        conn.close()


def test_ssh_host_reached_through_tunnel(base_image, ssh_host, libvirt_mod):
    """libvirt over ssh, and the in-VM server, CDP and VNC through the provider's `ssh -N -L` tunnel;
    the tunnel outlives a revert (QEMU restarts) and is gone after close."""
    uri = ssh_host.uri()
    env = DesktopEnv(provider_name="libvirt", uri=uri, path_to_vm=base_image.name, action_space="pyautogui",
                     require_a11y_tree=False)
    provider = env.provider
    tunnel_pid = None
    try:
        obs, info = env.reset()
        assert provider.uri == uri
        assert obs["screenshot"].shape == (base_image.screen[1], base_image.screen[0], 3)
        tunnel = provider._tunnel
        assert tunnel is not None and tunnel.process.poll() is None
        assert tunnel.command[0] == str(ssh_host.dir / "ssh")  # the URI's command=, like libvirt's transport
        tunnel_pid = tunnel.process.pid
        remote_server, remote_cdp = provider._remote_ports
        # This side's ports are ssh's; the ones it forwards to are QEMU's hostfwd on the host's loopback.
        assert provider.server.host == "127.0.0.1" and provider.server.port == tunnel.local_ports[0] != remote_server
        assert provider.cdp.port == tunnel.local_ports[1] != remote_cdp
        assert _listener(provider.server.port) == tunnel_pid
        assert _listener(provider.cdp.port) == tunnel_pid
        assert psutil.Process(_listener(remote_server)).name().startswith("qemu-system")
        assert provider.vnc is not None and provider.vnc.port == tunnel.local_ports[2]
        with socket.create_connection(("127.0.0.1", provider.vnc.port), timeout=10) as vnc:
            assert vnc.recv(12).startswith(b"RFB ")

        obs, reward, terminated, truncated, info = env.step(
            "import subprocess; subprocess.run(['touch', '/tmp/libvirt-ssh-step'])")
        assert "error" not in info, info
        assert env.controller.execute(["test", "-e", "/tmp/libvirt-ssh-step"])["returncode"] == 0
        # The image's own default route (Gateway=10.0.2.2) holds on a libvirt host too; forward_bind
        # still stays on loopback (binding elsewhere is untried, docs/libvirt.md).
        routes = env.controller.execute(["ip", "-4", "route", "show", "default"])
        assert routes["returncode"] == 0 and routes["output"].startswith("default via 10.0.2.2 "), routes
        env.reset()  # revertToSnapshot: QEMU restarts on the same remote ports, the tunnel stays
        assert tunnel.process.poll() is None and provider._tunnel is tunnel
        assert env.controller.execute(["test", "-e", "/tmp/libvirt-ssh-step"])["returncode"] != 0
    finally:
        env.close()
    assert tunnel_pid is not None and not psutil.pid_exists(tunnel_pid), "the ssh tunnel outlived close()"
    assert provider._tunnel is None
    assert _domain_leftovers(libvirt_mod, provider.domain_name) == []


def test_unreachable_forwards_refused_before_start(base_image):
    """A qemu+tcp/tls host's loopback, or forwards bound elsewhere: refused when the provider is made."""
    for hosts in ("qemu+tcp://gpu1.invalid/system", "qemu:///system,qemu+tls://gpu1.invalid/system#2"):
        with pytest.raises(HostError, match="use a qemu\\+ssh URI"):
            LibvirtProvider(image=base_image, hosts=hosts)
    for bind in ("0.0.0.0", "192.0.2.7"):
        with pytest.raises(HostError, match="no route back"):
            LibvirtProvider(image=base_image, uri="qemu+ssh://me@gpu1.invalid/system", forward_bind=bind)
    provider = LibvirtProvider(image=base_image, uri="qemu+ssh://me@gpu1.invalid/system", forward_bind="127.0.0.1")
    assert provider.conn is None  # nothing connected yet: gpu1.invalid is never resolved
