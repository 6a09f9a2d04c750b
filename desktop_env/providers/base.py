"""The provider contract (start, stop, snapshots, host-side screenshot, server address) and registry."""
from __future__ import annotations

import abc
import difflib
import logging
import time
from dataclasses import dataclass

from desktop_env.errors import DesktopEnvError
from desktop_env.registry import PROVIDERS

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Endpoint:
    """A host-reachable TCP address of a service inside the VM."""

    host: str
    port: int

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"


class Provider(abc.ABC):
    """Runs one desktop VM.

    The whole contract: :meth:`start` boots or restores the VM to its ready state,
    :meth:`stop` stops it (softly, then hard) and releases everything it held;
    snapshots are saved, reverted, listed and deleted by name, ``init_state`` being the
    image's ready state; :meth:`screenshot` grabs the display from the host side when
    the provider can (returns None otherwise); :attr:`server` is where the in-VM
    server answers. Providers are context managers.
    """

    #: Name in the registry (``--provider_name``).
    name: str = ""
    #: Capabilities the harness asks for instead of testing the provider's name:
    #: ``images``: it runs the images this project builds (``--path_to_vm`` names one in the local cache), so a
    #: run's manifest records the image's identity; ``warm_states``: it restores (and builds) the images' warm
    #: states (:meth:`restore_state` and :meth:`capture_state` work); ``local_memory``: its VMs run on this host
    #: and hold its memory, so a run caps ``--num_envs`` to what fits (desktop_env.image.capacity).
    images: bool = False
    warm_states: bool = False
    local_memory: bool = False

    @abc.abstractmethod
    def start(self) -> None:
        """Bring the VM to ``init_state`` with its in-VM server answering."""

    @abc.abstractmethod
    def stop(self) -> None:
        """Stop the VM and release its processes, files and ports."""

    @abc.abstractmethod
    def revert_to_snapshot(self, name: str = "init_state") -> float:
        """Restore a snapshot; returns the seconds it took until the server answered."""

    @abc.abstractmethod
    def save_snapshot(self, name: str) -> None:
        """Save the running VM's state under ``name`` (``init_state`` is reserved)."""

    @abc.abstractmethod
    def list_snapshots(self) -> list[str]:
        """Names of the snapshots this VM can revert to (``init_state`` first)."""

    @abc.abstractmethod
    def delete_snapshot(self, name: str) -> None:
        """Delete a custom snapshot."""

    def restore_state(self, state) -> float:
        """Restore a built warm state (:class:`desktop_env.image.states.WarmState`) on a fresh disk layer;
        returns the seconds until the server answered. Providers without warm states raise SnapshotError."""
        from desktop_env.errors import SnapshotError

        raise SnapshotError(f"the {self.name} provider cannot restore warm states (only the qemu provider can); "
                            "run tasks that name one with --provider_name qemu")

    def capture_state(self, work) -> dict:
        """Save the running VM as a warm state into the folder ``work`` (``state.bin``, ``disk.qcow2``)
        and stop it; returns facts to record. Providers without warm states raise SnapshotError."""
        from desktop_env.errors import SnapshotError

        raise SnapshotError(f"the {self.name} provider cannot save warm states (only the qemu provider can)")

    @abc.abstractmethod
    def screenshot(self) -> bytes | None:
        """PNG of the display taken from the host, or None if this provider cannot."""

    @property
    @abc.abstractmethod
    def server(self) -> Endpoint:
        """Host address of the in-VM HTTP server."""

    @property
    def cdp(self) -> Endpoint | None:
        """Host address of Chromium's remote-debugging port in the VM, if forwarded."""
        return None

    @property
    def vnc(self) -> Endpoint | None:
        """Host address of the VM's VNC display, if any."""
        return None

    @property
    def token(self) -> str | None:
        """Bearer token of the in-VM server (None when the image was built with --no_auth)."""
        return None

    def is_running(self) -> bool:
        """Whether the VM's process is alive (providers that cannot tell say True)."""
        return bool(self.status().get("running", True))

    @abc.abstractmethod
    def status(self) -> dict:
        """A JSON-able description: running, pid, ports, image, snapshot list."""

    def __enter__(self) -> "Provider":
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()





def set_guest_clock(session, server_url: str, token: str | None) -> None:
    """Set the guest's clock to the host's now (after a restore the guest's clock is the saved one).

    Failures are logged, not raised: a wrong clock should not stop an episode.
    """
    import requests

    headers = {"Authorization": f"Bearer {token}"} if token else {}
    try:
        reply = session.post(server_url + "/setup/set_clock", json={"epoch": time.time()}, headers=headers,
                             timeout=10)
        if not reply.ok:
            log.warning("setting the guest clock failed: HTTP %s %s", reply.status_code, reply.text[:200])
    except requests.RequestException as exc:
        log.warning("setting the guest clock failed: %s", exc)


def wait_for_server(session, server_url: str, timeout_s: float, check_alive, poll_s: float = 0.05) -> None:
    """Poll the in-VM server's ``/health`` until it gives any HTTP answer below 500.

    Any answer means the server runs (servers of other suites have no ``/health``).

    Args:
        check_alive: called before each poll; raises (usually ``VMError``) when the VM has
            died, so a dead VM fails at once instead of at the deadline.

    Raises:
        VMError: no answer within ``timeout_s``.
    """
    import requests

    from desktop_env.errors import VMError

    deadline = time.monotonic() + timeout_s
    url = server_url + "/health"
    last = "no answer"
    while time.monotonic() < deadline:
        check_alive()
        try:
            reply = session.get(url, timeout=2)
            if reply.status_code < 500:
                return
            last = f"HTTP {reply.status_code}"
        except requests.RequestException as exc:
            last = type(exc).__name__
        time.sleep(poll_s)
    raise VMError(f"the in-VM server at {url} did not answer within {timeout_s:.0f} s (last: {last})")


def register_provider(name: str):
    """Class decorator adding a provider under ``name`` (duplicates refused), in
    :data:`desktop_env.registry.PROVIDERS`."""

    def deco(cls):
        cls.name = name
        return PROVIDERS.register(name)(cls)

    return deco


def create_provider(name: str, **kwargs) -> Provider:
    """Instantiate a registered provider by name.

    Raises:
        DesktopEnvError: unknown name, with a did-you-mean.
    """
    if name not in PROVIDERS:
        close = difflib.get_close_matches(name, PROVIDERS.names(), n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise DesktopEnvError(f"unknown provider {name!r} (known: {', '.join(PROVIDERS.names())}){hint}")
    return PROVIDERS[name](**kwargs)


def provider_names() -> list[str]:
    """Registered provider names."""
    return PROVIDERS.names()
