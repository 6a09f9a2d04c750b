"""QEMU command line, acceleration choice and port leases (no guest needed)."""
import logging
import multiprocessing
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from desktop_env.errors import VMError, VMLaunchError
from desktop_env.providers.base import create_provider, provider_names
from desktop_env.ports import PortLease, lock_is_held
from desktop_env.machine import QemuMachine, VMSpec, build_command, kvm_usable, resolve_accel


def test_command_isolated_and_loopback_only(tmp_path):
    spec = VMSpec(disk=tmp_path / "d.qcow2", kernel=tmp_path / "k", initrd=tmp_path / "i", cmdline="root=/dev/vda",
                  forwards={5000: 40001, 9222: 40002}, vnc_port=5912, screen=(1280, 800))
    cmd = build_command(spec, "tcg", tmp_path)
    joined = " ".join(cmd)
    netdev = cmd[cmd.index("-netdev") + 1]
    assert "restrict=on" in netdev
    assert "hostfwd=tcp:127.0.0.1:40001-:5000" in netdev and "hostfwd=tcp:127.0.0.1:40002-:9222" in netdev
    assert "-vnc 127.0.0.1:12" in joined
    assert "xres=1280,yres=800" in joined
    assert "accel=tcg" in joined and "-cpu max" in joined
    spec.allow_internet = True
    assert "restrict=on" not in build_command(spec, "tcg", tmp_path)[cmd.index("-netdev") + 1]


def test_incoming_is_appended(tmp_path):
    cmd = build_command(VMSpec(disk=tmp_path / "d"), "kvm", tmp_path, incoming="defer")
    assert cmd[-2:] == ["-incoming", "defer"] and "-cpu host" in " ".join(cmd)


def test_auto_accel_matches_cpu_flags(caplog):
    ok, why = kvm_usable()
    flags = Path("/proc/cpuinfo").read_text()
    if " vmx" not in flags and " svm" not in flags:
        assert not ok
    with caplog.at_level(logging.INFO, logger="desktop_env"):
        chosen = resolve_accel("auto")
    assert chosen == ("kvm" if ok else "tcg")
    assert why in caplog.text
    with pytest.raises(ValueError):
        resolve_accel("hvf")


def test_spec_validation(tmp_path):
    with pytest.raises(ValueError, match="memory_mb"):
        VMSpec(disk=tmp_path / "d", memory_mb=16)
    with pytest.raises(ValueError, match="vnc_port"):
        VMSpec(disk=tmp_path / "d", vnc_port=80)


def test_launch_failure_carries_command_and_log(tmp_path):
    machine = QemuMachine(VMSpec(disk=tmp_path / "missing.qcow2", accel="tcg"), tmp_path / "run")
    with pytest.raises(VMLaunchError) as err:
        machine.start(timeout_s=20)
    assert "qemu-system-x86_64" in str(err.value)
    assert "missing.qcow2" in err.value.log_tail
    assert not machine.is_running()


def test_a_state_that_never_loads_fails_after_its_own_limit_with_qemu_s_log(tmp_path):
    """The restore has its own limit (RESTORE_TIMEOUT_S, longer than QMP's: a big state on a loaded
    host took over 30 s once), and its error carries QEMU's log."""
    disk = tmp_path / "disk.qcow2"
    subprocess.run(["qemu-img", "create", "-q", "-f", "qcow2", str(disk), "64M"], check=True)
    never = tmp_path / "state.fifo"
    os.mkfifo(never)  # `cat` blocks on it: the incoming migration never gets a byte
    machine = QemuMachine(VMSpec(disk=disk, accel="tcg", memory_mb=256), tmp_path / "run", incoming_state=never)
    started = time.monotonic()
    with pytest.raises(VMError) as err:
        machine.start(timeout_s=20, restore_timeout_s=3)
    assert 3 <= time.monotonic() - started < 20
    assert "did not finish within 3 s" in str(err.value) and "qemu.log" in str(err.value)
    assert not machine.is_running()


def _hold_ports(lock_dir, queue, count):
    lease = PortLease(Path(lock_dir), count)
    queue.put((os.getpid(), lease.ports))
    time.sleep(60)


def test_port_leases_never_collide_across_processes(tmp_path):
    ctx = multiprocessing.get_context("spawn")
    queue = ctx.Queue()
    procs = [ctx.Process(target=_hold_ports, args=(str(tmp_path), queue, 5)) for _ in range(3)]
    for p in procs:
        p.start()
    try:
        by_pid = dict(queue.get(timeout=30) for _ in procs)
        ports = [by_pid[p.pid] for p in procs]
        mine = PortLease(tmp_path, 5)
        flat = [p for group in ports for p in group] + mine.ports
        assert len(flat) == len(set(flat)) == 20
        assert all(lock_is_held(tmp_path / f"{p}.lock") for p in flat)
        # A killed holder's locks are free again, with no cleanup step.
        os.kill(procs[0].pid, signal.SIGKILL)
        procs[0].join(10)
        assert not any(lock_is_held(tmp_path / f"{p}.lock") for p in ports[0])
        mine.release()
        assert not any((tmp_path / f"{p}.lock").exists() for p in mine.ports)
    finally:
        for p in procs:
            p.kill()
            p.join(5)


def test_provider_registry_did_you_mean():
    assert "qemu" in provider_names()
    from desktop_env.errors import DesktopEnvError
    with pytest.raises(DesktopEnvError, match="did you mean 'qemu'"):
        create_provider("qemmu")


def test_port_lease_in_a_range(tmp_path):
    a = PortLease(tmp_path, 2, port_range=(5910, 6900))
    b = PortLease(tmp_path, 2, port_range=(5910, 6900))
    try:
        assert all(5910 <= p < 6900 for p in a.ports + b.ports)
        assert len(set(a.ports + b.ports)) == 4
    finally:
        a.release()
        b.release()
    with pytest.raises(OSError, match="in 5910..5910"):
        with PortLease(tmp_path, 1, port_range=(5910, 5911)):
            PortLease(tmp_path, 1, port_range=(5910, 5911))


def test_vm_status_reports_an_unreachable_vm_and_goes_on(tmp_path):
    """`desktop-env vm status` lists a VM it cannot attach to (run.py holds its QMP) instead of failing."""
    import subprocess
    import sys

    (tmp_path / "run" / "vms" / "held-by-someone").mkdir(parents=True)
    out = subprocess.run([sys.executable, "-m", "desktop_env", "vm", "status", "--cache-dir", str(tmp_path)],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert "held-by-someone" in out.stdout and "reachable  False" in out.stdout


def test_attach_to_a_monitor_another_client_holds_fails_in_bounded_time(tmp_path):
    """QEMU serves one QMP client at a time; a second attach must give up within its timeout
    (naming the cause) instead of waiting for the first client to leave, and succeed once it has."""
    import shutil
    import subprocess

    from desktop_env.errors import VMError
    from desktop_env.machine import _ForeignProcess

    qemu = shutil.which("qemu-system-x86_64")
    if qemu is None:
        pytest.skip("qemu-system-x86_64 is not installed")
    proc = subprocess.Popen([qemu, "-machine", "none", "-display", "none", "-nodefaults",
                             "-qmp", f"unix:{tmp_path}/qmp.sock,server=on,wait=off"])
    try:
        def attach(timeout_s):
            machine = QemuMachine.__new__(QemuMachine)
            machine.run_dir, machine.process, machine._qmp = tmp_path, _ForeignProcess(proc.pid), None
            machine._connect_qmp(timeout_s)
            return machine

        first = attach(10)
        assert first.qmp("query-status")["running"] is True
        started = time.monotonic()
        with pytest.raises(VMError, match="another process"):
            attach(2)
        assert time.monotonic() - started < 10
        first._close_qmp()
        assert attach(10).qmp("query-status")["running"] is True
    finally:
        proc.kill()
        proc.wait()


def test_stale_vm_cleanup_spares_a_folder_being_created(tmp_path):
    """Another process's VM folder between its mkdir and its owner lock is not stale (a verification's
    VM once vanished under a parallel run's sweep); one whose owner died is removed."""
    import fcntl

    from desktop_env.providers.qemu.provider import CLAIM_GRACE_S, cleanup_stale, vms_dir

    vms = vms_dir(tmp_path)
    vms.mkdir(parents=True, exist_ok=True)
    creating = vms / "office-creating"
    creating.mkdir()  # made, no lock and no state.json yet
    dead = vms / "office-dead"
    dead.mkdir()
    (dead / "owner.lock").touch()  # its owner took the lock, wrote state.json and died
    (dead / "state.json").write_text("{}")
    live = vms / "office-live"
    live.mkdir()
    (live / "state.json").write_text("{}")
    fd = os.open(live / "owner.lock", os.O_RDWR | os.O_CREAT)
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        assert cleanup_stale(tmp_path) == ["office-dead"]
        assert creating.is_dir() and live.is_dir() and not dead.exists()
        old = time.time() - CLAIM_GRACE_S - 5  # a creator that died before taking its lock
        os.utime(creating, (old, old))
        assert cleanup_stale(tmp_path) == ["office-creating"]
        assert live.is_dir()
    finally:
        os.close(fd)


def _migrating_machine(tmp_path, process, qmp) -> QemuMachine:
    machine = QemuMachine.__new__(QemuMachine)
    machine.run_dir, machine.process, machine._qmp, machine.command = tmp_path, process, qmp, ["qemu-system-x86_64"]
    (tmp_path / "qemu.log").write_text("qemu-system-x86_64: the stream was saved with x-ignore-shared\n")
    return machine


def test_qemu_exiting_between_the_liveness_check_and_a_migration_query_is_reported_as_its_exit(tmp_path):
    """QEMU exits when it refuses an incoming stream; when it does so after the loop saw it alive, the
    query meets a closed socket. That was a bare "QMP command query-status failed: Disconnected" (a
    clean-clone CI run of 2026-12-05); it is QEMU's exit, with its log."""
    proc = subprocess.Popen(["sleep", "60"])

    class DiesOnQuery:
        def cmd(self, command, **args):
            proc.kill()
            proc.wait()
            raise ConnectionResetError("Disconnected")

    machine = _migrating_machine(tmp_path, proc, DiesOnQuery())
    with pytest.raises(VMLaunchError, match="QEMU exited during migration") as err:
        machine._wait_migration(10, incoming=True)
    assert "x-ignore-shared" in err.value.log_tail


def test_a_failing_migration_query_while_qemu_lives_stays_a_qmp_error(tmp_path):
    proc = subprocess.Popen(["sleep", "60"])

    class Refuses:
        def cmd(self, command, **args):
            raise RuntimeError("the command is not known")

    try:
        machine = _migrating_machine(tmp_path, proc, Refuses())
        with pytest.raises(VMError, match="QMP command query-migrate failed: the command is not known") as err:
            machine._wait_migration(10)
        assert not isinstance(err.value, VMLaunchError)
    finally:
        proc.kill()
        proc.wait()
