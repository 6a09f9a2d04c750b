"""One QEMU process: command line, QMP control, ready-state save/restore, teardown.

This is the single place that knows QEMU's command line; the image builder (first
boot, ready state) and the QEMU provider (environments) both use it, so a ready state
is always restored into exactly the device configuration that saved it.
"""
from __future__ import annotations

import logging
import os
import shutil
import signal
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from desktop_env.errors import HostToolMissing, VMError, VMLaunchError

log = logging.getLogger(__name__)

#: Bumped whenever the guest-visible device configuration or the saved states' form changes: a
#: ready state saved by one ABI cannot be restored into another, so image hashes include it
#: (with the versioned machine type, ``vmstate.machine_abi``). 2: RAM in a mapped file, and a vmgenid device.
MACHINE_ABI = "q35-virtio-vga-std-2-mapped-ram"

GUEST_SERVER_PORT = 5000
GUEST_CDP_PORT = 9222
#: Limit for loading a saved VM state (QemuMachine.start); it takes 1-5 s on a quiet host.
RESTORE_TIMEOUT_S = 180.0


def find_qemu() -> str:
    """Path of ``qemu-system-x86_64``; raises HostToolMissing naming the Debian package."""
    path = shutil.which("qemu-system-x86_64")
    if not path:
        raise HostToolMissing("qemu-system-x86_64", "qemu-system-x86", "run the VM")
    return path


def kvm_usable() -> tuple[bool, str]:
    """Whether hardware acceleration can be used, and why (or why not).

    KVM is used only when ``/dev/kvm`` opens read-write AND the CPU advertises vmx or
    svm: some nested setups expose a ``/dev/kvm`` that hangs standard guest kernels.
    """
    try:
        fd = os.open("/dev/kvm", os.O_RDWR)
        os.close(fd)
    except OSError as exc:
        return False, f"/dev/kvm cannot be opened ({exc.strerror})"
    try:
        flags = Path("/proc/cpuinfo").read_text()
    except OSError:
        flags = ""
    if " vmx" not in flags and " svm" not in flags:
        return False, "/dev/kvm exists but the CPU shows no vmx/svm flag (nested or paravirtual KVM)"
    return True, "/dev/kvm opens and the CPU has hardware virtualization"


def resolve_accel(accel: str) -> str:
    """Turn ``auto|kvm|tcg`` into ``kvm`` or ``tcg``, logging the reason for ``auto``."""
    if accel not in ("auto", "kvm", "tcg"):
        raise ValueError(f"accel must be auto, kvm or tcg, not {accel!r}")
    if accel != "auto":
        return accel
    ok, why = kvm_usable()
    chosen = "kvm" if ok else "tcg"
    log.info("acceleration: %s (%s)", chosen, why)
    return chosen


@dataclass
class VMSpec:
    """Everything that defines a VM's hardware and boot.

    Attributes:
        disk: the qcow2 the guest writes to (an overlay for environments).
        kernel, initrd, cmdline: direct kernel boot; all None to boot from the disk (BIOS).
        memory_mb, cpus: guest RAM and vCPUs.
        screen: (width, height) of the virtual display.
        accel: ``auto``, ``kvm`` or ``tcg``.
        forwards: guest TCP port -> host loopback port.
        allow_internet: when False the guest can reach nothing but its forwards.
        vnc: expose a VNC server on 127.0.0.1 (display number from the ports).
        machine_type: QEMU's machine type; a versioned one (``pc-q35-7.2``, see
            ``vmstate.qemu_identity``) keeps saved states loadable under a newer QEMU.
        ram_file: back the guest's RAM with this file instead of anonymous memory (a mapped
            state's RAM, or the file a VM that will save a mapped state writes its RAM to).
        ram_shared: with ``ram_file``: True maps it shared (guest writes reach the file: a VM
            that will save a mapped state); False maps it privately, copy-on-write (a mapped
            restore: the file never changes and pages load on first touch).
    """

    disk: Path
    kernel: Path | None = None
    initrd: Path | None = None
    cmdline: str = ""
    memory_mb: int = 3072
    cpus: int = 2
    screen: tuple[int, int] = (1920, 1080)
    accel: str = "auto"
    forwards: dict[int, int] = field(default_factory=dict)
    allow_internet: bool = False
    vnc_port: int | None = None
    disk_format: str = "qcow2"
    machine_type: str = "q35"
    ram_file: Path | None = None
    ram_shared: bool = False

    def __post_init__(self):
        self.disk = Path(self.disk)
        if self.memory_mb < 256:
            raise ValueError(f"memory_mb={self.memory_mb} is too small (at least 256)")
        if self.cpus < 1:
            raise ValueError(f"cpus={self.cpus} must be at least 1")
        if self.vnc_port is not None and not 5900 <= self.vnc_port <= 65535:
            raise ValueError(f"vnc_port={self.vnc_port} must be in 5900..65535")
        if self.ram_file is not None:
            self.ram_file = Path(self.ram_file)
        elif self.ram_shared:
            raise ValueError("ram_shared needs a ram_file")


def build_command(spec: VMSpec, accel: str, run_dir: Path, incoming: str | None = None) -> list[str]:
    """The QEMU command line for ``spec`` (``accel`` already resolved to kvm/tcg)."""
    width, height = spec.screen
    cmd = [
        find_qemu(),
        "-name", "desktop-env",
        "-machine", f"{spec.machine_type},accel={accel}" + (",memory-backend=pc.ram" if spec.ram_file else ""),
        "-cpu", "host" if accel == "kvm" else "max",
        "-smp", str(spec.cpus),
        "-m", str(spec.memory_mb),
        "-nodefaults", "-no-user-config",
        "-rtc", "base=utc",
        "-display", "none",
        # std VGA (bochs-drm in the guest): no hardware cursor, so Xorg draws the cursor
        # into the framebuffer and screendump/VNC show it.
        "-device", f"VGA,xres={width},yres={height},vgamem_mb=32,edid=on",
        "-device", "qemu-xhci,id=usb", "-device", "usb-tablet,bus=usb.0",
        "-device", "virtio-rng-pci",
        # A new VM generation ID at each start: the guest kernel (5.18+) reseeds its random number generator
        # when a restored state sees another ID, so environments restored from one state draw different
        # random numbers from their first read.
        "-device", "vmgenid",
        "-drive", f"file={spec.disk},if=none,id=root,format={spec.disk_format},cache=writeback,discard=unmap",
        "-device", "virtio-blk-pci,drive=root",
        "-serial", f"file:{run_dir / 'console.log'}",
        "-qmp", f"unix:{run_dir / 'qmp.sock'},server=on,wait=off",
        "-pidfile", str(run_dir / "qemu.pid"),
    ]
    if spec.ram_file:
        # prealloc stays off: preallocating would read every page of a mapped state's file.
        cmd += ["-object", f"memory-backend-file,id=pc.ram,size={spec.memory_mb}M,"
                           f"mem-path={_option_value(str(spec.ram_file))},share={'on' if spec.ram_shared else 'off'},"
                           "prealloc=off"]
    netdev = "user,id=net0"
    if not spec.allow_internet:
        netdev += ",restrict=on"
    for guest_port, host_port in sorted(spec.forwards.items()):
        netdev += f",hostfwd=tcp:127.0.0.1:{host_port}-:{guest_port}"
    cmd += ["-netdev", netdev, "-device", "virtio-net-pci,netdev=net0"]
    if spec.vnc_port is not None:
        cmd += ["-vnc", f"127.0.0.1:{spec.vnc_port - 5900}"]
    if spec.kernel:
        cmd += ["-kernel", str(spec.kernel)]
        if spec.initrd:
            cmd += ["-initrd", str(spec.initrd)]
        if spec.cmdline:
            cmd += ["-append", spec.cmdline]
    if incoming:
        cmd += ["-incoming", incoming]
    return cmd


class QemuMachine:
    """A running QEMU process with its QMP connection.

    Use as a context manager, or call :meth:`start` and :meth:`stop`. ``run_dir`` holds
    the QMP socket, the pid file, the serial console log and ``qemu.log`` (the full
    command line followed by QEMU's own output).
    """

    def __init__(self, spec: VMSpec, run_dir: Path, incoming_state: Path | None = None,
                 die_with_parent: bool = False, incoming_mapped: bool = False):
        if incoming_mapped and (spec.ram_file is None or incoming_state is None):
            raise ValueError("a mapped restore (incoming_mapped) needs incoming_state and the spec's ram_file")
        self.spec = spec
        self.die_with_parent = die_with_parent
        self.run_dir = Path(run_dir)
        self.incoming_state = incoming_state
        self.incoming_mapped = incoming_mapped
        self.accel: str | None = None
        self.command: list[str] = []
        self.process: subprocess.Popen | None = None
        self._qmp = None

    # -- lifetime -----------------------------------------------------------------
    def start(self, timeout_s: float = 30.0, restore_timeout_s: float = RESTORE_TIMEOUT_S,
              resume: bool = True) -> None:
        """Launch QEMU and connect QMP. With ``incoming_state`` the saved RAM state is
        loaded and the guest resumed; otherwise the guest boots.

        With ``incoming_mapped`` the stream holds only the device state and the guest's RAM
        is the spec's ``ram_file``, mapped rather than read (see ``vmstate``).

        Args:
            timeout_s: limit for QEMU's QMP socket to answer.
            restore_timeout_s: limit for loading ``incoming_state`` (a few seconds on a quiet
                host; an office image's 715 MiB state took over 30 s once on a loaded one).
            resume: False leaves a loaded guest paused (to save it again in another form).

        Raises:
            VMLaunchError: QEMU exited or QMP did not answer within ``timeout_s``.
            VMError: the state did not load within ``restore_timeout_s``.
        """
        self.run_dir.mkdir(parents=True, exist_ok=True)
        for name in ("qmp.sock", "qemu.pid"):
            (self.run_dir / name).unlink(missing_ok=True)
        self.accel = resolve_accel(self.spec.accel)
        if self.incoming_mapped:
            size, wanted = self.spec.ram_file.stat().st_size, self.spec.memory_mb << 20
            if size != wanted:
                raise VMError(f"the RAM file {self.spec.ram_file} holds {size >> 20} MiB but the VM is given "
                              f"{self.spec.memory_mb} MiB: the state was saved with another memory size")
        incoming = "defer" if self.incoming_state else None
        self.command = build_command(self.spec, self.accel, self.run_dir, incoming)
        log_path = self.run_dir / "qemu.log"
        with open(log_path, "w") as log_file:
            log_file.write(" ".join(self.command) + "\n")
            log_file.flush()
            log.debug("starting QEMU: %s", " ".join(self.command))
            self.process = subprocess.Popen(
                self.command, stdin=subprocess.DEVNULL, stdout=log_file, stderr=subprocess.STDOUT,
                start_new_session=True, preexec_fn=_die_with_parent if self.die_with_parent else None)
        try:
            self._connect_qmp(timeout_s)
            if self.incoming_state:
                self._restore(self.incoming_state, restore_timeout_s, resume)
        except BaseException:
            self.kill()
            raise

    def _connect_qmp(self, timeout_s: float) -> None:
        """Connect to QEMU's QMP socket within ``timeout_s``.

        QEMU serves one QMP client at a time: a second client's connection is accepted by the
        kernel but gets no greeting until the first leaves. So the greeting is awaited here with
        a deadline (the library's own connect would wait for ever) and then handed over.
        """
        from qemu.qmp.legacy import QEMUMonitorProtocol

        sock = self.run_dir / "qmp.sock"
        deadline = time.monotonic() + timeout_s
        last_error: Exception | None = None
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise VMLaunchError("QEMU exited during start", self.command,
                                    self.process.returncode, self.log_tail())
            if sock.exists():
                raw = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                try:
                    raw.settimeout(max(0.1, deadline - time.monotonic()))
                    raw.connect(str(sock))
                    _read_greeting(raw)
                    raw.settimeout(None)
                    qmp = QEMUMonitorProtocol(raw)
                    qmp.connect(negotiate=False)
                    qmp.settimeout(60.0)
                    qmp.cmd("qmp_capabilities")
                    self._qmp = qmp
                    return
                except TimeoutError as exc:  # connected, but another client holds the monitor
                    raw.close()
                    raise VMError(f"QMP socket {sock} did not greet within {timeout_s:.0f} s: another "
                                  "process (run.py, a script, a test) is controlling this VM") from exc
                except Exception as exc:  # socket not accepting yet
                    last_error = exc
                    raw.close()
            time.sleep(0.05)
        raise VMLaunchError(f"QMP socket {sock} did not answer within {timeout_s:.0f} s ({last_error})",
                            self.command, None, self.log_tail())

    def _restore(self, state: Path, timeout_s: float, resume: bool = True) -> None:
        # `exec:cat FILE` streams the saved RAM/device state into the paused VM.
        started = time.monotonic()
        # Both ends must agree on x-ignore-shared (QEMU checks it): on for a mapped state's stream.
        self._ignore_shared(self.incoming_mapped)
        self.qmp("migrate-incoming", uri=f"exec:cat {_shell_quote(str(state))}")
        self._wait_migration(timeout_s, incoming=True)
        elapsed = time.monotonic() - started
        if elapsed > 15:
            log.warning("loading the VM state %s took %.0f s (a loaded host?)", state.name, elapsed)
        if resume:
            self.qmp("cont")

    def _ignore_shared(self, on: bool) -> None:
        """Set migration's ``x-ignore-shared``: a shared file-backed RAM is left out of the stream."""
        self.qmp("migrate-set-capabilities", capabilities=[{"capability": "x-ignore-shared", "state": on}])

    def _wait_migration(self, timeout_s: float, incoming: bool = False) -> dict:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise self._exited_during_migration()
            if incoming:
                status = self._migration_qmp("query-status")
                if status.get("status") not in ("inmigrate", "prelaunch"):
                    if status.get("status") in ("paused", "postmigrate", "running"):
                        return status
                    raise VMError(f"restore ended in state {status}")
            else:
                info = self._migration_qmp("query-migrate")
                state = info.get("status")
                if state == "completed":
                    return info
                if state in ("failed", "cancelled"):
                    raise VMError(f"saving the VM state failed: {info}")
            time.sleep(0.05)
        tail = self.log_tail().strip()
        raise VMError(f"VM state {'restore' if incoming else 'save'} did not finish within {timeout_s:.0f} s"
                      + (f"; QEMU's log ends:\n{tail}" if tail else ""))

    def _migration_qmp(self, command: str) -> dict:
        """``command`` while a migration runs: QEMU exits when a restore fails (a stream it refuses), and
        when that happens between the liveness check and the command, the command sees only a closed
        socket; that is QEMU's exit, reported with its log, not a QMP error."""
        try:
            return self.qmp(command)
        except VMError as err:
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass
            if self.process.poll() is None:
                raise  # QEMU lives: the QMP error itself
            raise self._exited_during_migration() from err

    def _exited_during_migration(self) -> VMLaunchError:
        return VMLaunchError("QEMU exited during migration", self.command, self.process.returncode,
                             self.log_tail())

    def qmp(self, command: str, **args):
        """Run one QMP command and return its result; raises VMError on failure."""
        if self._qmp is None:
            raise VMError("QMP is not connected (VM not started)")
        try:
            return self._qmp.cmd(command, **args)
        except Exception as exc:
            raise VMError(f"QMP command {command} failed: {exc}") from exc

    def is_running(self) -> bool:
        """Whether the QEMU process is alive."""
        return self.process is not None and self.process.poll() is None

    @property
    def pid(self) -> int | None:
        return self.process.pid if self.process else None

    def save_state(self, path: Path, timeout_s: float = 300.0, mapped: bool = False) -> dict:
        """Pause the guest and write its RAM and device state to ``path``.

        With ``mapped`` the RAM stays in the spec's shared ``ram_file`` and ``path`` gets only
        the device state (a mapped state: the pair restores by mapping the file, see ``vmstate``).
        The guest stays paused afterwards; the caller quits QEMU and freezes the disk.
        """
        if mapped and not (self.spec.ram_file and self.spec.ram_shared):
            raise VMError("a mapped save needs a VM whose RAM is a shared file (VMSpec ram_file, ram_shared=True)")
        path = Path(path)
        tmp = path.with_name(path.name + ".partial")
        tmp.unlink(missing_ok=True)
        self.qmp("stop")
        self._ignore_shared(mapped)
        # Uncapped bandwidth: the default 128 MiB/s would make a multi-GiB save slow.
        self.qmp("migrate-set-parameters", **{"max-bandwidth": 1 << 40})
        self.qmp("migrate", uri=f"exec:cat > {_shell_quote(str(tmp))}")
        info = self._wait_migration(timeout_s)
        os.replace(tmp, path)
        return info

    def screendump(self, path: Path) -> Path:
        """Host-side screenshot of the VM's display as PNG (no guest CPU spent)."""
        self.qmp("screendump", filename=str(path), format="png")
        return Path(path)

    def stop(self, soft_timeout_s: float = 10.0) -> None:
        """Stop softly (QMP ``quit``: QEMU flushes its disks and exits), then hard (SIGKILL)."""
        if self.process is None:
            return
        try:
            if self.is_running() and self._qmp is not None:
                try:
                    self._qmp.cmd("quit")
                except Exception:
                    pass
            try:
                self.process.wait(timeout=soft_timeout_s)
            except subprocess.TimeoutExpired:
                log.warning("QEMU pid %s did not quit within %.0f s; killing it", self.process.pid, soft_timeout_s)
                self.kill()
        finally:
            self._close_qmp()

    def kill(self) -> None:
        """SIGKILL the QEMU process group and reap it."""
        if self.process is not None and self.process.poll() is None:
            try:
                os.killpg(self.process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                log.error("QEMU pid %s survived SIGKILL", self.process.pid)
        self._close_qmp()

    def _close_qmp(self) -> None:
        if self._qmp is not None:
            try:
                self._qmp.close()
            except Exception:
                pass
            self._qmp = None

    def log_tail(self, lines: int = 30) -> str:
        """The last lines of qemu.log (and of the serial console, if any)."""
        out = []
        for name in ("qemu.log", "console.log"):
            path = self.run_dir / name
            if path.exists():
                text = path.read_text(errors="replace").splitlines()[-lines:]
                out.append(f"--- {name} ---\n" + "\n".join(text))
        return "\n".join(out)

    @classmethod
    def attach(cls, spec: VMSpec, run_dir: Path, pid: int, timeout_s: float = 10.0) -> "QemuMachine":
        """Take control of an already running QEMU (e.g. a detached VM) through its QMP socket."""
        machine = cls(spec, run_dir)
        machine.process = _ForeignProcess(pid)
        machine.accel = None
        machine._connect_qmp(timeout_s)
        return machine

    def __enter__(self) -> "QemuMachine":
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()


def _die_with_parent() -> None:
    """In the child before exec: SIGKILL this process when the thread that started it dies.

    Used for short-lived machines (an image's first boot) whose owner may be killed
    outright, and for environments whose provider asks for it (``die_with_owner``: a Ray
    actor's VMs); other environments' VMs rely on stale cleanup, since they may be started
    from worker threads that end before the VM should.
    """
    import ctypes

    PR_SET_PDEATHSIG = 1
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


class _ForeignProcess:
    """The subset of ``Popen`` used above, for a QEMU this process did not start."""

    def __init__(self, pid: int):
        self.pid = pid
        self.returncode = None

    def poll(self):
        try:
            os.kill(self.pid, 0)
        except ProcessLookupError:
            self.returncode = -1
            return self.returncode
        return None

    def wait(self, timeout=None):
        deadline = time.monotonic() + (timeout if timeout is not None else 1e9)
        while self.poll() is None:
            if time.monotonic() > deadline:
                raise subprocess.TimeoutExpired("qemu", timeout)
            time.sleep(0.05)
        return self.returncode


def screen_digest(png: Path) -> tuple[str, int]:
    """(hash of the pixels, number of distinct colours in a 96x54 thumbnail) of a PNG."""
    import hashlib

    from PIL import Image

    with Image.open(png) as img:
        rgb = img.convert("RGB")
        colours = len(rgb.resize((96, 54)).getcolors(maxcolors=96 * 54) or [])
        return hashlib.sha256(rgb.tobytes()).hexdigest(), colours


def _read_greeting(raw: socket.socket) -> bytes:
    """The QMP greeting line from a freshly connected socket (raises TimeoutError if none comes)."""
    data = b""
    while not data.endswith(b"\n"):
        chunk = raw.recv(4096)
        if not chunk:
            raise ConnectionError("QMP socket closed before its greeting")
        data += chunk
    if b'"QMP"' not in data:
        raise ConnectionError(f"not a QMP greeting: {data[:80]!r}")
    return data


def wait_settled(machine: "QemuMachine", shot: Path, timeout_s: float = 240.0, stable_n: int = 4,
                 interval_s: float = 1.5) -> bool:
    """Wait until the screen shows something (not one flat colour) and stops changing.

    Uses host-side screendumps only. Leaves the last frame in ``shot``; returns False
    (after logging a warning) if the screen never settled within ``timeout_s``.
    """
    deadline = time.monotonic() + timeout_s
    previous, stable = None, 0
    tmp = machine.run_dir / "settle.png"
    while time.monotonic() < deadline:
        machine.screendump(tmp)
        data, colours = screen_digest(tmp)
        stable = stable + 1 if data == previous and colours >= 16 else 0
        previous = data
        if stable >= stable_n:
            shutil.copy(tmp, shot)
            return True
        time.sleep(interval_s)
    log.warning("the screen kept changing (or stayed blank) for %.0f s; going on", timeout_s)
    shutil.copy(tmp, shot)
    return False


def _option_value(text: str) -> str:
    """``text`` as a value inside a QEMU ``key=value,...`` option (a comma is doubled)."""
    return text.replace(",", ",,")


def _shell_quote(text: str) -> str:
    import shlex
    return shlex.quote(text)


def create_overlay(backing: Path, overlay: Path, backing_format: str = "qcow2") -> Path:
    """Create a copy-on-write qcow2 ``overlay`` over the read-only ``backing`` disk."""
    qemu_img = shutil.which("qemu-img")
    if not qemu_img:
        raise HostToolMissing("qemu-img", "qemu-utils", "create disk overlays")
    overlay.unlink(missing_ok=True)
    result = subprocess.run(
        [qemu_img, "create", "-q", "-f", "qcow2", "-F", backing_format, "-b", str(Path(backing).resolve()),
         str(overlay)], capture_output=True, text=True)
    if result.returncode != 0:
        raise VMLaunchError(f"qemu-img could not create overlay {overlay}: {result.stderr.strip()}")
    return overlay


def rebase_unsafe(overlay: Path, backing: str, backing_format: str = "qcow2") -> None:
    """Point ``overlay`` at another path of the same backing file (``qemu-img rebase -u``: no data
    is copied); a relative ``backing`` is resolved from the overlay's folder."""
    qemu_img = shutil.which("qemu-img")
    if not qemu_img:
        raise HostToolMissing("qemu-img", "qemu-utils", "rebase disk overlays")
    result = subprocess.run([qemu_img, "rebase", "-u", "-F", backing_format, "-b", backing, str(overlay)],
                            capture_output=True, text=True)
    if result.returncode != 0:
        raise VMLaunchError(f"qemu-img could not rebase {overlay} onto {backing}: {result.stderr.strip()}")


__all__ = ["VMSpec", "rebase_unsafe", "QemuMachine", "build_command", "wait_settled", "screen_digest", "resolve_accel", "kvm_usable", "create_overlay",
           "MACHINE_ABI", "GUEST_SERVER_PORT", "GUEST_CDP_PORT"]
