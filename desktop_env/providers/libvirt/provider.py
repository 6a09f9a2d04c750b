"""The libvirt provider: one libvirt domain per environment, on this machine or on remote hosts."""
from __future__ import annotations

import atexit
import logging
import os
import random
import re
import socket
import threading
import time
import uuid as uuidlib
import weakref
import xml.etree.ElementTree as ET
from pathlib import Path

import requests

from desktop_env.errors import DesktopEnvError, ImageNotFound, SnapshotError, VMError
from desktop_env.image.current import resolve
from desktop_env.image.store import ImageInfo, check_restorable
from desktop_env.paths import runtime_dir
from desktop_env.providers.base import Endpoint, Provider, register_provider, set_guest_clock, wait_for_server
from desktop_env.providers.libvirt.domain import META_NS, DomainFiles, domain_xml
from desktop_env.providers.libvirt.hosts import (HostError, HostScheduler, Lease, SSHTunnel, forward_route,
                                                 host_has_kvm, is_local, parse_hosts)
from desktop_env.providers.libvirt.storage import DEFAULT_POOL, DEFAULT_POOL_PATH, HostPool, _libvirt
from desktop_env.ports import PortLease
from desktop_env.machine import VMSpec, resolve_accel

log = logging.getLogger(__name__)

INIT_STATE = "init_state"
DOMAIN_PREFIX = "desktop-env-"
_SNAPSHOT_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
#: Port range for forwards on a remote host (no shared lock folder there: a clash is retried).
REMOTE_PORTS = (20000, 60000)

_LIVE: "weakref.WeakSet[LibvirtProvider]" = weakref.WeakSet()


@atexit.register
def _stop_live() -> None:
    for vm in list(_LIVE):
        try:
            vm.stop()
        except Exception:  # each teardown on its own
            log.exception("stopping libvirt domain %s at exit", vm.domain_name)


def _quiet_libvirt():
    libvirt = _libvirt()
    # libvirt prints every error to stderr by default; ours are raised as exceptions.
    libvirt.registerErrorHandler(lambda _ctx, _err: None, None)
    return libvirt


@register_provider("libvirt")
class LibvirtProvider(Provider):
    """An environment's VM as a libvirt domain, restored from the image's ready state.

    ``start`` puts the image in the host's storage pool if it is missing (uploaded
    once, keyed by the image name, which carries the recipe hash), creates a
    copy-on-write overlay volume, restores the image's saved ready state into a new
    domain (``virDomainRestore`` of a per-environment copy of the save image), and
    takes an internal snapshot ``init_state`` in the overlay. Resets revert to it
    (``virDomainRevertToSnapshot``); custom snapshots are internal snapshots too.
    ``stop`` destroys the domain (transient: nothing stays defined) and deletes its volumes.

    Args:
        image: an :class:`ImageInfo`, image name, profile or image folder.
        path_to_vm: alias of ``image``.
        uri: libvirt connection URI (default ``qemu:///system``); ignored when ``hosts`` is given.
        hosts: several hosts (``"URI[#N],..."`` or a list): the environment goes to the
            least-loaded one with a free slot; a host that fails to start it is taken
            out of rotation and the next one is tried.
        pool, pool_path: storage pool on each host (created as a ``dir`` pool when missing).
        forward_bind: address on the libvirt host that the in-VM server and CDP forwards
            listen on: 127.0.0.1 only (HostError here otherwise, see
            :func:`~desktop_env.providers.libvirt.hosts.forward_route`). A remote host is
            reached through an SSH tunnel, so it needs a qemu+ssh URI.
        accel: ``auto``, ``kvm`` or ``tcg`` (the ready state restores only under the one that saved it).
        screen_size: (width, height) the caller expects; must match the image.
        allow_internet: let the guest open outbound connections.
        ready_timeout_s: how long to wait for the in-VM server.
        upload_progress: ``progress(volume, done, total)`` during an image upload
            (default: a log line every 10 %).
        hosts_state_dir, cooldown_s: shared state of the host scheduler and how long a
            failed host stays out of rotation.
    """

    def __init__(self, image: ImageInfo | str | None = None, path_to_vm: str | None = None,
                 cache_dir: Path | None = None, uri: str | None = None, hosts=None,
                 pool: str = DEFAULT_POOL, pool_path: str = DEFAULT_POOL_PATH, forward_bind: str = "127.0.0.1",
                 accel: str = "auto", screen_size: tuple[int, int] | None = None, allow_internet: bool = False,
                 vm_id: str | None = None, ready_timeout_s: float = 120.0, upload_progress=None,
                 hosts_state_dir: Path | None = None, cooldown_s: float = 600.0, **_ignored):
        ref = image if image is not None else (path_to_vm or "base")
        self.image = ref if isinstance(ref, ImageInfo) else resolve(str(ref), cache_dir)
        check_restorable(self.image, screen_size)
        if not self.image.meta["files"].get("state"):
            raise ImageNotFound(f"image {self.image.name} has no saved ready state; the libvirt provider restores "
                                "built images only")
        self.cache_dir = cache_dir
        self.host_specs = parse_hosts(hosts if hosts else (uri or None))
        for host in self.host_specs:  # an unreachable in-VM server fails here, not after a restore
            forward_route(host.uri, forward_bind)
        self.scheduler: HostScheduler | None = None
        if hosts:
            self.scheduler = HostScheduler(
                self.host_specs, hosts_state_dir or HostScheduler.default_dir(self.host_specs, cache_dir),
                cooldown_s=cooldown_s, vm_cpus=self.image.meta["cpus"], vm_memory_mb=self.image.meta["memory_mb"])
        self.pool_name = pool
        self.pool_path = pool_path
        self.forward_bind = forward_bind
        self.accel = accel
        self.allow_internet = allow_internet
        self.ready_timeout_s = ready_timeout_s
        self.upload_progress = upload_progress or _log_progress
        self.vm_id = vm_id or f"{self.image.profile}-{uuidlib.uuid4().hex[:8]}"
        self.domain_name = DOMAIN_PREFIX + self.vm_id
        self.uri: str | None = None
        self.conn = None
        self.dom = None
        self.host_pool: HostPool | None = None
        self.accel_resolved: str | None = None
        self._lease: Lease | None = None
        self._ports: PortLease | None = None
        self._remote_ports: list[int] = []
        self._tunnel: SSHTunnel | None = None
        self._server: Endpoint | None = None
        self._cdp: Endpoint | None = None
        self._vnc: Endpoint | None = None
        self._lock = threading.Lock()
        self._session = requests.Session()
        # No pooled connections: a snapshot revert leaves them half-open (see the QEMU provider).
        self._session.headers["Connection"] = "close"
        self._session.trust_env = False

    # -- addresses ------------------------------------------------------------------
    @property
    def server(self) -> Endpoint:
        if self._server is None:
            raise VMError("the VM is not started")
        return self._server

    @property
    def cdp(self) -> Endpoint | None:
        return self._cdp

    @property
    def vnc(self) -> Endpoint | None:
        return self._vnc

    @property
    def token(self) -> str | None:
        return self.image.token

    # -- lifetime -------------------------------------------------------------------
    def start(self) -> None:
        """Bring a new domain to ``init_state`` on a host; returns when the in-VM server answers.

        Raises:
            HostError: no host could start it (each failure is in the message).
            VMError, StorageError, SnapshotError: with a single host, what went wrong there.
        """
        if self.dom is not None:
            return
        if self.scheduler is None:
            self._start_on(self.host_specs[0].uri)
            return
        tried: dict[str, str] = {}
        while True:
            self._lease = self.scheduler.acquire(exclude=set(tried))
            uri = self._lease.uri
            try:
                self._start_on(uri)
                return
            except (DesktopEnvError, OSError) as exc:
                tried[uri] = f"{type(exc).__name__}: {exc}"
                log.error("starting %s on %s failed; trying another host:\n%s", self.domain_name, uri, exc)
                self.scheduler.mark_failed(uri, str(exc).splitlines()[0] if str(exc) else type(exc).__name__)
                self.stop()
                if len(tried) == len(self.host_specs):
                    raise HostError("no host could start the environment:\n" +
                                    "\n".join(f"  {u}: {r}" for u, r in tried.items())) from exc
            except BaseException:
                self.stop()
                raise

    def _start_on(self, uri: str) -> None:
        libvirt = _quiet_libvirt()
        t0 = time.monotonic()
        self.uri = uri
        _LIVE.add(self)
        try:
            try:
                self.conn = libvirt.open(uri)
            except libvirt.libvirtError as exc:
                raise HostError(f"cannot connect to libvirt at {uri}: {exc}; is libvirtd running there "
                                "(sudo bash .ci/start-libvirtd here, or systemctl start libvirtd)?") from exc
            self.accel_resolved = self._host_accel()
            self.host_pool = HostPool(self.conn, self.pool_name, self.pool_path)
            cleanup_stale(self.conn, self.host_pool)
            spec = self._spec({})
            template = domain_xml(DOMAIN_PREFIX + "template", str(uuidlib.UUID(int=0)), spec,
                                  DomainFiles(disk="/dev/null"), self.accel_resolved)
            vols = self.host_pool.ensure_image(self.image, template, self.upload_progress)
            self.host_pool.delete(f"{self.domain_name}.qcow2")
            overlay = self.host_pool.create_overlay(f"{self.domain_name}.qcow2", vols["disk"])
            files = DomainFiles(disk=overlay.path(), kernel=vols["kernel"], initrd=vols["initrd"],
                                console_log=f"/var/log/libvirt/qemu/{self.domain_name}-console.log")
            self._restore(files)
            self._connect_endpoints()
            self._wait_server(self.ready_timeout_s)
            self._set_guest_clock()
            self.dom.snapshotCreateXML(
                f"<domainsnapshot><name>{INIT_STATE}</name><description>the image's ready state</description>"
                "<memory snapshot='internal'/></domainsnapshot>", 0)
        except BaseException:
            self.stop()
            raise
        log.info("domain %s on %s at init_state in %.1f s", self.domain_name, uri, time.monotonic() - t0)

    def _host_accel(self) -> str:
        saved = self.image.meta["ready_state"]["accel"]
        if is_local(self.uri):
            wanted = resolve_accel(self.accel)
        elif self.accel != "auto":
            wanted = self.accel
        else:
            wanted = "kvm" if host_has_kvm(self.conn) else "tcg"
        if wanted != saved:
            raise SnapshotError(
                f"image {self.image.name} saved its ready state under {saved}, but {self.uri} runs {wanted}; a saved "
                f"state only restores under the accelerator that saved it: build the image on such a host or pass "
                f"accel='{saved}'")
        return saved

    def _spec(self, forwards: dict[int, int]) -> VMSpec:
        meta = self.image.meta
        return VMSpec(disk=Path("/dev/null"), cmdline=meta["kernel_cmdline"], memory_mb=meta["memory_mb"],
                      cpus=meta["cpus"], screen=self.image.screen, accel=self.accel_resolved or "tcg",
                      forwards=forwards, allow_internet=self.allow_internet, machine_type=self.image.machine_type)

    def _restore(self, files: DomainFiles) -> None:
        """Restore the ready state into domain ``domain_name`` (retrying remote port clashes)."""
        libvirt = _libvirt()
        meta = self.image.meta
        attempts = 1 if is_local(self.uri) else 4
        for attempt in range(attempts):
            ports = self._reserve_ports()
            spec = self._spec({meta["server_port"]: ports[0], meta["cdp_port"]: ports[1]})
            xml = domain_xml(self.domain_name, str(uuidlib.uuid4()), spec, files, self.accel_resolved,
                             forward_bind=self.forward_bind, owner={"host": socket.gethostname(), "pid": os.getpid()})
            log.debug("domain XML of %s:\n%s", self.domain_name, xml)
            save = self.host_pool.clone_save(f"{self.domain_name}.save", self._save_path(), xml)
            try:
                self.conn.restoreFlags(save.path(), None, libvirt.VIR_DOMAIN_SAVE_RUNNING)
                self.dom = self.conn.lookupByName(self.domain_name)
                return
            except libvirt.libvirtError as exc:
                clash = "host forwarding" in str(exc) or "Address already in use" in str(exc)
                if not clash or attempt == attempts - 1:
                    raise VMError(f"libvirt could not restore {self.domain_name} on {self.uri}: {exc}\n"
                                  f"(QEMU's log on that host: /var/log/libvirt/qemu/{self.domain_name}.log)") from exc
                log.info("forward ports %s taken on %s; retrying with others", ports, self.uri)
            finally:
                try:
                    save.delete(0)
                except libvirt.libvirtError as exc:
                    log.warning("could not delete %s.save: %s", self.domain_name, exc)

    def _save_path(self) -> str:
        return self.host_pool.image_volumes(self.image)["save"]

    def _reserve_ports(self) -> list[int]:
        if is_local(self.uri):
            if self._ports is None:
                self._ports = PortLease(runtime_dir(self.cache_dir) / "ports", 2)
            return self._ports.ports
        self._remote_ports = random.sample(range(*REMOTE_PORTS), 2)
        return self._remote_ports

    def _connect_endpoints(self) -> None:
        ports = self._ports.ports if self._ports is not None else self._remote_ports
        vnc_port = self._live_vnc_port()
        route = forward_route(self.uri, self.forward_bind)
        if route == "loopback":
            addr = "127.0.0.1"
            self._server, self._cdp = Endpoint(addr, ports[0]), Endpoint(addr, ports[1])
            self._vnc = Endpoint(addr, vnc_port) if vnc_port else None
        else:
            remote = ports + ([vnc_port] if vnc_port else [])
            self._tunnel = SSHTunnel(self.uri, remote)
            local = self._tunnel.local_ports
            self._server, self._cdp = Endpoint("127.0.0.1", local[0]), Endpoint("127.0.0.1", local[1])
            self._vnc = Endpoint("127.0.0.1", local[2]) if vnc_port else None

    def _live_vnc_port(self) -> int | None:
        root = ET.fromstring(self.dom.XMLDesc(0))
        graphics = root.find("./devices/graphics[@type='vnc']")
        port = int(graphics.get("port", "-1")) if graphics is not None else -1
        return port if port > 0 else None

    def _wait_server(self, timeout_s: float) -> None:
        """Poll the in-VM server until it answers (any HTTP status below 500)."""
        wait_for_server(self._session, self.server.url, timeout_s, self._check_alive, poll_s=0.1)

    def _check_alive(self) -> None:
        if not self.dom.isActive():
            raise VMError(f"domain {self.domain_name} stopped while waiting for the in-VM server "
                          f"(see /var/log/libvirt/qemu/{self.domain_name}.log on {self.uri})")

    def _set_guest_clock(self) -> None:
        set_guest_clock(self._session, self.server.url, self.token)

    def stop(self) -> None:
        """Destroy the domain, delete its volumes, close tunnels, ports and the connection.

        Each step runs on its own; a host whose connection died is reported to the
        scheduler so the next environment goes elsewhere.
        """
        _LIVE.discard(self)
        libvirt = _libvirt()
        if self.conn is not None:
            alive = True
            try:
                alive = bool(self.conn.isAlive())
            except libvirt.libvirtError:
                alive = False
            if alive:
                _remove_domain(self.conn, self.domain_name)
                for suffix in ("qcow2", "save"):
                    try:
                        if self.host_pool is not None:
                            self.host_pool.delete(f"{self.domain_name}.{suffix}")
                    except libvirt.libvirtError as exc:
                        log.warning("could not delete volume %s.%s: %s", self.domain_name, suffix, exc)
            elif self.scheduler is not None and self.uri:
                self.scheduler.mark_failed(self.uri, "the libvirt connection died")
            try:
                self.conn.close()
            except libvirt.libvirtError:
                pass
        self.conn = self.dom = self.host_pool = None
        if self._tunnel is not None:
            try:
                self._tunnel.close()
            except Exception:
                log.exception("closing the SSH tunnel of %s", self.domain_name)
            self._tunnel = None
        if self._ports is not None:
            self._ports.release()
            self._ports = None
        if self._lease is not None:
            self._lease.release()
            self._lease = None
        self._server = self._cdp = self._vnc = None

    # -- snapshots ------------------------------------------------------------------
    def _require_dom(self):
        if self.dom is None:
            raise VMError("the VM is not started")
        return self.dom

    def revert_to_snapshot(self, name: str = INIT_STATE) -> float:
        """Revert to an internal snapshot (libvirt restarts QEMU with it); returns seconds until the server answers."""
        libvirt = _libvirt()
        dom = self._require_dom()
        t0 = time.monotonic()
        try:
            snap = dom.snapshotLookupByName(name, 0)
        except libvirt.libvirtError:
            raise SnapshotError(f"no snapshot {name!r} in domain {self.domain_name} "
                                f"(have: {', '.join(self.list_snapshots())})") from None
        try:
            dom.revertToSnapshot(snap, libvirt.VIR_DOMAIN_SNAPSHOT_REVERT_RUNNING)
        except libvirt.libvirtError as exc:
            raise SnapshotError(f"reverting {self.domain_name} to {name!r} failed: {exc}") from exc
        self._wait_server(self.ready_timeout_s)
        self._set_guest_clock()
        elapsed = time.monotonic() - t0
        log.info("domain %s reverted to %s in %.2f s", self.domain_name, name, elapsed)
        return elapsed

    def save_snapshot(self, name: str) -> None:
        """Internal snapshot (RAM and disk) of the running domain, in its overlay."""
        libvirt = _libvirt()
        if name == INIT_STATE:
            raise SnapshotError("init_state is the image's ready state and cannot be overwritten")
        if not _SNAPSHOT_NAME.match(name):
            raise SnapshotError(f"snapshot name {name!r} must be 1-64 letters, digits, '.', '_' or '-'")
        dom = self._require_dom()
        if name in self.list_snapshots():
            self.delete_snapshot(name)
        try:
            dom.snapshotCreateXML(f"<domainsnapshot><name>{name}</name><memory snapshot='internal'/>"
                                  "</domainsnapshot>", 0)
        except libvirt.libvirtError as exc:
            raise SnapshotError(f"saving snapshot {name!r} of {self.domain_name} failed: {exc}") from exc

    def list_snapshots(self) -> list[str]:
        if self.dom is None:
            return [INIT_STATE]
        names = [s.getName() for s in self.dom.listAllSnapshots(0)]
        return [INIT_STATE] + sorted(n for n in names if n != INIT_STATE)

    def delete_snapshot(self, name: str) -> None:
        libvirt = _libvirt()
        if name == INIT_STATE:
            raise SnapshotError("init_state belongs to the image and cannot be deleted")
        dom = self._require_dom()
        try:
            dom.snapshotLookupByName(name, 0).delete(0)
        except libvirt.libvirtError as exc:
            raise SnapshotError(f"no snapshot {name!r} in domain {self.domain_name} ({exc})") from exc

    # -- observation ----------------------------------------------------------------
    def screenshot(self) -> bytes:
        """PNG of the display through ``virDomainScreenshot`` (a libvirt stream; no guest CPU spent)."""
        libvirt = _libvirt()
        dom = self._require_dom()
        with self._lock:
            stream = self.conn.newStream(0)
            try:
                mime = dom.screenshot(stream, 0, 0)
                chunks = []
                while True:
                    chunk = stream.recv(1 << 20)
                    if not chunk:
                        break
                    chunks.append(chunk)
                stream.finish()
            except libvirt.libvirtError as exc:
                try:
                    stream.abort()
                except libvirt.libvirtError:
                    pass
                raise VMError(f"screenshot of {self.domain_name} failed: {exc}") from exc
        data = b"".join(chunks)
        if mime != "image/png":
            from io import BytesIO

            from PIL import Image

            out = BytesIO()
            Image.open(BytesIO(data)).save(out, format="PNG")
            data = out.getvalue()
        return data

    def status(self) -> dict:
        running = self.dom is not None and bool(self.dom.isActive())
        return {
            "provider": self.name, "vm_id": self.vm_id, "domain": self.domain_name, "uri": self.uri,
            "image": self.image.name, "running": running, "accel": self.accel_resolved,
            "server": self._server.url if self._server else None,
            "cdp_port": self._cdp.port if self._cdp else None, "vnc_port": self._vnc.port if self._vnc else None,
            "pool": self.pool_name, "snapshots": self.list_snapshots() if running else [],
        }


def _log_progress(volume: str, done: int, total: int, _state={}) -> None:
    step = int(done * 10 / total) if total else 10
    if _state.get(volume) != step:
        _state[volume] = step
        log.info("uploading %s: %d%% (%d of %d MiB)", volume, step * 10, done >> 20, total >> 20)


def _remove_domain(conn, name: str) -> None:
    """Destroy and undefine ``name`` (and its snapshot metadata) if it exists."""
    libvirt = _libvirt()
    try:
        dom = conn.lookupByName(name)
    except libvirt.libvirtError:
        return
    try:
        if dom.isActive():
            dom.destroy()
    except libvirt.libvirtError as exc:
        log.warning("destroying %s: %s", name, exc)
    try:
        if dom.isPersistent():
            dom.undefineFlags(libvirt.VIR_DOMAIN_UNDEFINE_SNAPSHOTS_METADATA)
    except libvirt.libvirtError:
        pass  # transient: gone with destroy


def cleanup_stale(conn, pool: HostPool | None = None) -> list[str]:
    """Remove this machine's ``desktop-env-*`` domains whose owner process is gone (crash, kill -9).

    Returns the domain names removed. Their overlay volumes go too when ``pool`` is given.
    """
    libvirt = _libvirt()
    removed = []
    me = socket.gethostname()
    for dom in conn.listAllDomains(0):
        name = dom.name()
        if not name.startswith(DOMAIN_PREFIX):
            continue
        try:
            owner = ET.fromstring(dom.metadata(libvirt.VIR_DOMAIN_METADATA_ELEMENT, META_NS, 0))
        except libvirt.libvirtError:
            continue
        if owner.get("host") != me:
            continue
        try:
            os.kill(int(owner.get("pid", "0")), 0)
            continue  # owner alive
        except (ProcessLookupError, ValueError):
            pass
        except PermissionError:
            continue
        _remove_domain(conn, name)
        if pool is not None:
            for suffix in ("qcow2", "save"):
                pool.delete(f"{name}.{suffix}")
        removed.append(name)
        log.info("removed stale domain %s (its owner process is gone)", name)
    return removed
