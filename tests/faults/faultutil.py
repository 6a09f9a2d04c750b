"""Helpers shared by the fault tests: leftovers of a run, a suite index for the test-only tasks."""
import json
import os
import threading
import time
from pathlib import Path

import pytest

DATA = Path(__file__).resolve().parent / "data"
ROOT = Path(__file__).resolve().parents[2]

#: Test-only tasks under data/examples/faults/.
SLOW_TASK = "7af139e4-6090-4177-831c-1a85167598b3"   # its solution sleeps 20 s in the middle of a step
QUICK_TASK = "bab740d1-38cf-4034-9b2b-93733d29fbab"  # one command


def leftovers(run_dir: Path, ports=()) -> list[str]:
    """What a finished run left behind: VM folders (overlay, QMP socket) in its runtime folder, QEMU
    processes, and lock files of ``ports`` that nobody holds (port locks live in the shared cache)."""
    from desktop_env.paths import ports_dir
    from desktop_env.ports import lock_is_held

    found = [str(p) for p in (run_dir / "vms").glob("*")] if (run_dir / "vms").exists() else []
    for port in sorted(set(ports)):
        lock = ports_dir() / f"{port}.lock"
        if lock.exists() and not lock_is_held(lock):  # held: another VM reserved the port since
            found.append(f"stale port lock {lock}")
    found += [f"QEMU pid {pid}" for pid in qemu_pids(run_dir)]
    return found


class PortWatcher:
    """Collects the ports of every VM that appears under ``run_dir`` while the block runs."""

    def __init__(self, run_dir: Path):
        self.run_dir = run_dir
        self.ports: set[int] = set()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)

    def _watch(self) -> None:
        while not self._stop.wait(0.3):
            for state in self.run_dir.glob("vms/*/state.json"):
                try:
                    data = json.loads(state.read_text())
                except (OSError, ValueError):
                    continue
                self.ports.update(data[k] for k in ("server_port", "cdp_port", "vnc_port") if k in data)

    def __enter__(self) -> "PortWatcher":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join(5)


def write_index(tmp_path: Path, *task_ids: str) -> Path:
    """A suite index {"faults": [ids]} for the test-only tasks in tests/faults/data."""
    index = tmp_path / "test_faults.json"
    index.write_text(json.dumps({"faults": list(task_ids)}))
    return index


root_only = pytest.mark.skipif(os.geteuid() != 0, reason="needs root (mounts a small tmpfs)")


def qemu_pids(run_dir: Path) -> list[int]:
    """Pids of the QEMU processes whose command line points into ``run_dir``."""
    pids = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmdline = (proc / "cmdline").read_bytes().decode(errors="replace")
        except OSError:
            continue
        if "qemu-system" in cmdline and str(run_dir) in cmdline:
            pids.append(int(proc.name))
    return pids


def terminal_reading_into(env, path: str, title: str) -> None:
    """Open a terminal titled ``title`` whose input goes to the guest file ``path``, and focus it."""
    env.controller.execute(["rm", "-f", path])
    env.controller.launch(["xfce4-terminal", "--title", title, "-x", "bash", "-c", f"cat > {path}"])
    deadline = time.monotonic() + 60
    while title not in env.controller.execute(["wmctrl", "-l"])["output"]:
        assert time.monotonic() < deadline, f"no window {title}"
        time.sleep(0.5)
    env.controller.activate_window(title)
    time.sleep(1.0)  # let the window manager hand it the focus before keys go there
