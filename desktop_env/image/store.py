"""The local image store: list, find, export, import and remove built images."""
from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import subprocess
import tarfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from desktop_env.errors import DesktopEnvError, ImageNotFound
from desktop_env.paths import allocated
from desktop_env.paths import cache_dir as default_cache_dir

log = logging.getLogger(__name__)


def human_size(n: float) -> str:
    """Bytes as B/KiB/MiB/GiB/TiB with one decimal."""
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024:
            return f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} TiB"


def images_dir(cache: Path | None = None) -> Path:
    """Folder of built images (one sub-folder per image)."""
    return default_cache_dir(cache) / "images"


def layers_dir(cache: Path | None = None) -> Path:
    """Folder of cached package layers (keyed by package hash)."""
    return default_cache_dir(cache) / "layers"


@dataclass
class ImageInfo:
    """A ready image on disk and its metadata."""

    path: Path
    meta: dict

    @classmethod
    def load(cls, path: Path) -> "ImageInfo":
        """Read ``metadata.json`` of an image folder; raises ImageNotFound if not ready."""
        path = Path(path)
        meta_path = path / "metadata.json"
        try:
            meta = json.loads(meta_path.read_text())
        except (OSError, ValueError) as exc:
            raise ImageNotFound(f"{path} is not a ready image (no readable metadata.json)") from exc
        if not meta.get("ready") or path.name.endswith(".partial"):
            raise ImageNotFound(f"{path} is not marked ready")
        return cls(path, meta)

    @property
    def name(self) -> str:
        return self.meta["name"]

    @property
    def profile(self) -> str:
        return self.meta["profile"]

    def file(self, key: str) -> Path:
        """Absolute path of one of the image's files (disk, kernel, initrd, state, screenshot)."""
        return self.path / self.meta["files"][key]

    def saved_state(self) -> "SavedState":
        """The image's ``init_state``: a mapped pair (``init_state.bin`` + ``init_state.ram``), or one full
        stream for an image saved before mapped states (see ``vmstate``)."""
        from desktop_env.vmstate import SavedState

        files = self.meta["files"]
        return SavedState(self.file("state"), self.file("ram") if files.get("ram") else None)

    def vm_spec(self, disk: Path, **overrides) -> "VMSpec":
        """The VM its states were saved from (kernel, RAM, CPUs, screen, machine type) on ``disk``;
        ``overrides`` set any other VMSpec field (forwards, accel, VNC)."""
        from desktop_env.machine import VMSpec

        files = self.meta["files"]
        fields = dict(disk=disk, kernel=self.file("kernel") if files.get("kernel") else None,
                      initrd=self.file("initrd") if files.get("initrd") else None,
                      cmdline=self.meta["kernel_cmdline"], memory_mb=self.meta["memory_mb"], cpus=self.meta["cpus"],
                      screen=self.screen, machine_type=self.machine_type)
        return VMSpec(**{**fields, **overrides})

    @property
    def machine_type(self) -> str:
        """The QEMU machine type its states were saved under (``q35`` for images before it was recorded)."""
        return self.meta.get("machine_type", "q35")

    @property
    def screen(self) -> tuple[int, int]:
        width, height = self.meta["screen"].split("x")
        return int(width), int(height)

    @property
    def token(self) -> str | None:
        return self.meta.get("token")

    @property
    def build_id(self) -> str:
        """Which build of its recipe this image is (its creation time and in-VM server token, hashed).

        The image's name carries only its recipe hash: two builds of one recipe (a wiped cache, a second
        machine) share the name but not the token every request to the server needs, nor the saved state.
        An exported and imported image keeps its build.
        """
        seed = f"{self.meta.get('created', '')}\0{self.token or ''}"
        return hashlib.sha256(seed.encode()).hexdigest()[:16]

    def disk_usage(self) -> int:
        """Bytes actually allocated on disk by the image's files (its warm states included)."""
        return sum(allocated(p) for p in self.path.rglob("*") if p.is_file())


def list_images(cache: Path | None = None) -> list[ImageInfo]:
    """Every ready image in the cache, newest first."""
    root = images_dir(cache)
    out = []
    if root.exists():
        for sub in root.iterdir():
            if sub.is_dir() and not sub.name.endswith(".partial"):
                try:
                    out.append(ImageInfo.load(sub))
                except ImageNotFound:
                    continue
    return sorted(out, key=lambda i: i.meta.get("created", ""), reverse=True)


def find_image(profile: str, cache: Path | None = None, assembly_hash: str | None = None,
               name: str | None = None) -> ImageInfo | None:
    """The newest ready image of ``profile`` (optionally with an exact hash or name)."""
    for image in list_images(cache):
        if name and image.name != name:
            continue
        if image.profile != profile and not name:
            continue
        if assembly_hash and image.meta.get("assembly_hash") != assembly_hash:
            continue
        return image
    return None


def check_restorable(image: ImageInfo, screen_size: tuple[int, int] | None = None) -> None:
    """Check that a provider can restore ``image``'s ready state here, at ``screen_size`` (None: any).

    Raises:
        ImageNotFound: the image was built for another machine ABI (the message says how to rebuild).
        ScreenSizeMismatch: its ready state froze another screen size.
    """
    from desktop_env.errors import ScreenSizeMismatch
    from desktop_env.vmstate import machine_abi

    if image.meta.get("machine_abi") != machine_abi():
        raise ImageNotFound(f"image {image.name} was built for machine ABI {image.meta.get('machine_abi')}, "
                            f"this version and this host's QEMU use {machine_abi()} (a saved state loads only into "
                            f"the machine type and form that saved it); rebuild it: desktop-env image build --profile "
                            f"{image.profile}")
    if screen_size is not None and tuple(screen_size) != image.screen:
        w, h = screen_size
        raise ScreenSizeMismatch(
            f"image {image.name} has a {image.meta['screen']} screen frozen in its ready state, "
            f"but {w}x{h} was requested; build an image with that size: "
            f"desktop-env image build --profile {image.profile} --screen {w}x{h}")


def resolve_image(ref: str, cache: Path | None = None,
                  prefer: Callable[[str], str | None] | None = None) -> ImageInfo:
    """Find an image by name, by a path to its folder, or by profile: the profile's newest image, or
    with ``prefer`` (profile -> image name, e.g. the one this checkout's recipe builds) that image when
    it is in the cache, else the newest with a warning.

    Raises:
        ImageNotFound: naming the build command to run.
    """
    if os.sep in ref and Path(ref).is_dir():
        return ImageInfo.load(Path(ref))
    image = find_image(ref, cache, name=ref)
    newest = find_image(ref, cache) if image is None else None
    if newest is not None:
        current = prefer(ref) if prefer else None
        image = (find_image(ref, cache, name=current) if current else None) or newest
        if prefer and image.name != current:
            log.warning("image %s of this checkout's %s recipe is not built; using the newest %s image, %s "
                        "(built %s). Build the current one with: desktop-env image build --profile %s",
                        current or "?", ref, ref, image.name, image.meta.get("created", "?"), ref)
    if image is None:
        known = ", ".join(i.name for i in list_images(cache)) or "none"
        raise ImageNotFound(f"no ready image {ref!r} in {images_dir(cache)} (have: {known}); "
                            f"build it with: desktop-env image build --profile {ref.split('-')[0]}")
    return image


def remove_image(ref: str, cache: Path | None = None) -> Path:
    """Delete an image folder; returns its path."""
    image = resolve_image(ref, cache)
    shutil.rmtree(image.path)
    return image.path


def full_state_file(image: ImageInfo) -> Path:
    """``image``'s init_state as one full migration stream (RAM included), for consumers that cannot map
    a RAM file (libvirt's save images, ``restore="copy"``): the image's own file when it was saved before
    mapped states, else ``init_state.full.bin``, made once from the mapped pair and kept beside it."""
    from desktop_env.vmstate import full_copy, full_copy_path

    saved = image.saved_state()
    if not saved.mapped:
        return saved.stream
    spec = image.vm_spec(Path("/dev/null"), accel=image.meta["ready_state"]["accel"])
    return full_copy(saved, spec, image.file("disk"), full_copy_path(saved, image.path))


def export_files(image: ImageInfo) -> list[Path]:
    """The files an export carries: the image's own, and each built warm state's (``states/<name>/``);
    never a state being built, a lock file or a full stream made on demand (``*.full.bin``)."""
    from desktop_env.vmstate import FULL_SUFFIX

    out = [p for p in sorted(image.path.iterdir()) if p.is_file() and not p.name.endswith(FULL_SUFFIX)]
    states = image.path / "states"
    if states.is_dir():
        for sub in sorted(states.iterdir()):
            if sub.is_dir() and not sub.name.endswith(".partial") and (sub / "state.json").is_file():
                out += [p for p in sorted(sub.iterdir()) if p.is_file() and not p.name.endswith(FULL_SUFFIX)]
    return out


def export_image(ref: str, archive: Path, cache: Path | None = None) -> Path:
    """Write an image (disk, kernel, initrd, ready state, metadata, built warm states) as one tar
    archive plus ``<archive>.sha256``; returns the archive path."""
    image = resolve_image(ref, cache)
    archive = Path(archive)
    partial = archive.with_name(archive.name + ".partial")
    files = export_files(image)
    for p in files:
        log.info("exporting %s (%d MiB, %d MiB allocated)", p.relative_to(image.path).as_posix(),
                 p.stat().st_size >> 20, allocated(p) >> 20)
    # GNU tar with --sparse: a mapped state's RAM file is mostly holes (Python's tarfile cannot write
    # them, it can read them back: import_image extracts them as holes again).
    listing = "\n".join(f"{image.name}/{p.relative_to(image.path).as_posix()}" for p in files) + "\n"
    result = subprocess.run(["tar", "--create", "--sparse", "--format=gnu", "--file", str(partial),
                             "--directory", str(image.path.parent), "--no-recursion", "--files-from=-"],
                            input=listing, capture_output=True, text=True)
    if result.returncode != 0:
        partial.unlink(missing_ok=True)
        raise DesktopEnvError(f"tar could not write {partial}: {result.stderr.strip()[-500:]}")
    digest = _sha256(partial)
    os.replace(partial, archive)
    archive.with_name(archive.name + ".sha256").write_text(f"{digest}  {archive.name}\n")
    return archive


def import_image(archive: Path, cache: Path | None = None) -> ImageInfo:
    """Unpack an exported archive into the cache after checking its checksum."""
    archive = Path(archive)
    sums = archive.with_name(archive.name + ".sha256")
    if not sums.exists():
        raise DesktopEnvError(f"{sums} is missing: an exported image comes with its checksum file")
    expected = sums.read_text().split()[0]
    actual = _sha256(archive)
    if actual != expected:
        raise DesktopEnvError(f"checksum mismatch for {archive}: expected {expected}, got {actual} "
                              "(the archive is corrupt or incomplete)")
    root = images_dir(cache)
    root.mkdir(parents=True, exist_ok=True)
    with tarfile.open(archive) as tar:
        names = {m.name.split("/")[0] for m in tar.getmembers()}
        if len(names) != 1:
            raise DesktopEnvError(f"{archive} holds {len(names)} top-level folders; expected one image")
        name = names.pop()
        staging = root / f"{name}.partial"
        shutil.rmtree(staging, ignore_errors=True)
        staging.mkdir()
        for member in tar.getmembers():
            if not member.isfile() or "/" not in member.name or ".." in member.name:
                continue
            member.name = member.name.split("/", 1)[1]
            tar.extract(member, staging, filter="data")
    final = root / name
    if final.exists():
        shutil.rmtree(final)
    os.replace(staging, final)
    return ImageInfo.load(final)


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def prune_superseded(image: ImageInfo, cache: Path | None = None) -> list[str]:
    """Remove older images that ``image`` supersedes (same profile, screen and auth mode),
    and package layers no remaining image uses. Returns what was removed."""
    removed = []
    for other in list_images(cache):
        if other.path == image.path or other.profile != image.profile:
            continue
        if other.meta.get("screen") != image.meta.get("screen") or other.meta.get("auth") != image.meta.get("auth"):
            continue
        for p in other.path.iterdir():
            p.chmod(0o644)
        shutil.rmtree(other.path, ignore_errors=True)
        removed.append(other.name)
    used = {i.meta.get("package_hash") for i in list_images(cache)}
    root = layers_dir(cache)
    # A derived layer's parent stays too: rebuilding the derived layer starts from it.
    pending = list(used)
    while pending:
        try:
            parent = json.loads((root / str(pending.pop()) / "layer.json").read_text()).get("parent")
        except (OSError, ValueError):
            continue
        if parent and parent not in used:
            used.add(parent)
            pending.append(parent)
    if root.exists():
        for layer in root.iterdir():
            if layer.is_dir() and layer.name not in used and not layer.name.endswith(".partial"):
                shutil.rmtree(layer, ignore_errors=True)
                removed.append(f"layer {layer.name}")
    for name in removed:
        log.info("removed superseded %s", name)
    return removed
