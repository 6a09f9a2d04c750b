"""Fixtures for the libvirt provider: a real libvirtd (started by .ci/start-libvirtd when needed) and a private sshd."""
import os
import shutil
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import psutil
import pytest

ROOT = Path(__file__).resolve().parents[2]
TCP_URI = "qemu+tcp://127.0.0.1/system"


@pytest.fixture(scope="session")
def libvirt_mod():
    """The libvirt module with its stderr error printer silenced."""
    libvirt = pytest.importorskip("libvirt", reason="libvirt-python is not installed (pip install libvirt-python)")
    libvirt.registerErrorHandler(lambda _ctx, _err: None, None)
    return libvirt


@pytest.fixture(scope="session")
def libvirtd(libvirt_mod):
    """A running libvirtd with the loopback TCP listener; started here when it is not (needs root)."""
    def answers():
        try:
            for uri in ("qemu:///system", TCP_URI):
                libvirt_mod.open(uri).close()
            return True
        except libvirt_mod.libvirtError:
            return False

    if not answers():
        if os.geteuid() != 0:
            pytest.skip("libvirtd is not running and starting it needs root: sudo bash .ci/start-libvirtd")
        result = subprocess.run(["bash", str(ROOT / ".ci" / "start-libvirtd")], capture_output=True, text=True)
        assert result.returncode == 0, result.stdout + result.stderr
    assert answers(), "libvirtd does not answer on qemu:///system and " + TCP_URI
    return "qemu:///system"


@pytest.fixture(scope="session")
def base_image():
    """The base image for the current recipe (built if not cached)."""
    import logging

    from desktop_env.image.builder import ensure_image

    logging.getLogger("desktop_env").setLevel(logging.INFO)
    return ensure_image("base")


#: Host name the ssh client config maps to 127.0.0.1: to the provider a remote host, reached through its tunnel.
SSH_ALIAS = "desktop-env-ssh-test"


@dataclass
class SSHHost:
    """A private sshd on 127.0.0.1 for root with one generated key; all its files in ``dir``."""

    dir: Path
    port: int
    process: subprocess.Popen
    log: Path

    def uri(self, host: str = SSH_ALIAS) -> str:
        """qemu+ssh URI of this machine's libvirtd through the sshd (``command`` carries the client config)."""
        return (f"qemu+ssh://root@{host}:{self.port}/system"
                f"?keyfile={self.dir / 'client_key'}&command={self.dir / 'ssh'}")


@pytest.fixture(scope="session")
def ssh_host(libvirtd, libvirt_mod, tmp_path_factory):
    """An sshd started here (not the system service), root login by key only, killed at teardown.

    The ssh client runs through ``<dir>/ssh``, a wrapper adding ``-F <dir>/ssh_config``: that
    config holds the known_hosts file (the generated host key, checked strictly) and maps
    ``SSH_ALIAS`` to 127.0.0.1, so nothing is read from or written to ~/.ssh.
    """
    if os.geteuid() != 0:
        pytest.skip("the test sshd logs in as root: run as root")
    for tool, package in (("/usr/sbin/sshd", "openssh-server"), ("ssh", "openssh-client"),
                          ("ssh-keygen", "openssh-client")):
        if not shutil.which(tool):
            pytest.skip(f"{tool} is not installed: apt-get install {package}")
    d = tmp_path_factory.mktemp("sshd")
    for key in ("host_key", "client_key"):
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", key, "-f", str(d / key)], check=True)
    shutil.copy(d / "client_key.pub", d / "authorized_keys")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    # StrictModes would refuse authorized_keys below /tmp (world-writable); the folder itself is 0700.
    (d / "sshd_config").write_text(f"""\
Port {port}
ListenAddress 127.0.0.1
HostKey {d}/host_key
PidFile {d}/sshd.pid
AuthorizedKeysFile {d}/authorized_keys
PermitRootLogin prohibit-password
AllowUsers root
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
AllowTcpForwarding local
""")
    (d / "known_hosts").write_text(f"[127.0.0.1]:{port} {(d / 'host_key.pub').read_text().rsplit(' ', 1)[0]}\n")
    (d / "ssh_config").write_text(f"""\
Host {SSH_ALIAS}
  HostName 127.0.0.1
Host *
  UserKnownHostsFile {d}/known_hosts
  GlobalKnownHostsFile /dev/null
  StrictHostKeyChecking yes
  IdentitiesOnly yes
""")
    (d / "ssh").write_text(f'#!/bin/sh\nexec ssh -F {d}/ssh_config "$@"\n')
    (d / "ssh").chmod(0o755)
    Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)  # sshd's privilege separation directory
    log = d / "sshd.log"
    process = subprocess.Popen(["/usr/sbin/sshd", "-D", "-f", str(d / "sshd_config"), "-E", str(log)],
                               stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    host = SSHHost(d, port, process, log)
    try:
        deadline = time.monotonic() + 10
        while True:
            assert process.poll() is None, f"sshd exited ({process.returncode}): {process.stderr.read()!r}"
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            assert time.monotonic() < deadline, f"sshd did not listen on 127.0.0.1:{port} within 10 s"
            time.sleep(0.1)
        libvirt_mod.open(host.uri()).close()  # libvirt's own ssh transport gets through
        yield host
    finally:
        try:
            sessions = psutil.Process(process.pid).children(recursive=True)  # per-connection sshd children
        except psutil.NoSuchProcess:
            sessions = []
        process.terminate()
        process.wait(10)
        for proc in sessions:
            try:
                proc.terminate()
            except psutil.NoSuchProcess:
                pass
        psutil.wait_procs(sessions, timeout=10)
