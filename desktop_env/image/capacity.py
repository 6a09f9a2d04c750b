"""How many environments of an image fit in the memory this host really has free.

Each environment is one QEMU process. What it costs the host depends on how its state is restored:

- **mapped** (the default for states saved since mapped RAM, see ``vmstate``): the state's RAM file is mapped
  copy-on-write, so the pages no environment writes are the file's pages in the page cache, held once for every
  environment restored from that state. Each environment adds only what it writes.
- **copy** (``DESKTOP_ENV_RESTORE=copy``, and states saved before mapped RAM): each environment reads the whole
  saved RAM into memory of its own, and then adds what it writes.

Either way each environment also holds QEMU's own memory (its heap, video memory, device buffers), under TCG the
translation buffer (QEMU's default ``tb-size`` is 1 GiB, and a busy guest fills it), and the harness's worker
process that drives it.

What a guest writes during a task is not known in advance; :data:`TASK_WRITE_FRACTION` of its RAM is the budget,
measured with ``bench/restore.py`` (its memory part runs N environments from one warm state and reports what each
holds idle and after the state's work; docs/benchmarks.md). The estimate is a cap to keep a run from running the
host out of memory, not a promise: a task that writes more than the budget makes its VM larger.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Iterable

from desktop_env.errors import DesktopEnvError
from desktop_env.paths import allocated
from desktop_env.vmstate import restore_mode

if TYPE_CHECKING:  # pragma: no cover
    from desktop_env.image.store import ImageInfo

log = logging.getLogger(__name__)

MiB = 1 << 20

#: Part of a guest's RAM an environment is budgeted to write during one task (its private copies of the mapped
#: pages, or new pages). bench/restore.py's memory part measured 473-528 MiB private per data environment after a
#: Superset chart query, QEMU and its part-filled TCG buffer included (docs/benchmarks.md); the budget is for a long
#: task, whose guest rewrites much of its page cache.
TASK_WRITE_FRACTION = 0.25
#: QEMU's own memory outside the guest's RAM and the TCG buffer (heap, VGA memory, virtio queues, QMP), measured.
QEMU_OVERHEAD_MIB = 200
#: QEMU's default TCG translation buffer on a 64-bit host (``-accel tcg,tb-size=``, unset here): 1 GiB, all of it
#: touched by a guest that runs a desktop and a browser for a while.
TCG_BUFFER_MIB = 1024
#: The harness's worker process per environment (Python, the controller, the agent's client).
WORKER_MIB = 150
#: Memory left to the host itself (the harness, its page cache, anything else running).
HOST_RESERVE_MIB = 1024


@dataclass(frozen=True)
class Capacity:
    """How many environments of one image fit, and the numbers that say why.

    Attributes:
        fits: environments that fit in ``available`` (0 when not even one does).
        available: bytes the host has free (``MemAvailable``).
        shared: bytes held once for all environments (the mapped RAM files' pages in the page cache).
        per_env: bytes each environment adds.
        parts: ``per_env`` by part (name -> bytes).
        restore: ``map`` or ``copy``.
        image: the image's name.
    """

    fits: int
    available: int
    shared: int
    per_env: int
    parts: dict[str, int] = field(default_factory=dict)
    restore: str = "map"
    image: str = ""

    def explain(self) -> str:
        """One line: how many fit and the numbers behind it."""
        parts = " + ".join(f"{name} {size / 2**30:.1f}" for name, size in self.parts.items())
        shared = f", plus {self.shared / 2**30:.1f} GiB of mapped saved RAM held once" if self.shared else ""
        return (f"{self.fits} environment(s) of {self.image} fit in the {self.available / 2**30:.1f} GiB this host has "
                f"available ({HOST_RESERVE_MIB / 1024:.0f} GiB kept for the host): each needs about "
                f"{self.per_env / 2**30:.1f} GiB ({parts}; restore by {self.restore}){shared}")


def mem_available(meminfo: Path = Path("/proc/meminfo")) -> int:
    """Bytes of memory available to new processes without swapping (the kernel's ``MemAvailable``)."""
    for line in meminfo.read_text().splitlines():
        key, _, value = line.partition(":")
        if key == "MemAvailable":
            return int(value.split()[0]) * 1024
    raise DesktopEnvError(f"{meminfo} has no MemAvailable line (Linux 3.14 or newer has it)")


def state_files(image: "ImageInfo", states: Iterable[str] = ("init_state",)) -> list[tuple[Path, bool]]:
    """For each of ``states`` (``init_state`` or warm state names, built ones only), the file whose pages a
    restore holds and whether it is mapped (a RAM file) or copied (a full stream)."""
    from desktop_env.image.states import load_state

    out = []
    for name in dict.fromkeys(states):
        if name == "init_state":
            saved = image.saved_state()
            ram, stream = saved.ram, saved.stream
        else:
            built = load_state(image, name)
            if built is None:
                continue  # not built (yet): the estimate covers the states that exist
            ram, stream = built.ram_file, built.stream_file
        out.append((ram, True) if ram is not None else (stream, False))
    return out


def capacity(image: "ImageInfo", states: Iterable[str] = ("init_state",), restore: str | None = None,
             accel: str | None = None, available: int | None = None) -> Capacity:
    """How many environments of ``image``, restored from ``states``, fit in this host's free memory.

    Args:
        image: the image the environments run.
        states: the states they restore (``init_state``, warm states); each mapped RAM file counts once.
        restore: ``map`` or ``copy`` (default: ``DESKTOP_ENV_RESTORE``, else ``map``); a state saved before mapped
            RAM is copied whatever this says.
        accel: ``kvm`` or ``tcg`` (default: ``kvm`` when this host can use it); TCG adds its translation buffer.
        available: bytes free (default: ``MemAvailable`` now).
    """
    from desktop_env.machine import kvm_usable

    restore = restore_mode(restore)
    accel = accel or ("kvm" if kvm_usable()[0] else "tcg")
    available = mem_available() if available is None else available
    guest = image.meta["memory_mb"] * MiB
    files = state_files(image, states)
    mapped = restore == "map" and bool(files) and all(is_ram for _, is_ram in files)
    parts = {"written in a task": int(guest * TASK_WRITE_FRACTION)}
    if mapped:
        shared = sum(allocated(path) for path, _ in files)
    else:
        shared = 0
        parts["saved RAM copied"] = max((allocated(path) for path, _ in files), default=guest)
    parts["QEMU"] = QEMU_OVERHEAD_MIB * MiB
    if accel == "tcg":
        parts["TCG buffer"] = TCG_BUFFER_MIB * MiB
    parts["worker"] = WORKER_MIB * MiB
    per_env = sum(parts.values())
    room = available - HOST_RESERVE_MIB * MiB - shared
    return Capacity(fits=max(0, room // per_env), available=available, shared=shared, per_env=per_env,
                    parts=parts, restore="map" if mapped else "copy", image=image.name)


def cap_envs(requested: int, fit: Capacity) -> tuple[int, str | None]:
    """``requested`` environments lowered to what ``fit`` allows (never below one), and the message to show
    when it was lowered or when even one does not fit (None otherwise)."""
    if fit.fits >= requested:
        return requested, None
    if fit.fits == 0:
        return 1, (f"--num_envs {requested}: not even one environment fits in the memory this host has free; running "
                   f"one anyway. {fit.explain()}. Stop other VMs or processes to make room.")
    return fit.fits, (f"--num_envs {requested} lowered to {fit.fits}: {fit.explain()}. Free memory (other VMs, "
                      "processes) to run more at once.")
