"""Restores by mapping on the base image: init_state is a mapped pair, environments map its RAM file
privately and never change it, each draws its own random numbers and gets the host's clock, and the
copy path (one full stream) still restores the same guest."""
import hashlib
import time

import pytest

from desktop_env.controllers.python import PythonController
from desktop_env.providers.qemu.provider import QemuProvider

pytestmark = [pytest.mark.vm, pytest.mark.slow]

#: Writes about 200 MiB of guest memory (and frees it), so copy-on-write has something to copy.
TOUCH = "python3 -c \"b = bytearray(200 << 20); b[::4096] = b'x' * len(b[::4096]); print(len(b))\""


def _guest(vm) -> PythonController:
    return PythonController(vm.server.host, vm.server.port, token=vm.token)


def _sha(path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(16 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def _mapping_flags(pid: int, path) -> list[str]:
    lines = open(f"/proc/{pid}/smaps").read().splitlines()
    for i, line in enumerate(lines):
        if line.endswith(str(path)):
            return next(f.split()[1:] for f in lines[i + 1:] if f.startswith("VmFlags:"))
    raise AssertionError(f"QEMU pid {pid} does not map {path}")


def test_two_environments_map_one_init_state_privately_and_differ(base_image):
    saved = base_image.saved_state()
    assert saved.mapped, f"{base_image.name}'s init_state is not a mapped pair: {base_image.meta['files']}"
    assert base_image.meta["machine_type"].startswith("pc-q35-")
    before = _sha(saved.ram)
    a, b = QemuProvider(image=base_image), QemuProvider(image=base_image)
    try:
        a.start()
        b.start()
        randoms = []
        for vm in (a, b):
            assert vm.last_restore["ram"] == "mapped"
            flags = _mapping_flags(vm.machine.pid, saved.ram)
            assert "sh" not in flags, f"the RAM file is mapped shared: {flags}"
            guest = _guest(vm)
            randoms.append(guest.execute("head -c 32 /dev/urandom | od -An -tx1", shell=True)["output"])
            assert abs(float(guest.execute(["date", "+%s.%N"])["output"]) - time.time()) < 30, "the host's clock"
            assert guest.execute(TOUCH, shell=True)["output"].strip() == str(200 << 20)
        assert randoms[0] != randoms[1], "two environments restored from one state drew the same random bytes"
        assert "vmgenid" in " ".join(a.machine.command)
    finally:
        a.stop()
        b.stop()
    assert _sha(saved.ram) == before, "a restore wrote to the saved RAM file"


def test_the_copy_path_restores_the_same_desktop(base_image):
    full = base_image.path / "init_state.full.bin"
    with QemuProvider(image=base_image, restore="copy") as vm:
        assert vm.last_restore["ram"] == "copied" and full.is_file()
        assert full.stat().st_size > 100 << 20, "the full stream holds the RAM"
        guest = _guest(vm)
        assert guest.execute(["pgrep", "-x", "xfce4-panel"])["returncode"] == 0
        vm.revert_to_snapshot("init_state")  # reuses the full stream
        assert vm.last_restore["ram"] == "copied"
    with QemuProvider(image=base_image) as vm:
        assert vm.last_restore["ram"] == "mapped"
        assert _guest(vm).execute(["pgrep", "-x", "xfce4-panel"])["returncode"] == 0
