"""How many environments fit (desktop_env.image.capacity) on real sparse files, and the run's cap on --num_envs."""
import json
from pathlib import Path

import pytest

from desktop_env.errors import DesktopEnvError
from desktop_env.harness.config import RunConfig
from desktop_env.harness.suite import cap_to_memory
from desktop_env.image import capacity as cap
from desktop_env.image.store import ImageInfo

GiB = 1 << 30
MiB = 1 << 20


def _sparse(path: Path, size: int, written: int) -> Path:
    """A file of apparent ``size`` with ``written`` bytes of data at its start (the rest a hole)."""
    with open(path, "wb") as fh:
        fh.truncate(size)
        fh.write(b"\x5a" * written)
    return path


def _near(size: int, expected: int) -> bool:
    """Allocated sizes: the data written plus at most a few file-system blocks."""
    return expected <= size <= expected + 64 * 1024


def _image(root: Path, memory_mb=4096, mapped=True, ram_mib=256, states=()) -> ImageInfo:
    """A ready image whose init_state is a mapped pair (a sparse RAM file) or one full stream, with warm states
    ``states`` (name -> MiB of RAM written) saved the same way."""
    name = "data-0123456789abcdef"
    path = root / "images" / name
    path.mkdir(parents=True)
    (path / "disk.qcow2").write_bytes(b"d" * 100)
    files = {"disk": "disk.qcow2", "state": "init_state.bin"}
    if mapped:
        (path / "init_state.bin").write_bytes(b"s" * 4096)
        _sparse(path / "init_state.ram", memory_mb * MiB, ram_mib * MiB)
        files["ram"] = "init_state.ram"
    else:
        _sparse(path / "init_state.bin", ram_mib * MiB, ram_mib * MiB)
    meta = {"name": name, "profile": "data", "ready": True, "memory_mb": memory_mb, "screen": "1920x1080",
            "files": files}
    (path / "metadata.json").write_text(json.dumps(meta))
    for state, mib in dict(states).items():
        folder = path / "states" / state
        folder.mkdir(parents=True)
        state_files = {"state": "state.bin", "disk": "disk.qcow2"}
        (folder / "state.bin").write_bytes(b"s" * 4096)
        if mapped:
            _sparse(folder / "state.ram", memory_mb * MiB, mib * MiB)
            state_files["ram"] = "state.ram"
        (folder / "state.json").write_text(json.dumps({"ready": True, "files": state_files}))
    return ImageInfo.load(path)


def test_mapped_ram_is_held_once_so_more_environments_fit_than_by_copying(tmp_path, monkeypatch):
    monkeypatch.delenv("DESKTOP_ENV_RESTORE", raising=False)
    image = _image(tmp_path, memory_mb=512, ram_mib=96)
    mapped = cap.capacity(image, accel="kvm", available=8 * GiB)
    copied = cap.capacity(image, restore="copy", accel="kvm", available=8 * GiB)
    assert mapped.restore == "map" and copied.restore == "copy"
    assert _near(mapped.shared, 96 * MiB), "the RAM file's written pages, not its apparent 4 GiB"
    assert copied.shared == 0 and copied.parts["saved RAM copied"] == mapped.shared
    assert mapped.per_env + mapped.shared == copied.per_env
    assert mapped.fits > copied.fits >= 1
    # the numbers add up: what fits, and one more does not
    room = 8 * GiB - cap.HOST_RESERVE_MIB * MiB - mapped.shared
    assert mapped.fits * mapped.per_env <= room < (mapped.fits + 1) * mapped.per_env


def test_tcg_counts_its_translation_buffer_and_kvm_does_not(tmp_path):
    image = _image(tmp_path)
    tcg = cap.capacity(image, accel="tcg", available=22 * GiB)
    kvm = cap.capacity(image, accel="kvm", available=22 * GiB)
    assert tcg.parts["TCG buffer"] == cap.TCG_BUFFER_MIB * MiB and "TCG buffer" not in kvm.parts
    assert kvm.fits > tcg.fits


def test_each_states_ram_file_counts_once_and_unbuilt_states_are_left_out(tmp_path):
    image = _image(tmp_path, ram_mib=32, states={"superset": 96})
    one = cap.capacity(image, ["init_state"], accel="tcg", available=22 * GiB)
    both = cap.capacity(image, ["init_state", "superset", "superset", "not-built"], accel="tcg", available=22 * GiB)
    assert _near(one.shared, 32 * MiB) and _near(both.shared, 128 * MiB)
    assert both.per_env == one.per_env, "what each environment adds does not depend on the states' size"


def test_a_state_saved_before_mapped_ram_is_copied_whatever_the_setting(tmp_path):
    fit = cap.capacity(_image(tmp_path, mapped=False, ram_mib=30), restore="map", accel="tcg", available=22 * GiB)
    assert fit.restore == "copy" and fit.shared == 0 and _near(fit.parts["saved RAM copied"], 30 * MiB)


def test_the_restore_setting_comes_from_the_environment_and_is_checked(tmp_path, monkeypatch):
    image = _image(tmp_path)
    monkeypatch.setenv("DESKTOP_ENV_RESTORE", "copy")
    assert cap.capacity(image, accel="tcg", available=22 * GiB).restore == "copy"
    monkeypatch.setenv("DESKTOP_ENV_RESTORE", "mmap")
    with pytest.raises(DesktopEnvError, match="'mmap'.*DESKTOP_ENV_RESTORE.*map or copy"):
        cap.capacity(image, accel="tcg", available=22 * GiB)


def test_mem_available_reads_meminfo_and_names_a_file_without_it(tmp_path):
    meminfo = tmp_path / "meminfo"
    meminfo.write_text("MemTotal:       24576000 kB\nMemFree:         1000 kB\nMemAvailable:   20480000 kB\n")
    assert cap.mem_available(meminfo) == 20480000 * 1024
    meminfo.write_text("MemTotal:       24576000 kB\n")
    with pytest.raises(DesktopEnvError, match=f"{meminfo} has no MemAvailable"):
        cap.mem_available(meminfo)
    assert cap.mem_available() > 0, "this host's own /proc/meminfo"


def test_cap_envs_lowers_with_the_reason_and_never_below_one(tmp_path):
    fit = cap.capacity(_image(tmp_path, ram_mib=96), accel="tcg", available=12 * GiB)
    assert 1 < fit.fits < 6
    assert cap.cap_envs(fit.fits, fit) == (fit.fits, None)
    n, message = cap.cap_envs(6, fit)
    assert n == fit.fits
    assert message.startswith(f"--num_envs 6 lowered to {fit.fits}: {fit.fits} environment(s) of data-0123456789abcdef")
    assert "12.0 GiB" in message and "TCG buffer 1.0" in message and "restore by map" in message
    none = cap.capacity(_image(tmp_path / "small", ram_mib=96), accel="tcg", available=2 * GiB)
    assert none.fits == 0
    n, message = cap.cap_envs(3, none)
    assert n == 1 and "not even one environment fits" in message


def test_a_run_lowers_num_envs_to_what_fits_and_says_so(tmp_path, monkeypatch):
    _image(tmp_path, ram_mib=96, states={"superset": 64})
    monkeypatch.setattr(cap, "mem_available", lambda meminfo=None: 12 * GiB)
    monkeypatch.setattr("desktop_env.machine.kvm_usable", lambda: (False, "test"))
    lines = []
    config = RunConfig(provider_name="qemu", cache_dir=tmp_path, path_to_vm="data", num_envs=6)
    capped = cap_to_memory(config, 10, ["superset"], lambda line, error=False: lines.append(line))
    fit = cap.capacity(ImageInfo.load(tmp_path / "images" / "data-0123456789abcdef"), ["init_state", "superset"],
                       accel="tcg", available=12 * GiB)
    assert capped.num_envs == fit.fits < 6 and config.num_envs == 6
    assert len(lines) == 1 and lines[0].startswith(f"--num_envs 6 lowered to {fit.fits}")
    # fewer tasks than environments, or a provider whose VMs are not on this host: nothing to cap
    lines.clear()
    assert cap_to_memory(config, 1, [], lines.append) is config
    assert cap_to_memory(RunConfig(provider_name="libvirt", cache_dir=tmp_path, path_to_vm="data", num_envs=6), 10,
                         [], lines.append).num_envs == 6
    assert not lines
