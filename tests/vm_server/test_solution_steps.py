"""run.py's command steps (the oracle's shell steps) against the real in-VM server on the host: what
traj.jsonl records, and which steps count as failed."""
from __future__ import annotations

import importlib.util
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from desktop_env import limits

pytestmark = pytest.mark.xvfb
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def run_py():
    spec = importlib.util.spec_from_file_location("run_py_steps", ROOT / "run.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_command_step_records_exit_status_stdout_stderr_and_time(run_py, client):
    env = SimpleNamespace(controller=client)
    info = run_py.run_command_step(env, {"command": "echo made; echo warn >&2", "shell": True},
                                   time.monotonic() + 60)
    assert info["command_returncode"] == 0 and info["command_stdout"] == "made\n"
    assert info["command_stderr"] == "warn\n" and info["command_s"] >= 0
    assert run_py.step_failure(info) is None


def test_long_output_is_truncated_to_its_end(run_py, client):
    env = SimpleNamespace(controller=client)
    info = run_py.run_command_step(env, {"command": "seq 1 20000; echo the-end", "shell": True},
                                   time.monotonic() + 60)
    assert info["command_stdout"].startswith("[...]") and info["command_stdout"].endswith("the-end\n")
    assert len(info["command_stdout"]) <= run_py.OUTPUT_TAIL_CHARS + 5


def test_a_failing_command_step_names_its_exit_status_and_stderr(run_py, client):
    env = SimpleNamespace(controller=client)
    info = run_py.run_command_step(env, {"command": "echo 'kernel died' >&2; exit 1", "shell": True},
                                   time.monotonic() + 60)
    failure = run_py.step_failure(info)
    assert "exited with 1" in failure and "kernel died" in failure


def test_a_command_step_past_its_limit_is_a_failure_naming_the_limit(run_py, client, monkeypatch):
    monkeypatch.setitem(limits.LIMITS, "oracle.command", (1.0, "test"))
    monkeypatch.delenv(limits.SCALE_ENV, raising=False)
    env = SimpleNamespace(controller=client)
    info = run_py.run_command_step(env, {"command": "echo started; sleep 30", "shell": True}, time.monotonic() + 60)
    assert info["command_returncode"] is None and "started" in info["command_stdout"]
    assert "time limit oracle.command (1 s" in run_py.step_failure(info)
