"""A libvirt host's storage pool: the image's volumes (uploaded once per recipe hash) and per-environment volumes.

Volumes of an image ``<name>`` (the name carries the recipe hash):

- ``<name>.qcow2``   the frozen disk, backing file of every environment's overlay;
- ``<name>.vmlinuz``, ``<name>.initrd``  direct kernel boot;
- ``<name>.save``    the ready state as a libvirt save image: a libvirt header with a
  padded domain XML, then the QEMU migration stream of the image's ``init_state``;
- ``<name>.ready``   a marker written last: the set is complete. It holds the build's
  identity (:attr:`ImageInfo.build_id`): a rebuild of the same recipe keeps the name but not the
  in-VM server's token, so a pool holding another build is uploaded to again.

Uploads go through libvirt's volume upload API, so the same code fills a pool on
this machine or on a remote host.
"""
from __future__ import annotations

import logging
import struct
import time
from pathlib import Path
from typing import Callable

from desktop_env.errors import DesktopEnvError, ImageNotFound
from desktop_env.image.store import ImageInfo, full_state_file, human_size

log = logging.getLogger(__name__)

DEFAULT_POOL = "desktop-env"
DEFAULT_POOL_PATH = "/var/lib/libvirt/images/desktop-env"

#: libvirt's save-image header (src/qemu/qemu_saveimage.h): magic, version, data_len,
#: was_running, compressed, cookieOffset, 14 unused words; native byte order.
SAVE_MAGIC = b"LibvirtQemudSave"
SAVE_VERSION = 2
SAVE_HEADER = struct.Struct("=16s5I56x")
#: Room for the domain XML in a save image (libvirt reads data_len bytes, NUL-terminated).
SAVE_XML_ROOM = 64 * 1024
CHUNK = 8 << 20  # bytes per stream send

ProgressFn = Callable[[str, int, int], None]


class StorageError(DesktopEnvError):
    """A storage pool or volume operation on a libvirt host failed."""


def save_header(xml: str, room: int = SAVE_XML_ROOM) -> bytes:
    """The libvirt save-image header followed by ``xml`` padded to ``room`` bytes."""
    data = xml.encode() + b"\0"
    if len(data) > room:
        raise StorageError(f"domain XML of {len(data)} bytes does not fit the save image's {room} bytes")
    return SAVE_HEADER.pack(SAVE_MAGIC, SAVE_VERSION, room, 1, 0, 0) + data + b"\0" * (room - len(data))


def parse_save_header(head: bytes) -> tuple[int, int]:
    """(version, data_len) of a save image's first bytes; raises StorageError if it is not one."""
    if len(head) < SAVE_HEADER.size:
        raise StorageError("save image too short")
    magic, version, data_len, *_ = SAVE_HEADER.unpack(head[:SAVE_HEADER.size])
    if magic != SAVE_MAGIC:
        raise StorageError(f"not a libvirt save image (magic {magic!r})")
    return version, data_len


def _libvirt():
    try:
        import libvirt
    except ImportError as exc:
        raise DesktopEnvError("the libvirt provider needs libvirt-python: apt-get install libvirt-dev pkg-config "
                              "&& pip install libvirt-python") from exc
    return libvirt


class HostPool:
    """One storage pool on one libvirt connection.

    Args:
        conn: an open ``virConnect``.
        name: pool name (created as a ``dir`` pool at ``path`` when missing).
        path: directory on the libvirt host; it and its parents must be traversable by
            the user QEMU runs as (``libvirt-qemu``), which is why the default is under
            ``/var/lib/libvirt/images`` and not the user's cache.
    """

    def __init__(self, conn, name: str = DEFAULT_POOL, path: str = DEFAULT_POOL_PATH):
        self.conn = conn
        self.name = name
        self.path = path
        self.pool = self._ensure_pool()

    def _ensure_pool(self):
        libvirt = _libvirt()
        try:
            pool = self.conn.storagePoolLookupByName(self.name)
        except libvirt.libvirtError:
            xml = (f"<pool type='dir'><name>{self.name}</name><target><path>{self.path}</path>"
                   "<permissions><mode>0755</mode></permissions></target></pool>")
            try:
                pool = self.conn.storagePoolDefineXML(xml, 0)
                pool.build(0)
            except libvirt.libvirtError as exc:
                raise StorageError(f"cannot define storage pool {self.name!r} at {self.path} on "
                                   f"{self.conn.getURI()}: {exc}") from exc
            log.info("defined storage pool %s at %s on %s", self.name, self.path, self.conn.getURI())
        try:
            if not pool.isActive():
                pool.create(0)
            pool.setAutostart(1)
        except libvirt.libvirtError as exc:
            raise StorageError(f"cannot start storage pool {self.name!r} on {self.conn.getURI()}: {exc}") from exc
        return pool

    def refresh(self, timeout_s: float = 30.0) -> None:
        """Re-scan the pool's directory; retried while another client's volume job runs.

        libvirt refuses a refresh while a volume is being created or copied in the pool
        ("has asynchronous jobs running"), which happens whenever several environments
        start on one host; lookups by name work without it, so a refresh that keeps
        failing is only logged.
        """
        libvirt = _libvirt()
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                self.pool.refresh(0)
                return
            except libvirt.libvirtError as exc:
                if "asynchronous jobs" not in str(exc) or time.monotonic() > deadline:
                    log.warning("could not refresh pool %s: %s", self.name, exc)
                    return
            time.sleep(0.5)

    # -- lookups -------------------------------------------------------------------
    def volume(self, name: str):
        """The volume ``name``, or None."""
        libvirt = _libvirt()
        try:
            return self.pool.storageVolLookupByName(name)
        except libvirt.libvirtError:
            return None

    def delete(self, name: str) -> bool:
        """Delete volume ``name`` if it exists; returns whether it did."""
        vol = self.volume(name)
        if vol is None:
            return False
        vol.delete(0)
        return True

    def volume_names(self) -> list[str]:
        self.refresh()
        return sorted(self.pool.listVolumes())

    # -- image volumes -------------------------------------------------------------
    def image_volumes(self, image: ImageInfo) -> dict[str, str]:
        """Host paths of the image's volumes (disk, kernel, initrd, save); raises ImageNotFound if not uploaded."""
        if self.volume(f"{image.name}.ready") is None:
            raise ImageNotFound(f"image {image.name} is not in pool {self.name} on {self.conn.getURI()}")
        out = {"disk": self.volume(f"{image.name}.qcow2").path(), "save": self.volume(f"{image.name}.save").path()}
        for key, suffix in (("kernel", "vmlinuz"), ("initrd", "initrd")):
            vol = self.volume(f"{image.name}.{suffix}")
            out[key] = vol.path() if vol is not None else None
        return out

    def ensure_image(self, image: ImageInfo, template_xml: str, progress: ProgressFn | None = None,
                     wait_s: float = 1800.0) -> dict[str, str]:
        """Upload the image to this pool unless this build of it is already there.

        A pool holding another build under the same name (see :attr:`ImageInfo.build_id`) is uploaded
        to again when no overlay in the pool is backed by that build; otherwise this raises
        :class:`StorageError` naming the overlays. Concurrent callers (other processes,
        other machines) are serialised by a lock volume ``<name>.uploading``: one uploads,
        the others wait for ``<name>.ready``.

        Args:
            template_xml: a domain XML for the save image's header (each environment's
                clone gets its own XML written over it).
            progress: called as ``progress(volume, bytes_done, bytes_total)``.
            wait_s: how long to wait for another uploader.

        Returns:
            host paths as :meth:`image_volumes`.
        """
        libvirt = _libvirt()
        want = image.build_id
        held = self.held_build(image)
        if held == want:
            return self.image_volumes(image)
        if held is not None:
            self._refuse_if_backing(image)
            log.warning("pool %s on %s holds another build of %s (%s, this one is %s): uploading this build",
                        self.name, self.conn.getURI(), image.name, held or "from before builds were marked", want)
        lock = f"{image.name}.uploading"
        try:
            self.pool.createXML(self._vol_xml(lock, 0, "raw"), 0)
        except libvirt.libvirtError:
            return self._wait_for_upload(image, lock, wait_s)
        try:
            t0 = time.monotonic()
            # The other build's set, or leftovers of an interrupted upload: marker first, so
            # no reader takes a half-replaced set for a complete one.
            for suffix in ("ready", "qcow2", "vmlinuz", "initrd", "save"):
                self.delete(f"{image.name}.{suffix}")
            self._upload(f"{image.name}.qcow2", [image.file("disk")], "qcow2", progress)
            if image.meta["files"].get("kernel"):
                self._upload(f"{image.name}.vmlinuz", [image.file("kernel")], "raw", progress)
            if image.meta["files"].get("initrd"):
                self._upload(f"{image.name}.initrd", [image.file("initrd")], "raw", progress)
            self._upload(f"{image.name}.save", [save_header(template_xml), full_state_file(image)], "raw", progress)
            self._upload(f"{image.name}.ready", [want.encode()], "raw", None)
            self.prune_superseded(image)
            log.info("uploaded image %s to pool %s on %s in %.1f s", image.name, self.name, self.conn.getURI(),
                     time.monotonic() - t0)
        finally:
            try:
                self.delete(lock)
            except libvirt.libvirtError as exc:
                log.warning("could not remove upload lock %s: %s", lock, exc)
        return self.image_volumes(image)

    def held_build(self, image: ImageInfo) -> str | None:
        """The build identity in the pool's complete upload of ``image.name``: None when there is none,
        ``""`` for an upload marked before builds were identified."""
        marker = self.volume(f"{image.name}.ready")
        if marker is None:
            return None
        size = marker.info()[1]
        return self._download(marker, size).decode(errors="replace").strip() if size else ""

    def overlays_by_backing(self) -> dict[str, list[str]]:
        """Environment overlays in this pool (``desktop-env-*.qcow2``) by the file name of their backing volume."""
        import xml.etree.ElementTree as ET

        libvirt = _libvirt()
        self.refresh()
        out: dict[str, list[str]] = {}
        for vol_name in self.pool.listVolumes():
            if vol_name.startswith("desktop-env-") and vol_name.endswith(".qcow2"):
                try:
                    backing = ET.fromstring(self.pool.storageVolLookupByName(vol_name).XMLDesc(0))
                except libvirt.libvirtError:
                    continue
                path = backing.findtext("./backingStore/path")
                if path:
                    out.setdefault(Path(path).name, []).append(vol_name)
        return out

    def _refuse_if_backing(self, image: ImageInfo) -> None:
        users = sorted(self.overlays_by_backing().get(f"{image.name}.qcow2", []))
        if users:
            uri = self.conn.getURI()
            raise StorageError(
                f"pool {self.name} on {uri} holds another build of {image.name} (the image was rebuilt since "
                f"it was uploaded, so its in-VM server token differs), and {len(users)} environment overlay(s) "
                f"are backed by it: {', '.join(users)}. Close those environments (or, if none runs, delete "
                f"them: virsh -c {uri} vol-delete --pool {self.name} NAME) and retry; this build is then "
                "uploaded in place of the old one")

    def prune_superseded(self, image: ImageInfo) -> list[str]:
        """Delete older uploads of ``image``'s profile that no overlay in this pool is backed by.

        Returns the image names removed.
        """
        libvirt = _libvirt()
        in_use = set(self.overlays_by_backing())
        names = self.pool.listVolumes()
        removed = []
        prefix = f"{image.profile}-"
        for marker in names:
            old = marker[:-len(".ready")]
            if not marker.endswith(".ready") or not old.startswith(prefix) or old == image.name:
                continue
            if f"{old}.qcow2" in in_use:
                continue
            for suffix in ("ready", "qcow2", "vmlinuz", "initrd", "save"):
                try:
                    self.delete(f"{old}.{suffix}")
                except libvirt.libvirtError as exc:
                    log.warning("could not delete %s.%s from pool %s: %s", old, suffix, self.name, exc)
            removed.append(old)
            log.info("removed superseded image %s from pool %s", old, self.name)
        return removed

    def _wait_for_upload(self, image: ImageInfo, lock: str, wait_s: float) -> dict[str, str]:
        deadline = time.monotonic() + wait_s
        log.info("waiting for another process to upload %s to pool %s", image.name, self.name)
        want = image.build_id
        while time.monotonic() < deadline:
            held = self.held_build(image)
            if held == want:
                return self.image_volumes(image)
            if self.volume(lock) is None:
                if held is not None:
                    raise StorageError(f"another process uploaded a different build of {image.name} to pool "
                                       f"{self.name} on {self.conn.getURI()} meanwhile (two caches with the same "
                                       "recipe?); retry once it is no longer in use")
                raise StorageError(f"the upload of {image.name} to pool {self.name} on {self.conn.getURI()} "
                                   "stopped without finishing; retry")
            time.sleep(2.0)
        raise StorageError(f"{image.name} was still being uploaded to pool {self.name} on {self.conn.getURI()} "
                           f"after {wait_s:.0f} s; if no upload runs, delete the stale lock: "
                           f"virsh -c {self.conn.getURI()} vol-delete --pool {self.name} {lock}")

    def _vol_xml(self, name: str, capacity: int, fmt: str, mode: str = "0644") -> str:
        return (f"<volume><name>{name}</name><capacity unit='bytes'>{capacity}</capacity>"
                f"<allocation unit='bytes'>0</allocation><target><format type='{fmt}'/>"
                f"<permissions><mode>{mode}</mode></permissions></target></volume>")

    def _upload(self, name: str, parts: list, fmt: str, progress: ProgressFn | None) -> None:
        """Create volume ``name`` and stream ``parts`` (bytes or file paths) into it."""
        total = sum(len(p) if isinstance(p, bytes) else Path(p).stat().st_size for p in parts)
        # Created as raw even for a qcow2 file: libvirt would otherwise format it; the
        # bytes we send are the image file itself. The pool reports its real format on refresh.
        vol = self.pool.createXML(self._vol_xml(name, total, "raw"), 0)
        stream = self.conn.newStream(0)
        done, last_report = 0, 0.0
        try:
            vol.upload(stream, 0, total, 0)
            for part in parts:
                if isinstance(part, bytes):
                    stream.send(part)
                    done += len(part)
                    continue
                with open(part, "rb") as fh:
                    while chunk := fh.read(CHUNK):
                        sent = 0
                        while sent < len(chunk):
                            sent += stream.send(chunk[sent:])
                        done += len(chunk)
                        now = time.monotonic()
                        if progress and now - last_report > 0.5:
                            progress(name, done, total)
                            last_report = now
            stream.finish()
        except BaseException:
            try:
                stream.abort()
            except Exception:
                pass
            try:
                vol.delete(0)
            except Exception:
                pass
            raise
        if progress:
            progress(name, total, total)
        log.info("uploaded %s (%s) to pool %s", name, human_size(total), self.name)

    # -- per-environment volumes -----------------------------------------------------
    def create_overlay(self, name: str, backing_path: str):
        """A qcow2 volume ``name`` backed by ``backing_path`` (copy-on-write)."""
        libvirt = _libvirt()
        backing = self.conn.storageVolLookupByPath(backing_path)
        capacity = backing.info()[1]
        xml = (f"<volume><name>{name}</name><capacity unit='bytes'>{capacity}</capacity>"
               "<target><format type='qcow2'/><permissions><mode>0600</mode></permissions></target>"
               f"<backingStore><path>{backing_path}</path><format type='qcow2'/></backingStore></volume>")
        try:
            return self.pool.createXML(xml, 0)
        except libvirt.libvirtError as exc:
            raise StorageError(f"cannot create overlay {name} in pool {self.name}: {exc}") from exc

    def clone_save(self, name: str, save_path: str, domain_xml: str):
        """A copy of the image's save image with ``domain_xml`` written into its header.

        libvirt restores a save image only into the domain (name and UUID) recorded in
        its header, so every environment restores from its own copy (a server-side
        copy on the host; deleted once the domain runs).
        """
        libvirt = _libvirt()
        src = self.conn.storageVolLookupByPath(save_path)
        head = self._download(src, SAVE_HEADER.size)
        _, room = parse_save_header(head)
        xml = (f"<volume><name>{name}</name><capacity unit='bytes'>{src.info()[1]}</capacity>"
               "<target><format type='raw'/><permissions><mode>0600</mode></permissions></target></volume>")
        try:
            vol = self.pool.createXMLFrom(xml, src, 0)
        except libvirt.libvirtError as exc:
            raise StorageError(f"cannot copy {save_path} to {name} in pool {self.name}: {exc}") from exc
        try:
            body = save_header(domain_xml, room)[SAVE_HEADER.size:]
            stream = self.conn.newStream(0)
            vol.upload(stream, SAVE_HEADER.size, len(body), 0)
            stream.send(body)
            stream.finish()
        except BaseException:
            vol.delete(0)
            raise
        return vol

    def _download(self, vol, length: int) -> bytes:
        stream = self.conn.newStream(0)
        vol.download(stream, 0, length, 0)
        data = b""
        while len(data) < length:
            chunk = stream.recv(length - len(data))
            if not chunk:
                break
            data += chunk
        stream.finish()
        return data
