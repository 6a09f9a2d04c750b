"""Hosts for the libvirt provider: parse ``--hosts``, per-host capacity, pick a host, take a failed one out of rotation.

State is shared between processes (``run.py`` runs one worker process per
environment) through a folder of lock files: a slot on a host is an ``flock`` held by
the process whose environment uses it (the kernel drops it when that process dies),
and a failed host is a ``<host>.failed`` file that expires after a cooldown.
"""
from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

from desktop_env.errors import DesktopEnvError
from desktop_env.ports import try_lock_file

log = logging.getLogger(__name__)

DEFAULT_URI = "qemu:///system"
#: Host RAM kept free for the host itself when capacity comes from its reported memory.
HOST_RESERVE_MB = 2048


class HostError(DesktopEnvError):
    """A libvirt host cannot be used (unreachable, no capacity, bad URI)."""


@dataclass(frozen=True)
class HostSpec:
    """One ``--hosts`` entry: a libvirt URI and an optional capacity (``URI#N``)."""

    uri: str
    capacity: int | None = None

    @classmethod
    def parse(cls, text: str) -> "HostSpec":
        text = text.strip()
        uri, _, cap = text.partition("#")
        if "://" not in uri:
            raise HostError(f"host {text!r} is not a libvirt URI (e.g. qemu:///system, qemu+ssh://user@host/system, "
                            "qemu+tcp://host/system); a capacity goes after '#': qemu+ssh://host/system#4")
        capacity = None
        if cap:
            try:
                capacity = int(cap)
            except ValueError:
                raise HostError(f"capacity {cap!r} of host {uri} is not a whole number") from None
            if capacity < 1:
                raise HostError(f"capacity of host {uri} must be at least 1, not {capacity}")
        return cls(uri, capacity)

    @property
    def key(self) -> str:
        """A file-name-safe id of the URI."""
        return hashlib.sha256(self.uri.encode()).hexdigest()[:12]


def parse_hosts(text: str | list[str] | None) -> list[HostSpec]:
    """``"URI[#N],URI[#N]"`` (or a list of such) -> HostSpecs; empty -> [qemu:///system]."""
    if not text:
        return [HostSpec(DEFAULT_URI)]
    items = text if isinstance(text, list) else text.split(",")
    specs = [HostSpec.parse(item) for item in items if item.strip()]
    seen = set()
    for spec in specs:
        if spec.uri in seen:
            raise HostError(f"host {spec.uri} is listed twice in --hosts")
        seen.add(spec.uri)
    return specs or [HostSpec(DEFAULT_URI)]


def uri_transport(uri: str) -> tuple[str | None, str | None, str | None, int | None]:
    """(transport, user, hostname, port) of a libvirt URI; hostname None means this machine."""
    parts = urlsplit(uri)
    scheme = parts.scheme
    transport = scheme.split("+", 1)[1] if "+" in scheme else None
    host = parts.hostname or None
    if transport is None and host:
        transport = "tls"  # libvirt's default transport for a URI with a host name
    return transport, parts.username, host, parts.port


def is_local(uri: str) -> bool:
    """Whether the URI's libvirt daemon runs on this machine without a network transport."""
    transport, _, host, _ = uri_transport(uri)
    return host is None and transport in (None, "unix")


def forward_route(uri: str, forward_bind: str = "127.0.0.1") -> str:
    """How this machine reaches the port forwards of a domain on ``uri``.

    The forwards can only serve clients on the libvirt host's loopback: QEMU's user-mode
    network shows those to the guest as 10.0.2.2, while a client at any other address
    keeps its own, and the guest has no route back to it (the images' ready state got
    its DHCP lease under ``restrict=on``, for which slirp offers no gateway), so such a
    connection is accepted by QEMU and never answered. A remote host is therefore
    reached through an SSH tunnel to its loopback.

    Returns:
        ``"loopback"`` (this machine's 127.0.0.1) or ``"tunnel"`` (an SSH tunnel to the host's loopback).

    Raises:
        HostError: ``forward_bind`` is not 127.0.0.1, or the host is remote and
            the URI is not qemu+ssh.
    """
    if forward_bind != "127.0.0.1":
        raise HostError(f"forward_bind={forward_bind!r} cannot work: the guest answers only clients on the libvirt "
                        "host's loopback (it has no route back to other addresses; its DHCP lease, taken with "
                        "QEMU's restrict=on, carries no gateway); keep 127.0.0.1 and reach a remote host with a "
                        "qemu+ssh URI (the provider tunnels through ssh)")
    transport, _user, host, _port = uri_transport(uri)
    if is_local(uri) or host in ("127.0.0.1", "localhost", "::1"):
        return "loopback"
    if transport == "ssh":
        return "tunnel"
    raise HostError(f"the in-VM server of a domain on {host} would listen on that host's loopback, which {uri} "
                    "cannot reach: use a qemu+ssh URI (the provider tunnels through ssh)")


def host_capacity(conn, vm_cpus: int, vm_memory_mb: int) -> int:
    """Environments a host can run from its reported CPUs and memory (at least 1).

    One environment per ``vm_cpus`` host CPUs (TCG and KVM guests both keep their
    vCPUs busy while the desktop animates) and per ``vm_memory_mb`` of RAM above a
    2 GiB reserve.
    """
    _model, memory_mb, cpus, *_ = conn.getInfo()
    by_cpu = cpus // max(vm_cpus, 1)
    by_mem = (memory_mb - HOST_RESERVE_MB) // max(vm_memory_mb, 1)
    return max(1, min(by_cpu, by_mem))


def host_has_kvm(conn) -> bool:
    """Whether the host offers usable KVM: libvirt's kvm domain type AND a vmx/svm CPU flag.

    The flag check mirrors :func:`desktop_env.machine.kvm_usable`: a
    ``/dev/kvm`` without it (nested or paravirtual setups) hangs standard guests.
    """
    import xml.etree.ElementTree as ET

    caps = ET.fromstring(conn.getCapabilities())
    kvm = any(d.get("type") == "kvm" for d in caps.iter("domain"))
    features = {f.get("name") for f in caps.findall("./host/cpu/feature")}
    return kvm and bool(features & {"vmx", "svm"})


@dataclass
class Lease:
    """A slot on a host held by this process."""

    spec: HostSpec
    slot: int
    fd: int

    @property
    def uri(self) -> str:
        return self.spec.uri

    def release(self) -> None:
        if self.fd >= 0:
            try:
                os.close(self.fd)
            except OSError:
                pass
            self.fd = -1


class HostScheduler:
    """Spreads environments over hosts by capacity; shared by every process using ``state_dir``.

    Args:
        hosts: the host list (``--hosts``).
        state_dir: folder of slot locks and failure marks (default: under the
            runtime dir, keyed by the host list).
        cooldown_s: how long a failed host stays out of rotation.
        vm_cpus, vm_memory_mb: the guest's size, for capacities computed from a host's resources.
    """

    def __init__(self, hosts: list[HostSpec], state_dir: Path, cooldown_s: float = 600.0,
                 vm_cpus: int = 2, vm_memory_mb: int = 3072):
        if not hosts:
            raise HostError("no hosts given")
        self.hosts = hosts
        self.state_dir = Path(state_dir)
        self.state_dir.mkdir(parents=True, exist_ok=True)
        self.cooldown_s = cooldown_s
        self.vm_cpus = vm_cpus
        self.vm_memory_mb = vm_memory_mb

    @classmethod
    def default_dir(cls, hosts: list[HostSpec], cache_dir: Path | None = None) -> Path:
        from desktop_env.paths import runtime_dir

        key = hashlib.sha256(",".join(h.uri for h in hosts).encode()).hexdigest()[:12]
        return runtime_dir(cache_dir) / "libvirt-hosts" / key

    # -- failure marks ----------------------------------------------------------------
    def mark_failed(self, uri: str, reason: str) -> None:
        """Take ``uri`` out of rotation for ``cooldown_s``."""
        spec = self._spec(uri)
        path = self.state_dir / f"{spec.key}.failed"
        tmp = path.with_suffix(f".tmp{os.getpid()}")
        tmp.write_text(json.dumps({"uri": uri, "reason": reason, "time": time.time()}))
        os.replace(tmp, path)
        log.warning("host %s taken out of rotation for %.0f s: %s", uri, self.cooldown_s, reason)

    def failed(self, uri: str) -> str | None:
        """The reason ``uri`` is out of rotation, or None."""
        path = self.state_dir / f"{self._spec(uri).key}.failed"
        try:
            mark = json.loads(path.read_text())
        except (OSError, ValueError):
            return None
        if time.time() - mark.get("time", 0) > self.cooldown_s:
            path.unlink(missing_ok=True)
            return None
        return mark.get("reason", "failed")

    def _spec(self, uri: str) -> HostSpec:
        for spec in self.hosts:
            if spec.uri == uri:
                return spec
        raise HostError(f"{uri} is not one of the hosts ({', '.join(h.uri for h in self.hosts)})")

    # -- capacity -------------------------------------------------------------------
    def capacity(self, spec: HostSpec, connect=None) -> int:
        """The host's capacity: from ``URI#N``, else computed once from its resources and remembered."""
        if spec.capacity is not None:
            return spec.capacity
        path = self.state_dir / f"{spec.key}.capacity"
        try:
            return int(path.read_text())
        except (OSError, ValueError):
            pass
        conn = (connect or _open)(spec.uri)
        try:
            cap = host_capacity(conn, self.vm_cpus, self.vm_memory_mb)
        finally:
            conn.close()
        path.write_text(str(cap))
        log.info("host %s: capacity %d environment(s) from its CPUs and memory", spec.uri, cap)
        return cap

    def in_use(self, spec: HostSpec) -> int:
        """Slots of ``spec`` currently held by live processes."""
        from desktop_env.ports import lock_is_held

        return sum(1 for p in self.state_dir.glob(f"{spec.key}.slot*.lock") if lock_is_held(p))

    # -- choosing -------------------------------------------------------------------
    def acquire(self, exclude: set[str] = frozenset(), timeout_s: float = 600.0, connect=None) -> Lease:
        """Hold a free slot on the least-loaded host in rotation (waiting up to ``timeout_s``).

        Raises:
            HostError: every host is out of rotation (with the reasons), or none had a
                free slot in time.
        """
        deadline = time.monotonic() + timeout_s
        while True:
            reasons = {}
            candidates = []
            for index, spec in enumerate(self.hosts):
                if spec.uri in exclude:
                    reasons[spec.uri] = "excluded"
                    continue
                why = self.failed(spec.uri)
                if why:
                    reasons[spec.uri] = why
                    continue
                try:
                    cap = self.capacity(spec, connect)
                except Exception as exc:  # unreachable host: out of rotation
                    self.mark_failed(spec.uri, f"cannot read its capacity: {exc}")
                    reasons[spec.uri] = str(exc)
                    continue
                candidates.append((self.in_use(spec) / cap, index, spec, cap))
            if not candidates:
                detail = "; ".join(f"{u}: {r}" for u, r in reasons.items())
                raise HostError(f"no libvirt host is available ({detail})")
            for _load, _index, spec, cap in sorted(candidates, key=lambda c: (c[0], c[1])):
                lease = self._try_slots(spec, cap)
                if lease is not None:
                    log.info("environment placed on %s (slot %d of %d)", spec.uri, lease.slot + 1, cap)
                    return lease
            if time.monotonic() > deadline:
                busy = ", ".join(f"{s.uri}: {c}" for _, _, s, c in candidates)
                out = "; out of rotation: " + "; ".join(f"{u}: {r}" for u, r in reasons.items()) if reasons else ""
                raise HostError(f"every host is at capacity after waiting {timeout_s:.0f} s ({busy}){out}")
            time.sleep(1.0)

    def _try_slots(self, spec: HostSpec, cap: int) -> Lease | None:
        for slot in range(cap):
            fd = try_lock_file(self.state_dir / f"{spec.key}.slot{slot}.lock", f"{os.getpid()} {spec.uri}\n")
            if fd is not None:
                return Lease(spec, slot, fd)
        return None


def _open(uri: str):
    from desktop_env.providers.libvirt.storage import _libvirt

    libvirt = _libvirt()
    try:
        return libvirt.open(uri)
    except libvirt.libvirtError as exc:
        raise HostError(f"cannot connect to libvirt at {uri}: {exc}") from exc


class SSHTunnel:
    """Local TCP forwards to ports on a remote host's loopback, over ``ssh -N -L``.

    Uses the user, host, port, ``keyfile`` and ``command`` (the ssh program) of a
    ``qemu+ssh`` URI, so it needs the same credentials libvirt's own ssh transport uses
    (a key, no password prompt).
    """

    def __init__(self, uri: str, remote_ports: list[int], timeout_s: float = 20.0):
        transport, user, host, port = uri_transport(uri)
        if transport != "ssh" or not host:
            raise HostError(f"an SSH tunnel needs a qemu+ssh URI, not {uri}")
        query = parse_qs(urlsplit(uri).query)
        ssh = query.get("command", ["ssh"])[0]
        if not shutil.which(ssh):
            from desktop_env.errors import HostToolMissing

            raise HostToolMissing(ssh, "openssh-client", "reach a remote VM's forwards")
        self.local_ports = [_free_port() for _ in remote_ports]
        cmd = [ssh, "-N", "-o", "BatchMode=yes", "-o", "ExitOnForwardFailure=yes",
               "-o", "ServerAliveInterval=15"]
        if port:
            cmd += ["-p", str(port)]
        if "keyfile" in query:
            cmd += ["-i", query["keyfile"][0]]
        for local, remote in zip(self.local_ports, remote_ports):
            cmd += ["-L", f"127.0.0.1:{local}:127.0.0.1:{remote}"]
        cmd.append(f"{user}@{host}" if user else host)
        self.command = cmd
        log.debug("opening SSH tunnel: %s", " ".join(cmd))
        self.process = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                        stderr=subprocess.PIPE, start_new_session=True)
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                err = self.process.stderr.read().decode(errors="replace").strip()
                raise HostError(f"SSH tunnel to {host} exited ({self.process.returncode}): {err}\n"
                                f"command: {' '.join(cmd)}")
            if all(_port_open(p) for p in self.local_ports):
                return
            time.sleep(0.1)
        self.close()
        raise HostError(f"SSH tunnel to {host} did not open within {timeout_s:.0f} s; command: {' '.join(cmd)}")

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(5)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _port_open(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(0.2)
        return s.connect_ex(("127.0.0.1", port)) == 0
