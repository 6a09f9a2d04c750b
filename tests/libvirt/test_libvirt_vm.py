"""The libvirt provider against the real libvirtd: a local domain through DesktopEnv, and a 'remote' host
(qemu+tcp on loopback, its own pool) reached after failing over from an unreachable one."""
import xml.etree.ElementTree as ET

import pytest

from desktop_env.envs import DesktopEnv
from desktop_env.errors import SnapshotError
from desktop_env.providers.libvirt import LibvirtProvider
from desktop_env.providers.libvirt.storage import HostPool

TCP_URI = "qemu+tcp://127.0.0.1/system"

pytestmark = [pytest.mark.libvirt, pytest.mark.vm, pytest.mark.slow]

REMOTE_POOL = "desktop-env-remote-test"
REMOTE_POOL_PATH = "/var/lib/libvirt/images/desktop-env-remote-test"


def _leftovers(libvirt_mod, uri, domain, pool):
    conn = libvirt_mod.open(uri)
    try:
        names = [d.name() for d in conn.listAllDomains(0)]
        vols = conn.storagePoolLookupByName(pool).listVolumes()
        return [n for n in names if n == domain] + [v for v in vols if v.startswith(domain)]
    finally:
        conn.close()


def _drop_pool(libvirt_mod, uri, name):
    conn = libvirt_mod.open(uri)
    try:
        pool = conn.storagePoolLookupByName(name)
    except libvirt_mod.libvirtError:
        conn.close()
        return
    try:
        if pool.isActive():
            pool.refresh(0)
            for vol in pool.listAllVolumes(0):
                vol.delete(0)
            pool.destroy()
        pool.delete(0)
        pool.undefine()
    finally:
        conn.close()


def _is_png(data):
    return data[:8] == b"\x89PNG\r\n\x1a\n"


def test_local_domain_through_desktop_env(base_image, libvirtd, libvirt_mod):
    env = DesktopEnv(provider_name="libvirt", path_to_vm=base_image.name, action_space="pyautogui",
                     require_a11y_tree=False)
    provider = env.provider
    try:
        obs, info = env.reset()  # starts: upload if missing, restore, init_state snapshot
        assert obs["screenshot"].shape == (base_image.screen[1], base_image.screen[0], 3)
        status = provider.status()
        assert status["running"] and status["accel"] == "tcg" and status["snapshots"] == ["init_state"]
        live = ET.fromstring(provider.dom.XMLDesc(0))
        assert live.get("type") == "qemu" and live.find("os/kernel") is not None
        assert provider.vnc is not None and provider.vnc.host == "127.0.0.1"
        assert _is_png(provider.screenshot())

        obs, reward, terminated, truncated, info = env.step(
            "import subprocess; subprocess.run(['touch', '/tmp/libvirt-step'])")
        assert "error" not in info, info
        assert env.controller.execute(["test", "-e", "/tmp/libvirt-step"])["returncode"] == 0

        provider.save_snapshot("with-file")
        assert provider.list_snapshots() == ["init_state", "with-file"]
        obs, info = env.reset()  # revertToSnapshot(init_state): QEMU restarts, forwards come back
        assert env.controller.execute(["test", "-e", "/tmp/libvirt-step"])["returncode"] != 0
        provider.revert_to_snapshot("with-file")
        assert env.controller.execute(["test", "-e", "/tmp/libvirt-step"])["returncode"] == 0
        provider.delete_snapshot("with-file")
        assert provider.list_snapshots() == ["init_state"]
        with pytest.raises(SnapshotError, match="no snapshot 'gone'"):
            provider.revert_to_snapshot("gone")
        with pytest.raises(SnapshotError, match="cannot be overwritten"):
            provider.save_snapshot("init_state")
    finally:
        env.close()
    assert _leftovers(libvirt_mod, "qemu:///system", provider.domain_name, "desktop-env") == []


def test_remote_host_upload_and_failover(base_image, libvirtd, libvirt_mod, tmp_path):
    """The first host refuses connections: it leaves rotation and the environment starts on the second,
    whose fresh pool receives the image through the volume upload API."""
    _drop_pool(libvirt_mod, TCP_URI, REMOTE_POOL)
    uploads = []
    bad = "qemu+tcp://127.0.0.1:1/system"
    provider = LibvirtProvider(image=base_image, hosts=f"{bad}#1,{TCP_URI}#1", pool=REMOTE_POOL,
                               pool_path=REMOTE_POOL_PATH, hosts_state_dir=tmp_path,
                               upload_progress=lambda vol, done, total: uploads.append((vol, done, total)))
    try:
        provider.start()
        assert provider.uri == TCP_URI
        assert "cannot connect" in provider.scheduler.failed(bad)
        assert {v for v, done, total in uploads if done == total} == {
            f"{base_image.name}.{s}" for s in ("qcow2", "vmlinuz", "initrd", "save")}
        assert _is_png(provider.screenshot())
        provider.revert_to_snapshot()
        assert provider.status()["server"].startswith("http://127.0.0.1:")
        # Reused afterwards: the image is in the pool, nothing is uploaded again.
        uploads.clear()
        HostPool(provider.conn, REMOTE_POOL, REMOTE_POOL_PATH).ensure_image(base_image, "<domain/>",
                                                                            lambda *a: uploads.append(a))
        assert uploads == []
    finally:
        provider.stop()
    try:
        assert _leftovers(libvirt_mod, TCP_URI, provider.domain_name, REMOTE_POOL) == []
    finally:
        _drop_pool(libvirt_mod, TCP_URI, REMOTE_POOL)
