"""A libvirt pool against the real libvirtd: uploads keyed by the image's build, not only its name.

A small stand-in image (a 1 MiB qcow2 made by qemu-img, small kernel/initrd/state files) so no VM boots.
"""
import json
import subprocess

import pytest

from desktop_env.image.store import ImageInfo
from desktop_env.providers.libvirt.storage import HostPool, StorageError

pytestmark = [pytest.mark.libvirt]

POOL = "desktop-env-pool-test"
POOL_PATH = "/var/lib/libvirt/images/desktop-env-pool-test"


def _image(path, name, created, token):
    path.mkdir(parents=True, exist_ok=True)
    if not (path / "disk.qcow2").exists():
        subprocess.run(["qemu-img", "create", "-q", "-f", "qcow2", str(path / "disk.qcow2"), "1M"], check=True)
        for file, size in (("vmlinuz", 4096), ("initrd.img", 8192), ("init_state.bin", 16384)):
            (path / file).write_bytes(bytes(size))
    meta = {"name": name, "profile": name.split("-")[0], "ready": True, "created": created, "token": token,
            "screen": "1920x1080",
            "files": {"disk": "disk.qcow2", "kernel": "vmlinuz", "initrd": "initrd.img", "state": "init_state.bin"}}
    (path / "metadata.json").write_text(json.dumps(meta))
    return ImageInfo.load(path)


@pytest.fixture
def pool(libvirtd, libvirt_mod):
    conn = libvirt_mod.open(libvirtd)

    def drop():
        try:
            p = conn.storagePoolLookupByName(POOL)
        except libvirt_mod.libvirtError:
            return
        if p.isActive():
            p.refresh(0)
            for vol in p.listAllVolumes(0):
                vol.delete(0)
            p.destroy()
        p.undefine()

    drop()
    host_pool = HostPool(conn, POOL, POOL_PATH)
    yield host_pool
    drop()
    conn.close()


def _uploaded(calls):
    return sorted({vol for vol, done, total in calls if done == total})


def test_a_rebuild_of_the_same_recipe_is_uploaded_again(pool, tmp_path):
    first = _image(tmp_path / "a", "pooltest-0123456789abcdef", "2026-11-01T00:00:00+0000", "token-a")
    calls = []
    vols = pool.ensure_image(first, "<domain/>", lambda *a: calls.append(a))
    assert _uploaded(calls) == [f"{first.name}.{s}" for s in ("initrd", "qcow2", "save", "vmlinuz")]
    assert pool.held_build(first) == first.build_id

    calls.clear()  # the same build: reused
    assert pool.ensure_image(first, "<domain/>", lambda *a: calls.append(a)) == vols
    assert calls == []

    # Same name, rebuilt (new token): the pool's copy would answer 401 to every request, so it is replaced.
    rebuilt = _image(tmp_path / "b", first.name, "2026-11-02T00:00:00+0000", "token-b")
    assert rebuilt.build_id != first.build_id
    pool.ensure_image(rebuilt, "<domain/>", lambda *a: calls.append(a))
    assert f"{first.name}.qcow2" in _uploaded(calls)
    assert pool.held_build(rebuilt) == rebuilt.build_id


def test_a_marker_from_before_builds_were_identified_counts_as_another_build(pool, tmp_path):
    image = _image(tmp_path / "a", "pooltest-0123456789abcdef", "2026-11-01T00:00:00+0000", "token-a")
    pool.ensure_image(image, "<domain/>")
    pool.delete(f"{image.name}.ready")
    pool.pool.createXML(pool._vol_xml(f"{image.name}.ready", 0, "raw"), 0)  # as older versions wrote it
    assert pool.held_build(image) == ""
    calls = []
    pool.ensure_image(image, "<domain/>", lambda *a: calls.append(a))
    assert f"{image.name}.qcow2" in _uploaded(calls)
    assert pool.held_build(image) == image.build_id


def test_another_build_in_use_by_an_overlay_is_refused_naming_it(pool, tmp_path):
    first = _image(tmp_path / "a", "pooltest-0123456789abcdef", "2026-11-01T00:00:00+0000", "token-a")
    vols = pool.ensure_image(first, "<domain/>")
    pool.create_overlay("desktop-env-pooltest-env1.qcow2", vols["disk"])
    rebuilt = _image(tmp_path / "b", first.name, "2026-11-02T00:00:00+0000", "token-b")
    with pytest.raises(StorageError, match=r"another build of pooltest-0123456789abcdef .*"
                                           r"desktop-env-pooltest-env1\.qcow2.*vol-delete --pool desktop-env-pool-test"):
        pool.ensure_image(rebuilt, "<domain/>")
    assert pool.held_build(first) == first.build_id  # the set in use is left whole
    assert pool.volume(f"{first.name}.qcow2") is not None
    pool.delete("desktop-env-pooltest-env1.qcow2")
    pool.ensure_image(rebuilt, "<domain/>")
    assert pool.held_build(rebuilt) == rebuilt.build_id
