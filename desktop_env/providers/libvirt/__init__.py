"""The libvirt provider (``--provider_name libvirt``): domains on this machine or remote hosts."""
from desktop_env.providers.libvirt.provider import LibvirtProvider

__all__ = ["LibvirtProvider"]
