"""Helpers for tests that run real services on the host: free ports, waiting, stopping, Dagster's venv."""
from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from desktop_env.paths import cache_dir


def data_image_pins(*names: str) -> list[str]:
    """``name==version`` for each package as the data image's dagster venv pins it (its lock file)."""
    from desktop_env.image.recipe import PROFILES_DIR

    lock = json.loads((PROFILES_DIR / "data.lock.json").read_text())
    pins = {p["name"].lower(): p["version"] for p in lock["venvs"]["dagster"]["pins"]}
    return [f"{name}=={pins[name]}" for name in names]


#: The Dagster the data image pins.
DAGSTER_SPEC = data_image_pins("dagster", "dagster-webserver")


def dagster_venv_bin() -> Path:
    """bin/ of a cached venv with the data image's Dagster (built once per version, shared by runs)."""
    key = hashlib.sha256((" ".join(DAGSTER_SPEC) + sys.version).encode()).hexdigest()[:16]
    root = cache_dir() / "test-venvs"
    venv = root / f"dagster-{key}"
    root.mkdir(parents=True, exist_ok=True)
    with open(root / f"dagster-{key}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (venv / ".complete").exists():
            shutil.rmtree(venv, ignore_errors=True)
            subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
            subprocess.run([str(venv / "bin" / "pip"), "install", "--quiet", "--disable-pip-version-check",
                            *DAGSTER_SPEC], check=True)
            (venv / ".complete").write_text(json.dumps(DAGSTER_SPEC))
    return venv / "bin"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_http(url: str, timeout_s: float, proc: subprocess.Popen | None = None, what: str = "") -> None:
    """Wait until ``url`` answers; fail the test if ``proc`` exits first or the time runs out."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            with urllib.request.urlopen(url, timeout=3):
                return
        except OSError:
            if proc is not None and proc.poll() is not None:
                pytest.fail(f"{what} exited with {proc.returncode} before {url} answered")
            if time.monotonic() > deadline:
                pytest.fail(f"{what} did not answer at {url} within {timeout_s:.0f} s")
            time.sleep(0.5)


def stop(proc: subprocess.Popen) -> None:
    """Stop a process started with ``start_new_session=True`` and its whole group."""
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=15)
    except (ProcessLookupError, subprocess.TimeoutExpired):
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait(timeout=5)
