"""DesktopEnv and the QEMU provider on a real guest: reset, both action spaces, snapshots, concurrency, crashes."""
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

import desktop_env.envs  # noqa: F401 - registers DesktopEnv-v0
from desktop_env.envs import DesktopEnv
from desktop_env.errors import DesktopEnvError, ScreenSizeMismatch
from desktop_env.providers.qemu.provider import QemuProvider

pytestmark = [pytest.mark.vm, pytest.mark.slow]


def _wait_for(predicate, timeout_s=30.0, what="condition"):
    deadline = time.monotonic() + timeout_s
    last = None
    while time.monotonic() < deadline:
        last = predicate()
        if last:
            return last
        time.sleep(0.3)
    raise AssertionError(f"timed out after {timeout_s} s waiting for {what} (last: {last!r})")


def _open_terminal(env, title):
    env.controller.launch(["xfce4-terminal", "--title", title])
    _wait_for(lambda: title in env.controller.execute(["wmctrl", "-l"])["output"], 60, f"window {title}")
    env.controller.activate_window(title)
    time.sleep(1.0)


def test_step_before_reset_and_screen_mismatch(base_image):
    env = DesktopEnv(path_to_vm=base_image.name)
    try:
        with pytest.raises(DesktopEnvError, match="before reset"):
            env.step("DONE")
    finally:
        env.close()
    with pytest.raises(ScreenSizeMismatch, match="--screen 800x600"):
        DesktopEnv(path_to_vm=base_image.name, screen_size=(800, 600))


def test_reset_and_pyautogui_steps(base_image):
    with DesktopEnv(path_to_vm=base_image.name, action_space="pyautogui", require_terminal=True) as env:
        obs, info = env.reset()
        assert obs["screenshot"].shape == (base_image.screen[1], base_image.screen[0], 3)
        assert env.observation_space.contains(obs)
        assert info["revert_s"] < 60
        _open_terminal(env, "env-term")
        obs, reward, terminated, truncated, info = env.step(
            "pyautogui.write('echo pyauto-ok > /tmp/env.txt', interval=0.01); pyautogui.press('enter')")
        assert not terminated and "error" not in info, info
        _wait_for(lambda: env.controller.execute(["cat", "/tmp/env.txt"])["output"].strip() == "pyauto-ok", 30)
        # An invalid action is reported, not raised.
        obs, reward, terminated, truncated, info = env.step("pyautogui.click(")
        assert "not valid Python" in info["error"] and "not valid Python" in obs["error"]
        obs, reward, terminated, truncated, info = env.step("raise RuntimeError('boom')")
        assert "boom" in info["error"]
        obs, reward, terminated, truncated, info = env.step("DONE")
        assert terminated and reward == 0.0
        # reset restores init_state: the file is gone.
        env.reset()
        assert env.controller.execute(["test", "-e", "/tmp/env.txt"])["returncode"] != 0


def test_computer_13_typing_unicode_and_truncation(base_image):
    with DesktopEnv(path_to_vm=base_image.name, action_space="computer_13", max_steps=4,
                    require_a11y_tree=False) as env:
        env.reset()
        _open_terminal(env, "c13-term")
        geometry = env.controller.execute("xdotool search --name c13-term getwindowgeometry --shell", shell=True)
        g = dict(line.split("=", 1) for line in geometry["output"].split() if "=" in line)
        x, y = int(g["X"]) + int(g["WIDTH"]) // 2, int(g["Y"]) + int(g["HEIGHT"]) // 2
        steps = [
            {"action_type": "CLICK", "x": x, "y": y},
            {"action_type": "TYPING", "text": "echo 'héllo ✓ 日本; ok' > /tmp/u.txt"},
            {"action_type": "PRESS", "key": "enter"},
        ]
        for action in steps:
            _, _, terminated, truncated, info = env.step(action)
            assert not terminated and not truncated and "error" not in info, (action, info)
        text = _wait_for(lambda: env.controller.execute(["cat", "/tmp/u.txt"])["output"], 30, "unicode file")
        assert text.strip() == "héllo ✓ 日本; ok"
        _, _, terminated, truncated, info = env.step({"action_type": "NOPE"})
        assert truncated and not terminated, "the 4th step reaches max_steps"
        assert "unknown action_type" in info["error"]
        assert info["score"] == 0.0


def test_check_env_passes(base_image):
    from gymnasium.utils.env_checker import check_env

    env = gym.make("DesktopEnv-v0", path_to_vm=base_image.name, require_a11y_tree=False, max_steps=3)
    try:
        check_env(env.unwrapped, skip_render_check=False)
    finally:
        env.close()


def test_custom_snapshot_save_revert(base_image):
    with QemuProvider(image=base_image) as vm:
        from desktop_env.controllers.python import PythonController

        guest = PythonController(vm.server.host, vm.server.port, token=vm.token)
        guest.execute(["touch", "/tmp/before-snapshot"])
        vm.save_snapshot("snap1")
        from desktop_env.image.states import list_states

        warm = [state.name for state in list_states(base_image)]  # the image's built warm states come first
        assert vm.list_snapshots() == ["init_state", *warm, "snap1"]
        guest.execute(["touch", "/tmp/after-snapshot"])
        vm.revert_to_snapshot("snap1")
        assert guest.execute(["test", "-e", "/tmp/before-snapshot"])["returncode"] == 0
        assert guest.execute(["test", "-e", "/tmp/after-snapshot"])["returncode"] != 0
        vm.delete_snapshot("snap1")
        assert vm.list_snapshots() == ["init_state", *warm]
        vm.revert_to_snapshot("init_state")
        assert guest.execute(["test", "-e", "/tmp/before-snapshot"])["returncode"] != 0
        with pytest.raises(DesktopEnvError):
            vm.revert_to_snapshot("nope")
        with pytest.raises(DesktopEnvError):
            vm.save_snapshot("init_state")


def test_two_envs_in_one_process(base_image):
    a, b = QemuProvider(image=base_image), QemuProvider(image=base_image)
    try:
        a.start()
        b.start()
        assert len({a.server.port, a.cdp.port, a.vnc.port, b.server.port, b.cdp.port, b.vnc.port}) == 6
        from desktop_env.controllers.python import PythonController

        ga = PythonController(a.server.host, a.server.port, token=a.token)
        gb = PythonController(b.server.host, b.server.port, token=b.token)
        ga.execute(["touch", "/tmp/only-in-a"])
        assert gb.execute(["test", "-e", "/tmp/only-in-a"])["returncode"] != 0
        assert a.dir != b.dir and (a.dir / "overlay.qcow2").stat().st_size < 64 << 20
    finally:
        a.stop()
        b.stop()
    assert not a.dir.exists() and not b.dir.exists()


CHILD = textwrap.dedent("""
    import json, sys, time
    from desktop_env.providers.qemu.provider import QemuProvider
    vm = QemuProvider(image=sys.argv[1])
    vm.start()
    print(json.dumps({"dir": str(vm.dir), "pid": vm.machine.pid, "ports": [vm.server.port, vm.cdp.port, vm.vnc.port]}),
          flush=True)
    if sys.argv[2] == "hang":
        time.sleep(600)
    vm.stop()
""")


def test_two_processes_then_kill_9_and_clean_start(base_image):
    procs = [subprocess.Popen([sys.executable, "-c", CHILD, base_image.name, "hang"], stdout=subprocess.PIPE,
                              text=True) for _ in range(2)]
    try:
        infos = [json.loads(p.stdout.readline()) for p in procs]
        ports = infos[0]["ports"] + infos[1]["ports"]
        assert len(set(ports)) == 6
        # kill -9 the Python owner: its QEMU is orphaned until the next start cleans it up.
        os.kill(procs[0].pid, signal.SIGKILL)
        procs[0].wait(10)
        dead = infos[0]
        with QemuProvider(image=base_image) as vm:
            assert vm.server.port  # a clean start works
            assert not Path(dead["dir"]).exists()
            assert not Path(f"/proc/{dead['pid']}").exists()
            assert Path(infos[1]["dir"]).exists(), "a live owner's VM is left alone"
    finally:
        for p in procs:
            p.kill()
            p.wait(10)
    with QemuProvider(image=base_image) as vm:
        pass
    # only this test's VMs: other processes (a run.py beside the tests) may have their own here
    leftovers = [d for d in (infos[0]["dir"], infos[1]["dir"], str(vm.dir)) if Path(d).exists()]
    assert leftovers == [], leftovers


def test_host_side_recording(base_image, tmp_path):
    with DesktopEnv(path_to_vm=base_image.name, require_a11y_tree=False) as env:
        env.reset()
        env.start_recording(tmp_path / "episode.mp4", fps=2)
        env.step("pyautogui.moveTo(100, 100, duration=1)")
        time.sleep(2)
        out = env.end_recording()
    probe = subprocess.run(["ffprobe", "-v", "error", "-show_entries", "format=duration:stream=width,height",
                            "-of", "json", str(out)], capture_output=True, text=True, check=True)
    info = json.loads(probe.stdout)
    assert float(info["format"]["duration"]) >= 2.0
    assert (info["streams"][0]["width"], info["streams"][0]["height"]) == base_image.screen


def test_forgotten_vm_is_stopped_at_interpreter_exit(base_image):
    code = ("import json, sys\nfrom desktop_env.providers.qemu.provider import QemuProvider\n"
            "vm = QemuProvider(image=sys.argv[1]); vm.start()\n"
            "print(json.dumps({'dir': str(vm.dir), 'pid': vm.machine.pid}))\n")
    out = subprocess.run([sys.executable, "-c", code, base_image.name], capture_output=True, text=True,
                         timeout=300, check=True)
    info = json.loads(out.stdout.strip().splitlines()[-1])
    assert not Path(info["dir"]).exists()
    assert not Path(f"/proc/{info['pid']}").exists()
