"""User-supplied disk images (e.g. another suite's Ubuntu qcow2): BIOS boot, and an init_state taken on first use."""
from __future__ import annotations

import fcntl
import hashlib
import json
import logging
import os
import shutil
import subprocess
import time
from pathlib import Path

import requests

from desktop_env.errors import HostToolMissing, ImageNotFound, VMError
from desktop_env.image.store import ImageInfo
from desktop_env.paths import cache_dir as default_cache_dir
from desktop_env.ports import PortLease
from desktop_env.machine import (GUEST_CDP_PORT, GUEST_SERVER_PORT, QemuMachine, VMSpec, create_overlay,
                                 wait_settled)
from desktop_env.vmstate import machine_abi, save_mapped, saving_spec

log = logging.getLogger(__name__)


def disk_format(path: Path) -> str:
    """The format ``qemu-img info`` reports for a disk file (qcow2, raw, vmdk, ...)."""
    qemu_img = shutil.which("qemu-img")
    if not qemu_img:
        raise HostToolMissing("qemu-img", "qemu-utils", "inspect disk images")
    out = subprocess.run([qemu_img, "info", "--output=json", str(path)], capture_output=True, text=True)
    if out.returncode != 0:
        raise ImageNotFound(f"{path} is not a disk image qemu-img can read: {out.stderr.strip()}")
    return json.loads(out.stdout)["format"]


def foreign_key(path: Path, screen: tuple[int, int], memory_mb: int, cpus: int, token: str | None) -> str:
    """Cache key of a user disk's ready state: the file's identity and the VM's shape."""
    st = path.stat()
    ident = f"{path.resolve()}|{st.st_size}|{st.st_mtime_ns}|{screen}|{memory_mb}|{cpus}|{bool(token)}|{machine_abi()}"
    return hashlib.sha256(ident.encode()).hexdigest()[:16]


def prepare_foreign_image(path: str | Path, cache_dir: Path | None = None, accel: str = "auto",
                          screen: tuple[int, int] = (1920, 1080), memory_mb: int = 4096, cpus: int = 2,
                          token: str | None = None, boot_timeout_s: float = 900.0) -> ImageInfo:
    """Make a user-supplied disk usable like a built image.

    The disk itself is never written: on first use it boots from its own bootloader
    (BIOS) on a copy-on-write layer, and when its in-VM server answers on port 5000 and
    the screen has settled, the RAM state is saved as ``init_state`` and the layer is
    frozen. Later uses restore that state in about a second. The result is cached under
    ``<cache>/foreign/<key>/``, keyed by the file's path, size and mtime and the VM shape.

    Args:
        path: the disk image (qcow2, raw, ...).
        token: the bearer token its server wants, if any (servers of other suites take none).

    Raises:
        ImageNotFound: the file is missing or unreadable.
        VMError: the first boot never reached a ready server.
    """
    path = Path(path).expanduser()
    if not path.is_file():
        raise ImageNotFound(f"disk image {path} does not exist")
    fmt = disk_format(path)
    key = foreign_key(path, screen, memory_mb, cpus, token)
    root = default_cache_dir(cache_dir) / "foreign"
    final = root / key
    root.mkdir(parents=True, exist_ok=True)
    with open(root / f".{key}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one first boot per disk at a time
        try:
            return ImageInfo.load(final)
        except ImageNotFound:
            pass
        work = root / f"{key}.partial"
        shutil.rmtree(work, ignore_errors=True)
        work.mkdir()
        try:
            _first_use(path, fmt, work, cache_dir, accel, screen, memory_mb, cpus, token, boot_timeout_s)
        except BaseException:
            shutil.rmtree(work, ignore_errors=True)
            raise
        shutil.rmtree(final, ignore_errors=True)
        os.replace(work, final)
        return ImageInfo.load(final)


def _first_use(path: Path, fmt: str, work: Path, cache_dir, accel: str, screen: tuple[int, int], memory_mb: int,
               cpus: int, token: str | None, boot_timeout_s: float) -> None:
    log.info("first use of %s: booting it from its own disk to take its init_state (minutes under TCG)", path)
    disk = create_overlay(path, work / "disk.qcow2", backing_format=fmt)
    runtime = default_cache_dir(cache_dir) / "run"
    with PortLease(runtime / "ports", 1) as ports:
        spec = saving_spec(VMSpec(disk=disk, memory_mb=memory_mb, cpus=cpus, screen=screen, accel=accel,
                                  forwards={GUEST_SERVER_PORT: ports.ports[0]}), work / "init_state.ram")
        machine = QemuMachine(spec, work / "boot", die_with_parent=True)
        t0 = time.monotonic()
        machine.start()
        try:
            _wait_server(machine, ports.ports[0], token, boot_timeout_s)
            boot_s = time.monotonic() - t0
            wait_settled(machine, work / "ready.png")
            saved = save_mapped(machine, work / "init_state.bin")
        finally:
            machine.stop()
        shutil.rmtree(work / "boot", ignore_errors=True)
    meta = {
        "name": f"foreign-{work.name.removesuffix('.partial')}", "profile": "foreign", "ready": True,
        "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "source_disk": str(path.resolve()), "source_format": fmt,
        "machine_abi": machine_abi(), "machine_type": saved["machine_type"], "screen": f"{screen[0]}x{screen[1]}", "memory_mb": memory_mb, "cpus": cpus,
        "kernel_cmdline": "", "server_port": GUEST_SERVER_PORT, "cdp_port": GUEST_CDP_PORT,
        "auth": bool(token), "token": token,
        "files": {"disk": "disk.qcow2", "kernel": None, "initrd": None, "state": "init_state.bin",
                  "ram": "init_state.ram", "screenshot": "ready.png"},
        "ready_state": {"name": "init_state", "accel": machine.accel, "boot_to_ready_s": round(boot_s, 1),
                        **{k: saved[k] for k in ("save_s", "qemu_version", "ram")}},
    }
    (work / "disk.qcow2").chmod(0o444)
    (work / "metadata.json").write_text(json.dumps(meta, indent=1))
    log.info("init_state of %s saved after a %.0f s boot", path, boot_s)


def _wait_server(machine: QemuMachine, port: int, token: str | None, timeout_s: float) -> None:
    """Poll ``GET /platform`` (every server of this protocol has it) until it answers 200."""
    headers = {"Connection": "close"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    deadline = time.monotonic() + timeout_s
    last = "no answer"
    while time.monotonic() < deadline:
        if not machine.is_running():
            raise VMError(f"QEMU exited during the first boot of a user disk\n{machine.log_tail()}")
        try:
            reply = requests.get(f"http://127.0.0.1:{port}/platform", headers=headers, timeout=5)
            if reply.ok:
                return
            last = f"HTTP {reply.status_code}"
        except requests.RequestException as exc:
            last = type(exc).__name__
        time.sleep(1.0)
    raise VMError(f"the disk's in-VM server never answered GET /platform on guest port {GUEST_SERVER_PORT} within "
                  f"{timeout_s:.0f} s (last: {last}); the image must run a server of this protocol at boot")
