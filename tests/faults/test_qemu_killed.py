"""QEMU SIGKILLed in the middle of a step: a typed error, a retry on a fresh VM, nothing left behind."""
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import requests

from desktop_env.envs import DesktopEnv
from desktop_env.errors import VMError
from faultutil import DATA, ROOT, SLOW_TASK, PortWatcher, leftovers, qemu_pids, write_index

pytestmark = [pytest.mark.vm, pytest.mark.slow]


def _wait_for(predicate, timeout_s: float, what: str):
    deadline = time.monotonic() + timeout_s
    while True:
        value = predicate()
        if value:
            return value
        assert time.monotonic() < deadline, f"timed out after {timeout_s} s waiting for {what}"
        time.sleep(0.3)


def _guest_has(server_url: str, token: str, path: str) -> bool:
    try:
        reply = requests.post(server_url + "/execute", json={"command": ["test", "-e", path]},
                              headers={"Authorization": f"Bearer {token}"}, timeout=10)
        return reply.ok and reply.json()["returncode"] == 0
    except requests.RequestException:
        return False


def test_env_step_raises_vm_error_and_reset_recovers(base_image, private_runtime):
    env = DesktopEnv(path_to_vm=base_image.name, require_a11y_tree=False)
    try:
        env.reset()
        box = {}

        def long_step():
            try:
                box["result"] = env.step("open('/tmp/step-started', 'w').close(); time.sleep(30)")
            except Exception as exc:  # handed to the test below
                box["error"] = exc

        thread = threading.Thread(target=long_step, daemon=True)
        thread.start()
        _wait_for(lambda: _guest_has(env.provider.server.url, env.provider.token, "/tmp/step-started"), 60,
                  "the step to start in the guest")
        os.kill(env.provider.machine.pid, signal.SIGKILL)
        thread.join(60)
        assert not thread.is_alive(), "step() hung after QEMU was killed"
        assert isinstance(box.get("error"), VMError), box
        assert "stopped running" in str(box["error"])
        # The same env comes back: reset() starts a fresh QEMU from init_state.
        env.reset()
        _, _, _, _, info = env.step("pyautogui.moveTo(100, 100)")
        assert "error" not in info, info
        assert env.controller.execute(["test", "-e", "/tmp/step-started"])["returncode"] != 0
    finally:
        ports = [env.provider.server.port, env.provider.cdp.port, env.provider.vnc.port]
        env.close()
    assert leftovers(private_runtime, ports) == []


def test_run_py_retries_the_task_on_a_fresh_vm(base_image, private_runtime, tmp_path):
    index = write_index(tmp_path, SLOW_TASK)
    results = tmp_path / "results"
    cmd = [sys.executable, "run.py", "--model", "oracle", "--path_to_vm", base_image.name,
           "--test_all_meta_path", str(index), "--test_config_base_dir", str(DATA), "--result_dir", str(results)]
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    watcher = PortWatcher(private_runtime).__enter__()
    try:
        vms = private_runtime / "vms"

        def vm_state():
            for state in vms.glob("*/state.json"):
                try:
                    data = json.loads(state.read_text())
                except ValueError:
                    continue
                if "server_port" in data:
                    return data
            return None

        state = _wait_for(vm_state, 300, "run.py's VM to start")
        url = f"http://127.0.0.1:{state['server_port']}"
        _wait_for(lambda: _guest_has(url, state["token"], "/tmp/fault-step-started"), 300,
                  "the oracle's long step to start")
        pids = qemu_pids(private_runtime)
        assert len(pids) == 1, pids
        os.kill(pids[0], signal.SIGKILL)
        out, _ = proc.communicate(timeout=600)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(30)
        watcher.__exit__()
    assert proc.returncode == 0, out
    folder = results / "pyautogui" / "screenshot" / "oracle" / "faults" / SLOW_TASK
    assert float((folder / "result.txt").read_text()) == 1.0, out
    log_text = (folder / "runtime.log").read_text()
    assert "VMError" in log_text, log_text[-3000:]  # the first attempt, recorded as an infrastructure failure
    status = folder / "status.json"
    if status.exists():  # written by run.py once per-task status lands
        data = json.loads(status.read_text())
        assert data["attempts"] == 2 and data["status"] == "success" and data["score"] == 1.0, data
    assert len(watcher.ports) >= 3, watcher.ports
    assert leftovers(private_runtime, watcher.ports) == []
