"""A DesktopEnv tells a VM that died from a server that failed, even while the dying QEMU is not reaped yet."""
import subprocess
import sys

import pytest

from desktop_env import limits
from desktop_env.envs import desktop_env as desktop_env_module
from desktop_env.envs.desktop_env import DesktopEnv
from desktop_env.errors import DesktopEnvError, GuestServerError, VMError


class _ProcessProvider:
    """A provider whose VM is a real process: running while the process is."""

    name = "qemu"

    def __init__(self, proc: subprocess.Popen):
        self.proc = proc

    def is_running(self) -> bool:
        return self.proc.poll() is None


def _env(proc) -> DesktopEnv:
    env = DesktopEnv.__new__(DesktopEnv)
    env.provider = _ProcessProvider(proc)
    return env


def test_a_vm_that_exits_just_after_its_server_failed_is_a_vm_error(monkeypatch):
    # a killed QEMU's forwarded port refuses before the kernel reaps the process: the exit comes a moment after
    monkeypatch.delenv(limits.SCALE_ENV, raising=False)
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(0.5)"])
    try:
        with pytest.raises(VMError, match="the VM stopped running") as err:
            _env(proc)._raise_if_vm_died(GuestServerError("GET /screenshot failed: connection refused"))
        assert isinstance(err.value.__cause__, GuestServerError)
    finally:
        proc.kill()
        proc.wait()


def test_a_vm_still_running_after_the_limit_is_not_dead(monkeypatch):
    monkeypatch.delenv(limits.SCALE_ENV, raising=False)
    monkeypatch.setitem(limits.LIMITS, "vm.exit", (0.3, "test"))
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        _env(proc)._raise_if_vm_died(GuestServerError("GET /screenshot failed: 500"))  # returns: the caller handles it
        assert proc.poll() is None
    finally:
        proc.kill()
        proc.wait()


class _Clock:
    """Stands in for the module's ``time``: sleeping advances the clock, and the total slept is kept."""

    def __init__(self):
        self.now = 0.0
        self.slept = 0.0

    def monotonic(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds
        self.slept += seconds


class _FailingScreens:
    """A running VM whose host-side screendump and in-VM server both fail."""

    name = "qemu"

    def is_running(self) -> bool:
        return True

    def screenshot(self):
        raise DesktopEnvError("screendump failed: QMP timed out")


class _FailingServer:
    def screenshot(self):
        raise GuestServerError("GET /screenshot failed: 500")


def test_a_screenshot_of_a_live_vm_whose_two_sources_fail_waits_for_its_exit_once(monkeypatch):
    monkeypatch.delenv(limits.SCALE_ENV, raising=False)
    monkeypatch.setitem(limits.LIMITS, "vm.exit", (5.0, "test"))
    clock = _Clock()
    monkeypatch.setattr(desktop_env_module, "time", clock)
    env = DesktopEnv.__new__(DesktopEnv)
    env.provider, env.controller = _FailingScreens(), _FailingServer()
    with pytest.raises(GuestServerError, match="500"):
        env.screenshot_png()
    assert 5.0 <= clock.slept < 5.2  # one wait of vm.exit, not one per failed source
