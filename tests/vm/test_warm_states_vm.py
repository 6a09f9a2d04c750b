"""Warm states on a real VM (base image): built once and reused, rebuilt when the recipe changes, built
once under concurrent first use, isolated between environments, nothing left by an interrupted build,
and a task naming a state starts with its tool running."""
import threading
import time

import pytest

from desktop_env.controllers.python import PythonController
from desktop_env.envs import warm
from desktop_env.image import states as st
from desktop_env.providers.qemu.provider import QemuProvider

pytestmark = pytest.mark.vm

MARKER = "/home/user/warm-marker.txt"


def _recipe(name: str, extra: list | None = None) -> st.StateRecipe:
    config = [
        {"type": "execute", "parameters": {"command": f"date +%s%N > {MARKER}", "shell": True}},
        {"type": "launch", "parameters": {"command": ["xfce4-terminal", "--title", f"warm-{name}"]}},
        {"type": "execute", "parameters": {"command": f"wmctrl -l | grep -q warm-{name}", "shell": True,
                                           "until": {"returncode": 0}}},
    ] + (extra or [])
    return st.StateRecipe(name, "base", f"test state {name}", config, {"timeout_s": 120, "stable_n": 2})


def _guest(vm) -> PythonController:
    return PythonController(vm.server.host, vm.server.port, token=vm.token)


def _sh(vm, command: str) -> dict:
    return _guest(vm).execute(command, shell=True, timeout_s=60)


@pytest.fixture
def cleanup(base_image):
    names = []
    yield names
    for name in names:
        st.remove_state(base_image, name)


def test_a_state_is_built_once_reused_and_rebuilt_when_its_recipe_changes(vm, base_image, cleanup):
    cleanup.append("citest")
    recipe = _recipe("citest")
    st.remove_state(base_image, "citest")
    built = warm.ensure_state(vm, "citest", recipe=recipe)
    assert built.meta["recipe_hash"] == recipe.digest(base_image) and built.meta["settled"] in (True, False)
    assert built.disk_layer.stat().st_size > 0 and built.ram_file.stat().st_size > 100 << 20
    t0 = time.monotonic()
    again = warm.ensure_state(vm, "citest", recipe=recipe)
    assert again.meta["created"] == built.meta["created"] and time.monotonic() - t0 < 5, "reused, not rebuilt"

    vm.restore_state(again)
    marker = _sh(vm, f"cat {MARKER}")["output"].strip()
    assert marker and _sh(vm, "wmctrl -l | grep -c warm-citest")["output"].strip() == "1"
    assert vm.state_name == "citest"

    changed = _recipe("citest", [{"type": "execute", "parameters": {"command": ["touch", "/home/user/v2"]}}])
    rebuilt = warm.ensure_state(vm, "citest", recipe=changed)
    assert rebuilt.meta["recipe_hash"] == changed.digest(base_image) != built.meta["recipe_hash"]
    vm.restore_state(rebuilt)
    assert _sh(vm, "test -e /home/user/v2")["returncode"] == 0
    assert _sh(vm, f"cat {MARKER}")["output"].strip() != marker, "the state was built again from init_state"


def test_two_environments_from_one_state_do_not_see_each_others_changes(base_image, cleanup):
    cleanup.append("ciiso")
    recipe = _recipe("ciiso")
    a, b = QemuProvider(image=base_image), QemuProvider(image=base_image)
    try:
        a.start()
        state = warm.ensure_state(a, "ciiso", recipe=recipe)
        a.restore_state(state)
        b.start()
        b.restore_state(state)
        assert _sh(a, "echo from-a > /home/user/only-a.txt && sync")["returncode"] == 0
        assert _sh(b, "test -e /home/user/only-a.txt")["returncode"] != 0
        assert _sh(b, f"test -e {MARKER}")["returncode"] == 0, "both start from the state's disk"
        a.restore_state(state)
        assert _sh(a, "test -e /home/user/only-a.txt")["returncode"] != 0, "every restore starts from the state"
        overlay = a.dir / "overlay.qcow2"
        assert overlay.stat().st_blocks * 512 < 1 << 20 or overlay.stat().st_size < 1 << 20
    finally:
        a.stop()
        b.stop()


def test_concurrent_first_uses_build_a_state_once(base_image, cleanup, monkeypatch):
    cleanup.append("cilock")
    st.remove_state(base_image, "cilock")
    recipe = _recipe("cilock")
    builds = []
    real_build = warm.build_state

    def counting_build(provider, rec):
        builds.append(provider.vm_id)
        return real_build(provider, rec)

    monkeypatch.setattr(warm, "build_state", counting_build)
    vms = [QemuProvider(image=base_image), QemuProvider(image=base_image)]
    results, errors = [], []

    def use(vm):
        try:
            vm.start()
            results.append(warm.ensure_state(vm, "cilock", recipe=recipe))
        except Exception as exc:  # reported below
            errors.append(exc)

    try:
        threads = [threading.Thread(target=use, args=(v,)) for v in vms]
        for t in threads:
            t.start()
        for t in threads:
            t.join(900)
    finally:
        for v in vms:
            v.stop()
    assert not errors, errors
    assert len(builds) == 1 and len(results) == 2
    assert results[0].meta["created"] == results[1].meta["created"]


def test_an_interrupted_build_leaves_nothing_behind(vm, base_image, monkeypatch):
    st.remove_state(base_image, "ciint")
    real_capture = vm.capture_state

    def capture_then_die(work):
        real_capture(work)
        raise KeyboardInterrupt

    monkeypatch.setattr(vm, "capture_state", capture_then_die)
    with pytest.raises(KeyboardInterrupt):
        warm.ensure_state(vm, "ciint", recipe=_recipe("ciint"))
    monkeypatch.undo()
    assert st.load_state(base_image, "ciint") is None
    assert not (st.states_root(base_image) / "ciint").exists()
    assert not (st.states_root(base_image) / "ciint.partial").exists()
    vm.revert_to_snapshot("init_state")  # the VM is usable again
    assert _sh(vm, "true")["returncode"] == 0


def test_a_task_naming_a_state_starts_with_its_tool_running(base_image):
    from desktop_env.envs.desktop_env import DesktopEnv

    task = {"id": "warm-chromium-check", "instruction": "Look at Chromium.", "snapshot": "base:chromium",
            "config": [{"type": "execute", "parameters": {"command": ["touch", "/home/user/setup-ran"]}}],
            "evaluator": {"func": "infeasible"}}
    env = DesktopEnv(path_to_vm=base_image.name, require_a11y_tree=False)
    try:
        _, info = env.reset(options={"task_config": task})
        assert info["state"] == "chromium"
        guest = env.controller
        assert guest.execute("pgrep -x chromium", shell=True)["returncode"] == 0, "Chromium runs at the first step"
        assert guest.execute("test -e /home/user/setup-ran", shell=True)["returncode"] == 0, "setup ran after restore"
        _, info2 = env.reset(options={"task_config": task})
        assert info2["state"] == "chromium" and info2["state_build_s"] < 5, "built once, then restored"
        assert guest.execute("pgrep -x chromium", shell=True)["returncode"] == 0
        _, info3 = env.reset(options={"task_config": {**task, "snapshot": "base"}})
        assert info3["state"] == "init_state"
        assert guest.execute("pgrep -x chromium", shell=True)["returncode"] != 0, "init_state has no Chromium"
    finally:
        env.close()
