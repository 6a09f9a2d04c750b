"""Domain XML for libvirt, generated from the QEMU provider's VMSpec with the same guest hardware.

The image's ready state was saved by ``qemu-system-x86_64`` with the command line of
:func:`desktop_env.machine.build_command`; a migration stream only
loads into the same devices at the same PCI addresses, so every device here is pinned
to the slot QEMU assigned there (VGA 1, xHCI 2, virtio-rng 3, virtio-blk 4,
virtio-net 5 on ``pcie.0``).
"""
from __future__ import annotations

from dataclasses import dataclass
from xml.sax.saxutils import quoteattr

from desktop_env.machine import VMSpec

QEMU_NS = "http://libvirt.org/schemas/domain/qemu/1.0"
#: Namespace of this project's element in a domain's <metadata>.
META_NS = "https://desktop-env.invalid/libvirt/1"

#: PCI slots on pcie.0, as QEMU assigns them for build_command's device order.
SLOT_VGA, SLOT_XHCI, SLOT_RNG, SLOT_DISK, SLOT_NET = 1, 2, 3, 4, 5
#: QEMU's default MAC for the first NIC (the one the ready state was saved with).
GUEST_MAC = "52:54:00:12:34:56"


@dataclass
class DomainFiles:
    """Paths on the libvirt host (not necessarily this machine) that the domain uses."""

    disk: str
    kernel: str | None = None
    initrd: str | None = None
    console_log: str | None = None


def _addr(slot: int) -> str:
    return f"<address type='pci' domain='0x0000' bus='0x00' slot='0x{slot:02x}' function='0x0'/>"


def _attr(value: object) -> str:
    return quoteattr(str(value))


def netdev_args(spec: VMSpec, forward_bind: str = "127.0.0.1") -> list[str]:
    """QEMU arguments of the user-mode NIC with its host forwards.

    libvirt 9.0 accepts ``<portForward>`` on a user-mode interface but ignores it, so the
    NIC is passed straight to QEMU; being part of the domain's command line, the
    forwards survive ``revertToSnapshot`` (which restarts QEMU).
    """
    netdev = "user,id=net0"
    if not spec.allow_internet:
        netdev += ",restrict=on"
    for guest_port, host_port in sorted(spec.forwards.items()):
        netdev += f",hostfwd=tcp:{forward_bind}:{host_port}-:{guest_port}"
    device = f"virtio-net-pci,netdev=net0,mac={GUEST_MAC},bus=pcie.0,addr=0x{SLOT_NET:x}"
    return ["-netdev", netdev, "-device", device]


def domain_xml(name: str, uuid: str, spec: VMSpec, files: DomainFiles, accel: str,
               forward_bind: str = "127.0.0.1", vnc: bool = True, owner: dict | None = None) -> str:
    """The domain XML for ``spec``.

    Args:
        name, uuid: the domain's identity.
        spec: hardware and boot (its ``disk``/``kernel``/``initrd`` are ignored: ``files``
            holds the host-side paths); ``forwards`` are the host ports on the libvirt host.
        files: host-side paths of the disk overlay, kernel, initrd and console log.
        accel: ``kvm`` or ``tcg`` (already resolved): domain type ``kvm`` or ``qemu``.
        forward_bind: address on the libvirt host the forwards listen on (loopback by default).
        vnc: add a VNC display on the host's loopback (port picked by libvirt, see the live XML).
        owner: recorded in the domain's metadata (``host``, ``pid``) so a crashed owner's
            domains can be found and removed.
    """
    if accel not in ("kvm", "tcg"):
        raise ValueError(f"accel must be resolved to kvm or tcg, not {accel!r}")
    width, height = spec.screen
    dom_type = "kvm" if accel == "kvm" else "qemu"
    cpu = "<cpu mode='host-passthrough' check='none'/>" if accel == "kvm" else "<cpu mode='maximum' check='none'/>"
    boot = []
    if files.kernel:
        boot.append(f"<kernel>{_text(files.kernel)}</kernel>")
        if files.initrd:
            boot.append(f"<initrd>{_text(files.initrd)}</initrd>")
        if spec.cmdline:
            boot.append(f"<cmdline>{_text(spec.cmdline)}</cmdline>")
    else:
        boot.append("<boot dev='hd'/>")
    if files.console_log:
        serial = (f"<serial type='file'><source path={_attr(files.console_log)} append='on'/>"
                  "<target type='isa-serial' port='0'><model name='isa-serial'/></target></serial>")
    else:
        serial = "<serial type='null'><target type='isa-serial' port='0'><model name='isa-serial'/></target></serial>"
    graphics = ""
    if vnc:
        graphics = ("<graphics type='vnc' autoport='yes' listen='127.0.0.1'>"
                    "<listen type='address' address='127.0.0.1'/></graphics>")
    owner_attrs = "".join(f" {k}={_attr(v)}" for k, v in sorted((owner or {}).items()))
    args = "".join(f"<qemu:arg value={_attr(a)}/>" for a in netdev_args(spec, forward_bind))
    lines = [
        f"<domain type='{dom_type}' xmlns:qemu='{QEMU_NS}'>",
        f"  <name>{_text(name)}</name>",
        f"  <uuid>{uuid}</uuid>",
        f"  <metadata><desktop-env:owner xmlns:desktop-env='{META_NS}'{owner_attrs}/></metadata>",
        f"  <memory unit='MiB'>{spec.memory_mb}</memory>",
        "  <genid/>",
        f"  <vcpu placement='static'>{spec.cpus}</vcpu>",
        "  <os>",
        f"    <type arch='x86_64' machine='{spec.machine_type}'>hvm</type>",
        *(f"    {b}" for b in boot),
        "  </os>",
        "  <features><acpi/><apic/></features>",
        f"  {cpu}",
        "  <clock offset='utc'/>",
        "  <on_poweroff>destroy</on_poweroff>",
        "  <on_reboot>restart</on_reboot>",
        "  <on_crash>destroy</on_crash>",
        "  <devices>",
        "    <disk type='file' device='disk'>",
        f"      <driver name='qemu' type='{spec.disk_format}' cache='writeback' discard='unmap'/>",
        f"      <source file={_attr(files.disk)}/>",
        "      <target dev='vda' bus='virtio'/>",
        f"      {_addr(SLOT_DISK)}",
        "    </disk>",
        "    <controller type='pci' index='0' model='pcie-root'/>",
        f"    <controller type='usb' index='0' model='qemu-xhci'>{_addr(SLOT_XHCI)}</controller>",
        "    <controller type='sata' index='0'><address type='pci' domain='0x0000' bus='0x00' slot='0x1f' function='0x2'/></controller>",
        "    <input type='tablet' bus='usb'><address type='usb' bus='0' port='1'/></input>",
        "    <input type='mouse' bus='ps2'/>",
        "    <input type='keyboard' bus='ps2'/>",
        f"    {serial}",
        f"    {graphics}" if graphics else "",
        f"    <video><model type='vga' vram='{32 * 1024}' heads='1' primary='yes'>"
        f"<resolution x='{width}' y='{height}'/></model>{_addr(SLOT_VGA)}</video>",
        f"    <rng model='virtio'><backend model='builtin'/>{_addr(SLOT_RNG)}</rng>",
        "    <memballoon model='none'/>",
        "  </devices>",
        f"  <qemu:commandline>{args}</qemu:commandline>",
        "</domain>",
    ]
    return "\n".join(line for line in lines if line) + "\n"


def _text(value: str) -> str:
    from xml.sax.saxutils import escape

    return escape(str(value))
