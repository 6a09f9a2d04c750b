"""A DesktopEnv tells a VM that died from a server that failed, even while the dying QEMU is not reaped yet."""
import subprocess
import sys

import pytest

from desktop_env import limits
from desktop_env.envs.desktop_env import DesktopEnv
from desktop_env.errors import GuestServerError, VMError


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
