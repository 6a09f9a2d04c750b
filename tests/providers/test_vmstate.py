"""Full and mapped saved states on a real QEMU, with a guest that has no OS (SeaBIOS finds no boot
disk and idles): a pattern written into the guest's RAM must survive each form and conversion,
and a mapped restore must leave the RAM file as it was. Each QEMU here lives a second or two."""
import hashlib
import subprocess
from dataclasses import replace

import pytest

from desktop_env.errors import VMError, VMLaunchError
from desktop_env.machine import QemuMachine, VMSpec, build_command
from desktop_env.paths import allocated
from desktop_env.vmstate import (SavedState, parse_machine_alias, parse_version, qemu_identity,
                                 to_full, to_mapped)

MIB = 1 << 20
PATTERN_AT = 64 * MIB
PATTERN = b"desktop-env mapped state " * 8


def test_parse_version_and_machine_alias():
    assert parse_version("QEMU emulator version 7.2.22 (Debian 1:7.2+dfsg-7+deb12u18+b3)\n") == (7, 2, 22)
    assert parse_version("QEMU emulator version 10.0.0\n") == (10, 0, 0)
    listing = ("Supported machines are:\nq35                  Standard PC (Q35 + ICH9, 2009) (alias of pc-q35-7.2)\n"
               "pc-q35-7.2           Standard PC (Q35 + ICH9, 2009) (default)\n")
    assert parse_machine_alias(listing) == "pc-q35-7.2"
    with pytest.raises(VMError, match="version"):
        parse_version("qemu, no number")
    with pytest.raises(VMError, match="q35"):
        parse_machine_alias("pc-q35-7.2 Standard PC\n")


def test_host_qemu_identity_is_versioned_and_maps():
    ident = qemu_identity()
    assert ident.machine_type.startswith("pc-q35-") and ident.machine_type != "q35"
    ok, why = ident.mapped_restore()
    assert ok, why
    old = replace(ident, version=(4, 0, 0))
    assert old.mapped_restore()[0] is False and "4.0.0" in old.mapped_restore()[1]


def test_command_maps_the_ram_file_shared_or_private(tmp_path):
    spec = VMSpec(disk=tmp_path / "d", memory_mb=512, machine_type="pc-q35-7.2", ram_file=tmp_path / "a,b.ram",
                  ram_shared=True)
    cmd = build_command(spec, "tcg", tmp_path)
    assert cmd[cmd.index("-machine") + 1] == "pc-q35-7.2,accel=tcg,memory-backend=pc.ram"
    backend = cmd[cmd.index("-object") + 1]
    assert backend.startswith("memory-backend-file,id=pc.ram,size=512M,")
    assert f"mem-path={tmp_path}/a,,b.ram," in backend and "share=on" in backend and "prealloc=off" in backend
    private = build_command(replace(spec, ram_shared=False), "tcg", tmp_path)
    assert "share=off" in private[private.index("-object") + 1]
    plain = build_command(VMSpec(disk=tmp_path / "d"), "tcg", tmp_path)
    assert "-object" not in plain and plain[plain.index("-machine") + 1] == "q35,accel=tcg"
    with pytest.raises(ValueError, match="ram_file"):
        VMSpec(disk=tmp_path / "d", ram_shared=True)
    with pytest.raises(ValueError, match="incoming_state"):
        QemuMachine(spec, tmp_path, incoming_mapped=True)


@pytest.fixture
def spec(tmp_path):
    disk = tmp_path / "disk.qcow2"
    subprocess.run(["qemu-img", "create", "-q", "-f", "qcow2", str(disk), "64M"], check=True)
    return VMSpec(disk=disk, accel="tcg", memory_mb=256, cpus=1, screen=(640, 480),
                  machine_type=qemu_identity().machine_type)


def _peek(machine, tmp_path) -> bytes:
    out = tmp_path / "peek.bin"
    out.unlink(missing_ok=True)
    machine.qmp("pmemsave", val=PATTERN_AT, size=len(PATTERN), filename=str(out))
    return out.read_bytes()


def _overlay(disk, path):
    subprocess.run(["qemu-img", "create", "-q", "-f", "qcow2", "-F", "qcow2", "-b", str(disk), str(path)], check=True)
    return path


def _mapping_flags(pid, path) -> list[str]:
    """The VmFlags of process ``pid``'s mapping of ``path`` (from /proc/PID/smaps)."""
    lines = open(f"/proc/{pid}/smaps").read().splitlines()
    for i, line in enumerate(lines):
        if line.endswith(str(path)):
            for follow in lines[i + 1:]:
                if follow.startswith("VmFlags:"):
                    return follow.split()[1:]
    raise AssertionError(f"QEMU pid {pid} has no mapping of {path}")


def _sha(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def full_state(spec, tmp_path):
    """A full state of a guest whose RAM holds PATTERN (written through a shared RAM file)."""
    ram = tmp_path / "source.ram"
    source = QemuMachine(replace(spec, ram_file=ram, ram_shared=True), tmp_path / "source")
    source.start()
    try:
        with open(ram, "r+b") as f:  # the shared file *is* the guest's RAM
            f.seek(PATTERN_AT)
            f.write(PATTERN)
        assert _peek(source, tmp_path) == PATTERN
        source.save_state(tmp_path / "full.bin")
    finally:
        source.stop()
    return SavedState(tmp_path / "full.bin")


def test_full_state_converts_to_mapped_and_restores_by_mapping(spec, full_state, tmp_path):
    mapped = to_mapped(full_state, spec, tmp_path / "convert", tmp_path / "m.bin", tmp_path / "m.ram")
    assert mapped.mapped and not (tmp_path / "m.ram.partial").exists()
    assert (tmp_path / "m.ram").stat().st_size == spec.memory_mb * MIB
    assert allocated(tmp_path / "m.ram") < spec.memory_mb * MIB // 4  # sparse: untouched pages are holes
    full_size, device_size = full_state.stream.stat().st_size, mapped.stream.stat().st_size
    assert device_size < full_size, (device_size, full_size)  # the RAM is not in the stream
    before = _sha(mapped.ram)
    machines = [mapped.machine(replace(spec, disk=_overlay(spec.disk, tmp_path / f"env{i}.qcow2")), tmp_path / f"env{i}")
                for i in range(2)]
    try:
        for machine in machines:  # two environments from one RAM file at once
            machine.start(timeout_s=20, restore_timeout_s=60)
            assert machine.qmp("query-status")["status"] == "running"
            assert _peek(machine, tmp_path) == PATTERN
        for machine in machines:  # the kernel's view: a private mapping of the file (no "sh" flag)
            flags = _mapping_flags(machine.pid, mapped.ram)
            assert "mr" in flags and "sh" not in flags, flags
    finally:
        for machine in machines:
            machine.stop()
    assert _sha(mapped.ram) == before  # copy-on-write: the saved RAM never changes

    # and back to one full stream (libvirt's save images need it); it loads into today's VM
    full = to_full(mapped, spec, tmp_path / "back", tmp_path / "full2.bin")
    plain = full.machine(replace(spec, machine_type="q35"), tmp_path / "plain")
    try:
        plain.start(timeout_s=20, restore_timeout_s=60)
        assert _peek(plain, tmp_path) == PATTERN
    finally:
        plain.stop()
    assert _sha(mapped.ram) == before


def test_a_mapped_stream_loaded_as_full_or_into_the_wrong_size_fails_clearly(spec, full_state, tmp_path):
    mapped = to_mapped(full_state, spec, tmp_path / "convert", tmp_path / "m.bin", tmp_path / "m.ram")
    as_full = QemuMachine(spec, tmp_path / "as-full", incoming_state=mapped.stream)
    with pytest.raises(VMLaunchError) as err:  # QEMU refuses: the stream says x-ignore-shared
        as_full.start(timeout_s=20, restore_timeout_s=60)
    assert "x-ignore-shared" in err.value.log_tail
    bigger = mapped.machine(replace(spec, memory_mb=512), tmp_path / "bigger")
    with pytest.raises(VMError, match="256 MiB but the VM is given 512 MiB"):
        bigger.start(timeout_s=20, restore_timeout_s=60)
    assert not bigger.is_running()
    with pytest.raises(VMError, match="already a mapped state"):
        to_mapped(mapped, spec, tmp_path / "again", tmp_path / "x.bin", tmp_path / "x.ram")
    with pytest.raises(VMError, match="shared file"):
        QemuMachine(spec, tmp_path / "plain").save_state(tmp_path / "nope.bin", mapped=True)
