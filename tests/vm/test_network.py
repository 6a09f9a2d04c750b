"""The guest's network: isolated by default, and out through QEMU's gateway with ``allow_internet``.

"Out" is checked against a listener on one of the host's own non-loopback addresses: the guest has
to route to it through its default route (QEMU's user-mode network forwards it from the host), as it
would to any address on the internet, which this machine may not reach.
"""
import socket
import threading

import pytest

from desktop_env.controllers import PythonController
from desktop_env.providers.qemu.provider import QemuProvider

pytestmark = [pytest.mark.vm, pytest.mark.slow]

CONNECT = ("import socket, sys\n"
           "s = socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=10)\n"
           "s.sendall(b'hello from the guest'); s.close()\n")


def _host_address() -> str | None:
    """One of the host's non-loopback IPv4 addresses, or None."""
    probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        probe.connect(("192.0.2.1", 9))  # no packet is sent: this only picks the outgoing interface
        address = probe.getsockname()[0]
    except OSError:
        return None
    finally:
        probe.close()
    return None if address.startswith("127.") else address


class _Listener:
    """A TCP listener on ``address`` that keeps what its first connection sends."""

    def __init__(self, address: str):
        self.sock = socket.create_server((address, 0))
        self.sock.settimeout(60)
        self.port = self.sock.getsockname()[1]
        self.received = b""
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()

    def _accept(self):
        try:
            conn, _ = self.sock.accept()
        except OSError:
            return
        with conn:
            conn.settimeout(10)
            self.received = conn.recv(100)

    def close(self):
        self.sock.close()


@pytest.fixture(scope="module")
def host_address():
    address = _host_address()
    if address is None:
        pytest.skip("the host has no non-loopback IPv4 address to listen on")
    return address


@pytest.mark.parametrize("allow_internet", [False, True])
def test_guest_reaches_out_only_with_allow_internet(base_image, host_address, allow_internet):
    listener = _Listener(host_address)
    provider = QemuProvider(image=base_image, allow_internet=allow_internet)
    provider.start()
    try:
        guest = PythonController(provider.server.host, provider.server.port, token=provider.token)
        routes = guest.execute(["ip", "route"])["output"]
        reply = guest.execute(["python3", "-c", CONNECT, host_address, str(listener.port)], timeout_s=60)
        if allow_internet:
            listener.thread.join(30)
        guest.close()
    finally:
        provider.stop()
        listener.close()
    assert "default via 10.0.2.2" in routes, routes
    if allow_internet:
        assert reply["returncode"] == 0, reply
        assert listener.received == b"hello from the guest"
    else:
        assert reply["returncode"] != 0, reply
        assert listener.received == b""
