"""Fixtures for the libvirt provider: a real libvirtd (started by .ci/start-libvirtd when needed)."""
import os
import subprocess
from pathlib import Path

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
