"""libvirt provider without a VM: golden domain XML, save-image header, host list, scheduler, test:///default shapes."""
import os
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from desktop_env.providers.libvirt.domain import DomainFiles, domain_xml
from desktop_env.providers.libvirt.hosts import (HostError, HostScheduler, HostSpec, forward_route, host_capacity,
                                                 is_local, parse_hosts, uri_transport)
from desktop_env.providers.libvirt.storage import SAVE_HEADER, StorageError, parse_save_header, save_header
from desktop_env.machine import VMSpec

pytestmark = pytest.mark.libvirt

GOLDEN = Path(__file__).parent / "golden"
SPEC = dict(disk=Path("/ignored"), cmdline="root=/dev/vda rw console=ttyS0", memory_mb=3072, cpus=2,
            screen=(1920, 1080), forwards={5000: 41000, 9222: 41001})
UUID = "6f1c2d3e-0000-4000-8000-000000000001"

CASES = {
    "tcg-kernel": dict(spec=VMSpec(**SPEC), accel="tcg",
                       files=DomainFiles("/pool/env.qcow2", "/pool/img.vmlinuz", "/pool/img.initrd",
                                         "/var/log/libvirt/qemu/env-console.log")),
    "kvm-disk-boot-internet": dict(spec=VMSpec(**SPEC, allow_internet=True), accel="kvm",
                                   files=DomainFiles("/pool/env.qcow2"), vnc=False),
    "tcg-bind-lan": dict(spec=VMSpec(**SPEC), accel="tcg", forward_bind="192.0.2.7",
                         files=DomainFiles("/pool/env.qcow2", "/pool/k", None, None),
                         owner={"host": "worker1", "pid": 4242}),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_domain_xml_matches_golden(case):
    args = dict(CASES[case])
    xml = domain_xml("desktop-env-test", UUID, args.pop("spec"), args.pop("files"), args.pop("accel"), **args)
    golden = GOLDEN / f"{case}.xml"
    if os.environ.get("UPDATE_GOLDEN"):
        golden.write_text(xml)
    assert xml == golden.read_text(), f"domain XML changed; if intended, regenerate with UPDATE_GOLDEN=1 ({golden})"
    ET.fromstring(xml)  # well-formed


def test_domain_xml_pins_the_ready_state_devices():
    root = ET.fromstring(domain_xml("d", UUID, VMSpec(**SPEC), DomainFiles("/d", "/k"), "tcg"))
    assert root.get("type") == "qemu"
    pinned = ET.fromstring(domain_xml("d", UUID, VMSpec(**SPEC, machine_type="pc-q35-7.2"), DomainFiles("/d"), "tcg"))
    assert pinned.find("os/type").get("machine") == "pc-q35-7.2", "the image's versioned machine type"
    slots = {el.tag: el.find("address").get("slot") for el in root.find("devices")
             if el.find("address") is not None and el.find("address").get("type") == "pci"}
    assert slots["video"] == "0x01" and slots["disk"] == "0x04" and slots["rng"] == "0x03"
    args = [a.get("value") for a in root.iter("{http://libvirt.org/schemas/domain/qemu/1.0}arg")]
    assert "hostfwd=tcp:127.0.0.1:41000-:5000" in args[1] and "restrict=on" in args[1]
    assert "addr=0x5" in args[3]
    with pytest.raises(ValueError, match="resolved"):
        domain_xml("d", UUID, VMSpec(**SPEC), DomainFiles("/d"), "auto")


def test_save_header_round_trip_and_limits():
    blob = save_header("<domain/>", room=4096)
    assert len(blob) == SAVE_HEADER.size + 4096 and SAVE_HEADER.size == 92
    assert parse_save_header(blob) == (2, 4096)
    assert blob[92:101] == b"<domain/>" and blob[101] == 0
    with pytest.raises(StorageError, match="does not fit"):
        save_header("x" * 5000, room=4096)
    with pytest.raises(StorageError, match="magic"):
        parse_save_header(b"QEVM" + bytes(100))


def test_parse_hosts_and_uris():
    assert parse_hosts(None) == [HostSpec("qemu:///system")]
    hosts = parse_hosts("qemu:///system#2, qemu+ssh://me@gpu1:2222/system?keyfile=/k")
    assert hosts == [HostSpec("qemu:///system", 2), HostSpec("qemu+ssh://me@gpu1:2222/system?keyfile=/k")]
    assert uri_transport(hosts[1].uri) == ("ssh", "me", "gpu1", 2222)
    assert is_local("qemu:///system") and not is_local("qemu+tcp://127.0.0.1/system")
    assert uri_transport("qemu://h/system")[0] == "tls"
    for bad, msg in (("gpu1", "not a libvirt URI"), ("qemu:///system#x", "whole number"),
                     ("qemu:///system#0", "at least 1"), ("qemu:///system,qemu:///system", "twice")):
        with pytest.raises(HostError, match=msg):
            parse_hosts(bad)


@pytest.mark.parametrize("uri, route", [
    ("qemu:///system", "loopback"),
    ("qemu+tcp://127.0.0.1/system", "loopback"),
    ("qemu+ssh://me@localhost/system", "loopback"),
    ("qemu+ssh://me@gpu1:2222/system?keyfile=/k", "tunnel"),
])
def test_forward_route(uri, route):
    assert forward_route(uri) == forward_route(uri, "127.0.0.1") == route


@pytest.mark.parametrize("uri", ["qemu+tcp://gpu1/system", "qemu+tls://gpu1/system", "qemu://gpu1/system"])
def test_forward_route_refuses_a_remote_loopback_without_ssh(uri):
    with pytest.raises(HostError, match="use a qemu\\+ssh URI"):
        forward_route(uri)


@pytest.mark.parametrize("bind", ["0.0.0.0", "192.0.2.7", "localhost"])
def test_forward_route_refuses_other_bind_addresses(bind):
    # The guest cannot answer a client outside the host's loopback (test_libvirt_ssh checks its routes).
    for uri in ("qemu:///system", "qemu+ssh://me@gpu1/system", "qemu+tcp://gpu1/system"):
        with pytest.raises(HostError, match="no route back"):
            forward_route(uri, bind)


def test_scheduler_spreads_by_capacity_and_skips_failed(tmp_path):
    hosts = parse_hosts("test:///default#1,qemu+tcp://192.0.2.1/system#2")
    sched = HostScheduler(hosts, tmp_path, cooldown_s=60)
    first = sched.acquire(timeout_s=0)
    second = sched.acquire(timeout_s=0)
    assert {first.uri, second.uri} == {h.uri for h in hosts}  # least loaded first
    third = sched.acquire(timeout_s=0)
    assert third.uri == hosts[1].uri and third.slot == 1
    with pytest.raises(HostError, match="at capacity"):
        sched.acquire(timeout_s=0)
    first.release()
    sched.mark_failed(hosts[0].uri, "boom")
    assert sched.failed(hosts[0].uri) == "boom"
    with pytest.raises(HostError, match="boom"):  # the only host with room is out of rotation
        sched.acquire(timeout_s=0)
    # A second scheduler over the same folder (another worker process) sees the same state.
    other = HostScheduler(hosts, tmp_path, cooldown_s=0)
    assert other.failed(hosts[0].uri) is None  # cooldown over: back in rotation
    assert other.acquire(timeout_s=0).uri == hosts[0].uri
    for lease in (second, third):
        lease.release()


def test_unreachable_host_leaves_rotation(tmp_path, libvirt_mod):
    hosts = parse_hosts("qemu+tcp://127.0.0.1:1/system,test:///default")
    sched = HostScheduler(hosts, tmp_path)
    lease = sched.acquire(timeout_s=0)
    assert lease.uri == "test:///default"
    assert "cannot connect" in sched.failed(hosts[0].uri)
    assert sched.capacity(hosts[1]) >= 1


def test_capacity_from_host_resources(libvirt_mod):
    conn = libvirt_mod.open("test:///default")  # API shape only: the test driver's fake node
    try:
        model, memory_mb, cpus, *_ = conn.getInfo()
        expected = max(1, min(cpus // 2, (memory_mb - 2048) // 1024))
        assert host_capacity(conn, vm_cpus=2, vm_memory_mb=1024) == expected
        assert host_capacity(conn, vm_cpus=10_000, vm_memory_mb=1024) == 1
    finally:
        conn.close()
