"""Helpers shared by the fault tests: leftovers of a run, a suite index for the test-only tasks."""
import json
import os
from pathlib import Path

import pytest

DATA = Path(__file__).resolve().parent / "data"
ROOT = Path(__file__).resolve().parents[2]

#: Test-only tasks under data/examples/faults/.
SLOW_TASK = "7af139e4-6090-4177-831c-1a85167598b3"   # its solution sleeps 20 s in the middle of a step
QUICK_TASK = "bab740d1-38cf-4034-9b2b-93733d29fbab"  # one command


def leftovers(run_dir: Path) -> list[str]:
    """What a finished run left behind in its runtime folder: VM folders, port locks, QEMU processes."""
    found = [str(p) for p in (run_dir / "vms").glob("*")] if (run_dir / "vms").exists() else []
    found += [str(p) for p in (run_dir / "ports").glob("*.lock")] if (run_dir / "ports").exists() else []
    found += [f"QEMU pid {pid}" for pid in qemu_pids(run_dir)]
    return found


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
