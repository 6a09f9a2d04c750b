"""Saved VM states in two forms, and the host QEMU's identity that decides which loads.

A *full* state is one QEMU migration stream holding the guest's RAM and its devices
(``init_state.bin`` before mapped states). Loading it reads and copies every page: 1.5-6 s
for 2 GiB under TCG, and each environment ends up with a private copy of all of it.

A *mapped* state is a pair: ``*.ram``, the guest's RAM as a sparse file, and ``*.bin``, a
small stream of the device state only (about 0.5 MiB). A restore maps the RAM file into the
new guest privately, copy-on-write (``memory-backend-file,share=off``) and reads only the
stream: pages load from the file on first touch, the file never changes, and environments
restored from the same state share the pages none of them wrote through the page cache.
QEMU leaves RAM out of a stream only when it is a shared file-backed block and migration's
``x-ignore-shared`` is on, on both ends (QEMU refuses a mismatch), so a mapped state is saved
from a VM whose RAM is a shared file (``VMSpec.ram_shared``), or converted from a full one
(:func:`to_mapped`) by loading it, paused, into such a VM and saving it again. The guest never
runs in between, so the two forms are the same guest state. QEMU accepts a private
destination for such a stream since 4.1.

A saved state loads only into the QEMU machine type that saved it (the stream names it) and
the same CPU model; ``q35`` is an alias that moves with each QEMU release, so images record
the versioned type (:func:`qemu_identity`) and their VMs use it.
"""
from __future__ import annotations

import functools
import logging
import os
import re
import subprocess
import tempfile
import time
from dataclasses import dataclass, replace
from pathlib import Path

from desktop_env.errors import DesktopEnvError, VMError
from desktop_env.machine import MACHINE_ABI, QemuMachine, VMSpec, create_overlay, find_qemu
from desktop_env.paths import allocated

log = logging.getLogger(__name__)

#: The first QEMU that loads an ``x-ignore-shared`` stream into private (copy-on-write) RAM
#: (commit b17fbbe55cba, "migration: allow private destination ram with x-ignore-shared").
MAPPED_MIN_VERSION = (4, 1)


@dataclass(frozen=True)
class QemuIdentity:
    """The host QEMU as far as saved states care: its version and what ``q35`` means there."""

    version: tuple[int, int, int]
    machine_type: str

    @property
    def version_text(self) -> str:
        return ".".join(map(str, self.version))

    def mapped_restore(self) -> tuple[bool, str]:
        """Whether this QEMU restores mapped states, and why not when it does not."""
        if self.version[:2] >= MAPPED_MIN_VERSION:
            return True, f"QEMU {self.version_text} maps a saved RAM file copy-on-write"
        return False, (f"QEMU {self.version_text} is older than {'.'.join(map(str, MAPPED_MIN_VERSION))}, "
                       "which cannot load a RAM-less stream into private memory")


def parse_version(text: str) -> tuple[int, int, int]:
    """The version in ``qemu-system-x86_64 --version``'s first line."""
    found = re.search(r"version (\d+)\.(\d+)(?:\.(\d+))?", text)
    if not found:
        raise VMError(f"cannot read QEMU's version from {text.strip()[:200]!r}")
    return int(found[1]), int(found[2]), int(found[3] or 0)


def parse_machine_alias(text: str, alias: str = "q35") -> str:
    """The versioned machine type that ``alias`` stands for in ``-machine help``'s listing."""
    for line in text.splitlines():
        name, _, rest = line.strip().partition(" ")
        if name == alias:
            found = re.search(r"alias of ([\w.-]+)", rest)
            if found:
                return found[1]
    raise VMError(f"QEMU's -machine help lists no versioned type behind {alias!r}")


@functools.lru_cache(maxsize=4)
def qemu_identity(qemu: str | None = None) -> QemuIdentity:
    """Ask the host QEMU (``qemu``, default :func:`find_qemu`) for its version and q35's versioned type."""
    binary = qemu or find_qemu()
    version = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=30, check=True).stdout
    machines = subprocess.run([binary, "-machine", "help"], capture_output=True, text=True, timeout=30,
                              check=True).stdout
    return QemuIdentity(parse_version(version), parse_machine_alias(machines))


@dataclass(frozen=True)
class SavedState:
    """One saved state on disk: ``stream`` and, for a mapped state, the ``ram`` file it maps."""

    stream: Path
    ram: Path | None = None

    @property
    def mapped(self) -> bool:
        return self.ram is not None

    def restore_spec(self, spec: VMSpec) -> VMSpec:
        """``spec`` for a VM that restores this state (its RAM mapped privately when mapped)."""
        return replace(spec, ram_file=self.ram, ram_shared=False)

    def machine(self, spec: VMSpec, run_dir: Path, **kwargs) -> QemuMachine:
        """A QemuMachine (not started) that restores this state into ``spec``'s devices."""
        return QemuMachine(self.restore_spec(spec), run_dir, incoming_state=self.stream,
                           incoming_mapped=self.mapped, **kwargs)


def to_mapped(state: SavedState, spec: VMSpec, run_dir: Path, stream: Path, ram: Path,
              timeout_s: float = 300.0) -> SavedState:
    """Save ``state`` again as the mapped pair ``stream`` + ``ram`` (sparse), without running the guest.

    ``spec`` gives the devices the state was saved with; its disk should be a throwaway
    overlay (QEMU opens it, the paused guest never writes it). Existing files at ``stream``
    and ``ram`` are replaced only once the new pair is complete.
    """
    if state.mapped:
        raise VMError(f"{state.stream} is already a mapped state (its RAM is {state.ram})")
    started = time.monotonic()
    ram_tmp = ram.with_name(ram.name + ".partial")
    ram_tmp.unlink(missing_ok=True)
    ram_tmp.touch()  # QEMU sizes it (ftruncate: sparse); pages the guest never touched stay holes
    source = replace(state.restore_spec(spec), ram_file=ram_tmp, ram_shared=True)
    machine = QemuMachine(source, run_dir, incoming_state=state.stream, incoming_mapped=False)
    try:
        machine.start(restore_timeout_s=timeout_s, resume=False)
        machine.save_state(stream, timeout_s=timeout_s, mapped=True)
    except BaseException:
        ram_tmp.unlink(missing_ok=True)
        raise
    finally:
        machine.stop()
    ram_tmp.replace(ram)
    log.info("saved %s as a mapped state (%s, %d MiB allocated) in %.1f s", state.stream.name, ram.name,
             allocated(ram) >> 20, time.monotonic() - started)
    return SavedState(stream, ram)


def to_full(state: SavedState, spec: VMSpec, run_dir: Path, stream: Path, timeout_s: float = 300.0) -> SavedState:
    """Save ``state`` again as one full stream at ``stream`` (RAM included), without running the guest.

    For consumers that need the whole stream (libvirt's save images, older QEMUs).
    """
    machine = state.machine(spec, run_dir)
    try:
        machine.start(restore_timeout_s=timeout_s, resume=False)
        machine.save_state(stream, timeout_s=timeout_s, mapped=False)
    finally:
        machine.stop()
    return SavedState(stream)


#: Suffix of a full stream made on demand beside a mapped state (:func:`full_copy`); never exported.
FULL_SUFFIX = ".full.bin"

#: Environment variable choosing how restores load saved RAM when the caller does not: ``map`` or ``copy``.
RESTORE_ENV = "DESKTOP_ENV_RESTORE"


def restore_mode(requested: str | None = None) -> str:
    """How restores load a mapped state's RAM: ``requested``, else ``$DESKTOP_ENV_RESTORE``, else ``map``.

    Raises:
        DesktopEnvError: the choice is neither ``map`` nor ``copy``.
    """
    mode = requested or os.environ.get(RESTORE_ENV) or "map"
    if mode not in ("map", "copy"):
        raise DesktopEnvError(f"restore={mode!r} (or {RESTORE_ENV}) must be map or copy")
    return mode


def full_copy_path(state: SavedState, folder: Path) -> Path:
    """Where :func:`full_copy` keeps ``state`` as one full stream, beside its files in ``folder``."""
    return folder / f"{state.stream.name.removesuffix('.bin')}{FULL_SUFFIX}"


def full_copy(state: SavedState, spec: VMSpec, backing: Path, out: Path) -> Path:
    """``state`` as one full stream: its own stream when it is full, else ``out``, made once (a paused
    load and save on a scratch overlay of ``backing``; seconds per GiB) and kept for the next call."""
    if not state.mapped:
        return state.stream
    if out.exists():
        return out
    with tempfile.TemporaryDirectory(prefix=".full-", dir=out.parent) as tmp:
        scratch = create_overlay(backing, Path(tmp) / "scratch.qcow2")  # the paused guest never writes it
        to_full(state, replace(spec, disk=scratch, forwards={}, vnc_port=None), Path(tmp) / "run",
                Path(tmp) / "full.bin")
        (Path(tmp) / "full.bin").chmod(0o444)
        os.replace(Path(tmp) / "full.bin", out)
    log.info("made %s, %s as one full stream (%d MiB)", out, state.stream.name, out.stat().st_size >> 20)
    return out


def machine_abi(identity: QemuIdentity | None = None) -> str:
    """The guest-visible machine as image identities record it: the device set and the versioned type."""
    return f"{MACHINE_ABI}/{(identity or qemu_identity()).machine_type}"


def saving_spec(spec: VMSpec, ram: Path) -> VMSpec:
    """``spec`` for a VM that will save a mapped state: its RAM the shared, sparse file ``ram`` (started
    empty) and the host QEMU's versioned machine type."""
    ram.unlink(missing_ok=True)
    ram.touch()
    return replace(spec, machine_type=qemu_identity().machine_type, ram_file=ram, ram_shared=True)


def save_mapped(machine: QemuMachine, stream: Path, timeout_s: float = 300.0) -> dict:
    """Save ``machine`` (started from :func:`saving_spec`) as a mapped state: ``stream`` plus its RAM file.

    Returns the facts an image or state records: ``save_s``, ``qemu_version``, ``machine_type``.
    """
    started = time.monotonic()
    machine.save_state(stream, timeout_s=timeout_s, mapped=True)
    save_s = time.monotonic() - started
    version = machine.qmp("query-version")["qemu"]
    return {"save_s": round(save_s, 1), "qemu_version": f"{version['major']}.{version['minor']}.{version['micro']}",
            "machine_type": machine.spec.machine_type, "ram": "mapped"}
