"""The default provider: one QEMU process per environment, restored from the image's ready state."""
from __future__ import annotations

import atexit
import fcntl
import json
import logging
import os
import re
import shutil
import signal
import threading
import time
import uuid
import weakref
from pathlib import Path
from typing import TYPE_CHECKING

import requests

from desktop_env.errors import SnapshotError, VMError
from desktop_env.image.current import resolve
from desktop_env.image.store import ImageInfo, check_restorable
from desktop_env.paths import ports_dir, runtime_dir
from desktop_env.providers.base import Endpoint, Provider, register_provider, set_guest_clock, wait_for_server
from desktop_env.ports import PortLease, lock_is_held
from desktop_env.machine import QemuMachine, VMSpec, create_overlay, rebase_unsafe as _rebase_unsafe
from desktop_env.vmstate import SavedState, full_copy, full_copy_path, restore_mode

if TYPE_CHECKING:  # pragma: no cover
    from desktop_env.image.states import WarmState

log = logging.getLogger(__name__)

INIT_STATE = "init_state"

# VMs this process owns, stopped at interpreter exit if the caller forgot to (detached
# VMs are not in here). A process killed outright is covered by cleanup_stale().
_LIVE: "weakref.WeakSet[QemuProvider]" = weakref.WeakSet()


@atexit.register
def _stop_live_vms() -> None:
    for vm in list(_LIVE):
        try:
            vm.stop()
        except Exception:  # each teardown on its own
            log.exception("stopping VM %s at exit", vm.vm_id)
_SNAPSHOT_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")


def vms_dir(cache_dir: Path | None = None) -> Path:
    """Folder of per-VM runtime folders (overlay, sockets, logs, owner lock)."""
    path = runtime_dir(cache_dir) / "vms"
    path.mkdir(parents=True, exist_ok=True)
    return path


#: A VM folder without state.json younger than this is being created by another process (it has
#: not taken its owner lock yet), not left behind: cleanup_stale leaves it alone.
CLAIM_GRACE_S = 120.0


def cleanup_stale(cache_dir: Path | None = None) -> list[str]:
    """Remove VMs whose owning process died (crash, kill -9), killing their QEMU.

    VMs recorded as detached (started by ``desktop-env vm start``) are left alone, and so is a
    folder another process is creating right now (see ``CLAIM_GRACE_S``).
    Returns the ids cleaned up.
    """
    cleaned = []
    for vm_dir in sorted(vms_dir(cache_dir).iterdir()):
        if not vm_dir.is_dir():
            continue
        try:
            state = json.loads((vm_dir / "state.json").read_text())
        except (OSError, ValueError):
            state = {}
        if state.get("detached") and _qemu_alive(vm_dir):
            continue
        if lock_is_held(vm_dir / "owner.lock"):
            continue
        if not (vm_dir / "state.json").exists() and time.time() - vm_dir.stat().st_mtime < CLAIM_GRACE_S:
            continue  # being created: its owner makes the folder, then takes the lock, then writes state.json
        _kill_qemu(vm_dir)
        shutil.rmtree(vm_dir, ignore_errors=True)
        cleaned.append(vm_dir.name)
        log.info("cleaned up stale VM %s (its owner process is gone)", vm_dir.name)
    return cleaned


def _qemu_pid(vm_dir: Path) -> int | None:
    try:
        pid = int((vm_dir / "qemu.pid").read_text().strip())
    except (OSError, ValueError):
        return None
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace")
    except OSError:
        return None
    # Only a QEMU whose command line points into this VM's folder is ours.
    return pid if "qemu" in cmdline and str(vm_dir) in cmdline else None


def _qemu_alive(vm_dir: Path) -> bool:
    return _qemu_pid(vm_dir) is not None


def _kill_qemu(vm_dir: Path) -> None:
    pid = _qemu_pid(vm_dir)
    if pid is None:
        return
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and Path(f"/proc/{pid}").exists():
        time.sleep(0.05)


class _FixedPorts:
    """Ports of an attached VM (reserved by whoever started it)."""

    def __init__(self, ports: list[int]):
        self.ports = ports

    def release(self) -> None:
        pass


@register_provider("qemu")
class QemuProvider(Provider):
    """An environment's VM: a QEMU process on a copy-on-write overlay of the image's frozen disk.

    ``start`` and ``revert_to_snapshot("init_state")`` start a fresh QEMU that loads the
    image's saved RAM state (``-incoming``) on a new overlay, so a reset costs about a
    second and leaves nothing of the previous episode. Custom snapshots (``savevm``)
    live in the current overlay and last until the next ``init_state`` revert.

    Args:
        image: an :class:`ImageInfo`, an image name, a profile name, or a path to an image folder.
        path_to_vm: alias of ``image`` for compatibility with other suites.
        cache_dir: cache directory (images and runtime state).
        accel: ``auto`` (KVM only when usable), ``kvm`` or ``tcg``.
        screen_size: (width, height) the caller expects; must match the image's.
        allow_internet: let the guest open outbound connections (isolated by default).
        detached: leave the VM running when this process exits (``desktop-env vm start``).
        memory_mb, cpus, server_token: only for a user-supplied disk file (``path_to_vm`` pointing
            at a qcow2): the VM's RAM and vCPUs, and the token its in-VM server wants (None for
            servers of other suites). Such a disk boots from its own bootloader once and its
            init_state is saved on that first use (see ``foreign.py``).
        vm_id: name of the runtime folder (default: random).
        die_with_owner: QEMU gets SIGKILL when the thread that started it dies (Linux's parent-death signal),
            for an owner that can be killed outright and is never followed by a cleanup of its own (a Ray
            actor whose node dies). Only for an owner whose VMs are all started from one thread that lives
            as long as they should (a process's main thread); the default leaves VMs of a killed process to
            the next start's stale cleanup.
        ready_timeout_s: how long to wait for the in-VM server after a restore.
        restore: ``map`` (default) restores a mapped state by mapping its RAM file copy-on-write;
            ``copy`` loads it as one full stream instead (the RAM read and copied, as before mapped
            states; the stream is made once beside the state). Default from ``DESKTOP_ENV_RESTORE``.
            A state saved before mapped states is always copied. See ``vmstate``.
    """

    images = True
    warm_states = True
    local_memory = True


    def __init__(self, image: ImageInfo | str | None = None, path_to_vm: str | None = None,
                 cache_dir: Path | None = None, accel: str = "auto", screen_size: tuple[int, int] | None = None,
                 allow_internet: bool = False, detached: bool = False, vm_id: str | None = None,
                 ready_timeout_s: float = 60.0, headless: bool = True, memory_mb: int = 4096, cpus: int = 2,
                 server_token: str | None = None, restore: str | None = None, die_with_owner: bool = False,
                 **_ignored):
        ref = image if image is not None else (path_to_vm or "base")
        if isinstance(ref, ImageInfo):
            self.image = ref
        elif Path(str(ref)).expanduser().is_file():
            # A user-supplied disk (e.g. another suite's qcow2): BIOS boot; init_state on first use.
            from desktop_env.providers.qemu.foreign import prepare_foreign_image

            self.image = prepare_foreign_image(
                ref, cache_dir, accel=accel, screen=tuple(screen_size or (1920, 1080)),
                memory_mb=memory_mb, cpus=cpus, token=server_token)
        else:
            self.image = resolve(str(ref), cache_dir)
        check_restorable(self.image, screen_size)
        self.cache_dir = cache_dir
        self.accel = accel
        self.allow_internet = allow_internet
        self.detached = detached
        if die_with_owner and detached:
            raise ValueError("die_with_owner and detached contradict each other: a detached VM outlives its owner")
        self.die_with_owner = die_with_owner
        self.ready_timeout_s = ready_timeout_s
        self.restore_mode = restore_mode(restore)
        #: Seconds of the last restore's parts: ``qemu_s`` (process start to guest running), ``server_s``
        #: (to the in-VM server's first answer), ``clock_s``; and ``ram`` (``mapped`` or ``copied``).
        self.last_restore: dict = {}
        self.vm_id = vm_id or f"{self.image.profile}-{uuid.uuid4().hex[:8]}"
        self.dir = vms_dir(cache_dir) / self.vm_id
        self.machine: QemuMachine | None = None
        #: What the VM was last restored to: ``init_state`` or a warm state's name.
        self.state_name: str | None = None
        self._ports: PortLease | None = None
        self._owner_fd: int | None = None
        self._shot_lock = threading.Lock()
        self._session = requests.Session()
        # No pooled connections: a snapshot restore would leave them half-open (see PythonController).
        self._session.headers["Connection"] = "close"
        self._session.trust_env = False

    @classmethod
    def attach(cls, vm_id: str, cache_dir: Path | None = None) -> "QemuProvider":
        """Control a VM started elsewhere (``desktop-env vm start``) through its runtime folder.

        Raises:
            VMError: no such VM, or its QEMU is not running.
        """
        vm_dir = vms_dir(cache_dir) / vm_id
        try:
            state = json.loads((vm_dir / "state.json").read_text())
        except (OSError, ValueError) as exc:
            known = ", ".join(sorted(d.name for d in vms_dir(cache_dir).iterdir() if d.is_dir())) or "none"
            raise VMError(f"no VM {vm_id!r} (running VMs: {known})") from exc
        pid = _qemu_pid(vm_dir)
        if pid is None:
            raise VMError(f"VM {vm_id!r} is not running (its QEMU is gone); remove it with: desktop-env vm stop {vm_id}")
        self = cls(image=ImageInfo.load(Path(state["image"])), cache_dir=cache_dir, vm_id=vm_id,
                   detached=state.get("detached", False), allow_internet=state.get("allow_internet", False),
                   accel=state.get("accel", "auto"))
        self._ports = _FixedPorts([state["server_port"], state["cdp_port"]])
        self._vnc_port = state["vnc_port"]
        self.machine = QemuMachine.attach(self._spec(vm_dir / "overlay.qcow2"), vm_dir, pid)
        self.machine.accel = state.get("accel_resolved")
        self.state_name = state.get("state")
        return self

    def detach(self) -> None:
        """Leave the VM running (recorded as detached) and drop this process's hold on it."""
        self.detached = True
        _LIVE.discard(self)
        self._write_state()
        if self.machine is not None:
            self.machine._close_qmp()
        if self._owner_fd is not None:
            os.close(self._owner_fd)
            self._owner_fd = None

    # -- addresses ------------------------------------------------------------------
    @property
    def server(self) -> Endpoint:
        self._require_ports()
        return Endpoint("127.0.0.1", self._ports.ports[0])

    @property
    def cdp(self) -> Endpoint:
        self._require_ports()
        return Endpoint("127.0.0.1", self._ports.ports[1])

    @property
    def vnc(self) -> Endpoint:
        self._require_ports()
        return Endpoint("127.0.0.1", self._vnc_port)

    @property
    def token(self) -> str | None:
        return self.image.token

    def _require_ports(self) -> None:
        if self._ports is None:
            raise VMError("the VM is not started")

    # -- lifetime -------------------------------------------------------------------
    def start(self) -> None:
        """Restore ``init_state`` into a fresh QEMU; returns when the server answers."""
        if self.machine is not None and self.machine.is_running():
            return
        if self._owner_fd is not None:  # started before, its QEMU stopped since (a capture): restore, keep the lease
            self._restore_init_state()
            return
        cleanup_stale(self.cache_dir)
        self.dir.mkdir(parents=True, exist_ok=True)
        self._owner_fd = os.open(self.dir / "owner.lock", os.O_RDWR | os.O_CREAT, 0o644)
        fcntl.flock(self._owner_fd, fcntl.LOCK_EX)
        self._ports = PortLease(ports_dir(self.cache_dir), 2)
        self._vnc_port = self._reserve_vnc()
        self._write_state()
        if not self.detached:
            _LIVE.add(self)
        try:
            self._restore_init_state()
        except BaseException:
            self.stop()
            raise

    def _reserve_vnc(self) -> int:
        # VNC needs a port >= 5900 (QEMU takes a display number); leased like the others.
        self._vnc_lease = PortLease(ports_dir(self.cache_dir), 1, port_range=(5910, 6900))
        return self._vnc_lease.ports[0]

    def _spec(self, disk: Path) -> VMSpec:
        meta = self.image.meta
        return self.image.vm_spec(
            disk, accel=self._state_accel(),
            forwards={meta["server_port"]: self._ports.ports[0], meta["cdp_port"]: self._ports.ports[1]},
            allow_internet=self.allow_internet, vnc_port=self._vnc_port)

    def _state_accel(self) -> str:
        from desktop_env.machine import resolve_accel

        saved = self.image.meta["ready_state"]["accel"]
        wanted = resolve_accel(self.accel)
        if wanted != saved:
            raise SnapshotError(
                f"image {self.image.name} saved its ready state under {saved}, but this host runs {wanted}; "
                f"a saved state only restores under the accelerator that saved it: rebuild the image on this "
                f"host (desktop-env image build --profile {self.image.profile} --force) or pass accel='{saved}'")
        return saved

    def _restore_init_state(self) -> float:
        return self._restore(None)

    def _restore(self, state: "WarmState | None") -> float:
        """A fresh QEMU on a new overlay over the image's disk (or the state's disk layer), loading
        ``init_state`` (or the state's RAM file)."""
        t0 = time.monotonic()
        if self.machine is not None:
            self.machine.kill()
        backing = state.disk_layer if state is not None else self.image.file("disk")
        saved = self._saved_state(state, backing)
        overlay = create_overlay(backing, self.dir / "overlay.qcow2")
        self.machine = saved.machine(self._spec(overlay), self.dir, die_with_parent=self.die_with_owner)
        self.machine.start()
        t1 = time.monotonic()
        self.state_name = state.name if state is not None else INIT_STATE
        self._write_state()
        self.wait_server(self.ready_timeout_s)
        t2 = time.monotonic()
        self._set_guest_clock()
        elapsed = time.monotonic() - t0
        self.last_restore = {"qemu_s": round(t1 - t0, 3), "server_s": round(t2 - t1, 3),
                             "clock_s": round(time.monotonic() - t2, 3), "ram": "mapped" if saved.mapped else "copied"}
        log.info("VM %s at %s in %.2f s", self.vm_id, self.state_name, elapsed)
        return elapsed

    def _saved_state(self, state: "WarmState | None", backing: Path) -> SavedState:
        """What a restore of ``state`` (None: init_state) loads: the mapped pair, or one full stream."""
        saved = SavedState(state.stream_file, state.ram_file) if state is not None else self.image.saved_state()
        if not saved.mapped:
            log.info("%s is a full stream (saved before mapped states): its RAM is read and copied, not mapped; "
                     "rebuild it to restore by mapping", saved.stream)
        elif self.restore_mode == "copy":
            folder = state.path if state is not None else self.image.path
            spec = self.image.vm_spec(Path("/dev/null"), accel=self._state_accel())
            saved = SavedState(full_copy(saved, spec, backing, full_copy_path(saved, folder)))
        return saved

    # -- warm states ----------------------------------------------------------------
    def restore_state(self, state: "WarmState") -> float:
        """Restore a built warm state of this VM's image on a fresh overlay (nothing of the
        previous episode stays); returns the seconds until the server answered."""
        if self.machine is None:
            raise VMError("the VM is not started")
        if state.image.path != self.image.path:
            raise SnapshotError(f"warm state {state.name} belongs to image {state.image.name}, "
                                f"this VM runs {self.image.name}")
        saved = state.meta.get("accel")
        if saved and saved != self.machine.accel:
            raise SnapshotError(f"warm state {state.name} was saved under {saved} and this VM runs {self.machine.accel}; "
                                f"rebuild it here: desktop-env image warm --path_to_vm {self.image.name} --state {state.name} "
                                "--force")
        return self._restore(state)

    def capture_state(self, work: Path) -> dict:
        """Save the running VM into ``work`` as a mapped state: its RAM as ``state.ram`` (sparse) with its
        device state as ``state.bin``, and its disk writes as ``disk.qcow2`` (backed by the image's disk
        through a relative path, so the image folder can be exported with it). The VM is stopped
        afterwards; restore a state to go on (:meth:`restore_state` or :meth:`revert_to_snapshot`).

        The VM's RAM is a private mapping (or anonymous memory), which QEMU cannot leave out of a
        stream, so it is saved as one full stream first and then saved again, paused, from a VM whose
        RAM is the new file (``vmstate.to_mapped``; seconds per GiB)."""
        from desktop_env.vmstate import to_mapped

        if self.machine is None or not self.machine.is_running():
            raise VMError("the VM is not running")
        work = Path(work)
        t0 = time.monotonic()
        full = work / "state.full.bin"
        self.machine.save_state(full)
        save_s = time.monotonic() - t0
        accel, spec = self.machine.accel, self.machine.spec
        self.machine.stop()  # a soft quit: QEMU flushes the overlay before it exits
        layer = work / "disk.qcow2"
        shutil.move(str(self.dir / "overlay.qcow2"), layer)
        t1 = time.monotonic()
        scratch = create_overlay(layer, work / "convert.qcow2")  # the paused guest never writes it
        try:
            to_mapped(SavedState(full), _plain(spec, scratch), work / "convert", work / "state.bin", work / "state.ram")
        finally:
            for leftover in (full, scratch):
                leftover.unlink(missing_ok=True)
            shutil.rmtree(work / "convert", ignore_errors=True)
        rel = os.path.relpath(self.image.file("disk"), work)
        _rebase_unsafe(layer, rel)
        return {"accel": accel, "save_s": round(save_s, 1), "map_s": round(time.monotonic() - t1, 1), "ram": "mapped"}

    def _after_restore(self) -> None:
        self.wait_server(self.ready_timeout_s)
        self._set_guest_clock()

    def wait_server(self, timeout_s: float) -> None:
        """Poll the in-VM server's health check until it answers (no fixed sleeps)."""
        wait_for_server(self._session, self.server.url, timeout_s, self._check_alive)

    def _check_alive(self) -> None:
        if not self.machine.is_running():
            raise VMError(f"QEMU exited while waiting for the in-VM server\n{self.machine.log_tail()}")

    def _set_guest_clock(self) -> None:
        set_guest_clock(self._session, self.server.url, self.token)

    def stop(self) -> None:
        """Stop QEMU and remove the overlay, sockets, port locks and runtime folder."""
        _LIVE.discard(self)
        if self.machine is not None:
            try:
                self.machine.kill()
            except Exception:
                log.exception("stopping QEMU of %s", self.vm_id)
            self.machine = None
        if self._ports is not None:
            try:
                self._ports.release()
            except Exception:
                log.exception("releasing ports of %s", self.vm_id)
            self._ports = None
        if getattr(self, "_vnc_lease", None) is not None:
            try:
                self._vnc_lease.release()
            except Exception:
                log.exception("releasing the VNC port of %s", self.vm_id)
            self._vnc_lease = None
        self._keep_logs()
        try:
            shutil.rmtree(self.dir, ignore_errors=True)
        finally:
            if self._owner_fd is not None:
                try:
                    os.close(self._owner_fd)
                except OSError:
                    pass
                self._owner_fd = None
        self._session.close()

    def _keep_logs(self) -> None:
        """Move this VM's QEMU log (full command line first) and serial console log under
        ``<cache>/logs/vms/<vm_id>/`` so they outlive the runtime folder."""
        from desktop_env.paths import cache_dir

        dest = cache_dir(self.cache_dir) / "logs" / "vms" / self.vm_id
        for name in ("qemu.log", "console.log"):
            src = self.dir / name
            if src.exists():
                try:
                    dest.mkdir(parents=True, exist_ok=True)
                    shutil.move(str(src), dest / name)
                except OSError as exc:
                    log.warning("could not keep %s: %s", src, exc)

    @property
    def log_dir(self) -> Path:
        """Where this VM's logs are kept after it stops."""
        from desktop_env.paths import cache_dir

        return cache_dir(self.cache_dir) / "logs" / "vms" / self.vm_id

    # -- snapshots ------------------------------------------------------------------
    def revert_to_snapshot(self, name: str = INIT_STATE) -> float:
        """Restore ``init_state``, a built warm state of the image (fresh overlay), or a custom snapshot."""
        if self.machine is None:
            raise VMError("the VM is not started")
        if name == INIT_STATE:
            return self._restore_init_state()
        warm = self._warm_state(name)
        if warm is not None:
            return self.restore_state(warm)
        if name not in self.list_snapshots():
            raise SnapshotError(f"no snapshot {name!r} in VM {self.vm_id} (have: {', '.join(self.list_snapshots())})")
        t0 = time.monotonic()
        self._hmp(f"loadvm {name}")
        self._after_restore()
        return time.monotonic() - t0

    def _warm_state(self, name: str) -> "WarmState | None":
        from desktop_env.image.states import load_state

        return load_state(self.image, name)

    def save_snapshot(self, name: str) -> None:
        if name == INIT_STATE:
            raise SnapshotError("init_state is the image's ready state and cannot be overwritten")
        if self._warm_state(name) is not None:
            raise SnapshotError(f"{name!r} is a warm state of image {self.image.name}; give the snapshot another name")
        if not _SNAPSHOT_NAME.match(name):
            raise SnapshotError(f"snapshot name {name!r} must be 1-64 letters, digits, '.', '_' or '-'")
        self._hmp(f"savevm {name}")

    def list_snapshots(self) -> list[str]:
        """``init_state``, the image's built warm states, then this VM's custom snapshots."""
        from desktop_env.image.states import list_states

        warm = [s.name for s in list_states(self.image)]
        if self.machine is None:
            return [INIT_STATE] + warm
        out = self._hmp("info snapshots")
        names = []
        for line in out.splitlines():
            parts = line.split()
            if len(parts) >= 2 and parts[0].isdigit() or (len(parts) >= 2 and parts[0] == "--"):
                names.append(parts[1])
        return [INIT_STATE] + warm + names

    def delete_snapshot(self, name: str) -> None:
        if name == INIT_STATE:
            raise SnapshotError("init_state belongs to the image and cannot be deleted")
        if self._warm_state(name) is not None:
            raise SnapshotError(f"{name!r} is a warm state of image {self.image.name}; remove it with: "
                                f"desktop-env image warm --path_to_vm {self.image.name} --state {name} --remove")
        if name not in self.list_snapshots():
            raise SnapshotError(f"no snapshot {name!r} in VM {self.vm_id}")
        self._hmp(f"delvm {name}")

    def _hmp(self, command: str) -> str:
        if self.machine is None:
            raise VMError("the VM is not started")
        out = self.machine.qmp("human-monitor-command", **{"command-line": command}) or ""
        if any(word in out.lower() for word in ("error", "could not", "does not")):
            raise SnapshotError(f"'{command}' failed: {out.strip()}")
        return out

    def is_running(self) -> bool:
        """Whether this VM's QEMU process is alive."""
        return self.machine is not None and self.machine.is_running()

    # -- observation ----------------------------------------------------------------
    def screenshot(self) -> bytes | None:
        """PNG from QEMU's screendump (no guest CPU spent)."""
        if self.machine is None or not self.machine.is_running():
            raise VMError("the VM is not running")
        with self._shot_lock:
            path = self.dir / f"shot-{threading.get_ident()}.png"
            try:
                self.machine.screendump(path)
                return path.read_bytes()
            finally:
                path.unlink(missing_ok=True)

    def status(self) -> dict:
        running = self.machine is not None and self.machine.is_running()
        return {
            "provider": self.name, "vm_id": self.vm_id, "image": self.image.name, "running": running,
            "pid": self.machine.pid if running else None, "accel": self.machine.accel if self.machine else None,
            "server": self.server.url if self._ports else None, "cdp_port": self.cdp.port if self._ports else None,
            "vnc_port": self._vnc_port if self._ports else None, "dir": str(self.dir), "detached": self.detached,
            "state": self.state_name,
            "snapshots": self.list_snapshots() if running else [],
        }

    def _write_state(self) -> None:
        state = {"vm_id": self.vm_id, "image": str(self.image.path), "owner_pid": os.getpid(),
                 "detached": self.detached, "created": time.time(), "accel": self.accel,
                 "accel_resolved": self.machine.accel if self.machine else None,
                 "allow_internet": self.allow_internet, "state": self.state_name}
        if self._ports is not None:
            state.update(server_port=self._ports.ports[0], cdp_port=self._ports.ports[1], vnc_port=self._vnc_port,
                         token=self.token)
        (self.dir / "state.json").write_text(json.dumps(state, indent=1))


def _plain(spec: VMSpec, disk: Path) -> VMSpec:
    """``spec``'s devices on ``disk``, with no port forwards or VNC (a paused VM that only loads and saves)."""
    from dataclasses import replace

    return replace(spec, disk=disk, forwards={}, vnc_port=None, ram_file=None, ram_shared=False)
